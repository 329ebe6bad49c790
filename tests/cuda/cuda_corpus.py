"""A corpus of kernels covering the language, used to compile-check the CUDA backend (no GPU needed) and, on a
machine with a GPU, to compare CUDA results with the CPU reference.

Each entry: (kernel, argument factory). Factories take a device so the same cases run on "cpu" and "cuda:0".
"""

from __future__ import annotations

import numpy as np

import weft as wp

N = 64


@wp.struct
class Particle:
    pos: wp.vec3
    vel: wp.vec3
    mass: float
    active: wp.int32


@wp.struct
class Params:
    gravity: wp.vec3
    dt: float
    p: Particle


@wp.func
def kinetic(p: Particle) -> float:
    return 0.5 * p.mass * wp.dot(p.vel, p.vel)


@wp.func
def sq(x: float) -> float:
    return x * x


@wp.func_native("return wp::vec_t<3, wp::float32>(x, x * x, 1.0f) + wp::float32(2) * y;",
                adj_snippet="adj_x += adj_ret[0] + 2.0f * x * adj_ret[1];\nadj_y += 2.0f * adj_ret;")
def native_vec(x: float, y: wp.vec3) -> wp.vec3: ...


@wp.func_native("acc = acc + x[i];", adj_snippet="adj_x[i] += adj_acc;")
def native_accumulate(acc: wp.ref[wp.float32], x: wp.array(dtype=float), i: int): ...


@wp.func_native("*(float*)ptr = *(float*)ptr + 1.0f;")
def native_bump(ptr: wp.uint64): ...


