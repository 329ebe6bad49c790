"""Geometry query iteration in kernel code.

``while wp.hash_grid_query_next(query, index): ...`` updates ``query`` and ``index`` in place, as in Warp. The IR
is functional, so the call lowers to ``ok, query', index' = hash_grid_query_next(query, index)`` and rebinds both
names (the binding analysis makes them mutable through ``IN_PLACE_CALLS``). ``for index in wp.hash_grid_query(...)``
lowers to the same loop around a hidden query variable.
"""

from __future__ import annotations

import ast

from ..ir import types as T
from ..ir.nodes import Const, VarKind, While
from ..ops.geometry import ITERATORS
from .analysis import IN_PLACE_CALLS

#: the ``*_next`` builtins: the query and the index argument are updated in place
NEXT_CALLS = ("hash_grid_query_next", "mesh_query_aabb_next", "mesh_query_next", "bvh_query_next")
for _name in NEXT_CALLS:
    IN_PLACE_CALLS[_name] = (0, 1)


def _next_handler(opname: str):
    def handler(lw, node: ast.Call):
        if node.keywords or len(node.args) not in (2, 3):
            raise lw.error(f"wp.{opname}() takes the query and an index variable", node)
        query_node, index_node = node.args[0], node.args[1]
        for arg, what in ((query_node, "query"), (index_node, "index")):
            if not isinstance(arg, (ast.Name, ast.Attribute, ast.Subscript)):
                raise lw.error(f"the {what} argument of wp.{opname}() must be a variable (it is updated in place)",
                               arg, hint="e.g. index = int(0) before the loop")
        query = lw.visit(query_node)
        index = lw.operand(lw.visit(index_node), index_node, want=T.INT32)
        extra = [lw.visit(a) for a in node.args[2:]]
        ok, new_query, new_index = lw.op(opname, [query, index, *extra], node=node)
        lw.store(query_node, new_query)
        lw.store(index_node, new_index)
        return ok
    return handler


SPECIAL_NEXT = {name: _next_handler(name) for name in NEXT_CALLS}


def iterator_of(lw, it: ast.AST) -> str | None:
    """The builtin name when ``it`` is a call of an iterating query (``wp.hash_grid_query(...)``)."""
    if not isinstance(it, ast.Call):
        return None
    callee = lw.eval_static_or_none(it.func)
    name = getattr(callee, "_wp_kernel_builtin_", None)
    return name if name in ITERATORS else None


def lower_query_for(lw, node: ast.For, name: str) -> None:
    """``for index in wp.<query>(...)``: a while loop advancing a hidden query variable."""
    if not isinstance(node.target, ast.Name):
        raise lw.error("the loop variable of a query loop must be a single name", node.target)
    query = lw.op("copy", [lw.visit(node.iter)], node=node.iter)
    state = lw.b.new_var(query.type, f"{name}_state", VarKind.MUTABLE)
    lw.b.assign(state, query)
    target = node.target.id
    frame = lw.frame
    saved = frame.env.get(target)
    with lw.b.nested() as cond_body:
        current = lw.op("copy", [state], node=node.iter)
        ok, advanced, index = lw.op(ITERATORS[name], [current, Const(-1, T.INT32)], node=node.iter)
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
