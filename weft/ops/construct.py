"""Casts and constructors of value types (``float(i)``, ``wp.vec3(...)``, ``wp.mat33(...)``, ``MyStruct()``)."""

from __future__ import annotations

from ..ir import types as T
from .registry import Adjoint, Op, OpKind, register

D = "construct"


def _cast(args, attrs):
    (target,) = attrs
    if len(args) != 1:
        return None
    (src,) = args
    if isinstance(target, T.ScalarType) and isinstance(src, T.ScalarType):
        return target
    if isinstance(target, T.VectorType) and isinstance(src, T.VectorType) and src.length == target.length:
        return target
    if isinstance(target, T.MatrixType) and isinstance(src, T.MatrixType) and (src.rows, src.cols) == (
            target.rows, target.cols):
        return target
    return None


register(Op("cast", _cast, native="cast", kind=OpKind.SPECIAL, adjoint=Adjoint.SPECIAL, public=False, domain=D,
            doc="Explicit conversion between scalar types (or vectors/matrices of the same shape)."))


def _bit_cast(args, attrs):
    from ..types.layout import layout

    (target,) = attrs
    values = (T.ScalarType, T.VectorType, T.MatrixType, T.StructType)
    if len(args) != 1 or not isinstance(args[0], values) or not isinstance(target, values):
        return None
    try:
        return target if layout(args[0]).size == layout(target).size else None
    except TypeError:
        return None


register(Op("bit_cast", _bit_cast, native="bit_cast", kind=OpKind.OUT_CALL, adjoint=Adjoint.NONE, public=False,
            domain=D, doc="wp.cast(a, dtype): a's bytes reinterpreted as dtype, a value type of the same size (a "
                          "scalar, vector, matrix or struct). Not differentiable."))


def _construct(args, attrs):
    (t,) = attrs
    if isinstance(t, T.StructType):
        return t if not args else None
    if isinstance(t, T.VectorType):
        s = t.scalar
        if not args:
            return t
        if len(args) == 1 and args[0] == s:
            return t
        if len(args) == 1 and isinstance(args[0], T.VectorType) and args[0].length == t.length:
            return t
        if len(args) == t.length and all(a == s for a in args):
            return t
        if t.flavor is T.VecFlavor.TRANSFORM and len(args) == 2 and args[0] == T.VectorType(3, s) and args[1] == \
                T.VectorType(4, s, T.VecFlavor.QUAT):
            return t
        return None
    if isinstance(t, T.MatrixType):
        s = t.scalar
        if not args:
            return t
        if len(args) == 1 and args[0] == s:
            return t
        if len(args) == 1 and isinstance(args[0], T.MatrixType) and (args[0].rows, args[0].cols) == (t.rows, t.cols):
            return t
        if len(args) == t.rows * t.cols and all(a == s for a in args):
            return t
        if len(args) == t.rows and all(a == T.VectorType(t.cols, s) for a in args):
            return t
        return None
    return None


register(Op("construct", _construct, native="make", kind=OpKind.SPECIAL, adjoint=Adjoint.SPECIAL, public=False,
            domain=D, adjoint_linear=True,
            doc="Build a vector, matrix, quaternion, transform or struct value."))
