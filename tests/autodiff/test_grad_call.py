"""wp.grad(f)(args...) in kernel code: the gradient of a func or builtin computed in forward code (Warp's wp.grad),
checked against float64 central differences of the same func, analytic NumPy derivatives, and Warp's rules (the
reverse sweep treats the result as a constant; wp.grad inside a @wp.func_grad body differentiates through it)."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp

f64 = wp.float64


@wp.func
def series(x: f64, n: int):
    # a dynamic loop: the helper's replay pushes the loop state, its reverse sweep pops it
    s = f64(0.0)
    t = f64(1.0)
    for i in range(n):
        t = t * x
        s = s + t / f64(i + 1)
    return s * wp.sin(x)


@wp.func
def swirl(v: wp.vec3d, a: f64):
    return v * a + wp.cross(v, wp.vec3d(a, a * a, f64(1.0)))


@wp.func
def apply_target(g: wp.Function, x: f64):
    return g(x) * x


@wp.kernel(enable_backward=False)
def k_grad_call(x: wp.array(dtype=f64), v: wp.array(dtype=wp.vec3d), n: int, fx: wp.array(dtype=f64),
                gx: wp.array(dtype=f64), fv: wp.array(dtype=f64), gv: wp.array(dtype=wp.vec3d),
                ga: wp.array(dtype=f64), gb: wp.array(dtype=f64)):
    i = wp.tid()
    fx[i] = series(x[i], n)
    dx, dn = wp.grad(series)(x[i], n)
    gx[i] = dx + f64(dn)
    w = swirl(v[i], x[i])
    fv[i] = w[0] + w[1] + w[2]  # the result adjoint is seeded to one in every component
    dv, da = wp.grad(swirl)(v[i], x[i])
    gv[i] = dv
    ga[i] = da
    g = wp.grad(apply_target)  # a handle bound to a local; a wp.Function argument specialises the target
    gb[i] = g(wp.sin, x[i]) + wp.grad(wp.atan2)(x[i], f64(2.0))[0]


def _run(x, v, n):
    k = len(x)
    outs = [wp.zeros(k, dtype=f64), wp.zeros(k, dtype=f64), wp.zeros(k, dtype=f64), wp.zeros(k, dtype=wp.vec3d),
            wp.zeros(k, dtype=f64), wp.zeros(k, dtype=f64)]
    wp.launch(k_grad_call, dim=k, inputs=[wp.array(x, dtype=f64), wp.array(v, dtype=wp.vec3d), n, *outs])
    return [o.numpy() for o in outs]


def test_grad_call_matches_central_differences():
    rng = np.random.default_rng(3)
    x = rng.uniform(-1.5, 1.5, 6)
    v = rng.normal(size=(6, 3))
    n, h = 5, 1e-6
    _, gx, _, gv, ga, gb = _run(x, v, n)
    up, down = _run(x + h, v, n), _run(x - h, v, n)
    np.testing.assert_allclose(gx, (up[0] - down[0]) / (2 * h), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ga, (up[2] - down[2]) / (2 * h), rtol=1e-6, atol=1e-8)
    for c in range(3):
        dv = np.zeros_like(v)
        dv[:, c] = h
        fd = (_run(x, v + dv, n)[2] - _run(x, v - dv, n)[2]) / (2 * h)
        np.testing.assert_allclose(gv[:, c], fd, rtol=1e-6, atol=1e-8)
    # d/dx (sin(x) x) + d/dy atan2(y=x, 2)
    np.testing.assert_allclose(gb, np.cos(x) * x + np.sin(x) + 2.0 / (x * x + 4.0), rtol=1e-12)


@wp.func
def square(x: float):
    return x * x


@wp.func
def safe_sqrt(x: float):
    return wp.sqrt(x)


@wp.func_grad(safe_sqrt)
def adj_safe_sqrt(x: float, adj_ret: float):
    if x > 0.0:
        wp.adjoint[x] += wp.grad(wp.sqrt)(x) * adj_ret


@wp.kernel
def k_taped(x: wp.array(dtype=float), y: wp.array(dtype=float), z: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = safe_sqrt(x[i])
    z[i] = x[i] * x[i] + wp.grad(square)(x[i])


def test_grad_call_in_taped_kernel_and_custom_gradient():
    xs = np.array([0.5, 1.0, 2.0, 4.0], dtype=np.float32)
    x = wp.array(xs, dtype=float, requires_grad=True)
    y = wp.zeros(4, dtype=float, requires_grad=True)
    z = wp.zeros(4, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(k_taped, dim=4, inputs=[x, y, z])
    np.testing.assert_allclose(z.numpy(), xs * xs + 2 * xs, rtol=1e-6)
    tape.backward(grads={y: wp.ones(4, dtype=float)})
    np.testing.assert_allclose(x.grad.numpy(), 0.5 / np.sqrt(xs), rtol=1e-6)  # through wp.grad in the func_grad
    tape.zero()
    tape.backward(grads={z: wp.ones(4, dtype=float)})
    np.testing.assert_allclose(x.grad.numpy(), 2 * xs, rtol=1e-6)  # wp.grad(square)(x) is a constant there


def _lower_error(body):
    with pytest.raises(wp.CompileError) as info:
        wp.launch(body, dim=1, inputs=[wp.zeros(1, dtype=float)])
    return str(info.value)


@wp.func
def nothing(x: float):
    wp.expect_eq(x, x)


@wp.func
def element(a: wp.array(dtype=float), i: int):
    return a[i]


def test_grad_call_rejected_forms():
    @wp.kernel(enable_backward=False, module="unique")
    def rebind(out: wp.array(dtype=float)):
        g = wp.grad(square)
        g = 1.0
        out[0] = g

    @wp.kernel(enable_backward=False, module="unique")
    def void(out: wp.array(dtype=float)):
        out[0] = wp.grad(nothing)(1.0)

    @wp.kernel(enable_backward=False, module="unique")
    def array_arg(out: wp.array(dtype=float)):
        out[0] = wp.grad(element)(out, 0)

    @wp.kernel(enable_backward=False, module="unique")
    def not_a_function(out: wp.array(dtype=float)):
        out[0] = wp.grad(out)(1.0)

    assert "Cannot reassign local 'g' after binding it to wp.grad(...)" in _lower_error(rebind)
    assert "Cannot compute gradient of void function 'nothing'" in _lower_error(void)
    assert "argument 'a' is an array" in _lower_error(array_arg)
    assert "grad() expects a Warp function" in _lower_error(not_a_function)
    with pytest.raises(RuntimeError, match="only be called inside"):
        wp.grad(square)(1.0)
    with pytest.raises(TypeError, match="expects a Warp function"):
        wp.grad(3.0)
