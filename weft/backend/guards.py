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

Periodic and clamped indices split the same way. ``(j + c) % n`` (c a constant, n row-invariant; the ``cyclic_index`` helper of
Warp's stencil examples) equals ``j + c`` wherever 0 <= j + c < n: the plan lists it as an identity with those two
bounds, the specialised body renders the copy instead of the division (which keeps a loop scalar: no SIMD integer
division), and comparisons that the bounds decide (``ret < 0``, ``ret >= n``: the wrap fix-up of a C-style ``%``)
become constants too, so the fix-up branch folds and the loads at ``j + c`` are contiguous. Clamped indices
(``clamp(j + c, 0, m - 1)``, ``min(j + 1, m - 1)``, ``max(j - 1, 0)``: the boundary handling of Warp's grid-fluid
example) are ``j + c`` between their bounds, also for c = 0.

A flat launch (``tid = wp.tid()``) that recovers its cell as ``x = tid % w``, ``y = tid // w`` (Warp's wave, raycast
and raymarch examples; ``w`` an int parameter never reassigned) is planned on rows of ``w`` points: ``x`` is the
innermost index and ``y`` the row (``_flat_rows``), and the specialised body takes both, and ``tid``, from the row
loop (``GuardPlan.exprs``; run_grid_split_rows in launch.h).
"""

from __future__ import annotations

import enum
import functools
from dataclasses import dataclass

from ..ir import types as T
from ..ir.nodes import Assign, Break, Const, Continue, Function, If, Let, Return, Stmt, Var, VarKind, walk
from ..ir.roles import Role

#: ops the bound of an atom may be computed with (int32 in, int32 out, total, no side effects)
_PURE = frozenset({"add", "sub", "mul", "copy", "min", "max"})
_CMP = frozenset({"lt", "le", "gt", "ge", "eq", "ne"})
_FLIP = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}  # a OP b  <=>  b FLIP[OP] a
_NEGATE = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt", "eq": "ne", "ne": "eq"}
_EQUALITY = ("eq", "ne")
#: int32 ops that offset a value by a constant (``j + 1``, ``1 + j``, ``j - 1``)
_OFFSET = frozenset({"add", "sub"})
#: the remainder op: ``(j + c) % n`` is ``j + c`` on 0 <= j + c < n
_WRAP = frozenset({"mod"})
#: clamping ops: ``clamp(j + c, lo, hi)``, ``min(j + c, hi)``, ``max(j + c, lo)`` are ``j + c`` inside the bounds
_CLAMP = frozenset({"clamp"})
_MIN = frozenset({"min"})
_MAX = frozenset({"max"})


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
class InnerRange:
    """A bound of an identity's interval: j >= ``bound`` + ``offset`` (LOWER) or j < ``bound`` + ``offset`` (UPPER)."""

    side: Side
    bound: Var | Const
    offset: int


@dataclass(frozen=True)
class Identity:
    """``dst = src % n`` is ``dst = src`` in the specialised body (its bounds are in GuardPlan.ranges)."""

    dst: Var
    src: Var


