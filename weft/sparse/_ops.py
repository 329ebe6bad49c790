"""The operations of ``weft.sparse``: building from triplets, copies and assignments, transposes, diagonals,
``axpy``, ``scale``, matrix-matrix and matrix-vector products (Warp 1.19's ``warp.sparse`` API)."""

from __future__ import annotations

import numpy as np

import weft as wp

from . import _kernels
from ._assemble import Source, assemble, expand, gather_into, matrix_source
from ._matrix import (
    BsrMatrix,
    BsrTripletMap,
    SparseTypeError,
    SparseValueError,
    Topology,
    active,
    block_shape_of,
    bsr_set_zero,
    bsr_zeros,
    make_block_type,
    resolve_block_type,
    split,
    topology_arg,
)
from ._views import flat


def _ints(a: wp.array, n: int | None = None) -> np.ndarray:
    host = a.numpy()
    return (host if n is None else host[:n]).astype(np.int64)


def _check_contiguous(a: wp.array, what: str) -> None:
    if not a.is_contiguous:
        raise SparseValueError(f"{what} array must be contiguous")


# ---------------------------------------------------------------------------------------------------- triplets
def bsr_set_from_triplets(dest: BsrMatrix, rows: wp.array, columns: wp.array, values: wp.array | None = None,
                          count: wp.array | None = None, prune_numerical_zeros: bool = True, topology=None,
                          build_mapping=None):
    """Fill ``dest`` from COO triplets ``(rows[i], columns[i], values[i])``, summing duplicates and discarding its
    previous blocks. Triplets outside the matrix are dropped; with ``prune_numerical_zeros`` so are all-zero
    blocks. ``values`` is a 1-D array of ``dest``'s block type or an ``(n, rows, cols)`` scalar array (``None``:
    topology only). ``topology``: ``"compact"`` (default), ``"masked"`` (only ``dest``'s existing blocks are
    set) or ``"padded"`` (into ``dest``'s row capacities). ``build_mapping`` (``True`` or a ``BsrTripletMap``)
    returns a map for ``bsr_set_from_mapped_values``."""
    t = topology_arg(topology)
    mapping = None
    if build_mapping is True:
        mapping = BsrTripletMap(device=dest.device)
    elif isinstance(build_mapping, BsrTripletMap):
        mapping = build_mapping
        if mapping.device != dest.device:
            raise SparseValueError(f"Mapping and destination must reside on the same device, got {mapping.device} "
                                   f"and {dest.device}")
    elif build_mapping not in (None, False):
        raise SparseTypeError(f"build_mapping must be None, a bool or a BsrTripletMap, got {type(build_mapping)}")
    if mapping is not None and t is not Topology.COMPACT:
        raise SparseValueError('build_mapping requires topology="compact"')
    if mapping is not None and prune_numerical_zeros:
        raise SparseValueError("build_mapping requires prune_numerical_zeros=False")
    if rows.device != dest.device or columns.device != dest.device:
        raise SparseValueError(f"Rows and columns must reside on the destination matrix device, got {rows.device}, "
                               f"{columns.device} and {dest.device}")
    if rows.shape[0] != columns.shape[0]:
        raise SparseValueError(f"Rows and columns arrays must have the same length, got {rows.shape[0]} and "
                               f"{columns.shape[0]}")
    if rows.dtype is not wp.int32 or columns.dtype is not wp.int32:
        raise SparseTypeError("Rows and columns arrays must be of type int32")
    n = rows.shape[0]
    if count is not None:
        if count.shape != (1,):
            raise SparseValueError(f"Count array must be a single-element array, got {count.shape}")
        n = min(n, int(count.numpy()[0]))
    r = _ints(rows, n)
    c = _ints(columns, n)
    keep = np.ones(n, dtype=bool)
    src_values = None
    if values is not None:
        _check_contiguous(values, "Values")
        if values.device != dest.device:
            raise SparseValueError("Values must reside on the destination matrix device")
        if wp.types.type_scalar_type(values.dtype) is not dest.scalar_type:
            raise SparseTypeError(f"Values array type must correspond to that of the dest matrix, got "
                                  f"{wp.types.type_repr(values.dtype)} for {wp.types.type_repr(dest.dtype)} blocks")
        src_values = flat(values, values.shape[0])
        if src_values.shape[0] < n * dest.block_size:
            raise SparseValueError(f"Values array holds {values.shape[0]} elements, {n} triplets of "
                                   f"{dest.block_shape} blocks need more")
        if prune_numerical_zeros and n:
            host = src_values.numpy()[: n * dest.block_size].reshape(n, dest.block_size)
            keep = np.any(host != 0, axis=1)
    idx = np.nonzero(keep)[0]
    entries = expand(r[idx], c[idx], idx, dest.block_shape, dest.block_shape)
    dest.clear_status()
    block_of = assemble(dest, [Source(src_values, 1.0, entries)], t, structure_only=values is None, capacity=n)
    if mapping is not None:
        per_triplet = np.full(n, -1, dtype=np.int64)
        per_triplet[idx] = block_of[:: dest.block_size] if block_of.size else []
        mapping._build(per_triplet, int(dest.offsets.numpy()[dest.nrow]))
        return mapping
    return None


