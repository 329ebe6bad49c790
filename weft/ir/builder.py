"""Builds IR blocks: a stack of statement lists, fresh variables, and Let emission."""

from __future__ import annotations

from contextlib import contextmanager

from ..errors import SourceLoc
from .nodes import Assign, Call, Let, Operand, Stmt, Var, VarKind
from .types import Type


class Builder:
    def __init__(self) -> None:
        self.blocks: list[list[Stmt]] = [[]]
        self.locals: list[Var] = []
        self.loc: SourceLoc | None = None

    @property
    def block(self) -> list[Stmt]:
        return self.blocks[-1]

    def emit(self, stmt: Stmt) -> Stmt:
        self.block.append(stmt)
        return stmt

    @contextmanager
    def nested(self):
        """Collect the statements emitted inside the ``with`` into a new block (yielded)."""
        block: list[Stmt] = []
        self.blocks.append(block)
        try:
            yield block
        finally:
            self.blocks.pop()

    def new_var(self, type_: Type, name: str = "", kind: VarKind = VarKind.SSA) -> Var:
        var = Var(type_, name, kind)
        if kind is VarKind.MUTABLE:
            self.locals.append(var)
        return var

    def let(self, call: Call, args: tuple[Operand, ...], result_types: tuple[Type, ...], name: str = "") -> tuple[Var, ...]:
        dsts = tuple(self.new_var(t, name) for t in result_types)
        self.emit(Let(dsts, call, tuple(args), self.loc))
        return dsts

    def assign(self, dst: Var, src: Operand) -> None:
        self.emit(Assign(dst, src, self.loc))
