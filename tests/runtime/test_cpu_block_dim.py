"""Warp 1.19's CPU block size: one lane per block unless ``wp.config.enable_cpu_blocks`` (then at most 1024)."""

import numpy as np
import pytest

import weft as wp
from weft.runtime.launch import resolve_block_dim


@wp.kernel
def _block_info(lanes: wp.array(dtype=wp.int32), x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    lanes[i] = wp.block_dim()
    y[i] = x[i] * float(wp.block_dim())


@wp.kernel
def _count(out: wp.array(dtype=wp.int32)):
    wp.atomic_add(out, 0, 1)


@pytest.fixture
def cpu_blocks():
    old = wp.config.enable_cpu_blocks
    yield
    wp.config.enable_cpu_blocks = old


def test_resolution(cpu_blocks):
    cpu = wp.get_device("cpu")
    for enabled in (False, True):
        wp.config.enable_cpu_blocks = enabled
        assert [resolve_block_dim(cpu, b) for b in (None, -3, 0, 1)] == [1, 1, 1, 1]
        assert resolve_block_dim(cpu, 64) == (64 if enabled else 1)
        with pytest.raises(ValueError, match="at most 1024 on CPU"):
            resolve_block_dim(cpu, 1025)
        with pytest.raises(ValueError, match="at most 1024 on CPU"):
            wp.launch(_count, dim=0, inputs=[wp.zeros(1, dtype=wp.int32)], block_dim=1025)


def test_lanes_follow_the_switch_and_the_tape_keeps_them(cpu_blocks):
    n = 7
    lanes = wp.zeros(n, dtype=wp.int32)
    x = wp.array(np.arange(n, dtype=np.float32), requires_grad=True)
    y = wp.zeros(n, dtype=float, requires_grad=True)
    out = wp.zeros(1, dtype=wp.int32)
    for enabled, expected in ((False, 1), (True, 4)):
        wp.config.enable_cpu_blocks = enabled
        wp.launch(_block_info, dim=n, inputs=[lanes, x, y], block_dim=4)
        np.testing.assert_array_equal(lanes.numpy(), expected)
        out.zero_()
        wp.launch_tiled(_count, dim=[2], inputs=[out], block_dim=4)  # 2 blocks of `expected` threads
        assert out.numpy()[0] == 2 * expected
        assert wp.Launch(_block_info, "cpu", block_dim=4).block_dim == expected
    assert (None, 1) in _block_info.module.execs and (None, 4) in _block_info.module.execs
    wp.config.enable_cpu_blocks = True
    with wp.Tape() as tape:
        wp.launch(_block_info, dim=n, inputs=[lanes, x, y], block_dim=4)
    assert tape.launches[0][6] == 4
    wp.config.enable_cpu_blocks = False  # the backward runs the block size the forward ran with
    tape.backward(grads={y: wp.ones(n, dtype=float)})
    np.testing.assert_allclose(x.grad.numpy(), 4.0)
