"""``@wp.func_grad`` and ``@wp.func_replay``: the backward pass runs the user's gradient (not the derivative of the
func's body) and the replay func, against float64 NumPy references. One kernel, two launches."""

from __future__ import annotations

import numpy as np

import weft as wp


@wp.func
def clipped_square(x: float):
    return x * x


@wp.func_grad(clipped_square)
def adj_clipped_square(x: float, adj_ret: float):
    # a deliberately different derivative (clipped at 1), so the test tells the custom rule from autodiff's
    wp.adjoint[x] += adj_ret * wp.min(2.0 * x, 1.0)


@wp.func
def counted(x: float, calls: wp.array(dtype=float)):
    wp.atomic_add(calls, 0, 1.0)
    return 3.0 * x


@wp.func_replay(counted)
def replay_counted(x: float, calls: wp.array(dtype=float)):
    return 3.0 * x  # the backward recomputes without counting


@wp.kernel
def k_custom(x: wp.array(dtype=float), calls: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = clipped_square(x[i]) + counted(x[i], calls)


def test_custom_gradient_and_replay():
    xs = np.array([-1.0, 0.25, 0.5, 2.0])
    x = wp.array(xs.astype(np.float32), requires_grad=True)
    calls = wp.zeros(1, dtype=float)
    y = wp.zeros(4, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(k_custom, 4, inputs=[x, calls], outputs=[y])
    np.testing.assert_allclose(y.numpy(), xs * xs + 3.0 * xs, rtol=1e-6)
    tape.backward(grads={y: wp.array(np.ones(4, np.float32))})
    np.testing.assert_allclose(x.grad.numpy(), np.minimum(2.0 * xs, 1.0) + 3.0, rtol=1e-6)
    assert calls.numpy()[0] == 4.0  # the forward counted once per thread; the replay did not
