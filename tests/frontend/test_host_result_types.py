"""Builtins called from Python return Warp's result types: float32 / int32 / bool results are Python numbers
(Python numbers in give Python numbers out), other scalar results keep their type; host scalars print as Warp's."""

import math

import numpy as np
import pytest

import weft as wp


def test_python_float_in_python_float_out():
    r = wp.sin(0.5)
    assert type(r) is float
    assert r == pytest.approx(math.sin(0.5), rel=1e-7)
    # the result feeds a builtin that takes a float32 angle (Warp's example_render_opengl does this)
    q = wp.quat_from_axis_angle(wp.vec3(0.0, 1.0, 0.0), wp.sin(0.5))
    np.testing.assert_allclose(np.asarray(q), [0.0, math.sin(r / 2), 0.0, math.cos(r / 2)], rtol=1e-6)


@pytest.mark.parametrize("fn, args, expected_type", [
    (wp.sin, (np.float32(0.5),), float),
    (wp.sin, (wp.float32(0.5),), float),
    (wp.abs, (-3,), int),
    (wp.min, (1, 2), int),
    (wp.clamp, (5.0, 0.0, 3.0), float),
    (wp.dot, (wp.vec3(1.0, 2.0, 3.0), wp.vec3(1.0, 2.0, 3.0)), float),
])
def test_native_scalar_results_are_python_numbers(fn, args, expected_type):
    assert type(fn(*args)) is expected_type


@pytest.mark.parametrize("fn, args, dtype", [
    (wp.sin, (np.float64(0.5),), wp.float64),
    (wp.sin, (wp.float16(0.5),), wp.float16),
    (wp.length, (wp.vec3d(1.0, 2.0, 3.0),), wp.float64),
    (wp.add, (wp.int8(3), wp.int8(4)), wp.int8),
])
def test_other_scalar_results_keep_their_type(fn, args, dtype):
    r = fn(*args)
    assert isinstance(r, dtype)
    assert np.dtype(type(r)) == np.dtype(dtype)


def test_values_match_numpy():
    assert wp.length(wp.vec3d(1.0, 2.0, 3.0)) == pytest.approx(math.sqrt(14.0), rel=1e-15)
    assert wp.add(wp.int8(100), wp.int8(100)) == np.int8(-56)  # wraps as the int8 kernel sum does


def test_legacy_scalar_return_types():
    old = wp.config.legacy_scalar_return_types
    wp.config.legacy_scalar_return_types = True
    try:
        assert type(wp.length(wp.vec3d(1.0, 2.0, 3.0))) is float
        assert type(wp.add(wp.int8(3), wp.int8(4))) is int
    finally:
        wp.config.legacy_scalar_return_types = old


def test_float64_argument_for_float32_parameter_is_refused_as_in_warp():
    with pytest.raises(RuntimeError, match="quat_from_axis_angle"):
        wp.quat_from_axis_angle(wp.vec3(0.0, 1.0, 0.0), np.float64(0.5))


@pytest.mark.parametrize("value, text", [
    (wp.int8(-1), "int8(-1)"), (wp.uint8(-1), "uint8(255)"), (wp.int16(-1), "int16(-1)"),
    (wp.uint64(-1), "uint64(18446744073709551615)"), (wp.int64(-1), "int64(-1)"),
    (wp.float32(1.5), "float32(1.5)"), (wp.float32(0.1), "float32(0.1)"), (wp.float64(0.1), "float64(0.1)"),
    (wp.float16(-1), "float16(-1.0)"), (wp.bool(1), "bool(True)"),
])
def test_host_scalar_repr(value, text):
    assert repr(value) == text
