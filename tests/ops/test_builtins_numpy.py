"""Every Tier-1 builtin evaluated inside a kernel and compared with a NumPy float64 reference.

Ops are grouped several to a kernel (each distinct kernel costs a native compile), and the tables below say
which op fills which output row.
"""

import math

import numpy as np
import pytest

import weft as wp

RNG = np.random.default_rng(1234)
N = 64

# ---------------------------------------------------------------------------------------------------------------
# scalar float math: one kernel per dtype, row k of `out` holds op k

def _make_scalar_kernel(dtype):
    @wp.kernel
    def scalar_ops(x: wp.array(dtype=dtype), p: wp.array(dtype=dtype), y: wp.array(dtype=dtype),
                   out: wp.array2d(dtype=dtype)):
        i = wp.tid()
        s = x[i]  # in (-0.95, 0.95)
        q = p[i]  # in (0.1, 4)
        t = y[i]  # in (-5, 5)
        out[0, i] = wp.abs(t)
        out[1, i] = wp.sign(t)
        out[2, i] = wp.min(s, t)
        out[3, i] = wp.max(s, t)
        out[4, i] = wp.clamp(t, -q, q)
        out[5, i] = wp.floor(t)
        out[6, i] = wp.ceil(t)
        out[7, i] = wp.round(t)
        out[8, i] = wp.trunc(t)
        out[9, i] = wp.frac(t)
        out[10, i] = wp.sqrt(q)
        out[11, i] = wp.cbrt(t)
        out[12, i] = wp.exp(s)
        out[13, i] = wp.exp2(t)
        out[14, i] = wp.log(q)
        out[15, i] = wp.log2(q)
        out[16, i] = wp.log10(q)
        out[17, i] = wp.pow(q, s)
        out[18, i] = wp.sin(t)
        out[19, i] = wp.cos(t)
        out[20, i] = wp.tan(s)
        out[21, i] = wp.asin(s)
        out[22, i] = wp.acos(s)
        out[23, i] = wp.atan(t)
        out[24, i] = wp.atan2(s, t)
        out[25, i] = wp.sinh(s)
        out[26, i] = wp.cosh(s)
        out[27, i] = wp.tanh(t)
        out[28, i] = wp.degrees(s)
        out[29, i] = wp.radians(t)
        out[30, i] = wp.step(t)
        out[31, i] = wp.smoothstep(s, q, t)
        out[32, i] = wp.lerp(s, t, q)
        out[33, i] = wp.mod(t, q)
        out[34, i] = t % q

    return scalar_ops

SCALAR_KERNELS = {np.float32: _make_scalar_kernel(wp.float32), np.float64: _make_scalar_kernel(wp.float64)}

def _smoothstep(a, b, x):
    t = np.clip((x - a) / (b - a), 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)

SCALAR_REF = [
    ("abs", lambda s, q, t: np.abs(t)),
    ("sign", lambda s, q, t: np.where(t < 0, -1.0, 1.0)),
    ("min", lambda s, q, t: np.minimum(s, t)),
    ("max", lambda s, q, t: np.maximum(s, t)),
    ("clamp", lambda s, q, t: np.minimum(np.maximum(t, -q), q)),
    ("floor", lambda s, q, t: np.floor(t)),
    ("ceil", lambda s, q, t: np.ceil(t)),
    ("round", lambda s, q, t: np.sign(t) * np.floor(np.abs(t) + 0.5)),
    ("trunc", lambda s, q, t: np.trunc(t)),
    ("frac", lambda s, q, t: t - np.trunc(t)),
    ("sqrt", lambda s, q, t: np.sqrt(q)),
    ("cbrt", lambda s, q, t: np.cbrt(t)),
    ("exp", lambda s, q, t: np.exp(s)),
    ("exp2", lambda s, q, t: np.exp2(t)),
    ("log", lambda s, q, t: np.log(q)),
    ("log2", lambda s, q, t: np.log2(q)),
    ("log10", lambda s, q, t: np.log10(q)),
    ("pow", lambda s, q, t: np.power(q, s)),
    ("sin", lambda s, q, t: np.sin(t)),
    ("cos", lambda s, q, t: np.cos(t)),
    ("tan", lambda s, q, t: np.tan(s)),
    ("asin", lambda s, q, t: np.arcsin(s)),
    ("acos", lambda s, q, t: np.arccos(s)),
    ("atan", lambda s, q, t: np.arctan(t)),
    ("atan2", lambda s, q, t: np.arctan2(s, t)),
    ("sinh", lambda s, q, t: np.sinh(s)),
    ("cosh", lambda s, q, t: np.cosh(s)),
    ("tanh", lambda s, q, t: np.tanh(t)),
    ("degrees", lambda s, q, t: np.degrees(s)),
    ("radians", lambda s, q, t: np.radians(t)),
    ("step", lambda s, q, t: np.where(t < 0, 1.0, 0.0)),
    ("smoothstep", lambda s, q, t: _smoothstep(s, q, t)),
    ("lerp", lambda s, q, t: s * (1 - q) + t * q),
    ("mod", lambda s, q, t: np.fmod(t, q)),
    ("% (C fmod)", lambda s, q, t: np.fmod(t, q)),
]

