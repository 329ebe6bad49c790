"""Geometry query iteration in kernel code.

``while wp.hash_grid_query_next(query, index): ...`` updates ``query`` and ``index`` in place, as in Warp. The IR
is functional, so the call lowers to ``ok, query', index' = hash_grid_query_next(query, index)`` and rebinds both
names (the binding analysis makes them mutable: the op's ``Syntax.updates``). ``for index in wp.hash_grid_query(...)``
lowers to the same loop around a hidden query variable.
"""

from __future__ import annotations

import ast
from functools import cache

from ..ir import types as T
from ..ir.nodes import Const, VarKind, While
from ..ops import registry

_INF = [Const(float("inf"), T.FLOAT32)]


def iterator_of(lw, it: ast.AST) -> str | None:
    """The ``*_next`` builtin that advances ``it`` when it iterates a query: a call of an iterating query
    (``for i in wp.hash_grid_query(...)``) or a variable holding one (``q = wp.hash_grid_query(...)``; ``for i in q``).
    """
    if isinstance(it, ast.Call):
        name = getattr(lw.eval_static_or_none(it.func), "_wp_kernel_builtin_", None)
        return registry.syntax(name).iterated_by or None if isinstance(name, str) else None
    if isinstance(it, ast.Name) and it.id in lw.frame.env:
        value = lw.frame.env[it.id]
        return _advancers().get(getattr(value, "type", None))
    return None


@cache
def _advancers() -> dict:
    """query type -> the builtin advancing it (the first parameter of every ``*_next`` that iterates a query)."""
    iterated = {op.syntax.iterated_by for op in registry.all_ops()}
    return {registry.syntax(nxt).types[0]: nxt for nxt in sorted(iterated - {""})}


def lower_query_for(lw, node: ast.For, next_name: str) -> None:
    """``for index in <query>``: a while loop advancing a hidden copy of the query with ``next_name``."""
    if not isinstance(node.target, ast.Name):
        raise lw.error("the loop variable of a query loop must be a single name", node.target)
    query = lw.op("copy", [lw.visit(node.iter)], node=node.iter)
    state = lw.b.new_var(query.type, f"{next_name}_state", VarKind.MUTABLE)
    lw.b.assign(state, query)
    target = node.target.id
    frame = lw.frame
    saved = frame.env.get(target)
    with lw.b.nested() as cond_body:
        current = lw.op("copy", [state], node=node.iter)
        extra = _INF[:len(registry.syntax(next_name).types) - 2]
        ok, advanced, index = lw.op(next_name, [current, Const(-1, T.INT32), *extra], node=node.iter)
        lw.b.assign(state, advanced)
    frame.loop_depth += 1
    was_mutable = target in frame.mutable
    try:
        with lw.b.nested() as body:
            frame.mutable.discard(target)
            frame.env[target] = index
            lw.lower_block(node.body)
    finally:
        frame.loop_depth -= 1
        if was_mutable:
            frame.mutable.add(target)
    if saved is not None:
        frame.env[target] = saved
    lw.b.emit(While(cond_body, ok, body, lw.b.loc))
