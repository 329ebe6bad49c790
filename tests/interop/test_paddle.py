"""PaddlePaddle interop (Warp 1.19's from_paddle / to_paddle / dtype, device and stream mapping).

The tests that need paddle run when it is importable (checked with paddlepaddle 3.3.1, CPU wheel); the device
string mapping and the missing-paddle error run without it."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import weft as wp

HAVE_PADDLE = importlib.util.find_spec("paddle") is not None


@wp.kernel
def scale2(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = 2.0 * a[i]


@wp.kernel
def sq_sum(a: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(out, 0, wp.dot(a[i], a[i]))


def test_device_strings_without_paddle():
    assert wp.device_to_paddle("cpu") == "cpu"
    assert wp.device_from_paddle("cpu") == wp.get_device("cpu")
    with pytest.raises(RuntimeError, match="Unsupported Paddle device"):
        wp.device_from_paddle("xpu:0")


@pytest.mark.skipif(HAVE_PADDLE, reason="paddle is installed")
def test_missing_paddle_is_a_clear_error():
    with pytest.raises(ModuleNotFoundError, match="paddlepaddle"):
        wp.dtype_to_paddle(wp.float32)


paddle_only = pytest.mark.skipif(not HAVE_PADDLE, reason="paddle (PaddlePaddle) is not installed")


@paddle_only
def test_dtypes():
    import paddle

    pairs = [(wp.float16, paddle.float16), (wp.float32, paddle.float32), (wp.float64, paddle.float64),
             (wp.int8, paddle.int8), (wp.int16, paddle.int16), (wp.int32, paddle.int32), (wp.int64, paddle.int64),
             (wp.uint8, paddle.uint8), (wp.bool, paddle.bool)]
    for w, p in pairs:
        assert wp.dtype_to_paddle(w) == p
        assert wp.dtype_from_paddle(p) is w
    assert wp.dtype_to_paddle(wp.uint32) == paddle.int32  # paddle has no wide unsigned types (as in Warp)
    for bad in (wp.vec3, wp.bfloat16):
        with pytest.raises(TypeError):
            wp.dtype_to_paddle(bad)
    with pytest.raises(TypeError):
        wp.dtype_from_paddle(paddle.complex64)


@paddle_only
def test_devices():
    import paddle

    assert wp.device_from_paddle(paddle.CPUPlace()) == wp.get_device("cpu")
    assert wp.device_from_paddle(paddle.to_tensor([1.0]).place) == wp.get_device("cpu")
    with pytest.raises(TypeError, match="paddle_device"):
        wp.device_from_paddle(3)


@paddle_only
def test_from_paddle_zero_copy_and_vector_dtype():
    import paddle

    t = paddle.to_tensor(np.arange(6, dtype=np.float32))
    a = wp.from_paddle(t)
    out = wp.zeros(6, dtype=float)
    wp.launch(scale2, 6, inputs=[a], outputs=[out])
    np.testing.assert_array_equal(out.numpy(), 2 * np.arange(6))
    a.numpy()[0] = 42.0  # shared memory
    assert float(t.numpy()[0]) == 42.0
    v = wp.from_paddle(paddle.to_tensor(np.ones((4, 3), np.float32)), dtype=wp.vec3)
    assert v.shape == (4,) and v.dtype == wp.vec3
    with pytest.raises(Exception, match="3"):
        wp.from_paddle(paddle.to_tensor(np.ones((4, 2), np.float32)), dtype=wp.vec3)
    with pytest.raises(TypeError, match="paddle.Tensor"):
        wp.from_paddle(np.ones(3))
    with pytest.raises(NotImplementedError, match="return_ctype"):
        wp.from_paddle(t, return_ctype=True)


@paddle_only
def test_to_paddle_shares_memory_and_gradient():
    import paddle

    a = wp.array(np.arange(6, dtype=np.float32).reshape(2, 3), dtype=wp.vec3, requires_grad=True)
    t = wp.to_paddle(a)
    assert list(t.shape) == [2, 3] and t.dtype == paddle.float32 and not t.stop_gradient
    np.testing.assert_array_equal(t.numpy(), np.arange(6).reshape(2, 3))
    a.grad.numpy()[1] = (1.0, 2.0, 3.0)
    np.testing.assert_array_equal(t.grad.numpy()[1], [1.0, 2.0, 3.0])
    t2 = wp.to_paddle(wp.zeros(3, dtype=float))
    assert t2.stop_gradient


@paddle_only
def test_from_paddle_gradient_through_tape():
    import paddle

    x = np.linspace(-1, 1, 12).reshape(4, 3).astype(np.float32)
    t = paddle.to_tensor(x, stop_gradient=False)
    a = wp.from_paddle(t, dtype=wp.vec3)
    assert a.requires_grad and a.grad is not None
    out = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(sq_sum, 4, inputs=[a], outputs=[out])
    tape.backward(grads={out: wp.array([1.0], dtype=float)})
    np.testing.assert_allclose(t.grad.numpy(), 2 * x.astype(np.float64), rtol=1e-6)  # d/dx sum x^2


@paddle_only
def test_stream_from_paddle_on_cpu_is_an_error():
    with pytest.raises(Exception):  # noqa: B017 - paddle's own error or weft's "needs a CUDA stream"
        wp.stream_from_paddle("cpu")
