"""Zero-copy views of foreign arrays as weft arrays: what lets ``wp.launch`` take NumPy arrays, torch tensors,
JAX arrays and anything with ``__array_interface__``, ``__cuda_array_interface__`` or DLPack directly."""

from __future__ import annotations

import sys

import numpy as np

from ..ir import types as T
from ..runtime.array import array
from ..types.dtypes import np_layout


def _is_torch_tensor(obj) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.Tensor)


def as_weft_array(obj, t: T.ArrayType | None = None):
    """View ``obj`` as a weft array without copying when its layout allows.

    Args:
        obj: a weft array, NumPy array, torch tensor, or an object exposing ``__array_interface__``,
            ``__cuda_array_interface__`` or ``__dlpack__``.
        t: the kernel parameter type; its dtype (unless generic) decides how trailing dimensions are read.

    Raises:
        TypeError: ``obj`` is not an array, or its element type does not match.
    """

    if issubclass(type(obj), array):  # the real class (an object may claim __class__ = array)
        return obj
    dtype = t.dtype if t is not None and not t.is_generic else None
    if _is_torch_tensor(obj):
        from .torch import _wrap_tensor

        return _wrap_tensor(obj, dtype)  # gradients do not flow through plain launches: use the torch wrappers
    # the host interface is asked first: an object offering both (a host array) may compute its CUDA one lazily
    if not hasattr(obj, "__array_interface__") and hasattr(obj, "__cuda_array_interface__"):
        from .dlpack import from_cuda_interface

        return from_cuda_interface(obj, t)
    if not isinstance(obj, np.ndarray):
        if hasattr(obj, "__array_interface__"):
            obj = np.asarray(obj)
        elif hasattr(obj, "__dlpack__"):
            from .dlpack import from_dlpack

            return from_dlpack(obj, dtype=dtype)
        else:
            raise TypeError(f"{type(obj).__name__} is not an array")
    return _from_numpy(obj, dtype)


def _from_numpy(obj: np.ndarray, dtype):
    from .dlpack import split_dtype, wrap_host

    if obj.dtype.kind not in "biuf" or obj.dtype.byteorder == ">":
        raise TypeError(f"NumPy dtype {obj.dtype} has no weft equivalent")
    ir, shape, strides = split_dtype(obj.dtype, obj.shape, obj.strides, dtype)
    view = obj
    if obj.ndim == len(np_layout(ir)[1]):  # a single element: split_dtype made it a length-1 array
        view = obj.reshape((1,) + obj.shape)
    if not view.flags.writeable:
        # a read-only array can still be a kernel input; a copy keeps weft from writing into it
        view = np.array(view, copy=True)
        strides = tuple(view.strides[:len(shape)])
    return wrap_host(view, ir, shape, strides, None)
