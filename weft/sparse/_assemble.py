"""Assembly: place scalar contributions of one or two source matrices (or triplet lists) into a destination.

Every structural operation of ``weft.sparse`` (triplets, compress, assign/copy with reblocking or casting,
transpose, axpy, diagonal extraction) is expressed as a list of *entries*, one per source scalar: the destination
block coordinates ``(row, col)``, the element ``e`` inside that block and the flat index of the source scalar.
The host (NumPy) decides the destination topology and sorts the entries by destination scalar; one kernel launch
(``gather`` or ``gather2``) then sums them, so the values are computed on the device and recorded on a tape.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import weft as wp

from . import _kernels
from ._matrix import BsrMatrix, Topology, active, ensure_capacity, place_padded, set_compact
from ._views import flat


@dataclass(frozen=True)
class Entries:
    """Scalar contributions of one source: destination block row/col, element in the block, source flat index."""

    row: np.ndarray
    col: np.ndarray
    elem: np.ndarray
    src: np.ndarray

    @staticmethod
    def empty() -> Entries:
        z = np.zeros(0, dtype=np.int64)
        return Entries(z, z, z, z)


@dataclass(frozen=True)
class Source:
    """A flat scalar array, the scale applied to it and its entries."""

    values: wp.array | None
    scale: float
    entries: Entries


def expand(rows, cols, slots, src_shape: tuple[int, int], dst_shape: tuple[int, int], transpose: bool = False,
           ) -> Entries:
    """Entries of source blocks ``(rows, cols)`` stored at ``slots`` (block shape ``src_shape``) for a destination
    of block shape ``dst_shape`` (reblocking when they differ; ``transpose`` swaps rows and columns)."""
    sr, sc = src_shape
    dr, dc = dst_shape
    ii, jj = np.divmod(np.arange(sr * sc, dtype=np.int64), sc)
    gr = rows[:, None] * sr + ii[None, :]
    gc = cols[:, None] * sc + jj[None, :]
    if transpose:
        gr, gc = gc, gr
    src = slots[:, None] * (sr * sc) + (ii * sc + jj)[None, :]
    return Entries((gr // dr).ravel(), (gc // dc).ravel(), ((gr % dr) * dc + gc % dc).ravel(), src.ravel())


def _keys(row, col, ncol: int) -> np.ndarray:
    return row.astype(np.int64) * max(ncol, 1) + col


def assemble(dest: BsrMatrix, sources: list[Source], topology: Topology, structure_only: bool = False,
             capacity: int = 0) -> np.ndarray:
    """Rebuild ``dest`` from ``sources`` under ``topology`` and compute its values; returns, for every entry of
    every source (concatenated), the destination block index (-1 when dropped)."""
    ncol = dest.ncol
    all_keys = [_keys(s.entries.row, s.entries.col, ncol) for s in sources]
    valid = [(s.entries.row >= 0) & (s.entries.row < dest.nrow) & (s.entries.col >= 0) & (s.entries.col < ncol)
             for s in sources]
    if topology is Topology.MASKED:
        rows, cols, slots = active(dest)
        keys = _keys(rows, cols, ncol)
        order = np.argsort(keys, kind="stable")
        keys, slots = keys[order], slots[order]
    else:
        pool = [k[v] for k, v in zip(all_keys, valid)]
        keys = np.unique(np.concatenate(pool)) if pool else np.zeros(0, dtype=np.int64)
        rows, cols = np.divmod(keys, max(ncol, 1))
        if topology is Topology.PADDED:
            slots = place_padded(dest, rows, cols)
        else:
            set_compact(dest, rows, cols, capacity)
            slots = np.arange(keys.shape[0], dtype=np.int64)
    block_of = []
    for k, v in zip(all_keys, valid):
        idx = np.searchsorted(keys, k) if keys.size else np.zeros(k.shape, dtype=np.int64)
        idx = np.minimum(idx, max(keys.size - 1, 0))
        hit = v & (keys.size > 0)
        if keys.size:
            hit &= keys[idx] == k
        block_of.append(np.where(hit, slots[idx] if slots.size else -1, -1))
    if not structure_only:
        _gather_values(dest, sources, block_of)
    return np.concatenate(block_of) if block_of else np.zeros(0, dtype=np.int64)


def _segments(targets: np.ndarray, src: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    keep = targets >= 0
    t, s = targets[keep], src[keep]
    order = np.argsort(t, kind="stable")
    seg = np.zeros(size + 1, dtype=np.int64)
    if t.size:
        np.cumsum(np.bincount(t, minlength=size)[:size], out=seg[1:])
    return s[order], seg


def _int_dev(host, device) -> wp.array:
    return wp.array(np.ascontiguousarray(host, dtype=np.int32), dtype=wp.int32, device=device)


def _shares_memory(a: wp.array, b: wp.array) -> bool:
    if a is None or b is None or a.size == 0 or b.size == 0:
        return False
    a0, b0 = a.ptr, b.ptr
    a1 = a0 + a.size * wp.types.type_size_in_bytes(a.dtype)
    b1 = b0 + b.size * wp.types.type_size_in_bytes(b.dtype)
    return a0 < b1 and b0 < a1


def _gather_values(dest: BsrMatrix, sources: list[Source], block_of: list[np.ndarray]) -> None:
    bs = dest.block_size
    nslots = dest.nnz
    ensure_capacity(dest, nslots)
    device = dest.device
    S = dest.scalar_type
    grad = dest.values.requires_grad or any(s.values is not None and s.values.requires_grad for s in sources)
    out = dest.values
    if grad and not out.requires_grad or any(_shares_memory(s.values, out) for s in sources):
        out = wp.zeros(max(out.shape[0], nslots), dtype=dest.values.dtype, device=device, requires_grad=grad)
    if nslots == 0:
        dest.values = out
        return
    k = _kernels.kernels(S)
    args = []
    for s, blk in zip(sources, block_of):
        targets = np.where(blk >= 0, blk * bs + s.entries.elem, -1)
        perm, seg = _segments(targets, s.entries.src, nslots * bs)
        vals = s.values if s.values is not None else wp.zeros(1, dtype=S, device=device)
        args.append((vals, _int_dev(perm if perm.size else np.zeros(1), device), _int_dev(seg, device),
                     S(s.scale)))
    out_flat = flat(out, nslots)
    if len(args) == 1:
        wp.launch(k.gather, dim=nslots * bs, device=device, inputs=[*args[0]], outputs=[out_flat])
    else:
        wp.launch(k.gather2, dim=nslots * bs, device=device, inputs=[*args[0], *args[1]], outputs=[out_flat])
    dest.values = out


def matrix_source(A: BsrMatrix, scale, dst_shape, transpose: bool = False) -> Source:
    """Entries of all active blocks of ``A`` for a destination of block shape ``dst_shape``."""
    rows, cols, slots = active(A)
    return Source(flat(A.values) if A.values.shape[0] else None, scale,
                  expand(rows, cols, slots, A.block_shape, dst_shape, transpose))


def gather_into(out_flat: wp.array, targets: np.ndarray, src_flat: wp.array | None, src: np.ndarray, scale) -> None:
    """``out_flat[t] = scale * sum of src_flat[s]`` over the entries ``(t, s)`` (targets < 0 are dropped; scalars
    of ``out_flat`` without entries become zero)."""
    device = out_flat.device
    S = out_flat.dtype
    size = out_flat.shape[0]
    perm, seg = _segments(targets, src, size)
    vals = src_flat if src_flat is not None else wp.zeros(1, dtype=S, device=device)
    wp.launch(_kernels.kernels(S).gather, dim=size, device=device,
              inputs=[vals, _int_dev(perm if perm.size else np.zeros(1), device), _int_dev(seg, device), S(scale)],
              outputs=[out_flat])
