"""The erf family, rint, copysign, bit_count, quat_rpy, lerp of composites, Warp's math funcs (norms, twists,
rigid-body helpers), wp.vector/wp.matrix/type() in kernels: against float64 NumPy / SciPy references."""

import numpy as np
from scipy import special
from scipy.spatial.transform import Rotation

import weft as wp


@wp.kernel
def special_k(x: wp.array(dtype=wp.float64), o: wp.array2d(dtype=wp.float64), q: wp.array(dtype=wp.quatd),
              bc: wp.array(dtype=int)):
    i = wp.tid()
    o[i, 0] = wp.erf(x[i])
    o[i, 1] = wp.erfc(x[i])
    o[i, 2] = wp.erfinv(x[i] * 0.5)
    o[i, 3] = wp.erfcinv(x[i] * 0.5 + 1.0)
    o[i, 4] = wp.rint(x[i] * 3.0)
    o[i, 5] = wp.copysign(2.0, x[i])
    q[i] = wp.quat_rpy(x[i], 2.0 * x[i], 0.3)
    bc[i] = wp.bit_count(i * 7 - 3)


def test_special_functions_match_scipy():
    x = np.array([-0.9, -0.1, 0.5, 0.75, 0.0])
    o = wp.zeros((5, 6), dtype=wp.float64)
    q = wp.zeros(5, dtype=wp.quatd)
    bc = wp.zeros(5, dtype=int)
    wp.launch(special_k, dim=5, inputs=[wp.array(x, dtype=wp.float64), o, q, bc])
    ref = np.stack([special.erf(x), special.erfc(x), special.erfinv(x * 0.5), special.erfcinv(x * 0.5 + 1.0),
                    np.rint(x * 3.0), np.copysign(2.0, x)], 1)
    np.testing.assert_allclose(o.numpy(), ref, rtol=1e-13, atol=1e-15)
    rpy = np.stack([x, 2 * x, np.full(5, 0.3)], 1)
    np.testing.assert_allclose(q.numpy(), Rotation.from_euler("xyz", rpy).as_quat(), atol=1e-14)
    np.testing.assert_array_equal(bc.numpy(), [((i * 7 - 3) & 0xFFFFFFFF).bit_count() for i in range(5)])


def test_host_calls():
    assert wp.rint(2.5) == 2.0 and wp.rint(3.5) == 4.0
    np.testing.assert_allclose(wp.erf(0.3), special.erf(0.3))
    np.testing.assert_allclose(wp.erfinv(0.3), special.erfinv(0.3))


@wp.kernel
def lerp_k(v: wp.array(dtype=wp.vec3d), m: wp.array(dtype=wp.mat22d), q: wp.array(dtype=wp.quatd),
           t: wp.array(dtype=wp.transformd)):
    v[0] = wp.lerp(v[0], v[1], 0.25)
    m[0] = wp.lerp(m[0], m[1], 0.25)
    q[0] = wp.lerp(q[0], q[1], 0.25)
    t[0] = wp.lerp(t[0], t[1], 0.25)


def test_lerp_of_composites():
    rng = np.random.default_rng(0)
    data = [rng.standard_normal(s) for s in ((2, 3), (2, 2, 2), (2, 4), (2, 7))]
    arrs = [wp.array(d, dtype=t) for d, t in zip(data, (wp.vec3d, wp.mat22d, wp.quatd, wp.transformd))]
    wp.launch(lerp_k, dim=1, inputs=arrs)
    for a, d in zip(arrs, data):
        np.testing.assert_allclose(a.numpy()[0], 0.75 * d[0] + 0.25 * d[1], rtol=1e-14)


