"""Storage sharing for tile values in the forward renderer: avoid copying whole tiles.

The IR is in SSA form: reading a mutable tile makes a copy, an in-place builtin (``tile_fft(a)``,
``tile_matmul(a, b, acc)``) makes a new value that is assigned back. Rendered literally, each of those copies a
whole tile (16 KB for a 64x64 float tile). This pass finds values that can share the storage of another variable:

* ``t = copy(M)`` shares ``M`` when ``t`` is used only before ``M`` is next assigned;
* ``d = op(..., t, ...)`` shares ``t`` (SSA) when ``op`` may write its result over that operand (element-wise
  ops, FFTs, the accumulator of ``tile_matmul``) and ``t`` is not used afterwards;
* ``d = op(...); ...; M = d`` writes ``d`` straight into ``M`` when ``d`` has no other use, nothing in between
  touches ``M``, and ``op`` either does not read ``M`` or may overwrite it.

It only renames storage: the backward program keeps every value (its renderer does not use this pass).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from . import types as T
from .blocks import stmt_vars, walk
from .nodes import Assign, For, If, Let, Stmt, Var, VarKind, While
from .roles import Role


def _in_place_positions(s: Let) -> frozenset[int]:
    """Operand positions whose storage the result of ``s`` may overwrite (the op record's ``in_place``)."""
    return s.call.op.in_place.positions(len(s.args))


def _is_tile(v) -> bool:
    return isinstance(v, Var) and isinstance(v.type, T.TileType)


def _refs(s: Stmt) -> set[int]:
    return {v.id for x in walk([s]) for v in stmt_vars(x) if isinstance(v, Var)}


def _assigns(s: Stmt) -> set[int]:
    return {x.dst.id for x in walk([s]) if isinstance(x, Assign)}


def _resolve(target: Mapping[int, Var], v):
    while isinstance(v, Var) and v.id in target:
        v = target[v.id]
    return v


@dataclass(frozen=True)
class AliasPlan:
    """The storage sharing decided for a tile kernel's forward body (what :func:`plan_aliases` returns): value id
    -> the variable whose storage it uses. The tile renderers read it; nothing changes it after the pass."""

    target: Mapping[int, Var]

    def resolve(self, v):
        """The variable whose storage ``v`` uses (``v`` itself when it has its own)."""
        return _resolve(self.target, v)

    def skipped(self, s: Stmt) -> bool:
        """Whether ``s`` became a copy of a value onto itself."""
        if isinstance(s, Assign):
            return self.resolve(s.dst) is self.resolve(s.src)
        if isinstance(s, Let) and s.call.op.role is Role.COPY and s.dsts:
            return self.resolve(s.dsts[0]) is self.resolve(s.args[0])
        return False


def plan_aliases(body: list[Stmt]) -> AliasPlan:
    """The alias analysis of a tile kernel's forward body, as a frozen plan."""
    return AliasPlan(MappingProxyType(dict(_AliasSearch(body).target)))


class _AliasSearch:
    """The pass itself: walks the body and records which values may share storage."""

    def __init__(self, body: list[Stmt]):
        self.target: dict[int, Var] = {}
        self.uses: dict[int, int] = {}
        for s in walk(body):
            for v in stmt_vars(s):
                if isinstance(v, Var):
                    self.uses[v.id] = self.uses.get(v.id, 0) + 1
        for s in walk(body):  # definitions count once in stmt_vars; count uses only
            if isinstance(s, Let):
                for d in s.dsts:
                    self.uses[d.id] -= 1
            elif isinstance(s, Assign):
                self.uses[s.dst.id] -= 1
        self.visit(body)

    def resolve(self, v):
        return _resolve(self.target, v)

    def visit(self, block: list[Stmt]) -> None:
        for s in block:
            if isinstance(s, If):
                self.visit(s.then)
                self.visit(s.orelse)
            elif isinstance(s, For):
                self.visit(s.body)
            elif isinstance(s, While):
                self.visit(s.cond_body)
                self.visit(s.body)
        for idx, s in enumerate(block):
            if isinstance(s, Let) and s.call.op.role is Role.COPY and _is_tile(s.dsts[0]) and _is_tile(s.args[0]):
                self.copy_alias(block, idx, s)
        for idx, s in enumerate(block):
            if isinstance(s, Let) and s.dsts and _is_tile(s.dsts[0]) and s.dsts[0].id not in self.target:
                self.operand_alias(block, idx, s)
        for idx, s in enumerate(block):
            if isinstance(s, Assign) and _is_tile(s.dst) and _is_tile(s.src):
                self.assign_alias(block, idx, s)

    def copy_alias(self, block, idx, s: Let) -> None:
        src, t = s.args[0], s.dsts[0]
        if src.kind is not VarKind.MUTABLE:
            return
        end = next((j for j in range(idx + 1, len(block)) if src.id in _assigns(block[j])), len(block))
        if end < len(block):
            later = block[end]
            if t.id in _refs(later) and not (isinstance(later, Assign) and later.dst.id == src.id):
                return
        if any(t.id in _refs(x) for x in block[end + 1:]):
            return
        self.target[t.id] = src

    def operand_alias(self, block, idx, s: Let) -> None:
        d = s.dsts[0]
        for pos in sorted(_in_place_positions(s)):
            t = s.args[pos]
            if not (_is_tile(t) and t.kind is VarKind.SSA and t.type == d.type):
                continue
            base = self.resolve(t)
            if not (isinstance(base, Var) and base.kind is VarKind.SSA):
                continue  # never write over a mutable variable's value here (see assign_alias)
            if sum(1 for a in s.args if a is t) != 1 or any(self.resolve(a) is base for a in s.args if a is not t):
                continue
            defined_here = any(isinstance(x, Let) and t in x.dsts for x in block[:idx])
            if not defined_here or any(t.id in _refs(x) or base.id in _refs(x) for x in block[idx + 1:]):
                continue
            if any(v.id in self.target and self.resolve(v) is base for x in block[idx + 1:] for v in
                   stmt_vars(x) if isinstance(v, Var)):
                continue
            self.target[d.id] = t
            return

    def assign_alias(self, block, idx, s: Assign) -> None:
        m, d = s.dst, s.src
        if m.kind is not VarKind.MUTABLE or d.kind is not VarKind.SSA or d.id in self.target:
            return
        if self.uses.get(d.id, 0) != 1:
            return
        p = next((j for j in range(idx) if isinstance(block[j], Let) and d in block[j].dsts), None)
        if p is None:
            return
        producer = block[p]
        between = block[p + 1:idx]
        for x in between:
            for v in stmt_vars_deep(x):
                if isinstance(v, Var) and (v.id == m.id or self.resolve(v) is m):
                    return
        safe = _in_place_positions(producer)
        for pos, a in enumerate(producer.args):
            if isinstance(a, Var) and (a.id == m.id or self.resolve(a) is m) and pos not in safe:
                return
        self.target[d.id] = m


def stmt_vars_deep(s: Stmt) -> list:
    return [v for x in walk([s]) for v in stmt_vars(x)]
