"""The adjoint transform: typed IR -> backward program (replay + reverse sweep), all IR -> IR.

Per thread, the backward function replays the forward and then sweeps back through it, as Warp does. Where
Warp is silently wrong weft is exact: every dynamic loop saves its loop-carried state at the start of each
iteration on a per-thread stack during the replay; the reverse sweep restores each iteration's state (last
first), re-runs that iteration forward (recording any nested loops) and sweeps it back. Jumps are lowered to
flags first (``jumps.py``) so every block's reverse is the reverse of its statements. Derivative rules are
found only through the op registry; this module knows control flow, not math.
"""

from __future__ import annotations

from ..errors import CompileError
from ..ir import types as T
from ..ir.access import snapshot_params
from ..ir.nodes import (
    AdjAssign,
    AdjLet,
    AdjointProgram,
    Assign,
    Const,
    CustomCall,
    For,
    Function,
    If,
    Let,
    Pop,
    Push,
    Repeat,
    ReplayLet,
    Stmt,
    Var,
    VarKind,
    While,
    walk,
)
from ..ir.roles import Role
from ..ops.registry import Adjoint
from .jumps import lower_jumps
from .util import assign, op, read


class AdjointBuilder:
    def __init__(self, fn: Function):
        self.fn = fn
        self.locals: list[Var] = []
        self.uses_stack = False

    def build(self) -> AdjointProgram:
        self.check_differentiable(self.fn.body)
        body, flag_locals = lower_jumps(self.fn)
        self.locals += flag_locals
        replay = self.record(body)
        reverse = self.reverse(body)
        return AdjointProgram(self.fn, replay, reverse, self.fn.locals + self.locals, self.uses_stack,
                              snapshot_params(self.fn))

    def check_differentiable(self, block: list[Stmt]) -> None:
        check_loop_array_updates(block)
        for s in walk(block):
            if isinstance(s, Let) and not s.call.op.has_adjoint:
                raise CompileError(f"'{s.call.op.name}' has no derivative rule yet", s.loc,
                                   hint="launch with enable_backward=False or avoid it on the tape")
            if isinstance(s, Let) and s.call.op.role is Role.VIEW and s.args and _is_fixed_array(s.args[0].type) \
                    and T.is_differentiable_type(s.args[0].type.dtype):
                raise CompileError("a row view of a kernel-local array (a[i] of a 2-D wp.zeros array) has no "
                                   "derivative rule yet", s.loc,
                                   hint="index the element directly (a[i, j]) or launch with enable_backward=False")

    # ------------------------------------------------------------------ forward replay
    def record(self, block: list[Stmt]) -> list[Stmt]:
        """Forward replay in which the loops of this block record their iteration states."""
        return self.replay(block, record=True)

    def plain(self, block: list[Stmt]) -> list[Stmt]:
        return self.replay(block, record=False)

    def replay(self, block: list[Stmt], record: bool) -> list[Stmt]:
        out: list[Stmt] = []
        for s in block:
            if isinstance(s, Let):
                out.append(ReplayLet(s) if s.call.op.side_effect else s)
            elif isinstance(s, Assign):
                out.append(s)
            elif isinstance(s, If):
                out.append(If(s.cond, self.replay(s.then, record), self.replay(s.orelse, record), s.loc))
            elif isinstance(s, (For, While)):
                out += self.record_loop(s) if record else [self.plain_loop(s)]
            elif isinstance(s, CustomCall):
                # the custom call is not differentiated statement by statement: replay it plainly
                out.append(If(_TRUE, self.plain(s.replay if s.replay is not None else s.primal), [], s.loc))
            else:
                out.append(s)
        return out

    def plain_loop(self, s):
        if isinstance(s, For):
            return For(s.var, s.start, s.stop, s.step, self.plain(s.body), s.loc)
        return While(self.plain(s.cond_body), s.cond, self.plain(s.body), s.loc)

    def loop_state(self, s) -> list[Var]:
        """Values an iteration needs restored: the loop index, every mutable local the loop touches and every
        kernel-local fixed array it stores into (stores mutate those in place)."""
        seen: dict[int, Var] = {}
        for x in walk([s]):
            if isinstance(x, Assign):
                seen.setdefault(x.dst.id, x.dst)
            elif isinstance(x, Let):
                for a in x.args:
                    if isinstance(a, Var) and a.kind is VarKind.MUTABLE:
                        seen.setdefault(a.id, a)
                target = x.args[0] if x.args else None
                if x.call.op.side_effect and isinstance(target, Var) and _is_fixed_array(target.type):
                    seen.setdefault(target.id, target)
        if isinstance(s, While):
            # values the condition defines and the body reads (the index of `for j in wp.hash_grid_query(...)`):
            # the replayed body needs each iteration's, not the last (failed) condition's
            cond_defs = {d.id for x in s.cond_body if isinstance(x, Let) for d in x.dsts}
            for x in walk(s.body):
                reads = x.args if isinstance(x, Let) else (x.src,) if isinstance(x, Assign) else \
                    (x.cond,) if isinstance(x, (If, While)) else ()
                for a in reads:
                    if isinstance(a, Var) and a.id in cond_defs:
                        seen.setdefault(a.id, a)
        state = list(seen.values())
        if isinstance(s, For):
            state.insert(0, s.var)
        return state

    def record_loop(self, s) -> list[Stmt]:
        self.uses_stack = True
        out: list[Stmt] = []
        count = Var(T.INT32, "iters", VarKind.MUTABLE)
        self.locals.append(count)
        assign(out, count, Const(0, T.INT32))
        state = self.loop_state(s)
        body: list[Stmt] = [Push(list(state))]
        body += self.plain(s.body)
        c = read(body, count)
        c1 = op(body, "add", [c, Const(1, T.INT32)])
        assign(body, count, c1)
        if isinstance(s, For):
            out.append(For(s.var, s.start, s.stop, s.step, body, s.loc))
        else:
            out.append(While(self.plain(s.cond_body), s.cond, body, s.loc))
        out.append(Push([count]))
        self._loop_meta[id(s)] = (count, state)
        return out

    # ------------------------------------------------------------------ reverse sweep
    _loop_meta: dict

    def reverse(self, block: list[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        for s in reversed(block):
            if isinstance(s, Let):
                if s.call.op.adjoint is not Adjoint.NONE and any(T.is_differentiable_type(d.type) for d in s.dsts) \
                        or _has_adjoint_effect(s):
                    out.append(AdjLet(s))
            elif isinstance(s, Assign):
                if T.is_differentiable_type(s.dst.type):
                    out.append(AdjAssign(s))
            elif isinstance(s, If):
                out.append(If(s.cond, self.reverse(s.then), self.reverse(s.orelse), s.loc))
            elif isinstance(s, (For, While)):
                out += self.reverse_loop(s)
            elif isinstance(s, CustomCall):
                if s.grad is None:
                    out += self.reverse(s.primal)  # only a custom replay: differentiate the func itself
                else:
                    out.append(If(_TRUE, list(s.grad), [], s.loc))  # the user's gradient code, as written
        return out

    def reverse_loop(self, s) -> list[Stmt]:
        count = Var(T.INT32, "iters", VarKind.MUTABLE)
        self.locals.append(count)
        state = self.loop_state(s)
        body: list[Stmt] = [Pop(list(state))]
        body += self.record(s.body)
        body += self.reverse(s.body)
        return [Pop([count]), Repeat(count, body)]


_TRUE = Const(True, T.BOOL)


def check_loop_array_updates(block: list[Stmt]) -> None:
    """Reject a dynamic loop that reads an array it also writes (``a[i] = a[i] * x`` repeated ``n`` times).

    The reverse sweep re-runs each iteration from its saved local state, but array contents are not part of
    that state: the re-run would read the values of the last iteration and give a silently wrong gradient (as
    Warp does). Such a loop is an error at the line of the write until per-iteration array state is saved.
    """
    root: dict[int, Var] = {}

    def origin(v):
        return root.get(v.id, v) if isinstance(v, Var) else None

    for s in walk(block):
        if isinstance(s, Let) and s.call.op.role is Role.VIEW and s.dsts:
            root[s.dsts[0].id] = origin(s.args[0])
    for loop in walk(block):
        if not isinstance(loop, (For, While)):
            continue
        loaded: set[int] = set()
        written: list[tuple[Var, Let]] = []
        for s in walk([loop]):
            if not isinstance(s, Let) or not s.args or not isinstance(s.args[0], Var):
                continue
            arr = origin(s.args[0])
            if not isinstance(arr.type, T.ArrayType) or _is_fixed_array(arr.type):
                continue
            if s.call.op.role is Role.LOAD:
                loaded.add(arr.id)
            elif s.call.op.role in (Role.STORE, Role.ATOMIC):
                written.append((arr, s))
        for arr, s in written:
            if arr.id in loaded and T.is_differentiable_type(arr.type.dtype):
                raise CompileError(
                    f"array '{arr.name}' is both read and written inside a loop whose trip count is only known at "
                    f"run time; its backward pass would replay each iteration with the array's final values and "
                    f"give a wrong gradient", s.loc,
                    hint="accumulate in a local variable inside the loop and store it to the array after the loop "
                         "(or launch with enable_backward=False if no gradient is needed)")


def _is_fixed_array(t: T.Type) -> bool:
    return isinstance(t, T.ArrayType) and t.kind is T.ArrayKind.FIXED


def _has_adjoint_effect(s: Let) -> bool:
    """Ops without a differentiable result whose reverse still moves gradient (stores, atomics)."""
    return s.call.op.adjoint is Adjoint.SPECIAL and s.call.op.side_effect


def build_adjoint(fn: Function) -> AdjointProgram:
    from .prune import prune_replay

    builder = AdjointBuilder(fn)
    builder._loop_meta = {}
    return prune_replay(builder.build())
