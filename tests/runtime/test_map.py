"""``wp.map`` (a function over array elements, NumPy broadcasting, several results, gradients) and the element-wise
array operators built on it, against float64 NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp
from weft._src.utils import map_cache


@wp.func
def polar(x: float, y: float):
    return wp.sqrt(x * x + y * y), wp.atan2(y, x)


def test_map_broadcasts_and_returns_several_results():
    rng = np.random.default_rng(5)
    x_np = rng.uniform(0.5, 2.0, (2, 1, 3))
    y_np = rng.uniform(-1.0, 1.0, (4, 3))
    r, phi = wp.map(polar, wp.array(x_np, dtype=float), wp.array(y_np, dtype=float))
    assert r.shape == (2, 4, 3)
    np.testing.assert_allclose(r.numpy(), np.hypot(x_np, y_np), rtol=1e-6)
    np.testing.assert_allclose(phi.numpy(), np.arctan2(y_np, x_np), rtol=1e-5, atol=1e-6)
    k = 3.0
    out = wp.map(lambda a, b: wp.clamp(a * k, 0.0, b), wp.array(x_np[0, 0], dtype=float), 4.0)
    np.testing.assert_allclose(out.numpy(), np.clip(x_np[0, 0] * 3.0, 0.0, 4.0), rtol=1e-6)
    assert len(map_cache) > 0
    with pytest.raises(ValueError, match="not broadcastable"):
        wp.map(wp.add, wp.zeros(3), wp.zeros(5))
    with pytest.raises(TypeError, match="does not match expected dtype"):
        wp.map(wp.add, wp.zeros(3), wp.zeros(3), out=wp.zeros(3, dtype=wp.int32))


def test_map_gradient_and_array_operators():
    a_np = np.linspace(-1.0, 1.0, 6)
    a = wp.array(a_np, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        out = wp.map(wp.sin, a * 2.0 + 1.0)  # operators are maps too: recorded on the tape
    tape.backward(grads={out: wp.ones_like(out)})
    np.testing.assert_allclose(out.numpy(), np.sin(2 * a_np + 1), rtol=1e-6)
    # d/da sin(2a + 1) = 2 cos(2a + 1), against central differences of the float64 function
    h = 1e-6
    fd = (np.sin(2 * (a_np + h) + 1) - np.sin(2 * (a_np - h) + 1)) / (2 * h)
    np.testing.assert_allclose(a.grad.numpy(), fd, rtol=1e-5, atol=1e-6)
    b_np = np.arange(1, 7, dtype=np.float64)
    b = wp.array(b_np, dtype=float)
    np.testing.assert_allclose((2.0 - b / 4.0).numpy(), 2.0 - b_np / 4.0)
    np.testing.assert_allclose((b ** 2.0 // 3.0).numpy(), b_np ** 2 // 3)
    np.testing.assert_allclose((-b).numpy(), -b_np)
    b *= 2.0
    np.testing.assert_allclose(b.numpy(), 2 * b_np)
    ints = wp.array(np.arange(6, dtype=np.int32), dtype=wp.int32) / wp.array(np.full(6, 4, np.int32), dtype=wp.int32)
    assert ints.dtype is wp.int32  # Warp's integer division
    mixed = wp.int16(5) % wp.array(np.arange(1, 5, dtype=np.int16), dtype=wp.int16)  # a NumPy scalar on the left
    assert isinstance(mixed, wp.array) and mixed.numpy().tolist() == [0, 1, 2, 1]
    np.testing.assert_array_equal(ints.numpy(), np.arange(6) // 4)


@wp.kernel
def cube(a: wp.array(dtype=float), b: wp.array(dtype=float)):
    i = wp.tid()
    b[i] = a[i] * a[i] * a[i]


def test_explicit_adjoint_launch_none_uses_own_grad():
    """``adj_inputs=[None, ...]``: as in Warp, the adjoint goes to (and comes from) the arrays' own ``.grad``."""
    a_np = np.array([-1.0, 2.0, 0.5])
    a = wp.array(a_np, dtype=float, requires_grad=True)
    b = wp.zeros(3, dtype=float, requires_grad=True)
    wp.launch(cube, 3, inputs=[a, b])
    b.grad = wp.array([1.0, 2.0, 3.0], dtype=float)
    wp.launch(cube, 3, inputs=[a, b], adjoint=True, adj_inputs=[None, None])
    np.testing.assert_allclose(a.grad.numpy(), 3 * a_np ** 2 * [1.0, 2.0, 3.0], rtol=1e-6)
