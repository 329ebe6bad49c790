"""Reusable type rules for op records. A rule returns the result type(s) or None when it does not apply."""

from __future__ import annotations

from ..ir import types as T


def is_scalar(t, *, floats: bool = False, ints: bool = False, allow_bool: bool = False) -> bool:
    if not isinstance(t, T.ScalarType):
        return False
    if t.is_bool:
        return allow_bool
    if floats:
        return t.is_float
    if ints:
        return t.is_int
    return True


def is_vec(t, n: int | None = None, flavor: T.VecFlavor | None = T.VecFlavor.VECTOR) -> bool:
    return isinstance(t, T.VectorType) and (n is None or t.length == n) and (flavor is None or t.flavor is flavor)


def is_mat(t, rows: int | None = None, cols: int | None = None) -> bool:
    return isinstance(t, T.MatrixType) and (rows is None or t.rows == rows) and (cols is None or t.cols == cols)


def is_quat(t) -> bool:
    return isinstance(t, T.VectorType) and t.flavor is T.VecFlavor.QUAT


def is_transform(t) -> bool:
    return isinstance(t, T.VectorType) and t.flavor is T.VecFlavor.TRANSFORM


def float_unary(args, attrs):
    """f(x) for a float scalar x."""
    if len(args) == 1 and is_scalar(args[0], floats=True):
        return args[0]
    return None


def scalar_unary(args, attrs):
    if len(args) == 1 and is_scalar(args[0]):
        return args[0]
    return None


def float_binary(args, attrs):
    if len(args) == 2 and is_scalar(args[0], floats=True) and args[0] == args[1]:
        return args[0]
    return None


def scalar_binary(args, attrs):
    if len(args) == 2 and is_scalar(args[0]) and args[0] == args[1]:
        return args[0]
    return None


def int_binary(args, attrs):
    if len(args) == 2 and is_scalar(args[0], ints=True) and args[0] == args[1]:
        return args[0]
    return None


def float_ternary(args, attrs):
    if len(args) == 3 and is_scalar(args[0], floats=True) and args[0] == args[1] == args[2]:
        return args[0]
    return None


def scalar_ternary(args, attrs):
    if len(args) == 3 and is_scalar(args[0]) and args[0] == args[1] == args[2]:
        return args[0]
    return None


def float_predicate(args, attrs):
    if len(args) == 1 and T.is_float_type(args[0]) and isinstance(args[0], (T.ScalarType, T.VectorType, T.MatrixType)):
        return T.BOOL
    return None


def comparison(args, attrs):
    if len(args) == 2 and args[0] == args[1] and isinstance(args[0], T.ScalarType):
        return T.BOOL
    return None


def equality(args, attrs):
    if len(args) == 2 and args[0] == args[1] and isinstance(args[0], (T.ScalarType, T.VectorType, T.MatrixType)):
        return T.BOOL
    return None

