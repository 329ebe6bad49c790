"""Reductions and scans in a last, partial block (a launch size that is not a multiple of ``block_dim``).

As in Warp, element i of a tile belongs to lane i % block_dim, and a block that lacks lanes leaves their elements out
of every reduction and scan (tile_sum, tile_min / tile_max, tile_argmin / tile_argmax, tile_reduce, the scans), whole
tile or along an axis; their adjoints get nothing. An axis slice left without elements reduces to the operator's
identity (wp.add, wp.mul, wp.min, wp.max), or the launch raises for a function without one. References: NumPy in
float64 with the owner mask; gradients against central differences of the launches themselves.
"""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp
from weft.errors import RuntimeError_

R, C = 4, 6  # the tile of each block: 24 elements, so a block of 16 lanes owns some of them twice


@wp.func
def prod_fn(a: wp.float64, b: wp.float64):
    return a * b


@wp.kernel
def reductions(x: wp.array3d(dtype=wp.float64), whole: wp.array2d(dtype=wp.float64),
               ax0: wp.array2d(dtype=wp.float64), ax1: wp.array2d(dtype=wp.float64),
               scans: wp.array3d(dtype=wp.float64), args: wp.array2d(dtype=wp.int32)):
    i = wp.tid()
    b = i // wp.block_dim()
    t = wp.tile_load(x[b], shape=(R, C))
    f = wp.tile_reshape(t, shape=R * C)
    wp.tile_store(whole[b], wp.tile_sum(t), offset=0)
    wp.tile_store(whole[b], wp.tile_min(t), offset=1)
    wp.tile_store(whole[b], wp.tile_max(t), offset=2)
    wp.tile_store(whole[b], wp.tile_reduce(prod_fn, t), offset=3)
    wp.tile_store(whole[b], wp.tile_reduce(wp.max, t), offset=4)
    wp.tile_store(args[b], wp.tile_argmin(t), offset=0)
    wp.tile_store(args[b], wp.tile_argmax(t), offset=1)
    wp.tile_store(ax0[b], wp.tile_sum(t, axis=0), offset=0)
    wp.tile_store(ax0[b], wp.tile_reduce(wp.mul, t, axis=0), offset=C)
    wp.tile_store(ax1[b], wp.tile_sum(t, axis=1), offset=0)
    wp.tile_store(ax1[b], wp.tile_reduce(wp.min, t, axis=1), offset=R)
    wp.tile_store(scans[b, 0], wp.tile_scan_inclusive(f))
    wp.tile_store(scans[b, 1], wp.tile_scan_exclusive(f))
    wp.tile_store(scans[b, 2], wp.tile_scan_max_inclusive(f))
    wp.tile_store(scans[b, 3], wp.tile_scan_min_inclusive(f))


def _reference(x: np.ndarray, owned: np.ndarray):
    """What one block computes, from the owned elements only (NumPy, float64)."""
    v = x.ravel()
    m = owned.ravel()
    whole = [v[m].sum(), v[m].min(), v[m].max(), v[m].prod(), v[m].max()]
    masked_min = np.where(m, v, np.inf)
    masked_max = np.where(m, v, -np.inf)
    args = [int(np.argmin(masked_min)), int(np.argmax(masked_max))]
    ax0 = np.concatenate([np.where(owned, x, 0).sum(0), np.where(owned, x, 1).prod(0)])
    ax1 = np.concatenate([np.where(owned, x, 0).sum(1), np.where(owned, x, np.inf).min(1)])
    inc = np.cumsum(np.where(m, v, 0))
    exc = np.concatenate([[0.0], inc[:-1]])
    smax = np.maximum.accumulate(masked_max)
    smin = np.minimum.accumulate(masked_min)
    return np.array(whole), np.array(args), ax0, ax1, np.stack([inc, exc, smax, smin])


def _launch(x: np.ndarray, bd: int, active: int, requires_grad: bool = False):
    blocks = x.shape[0]
    xa = wp.array(x, dtype=wp.float64, requires_grad=requires_grad)
    outs = [wp.zeros((blocks, 5), dtype=wp.float64, requires_grad=requires_grad),
            wp.zeros((blocks, 2 * C), dtype=wp.float64, requires_grad=requires_grad),
            wp.zeros((blocks, 2 * R), dtype=wp.float64, requires_grad=requires_grad),
            wp.zeros((blocks, 4, R * C), dtype=wp.float64, requires_grad=requires_grad)]
    args = wp.zeros((blocks, 2), dtype=wp.int32)
    tape = wp.Tape()
    with tape:
        wp.launch(reductions, dim=(blocks - 1) * bd + active, inputs=[xa],
                  outputs=[outs[0], outs[1], outs[2], outs[3], args], block_dim=bd)
    return xa, outs, args, tape


