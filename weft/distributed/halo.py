"""Halo (ghost-layer) exchange of local arrays of a :class:`~weft.distributed.Decomposition`, with its adjoint.

A local array holds the owned block plus ``w`` ghost layers on both sides of each axis. The exchange runs the axes
one after the other; along axis d each rank packs its two boundary slabs of width w (full extent, ghosts included,
along the other axes) with a weft kernel, posts non-blocking receives and sends to its two neighbours, waits (with
a deadline), and unpacks into its ghost slabs. Because later axes carry the ghosts earlier axes filled, corner and
edge ghosts end up right too (9- and 27-point stencils work). With ``corners=False`` the slabs cover the owned
points only, every axis is posted at once, and ``start`` / ``finish`` let interior work run while the messages
travel. At a non-periodic wall the ghosts are left alone (they hold the user's boundary values).

Adjoint (on a ``wp.Tape``): the reverse exchange with accumulation. Axes run in reverse order; each rank moves the
gradient out of its ghost slabs (they were overwritten, so their gradient is consumed), sends it back to the rank
that owns those points, and that rank adds it into the gradient of the slab it had sent.
"""

from __future__ import annotations

import zlib

import weft as wp

from ..runtime import array as _array
from ..runtime.tape import LaunchRecord, active_tape
from ._mpi import DistributedError, check_all, check_same, mpi, untaped
from .channel import Channel, post
from .kernels import ACCUMULATE, PACK, TAKE, UNPACK


def _dtype_key(dtype) -> int:
    name = getattr(dtype, "__name__", repr(dtype))  # canonical dtype classes have unique names
    return zlib.crc32(name.encode())


class _Axis:
    """The four slabs of one axis: offsets in the local array and their message buffers.

    With ``corners`` the slabs span the whole local extent of the other axes (ghosts included), else only their
    owned points (faces only: the axes' slabs are then disjoint and can be exchanged at the same time)."""

    def __init__(self, shape, widths, axis, interior, device, dtype, corners: bool):
        width = widths[axis]
        region = tuple(width if d == axis else (n if corners else n - 2 * widths[d]) for d, n in enumerate(shape))

        def offset(start):
            return tuple(start if d == axis else (0 if corners else widths[d]) for d in range(len(shape)))

        self.axis = axis
        self.region = region
        self.send_lo, self.send_hi = offset(width), offset(interior)  # owned slabs next to each face
        self.ghost_lo, self.ghost_hi = offset(0), offset(interior + width)
        self.buffers = {name: Channel(_array.zeros(region, dtype=dtype, device=device))
                        for name in ("send_lo", "send_hi", "recv_lo", "recv_hi")}
        self.zero = _array.zeros(region, dtype=dtype, device=device)


