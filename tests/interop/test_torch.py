"""PyTorch interop: zero-copy both ways, gradients shared, dtype/device mapping, tensors as kernel arguments."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp
from weft.interop import api

torch = pytest.importorskip("torch")


@wp.kernel
def scale_vec3(x: wp.array(dtype=wp.vec3), s: float, y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    y[i] = x[i] * s


@wp.kernel
def add_one(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] + 1.0


def test_from_torch_zero_copy():
    t = torch.zeros(8)
    a = api.from_torch(t)
    assert a.ptr == t.data_ptr() and a.dtype == wp.float32
    a.numpy()[3] = 5.0
    assert t[3].item() == 5.0
    t[4] = -2.0
    assert a.numpy()[4] == -2.0


def test_to_torch_zero_copy():
    a = wp.zeros(5, dtype=wp.vec3)
    t = api.to_torch(a)
    assert t.shape == (5, 3) and t.dtype == torch.float32 and t.data_ptr() == a.ptr
    t[2, 1] = 7.0
    assert a.numpy()[2, 1] == 7.0
    wp.launch(scale_vec3, 5, inputs=[a, 2.0], outputs=[a])
    assert t[2, 1].item() == 14.0


def test_vec3_from_n_by_3_tensor():
    t = torch.arange(12, dtype=torch.float32).reshape(4, 3)
    a = api.from_torch(t, dtype=wp.vec3)
    assert a.shape == (4,) and a.dtype == wp.vec3
    assert a.list()[1] == wp.vec3(3.0, 4.0, 5.0)


def test_from_torch_non_contiguous():
    t = torch.arange(20.0, dtype=torch.float64).reshape(4, 5)[:, 1::2]
    a = api.from_torch(t)
    assert a.shape == (4, 2) and a.strides == (40, 16)
    np.testing.assert_array_equal(a.numpy(), t.numpy())
    a.numpy()[2, 1] = 0.5
    assert t[2, 1].item() == 0.5


def test_grad_is_shared():
    t = torch.zeros(6, requires_grad=True)
    a = api.from_torch(t)
    assert a.grad is not None and t.grad is not None
    a.grad.numpy()[:] = 3.0
    assert torch.all(t.grad == 3.0)

    b = wp.zeros(4, dtype=wp.vec3, requires_grad=True)
    tb = api.to_torch(b)
    assert tb.requires_grad and tb.grad.shape == (4, 3)
    tb.grad[1, 2] = 9.0
    assert b.grad.numpy()[1, 2] == 9.0


def test_grad_of_strided_tensor_has_matching_strides():
    t = torch.zeros(4, 6, dtype=torch.float64)[:, ::2].requires_grad_(False)
    t.requires_grad_(True)
    a = api.from_torch(t)
    assert a.grad.strides == a.strides


def test_explicit_grad_and_requires_grad_false():
    t = torch.zeros(3, requires_grad=True)
    assert api.from_torch(t, requires_grad=False).grad is None
    g = torch.ones(3)
    a = api.from_torch(torch.zeros(3), grad=g)
    assert a.grad.ptr == g.data_ptr()


def test_dtype_mapping():
    assert api.dtype_from_torch(torch.float32) == wp.float32
    assert api.dtype_from_torch(torch.int64) == wp.int64
    assert api.dtype_from_torch(torch.bool) == wp.bool
    assert api.dtype_to_torch(wp.float16) == torch.float16
    assert api.dtype_to_torch(wp.vec3d) == torch.float64
    assert api.dtype_to_torch(wp.uint8) == torch.uint8
    with pytest.raises(TypeError):
        api.dtype_from_torch(torch.bfloat16)
    with pytest.raises(TypeError):
        api.from_torch(torch.zeros(2, dtype=torch.complex64))


def test_device_mapping():
    assert api.device_to_torch("cpu") == "cpu"
    assert api.device_from_torch(torch.device("cpu")) == wp.get_device("cpu")
    assert api.device_from_torch("cpu").is_cpu


def test_tensors_as_kernel_arguments():
    x = torch.rand(5, 3)
    y = torch.zeros(5, 3)
    wp.launch(scale_vec3, 5, inputs=[x, 3.0], outputs=[y])
    torch.testing.assert_close(y, 3 * x)
    z = torch.zeros(10)
    wp.launch(add_one, 5, inputs=[z[::2]])  # strided, written in place
    assert z.tolist() == [1.0, 0.0] * 5


def test_tensor_requiring_grad_as_kernel_argument():
    x = torch.rand(5, 3, requires_grad=True)
    y = torch.zeros(5, 3)
    wp.launch(scale_vec3, 5, inputs=[x, 2.0], outputs=[y])
    torch.testing.assert_close(y, 2 * x.detach())


def test_torch_from_dlpack_of_weft_array():
    a = wp.array(np.arange(6, dtype=np.float32))
    t = torch.from_dlpack(a)
    assert t.data_ptr() == a.ptr
    t[0] = 11.0
    assert a.numpy()[0] == 11.0
    b = api.from_dlpack(torch.arange(4.0))
    assert b.numpy().tolist() == [0.0, 1.0, 2.0, 3.0]


def test_to_torch_keeps_memory_alive():
    t = api.to_torch(wp.array(np.arange(1000, dtype=np.float32)))
    import gc

    gc.collect()
    assert t[999].item() == 999.0


def test_from_torch_keeps_tensor_alive():
    a = api.from_torch(torch.arange(1000, dtype=torch.float32))
    import gc

    gc.collect()
    assert a.numpy()[999] == 999.0
