"""The erf family, rint, copysign, bit_count, quat_rpy, lerp of composites, Warp's math funcs (norms, twists,
rigid-body helpers), wp.vector/wp.matrix/type() in kernels: against float64 NumPy / SciPy references."""

import numpy as np
import pytest
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


@wp.kernel
def euler_k(e: wp.array(dtype=wp.vec3d), seq: wp.array(dtype=wp.vec3i), q: wp.array(dtype=wp.quatd),
            back: wp.array(dtype=wp.vec3d), q32: wp.array(dtype=wp.quat)):
    t = wp.tid()
    s = seq[t]
    qq = wp.quat_from_euler(e[t], s[0], s[1], s[2])
    q[t] = qq
    back[t] = wp.quat_to_euler(qq, s[0], s[1], s[2])
    q32[t] = wp.quat_from_euler(wp.vec3(wp.float32(e[t][0]), wp.float32(e[t][1]), wp.float32(e[t][2])), 0, 1, 2)


def test_quat_euler_all_sequences_match_scipy_and_round_trip():
    seqs = [(i, j, k) for i in range(3) for j in range(3) for k in range(3) if i != j and j != k]  # 6 + 6
    reps = 6
    n = len(seqs) * reps
    rng = np.random.default_rng(11)
    s = np.array([seqs[t % len(seqs)] for t in range(n)], dtype=np.int32)
    e = rng.uniform(-1.3, 1.3, (n, 3))
    rows = np.arange(n)
    lock = rows < 2 * len(seqs)  # gimbal lock: middle angle +-pi/2 (Tait-Bryan) or 0 (proper)
    proper = s[:, 0] == s[:, 2]
    e[lock, s[lock, 1]] = np.where(proper[lock], 0.0, np.where(rows[lock] < len(seqs), np.pi / 2, -np.pi / 2))
    q, back, q32 = wp.zeros(n, dtype=wp.quatd), wp.zeros(n, dtype=wp.vec3d), wp.zeros(n, dtype=wp.quat)
    wp.launch(euler_k, dim=n, inputs=[wp.array(e, dtype=wp.vec3d), wp.array(s, dtype=wp.vec3i), q, back, q32])
    Q, B = q.numpy(), back.numpy()
    axes = "xyz"

    def same_rotation(a, b, tol):
        assert min(np.abs(a - b).max(), np.abs(a + b).max()) < tol

    for t in range(n):
        i, j, k = s[t]
        name = axes[i] + axes[j] + axes[k]  # scipy: lower case = extrinsic, angles in sequence order
        same_rotation(Q[t], Rotation.from_euler(name, [e[t, i], e[t, j], e[t, k]]).as_quat(), 1e-14)
        last = 3 - i - j if i == k else k
        same_rotation(Q[t], Rotation.from_euler(name, [B[t, i], B[t, j], B[t, last]]).as_quat(), 1e-9)
        lo, hi = (0.0, np.pi) if i == k else (-np.pi / 2, np.pi / 2)
        assert lo - 1e-12 <= B[t, j] <= hi + 1e-12
    ref = Rotation.from_euler("xyz", e).as_quat()
    got = q32.numpy() * np.sign(np.sum(q32.numpy() * ref, axis=1))[:, None]  # q and -q are the same rotation
    np.testing.assert_allclose(got, ref, atol=2e-6)


@wp.kernel
def pieces_k(a: wp.array(dtype=wp.vec3d), sv: wp.array(dtype=wp.spatial_vectord), q: wp.array(dtype=wp.quatd),
             v4: wp.array(dtype=wp.vec4d)):
    t = wp.tid()
    sv[t] = wp.spatial_vector(a[t], 2.0 * a[t])
    q[t] = wp.quaternion(a[t], wp.float64(0.5))
    v4[t] = wp.vec4d(wp.vec2d(a[t][2], a[t][1]), a[t][0], wp.float64(-1.0))


