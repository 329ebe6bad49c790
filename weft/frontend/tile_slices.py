"""NumPy-style subscripts of tiles in kernel code: ``t[a:b:c, i]`` reads (``tile_slice``), ``t[a:b, :] = src`` writes
(``tile_slice_assign``) and ``t[idx, :]`` / ``t[:, idx]`` gather along one axis through a 1-D integer tile (``tile_slice_indexed``).

Slice bounds are compile-time constants (they fix the result's shape); integer indices may be run-time values (a
negative one counts from the end, as in NumPy). A selection travels to the native functions as three ints per
dimension of the source tile: start, step, count, with step 0 marking an integer index (``weft/native/tile.h``).
Results are copies (value semantics, as every weft tile): reading ``t[1:]`` and then writing ``t`` never changes the
slice already read, which gives NumPy's answer for overlapping ``t[1:] = t[:-1]``.
"""

from __future__ import annotations

import ast

from ..errors import KernelTypeError, KernelValueError
from ..ir import types as T
from ..ir.nodes import Const, Var
from ..typing.resolve import Weak


def view_offsets_as_subscript(lw, offset: ast.AST) -> ast.AST | None:
    """``wp.tile_view(t, offset=(slice(a, b, c), i))``: the subscript ``a:b:c, i`` it stands for, or None when the
    offset holds no ``slice(...)``."""
    parts = offset.elts if isinstance(offset, ast.Tuple) else [offset]

    def as_slice(p):
        if isinstance(p, ast.Call) and lw.eval_static_or_none(p.func) is slice and not p.keywords:
            bounds = list(p.args) + [None] * (3 - len(p.args))
            if len(p.args) == 1:
                bounds = [None, p.args[0], None]
            return ast.copy_location(ast.Slice(*bounds[:3]), p)
        return None

    slices = [as_slice(p) for p in parts]
    if all(s is None for s in slices):
        return None
    elts = [s if s is not None else p for s, p in zip(slices, parts)]
    return ast.copy_location(ast.Tuple(elts=elts, ctx=ast.Load()), offset)


def is_tile_selection(tile_type: T.TileType, slice_node: ast.AST) -> bool:
    """Whether ``t[slice_node]`` selects a sub-tile (a slice, a tile index, or fewer indices than dimensions) rather
    than one element."""
    parts = slice_node.elts if isinstance(slice_node, ast.Tuple) else [slice_node]
    return any(isinstance(p, ast.Slice) for p in parts) or len(parts) < len(tile_type.shape)


def _static_bound(lw, node):
    if node is None:
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        value = -node.operand.value  # a literal bound is a Python int of any size (NumPy clamps it)
    elif isinstance(node, ast.Constant):
        value = node.value
    else:
        value = lw.visit(node)
    if isinstance(value, Weak):
        value = value.value
    if isinstance(value, Const):
        value = value.value
    if not isinstance(value, int) or isinstance(value, bool):
        raise lw.error("tile slice bounds must be compile-time constant integers (they fix the result's shape)", node,
                       kind=KernelValueError, hint="use wp.tile_view(t, offset) for a run-time offset")
    return value


def selection(lw, tile: Var, slice_node: ast.AST, node, first=None) -> tuple[list, tuple[int, ...]]:
    """The native selection operands (start, step, count per source dimension) and the result's shape (``first``:
    the already visited value of the first index)."""
    shape = tile.type.shape
    parts = slice_node.elts if isinstance(slice_node, ast.Tuple) else [slice_node]
    if len(parts) > len(shape):
        raise lw.error(f"too many indices ({len(parts)}) for a {len(shape)}-D tile", node, kind=KernelValueError)
    args, out = [], []
    for d, n in enumerate(shape):
        p = parts[d] if d < len(parts) else ast.Slice(None, None, None)
        if isinstance(p, ast.Slice):
            lo, hi, st = (_static_bound(lw, b) for b in (p.lower, p.upper, p.step))
            if st == 0:
                raise lw.error("tile slice step cannot be zero", p, kind=KernelValueError)
            r = range(*slice(lo, hi, st).indices(n))
            if len(r) == 0:
                raise lw.error(f"tile slice {ast.unparse(p)} of a dimension of extent {n} is zero-length (an empty "
                               "tile)", p, kind=KernelValueError)
            args += [Const(r.start, T.INT32), Const(r.step, T.INT32), Const(len(r), T.INT32)]
            out.append(len(r))
            continue
        v = first if d == 0 and first is not None else lw.visit(p)
        if isinstance(v, Weak):
            v = v.value
        if isinstance(v, int) and not isinstance(v, bool):
            v = Const(v, T.INT32)
        elif not isinstance(v, (Var, Const)):
            raise lw.error(f"tile indices must be integers or slices, got {v!r}", p, kind=KernelTypeError)
        if isinstance(v.type, T.TileType):
            raise lw.error("a tile index (t[idx, ...]) is only supported as the first index with ':' on all other "
                           "axes", p, kind=KernelValueError)
        if not (isinstance(v.type, T.ScalarType) and v.type.is_int):
            raise lw.error(f"tile indices must be integers or slices, got {v.type}", p, kind=KernelTypeError)
        if isinstance(v, Const):
            if not -n <= v.value < n:
                raise lw.error(f"index {v.value} is out of bounds for dimension {d} of a tile of shape {shape}", p,
                               kind=KernelValueError)
            v = Const(v.value % n, T.INT32)
        elif v.type != T.INT32:
            v = lw.op("cast", [v], attrs=(T.INT32,), node=p)
        args += [v, Const(0, T.INT32), Const(1, T.INT32)]
    return args, tuple(out)


