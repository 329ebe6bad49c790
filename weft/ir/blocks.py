"""The block execution model of tile kernels on the CPU.

A block of ``block_dim`` lanes runs on one CPU thread. The kernel body is split into *collective* statements
(tile ops, and control flow that contains them), executed once per block, and *lane runs*: maximal sequences of
ordinary SIMT statements, executed in a loop over the lanes. Values that live across a lane run (or are read by a
collective statement) are stored per lane (``T v[block_dim]``); values used only inside one run stay scalars.
Collective statements read per-lane operands (offsets, loop bounds, conditions) from lane 0: as on a GPU, they
must be the same in every lane of a block.

This gives results identical to a GPU launch with the same ``block_dim``, including code that depends on the
lane index, and keeps tile operations whole-tile loops the compiler can vectorise.

The same model serves the backward program (``weft.autodiff``): its replay and reverse sweep are segmented alike;
loop-state pushes and pops at block level save whole per-lane arrays, and reverse lane runs visit the lanes in
reverse order, so the per-block loop stack stays last-in first-out.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import types as T
from .nodes import (
    AdjAssign,
    AdjLet,
    Assign,
    Break,
    Continue,
    For,
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


@dataclass(eq=False)
class LaneRun:
    """A sequence of SIMT statements executed once per lane."""

    stmts: list[Stmt]
    id: int
    has_return: bool = False


@dataclass(frozen=True)
class Model:
    """Where each statement runs and how each variable is stored (the plan :func:`analyse` returns)."""

    block_dim: int
    lane_arrays: frozenset[int] = frozenset()  # var ids stored per lane
    uniform: frozenset[int] = frozenset()  # var ids held once per block (tiles, collective loop indices)
    lane_returns: bool = False  # some lane may leave the kernel early (a per-lane active mask is needed)


def _let_of(s: Stmt) -> Let | None:
    if isinstance(s, Let):
        return s
    if isinstance(s, (AdjLet, ReplayLet)):
        return s.let
    return None


def is_collective_let(s: Let) -> bool:
    if s.call.op.collective:
        return True
    return any(isinstance(d.type, T.TileType) for d in s.dsts)


def _collective_leaf(s: Stmt) -> bool:
    let = _let_of(s)
    if let is not None:
        return is_collective_let(let)
    if isinstance(s, Assign):
        return isinstance(s.dst.type, T.TileType)
    if isinstance(s, AdjAssign):
        return isinstance(s.assign.dst.type, T.TileType)
    return False


def is_collective(s: Stmt) -> bool:
    """Whether ``s``, met directly in a block being segmented, must run once per block."""
    if isinstance(s, (Break, Continue, Return, Push, Pop)):
        # jumps at this level belong to a collective loop (or end the block); loop-state pushes and pops at this
        # level save whole per-lane arrays so the stack order does not depend on the lane loop
        return True
    if isinstance(s, If):
        return _contains_collective(s.then) or _contains_collective(s.orelse) or _free_jump(s.then + s.orelse)
    if isinstance(s, For):
        return _contains_collective(s.body)
    if isinstance(s, While):
        return _contains_collective(s.cond_body) or _contains_collective(s.body)
    if isinstance(s, Repeat):
        return _contains_collective(s.body)
    return _collective_leaf(s)


def _contains_collective(block: list[Stmt]) -> bool:
    return any(_collective_leaf(s) for s in walk(block))


def _free_jump(block: list[Stmt]) -> bool:
    """A break/continue in ``block`` that leaves it (not bound by a loop inside the block)."""
    for s in block:
        if isinstance(s, (Break, Continue)):
            return True
        if isinstance(s, If) and _free_jump(s.then + s.orelse):
            return True
    return False


def segment(block: list[Stmt], counter: list[int]) -> list:
    """Split a block into collective statements and :class:`LaneRun` s (in program order)."""
    out: list = []
    run: list[Stmt] = []

    def flush() -> None:
        if run:
            counter[0] += 1
            lr = LaneRun(list(run), counter[0])
            lr.has_return = any(isinstance(x, Return) for x in walk(lr.stmts))
            out.append(lr)
            run.clear()

    for s in block:
        if is_collective(s):
            flush()
            out.append(s)
        else:
            run.append(s)
    flush()
    return out


def stmt_vars(s: Stmt) -> list:
    let = _let_of(s)
    if let is not None:
        return [*let.args, *let.dsts]
    if isinstance(s, Assign):
        return [s.dst, s.src]
    if isinstance(s, AdjAssign):
        return [s.assign.dst, s.assign.src]
    if isinstance(s, If):
        return [s.cond]
    if isinstance(s, For):
        return [s.var, s.start, s.stop, s.step]
    if isinstance(s, While):
        return [s.cond]
    if isinstance(s, Push):
        return list(s.values)
    if isinstance(s, Pop):
        return list(s.vars)
    if isinstance(s, Repeat):
        return [s.count]
    return []


def analyse(blocks: list[list[Stmt]], locals_: list[Var], block_dim: int) -> tuple[Model, list[list]]:
    """Segment each block (the kernel body; or the replay and the reverse sweep) and decide variable storage."""
    counter = [0]
    lane_arrays: set[int] = set()
    uniform: set[int] = set()
    lane_returns = False
    refs: dict[int, set] = {}  # var id -> ids of the lane runs that reference it ("c": block-level code)
    in_loop_runs: set[int] = set()  # lane runs inside a block-level loop (executed repeatedly)

    def note(v, where) -> None:
        if isinstance(v, Var) and v.kind is not VarKind.PARAM:
            refs.setdefault(v.id, set()).add(where)

    def visit(items: list, looped: bool) -> list:
        nonlocal lane_returns
        rendered = []
        for item in items:
            if isinstance(item, LaneRun):
                for s in walk(item.stmts):
                    for v in stmt_vars(s):
                        note(v, item.id)
                lane_returns |= item.has_return
                if looped:
                    in_loop_runs.add(item.id)
                rendered.append(item)
                continue
            s = item
            if isinstance(s, If):
                note(s.cond, "c")
                rendered.append((s, visit(segment(s.then, counter), looped),
                                 visit(segment(s.orelse, counter), looped)))
            elif isinstance(s, For):
                uniform.add(s.var.id)
                for v in (s.start, s.stop, s.step):
                    note(v, "c")
                rendered.append((s, visit(segment(s.body, counter), True)))
            elif isinstance(s, While):
                note(s.cond, "c")
                rendered.append((s, visit(segment(s.cond_body, counter), True),
                                 visit(segment(s.body, counter), True)))
            elif isinstance(s, Repeat):
                note(s.count, "c")
                rendered.append((s, visit(segment(s.body, counter), True)))
            else:
                for v in stmt_vars(s):
                    note(v, "c")
                rendered.append(s)
        return rendered

    plans = [visit(segment(b, counter), False) for b in blocks]
    every = [s for b in blocks for s in walk(b)]
    tiles = {v.id for v in locals_ if isinstance(v.type, T.TileType)}
    for s in every:
        for v in stmt_vars(s):
            if isinstance(v, Var) and isinstance(v.type, T.TileType):
                tiles.add(v.id)
    uniform |= tiles
    mutable = {v.id for v in locals_}
    for vid, where in refs.items():
        if vid in uniform:
            continue
        if len(where) > 1 or "c" in where:
            lane_arrays.add(vid)
        elif vid in mutable and next(iter(where)) in in_loop_runs:
            lane_arrays.add(vid)  # per-lane state carried across iterations of a block-level loop
    return Model(block_dim, frozenset(lane_arrays), frozenset(uniform), lane_returns), plans


def uses_tiles(fn) -> bool:
    """Whether a kernel uses tile ops (and so runs as blocks of block_dim lanes)."""
    for s in walk(fn.body):
        if isinstance(s, Let) and (s.call.op.domain == "tile" or any(isinstance(d.type, T.TileType) for d in s.dsts)):
            return True
    return False
