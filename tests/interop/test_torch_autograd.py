"""The ready-made torch wrappers: gradcheck (float64), backward twice, mixing with torch ops, strided inputs,
vector dtypes, torch.library custom ops."""

from __future__ import annotations

import pytest

import weft as wp

torch = pytest.importorskip("torch")
from weft.interop.torch import custom_op, function, kernel_op


@wp.kernel
def poly(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = x[i] * x[i] * x[i] + wp.sin(x[i])


@wp.kernel
def spring_energy(p: wp.array(dtype=wp.vec3d), k: wp.array(dtype=wp.float64), e: wp.array(dtype=wp.float64)):
    i = wp.tid()
    n = p.shape[0]
    d = p[i] - p[(i + 1) % n]
    e[i] = k[i] * wp.dot(d, d)


@wp.kernel
def axpy(a: wp.float64, x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64), z: wp.array(dtype=wp.float64)):
    i = wp.tid()
    z[i] = a * x[i] + y[i]


@wp.kernel
def square(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = x[i] * x[i]


@wp.kernel
def sum_rows(x: wp.array2d(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i, j = wp.tid()
    wp.atomic_add(y, i, x[i, j] * x[i, j])


poly_op = kernel_op(poly)


@function
def springs(p: wp.array(dtype=wp.vec3d), k: wp.array(dtype=wp.float64)):
    e = wp.zeros(p.shape[0], dtype=wp.float64, requires_grad=True)
    wp.launch(spring_energy, p.shape[0], inputs=[p, k], outputs=[e])
    return e


@function
def two_stage(a: float, x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    """Several launches on one tape: z = a*x + y, then w = z*z; returns (z, w)."""
    z = wp.zeros_like(x, requires_grad=True)
    w = wp.zeros_like(x, requires_grad=True)
    wp.launch(axpy, x.shape, inputs=[a, x, y], outputs=[z])
    wp.launch(square, x.shape, inputs=[z], outputs=[w])
    return z, w


def _rand(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(*shape, dtype=torch.float64, generator=g).requires_grad_(True)


def test_gradcheck_kernel_op():
    assert torch.autograd.gradcheck(poly_op, (_rand(9),))


def test_gradcheck_vec3_function():
    assert torch.autograd.gradcheck(springs, (_rand(5, 3), _rand(5, seed=1)))


def test_gradcheck_multiple_launches_and_outputs():
    x, y = _rand(7), _rand(7, seed=2)
    assert torch.autograd.gradcheck(lambda x, y: two_stage(1.5, x, y), (x, y))


def test_gradcheck_2d_atomic():
    op = kernel_op(sum_rows, output_shapes={"y": lambda x: (x.shape[0],)}, dim="x")
    assert torch.autograd.gradcheck(op, (_rand(4, 3),))


def test_backward_twice_with_retain_graph():
    x = _rand(6)
    y = poly_op(x)
    loss = (y * y).sum()
    loss.backward(retain_graph=True)
    first = x.grad.clone()
    loss.backward(retain_graph=True)
    torch.testing.assert_close(x.grad, 2 * first)
    xd = x.detach()
    expected = 2 * (xd**3 + torch.sin(xd)) * (3 * xd**2 + torch.cos(xd))
    torch.testing.assert_close(first, expected)


def test_backward_twice_through_autograd_grad():
    x = _rand(5)
    out = springs(x.reshape(5, 1).expand(5, 3) * 1.0, torch.ones(5, dtype=torch.float64)).sum()
    (g1,) = torch.autograd.grad(out, x, retain_graph=True)
    (g2,) = torch.autograd.grad(out, x)
    torch.testing.assert_close(g1, g2)


def test_mixing_with_torch_ops_before_and_after():
    x = _rand(8)

    def f(x):
        h = torch.tanh(x) * 2.0 + 0.5  # torch before
        y = poly_op(h)
        return torch.log1p(y.abs()).cumsum(0)  # torch after

    assert torch.autograd.gradcheck(f, (x,))


def test_non_contiguous_inputs():
    base = _rand(4, 6)
    assert not base[:, 3].is_contiguous()
    assert torch.autograd.gradcheck(lambda b: poly_op(b[:, 3]), (base,))  # a strided column
    assert torch.autograd.gradcheck(lambda b: poly_op(b.T[2]), (base,))  # a row of a transposed view
    assert torch.autograd.gradcheck(lambda b: poly_op(b.flatten()[1::3]), (base,))


def test_non_contiguous_vec3_rows():
    big = _rand(10, 3)
    k = _rand(5, seed=3)
    assert torch.autograd.gradcheck(lambda b, k: springs(b[::2], k), (big, k))


def test_broadcast_inputs_are_copied():
    x = _rand(1)
    k = _rand(4, seed=4)
    assert torch.autograd.gradcheck(lambda x, k: springs(x.expand(4, 3), k), (x, k))


def test_no_grad_forward():
    x = _rand(4)
    with torch.no_grad():
        y = poly_op(x)
    assert not y.requires_grad
    xd = x.detach()
    torch.testing.assert_close(y, xd**3 + torch.sin(xd))


def test_only_some_inputs_need_grad():
    x = _rand(5)
    y = torch.rand(5, dtype=torch.float64)
    _z, w = two_stage(2.0, x, y)
    w.sum().backward()
    torch.testing.assert_close(x.grad, 2 * (2.0 * x.detach() + y) * 2.0)


def test_in_place_change_of_an_input_is_detected():
    x = _rand(4)
    x2 = x * 1.0
    y = poly_op(x2)
    x2.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_training_step_updates_parameters():
    k = torch.ones(5, dtype=torch.float64, requires_grad=True)
    p = _rand(5, 3)
    opt = torch.optim.SGD([k], lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        springs(p.detach(), k).sum().backward()
        opt.step()
    assert torch.all(k < 1.0)


def test_torch_library_custom_op():
    def scaled_poly(x: wp.array(dtype=wp.float64), s: float):
        y = wp.zeros_like(x, requires_grad=True)
        wp.launch(axpy, x.shape, inputs=[s, x, x], outputs=[y])
        return y

    op = custom_op("weft_interop_tests::scaled", scaled_poly)
    x = _rand(6)
    torch.testing.assert_close(op(x, 2.0), 3.0 * x)
    assert torch.autograd.gradcheck(lambda t: op(t, 2.0), (x,))
    torch.library.opcheck(op, (x, 2.0))
    assert torch.ops.weft_interop_tests.scaled(x, 1.0).shape == x.shape


def test_torch_compile_with_custom_op():
    def sq(x: wp.array(dtype=wp.float64)):
        y = wp.zeros_like(x, requires_grad=True)
        wp.launch(square, x.shape, inputs=[x], outputs=[y])
        return y

    op = custom_op("weft_interop_tests::sq", sq)
    x = _rand(5)
    f = torch.compile(lambda t: (op(torch.sin(t)) * 2).sum(), backend="eager", fullgraph=True)
    f(x).backward()
    xd = x.detach()
    torch.testing.assert_close(x.grad, 4 * torch.sin(xd) * torch.cos(xd))
