"""Readable signatures of registered ops, for the API reference (``docs/api/gen_builtins.py``).

An op's type rule is a function, not a declared signature, so the signatures are found by asking each rule: every
combination of a set of probe types (float32-based scalars, vectors, matrices, quaternions, transforms and arrays;
fewer for three and more arguments) is offered, and each accepted combination is then retried with every other
float (int) scalar in place of float32 (int32): when all of them are accepted too, the signature is written with
``Float`` (``Int``). Rules that take compile-time attributes (tile shapes, dtypes) accept no probe; their doc says how
they are called. Used only to write documentation: nothing in the compiler depends on this module.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from ..ir import types as T
from . import registry
from .registry import Op, Rejected

F32, I32 = T.FLOAT32, T.INT32
_VEC = [T.VectorType(n, F32) for n in (2, 3, 4, 6)] + [T.VectorType(3, I32)]
_QUAT = T.VectorType(4, F32, T.VecFlavor.QUAT)
_XFORM = T.VectorType(7, F32, T.VecFlavor.TRANSFORM)
_MAT = [T.MatrixType(n, n, F32) for n in (2, 3, 4, 6)]
_ARR = [T.ArrayType(F32, 1), T.ArrayType(F32, 2), T.ArrayType(F32, 3), T.ArrayType(T.VectorType(3, F32), 1),
        T.ArrayType(I32, 1)]

#: Probe types for rules of up to three arguments, and the smaller sets for four and five.
PROBES_3 = (F32, I32, T.UINT32, T.INT64, T.BOOL, *_VEC, _QUAT, _XFORM, *_MAT, *_ARR)
PROBES_4 = (F32, I32, T.UINT32, T.VectorType(3, F32), *_ARR)
PROBES_5 = (F32, I32, T.ArrayType(F32, 3), T.ArrayType(F32, 4))
_FAMILIES = ((F32, T.FLOATS, "Float"), (I32, tuple(t for t in T.INTS if t != I32) + (I32,), "Int"))


@dataclass(frozen=True, slots=True)
class Signature:
    args: tuple[str, ...]
    result: str

    def render(self, name: str) -> str:
        return f"{name}({', '.join(self.args)}) -> {self.result}"


def _subst(t: T.Type, old: T.ScalarType, new: T.ScalarType) -> T.Type:
    if t == old:
        return new
    if isinstance(t, (T.VectorType, T.MatrixType)) and t.scalar == old:
        return T.with_scalar(t, new)
    if isinstance(t, T.ArrayType):
        return T.ArrayType(_subst(t.dtype, old, new), t.ndim, t.kind, t.shape)
    if isinstance(t, T.TupleType):
        return T.TupleType(tuple(_subst(e, old, new) for e in t.elems))
    return t


def _label(t: T.Type, old: T.ScalarType, generic: str) -> str:
    """``t`` written with the generic scalar name in place of ``old``: vec3(Float), array1d(Float), Float."""
    if t == old:
        return generic
    if isinstance(t, T.VectorType) and t.scalar == old:
        kind = {T.VecFlavor.QUAT: "quat", T.VecFlavor.TRANSFORM: "transform"}.get(t.flavor, f"vec{t.length}")
        return f"{kind}({generic})"
    if isinstance(t, T.MatrixType) and t.scalar == old:
        return f"mat{t.rows}{t.cols}({generic})"
    if isinstance(t, T.ArrayType):
        return f"{t.kind.value}{t.ndim}d({_label(t.dtype, old, generic)})"
    if isinstance(t, T.TupleType):
        return "tuple(" + ", ".join(_label(e, old, generic) for e in t.elems) + ")"
    return str(t)


def _result(op: Op, args: tuple[T.Type, ...]):
    try:
        out = op.rule(args, ())
    except Exception:  # noqa: BLE001 - a rule that needs attributes (or other arguments) simply does not apply
        return None
    if out is None or isinstance(out, Rejected):
        return None
    return out if not isinstance(out, tuple) else T.TupleType(tuple(out))


def _mentions(t: T.Type, s: T.ScalarType) -> bool:
    return _subst(t, s, T.BOOL if s != T.BOOL else F32) != t


def op_signatures(op: Op) -> list[Signature]:
    """The probe signatures ``op``'s rule accepts, generalised to Float / Int where every such scalar works."""
    found: dict[Signature, None] = {}
    covered: set[tuple[T.Type, ...]] = set()  # probes already shown through a Float / Int signature
    for arity, probes in ((0, ()), (1, PROBES_3), (2, PROBES_3), (3, PROBES_3), (4, PROBES_4), (5, PROBES_5)):
        for args in itertools.product(probes, repeat=arity):
            if args in covered:
                continue
            res = _result(op, args)
            if res is None:
                continue
            sig = None
            for base, family, generic in _FAMILIES:
                if not any(_mentions(t, base) for t in (*args, res)):
                    continue
                variants = [tuple(_subst(a, base, s) for a in args) for s in family]
                if all(_result(op, v) == _subst(res, base, s) for v, s in zip(variants, family)):
                    sig = Signature(tuple(_label(a, base, generic) for a in args), _label(res, base, generic))
                    covered.update(variants)
                    break
            if sig is None:
                sig = Signature(tuple(str(a) for a in args), str(res))
            found.setdefault(sig)
    return list(found)


def signatures(name: str) -> list[tuple[Op, list[Signature]]]:
    """Each overload of ``name`` with the signatures its rule accepts."""
    return [(op, op_signatures(op)) for op in registry.overloads(name)]
