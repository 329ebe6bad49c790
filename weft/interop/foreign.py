"""Zero-copy views of foreign arrays (NumPy, anything with the array interface or DLPack) as weft arrays."""

from __future__ import annotations

import numpy as np

from ..ir import types as T


def as_weft_array(obj, t: T.ArrayType | None = None):
    from ..runtime.array import array
    from ..runtime.dtypes import np_layout

    if isinstance(obj, array):
        return obj
    if hasattr(obj, "__cuda_array_interface__") and not hasattr(obj, "__array_interface__"):
        from .dlpack import from_cuda_interface

        return from_cuda_interface(obj, t)
    if not isinstance(obj, np.ndarray):
        if hasattr(obj, "__array_interface__"):
            obj = np.asarray(obj)
        elif hasattr(obj, "__dlpack__"):
            from .dlpack import from_dlpack

            return from_dlpack(obj, dtype=t.dtype if t is not None and not t.is_generic else None)
        else:
            raise TypeError(f"{type(obj).__name__} is not an array")
    dtype = t.dtype if t is not None and not t.is_generic else None
    if dtype is None:
        from ..types.mapping import scalar_class

        dtype = scalar_class(obj.dtype.type)._ir_
    base, trailing = np_layout(dtype)
    if obj.dtype != base:
        raise TypeError(f"NumPy dtype {obj.dtype} does not match {dtype}")
    from ..types.composite import class_for

    cls = dtype.pyclass if isinstance(dtype, T.StructType) else class_for(dtype)
    return array(obj, dtype=cls, copy=False)