@wp.kernel
def mathfuncs_k(a: wp.array(dtype=wp.vec3d), q: wp.array(dtype=wp.quatd), sv: wp.array(dtype=wp.spatial_vectord),
                t: wp.array(dtype=wp.transformd), out: wp.array(dtype=wp.float64), o3: wp.array(dtype=wp.vec3d),
                o6: wp.array(dtype=wp.spatial_vectord)):
    out[0] = wp.norm_l1(a[0])
    out[1] = wp.norm_l2(a[0])
    out[2] = wp.norm_huber(a[0])
    out[3] = wp.norm_pseudo_huber(a[0], 2.0)
    out[4] = wp.quat_twist_angle(wp.vec3d(0.0, 0.0, 1.0), q[0])
    out[5] = wp.quat_twist_angle_signed(wp.vec3d(0.0, 0.0, -1.0), q[0])
    out[6] = wp.norm_huber(a[0] * 0.1)
    o3[0] = wp.smooth_normalize(a[0])
    o3[1] = wp.quat_to_rpy(q[0])
    o3[2] = wp.velocity_at_point(sv[0], a[0])
    o6[0] = wp.transform_twist(t[0], sv[0])
    o6[1] = wp.transform_wrench(t[0], sv[0])
    o3[3] = wp.vector(a[0][2], a[0][1], a[0][0])
    o3[4] = wp.matrix(a[0], a[0], a[0]) * wp.vector(length=3, dtype=wp.float64) + type(a[0])(1.0)


def test_math_funcs():
    v = np.array([1.0, -2.0, 3.0])
    c, s = np.cos(0.3), np.sin(0.3)
    sv6 = np.arange(6.0)
    a = wp.array(v[None], dtype=wp.vec3d)
    q = wp.array(np.array([[0.0, 0.0, s, c]]), dtype=wp.quatd)
    sv = wp.array(sv6[None], dtype=wp.spatial_vectord)
    t = wp.array(np.array([[1.0, 2.0, 3.0, 0.0, 0.0, s, c]]), dtype=wp.transformd)
    out = wp.zeros(7, dtype=wp.float64)
    o3 = wp.zeros(5, dtype=wp.vec3d)
    o6 = wp.zeros(2, dtype=wp.spatial_vectord)
    wp.launch(mathfuncs_k, dim=1, inputs=[a, q, sv, t, out, o3, o6])
    n = np.linalg.norm(v)
    np.testing.assert_allclose(out.numpy(), [6.0, n, n - 0.5, 2.0 * np.sqrt(1 + n * n / 4), 0.6, -0.6,
                                             0.5 * (0.1 * n) ** 2], rtol=1e-14)
    rot = Rotation.from_quat([0.0, 0.0, s, c])
    w, lin = sv6[:3], sv6[3:]
    np.testing.assert_allclose(o3.numpy(), [v / np.sqrt(1 + n * n), rot.as_euler("xyz"), lin + np.cross(w, v),
                                            v[::-1], [1.0, 1.0, 1.0]], atol=1e-14)
    p = np.array([1.0, 2.0, 3.0])
    rw, rv = rot.apply(w), rot.apply(lin)
    np.testing.assert_allclose(o6.numpy()[0], np.concatenate([rw, rv + np.cross(p, rw)]), atol=1e-13)
    np.testing.assert_allclose(o6.numpy()[1], np.concatenate([rw + np.cross(p, rv), rv]), atol=1e-13)


@wp.kernel
def bf16_k(x: wp.array(dtype=wp.float32), y: wp.array(dtype=wp.bfloat16), s: wp.bfloat16,
           z: wp.array(dtype=wp.float32)):
    i = wp.tid()
    y[i] = wp.bfloat16(x[i]) * s + wp.bfloat16(1.0)
    z[i] = wp.float32(wp.sqrt(wp.abs(y[i])))
    wp.atomic_add(y, 0, wp.bfloat16(1.0))


