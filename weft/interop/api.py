"""The interop functions re-exported as ``wp.*``. torch and jax are imported only when these are called."""

from __future__ import annotations

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


__all__ = [
    "device_from_torch",
    "device_to_torch",
    "dtype_from_jax",
    "dtype_from_torch",
    "dtype_to_jax",
    "dtype_to_torch",
    "from_dlpack",
    "from_jax",
    "from_torch",
    "stream_from_torch",
    "stream_to_torch",
    "to_dlpack",
    "to_jax",
    "to_torch",
]
