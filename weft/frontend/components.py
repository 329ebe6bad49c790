"""Components of vectors, matrices and transforms selected by compile-time slices in kernel code: ``v[a:b]``,
``m[i, a:b]``, ``m[a:b, c:d]`` read as a new vector / matrix and assigned in place (Warp 1.19's rules and error
texts), and ``t.p = v`` / ``t.q = r`` on transforms. Functions of the :class:`~weft.frontend.lower.Lowerer`."""

from __future__ import annotations

import ast

from ..errors import KernelValueError
from ..ir import types as T
from ..ir.nodes import Const


def read_slice(lw, base, slice_node, node):
    """``v[a:b:c]``, ``m[1:3]``, ``m[i, a:b]``, ``m[a:b, c:d]`` with compile-time bounds: a new vector / matrix.
    An empty selection is a zero-length vector, or a 0x0 matrix (as Warp: a zero extent zeroes both)."""
    t = base.type
    sel = _selection(lw, t, slice_node, node)
    rtype, cells = _cells(t, sel)
    if isinstance(rtype, T.MatrixType) and not cells:
        return lw.op("construct", [], attrs=(rtype,), node=node)
    parts = [lw.op("extract", [base, *c], node=node) for c in cells]
    return lw.op("construct", parts, attrs=(rtype,), node=node)


def _cells(t, sel) -> tuple:
    """The type a component selection reads (vector or matrix) and its cells' constant indices, row-major."""
    if isinstance(t, T.VectorType):
        return T.VectorType(len(sel[0]), t.scalar), [(Const(i, T.INT32),) for i in sel[0]]
    rows = sel[0]
    cols = sel[1] if len(sel) > 1 else list(range(t.cols))
    if isinstance(rows, Const) or isinstance(cols, Const):  # one row or one column: a vector
        cells = [(rows, Const(c, T.INT32)) for c in cols] if isinstance(rows, Const) \
            else [(Const(r, T.INT32), cols) for r in rows]
        return T.VectorType(len(cells), t.scalar), cells
    if not rows or not cols:
        return T.MatrixType(0, 0, t.scalar), []
    cells = [(Const(r, T.INT32), Const(c, T.INT32)) for r in rows for c in cols]
    return T.MatrixType(len(rows), len(cols), t.scalar), cells


def set_transform_part(lw, base, part: str, value, node):
    """``t.p = v`` / ``t.q = r`` (and wp.transform_set_translation / _rotation): t with those components."""
    t = base.type
    want = T.VectorType(3, t.scalar) if part == "p" else T.VectorType(4, t.scalar, T.VecFlavor.QUAT)
    v = lw.operand(value, node)
    if v.type != want:
        raise lw.error(f"the {'translation' if part == 'p' else 'rotation'} of a {t} is a {want}, got {v.type}",
                         node)
    first = 0 if part == "p" else 3
    new = base
    for i in range(want.length):
        x = lw.op("extract", [v, Const(i, T.INT32)], node=node)
        new = lw.op("insert", [new, Const(first + i, T.INT32), x], node=node)
    return new


def store_slice(lw, base, slice_node, value, node):
    """``v[a:b] = w``, ``m[i, a:b] = w``, ``m[a:b, c:d] = n``: the base with those components replaced. The
    value has the selection's own type (no broadcasting of a scalar, as Warp); mismatches are Warp's
    ValueErrors."""
    t = base.type
    sel = _selection(lw, t, slice_node, node)
    want, cells = _cells(t, sel)
    v = lw.operand(value, node)
    vt = v.type
    scalar = t.scalar.name
    if isinstance(want, T.VectorType):
        n = want.length
        if not isinstance(vt, T.VectorType):
            raise lw.error(f"The provided value is expected to be a vector of length {n}, with dtype {scalar}.",
                             node, kind=KernelValueError)
        if vt.scalar != t.scalar:
            raise lw.error(f"The provided vector is expected to be of length {n} with dtype {scalar}.", node,
                             kind=KernelValueError)
        if vt.length != n:
            raise lw.error(f"The length of the provided vector ({vt.length}) isn't compatible with the given "
                             f"slice (expected {n}).", node, kind=KernelValueError)
        flat = [(Const(i, T.INT32),) for i in range(n)]
    else:
        shape = (want.rows, want.cols)
        if not isinstance(vt, T.MatrixType):
            raise lw.error(f"The provided value is expected to be a matrix of shape {shape}, with dtype "
                             f"{scalar}.", node, kind=KernelValueError)
        if vt.scalar != t.scalar:
            raise lw.error(f"The provided matrix is expected to be of shape {shape} with dtype {scalar}.", node,
                             kind=KernelValueError)
        if (vt.rows, vt.cols) != shape:
            raise lw.error(f"The shape of the provided matrix ({(vt.rows, vt.cols)}) isn't compatible with the "
                             f"given slice (expected {shape}).", node, kind=KernelValueError)
        flat = [(Const(r, T.INT32), Const(c, T.INT32)) for r in range(vt.rows) for c in range(vt.cols)]
    new = base
    for cell, f in zip(cells, flat):
        new = lw.op("insert", [new, *cell, lw.op("extract", [v, *f], node=node)], node=node)
    return new


def _selection(lw, t, slice_node, node) -> list:
    """Per axis: a list of component indices (a slice, bounds known when compiling) or one constant index."""
    extents = [t.length] if isinstance(t, T.VectorType) else [t.rows, t.cols]
    parts = slice_node.elts if isinstance(slice_node, ast.Tuple) else [slice_node]
    if len(parts) > len(extents):
        raise lw.error(f"too many indices for a {t}", node)
    out = []
    for p, n in zip(parts, extents):
        if isinstance(p, ast.Slice):
            bounds = [None if b is None else lw.eval_static(b) for b in (p.lower, p.upper, p.step)]
            if any(b is not None and not isinstance(b, int) for b in bounds):
                raise lw.error("slice bounds of a vector or matrix must be integers known when compiling", p)
            out.append(list(range(n))[slice(*bounds)])
        else:
            (i,) = lw.check_components(T.VectorType(n, T.FLOAT32), lw.indices(p), p)
            if not isinstance(i, Const):
                raise lw.error("a slice of a matrix takes a constant row or column index", p)
            out.append(i)
    return out