def _scalar_inputs(dtype):
    s = RNG.uniform(-0.95, 0.95, N).astype(dtype)
    q = RNG.uniform(0.1, 4.0, N).astype(dtype)
    t = RNG.uniform(-5.0, 5.0, N).astype(dtype)
    # exact halves and integers exercise round/floor/ceil/trunc/frac edge cases
    t[:8] = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -3.0, 3.0], dtype=dtype)
    return s, q, t

@pytest.fixture(scope="module", params=[np.float32, np.float64], ids=["float32", "float64"])
def scalar_results(request):
    dtype = request.param
    s, q, t = _scalar_inputs(dtype)
    out = wp.zeros((len(SCALAR_REF), N), dtype=wp.float32 if dtype == np.float32 else wp.float64)
    wp.launch(SCALAR_KERNELS[dtype], dim=N, inputs=[wp.array(s), wp.array(q), wp.array(t)], outputs=[out])
    return dtype, s.astype(np.float64), q.astype(np.float64), t.astype(np.float64), out.numpy()

@pytest.mark.parametrize("row", range(len(SCALAR_REF)), ids=[name for name, _ in SCALAR_REF])
def test_scalar_builtin(scalar_results, row):
    dtype, s, q, t, out = scalar_results
    name, ref = SCALAR_REF[row]
    expected = ref(s, q, t)
    rtol, atol = (2e-6, 2e-6) if dtype == np.float32 else (1e-13, 1e-13)
    np.testing.assert_allclose(out[row], expected, rtol=rtol, atol=atol, err_msg=name)

@wp.kernel
def float_predicates(x: wp.array(dtype=float), out: wp.array2d(dtype=int)):
    i = wp.tid()
    v = x[i]
    if wp.isnan(v):
        out[0, i] = 1
    if wp.isinf(v):
        out[1, i] = 1
    if wp.isfinite(v):
        out[2, i] = 1

def test_isnan_isinf_isfinite():
    x = np.array([0.0, -1.5, np.nan, np.inf, -np.inf, 3e38, 1e-40], dtype=np.float32)
    out = wp.zeros((3, len(x)), dtype=int)
    wp.launch(float_predicates, dim=len(x), inputs=[wp.array(x), out])
    np.testing.assert_array_equal(out.numpy(), np.stack([np.isnan(x), np.isinf(x), np.isfinite(x)]).astype(np.int32))

@wp.kernel
def int_scalar_ops(a: wp.array(dtype=wp.int32), b: wp.array(dtype=wp.int32), out: wp.array2d(dtype=wp.int32)):
    i = wp.tid()
    x = a[i]
    y = b[i]
    out[0, i] = wp.abs(x)
    out[1, i] = wp.sign(x)
    out[2, i] = wp.min(x, y)
    out[3, i] = wp.max(x, y)
    out[4, i] = wp.clamp(x, -10, 10)
    out[5, i] = x // y
    out[6, i] = x % y
    out[7, i] = wp.mod(x, y)
    out[8, i] = x & y
    out[9, i] = x | y
    out[10, i] = x ^ y
    out[11, i] = ~x
    out[12, i] = x << 3
    out[13, i] = x >> 2
    out[14, i] = -x

def _c_div(a, b):
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)

def test_int32_builtins_and_c_division():
    a = RNG.integers(-1000, 1000, N, dtype=np.int32)
    b = RNG.integers(1, 50, N, dtype=np.int32) * RNG.choice(np.array([-1, 1], dtype=np.int32), N)
    a[:6] = [-7, 7, -7, 7, 0, -1]
    b[:6] = [2, -2, -2, 2, 3, 5]
    out = wp.zeros((15, N), dtype=wp.int32)
    wp.launch(int_scalar_ops, dim=N, inputs=[wp.array(a), wp.array(b), out])
    got = out.numpy()
    quot = _c_div(a, b)
    rem = a - quot * b
    expected = [np.abs(a), np.where(a < 0, -1, 1), np.minimum(a, b), np.maximum(a, b), np.clip(a, -10, 10), quot, rem,
                rem, a & b, a | b, a ^ b, ~a, a << 3, a >> 2, -a]
    for row, exp in enumerate(expected):
        np.testing.assert_array_equal(got[row], np.asarray(exp, dtype=np.int32), err_msg=f"row {row}")
    # the C semantics explicitly: -7 // 2 == -3 and -7 % 2 == -1 (Python would give -4 and 1)
    assert got[5, 0] == -3 and got[6, 0] == -1
    assert got[5, 1] == -3 and got[6, 1] == 1


def test_int32_division_extremes_and_zero():
    # 32-bit integer division runs in double precision on the CPU (it vectorises): exact over the whole range,
    # x // 0 == x % 0 == 0, and INT_MIN // -1 wraps (two's complement) instead of trapping
    lo, hi = np.iinfo(np.int32).min, np.iinfo(np.int32).max
    a = np.array([lo, lo, hi, hi, 5, -5, lo, 123456789, hi, lo + 1, -1, 0], dtype=np.int32)
    b = np.array([-1, 1, -1, 7, 0, 0, 2, -10, hi, hi, lo, lo], dtype=np.int32)
    out = wp.zeros((15, len(a)), dtype=wp.int32)
    wp.launch(int_scalar_ops, dim=len(a), inputs=[wp.array(a), wp.array(b), out])
    got = out.numpy()
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    safe = np.where(b64 == 0, 1, b64)
    quot = np.where(b64 == 0, 0, _c_div(a64, safe))
    rem = np.where(b64 == 0, 0, a64 - quot * safe)
    np.testing.assert_array_equal(got[5], quot.astype(np.int64).astype(np.uint32).view(np.int32))  # lo // -1 wraps
    np.testing.assert_array_equal(got[6], rem)
    np.testing.assert_array_equal(got[7], rem)
    assert got[5, 0] == lo

