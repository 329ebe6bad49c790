"""Lower ``break`` / ``continue`` / ``return`` to flags and guarded blocks.

After this pass every block runs to its end, which makes the reverse of a block simply the reverse of its
statements. Loops that contained jumps become ``While`` loops whose condition also checks the break flag.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import types as T
from ..ir.nodes import (
    Assign,
    Break,
    Call,
    Const,
    Continue,
    For,
    Function,
    If,
    Let,
    Return,
    Stmt,
    Var,
    VarKind,
    While,
    walk,
)
from ..ops import registry
from .util import FALSE, TRUE, assign, flag, op, read


@dataclass
class _Loop:
    brk: Var
    skip: Var  # set by break / continue / return: the rest of this iteration is skipped


class JumpLowering:
    def __init__(self, fn: Function):
        self.fn = fn
        self.locals: list[Var] = []
        self.ret: Var | None = None

    def run(self) -> list[Stmt]:
        has_return = any(isinstance(s, Return) for s in walk(self.fn.body))
        out: list[Stmt] = []
        if has_return:
            self.ret = flag("returned", self.locals)
            assign(out, self.ret, FALSE)
        out += self.block(self.fn.body, None)
        return out

    def block(self, stmts: list[Stmt], loop: _Loop | None) -> list[Stmt]:
        out: list[Stmt] = []
        for i, s in enumerate(stmts):
            jumped = self.stmt(s, loop, out)
            rest = stmts[i + 1:]
            if jumped == "always":
                return out  # the rest is unreachable
            if jumped == "maybe" and rest:
                guard = self.guard_flag(loop)
                g = read(out, guard)
                ng = op(out, "logical_not", [g])
                out.append(If(ng, self.block(rest, loop), [], None))
                return out
        return out

    def guard_flag(self, loop: _Loop | None) -> Var:
        return loop.skip if loop is not None else self.ret

    def stmt(self, s: Stmt, loop: _Loop | None, out: list[Stmt]) -> str:
        """Append the lowered statement; return 'no', 'maybe' or 'always' (whether it may jump)."""
        if isinstance(s, Break):
            assign(out, loop.brk, TRUE)
            assign(out, loop.skip, TRUE)
            return "always"
        if isinstance(s, Continue):
            assign(out, loop.skip, TRUE)
            return "always"
        if isinstance(s, Return):
            assign(out, self.ret, TRUE)
            if loop is not None:
                assign(out, loop.brk, TRUE)
                assign(out, loop.skip, TRUE)
            return "always"
        if isinstance(s, If):
            then = self.block(s.then, loop)
            orelse = self.block(s.orelse, loop)
            out.append(If(s.cond, then, orelse, s.loc))
            return "maybe" if _jumps(s.then, loop) or _jumps(s.orelse, loop) else "no"
        if isinstance(s, (For, While)):
            if not _loop_jumps(s) and not self._returns_in(s):
                out.append(self.plain_loop(s))
                return "no"
            out += self.flagged_loop(s)
            if self._returns_in(s) and loop is not None:
                # a return inside a nested loop also ends every enclosing loop
                r = read(out, self.ret)
                out.append(If(r, [_assign(loop.brk, TRUE), _assign(loop.skip, TRUE)], [], None))
            return "maybe" if self._returns_in(s) else "no"
        out.append(s)
        return "no"

    def _returns_in(self, s: Stmt) -> bool:
        return any(isinstance(x, Return) for x in walk([s]))

    def plain_loop(self, s):
        if isinstance(s, For):
            return For(s.var, s.start, s.stop, s.step, self.block(s.body, None), s.loc)
        return While(s.cond_body, s.cond, self.block(s.body, None), s.loc)

    def flagged_loop(self, s) -> list[Stmt]:
        out: list[Stmt] = []
        loop = _Loop(flag("broke", self.locals), flag("skip", self.locals))
        assign(out, loop.brk, FALSE)
        cond_body: list[Stmt] = []
        body: list[Stmt] = []
        if isinstance(s, For):
            index = Var(s.var.type, s.var.name, VarKind.MUTABLE)
            self.locals.append(index)
            assign(out, index, s.start)
            i = read(cond_body, index)
            positive = not isinstance(s.step, Const) or s.step.value > 0
            in_range = op(cond_body, "lt" if positive else "gt", [i, s.stop])
            if not isinstance(s.step, Const):
                neg = op(cond_body, "gt", [i, s.stop])
                pos_step = op(cond_body, "gt", [s.step, Const(0, s.step.type)])
                # (step > 0 ? i < stop : i > stop) as a select through a mutable
                sel = Var(T.BOOL, "in_range", VarKind.MUTABLE)
                self.locals.append(sel)
                cond_body.append(If(pos_step, [], [], None))
                cond_body[-1].then.append(_assign(sel, in_range))
                cond_body[-1].orelse.append(_assign(sel, neg))
                in_range = read(cond_body, sel)
            b = read(cond_body, loop.brk)
            nb = op(cond_body, "logical_not", [b])
            cond = op(cond_body, "bit_and_bool", [in_range, nb])
            body.append(_copy_into(s.var, index))
            assign(body, loop.skip, FALSE)
            body += self.block(s.body, loop)
            cur = read(body, index)
            nxt = op(body, "add", [cur, s.step])
            assign(body, index, nxt)
            out.append(While(cond_body, cond, body, s.loc))
        else:
            cond_body = list(s.cond_body)
            b = read(cond_body, loop.brk)
            nb = op(cond_body, "logical_not", [b])
            cond = op(cond_body, "bit_and_bool", [s.cond, nb])
            assign(body, loop.skip, FALSE)
            body += self.block(s.body, loop)
            out.append(While(cond_body, cond, body, s.loc))
        return out


def _assign(dst, src):
    return Assign(dst, src, None)


def _copy_into(ssa_var: Var, mutable: Var):
    """Define the loop's SSA index variable from the mutable counter at the top of each iteration."""
    opr, _ = registry.resolve("copy", (mutable.type,))
    return Let((ssa_var,), Call(opr), (mutable,), None)


def _jumps(block: list[Stmt], loop) -> bool:
    """Whether a block contains a jump that leaves it (break/continue of the current loop, or return)."""
    for s in block:
        if isinstance(s, (Break, Continue)) and loop is not None:
            return True
        if isinstance(s, Return):
            return True
        if isinstance(s, If) and (_jumps(s.then, loop) or _jumps(s.orelse, loop)):
            return True
        if isinstance(s, (For, While)) and any(isinstance(x, Return) for x in walk(s.body)):
            return True
    return False


def _loop_jumps(loop) -> bool:
    def scan(stmts) -> bool:
        for s in stmts:
            if isinstance(s, (Break, Continue)):
                return True
            if isinstance(s, If) and (scan(s.then) or scan(s.orelse)):
                return True
        return False

    return scan(loop.body)


def lower_jumps(fn: Function) -> tuple[list[Stmt], list[Var]]:
    """The body of ``fn`` without jumps, plus the flag locals the lowering introduced."""
    pass_ = JumpLowering(fn)
    body = pass_.run()
    return body, pass_.locals
