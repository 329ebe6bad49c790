"""Tile type annotations: ``wp.tile[dtype]``, ``wp.tile[dtype, M, N]``, ``wp.tile[dtype, (M, N)]``.

Tiles exist only inside kernels; these objects describe them in ``@wp.func`` signatures. A shaped annotation
maps to the exact IR tile type; ``wp.tile[dtype]`` accepts a tile of that dtype and any shape.
"""

from __future__ import annotations

import functools
import typing
from dataclasses import dataclass

from ..ir import types as T


def literal_value(dim):
    """``Literal[8]`` -> 8; anything else unchanged."""
    if typing.get_origin(dim) is typing.Literal:
        args = typing.get_args(dim)
        if len(args) != 1:
            raise TypeError(f"Expected a single Literal value, got {dim!r}")
        return args[0]
    return dim


@dataclass(frozen=True)
class TileAnnotation:
    """The type of a tile parameter or return value (``dtype``, ``shape``: a tuple or ``typing.Any``)."""

    dtype: typing.Any
    shape: typing.Any
    storage: str = "register"
    layout: str = "rowmajor"

    @property
    def _ir_(self) -> T.Type:
        from .mapping import to_ir

        dtype = to_ir(self.dtype)
        if self.shape is typing.Any:
            return T.GenericType(T.GenericKind.ANY, T.TileType(dtype, ()))
        return T.TileType(dtype, self.shape)

    @property
    def ndim(self) -> int | None:
        return None if self.shape is typing.Any else len(self.shape)

    @property
    def size(self) -> int | None:
        return None if self.shape is typing.Any else self._ir_.size

    def __repr__(self) -> str:
        shape = "" if self.shape is typing.Any else ", " + ", ".join(str(s) for s in self.shape)
        return f"wp.tile[{getattr(self.dtype, '__name__', self.dtype)}{shape}]"


class HostTile(TileAnnotation):
    """``wp.tile(dtype=..., shape=...)`` called from Python: a tile description (Warp's tile instance; tiles hold data
    only inside kernels). ``wp.types.is_tile`` is True for it, ``type_is_tile`` False."""


def tile_annotation(params) -> TileAnnotation:
    """``wp.tile[...]``: the annotation for the subscript ``params``."""
    from .mapping import scalar_class, to_ir

    if not isinstance(params, tuple):
        params = (params,)
    if not params:
        raise TypeError("wp.tile[...] requires at least a dtype parameter")
    dtype, rest = params[0], params[1:]
    if len(rest) == 1 and isinstance(rest[0], (tuple, list)):
        rest = tuple(rest[0])
    shape = typing.Any
    if rest:
        shape = tuple(literal_value(d) for d in rest)
        for i, d in enumerate(shape):
            if isinstance(d, bool) or not isinstance(d, int) or d <= 0:
                raise TypeError(f"wp.tile[...]: dimension {i} must be a positive integer, got {d!r}")
    try:
        dtype = scalar_class(dtype)
    except TypeError:
        pass  # a vector, matrix or struct dtype
    to_ir(dtype)  # raises TypeError for a dtype kernels cannot hold
    return _cached(dtype, shape)


@functools.cache
def _cached(dtype, shape) -> TileAnnotation:
    return TileAnnotation(dtype, shape)
