"""Sparse algebra: ``bsr_scale``, ``bsr_axpy``, ``bsr_mm``, ``bsr_mv`` and the kernel-side index helpers."""

from __future__ import annotations

import numpy as np

import weft as wp

from ..errors import warn
from . import _kernels
from ._assemble import _int_dev, assemble, matrix_source
from ._matrix import (
    BsrMatrix,
    SparseValueError,
    Topology,
    active,
    bsr_zeros,
    ensure_capacity,
    make_block_type,
    place_padded,
    set_compact,
    split,
    topology_arg,
)
from ._views import flat


class bsr_axpy_work_arrays:
    """Scratch storage of ``bsr_axpy`` in Warp; weft's host-side topology needs none (accepted and unused)."""


class bsr_mm_work_arrays:
    """Scratch storage of ``bsr_mm`` in Warp; weft recomputes the product topology on the host each call."""


def bsr_scale(x, alpha) -> BsrMatrix:
    """``x := alpha * x`` in place (a scaled expression scales its matrix); returns the matrix."""
    A, s = split(x)
    alpha = float(alpha) * float(s)
    if alpha != 1.0 and A.values.shape[0]:
        S = A.scalar_type
        n = A.values.shape[0] * A.block_size
        wp.launch(_kernels.kernels(S).scale, dim=n, device=A.device, inputs=[flat(A.values), S(alpha)])
    return A


def bsr_axpy(x, y: BsrMatrix | None = None, alpha=1.0, beta=1.0, work_arrays=None, topology=None) -> BsrMatrix:
    """``y := alpha * x + beta * y`` (the result's blocks are the union of both patterns; ``topology`` as in
    ``bsr_set_from_triplets``); ``y`` may be ``x``. Returns ``y`` (a new matrix when ``y`` is None)."""
    X, xs = split(x)
    alpha = float(alpha) * float(xs)
    t = topology_arg(topology)
    if y is None:
        if t is not Topology.COMPACT:
            raise SparseValueError("Left-hand-side 'y' matrix must be provided for this topology policy")
        y = bsr_zeros(X.nrow, X.ncol, X.values.dtype, device=X.device)
        y.values.requires_grad = X.requires_grad
        beta = 0.0
    if X.device != y.device:
        raise SparseValueError(f"All arguments must reside on the same device, got {X.device} and {y.device}")
    if X.scalar_type is not y.scalar_type or X.block_shape != y.block_shape:
        raise SparseValueError(f"Matrices must have the same block type, got ({X.block_shape}, {X.scalar_type}) "
                               f"and ({y.block_shape}, {y.scalar_type})")
    if X.nrow != y.nrow or X.ncol != y.ncol:
        raise SparseValueError(f"Matrices must have the same number of rows and columns, got ({X.nrow}, {X.ncol}) "
                               f"and ({y.nrow}, {y.ncol})")
    sources = [matrix_source(X, alpha, y.block_shape), matrix_source(y, float(beta), y.block_shape)]
    y.clear_status()
    assemble(y, sources, t)
    return y


