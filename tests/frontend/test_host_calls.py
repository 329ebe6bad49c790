"""Calling a ``@wp.func`` from Python runs the overload whose annotations the host values match (Warp's rule: a
Python float is a float32, an int an int32), and raises ``RuntimeError`` when none does."""

from __future__ import annotations

import pytest

import weft as wp


@wp.func
def bump(x: int):
    return x + 1


@wp.func
def bump(x: float):  # noqa: F811 - an overload
    return x + 0.5


@wp.func
def bump(x: wp.vec3):  # noqa: F811 - an overload
    return x + wp.vec3(1.0, 0.0, 0.0)


@wp.func
def halve64(x: wp.float64):
    return x / wp.float64(2.0)


def test_host_call_dispatch():
    assert bump(1) == 2 and isinstance(bump(1), int)
    assert bump(1.0) == 1.5
    assert list(bump(wp.vec3(1.0, 2.0, 3.0))) == [2.0, 2.0, 3.0]
    assert halve64(wp.float64(3.0)) == 1.5
    with pytest.raises(RuntimeError, match=r"no overload found for arguments \(1.0,\)"):
        halve64(1.0)


def test_kernel_result_annotation_is_warps_type_error():
    @wp.kernel
    def returns(x: float) -> float:
        return x

    with pytest.raises(wp.WarpCodegenTypeError, match="Warp kernels cannot return values"):
        wp.launch(returns, dim=1, inputs=[1.0])


def test_builtin_with_several_results_returns_a_tuple_on_the_host():
    # axis, angle = wp.quat_to_axis_angle(q) from Python, as in a kernel; float64 reference: q / |q| = (sin(a/2) n,
    # cos(a/2))
    import numpy as np

    q = np.array([1.0, 2.0, 3.0, 4.0])
    axis, angle = wp.quat_to_axis_angle(wp.quatd(*q))
    qn = q / np.linalg.norm(q)
    np.testing.assert_allclose(angle, 2.0 * np.arccos(qn[3]), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(axis), qn[:3] / np.linalg.norm(qn[:3]), rtol=1e-12)
