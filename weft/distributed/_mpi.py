"""MPI access for ``weft.distributed``: the mpi4py import, errors, transports, waits with a timeout, statistics.

Every wait on MPI goes through :func:`wait_all`, which polls non-blocking requests against a deadline, so a rank
that died or stopped calling the same operation gives a :class:`DistributedError` instead of a hang.
"""

from __future__ import annotations

import contextlib
import enum
import os
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import Error
from ..runtime.tape import active_tape


class DistributedError(Error):
    """An MPI operation failed: inconsistent arguments across ranks, a halo wider than a block, a rank that
    stopped answering (timeout), or mpi4py missing.

    ``collective`` is True when every rank raises the same error at the same call (argument checks); a timeout is
    seen by the waiting ranks only, and an uncaught one aborts the MPI job (see :func:`install_excepthook`)."""

    def __init__(self, message: str, collective: bool = True):
        super().__init__(message)
        self.collective = collective


def mpi():
    """The ``mpi4py.MPI`` module, or a :class:`DistributedError` saying how to install it."""
    try:
        from mpi4py import MPI
    except ImportError as exc:
        raise DistributedError(f"weft.distributed needs mpi4py and an MPI library: pip install 'weft-lang[mpi]' "
                               f"({exc})") from None
    return MPI


def default_timeout() -> float:
    """Seconds an MPI wait may take before it raises (``WEFT_MPI_TIMEOUT``, default 120)."""
    return float(os.environ.get("WEFT_MPI_TIMEOUT", "120"))


class Transport(enum.Enum):
    """How a weft array's memory reaches MPI."""

    HOST = "host"        # CPU memory: MPI reads and writes the array's buffer in place (buffer protocol)
    DEVICE = "device"    # CUDA memory handed to a CUDA-aware MPI (``__cuda_array_interface__``), no copy
    STAGED = "staged"    # CUDA memory copied through page-locked host buffers around each message


def cuda_aware() -> bool:
    """Whether the MPI library accepts CUDA device pointers.

    ``WEFT_MPI_CUDA_AWARE=1/0`` decides when set; otherwise Open MPI's ``MPIX_Query_cuda_support()`` is asked
    (through the MPI library mpi4py loaded); any other MPI counts as not CUDA-aware (messages are staged)."""
    env = os.environ.get("WEFT_MPI_CUDA_AWARE")
    if env is not None:
        return env.strip() not in ("0", "", "false", "no")
    return _query_cuda_support()


def _query_cuda_support() -> bool:
    answer = mpix_query_cuda_support()
    return bool(answer)


def mpix_query_cuda_support() -> bool | None:
    """Open MPI's ``MPIX_Query_cuda_support()`` from the MPI library mpi4py loaded, None if it has none."""
    import ctypes
    import re

    mpi()  # loads libmpi (mpi4py opens it privately, so its symbols are not global: open it again by path)
    try:
        with open("/proc/self/maps") as maps:
            paths = sorted({line.split()[-1] for line in maps if re.search(r"/libmpi[._]", line)})
    except OSError:
        paths = []
    for path in paths or [None]:
        try:
            fn = ctypes.CDLL(path).MPIX_Query_cuda_support
        except (OSError, AttributeError):
            continue
        fn.restype = ctypes.c_int
        return bool(fn())
    return None


def transport_for(device) -> Transport:
    """The transport for arrays on ``device`` (``WEFT_MPI_TRANSPORT=staged`` forces staging, also on the CPU,
    which is how the staging path is tested without a GPU)."""
    forced = os.environ.get("WEFT_MPI_TRANSPORT")
    if forced:
        try:
            return Transport(forced.strip().lower())
        except ValueError:
            raise DistributedError(f"WEFT_MPI_TRANSPORT must be one of {[t.value for t in Transport]}, "
                                   f"got {forced!r}") from None
    if device.impl.host_memory:
        return Transport.HOST
    return Transport.DEVICE if cuda_aware() else Transport.STAGED


@dataclass
class CommStats:
    """Counters of the communication ``weft.distributed`` did on this rank (see :func:`comm_stats`).

    ``seconds`` is wall time inside MPI calls and waits plus the staging copies, per operation kind."""

    messages: dict = field(default_factory=dict)
    bytes: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=dict)

    def add(self, kind: str, messages: int, nbytes: int, seconds: float) -> None:
        """Count one operation of ``kind``: messages sent, bytes sent, seconds spent."""
        self.messages[kind] = self.messages.get(kind, 0) + messages
        self.bytes[kind] = self.bytes.get(kind, 0) + nbytes
        self.seconds[kind] = self.seconds.get(kind, 0.0) + seconds

    @property
    def total_seconds(self) -> float:
        """Seconds spent in all kinds of communication."""
        return sum(self.seconds.values())


