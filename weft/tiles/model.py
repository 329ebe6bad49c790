"""The block execution model of tile kernels on the CPU.

A block of ``block_dim`` lanes runs on one CPU thread. The kernel body is split into *collective* statements
(tile ops, and control flow that contains them), executed once per block, and *lane runs*: maximal sequences of
ordinary SIMT statements, executed in a loop over the lanes. Values that live across a lane run (or are read by a
collective statement) are stored per lane (``T v[block_dim]``); values used only inside one run stay scalars.
Collective statements read per-lane operands (offsets, loop bounds, conditions) from lane 0: as on a GPU, they
must be the same in every lane of a block.

This gives results identical to a GPU launch with the same ``block_dim``, including code that depends on the
lane index, and keeps tile operations whole-tile loops the compiler can vectorise.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..ir import types as T
from ..ir.nodes import Assign, Break, Continue, For, If, Let, Return, Stmt, Var, VarKind, While, walk
from ..ops.tile import COLLECTIVE


@dataclass(eq=False)
class LaneRun:
    """A sequence of SIMT statements executed once per lane."""

    stmts: list[Stmt]
    id: int
    has_return: bool = False


@dataclass
class Model:
    """Where each statement runs and how each variable is stored."""

    block_dim: int
    lane_arrays: set[int] = field(default_factory=set)  # var ids stored per lane
    uniform: set[int] = field(default_factory=set)  # var ids held once per block (tiles, collective loop indices)
    lane_returns: bool = False  # some lane may leave the kernel early (a per-lane active mask is needed)


def is_collective_let(s: Let) -> bool:
    if s.call.op.name in COLLECTIVE:
        return True
    return any(isinstance(d.type, T.TileType) for d in s.dsts)


def is_collective(s: Stmt) -> bool:
    """Whether ``s`` must run once per block (it contains a tile op or a jump out of a collective loop)."""
    if isinstance(s, Let):
        return is_collective_let(s)
    if isinstance(s, Assign):
        return isinstance(s.dst.type, T.TileType)
    if isinstance(s, (Break, Continue)):
        return True  # only reached here when its loop is collective; see segment()
    if isinstance(s, If):
        return _contains_collective(s.then) or _contains_collective(s.orelse) or _free_jump(s.then + s.orelse)
    if isinstance(s, For):
        return _contains_collective(s.body)
    if isinstance(s, While):
        return _contains_collective(s.cond_body) or _contains_collective(s.body)
    return False


def _contains_collective(block: list[Stmt]) -> bool:
    for s in walk(block):
        if isinstance(s, Let) and is_collective_let(s):
            return True
        if isinstance(s, Assign) and isinstance(s.dst.type, T.TileType):
            return True
    return False


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
        if isinstance(s, Return) or is_collective(s):  # a return reached by the whole block ends the block
            flush()
            out.append(s)
        else:
            run.append(s)
    flush()
    return out


def analyse(body: list[Stmt], locals_: list[Var], block_dim: int) -> tuple[Model, list]:
    """Segment the body and decide the storage of every variable."""
    counter = [0]
    model = Model(block_dim)
    refs: dict[int, set] = {}  # var id -> ids of the lane runs that reference it ("c" for collective code)

    def note(v, where) -> None:
        if isinstance(v, Var) and v.kind is not VarKind.PARAM:
            refs.setdefault(v.id, set()).add(where)

    def visit_run(run: LaneRun) -> None:
        for s in walk(run.stmts):
            for v in _stmt_vars(s):
                note(v, run.id)
        if run.has_return:
            model.lane_returns = True

    def visit(items: list) -> list:
        rendered = []
        for item in items:
            if isinstance(item, LaneRun):
                visit_run(item)
                rendered.append(item)
                continue
            s = item
            if isinstance(s, Let):
                for v in list(s.args) + list(s.dsts):
                    note(v, "c")
                rendered.append(s)
            elif isinstance(s, Assign):
                note(s.dst, "c")
                note(s.src, "c")
                rendered.append(s)
            elif isinstance(s, If):
                note(s.cond, "c")
                then = visit(segment(s.then, counter))
                orelse = visit(segment(s.orelse, counter))
                rendered.append((s, then, orelse))
            elif isinstance(s, For):
                model.uniform.add(s.var.id)
                for v in (s.start, s.stop, s.step):
                    note(v, "c")
                rendered.append((s, visit(segment(s.body, counter))))
            elif isinstance(s, While):
                note(s.cond, "c")
                rendered.append((s, visit(segment(s.cond_body, counter)), visit(segment(s.body, counter))))
            else:
                rendered.append(s)
        return rendered

    plan = visit(segment(body, counter))
    tiles = {v.id for v in locals_ if isinstance(v.type, T.TileType)}
    for s in walk(body):
        for v in _stmt_vars(s):
            if isinstance(v, Var) and isinstance(v.type, T.TileType):
                tiles.add(v.id)
    model.uniform |= tiles
    mutable = {v.id for v in locals_}
    for vid, where in refs.items():
        if vid in model.uniform:
            continue
        if len(where) > 1 or "c" in where or vid in mutable and len(where) != 1:
            model.lane_arrays.add(vid)
    # mutable locals assigned in a lane run inside a collective loop keep per-lane state across iterations
    for v in locals_:
        if v.id not in model.uniform and v.id in refs and v.id not in model.lane_arrays and _in_collective_loop(v, plan):
            model.lane_arrays.add(v.id)
    return model, plan


def _in_collective_loop(v: Var, plan: list, inside: bool = False) -> bool:
    for item in plan:
        if isinstance(item, LaneRun):
            if inside and any(v in _stmt_vars(s) for s in walk(item.stmts)):
                return True
        elif isinstance(item, tuple):
            s = item[0]
            loop = isinstance(s, (For, While))
            for sub in item[1:]:
                if _in_collective_loop(v, sub, inside or loop):
                    return True
    return False


def _stmt_vars(s: Stmt) -> list:
    if isinstance(s, Let):
        return [*s.args, *s.dsts]
    if isinstance(s, Assign):
        return [s.dst, s.src]
    if isinstance(s, If):
        return [s.cond]
    if isinstance(s, For):
        return [s.var, s.start, s.stop, s.step]
    if isinstance(s, While):
        return [s.cond]
    return []


def uses_tiles(fn) -> bool:
    """Whether a kernel uses tile ops (and so runs as blocks of block_dim lanes)."""
    for s in walk(fn.body):
        if isinstance(s, Let) and (s.call.op.domain == "tile" or any(isinstance(d.type, T.TileType) for d in s.dsts)):
            return True
    return False