@wp.kernel
def k_native(x: wp.array(dtype=float), v: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    acc = wp.float32(0.0)
    native_accumulate(acc, x, i)
    native_bump(wp.address_of(acc))  # wp.address_of of a native argument
    u, s, w = wp.svd2(wp.mat22(x[i], 1.0, 0.5, 2.0))  # svd2 and its adjoint compile for CUDA too
    out[i] = native_vec(acc, v[i]) + wp.vec3(s[0], s[1], u[0, 1] * w[1, 0])


@wp.kernel
def k_saxpy(a: float, x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


@wp.kernel
def k_scalars(f64: wp.array(dtype=wp.float64), f16: wp.array(dtype=wp.float16), i8: wp.array(dtype=wp.int8),
              u16: wp.array(dtype=wp.uint16), i64: wp.array(dtype=wp.int64), u64: wp.array(dtype=wp.uint64),
              out: wp.array(dtype=float)):
    i = wp.tid()
    a = f64[i] * wp.float64(2.0) + wp.sqrt(wp.float64(i))
    b = f16[i] + wp.float16(1.0)
    c = i8[i] // wp.int8(3) + i8[i] % wp.int8(5)
    d = u16[i] << wp.uint16(1)
    e = i64[i] * wp.int64(7) - wp.int64(i)
    g = u64[i] ^ wp.uint64(0xFF)
    out[i] = float(a) + float(b) + float(c) + float(d) + float(e) + float(g) + wp.sin(float(i)) + wp.exp(0.1)
    f64[i] = a
    f16[i] = b


@wp.kernel
def k_vectors(v: wp.array(dtype=wp.vec3), w: wp.array(dtype=wp.vec4d), out: wp.array(dtype=float)):
    i = wp.tid()
    a = v[i]
    b = wp.cross(a, wp.vec3(1.0, 2.0, 3.0))
    c = wp.normalize(a + b) * 2.0
    d = w[i] * wp.float64(0.5)
    out[i] = wp.dot(a, c) + wp.length(b) + float(d[3]) + a[0] + wp.max(a, b)[1]
    v[i] = wp.cw_mul(a, c)


@wp.kernel
def k_matrices(m: wp.array(dtype=wp.mat33), m22: wp.array(dtype=wp.mat22d), out: wp.array(dtype=wp.mat44)):
    i = wp.tid()
    a = m[i]
    b = a * wp.transpose(a) + wp.identity(n=3, dtype=float)
    c = wp.inverse(b)
    d = wp.determinant(c) + wp.trace(b)
    e = wp.outer(wp.vec3(1.0, 0.0, 0.0), a[0])
    m[i] = c * d + e
    m22[i] = m22[i] * wp.float64(2.0)
    out[i] = wp.mat44(1.0, 0.0, 0.0, d, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0)


@wp.kernel
def k_quats(q: wp.array(dtype=wp.quat), t: wp.array(dtype=wp.transform), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    r = wp.quat_from_axis_angle(wp.vec3(0.0, 1.0, 0.0), float(i) * 0.1)
    s = wp.quat_slerp(q[i], r, 0.5)
    p = wp.quat_rotate(s, wp.vec3(1.0, 0.0, 0.0))
    m = wp.quat_to_matrix(s)
    x = wp.transform_multiply(t[i], wp.transform(p, r))
    out[i] = wp.transform_point(x, p) + m * p + wp.quat_rotate_inv(r, p)
    q[i] = wp.normalize(s * wp.quat_inverse(r))


@wp.kernel
def k_structs(ps: wp.array(dtype=Particle), params: Params, energy: wp.array(dtype=float)):
    i = wp.tid()
    p = ps[i]
    if p.active != 0:
        p.vel = p.vel + params.gravity * params.dt
        p.pos = p.pos + p.vel * params.dt
    ps[i] = p
    energy[i] = kinetic(p) + sq(params.p.mass)


@wp.kernel
def k_atomics(idx: wp.array(dtype=int), fsum: wp.array(dtype=float), dsum: wp.array(dtype=wp.float64),
              isum: wp.array(dtype=int), vsum: wp.array(dtype=wp.vec3), lo: wp.array(dtype=float),
              hi: wp.array(dtype=int), u: wp.array(dtype=wp.uint32), i64: wp.array(dtype=wp.int64)):
    i = wp.tid()
    j = idx[i]
    wp.atomic_add(fsum, j, 1.0)
    wp.atomic_sub(dsum, j, wp.float64(0.5))
    old = wp.atomic_add(isum, j, 1)
    wp.atomic_add(vsum, j, wp.vec3(1.0, float(old), 0.0))
    wp.atomic_min(lo, j, float(i))
    wp.atomic_max(hi, j, i)
    wp.atomic_exch(u, j, wp.uint32(i))
    wp.atomic_cas(i64, j, wp.int64(0), wp.int64(i))
    fsum[j] += 2.0


@wp.kernel
def k_loops(n: int, x: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    s = 0.0
    for j in range(n):
        if j % 3 == 0:
            continue
        s += x[i, j]
        if s > 100.0:
            break
    for k in range(4):
        s = s * 0.5 + float(k)
    k2 = 0
    while k2 < n:
        k2 += 2
        s -= 0.01
    for j in range(n - 1, -1, -2):
        s += sq(x[i, j])
    out[i] = s


@wp.kernel
def k_printf(x: wp.array(dtype=float), v: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    if i == 0:
        wp.printf("x[%d] = %f, n = %lld\n", i, x[i], wp.int64(3))
        print(v[i])
        print("value", x[i], i)
    if x[i] < -1.0e30:  # never taken: wp.breakpoint() compiles (brkpt), it must not trap a test run
        wp.breakpoint()


@wp.kernel
def k_bounds(x: wp.array(dtype=float), y: wp.array2d(dtype=float), k: int):
    i = wp.tid()
    x[i + k] = y[i, k] + 1.0
    wp.atomic_add(x, i + k, 1.0)


@wp.kernel
def k_grid4(out: wp.array4d(dtype=float)):
    i, j, k, l = wp.tid()
    out[i, j, k, l] = float(i * 1000 + j * 100 + k * 10 + l)


@wp.kernel
def k_random(seed: int, out: wp.array(dtype=float), outi: wp.array(dtype=int)):
    i = wp.tid()
    state = wp.rand_init(seed, i)
    out[i] = wp.randf(state) + wp.randn(state)
    outi[i] = wp.randi(state, 0, 100)


@wp.kernel
def k_noise(seed: int, cdf: wp.array(dtype=float), p: wp.array(dtype=wp.vec3), out: wp.array(dtype=float),
            outu: wp.array(dtype=wp.uint32)):
    i = wp.tid()
    state = wp.rand_init(seed, i)
    q = p[i]
    v = wp.sample_unit_sphere(state) + wp.sample_unit_hemisphere(state) + wp.vec3(wp.sample_triangle(state)[0])
    c2 = wp.curlnoise(state, wp.vec2(q[0], q[1]), wp.uint32(2), 2.0, 0.5)
    c4 = wp.curlnoise(state, wp.vec4(q[0], q[1], q[2], 0.5))
    out[i] = wp.noise(state, q) + wp.pnoise(state, q, 2, 3, 4) + wp.noise(state, q[0]) + wp.dot(v, q) + c2[0] \
        + wp.length(wp.curlnoise(state, q)) + c4[2] + float(wp.sample_cdf(state, cdf))
    outu[i] = wp.poisson(state, 12.0) + wp.randu(state, wp.uint32(1), wp.uint32(9))


@wp.kernel
def k_views(x: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    row = x[i]
    s = 0.0
    for j in range(row.shape[0]):
        s += row[j]
    out[i] = s + float(x.shape[1])


@wp.kernel
def k_array_at(x: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    flat = wp.array(ptr=x.ptr, shape=(x.shape[0] * x.shape[1],), dtype=float)  # the same memory, 1-D
    out[i] = flat[i * x.shape[1] + 1] * 2.0


@wp.kernel
def k_generic(x: wp.array(dtype=wp.Any), y: wp.array(dtype=wp.Any)):
    i = wp.tid()
    y[i] = x[i] + x[i]


@wp.kernel
def k_fabric(a: wp.fabricarray(dtype=float), b: wp.indexedfabricarray(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    j = i % b.shape[0]
    v = b[j]
    out[i] = a[i] * wp.length(v) + float(a.shape[0])
    wp.atomic_add(a, i, 1.0)
    b[j] = v


def _fabric(data, attrib, sizes):
    """A Fabric array interface over a 1-D weft array split into buckets (as Fabric hands them out)."""
    es = wp.types.type_size_in_bytes(data.dtype)
    ptrs, p = [], data.ptr
    for n in sizes:
        ptrs.append(p)
        p += n * es
    count = getattr(data.dtype, "_length_", 1)
    info = {"type": (True, "f4", count, 0, "vector" if count > 1 else ""), "access": 2, "pointers": ptrs,
            "counts": list(sizes)}
    return wp.fabricarray({"version": 1, "device": str(data.device), "attribs": {attrib: info}, "_ref": data}, attrib)


def _fabric_args(d):
    a = _fabric(wp.array(_rand(N), device=d), "a", [N // 4, N // 2, N // 4])
    b = _fabric(wp.array(_rand((N, 3), seed=2), dtype=wp.vec3, device=d), "b", [3, N - 3])
    return [a, b[wp.array(np.arange(N - 1, -1, -2, dtype=np.int32), device=d)], wp.zeros(N, device=d)]


def _particles(device):
    rng = np.random.default_rng(0)
    host = [Particle() for _ in range(N)]
    for k, p in enumerate(host):
        p.pos = wp.vec3(*rng.random(3))
        p.vel = wp.vec3(*rng.random(3))
        p.mass = 1.0 + k
        p.active = k % 2
    return wp.array(host, dtype=Particle, device=device)


def _params():
    p = Params()
    p.gravity = wp.vec3(0.0, -9.8, 0.0)
    p.dt = 0.01
    p.p = Particle()
    p.p.mass = 2.0
    return p


def _rand(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).random(shape).astype(dtype)


#: name -> (kernel, args factory(device), launch dim)
CASES = {
    "native": (k_native, lambda d: [wp.array(_rand(N), device=d), wp.array(_rand((N, 3)), dtype=wp.vec3, device=d),
                                    wp.zeros(N, dtype=wp.vec3, device=d)], N),
    "saxpy": (k_saxpy, lambda d: [2.0, wp.array(_rand(N), device=d), wp.array(_rand(N, seed=1), device=d)], N),
    "scalars": (k_scalars, lambda d: [
        wp.array(_rand(N, np.float64), dtype=wp.float64, device=d), wp.array(_rand(N, np.float16), dtype=wp.float16,
                                                                             device=d),
        wp.array(np.arange(N, dtype=np.int8), dtype=wp.int8, device=d),
        wp.array(np.arange(N, dtype=np.uint16), dtype=wp.uint16, device=d),
        wp.array(np.arange(N, dtype=np.int64), dtype=wp.int64, device=d),
        wp.array(np.arange(N, dtype=np.uint64), dtype=wp.uint64, device=d), wp.zeros(N, device=d)], N),
    "vectors": (k_vectors, lambda d: [wp.array(_rand((N, 3)), dtype=wp.vec3, device=d),
                                      wp.array(_rand((N, 4), np.float64), dtype=wp.vec4d, device=d),
                                      wp.zeros(N, device=d)], N),
    "matrices": (k_matrices, lambda d: [wp.array(_rand((N, 3, 3)), dtype=wp.mat33, device=d),
                                        wp.array(_rand((N, 2, 2), np.float64), dtype=wp.mat22d, device=d),
                                        wp.zeros(N, dtype=wp.mat44, device=d)], N),
    "quats": (k_quats, lambda d: [wp.array(np.tile([0.0, 0.0, 0.0, 1.0], (N, 1)).astype(np.float32), dtype=wp.quat,
                                           device=d),
                                  wp.array(np.tile([1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0], (N, 1)).astype(np.float32),
                                           dtype=wp.transform, device=d),
                                  wp.zeros(N, dtype=wp.vec3, device=d)], N),
    "structs": (k_structs, lambda d: [_particles(d), _params(), wp.zeros(N, device=d)], N),
    "atomics": (k_atomics, lambda d: [wp.array(np.arange(N, dtype=np.int32) % 4, dtype=int, device=d),
                                      wp.zeros(4, device=d), wp.zeros(4, dtype=wp.float64, device=d),
                                      wp.zeros(4, dtype=int, device=d), wp.zeros(4, dtype=wp.vec3, device=d),
                                      wp.full(4, 1e9, dtype=float, device=d), wp.zeros(4, dtype=int, device=d),
                                      wp.zeros(4, dtype=wp.uint32, device=d), wp.zeros(4, dtype=wp.int64, device=d)],
                N),
    "loops": (k_loops, lambda d: [7, wp.array(_rand((N, 7)), device=d), wp.zeros(N, device=d)], N),
    "printf": (k_printf, lambda d: [wp.array(_rand(N), device=d), wp.array(_rand((N, 3)), dtype=wp.vec3, device=d)],
               N),
    "grid4": (k_grid4, lambda d: [wp.zeros((2, 3, 4, 5), device=d)], (2, 3, 4, 5)),
    "random": (k_random, lambda d: [42, wp.zeros(N, device=d), wp.zeros(N, dtype=int, device=d)], N),
    "noise": (k_noise, lambda d: [7, wp.array(np.linspace(0.1, 1.0, 10, dtype=np.float32), device=d),
                                  wp.array(_rand((N, 3)) * 4.0, dtype=wp.vec3, device=d), wp.zeros(N, device=d),
                                  wp.zeros(N, dtype=wp.uint32, device=d)], N),
    "views": (k_views, lambda d: [wp.array(_rand((N, 5)), device=d), wp.zeros(N, device=d)], N),
    "array_at": (k_array_at, lambda d: [wp.array(_rand((N, 5)), device=d), wp.zeros(N, device=d)], N),
    "fabric": (k_fabric, _fabric_args, N),
    "generic_f32": (k_generic, lambda d: [wp.array(_rand(N), device=d), wp.zeros(N, device=d)], N),
    "generic_vec3d": (k_generic, lambda d: [wp.array(_rand((N, 3), np.float64), dtype=wp.vec3d, device=d),
                                            wp.zeros(N, dtype=wp.vec3d, device=d)], N),
}

#: cases whose results are deterministic (compared between CPU and CUDA); atomics on float sums are order-dependent
#: only in the last bits, so they are compared with a tolerance too.
NUMERIC = ["saxpy", "scalars", "vectors", "matrices", "quats", "structs", "atomics", "loops", "grid4", "random",
           "noise", "views", "generic_f32", "generic_vec3d", "fabric"]
