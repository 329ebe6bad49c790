"""PyTorch interop: zero-copy tensors <-> weft arrays (gradients included), dtype/device/stream mapping.

torch is optional: it is imported inside the functions, so ``import weft`` never needs it. The ready-made
differentiable wrappers (``function``, ``kernel_op``, ``custom_op``) live in ``torch_autograd`` and are
re-exported here so ``weft.interop.torch.function`` reads naturally.
"""

from __future__ import annotations

import numpy as np

from ..ir import types as T
from ..runtime import device as D
from ..runtime.streams import Stream, get_stream
from ..types.dtypes import np_layout, resolve_dtype
from ..types.mapping import scalar_class
from .dlpack import DeviceType, _wrap, split_dtype, wrap_host


def _torch():
    import torch

    return torch


_WEFT_TO_NP_TO_TORCH: dict | None = None


def _table() -> dict:
    """NumPy scalar dtype -> torch dtype, for every weft scalar type torch has."""
    global _WEFT_TO_NP_TO_TORCH
    if _WEFT_TO_NP_TO_TORCH is None:
        torch = _torch()
        table = {
            np.dtype(np.float16): torch.float16, np.dtype(np.float32): torch.float32,
            np.dtype(np.float64): torch.float64, np.dtype(np.int8): torch.int8, np.dtype(np.int16): torch.int16,
            np.dtype(np.int32): torch.int32, np.dtype(np.int64): torch.int64, np.dtype(np.uint8): torch.uint8,
            np.dtype(np.bool_): torch.bool,
        }
        for name, np_t in (("uint16", np.uint16), ("uint32", np.uint32), ("uint64", np.uint64)):
            if hasattr(torch, name):  # torch >= 2.3 has (limited) unsigned types
                table[np.dtype(np_t)] = getattr(torch, name)
        _WEFT_TO_NP_TO_TORCH = table
    return _WEFT_TO_NP_TO_TORCH


def dtype_to_torch(dtype):
    """The torch dtype storing one scalar of a weft dtype (``wp.vec3`` -> ``torch.float32``).

    Raises:
        TypeError: the dtype has no torch equivalent (structs, unsigned types torch lacks).
    """
    ir = resolve_dtype(dtype)
    if isinstance(ir, T.StructType):
        raise TypeError(f"struct {ir} has no torch dtype")
    base, _ = np_layout(ir)
    try:
        return _table()[np.dtype(base)]
    except KeyError:
        raise TypeError(f"weft dtype {ir} has no torch equivalent") from None


def dtype_from_torch(torch_dtype):
    """The weft scalar type of a torch dtype (``torch.float32`` -> ``wp.float32``).

    Raises:
        TypeError: the torch dtype has no weft equivalent (bfloat16, complex, ...).
    """

    for np_t, t_t in _table().items():
        if t_t == torch_dtype:
            return scalar_class(np_t.type)
    raise TypeError(f"torch dtype {torch_dtype} has no weft equivalent")


def device_to_torch(device=None) -> str:
    """The torch device string of a weft device (``"cpu"``, ``"cuda:0"``)."""
    dev = D.get_device(device)
    return "cpu" if dev.is_cpu else f"cuda:{max(dev.ordinal, 0)}"


def device_from_torch(torch_device):
    """The weft device of a torch device (``torch.device`` or string)."""
    torch = _torch()
    td = torch.device(torch_device) if not isinstance(torch_device, torch.device) else torch_device
    if td.type == "cpu":
        return D.get_device("cpu")
    if td.type == "cuda":
        index = td.index if td.index is not None else torch.cuda.current_device()
        return D.get_device(f"cuda:{index}")
    raise TypeError(f"torch device {td} has no weft equivalent (weft has CPU and CUDA devices)")


def _wrap_tensor(t, dtype=None):
    """A zero-copy weft array over a torch tensor's memory (no grad handling); keeps ``t`` alive.

    This is the per-call path of tensors passed to ``wp.launch`` and of the autograd wrappers, so the CPU case
    reads the layout from ``t.numpy()`` (a zero-copy view whose C attributes are cheaper than torch's)."""
    if t.is_cpu:
        try:
            view = t.detach().numpy()
        except TypeError:  # a dtype NumPy lacks (bfloat16, ...)
            raise TypeError(f"torch dtype {t.dtype} has no weft equivalent") from None
        if view.dtype.kind not in "biuf":
            raise TypeError(f"torch dtype {t.dtype} has no weft equivalent")
        ir, shape, strides = split_dtype(view.dtype, view.shape, view.strides, dtype)
        if view.ndim == len(np_layout(ir)[1]):  # a single element: split_dtype made it a length-1 array
            view = view.reshape((1,) + view.shape)
        return wrap_host(view, ir, shape, strides, t)
    try:
        base = _NP_OF[t.dtype]
    except KeyError:
        raise TypeError(f"torch dtype {t.dtype} has no weft equivalent") from None
    shape = tuple(t.shape)
    strides = tuple(s * base.itemsize for s in t.stride())
    if t.is_cuda:
        return _wrap(t.data_ptr(), base, shape, strides, (DeviceType.CUDA, t.device.index or 0), dtype, t.detach())
    raise TypeError(f"tensors on torch device {t.device} cannot be shared with weft")


