"""Warp's kernel-language conveniences: builtins and value types without the ``wp.`` prefix, struct value
constructors, and operators on structs calling a @wp.func named after the operator."""

import numpy as np
import pytest

import weft as wp


@wp.struct
class Cplx:
    re: float
    im: float


@wp.func
def mul(a: Cplx, b: Cplx) -> Cplx:  # a * b on two Cplx values calls this
    return Cplx(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re)


@wp.func
def add(a: Cplx, b: Cplx) -> Cplx:
    return Cplx(re=a.re + b.re, im=a.im + b.im)


@wp.kernel
def bare(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    v = vec3(x[i], 2.0, 3.0)  # noqa: F821  (resolved to wp.vec3 as in Warp)
    out[i * 6 + 0] = dot(v, v)  # noqa: F821
    out[i * 6 + 1] = float32(length(v))  # noqa: F821
    z = Cplx(x[i], 1.0)
    w = z * z + z  # (x + i)^2 + (x + i) = x^2 - 1 + x + i (2x + 1)
    out[i * 6 + 2] = w.re
    out[i * 6 + 3] = w.im
    s = 2.0 * x[i]  # operators on non-struct values are the builtins even though add/mul funcs exist here
    out[i * 6 + 4] = s + 1.0
    out[i * 6 + 5] = sin(x[i])  # noqa: F821
    if unot(i) and wp.unot(x[i] > 100.0):  # noqa: F821  (logical not: True only for thread 0)
        out[i * 6 + 5] = out[i * 6 + 5] + 10.0


def test_bare_builtins_struct_ctors_and_struct_operators():
    xs = np.array([0.5, -1.25, 2.0])
    x = wp.array(xs.astype(np.float32), requires_grad=True)
    out = wp.zeros(6 * len(xs), dtype=float, requires_grad=True)
    wp.launch(bare, dim=len(xs), inputs=[x, out])
    got = out.numpy().reshape(-1, 6)
    want = np.stack([xs * xs + 13.0, np.sqrt(xs * xs + 13.0), xs * xs - 1.0 + xs, 2.0 * xs + 1.0, 2.0 * xs + 1.0,
                     np.sin(xs) + 10.0 * (np.arange(len(xs)) == 0)], axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert wp.autograd.gradcheck(bare, dim=len(xs), inputs=[x], outputs=[out], eps=1e-3, atol=2e-3, rtol=1e-2,
                                 show_summary=False)


def test_struct_ctor_and_bare_name_errors():
    @wp.kernel
    def too_few(out: wp.array(dtype=float)):
        z = Cplx(1.0)
        out[0] = z.re

    @wp.kernel
    def unknown(out: wp.array(dtype=float)):
        out[0] = not_a_builtin(1.0)  # noqa: F821

    @wp.kernel
    def shadowed(out: wp.array(dtype=float)):
        length = 2.0  # a local named like a builtin is the local
        out[0] = length(1.0)

    out = wp.zeros(1, dtype=float)
    with pytest.raises(wp.Error, match="missing the field value 'im'"):
        wp.launch(too_few, dim=1, inputs=[out])
    with pytest.raises(wp.Error, match="name 'not_a_builtin' is not defined"):
        wp.launch(unknown, dim=1, inputs=[out])
    with pytest.raises(wp.Error, match="cannot call"):
        wp.launch(shadowed, dim=1, inputs=[out])
