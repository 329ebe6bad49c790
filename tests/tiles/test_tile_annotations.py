"""``wp.tile[dtype, M, N]`` annotations on @wp.func parameters and results; ``wp.array[dtype, ndim]``."""

# no ``from __future__ import annotations`` here: weft checks func parameter types only for evaluated annotations

from typing import Literal

import numpy as np
import pytest

import weft as wp

from . import _helpers  # noqa: F401  (wp.launch_tiled)

TM, TN = 4, 8


@wp.func
def weighted_sum(t: wp.tile[float]):  # any shape
    return wp.tile_sum(t * t) * 0.5


@wp.func
def scaled(t: wp.tile[float, TM, TN], s: float) -> wp.tile[float, Literal[TM], Literal[TN]]:
    return t * s


@wp.kernel
def use_tile_funcs(x: wp.array[float, 2], out: wp.array[float], y: wp.array2d[float]):
    t = wp.tile_load(x, shape=(TM, TN))
    wp.tile_store(out, weighted_sum(t))
    wp.tile_store(y, scaled(t, 3.0))


def test_tile_annotated_funcs_values_and_gradients():
    rng = np.random.default_rng(3)
    xn = rng.standard_normal((TM, TN))
    x = wp.array(xn.astype(np.float32), requires_grad=True)
    out = wp.zeros(1, dtype=float, requires_grad=True)
    y = wp.zeros((TM, TN), dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(use_tile_funcs, dim=1, inputs=[x, out, y], block_dim=32)
    np.testing.assert_allclose(out.numpy()[0], 0.5 * np.sum(xn * xn), rtol=1e-5)
    np.testing.assert_allclose(y.numpy(), 3.0 * xn, rtol=1e-6)
    wy = rng.standard_normal((TM, TN))
    tape.backward(grads={out: wp.array([2.0], dtype=float), y: wp.array(wy.astype(np.float32))})
    # d/dx [2 * 0.5 * sum(x^2) + sum(wy * 3x)] = 2x + 3 wy
    np.testing.assert_allclose(x.grad.numpy(), 2.0 * xn + 3.0 * wy, rtol=1e-5, atol=1e-6)


def test_tile_annotation_objects():
    t = wp.tile[float]
    assert wp.types.is_tile(t) and t.shape is not None and t.ndim is None and t.storage == "register"
    assert wp.tile[wp.float64, 16, 8].shape == (16, 8)
    assert wp.tile[float, (4, 4)] is wp.tile[float, Literal[4], Literal[4]]
    assert wp.tile[wp.vec3, 5].size == 5
    with pytest.raises(TypeError, match="at least a dtype"):
        wp.tile[()]
    with pytest.raises(TypeError, match="positive integer"):
        wp.tile[float, -1, 4]
    assert wp.array[float, Literal[3]].ndim == 3
    with pytest.raises(ValueError, match="between 1 and 4"):
        wp.array[float, 5]
    with pytest.raises(TypeError, match="single type parameter"):
        wp.array2d[float, 2]


@wp.kernel
def wrong_shape(x: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    t = wp.tile_load(x, shape=(TN, TM))
    wp.tile_store(y, scaled(t, 2.0))


def test_tile_annotation_shape_mismatch_names_the_argument():
    x = wp.zeros((TN, TM), dtype=float)
    with pytest.raises(wp.Error, match="argument 't'"):
        wp.launch_tiled(wrong_shape, dim=1, inputs=[x, x], block_dim=32)


@wp.func
def _bump_in_place(t: wp.tile[wp.float64, 2, 3], s: wp.float64):
    t += wp.tile_ones(dtype=wp.float64, shape=(2, 3)) * s  # changed in place: the caller sees it (Warp's rule)
    t[0, 0] = s


@wp.func
def _rebind_local(t: wp.tile[wp.float64, 2, 3]):
    t = t * 10.0  # a new local value: the caller's tile is unchanged
    return wp.tile_sum(t)[0]


@wp.kernel
def _by_reference(x: wp.array2d(dtype=wp.float64), out: wp.array2d(dtype=wp.float64),
                  total: wp.array(dtype=wp.float64)):
    t = wp.tile_load(x, shape=(2, 3))
    for _ in range(2):
        _bump_in_place(t, x[1, 2])
    total[0] = _rebind_local(t)
    wp.tile_store(out, t)


def test_tiles_changed_in_funcs_reach_the_caller():
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    out, total = wp.zeros((2, 3), dtype=wp.float64), wp.zeros(1, dtype=wp.float64)
    wp.launch_tiled(_by_reference, dim=1, inputs=[wp.array(x, dtype=wp.float64), out, total], block_dim=4)
    want = x + 2 * x[1, 2]
    want[0, 0] = x[1, 2]
    np.testing.assert_allclose(out.numpy(), want)
    np.testing.assert_allclose(total.numpy(), [10 * want.sum()])
