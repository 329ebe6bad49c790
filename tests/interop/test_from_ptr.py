"""wp.from_ptr (Warp 1.19's deprecated form: ``ptr`` points at a size_t holding the memory's address)."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

import weft as wp


def test_from_ptr_reads_the_address_behind_the_pointer():
    data = np.arange(8, dtype=np.float32)
    holder = ctypes.c_size_t(data.ctypes.data)
    with pytest.warns(DeprecationWarning, match="from_ptr"):
        a = wp.from_ptr(ctypes.addressof(holder), 8, dtype=wp.float32, device="cpu")
    assert a.shape == (8,) and a.ptr == data.ctypes.data
    np.testing.assert_array_equal(a.numpy(), data)
    a.numpy()[3] = -1.0
    assert data[3] == -1.0  # no copy
    with pytest.warns(DeprecationWarning):
        v = wp.from_ptr(ctypes.pointer(holder), 2, dtype=wp.vec4, device="cpu")
    np.testing.assert_array_equal(v.numpy(), data.reshape(2, 4))
    with pytest.warns(DeprecationWarning):
        m = wp.from_ptr(ctypes.addressof(holder), 8, dtype=wp.float32, shape=(2, 4), device="cpu")
    assert m.shape == (2, 4)


def test_from_ptr_null_and_bad_pointer():
    with pytest.warns(DeprecationWarning):
        a = wp.from_ptr(0, 0, dtype=wp.float32, device="cpu")
    assert a.size == 0 and a.ptr is None
    with pytest.warns(DeprecationWarning), pytest.raises(TypeError, match="ptr"):
        wp.from_ptr("0x10", 4, dtype=wp.float32)
