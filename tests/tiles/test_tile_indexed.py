"""Indexed tile memory (tile_load_indexed / tile_store_indexed / tile_atomic_add_indexed), tile_from_thread and
tile_randi / tile_randf, against NumPy (float64 gradients against central differences)."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp

from .test_grad import fd_check

F64 = wp.float64
M, N = 4, 3


@wp.kernel
def gather_scatter(x: wp.array2d(dtype=F64), g: wp.array2d(dtype=F64), s: wp.array2d(dtype=F64),
                   acc: wp.array2d(dtype=F64)):
    b, _lane = wp.tid()
    ri = wp.tile_arange(M, dtype=int) * 2 - 1  # rows -1, 1, 3, 5: -1 is outside (reads zero, the store skips it)
    ci = wp.tile_arange(N, dtype=int) * 3 - 2  # columns -2, 1, 4
    t = wp.tile_load_indexed(x, indices=ri, shape=(M, N), offset=(0, b), axis=0)  # columns shifted by the block
    wp.tile_store(g, t, offset=(b * M, 0))
    u = wp.tile_load_indexed(x, indices=ci, shape=(M, N), axis=1)
    wp.tile_store_indexed(s, indices=ri, t=t * u, offset=(0, b * N), axis=0)
    wp.tile_atomic_add_indexed(acc, indices=ci, t=t, offset=(0, 1), axis=1)


def _reference(x, blocks):
    rows, cols = 2 * np.arange(M) - 1, 3 * np.arange(N) - 2
    g = np.zeros((blocks * M, N))
    s = np.zeros((8, blocks * N))
    acc = np.zeros((M, 6))

    def at(i, j):
        return x[i, j] if 0 <= i < x.shape[0] and 0 <= j < x.shape[1] else 0.0

    for b in range(blocks):
        t = np.array([[at(rows[r], c + b) for c in range(N)] for r in range(M)])
        u = np.array([[at(r, cols[c]) for c in range(N)] for r in range(M)])
        g[b * M:(b + 1) * M] = t
        for r in range(M):
            if 0 <= rows[r] < s.shape[0]:
                s[rows[r], b * N:(b + 1) * N] = (t * u)[r]
            for c in range(N):
                if 0 <= cols[c] + 1 < acc.shape[1]:
                    acc[r, cols[c] + 1] += t[r, c]  # both blocks add: repeated targets accumulate
    return g, s, acc


def test_indexed_values_bounds_and_gradients():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 5))
    blocks = 2
    outs = [wp.zeros((blocks * M, N), dtype=F64), wp.zeros((8, blocks * N), dtype=F64), wp.zeros((M, 6), dtype=F64)]
    wp.launch_tiled(gather_scatter, dim=blocks, inputs=[wp.array(x, dtype=F64), *outs], block_dim=4)
    for got, want in zip(outs, _reference(x, blocks)):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    fd_check(gather_scatter, {"x": wp.array(x, dtype=F64)},
             {"g": wp.zeros((blocks * M, N), dtype=F64), "s": wp.zeros((8, blocks * N), dtype=F64),
              "acc": wp.zeros((M, 6), dtype=F64)}, dim=blocks, block_dim=4)


@wp.kernel
def broadcast_lane(x: wp.array(dtype=F64), out: wp.array(dtype=F64)):
    b, lane = wp.tid()
    i = b * wp.block_dim() + lane
    v = x[i] * x[i]
    t = wp.tile_from_thread(shape=(2, 3), value=v, thread_idx=wp.block_dim() - 2)
    s = wp.tile_sum(t)
    out[i] = s[0] + x[i]


def test_tile_from_thread_value_and_gradient():
    x = np.linspace(0.5, 2.0, 8)
    out = wp.zeros(8, dtype=F64)
    wp.launch_tiled(broadcast_lane, dim=2, inputs=[wp.array(x, dtype=F64), out], block_dim=4)
    src = np.repeat(x[[2, 6]] ** 2, 4)  # lane 2 of each block of 4
    np.testing.assert_allclose(out.numpy(), 6 * src + x, rtol=1e-12)
    fd_check(broadcast_lane, {"x": wp.array(x, dtype=F64)}, {"out": wp.zeros(8, dtype=F64)}, dim=2, block_dim=4)
    # a one-lane block (the CPU without enable_cpu_blocks) broadcasts its lane whatever thread_idx says, as Warp's CPU
    wp.launch_tiled(broadcast_lane, dim=8, inputs=[wp.array(x, dtype=F64), out], block_dim=1)
    np.testing.assert_allclose(out.numpy(), 6 * x**2 + x, rtol=1e-12)
    fd_check(broadcast_lane, {"x": wp.array(x, dtype=F64)}, {"out": wp.zeros(8, dtype=F64)}, dim=8, block_dim=1)


@wp.kernel
def random_tiles(seed: int, xi: wp.array2d(dtype=int), xf: wp.array2d(dtype=float), ri: wp.array2d(dtype=int),
                 rf: wp.array2d(dtype=float)):
    i, j = wp.tid()
    rng = wp.rand_init(seed, i * 2 + j)
    wp.tile_store(xi, wp.tile_randi(shape=(2, 2), rng=rng), offset=(i * 2, j * 2))
    wp.tile_store(xf, wp.tile_randf(shape=(2, 2), rng=rng), offset=(i * 2, j * 2))
    wp.tile_store(ri, wp.tile_randi(shape=(2, 2), rng=rng, min=-5, max=5), offset=(i * 2, j * 2))
    wp.tile_store(rf, wp.tile_randf(shape=(2, 2), rng=rng, min=-5.0, max=5.0), offset=(i * 2, j * 2))


M32 = np.uint64(0xFFFFFFFF)


def _pcg(state):
    """Warp's PCG hash in uint64 NumPy arithmetic (the stream's next state and value)."""
    s = (np.asarray(state, np.uint64) * np.uint64(747796405) + np.uint64(2891336453)) & M32
    w = (((s >> ((s >> np.uint64(28)) + np.uint64(4))) ^ s) * np.uint64(277803737)) & M32
    return (w >> np.uint64(22)) ^ w


@pytest.mark.parametrize("bd", [1, 3, 64])
def test_tile_random_streams(bd):
    """Element k is lane (k % block_dim)'s (k // block_dim + 1)-th draw from rand_pcg(lane + rng), as on a GPU (so the
    values depend on block_dim, as in Warp); the state itself is not advanced."""
    outs = [wp.zeros((4, 4), dtype=int), wp.zeros((4, 4), dtype=float), wp.zeros((4, 4), dtype=int),
            wp.zeros((4, 4), dtype=float)]
    wp.launch_tiled(random_tiles, dim=[2, 2], inputs=[42, *outs], block_dim=bd)
    got = [o.numpy() for o in outs]
    for i in range(2):
        for j in range(2):
            rng = _pcg((np.uint64(42) + _pcg(np.uint64(i * 2 + j))) & M32)  # rand_init(42, i * 2 + j)
            for k in range(4):
                state = _pcg((np.uint64(k % bd) + rng) & M32)
                for _ in range(k // bd + 1):
                    state = _pcg(state)
                r, c = i * 2 + k // 2, j * 2 + k % 2
                f = float(state >> np.uint64(8)) / 16777216.0
                assert got[0][r, c] == np.uint32(state).view(np.int32)
                assert got[1][r, c] == np.float32(f)
                assert got[2][r, c] == int(state % np.uint64(10)) - 5
                np.testing.assert_allclose(got[3][r, c], -5.0 + 10.0 * f, rtol=1e-6)
    if bd == 64:  # Warp's published CUDA values for this kernel (test_tile's random test)
        np.testing.assert_array_equal(got[0][0], [798497746, 1803297529, -955788638, 17806966])
        np.testing.assert_array_equal(got[2][0], [1, 4, 3, 1])