@dataclass(frozen=True)
class GuardPlan:
    inner_tid: Var  # the innermost thread index (the flat index for ``i = wp.tid()``)
    tid: Let  # the wp.tid() statement
    inner: tuple[InnerAtom, ...]
    outer: tuple[OuterAtom, ...]
    prelude: tuple[Let, ...]  # the statements computing the atoms' row-invariant operands, in program order
    identities: tuple[Identity, ...] = ()
    ranges: tuple[InnerRange, ...] = ()  # the bounds under which the identities hold
    implied: tuple[OuterAtom, ...] = ()  # comparisons the identities' bounds decide (no bound of their own)
    #: (load result id, c): in the specialised body the load's innermost index is the innermost thread index + c
    load_offsets: tuple[tuple[int, int], ...] = ()
    #: rows of a flat launch (see _flat_rows): (w, x, y or None)
    flat: tuple | None = None

    @functools.cached_property
    def _load_offset_of(self) -> dict[int, int]:
        return dict(self.load_offsets)

    def load_offset(self, var_id: int) -> int | None:
        """``c`` of ``load_offsets`` for the load whose result is ``var_id`` (None when it has none)."""
        return self._load_offset_of.get(var_id)

    def exprs(self, width: str) -> dict[int, str]:
        """Var id -> the row loop's value the specialised body gives it: the column and row of a flat launch's rows
        (the split row runner passes them as i1 and i0) and the flat index as ``i0 * width + i1`` (int32 arithmetic
        on the loop index: contiguous accesses, where the 64-bit ``flat`` truncated was a gather / scatter).
        ``width``: the rendered row width."""
        if self.flat is None:
            return {}
        out = {self.flat[1].id: "i1", self.tid.dsts[0].id: f"(i0 * {width} + i1)"}
        if self.flat[2] is not None:
            out[self.flat[2].id] = "i0"
        return out

    @property
    def known(self) -> dict[int, bool]:
        """Var id -> the value the specialised body gives it."""
        return {a.dst.id: a.value for a in (*self.inner, *self.outer, *self.implied)}

    @property
    def copies(self) -> dict[int, Var]:
        """Var id -> the value the specialised body copies into it instead of computing it (the identities)."""
        return {x.dst.id: x.src for x in self.identities}


def _assumed_values(block: list[Stmt]) -> dict[int, bool | None]:
    """The value each If condition is assumed to have: False for ``if c: ... return`` (an early exit), True
    otherwise (the work is under the guard), None for a two-way branch (``if c: ... else: ...``, ``wp.where``):
    both sides are work, so only its (in)equality tests are assumed, to the side that holds on all but one point.
    Conditions copied through ``copy`` / mutable locals (the lowering of ``and``) are traced back to their
    comparisons."""
    assumed: dict[int, bool | None] = {}
    for s in walk(block):
        if isinstance(s, If) and isinstance(s.cond, Var):
            exits = bool(s.then) and isinstance(s.then[-1], Return) and not s.orelse
            assumed.setdefault(s.cond.id, None if s.orelse else not exits)
    return assumed


def plan_guards(fn: Function) -> GuardPlan | None:
    """The guard-splitting plan of a kernel, or None when it has no comparison of a thread index to split on (or
    runs in blocks: a tile kernel's body is not the per-point grid loop this plan splits)."""
    if fn.tile_dim:
        return None
    stmts = list(walk(fn.body))
    tids = [s for s in stmts if isinstance(s, Let) and s.call.op.role is Role.TID]
    if len(tids) != 1 or any(d.type != T.INT32 for d in tids[0].dsts):
        return None
    tid = tids[0]
    inner_tid, outer_tids = tid.dsts[-1], set(tid.dsts[:-1])
    reassigned = {s.dst.id for s in stmts if isinstance(s, Assign)}
    params = {p.id for p in fn.params if p.id not in reassigned and p.type == T.INT32}
    lets = {d.id: s for s in stmts if isinstance(s, Let) for d in s.dsts}
    flat = _flat_rows(stmts, tid, params) if len(tid.dsts) == 1 else None
    if flat is not None:  # rows of a flat launch: the column is the innermost index, the row an outer one
        inner_tid, outer_tids = flat[1], ({flat[2]} if flat[2] is not None else set())

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
                if value is not None:
                    cmp_values.setdefault(v, value)
                elif s.call.name in _EQUALITY:  # a two-way branch: k == 0 is assumed false, k != 0 true
                    cmp_values.setdefault(v, s.call.name == _EQUALITY[1])
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
            if (op if value else _NEGATE[op]) == "eq":
                continue  # holds on one row (a point source's ``if i == s and ...``): the others would all run the rim
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
    identities, ranges, implied, load_offsets = ((), (), (), {})
    if len(tid.dsts) >= 2 or flat is not None:  # see _wrap_identities: a row of a multi-dimensional launch
        identities, ranges, implied, load_offsets = _wrap_identities(
            fn.body, inner_tid, is_invariant, {a.dst.id: a.value for a in (*inner, *outer)})
    for r in ranges:
        if isinstance(r.bound, Var):
            needed.add(r.bound.id)
    if not inner and not outer and not identities:
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
    return GuardPlan(inner_tid, tid, tuple(inner), tuple(outer), prelude, identities, ranges, implied,
                     tuple(sorted(load_offsets.items())), flat)