class HaloExchange:
    """Exchanges the ghost layers of local arrays of one shape and dtype (build once, call every step).

    Args:
        decomp: the :class:`Decomposition`.
        halo: ghost width, an int or one per axis (0: no ghosts along that axis).
        dtype: element type of the arrays (any weft dtype: scalars, vectors, matrices).
        device: where the arrays live.
        timeout: seconds a wait may take before :class:`DistributedError` (``WEFT_MPI_TIMEOUT`` by default).
        corners: also fill edge and corner ghosts (axes exchanged one after the other, for 9- and 27-point
            stencils). ``corners=False`` fills the faces only, posts every axis at once and allows
            :meth:`start` / :meth:`finish` (overlap the messages with work on the interior).

    Collective: every rank builds it with the same halo and dtype, else every rank raises. A halo wider than
    some rank's block also raises on every rank (the ghosts would need points beyond the neighbour).
    """

    def __init__(self, decomp, halo=1, dtype=float, device=None, timeout: float | None = None,
                 corners: bool = True):
        self.decomp = decomp
        self.widths = decomp.halo_widths(halo)
        self.dtype = _array.zeros(0, dtype=dtype).dtype  # weft's canonical dtype class (float -> float32)
        self.device = wp.get_device(device)
        self.timeout = timeout
        self.corners = bool(corners)
        comm = decomp.comm
        dtype = self.dtype
        check_same(comm, (*self.widths, _dtype_key(dtype), int(self.corners)), "halo exchange",
                   "halo widths, dtypes and corners", timeout)
        too_wide = [(d, w, n) for d, (w, n) in enumerate(zip(self.widths, decomp.local_shape)) if w > n]
        text = "; ".join(f"axis {d}: halo {w} > {n} points" for d, w, n in too_wide)
        check_all(comm, not too_wide, "halo exchange",
                  f"the halo is wider than the local block ({text or 'see the other ranks'}); use fewer ranks "
                  f"along that axis or a narrower halo", timeout)
        self.shape = tuple(n + 2 * w for n, w in zip(decomp.local_shape, self.widths))
        self.axes = [_Axis(self.shape, self.widths, d, decomp.local_shape[d], self.device, dtype, self.corners)
                     for d, w in enumerate(self.widths) if w > 0]
        self._pending = None

    def __call__(self, a) -> None:
        """Fill the ghost layers of ``a`` (a local array of this exchange's shape) from the neighbours."""
        if not self.corners:
            self.start(a)
            self.finish()
            return
        self._check(a)
        with untaped():
            for ax in self.axes:
                self._pack(a, ax)
                self._post(ax).wait(self.timeout)
                self._unpack(a, ax)
        self._record(a)

    def start(self, a) -> None:
        """Pack ``a``'s boundary slabs and post every message, without waiting (faces only: ``corners=False``).
        Work that does not read the ghosts may run before :meth:`finish`; ``a``'s owned points must not change."""
        if self.corners:
            raise DistributedError("HaloExchange.start: only a faces-only exchange (corners=False) can be split; "
                                   "with corners the axes run one after the other")
        if self._pending is not None:
            raise DistributedError("HaloExchange.start: the previous exchange was not finished")
        self._check(a)
        with untaped():
            for ax in self.axes:
                self._pack(a, ax)
            pending = [self._post(ax) for ax in self.axes]
        tape = active_tape.get()
        self._pending = (a, pending, tape, len(tape.launches) if tape is not None else 0)

    def finish(self) -> None:
        """Wait for the messages :meth:`start` posted and unpack them into the ghosts."""
        if self._pending is None:
            raise DistributedError("HaloExchange.finish: no exchange was started")
        a, pending, tape, first = self._pending
        self._pending = None
        with untaped():
            for ax, p in zip(self.axes, pending):
                p.wait(self.timeout)
                self._unpack(a, ax)
        if tape is not None:
            _exempt_ghost_writes(tape, first, a)
        self._record(a)

    def _check(self, a) -> None:
        if tuple(a.shape) != self.shape:
            raise DistributedError(f"halo exchange: array has shape {tuple(a.shape)}, this exchange was built for "
                                   f"local shape {self.shape} (block {self.decomp.local_shape} + halo "
                                   f"{self.widths})")
        if a.dtype != self.dtype:
            raise DistributedError(f"halo exchange: array dtype {a.dtype} differs from the exchange's {self.dtype}")

    def _record(self, a) -> None:
        tape = active_tape.get()
        if tape is None or a.grad is None:
            return
        grad = a.grad

        def backward():
            with untaped():
                if self.corners:
                    for ax in reversed(self.axes):
                        self._take(grad, ax)
                        self._post(ax, adjoint=True).wait(self.timeout)
                        self._accumulate(grad, ax)
                else:  # disjoint face slabs: every axis at once
                    for ax in self.axes:
                        self._take(grad, ax)
                    pending = [self._post(ax, adjoint=True) for ax in self.axes]
                    for ax, p in zip(self.axes, pending):
                        p.wait(self.timeout)
                        self._accumulate(grad, ax)

        tape.record_func(backward, [a])

    # ------------------------------------------------------------------ one axis
    def _launch(self, kernels, ax, inputs, out) -> None:
        wp.launch(kernels[len(self.shape)], dim=ax.region, inputs=inputs, outputs=[out], device=self.device,
                  record_tape=False)

    def _sides(self, ax):
        MPI = mpi()
        lower, upper = self.decomp.neighbors[ax.axis]
        return lower != MPI.PROC_NULL, upper != MPI.PROC_NULL

    def _pack(self, a, ax: _Axis) -> None:
        lo, hi = self._sides(ax)
        b = ax.buffers
        if lo:
            self._launch(PACK, ax, [a, *ax.send_lo], b["send_lo"].buf)
        if hi:
            self._launch(PACK, ax, [a, *ax.send_hi], b["send_hi"].buf)

    def _unpack(self, a, ax: _Axis) -> None:
        lo, hi = self._sides(ax)
        b = ax.buffers
        if lo:
            self._launch(UNPACK, ax, [b["recv_lo"].buf, *ax.ghost_lo], a)
        if hi:
            self._launch(UNPACK, ax, [b["recv_hi"].buf, *ax.ghost_hi], a)

    def _post(self, ax: _Axis, adjoint: bool = False):
        """Tag 2d travels up (to the upper neighbour), 2d + 1 down; the adjoint sends the ghosts' gradient back."""
        d = ax.axis
        lower, upper = self.decomp.neighbors[d]
        b = ax.buffers
        if not adjoint:
            return post(self.decomp.comm,
                        sends=[(b["send_lo"], lower, 2 * d + 1), (b["send_hi"], upper, 2 * d)],
                        recvs=[(b["recv_lo"], lower, 2 * d), (b["recv_hi"], upper, 2 * d + 1)],
                        what=f"halo exchange (axis {d})", kind="halo")
        return post(self.decomp.comm,
                    sends=[(b["recv_lo"], lower, 2 * d), (b["recv_hi"], upper, 2 * d + 1)],
                    recvs=[(b["send_lo"], lower, 2 * d + 1), (b["send_hi"], upper, 2 * d)],
                    what=f"halo exchange adjoint (axis {d})", kind="halo")

    def _take(self, g, ax: _Axis) -> None:
        """Move the ghosts' gradient out (and clear it here): it belongs to the neighbour's points."""
        lo, hi = self._sides(ax)
        b = ax.buffers
        if lo:
            self._launch(TAKE, ax, [g, *ax.ghost_lo, ax.zero], b["recv_lo"].buf)
        if hi:
            self._launch(TAKE, ax, [g, *ax.ghost_hi, ax.zero], b["recv_hi"].buf)

    def _accumulate(self, g, ax: _Axis) -> None:
        lo, hi = self._sides(ax)
        b = ax.buffers
        if lo:
            self._launch(ACCUMULATE, ax, [b["send_lo"].buf, *ax.send_lo], g)
        if hi:
            self._launch(ACCUMULATE, ax, [b["send_hi"].buf, *ax.send_hi], g)