# ---------------------------------------------------------------------------------------------------- mm
def bsr_mm(x, y, z: BsrMatrix | None = None, alpha=1.0, beta=0.0, work_arrays=None, reuse_topology: bool = False,
           tile_size: int = 0, max_new_nnz: int | None = None, topology=None) -> BsrMatrix:
    """``z := alpha * x @ y + beta * z``; any of the three may alias. ``topology``: ``"compact"`` (the result's
    blocks are the product pattern plus ``z``'s when ``beta != 0``), ``"masked"`` (only ``z``'s blocks) or
    ``"padded"`` (into ``z``'s row capacities). ``max_new_nnz`` bounds the result's block count (a warning
    says when it was exceeded and blocks were dropped). Returns ``z``."""
    X, xs = split(x)
    Y, ys = split(y)
    alpha = float(alpha) * float(xs) * float(ys)
    t = topology_arg(topology)
    if X.block_shape[1] != Y.block_shape[0]:
        raise SparseValueError(f"Incompatible block sizes for matrix multiplication, got {X.block_shape} and "
                               f"{Y.block_shape}")
    if X.ncol != Y.nrow:
        raise SparseValueError(f"Incompatible number of rows/columns for matrix multiplication: x has {X.ncol} "
                               f"columns of blocks, y has {Y.nrow} rows")
    if X.scalar_type is not Y.scalar_type:
        raise SparseValueError("Matrices must have the same scalar type")
    zshape = (X.block_shape[0], Y.block_shape[1])
    if z is None:
        if t is not Topology.COMPACT:
            raise SparseValueError("Result 'z' matrix must be provided for this topology policy")
        z = bsr_zeros(X.nrow, Y.ncol, make_block_type(zshape, X.scalar_type), device=X.device)
        z.values.requires_grad = X.requires_grad or Y.requires_grad
        beta = 0.0
    if z.block_shape != zshape or z.scalar_type is not X.scalar_type:
        raise SparseValueError(f"Incompatible block sizes for matrix multiplication result, got {z.block_shape}, "
                               f"expected {zshape}")
    if z.nrow != X.nrow or z.ncol != Y.ncol:
        raise SparseValueError(f"Incompatible number of rows/columns for matrix multiplication result: "
                               f"({z.nrow}, {z.ncol}) for ({X.nrow}, {Y.ncol})")
    beta = float(beta)
    # values as they are now (z may alias x or y; its arrays are replaced below)
    S = z.scalar_type
    empty = wp.zeros(1, dtype=S, device=z.device)
    x_vals = flat(X.values) if X.values.shape[0] else empty
    y_vals = flat(Y.values) if Y.values.shape[0] else empty
    # symbolic product on the host
    xr, xc, xslot = active(X)
    yr, yc, yslot = active(Y)
    order = np.argsort(yr, kind="stable")
    yr, yc, yslot = yr[order], yc[order], yslot[order]
    ystart = np.searchsorted(yr, np.arange(Y.nrow + 1))
    ycount = np.diff(ystart)
    per_x = ycount[xc] if xc.size else np.zeros(0, dtype=np.int64)
    total = int(per_x.sum())
    first = np.repeat(np.cumsum(per_x) - per_x, per_x)
    yidx = np.repeat(ystart[xc] if xc.size else np.zeros(0, dtype=np.int64), per_x) + (np.arange(total) - first)
    p_row, p_col = np.repeat(xr, per_x), yc[yidx]
    p_x, p_y = np.repeat(xslot, per_x), yslot[yidx]
    zr, zc, zslot = active(z)
    old_values = z.values
    ncol = max(z.ncol, 1)
    pkeys = p_row * ncol + p_col
    zkeys = zr * ncol + zc
    if t is Topology.MASKED:
        zo = np.argsort(zkeys, kind="stable")
        keys, slots = zkeys[zo], zslot[zo]
    else:
        keys = np.unique(np.concatenate([pkeys, zkeys]) if beta != 0.0 else pkeys)
        if max_new_nnz is not None and beta == 0.0 and keys.shape[0] > int(max_new_nnz):
            warn(f"bsr_mm: the product has {keys.shape[0]} blocks, max_new_nnz={max_new_nnz} exceeded; "
                 f"blocks past the bound were dropped", stacklevel=2)
            keys = keys[: int(max_new_nnz)]
        rows, cols = np.divmod(keys, ncol)
        if t is Topology.PADDED:
            slots = place_padded(z, rows, cols)
        else:
            set_compact(z, rows, cols)
            slots = np.arange(keys.shape[0], dtype=np.int64)
    # product pairs and the old z block of every destination block
    pos = np.searchsorted(keys, pkeys) if keys.size else np.zeros(pkeys.shape, dtype=np.int64)
    pos = np.minimum(pos, max(keys.size - 1, 0))
    hit = (keys[pos] == pkeys) if keys.size else np.zeros(pkeys.shape, dtype=bool)
    target = np.where(hit, slots[pos] if slots.size else -1, -1)
    nslots = z.nnz
    ensure_capacity(z, nslots)
    order = np.argsort(np.where(target >= 0, target, np.iinfo(np.int64).max), kind="stable")
    keep = order[target[order] >= 0]
    seg = np.zeros(nslots + 1, dtype=np.int64)
    if keep.size:
        np.cumsum(np.bincount(target[keep], minlength=nslots)[:nslots], out=seg[1:])
    z_src = np.full(nslots, -1, dtype=np.int64)
    if beta != 0.0 and zkeys.size:
        ok_keys, ok_slots = zkeys, zslot
        at = np.searchsorted(keys, ok_keys) if keys.size else np.zeros(0, dtype=np.int64)
        at = np.minimum(at, max(keys.size - 1, 0))
        present = (keys[at] == ok_keys) if keys.size else np.zeros(0, dtype=bool)
        dst = slots[at[present]]
        good = dst >= 0
        z_src[dst[good]] = ok_slots[present][good]
    grad = X.requires_grad or Y.requires_grad or z.requires_grad
    out = wp.zeros(max(z.values.shape[0], nslots, 1), dtype=z.values.dtype, device=z.device, requires_grad=grad)
    zs = zshape[0] * zshape[1]
    if nslots:
        dev = z.device
        wp.launch(_kernels.kernels(S).mm, dim=nslots * zs, device=dev,
                  inputs=[x_vals, y_vals,
                          _int_dev(p_x[keep] if keep.size else np.zeros(1), dev),
                          _int_dev(p_y[keep] if keep.size else np.zeros(1), dev), _int_dev(seg, dev),
                          X.block_shape[0], X.block_shape[1], Y.block_shape[1], S(alpha),
                          flat(old_values) if old_values.shape[0] else empty, _int_dev(z_src, dev), S(beta)],
                  outputs=[flat(out, nslots)])
    z.values = out
    return z


