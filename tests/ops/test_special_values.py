"""NaN / infinity semantics shared with Warp: min / max / clamp / atomic min-max are C's fmin / fmax (a NaN operand
counts as missing) with adjoints routed to the operand the result came from; isnan / isinf / isfinite of composite
values; float constants divided by zero fold to IEEE infinities; empty structs nested in structs."""

import numpy as np

import weft as wp

NAN = float("nan")


@wp.kernel
def _minmax(a: wp.array(dtype=float), b: wp.array(dtype=float), c: wp.array(dtype=float), out: wp.array2d(dtype=float),
            va: wp.array(dtype=wp.vec3), vb: wp.array(dtype=wp.vec3), vout: wp.array2d(dtype=wp.vec3),
            red: wp.array2d(dtype=float)):
    i = wp.tid()
    out[0, i] = wp.min(a[i], b[i])
    out[1, i] = wp.max(a[i], b[i])
    out[2, i] = wp.clamp(a[i], b[i], c[i])
    vout[0, i] = wp.min(va[i], vb[i])
    vout[1, i] = wp.max(va[i], vb[i])
    red[0, i] = wp.min(va[i])
    red[1, i] = wp.max(va[i])


def test_minmax_clamp_nan_match_fmin_fmax():
    a = np.array([-1.0, NAN, NAN, -1.0, NAN, 2.0, 0.5, 0.0])
    b = np.array([NAN, -1.0, NAN, 2.0, 2.0, NAN, -1.0, 1.0])
    c = np.array([1.0, 1.0, NAN, NAN, 3.0, 1.0, 1.0, -1.0])  # the last: lo > hi -> hi (NumPy's clip)
    va = np.array([[NAN, -1.0, 2.0], [-1.0, NAN, 2.0], [-1.0, 2.0, NAN], [NAN, NAN, NAN],
                   [3.0, 2.0, 1.0], [1.0, NAN, 0.0], [NAN, 2.0, -1.0], [0.0, 0.0, 0.0]])
    vb = va[::-1].copy()
    n = len(a)
    out, vout, red = wp.zeros((3, n), dtype=float), wp.zeros((2, n), dtype=wp.vec3), wp.zeros((2, n), dtype=float)
    wp.launch(_minmax, dim=n, inputs=[wp.array(a, dtype=float), wp.array(b, dtype=float), wp.array(c, dtype=float),
                                      out, wp.array(va, dtype=wp.vec3), wp.array(vb, dtype=wp.vec3), vout, red])
    ref = [np.fmin(a, b), np.fmax(a, b), np.fmin(np.fmax(a, b), c)]
    np.testing.assert_array_equal(out.numpy(), np.array(ref, dtype=np.float32))
    np.testing.assert_array_equal(vout.numpy(), np.array([np.fmin(va, vb), np.fmax(va, vb)], dtype=np.float32))
    np.testing.assert_array_equal(red.numpy(), np.array([np.fmin.reduce(va, axis=1), np.fmax.reduce(va, axis=1)],
                                                        dtype=np.float32))


