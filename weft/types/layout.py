"""Binary layout of kernel arguments: the Python side of the C++ ``Args`` struct.

Sizes and alignments follow the C ABI of the types in ``weft/native`` (natural alignment, no packing), so a
``struct.Struct`` with explicit padding packs arguments exactly as the generated code reads them.
"""

from __future__ import annotations

import functools
import struct
from dataclasses import dataclass

from ..ir import types as T

ARRAY_DESC = struct.Struct("<QQ4iii4q")  # array_t<T>: data, grad, shape[4], ndim, flags, strides[4]
ARRAY_FLAGS_OFFSET = struct.calcsize("<QQ4ii")  # where array_t's int32 flags sit in the descriptor
ARRAY_SIZE = ARRAY_DESC.size  # 72
INDEXED_DESC_SIZE = ARRAY_SIZE + 4 * 8 + 4 * 4  # arr, indices[4], shape[4]
FABRIC_DESC = struct.Struct("<Qq4iii")  # fabricarray_t<T>: buckets, nbuckets, shape[4], ndim, flags
FABRIC_DESC_SIZE = FABRIC_DESC.size  # 40
INDEXED_FABRIC_DESC = struct.Struct("<Q4iii")  # indexedfabricarray_t<T> after its fabricarray_t: indices, shape[4], ndim, pad
INDEXED_FABRIC_DESC_SIZE = FABRIC_DESC_SIZE + INDEXED_FABRIC_DESC.size  # 72
_DESC_SIZES = {"indexedarray": INDEXED_DESC_SIZE, "fabricarray": FABRIC_DESC_SIZE,
               "indexedfabricarray": INDEXED_FABRIC_DESC_SIZE}

_SCALAR_CODES = {
    "bool": "?", "int8": "b", "int16": "h", "int32": "i", "int64": "q", "uint8": "B", "uint16": "H", "uint32": "I",
    "uint64": "Q", "float16": "e", "float32": "f", "float64": "d",
    "bfloat16": "H",  # packed as its bit pattern
}


@dataclass(frozen=True, slots=True)
class Layout:
    size: int
    align: int
    fmt: str  # struct-module codes (with explicit 'x' padding), '<' byte order implied


@functools.cache
def layout(t: T.Type) -> Layout:
    if isinstance(t, T.ScalarType):
        return Layout(t.size, t.size, _SCALAR_CODES[t.name])
    if isinstance(t, T.VectorType):
        s = layout(t.scalar)
        return Layout(s.size * t.length, s.align, s.fmt * t.length)
    if isinstance(t, T.MatrixType):
        s = layout(t.scalar)
        return Layout(s.size * t.rows * t.cols, s.align, s.fmt * (t.rows * t.cols))
    if isinstance(t, T.ArrayType):
        size = _DESC_SIZES.get(t.kind.value, ARRAY_SIZE)
        return Layout(size, 8, f"{size}s")
    if isinstance(t, T.StructType):
        return _struct_layout(tuple(ft for _, ft in t.fields))
    raise TypeError(f"{t} cannot be passed to a kernel")


def _struct_layout(fields: tuple[T.Type, ...]) -> Layout:
    if not fields:
        return Layout(1, 1, "x")  # an empty C++ struct still occupies one byte
    offset = 0
    align = 1
    fmt = []
    for ft in fields:
        fl = layout(ft)
        pad = (-offset) % fl.align
        if pad:
            fmt.append(f"{pad}x")
        offset += pad
        fmt.append(fl.fmt)
        offset += fl.size
        align = max(align, fl.align)
    tail = (-offset) % align
    if tail:
        fmt.append(f"{tail}x")
    return Layout(offset + tail, align, "".join(fmt))


def field_offset(t: T.StructType, path: tuple[str, ...]) -> int:
    """The byte offset of the field at ``path`` (field names, nested structs first) inside a packed ``t``."""
    offset = 0
    for name in path:
        pos = 0
        for fname, ft in t.fields:
            fl = layout(ft)
            pos += (-pos) % fl.align
            if fname == name:
                break
            pos += fl.size
        else:
            raise KeyError(f"struct {t.name} has no field '{name}'")
        offset += pos
        t = ft
    return offset


def args_layout(types: tuple[T.Type, ...]) -> Layout:
    return _struct_layout(types)  # no parameters: the C++ struct gets one padding byte
