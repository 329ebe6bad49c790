"""Halo (ghost-layer) exchange of local arrays of a :class:`~weft.distributed.Decomposition`, with its adjoint.

A local array holds the owned block plus ``w`` ghost layers on both sides of each axis. The exchange runs the axes
one after the other; along axis d each rank packs its two boundary slabs of width w (full extent, ghosts included,
along the other axes) with a weft kernel, posts non-blocking receives and sends to its two neighbours, waits (with
a deadline), and unpacks into its ghost slabs. Because later axes carry the ghosts earlier axes filled, corner and
edge ghosts end up right too (9- and 27-point stencils work). At a non-periodic wall the ghosts are left alone
(they hold the user's boundary values).

Adjoint (on a ``wp.Tape``): the reverse exchange with accumulation. Axes run in reverse order; each rank moves the
gradient out of its ghost slabs (they were overwritten, so their gradient is consumed), sends it back to the rank
that owns those points, and that rank adds it into the gradient of the slab it had sent.
"""

from __future__ import annotations

import zlib

import weft as wp

from ..runtime import array as _array
from ..runtime.tape import active_tape
from ._mpi import DistributedError, check_all, check_same, mpi, untaped
from .channel import Channel, exchange
from .kernels import ACCUMULATE, PACK, TAKE, UNPACK


def _dtype_key(dtype) -> int:
    name = getattr(dtype, "__name__", repr(dtype))  # canonical dtype classes have unique names
    return zlib.crc32(name.encode())


class _Axis:
    """The four slabs of one axis: offsets in the local array and their message buffers."""

    def __init__(self, shape, axis, width, interior, device, dtype):
        region = tuple(width if d == axis else n for d, n in enumerate(shape))

        def offset(start):
            return tuple(start if d == axis else 0 for d in range(len(shape)))

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

    Collective: every rank builds it with the same halo and dtype, else every rank raises. A halo wider than
    some rank's block also raises on every rank (the ghosts would need points beyond the neighbour).
    """

    def __init__(self, decomp, halo=1, dtype=float, device=None, timeout: float | None = None):
        self.decomp = decomp
        self.widths = decomp.halo_widths(halo)
        self.dtype = _array.zeros(0, dtype=dtype).dtype  # weft's canonical dtype class (float -> float32)
        self.device = wp.get_device(device)
        self.timeout = timeout
        comm = decomp.comm
        dtype = self.dtype
        check_same(comm, (*self.widths, _dtype_key(dtype)), "halo exchange", "halo widths and dtypes", timeout)
        too_wide = [(d, w, n) for d, (w, n) in enumerate(zip(self.widths, decomp.local_shape)) if w > n]
        text = "; ".join(f"axis {d}: halo {w} > {n} points" for d, w, n in too_wide)
        check_all(comm, not too_wide, "halo exchange",
                  f"the halo is wider than the local block ({text or 'see the other ranks'}); use fewer ranks "
                  f"along that axis or a narrower halo", timeout)
        self.shape = tuple(n + 2 * w for n, w in zip(decomp.local_shape, self.widths))
        self.axes = [_Axis(self.shape, d, w, decomp.local_shape[d], self.device, dtype)
                     for d, w in enumerate(self.widths) if w > 0]

    def __call__(self, a) -> None:
        """Fill the ghost layers of ``a`` (a local array of this exchange's shape) from the neighbours."""
        if tuple(a.shape) != self.shape:
            raise DistributedError(f"halo exchange: array has shape {tuple(a.shape)}, this exchange was built for "
                                   f"local shape {self.shape} (block {self.decomp.local_shape} + halo "
                                   f"{self.widths})")
        if a.dtype != self.dtype:
            raise DistributedError(f"halo exchange: array dtype {a.dtype} differs from the exchange's {self.dtype}")
        with untaped():
            for ax in self.axes:
                self._forward_axis(a, ax)
        tape = active_tape.get()
        if tape is not None and a.grad is not None:
            grad = a.grad

            def backward():
                with untaped():
                    for ax in reversed(self.axes):
                        self._adjoint_axis(grad, ax)

            tape.record_func(backward, [a])

    # ------------------------------------------------------------------ one axis
    def _forward_axis(self, a, ax: _Axis) -> None:
        MPI = mpi()
        nd, d = len(self.shape), ax.axis
        lower, upper = self.decomp.neighbors[d]
        b = ax.buffers
        if lower != MPI.PROC_NULL:
            wp.launch(PACK[nd], dim=ax.region, inputs=[a, *ax.send_lo], outputs=[b["send_lo"].buf],
                      device=self.device, record_tape=False)
        if upper != MPI.PROC_NULL:
            wp.launch(PACK[nd], dim=ax.region, inputs=[a, *ax.send_hi], outputs=[b["send_hi"].buf],
                      device=self.device, record_tape=False)
        # tag 2d travels up (to the upper neighbour), 2d + 1 travels down
        exchange(self.decomp.comm,
                 sends=[(b["send_lo"], lower, 2 * d + 1), (b["send_hi"], upper, 2 * d)],
                 recvs=[(b["recv_lo"], lower, 2 * d), (b["recv_hi"], upper, 2 * d + 1)],
                 what=f"halo exchange (axis {d})", kind="halo", timeout=self.timeout)
        if lower != MPI.PROC_NULL:
            wp.launch(UNPACK[nd], dim=ax.region, inputs=[b["recv_lo"].buf, *ax.ghost_lo], outputs=[a],
                      device=self.device, record_tape=False)
        if upper != MPI.PROC_NULL:
            wp.launch(UNPACK[nd], dim=ax.region, inputs=[b["recv_hi"].buf, *ax.ghost_hi], outputs=[a],
                      device=self.device, record_tape=False)

    def _adjoint_axis(self, g, ax: _Axis) -> None:
        MPI = mpi()
        nd, d = len(self.shape), ax.axis
        lower, upper = self.decomp.neighbors[d]
        b = ax.buffers
        # the ghosts' gradient leaves this rank (and is cleared here): it belongs to the neighbour's points
        if lower != MPI.PROC_NULL:
            wp.launch(TAKE[nd], dim=ax.region, inputs=[g, *ax.ghost_lo, ax.zero], outputs=[b["recv_lo"].buf],
                      device=self.device, record_tape=False)
        if upper != MPI.PROC_NULL:
            wp.launch(TAKE[nd], dim=ax.region, inputs=[g, *ax.ghost_hi, ax.zero], outputs=[b["recv_hi"].buf],
                      device=self.device, record_tape=False)
        exchange(self.decomp.comm,
                 sends=[(b["recv_lo"], lower, 2 * d), (b["recv_hi"], upper, 2 * d + 1)],
                 recvs=[(b["send_lo"], lower, 2 * d + 1), (b["send_hi"], upper, 2 * d)],
                 what=f"halo exchange adjoint (axis {d})", kind="halo", timeout=self.timeout)
        if lower != MPI.PROC_NULL:
            wp.launch(ACCUMULATE[nd], dim=ax.region, inputs=[b["send_lo"].buf, *ax.send_lo], outputs=[g],
                      device=self.device, record_tape=False)
        if upper != MPI.PROC_NULL:
            wp.launch(ACCUMULATE[nd], dim=ax.region, inputs=[b["send_hi"].buf, *ax.send_hi], outputs=[g],
                      device=self.device, record_tape=False)


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

