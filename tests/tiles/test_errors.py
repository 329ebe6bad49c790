"""Compile errors of tile code point at the user's line."""

from __future__ import annotations

import inspect

import pytest

import weft as wp

SIZE = 8


def _line_of(fn, text: str) -> int:
    lines, start = inspect.getsourcelines(fn.func)
    for k, line in enumerate(lines):
        if text in line:
            return start + k
    raise AssertionError(text)


def _compile_error(kernel, args, block_dim=8):
    with pytest.raises(wp.CompileError) as info:
        wp.launch_tiled(kernel, dim=1, inputs=args, block_dim=block_dim)
    return info.value


@wp.kernel
def bad_matmul(a: wp.array2d(dtype=float)):
    x = wp.tile_load(a, shape=(4, 3))
    y = wp.tile_load(a, shape=(4, 3))
    z = wp.tile_matmul(x, y)  # inner dimensions differ
    wp.tile_store(a, z)


def test_matmul_shape_mismatch():
    err = _compile_error(bad_matmul, [wp.zeros((4, 4), dtype=float)])
    assert "(4, 3) @ (4, 3)" in str(err)
    assert err.loc.line == _line_of(bad_matmul, "inner dimensions differ")


@wp.kernel
def bad_add(a: wp.array2d(dtype=float)):
    x = wp.tile_load(a, shape=(4, 3))
    y = wp.tile_load(a, shape=(3, 4))
    wp.tile_store(a, x + y)  # shapes differ


def test_elementwise_shape_mismatch():
    err = _compile_error(bad_add, [wp.zeros((4, 4), dtype=float)])
    assert err.loc.line == _line_of(bad_add, "shapes differ")


@wp.kernel
def runtime_shape(a: wp.array(dtype=float), n: int):
    t = wp.tile_load(a, shape=n)  # not a compile-time constant
    wp.tile_store(a, t)


def test_non_constant_shape():
    err = _compile_error(runtime_shape, [wp.zeros(4, dtype=float), 4])
    assert "compile-time constant" in str(err)
    assert err.loc.line == _line_of(runtime_shape, "not a compile-time constant")


@wp.kernel
def wrong_rank(a: wp.array2d(dtype=float)):
    t = wp.tile_load(a, shape=SIZE)  # 1-D shape for a 2-D array
    wp.tile_store(a, t)


def test_shape_rank_mismatch():
    err = _compile_error(wrong_rank, [wp.zeros((4, 4), dtype=float)])
    assert "2-D shape" in str(err)
    assert err.loc.line == _line_of(wrong_rank, "1-D shape for a 2-D array")


@wp.kernel
def real_fft(a: wp.array(dtype=float)):
    t = wp.tile_load(a, shape=SIZE)
    wp.tile_fft(t)  # needs complex elements


def test_fft_needs_complex_tiles():
    err = _compile_error(real_fft, [wp.zeros(8, dtype=float)])
    assert "vec2f" in str(err)
    assert err.loc.line == _line_of(real_fft, "needs complex elements")


@wp.kernel(module="unique", module_options={"mode": "debug"})
def tile_index_debug(n: int, out: wp.array(dtype=float)):
    _b, lane = wp.tid()
    t = wp.tile_full(shape=(2, 3), value=2.0, dtype=float)
    t[lane % 2, lane * n] = 1.0
    out[lane] = t[lane % 2, n]


def test_debug_mode_checks_run_time_tile_indices():
    """A module in debug mode (Warp's mode option) checks tile element indices: a read outside the tile gives zero,
    a write is skipped, and the launch raises naming the dimension, index and valid range."""
    import re

    import numpy as np

    from weft.errors import RuntimeError_

    out = wp.zeros(4, dtype=float)
    wp.launch_tiled(tile_index_debug, dim=1, inputs=[0, out], block_dim=4)  # in range: no error
    np.testing.assert_array_equal(out.numpy(), 1.0)
    # negative subscripts count from the end (as Warp): lane 1 writes column -2 = 1, lanes 2 and 3 columns -4, -6
    with pytest.raises(RuntimeError_, match=re.escape("dimension 1 has index -4, outside valid range [-3, 3)")):
        wp.launch_tiled(tile_index_debug, dim=1, inputs=[-2, out], block_dim=4)
    np.testing.assert_array_equal(out.numpy(), [2.0, 1.0, 2.0, 1.0])  # column 1 (lanes 2 and 3 wrote nothing)
    with pytest.raises(RuntimeError_, match=re.escape("dimension 1 has index 3, outside valid range [-3, 3)")):
        wp.launch_tiled(tile_index_debug, dim=1, inputs=[3, out], block_dim=4)
    np.testing.assert_array_equal(out.numpy(), 0.0)  # every lane read column 3: zero
