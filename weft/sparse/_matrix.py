"""``BsrMatrix``: block sparse row matrices, their lazy scaled expressions, allocation and host-side topology.

Storage follows Warp's ``warp.sparse``: ``offsets`` (``nrow + 1`` ints), ``columns`` and ``values`` (at least ``nnz``
slots), and ``row_counts``: ``None`` for a compact matrix (row ``r`` is ``offsets[r]:offsets[r+1]``), or the active
block count of every row for a padded one (row ``r`` is ``offsets[r]:offsets[r] + row_counts[r]``, the rest of
``offsets[r]:offsets[r+1]`` is spare capacity). Block values are a 1-D array of ``mat(r, c)`` (scalars for 1x1).

Topology work (sorting triplets, merging duplicates, symbolic products) runs on the host with NumPy; every value
computation is a weft kernel (``_kernels``), so values are differentiable through ``wp.Tape``.
"""

from __future__ import annotations

import enum

import numpy as np

import weft as wp

from ..errors import Error

BSR_STATUS_SUCCESS = 0
BSR_STATUS_ROW_CAPACITY_EXCEEDED = 1


class Topology(enum.Enum):
    """How an operation lays out the blocks of its destination."""

    COMPACT = "compact"  # rebuild the destination's rows, tightly packed
    MASKED = "masked"  # keep the destination's blocks; contributions elsewhere are dropped
    PADDED = "padded"  # keep the destination's row capacities; overflowing rows set a status code


def topology_arg(topology, default: Topology = Topology.COMPACT, allowed=tuple(Topology)) -> Topology:
    """Parse Warp's string (or a ``Topology``) for the ``topology`` argument."""
    if topology is None:
        return default
    try:
        t = Topology(topology.value if isinstance(topology, Topology) else topology)
    except ValueError:
        raise ValueError(f"Unsupported topology policy: {topology}") from None
    if t not in allowed:
        raise ValueError(f"Unsupported topology policy for this operation: {topology}")
    return t


# ---------------------------------------------------------------------------------------------------- block types
def block_shape_of(block_type) -> tuple[int, int]:
    """``(rows, cols)`` of a block type: a matrix type or a scalar (1x1)."""
    if wp.types.type_is_matrix(block_type):
        return tuple(int(s) for s in block_type._shape_)
    if wp.types.type_is_vector(block_type) or wp.types.type_is_quaternion(block_type) \
            or wp.types.type_is_transformation(block_type):
        raise ValueError("BsrMatrix block type must be either warp matrix or scalar")
    if block_type in (float, int):
        return (1, 1)
    if wp.types.types_equal(block_type, wp.types.type_scalar_type(block_type)):
        return (1, 1)
    raise ValueError("BsrMatrix block type must be either warp matrix or scalar")


def resolve_block_type(block_type):
    """Warp's conventions: ``float`` is float32; a 1x1 matrix stays a matrix."""
    if block_type is float:
        return wp.float32
    if block_type is int:
        return wp.int32
    block_shape_of(block_type)
    return block_type


def make_block_type(shape: tuple[int, int], scalar):
    return scalar if tuple(shape) == (1, 1) else wp.types.matrix(shape=tuple(shape), dtype=scalar)


