"""Tape.zero's pending zero: gradients weft owns are zeroed on their first touch, and every way of reading or
writing one sees zeros (runtime/array.py ``defer_zero``)."""

import copy
import ctypes
import gc
import pickle

import numpy as np
import pytest

import weft as wp
from weft.runtime import array as A

N = 2048  # 8 KiB of float32: above the size deferred


@wp.kernel
def square(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i]


@wp.kernel
def copy_values(src: wp.array(dtype=float), dst: wp.array(dtype=float)):
    i = wp.tid()
    dst[i] = src[i]


@wp.struct
class Holder:
    a: wp.array(dtype=float)


@wp.kernel
def copy_from_struct(h: Holder, dst: wp.array(dtype=float)):
    i = wp.tid()
    dst[i] = h.a[i]


def _taped():
    """x -> y = x^2 on a Tape with d loss / d y = 1 seeded: after backward x.grad = 2 x (non-zero), y.grad = 1."""
    x = wp.array(np.linspace(1.0, 2.0, N, dtype=np.float32), dtype=float, requires_grad=True)
    y = wp.zeros(N, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(square, N, inputs=[x], outputs=[y])
    tape.backward(grads={y: wp.array(np.ones(N, dtype=np.float32), dtype=float)})
    return tape, x, y


def _zeroed():
    tape, x, _ = _taped()
    tape.zero()
    assert x.grad._shared.zero is not None  # deferred, not yet written
    return tape, x


def _read_ptr(g):
    return np.ctypeslib.as_array((ctypes.c_float * g.size).from_address(g.ptr)).copy()


def _kernel_read(g):
    out = wp.full(N, 7.0, dtype=float)
    wp.launch(copy_values, N, inputs=[g], outputs=[out])
    return out.numpy()


def _kernel_read_general(g):  # the general launch path (keyword arguments skip the fast one)
    out = wp.full(N, 7.0, dtype=float)
    wp.launch(copy_values, dim=N, inputs=[g], outputs=[out], device="cpu", record_tape=False)
    return out.numpy()


def _struct_read(g):
    h = Holder()
    h.a = g
    out = wp.full(N, 7.0, dtype=float)
    wp.launch(copy_from_struct, N, inputs=[h], outputs=[out])
    return out.numpy()


def _captured_read(g):
    out = wp.full(N, 7.0, dtype=float)
    with wp.ScopedCapture() as cap:  # recorded only; the replay runs it
        wp.launch(copy_values, N, inputs=[g], outputs=[out])
    wp.capture_launch(cap.graph)
    return out.numpy()


def _copy(g):
    out = wp.full(N, 7.0, dtype=float)
    wp.copy(out, g)
    return out.numpy()


READERS = {
    "numpy": lambda g: g.numpy().copy(),
    "asarray": lambda g: np.array(g),
    "array_interface": lambda g: np.array(np.asarray(type("V", (), {"__array_interface__": g.__array_interface__}))),
    "ptr": _read_ptr,
    "list": lambda g: np.array(g.list(), dtype=np.float32),
    "item": lambda g: np.array([g[0], g[N // 2], g[N - 1]], dtype=np.float32),
    "view": lambda g: g[10:20].numpy().copy(),
    "reshape": lambda g: g.reshape((2, N // 2)).numpy().copy(),
    "str": lambda g: np.array([t for t in str(g).strip("[]").split() if t != "..."], dtype=np.float32),
    "clone": lambda g: wp.clone(g).numpy(),
    "deepcopy": lambda g: copy.deepcopy(g).numpy(),
    "pickle": lambda g: pickle.loads(pickle.dumps(g)).numpy(),
    "copy": _copy,
    "kernel": _kernel_read,
    "kernel_general": _kernel_read_general,
    "struct": _struct_read,
    "captured": _captured_read,
}


@pytest.mark.parametrize("how", list(READERS))
def test_every_read_of_a_pending_gradient_sees_zeros(how):
    _, x = _zeroed()
    got = READERS[how](x.grad)
    assert got.size and not got.any(), how
    assert x.grad._shared.zero is None  # the read zeroed the memory


def test_dlpack_and_torch_see_zeros():
    torch = pytest.importorskip("torch")
    _, x = _zeroed()
    assert not torch.from_dlpack(x.grad).any()
    _, x = _zeroed()
    assert not wp.to_torch(x.grad).any()


def test_backward_after_zero_gives_a_fresh_gradient():
    tape, x, y = _taped()
    expect = 2.0 * x.numpy()
    for _ in range(2):  # the second backward starts from the pending zero, not from the first gradient
        tape.zero()
        y.grad.fill_(1.0)
        tape.backward()
        np.testing.assert_allclose(x.grad.numpy(), expect, rtol=1e-6)


def test_writes_to_a_pending_gradient_keep_the_rest_zero():
    _, x = _zeroed()
    x.grad[3] = 5.0
    g = x.grad.numpy()
    assert g[3] == 5.0 and np.count_nonzero(g) == 1
    _, x = _zeroed()
    x.grad[100:200].fill_(1.0)
    assert x.grad.numpy().sum() == 100.0
    _, x = _zeroed()
    wp.launch(copy_values, N, inputs=[wp.full(N, 2.0, dtype=float)], outputs=[x.grad])  # written by a kernel
    assert (x.grad.numpy() == 2.0).all()


def test_escaped_memory_is_zeroed_at_once():
    tape, x, _ = _taped()
    view = x.grad.numpy()  # a NumPy view the caller keeps: the memory is no longer weft's alone
    assert view.any()
    tape.zero()
    assert x.grad._shared.zero is None and not view.any()
    # memory weft did not allocate (a wrapped NumPy array) is never deferred either
    host = np.ones(N, dtype=np.float32)
    x.grad = wp.array(host, dtype=float, copy=False)
    tape.zero()
    assert not host.any()


def test_a_dropped_pending_gradient_is_released():
    tape, x = _zeroed()
    before = len(A._PENDING)
    del tape, x
    gc.collect()
    assert len(A._PENDING) < before