class _NpOf(dict):
    def __missing__(self, key):
        for np_t, t_t in _table().items():
            if t_t == key:
                self[key] = np_t
                return np_t
        raise KeyError(key)


_NP_OF = _NpOf()


def from_torch(t, dtype=None, requires_grad=None, grad=None, return_ctype=False):
    """A weft array sharing memory with the torch tensor ``t`` (and its ``.grad``).

    Args:
        t: a CPU or CUDA tensor; strided (non-contiguous) tensors are viewed as they are.
        dtype: the weft dtype; vector/matrix dtypes take the trailing dimensions (``(n, 3)`` float32 ->
            ``wp.vec3``). Default: the scalar type of ``t``.
        requires_grad: give the array a gradient. Default: ``t.requires_grad``. The gradient shares memory with
            ``t.grad``, which is created (zeros, same strides) when it does not exist yet.
        grad: an explicit gradient tensor to share instead of ``t.grad``.

    Returns:
        A ``wp.array`` on the tensor's device.

    Raises:
        TypeError: dtype mismatch, trailing dimensions that do not fit the dtype, unsupported device.
    """
    if return_ctype:
        raise NotImplementedError("return_ctype is not supported; pass the array itself to wp.launch")
    torch = _torch()
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"from_torch expects a torch.Tensor, got {type(t).__name__}")
    a = _wrap_tensor(t, dtype)
    if requires_grad is None:
        requires_grad = t.requires_grad or grad is not None
    if requires_grad:
        if grad is None:
            if t.grad is None:
                t.grad = _zeros_strided(t)
            grad = t.grad
        g = _wrap_tensor(grad, a.dtype)
        if g.strides != a.strides:
            raise ValueError(f"the gradient tensor has strides {tuple(grad.stride())}, the tensor {tuple(t.stride())}; "
                             "weft needs them equal")
        a.grad = g
    return a


def _zeros_strided(t):
    """Zeros with exactly ``t``'s shape and strides (``zeros_like`` keeps strides only for dense tensors)."""
    torch = _torch()
    return torch.zeros_like(t) if t.is_contiguous() else torch.empty_strided(
        t.shape, t.stride(), dtype=t.dtype, device=t.device).zero_()


def to_torch(a, requires_grad=None):
    """A torch tensor sharing memory with the weft array ``a`` (vector dtypes become trailing dimensions).

    Args:
        a: a weft array on the CPU or a CUDA device.
        requires_grad: make the tensor require grad. Default: whether ``a`` has a gradient; when it has one, the
            tensor's ``.grad`` shares memory with ``a.grad``.

    Returns:
        A leaf ``torch.Tensor``.
    """
    torch = _torch()
    if getattr(a, "_annotation", False):
        raise TypeError("an array annotation has no data")
    if isinstance(a._ir, T.StructType):
        raise TypeError(f"arrays of struct {a._ir} have no torch equivalent")
    if requires_grad is None:
        requires_grad = a.requires_grad
    t = _tensor_of(a, torch)
    if requires_grad:
        if a.grad is None:
            a.requires_grad = True
        if t.dtype.is_floating_point:
            t.requires_grad_(True)
            t.grad = _tensor_of(a.grad, torch)
    return t


def _tensor_of(a, torch):
    if a.device.impl.host_memory:
        host = a.numpy()
        if any(s < 0 for s in host.strides):
            raise ValueError("torch tensors cannot have negative strides; make the array contiguous first")
        if host.size == 0:
            return torch.from_numpy(np.ascontiguousarray(host))
        return torch.from_numpy(host)
    return torch.from_dlpack(a)


def stream_from_torch(stream_or_device=None):
    """A weft ``Stream`` wrapping a torch CUDA stream (best effort: needs the CUDA backend's external streams)."""
    torch = _torch()
    if stream_or_device is None or not isinstance(stream_or_device, torch.cuda.Stream):
        stream_or_device = torch.cuda.current_stream(stream_or_device)
    dev = device_from_torch(stream_or_device.device)
    try:
        return Stream(dev, cuda_stream=stream_or_device.cuda_stream)
    except TypeError:
        raise NotImplementedError("this weft build cannot wrap external CUDA streams") from None


def stream_to_torch(stream_or_device=None):
    """A ``torch.cuda.ExternalStream`` over a weft CUDA stream (default: the device's current stream)."""
    torch = _torch()
    stream = stream_or_device if isinstance(stream_or_device, Stream) else get_stream(stream_or_device)
    if not stream.device.is_cuda:
        raise ValueError("stream_to_torch needs a CUDA stream")
    return torch.cuda.ExternalStream(stream.cuda_stream, device=device_to_torch(stream.device))


def __getattr__(name):
    # The autograd wrappers import torch at module level; load them on first use only.
    if name in ("function", "kernel_op", "custom_op", "WeftFunction"):
        from . import torch_autograd

        return getattr(torch_autograd, name)
    raise AttributeError(name)