def bsr_from_triplets(rows_of_blocks: int, cols_of_blocks: int, rows: wp.array, columns: wp.array, values: wp.array,
                      prune_numerical_zeros: bool = True) -> BsrMatrix:
    """A new compact matrix from COO triplets (see ``bsr_set_from_triplets``); the block type is ``values``'
    dtype, or ``matrix((r, c), scalar)`` for an ``(n, r, c)`` scalar array."""
    if values.ndim == 3:
        block_type = make_block_type(values.shape[1:], values.dtype)
    else:
        block_type = values.dtype
    A = bsr_zeros(rows_of_blocks, cols_of_blocks, block_type, device=values.device)
    A.values.requires_grad = values.requires_grad
    bsr_set_from_triplets(A, rows, columns, values, prune_numerical_zeros=prune_numerical_zeros)
    return A


def bsr_set_from_mapped_values(dest: BsrMatrix, mapping: BsrTripletMap, values: wp.array,
                               reduction: str = "gather") -> None:
    """Refill the values of ``dest`` from new triplet ``values`` through a map built by ``bsr_set_from_triplets``
    (the topology is unchanged). ``reduction`` (``"gather"`` or ``"atomic"``) is accepted for Warp compatibility:
    weft always sums each block's triplets in a fixed order (deterministic)."""
    if reduction not in ("gather", "atomic"):
        raise SparseValueError(f"Unsupported reduction: {reduction}")
    mapping.validate(dest)
    _check_contiguous(values, "Values")
    n = mapping.triplet_count
    blocks = mapping._blocks_host
    bs = dest.block_size
    elem = np.arange(bs, dtype=np.int64)
    targets = np.where(blocks[:, None] >= 0, blocks[:, None] * bs + elem[None, :], -1).ravel()
    src = (np.arange(n, dtype=np.int64)[:, None] * bs + elem[None, :]).ravel()
    nblocks = mapping._nblocks
    if nblocks == 0:
        return
    from ._assemble import _int_dev, _segments

    perm, seg = _segments(targets, src, nblocks * bs)
    k = _kernels.kernels(dest.scalar_type)
    wp.launch(k.gather, dim=nblocks * bs, device=dest.device,
              inputs=[flat(values), _int_dev(perm if perm.size else np.zeros(1), dest.device),
                      _int_dev(seg, dest.device), dest.scalar_type(1.0)],
              outputs=[flat(dest.values, nblocks)])