def test_vectors_built_from_pieces_and_their_gradient():
    x = np.array([[1.0, 2.0, 3.0], [-0.5, 0.25, 4.0]])
    a = wp.array(x, dtype=wp.vec3d, requires_grad=True)
    sv, q, v4 = (wp.zeros(2, dtype=d, requires_grad=True) for d in (wp.spatial_vectord, wp.quatd, wp.vec4d))
    tape = wp.Tape()
    with tape:
        wp.launch(pieces_k, dim=2, inputs=[a, sv, q, v4])
    np.testing.assert_array_equal(sv.numpy(), np.concatenate([x, 2 * x], 1))
    np.testing.assert_array_equal(q.numpy(), np.concatenate([x, np.full((2, 1), 0.5)], 1))
    np.testing.assert_array_equal(v4.numpy(), np.stack([x[:, 2], x[:, 1], x[:, 0], -np.ones(2)], 1))
    w = [np.random.default_rng(k).normal(size=(2, n)) for k, n in enumerate((6, 4, 4))]
    tape.backward(grads={sv: wp.array(w[0], dtype=wp.spatial_vectord), q: wp.array(w[1], dtype=wp.quatd),
                         v4: wp.array(w[2], dtype=wp.vec4d)})
    expected = w[0][:, :3] + 2 * w[0][:, 3:] + w[1][:, :3] + w[2][:, 2::-1]
    np.testing.assert_allclose(a.grad.numpy(), expected, rtol=1e-15)


M23D = wp.types.matrix((2, 3), wp.float64)
M32D = wp.types.matrix((3, 2), wp.float64)


@wp.kernel
def rows_cols_k(a: wp.array(dtype=wp.vec3d), b: wp.array(dtype=wp.vec3d), r: wp.array(dtype=M23D),
                c: wp.array(dtype=M32D), q: wp.array(dtype=wp.quatd), axis: wp.array(dtype=wp.vec3d),
                angle: wp.array(dtype=wp.float64), qm: wp.array(dtype=wp.quatd), m: wp.array(dtype=wp.mat44d)):
    t = wp.tid()
    r[t] = wp.matrix_from_rows(a[t], b[t])
    c[t] = wp.matrix_from_cols(a[t], b[t])
    ax, an = wp.quat_to_axis_angle(q[t])
    axis[t] = ax
    angle[t] = an
    qm[t] = wp.quat_from_matrix(m[t])


def test_matrix_from_rows_cols_axis_angle_and_affine_rotation():
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(2, 5, 3))
    q = Rotation.random(5, random_state=3).as_quat()
    q[::2] *= -1  # w < 0 as well: the same rotation, the axis flips with the quaternion
    m = np.zeros((5, 4, 4))
    m[:, :3, :3] = Rotation.from_quat(q).as_matrix()
    m[:, :3, 3], m[:, 3, 3] = rng.normal(size=(5, 3)), 1.0
    outs = [wp.zeros(5, dtype=d) for d in (M23D, M32D, wp.vec3d, wp.float64, wp.quatd)]
    wp.launch(rows_cols_k, dim=5, inputs=[wp.array(a, dtype=wp.vec3d), wp.array(b, dtype=wp.vec3d), outs[0], outs[1],
                                          wp.array(q, dtype=wp.quatd), outs[2], outs[3], outs[4],
                                          wp.array(m, dtype=wp.mat44d)])
    np.testing.assert_array_equal(outs[0].numpy(), np.stack([a, b], 1))
    np.testing.assert_array_equal(outs[1].numpy(), np.stack([a, b], 2))
    rotvec = Rotation.from_quat(q).as_rotvec()  # angle in [0, pi]
    np.testing.assert_allclose(outs[2].numpy() * outs[3].numpy()[:, None], rotvec, atol=1e-14)
    assert (outs[3].numpy() >= 0).all() and (outs[3].numpy() <= np.pi).all()
    qm = outs[4].numpy()
    np.testing.assert_allclose(np.abs(np.sum(qm * q, axis=1)), 1.0, atol=1e-14)
    # host forms
    r = wp.matrix_from_cols(wp.vec2(1.0, 2.0), wp.vec2(3.0, 4.0), wp.vec2(5.0, 6.0))
    np.testing.assert_array_equal(np.array(r), [[1, 3, 5], [2, 4, 6]])
    assert type(wp.matrix_from_rows(wp.vec3d(1, 2, 3), wp.vec3d(4, 5, 6))) is wp.types.matrix((2, 3), wp.float64)