@wp.kernel
def uint_bitwise(a: wp.array(dtype=wp.uint32), b: wp.array(dtype=wp.uint32), out: wp.array2d(dtype=wp.uint32)):
    i = wp.tid()
    out[0, i] = a[i] & b[i]
    out[1, i] = a[i] | b[i]
    out[2, i] = a[i] ^ b[i]
    out[3, i] = a[i] >> wp.uint32(3)
    out[4, i] = a[i] // b[i]
    out[5, i] = a[i] % b[i]

def test_uint32_bitwise():
    a = RNG.integers(0, 2**32 - 1, N, dtype=np.uint32)
    b = RNG.integers(1, 2**20, N, dtype=np.uint32)
    out = wp.zeros((6, N), dtype=wp.uint32)
    wp.launch(uint_bitwise, dim=N, inputs=[wp.array(a), wp.array(b), out])
    got = out.numpy()
    for row, exp in enumerate([a & b, a | b, a ^ b, a >> 3, a // b, a % b]):
        np.testing.assert_array_equal(got[row], exp, err_msg=f"row {row}")

# ---------------------------------------------------------------------------------------------------------------
# vectors

@wp.kernel
def vec_ops(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec3), s: wp.array(dtype=float),
            v_out: wp.array2d(dtype=wp.vec3), s_out: wp.array2d(dtype=float), m_out: wp.array(dtype=wp.mat33)):
    i = wp.tid()
    x = a[i]
    y = b[i]
    v_out[0, i] = wp.cross(x, y)
    v_out[1, i] = wp.normalize(x)
    v_out[2, i] = wp.cw_mul(x, y)
    v_out[3, i] = wp.cw_div(x, y)
    v_out[4, i] = x + y
    v_out[5, i] = x - y
    v_out[6, i] = x * s[i]
    v_out[7, i] = s[i] * x
    v_out[8, i] = x / s[i]
    v_out[9, i] = -x
    v_out[10, i] = wp.min(x, y)
    v_out[11, i] = wp.max(x, y)
    v_out[12, i] = wp.abs(x)
    s_out[0, i] = wp.dot(x, y)
    s_out[1, i] = wp.length(x)
    s_out[2, i] = wp.length_sq(x)
    s_out[3, i] = x[0] + x.y * 2.0 + x.z * 3.0
    m_out[i] = wp.outer(x, y)

def test_vector_builtins():
    a = RNG.uniform(-2, 2, (N, 3)).astype(np.float32)
    b = RNG.uniform(0.5, 2, (N, 3)).astype(np.float32)
    s = RNG.uniform(0.5, 2, N).astype(np.float32)
    v_out = wp.zeros((13, N), dtype=wp.vec3)
    s_out = wp.zeros((4, N), dtype=float)
    m_out = wp.zeros(N, dtype=wp.mat33)
    wp.launch(vec_ops, dim=N, inputs=[wp.array(a, dtype=wp.vec3), wp.array(b, dtype=wp.vec3), wp.array(s)],
              outputs=[v_out, s_out, m_out])
    A, B, S = a.astype(np.float64), b.astype(np.float64), s.astype(np.float64)[:, None]
    expected_v = [np.cross(A, B), A / np.linalg.norm(A, axis=1, keepdims=True), A * B, A / B, A + B, A - B, A * S,
                  S * A, A / S, -A, np.minimum(A, B), np.maximum(A, B), np.abs(A)]
    got_v = v_out.numpy()
    for row, exp in enumerate(expected_v):
        np.testing.assert_allclose(got_v[row], exp, rtol=1e-5, atol=1e-5, err_msg=f"vector row {row}")
    expected_s = [np.sum(A * B, axis=1), np.linalg.norm(A, axis=1), np.sum(A * A, axis=1), A @ [1.0, 2.0, 3.0]]
    for row, exp in enumerate(expected_s):
        np.testing.assert_allclose(s_out.numpy()[row], exp, rtol=1e-5, atol=1e-5, err_msg=f"scalar row {row}")
    np.testing.assert_allclose(m_out.numpy(), np.einsum("ni,nj->nij", A, B), rtol=1e-5, atol=1e-6)

@wp.kernel
def vec_types(a: wp.array(dtype=wp.vec2d), b: wp.array(dtype=wp.vec4i), c: wp.array(dtype=wp.vec2d),
              d: wp.array(dtype=wp.vec4i)):
    i = wp.tid()
    c[i] = a[i] * wp.float64(2.0) + wp.vec2d(wp.float64(1.0), wp.float64(-1.0))
    d[i] = b[i] * 3 - wp.vec4i(1, 2, 3, 4)

def test_vector_dtypes():
    a = RNG.uniform(-1, 1, (N, 2))
    b = RNG.integers(-100, 100, (N, 4), dtype=np.int32)
    c = wp.zeros(N, dtype=wp.vec2d)
    d = wp.zeros(N, dtype=wp.vec4i)
    wp.launch(vec_types, dim=N, inputs=[wp.array(a, dtype=wp.vec2d), wp.array(b, dtype=wp.vec4i), c, d])
    np.testing.assert_allclose(c.numpy(), a * 2 + [1.0, -1.0], rtol=1e-15)
    np.testing.assert_array_equal(d.numpy(), b * 3 - [1, 2, 3, 4])

# ---------------------------------------------------------------------------------------------------------------
# matrices

@wp.kernel
def mat_ops(m: wp.array(dtype=wp.mat33), n: wp.array(dtype=wp.mat33), v: wp.array(dtype=wp.vec3),
            m_out: wp.array2d(dtype=wp.mat33), s_out: wp.array2d(dtype=float), v_out: wp.array2d(dtype=wp.vec3)):
    i = wp.tid()
    a = m[i]
    b = n[i]
    m_out[0, i] = wp.transpose(a)
    m_out[1, i] = wp.inverse(a)
    m_out[2, i] = wp.diag(v[i])
    m_out[3, i] = wp.identity(n=3, dtype=float)
    m_out[4, i] = wp.skew(v[i])
    m_out[5, i] = wp.cw_mul(a, b)
    m_out[6, i] = wp.cw_div(a, b)
    m_out[7, i] = a * b
    m_out[8, i] = a + b * 2.0
    m_out[9, i] = a - b
    s_out[0, i] = wp.determinant(a)
    s_out[1, i] = wp.trace(a)
    s_out[2, i] = wp.ddot(a, b)
    s_out[3, i] = a[1, 2]
    v_out[0, i] = wp.get_diag(a)
    v_out[1, i] = a * v[i]
    v_out[2, i] = v[i] * a
    v_out[3, i] = a[2]

def test_matrix_builtins():
    m = RNG.uniform(-1, 1, (N, 3, 3)) + 3 * np.eye(3)  # well-conditioned
    n = RNG.uniform(0.5, 2, (N, 3, 3))
    v = RNG.uniform(-1, 1, (N, 3))
    m32, n32, v32 = m.astype(np.float32), n.astype(np.float32), v.astype(np.float32)
    m_out = wp.zeros((10, N), dtype=wp.mat33)
    s_out = wp.zeros((4, N), dtype=float)
    v_out = wp.zeros((4, N), dtype=wp.vec3)
    wp.launch(mat_ops, dim=N, inputs=[wp.array(m32, dtype=wp.mat33), wp.array(n32, dtype=wp.mat33),
                                      wp.array(v32, dtype=wp.vec3)], outputs=[m_out, s_out, v_out])
    M, Nn, V = m32.astype(np.float64), n32.astype(np.float64), v32.astype(np.float64)
    skew = np.zeros((N, 3, 3))
    skew[:, 0, 1], skew[:, 0, 2], skew[:, 1, 2] = -V[:, 2], V[:, 1], -V[:, 0]
    skew -= skew.transpose(0, 2, 1)
    expected_m = [M.transpose(0, 2, 1), np.linalg.inv(M), np.einsum("ni,ij->nij", V, np.eye(3)),
                  np.broadcast_to(np.eye(3), (N, 3, 3)), skew, M * Nn, M / Nn, M @ Nn, M + 2 * Nn, M - Nn]
    for row, exp in enumerate(expected_m):
        np.testing.assert_allclose(m_out.numpy()[row], exp, rtol=1e-5, atol=1e-5, err_msg=f"matrix row {row}")
    expected_s = [np.linalg.det(M), np.trace(M, axis1=1, axis2=2), np.sum(M * Nn, axis=(1, 2)), M[:, 1, 2]]
    for row, exp in enumerate(expected_s):
        np.testing.assert_allclose(s_out.numpy()[row], exp, rtol=1e-5, atol=1e-5, err_msg=f"scalar row {row}")
    expected_v = [np.diagonal(M, axis1=1, axis2=2), np.einsum("nij,nj->ni", M, V), np.einsum("ni,nij->nj", V, M),
                  M[:, 2]]
    for row, exp in enumerate(expected_v):
        np.testing.assert_allclose(v_out.numpy()[row], exp, rtol=1e-5, atol=1e-5, err_msg=f"vector row {row}")

@wp.kernel
def decompositions(m: wp.array(dtype=wp.mat33d), sym: wp.array(dtype=wp.mat33d), out: wp.array2d(dtype=wp.mat33d),
                   sig: wp.array2d(dtype=wp.vec3d)):
    i = wp.tid()
    a = m[i]
    U = wp.mat33d()
    s = wp.vec3d()
    V = wp.mat33d()
    wp.svd3(a, U, s, V)
    out[0, i] = U
    out[1, i] = V
    sig[0, i] = s
    Q = wp.mat33d()
    R = wp.mat33d()
    wp.qr3(a, Q, R)
    out[2, i] = Q
    out[3, i] = R
    E = wp.mat33d()
    d = wp.vec3d()
    wp.eig3(sym[i], E, d)
    out[4, i] = E
    sig[1, i] = d
    P = wp.mat33d()
    S = wp.mat33d()
    wp.polar_decomposition(a, P, S)
    out[5, i] = P
    out[6, i] = S

def test_svd_qr_eig_polar():
    n = 16
    m = RNG.uniform(-1, 1, (n, 3, 3)) + 2 * np.eye(3)
    sym = m + m.transpose(0, 2, 1)
    out = wp.zeros((7, n), dtype=wp.mat33d)
    sig = wp.zeros((2, n), dtype=wp.vec3d)
    wp.launch(decompositions, dim=n, inputs=[wp.array(m, dtype=wp.mat33d), wp.array(sym, dtype=wp.mat33d), out, sig])
    o, s = out.numpy(), sig.numpy()
    U, V, Q, R, E, P, S = (o[k] for k in range(7))
    eye = np.broadcast_to(np.eye(3), (n, 3, 3))
    tol = {"rtol": 1e-6, "atol": 1e-6}
    # svd3: a = U diag(s) V^T with orthonormal U, V and the singular values of NumPy
    np.testing.assert_allclose(U @ (s[0][:, :, None] * V.transpose(0, 2, 1)), m, **tol)
    np.testing.assert_allclose(U @ U.transpose(0, 2, 1), eye, **tol)
    np.testing.assert_allclose(V @ V.transpose(0, 2, 1), eye, **tol)
    np.testing.assert_allclose(np.sort(np.abs(s[0]), axis=1), np.sort(np.linalg.svd(m, compute_uv=False), axis=1),
                               **tol)
    # qr3: a = Q R, Q orthonormal, R upper triangular
    np.testing.assert_allclose(Q @ R, m, **tol)
    np.testing.assert_allclose(Q @ Q.transpose(0, 2, 1), eye, **tol)
    np.testing.assert_allclose(np.tril(R, -1), 0, atol=1e-6)
    # eig3: sym = E diag(d) E^T
    np.testing.assert_allclose(E @ (s[1][:, :, None] * E.transpose(0, 2, 1)), sym, **tol)
    np.testing.assert_allclose(np.sort(s[1], axis=1), np.linalg.eigvalsh(sym), **tol)
    # polar: a = P S with P a rotation and S symmetric
    np.testing.assert_allclose(P @ S, m, **tol)
    np.testing.assert_allclose(P @ P.transpose(0, 2, 1), eye, **tol)
    np.testing.assert_allclose(S, S.transpose(0, 2, 1), **tol)

# ---------------------------------------------------------------------------------------------------------------
# quaternions and transforms (quaternions are (x, y, z, w) as in Warp)

def _qmul(a, b):
    ax, ay, az, aw = np.moveaxis(a, -1, 0)
    bx, by, bz, bw = np.moveaxis(b, -1, 0)
    return np.stack([aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw,
                     aw * bw - ax * bx - ay * by - az * bz], axis=-1)

def _qconj(q):
    return q * np.array([-1, -1, -1, 1.0])

def _qrot(q, v):
    vq = np.concatenate([v, np.zeros(v.shape[:-1] + (1,))], axis=-1)
    return _qmul(_qmul(q, vq), _qconj(q))[..., :3]

def _qmat(q):
    x, y, z, w = np.moveaxis(q, -1, 0)
    return np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
                     np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
                     np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1)], -2)