def bsr_compress(src: BsrMatrix, prune_numerical_zeros: bool = True, inplace: bool = False, topology=None,
                 structure_only: bool = False) -> BsrMatrix:
    """Sort the columns of every row of ``src``, sum duplicate blocks, drop blocks outside the matrix (and
    all-zero blocks with ``prune_numerical_zeros``), and return ``src``. ``topology="padded"`` keeps the row
    capacities. ``inplace`` is accepted for Warp compatibility (weft always compresses differentiably)."""
    t = topology_arg(topology, allowed=(Topology.COMPACT, Topology.PADDED))
    rows, cols, slots = active(src)
    keep = np.ones(rows.shape[0], dtype=bool)
    if structure_only:
        values = None
    else:
        values = flat(src.values) if src.values.shape[0] else None
        if prune_numerical_zeros and rows.size:
            host = flat(src.values).numpy().reshape(-1, src.block_size)[slots]
            keep = np.any(host != 0, axis=1)
    entries = expand(rows[keep], cols[keep], slots[keep], src.block_shape, src.block_shape)
    old_values = src.values
    if values is not None:
        # the gather reads the old values: give the result its own array
        src.values = wp.zeros(max(old_values.shape[0], 1), dtype=old_values.dtype, device=src.device,
                              requires_grad=old_values.requires_grad)
    if t is Topology.PADDED:
        bsr_set_zero(src, topology="padded")
    assemble(src, [Source(values, 1.0, entries)], t, structure_only=values is None, capacity=0)
    return src


# ---------------------------------------------------------------------------------------------------- copies
def _check_reblock(dst_shape, src_shape) -> None:
    for d, s in zip(dst_shape, src_shape):
        if (s % d if s >= d else d % s) != 0:
            raise SparseValueError(f"Incompatible dest and src block shapes; block rows must evenly divide one "
                                   f"another (Got {dst_shape}, {src_shape})")


def bsr_assign(dest: BsrMatrix, src, structure_only: bool = False, topology=None) -> None:
    """Copy ``src`` (a matrix or scaled expression) into ``dest``, which may have another block shape (each
    dimension a multiple or divisor of ``src``'s) or scalar type (values are converted)."""
    A, scale = split(src)
    t = topology_arg(topology)
    if dest.device != A.device:
        raise SparseValueError("Source and destination matrices must reside on the same device")
    _check_reblock(dest.block_shape, A.block_shape)
    if A.shape[0] % dest.block_shape[0] or A.shape[1] % dest.block_shape[1]:
        raise SparseValueError(f"The requested block shape {dest.block_shape} does not evenly divide the source "
                               f"matrix of total size {A.shape}")
    nrow = A.shape[0] // dest.block_shape[0]
    ncol = A.shape[1] // dest.block_shape[1]
    if t is Topology.MASKED and (dest.nrow, dest.ncol) != (nrow, ncol):
        raise SparseValueError("Incompatible matrix sizes for masked assignment")
    dest.nrow, dest.ncol = nrow, ncol
    if t is Topology.COMPACT and dest.offsets.shape[0] != nrow + 1:
        dest.offsets = wp.zeros(nrow + 1, dtype=wp.int32, device=dest.device)
    source = matrix_source(A, scale, dest.block_shape)
    dest.clear_status()
    assemble(dest, [source], t, structure_only=structure_only)


def bsr_copy(A, scalar_type=None, block_shape: tuple[int, int] | None = None, structure_only: bool = False,
             topology="compact") -> BsrMatrix:
    """A new matrix with ``A``'s content, optionally with another scalar type or block shape."""
    src, _scale = split(A)
    t = topology_arg(topology, allowed=(Topology.COMPACT, Topology.PADDED))
    scalar_type = src.scalar_type if scalar_type is None else resolve_block_type(scalar_type)
    block_shape = src.block_shape if block_shape is None else tuple(block_shape)
    _check_reblock(block_shape, src.block_shape)
    if src.shape[0] % block_shape[0] or src.shape[1] % block_shape[1]:
        raise SparseValueError(f"The requested block shape {block_shape} does not evenly divide the source matrix "
                               f"of total size {src.shape}")
    dest = bsr_zeros(src.shape[0] // block_shape[0], src.shape[1] // block_shape[1],
                     make_block_type(block_shape, scalar_type), device=src.device)
    dest.values.requires_grad = src.requires_grad
    if t is Topology.PADDED and src.row_counts is not None and block_shape == src.block_shape:
        cap = np.diff(_ints(src.offsets, src.nrow + 1))
        bsr_set_zero(dest, topology="padded", row_capacity=wp.array(cap.astype(np.int32), dtype=wp.int32,
                                                                     device=src.device))
    bsr_assign(dest, A, structure_only=structure_only, topology=t)
    return dest


