"""The CPU block model: code that depends on the lane index gives the results a GPU with the same block_dim
gives, and block-size-independent programs give identical results at every block_dim."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp

BLOCK_DIMS = [1, 3, 8, 32, 64]


@wp.kernel
def block_stride_sum(a: wp.array2d(dtype=float), out: wp.array(dtype=float), lanes: wp.array2d(dtype=int)):
    i, lane = wp.tid()
    s = 0.0
    for k in range(lane, a.shape[1], wp.block_dim()):
        s += a[i, k]
    t = wp.tile(s)
    total = wp.tile_sum(t)
    if lane < lanes.shape[1]:
        lanes[i, lane] = lane
    if lane != 0:
        return
    out[i] = total[0]


def test_block_stride_sum_is_block_dim_independent():
    rng = np.random.default_rng(0)
    a = rng.integers(-8, 8, size=(6, 100)).astype(np.float32)  # exact in float32 whatever the summation order
    results = []
    for bd in BLOCK_DIMS:
        out = wp.zeros(6, dtype=float)
        lanes = wp.full((6, 4), -1, dtype=int)
        wp.launch_tiled(block_stride_sum, dim=6, inputs=[wp.array(a), out, lanes], block_dim=bd)
        results.append(out.numpy())
        want = np.where(np.arange(4) < bd, np.arange(4), -1)
        np.testing.assert_array_equal(lanes.numpy(), np.broadcast_to(want, (6, 4)))
    for r in results:
        np.testing.assert_array_equal(r, a.sum(1))


@wp.kernel
def per_lane(out: wp.array(dtype=float), block_max: wp.array(dtype=float)):
    i = wp.tid()  # wp.launch with block_dim: the global thread index; blocks are consecutive threads
    t = wp.tile(float(i))
    m = wp.tile_max(t)
    r = wp.tile_map(wp.sin, t)
    out[i] = wp.untile(r) + m[0]
    block_max[i] = m[0]


@pytest.mark.parametrize("bd", BLOCK_DIMS)
def test_lane_values_match_gpu_model(bd):
    n = 192
    out = wp.zeros(n, dtype=float)
    bm = wp.zeros(n, dtype=float)
    wp.launch(per_lane, dim=n, inputs=[out, bm], block_dim=bd)
    i = np.arange(n)
    block_max = (i // bd) * bd + bd - 1  # what every lane of the block sees on a GPU
    np.testing.assert_allclose(bm.numpy(), block_max)
    np.testing.assert_allclose(out.numpy(), np.sin(i.astype(np.float32)) + block_max, rtol=1e-5)


@wp.kernel
def lane_state_across_tiles(a: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    i, lane = wp.tid()
    acc = float(lane)  # per-lane state carried across collective ops in a loop
    for k in range(3):
        t = wp.tile_load(a, shape=(1, 8), offset=(i, k * 8))
        s = wp.tile_sum(t)
        acc = acc * 2.0 + s[0]
    out[i, lane] = acc


def test_per_lane_state_in_collective_loop():
    a = np.arange(48, dtype=np.float32).reshape(2, 24)
    for bd in (1, 4, 16):
        out = wp.zeros((2, bd), dtype=float)
        wp.launch_tiled(lane_state_across_tiles, dim=2, inputs=[wp.array(a), out], block_dim=bd)
        sums = a.reshape(2, 3, 8).sum(2)
        want = np.zeros((2, bd), np.float32)
        for i in range(2):
            for lane in range(bd):
                acc = float(lane)
                for k in range(3):
                    acc = acc * 2.0 + sums[i, k]
                want[i, lane] = acc
        np.testing.assert_allclose(out.numpy(), want)


@wp.kernel
def vector_lanes(out: wp.array2d(dtype=float), back: wp.array(dtype=wp.vec3)):
    _i, lane = wp.tid()
    v = wp.vec3(float(lane), float(2 * lane), 1.0)
    t = wp.tile(v)  # shape (3, block_dim)
    wp.tile_store(out, t)
    back[lane] = wp.untile(t * 2.0)


def test_tile_untile_vectors():
    bd = 8
    out = wp.zeros((3, bd), dtype=float)
    back = wp.zeros(bd, dtype=wp.vec3)
    wp.launch_tiled(vector_lanes, dim=1, inputs=[out, back], block_dim=bd)
    lane = np.arange(bd)
    want = np.stack([lane, 2 * lane, np.ones(bd)])
    np.testing.assert_array_equal(out.numpy(), want)
    np.testing.assert_array_equal(back.numpy(), 2 * want.T)


