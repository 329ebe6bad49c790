"""PaddlePaddle interop: zero-copy tensors <-> weft arrays (gradients included), dtype/device/stream mapping.

paddle is optional and imported inside the functions. Tensors are read through their own attributes
(``data_ptr()``, ``shape``, element ``strides``, ``place``) in ``from_paddle`` and handed to paddle through DLPack
in ``to_paddle`` (paddle copies NumPy arrays in ``to_tensor``; DLPack keeps the memory shared).
"""

from __future__ import annotations

import numpy as np

from ..ir import types as T
from ..runtime import device as D
from ..runtime.array import array as _WeftArray
from ..runtime.array import zeros as _wp_zeros
from ..runtime.streams import Stream
from ..types.dtypes import resolve_dtype
from ..types.mapping import scalar_class
from .dlpack import DeviceType, _wrap, to_dlpack


def _paddle():
    try:
        import paddle
    except ModuleNotFoundError as e:
        raise ModuleNotFoundError("paddle (PaddlePaddle) is not installed: pip install paddlepaddle") from e
    return paddle


_TABLE: list | None = None


def _table() -> list:
    """(NumPy scalar dtype, paddle dtype) pairs; the unsigned types paddle lacks map to the signed type of their
    width when converting to paddle only (as Warp does)."""
    global _TABLE
    if _TABLE is None:
        p = _paddle()
        _TABLE = [(np.dtype(np.float16), p.float16), (np.dtype(np.float32), p.float32),
                  (np.dtype(np.float64), p.float64), (np.dtype(np.int8), p.int8), (np.dtype(np.int16), p.int16),
                  (np.dtype(np.int32), p.int32), (np.dtype(np.int64), p.int64), (np.dtype(np.uint8), p.uint8),
                  (np.dtype(np.bool_), p.bool)]
    return _TABLE


_UNSIGNED_TO_SIGNED = {np.dtype(np.uint16): np.dtype(np.int16), np.dtype(np.uint32): np.dtype(np.int32),
                       np.dtype(np.uint64): np.dtype(np.int64)}


def dtype_to_paddle(warp_dtype):
    """The paddle dtype of a weft scalar type (``wp.uint16/32/64`` -> the signed paddle type of that width).

    Raises:
        TypeError: ``warp_dtype`` is not a scalar type paddle has (vectors, structs, bfloat16 included, as in Warp).
    """
    try:
        ir = resolve_dtype(warp_dtype)
    except Exception:  # noqa: BLE001 - anything that is not a dtype
        ir = None
    if isinstance(ir, T.ScalarType) and ir.name != "bfloat16":
        npd = np.dtype(ir.name if ir.name != "bool" else np.bool_)
        npd = _UNSIGNED_TO_SIGNED.get(npd, npd)
        for n, p in _table():
            if n == npd:
                return p
    raise TypeError(f"Cannot convert {warp_dtype} to a Paddle type")


def dtype_from_paddle(paddle_dtype):
    """The weft scalar type of a paddle dtype.

    Raises:
        TypeError: the paddle dtype has no weft equivalent (bfloat16, complex64, complex128, as in Warp).
    """
    for n, p in _table():
        if p == paddle_dtype:
            return scalar_class(n.type)
    raise TypeError(f"Cannot convert {paddle_dtype} to a weft type")


def _np_of(paddle_dtype) -> np.dtype:
    for n, p in _table():
        if p == paddle_dtype:
            return n
    raise TypeError(f"Cannot convert Paddle type {paddle_dtype} to a weft type")


def device_to_paddle(warp_device=None) -> str:
    """The paddle device string of a weft device: ``"cpu"`` or ``"gpu:N"``."""
    dev = D.get_device(warp_device)
    kind = dev.impl.dlpack_device  # paddle names devices by their memory: host or CUDA
    if kind == DeviceType.CPU:
        return "cpu"
    if kind == DeviceType.CUDA:
        return f"gpu:{max(dev.ordinal, 0)}"
    raise RuntimeError(f"weft device {dev} is not compatible with paddle")


def device_from_paddle(paddle_device):
    """The weft device of a paddle device: a string (``"cpu"``, ``"gpu"``: the current CUDA device, ``"gpu:N"``)
    or a place (``Place``, ``CPUPlace``, ``CUDAPinnedPlace``: the CPU, ``CUDAPlace``).

    Raises:
        RuntimeError: an unsupported device string or place kind. TypeError: not a string or place.
    """
    if isinstance(paddle_device, str):
        if paddle_device == "cpu":
            return D.get_device("cpu")
        if paddle_device == "gpu":
            return D.get_device("cuda")
        if paddle_device.startswith("gpu:") and paddle_device[4:].isdigit():
            return D.get_device(f"cuda:{int(paddle_device[4:])}")
        raise RuntimeError(f"Unsupported Paddle device {paddle_device}")
    _paddle()
    from paddle.base.libpaddle import CPUPlace, CUDAPinnedPlace, CUDAPlace, Place

    if isinstance(paddle_device, Place):
        if paddle_device.is_gpu_place():
            return D.get_device(f"cuda:{paddle_device.gpu_device_id()}")
        if paddle_device.is_cpu_place() or paddle_device.is_cuda_pinned_place():
            return D.get_device("cpu")
        raise RuntimeError(f"Unsupported Paddle device type {paddle_device}")
    if isinstance(paddle_device, (CPUPlace, CUDAPinnedPlace)):
        return D.get_device("cpu")
    if isinstance(paddle_device, CUDAPlace):
        return D.get_device(f"cuda:{paddle_device.get_device_id()}")
    raise TypeError(f"device_from_paddle: paddle_device must be a paddle place or a device string "
                    f"('cpu', 'gpu', 'gpu:N'), got {type(paddle_device).__name__}")