#: the integer ops of ``x = tid % w`` and ``y = tid // w``
_FLAT_COL = frozenset({"mod"})
_FLAT_ROW = frozenset({"floordiv", "div"})


def _flat_rows(stmts: list[Stmt], tid: Let, params: set[int]):
    """(w, x, y) when a flat-index kernel computes its 2-D cell as ``x = tid % w`` (and ``y = tid // w``), w an int32
    parameter it never reassigns (Warp's examples: ``x = tid % width; y = tid // width``); else None. The launch then
    runs in rows of w points (run_grid_split_rows in launch.h): x is the column (the innermost index of the plan), y
    the row (the specialised body takes both from the row loop: no divisions, and ``y * w + x + 1`` is contiguous)."""
    t = tid.dsts[0]
    src = {t.id}
    for s in stmts:
        if isinstance(s, Let) and s.call.op.role is Role.COPY and isinstance(s.args[0], Var) and s.args[0].id in src \
                and s.dsts[0].kind is VarKind.SSA:
            src.add(s.dsts[0].id)

    def find(names):
        for s in stmts:
            if (isinstance(s, Let) and s.call.name in names and len(s.args) == 2 and len(s.dsts) == 1
                    and isinstance(s.args[0], Var) and s.args[0].id in src and isinstance(s.args[1], Var)
                    and s.args[1].id in params and s.dsts[0].type == T.INT32 and s.dsts[0].kind is VarKind.SSA):
                return s
        return None

    col = find(_FLAT_COL)
    if col is None:
        return None
    width = col.args[1]
    row = next((s for s in stmts if isinstance(s, Let) and s.call.name in _FLAT_ROW and len(s.args) == 2
                and len(s.dsts) == 1 and isinstance(s.args[0], Var) and s.args[0].id in src
                and s.args[1] is width and s.dsts[0].kind is VarKind.SSA), None)
    return width, col.dsts[0], row.dsts[0] if row is not None else None


def _same(a, b) -> bool:
    return a is b or (isinstance(a, Const) and isinstance(b, Const) and a.value == b.value and a.type == b.type)


def _decided(op: str, k, n) -> bool | None:
    """The value of ``x OP k`` for every x in [0, n), when that does not depend on x (None otherwise)."""
    if _same(k, n):
        return {"lt": True, "le": True, "gt": False, "ge": False, "eq": False, "ne": True}[op]
    if not (isinstance(k, Const) and k.type == T.INT32 and isinstance(k.value, int)):
        return None
    v = k.value
    table = {"lt": False if v <= 0 else None, "le": False if v < 0 else None, "gt": True if v < 0 else None,
             "ge": True if v <= 0 else None, "eq": False if v < 0 else None, "ne": True if v < 0 else None}
    return table[op]


