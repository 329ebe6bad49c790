"""DLPack both ways with NumPy (always installed), vector dtypes as trailing dimensions, capsule lifetime."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import weft as wp
from weft.interop import dlpack
from weft.interop.api import from_dlpack, to_dlpack


def test_weft_to_numpy_is_zero_copy():
    a = wp.array(np.arange(6, dtype=np.float32))
    n = np.from_dlpack(a)
    assert n.ctypes.data == a.ptr
    n[2] = 42.0
    assert a.numpy()[2] == 42.0
    a.numpy()[3] = -1.0
    assert n[3] == -1.0


def test_numpy_to_weft_is_zero_copy_and_strided():
    x = np.arange(20, dtype=np.float64).reshape(4, 5)[:, ::2]
    a = from_dlpack(x)
    assert a.shape == (4, 3) and a.strides == x.strides and a.ptr == x.ctypes.data
    a.numpy()[1, 1] = -7.0
    assert x[1, 1] == -7.0
    x[0, 2] = 9.0
    assert a.numpy()[0, 2] == 9.0


@pytest.mark.parametrize("np_dtype", [np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64,
                                      np.uint8, np.uint16, np.uint32, np.uint64, np.bool_])
def test_round_trip_dtypes(np_dtype):
    x = (np.arange(8) % 2).astype(np_dtype)
    a = from_dlpack(x)
    assert a.numpy().dtype == np.dtype(np_dtype)
    back = np.from_dlpack(a)
    assert back.dtype == np.dtype(np_dtype)
    np.testing.assert_array_equal(back, x)
    assert back.ctypes.data == x.ctypes.data


def test_vec3_maps_to_trailing_dimension():
    x = np.random.default_rng(0).random((5, 3)).astype(np.float32)
    a = from_dlpack(x, dtype=wp.vec3)
    assert a.dtype == wp.vec3 and a.shape == (5,) and a.ptr == x.ctypes.data
    back = np.from_dlpack(a)
    assert back.shape == (5, 3)
    np.testing.assert_array_equal(back, x)


def test_mat22_maps_to_two_trailing_dimensions():
    x = np.zeros((2, 4, 2, 2), dtype=np.float64)
    a = from_dlpack(x, dtype=wp.mat22d)
    assert a.shape == (2, 4) and a.ndim == 2
    assert np.from_dlpack(a).shape == (2, 4, 2, 2)


def test_vec_dtype_errors():
    with pytest.raises(TypeError, match="trailing dimensions"):
        from_dlpack(np.zeros((5, 4), np.float32), dtype=wp.vec3)
    with pytest.raises(TypeError, match="float64"):
        from_dlpack(np.zeros((5, 3), np.float64), dtype=wp.vec3)
    with pytest.raises(TypeError, match="contiguous"):
        from_dlpack(np.zeros((3, 5), np.float32).T, dtype=wp.vec3)


def test_legacy_and_versioned_capsules():
    a = wp.array(np.arange(4, dtype=np.float32))
    legacy = to_dlpack(a)
    assert "dltensor" in repr(legacy) and "versioned" not in repr(legacy)
    versioned = a.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(versioned)
    for cap in (legacy, versioned):
        b = from_dlpack(cap)
        assert b.ptr == a.ptr
    with pytest.raises(BufferError, match="consumed"):
        from_dlpack(legacy)


def test_capsule_keeps_memory_alive():
    a = wp.array(np.arange(1000, dtype=np.float64))
    n = np.from_dlpack(a)
    del a
    gc.collect()
    np.testing.assert_array_equal(n, np.arange(1000.0))
    before = len(dlpack._live)
    del n
    gc.collect()
    assert len(dlpack._live) == before - 1


def test_unconsumed_capsule_is_released():
    before = len(dlpack._live)
    cap = wp.zeros(10).__dlpack__()
    assert len(dlpack._live) == before + 1
    del cap
    gc.collect()
    assert len(dlpack._live) == before


def test_imported_memory_outlives_the_producer():
    a = from_dlpack(np.arange(100, dtype=np.float32))  # the NumPy producer has no other reference
    gc.collect()
    np.testing.assert_array_equal(a.numpy(), np.arange(100, dtype=np.float32))
    view = a.numpy()
    del a
    gc.collect()
    np.testing.assert_array_equal(view, np.arange(100, dtype=np.float32))


def test_dlpack_device_and_copy_flag():
    a = wp.zeros(3)
    assert a.__dlpack_device__() == (1, 0)
    cap = a.__dlpack__(max_version=(1, 0), copy=True)
    b = from_dlpack(cap)
    assert b.ptr != a.ptr
    with pytest.raises(BufferError):
        a.__dlpack__(dl_device=(2, 0), copy=False)


def test_struct_arrays_are_not_exportable():
    @wp.struct
    class S:
        x: float

    a = wp.zeros(2, dtype=S)
    with pytest.raises(BufferError):
        a.__dlpack__()


def test_zero_size_and_zero_dim():
    assert from_dlpack(np.zeros((0, 3), np.float32)).shape == (0, 3)
    s = from_dlpack(np.array(3.5))
    assert s.shape == (1,) and s.numpy()[0] == 3.5


def test_import_weft_does_not_import_torch_or_jax():
    import subprocess
    import sys

    code = "import sys, weft; print('torch' in sys.modules, 'jax' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_public_names():
    for name in ("from_dlpack", "to_dlpack", "from_torch", "to_torch", "from_jax", "to_jax", "dtype_from_torch",
                 "dtype_to_torch", "device_from_torch", "device_to_torch"):
        assert callable(getattr(wp, name))


def test_cpu_arrays_are_64_byte_aligned():
    for n in range(1, 40):
        assert wp.zeros(n, dtype=wp.vec3).ptr % 64 == 0
        assert wp.array(np.arange(n, dtype=np.float32)).ptr % 64 == 0


def test_bfloat16_round_trip_and_torch():
    # DLPack's bfloat code both ways: weft -> weft, weft -> torch, torch -> weft (same memory, same values)
    torch = pytest.importorskip("torch")
    vals = np.array([1.0, -2.5, 3.0, 0.15625], np.float32)
    a = wp.array(vals, dtype=wp.bfloat16)
    b = wp.from_dlpack(wp.to_dlpack(a))
    assert b.dtype is wp.bfloat16 and b.ptr == a.ptr
    np.testing.assert_array_equal(np.asarray(b.numpy(), np.float32), vals)
    t = torch.utils.dlpack.from_dlpack(wp.to_dlpack(a))
    assert t.dtype == torch.bfloat16
    np.testing.assert_array_equal(t.float().numpy(), vals)
    c = wp.from_dlpack(torch.tensor([1.5, -0.25], dtype=torch.bfloat16))
    assert c.dtype is wp.bfloat16
    np.testing.assert_array_equal(np.asarray(c.numpy(), np.float32), [1.5, -0.25])


def test_dtype_aliases_and_errors():
    # Warp's rules: bool as int8/uint8, signed/unsigned of one width; anything else is a TypeError/RuntimeError
    src = wp.array(np.array([True, False, True]), dtype=wp.bool)
    for dt, np_dt in ((wp.int8, np.int8), (wp.uint8, np.uint8)):
        a = wp.from_dlpack(wp.to_dlpack(src), dtype=dt)
        assert a.ptr == src.ptr and a.dtype is dt
        np.testing.assert_array_equal(a.numpy(), np.array([1, 0, 1], np_dt))
    u = wp.from_dlpack(wp.to_dlpack(wp.array(np.array([-1, 2], np.int32))), dtype=wp.uint32)
    np.testing.assert_array_equal(u.numpy(), [2**32 - 1, 2])
    with pytest.raises(RuntimeError, match="Incompatible data types: DLPack bool8 and Warp float32"):
        wp.from_dlpack(wp.to_dlpack(src), dtype=wp.float32)

    class Odd:
        def __dlpack_device__(self):
            return (123, 7)

        def __dlpack__(self, stream=None):
            raise AssertionError("must not be called")

    with pytest.raises(TypeError, match="device_type=123"):
        wp.from_dlpack(Odd())


def test_dlpack_stream_argument_checked_as_warp():
    a = wp.array(np.arange(4.0))
    for ok in (None, -1):
        np.testing.assert_array_equal(wp.from_dlpack(a.__dlpack__(stream=ok)).numpy(), np.arange(4.0))
    for bad in (0, 1, 1742, -2):
        with pytest.raises(TypeError, match="DLPack stream must be None or -1 for CPU device"):
            a.__dlpack__(stream=bad)
    from weft._src.dlpack import _from_dlpack  # Warp's private path to the same function

    np.testing.assert_array_equal(_from_dlpack(a.__dlpack__()).numpy(), np.arange(4.0))