class BsrMatrix:
    """A block sparse row matrix (see the module docstring for its storage). Build it with ``bsr_zeros``,
    ``bsr_from_triplets``, ``bsr_diag``, ... rather than directly.

    Operators: ``A + B``, ``A - B``, ``-A``, ``s * A``, ``A / s`` (scaled expressions, evaluated lazily by the
    functions that take them), ``A @ B`` (``bsr_mm``), ``A @ x`` and ``x @ A`` (``bsr_mv``), ``A += B``,
    ``A -= B``, ``A *= s``, ``A.transpose()``.
    """

    def __init__(self, nrow: int, ncol: int, block_type, device=None):
        self.nrow = int(nrow)
        self.ncol = int(ncol)
        self.nnz = 0
        dev = wp.get_device(device)
        self._block_type = resolve_block_type(block_type)
        self.offsets = wp.zeros(self.nrow + 1, dtype=wp.int32, device=dev)
        self.columns = wp.empty(0, dtype=wp.int32, device=dev)
        self.values = wp.empty(0, dtype=self._block_type, device=dev)
        self.row_counts = None
        self._status = 0

    # -------------------------------------------------------------- description
    @property
    def dtype(self):
        """The block type: a matrix type, or the scalar type for 1x1 blocks."""
        return self.values.dtype

    @property
    def scalar_type(self):
        return wp.types.type_scalar_type(self.values.dtype)

    @property
    def block_shape(self) -> tuple[int, int]:
        return block_shape_of(self.values.dtype)

    @property
    def block_size(self) -> int:
        r, c = self.block_shape
        return r * c

    @property
    def shape(self) -> tuple[int, int]:
        r, c = self.block_shape
        return (self.nrow * r, self.ncol * c)

    @property
    def device(self):
        return self.values.device

    @property
    def requires_grad(self) -> bool:
        return self.values.requires_grad

    @property
    def scalar_values(self) -> wp.array:
        """The values as an ``(nnz, rows, cols)`` array of scalars (same memory)."""
        from ._views import flat

        r, c = self.block_shape
        return flat(self.values).reshape((self.values.shape[0], r, c))

    # -------------------------------------------------------------- nnz and status
    def nnz_sync(self) -> int:
        """``offsets[nrow]`` read back to the host (stored into ``nnz``): the block count of a compact matrix, the
        total row capacity of a padded one."""
        self.nnz = int(self.offsets.numpy()[self.nrow]) if self.offsets.shape[0] > self.nrow else 0
        return self.nnz

    def notify_nnz_changed(self, nnz: int | None = None, nnz_capacity: int | None = None) -> None:
        """Tell the matrix its ``offsets`` (or ``nnz``) were changed by hand: ``nnz`` is re-read (or set) and the
        ``columns`` / ``values`` arrays grown to hold ``nnz_capacity`` (default ``nnz``) slots."""
        if nnz is None:
            if nnz_capacity is None:
                self.nnz_sync()
            else:
                self.nnz = int(nnz_capacity)
        else:
            self.nnz = int(nnz)
        ensure_capacity(self, max(self.nnz, int(nnz_capacity or 0)))

    def copy_nnz_async(self) -> None:
        """Warp starts an asynchronous read of ``offsets[nrow]``; weft's topology is known on the host already."""

    def status_sync(self) -> int:
        """``BSR_STATUS_SUCCESS``, or ``BSR_STATUS_ROW_CAPACITY_EXCEEDED`` when a padded operation dropped blocks."""
        return self._status

    def status_message(self) -> str:
        return {BSR_STATUS_SUCCESS: "success",
                BSR_STATUS_ROW_CAPACITY_EXCEEDED: "row capacity exceeded"}.get(self._status, "unknown status")

    def clear_status(self) -> None:
        self._status = BSR_STATUS_SUCCESS

    def uncompress_rows(self, out: wp.array | None = None) -> wp.array:
        """The row of every stored block slot (``-1`` outside active rows), ``nnz`` entries."""
        n = self.nnz
        rows = np.full(n, -1, dtype=np.int32)
        off = self.offsets.numpy()[: self.nrow + 1].astype(np.int64)
        counts = self.row_counts.numpy()[: self.nrow] if self.row_counts is not None else np.diff(off)
        for_rows = np.repeat(np.arange(self.nrow, dtype=np.int32), counts)
        slots = _active_slots(off, counts)
        keep = slots < n
        rows[slots[keep]] = for_rows[keep]
        if out is None:
            return wp.array(rows, dtype=wp.int32, device=self.device)
        wp.copy(out, wp.array(rows, dtype=wp.int32, device=self.device), count=n)
        return out

    # -------------------------------------------------------------- operators
    def __add__(self, y):
        from . import bsr_axpy, bsr_copy

        return bsr_axpy(y, bsr_copy(self))

    def __radd__(self, x):
        from . import bsr_axpy, bsr_copy

        return bsr_axpy(self, bsr_copy(x))

    def __iadd__(self, y):
        from . import bsr_axpy

        return bsr_axpy(y, self)

    def __sub__(self, y):
        from . import bsr_axpy, bsr_copy

        return bsr_axpy(y, bsr_copy(self), alpha=-1.0)

    def __rsub__(self, x):
        from . import bsr_axpy, bsr_copy

        return bsr_axpy(self, bsr_copy(x), alpha=-1.0)

    def __isub__(self, y):
        from . import bsr_axpy

        return bsr_axpy(y, self, alpha=-1.0)

    def __mul__(self, y):
        return ScaledBsr(self, y)

    def __rmul__(self, x):
        return ScaledBsr(self, x)

    def __imul__(self, y):
        from . import bsr_scale

        return bsr_scale(self, y)

    def __truediv__(self, y):
        return ScaledBsr(self, 1.0 / y)

    def __neg__(self):
        return ScaledBsr(self, -1.0)

    def __matmul__(self, y):
        from . import bsr_mm, bsr_mv

        if isinstance(y, (BsrMatrix, ScaledBsr)):
            return bsr_mm(self, y)
        return bsr_mv(self, y)

    def __rmatmul__(self, x):
        from . import bsr_mv

        return bsr_mv(self, x, transpose=True)

    def __imatmul__(self, y):
        from . import bsr_mm

        return bsr_mm(self, y, self)

    def transpose(self):
        from . import bsr_transposed

        return bsr_transposed(self)

    def __repr__(self) -> str:
        return (f"BsrMatrix(shape={self.shape}, block_shape={self.block_shape}, nnz={self.nnz}, "
                f"dtype={wp.types.type_repr(self.dtype)}, device={self.device})")


