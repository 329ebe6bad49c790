"""The kernel body language, construct by construct, each checked by running a kernel and reading its output."""

from typing import Any

import numpy as np
import pytest

import weft as wp


def run1(kernel, n, *arrays_and_args, dim=None):
    wp.launch(kernel, dim=dim if dim is not None else n, inputs=list(arrays_and_args))


# ---------------------------------------------------------------------------------------------------------------
# assignment, augmented assignment, tuple unpacking


@wp.func
def divmod_c(a: int, b: int):
    return a / b, a % b


@wp.kernel
def k_assign(a: wp.array(dtype=int), out: wp.array2d(dtype=int)):
    i = wp.tid()
    x = a[i]
    y = x
    y += 3
    y *= 2
    y -= 1
    z = y
    z //= 3
    w = y
    w %= 5
    b, c = x, y  # tuple unpacking from a tuple
    b, c = c, b  # swap
    q, r = divmod_c(y, 4)  # from a func with two results
    out[i, 0] = y
    out[i, 1] = z
    out[i, 2] = w
    out[i, 3] = b
    out[i, 4] = c
    out[i, 5] = q
    out[i, 6] = r
    v = wp.vec3(1.0, 2.0, 3.0)
    v *= 2.0
    v += wp.vec3(1.0)
    out[i, 7] = int(v[2])
    k = 5
    k <<= 2
    k |= 1
    k ^= 3
    k &= 0xFF
    k >>= 1
    out[i, 8] = k


def test_assignment_forms():
    a = np.arange(-5, 5, dtype=np.int32)
    out = wp.zeros((10, 9), dtype=int)
    run1(k_assign, 10, wp.array(a), out)
    o = out.numpy()
    y = (a + 3) * 2 - 1
    np.testing.assert_array_equal(o[:, 0], y)
    np.testing.assert_array_equal(o[:, 1], np.trunc(y / 3).astype(int))
    np.testing.assert_array_equal(o[:, 2], np.fmod(y, 5))
    np.testing.assert_array_equal(o[:, 3], y)
    np.testing.assert_array_equal(o[:, 4], a)
    np.testing.assert_array_equal(o[:, 5], np.trunc(y / 4).astype(int))
    np.testing.assert_array_equal(o[:, 6], np.fmod(y, 4))
    np.testing.assert_array_equal(o[:, 7], 7)
    np.testing.assert_array_equal(o[:, 8], ((((5 << 2) | 1) ^ 3) & 0xFF) >> 1)


# ---------------------------------------------------------------------------------------------------------------
# conditionals, ternary, boolean operators, comparisons


@wp.kernel
def k_branches(a: wp.array(dtype=int), out: wp.array2d(dtype=int)):
    i = wp.tid()
    x = a[i]
    if x < -2:
        out[i, 0] = -1
    elif x == 0:
        out[i, 0] = 0
    elif x > 2:
        out[i, 0] = 1
    else:
        out[i, 0] = 9
    out[i, 1] = 1 if x % 2 == 0 else 2
    out[i, 2] = int(-2 < x <= 2)  # chained comparison
    out[i, 3] = int(0 <= x < 3 != x)
    out[i, 4] = int(x > 0 and x < 3)
    out[i, 5] = int(x < -3 or x > 3)
    out[i, 6] = int(not x > 0)
    t = 0
    if x:  # ints are truthy
        t = 1
    out[i, 7] = t
    s = 0
    if not (x == 1 or x == 2) and x != -1:
        s = 5
    out[i, 8] = s


def test_branches_and_boolean_operators():
    a = np.arange(-5, 6, dtype=np.int32)
    out = wp.zeros((len(a), 9), dtype=int)
    run1(k_branches, len(a), wp.array(a), out)
    o = out.numpy()
    np.testing.assert_array_equal(o[:, 0], np.select([a < -2, a == 0, a > 2], [-1, 0, 1], 9))
    np.testing.assert_array_equal(o[:, 1], np.where(a % 2 == 0, 1, 2))
    np.testing.assert_array_equal(o[:, 2], (-2 < a) & (a <= 2))
    np.testing.assert_array_equal(o[:, 3], (0 <= a) & (a < 3) & (3 != a))
    np.testing.assert_array_equal(o[:, 4], (a > 0) & (a < 3))
    np.testing.assert_array_equal(o[:, 5], (a < -3) | (a > 3))
    np.testing.assert_array_equal(o[:, 6], ~(a > 0))
    np.testing.assert_array_equal(o[:, 7], a != 0)
    np.testing.assert_array_equal(o[:, 8], np.where(~((a == 1) | (a == 2)) & (a != -1), 5, 0))


@wp.func
def bump(counter: wp.array(dtype=int), value: bool):
    wp.atomic_add(counter, 0, 1)
    return value


