"""Star-arguments in kernel calls: ``f(*v)`` for values whose length is known when compiling (vectors, quaternions,
matrices by rows, tuples, array slices with constant bounds), and the errors for everything else; tuples of values
passed to ``Any`` parameters, and ``wp.static(len(t))`` of a tuple."""

from typing import Any

import numpy as np
import pytest

import weft as wp


@wp.func
def _weighted(values: Any):
    out = wp.float32(0.0)
    for i in range(wp.static(len(values))):
        out += float(i + 1) * values[i]
    return out


@wp.func
def _sum3(a: float, b: float, c: float):
    return a + 10.0 * b + 100.0 * c


@wp.kernel
def _star(arr: wp.array(dtype=float), out: wp.array(dtype=float), vout: wp.array(dtype=wp.vec4),
          mout: wp.array(dtype=wp.mat22)):
    v = wp.vec3(1.0, 2.0, 3.0)
    out[0] = _sum3(*v)
    out[1] = wp.max(*arr[1:3])
    out[2] = _sum3(*arr[0:6:2])
    t = (4.0, 5.0)
    out[3] = _sum3(3.0, *t)
    q = wp.quat(0.5, 0.25, 0.125, 1.0)
    vout[0] = wp.vec4(*q)
    vout[1] = wp.vec4(*v[1:], *wp.vec2(7.0, 8.0))
    m = wp.mat22(1.0, 2.0, 3.0, 4.0)
    mout[0] = wp.matrix_from_cols(*m)
    t3 = (1.0, 2.0, 3.0)
    out[4] = _weighted(t) + _weighted(t3) + float(wp.static(len(t3)))


def test_star_arguments():
    arr = wp.array(np.arange(1.0, 8.0), dtype=float)
    out, vout, mout = wp.zeros(5, dtype=float), wp.zeros(2, dtype=wp.vec4), wp.zeros(1, dtype=wp.mat22)
    wp.launch(_star, dim=1, inputs=[arr, out, vout, mout])
    np.testing.assert_array_equal(out.numpy(), [321.0, 3.0, 1.0 + 30.0 + 500.0, 543.0, 14.0 + 14.0 + 3.0])
    np.testing.assert_array_equal(vout.numpy(), [[0.5, 0.25, 0.125, 1.0], [2.0, 3.0, 7.0, 8.0]])
    np.testing.assert_array_equal(mout.numpy()[0], [[1.0, 3.0], [2.0, 4.0]])


def _launch(kernel):
    wp.launch(kernel, dim=1, inputs=[wp.zeros(8, dtype=float)])


def test_star_argument_errors():
    @wp.kernel(module="unique")
    def not_unpackable(arr: wp.array(dtype=float)):
        x = 42
        wp.vec3i(*x)

    @wp.kernel(module="unique")
    def open_slice(arr: wp.array(dtype=float)):
        wp.vec3(*arr[0:])

    @wp.kernel(module="unique")
    def run_time_bound(arr: wp.array(dtype=float)):
        n = wp.tid() + 3
        wp.vec3(*arr[:n])

    @wp.kernel(module="unique")
    def negative_bound(arr: wp.array(dtype=float)):
        wp.vec3(*arr[:-3])

    with pytest.raises(wp.WarpCodegenTypeError, match="Starred expressions are only supported for"):
        _launch(not_unpackable)
    with pytest.raises(wp.WarpCodegenValueError, match="requires explicit upper bound"):
        _launch(open_slice)
    with pytest.raises(ValueError, match="must be a compile-time constant"):
        _launch(run_time_bound)
    with pytest.raises(wp.CompileError, match="cannot be negative for arrays"):
        _launch(negative_bound)


@wp.struct
class _StaticPose:
    m: wp.mat22
    v: wp.vec2
    k: int


_POSE = _StaticPose()
_POSE.m = wp.mat22(1.0, 2.0, 3.0, 4.0)
_POSE.v = wp.vec2(5.0, 6.0)
_POSE.k = 7


@wp.kernel
def _static_struct_value(out: wp.array(dtype=_StaticPose)):
    out[0] = wp.static(_POSE)


def test_static_struct_instance_is_a_kernel_value():
    out = wp.zeros(1, dtype=_StaticPose)
    wp.launch(_static_struct_value, dim=1, outputs=[out])
    got = out.numpy()[0]
    np.testing.assert_array_equal(got[0], [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(got[1], [5.0, 6.0])
    assert got[2] == 7


@wp.func
def _apply_target(g: wp.Function, x: float):
    return g(x)


def test_function_parameter_rejects_printf_and_python_callables():
    @wp.kernel
    def printf_target(out: wp.array(dtype=float)):
        out[0] = _apply_target(wp.printf, 0.5)

    with pytest.raises(wp.CompileError, match="unsupported built-in function 'printf'"):
        wp.launch(printf_target, dim=1, outputs=[wp.zeros(1, dtype=float)])
    assert _apply_target(wp.sin, 0.5) == pytest.approx(np.sin(0.5))  # on the host: a kernel builtin is accepted
    with pytest.raises(RuntimeError, match="no overload found"):
        _apply_target(lambda x: x, 0.5)  # ... a Python callable is not a wp.Function