@wp.kernel
def _clamp_k(x: wp.array(dtype=wp.float64), a: wp.array(dtype=wp.float64), b: wp.array(dtype=wp.float64),
             v: wp.array(dtype=wp.vec3d), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    out[i] = wp.clamp(x[i], a[i], b[i]) + wp.min(v[i]) + 2.0 * wp.max(v[i])


def _clamp_grads(x, a, b, v):
    arrs = [wp.array(x, dtype=wp.float64, requires_grad=True), wp.array(a, dtype=wp.float64, requires_grad=True),
            wp.array(b, dtype=wp.float64, requires_grad=True), wp.array(v, dtype=wp.vec3d, requires_grad=True)]
    out = wp.zeros(len(x), dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(_clamp_k, dim=len(x), inputs=arrs, outputs=[out])
    tape.backward(grads={out: wp.ones(len(x), dtype=wp.float64)})
    return out.numpy(), [g.grad.numpy() for g in arrs]


def test_clamp_and_reduction_adjoints_follow_the_chosen_operand():
    # (x, lo, hi) -> which of the three the result came from (Warp's rows, clamp = min(max(x, lo), hi))
    rows = [(NAN, -1.0, 1.0, 1), (NAN, 1.0, -1.0, 2), (0.5, NAN, 1.0, 0), (2.0, NAN, 1.0, 2), (-2.0, -1.0, NAN, 1),
            (0.5, -1.0, 1.0, 0)]
    x, a, b, src = (np.array(col) for col in zip(*rows))
    v = np.array([[NAN, 2.0, -1.0]] * len(rows))
    _, (gx, ga, gb, gv) = _clamp_grads(x, a, b, v)
    np.testing.assert_array_equal(np.stack([gx, ga, gb], 1), np.eye(3)[src.astype(int)])
    np.testing.assert_array_equal(gv, np.tile([0.0, 2.0, 1.0], (len(rows), 1)))  # min at [2], max at [1]


def test_clamp_minmax_gradients_match_finite_differences():
    rng = np.random.default_rng(3)
    n = 8
    x, a, b = rng.uniform(-2, 2, n), rng.uniform(-1.5, 0, n), rng.uniform(0, 1.5, n)
    b[:2] = a[:2] - 0.5  # lo > hi: the result is hi
    v = rng.uniform(-1, 1, (n, 3))
    _, grads = _clamp_grads(x, a, b, v)
    h = 1e-6
    for k, base in enumerate((x, a, b, v)):
        fd = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            args = [x, a, b, v]
            plus, minus = base.copy(), base.copy()
            plus[idx] += h
            minus[idx] -= h
            fp = _clamp_grads(*[plus if j == k else args[j] for j in range(4)])[0].sum()
            fm = _clamp_grads(*[minus if j == k else args[j] for j in range(4)])[0].sum()
            fd[idx] = (fp - fm) / (2 * h)
        np.testing.assert_allclose(grads[k], fd, atol=1e-6)


@wp.kernel
def _atomic_k(slot_min: wp.array(dtype=float), slot_max: wp.array(dtype=float), value: wp.array(dtype=float),
              old: wp.array(dtype=float)):
    i = wp.tid()
    old[i] = wp.atomic_min(slot_min, i, value[i])
    wp.atomic_max(slot_max, i, value[i])


def test_atomic_minmax_nan():
    s = np.array([-1.0, NAN, NAN, -1.0, NAN, 2.0, 5.0, 2.0], dtype=np.float32)
    val = np.array([NAN, -1.0, NAN, 2.0, 2.0, NAN, 2.0, 5.0], dtype=np.float32)
    smin = wp.array(s, dtype=float, requires_grad=True)
    smax = wp.array(s, dtype=float)
    value = wp.array(val, dtype=float, requires_grad=True)
    old = wp.zeros(len(s), dtype=float)
    tape = wp.Tape()
    with tape:
        wp.launch(_atomic_k, dim=len(s), inputs=[smin, smax, value, old])
    np.testing.assert_array_equal(smin.numpy(), np.fmin(s, val))
    np.testing.assert_array_equal(smax.numpy(), np.fmax(s, val))
    np.testing.assert_array_equal(old.numpy(), s)
    tape.backward(grads={smin: wp.ones(len(s), dtype=float)})
    # the value's gradient where it won (also NaN over NaN)
    won = (np.fmin(s, val) == val) | (np.isnan(s) & np.isnan(val))
    np.testing.assert_array_equal(value.grad.numpy(), won.astype(np.float32))


@wp.kernel
def _classify(v: wp.array(dtype=wp.vec3h), m: wp.array(dtype=wp.mat22d), q: wp.array(dtype=wp.quat),
              out: wp.array2d(dtype=wp.bool), consts: wp.array(dtype=wp.float16)):
    i = wp.tid()
    out[i, 0] = wp.isnan(v[i])
    out[i, 1] = wp.isinf(v[i])
    out[i, 2] = wp.isfinite(v[i])
    out[i, 3] = wp.isnan(m[i])
    out[i, 4] = wp.isinf(m[i])
    out[i, 5] = wp.isfinite(m[i])
    out[i, 6] = wp.isnan(q[i])
    out[i, 7] = wp.isinf(q[i])
    out[i, 8] = wp.isfinite(q[i])
    if i == 0:
        consts[0] = wp.float16(2.0 / 0.0)
        consts[1] = wp.float16(-2.0 / 0.0)
        consts[2] = wp.float16(0.0 / 0.0)
        consts[3] = wp.float16(wp.inf)


def test_composite_classification_and_ieee_constants():
    vals = np.array([0.0, NAN, np.inf, -np.inf])
    v = np.zeros((4, 3))
    v[:, 1] = vals
    m = np.zeros((4, 2, 2))
    m[:, 1, 0] = vals
    q = np.zeros((4, 4))
    q[:, 3] = vals
    out = wp.zeros((4, 9), dtype=wp.bool)
    consts = wp.zeros(4, dtype=wp.float16)
    wp.launch(_classify, dim=4, inputs=[wp.array(v, dtype=wp.vec3h), wp.array(m, dtype=wp.mat22d),
                                        wp.array(q, dtype=wp.quat), out, consts])
    ref = [np.isnan(vals), np.isinf(vals), np.isfinite(vals)] * 3
    np.testing.assert_array_equal(out.numpy(), np.stack(ref, 1))
    c = consts.numpy().astype(np.float64)
    assert c[0] == np.inf and c[1] == -np.inf and np.isnan(c[2]) and c[3] == np.inf


@wp.struct
class _Empty:
    pass


@wp.struct
class _Nest:
    a: _Empty
    b: _Empty
    z: int


@wp.kernel
def _nest_k(s: _Nest, out: wp.array(dtype=int)):
    out[0] = s.z


def test_empty_struct_nested_in_a_struct():
    s = _Nest()
    s.z = 42
    out = wp.zeros(1, dtype=int)
    wp.launch(_nest_k, dim=1, inputs=[s, out])
    assert out.numpy()[0] == 42
    assert _Nest.numpy_dtype().itemsize == 8  # two one-byte empty members, padding, int32
