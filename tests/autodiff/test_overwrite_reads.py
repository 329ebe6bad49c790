"""Overwrite detection fires only when a recorded backward reads the overwritten values.

A kernel that only moves values (a copy, a scaled copy by a constant, a tile transpose) has an adjoint that indexes
its input's gradient but never reads its values, so overwriting that input later is harmless (Warp programs do it,
e.g. an FFT pipeline reusing a buffer). Kernels whose derivative rules read the input still raise.
"""

import numpy as np
import pytest

import weft as wp
from weft.runtime.tape import OverwriteError

TILE = 4


@wp.kernel
def copy_k(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i]


@wp.kernel
def scaled_k(x: wp.array(dtype=float), c: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = 2.0 * x[i] - x[i] * c[i] + wp.vec2(x[i], 1.0)[0]


@wp.kernel
def square_k(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i]


@wp.kernel
def sin_k(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.sin(x[i])


@wp.kernel
def fill_k(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = 5.0


@wp.kernel
def transpose_k(x: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    t = wp.tile_load(x, shape=(TILE, TILE))
    wp.tile_store(y, wp.tile_transpose(t))


@wp.kernel
def tile_square_k(x: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    t = wp.tile_load(x, shape=(TILE, TILE))
    wp.tile_store(y, wp.tile_map(wp.mul, t, t))


@wp.kernel
def fill2_k(x: wp.array2d(dtype=float)):
    i, j = wp.tid()
    x[i, j] = 5.0


def _run(kernel, x, y, overwrite, dim, tiled=False):
    tape = wp.Tape()
    with tape:
        if tiled:
            wp.launch_tiled(kernel, dim=[1], inputs=[x, y], block_dim=8)
        else:
            wp.launch(kernel, dim=dim, inputs=[x, y])
        wp.launch(overwrite, dim=dim, inputs=[x])
    return tape


def test_copy_then_overwrite_is_not_an_error():
    x = wp.array(np.arange(4, dtype=np.float32), requires_grad=True)
    y = wp.zeros(4, dtype=float, requires_grad=True)
    tape = _run(copy_k, x, y, fill_k, 4)
    tape.backward(grads={y: np.array([1.0, 2.0, 3.0, 4.0], np.float32)})
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 2.0, 3.0, 4.0])


def test_linear_combination_then_overwrite_is_not_an_error():
    """Products with a constant or with an array that has no gradient read only that factor."""
    x = wp.array(np.arange(4, dtype=np.float32), requires_grad=True)
    c = wp.array(np.array([1.0, 2.0, 3.0, 4.0], np.float32))
    y = wp.zeros(4, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(scaled_k, dim=4, inputs=[x, c, y])
        wp.launch(fill_k, dim=4, inputs=[x])
    tape.backward(grads={y: np.ones(4, np.float32)})
    np.testing.assert_allclose(x.grad.numpy(), 3.0 - c.numpy())


@pytest.mark.parametrize("kernel", [square_k, sin_k])
def test_rules_reading_the_input_still_raise(kernel):
    x = wp.array(np.arange(4, dtype=np.float32), requires_grad=True)
    y = wp.zeros(4, dtype=float, requires_grad=True)
    tape = _run(kernel, x, y, fill_k, 4)
    with pytest.raises(OverwriteError, match="'x'"):
        tape.backward(grads={y: np.ones(4, np.float32)})


def test_tile_transpose_then_overwrite_is_not_an_error():
    rng = np.random.default_rng(0)
    x = wp.array(rng.standard_normal((TILE, TILE)).astype(np.float32), requires_grad=True)
    y = wp.zeros((TILE, TILE), dtype=float, requires_grad=True)
    tape = _run(transpose_k, x, y, fill2_k, (TILE, TILE), tiled=True)
    g = rng.standard_normal((TILE, TILE)).astype(np.float32)
    tape.backward(grads={y: g})
    np.testing.assert_allclose(x.grad.numpy(), g.T, rtol=1e-6)


def test_tile_rule_reading_the_input_still_raises():
    x = wp.array(np.ones((TILE, TILE), np.float32), requires_grad=True)
    y = wp.zeros((TILE, TILE), dtype=float, requires_grad=True)
    tape = _run(tile_square_k, x, y, fill2_k, (TILE, TILE), tiled=True)
    with pytest.raises(OverwriteError, match="tile_square_k"):
        tape.backward(grads={y: np.ones((TILE, TILE), np.float32)})


@wp.func
def _pair(a: float, b: float) -> wp.vec2f:
    return wp.vec2f(a, b)


@wp.func
def _scaled_sum(z: wp.vec2f, s: float) -> float:
    return (z[0] + z[1]) * s


@wp.func
def _cube(a: float) -> float:
    return a * a * a


@wp.kernel
def tile_funcs_k(x: wp.array2d(dtype=float), c: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    # user functions that only combine their inputs linearly (the scale comes from an array without gradient)
    t = wp.tile_load(x, shape=(TILE, TILE))
    k = wp.tile_load(c, shape=(TILE, TILE))
    z = wp.tile_map(_pair, t, wp.tile_transpose(t))
    wp.tile_store(y, wp.tile_map(_scaled_sum, z, k))


@wp.kernel
def tile_cube_k(x: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    t = wp.tile_load(x, shape=(TILE, TILE))
    wp.tile_store(y, wp.tile_map(_cube, t))


def test_tile_map_of_linear_user_functions_then_overwrite_is_not_an_error():
    """The analysis sees through the functions tile_map applies (here: a constructor, extraction, a sum and a
    product with a tile that has no gradient)."""
    rng = np.random.default_rng(1)
    x = wp.array(rng.standard_normal((TILE, TILE)).astype(np.float32), requires_grad=True)
    c_np = rng.standard_normal((TILE, TILE)).astype(np.float32)
    c = wp.array(c_np)
    y = wp.zeros((TILE, TILE), dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(tile_funcs_k, dim=[1], inputs=[x, c, y], block_dim=8)
        wp.launch(fill2_k, dim=(TILE, TILE), inputs=[x])
    g = rng.standard_normal((TILE, TILE)).astype(np.float32)
    tape.backward(grads={y: g})
    # y = (x + x^T) * c  ->  dL/dx = g c + (g c)^T
    np.testing.assert_allclose(x.grad.numpy(), g * c_np + (g * c_np).T, rtol=1e-5, atol=1e-6)


def test_tile_map_of_a_nonlinear_user_function_still_raises():
    x = wp.array(np.ones((TILE, TILE), np.float32), requires_grad=True)
    y = wp.zeros((TILE, TILE), dtype=float, requires_grad=True)
    tape = _run(tile_cube_k, x, y, fill2_k, (TILE, TILE), tiled=True)
    with pytest.raises(OverwriteError, match="tile_cube_k"):
        tape.backward(grads={y: np.ones((TILE, TILE), np.float32)})


def test_tile_map_product_of_two_gradient_tiles_still_raises():
    """_scaled_sum's product reads its scale when the scale tile carries a gradient."""
    x = wp.array(np.ones((TILE, TILE), np.float32), requires_grad=True)
    c = wp.array(np.ones((TILE, TILE), np.float32), requires_grad=True)
    y = wp.zeros((TILE, TILE), dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(tile_funcs_k, dim=[1], inputs=[x, c, y], block_dim=8)
        wp.launch(fill2_k, dim=(TILE, TILE), inputs=[x])
    with pytest.raises(OverwriteError, match="tile_funcs_k"):
        tape.backward(grads={y: np.ones((TILE, TILE), np.float32)})


def test_retain_grad_keeps_the_gradient_an_overwrite_would_consume():
    # y = x_a (copy_k), then y = sin(x_b) overwrites it: the second store's adjoint consumes y's gradient, so x_a
    # gets none; with retain_grad=True (Warp's flag) y.grad survives, x_a receives it and y.grad is left as seeded
    n = 5
    xb_np = np.linspace(0.1, 0.9, n)
    for retain in (False, True):
        x_a = wp.ones(n, dtype=float, requires_grad=True)
        x_b = wp.array(xb_np, dtype=float, requires_grad=True)
        y = wp.zeros(n, dtype=float, requires_grad=True, retain_grad=retain)
        assert y.retain_grad is retain
        with wp.Tape() as tape:
            wp.launch(copy_k, dim=n, inputs=[x_a, y])
            wp.launch(sin_k, dim=n, inputs=[x_b, y])
        tape.backward(grads={y: wp.ones_like(y)})
        np.testing.assert_allclose(x_b.grad.numpy(), np.cos(xb_np), rtol=1e-6)
        np.testing.assert_array_equal(x_a.grad.numpy(), np.full(n, 1.0 if retain else 0.0))
        np.testing.assert_array_equal(y.grad.numpy(), np.full(n, 1.0 if retain else 0.0))
    with pytest.raises(ValueError, match="requires requires_grad"):
        wp.zeros(3, dtype=float, retain_grad=True)
    a = wp.zeros(3, dtype=float, requires_grad=True, retain_grad=True)
    a.requires_grad = False
    assert not a.retain_grad
