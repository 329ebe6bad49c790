"""dtype plumbing shared by arrays and launches: IR type <-> NumPy element layout, host value conversion."""

from __future__ import annotations

import numpy as np

from ..ir import types as T
from . import composite as C
from .mapping import to_ir


def resolve_dtype(dtype) -> T.Type:
    """The IR type of an array dtype given as weft type, Python type, NumPy dtype or struct class."""
    try:
        return to_ir(dtype)
    except TypeError:
        raise TypeError(f"dtype={dtype!r} is not a weft type (use e.g. wp.float32, wp.vec3, a @wp.struct)") from None


def np_layout(t: T.Type) -> tuple[np.dtype, tuple[int, ...]]:
    """NumPy scalar dtype and trailing shape storing one element of ``t``."""
    if isinstance(t, T.ScalarType):
        return t.np_dtype, ()
    if isinstance(t, T.VectorType):
        return t.scalar.np_dtype, (t.length,)
    if isinstance(t, T.MatrixType):
        return t.scalar.np_dtype, (t.rows, t.cols)
    if isinstance(t, T.StructType):
        return struct_np_dtype(t), ()
    raise TypeError(f"arrays of {t} are not supported")


# array_t<T> (weft/native/array.h) as a record, so an array field of a struct array reads as its descriptor's fields
# (``a.numpy()["x"]["data"]``, as in Warp); other array kinds stay opaque bytes
_ARRAY_DESC_DTYPE = np.dtype({"names": ["data", "grad", "shape", "ndim", "flags", "strides"],
                              "formats": ["<u8", "<u8", ("<i4", (4,)), "<i4", "<i4", ("<i8", (4,))],
                              "offsets": [0, 8, 16, 32, 36, 40], "itemsize": 72})


def struct_np_dtype(t: T.StructType) -> np.dtype:
    from .layout import layout

    lay = layout(t)
    names, formats, offsets = [], [], []
    offset = 0
    for fname, ft in t.fields:
        fl = layout(ft)
        offset += (-offset) % fl.align
        names.append(fname)
        if isinstance(ft, T.ArrayType):
            formats.append(_ARRAY_DESC_DTYPE if fl.size == _ARRAY_DESC_DTYPE.itemsize else np.dtype((np.void, fl.size)))
        elif isinstance(ft, T.StructType):
            formats.append(struct_np_dtype(ft))
        else:
            base, shape = np_layout(ft)
            formats.append(np.dtype((base, shape)) if shape else base)
        offsets.append(offset)
        offset += fl.size
    return np.dtype({"names": names, "formats": formats, "offsets": offsets, "itemsize": lay.size})


def element_size(t: T.Type) -> int:
    base, shape = np_layout(t)
    return int(base.itemsize * int(np.prod(shape, dtype=np.int64)))


def to_host_value(t: T.Type, raw):
    """Convert a NumPy element (scalar or trailing-shaped array) to the host value users expect."""
    if isinstance(t, T.ScalarType):
        return raw.item() if hasattr(raw, "item") else raw
    if isinstance(t, (T.VectorType, T.MatrixType)):
        return C.class_for(t)(np.asarray(raw))
    if isinstance(t, T.StructType):
        return t.pyclass._from_record(raw)
    return raw
