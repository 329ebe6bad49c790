"""wp.where(cond, a, b): values, types, gradients and errors."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp


@wp.kernel
def where_scalar(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    y[i] = wp.where(v > 0.0, v * v, -2.0 * v) + wp.where(i % 2 == 0, 1.0, 0.0)


@wp.kernel
def where_vec(x: wp.array(dtype=wp.vec3), flag: wp.array(dtype=int), y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    y[i] = wp.where(flag[i], x[i] * 2.0, wp.vec3(1.0, 2.0, 3.0))


@wp.kernel
def where_int(n: int, y: wp.array(dtype=int)):
    i = wp.tid()
    y[i] = wp.where(i < n / 2, i, n - i)


def test_scalar_values_and_gradient():
    x = np.array([-1.5, -0.2, 0.0, 0.3, 2.0, 4.0], dtype=np.float32)
    xa = wp.array(x, requires_grad=True)
    y = wp.zeros(len(x), dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(where_scalar, dim=len(x), inputs=[xa], outputs=[y])
    expect = np.where(x > 0, x * x, -2 * x) + (np.arange(len(x)) % 2 == 0)
    np.testing.assert_allclose(y.numpy(), expect, rtol=1e-6)
    tape.backward(grads={y: wp.ones(len(x), dtype=float)})
    np.testing.assert_allclose(xa.grad.numpy(), np.where(x > 0, 2 * x, -2.0), rtol=1e-6)


def test_vector_and_int_condition():
    x = np.random.default_rng(0).random((5, 3)).astype(np.float32)
    flag = np.array([0, 1, 2, 0, -1], dtype=np.int32)
    y = wp.zeros(5, dtype=wp.vec3)
    wp.launch(where_vec, dim=5, inputs=[wp.array(x, dtype=wp.vec3), wp.array(flag)], outputs=[y])
    np.testing.assert_allclose(y.numpy(), np.where(flag[:, None] != 0, 2 * x, [1.0, 2.0, 3.0]), rtol=1e-6)
    out = wp.zeros(7, dtype=int)
    wp.launch(where_int, dim=7, inputs=[7], outputs=[out])
    i = np.arange(7)
    np.testing.assert_array_equal(out.numpy(), np.where(i < 3, i, 7 - i))


def test_errors_point_at_the_call():
    @wp.kernel
    def bad_arity(y: wp.array(dtype=float)):
        y[0] = wp.where(True, 1.0)

    @wp.kernel
    def bad_types(y: wp.array(dtype=float)):
        y[0] = wp.where(True, 1.0, wp.vec3())

    with pytest.raises(wp.CompileError, match="three arguments"):
        wp.launch(bad_arity, dim=1, inputs=[wp.zeros(1, dtype=float)])
    with pytest.raises(wp.CompileError, match="one type"):
        wp.launch(bad_types, dim=1, inputs=[wp.zeros(1, dtype=float)])


def test_host_call_is_an_error():
    with pytest.raises(wp.Error, match="can only be used inside a kernel or func"):
        wp.where(True, 1.0, 2.0)
