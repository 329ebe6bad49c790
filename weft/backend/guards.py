"""Guard splitting: the plan that lets the CPU grid loop run a guarded kernel's rows without the guard.

Warp kernels launched over a whole grid guard their work on the thread index (``if i > 0 and j < m - 1:``,
``if i >= n: return``, ``if j == 0 or j == m - 1: return``). Such a comparison of the innermost thread index
against a row-invariant value holds on one interval of the innermost index per row (``j != b`` on two: the clip
keeps the longer); a comparison of an outer index holds or fails for the whole row. The plan
lists these comparisons ("atoms") with the value each is assumed to have. Per row, the grid loop asks the clip
function for the interval [lo, hi) of the innermost index on which every atom has its assumed value, runs the body
specialised to those values there (the atoms are constants, so the guard folds away and the loop can vectorise) and
the unspecialised body on the rest of the row. The assumed values only decide speed, never results: outside the
interval the original body runs, and inside it each atom provably has its assumed value.

Row-invariant values are kernel parameters that are never reassigned, constants, outer thread indices, and pure
int32 arithmetic on them (``add``, ``sub``, ``mul``, ``copy``, ``min``, ``max``); the clip function recomputes them
with the same statements as the body, so they have the same values.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ..ir import types as T
from ..ir.nodes import Assign, Const, Function, If, Let, Return, Stmt, Var, VarKind, walk
from ..ir.roles import Role

#: ops the bound of an atom may be computed with (int32 in, int32 out, total, no side effects)
_PURE = frozenset({"add", "sub", "mul", "copy", "min", "max"})
_CMP = frozenset({"lt", "le", "gt", "ge", "eq", "ne"})
_FLIP = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}  # a OP b  <=>  b FLIP[OP] a
_NEGATE = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt", "eq": "ne", "ne": "eq"}


class Side(enum.Enum):
    LOWER = "lower"  # the atom holds for j >= bound + offset
    UPPER = "upper"  # the atom holds for j < bound + offset
    EXCEPT = "except"  # the atom holds for every j but bound + offset (``j != b``; the clip keeps the longer side)


@dataclass(frozen=True)
class InnerAtom:
    """``dst`` has its assumed value exactly when the innermost index j satisfies j >= / < ``bound`` + ``offset``."""

    dst: Var
    value: bool
    side: Side
    bound: Var | Const
    offset: int


@dataclass(frozen=True)
class OuterAtom:
    """``dst`` (a comparison of row-invariant values) has its assumed value on every point of a row or on none."""

    dst: Var
    value: bool


@dataclass(frozen=True)
class GuardPlan:
    inner_tid: Var  # the innermost thread index (the flat index for ``i = wp.tid()``)
    tid: Let  # the wp.tid() statement
    inner: tuple[InnerAtom, ...]
    outer: tuple[OuterAtom, ...]
    prelude: tuple[Let, ...]  # the statements computing the atoms' row-invariant operands, in program order

    @property
    def known(self) -> dict[int, bool]:
        """Var id -> the value the specialised body gives it."""
        return {a.dst.id: a.value for a in (*self.inner, *self.outer)}


def _assumed_values(block: list[Stmt]) -> dict[int, bool]:
    """The value each If condition is assumed to have: False for ``if c: ... return`` (an early exit), True
    otherwise (the work is under the guard). Conditions copied through ``copy`` / mutable locals (the lowering of
    ``and``) are traced back to their comparisons."""
    assumed: dict[int, bool] = {}
    for s in walk(block):
        if isinstance(s, If) and isinstance(s.cond, Var):
            exits = bool(s.then) and isinstance(s.then[-1], Return) and not s.orelse
            assumed.setdefault(s.cond.id, not exits)
    return assumed


def plan_guards(fn: Function) -> GuardPlan | None:
    """The guard-splitting plan of a kernel, or None when it has no comparison of a thread index to split on."""
    stmts = list(walk(fn.body))
    tids = [s for s in stmts if isinstance(s, Let) and s.call.op.role is Role.TID]
    if len(tids) != 1 or any(d.type != T.INT32 for d in tids[0].dsts):
        return None
    tid = tids[0]
    inner_tid, outer_tids = tid.dsts[-1], set(tid.dsts[:-1])
    reassigned = {s.dst.id for s in stmts if isinstance(s, Assign)}
    params = {p.id for p in fn.params if p.id not in reassigned and p.type == T.INT32}
    lets = {d.id: s for s in stmts if isinstance(s, Let) for d in s.dsts}

    # row-invariant int32 values: params, outer tids, constants, and pure ops over them
    invariant: dict[int, bool] = {}

    def is_invariant(x) -> bool:
        if isinstance(x, Const):
            return x.type == T.INT32 and isinstance(x.value, int)
        if x.type != T.INT32:
            return False
        if x.id in invariant:
            return invariant[x.id]
        invariant[x.id] = False  # no cycles in SSA, but be safe
        s = lets.get(x.id)
        ok = (x.id in params or x in outer_tids
              or (s is not None and s.call.name in _PURE and len(s.dsts) == 1 and x.kind is VarKind.SSA
                  and all(is_invariant(a) for a in s.args)))
        invariant[x.id] = ok
        return ok

    # trace each assumed condition back to its comparisons (through copies and the bool local of ``and``)
    assumed = _assumed_values(fn.body)
    sources: dict[int, list[Var]] = {}
    for s in stmts:
        if isinstance(s, Let) and s.call.op.role is Role.COPY and isinstance(s.args[0], Var):
            sources.setdefault(s.dsts[0].id, []).append(s.args[0])
        elif isinstance(s, Assign) and isinstance(s.src, Var):
            sources.setdefault(s.dst.id, []).append(s.src)
    cmp_values: dict[int, bool] = {}
    for vid, value in assumed.items():
        stack, seen = [vid], set()
        while stack:
            v = stack.pop()
            if v in seen:
                continue
            seen.add(v)
            s = lets.get(v)
            if s is not None and s.call.name in _CMP:
                cmp_values.setdefault(v, value)
            stack.extend(x.id for x in sources.get(v, []))

    inner: list[InnerAtom] = []
    outer: list[OuterAtom] = []
    needed: set[int] = set()
    for s in stmts:
        if not (isinstance(s, Let) and s.call.name in _CMP and s.dsts[0].id in cmp_values):
            continue
        a, b = s.args
        op, value = s.call.name, cmp_values[s.dsts[0].id]
        if a is inner_tid and is_invariant(b):
            bound = b
        elif b is inner_tid and is_invariant(a):
            op, bound = _FLIP[op], a
        elif is_invariant(a) and is_invariant(b):
            outer.append(OuterAtom(s.dsts[0], value))
            needed.add(s.dsts[0].id)
            continue
        else:
            continue
        if not value:
            op = _NEGATE[op]
        if op == "eq":
            continue  # holds at one point of the row: nothing to split on
        # j > b: j >= b + 1; j >= b; j < b; j <= b: j < b + 1; j != b
        side = Side.LOWER if op in ("gt", "ge") else Side.EXCEPT if op == "ne" else Side.UPPER
        inner.append(InnerAtom(s.dsts[0], value, side, bound, 1 if op in ("gt", "le") else 0))
        if isinstance(bound, Var):
            needed.add(bound.id)
    if not inner and not outer:
        return None

    # the statements the clip function runs: the tid unpack, then the slices of the invariant operands
    closure: set[int] = set()

    def close(vid: int) -> None:
        if vid in closure:
            return
        closure.add(vid)
        s = lets.get(vid)
        if s is not None and s.call.op.role is not Role.TID:
            for x in s.args:
                if isinstance(x, Var):
                    close(x.id)

    for vid in needed:
        close(vid)
    prelude = tuple(s for s in stmts if isinstance(s, Let) and s.call.op.role is not Role.TID
                    and any(d.id in closure for d in s.dsts))
    return GuardPlan(inner_tid, tid, tuple(inner), tuple(outer), prelude)
