"""``wp.adjoint[...]`` inside a ``@wp.func_grad`` body (lowered into the custom call's gradient block).

- ``wp.adjoint[x] += v`` (or ``-=``): the adjoint of input ``x`` accumulates ``v``;
- ``wp.adjoint[x.field] += v``, ``wp.adjoint[x.vec][0] += v``, ``wp.adjoint[m][i, j] += v``: one field or component of
  the adjoint of a struct / vector / matrix input (a zero value of the input's type with that part set is added);
- ``wp.adjoint[a][i] += v`` for an array input ``a``: an atomic add into ``a``'s gradient array;
- ``wp.adjoint[a]`` read as a value for an array input: a view of its gradient array (``tile_load`` /
  ``tile_atomic_add`` of it, as Warp's custom tile gradients do);
- ``wp.adjoint[x] = v``, ``wp.adjoint[x.vec].y = v``: the adjoint of input ``x`` (or that part of it) is set to ``v``;
  ``wp.adjoint[a][i].x = v`` / ``wp.adjoint[a][i] = v``: a store into ``a``'s gradient array (Warp's plain adjoint
  stores).
"""

from __future__ import annotations

import ast

from ..ir import types as T
from ..ir.nodes import Const


def split(lw, target: ast.AST):
    """For an assignment target containing ``wp.adjoint[key]``: (the ``wp.adjoint[key]`` node, the accessors applied
    to it, outermost last); None when the target does not go through ``wp.adjoint``."""
    if not any(isinstance(n, ast.Attribute) and n.attr == "adjoint" or isinstance(n, ast.Name) and n.id == "adjoint"
               for n in ast.walk(target)):
        return None  # the common case, decided without evaluating anything
    outer = []
    node = target
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Subscript) and lw._is_adjoint_marker(node.value):
            return node, list(reversed(outer))
        outer.append(node)
        node = node.value
    return None


def _key_path(lw, key: ast.AST, targets: dict):
    """The input name at the root of ``key`` and the accessors from it to ``key`` (innermost first)."""
    chain = []
    node = key
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        chain.append(node)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in targets:
        raise lw.error("wp.adjoint[...] takes one of the forward func's parameter names (or a field or component "
                       "of one)", key, hint="e.g. wp.adjoint[x] += adj_ret * y")
    return node.id, list(reversed(chain))


def _rebuild(root: ast.expr, accessors: list, store: bool) -> ast.expr:
    """``root`` with the accessors applied in order (the last one a store target when ``store``)."""
    node = root
    for k, acc in enumerate(accessors):
        ctx = ast.Store() if store and k == len(accessors) - 1 else ast.Load()
        if isinstance(acc, ast.Attribute):
            node = ast.copy_location(ast.Attribute(value=node, attr=acc.attr, ctx=ctx), acc)
        else:
            node = ast.copy_location(ast.Subscript(value=node, slice=acc.slice, ctx=ctx), acc)
    return node


def _targets(lw, node):
    targets = lw.frame.adjoint_targets
    if targets is None:
        raise lw.error("wp.adjoint[...] can only be used inside a @wp.func_grad function", node)
    return targets


def accumulate(lw, node: ast.AugAssign) -> None:
    """``wp.adjoint[...] ... += value`` (or ``-=``)."""
    targets = _targets(lw, node.target)
    marker, outer = split(lw, node.target)
    name, inner = _key_path(lw, marker.slice, targets)
    path = inner + outer
    if not isinstance(node.op, (ast.Add, ast.Sub)):
        raise lw.error("only wp.adjoint[x] += ... (or -=) is supported", node)
    target = targets[name]
    if isinstance(target.type, T.ArrayType):
        _array_add(lw, node, target, name, path)
        return
    if not T.is_differentiable_type(target.type):
        return
    if not path:
        value = lw.operand(lw.visit(node.value), node.value, want=target.type)
        if isinstance(node.op, ast.Sub):
            value = lw.op("neg", [value], node=node)
        if value.type != target.type:
            raise lw.error(f"wp.adjoint[{name}] has type {target.type}, the value has type {value.type}", node)
        lw.op("adj_accum", [target, value], node=node)
        return
    # a part of the adjoint: build a zero value of the input's type, update that part as written, add it whole
    lw._pinned += 1
    hidden = f"adjoint.{lw._pinned}"  # no Python name contains '.'
    zero = lw.op("construct", [], attrs=(target.type,), node=node) if not isinstance(target.type, T.ScalarType) \
        else Const(0.0, target.type)
    lw.frame.mutable.add(hidden)
    lw.bind(hidden, zero, node)
    lhs = _rebuild(ast.copy_location(ast.Name(id=hidden, ctx=ast.Load()), marker), path, store=True)
    lw.visit(ast.copy_location(ast.AugAssign(target=lhs, op=node.op, value=node.value), node))
    lw.op("adj_accum", [target, lw.read_name(hidden, node)], node=node)


