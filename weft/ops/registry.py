"""The op registry: one typed record per op overload group, registered from the domain files in this package.

A record says how to type a call (``rule``), which native symbol implements it, how the backend renders it
(``kind``) and how it is differentiated (``adjoint``). Autodiff and the backends find everything through here.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Callable, Optional

from ..ir import types as T


class OpKind(enum.Enum):
    CALL = "call"  # dst = native(args...)
    OUT_CALL = "out_call"  # native(args..., dst0, dst1, ...): results through reference parameters
    INFIX = "infix"  # dst = (a OP b), adjoint through weft::adj_<native>
    PREFIX = "prefix"  # dst = (OP a)
    SPECIAL = "special"  # rendered by a backend rule named after the op


class Adjoint(enum.Enum):
    NATIVE = "native"  # weft::adj_<native>(args..., adj_args..., adj_ret)
    NONE = "none"  # not differentiable: contributes no gradient (comparisons, floor, random ...)
    SPECIAL = "special"  # the autodiff module has a rule for it (array access, control, ...)


Rule = Callable[[tuple[T.Type, ...], tuple], Optional[object]]


@dataclass(frozen=True, slots=True)
class Op:
    name: str
    rule: Rule  # (arg types, attrs) -> result type, tuple of result types, or None if this overload does not apply
    native: str = ""
    kind: OpKind = OpKind.CALL
    adjoint: Adjoint = Adjoint.NATIVE
    side_effect: bool = False
    operator: str = ""
    doc: str = ""
    domain: str = ""
    host: Optional[Callable] = field(default=None, compare=False)  # NumPy implementation for host calls
    header: str = ""  # native header (under weft/native) a module using this op includes beyond weft.h

    @property
    def differentiable(self) -> bool:
        return self.adjoint is not Adjoint.NONE


_REGISTRY: dict[str, list[Op]] = {}


def register(op: Op) -> Op:
    _REGISTRY.setdefault(op.name, []).append(op)
    return op


def has(name: str) -> bool:
    _ensure_loaded()
    return name in _REGISTRY


def overloads(name: str) -> list[Op]:
    _ensure_loaded()
    return _REGISTRY.get(name, [])


def all_ops() -> list[Op]:
    _ensure_loaded()
    return [op for group in _REGISTRY.values() for op in group]


def resolve(name: str, arg_types: tuple[T.Type, ...], attrs: tuple = ()) -> tuple[Op, tuple[T.Type, ...]] | None:
    """First overload of ``name`` whose rule accepts the argument types; None if none does."""
    for op in overloads(name):
        result = op.rule(arg_types, attrs)
        if result is None:
            continue
        if isinstance(result, tuple):
            return op, result
        return op, (result,) if result is not T.VOID else ()
    return None


_loaded = False


def _ensure_loaded() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    from . import load_all

    load_all()
