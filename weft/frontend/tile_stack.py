"""``wp.tile_stack`` and its push / pop / clear / count, written with existing tile ops (no native code of their own).

A stack is two tiles held by the variable's name: ``data`` (capacity + 1 elements: the last one takes the writes of
lanes that store nothing) and ``count`` (one int32). A push ranks the contributing lanes with an exclusive scan of
their flags, so lane ``k``'s value goes to slot ``count + rank`` while there is room (slots in lane order); a pop
hands lane ``k`` (ranked over the running lanes) slot ``count - 1 - rank``, so later pushes come out first. Every
lane of the block must reach each call (Warp's rule). The calls rebind the stack variable, so they are accepted in
straight-line kernel code only (not inside a loop or branch, not through a @wp.func parameter).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..errors import KernelTypeError, KernelValueError
from ..ir import types as T
from ..ir.nodes import Const, If, Var, VarKind
from ..ops.tile import TileUpdate
from ..types.mapping import to_ir
from ..typing.resolve import Weak


@dataclass(frozen=True)
class TileStack:
    """The value of a stack variable in kernel code."""

    data: Var
    count: Var
    capacity: int

    @property
    def dtype(self) -> T.Type:
        return self.data.type.dtype


def _i32(v: int) -> Const:
    return Const(v, T.INT32)


def _select(lw, cond, a, b, node):
    result = lw.b.new_var(a.type, "stack_sel", VarKind.MUTABLE)
    with lw.b.nested() as then:
        lw.b.assign(result, a)
    with lw.b.nested() as orelse:
        lw.b.assign(result, b)
    lw.b.emit(If(cond, then, orelse, lw.b.loc))
    return lw.op("copy", [result], node=node)


def _keyword_or_arg(node: ast.Call, k: int, name: str):
    if k < len(node.args):
        return node.args[k]
    return next((kw.value for kw in node.keywords if kw.arg == name), None)


def create(lw, node: ast.Call, form) -> TileStack:
    """``wp.tile_stack(capacity, dtype)``."""
    lw.uses_tiles = True
    cap_node, dtype_node = _keyword_or_arg(node, 0, "capacity"), _keyword_or_arg(node, 1, "dtype")
    if cap_node is None or dtype_node is None:
        raise lw.error("wp.tile_stack() takes capacity and dtype", node)
    cap = lw.eval_static(cap_node)
    if isinstance(cap, Weak):
        cap = cap.value
    if not isinstance(cap, int) or isinstance(cap, bool):
        raise lw.error(f"wp.tile_stack() capacity must be a positive integer (a compile-time int constant), got "
                       f"{cap!r}", cap_node, kind=KernelTypeError)
    if cap <= 0:
        raise lw.error(f"wp.tile_stack() capacity must be a positive integer, got {cap}", cap_node,
                       kind=KernelValueError)
    dtype = to_ir(lw.eval_static(dtype_node))
    if not isinstance(dtype, (T.ScalarType, T.VectorType, T.MatrixType, T.StructType)):
        raise lw.error(f"wp.tile_stack() holds scalars, vectors, matrices or structs, not {dtype}", dtype_node,
                       kind=KernelTypeError)
    data = lw.op("tile_zeros", [], attrs=(T.TileType(dtype, (cap + 1,)),), node=node)
    count = lw.op("tile_zeros", [], attrs=(T.TileType(T.INT32, (1,)),), node=node)
    return TileStack(data, count, cap)


def _stack(lw, node: ast.Call, fname: str) -> tuple[str, TileStack]:
    target = _keyword_or_arg(node, 0, "s")
    if not isinstance(target, ast.Name):
        raise lw.error(f"wp.{fname}() takes a tile stack variable as its first argument", node)
    s = lw.frame.env.get(target.id)
    if not isinstance(s, TileStack):
        raise lw.error(f"wp.{fname}() expects a tile stack from wp.tile_stack(), got '{target.id}'", target,
                       kind=KernelTypeError)
    return target.id, s


def _rebind(lw, name: str, s: TileStack, node, fname: str) -> None:
    if len(lw.b.blocks) != 1:
        raise lw.error(f"wp.{fname}() inside a loop or branch is not supported by weft's tile stacks", node,
                       hint="call it in the kernel's straight-line code (every lane must reach it anyway)")
    lw.frame.env[name] = s


def _lane_rank(lw, flag, node):
    """Each lane's rank among the lanes whose flag (an int32 0 / 1) is set, and the tile of all flags."""
    flags = lw.op("tile", [flag], attrs=(T.TileType(T.INT32, (lw.options.get("block_dim") or 256,)),), node=node)
    ranks = lw.op("tile_scan_exclusive", [flags], node=node)
    return lw.op("untile", [ranks], node=node), flags


