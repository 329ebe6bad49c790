"""The interop functions re-exported as ``wp.*``. torch and jax are imported only when these are called."""

from __future__ import annotations

import ctypes
import warnings

from ..runtime.array import array
from ..types.dtypes import element_size, resolve_dtype
from .dlpack import from_dlpack, to_dlpack


def from_torch(t, dtype=None, requires_grad=None, grad=None, return_ctype=False):
    """A weft array sharing memory with a torch tensor (and its ``.grad``); see ``weft.interop.torch.from_torch``."""
    from .torch import from_torch as impl

    return impl(t, dtype=dtype, requires_grad=requires_grad, grad=grad, return_ctype=return_ctype)


def to_torch(a, requires_grad=None):
    """A torch tensor sharing memory with a weft array (and its grad); see ``weft.interop.torch.to_torch``."""
    from .torch import to_torch as impl

    return impl(a, requires_grad=requires_grad)


def dtype_from_torch(torch_dtype):
    """The weft scalar type of a torch dtype."""
    from .torch import dtype_from_torch as impl

    return impl(torch_dtype)


def dtype_to_torch(dtype):
    """The torch dtype of a weft dtype's scalars (``wp.vec3`` -> ``torch.float32``)."""
    from .torch import dtype_to_torch as impl

    return impl(dtype)


def device_from_torch(torch_device):
    """The weft device of a torch device."""
    from .torch import device_from_torch as impl

    return impl(torch_device)


def device_to_torch(device=None):
    """The torch device string of a weft device."""
    from .torch import device_to_torch as impl

    return impl(device)


def stream_from_torch(stream_or_device=None):
    """A weft stream over a torch CUDA stream (best effort)."""
    from .torch import stream_from_torch as impl

    return impl(stream_or_device)


def stream_to_torch(stream_or_device=None):
    """A torch external stream over a weft CUDA stream."""
    from .torch import stream_to_torch as impl

    return impl(stream_or_device)


def from_jax(x, dtype=None):
    """A weft array sharing memory with a JAX array (through DLPack)."""
    from .jax import from_jax as impl

    return impl(x, dtype=dtype)


def to_jax(a):
    """A JAX array over a weft array (through DLPack)."""
    from .jax import to_jax as impl

    return impl(a)


def dtype_from_jax(jax_dtype):
    """The weft scalar type of a JAX dtype."""
    from .jax import dtype_from_jax as impl

    return impl(jax_dtype)


def dtype_to_jax(dtype):
    """The JAX dtype of a weft dtype's scalars."""
    from .jax import dtype_to_jax as impl

    return impl(dtype)


def from_paddle(t, dtype=None, requires_grad=None, grad=None, return_ctype=False, retain_grad=False):
    """A weft array sharing memory with a paddle tensor (and its gradient); see ``weft.interop.paddle.from_paddle``."""
    from .paddle import from_paddle as impl

    return impl(t, dtype=dtype, requires_grad=requires_grad, grad=grad, return_ctype=return_ctype,
                retain_grad=retain_grad)


def to_paddle(a, requires_grad=None):
    """A paddle tensor sharing memory with a weft array (and its gradient); see ``weft.interop.paddle.to_paddle``."""
    from .paddle import to_paddle as impl

    return impl(a, requires_grad=requires_grad)


def dtype_from_paddle(paddle_dtype):
    """The weft scalar type of a paddle dtype (TypeError for bfloat16 and complex types)."""
    from .paddle import dtype_from_paddle as impl

    return impl(paddle_dtype)


def dtype_to_paddle(warp_dtype):
    """The paddle dtype of a weft scalar type (unsigned 16/32/64-bit types map to the signed paddle type)."""
    from .paddle import dtype_to_paddle as impl

    return impl(warp_dtype)


def device_from_paddle(paddle_device):
    """The weft device of a paddle place or device string (``"cpu"``, ``"gpu"``, ``"gpu:N"``)."""
    from .paddle import device_from_paddle as impl

    return impl(paddle_device)


def device_to_paddle(warp_device=None):
    """The paddle device string (``"cpu"``, ``"gpu:N"``) of a weft device."""
    from .paddle import device_to_paddle as impl

    return impl(warp_device)


def stream_from_paddle(stream_or_device=None):
    """A weft stream over a paddle CUDA stream (or the current stream of a paddle device)."""
    from .paddle import stream_from_paddle as impl

    return impl(stream_or_device)


def device_from_jax(jax_device):
    """The weft device of a JAX device (a JAX GPU maps to the CUDA device of its process-local ordinal)."""
    from .jax_ffi import device_from_jax as impl

    return impl(jax_device)


def device_to_jax(warp_device=None):
    """The local JAX device of a weft device (RuntimeError when this process has none)."""
    from .jax_ffi import device_to_jax as impl

    return impl(warp_device)


def from_ptr(ptr, length, dtype=None, shape=None, device=None):
    """A weft array over existing memory whose address is stored at ``ptr`` (deprecated, as in Warp).

    ``ptr`` is the address of (or a ctypes pointer to) a ``size_t`` holding the memory's start address; 0 makes
    an array without memory. ``length`` elements of ``dtype``; ``shape`` overrides the 1-D shape. Prefer
    ``wp.array(ptr=address, dtype=..., shape=...)``, which takes the address itself.
    """
    warnings.warn("wp.from_ptr() is deprecated: to make an array from a C pointer, pass the address itself to "
                  "wp.array(ptr=..., dtype=..., shape=...)", DeprecationWarning, stacklevel=2)
    if isinstance(ptr, (ctypes._Pointer, ctypes.c_void_p)):
        ptr = ctypes.cast(ptr, ctypes.c_void_p).value or 0
    if not isinstance(ptr, int):
        raise TypeError(f"from_ptr: ptr must be an integer address or a ctypes pointer, got {type(ptr).__name__}")
    address = 0 if ptr == 0 else ctypes.cast(ptr, ctypes.POINTER(ctypes.c_size_t)).contents.value
    length = int(length)
    if shape is None:
        shape = (length,)
    return array(dtype=dtype, shape=shape, ptr=address, capacity=length * element_size(resolve_dtype(dtype)),
                 device=device)


__all__ = [
    "device_from_jax",
    "device_from_paddle",
    "device_from_torch",
    "device_to_jax",
    "device_to_paddle",
    "device_to_torch",
    "dtype_from_jax",
    "dtype_from_paddle",
    "dtype_from_torch",
    "dtype_to_jax",
    "dtype_to_paddle",
    "dtype_to_torch",
    "from_dlpack",
    "from_jax",
    "from_paddle",
    "from_ptr",
    "from_torch",
    "stream_from_paddle",
    "stream_from_torch",
    "stream_to_torch",
    "to_dlpack",
    "to_jax",
    "to_paddle",
    "to_torch",
]