@pytest.mark.parametrize("bd,active", [(16, 5), (16, 15), (8, 3), (16, 16)])
def test_partial_block_reductions_match_numpy(bd, active):
    rng = np.random.default_rng(bd * 100 + active)
    x = rng.uniform(0.5, 2.0, size=(2, R, C))  # positive: the zeros of missing lanes would change min and products
    _, outs, args, _ = _launch(x, bd, active)
    whole, ax0, ax1, scans = (o.numpy() for o in outs)
    idx = args.numpy()
    lanes_of = np.arange(R * C).reshape(R, C) % bd
    for b, running in ((0, bd), (1, active)):  # block 0 is full, block 1 the partial last one
        ref = _reference(x[b], lanes_of < running)
        np.testing.assert_allclose(whole[b], ref[0], rtol=1e-12)
        np.testing.assert_array_equal(idx[b], ref[1])
        np.testing.assert_allclose(ax0[b], ref[2], rtol=1e-12)
        np.testing.assert_allclose(ax1[b], ref[3], rtol=1e-12)
        np.testing.assert_allclose(scans[b], ref[4], rtol=1e-12)


@pytest.mark.parametrize("bd,active", [(16, 5), (8, 3)])
def test_partial_block_gradients_match_central_differences(bd, active):
    rng = np.random.default_rng(7 + bd + active)
    x = rng.uniform(0.5, 2.0, size=(2, R, C))
    # an empty slice's minimum is +inf (the identity): it takes no part in the loss
    weights = [np.where(np.isfinite(o.numpy()), rng.normal(size=o.shape), 0.0) for o in _launch(x, bd, active)[1]]

    def loss(xv):
        outs = _launch(xv, bd, active)[1]
        return sum(float((w * np.where(w != 0, o.numpy(), 0.0)).sum()) for w, o in zip(weights, outs))

    xa, outs, _, tape = _launch(x, bd, active, requires_grad=True)
    for w, o in zip(weights, outs):
        o.grad = wp.array(w, dtype=wp.float64)
    tape.backward()
    grad = xa.grad.numpy()
    h = 1e-6
    fd = np.zeros_like(x)
    for k in np.ndindex(*x.shape):
        xp, xm = x.copy(), x.copy()
        xp[k] += h
        xm[k] -= h
        fd[k] = (loss(xp) - loss(xm)) / (2 * h)
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-6)
    owned = (np.arange(R * C).reshape(R, C) % bd) < active
    assert np.all(grad[1][~owned] == 0.0)  # the elements of missing lanes take no part, so get no gradient


@wp.kernel
def lane_tiles(x: wp.array(dtype=wp.float32), out: wp.array2d(dtype=wp.float32), grad_src: wp.array(dtype=wp.float32)):
    i = wp.tid()
    b = i // wp.block_dim()
    t = wp.tile(x[i])
    wp.tile_store(out[b], wp.tile_min(t), offset=0)
    wp.tile_store(out[b], wp.tile_max(t), offset=1)
    wp.tile_store(out[b], wp.tile_sum(t), offset=2)
    u = wp.tile_from_thread(shape=(4,), value=x[i], thread_idx=0)
    wp.tile_store(out[b], wp.tile_sum(u), offset=3)
    wp.tile_store(grad_src, wp.tile_sum(t * t), offset=b)


