"""Foreign arrays as kernel arguments: NumPy arrays and __array_interface__ objects, zero-copy."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp


@wp.kernel
def scale_vec3(x: wp.array(dtype=wp.vec3), s: float, y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    y[i] = x[i] * s


@wp.kernel
def add_one(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] + 1.0


@wp.kernel
def twice_any(x: wp.array(dtype=wp.Any), y: wp.array(dtype=wp.Any)):
    i = wp.tid()
    y[i] = x[i] + x[i]


def test_numpy_vec3_arguments():
    x = np.random.default_rng(1).random((6, 3)).astype(np.float32)
    y = np.zeros_like(x)
    wp.launch(scale_vec3, 6, inputs=[x, 2.0], outputs=[y])
    np.testing.assert_allclose(y, 2 * x, rtol=1e-6)


def test_numpy_output_written_in_place_strided():
    base = np.zeros(10, dtype=np.float32)
    view = base[::2]
    wp.launch(add_one, 5, inputs=[view])
    np.testing.assert_array_equal(base, [1, 0] * 5)


def test_generic_kernel_infers_dtype_from_numpy():
    x = np.arange(4, dtype=np.float64)
    y = np.zeros(4, dtype=np.float64)
    wp.launch(twice_any, 4, inputs=[x], outputs=[y])
    np.testing.assert_array_equal(y, 2 * x)


def test_read_only_input_is_accepted():
    x = np.ones((3, 3), dtype=np.float32)
    x.flags.writeable = False
    y = np.zeros((3, 3), dtype=np.float32)
    wp.launch(scale_vec3, 3, inputs=[x, 3.0], outputs=[y])
    np.testing.assert_array_equal(y, 3.0)


def test_array_interface_object():
    class Holder:
        def __init__(self, a):
            self._a = a
            self.__array_interface__ = a.__array_interface__

    data = np.zeros(4, dtype=np.float32)
    wp.launch(add_one, 4, inputs=[Holder(data)])
    np.testing.assert_array_equal(data, 1.0)


def test_weft_array_numpy_view_is_zero_copy():
    a = wp.zeros(4, dtype=wp.vec3)
    n = a.numpy()
    n[1] = (1, 2, 3)
    assert a.numpy()[1].tolist() == [1, 2, 3]
    wp.launch(scale_vec3, 4, inputs=[a, 2.0], outputs=[a])
    assert n[1].tolist() == [2, 4, 6]


def test_wrong_dtype_is_an_error():
    with pytest.raises(wp.LaunchError):
        wp.launch(add_one, 4, inputs=[np.zeros(4, dtype=np.float64)])