# ---------------------------------------------------------------------------------------------------- mv
def _vector_len(dtype) -> int:
    if wp.types.type_is_vector(dtype):
        return int(dtype._length_)
    return 1


def bsr_mv(A, x: wp.array, y: wp.array | None = None, alpha=1.0, beta=0.0, transpose: bool = False,
           work_buffer: wp.array | None = None, tile_size: int = 0) -> wp.array:
    """``y := alpha * A @ x + beta * y`` (``A^T`` with ``transpose``); ``x`` and ``y`` are arrays of scalars or of
    vectors of the block size and may alias (``work_buffer`` then holds the copy of ``x``). Returns ``y``."""
    M, s = split(A)
    alpha = float(alpha) * float(s)
    br, bc = M.block_shape
    nrow, ncol = M.nrow, M.ncol
    if transpose:
        br, bc, nrow, ncol = bc, br, ncol, nrow
    S = M.scalar_type
    if y is None:
        ydtype = S if br == 1 else wp.types.vector(length=br, dtype=S)
        y = wp.zeros(nrow, dtype=ydtype, device=M.device, requires_grad=x.requires_grad or M.requires_grad)
        beta = 0.0
    if M.device != x.device or M.device != y.device:
        raise SparseValueError(f"A, x, and y must reside on the same device, got {M.device}, {x.device} and "
                               f"{y.device}")
    if x.ptr == y.ptr and x.size:
        if work_buffer is None:
            work_buffer = wp.empty_like(y)
        elif work_buffer.size < y.size:
            raise SparseValueError(f"Work buffer size is insufficient, needs to be at least {y.size}, got "
                                   f"{work_buffer.size}")
        wp.copy(work_buffer, y, count=y.size)
        x = work_buffer
    if x.size * _vector_len(x.dtype) != ncol * bc or wp.types.type_scalar_type(x.dtype) is not S:
        raise SparseValueError("Incompatible 'x' vector for bsr_mv")
    if y.size * _vector_len(y.dtype) != nrow * br or wp.types.type_scalar_type(y.dtype) is not S:
        raise SparseValueError("Incompatible 'y' vector for bsr_mv")
    k = _kernels.kernels(S)
    dev = M.device
    xf, yf = flat(x), flat(y)
    values = flat(M.values) if M.values.shape[0] else wp.zeros(1, dtype=S, device=dev)
    if not transpose:
        padded = M.row_counts is not None
        wp.launch(k.mv, dim=nrow * br, device=dev,
                  inputs=[M.offsets, M.row_counts if padded else M.offsets, int(padded),
                          M.columns if M.columns.shape[0] else wp.zeros(1, dtype=wp.int32, device=dev), values, xf,
                          br, bc, S(alpha), S(float(beta))],
                  outputs=[yf])
        return y
    # y = beta y, then one atomic add per (block, column element)
    if float(beta) == 0.0:
        y.zero_()
    elif float(beta) != 1.0:
        wp.launch(k.scale, dim=yf.shape[0], device=dev, inputs=[yf, S(float(beta))])
    rows, cols, slots = active(M)
    if rows.size:
        wp.launch(k.mv_transpose, dim=rows.size * br, device=dev,
                  inputs=[_int_dev(rows, dev), _int_dev(cols, dev), _int_dev(slots, dev), values, xf, br, bc,
                          S(alpha)],
                  outputs=[yf])
    return y


