"""Subscript forms of the value types: ``Vector[float, Literal[3]]``, ``Matrix[float, 3, 3]``,
``Quaternion[wp.float64]``, ``Transformation[wp.float32]`` (Warp's ``warp._src.types`` generics).

A concrete subscript is the cached value class itself (``Vector[wp.float32, 3] is wp.vec3``); a subscript with type
variables stays a typing alias for static checkers (``Vector[T, N]``). Every vector / matrix / quaternion /
transform class names its generic in ``_wp_generic_type_hint_``.
"""

from __future__ import annotations

import typing

from . import composite as C
from .tiles import literal_value

_Scalar = typing.TypeVar("_Scalar")
_Length = typing.TypeVar("_Length")
_Rows = typing.TypeVar("_Rows")
_Cols = typing.TypeVar("_Cols")


def _params(name: str, params, count: int) -> tuple:
    params = params if isinstance(params, tuple) else (params,)
    if len(params) != count:
        raise TypeError(f"{name}[...] requires {count} parameters, got {len(params)}")
    return params


def _dimension(name: str, value) -> int:
    if typing.get_origin(value) is typing.Literal and len(typing.get_args(value)) != 1:
        raise TypeError(f"{name}: Expected a single Literal value, got {value!r}")
    n = literal_value(value)
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise TypeError(f"{name}: dimensions must be a positive integer, got {n!r}")
    return n


def _symbolic(params: tuple) -> bool:
    return any(isinstance(p, typing.TypeVar) for p in params)


class Vector(typing.Generic[_Scalar, _Length]):
    """``Vector[dtype, length]``: the vector class (``Vector[float, Literal[3]] is wp.vec3``)."""

    def __class_getitem__(cls, params):
        params = _params("Vector", params, 2)
        if _symbolic(params):
            return super().__class_getitem__(params)
        return C.vector(_dimension("Vector length", params[1]), params[0])


class Matrix(typing.Generic[_Scalar, _Rows, _Cols]):
    """``Matrix[dtype, rows, cols]``: the matrix class (``Matrix[float, 3, 3] is wp.mat33``)."""

    def __class_getitem__(cls, params):
        params = _params("Matrix", params, 3)
        if _symbolic(params):
            return super().__class_getitem__(params)
        return C.matrix((_dimension("Matrix rows", params[1]), _dimension("Matrix cols", params[2])), params[0])


class Quaternion(typing.Generic[_Scalar]):
    """``Quaternion[dtype]``: the quaternion class (``Quaternion[wp.float32] is wp.quat``)."""

    def __class_getitem__(cls, params):
        if _symbolic(params if isinstance(params, tuple) else (params,)):
            return super().__class_getitem__(params)
        (dtype,) = _params("Quaternion", params, 1)
        return C.quaternion(dtype)


class Transformation(typing.Generic[_Scalar]):
    """``Transformation[dtype]``: the rigid transform class (``Transformation[wp.float32] is wp.transform``)."""

    def __class_getitem__(cls, params):
        if _symbolic(params if isinstance(params, tuple) else (params,)):
            return super().__class_getitem__(params)
        (dtype,) = _params("Transformation", params, 1)
        return C.transformation(dtype)


C.VectorBase._wp_generic_type_hint_ = Vector
C.MatrixBase._wp_generic_type_hint_ = Matrix
C.QuatBase._wp_generic_type_hint_ = Quaternion
C.TransformBase._wp_generic_type_hint_ = Transformation


class _TypeParams:
    """``_wp_type_params_`` of a value class: its dimensions and scalar type (Warp's generic parameters)."""

    def __get__(self, obj, cls):
        shape = getattr(cls, "_shape_", ())
        dims = list(shape) if cls._wp_generic_type_hint_ in (Vector, Matrix) else []
        return [*dims, cls._wp_scalar_type_]


C.VectorBase._wp_type_params_ = _TypeParams()
C.MatrixBase._wp_type_params_ = _TypeParams()