def _clamped_count(lw, s: TileStack, delta, node, floor: bool):
    """count + sum(delta) clamped to [0, capacity]."""
    from .tiles import map_body

    total = lw.op("add", [s.count, lw.op("tile_sum", [delta], node=node)], node=node)
    bound = _i32(0 if floor else s.capacity)
    body = map_body(lw, [T.INT32], node, lambda lw_, p: lw_.op("max" if floor else "min", [p[0], bound], node=node),
                    "tile_stack")
    return lw.op("tile_map", [total], attrs=(body,), node=node)  # block-level: no lane's value is read


def push(lw, node: ast.Call, form):
    """``wp.tile_stack_push(s, value, has_value)``: the slot the lane's value went to, or -1."""
    name, s = _stack(lw, node, "tile_stack_push")
    v_node, h_node = _keyword_or_arg(node, 1, "value"), _keyword_or_arg(node, 2, "has_value")
    if v_node is None or h_node is None:
        raise lw.error("wp.tile_stack_push() takes s, value and has_value", node)
    mismatch = lw.error(f"wp.tile_stack_push(): the value's type does not match the stack's {s.dtype}", v_node,
                        kind=KernelTypeError)
    raw = lw.visit(v_node)
    if isinstance(raw, Weak) and isinstance(raw.value, float) and not isinstance(s.dtype, T.ScalarType) or \
            isinstance(raw, Weak) and isinstance(raw.value, float) and s.dtype.is_int:
        raise mismatch
    value = lw.operand(raw, v_node, want=s.dtype)
    if value.type != s.dtype:
        raise mismatch
    has = lw.condition(lw.visit(h_node), h_node)
    flag = _select(lw, has, _i32(1), _i32(0), node)
    rank, flags = _lane_rank(lw, flag, node)
    slot = lw.op("add", [lw.op("tile_extract", [s.count, _i32(0)], node=node), rank], node=node)
    room = lw.op("lt", [slot, _i32(s.capacity)], node=node)
    ok = _select(lw, has, room, Const(False, T.BOOL), node)
    where = _select(lw, ok, slot, _i32(s.capacity), node)  # lanes without a slot write the spare element
    data = lw.op("tile_update", [s.data, where, value], attrs=(TileUpdate.SET,), node=node)
    count = _clamped_count(lw, s, flags, node, floor=False)
    _rebind(lw, name, TileStack(data, count, s.capacity), node, "tile_stack_push")
    return _select(lw, ok, slot, _i32(-1), node)


def pop(lw, node: ast.Call, form):
    """``value, slot = wp.tile_stack_pop(s)``: slot -1 (and a zero value) when no element is left for the lane."""
    name, s = _stack(lw, node, "tile_stack_pop")
    rank, ones = _lane_rank(lw, _i32(1), node)
    top = lw.op("sub", [lw.op("tile_extract", [s.count, _i32(0)], node=node), _i32(1)], node=node)
    slot = lw.op("sub", [top, rank], node=node)
    ok = lw.op("ge", [slot, _i32(0)], node=node)
    read = lw.op("tile_extract", [s.data, _select(lw, ok, slot, _i32(s.capacity), node)], node=node)
    zero = lw.op("construct", [], attrs=(s.dtype,), node=node) if not isinstance(s.dtype, T.ScalarType) else \
        Const(0 if s.dtype.is_int else 0.0, s.dtype)
    value = _select(lw, ok, read, zero, node)
    negative = lw.op("neg", [ones], node=node)
    count = _clamped_count(lw, s, negative, node, floor=True)
    _rebind(lw, name, TileStack(s.data, count, s.capacity), node, "tile_stack_pop")
    return value, _select(lw, ok, slot, _i32(-1), node)


def clear(lw, node: ast.Call, form):
    """``wp.tile_stack_clear(s)``."""
    name, s = _stack(lw, node, "tile_stack_clear")
    count = lw.op("tile_zeros", [], attrs=(T.TileType(T.INT32, (1,)),), node=node)
    _rebind(lw, name, TileStack(s.data, count, s.capacity), node, "tile_stack_clear")


