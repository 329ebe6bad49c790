"""Recycling of host buffers inside a scope, and gradient buffers switched off inside a scope.

Both serve ``wp.checkpoint``: its step function allocates fresh output arrays every step, twice per step (once in
the forward pass and once when the backward pass recomputes a segment), and the same shapes come back every step.
Left to the C allocator, buffers of 128 KiB and more are mapped and unmapped by the kernel on every allocation
(glibc's mmap threshold) and a heap that grows and shrinks is trimmed and refaulted, so every step pays page faults
(zero-filled pages, and page-table locks and TLB shootdowns when two threads run the kernels). A ``HostPool`` keeps
the buffers of arrays that died while it was open and hands them out again, zeroed, for the next allocation of the
same size: the pages stay mapped and warm.

A buffer goes back to its pool only when nothing references its memory any more (its last NumPy view died), so
recycling is exactly as safe as freeing it. Idle plus leased bytes never exceed the most bytes that were leased at
once (the high-water mark), so a pool holds no more than its scope's own peak; ``clear()`` drops the idle buffers,
and they are freed when the pool dies.
"""

from __future__ import annotations

import contextvars

import numpy as np

active_pool: contextvars.ContextVar = contextvars.ContextVar("weft_host_pool", default=None)
# True while arrays created with requires_grad=True should get no gradient buffer (wp.checkpoint's forward pass,
# which records nothing, so no gradient is ever read or written there).
grads_off: contextvars.ContextVar = contextvars.ContextVar("weft_grads_off", default=False)


class _Lease:
    """Owns one pooled buffer while NumPy views of it are alive; hands it back to the pool when the last dies."""

    __slots__ = ("__array_interface__", "buf", "pool")

    def __init__(self, buf: np.ndarray, pool: HostPool) -> None:
        self.buf = buf
        self.pool = pool
        self.__array_interface__ = buf.__array_interface__

    def __del__(self) -> None:
        pool = self.pool
        if pool is not None:
            pool._give(self.buf)


class HostPool:
    """Size-keyed free lists of host buffers (``np.uint8``), handed out zeroed while the pool is active (``with``)."""

    def __init__(self) -> None:
        self._free: dict[int, list[np.ndarray]] = {}
        self.leased = 0  # bytes handed out and not yet returned
        self.idle = 0  # bytes in the free lists
        self.high_water = 0  # most bytes leased at once
        self.reused = 0  # allocations served from a free list
        self.fresh = 0  # allocations that had to ask the C allocator
        self._tokens: list = []

    def zeros(self, nbytes: int) -> np.ndarray:
        """A zeroed uint8 buffer of ``nbytes`` bytes whose memory returns to this pool when it dies."""
        free = self._free.get(nbytes)
        if free:
            buf = free.pop()
            self.idle -= nbytes
            buf.fill(0)
            self.reused += 1
        else:
            buf = np.zeros(nbytes, dtype=np.uint8)
            self.fresh += 1
        self.leased += nbytes
        self.high_water = max(self.high_water, self.leased)
        return np.asarray(_Lease(buf, self))

    def _give(self, buf: np.ndarray) -> None:
        nbytes = buf.nbytes
        self.leased -= nbytes
        if self.leased + self.idle + nbytes <= self.high_water:  # else let it go: it was beyond the peak
            self._free.setdefault(nbytes, []).append(buf)
            self.idle += nbytes

    def clear(self) -> None:
        """Drop the idle buffers (back to the C allocator); leased buffers come back as they die."""
        self._free = {}
        self.idle = 0

    def __enter__(self) -> HostPool:
        self._tokens.append(active_pool.set(self))
        return self

    def __exit__(self, *exc) -> bool:
        active_pool.reset(self._tokens.pop())
        return False