# ---------------------------------------------------------------------------------------------------- kernel helpers
@wp.func
def bsr_row_index(offsets: wp.array(dtype=wp.int32), row_count: wp.int32, block_index: wp.int32) -> wp.int32:
    """Row containing the storage slot ``block_index`` (binary search of ``offsets``), or -1."""
    if block_index < 0 or block_index >= offsets[row_count]:
        return -1
    lo = wp.int32(0)
    hi = row_count
    while hi - lo > 1:
        mid = (lo + hi) / 2
        if offsets[mid] <= block_index:
            lo = mid
        else:
            hi = mid
    return lo


@wp.func
def bsr_row_index(offsets: wp.array(dtype=wp.int32), row_count: wp.int32, block_index: wp.int32,  # noqa: F811
                  row_counts: wp.array(dtype=wp.int32)) -> wp.int32:
    """Row containing the active block ``block_index`` of a padded matrix, or -1 (in the spare capacity)."""
    row = bsr_row_index(offsets, row_count, block_index)
    if row >= 0 and block_index >= offsets[row] + row_counts[row]:
        row = -1
    return row


@wp.func
def _row_block_index(col: wp.int32, beg: wp.int32, end: wp.int32, columns: wp.array(dtype=wp.int32)) -> wp.int32:
    # rows' columns are sorted: binary search for col in [beg, end)
    lo = beg
    hi = end
    while lo < hi:
        mid = (lo + hi) / 2
        if columns[mid] < col:
            lo = mid + 1
        else:
            hi = mid
    if lo < end and columns[lo] == col:
        return lo
    return -1


@wp.func
def bsr_block_index(row: wp.int32, col: wp.int32, bsr_offsets: wp.array(dtype=wp.int32),
                    bsr_columns: wp.array(dtype=wp.int32)) -> wp.int32:
    """Storage slot of block ``(row, col)`` (columns sorted within rows), or -1."""
    if row < 0:
        return -1
    return _row_block_index(col, bsr_offsets[row], bsr_offsets[row + 1], bsr_columns)


@wp.func
def bsr_block_index(row: wp.int32, col: wp.int32, bsr_offsets: wp.array(dtype=wp.int32),  # noqa: F811
                    bsr_columns: wp.array(dtype=wp.int32), bsr_row_counts: wp.array(dtype=wp.int32)) -> wp.int32:
    """Storage slot of active block ``(row, col)`` of a padded matrix, or -1."""
    if row < 0:
        return -1
    beg = bsr_offsets[row]
    return _row_block_index(col, beg, beg + bsr_row_counts[row], bsr_columns)
