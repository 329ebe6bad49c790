"""Cartesian domain decomposition of a 1-3-D structured grid over the ranks of an MPI communicator."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..runtime import array as _array
from ._mpi import DistributedError, check_all, check_same, install_excepthook, mpi


@dataclass(frozen=True)
class Decomposition:
    """This rank's block of a global grid split over a Cartesian grid of ranks (made by :func:`decompose`).

    Attributes:
        shape: global grid shape.
        dims: ranks along each axis.
        periodic: whether each axis wraps around (its first and last ranks are neighbours).
        comm: the Cartesian communicator (``MPI.Cartcomm``) every operation of this decomposition uses.
        rank: this rank in ``comm``.
        coords: this rank's position in the rank grid.
        local_shape: the points this rank owns (blocks differ by at most one point along an axis).
        offset: global index of this rank's first point.
        neighbors: per axis, (lower, upper) neighbour rank, ``MPI.PROC_NULL`` at a non-periodic wall.
    """

    shape: tuple
    dims: tuple
    periodic: tuple
    comm: object
    rank: int
    coords: tuple
    local_shape: tuple
    offset: tuple
    neighbors: tuple

    @property
    def size(self) -> int:
        """Number of ranks."""
        return int(np.prod(self.dims))

    @property
    def ndim(self) -> int:
        """Number of grid axes."""
        return len(self.shape)

    def halo_widths(self, halo) -> tuple:
        """``halo`` (an int or one int per axis) as one width per axis."""
        if isinstance(halo, (int, np.integer)):
            return (int(halo),) * self.ndim
        widths = tuple(int(h) for h in halo)
        if len(widths) != self.ndim:
            raise DistributedError(f"halo: expected an int or {self.ndim} widths, got {halo!r}")
        return widths

    def zeros(self, halo=0, dtype=float, device=None, requires_grad: bool = False):
        """A zeroed local array: the owned block plus ``halo`` ghost layers on both sides of every axis."""
        h = self.halo_widths(halo)
        shape = tuple(n + 2 * w for n, w in zip(self.local_shape, h))
        return _array.zeros(shape, dtype=dtype, device=device, requires_grad=requires_grad)

    def interior(self, a, halo=0):
        """The owned block of a local array with ``halo`` ghost layers (a view: writes go to ``a``)."""
        h = self.halo_widths(halo)
        if all(w == 0 for w in h):
            return a
        index = tuple(slice(w, w + n) for w, n in zip(h, self.local_shape))
        return a[index]

    def local_slices(self) -> tuple:
        """Slices of the global grid this rank owns."""
        return tuple(slice(o, o + n) for o, n in zip(self.offset, self.local_shape))

    def scatter(self, global_values, halo=0, dtype=float, device=None, requires_grad: bool = False):
        """A local array (with ``halo`` ghost layers, zero until a halo exchange) holding this rank's block of
        ``global_values`` (a NumPy array of the global shape, the same on every rank; trailing dimensions of
        vector dtypes allowed)."""
        values = np.asarray(global_values)
        if tuple(values.shape[:self.ndim]) != self.shape:
            raise DistributedError(f"scatter: global_values has shape {values.shape}, the grid is {self.shape}")
        h = self.halo_widths(halo)
        block = values[self.local_slices()]
        pad = [(w, w) for w in h] + [(0, 0)] * (values.ndim - self.ndim)
        data = np.pad(block, pad)
        out = _array.array(np.ascontiguousarray(data), dtype=dtype, device=device, requires_grad=requires_grad)
        return out


def _split(n: int, parts: int, index: int) -> tuple[int, int]:
    """(size, start) of block ``index`` of ``n`` points split into ``parts`` blocks differing by at most one."""
    base, extra = divmod(n, parts)
    size = base + (1 if index < extra else 0)
    start = index * base + min(index, extra)
    return size, start


def decompose(shape, comm=None, dims=None, periodic=True, timeout: float | None = None) -> Decomposition:
    """Split a global grid of ``shape`` (1-3 axes) over the ranks of ``comm`` (default ``MPI.COMM_WORLD``).

    Args:
        shape: the global grid shape, the same on every rank (checked: every rank raises otherwise).
        comm: an mpi4py communicator.
        dims: ranks per axis; 0 entries (or None for all) are chosen by ``MPI.Compute_dims`` (as square as
            possible). ``dims=(P, 1)`` gives a slab decomposition of a 2-D grid.
        periodic: a bool, or one per axis.
        timeout: seconds the collective checks may wait (``WEFT_MPI_TIMEOUT`` by default).

    Collective: every rank of ``comm`` must call it. Raises :class:`DistributedError` on every rank when the
    shapes differ across ranks or an axis has fewer points than ranks.
    """
    MPI = mpi()
    install_excepthook()
    comm = MPI.COMM_WORLD if comm is None else comm
    shape = tuple(int(n) for n in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    nd = len(shape)
    if not 1 <= nd <= 3:
        raise DistributedError(f"decompose: shape must have 1 to 3 axes, got {shape}")
    check_same(comm, (nd, *shape, *([0] * (3 - nd))), "decompose", "the global grid shapes", timeout)
    size = comm.Get_size()
    want = [0] * nd if dims is None else [int(d) for d in dims]
    if len(want) != nd:
        raise DistributedError(f"decompose: dims must have {nd} entries, got {dims!r}")
    try:
        dims_ = tuple(MPI.Compute_dims(size, want))
    except Exception as exc:  # noqa: BLE001 - MPI's error names the bad combination only by code
        raise DistributedError(f"decompose: dims={dims!r} cannot split {size} ranks ({exc})") from None
    periods = tuple(bool(p) for p in (periodic if isinstance(periodic, (tuple, list)) else [periodic] * nd))
    if len(periods) != nd:
        raise DistributedError(f"decompose: periodic must be a bool or {nd} bools, got {periodic!r}")
    check_same(comm, (*dims_, *periods), "decompose", "dims and periodic", timeout)
    check_all(comm, all(n >= d for n, d in zip(shape, dims_)), "decompose",
              f"grid {shape} has fewer points than ranks {dims_} along an axis", timeout)
    cart = comm.Create_cart(dims_, periods=periods, reorder=False)
    rank = cart.Get_rank()
    coords = tuple(cart.Get_coords(rank))
    local, offset = zip(*(_split(n, d, c) for n, d, c in zip(shape, dims_, coords)))
    neighbors = tuple(tuple(cart.Shift(axis, 1)) for axis in range(nd))
    return Decomposition(shape=shape, dims=dims_, periodic=periods, comm=cart, rank=rank, coords=coords,
                         local_shape=tuple(local), offset=tuple(offset), neighbors=neighbors)
