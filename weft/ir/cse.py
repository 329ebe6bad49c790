"""Common-subexpression elimination on the typed IR (value numbering over structured blocks).

Merging repeated pure computations matters most for the backward pass: two loads of ``a[i]`` become one, so
the adjoint accumulates into ``a.grad[i]`` once instead of twice. Loads are merged only while no store or
atomic can have changed memory in between; values computed inside a branch or loop body do not leak out.
"""

from __future__ import annotations

from . import types as T
from .nodes import Assign, Const, CustomCall, For, Function, If, Let, Stmt, Var, While
from .roles import Role

# ops whose results are fresh mutable objects or read mutable state: never merged
_IMPURE = frozenset({Role.COPY, Role.FRESH})


def cse(fn: Function) -> Function:
    _Pass().block(fn.body, {}, {})
    return fn


def _value_type(t: T.Type) -> bool:
    return isinstance(t, (T.ScalarType, T.VectorType, T.MatrixType))


class _Pass:
    def __init__(self) -> None:
        self.subst: dict[int, Var] = {}

    def sub(self, x):
        if isinstance(x, Var):
            return self.subst.get(x.id, x)
        return x

    def key(self, s: Let):
        parts = []
        for a in s.args:
            if isinstance(a, Const):
                parts.append(("c", repr(a.value), a.type))
            else:
                parts.append(("v", a.id))
        try:
            attrs = hash(s.call.attrs) and s.call.attrs
        except TypeError:
            return None
        return (id(s.call.op), attrs, tuple(parts))

    def mergeable(self, s: Let) -> bool:
        op = s.call.op
        if op.side_effect or op.role in _IMPURE or not s.dsts:
            return False
        if not all(_value_type(d.type) for d in s.dsts):
            return False
        for a in s.args:
            t = a.type
            if isinstance(t, T.TileType) or (isinstance(t, T.ArrayType) and t.kind is T.ArrayKind.FIXED):
                return False
        return True

    def block(self, stmts: list[Stmt], values: dict, loads: dict) -> bool:
        """Rewrite ``stmts`` in place; returns True if the block may write memory."""
        out: list[Stmt] = []
        writes = False
        for s in stmts:
            if isinstance(s, Let):
                s.args = tuple(self.sub(a) for a in s.args)
                if s.call.op.side_effect:
                    writes = True
                    loads.clear()
                if self.mergeable(s):
                    k = self.key(s)
                    table = loads if s.call.op.role is Role.LOAD else values
                    if k is not None and k in table:
                        for d, prev in zip(s.dsts, table[k]):
                            self.subst[d.id] = prev
                        continue
                    if k is not None:
                        table[k] = s.dsts
                out.append(s)
            elif isinstance(s, Assign):
                s.src = self.sub(s.src)
                out.append(s)
            elif isinstance(s, If):
                s.cond = self.sub(s.cond)
                w1 = self.block(s.then, dict(values), dict(loads))
                w2 = self.block(s.orelse, dict(values), dict(loads))
                if w1 or w2:
                    writes = True
                    loads.clear()
                out.append(s)
            elif isinstance(s, (For, While)):
                body_writes = _writes(s.body) or (isinstance(s, While) and _writes(s.cond_body))
                inner_loads = {} if body_writes else dict(loads)
                if isinstance(s, For):
                    s.start, s.stop, s.step = self.sub(s.start), self.sub(s.stop), self.sub(s.step)
                else:
                    self.block(s.cond_body, dict(values), dict(inner_loads))
                    s.cond = self.sub(s.cond)
                self.block(s.body, dict(values), inner_loads)
                if body_writes:
                    writes = True
                    loads.clear()
                out.append(s)
            elif isinstance(s, CustomCall):
                s.inputs = tuple(self.sub(a) for a in s.inputs)
                for blk in (s.primal, s.replay, s.grad):
                    if blk:
                        self.block(blk, {}, {})
                writes = True
                loads.clear()
                out.append(s)
            else:
                out.append(s)
        stmts[:] = out
        return writes


def _writes(stmts: list[Stmt]) -> bool:
    from .nodes import walk

    return any(isinstance(s, Let) and s.call.op.side_effect for s in walk(stmts)) or \
        any(isinstance(s, CustomCall) for s in walk(stmts))