def bsr_set_transpose(dest: BsrMatrix, src, topology=None) -> None:
    """``dest = src^T`` (``src`` a matrix or scaled expression); ``dest``'s block shape must be the transpose of
    ``src``'s."""
    A, scale = split(src)
    t = topology_arg(topology)
    if dest.block_shape != A.block_shape[::-1]:
        raise SparseValueError(f"Destination block shape must be {A.block_shape[::-1]}, got {dest.block_shape}")
    if dest.scalar_type is not A.scalar_type:
        raise SparseValueError("All arguments must have the same scalar type")
    if t is Topology.MASKED and (dest.nrow, dest.ncol) != (A.ncol, A.nrow):
        raise SparseValueError("Incompatible matrix sizes for masked transpose")
    source = matrix_source(A, scale, dest.block_shape, transpose=True)
    dest.nrow, dest.ncol = A.ncol, A.nrow
    if t is Topology.COMPACT and dest.offsets.shape[0] != dest.nrow + 1:
        dest.offsets = wp.zeros(dest.nrow + 1, dtype=wp.int32, device=dest.device)
    dest.clear_status()
    assemble(dest, [source], t)


def bsr_transposed(A) -> BsrMatrix:
    """A new matrix ``A^T``."""
    src, _scale = split(A)
    block_type = make_block_type(src.block_shape[::-1], src.scalar_type)
    dest = bsr_zeros(src.ncol, src.nrow, block_type, device=src.device)
    dest.values.requires_grad = src.requires_grad
    bsr_set_transpose(dest, A)
    return dest


# ---------------------------------------------------------------------------------------------------- diagonals
def bsr_get_diag(A, out: wp.array | None = None) -> wp.array:
    """The diagonal blocks of ``A`` (zero where absent) as a 1-D array of ``min(nrow, ncol)`` blocks."""
    M, scale = split(A)
    dim = min(M.nrow, M.ncol)
    if out is None:
        out = wp.zeros(dim, dtype=M.values.dtype, device=M.device)
    elif out.shape[0] < dim or not wp.types.types_equal(out.dtype, M.values.dtype):
        raise SparseValueError(f"Output array must have shape ({dim},) and dtype {wp.types.type_repr(M.dtype)}")
    rows, cols, slots = active(M)
    on = rows == cols
    bs = M.block_size
    elem = np.arange(bs, dtype=np.int64)
    targets = (rows[on][:, None] * bs + elem[None, :]).ravel()
    src = (slots[on][:, None] * bs + elem[None, :]).ravel()
    if dim:
        gather_into(flat(out, dim), targets, flat(M.values) if M.values.shape[0] else None, src, scale)
    return out


def _diag_rows(A: BsrMatrix, diag, rows_of_blocks, cols_of_blocks) -> tuple[int, int]:
    if rows_of_blocks is None and cols_of_blocks is None:
        if isinstance(diag, wp.array):
            return diag.shape[0], diag.shape[0]
        return A.nrow, A.ncol
    rows = rows_of_blocks if rows_of_blocks is not None else cols_of_blocks
    cols = cols_of_blocks if cols_of_blocks is not None else rows_of_blocks
    return int(rows), int(cols)


