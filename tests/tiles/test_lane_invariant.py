"""Tile kernels whose lanes cannot be told apart run their CPU blocks' lanes together even without
``wp.config.enable_cpu_blocks`` (runtime/tiles.py ``lanes_invariant``): same results as one-lane blocks."""

import numpy as np
import pytest

import weft as wp
from weft.runtime.tiles import lanes_invariant

TILE = 16


@wp.kernel
def tile_nbody(pos: wp.array(dtype=wp.vec3), n: int, acc: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    p0 = pos[i]
    a = wp.vec3(0.0, 0.0, 0.0)
    for k in range(n / TILE):
        t = wp.tile_load(pos, shape=TILE, offset=k * TILE)
        for j in range(TILE):
            r = t[j] - p0
            a += r / wp.sqrt(wp.length_sq(r) + 0.01)
    acc[i] = a


@wp.kernel
def tile_at_thread(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(x, shape=TILE, offset=i)  # each thread its own window: lanes differ
    out[i] = t[0] + t[TILE - 1]


@pytest.fixture
def lanes_off():
    old = wp.config.enable_cpu_blocks
    wp.config.enable_cpu_blocks = False
    yield
    wp.config.enable_cpu_blocks = old


def _specs(kernel):
    return sorted(s.tile_dim for s in kernel._specs.values() if s.fwd is not None)


def test_lane_free_tile_kernel_runs_its_lanes_with_one_lane_results(lanes_off):
    n = 4 * TILE + 8  # a partial last block
    rng = np.random.default_rng(3)
    pos_np = rng.standard_normal((n, 3)).astype(np.float32)
    pos = wp.array(pos_np, dtype=wp.vec3)
    acc = wp.zeros(n, dtype=wp.vec3)
    m = (n // TILE) * TILE
    r = pos_np[None, :m, :].astype(np.float64) - pos_np[:, None, :]
    expect = (r / np.sqrt((r * r).sum(-1) + 0.01)[..., None]).sum(1)
    assert lanes_invariant(tile_nbody.specialize(tile_nbody.infer_types([pos, n, acc]), 1).fn)
    wp.launch(tile_nbody, n, inputs=[pos, n], outputs=[acc], block_dim=TILE)
    assert TILE in _specs(tile_nbody)  # the lanes ran together
    np.testing.assert_allclose(acc.numpy(), expect, rtol=2e-5, atol=2e-5)
    with wp.Tape():  # on a Tape: one-lane blocks, as Warp's CPU (the backward's sums keep that order)
        one = wp.zeros(n, dtype=wp.vec3)
        wp.launch(tile_nbody, n, inputs=[pos, n], outputs=[one], block_dim=TILE)
    np.testing.assert_allclose(one.numpy(), acc.numpy(), rtol=1e-6, atol=1e-6)


def test_thread_dependent_tile_kernel_keeps_one_lane_blocks(lanes_off):
    n = 2 * TILE
    x = wp.array(np.arange(n + TILE, dtype=np.float32))
    out = wp.zeros(n, dtype=float)
    assert not lanes_invariant(tile_at_thread.specialize(tile_at_thread.infer_types([x, out]), 1).fn)
    wp.launch(tile_at_thread, n, inputs=[x], outputs=[out], block_dim=TILE)
    assert TILE not in _specs(tile_at_thread)
    np.testing.assert_array_equal(out.numpy(), 2.0 * np.arange(n) + TILE - 1)  # each thread's own window