class ScaledBsr:
    """``alpha * A``, kept lazy: the sparse functions fold the scale into their own kernels; ``eval()`` makes it a
    matrix."""

    def __init__(self, mat: BsrMatrix, scale):
        if isinstance(mat, ScaledBsr):
            mat, scale = mat.mat, mat.scale * scale
        self.mat = mat
        self.scale = scale

    def eval(self) -> BsrMatrix:
        from . import bsr_copy

        return bsr_copy(self)

    def __getattr__(self, name):
        # Shape, block and device description read through to the matrix (nrow, ncol, nnz, offsets, dtype, ...)
        if name in ("mat", "scale"):
            raise AttributeError(name)
        return getattr(self.mat, name)

    def __add__(self, y):
        from . import bsr_axpy, bsr_copy

        return bsr_axpy(y, bsr_copy(self))

    def __radd__(self, x):
        from . import bsr_axpy, bsr_copy

        return bsr_axpy(self, bsr_copy(x))

    def __sub__(self, y):
        from . import bsr_axpy, bsr_copy

        return bsr_axpy(y, bsr_copy(self), alpha=-1.0)

    def __rsub__(self, x):
        from . import bsr_axpy, bsr_copy

        return bsr_axpy(self, bsr_copy(x), alpha=-1.0)

    def __mul__(self, y):
        return ScaledBsr(self.mat, self.scale * y)

    __rmul__ = __mul__

    def __truediv__(self, y):
        return ScaledBsr(self.mat, self.scale / y)

    def __neg__(self):
        return ScaledBsr(self.mat, -self.scale)

    def __matmul__(self, y):
        from . import bsr_mm, bsr_mv

        if isinstance(y, (BsrMatrix, ScaledBsr)):
            return bsr_mm(self, y)
        return bsr_mv(self, y)

    def __rmatmul__(self, x):
        from . import bsr_mv

        return bsr_mv(self, x, transpose=True)

    def transpose(self):
        from . import bsr_transposed

        return ScaledBsr(bsr_transposed(self.mat), self.scale)


def split(A) -> tuple[BsrMatrix, float]:
    """The matrix and scale of a ``BsrMatrix`` or ``ScaledBsr``."""
    if isinstance(A, ScaledBsr):
        return A.mat, A.scale
    if isinstance(A, BsrMatrix):
        return A, 1.0
    raise TypeError(f"expected a BsrMatrix or a scaled BsrMatrix expression, got {type(A).__name__}")


def bsr_matrix_t(dtype):
    """The BSR matrix class for block type ``dtype`` (weft uses one ``BsrMatrix`` class; this checks the type)."""
    block_shape_of(resolve_block_type(dtype))
    return BsrMatrix