def bsr_set_diag(A: BsrMatrix, diag, rows_of_blocks: int | None = None, cols_of_blocks: int | None = None) -> None:
    """Make ``A`` block diagonal: ``diag`` is an array of blocks, one block repeated, or None (values left
    uninitialised). The size is ``rows_of_blocks`` / ``cols_of_blocks``, else ``diag``'s length, else ``A``'s."""
    nrow, ncol = _diag_rows(A, diag, rows_of_blocks, cols_of_blocks)
    A.nrow, A.ncol = nrow, ncol
    n = min(nrow, ncol)
    idx = np.arange(n, dtype=np.int64)
    from ._matrix import set_compact

    if A.offsets.shape[0] != nrow + 1:
        A.offsets = wp.zeros(nrow + 1, dtype=wp.int32, device=A.device)
    set_compact(A, idx, idx)
    if diag is None:
        return
    if isinstance(diag, wp.array):
        if diag.shape[0] < n:
            raise SparseValueError(f"diag has {diag.shape[0]} blocks, the matrix needs {n}")
        wp.copy(A.values, diag, count=n) if wp.types.types_equal(diag.dtype, A.values.dtype) else \
            assemble(A, [Source(flat(diag), 1.0, expand(idx, idx, idx, A.block_shape, A.block_shape))],
                     Topology.MASKED)
        return
    block = A.values.dtype(diag) if not isinstance(diag, A.values.dtype) else diag
    pattern = wp.array([block], dtype=A.values.dtype, device=A.device)
    k = _kernels.kernels(A.scalar_type)
    if n:
        wp.launch(k.fill_blocks, dim=n * A.block_size, device=A.device,
                  inputs=[flat(pattern), A.block_size], outputs=[flat(A.values, n)])


def bsr_diag(diag=None, rows_of_blocks: int | None = None, cols_of_blocks: int | None = None, block_type=None,
             device=None) -> BsrMatrix:
    """A new block-diagonal matrix (see ``bsr_set_diag``); ``block_type`` is needed when ``diag`` is None."""
    if isinstance(diag, wp.array):
        block_type, device = diag.dtype, diag.device
    elif diag is not None:
        if block_type is None:
            block_type = type(diag) if not isinstance(diag, (int, float)) else wp.float32
        if isinstance(diag, float) and block_type is float:
            block_type = wp.float32
    elif block_type is None:
        raise SparseValueError("bsr_diag: block_type is required when diag is None")
    block_shape_of(resolve_block_type(block_type))
    if rows_of_blocks is None and cols_of_blocks is None and not isinstance(diag, wp.array):
        raise SparseValueError("bsr_diag: rows_of_blocks is required unless diag is an array")
    nrow, ncol = _diag_rows(BsrMatrix(0, 0, block_type, device), diag, rows_of_blocks, cols_of_blocks)
    A = bsr_zeros(nrow, ncol, block_type, device=device)
    if isinstance(diag, wp.array):
        A.values.requires_grad = diag.requires_grad
    bsr_set_diag(A, diag, nrow, ncol)
    return A


def _identity_block(block_type):
    shape = block_shape_of(block_type)
    if shape[0] != shape[1]:
        raise SparseValueError(f"The identity needs square blocks, got {shape}")
    return block_type(1.0) if shape == (1, 1) else wp.types.matrix(shape=shape, dtype=wp.types.type_scalar_type(
        block_type))(*np.eye(shape[0]).ravel().tolist())


def bsr_set_identity(A: BsrMatrix, rows_of_blocks: int | None = None) -> None:
    """Make ``A`` the (square) identity."""
    n = A.nrow if rows_of_blocks is None else int(rows_of_blocks)
    bsr_set_diag(A, _identity_block(A.values.dtype), n, n)


def bsr_identity(rows_of_blocks: int, block_type, device=None) -> BsrMatrix:
    """A new square identity matrix of ``rows_of_blocks`` blocks of ``block_type``."""
    A = bsr_zeros(rows_of_blocks, rows_of_blocks, block_type, device=device)
    bsr_set_identity(A)
    return A