@wp.kernel
def decomp_tuple_k(a: wp.array(dtype=wp.mat33d), out: wp.array(dtype=wp.mat33d)):
    t = wp.tid()
    u, s, v = wp.svd3(a[t])
    q, r = wp.qr3(a[t])
    ev, d = wp.eig3(a[t] + wp.transpose(a[t]))
    out[t] = u * wp.diag(s) * wp.transpose(v) - q * r + ev * wp.diag(d) * wp.transpose(ev)


def test_decompositions_return_tuples_as_in_warp():
    a = np.random.default_rng(2).normal(size=(3, 3, 3))
    out = wp.zeros(3, dtype=wp.mat33d)
    wp.launch(decomp_tuple_k, dim=3, inputs=[wp.array(a, dtype=wp.mat33d), out])
    np.testing.assert_allclose(out.numpy(), a + np.transpose(a, (0, 2, 1)), atol=1e-9)


@wp.kernel
def vec_forms_k(v: wp.array(dtype=wp.vec4d), m: wp.array(dtype=wp.mat44d), o: wp.array2d(dtype=wp.float64),
                oi: wp.array2d(dtype=wp.uint32), ov: wp.array(dtype=wp.vec4d), om: wp.array(dtype=wp.mat44d),
                o3: wp.array(dtype=wp.vec3d)):
    t = wp.tid()
    a = v[t]
    o[t, 0] = wp.max(a)
    o[t, 1] = wp.min(a)
    oi[t, 0] = wp.argmax(a)
    oi[t, 1] = wp.argmin(a)
    ov[t] = wp.sign(a) + wp.mod(a, wp.vec4d(0.7, 0.7, 0.7, 0.7))
    om[t] = 2.0 / m[t]
    p = wp.vec3d(a[0], a[1], a[2])
    o3[t] = wp.transform_point(m[t], p) + 10.0 * wp.transform_vector(m[t], p)


def test_vector_reductions_componentwise_forms_and_4x4_transforms():
    rng = np.random.default_rng(0)
    V, M = rng.normal(size=(3, 4)), rng.normal(size=(3, 4, 4))
    o, oi = wp.zeros((3, 2), dtype=wp.float64), wp.zeros((3, 2), dtype=wp.uint32)
    ov, om, o3 = wp.zeros(3, dtype=wp.vec4d), wp.zeros(3, dtype=wp.mat44d), wp.zeros(3, dtype=wp.vec3d)
    wp.launch(vec_forms_k, dim=3, inputs=[wp.array(V, dtype=wp.vec4d), wp.array(M, dtype=wp.mat44d), o, oi, ov, om, o3])
    np.testing.assert_array_equal(o.numpy(), np.stack([V.max(1), V.min(1)], 1))
    np.testing.assert_array_equal(oi.numpy(), np.stack([V.argmax(1), V.argmin(1)], 1))
    np.testing.assert_allclose(ov.numpy(), np.where(V < 0, -1, 1) + np.fmod(V, 0.7), rtol=1e-15)
    np.testing.assert_allclose(om.numpy(), 2 / M, rtol=1e-15)
    lin = np.einsum("nij,nj->ni", M[:, :3, :3], V[:, :3])
    np.testing.assert_allclose(o3.numpy(), lin + M[:, :3, 3] + 10 * lin, rtol=1e-13, atol=1e-13)