# ---------------------------------------------------------------------------------------------------- host topology
def _active_slots(off: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Storage slots of the active blocks, row by row."""
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.repeat(off[:-1] if off.shape[0] > counts.shape[0] else off[: counts.shape[0]], counts)
    first = np.repeat(np.cumsum(counts) - counts, counts)
    return starts + (np.arange(total) - first)


def active(A: BsrMatrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rows, cols, slots)`` of the active blocks of ``A`` with a valid column, in storage order."""
    off = A.offsets.numpy()[: A.nrow + 1].astype(np.int64)
    if A.row_counts is not None:
        counts = np.minimum(A.row_counts.numpy()[: A.nrow].astype(np.int64), np.diff(off))
    else:
        counts = np.diff(off)
    counts = np.maximum(counts, 0)
    slots = _active_slots(off, counts)
    rows = np.repeat(np.arange(A.nrow, dtype=np.int64), counts)
    cols = A.columns.numpy()[slots].astype(np.int64) if slots.size else np.zeros(0, dtype=np.int64)
    ok = (cols >= 0) & (cols < A.ncol)
    return rows[ok], cols[ok], slots[ok]


def ensure_capacity(A: BsrMatrix, n: int, keep: bool = True) -> None:
    """Grow ``columns`` / ``values`` to at least ``n`` slots (existing contents kept when ``keep``)."""
    for name in ("columns", "values"):
        a = getattr(A, name)
        if a.shape[0] >= n:
            continue
        new = wp.zeros(n, dtype=a.dtype, device=a.device, requires_grad=a.requires_grad)
        if keep and a.shape[0]:
            wp.copy(new, a, count=a.shape[0])
        setattr(A, name, new)


def _int_array(host: np.ndarray, device) -> wp.array:
    return wp.array(np.ascontiguousarray(host, dtype=np.int32), dtype=wp.int32, device=device)


def write_ints(dst: wp.array, host: np.ndarray) -> None:
    n = host.shape[0]
    if n:
        wp.copy(dst, _int_array(host, dst.device), count=n)


def set_compact(A: BsrMatrix, rows: np.ndarray, cols: np.ndarray, capacity: int = 0) -> None:
    """Make ``A`` compact with the blocks ``(rows, cols)`` (sorted by row then column) in slots ``0..n-1``."""
    n = rows.shape[0]
    counts = np.bincount(rows, minlength=A.nrow)[: A.nrow] if n else np.zeros(A.nrow, dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum(counts)))
    if A.offsets.shape[0] < A.nrow + 1:
        A.offsets = wp.zeros(A.nrow + 1, dtype=wp.int32, device=A.device)
    write_ints(A.offsets, offsets)
    A.row_counts = None
    ensure_capacity(A, max(n, capacity), keep=False)
    write_ints(A.columns, cols)
    # like Warp, ``nnz`` may stay an upper bound (the capacity asked for) until ``nnz_sync``
    A.nnz = max(n, capacity)


