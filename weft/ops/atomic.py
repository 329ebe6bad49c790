"""Atomic read-modify-write on array elements (real atomics on every backend)."""

from __future__ import annotations

from ..ir import types as T
from ..ir.roles import Role
from .registry import Adjoint, Op, OpKind, register

D = "atomic"


def _atomic(args, attrs):
    a = args[0] if args else None
    if isinstance(a, T.ArrayType) and len(args) - 2 == a.ndim and args[-1] == a.dtype \
            and all(isinstance(t, T.ScalarType) and t.is_int for t in args[1:-1]) \
            and isinstance(a.dtype, (T.ScalarType, T.VectorType, T.MatrixType)) and a.dtype != T.BOOL:
        return a.dtype
    return None


def _atomic_cas(args, attrs):
    a = args[0] if args else None
    if isinstance(a, T.ArrayType) and len(args) - 3 == a.ndim and args[-1] == args[-2] == a.dtype \
            and isinstance(a.dtype, T.ScalarType) and not a.dtype.is_bool:
        return a.dtype
    return None


for _name, _adj in (("atomic_add", Adjoint.SPECIAL), ("atomic_sub", Adjoint.SPECIAL), ("atomic_min", Adjoint.SPECIAL),
                    ("atomic_max", Adjoint.SPECIAL), ("atomic_exch", Adjoint.NONE)):
    register(Op(_name, _atomic, native=_name, kind=OpKind.SPECIAL, adjoint=_adj, side_effect=True, domain=D,
                role=Role.ATOMIC, adjoint_linear=_name in ("atomic_add", "atomic_sub"),
                doc=f"wp.{_name}(a, i..., value): returns the old value."))
def _atomic_bitwise(args, attrs):
    t = _atomic(args, attrs)
    s = T.scalar_of(t) if t is not None else None
    return t if s is not None and s.is_int else None


for _name, _what in (("atomic_and", "&"), ("atomic_or", "|"), ("atomic_xor", "^")):
    register(Op(_name, _atomic_bitwise, native=_name, kind=OpKind.SPECIAL, adjoint=Adjoint.NONE, side_effect=True,
                domain=D, role=Role.ATOMIC, doc=f"wp.{_name}(a, i..., value): a[i...] = a[i...] {_what} value atomically (integer "
                              f"scalars, and component-wise on integer vectors and matrices); returns the old value."))
register(Op("atomic_cas", _atomic_cas, native="atomic_cas", kind=OpKind.SPECIAL, adjoint=Adjoint.NONE,
            side_effect=True, domain=D, role=Role.ATOMIC, doc="wp.atomic_cas(a, i..., compare, value): returns the old value."))
