"""Global reductions and gathering to one rank."""

from __future__ import annotations

import enum
import time

import numpy as np

import weft as wp

from ..runtime import array as _array
from ..runtime.tape import active_tape
from ._mpi import DistributedError, check_same, comm_stats, mpi, untaped, wait_all
from .channel import Channel
from .kernels import SUM


class ReduceOp(enum.Enum):
    """Element-wise reduction across ranks."""

    SUM = "sum"
    MIN = "min"
    MAX = "max"
    PROD = "prod"


def _mpi_op(op: ReduceOp):
    MPI = mpi()
    return {ReduceOp.SUM: MPI.SUM, ReduceOp.MIN: MPI.MIN, ReduceOp.MAX: MPI.MAX, ReduceOp.PROD: MPI.PROD}[op]


def _comm(target):
    return getattr(target, "comm", target)


def allreduce(a, comm, op: ReduceOp = ReduceOp.SUM, timeout: float | None = None) -> None:
    """Reduce the contiguous weft array ``a`` element-wise over the ranks of ``comm`` (or a decomposition), in
    place: afterwards every rank holds the result. Scalar dtypes only (vector dtypes: reduce a ``.view``).

    Not differentiable: raises inside a recording ``wp.Tape`` when ``a`` requires a gradient (use
    :func:`global_sum`, which is)."""
    if not isinstance(op, ReduceOp):
        raise DistributedError(f"allreduce: op must be a weft.distributed.ReduceOp, got {op!r}")
    if active_tape.get() is not None and a.grad is not None:
        raise DistributedError("allreduce is not differentiable; use weft.distributed.global_sum on a Tape")
    comm = _comm(comm)
    MPI = mpi()
    t0 = time.perf_counter()
    ch = Channel(a)
    ch.before_send()
    host = np.asarray(ch.host if ch.host is not None else a) if ch.buf.device.impl.host_memory or ch.host is not None \
        else None
    buf = [host.reshape(-1), _np_mpi_type(host.dtype)] if host is not None else [a, _np_mpi_type(
        np.dtype(a.__cuda_array_interface__["typestr"]))]
    wait_all([comm.Iallreduce(MPI.IN_PLACE, buf, op=_mpi_op(op))], "allreduce", range(comm.Get_size()), timeout)
    ch.after_recv()
    a._mark_written()
    comm_stats().add("allreduce", 1, ch.nbytes, time.perf_counter() - t0)


def _np_mpi_type(dtype):
    MPI = mpi()
    try:
        return MPI._typedict[np.dtype(dtype).char]
    except KeyError:
        raise DistributedError(f"allreduce: no MPI type for elements of dtype {dtype}") from None


def global_reduce(value: float, comm, op: ReduceOp = ReduceOp.SUM, timeout: float | None = None) -> float:
    """Reduce a Python number over the ranks (e.g. the largest velocity for a global time step)."""
    buf = _array.array(np.array([value], dtype=np.float64), dtype=wp.float64, device="cpu")
    allreduce(buf, comm, op, timeout)
    return float(buf.numpy()[0])


def global_sum(x, out, comm, timeout: float | None = None) -> None:
    """``out[0] = sum of x over every element of every rank`` (``x``: the local 1-3-D block, e.g. a
    decomposition's ``interior`` view; ``out``: a one-element array of the same scalar dtype).

    Differentiable on a ``wp.Tape``: ``out`` is a replicated value (every rank holds the same number and calls
    ``tape.backward`` on it with the same seed), so each rank's ``x`` receives ``out.grad`` as its gradient,
    exactly as in the single-process program. The local sum uses atomic adds (its rounding depends on thread
    order)."""
    comm = _comm(comm)
    partial = _array.zeros(1, dtype=out.dtype, device=out.device, requires_grad=out.grad is not None)
    nd = len(x.shape)
    if nd not in SUM:
        raise DistributedError(f"global_sum: x must have 1 to 3 dimensions, got shape {x.shape}")
    wp.launch(SUM[nd], dim=x.shape, inputs=[x], outputs=[partial], device=x.device)
    with untaped():
        wp.copy(out, partial)
        allreduce(out, comm, ReduceOp.SUM, timeout)
    tape = active_tape.get()
    if tape is not None and out.grad is not None and partial.grad is not None:
        def backward():
            with untaped():
                partial.grad.assign(partial.grad.numpy() + out.grad.numpy())

        tape.record_func(backward, [partial, out])


def gather(a, decomp, halo=0, root: int = 0, timeout: float | None = None):
    """The global array on rank ``root`` (a NumPy array; None on the other ranks) from every rank's local array
    ``a`` (``halo`` ghost layers, which are dropped). Collective; not differentiable (for output)."""
    comm = decomp.comm
    t0 = time.perf_counter()
    block = np.ascontiguousarray(decomp.interior(a, halo).numpy())
    trailing = block.shape[decomp.ndim:]
    check_same(comm, (block.dtype.itemsize, len(trailing), *trailing, *([0] * (2 - len(trailing)))), "gather",
               "dtypes", timeout)
    sizes = np.empty(comm.Get_size(), dtype=np.int64)
    wait_all([comm.Iallgather(np.array([block.size], dtype=np.int64), sizes)], "gather", range(comm.Get_size()),
             timeout)
    counts = sizes
    geometry = np.empty((comm.Get_size(), 2 * decomp.ndim), dtype=np.int64)
    wait_all([comm.Iallgather(np.array([*decomp.offset, *decomp.local_shape], dtype=np.int64), geometry)],
             "gather", range(comm.Get_size()), timeout)
    is_root = decomp.rank == root
    flat = np.empty(int(counts.sum()), dtype=block.dtype) if is_root else None
    mpitype = _np_mpi_type(block.dtype)
    displs = np.concatenate([[0], np.cumsum(counts)[:-1]])
    recv = [flat, (counts, displs), mpitype] if is_root else None
    wait_all([comm.Igatherv([block.reshape(-1), mpitype], recv, root=root)], "gather", [root], timeout)
    comm_stats().add("gather", 1, block.nbytes, time.perf_counter() - t0)
    if not is_root:
        return None
    out = np.empty(decomp.shape + trailing, dtype=block.dtype)
    for r in range(comm.Get_size()):
        off, shape = geometry[r, :decomp.ndim], geometry[r, decomp.ndim:]
        index = tuple(slice(o, o + n) for o, n in zip(off, shape))
        out[index] = flat[displs[r]:displs[r] + counts[r]].reshape(tuple(shape) + trailing)
    return out