@wp.kernel
def k_short_circuit(counter: wp.array(dtype=int), data: wp.array(dtype=float), n: int, out: wp.array(dtype=float)):
    i = wp.tid()
    # `and`/`or` must not evaluate their right operand when the left decides
    if False and bump(counter, True):  # noqa: SIM223
        out[i] = -1.0
    if True or bump(counter, True):  # noqa: SIM222
        out[i] = 1.0
    # lazy ternary: the untaken branch would read out of bounds
    out[i] += data[i + 100] if i + 100 < n else 0.5
    # a guarded read through `and`
    if i < n and data[i] > 0.0:
        out[i] += 10.0


def test_short_circuit_and_lazy_ternary(debug_mode):
    counter = wp.zeros(1, dtype=int)
    data = wp.array(np.ones(4, dtype=np.float32))
    out = wp.zeros(8, dtype=float)
    # launched over 8 threads with only 4 data elements: debug mode would raise on any unguarded read
    run1(k_short_circuit, 8, counter, data, 4, out)
    assert counter.numpy()[0] == 0
    np.testing.assert_array_equal(out.numpy(), [11.5] * 4 + [1.5] * 4)


# ---------------------------------------------------------------------------------------------------------------
# loops


@wp.kernel
def k_loops(n: int, out: wp.array2d(dtype=int)):
    i = wp.tid()
    s = 0
    for k in range(4):  # static, unrolled
        s += k
    out[i, 0] = s
    s = 0
    for k in range(n):  # dynamic bound
        s += k * i
    out[i, 1] = s
    s = 0
    for k in range(10, 0, -3):  # negative step
        s = s * 100 + k
    out[i, 2] = s
    s = 0
    for k in range(n, -1, -1):  # dynamic, negative step
        s += k
    out[i, 3] = s
    s = 0
    k = 0
    while k < i:
        k += 1
        if k == 3:
            continue
        s += k
    out[i, 4] = s
    s = 0
    for k in range(100):
        if k > i:
            break
        if k % 2 == 1:
            continue
        s += k
    out[i, 5] = s
    s = 0
    for a in range(3):  # nested with break in the inner loop only
        for b in range(3):
            if b > a:
                break
            s += 1
    out[i, 6] = s
    s = 0
    for k in range(2, n, 2):
        s += 1
    out[i, 7] = s
    s = 0
    for k in range(i, i):  # empty
        s += 1
    out[i, 8] = s


def test_loops():
    n = 7
    out = wp.zeros((6, 9), dtype=int)
    run1(k_loops, 6, n, out)
    o = out.numpy()
    idx = np.arange(6)
    np.testing.assert_array_equal(o[:, 0], 6)
    np.testing.assert_array_equal(o[:, 1], idx * sum(range(n)))
    np.testing.assert_array_equal(o[:, 2], 10070401)  # 10, 7, 4, 1
    np.testing.assert_array_equal(o[:, 3], sum(range(n + 1)))
    np.testing.assert_array_equal(o[:, 4], [sum(k for k in range(1, i + 1) if k != 3) for i in idx])
    np.testing.assert_array_equal(o[:, 5], [sum(k for k in range(i + 1) if k % 2 == 0) for i in idx])
    np.testing.assert_array_equal(o[:, 6], 6)
    np.testing.assert_array_equal(o[:, 7], len(range(2, n, 2)))
    np.testing.assert_array_equal(o[:, 8], 0)


# ---------------------------------------------------------------------------------------------------------------
# funcs: multiple and early returns, default args, overloads, generics


@wp.func
def first_multiple(n: int, m: int):
    for k in range(1, n):
        if k % m == 0:
            return k  # early return from inside a loop
    return -1


@wp.func
def classify(x: float):
    if x < 0.0:
        return -1
    if x == 0.0:
        return 0
    return 1


@wp.func
def scaled(x: float, scale: float = 2.0, offset: float = 0.5):
    return x * scale + offset


@wp.func
def min_max(a: float, b: float):
    if a < b:
        return a, b
    return b, a


@wp.func
def describe(x: int):
    return x * 10


@wp.func
def describe(x: float):  # noqa: F811 - an overload by signature
    return x * 100.0


@wp.func
def generic_twice(x: Any):
    return x + x


@wp.func
def float_only(x: wp.Float):
    return x * x