def _gather_index(lw, tile: Var, parts: list, axis: int, value, node):
    """Checks ``t[idx, :]`` / ``t[:, idx]`` ...: a 1-D int32 index tile ``idx`` at ``axis``, full slices elsewhere."""
    it = value.type
    if not (isinstance(it.dtype, T.ScalarType) and it.dtype.is_int and it.dtype != T.BOOL):
        raise lw.error(f"an advanced tile index must be an integer index tile, got a tile of {it.dtype}", parts[axis],
                       kind=KernelValueError)
    if len(it.shape) != 1 or it.dtype != T.INT32:
        raise lw.error(f"an advanced tile index must be a 1-D integer index tile of int32, got a tile of {it.dtype} "
                       f"of shape {it.shape}", parts[axis], kind=KernelValueError)
    for d, p in enumerate(parts):
        if d != axis and not (isinstance(p, ast.Slice) and p.lower is None and p.upper is None and p.step is None):
            raise lw.error("a tile index (t[idx, ...]) requires ':' on all other axes", p, kind=KernelValueError)
    if len(parts) > len(tile.type.shape):
        raise lw.error(f"too many indices ({len(parts)}) for a {len(tile.type.shape)}-D tile", node,
                       kind=KernelValueError)


def _later_index_tile(lw, parts: list):
    """(axis, value) of ``t[:, .., idx, ..]``: one subscript after the first that is a variable holding an index
    tile, the others slices (a variable: evaluating it here and again in ``selection`` has no effect)."""
    others = [d for d, p in enumerate(parts) if not isinstance(p, ast.Slice)]
    if len(others) != 1 or others[0] == 0 or not isinstance(parts[others[0]], ast.Name):
        return None
    value = lw.visit(parts[others[0]])
    if isinstance(value, Var) and isinstance(value.type, T.TileType):
        return others[0], value
    return None


def _element_index(lw, v, p):
    if isinstance(v, Weak):
        v = v.value
    if isinstance(v, int) and not isinstance(v, bool):
        return Const(v, T.INT32)
    v = lw.operand(v, p)
    if not (isinstance(v.type, T.ScalarType) and v.type.is_int):
        raise lw.error(f"tile indices must be integers or slices, got {v.type}", p, kind=KernelTypeError,
                       hint="convert with int(x)")
    return v


def read(lw, tile: Var, slice_node: ast.AST, node):
    """``t[...]`` selecting a sub-tile: a new tile."""
    parts = slice_node.elts if isinstance(slice_node, ast.Tuple) else [slice_node]
    first = None if isinstance(parts[0], ast.Slice) else lw.visit(parts[0])
    gather = (0, first) if isinstance(first, Var) and isinstance(first.type, T.TileType) else \
        _later_index_tile(lw, parts) if first is None else None
    if gather is not None:
        axis, index = gather
        _gather_index(lw, tile, parts, axis, index, node)
        shape = list(tile.type.shape)
        shape[axis] = index.type.shape[0]
        out = T.TileType(tile.type.dtype, tuple(shape))
        return lw.op("tile_slice_indexed", [tile, index, Const(axis, T.INT32)], attrs=(out,), node=node)
    if not is_tile_selection(tile.type, slice_node):  # one element (all indices integers)
        idx = [_element_index(lw, first if d == 0 else lw.visit(p), p) for d, p in enumerate(parts)]
        return lw.op("extract", [tile, *idx], node=node)
    args, shape = selection(lw, tile, slice_node, node, first)
    return lw.op("tile_slice", [tile, *args], attrs=(T.TileType(tile.type.dtype, shape),), node=node)


def write(lw, tile: Var, target: ast.Subscript, value) -> Var:
    """``t[...] = src`` for a sub-tile selection: the new value of t."""
    args, shape = selection(lw, tile, target.slice, target)
    if not (isinstance(value, Var) and isinstance(value.type, T.TileType)):
        raise lw.error(f"assigning into a tile slice requires a tile of matching shape {shape}", target,
                       kind=KernelValueError, hint="build one with wp.tile_full(shape, value)")
    if value.type.shape != shape:
        raise lw.error(f"tile slice assignment shape mismatch: the slice has shape {shape}, the value "
                       f"{value.type.shape}", target, kind=KernelValueError)
    dt, st = tile.type.dtype, value.type.dtype
    if dt != st and not (isinstance(dt, T.ScalarType) and isinstance(st, T.ScalarType)):
        raise lw.error(f"cannot assign a tile of {st} into a tile of {dt}", target, kind=KernelTypeError)
    return lw.op("tile_slice_assign", [tile, value, *args], node=target)