@wp.kernel
def quat_ops(axis: wp.array(dtype=wp.vec3d), angle: wp.array(dtype=wp.float64), v: wp.array(dtype=wp.vec3d),
             q_out: wp.array2d(dtype=wp.quatd), v_out: wp.array2d(dtype=wp.vec3d), m_out: wp.array(dtype=wp.mat33d)):
    i = wp.tid()
    q = wp.quat_from_axis_angle(wp.normalize(axis[i]), angle[i])
    q_out[0, i] = q
    q_out[1, i] = wp.quat_inverse(q)
    q_out[2, i] = q * wp.quat_inverse(q)
    m = wp.quat_to_matrix(q)
    m_out[i] = m
    q_out[3, i] = wp.quat_from_matrix(m)
    q_out[4, i] = q * q
    v_out[0, i] = wp.quat_rotate(q, v[i])
    v_out[1, i] = wp.quat_rotate_inv(q, v[i])

def test_quaternion_builtins():
    axis = RNG.uniform(-1, 1, (N, 3))
    angle = RNG.uniform(-3, 3, N)
    v = RNG.uniform(-1, 1, (N, 3))
    q_out = wp.zeros((5, N), dtype=wp.quatd)
    v_out = wp.zeros((2, N), dtype=wp.vec3d)
    m_out = wp.zeros(N, dtype=wp.mat33d)
    wp.launch(quat_ops, dim=N, inputs=[wp.array(axis, dtype=wp.vec3d), wp.array(angle), wp.array(v, dtype=wp.vec3d)],
              outputs=[q_out, v_out, m_out])
    u = axis / np.linalg.norm(axis, axis=1, keepdims=True)
    q = np.concatenate([u * np.sin(angle / 2)[:, None], np.cos(angle / 2)[:, None]], axis=1)
    qo, vo = q_out.numpy(), v_out.numpy()
    tol = {"rtol": 1e-12, "atol": 1e-12}
    np.testing.assert_allclose(qo[0], q, **tol)
    np.testing.assert_allclose(qo[1], _qconj(q), **tol)
    np.testing.assert_allclose(qo[2], np.broadcast_to([0, 0, 0, 1.0], (N, 4)), **tol)
    np.testing.assert_allclose(m_out.numpy(), _qmat(q), **tol)
    # quat_from_matrix recovers q up to sign
    sign = np.sign(np.sum(qo[3] * q, axis=1))[:, None]
    np.testing.assert_allclose(qo[3] * sign, q, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(qo[4], _qmul(q, q), **tol)
    np.testing.assert_allclose(vo[0], _qrot(q, v), **tol)
    np.testing.assert_allclose(vo[1], _qrot(_qconj(q), v), **tol)

@wp.kernel
def transform_ops(p: wp.array(dtype=wp.vec3d), q: wp.array(dtype=wp.quatd), v: wp.array(dtype=wp.vec3d),
                  v_out: wp.array2d(dtype=wp.vec3d), t_out: wp.array2d(dtype=wp.transformd),
                  r_out: wp.array(dtype=wp.quatd)):
    i = wp.tid()
    t = wp.transformd(p[i], q[i])
    u = wp.transformd(v[i], wp.quatd(wp.float64(0.0), wp.float64(0.0), wp.float64(0.0), wp.float64(1.0)))
    v_out[0, i] = wp.transform_point(t, v[i])
    v_out[1, i] = wp.transform_vector(t, v[i])
    v_out[2, i] = wp.transform_get_translation(t)
    t_out[0, i] = wp.transform_multiply(t, u)
    t_out[1, i] = wp.transform_inverse(t)
    t_out[2, i] = t * wp.transform_inverse(t)
    r_out[i] = wp.transform_get_rotation(t)

def test_transform_builtins():
    p = RNG.uniform(-1, 1, (N, 3))
    q = RNG.normal(size=(N, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    v = RNG.uniform(-1, 1, (N, 3))
    v_out = wp.zeros((3, N), dtype=wp.vec3d)
    t_out = wp.zeros((3, N), dtype=wp.transformd)
    r_out = wp.zeros(N, dtype=wp.quatd)
    wp.launch(transform_ops, dim=N, inputs=[wp.array(p, dtype=wp.vec3d), wp.array(q, dtype=wp.quatd),
                                            wp.array(v, dtype=wp.vec3d)], outputs=[v_out, t_out, r_out])
    vo, to = v_out.numpy(), t_out.numpy()
    tol = {"rtol": 1e-12, "atol": 1e-12}
    np.testing.assert_allclose(vo[0], _qrot(q, v) + p, **tol)
    np.testing.assert_allclose(vo[1], _qrot(q, v), **tol)
    np.testing.assert_allclose(vo[2], p, **tol)
    np.testing.assert_allclose(r_out.numpy(), q, **tol)
    # t * u: translation p + R v, rotation q
    np.testing.assert_allclose(to[0][:, :3], p + _qrot(q, v), **tol)
    np.testing.assert_allclose(to[0][:, 3:], q, **tol)
    # inverse: rotation conj(q), translation -R^T p
    np.testing.assert_allclose(to[1][:, 3:], _qconj(q), **tol)
    np.testing.assert_allclose(to[1][:, :3], -_qrot(_qconj(q), p), **tol)
    np.testing.assert_allclose(to[2][:, :3], 0, atol=1e-12)
    np.testing.assert_allclose(to[2][:, 3:], np.broadcast_to([0, 0, 0, 1.0], (N, 4)), **tol)

# ---------------------------------------------------------------------------------------------------------------
# spatial vectors (angular top, linear bottom, as in Warp)

@wp.kernel
def spatial_ops(a: wp.array(dtype=wp.spatial_vector), b: wp.array(dtype=wp.spatial_vector),
                t: wp.array(dtype=wp.transform), v_out: wp.array2d(dtype=wp.spatial_vector),
                s_out: wp.array(dtype=float), h_out: wp.array2d(dtype=wp.vec3), m_out: wp.array(dtype=wp.spatial_matrix)):
    i = wp.tid()
    x = a[i]
    y = b[i]
    v_out[0, i] = wp.spatial_cross(x, y)
    v_out[1, i] = wp.spatial_cross_dual(x, y)
    v_out[2, i] = x + y
    s_out[i] = wp.spatial_dot(x, y)
    h_out[0, i] = wp.spatial_top(x)
    h_out[1, i] = wp.spatial_bottom(x)
    R = wp.quat_to_matrix(wp.transform_get_rotation(t[i]))
    m_out[i] = wp.spatial_adjoint(R, wp.skew(wp.transform_get_translation(t[i])) * R)

def test_spatial_builtins():
    a = RNG.uniform(-1, 1, (N, 6)).astype(np.float32)
    b = RNG.uniform(-1, 1, (N, 6)).astype(np.float32)
    p = RNG.uniform(-1, 1, (N, 3))
    q = RNG.normal(size=(N, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    t = np.concatenate([p, q], axis=1).astype(np.float32)
    v_out = wp.zeros((3, N), dtype=wp.spatial_vector)
    s_out = wp.zeros(N, dtype=float)
    h_out = wp.zeros((2, N), dtype=wp.vec3)
    m_out = wp.zeros(N, dtype=wp.spatial_matrix)
    wp.launch(spatial_ops, dim=N, inputs=[wp.array(a, dtype=wp.spatial_vector), wp.array(b, dtype=wp.spatial_vector),
                                          wp.array(t, dtype=wp.transform)], outputs=[v_out, s_out, h_out, m_out])
    A, B = a.astype(np.float64), b.astype(np.float64)
    wa, va, wb, vb = A[:, :3], A[:, 3:], B[:, :3], B[:, 3:]
    cross = np.concatenate([np.cross(wa, wb), np.cross(wa, vb) + np.cross(va, wb)], axis=1)
    dual = np.concatenate([np.cross(wa, wb) + np.cross(va, vb), np.cross(wa, vb)], axis=1)
    tol = {"rtol": 1e-5, "atol": 1e-5}
    np.testing.assert_allclose(v_out.numpy()[0], cross, **tol)
    np.testing.assert_allclose(v_out.numpy()[1], dual, **tol)
    np.testing.assert_allclose(v_out.numpy()[2], A + B, **tol)
    np.testing.assert_allclose(s_out.numpy(), np.sum(A * B, axis=1), **tol)
    np.testing.assert_allclose(h_out.numpy()[0], wa, **tol)
    np.testing.assert_allclose(h_out.numpy()[1], va, **tol)
    R = _qmat(t[:, 3:].astype(np.float64))
    P = np.zeros((N, 3, 3))
    tp = t[:, :3].astype(np.float64)
    P[:, 0, 1], P[:, 0, 2], P[:, 1, 2] = -tp[:, 2], tp[:, 1], -tp[:, 0]
    P -= P.transpose(0, 2, 1)
    expected = np.zeros((N, 6, 6))
    expected[:, :3, :3] = R
    expected[:, 3:, 3:] = R
    expected[:, 3:, :3] = P @ R
    np.testing.assert_allclose(m_out.numpy(), expected, **tol)

# ---------------------------------------------------------------------------------------------------------------
# random numbers: statistical sanity

@wp.kernel
def random_ops(seed: int, f: wp.array(dtype=float), g: wp.array(dtype=float), n: wp.array(dtype=float),
               k: wp.array(dtype=int), u: wp.array(dtype=wp.uint32)):
    i = wp.tid()
    state = wp.rand_init(seed, i)
    f[i] = wp.randf(state)
    g[i] = wp.randf(state, -2.0, 3.0)
    n[i] = wp.randn(state)
    k[i] = wp.randi(state, -5, 5)
    u[i] = wp.uint32(wp.randi(state))

def test_random_statistics():
    m = 100_000
    f, g, n = (wp.zeros(m, dtype=float) for _ in range(3))
    k = wp.zeros(m, dtype=int)
    u = wp.zeros(m, dtype=wp.uint32)
    wp.launch(random_ops, dim=m, inputs=[42, f, g, n, k, u])
    fa, ga, na, ka = f.numpy(), g.numpy(), n.numpy(), k.numpy()
    assert fa.min() >= 0.0 and fa.max() < 1.0
    assert abs(fa.mean() - 0.5) < 0.01 and abs(fa.var() - 1 / 12) < 0.005
    assert ga.min() >= -2.0 and ga.max() < 3.0 and abs(ga.mean() - 0.5) < 0.05
    assert abs(na.mean()) < 0.02 and abs(na.std() - 1.0) < 0.02
    assert abs(np.mean(np.abs(na) < 1.0) - 0.6827) < 0.01
    assert ka.min() == -5 and ka.max() == 4  # randi(lo, hi) is in [lo, hi)
    counts = np.bincount(ka + 5, minlength=10)
    assert np.all(np.abs(counts / m - 0.1) < 0.01)
    assert len(np.unique(u.numpy())) > m * 0.99  # 32-bit outputs practically never collide
    # deterministic for a seed, different for another seed
    f2 = wp.zeros(m, dtype=float)
    wp.launch(random_ops, dim=m, inputs=[42, f2, g, n, k, u])
    np.testing.assert_array_equal(f2.numpy(), fa)
    wp.launch(random_ops, dim=m, inputs=[43, f2, g, n, k, u])
    assert np.mean(f2.numpy() == fa) < 0.01
    # neighbouring threads are uncorrelated
    assert abs(np.corrcoef(fa[:-1], fa[1:])[0, 1]) < 0.02

# ---------------------------------------------------------------------------------------------------------------
# atomics: every thread hits one of a few elements, so a non-atomic update would lose most increments

THREADS = 200_000
SLOTS = 4

def _make_atomic_kernel(dtype):
    @wp.kernel
    def atomics(vals: wp.array(dtype=dtype), acc: wp.array(dtype=dtype), lo: wp.array(dtype=dtype),
                hi: wp.array(dtype=dtype), sub: wp.array(dtype=dtype), old_sum: wp.array(dtype=dtype)):
        i = wp.tid()
        s = i % 4
        old = wp.atomic_add(acc, s, vals[i])
        wp.atomic_min(lo, s, vals[i])
        wp.atomic_max(hi, s, vals[i])
        wp.atomic_sub(sub, s, vals[i])
        wp.atomic_add(old_sum, s, old - old)

    return atomics

ATOMIC_KERNELS = {t: _make_atomic_kernel(t) for t in (wp.int32, wp.float32, wp.float64)}

@pytest.mark.parametrize("dtype", [wp.int32, wp.float32, wp.float64], ids=["int32", "float32", "float64"])
def test_atomic_add_sub_min_max(dtype):
    np_dtype = {wp.int32: np.int32, wp.float32: np.float32, wp.float64: np.float64}[dtype]
    # small integer-valued data keeps float sums exact regardless of the order of additions
    vals = RNG.integers(-50, 50, THREADS).astype(np_dtype)
    acc = wp.zeros(SLOTS, dtype=dtype)
    lo = wp.full(SLOTS, 1000, dtype=dtype)
    hi = wp.full(SLOTS, -1000, dtype=dtype)
    sub = wp.zeros(SLOTS, dtype=dtype)
    old_sum = wp.zeros(SLOTS, dtype=dtype)
    wp.launch(ATOMIC_KERNELS[dtype], dim=THREADS, inputs=[wp.array(vals), acc, lo, hi, sub, old_sum])
    groups = vals.astype(np.float64).reshape(-1, SLOTS)
    np.testing.assert_array_equal(acc.numpy(), groups.sum(axis=0))
    np.testing.assert_array_equal(sub.numpy(), -groups.sum(axis=0))
    np.testing.assert_array_equal(lo.numpy(), groups.min(axis=0))
    np.testing.assert_array_equal(hi.numpy(), groups.max(axis=0))

@wp.kernel
def atomic_exch_cas(slots: wp.array(dtype=int), winners: wp.array(dtype=int), exch: wp.array(dtype=int),
                    seen: wp.array(dtype=int), fslot: wp.array(dtype=float), fwin: wp.array(dtype=int)):
    i = wp.tid()
    # cas: exactly one thread sees the initial -1 and wins its slot
    if wp.atomic_cas(slots, i % 4, -1, i) == -1:
        wp.atomic_add(winners, i % 4, 1)
    # exch: every thread swaps its id in; the old values form a permutation of {-1} and all ids but one
    old = wp.atomic_exch(exch, 0, i)
    wp.atomic_add(seen, old + 1, 1)
    if wp.atomic_cas(fslot, 0, 0.0, 1.0) == 0.0:
        wp.atomic_add(fwin, 0, 1)

def test_atomic_exch_cas():
    n = 50_000
    slots = wp.full(4, -1, dtype=int)
    winners = wp.zeros(4, dtype=int)
    exch = wp.full(1, -1, dtype=int)
    seen = wp.zeros(n + 1, dtype=int)
    fslot = wp.zeros(1, dtype=float)
    fwin = wp.zeros(1, dtype=int)
    wp.launch(atomic_exch_cas, dim=n, inputs=[slots, winners, exch, seen, fslot, fwin])
    np.testing.assert_array_equal(winners.numpy(), [1, 1, 1, 1])
    s = slots.numpy()
    assert all(s[k] % 4 == k for k in range(4))
    last = exch.numpy()[0]
    seen_np = seen.numpy()
    assert seen_np[last + 1] == 0  # the final value was never returned as an old value
    assert seen_np.sum() == n and np.all(np.delete(seen_np, last + 1) == 1)
    assert fslot.numpy()[0] == 1.0 and fwin.numpy()[0] == 1

@wp.kernel
def atomic_vec3(vals: wp.array(dtype=wp.vec3), acc: wp.array(dtype=wp.vec3), lo: wp.array(dtype=wp.vec3),
                hi: wp.array(dtype=wp.vec3), sub: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    wp.atomic_add(acc, i % 2, vals[i])
    wp.atomic_sub(sub, i % 2, vals[i])
    wp.atomic_min(lo, i % 2, vals[i])
    wp.atomic_max(hi, i % 2, vals[i])

def test_atomic_vec3():
    vals = RNG.integers(-20, 20, (THREADS, 3)).astype(np.float32)
    acc, sub = wp.zeros(2, dtype=wp.vec3), wp.zeros(2, dtype=wp.vec3)
    lo = wp.full(2, wp.vec3(1e6, 1e6, 1e6), dtype=wp.vec3)
    hi = wp.full(2, wp.vec3(-1e6, -1e6, -1e6), dtype=wp.vec3)
    wp.launch(atomic_vec3, dim=THREADS, inputs=[wp.array(vals, dtype=wp.vec3), acc, lo, hi, sub])
    g = vals.astype(np.float64).reshape(-1, 2, 3)
    np.testing.assert_array_equal(acc.numpy(), g.sum(axis=0))
    np.testing.assert_array_equal(sub.numpy(), -g.sum(axis=0))
    np.testing.assert_array_equal(lo.numpy(), g.min(axis=0))
    np.testing.assert_array_equal(hi.numpy(), g.max(axis=0))

@wp.kernel
def atomic_counter(counter: wp.array2d(dtype=int), slots: wp.array(dtype=int)):
    i = wp.tid()
    # the returned old value is a unique ticket per thread
    ticket = wp.atomic_add(counter, 0, 1, 1)
    slots[ticket] = i

def test_atomic_add_returns_unique_tickets_2d():
    n = 100_000
    counter = wp.zeros((1, 2), dtype=int)
    slots = wp.full(n, -1, dtype=int)
    wp.launch(atomic_counter, dim=n, inputs=[counter, slots])
    assert counter.numpy()[0, 1] == n
    np.testing.assert_array_equal(np.sort(slots.numpy()), np.arange(n))

def test_host_reference_helpers_agree():
    # the reference helpers used above are themselves right
    q = np.array([0.0, 0.0, math.sin(math.pi / 4), math.cos(math.pi / 4)])
    np.testing.assert_allclose(_qrot(q, np.array([1.0, 0, 0])), [0, 1, 0], atol=1e-15)
    np.testing.assert_allclose(_qmat(q) @ [1.0, 0, 0], [0, 1, 0], atol=1e-15)
    np.testing.assert_array_equal(_c_div(np.array([-7, 7]), np.array([2, -2])), [-3, -3])