_STATS = CommStats()


def comm_stats() -> CommStats:
    """This rank's communication counters since the last :func:`reset_comm_stats`."""
    return _STATS


def reset_comm_stats() -> None:
    """Zero the communication counters."""
    global _STATS
    _STATS = CommStats()


def wait_all(requests, what: str, peers, timeout: float | None = None) -> None:
    """Wait for non-blocking MPI requests; after ``timeout`` seconds cancel them and raise (not collectively)."""
    MPI = mpi()
    limit = default_timeout() if timeout is None else timeout
    start = time.monotonic()
    deadline = start + limit
    nap = 2e-5
    while not MPI.Request.Testall(requests):
        now = time.monotonic()
        if now > deadline:
            for r in requests:
                with contextlib.suppress(Exception):
                    r.Cancel()
            peer_text = ", ".join(str(p) for p in sorted(set(peers))) or "none"
            raise DistributedError(
                f"{what}: no answer from rank(s) {peer_text} within {limit:g} s on rank "
                f"{MPI.COMM_WORLD.Get_rank()}; a rank died or is not calling the same operation "
                f"(WEFT_MPI_TIMEOUT sets the limit)", collective=False)
        if now - start < 1e-4:
            os.sched_yield()  # the first 0.1 ms: poll (messages between ranks of a node take microseconds)
        else:
            time.sleep(nap)  # then let the other ranks run (they may share this core), backing off to 1 ms
            nap = min(2 * nap, 1e-3)


def check_same(comm, values, what: str, names: str, timeout: float | None = None) -> None:
    """Raise on every rank unless ``values`` (a tuple of ints) is the same on all ranks of ``comm``."""
    MPI = mpi()
    mine = np.asarray(values, dtype=np.int64)
    gathered = np.empty((comm.Get_size(), mine.size), dtype=np.int64)
    size = np.array([mine.size], dtype=np.int64)
    sizes = np.empty(comm.Get_size(), dtype=np.int64)
    wait_all([comm.Iallgather(size, sizes)], what, range(comm.Get_size()), timeout)
    if (sizes != sizes[0]).any():
        raise DistributedError(f"{what}: {names} differ across ranks (ranks pass {sizes.tolist()} values)")
    wait_all([comm.Iallgather(mine, gathered)], what, range(comm.Get_size()), timeout)
    bad = [r for r in range(gathered.shape[0]) if (gathered[r] != gathered[0]).any()]
    if bad:
        detail = "; ".join(f"rank {r}: {tuple(gathered[r].tolist())}" for r in [0, *bad])
        raise DistributedError(f"{what}: {names} must be the same on every rank, got {detail}")
    del MPI


def check_all(comm, ok: bool, what: str, message: str, timeout: float | None = None) -> None:
    """Raise ``message`` on every rank when ``ok`` is False on any rank (names the failing ranks)."""
    flags = np.empty(comm.Get_size(), dtype=np.int64)
    wait_all([comm.Iallgather(np.array([0 if ok else 1], dtype=np.int64), flags)], what,
             range(comm.Get_size()), timeout)
    bad = np.nonzero(flags)[0].tolist()
    if bad:
        raise DistributedError(f"{what}: {message} (on rank(s) {', '.join(map(str, bad))})")


@contextlib.contextmanager
def untaped():
    """Run weft launches and copies without recording them on an active Tape (the caller records its own
    adjoint with ``tape.record_func``)."""
    token = active_tape.set(None)
    try:
        yield
    finally:
        active_tape.reset(token)


_HOOK_INSTALLED = False


def install_excepthook() -> None:
    """Make an uncaught non-collective :class:`DistributedError` (a timeout) abort the MPI job after printing it.

    Without this, the rank that raised would wait in ``MPI_Finalize`` for the rank that stopped answering. Errors
    every rank raises together (argument checks) end the ranks normally. Installed by ``decompose``."""
    global _HOOK_INSTALLED
    if _HOOK_INSTALLED:
        return
    previous = sys.excepthook

    def hook(exc_type, exc, tb):
        previous(exc_type, exc, tb)
        if isinstance(exc, DistributedError) and not exc.collective:
            sys.stderr.flush()
            sys.stdout.flush()
            with contextlib.suppress(Exception):
                mpi().COMM_WORLD.Abort(1)

    sys.excepthook = hook
    _HOOK_INSTALLED = True
