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
from ..ops.geometry import DEFAULTS, ITERATORS, SIGNATURES, STRUCT_QUERIES
from ..typing.resolve import Weak
from .analysis import IN_PLACE_CALLS

_INF = [Const(float("inf"), T.FLOAT32)]

#: the ``*_next`` builtins: the query and the index argument are updated in place
NEXT_CALLS = ("hash_grid_query_next", "mesh_query_aabb_next", "mesh_query_next", "bvh_query_next")
for _name in NEXT_CALLS:
    IN_PLACE_CALLS[_name] = (0, 1)


def _next_handler(opname: str):
    def handler(lw, node: ast.Call):
        n_extra = len(SIGNATURES[opname]) - 2  # bvh_query_next(query, index, max_dist=inf)
        if len(node.args) not in range(2, 3 + n_extra) or any(k.arg != "max_dist" or not n_extra
                                                               for k in node.keywords):
            raise lw.error(f"wp.{opname}() takes the query and an index variable"
                           + (" (and max_dist)" if n_extra else ""), node)
        query_node, index_node = node.args[0], node.args[1]
        for arg, what in ((query_node, "query"), (index_node, "index")):
            if not isinstance(arg, (ast.Name, ast.Attribute, ast.Subscript)):
                raise lw.error(f"the {what} argument of wp.{opname}() must be a variable (it is updated in place)",
                               arg, hint="e.g. index = int(0) before the loop")
        query = lw.visit(query_node)
        index = lw.operand(lw.visit(index_node), index_node, want=T.INT32)
        extra = [lw.visit(a) for a in node.args[2:]] + [lw.visit(k.value) for k in node.keywords]
        extra = _typed(lw, opname, [query, index, *extra], node)[2:] + _INF[len(extra):n_extra]
        ok, new_query, new_index = lw.op(opname, [query, index, *extra], node=node)
        lw.store(query_node, new_query)
        lw.store(index_node, new_index)
        return ok
    return handler


#: frontend handlers of the geometry builtins (merged into calls.SPECIAL)
SPECIAL_NEXT = {name: _next_handler(name) for name in NEXT_CALLS}


def iterator_of(lw, it: ast.AST) -> str | None:
    """The ``*_next`` builtin that advances ``it`` when it iterates a query: a call of an iterating query
    (``for i in wp.hash_grid_query(...)``) or a variable holding one (``q = wp.hash_grid_query(...)``; ``for i in q``).
    """
    if isinstance(it, ast.Call):
        callee = lw.eval_static_or_none(it.func)
        return ITERATORS.get(getattr(callee, "_wp_kernel_builtin_", None))
    if isinstance(it, ast.Name) and it.id in lw.frame.env:
        value = lw.frame.env[it.id]
        return _NEXT_OF_TYPE.get(getattr(value, "type", None))
    return None


#: query type -> the builtin advancing it (the first parameter of every ``*_next``)
_NEXT_OF_TYPE = {SIGNATURES[nxt][0]: nxt for nxt in set(ITERATORS.values())}


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
        extra = _INF[:len(SIGNATURES[next_name]) - 2]
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


# ---------------------------------------------------------------------------------------------- struct results
def _bind(lw, name: str, params: tuple, defaults: tuple, node: ast.Call) -> list:
    """Positional and keyword arguments of a geometry builtin, defaults filled, literals typed."""
    required = len(params) - len(defaults)
    if len(node.args) > len(params):
        raise lw.error(f"wp.{name}() takes at most {len(params)} arguments ({', '.join(params)}), "
                       f"got {len(node.args)}", node)
    values: dict = {p: lw.visit(a) for p, a in zip(params, node.args)}
    for kw in node.keywords:
        if kw.arg not in params:
            raise lw.error(f"wp.{name}() has no parameter '{kw.arg}' (parameters: {', '.join(params)})", kw)
        if kw.arg in values:
            raise lw.error(f"wp.{name}() got argument '{kw.arg}' twice", kw)
        values[kw.arg] = lw.visit(kw.value)
    for i, p in enumerate(params):
        if p not in values:
            if i < required:
                raise lw.error(f"wp.{name}() is missing argument '{p}'", node)
            values[p] = Weak(defaults[i - required])
    return _typed(lw, name, [values[p] for p in params], node)


def _typed(lw, name: str, values: list, node) -> list:
    want = SIGNATURES.get(name, ())
    out = []
    for v, t in zip(values, want):
        o = lw.as_operand_or_weak(v, node)
        out.append(lw.operand(o, node, want=t) if isinstance(o, Weak) else o)
    return out


def _struct_query(name: str):
    st, params, defaults, legacy = STRUCT_QUERIES[name]
    fields = [f for f, _ in st.fields]
    required = len(params) - len(defaults)

    def handler(lw, node: ast.Call):
        outs_nodes = node.args[required:required + len(legacy)]
        trailing = node.args[required + len(legacy):]  # Warp's older form puts optional inputs (root) last
        if (not node.keywords and legacy and len(params) < len(node.args) <= required + len(legacy) + len(defaults)
                and all(isinstance(a, (ast.Name, ast.Attribute, ast.Subscript)) for a in outs_nodes)):
            # Warp's older form: outputs through variables, returns whether something was found
            ins = ([lw.visit(a) for a in node.args[:required]] + [lw.visit(a) for a in trailing]
                   + [Weak(d) for d in defaults[len(trailing):]])
            outs = dict(zip(fields, lw.op(name, _typed(lw, name, ins, node), node=node)))
            for target, field_name in zip(outs_nodes, legacy):
                lw.store(target, outs[field_name])
            return outs["result"]
        outs = lw.op(name, _bind(lw, name, params, defaults, node), node=node)
        result = lw.op("construct", [], attrs=(st,), node=node)
        for field_name, value in zip(fields, outs):
            result = lw.op("setfield", [result, value], attrs=(field_name,), node=node)
        return result
    return handler


def _with_defaults(name: str):
    params, defaults = DEFAULTS[name]

    def handler(lw, node: ast.Call):
        return lw.op(name, _bind(lw, name, params, defaults, node), node=node)
    return handler


SPECIAL_NEXT.update({name: _struct_query(name) for name in STRUCT_QUERIES})
SPECIAL_NEXT.update({name: _with_defaults(name) for name in DEFAULTS})
