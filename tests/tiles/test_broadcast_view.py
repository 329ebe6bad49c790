"""A name bound to ``wp.tile_broadcast(src, shape)`` is a view of ``src``, as in Warp: an in-place change of the view
adds every view element's change into the source element it is broadcast from (Warp's atomic updates of a broadcast
tile), and the view then reads the updated source. References: NumPy (float64); gradients against central
differences of the launches themselves."""

from __future__ import annotations

import numpy as np

import weft as wp

R, C = 3, 5


@wp.kernel
def axpy_into_broadcast(bias_in: wp.array(dtype=wp.float64), row_in: wp.array2d(dtype=wp.float64),
                        src_in: wp.array2d(dtype=wp.float64), alpha: wp.float64,
                        out: wp.array2d(dtype=wp.float64), bias_out: wp.array(dtype=wp.float64),
                        row_out: wp.array2d(dtype=wp.float64)):
    bias = wp.tile_load(bias_in, shape=C)
    dest = wp.tile_broadcast(bias, shape=(R, C))
    src = wp.tile_load(src_in, shape=(R, C))
    wp.tile_axpy(alpha, src, dest)  # each column's R changes land in bias[j]
    dest += src * src
    wp.tile_store(out, dest)
    wp.tile_store(bias_out, bias)
    row = wp.tile_load(row_in, shape=(R, 1))
    wide = wp.tile_broadcast(row, shape=(R, C))
    wide -= src
    wp.tile_store(row_out, row)


def _run(bias, row, src, alpha, requires_grad=False):
    arrays = [wp.array(v, dtype=wp.float64, requires_grad=requires_grad) for v in (bias, row, src)]
    outs = [wp.zeros((R, C), dtype=wp.float64, requires_grad=requires_grad),
            wp.zeros(C, dtype=wp.float64, requires_grad=requires_grad),
            wp.zeros((R, 1), dtype=wp.float64, requires_grad=requires_grad)]
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(axpy_into_broadcast, dim=[1], inputs=[arrays[0], arrays[1], arrays[2], alpha],
                        outputs=outs, block_dim=16)
    return arrays, outs, tape


def test_in_place_changes_of_a_broadcast_view_add_up_in_the_source():
    rng = np.random.default_rng(3)
    bias, row, src = rng.normal(size=C), rng.normal(size=(R, 1)), rng.normal(size=(R, C))
    alpha = 0.75
    _, (out, bias_out, row_out), _ = _run(bias, row, src, alpha)
    new_bias = bias + (alpha * src).sum(0) + (src * src).sum(0)
    np.testing.assert_allclose(bias_out.numpy(), new_bias, rtol=1e-12)
    np.testing.assert_allclose(out.numpy(), np.broadcast_to(new_bias, (R, C)), rtol=1e-12)
    np.testing.assert_allclose(row_out.numpy(), row - src.sum(1, keepdims=True), rtol=1e-12)


def test_broadcast_view_gradients_match_central_differences():
    rng = np.random.default_rng(4)
    bias, row, src = rng.normal(size=C), rng.normal(size=(R, 1)), rng.normal(size=(R, C))
    alpha = 0.75
    weights = [rng.normal(size=(R, C)), rng.normal(size=C), rng.normal(size=(R, 1))]

    def loss(b, r, s):
        return sum(float((w * o.numpy()).sum()) for w, o in zip(weights, _run(b, r, s, alpha)[1]))

    arrays, outs, tape = _run(bias, row, src, alpha, requires_grad=True)
    for w, o in zip(weights, outs):
        o.grad = wp.array(w, dtype=wp.float64)
    tape.backward()
    inputs = [bias, row, src]
    h = 1e-6
    for k, (x, a) in enumerate(zip(inputs, arrays)):
        fd = np.zeros_like(x)
        for idx in np.ndindex(*x.shape):
            plus = [v.copy() for v in inputs]
            minus = [v.copy() for v in inputs]
            plus[k][idx] += h
            minus[k][idx] -= h
            fd[idx] = (loss(*plus) - loss(*minus)) / (2 * h)
        np.testing.assert_allclose(a.grad.numpy(), fd, rtol=1e-6, atol=1e-7)
