"""Warp 1.19's stub-only typing names, its kernel-code error names and get_cpu_kernel_cache_key."""

import typing

import numpy as np
import pytest

import weft as wp


def test_typing_names_give_annotations():
    assert wp.Vector[wp.float32, 3] is wp.vec3 and wp.Matrix[wp.float64, 2, 2] is wp.mat22d
    assert wp.Quaternion[wp.float32] is wp.quat and wp.Transformation[wp.float32] is wp.transform
    assert repr(wp.Array[wp.float32, 2]) == repr(wp.array2d[wp.float32])
    assert repr(wp.Array[wp.vec3]) == repr(wp.array[wp.vec3])
    assert repr(wp.Tile[wp.float32, (4, 8)]) == repr(wp.tile[wp.float32, 4, 8])
    # with type variables they stay typing aliases
    assert typing.get_origin(wp.Array[wp.DType, wp.NDim]) is wp.Array
    assert typing.get_origin(wp.Vector[wp.DTypeFloat, wp.Length]) is wp.Vector
    assert typing.get_args(wp.TileStack[wp.float32, typing.Literal[8]])[0] is wp.float32
    assert set(typing.get_args(wp.DeviceLike)) == {wp.Device, str, type(None)}
    with pytest.raises(ValueError, match="between 1 and 4"):
        wp.Array[wp.float32, 5]


@wp.kernel
def _scale(a: wp.Array[wp.float32, 2], s: wp.float32):
    i, j = wp.tid()
    a[i, j] = a[i, j] * s


def test_array_annotation_in_a_kernel():
    a = wp.array(np.ones((3, 4), dtype=np.float32))
    wp.launch(_scale, dim=(3, 4), inputs=[a, 2.5])
    np.testing.assert_array_equal(a.numpy(), np.full((3, 4), 2.5, np.float32))


def test_codegen_error_names():
    assert issubclass(wp.WarpCodegenAttributeError, AttributeError)
    assert issubclass(wp.WarpCodegenKeyError, KeyError) and issubclass(wp.WarpCodegenIndexError, IndexError)
    assert issubclass(wp.WarpDeterminismError, RuntimeError)
    for cls in (wp.WarpCodegenAttributeError, wp.WarpCodegenKeyError, wp.WarpCodegenIndexError):
        assert issubclass(cls, wp.WarpCodegenError)

    @wp.kernel(module="unique")
    def bad(a: wp.array(dtype=wp.vec3)):
        a[0] = wp.vec3(a[0][5], 0.0, 0.0)

    with pytest.raises(wp.WarpCodegenIndexError, match="index 5 is out of range for a vec3f"):
        wp.launch(bad, dim=1, inputs=[wp.zeros(1, dtype=wp.vec3)])


def test_cpu_kernel_cache_key(monkeypatch):
    key = wp.get_cpu_kernel_cache_key()
    assert key.startswith(wp.__version__ + "-") and key == wp.get_cpu_kernel_cache_key()
    assert wp.get_cpu_kernel_cache_key(cpu_compiler_flags="-DSOMETHING=1") != key
    monkeypatch.setattr(wp.config, "cpu_compile_flags", ("-DSOMETHING=1",))
    assert wp.get_cpu_kernel_cache_key() == wp.get_cpu_kernel_cache_key(cpu_compiler_flags="-DSOMETHING=1")
    with pytest.raises(TypeError, match="cpu_compiler_flags"):
        wp.get_cpu_kernel_cache_key(cpu_compiler_flags=["-O2"])
