"""The typing names of Warp 1.19's public stubs (``warp/__init__.pyi``) as weft objects.

Warp declares these only for static checkers; weft gives them run-time meaning where one exists:

- the type variables ``Length``, ``Rows``, ``Cols``, ``DType``, ``DTypeFloat``, ``DTypeScalar``, ``NDim``, ``Shape``,
  ``Capacity`` (for annotating generic helpers);
- ``Array[dtype, ndim]`` is the kernel annotation ``wp.array(dtype=dtype, ndim=ndim)``, ``Tile[dtype, shape]`` the
  annotation ``wp.tile[dtype, shape]``; with type variables they stay typing aliases;
- ``TileStack[dtype, capacity]`` is a typing alias only (tile stacks are made in kernels with ``wp.tile_stack``, not
  passed as parameters);
- ``DeviceLike``: what device arguments accept (a ``Device``, a name such as ``"cpu"``, or ``None`` for the default).

``Vector``, ``Matrix``, ``Quaternion`` and ``Transformation`` are in :mod:`weft.types.generics`.
"""

from __future__ import annotations

import typing

from ..types.scalars import (
    bfloat16,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ..types.tiles import tile_annotation
from .annotations import _ArrayAnnotation, parse_subscript
from .device import Device

Length = typing.TypeVar("Length", bound=int)
Rows = typing.TypeVar("Rows", bound=int)
Cols = typing.TypeVar("Cols", bound=int)
DType = typing.TypeVar("DType")
DTypeFloat = typing.TypeVar("DTypeFloat", float, float16, bfloat16, float32, float64)
DTypeScalar = typing.TypeVar("DTypeScalar", int, float, int8, uint8, int16, uint16, int32, uint32, int64, uint64,
                             float16, bfloat16, float32, float64)
NDim = typing.TypeVar("NDim", bound=int)
Shape = typing.TypeVar("Shape")
Capacity = typing.TypeVar("Capacity", bound=int)


def _symbolic(params: tuple) -> bool:
    return any(isinstance(p, typing.TypeVar) or p is typing.Any for p in params)


def _as_tuple(params) -> tuple:
    return params if isinstance(params, tuple) else (params,)


class Array(typing.Generic[DType, NDim]):
    """``Array[dtype, ndim]``: the annotation ``wp.array(dtype=dtype, ndim=ndim)`` (``ndim`` 1 when left out)."""

    def __class_getitem__(cls, params):
        params = _as_tuple(params)
        if _symbolic(params):
            return super().__class_getitem__(params if len(params) == 2 else (*params, NDim))
        return parse_subscript(_ArrayAnnotation, "Array", params if len(params) > 1 else params[0])


class Tile(typing.Generic[DType, Shape]):
    """``Tile[dtype, shape]``: the annotation ``wp.tile[dtype, shape]`` (``shape`` a tuple of extents)."""

    def __class_getitem__(cls, params):
        params = _as_tuple(params)
        if _symbolic(params) or (len(params) == 2 and _symbolic(_as_tuple(params[1]))):
            return super().__class_getitem__(params)
        return tile_annotation(params)


class TileStack(typing.Generic[DType, Capacity]):
    """``TileStack[dtype, capacity]``: a typing alias for the stacks ``wp.tile_stack`` makes in kernels."""


#: what device arguments accept: a ``Device``, a device name (``"cpu"``, ``"cuda:0"``) or ``None`` for the default
DeviceLike = Device | str | None