@pytest.mark.parametrize("n", [1, 7, 13])
def test_tiles_of_lane_values_leave_out_missing_lanes(n):
    """wp.tile(x) in a partial block: the missing lanes' zeros take no part (here: all values are at least 1)."""
    bd = 8
    x = np.arange(1, n + 1, dtype=np.float32) * 1.5
    blocks = (n + bd - 1) // bd
    xa = wp.array(x, requires_grad=True)
    out = wp.zeros((blocks, 4), dtype=wp.float32)
    sq = wp.zeros(blocks, dtype=wp.float32, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(lane_tiles, dim=n, inputs=[xa], outputs=[out, sq], block_dim=bd)
    res = out.numpy()
    for b in range(blocks):
        v = x[b * bd:(b + 1) * bd].astype(np.float64)
        np.testing.assert_allclose(res[b, :3], [v.min(), v.max(), v.sum()], rtol=1e-6)
        # tile_from_thread fills every element with lane 0's value; a block of k lanes owns min(k, 4) of the 4
        np.testing.assert_allclose(res[b, 3], v[0] * min(len(v), 4), rtol=1e-6)
    sq.grad = wp.array(np.ones(blocks, dtype=np.float32))
    tape.backward()
    np.testing.assert_allclose(xa.grad.numpy(), 2 * x, rtol=1e-6)


@wp.func
def custom_add(a: float, b: float):
    return a + b


@wp.kernel
def empty_slices(x: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    t = wp.tile_load(x, shape=(8, 4))
    wp.tile_store(out, wp.tile_reshape(wp.tile_sum(t, axis=1), shape=(1, 8)), offset=(0, 0))
    wp.tile_store(out, wp.tile_reshape(wp.tile_reduce(wp.mul, t, axis=1), shape=(1, 8)), offset=(1, 0))
    wp.tile_store(out, wp.tile_reshape(wp.tile_reduce(wp.min, t, axis=1), shape=(1, 8)), offset=(2, 0))
    wp.tile_store(out, wp.tile_reshape(wp.tile_reduce(wp.max, t, axis=1), shape=(1, 8)), offset=(3, 0))


@wp.kernel
def empty_custom(x: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    t = wp.tile_load(x, shape=(8, 4))
    wp.tile_store(out, wp.tile_reduce(custom_add, t, axis=1))


def test_empty_axis_slices_take_the_identity_or_raise():
    """Rows 2-3 and 6-7 of an 8x4 tile belong to lanes 8-15 of a 16-lane block that runs 8 lanes: empty slices."""
    x = wp.array(np.full((8, 4), 2.0, dtype=np.float32))
    out = wp.zeros((4, 8), dtype=float)
    wp.launch(empty_slices, dim=8, inputs=[x], outputs=[out], block_dim=16)
    has = (np.arange(32).reshape(8, 4) % 16 < 8).any(axis=1)
    np.testing.assert_array_equal(out.numpy(), np.stack([np.where(has, 8.0, 0.0), np.where(has, 16.0, 1.0),
                                                         np.where(has, 2.0, np.inf), np.where(has, 2.0, -np.inf)]))
    with pytest.raises(RuntimeError_, match="operator has no declared identity"):
        wp.launch(empty_custom, dim=8, inputs=[x], outputs=[wp.zeros(8, dtype=float)], block_dim=16)
    # a full block reduces every slice with the function
    full = wp.zeros(8, dtype=float)
    wp.launch(empty_custom, dim=16, inputs=[x], outputs=[full], block_dim=16)
    np.testing.assert_array_equal(full.numpy(), np.full(8, 8.0))


SUM_N = 1 << 18


@wp.kernel
def big_sum(a: wp.array(dtype=wp.float32), out: wp.array(dtype=wp.float32)):
    t = wp.tile_load(a, shape=SUM_N)
    wp.tile_store(out, wp.tile_sum(t))


def test_large_float32_tile_sum_is_pairwise():
    """tile_sum adds runs of 32 elements in order and sums the halves of longer runs separately: the rounding error of
    a float32 sum grows with log2(n), not n (Warp's CPU adds in order: 7.5e-6 relative error here; weft 2.6e-9)."""
    x = np.random.default_rng(0).uniform(0.0, 1.0, SUM_N).astype(np.float32)
    out = wp.zeros(1, dtype=wp.float32)
    wp.launch_tiled(big_sum, dim=1, inputs=[wp.array(x)], outputs=[out], block_dim=1)
    exact = x.astype(np.float64).sum()
    sequential = np.float32(0)
    for chunk in np.array_split(x, 64):  # float32 running sum, as an in-order loop computes it (chunked for speed)
        sequential = np.float32(sequential + np.cumsum(chunk, dtype=np.float32)[-1])
    assert abs(float(out.numpy()[0]) - exact) / exact < 1e-7
    assert abs(float(out.numpy()[0]) - exact) < abs(float(sequential) - exact)


@wp.kernel
def empty_vector_slices(x: wp.array2d(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    t = wp.tile_load(x, shape=(8, 4))
    wp.tile_store(out, wp.tile_reduce(wp.add, t, axis=1))


def test_empty_vector_slices_sum_to_zero():
    """wp.add of vectors declares the zero vector as its identity."""
    x = wp.array(np.ones((8, 4, 3), dtype=np.float32), dtype=wp.vec3)
    out = wp.zeros(8, dtype=wp.vec3)
    wp.launch(empty_vector_slices, dim=8, inputs=[x], outputs=[out], block_dim=16)
    has = (np.arange(32).reshape(8, 4) % 16 < 8).any(axis=1)
    np.testing.assert_array_equal(out.numpy(), np.where(has, 4.0, 0.0)[:, None] * np.ones(3))