def count(lw, node: ast.Call, form):
    """``wp.tile_stack_count(s)``."""
    _name, s = _stack(lw, node, "tile_stack_count")
    return lw.op("tile_extract", [s.count, _i32(0)], node=node)


def scatter_add(lw, node: ast.Call, form):
    """``wp.tile_scatter_add(a, i[, j, k, l], value, has_value, atomic=True)``: every lane whose has_value is true adds
    its value to element (i, ...) of tile ``a`` (in place; lanes in order, collisions all land). A lane without a
    value adds a zero at element 0 (struct fields that do not add up keep their values), so its indices may be
    anything."""
    _scatter(lw, node, "tile_scatter_add", TileUpdate.ADD, atomic=True)


def scatter_masked(lw, node: ast.Call, form):
    """``wp.tile_scatter_masked(a, i[, j, k, l], value, has_value)``: every lane whose has_value is true writes its
    value into element (i, ...) of tile ``a`` (in place; each element written by at most one lane, as Warp requires;
    lanes in order here, so the last one wins). A lane without a value writes nothing (its first index becomes -1,
    which ``tile_update``'s MASKED mode skips), so its indices may be anything. Gradients: the value's adjoint takes
    the element's, which is then cleared (as a set)."""
    _scatter(lw, node, "tile_scatter_masked", TileUpdate.MASKED, atomic=False)


def _scatter(lw, node: ast.Call, fname: str, mode: TileUpdate, atomic: bool) -> None:
    if not node.args:
        raise lw.error(f"wp.{fname}() takes a tile, its indices, value and has_value", node)
    target = node.args[0]
    t = lw.operand(lw.visit(target), target)
    if not isinstance(t.type, T.TileType):
        raise lw.error(f"wp.{fname}(): a must be a tile, got {t.type}", target, kind=KernelTypeError)
    nd = len(t.type.shape)
    names = ["i", "j", "k", "l"][:nd] + ["value", "has_value"] + (["atomic"] if atomic else [])
    if len(node.args) - 1 > len(names):
        raise lw.error(f"wp.{fname}() on a {nd}-D tile takes {', '.join(names)}; got {len(node.args) - 1} "
                       f"arguments after the tile", node)
    bound = dict(zip(names, node.args[1:]))
    for kw in node.keywords:
        if kw.arg not in names or kw.arg in bound:
            raise lw.error(f"wp.{fname}() got an unexpected or repeated argument '{kw.arg}'", kw.value)
        bound[kw.arg] = kw.value
    required = names[:nd + 2]
    missing = [n for n in required if n not in bound]
    if missing:
        raise lw.error(f"wp.{fname}() on a {nd}-D tile needs {', '.join(required)}; missing "
                       f"{', '.join(missing)}", node)
    if "atomic" in bound:
        lw.eval_static(bound["atomic"])  # a compile-time flag; collisions all land here either way
    has = lw.condition(lw.visit(bound["has_value"]), bound["has_value"])
    dtype = t.type.dtype
    value = lw.operand(lw.visit(bound["value"]), bound["value"], want=dtype)
    if value.type != dtype:
        raise lw.error(f"wp.{fname}(): the value's type {value.type} does not match the tile's {dtype}",
                       bound["value"], kind=KernelTypeError)
    if mode is TileUpdate.ADD:
        zero = lw.op("construct", [], attrs=(dtype,), node=node) if not isinstance(dtype, T.ScalarType) else \
            Const(0 if dtype.is_int else 0.0, dtype)
        value = _select(lw, has, value, zero, node)
    idx = []
    for k, n in enumerate(names[:nd]):
        i = lw.operand(lw.visit(bound[n]), bound[n], want=T.INT32)
        if not (isinstance(i.type, T.ScalarType) and i.type.is_int):
            raise lw.error(f"wp.{fname}(): index {n} must be an integer, got {i.type}", bound[n])
        if i.type != T.INT32:
            i = lw.op("cast", [i], attrs=(T.INT32,), node=bound[n])
        skip = -1 if mode is TileUpdate.MASKED and k == 0 else 0
        idx.append(_select(lw, has, i, _i32(skip), node))
    updated = lw.op("tile_update", [t, *idx, value], attrs=(mode,), node=node)
    lw.store(target, updated)
