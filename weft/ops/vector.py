"""Vector operators and functions (``weft/native/vec.h``); also the element-wise overloads shared by matrices."""

from __future__ import annotations

import numpy as np

from ..ir import types as T
from ..ir.roles import Role
from . import rules as R
from .registry import Factor, Identity, Op, OpKind, register

D = "vector"
V = T.VecFlavor


def _same_vm(args, attrs):
    if len(args) == 2 and args[0] == args[1] and isinstance(args[0], (T.VectorType, T.MatrixType)):
        return args[0]
    return None


def _unary_vm(args, attrs):
    if len(args) == 1 and isinstance(args[0], (T.VectorType, T.MatrixType)):
        return args[0]
    return None


for _name, _sym in (("add", "+"), ("sub", "-")):
    register(Op(_name, _same_vm, native=_name, kind=OpKind.INFIX, operator=_sym, domain=D, adjoint_linear=True,
                identity=Identity.ZERO if _name == "add" else Identity.NONE,
                doc=f"Component-wise a {_sym} b of vectors or matrices."))
register(Op("neg", _unary_vm, native="neg", kind=OpKind.PREFIX, operator="-", domain=D, adjoint_linear=True))
register(Op("pos", _unary_vm, native="pos", kind=OpKind.PREFIX, operator="+", domain=D, adjoint_linear=True))


def _mul(args, attrs):
    if len(args) != 2:
        return None
    a, b = args
    sa, sb = T.scalar_of(a), T.scalar_of(b)
    if sa is None or sa != sb or sa.is_bool:
        return None
    if isinstance(a, T.ScalarType) and isinstance(b, (T.VectorType, T.MatrixType)):
        return b
    if isinstance(b, T.ScalarType) and isinstance(a, (T.VectorType, T.MatrixType)):
        return a
    if R.is_quat(a) and R.is_quat(b):
        return a
    if R.is_transform(a) and R.is_transform(b):
        return a
    if isinstance(a, T.MatrixType) and isinstance(b, T.VectorType) and b.flavor is V.VECTOR and a.cols == b.length:
        return T.VectorType(a.rows, sa)
    if isinstance(a, T.VectorType) and a.flavor is V.VECTOR and isinstance(b, T.MatrixType) and b.rows == a.length:
        return T.VectorType(b.cols, sa)
    if isinstance(a, T.MatrixType) and isinstance(b, T.MatrixType) and a.cols == b.rows:
        return T.MatrixType(a.rows, b.cols, sa)
    return None


register(Op("mul", _mul, native="mul", domain=D, constant_factor=Factor.EITHER,
            doc="Scalar scaling, matrix-vector and matrix-matrix products, quaternion and transform composition."))


def _div(args, attrs):
    if len(args) != 2:
        return None
    a, b = args
    sa, sb = T.scalar_of(a), T.scalar_of(b)
    if sa is None or sa != sb or not isinstance(sa, T.ScalarType) or sa.is_bool:
        return None
    if isinstance(a, (T.VectorType, T.MatrixType)) and isinstance(b, T.ScalarType):
        return a
    if isinstance(a, T.ScalarType) and isinstance(b, T.VectorType):
        return b
    return None


register(Op("div_approx", _div, native="div", domain=D, constant_factor=Factor.DIVISOR,
            doc="Vector or matrix divided by a scalar (or scalar / vector), as ``div`` (exact on every target)."))
register(Op("div", _div, native="div", domain=D, constant_factor=Factor.DIVISOR,
            doc="Vector or matrix divided by a scalar (or scalar / vector)."))


def _vec_same(args, attrs):
    if len(args) == 2 and args[0] == args[1] and isinstance(args[0], T.VectorType):
        return args[0]
    return None


def _vec_to_scalar(args, attrs):
    if len(args) == 1 and isinstance(args[0], T.VectorType) and args[0].scalar.is_float:
        return args[0].scalar
    return None


def _vec_unary_float(args, attrs):
    if len(args) == 1 and isinstance(args[0], T.VectorType) and args[0].scalar.is_float:
        return args[0]
    return None


def _dot(args, attrs):
    if len(args) == 2 and args[0] == args[1] and isinstance(args[0], T.VectorType):
        return args[0].scalar
    return None


def _cross(args, attrs):
    if len(args) == 2 and args[0] == args[1] and R.is_vec(args[0], 3):
        return args[0]
    if len(args) == 2 and args[0] == args[1] and R.is_vec(args[0], 2):
        return args[0].scalar
    return None


def _outer(args, attrs):
    if len(args) == 2 and all(R.is_vec(a) for a in args) and args[0].scalar == args[1].scalar:
        return T.MatrixType(args[0].length, args[1].length, args[0].scalar)
    return None


register(Op("dot", _dot, native="dot", domain=D, host=lambda a, b: float(np.dot(np.asarray(a), np.asarray(b))),
            doc="Dot product."))
register(Op("cross", _cross, native="cross", domain=D, doc="Cross product (vec3), or the scalar 2-D cross product."))
register(Op("length", _vec_to_scalar, native="length", domain=D, doc="Euclidean length."))
register(Op("length_sq", _vec_to_scalar, native="length_sq", domain=D, doc="Squared length."))
register(Op("normalize", _vec_unary_float, native="normalize", domain=D, doc="Unit vector (zero stays zero)."))
register(Op("cw_mul", lambda a, at: _vec_same(a, at) or _same_mat(a, at), native="cw_mul", domain=D,
            doc="Component-wise product."))
register(Op("cw_div", lambda a, at: _vec_same(a, at) or _same_mat(a, at), native="cw_div", domain=D,
            doc="Component-wise quotient."))
register(Op("min", _vec_same, native="min", domain=D, doc="Component-wise minimum."))
register(Op("max", _vec_same, native="max", domain=D, doc="Component-wise maximum."))
register(Op("abs", lambda a, at: a[0] if len(a) == 1 and R.is_vec(a[0]) else None, native="abs", domain=D,
            doc="Component-wise absolute value."))
register(Op("outer", _outer, native="outer", domain=D, doc="Outer product a b^T."))


def _same_mat(args, attrs):
    if len(args) == 2 and args[0] == args[1] and isinstance(args[0], T.MatrixType):
        return args[0]
    return None


def _extract(args, attrs):
    idx = args[1:]
    if not all(isinstance(t, T.ScalarType) and t.is_int for t in idx):
        return None
    a = args[0] if args else None
    if isinstance(a, T.VectorType) and len(idx) == 1:
        return a.scalar
    if isinstance(a, T.MatrixType) and len(idx) == 1:
        return T.VectorType(a.cols, a.scalar)
    if isinstance(a, T.MatrixType) and len(idx) == 2:
        return a.scalar
    return None


def _insert(args, attrs):
    if len(args) < 3:
        return None
    a, idx, value = args[0], args[1:-1], args[-1]
    if not all(isinstance(t, T.ScalarType) and t.is_int for t in idx):
        return None
    if isinstance(a, T.VectorType) and len(idx) == 1 and value == a.scalar:
        return a
    if isinstance(a, T.MatrixType) and len(idx) == 1 and value == T.VectorType(a.cols, a.scalar):
        return a
    if isinstance(a, T.MatrixType) and len(idx) == 2 and value == a.scalar:
        return a
    return None


register(Op("extract", _extract, native="extract", domain=D, role=Role.EXTRACT, adjoint_linear=True,
            doc="v[i], m[i], m[i, j]."))
register(Op("insert", _insert, native="insert", public=False, domain=D, role=Role.INSERT,
            doc="A copy of v/m with one component (or row) replaced."))