def _exempt_ghost_writes(tape, first: int, a) -> None:
    """Launches recorded between ``start`` and ``finish`` read only ``a``'s owned points (the contract of
    ``start``), so the ghosts ``finish`` wrote do not change what their replay reads: record ``a``'s new version
    for them, so that the Tape's overwrite check does not flag the exchange. Launches before ``start`` keep theirs
    (a ghost write after them is still reported)."""
    for rec in tape.launches[first:]:
        if isinstance(rec, LaunchRecord):
            for i, arg in enumerate(rec.args):
                if getattr(arg, "_shared", None) is a._shared and i in rec.versions_after:
                    rec.versions_after[i] = a._version


_PLANS: dict = {}


def halo_exchange(a, decomp, halo=1, timeout: float | None = None) -> None:
    """Fill the ghost layers of the local array ``a`` (``halo`` wide) from the neighbouring ranks.

    Builds (and caches per decomposition, shape, dtype, device and halo) a :class:`HaloExchange`; the first call
    with a new combination is collective and checks the arguments across ranks. Differentiable on a ``wp.Tape``.
    """
    widths = decomp.halo_widths(halo)
    key = (id(decomp.comm), decomp.local_shape, widths, a.dtype, str(a.device), timeout)
    plan = _PLANS.get(key)
    if plan is None or plan.decomp is not decomp:
        expected = tuple(n + 2 * w for n, w in zip(decomp.local_shape, widths))
        check_all(decomp.comm, tuple(a.shape) == expected, "halo exchange",
                  f"the local array's shape differs from the block + halo (rank {decomp.rank} passes "
                  f"{tuple(a.shape)}, expects {expected})", timeout)
        plan = HaloExchange(decomp, widths, a.dtype, a.device, timeout)
        _PLANS[key] = plan
    plan(a)