def _wrap_identities(body: list[Stmt], inner_tid: Var, is_invariant, known: dict[int, bool]):
    """The ``(j + c) % n`` identities of a body (see the module docstring), their bounds and the comparisons those
    bounds decide. Walks the body in order, tracking which values are ``j + c`` (offset c) and which lie in [0, n)
    under the identities found so far, through SSA copies and mutable locals (a branch whose condition is decided
    runs only its taken side; a local assigned in an undecided branch is unknown after it).

    Only wraps of a neighbour (c != 0) of the innermost index of a multi-dimensional ``wp.tid()``: there the interval
    is the row less c points at one end (the stencil case). ``j % w`` of a flat index (``x = tid % width``) or a
    short period (``j % 4``) holds on a small part of the row only, and the rest would run the out-of-line body."""
    offset: dict[int, int] = {inner_tid.id: 0}
    within: dict[int, Var | Const] = {}
    local_offset: dict[int, int] = {}
    local_within: dict[int, Var | Const] = {}
    identities: list[Identity] = []
    ranges: list[InnerRange] = []
    implied: list[OuterAtom] = []
    load_offsets: dict[int, int] = {}  # load's result id -> its innermost index is j + this (in the specialised body)
    decided = dict(known)

    def facts(x):
        if not isinstance(x, Var):
            return None, None
        if x.kind is VarKind.MUTABLE:
            return local_offset.get(x.id), local_within.get(x.id)
        return offset.get(x.id), within.get(x.id)

    def assigned(block) -> set[int]:
        return {s.dst.id for s in walk(block) if isinstance(s, Assign)}

    def visit(block: list[Stmt]) -> None:
        for s in block:
            if isinstance(s, Let):
                if len(s.dsts) != 1:
                    continue
                d, name, args = s.dsts[0], s.call.name, s.args
                if s.call.op.role is Role.LOAD and len(args) >= 2 and facts(args[-1])[0] is not None:
                    load_offsets[d.id] = facts(args[-1])[0]
                if d.type != T.INT32 and name not in _CMP:
                    continue
                if s.call.op.role is Role.COPY and isinstance(args[0], Var):
                    o, w = facts(args[0])
                    if o is not None:
                        offset[d.id] = o
                    if w is not None:
                        within[d.id] = w
                elif name in _OFFSET and len(args) == 2:
                    a, b = args
                    k = b if name == "sub" else (a if isinstance(a, Const) else b)
                    x = a if k is b else b
                    o = facts(x)[0]
                    if (o is not None and isinstance(k, Const) and k.type == T.INT32 and isinstance(k.value, int)
                            and abs(k.value) < 2**20):
                        offset[d.id] = o + (-k.value if name == "sub" else k.value)
                elif name in _WRAP and len(args) == 2:
                    o = facts(args[0])[0]
                    if o and is_invariant(args[1]) and isinstance(args[0], Var):
                        identities.append(Identity(d, args[0]))
                        ranges.append(InnerRange(Side.LOWER, Const(0, T.INT32), -o))
                        ranges.append(InnerRange(Side.UPPER, args[1], -o))
                        offset[d.id] = o
                        within[d.id] = args[1]
                elif name in _CLAMP | _MIN | _MAX and isinstance(args[0], Var) and facts(args[0])[0] is not None:
                    # clamp(x, lo, hi) == x on lo <= x <= hi; min(x, hi) on x <= hi; max(x, lo) on x >= lo
                    o = facts(args[0])[0]
                    lo = args[1] if name in _CLAMP | _MAX else None
                    hi = args[2] if name in _CLAMP else args[1] if name in _MIN else None
                    if len(args) == (3 if name in _CLAMP else 2) and all(b is None or is_invariant(b) for b in (lo, hi)):
                        identities.append(Identity(d, args[0]))
                        if lo is not None:
                            ranges.append(InnerRange(Side.LOWER, lo, -o))
                        if hi is not None:
                            ranges.append(InnerRange(Side.UPPER, hi, 1 - o))
                        offset[d.id] = o
                elif name in _CMP and d.id not in decided:
                    a, b = args
                    op = name
                    if facts(b)[1] is not None and facts(a)[1] is None:
                        op, a, b = _FLIP[op], b, a
                    n = facts(a)[1]
                    value = _decided(op, b, n) if n is not None else None
                    if value is not None:
                        decided[d.id] = value
                        implied.append(OuterAtom(d, value))
            elif isinstance(s, Assign):
                o, w = facts(s.src)
                for table, v in ((local_offset, o), (local_within, w)):
                    if v is None:
                        table.pop(s.dst.id, None)
                    else:
                        table[s.dst.id] = v
            elif isinstance(s, If):
                if isinstance(s.cond, Var) and s.cond.id in decided:
                    visit(s.then if decided[s.cond.id] else s.orelse)
                    continue
                before = dict(local_offset), dict(local_within)
                for branch in (s.then, s.orelse):  # each branch starts from the locals' values before the If
                    local_offset.clear(), local_within.clear()
                    local_offset.update(before[0]), local_within.update(before[1])
                    visit(branch)
                local_offset.clear(), local_within.clear()
                local_offset.update(before[0]), local_within.update(before[1])
                for vid in assigned(s.then) | assigned(s.orelse):
                    local_offset.pop(vid, None)
                    local_within.pop(vid, None)

    visit(body)
    return tuple(identities), tuple(ranges), tuple(implied), load_offsets