def _wrap_tensor(t, dtype=None):
    """A zero-copy weft array over a paddle tensor (no gradient); keeps ``t`` alive."""
    base = _np_of(t.dtype)
    shape = tuple(int(s) for s in t.shape)
    strides = tuple(int(s) * base.itemsize for s in t.strides) if shape else ()
    place = t.place
    if place.is_gpu_place():
        dl = (DeviceType.CUDA, place.gpu_device_id())
    elif place.is_cpu_place() or place.is_cuda_pinned_place():
        dl = (DeviceType.CPU, 0)
    else:
        raise TypeError(f"paddle tensors on {place} cannot be shared with weft")
    if not shape:  # a 0-d tensor: weft arrays have at least one dimension
        shape, strides = (1,), (base.itemsize,)
    return _wrap(t.data_ptr() if t.size else 0, base, shape, strides, dl, dtype, t)


def from_paddle(t, dtype=None, requires_grad=None, grad=None, return_ctype=False, retain_grad=False):
    """A weft array sharing memory with the paddle tensor ``t`` (and its gradient).

    Args:
        t: a CPU or GPU ``paddle.Tensor``; strided tensors are viewed as they are.
        dtype: the weft dtype; vector/matrix dtypes take the trailing dimensions (``[n, 3]`` float32 ->
            ``wp.vec3``). Default: the scalar type of ``t``.
        requires_grad: give the array a gradient sharing memory with ``t.grad`` (created, zeros, when ``t`` has
            none yet). Default: ``not t.stop_gradient``.
        grad: an explicit gradient (paddle tensor or weft array) to share instead.
        return_ctype: not supported by weft (pass the array itself to ``wp.launch``).
        retain_grad: keep the gradient after a backward pass reads it (``wp.array(retain_grad=...)``).

    Raises:
        TypeError: ``t`` is not a paddle tensor, or ``dtype`` does not fit its type or trailing dimensions.
    """
    paddle = _paddle()
    if return_ctype:
        raise NotImplementedError("from_paddle: return_ctype is not supported; pass the array itself to wp.launch")
    if not isinstance(t, paddle.Tensor):
        raise TypeError(f"from_paddle: t must be a paddle.Tensor, got {type(t).__name__}")
    a = _wrap_tensor(t, dtype)
    if requires_grad is None:
        requires_grad = (not t.stop_gradient) or grad is not None
    if requires_grad:
        if grad is None:
            if t.grad is None:
                g = _wp_zeros(a.shape, dtype=a.dtype, device=a.device)
                t.grad_ = to_paddle(g, requires_grad=False)  # the tensor's gradient is weft's memory
            else:
                g = _wrap_tensor(t.grad, a.dtype)
        elif isinstance(grad, _WeftArray):
            g = grad
        else:
            g = _wrap_tensor(grad, a.dtype)
        if g.shape != a.shape or g.strides != a.strides:
            raise ValueError(f"from_paddle: the gradient has shape {g.shape} and strides {g.strides}, the tensor "
                             f"{a.shape} and {a.strides}; weft needs them equal")
        a.grad = g
    a.retain_grad = bool(retain_grad)
    return a


def to_paddle(a, requires_grad=None):
    """A paddle tensor sharing memory with the weft array ``a`` (through DLPack; vector dtypes become trailing
    dimensions).

    Args:
        a: a weft array on the CPU or a CUDA device.
        requires_grad: make the tensor differentiable (``stop_gradient=False``); when ``a`` has a gradient, the
            tensor's gradient shares its memory. Default: ``a.requires_grad``.
    """
    _paddle()
    from paddle.utils import dlpack as pdl

    if not isinstance(a, _WeftArray) or getattr(a, "_annotation", False):
        raise TypeError(f"to_paddle: a must be a weft array with data, got {type(a).__name__}")
    if isinstance(a._ir, T.StructType):
        raise TypeError("Cannot convert structured weft arrays to Paddle.")
    if requires_grad is None:
        requires_grad = a.requires_grad
    t = pdl.from_dlpack(to_dlpack(a))
    t.stop_gradient = not requires_grad
    if requires_grad and a.grad is not None:
        t.grad_ = pdl.from_dlpack(to_dlpack(a.grad))
    return t


def stream_from_paddle(stream_or_device=None):
    """A weft ``Stream`` over a paddle CUDA stream (``paddle.device.Stream``), or the current stream of a paddle
    device (default: the current one).

    Raises:
        RuntimeError: the stream or device is not a CUDA one (paddle CPU streams have no CUDA handle).
    """
    paddle = _paddle()
    if isinstance(stream_or_device, paddle.device.Stream):
        stream = stream_or_device
    else:
        stream = paddle.device.current_stream(stream_or_device)
    dev = device_from_paddle(stream.device)
    if dev.impl.dlpack_device != DeviceType.CUDA:
        raise RuntimeError(f"stream_from_paddle needs a CUDA stream; the paddle stream is on {stream.device}")
    out = Stream(dev, cuda_stream=stream.stream_base.cuda_stream)
    out._paddle_stream = stream  # keep the paddle stream alive
    return out