def assign(lw, target: ast.AST, value) -> None:
    """``wp.adjoint[...] ... = value``: a plain store into the adjoint (of an input, or a gradient array's element)."""
    targets = _targets(lw, target)
    marker, outer = split(lw, target)
    name, inner = _key_path(lw, marker.slice, targets)
    path = inner + outer
    inp = targets[name]
    lw._pinned += 1
    hidden = f"adjoint.{lw._pinned}"  # no Python name contains '.'
    if isinstance(inp.type, T.ArrayType):
        if not path or not isinstance(path[0], ast.Subscript):
            raise lw.error(f"wp.adjoint[{name}] of an array is stored element by element: wp.adjoint[{name}][i] = "
                           "value", target)
        if not T.is_differentiable_type(inp.type.dtype):
            return
        lw.frame.env[hidden] = lw.op("adj_array", [inp], node=target)  # the gradient array (a view)
        lw.store(_rebuild(ast.copy_location(ast.Name(id=hidden, ctx=ast.Load()), marker), path, store=True), value)
        return
    if not T.is_differentiable_type(inp.type):
        return
    if not path:
        new = lw.operand(value, target, want=inp.type)
        if new.type != inp.type:
            raise lw.error(f"wp.adjoint[{name}] has type {inp.type}, the value has type {new.type}", target)
    else:  # the current adjoint with that part replaced
        lw.frame.mutable.add(hidden)
        lw.bind(hidden, lw.op("adj_value", [inp], node=target), target)
        lw.store(_rebuild(ast.copy_location(ast.Name(id=hidden, ctx=ast.Load()), marker), path, store=True), value)
        new = lw.read_name(hidden, target)
    lw.op("adj_reset", [inp], node=target)
    lw.op("adj_accum", [inp, new], node=target)


def _array_add(lw, node: ast.AugAssign, arr, name: str, path: list) -> None:
    if not path or not isinstance(path[0], ast.Subscript):
        raise lw.error(f"wp.adjoint[{name}] of an array takes one element: wp.adjoint[{name}][i] += value", node.target)
    if not T.is_differentiable_type(arr.type.dtype):
        return
    if len(path) > 1:  # a component of an element (wp.adjoint[a][i].x += v): an atomic add into the gradient array
        lw._pinned += 1
        hidden = f"adjoint.{lw._pinned}"
        lw.frame.env[hidden] = lw.op("adj_array", [arr], node=node)
        lhs = _rebuild(ast.copy_location(ast.Name(id=hidden, ctx=ast.Load()), node.target), path, store=True)
        lw.visit(ast.copy_location(ast.AugAssign(target=lhs, op=node.op, value=node.value), node))
        return
    idx = lw.indices(path[0].slice)
    if len(idx) != arr.type.ndim:
        raise lw.error(f"wp.adjoint[{name}] of a {arr.type.ndim}-D array needs {arr.type.ndim} indices, got {len(idx)}",
                       path[0])
    value = lw.operand(lw.visit(node.value), node.value, want=arr.type.dtype)
    if isinstance(node.op, ast.Sub):
        value = lw.op("neg", [value], node=node)
    if value.type != arr.type.dtype:
        raise lw.error(f"wp.adjoint[{name}] holds {arr.type.dtype}, the value has type {value.type}", node)
    lw.op("adj_grad_add", [arr, *idx, value], node=node)


def read(lw, node: ast.Subscript):
    """``wp.adjoint[a]`` as a value: the gradient array of array input ``a``."""
    targets = _targets(lw, node)
    key = node.slice
    if not isinstance(key, ast.Name) or key.id not in targets or not isinstance(targets[key.id].type, T.ArrayType):
        raise lw.error("wp.adjoint[...] is read as a value only for an array input (its gradient array); the adjoint "
                       "of other inputs is accumulated with wp.adjoint[x] += ...", node)
    return lw.op("adj_array", [targets[key.id]], node=node)