def _bf16_round(x):
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return (((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16).astype(np.uint32).view(np.float32)


def test_bfloat16_on_the_cpu():
    x = np.array([1.0, 3.14159, -2.5, 1e-3], np.float32)
    y = wp.zeros(4, dtype=wp.bfloat16)
    z = wp.zeros(4, dtype=float)
    wp.launch(bf16_k, dim=4, inputs=[wp.array(x), y, wp.bfloat16(2.0), z])
    ref = _bf16_round(_bf16_round(_bf16_round(x) * 2.0) + 1.0)
    got = np.asarray(y.numpy(), dtype=np.float32)
    np.testing.assert_array_equal(got[1:], ref[1:])
    assert got[0] == _bf16_round(ref[0] + 4.0)  # four atomic adds of 1 (exact at this magnitude)
    np.testing.assert_array_equal(z.numpy()[1:], _bf16_round(np.sqrt(np.abs(ref[1:]))))
    assert float(wp.bfloat16(3.14159)) == _bf16_round(3.14159)
    assert wp.types.type_size_in_bytes(wp.bfloat16) == 2


mat22i = wp.types.matrix((2, 2), wp.int32)


@wp.kernel
def bitwise_k(a: wp.array(dtype=wp.vec3i), b: wp.array(dtype=wp.vec3i), out: wp.array2d(dtype=wp.vec3i),
              m: wp.array(dtype=mat22i)):
    out[0, 0] = a[0] & b[0]
    out[0, 1] = a[0] | b[0]
    out[0, 2] = a[0] ^ b[0]
    out[0, 3] = a[0] << wp.vec3i(1, 2, 3)
    out[0, 4] = a[0] >> wp.vec3i(1, 1, 1)
    out[0, 5] = ~a[0]
    m[0] = ~(m[0] & m[0])


def test_bitwise_ops_of_integer_vectors_and_matrices():
    x, y = np.array([5, 12, -7], np.int32), np.array([3, 10, 6], np.int32)
    out = wp.zeros((1, 6), dtype=wp.vec3i)
    m = wp.array(np.array([[[1, 2], [3, 4]]], np.int32), dtype=mat22i)
    wp.launch(bitwise_k, dim=1, inputs=[wp.array(x[None], dtype=wp.vec3i), wp.array(y[None], dtype=wp.vec3i), out, m])
    ref = [x & y, x | y, x ^ y, x << np.array([1, 2, 3]), x >> 1, ~x]
    np.testing.assert_array_equal(out.numpy()[0], ref)
    np.testing.assert_array_equal(m.numpy()[0], ~np.array([[1, 2], [3, 4]]))


@wp.kernel
def nonzero_k(x: wp.array(dtype=wp.int64), f: wp.array(dtype=wp.float32), o: wp.array2d(dtype=wp.int64),
              of: wp.array(dtype=wp.float32)):
    i = wp.tid()
    o[i, 0] = wp.nonzero(x[i])
    o[i, 1] = wp.step(x[i])
    of[i] = wp.nonzero(f[i])


def test_nonzero_and_integer_step():
    x = np.array([-3, 0, 5], np.int64)
    f = np.array([0.0, -0.5, 2.0], np.float32)
    o = wp.zeros((3, 2), dtype=wp.int64)
    of = wp.zeros(3, dtype=wp.float32)
    wp.launch(nonzero_k, dim=3, inputs=[wp.array(x), wp.array(f), o, of])
    np.testing.assert_array_equal(o.numpy(), np.stack([(x != 0), (x < 0)], 1).astype(np.int64))
    np.testing.assert_array_equal(of.numpy(), (f != 0).astype(np.float32))


@wp.kernel
def len_k(v: wp.array(dtype=wp.vec4d), out: wp.array(dtype=int)):
    out[0] = wp.len(v[0]) + wp.len(v)


def test_wp_len():
    out = wp.zeros(1, dtype=int)
    wp.launch(len_k, dim=1, inputs=[wp.zeros(3, dtype=wp.vec4d), out])
    assert out.numpy()[0] == 7 and wp.len(wp.vec3()) == 3
