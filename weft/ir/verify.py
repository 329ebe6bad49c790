"""IR verifier: structural invariants every stage must keep. Run after each stage in tests."""

from __future__ import annotations

from ..errors import Error
from . import types as T
from .nodes import Assign, Break, Const, Continue, CustomCall, For, Function, If, Let, Return, Stmt, Var, VarKind, While


class VerifyError(Error):
    pass


def verify(fn: Function) -> None:
    defined: set[int] = {p.id for p in fn.params} | {v.id for v in fn.locals}
    ssa_defs: set[int] = set()

    def use(x, where: str) -> None:
        if isinstance(x, Const):
            return
        if not isinstance(x, Var):
            raise VerifyError(f"{where}: operand {x!r} is not a Var or Const")
        if x.id not in defined:
            raise VerifyError(f"{where}: {x!r} used before definition")

    def block(stmts: list[Stmt], loop_depth: int) -> None:
        for s in stmts:
            if isinstance(s, Let):
                for a in s.args:
                    use(a, f"{s.call.name}")
                    if isinstance(a, Var) and a.kind is VarKind.MUTABLE and s.call.name != "copy":
                        raise VerifyError(f"{s.call.name}: reads mutable {a!r} directly (must go through copy)")
                for d in s.dsts:
                    if d.id in ssa_defs:
                        raise VerifyError(f"{d!r} defined twice")
                    ssa_defs.add(d.id)
                    defined.add(d.id)
            elif isinstance(s, Assign):
                use(s.src, "assign")
                if s.dst.kind is not VarKind.MUTABLE:
                    raise VerifyError(f"assign to non-mutable {s.dst!r}")
                if isinstance(s.src, (Var, Const)) and s.src.type != s.dst.type:
                    raise VerifyError(f"assign {s.src.type} to {s.dst!r}: {s.dst.type}")
            elif isinstance(s, If):
                use(s.cond, "if")
                if isinstance(s.cond, Var) and s.cond.kind is VarKind.MUTABLE:
                    raise VerifyError(f"if condition {s.cond!r} is mutable (must be an SSA copy)")
                if s.cond.type != T.BOOL:
                    raise VerifyError("if condition is not bool")
                block(s.then, loop_depth)
                block(s.orelse, loop_depth)
            elif isinstance(s, For):
                for x in (s.start, s.stop, s.step):
                    use(x, "for")
                defined.add(s.var.id)
                block(s.body, loop_depth + 1)
            elif isinstance(s, While):
                block(s.cond_body, loop_depth)
                use(s.cond, "while")
                block(s.body, loop_depth + 1)
            elif isinstance(s, (Break, Continue)):
                if loop_depth == 0:
                    raise VerifyError("break/continue outside a loop")
            elif isinstance(s, Return):
                pass
            elif isinstance(s, CustomCall):
                for x in s.inputs:
                    use(x, "custom call")
                block(s.primal, loop_depth)
            else:
                raise VerifyError(f"unknown statement {type(s).__name__}")

    block(fn.body, 0)