@wp.kernel
def transform_forms_k(t: wp.array(dtype=wp.transformd), s: wp.array(dtype=wp.vec3d), m: wp.array(dtype=wp.mat44d),
                      c: wp.array(dtype=wp.mat44d), t2: wp.array(dtype=wp.transformd), p: wp.array(dtype=wp.vec3d),
                      q: wp.array(dtype=wp.quatd), sc: wp.array(dtype=wp.vec3d), ar: wp.array(dtype=wp.transformd)):
    i = wp.tid()
    m[i] = wp.transform_to_matrix(t[i])
    t2[i] = wp.transform_from_matrix(m[i])
    c[i] = wp.transform_compose(wp.transform_get_translation(t[i]), wp.transform_get_rotation(t[i]), s[i])
    pp, qq, ss = wp.transform_decompose(c[i])
    p[i] = pp
    q[i] = qq
    sc[i] = ss
    u = t[i]
    u.p = s[i]
    w = t[i]
    wp.transform_set_rotation(w, wp.quatd(0.0, 0.0, 0.0, 1.0))
    wp.transform_set_translation(w, 2.0 * s[i])
    ar[i] = (u + w - 0.5 * t[i]) * 2.0


def test_transform_matrices_setters_and_componentwise_arithmetic():
    n = 3
    rng = np.random.default_rng(1)
    Q, P, S = Rotation.random(n, random_state=2).as_quat(), rng.normal(size=(n, 3)), rng.uniform(0.5, 2, (n, 3))
    T = np.concatenate([P, Q], 1)
    outs = [wp.zeros(n, dtype=d) for d in (wp.mat44d, wp.mat44d, wp.transformd, wp.vec3d, wp.quatd, wp.vec3d,
                                           wp.transformd)]
    wp.launch(transform_forms_k, dim=n, inputs=[wp.array(T, dtype=wp.transformd), wp.array(S, dtype=wp.vec3d), *outs])
    M, C, T2, p, q, s, ar = (o.numpy() for o in outs)
    Rm = Rotation.from_quat(Q).as_matrix()
    np.testing.assert_allclose(M[:, :3, :3], Rm, atol=1e-15)
    np.testing.assert_array_equal(M[:, :3, 3], P)
    np.testing.assert_array_equal(M[:, 3], np.tile([0.0, 0.0, 0.0, 1.0], (n, 1)))
    np.testing.assert_array_equal(T2[:, :3], P)
    np.testing.assert_allclose(np.abs(np.sum(T2[:, 3:] * Q, axis=1)), 1.0, atol=1e-14)
    np.testing.assert_allclose(C[:, :3, :3], Rm * S[:, None, :], atol=1e-15)
    np.testing.assert_array_equal(p, P)
    np.testing.assert_allclose(np.abs(np.sum(q * Q, axis=1)), 1.0, atol=1e-14)
    np.testing.assert_allclose(s, S, rtol=1e-14)
    u = T.copy()
    u[:, :3] = S
    w = np.concatenate([2 * S, np.tile([0.0, 0.0, 0.0, 1.0], (n, 1))], 1)
    np.testing.assert_allclose(ar, (u + w - 0.5 * T) * 2.0, rtol=1e-15)


@wp.kernel
def vector_factory_forms_k(out: wp.array(dtype=wp.vec2h), o2: wp.array(dtype=wp.vec2)):
    a = wp.vec2(1.0, 2.0)
    out[0] = wp.types.vector(a, dtype=wp.float16)  # a conversion keeps the length
    o2[0] = wp.types.vector(a) + wp.types.vector(a, length=2) + wp.types.vector(3.0, length=2) \
        + wp.types.vector(length=2, dtype=float)


def test_vector_factory_conversions_and_broadcast():
    out, o2 = wp.zeros(1, dtype=wp.vec2h), wp.zeros(1, dtype=wp.vec2)
    wp.launch(vector_factory_forms_k, dim=1, inputs=[out, o2])
    np.testing.assert_array_equal(out.numpy().astype(np.float32), [[1.0, 2.0]])
    np.testing.assert_array_equal(o2.numpy(), [[5.0, 7.0]])