# ---- row-invariant values and row-affine loads (the deferred-form backward, backend/adjoint.py)
#: roles of the statements a row slice may run: pure computations on scalars and array extents
_SLICE_ROLES = frozenset({Role.CALL, Role.COPY, Role.SHAPE})


@dataclass(frozen=True)
class RowSlice:
    """The statements of a kernel body whose values are the same at every point of a row (they do not depend on the
    innermost thread index, through data or through a branch), filtered to pure scalar computations: run once per
    row, they give each row-invariant value the body gives it. ``invariant``: the ids of those values."""

    body: tuple[Stmt, ...]
    invariant: frozenset[int]
    params: frozenset[int]  # scalar parameters never reassigned (row-invariant too)


def _sliceable(s: Let) -> bool:
    op = s.call.op
    if op.role is Role.TID:
        return True
    if op.role not in _SLICE_ROLES or op.side_effect or not s.dsts:
        return False
    if not all(isinstance(d.type, T.ScalarType) for d in s.dsts):
        return False
    return all(isinstance(a, Const) or isinstance(a.type, T.ScalarType)
               or (op.role is Role.SHAPE and a.kind is VarKind.PARAM) for a in s.args)


def row_slice(fn: Function, inner_tid: Var) -> RowSlice:
    """The row slice of a straight-line body (see RowSlice). A value is row-variant when it is the innermost index,
    is computed from a row-variant value or by a statement the slice may not run (loads, side effects, non-scalar
    values), or is a local assigned a row-variant value or assigned under a row-variant branch (flow-insensitive:
    one such assignment makes every read of the local row-variant); loops make everything in them row-variant."""
    variant: set[int] = {inner_tid.id}
    reassigned = {s.dst.id for s in walk(fn.body) if isinstance(s, Assign)}

    def mark(block: list[Stmt], under: bool) -> bool:
        changed = False
        for s in block:
            new: list[Var] = []
            if isinstance(s, Let):
                if s.call.op.role is Role.TID:
                    continue  # its innermost component is in ``variant`` from the start; the others are not
                args_variant = any(isinstance(a, Var) and (a.id in variant or (a.kind is VarKind.PARAM
                                                                                 and a.id in reassigned))
                                   for a in s.args)
                if under or args_variant or not _sliceable(s):
                    new = list(s.dsts)
            elif isinstance(s, Assign):
                if under or (isinstance(s.src, Var) and s.src.id in variant) or s.dst.kind is VarKind.PARAM:
                    new = [s.dst]
            elif isinstance(s, If):
                cond_variant = under or (isinstance(s.cond, Var) and s.cond.id in variant)
                changed |= mark(s.then, cond_variant)
                changed |= mark(s.orelse, cond_variant)
            elif isinstance(s, (Return, Break, Continue)):
                pass
            else:  # loops, custom-gradient calls: every value they define varies
                new = [d for x in walk([s]) for d in (x.dsts if isinstance(x, Let) else
                                                       [x.dst] if isinstance(x, Assign) else [])]
            for d in new:
                if d.id not in variant:
                    variant.add(d.id)
                    changed = True
        return changed

    while mark(fn.body, False):
        pass

    def keep(block: list[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        for s in block:
            kept_let = isinstance(s, Let) and (s.call.op.role is Role.TID or (
                bool(s.dsts) and _sliceable(s) and not any(d.id in variant for d in s.dsts)))
            if kept_let or (isinstance(s, Assign) and s.dst.id not in variant):
                out.append(s)
            elif isinstance(s, If) and isinstance(s.cond, Var) and s.cond.id not in variant:
                then, orelse = keep(s.then), keep(s.orelse)
                if then or orelse:
                    out.append(If(s.cond, then, orelse, s.loc))
        return out

    body = tuple(keep(fn.body))
    defined = {d.id for s in walk(list(body)) for d in (s.dsts if isinstance(s, Let) else
                                                         [s.dst] if isinstance(s, Assign) else [])}
    params = frozenset(p.id for p in fn.params if p.id not in reassigned and isinstance(p.type, T.ScalarType))
    return RowSlice(body, frozenset(i for i in defined if i not in variant), params)
