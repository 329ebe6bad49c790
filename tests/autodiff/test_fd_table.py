"""Every case of the op table: Tape gradient of L = sum_i w_i . out_i against float64 central differences."""

# no `from __future__ import annotations`: the kernels below take their dtypes from the closure
import zlib

import numpy as np
import pytest

import weft as wp

from .op_table import TABLE, Case

_KERNELS: dict[int, object] = {}


def _elementwise_kernel(fn, ins: tuple, O):
    """out[i] = fn(in0[i], ...): one kernel per arity (the dtypes come from the closure)."""
    if len(ins) == 1:
        (A,) = ins

        @wp.kernel
        def k1(a: wp.array(dtype=A), out: wp.array(dtype=O)):
            i = wp.tid()
            out[i] = fn(a[i])

        return k1
    if len(ins) == 2:
        A, B = ins

        @wp.kernel
        def k2(a: wp.array(dtype=A), b: wp.array(dtype=B), out: wp.array(dtype=O)):
            i = wp.tid()
            out[i] = fn(a[i], b[i])

        return k2
    A, B, C = ins

    @wp.kernel
    def k3(a: wp.array(dtype=A), b: wp.array(dtype=B), c: wp.array(dtype=C), out: wp.array(dtype=O)):
        i = wp.tid()
        out[i] = fn(a[i], b[i], c[i])

    return k3


def _kernel(c: Case):
    if c.kernel is not None:
        return c.kernel
    if id(c) not in _KERNELS:
        _KERNELS[id(c)] = _elementwise_kernel(c.func, c.inputs, c.output)
    return _KERNELS[id(c)]


def _cases():
    for e in TABLE:
        for c in e.cases:
            yield pytest.param(c, id=f"{e.domain}.{e.name}[{c.label}]")


def _loss(out_np: np.ndarray, w: np.ndarray) -> float:
    return float(np.sum(out_np.astype(np.float64) * w))


@pytest.mark.parametrize("c", list(_cases()))
def test_op_gradient_matches_finite_differences(c: Case):
    rng = np.random.default_rng(zlib.crc32(c.label.encode()))
    kernel = _kernel(c)
    dim = c.dim or c.n
    values = c.draw(rng)
    ins = [wp.array(v, dtype=t, requires_grad=True) for v, t in zip(values, c.inputs)]
    out_shape = c.dim or (c.out_len or c.n)
    out = wp.zeros(out_shape, dtype=c.output, requires_grad=True)
    init = np.full(out.numpy().shape, c.out_init)
    w = rng.normal(size=out.numpy().shape)

    def forward() -> float:
        out.numpy()[...] = init
        wp.launch(kernel, dim=dim, inputs=ins, outputs=[out])
        return _loss(out.numpy(), w)

    tape = wp.Tape()
    out.numpy()[...] = init
    with tape:
        wp.launch(kernel, dim=dim, inputs=ins, outputs=[out])
    tape.backward(grads={out: w})
    ad = [np.array(a.grad.numpy(), dtype=np.float64) for a in ins]
    assert all(np.isfinite(g).all() for g in ad), "autodiff gradient has non-finite values"

    for k, a in enumerate(ins):
        x = a.numpy()
        flat = x.reshape(-1)
        fd = np.zeros(flat.size)
        for j in range(flat.size):
            x0 = flat[j]
            flat[j] = x0 + c.eps
            plus = forward()
            flat[j] = x0 - c.eps
            minus = forward()
            flat[j] = x0
            fd[j] = (plus - minus) / (2 * c.eps)
        fd = fd.reshape(ad[k].shape)
        np.testing.assert_allclose(ad[k], fd, rtol=c.rtol, atol=c.atol,
                                   err_msg=f"d loss / d input {k} ({c.label}): autodiff vs central differences")
