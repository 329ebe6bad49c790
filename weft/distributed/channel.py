"""Message buffers: a contiguous weft array as MPI sees it, on each :class:`Transport`, and the differentiable
all-to-all built on them."""

from __future__ import annotations

import time

import numpy as np

from ..runtime import array as _array
from ..runtime.copy import copy as _copy
from ..runtime.streams import synchronize_device
from ..runtime.tape import active_tape
from ._mpi import DistributedError, Transport, comm_stats, mpi, transport_for, untaped, wait_all


class Channel:
    """A contiguous weft array used as an MPI message buffer.

    HOST: MPI reads/writes the array's memory through the buffer protocol (a byte view of it, no copy).
    DEVICE: the array itself (``__cuda_array_interface__``) goes to a CUDA-aware MPI, no copy.
    STAGED: a page-locked host array of the same layout sits between the device array and MPI.
    """

    def __init__(self, buf, transport: Transport | None = None):
        if not buf.is_contiguous:
            raise DistributedError("a message buffer must be contiguous")
        self.buf = buf
        self.transport = transport if transport is not None else transport_for(buf.device)
        self.host = None
        if self.transport is Transport.STAGED:
            self.host = _array.empty(buf.shape, dtype=buf.dtype, device="cpu", pinned=not buf.device.impl.host_memory)
        self.nbytes = int(np.asarray(self.host if self.host is not None else buf).nbytes) \
            if (buf.device.impl.host_memory or self.host is not None) else _device_nbytes(buf)

    def mpi_buffer(self):
        """What to hand to mpi4py: [bytes of the memory, MPI.BYTE]."""
        MPI = mpi()
        if self.transport is Transport.DEVICE:
            return [self.buf, self.nbytes, MPI.BYTE]
        host = self.host if self.host is not None else self.buf
        return [np.asarray(host).reshape(-1).view(np.uint8), MPI.BYTE]

    def before_send(self) -> None:
        """Make the array's values visible to MPI (finish device work; copy to the host stage)."""
        if self.host is not None:
            _copy(self.host, self.buf)
        if not self.buf.device.impl.synchronous:
            synchronize_device(self.buf.device)

    def after_recv(self) -> None:
        """Move received bytes into the array (from the host stage)."""
        if self.host is not None:
            _copy(self.buf, self.host)


def _device_nbytes(buf) -> int:
    iface = buf.__cuda_array_interface__
    itemsize = np.dtype(iface["typestr"]).itemsize
    return int(np.prod(iface["shape"])) * itemsize


class Pending:
    """Messages posted by :func:`post`; :meth:`wait` completes them."""

    def __init__(self, requests, peers, recvs, what, kind, sent, nbytes, seconds):
        self.requests, self.peers, self.recvs, self.what, self.kind = requests, peers, recvs, what, kind
        self.sent, self.nbytes, self.seconds = sent, nbytes, seconds

    def wait(self, timeout=None) -> None:
        """Wait (with a deadline) for every message, then move received bytes into their arrays."""
        t0 = time.perf_counter()
        wait_all(self.requests, self.what, self.peers, timeout)
        for ch in self.recvs:
            ch.after_recv()
        comm_stats().add(self.kind, self.sent, self.nbytes, self.seconds + time.perf_counter() - t0)


def post(comm, sends, recvs, what: str, kind: str) -> Pending:
    """Post every receive, then every send, all non-blocking; returns without waiting.

    sends: (Channel, dest rank, tag); recvs: (Channel, source rank, tag). ``MPI.PROC_NULL`` peers are skipped."""
    MPI = mpi()
    t0 = time.perf_counter()
    me = comm.Get_rank()
    reqs, peers, done, sent, nbytes = [], [], [], 0, 0
    for ch, src, tag in recvs:
        if src != MPI.PROC_NULL:
            reqs.append(comm.Irecv(ch.mpi_buffer(), source=src, tag=tag))
            peers.append(src)
            done.append(ch)
    for ch, dest, tag in sends:
        if dest != MPI.PROC_NULL:
            ch.before_send()
            reqs.append(comm.Isend(ch.mpi_buffer(), dest=dest, tag=tag))
            peers.append(dest)
            if dest != me:  # messages to itself (a periodic axis with one rank) are local copies: not counted
                sent += 1
                nbytes += ch.nbytes
    return Pending(reqs, peers, done, what, kind, sent, nbytes, time.perf_counter() - t0)


def exchange(comm, sends, recvs, what: str, kind: str, timeout=None) -> None:
    """:func:`post` and wait."""
    post(comm, sends, recvs, what, kind).wait(timeout)


def _alltoall_raw(comm, send, recv, what: str, timeout=None) -> None:
    t0 = time.perf_counter()
    s, r = Channel(send), Channel(recv)
    s.before_send()
    wait_all([comm.Ialltoall(s.mpi_buffer(), r.mpi_buffer())], what, range(comm.Get_size()), timeout)
    r.after_recv()
    size = comm.Get_size()
    comm_stats().add("alltoall", size - 1, s.nbytes * (size - 1) // size, time.perf_counter() - t0)


def alltoall(comm, send, recv, timeout=None) -> None:
    """Differentiable all-to-all: block ``send[q]`` goes to rank q, which stores it in ``recv[p]`` (p: sender).

    ``send`` and ``recv`` are contiguous weft arrays whose first dimension is the number of ranks. On an active
    Tape the adjoint is the reverse all-to-all of ``recv.grad``, accumulated into ``send.grad``; ``recv.grad``
    is consumed (zeroed), since the forward overwrote every element of ``recv``."""
    size = comm.Get_size()
    if send.shape[0] != size or recv.shape[0] != size:
        raise DistributedError(f"alltoall: the first dimension of send and recv must be the number of ranks "
                               f"({size}), got {send.shape} and {recv.shape}")
    if send.shape != recv.shape or send.dtype != recv.dtype:
        raise DistributedError(f"alltoall: send and recv must have the same shape and dtype, got {send.shape} "
                               f"and {recv.shape}")
    _alltoall_raw(comm, send, recv, "alltoall", timeout)
    recv._mark_written()
    tape = active_tape.get()
    if tape is None or send.grad is None or recv.grad is None:
        return

    def backward():
        from .kernels import add_into_flat

        with untaped():
            tmp = _array.empty(recv.shape, dtype=recv.dtype, device=recv.device)
            _alltoall_raw(comm, recv.grad, tmp, "alltoall (adjoint)", timeout)
            add_into_flat(send.grad, tmp)
            recv.grad.zero_()

    tape.record_func(backward, [send, recv])
