"""Streams, events and synchronisation.

On the CPU launches run synchronously, so streams and events are trivially ordered; CUDA devices delegate to
``weft.cuda.streams``.
"""

from __future__ import annotations

import contextvars
import time

from ..cuda import manage
from ..cuda import streams as cuda_streams
from . import device as D


class Stream:
    """A stream of work on a device (the CPU has one implicit, synchronous stream)."""

    def __init__(self, device=None, priority: int = 0, **kwargs):
        self.device = D.get_device(device)
        self.priority = priority
        self._native = self.device.impl.create_stream(self.device, priority)

    def record_event(self, event: Event | None = None) -> Event:
        event = event or Event(self.device)
        event._record(self)
        return event

    def wait_event(self, event: Event) -> None:
        self.device.impl.wait_event(self, event)

    def wait_stream(self, other: Stream) -> None:
        self.wait_event(other.record_event())

    def synchronize(self) -> None:
        self.device.impl.synchronize_stream(self)

    @property
    def cuda_stream(self) -> int:
        return int(self._native) if self._native is not None else 0

    def __cuda_stream__(self):
        """The CUDA stream protocol (cuda-python, RMM, CuPy): ``(0, handle)``; 0 on the CPU."""
        return (0, self.cuda_stream)


class Event:
    """A marker in a stream; on the CPU it is complete as soon as it is recorded."""

    def __init__(self, device=None, enable_timing: bool = False, interprocess: bool = False):
        self.device = D.get_device(device)
        if interprocess and enable_timing:
            raise ValueError("The combination of 'enable_timing=True' and 'interprocess=True' is not allowed.")
        self.enable_timing = enable_timing
        self.interprocess = bool(interprocess)  # shareable with other processes (ipc_handle; CUDA devices)
        self._time = None
        self._native = None

    def ipc_handle(self) -> bytes:
        """The 64-byte handle another process opens with ``wp.event_from_ipc_handle`` (an ``interprocess=True``
        event of a CUDA device)."""
        if not self.device.impl.cuda_driver or not manage.ipc_supported(self.device.backend):
            raise RuntimeError(f"Device {self.device} does not support IPC.")
        if not self.interprocess:
            raise RuntimeError("the event was not created with interprocess=True: it has no IPC handle")
        return manage.ipc_event_handle(self.device.backend, cuda_streams.event_handle(self))

    def _record(self, stream: Stream) -> None:
        self._time = time.perf_counter()
        stream.device.impl.record_event(self, stream)

    def synchronize(self) -> None:
        self.device.impl.synchronize_event(self)

    def elapsed_time(self, other: Event) -> float:
        return self.device.impl.elapsed_time(self, other)


_streams: dict = {}
_current_stream: contextvars.ContextVar = contextvars.ContextVar("weft_stream", default=None)


def get_stream(device=None) -> Stream:
    """The current stream of ``device`` (default: the current device): the one a ``ScopedStream`` set, else the
    device's default stream."""
    cur = _current_stream.get()
    dev = D.get_device(device)
    if cur is not None and cur.device == dev:
        return cur
    if dev.alias not in _streams:
        _streams[dev.alias] = Stream(dev)
    return _streams[dev.alias]


def set_device_stream(device, stream: Stream) -> None:
    """Make ``stream`` the stream ``device``'s work goes to outside any ``ScopedStream`` (``wp.set_stream``)."""
    _streams[D.get_device(device).alias] = stream


class ScopedStream:
    """``with wp.ScopedStream(stream):`` makes ``stream`` the current stream of its device inside the block
    (``None``: no change)."""

    def __init__(self, stream: Stream | None, sync_enter: bool = True, sync_exit: bool = False):
        self.stream = stream
        self._token = None

    def __enter__(self):
        if self.stream is not None:
            self._token = _current_stream.set(self.stream)
        return self.stream

    def __exit__(self, *exc):
        if self._token is not None:
            _current_stream.reset(self._token)
        return False


def record_event(event: Event | None = None) -> Event:
    """Record ``event`` (a new :class:`Event` if None) on the current stream and return it."""
    return get_stream().record_event(event)


def wait_event(event: Event) -> None:
    """Make the current stream wait until ``event`` has completed (no host blocking)."""
    get_stream().wait_event(event)


def wait_stream(other: Stream, event: Event | None = None) -> None:
    """Make the current stream of ``other``'s device wait for all work queued so far on ``other``."""
    get_stream(other.device).wait_stream(other)


def synchronize() -> None:
    """Wait for all work on all devices. Only devices already in use can have work: a CPU-only program never
    probes for CUDA here."""
    for dev in D.known_devices():
        dev.impl.synchronize(dev)


def synchronize_device(device=None) -> None:
    """Wait for all work queued on ``device`` (default: the current device); a no-op on the CPU."""
    dev = D.get_device(device)
    dev.impl.synchronize(dev)


def synchronize_stream(stream: Stream) -> None:
    """Wait until all work queued on ``stream`` has finished."""
    stream.synchronize()


def synchronize_event(event: Event) -> None:
    """Wait until ``event`` has completed."""
    event.synchronize()


def get_mempool_used_mem_current(device=None) -> int:
    """Bytes currently allocated from ``device``'s stream-ordered memory pool (0 on the CPU)."""
    dev = D.get_device(device)
    return dev.impl.pool_used_current(dev)


def get_mempool_used_mem_high(device=None) -> int:
    """The high-water mark of ``device``'s memory pool in bytes (0 on the CPU)."""
    dev = D.get_device(device)
    return dev.impl.pool_used_high(dev)


def is_mempool_supported(device=None) -> bool:
    """Whether ``device`` allocates from a stream-ordered memory pool (CUDA devices; never the CPU)."""
    return bool(D.get_device(device).is_mempool_supported)