@wp.kernel
def k_funcs(x: wp.array(dtype=float), out_i: wp.array2d(dtype=int), out_f: wp.array2d(dtype=float),
            out_v: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out_i[i, 0] = first_multiple(20, i + 2)
    out_i[i, 1] = first_multiple(2, 5)
    out_i[i, 2] = classify(x[i])
    out_i[i, 3] = describe(i)
    out_i[i, 4] = generic_twice(i)
    out_f[i, 0] = scaled(x[i])
    out_f[i, 1] = scaled(x[i], 3.0)
    out_f[i, 2] = scaled(x[i], offset=1.0)
    lo, hi = min_max(x[i], 0.25)
    out_f[i, 3] = lo
    out_f[i, 4] = hi
    out_f[i, 5] = describe(x[i])
    out_f[i, 6] = generic_twice(x[i])
    out_f[i, 7] = float(float_only(wp.float64(x[i])))
    out_v[i] = generic_twice(wp.vec3(x[i], 1.0, 2.0))


def test_funcs():
    x = np.array([-1.0, 0.0, 0.5, 2.0], dtype=np.float32)
    out_i = wp.zeros((4, 5), dtype=int)
    out_f = wp.zeros((4, 8), dtype=float)
    out_v = wp.zeros(4, dtype=wp.vec3)
    run1(k_funcs, 4, wp.array(x), out_i, out_f, out_v)
    oi, of = out_i.numpy(), out_f.numpy()
    idx = np.arange(4)
    np.testing.assert_array_equal(oi[:, 0], idx + 2)
    np.testing.assert_array_equal(oi[:, 1], -1)
    np.testing.assert_array_equal(oi[:, 2], np.sign(x))
    np.testing.assert_array_equal(oi[:, 3], idx * 10)
    np.testing.assert_array_equal(oi[:, 4], idx * 2)
    np.testing.assert_allclose(of[:, 0], x * 2 + 0.5)
    np.testing.assert_allclose(of[:, 1], x * 3 + 0.5)
    np.testing.assert_allclose(of[:, 2], x * 2 + 1.0)
    np.testing.assert_allclose(of[:, 3], np.minimum(x, 0.25))
    np.testing.assert_allclose(of[:, 4], np.maximum(x, 0.25))
    np.testing.assert_allclose(of[:, 5], x * 100)
    np.testing.assert_allclose(of[:, 6], x * 2)
    np.testing.assert_allclose(of[:, 7], x * x)
    np.testing.assert_allclose(out_v.numpy(), np.stack([2 * x, np.full(4, 2.0), np.full(4, 4.0)], axis=1))


def test_func_runs_on_host():
    assert scaled.func(1.0) == 2.5
    assert first_multiple.func(10, 4) == 4


@wp.kernel
def k_generic_array(a: wp.array(dtype=Any), out: wp.array(dtype=Any), scale: Any):
    i = wp.tid()
    out[i] = a[i] * scale + a[i]


def test_generic_kernel_float32_and_float64():
    for dtype, np_dtype in ((wp.float32, np.float32), (wp.float64, np.float64)):
        a = wp.array(np.arange(5, dtype=np_dtype))
        out = wp.zeros(5, dtype=dtype)
        wp.launch(k_generic_array, dim=5, inputs=[a, out, dtype(3.0)])
        assert out.dtype == dtype
        np.testing.assert_array_equal(out.numpy(), np.arange(5) * 4.0)
    # float64 keeps double precision
    a = wp.array(np.array([1.0 + 1e-12]))
    out = wp.zeros(1, dtype=wp.float64)
    wp.launch(k_generic_array, dim=1, inputs=[a, out, wp.float64(1.0)])
    assert out.numpy()[0] == 2.0 * (1.0 + 1e-12)


# ---------------------------------------------------------------------------------------------------------------
# closures, captured globals, constants, static


SCALE = 3
OFFSET = 0.25
NP_FACTOR = np.float32(1.5)
LIMIT = wp.constant(7)
VEC = wp.constant(wp.vec3(1.0, 2.0, 3.0))
TABLE = [10, 20, 30]


@wp.func
def helper_global(x: float):
    return x * float(SCALE)


def make_kernel(power: int, fn):
    @wp.kernel
    def k_closure(x: wp.array(dtype=float), out: wp.array2d(dtype=float)):
        i = wp.tid()
        v = x[i]
        acc = 1.0
        for _ in range(power):  # a captured int drives an unrolled loop
            acc = acc * v
        out[i, 0] = acc
        out[i, 1] = fn(v)

    return k_closure


K_SQUARE = make_kernel(2, helper_global)
K_CUBE = make_kernel(3, wp.sin)


@wp.kernel
def k_globals(x: wp.array(dtype=float), out: wp.array2d(dtype=float)):
    i = wp.tid()
    out[i, 0] = x[i] * float(SCALE) + OFFSET
    out[i, 1] = x[i] * NP_FACTOR
    out[i, 2] = float(LIMIT)
    out[i, 3] = wp.dot(VEC, wp.vec3(1.0))
    out[i, 4] = float(wp.static(TABLE[1] + SCALE))
    out[i, 5] = helper_global(x[i])
    if wp.static(SCALE > 2):
        out[i, 6] = 1.0
    else:
        out[i, 6] = 2.0
    out[i, 7] = float(wp.static(len(TABLE)))


def test_globals_constants_static():
    x = np.array([0.0, 1.0, 2.0], dtype=np.float32)
    out = wp.zeros((3, 8), dtype=float)
    run1(k_globals, 3, wp.array(x), out)
    o = out.numpy()
    np.testing.assert_allclose(o[:, 0], x * 3 + 0.25)
    np.testing.assert_allclose(o[:, 1], x * 1.5)
    np.testing.assert_allclose(o[:, 2], 7)
    np.testing.assert_allclose(o[:, 3], 6)
    np.testing.assert_allclose(o[:, 4], 23)
    np.testing.assert_allclose(o[:, 5], x * 3)
    np.testing.assert_allclose(o[:, 6], 1)
    np.testing.assert_allclose(o[:, 7], 3)


def test_closures():
    x = np.array([0.5, 1.0, 2.0], dtype=np.float32)
    out = wp.zeros((3, 2), dtype=float)
    run1(K_SQUARE, 3, wp.array(x), out)
    np.testing.assert_allclose(out.numpy(), np.stack([x**2, x * 3], axis=1), rtol=1e-6)
    run1(K_CUBE, 3, wp.array(x), out)
    np.testing.assert_allclose(out.numpy(), np.stack([x**3, np.sin(x)], axis=1), rtol=1e-6)


# ---------------------------------------------------------------------------------------------------------------
# structs


@wp.struct
class Inner:
    scale: float
    offset: wp.vec3


@wp.struct
class Outer:
    inner: Inner
    count: int
    data: wp.array(dtype=float)


@wp.struct
class Particle:
    pos: wp.vec3
    mass: float


@wp.func
def particle_energy(p: Particle):
    return p.mass * wp.length_sq(p.pos)


@wp.kernel
def k_structs(o: Outer, particles: wp.array(dtype=Particle), out: wp.array(dtype=float),
              moved: wp.array(dtype=Particle)):
    i = wp.tid()
    p = particles[i]
    out[i] = o.data[i] * o.inner.scale + o.inner.offset[1] + float(o.count) + particle_energy(p)
    q = Particle()
    q.pos = p.pos + o.inner.offset
    q.mass = p.mass * 2.0
    q.pos.x = 100.0 + float(i)  # component assignment through a struct field
    moved[i] = q
    particles[i].mass = -1.0  # store into a struct array element field


def test_structs():
    n = 4
    o = Outer()
    o.inner = Inner()
    o.inner.scale = 2.0
    o.inner.offset = wp.vec3(1.0, 2.0, 3.0)
    o.count = 5
    o.data = wp.array(np.arange(n, dtype=np.float32))
    parts = [Particle() for _ in range(n)]
    for k, p in enumerate(parts):
        p.pos = wp.vec3(float(k), 0.0, 1.0)
        p.mass = 0.5 * (k + 1)
    particles = wp.array(parts, dtype=Particle)
    out = wp.zeros(n, dtype=float)
    moved = wp.zeros(n, dtype=Particle)
    run1(k_structs, n, o, particles, out, moved)
    k = np.arange(n)
    mass = 0.5 * (k + 1)
    np.testing.assert_allclose(out.numpy(), k * 2.0 + 2.0 + 5 + mass * (k**2 + 1))
    m = moved.numpy()
    np.testing.assert_allclose(m["mass"], mass * 2)
    np.testing.assert_allclose(m["pos"], np.stack([100.0 + k, np.full(n, 2.0), np.full(n, 4.0)], axis=1))
    np.testing.assert_allclose(particles.numpy()["mass"], -1.0)
    np.testing.assert_allclose(particles.numpy()["pos"][:, 0], k)


# ---------------------------------------------------------------------------------------------------------------
# component assignment, swizzles, fixed local arrays


@wp.kernel
def k_components(out_v: wp.array(dtype=wp.vec4), out_m: wp.array(dtype=wp.mat33), out_s: wp.array2d(dtype=float)):
    i = wp.tid()
    v = wp.vec4()
    v.x = 1.0
    v[1] = 2.0
    v.z = float(i)
    v[3] += 4.0
    v.w *= 2.0
    out_v[i] = v
    m = wp.mat33()
    m[0, 0] = 1.0
    m[1] = wp.vec3(4.0, 5.0, 6.0)
    m[2, 1] = float(i)
    m[0][2] = 3.0
    out_m[i] = m
    out_s[i, 0] = v.y + v.w
    sw = wp.vec3(v.z, v.x, v.y)
    out_s[i, 1] = sw[0] * 100.0 + sw[1] * 10.0 + sw[2]
    out_s[i, 2] = m[1][2]
    q = wp.quat(0.0, 0.0, 0.0, 1.0)
    q.x = 0.5
    out_s[i, 3] = q.x + q.w
    t = wp.transform(wp.vec3(1.0, 2.0, 3.0), q)
    out_s[i, 4] = t.p[2]


def test_component_assignment():
    out_v = wp.zeros(3, dtype=wp.vec4)
    out_m = wp.zeros(3, dtype=wp.mat33)
    out_s = wp.zeros((3, 5), dtype=float)
    run1(k_components, 3, out_v, out_m, out_s)
    k = np.arange(3)
    np.testing.assert_array_equal(out_v.numpy(), np.stack([np.ones(3), np.full(3, 2.0), k, np.full(3, 8.0)], 1))
    m = out_m.numpy()
    np.testing.assert_array_equal(m[:, 0], [[1, 0, 3]] * 3)
    np.testing.assert_array_equal(m[:, 1], [[4, 5, 6]] * 3)
    np.testing.assert_array_equal(m[:, 2, 1], k)
    o = out_s.numpy()
    np.testing.assert_array_equal(o[:, 0], 10.0)
    np.testing.assert_array_equal(o[:, 1], k * 100 + 10 + 2)
    np.testing.assert_array_equal(o[:, 2], 6.0)
    np.testing.assert_array_equal(o[:, 3], 1.5)
    np.testing.assert_array_equal(o[:, 4], 3.0)


@wp.kernel
def k_local_array(n: int, out: wp.array(dtype=float)):
    i = wp.tid()
    buf = wp.zeros(shape=(8,), dtype=float)
    for k in range(n):
        buf[k] = float(k * i)
    s = 0.0
    for k in range(8):
        s += buf[k]
    grid = wp.zeros(shape=(2, 3), dtype=wp.int32)
    grid[1, 2] = 5
    out[i] = s + float(grid[1, 2] + grid[0, 0])


def test_kernel_local_fixed_arrays():
    out = wp.zeros(4, dtype=float)
    run1(k_local_array, 4, 5, out)
    np.testing.assert_array_equal(out.numpy(), np.arange(4) * 10.0 + 5)


# ---------------------------------------------------------------------------------------------------------------
# printing and expectations


@wp.kernel
def k_print(x: wp.array(dtype=float)):
    i = wp.tid()
    print(x[i])
    wp.printf("i=%d x=%.2f\n", i, x[i])
    print(wp.vec3(1.0, 2.0, 3.0))


def test_print_and_printf(capfd):
    old = wp.config.deterministic
    wp.config.deterministic = True
    try:
        run1(k_print, 2, wp.array(np.array([1.5, 2.25], dtype=np.float32)))
        wp.synchronize()
    finally:
        wp.config.deterministic = old
    out = capfd.readouterr().out
    assert "i=0 x=1.50" in out and "i=1 x=2.25" in out
    assert out.index("i=0") < out.index("i=1")
    assert "1.5" in out and "2.25" in out
    assert out.count("1") >= 2 and "3" in out


def test_printf_takes_at_most_32_values():
    @wp.kernel(module="unique")
    def too_many(x: wp.array(dtype=int)):
        i = x[0]
        wp.printf("%d", i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i,
                  i)

    with pytest.raises(wp.CompileError, match=r"passed to `printf` is 32\n"):
        run1(too_many, 1, wp.zeros(1, dtype=int))


@wp.kernel
def k_expect(x: wp.array(dtype=int)):
    i = wp.tid()
    wp.expect_eq(x[i], 3)


def test_expect_eq_reports_failures(capfd):
    run1(k_expect, 2, wp.array(np.array([3, 4], dtype=np.int32)))
    out = capfd.readouterr()
    text = out.out + out.err
    assert "expect" in text.lower()
    assert "4" in text


@wp.kernel
def k_assert(x: wp.array(dtype=int)):
    i = wp.tid()
    assert x[i] >= 0, "no negative counts"


def test_assert_in_debug_mode(debug_mode):
    run1(k_assert, 2, wp.array(np.array([0, 1], dtype=np.int32)))
    with pytest.raises(wp.RuntimeError_, match=r'assert x\[i\] >= 0, "no negative counts"'):
        run1(k_assert, 2, wp.array(np.array([0, -1], dtype=np.int32)))


# ---------------------------------------------------------------------------------------------------------------
# array views passed to kernels


@wp.kernel
def k_copy2d(src: wp.array2d(dtype=float), dst: wp.array2d(dtype=float)):
    i, j = wp.tid()
    dst[i, j] = src[i, j]


@wp.kernel
def k_row_sum(src: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    row = src[i]  # a 1-D sub-array
    s = 0.0
    for j in range(row.shape[0]):
        s += row[j]
    out[i] = s
    out2 = src[i][0] + src[i, 0]
    out[i] += out2 - 2.0 * src[i, 0]


@wp.kernel
def k_scale3d(a: wp.array3d(dtype=float)):
    i, j, k = wp.tid()
    a[i, j, k] = a[i, j, k] * 2.0 + float(i * 100 + j * 10 + k)


def test_views_in_kernels():
    base = np.arange(60, dtype=np.float32).reshape(6, 10)
    a = wp.array(base)
    v = a[1:5:2, ::3]  # strided slice
    dst = wp.zeros(v.shape, dtype=float)
    wp.launch(k_copy2d, dim=v.shape, inputs=[v, dst])
    np.testing.assert_array_equal(dst.numpy(), base[1:5:2, ::3])
    t = a.transpose()
    dst = wp.zeros(t.shape, dtype=float)
    wp.launch(k_copy2d, dim=t.shape, inputs=[t, dst])
    np.testing.assert_array_equal(dst.numpy(), base.T)
    out = wp.zeros(6, dtype=float)
    wp.launch(k_row_sum, dim=6, inputs=[a, out])
    np.testing.assert_array_equal(out.numpy(), base.sum(axis=1))
    sub = a[2:4, 1:8:2]
    out = wp.zeros(2, dtype=float)
    wp.launch(k_row_sum, dim=2, inputs=[sub, out])
    np.testing.assert_array_equal(out.numpy(), base[2:4, 1:8:2].sum(axis=1))
    # writes through a view land in the base array
    b3 = np.zeros((2, 3, 4), dtype=np.float32)
    a3 = wp.array(b3)
    view = a3[:, 1:, ::2]
    wp.launch(k_scale3d, dim=view.shape, inputs=[view])
    expected = np.zeros((2, 3, 4), dtype=np.float32)
    i, j, k = np.meshgrid(range(2), range(2), range(2), indexing="ij")
    expected[:, 1:, ::2] = i * 100 + j * 10 + k
    np.testing.assert_array_equal(a3.numpy(), expected)


@wp.kernel
def k_indexed(a: wp.indexedarray(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a[i]
    a[i] = a[i] + 100.0


def test_indexedarray():
    data = wp.array(np.arange(10, dtype=np.float32))
    idx = wp.array(np.array([7, 2, 5], dtype=np.int32))
    ia = wp.indexedarray(data, [idx])
    assert ia.shape == (3,)
    out = wp.zeros(3, dtype=float)
    wp.launch(k_indexed, dim=3, inputs=[ia, out])
    np.testing.assert_array_equal(out.numpy(), [7, 2, 5])
    expected = np.arange(10, dtype=np.float32)
    expected[[7, 2, 5]] += 100
    np.testing.assert_array_equal(data.numpy(), expected)
    # a plain array is accepted where an indexed array is expected (no index arrays)
    plain = wp.array(np.arange(3, dtype=np.float32))
    wp.launch(k_indexed, dim=3, inputs=[plain, out])
    np.testing.assert_array_equal(plain.numpy(), [100, 101, 102])
    with pytest.raises(wp.LaunchError, match="'a'"):
        wp.launch(k_indexed, dim=3, inputs=[wp.indexedarray(wp.zeros(4, dtype=wp.float64), [idx]), out])


# ---------------------------------------------------------------------------------------------------------------
# Launch objects, determinism


@wp.kernel
def k_accumulate(a: wp.array(dtype=float), value: float):
    i = wp.tid()
    a[i] = a[i] + value


def test_launch_object_relaunch_and_set_param():
    a = wp.zeros(5, dtype=float)
    cmd = wp.launch(k_accumulate, dim=5, inputs=[a, 1.0], record_cmd=True)
    assert isinstance(cmd, wp.Launch)
    np.testing.assert_array_equal(a.numpy(), 0.0)  # recording does not run it
    for _ in range(3):
        cmd.launch()
    np.testing.assert_array_equal(a.numpy(), 3.0)
    cmd.set_param_at_index(1, 10.0)
    cmd.launch()
    np.testing.assert_array_equal(a.numpy(), 13.0)
    b = wp.zeros(5, dtype=float)
    cmd.set_param_at_index(0, b)
    cmd.launch()
    np.testing.assert_array_equal(b.numpy(), 10.0)
    np.testing.assert_array_equal(a.numpy(), 13.0)


@wp.kernel
def k_float_sum(x: wp.array(dtype=float), total: wp.array(dtype=float), order: wp.array(dtype=int),
                ticket: wp.array(dtype=int)):
    i = wp.tid()
    wp.atomic_add(total, 0, x[i])
    order[wp.atomic_add(ticket, 0, 1)] = i


def test_deterministic_mode_is_reproducible_and_ordered():
    old = wp.config.deterministic
    wp.config.deterministic = True
    try:
        x = wp.array(np.random.default_rng(0).uniform(-1, 1, 100_000).astype(np.float32))
        results = []
        for _ in range(2):
            total, ticket = wp.zeros(1, dtype=float), wp.zeros(1, dtype=int)
            order = wp.zeros(100_000, dtype=int)
            wp.launch(k_float_sum, dim=100_000, inputs=[x, total, order, ticket])
            results.append(total.numpy()[0])
            np.testing.assert_array_equal(order.numpy(), np.arange(100_000))  # index order
        assert results[0] == results[1]
        assert results[0] == np.cumsum(x.numpy(), dtype=np.float32)[-1]  # sequential float32 sum
    finally:
        wp.config.deterministic = old


@wp.kernel
def mixed_compare(f: wp.array(dtype=wp.float32), i: wp.array(dtype=wp.int32), u: wp.array(dtype=wp.uint32),
                  d: wp.array(dtype=wp.float64), out: wp.array2d(dtype=wp.int32)):
    k = wp.tid()
    out[k, 0] = wp.where(f[k] < i[k], 1, 0)       # float32 vs int32: by value, in float32
    out[k, 1] = wp.where(i[k] < u[k], 1, 0)       # int32 vs uint32: by value (int64), -1 < 1 holds
    out[k, 2] = wp.where(d[k] >= f[k], 1, 0)      # float64 vs float32: in float64
    out[k, 3] = wp.where(i[k] == wp.int64(2), 1, 0)
    out[k, 4] = wp.where(f[k] <= i[k] < u[k], 1, 0)  # chained, mixed


def test_comparisons_of_mixed_scalar_types_compare_values():
    """Warp emits C++ comparisons, so programs compare a float with an int (`if d < radius:` in its fluid example);
    weft compares the values (and, unlike C++, a negative int with an unsigned one by value too)."""
    f = np.array([0.5, 2.0, -1.5, 3.0], np.float32)
    i = np.array([1, 2, -1, 2], np.int32)
    u = np.array([1, 0, 7, 3], np.uint32)
    d = np.array([0.5, 1.0, -1.5, 3.000001], np.float64)
    out = wp.zeros((4, 5), dtype=wp.int32)
    wp.launch(mixed_compare, dim=4, inputs=[wp.array(f), wp.array(i), wp.array(u), wp.array(d), out])
    fi, ii, ui = f.astype(np.float64), i.astype(np.int64), u.astype(np.int64)
    expected = np.stack([fi < ii, ii < ui, d >= f.astype(np.float64), ii == 2, (fi <= ii) & (ii < ui)], axis=1)
    np.testing.assert_array_equal(out.numpy(), expected.astype(np.int32))


@wp.kernel
def k_line_continuation(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    if v > 0.0 and \
            v < 2.0:
        out[i] = v * 3.0
    out[i] = out[i] + 1.0


def test_backslash_line_continuation_forward_and_backward():
    # the source line ends in a backslash: as a C++ comment it must not swallow the next emitted line
    x = wp.array([1.0, 3.0], dtype=float, requires_grad=True)
    out = wp.zeros(2, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(k_line_continuation, dim=2, inputs=[x, out])
    np.testing.assert_allclose(out.numpy(), [4.0, 1.0])
    tape.backward(grads={out: wp.array([1.0, 1.0], dtype=float)})
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 0.0])


@wp.kernel
def array_dtype_k(a: wp.array2d(dtype=wp.Any), out: wp.array2d(dtype=wp.Any)):
    t = wp.tile_zeros(shape=(2, 3), dtype=a.dtype)  # a compile-time expression reads the array's dtype
    t += wp.tile_load(a, shape=(2, 3))
    wp.tile_store(out, t)
    out[0, 0] = a.dtype(0.25) + out[0, 0] * a.dtype(a.ndim)


def test_array_dtype_and_ndim_in_kernels():
    for dt in (wp.float32, wp.float64):
        x = np.arange(6, dtype=wp.dtype_to_numpy(dt)).reshape(2, 3) + 1
        out = wp.zeros((2, 3), dtype=dt)
        wp.launch_tiled(array_dtype_k, dim=[1], inputs=[wp.array(x, dtype=dt), out], block_dim=1)
        expected = x.copy()
        expected[0, 0] = 0.25 + 2 * x[0, 0]
        np.testing.assert_array_equal(out.numpy(), expected)


@wp.kernel
def component_slices_k(v: wp.array(dtype=wp.vec4d), m: wp.array(dtype=wp.mat33d), o2: wp.array(dtype=wp.vec2d),
                       om: wp.array(dtype=wp.mat22d), ov: wp.array(dtype=wp.vec4d), n: wp.array(dtype=int)):
    t = wp.tid()
    a = v[t]
    o2[t] = a[1:3] + a[::3] + m[t][1, 1:] + m[t][:2, 0]
    om[t] = m[t][1:, :2]
    b = a
    b[1:3] = wp.vec2d(7.0, 8.0) * a[0]
    b[-1] = a[-2] * 2.0
    ov[t] = b
    mm = m[t]
    n[t] = wp.static(len(a)) * 10 + wp.static(len(mm))


def test_vector_and_matrix_slices_negative_indices_and_static_len():
    rng = np.random.default_rng(8)
    V, M = rng.normal(size=(2, 4)), rng.normal(size=(2, 3, 3))
    v = wp.array(V, dtype=wp.vec4d, requires_grad=True)
    m = wp.array(M, dtype=wp.mat33d, requires_grad=True)
    outs = [wp.zeros(2, dtype=d, requires_grad=True) for d in (wp.vec2d, wp.mat22d, wp.vec4d)]
    n = wp.zeros(2, dtype=int)
    with wp.Tape() as tape:
        wp.launch(component_slices_k, dim=2, inputs=[v, m, *outs, n])
    o2, om, ov = (x.numpy() for x in outs)
    np.testing.assert_allclose(o2, V[:, 1:3] + V[:, ::3] + M[:, 1, 1:] + M[:, :2, 0], rtol=1e-15)
    np.testing.assert_array_equal(om, M[:, 1:, :2])
    b = V.copy()
    b[:, 1:3] = np.array([7.0, 8.0]) * V[:, :1]
    b[:, -1] = V[:, -2] * 2.0
    np.testing.assert_allclose(ov, b, rtol=1e-15)
    np.testing.assert_array_equal(n.numpy(), [43, 43])
    tape.backward(grads={outs[2]: wp.array(np.ones((2, 4)), dtype=wp.vec4d)})  # d sum(ov) / dv
    np.testing.assert_allclose(v.grad.numpy(), np.tile([1.0 + 15.0, 0.0, 2.0, 0.0], (2, 1)))


@wp.func
def fill_rows(arr: wp.array2d(dtype=int)):
    for i in range(arr.shape[0]):
        for j in range(arr.shape[1]):
            arr[i][j] = i * arr.shape[1] + j


@wp.func
def local_grid() -> wp.fixedarray(shape=(2, 3), dtype=int):
    return wp.zeros(shape=(2, 3), dtype=int)


@wp.kernel
def fixed_rows_k(out: wp.array(dtype=int)):
    arr = local_grid()
    fill_rows(arr)  # a local array passed where a 2-D array is expected; rows are views into its storage
    r1 = arr[1]
    out[0] = arr[1, 2] + 10 * r1[0] + 100 * r1.shape[0] + 1000 * arr[0][1]


@wp.kernel
def fixed_rows_float_k(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    arr = wp.zeros(shape=(2, 2), dtype=float)
    arr[1][0] = x[0]
    out[0] = arr[1, 0]


def test_row_views_of_local_arrays():
    out = wp.zeros(1, dtype=int)
    wp.launch(fixed_rows_k, dim=1, inputs=[out])
    assert out.numpy()[0] == 5 + 10 * 3 + 100 * 3 + 1000 * 1
    assert repr(wp.fixedarray(shape=(2, 3), dtype=int)).startswith("fixedarray(shape=(2, 3)")
    x = wp.array([2.5], dtype=float, requires_grad=True)
    y = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(fixed_rows_float_k, dim=1, inputs=[x, y])
    assert y.numpy()[0] == 2.5
    with pytest.raises(wp.CompileError, match="row view of a kernel-local array"):
        tape.backward(grads={y: wp.array([1.0], dtype=float)})


@wp.kernel
def reversed_ranges(n: int, step: int, out: wp.array(dtype=int)):
    c = 0
    for i in reversed(range(n)):
        out[c] = i
        c += 1
    for j in reversed(range(1, n, 3)):
        out[c] = j
        c += 1
    for j in reversed(range(n, 0, -2)):
        out[c] = j
        c += 1
    for j in reversed(range(5, n - 9)):  # empty
        out[c] = 100
        c += 1
    for j in reversed(range(n, -3, step)):  # a run-time step
        out[c] = j
        c += 1


def test_reversed_range_loops():
    """``for i in reversed(range(a, b, s))`` (constant step) visits Python's values in Python's order."""
    for n, step in ((0, -1), (1, 2), (7, -3), (8, 0)):
        out = wp.full(64, -1, dtype=int)
        wp.launch(reversed_ranges, dim=1, inputs=[n, step, out])
        want = [*reversed(range(n)), *reversed(range(1, n, 3)), *reversed(range(n, 0, -2))]
        want += list(reversed(range(n, -3, step))) if step else []
        assert out.numpy()[:len(want) + 1].tolist() == want + [-1]


_mat32d = wp.types.matrix(shape=(3, 2), dtype=wp.float64)


def test_constructors_take_their_own_shape_and_dtype_keywords():
    @wp.kernel
    def typed_keywords(out: wp.array(dtype=_mat32d), out2: wp.array(dtype=wp.mat22), out3: wp.array(dtype=wp.vec3)):
        c = _mat32d(1.0, 2.0, 3.0, 4.0, 5.0, 6.0)
        out[0] = _mat32d(c, shape=(3, 2)) + wp.types.matrix(1.5, shape=(3, 2), dtype=wp.float64)
        a = wp.mat22(1.0, 2.0, 3.0, 4.0)
        out2[0] = wp.matrix(a, shape=(2, 2)) + wp.mat22(a, shape=(2, 2), dtype=float)
        out3[0] = wp.vec3(1.0, 2.0, 3.0, length=3, dtype=wp.float32)

    out, out2, out3 = wp.zeros(1, dtype=_mat32d), wp.zeros(1, dtype=wp.mat22), wp.zeros(1, dtype=wp.vec3)
    wp.launch(typed_keywords, dim=1, inputs=[out, out2, out3])
    np.testing.assert_array_equal(out.numpy()[0], np.arange(1.0, 7.0).reshape(3, 2) + 1.5)
    np.testing.assert_array_equal(out2.numpy()[0], 2.0 * np.array([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_array_equal(out3.numpy()[0], [1.0, 2.0, 3.0])

    @wp.kernel
    def wrong_shape(out: wp.array(dtype=_mat32d)):
        out[0] = _mat32d(_mat32d(), shape=(2, 2))

    with pytest.raises(wp.errors.CompileError, match=r"shape=\(2, 2\), but its shape is \(3, 2\)"):
        wp.launch(wrong_shape, dim=1, inputs=[out])