def place_padded(A: BsrMatrix, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Write blocks ``(rows, cols)`` (sorted) into ``A``'s existing row capacities; returns each block's slot, or -1
    where its row is full (then the status is ``BSR_STATUS_ROW_CAPACITY_EXCEEDED``)."""
    off = A.offsets.numpy()[: A.nrow + 1].astype(np.int64)
    cap = np.diff(off)
    n = rows.shape[0]
    first = np.searchsorted(rows, np.arange(A.nrow), side="left")
    rank = np.arange(n) - first[rows] if n else np.zeros(0, dtype=np.int64)
    fits = rank < cap[rows] if n else np.zeros(0, dtype=bool)
    slots = np.where(fits, off[rows] + rank, -1) if n else np.zeros(0, dtype=np.int64)
    counts = np.bincount(rows[fits], minlength=A.nrow)[: A.nrow] if n else np.zeros(A.nrow, dtype=np.int64)
    if not np.all(fits):
        A._status = BSR_STATUS_ROW_CAPACITY_EXCEEDED
    if A.row_counts is None or A.row_counts.shape[0] < A.nrow:
        A.row_counts = wp.zeros(A.nrow, dtype=wp.int32, device=A.device)
    write_ints(A.row_counts, counts)
    A.nnz = max(int(off[-1]), A.nnz)
    ensure_capacity(A, A.nnz)
    if np.any(fits):
        colbuf = A.columns.numpy()[: A.nnz].astype(np.int32).copy()
        colbuf[slots[fits]] = cols[fits]
        write_ints(A.columns, colbuf)
    return slots


def bsr_zeros(rows_of_blocks: int, cols_of_blocks: int, block_type, device=None, *, topology=None,
              row_capacity=None, nnz_capacity: int | None = None) -> BsrMatrix:
    """An empty ``rows_of_blocks x cols_of_blocks`` matrix of ``block_type`` blocks (a matrix type, or a scalar
    type for a CSR matrix). With ``row_capacity`` (an int or per-row array) or ``topology="padded"`` the matrix
    is padded: every row owns that many slots and ``row_counts`` records how many are in use."""
    A = BsrMatrix(rows_of_blocks, cols_of_blocks, block_type, device)
    bsr_set_zero(A, topology=topology if topology is not None else ("padded" if row_capacity is not None else None),
                 row_capacity=row_capacity, nnz_capacity=nnz_capacity)
    return A


def bsr_set_zero(bsr: BsrMatrix, rows_of_blocks: int | None = None, cols_of_blocks: int | None = None, *,
                 topology="compact", row_capacity=None, nnz_capacity: int | None = None) -> None:
    """Remove every block (optionally resizing the matrix). Compact: ``offsets`` all zero; padded: rows keep (or
    get) ``row_capacity`` slots with ``row_counts`` zero; masked: the topology stays and the values become zero."""
    if rows_of_blocks is not None:
        bsr.nrow = int(rows_of_blocks)
    if cols_of_blocks is not None:
        bsr.ncol = int(cols_of_blocks)
    t = topology_arg(topology)
    bsr.clear_status()
    if t is Topology.MASKED:
        bsr.values.zero_()
        return
    if t is Topology.PADDED or row_capacity is not None:
        if row_capacity is None:
            off = bsr.offsets.numpy()[: bsr.nrow + 1].astype(np.int64)
            caps = np.diff(off) if off.shape[0] == bsr.nrow + 1 else np.zeros(bsr.nrow, dtype=np.int64)
        elif isinstance(row_capacity, wp.array):
            caps = row_capacity.numpy()[: bsr.nrow].astype(np.int64)
        else:
            caps = np.full(bsr.nrow, int(row_capacity), dtype=np.int64)
        offsets = np.concatenate(([0], np.cumsum(caps)))
        bsr.offsets = _int_array(offsets, bsr.device)
        bsr.row_counts = wp.zeros(bsr.nrow, dtype=wp.int32, device=bsr.device)
        bsr.nnz = max(int(offsets[-1]), int(nnz_capacity or 0))
        ensure_capacity(bsr, bsr.nnz, keep=False)
        return
    bsr.offsets = wp.zeros(bsr.nrow + 1, dtype=wp.int32, device=bsr.device)
    bsr.row_counts = None
    bsr.nnz = 0
    ensure_capacity(bsr, int(nnz_capacity or 0), keep=False)


class BsrTripletMap:
    """A reusable map from COO triplets to the blocks of a compact matrix, built by ``bsr_set_from_triplets(...,
    build_mapping=True)``; ``bsr_set_from_mapped_values`` then refills the values without redoing the topology.

    Attributes: ``triplet_count``, ``capacity``, ``device``; ``_triplet_blocks`` (block of every triplet, -1 when
    dropped), ``_triplet_indices`` (triplets grouped by block) and ``_block_ends`` (end of each block's group).
    """

    def __init__(self, capacity: int = 0, device=None):
        self.triplet_count = 0
        self._device = wp.get_device(device)
        self._built = False
        self._alloc(int(capacity))

    def _alloc(self, capacity: int) -> None:
        self._tb = wp.zeros(capacity, dtype=wp.int32, device=self._device)
        self._ti = wp.zeros(capacity, dtype=wp.int32, device=self._device)
        self._be = wp.zeros(capacity, dtype=wp.int32, device=self._device)

    @property
    def device(self):
        return self._device

    @property
    def capacity(self) -> int:
        return self._tb.shape[0]

    @property
    def _triplet_blocks(self) -> wp.array:
        return self._tb[: self.triplet_count]

    @property
    def _triplet_indices(self) -> wp.array:
        return self._ti[: self.triplet_count]

    @property
    def _block_ends(self) -> wp.array:
        return self._be[: self.triplet_count]

    def _build(self, blocks: np.ndarray, nblocks: int) -> None:
        n = blocks.shape[0]
        if n > self.capacity:
            self._alloc(n)
        self.triplet_count = n
        order = np.argsort(np.where(blocks < 0, np.iinfo(np.int64).max, blocks), kind="stable")
        ends = np.cumsum(np.bincount(blocks[blocks >= 0], minlength=nblocks))[:nblocks] if n else np.zeros(0)
        ends_full = np.zeros(n, dtype=np.int64)
        ends_full[: ends.shape[0]] = ends
        write_ints(self._tb, blocks)
        write_ints(self._ti, order)
        write_ints(self._be, ends_full)
        self._blocks_host = blocks.copy()
        self._nblocks = nblocks
        self._built = True

    def validate(self, dest: BsrMatrix) -> None:
        if not self._built:
            raise ValueError("The triplet map has not been built: pass it to bsr_set_from_triplets(build_mapping=)")


class SparseValueError(Error, ValueError):
    """A sparse operation's arguments do not fit together (shapes, block shapes, devices)."""


class SparseTypeError(Error, TypeError):
    """A sparse operation got an argument of the wrong type."""
