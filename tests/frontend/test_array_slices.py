"""Array slices inside kernels (``a[i:j:k]``, ``a[i:j, l]``, ``a[::-2]``): strided views with NumPy's rules,
gradients through them, and tile loads of them."""

import numpy as np
import pytest

import weft as wp


@wp.kernel
def slices(a: wp.array2d(dtype=float), lo: int, hi: int, step: int, out: wp.array(dtype=float)):
    sub = a[lo:hi:step, 1]  # run-time bounds, one index
    out[0] = float(sub.shape[0])
    out[1] = float(sub.shape[1])  # extents past ndim read 0, as in Warp
    s = 0.0
    for k in range(sub.shape[0]):
        s += sub[k] * float(k + 1)
    out[2] = s
    w = a[-2:, ::-2]  # negative start, reversed columns
    out[3] = float(w.shape[0] * 10 + w.shape[1])
    out[4] = w[1, 0] * w[0, 1]
    w = w[1]  # straight-line code may rebind a name to another type
    out[5] = w[1]
    e = a[3:1]  # empty
    out[6] = float(e.shape[0])


def test_slices_match_numpy_and_differentiate():
    rng = np.random.default_rng(5)
    an = rng.standard_normal((6, 5))
    for lo, hi, step in [(1, 6, 2), (5, 0, -2), (-1, -7, -1), (0, 100, 4)]:
        a = wp.array(an.astype(np.float32), requires_grad=True)
        out = wp.zeros(7, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(slices, dim=1, inputs=[a, lo, hi, step, out])
        sub = an[lo:hi:step, 1]
        w = an[-2:, ::-2]
        weights = np.arange(1, len(sub) + 1)
        want = [len(sub), 0, sub @ weights, w.shape[0] * 10 + w.shape[1], w[1, 0] * w[0, 1], w[1][1], 0]
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)
        # gradients reach the sliced elements of a (analytic: d out2 / d sub[k] = k + 1, out4 a product)
        seed = np.array([0, 0, 1.0, 0, 2.0, 3.0, 0], np.float32)
        tape.backward(grads={out: wp.array(seed)})
        g = np.zeros_like(an)
        rows = np.arange(an.shape[0])[lo:hi:step]
        g[rows, 1] += weights
        cols = np.arange(an.shape[1])[::-2]
        g[5, cols[0]] += 2.0 * w[0, 1]
        g[4, cols[1]] += 2.0 * w[1, 0]
        g[5, cols[1]] += 3.0
        np.testing.assert_allclose(a.grad.numpy(), g, rtol=1e-5, atol=1e-6)


@wp.kernel
def tile_of_slice(a: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    t = wp.tile_load(a[::2, 1::2], shape=(3, 2))
    wp.tile_store(out[1:, :], t * 2.0)


def test_tile_load_and_store_through_slices():
    an = np.arange(30, dtype=np.float32).reshape(6, 5)
    a = wp.array(an)
    out = wp.zeros((4, 2), dtype=float)
    wp.launch_tiled(tile_of_slice, dim=1, inputs=[a, out], block_dim=8)
    want = np.zeros((4, 2), np.float32)
    want[1:] = 2.0 * an[::2, 1::2]
    np.testing.assert_array_equal(out.numpy(), want)


def test_slice_errors():
    @wp.kernel
    def zero_step(a: wp.array(dtype=float)):
        b = a[::0]
        b[0] = 1.0

    with pytest.raises(ValueError, match="Slice step cannot be zero"):  # a literal zero: Warp's ValueError
        wp.launch(zero_step, dim=1, inputs=[wp.zeros(3, dtype=float)])
    # a run-time zero step is reported after the launch, in release mode too (Warp aborts the process)
    with pytest.raises(wp.RuntimeError_, match="slice step cannot be zero"):
        wp.launch(slices, dim=1, inputs=[wp.zeros((6, 5), dtype=float), 0, 6, 0, wp.zeros(7, dtype=float)])
