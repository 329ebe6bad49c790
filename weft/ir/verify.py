"""IR verifier: structural invariants every stage must keep. Run after each stage in tests (``config.verify_ir``)."""

from __future__ import annotations

from ..errors import Error
from . import types as T
from .nodes import (
    AdjAssign,
    AdjLet,
    AdjointProgram,
    Assign,
    Break,
    Const,
    Continue,
    CustomCall,
    For,
    Function,
    If,
    Let,
    Pop,
    Push,
    Repeat,
    ReplayLet,
    Return,
    Stmt,
    Var,
    VarKind,
    While,
    walk,
)
from .roles import Role


class VerifyError(Error):
    pass


def verify(fn: Function) -> None:
    """A forward function: SSA values defined once and before use, mutable locals read only through ``copy``,
    jumps only inside loops, bool branch conditions."""
    _Checker({p.id for p in fn.params} | {v.id for v in fn.locals}, adjoint=False).block(fn.body, 0)


def verify_adjoint(prog: AdjointProgram) -> None:
    """A backward program (replay + reverse sweep).

    The replay keeps the forward's rules (it is the forward with loop recording). The reverse sweep re-records the
    bodies of dynamic loops, so its values are defined again there: it is checked for operands that some part of the
    program defines (everything is declared at the top of the backward body), balanced loop-stack traffic, and
    adjoint statements that wrap what they reverse.
    """
    verify(prog.fn)
    base = prog.declared()
    replay = _Checker(set(base), adjoint=True)
    replay.block(prog.replay, 0)
    for s in walk(prog.replay):
        if isinstance(s, (AdjLet, AdjAssign, Pop, Repeat)):
            raise VerifyError(f"replay holds a reverse-sweep statement ({type(s).__name__})")
    known = set(base) | replay.defined | _all_defined(prog.fn.body) | _all_defined(prog.reverse)
    reverse = _Checker(known, adjoint=True, ssa=False)
    reverse.block(prog.reverse, 0)
    pushes = [len(s.values) for s in walk(prog.replay + prog.reverse) if isinstance(s, Push)]
    pops = [len(s.vars) for s in walk(prog.reverse) if isinstance(s, Pop)]
    if sorted(pushes) != sorted(pops):
        raise VerifyError(f"loop stack: pushes of {sorted(pushes)} values do not match pops of {sorted(pops)}")
    if (pushes or pops) and not prog.uses_stack:
        raise VerifyError("the program pushes loop state but does not declare a loop stack")
    locals_ = {v.id for v in prog.locals}
    for s in walk(prog.reverse):
        if isinstance(s, Repeat) and s.count.id not in locals_:
            raise VerifyError(f"repeat count {s.count!r} is not a local of the backward program")


def _all_defined(block: list[Stmt]) -> set[int]:
    out: set[int] = set()
    for s in walk(block):
        if isinstance(s, Let):
            out.update(d.id for d in s.dsts)
        elif isinstance(s, (ReplayLet, AdjLet)):
            out.update(d.id for d in s.let.dsts)
        elif isinstance(s, For):
            out.add(s.var.id)
        elif isinstance(s, Pop):
            out.update(v.id for v in s.vars)
    return out


class _Checker:
    def __init__(self, defined: set[int], adjoint: bool, ssa: bool = True) -> None:
        self.defined = defined
        self.ssa_defs: set[int] = set()
        self.adjoint = adjoint  # backward statements allowed
        self.ssa = ssa  # values defined once (false in the reverse sweep, which re-records loop bodies)

    def use(self, x, where: str) -> None:
        if isinstance(x, Const):
            return
        if not isinstance(x, Var):
            raise VerifyError(f"{where}: operand {x!r} is not a Var or Const")
        if x.id not in self.defined:
            raise VerifyError(f"{where}: {x!r} used before definition")

    def let(self, s: Let) -> None:
        for a in s.args:
            self.use(a, f"{s.call.name}")
            if isinstance(a, Var) and a.kind is VarKind.MUTABLE and s.call.op.role is not Role.COPY:
                raise VerifyError(f"{s.call.name}: reads mutable {a!r} directly (must go through copy)")
        for d in s.dsts:
            if self.ssa and d.id in self.ssa_defs:
                raise VerifyError(f"{d!r} defined twice")
            self.ssa_defs.add(d.id)
            self.defined.add(d.id)

    def block(self, stmts: list[Stmt], loop_depth: int) -> None:
        for s in stmts:
            self.stmt(s, loop_depth)

    def stmt(self, s: Stmt, loop_depth: int) -> None:
        if isinstance(s, Let):
            self.let(s)
        elif isinstance(s, Assign):
            self.use(s.src, "assign")
            if s.dst.kind is not VarKind.MUTABLE:
                raise VerifyError(f"assign to non-mutable {s.dst!r}")
            if isinstance(s.src, (Var, Const)) and s.src.type != s.dst.type:
                raise VerifyError(f"assign {s.src.type} to {s.dst!r}: {s.dst.type}")
        elif isinstance(s, If):
            self.use(s.cond, "if")
            if isinstance(s.cond, Var) and s.cond.kind is VarKind.MUTABLE:
                raise VerifyError(f"if condition {s.cond!r} is mutable (must be an SSA copy)")
            if s.cond.type != T.BOOL:
                raise VerifyError("if condition is not bool")
            self.block(s.then, loop_depth)
            self.block(s.orelse, loop_depth)
        elif isinstance(s, For):
            for x in (s.start, s.stop, s.step):
                self.use(x, "for")
            self.defined.add(s.var.id)
            self.block(s.body, loop_depth + 1)
        elif isinstance(s, While):
            self.block(s.cond_body, loop_depth)
            self.use(s.cond, "while")
            self.block(s.body, loop_depth + 1)
        elif isinstance(s, (Break, Continue)):
            if loop_depth == 0:
                raise VerifyError("break/continue outside a loop")
        elif isinstance(s, Return):
            pass
        elif isinstance(s, CustomCall):
            for x in s.inputs:
                self.use(x, "custom call")
            self.block(s.primal, loop_depth)
        elif self.adjoint:
            self.backward_stmt(s, loop_depth)
        else:
            raise VerifyError(f"unknown statement {type(s).__name__}")

    def backward_stmt(self, s: Stmt, loop_depth: int) -> None:
        if isinstance(s, ReplayLet):
            if not s.let.call.op.side_effect:
                raise VerifyError(f"replay of {s.let.call.name}, which has no side effect (replay it as a Let)")
            self.let(s.let)
        elif isinstance(s, AdjLet):
            for x in s.let.args:
                if not isinstance(x, (Var, Const)):
                    raise VerifyError(f"adjoint of {s.let.call.name}: operand {x!r} is not a Var or Const")
            for d in s.let.dsts:
                self.use(d, f"adjoint of {s.let.call.name}")
        elif isinstance(s, AdjAssign):
            self.use(s.assign.src, "adjoint assign")
            self.use(s.assign.dst, "adjoint assign")
        elif isinstance(s, Push):
            for x in s.values:
                self.use(x, "push")
        elif isinstance(s, Pop):
            for v in s.vars:
                if not isinstance(v, Var):
                    raise VerifyError(f"pop into {v!r}, not a Var")
                self.defined.add(v.id)
        elif isinstance(s, Repeat):
            self.use(s.count, "repeat")
            self.block(s.body, loop_depth + 1)
        else:
            raise VerifyError(f"unknown statement {type(s).__name__}")