@wp.kernel
def transform_keywords_k(o: wp.array(dtype=wp.transform), ok: wp.array(dtype=int)):
    t = wp.transform(p=wp.vec3(1.0, 2.0, 3.0))  # the rotation defaults to the identity
    o[0] = t
    o[1] = wp.transform(wp.vec3(1.0, 2.0, 3.0), q=wp.quat(4.0, 5.0, 6.0, 7.0))
    o[2] = wp.transform(wp.vec3(1.0, 1.0, 1.0))
    if t[:] == wp.types.vector(1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0, dtype=float):
        ok[0] = 1
    # wp.transformation(...) takes the parts by name too, in either order
    if wp.transformation(q=wp.quat(4.0, 5.0, 6.0, 7.0), p=wp.vec3(1.0, 2.0, 3.0)) == o[1]:
        ok[1] = 1


def test_transform_constructor_keywords_and_default_rotation():
    o, ok = wp.zeros(3, dtype=wp.transform), wp.zeros(2, dtype=int)
    wp.launch(transform_keywords_k, dim=1, inputs=[o, ok])
    np.testing.assert_array_equal(o.numpy(), [[1, 2, 3, 0, 0, 0, 1], [1, 2, 3, 4, 5, 6, 7], [1, 1, 1, 0, 0, 0, 1]])
    assert ok.numpy().tolist() == [1, 1]


@wp.kernel
def lower_bound_k(arr: wp.array(dtype=float), values: wp.array(dtype=float), out: wp.array2d(dtype=int)):
    t = wp.tid()
    out[t, 0] = wp.lower_bound(arr, values[t])
    out[t, 1] = wp.lower_bound(arr, 2, 5, values[t])


def test_lower_bound_matches_searchsorted():
    arr = np.array([0.5, 1.0, 1.0, 2.0, 3.5, 4.0, 7.0], np.float32)
    values = np.array([-1.0, 0.5, 1.0, 1.5, 3.5, 6.0, 9.0], np.float32)
    out = wp.zeros((7, 2), dtype=int)
    wp.launch(lower_bound_k, dim=7, inputs=[wp.array(arr), wp.array(values), out])
    # a value above every element gives the range's last index (Warp's lower_bound), not its end
    np.testing.assert_array_equal(out.numpy()[:, 0], np.minimum(np.searchsorted(arr, values, side="left"), 6))
    np.testing.assert_array_equal(out.numpy()[:, 1], np.clip(np.searchsorted(arr[2:5], values) + 2, 2, 4))


@wp.kernel
def expect_near_composites_k():
    m = wp.mat44(1.0)
    wp.expect_near(m, m + wp.mat44(0.001), 0.01)
    q = wp.quat(0.0, 0.0, 0.0, 1.0)
    wp.expect_near(q, q * 1.001, 0.01)
    t = wp.transform_identity()
    wp.expect_near(t, t, 0.01)
    wp.expect_near(m, m, tolerance=0.01)
    wp.expect_near(q, q)


def test_expect_near_of_matrices_quaternions_transforms_compiles_and_passes():
    wp.launch(expect_near_composites_k, dim=1)
    wp.synchronize()


def test_bit_count_on_the_host_and_integer_wrapping():
    # host scalars wrap Python ints into their width as C does; bit_count takes integer scalars (a Python int is an
    # int32) and raises Warp's RuntimeError for anything else
    assert int(wp.uint8(-1)) == 255 and int(wp.int8(200)) == -56 and int(wp.uint64(-1)) == 2**64 - 1
    for dtype, bits in ((wp.int8, 8), (wp.uint16, 16), (wp.int32, 32), (wp.uint64, 64)):
        assert wp.bit_count(dtype(-1)) == bits and wp.bit_count(dtype(-2)) == bits - 1
        assert wp.bit_count(dtype(45)) == 4
    assert wp.bit_count(-1) == 32 and wp.bit_count(45) == 4
    for bad in (wp.float32(0), wp.bool(True), wp.vec2i(0)):
        with pytest.raises(RuntimeError, match="Couldn't find a function 'bit_count' compatible"):
            wp.bit_count(bad)
