"""Small IR-construction helpers shared by the adjoint passes."""

from __future__ import annotations

from ..ir import types as T
from ..ir.nodes import Assign, Call, Const, Let, Operand, Stmt, Var, VarKind
from ..ops import registry


def op(block: list[Stmt], name: str, args: list[Operand], attrs: tuple = (), hint: str = "t", loc=None) -> Var:
    found = registry.resolve(name, tuple(a.type for a in args), attrs)
    if found is None:  # pragma: no cover - internal misuse
        raise TypeError(f"internal: no overload of {name} for {[str(a.type) for a in args]}")
    opr, results = found
    dst = Var(results[0], hint)
    block.append(Let((dst,), Call(opr, attrs), tuple(args), loc))
    return dst


def read(block: list[Stmt], var: Var, loc=None) -> Var:
    """An SSA copy of a mutable variable."""
    return op(block, "copy", [var], hint=var.name or "t", loc=loc)


def assign(block: list[Stmt], dst: Var, src: Operand, loc=None) -> None:
    block.append(Assign(dst, src, loc))


def flag(name: str, locals_: list[Var]) -> Var:
    v = Var(T.BOOL, name, VarKind.MUTABLE)
    locals_.append(v)
    return v


TRUE = Const(True, T.BOOL)
FALSE = Const(False, T.BOOL)
