"""CUDA streams and events behind ``wp.Stream`` / ``wp.Event`` (``weft.runtime.streams``).

Streams are created blocking with respect to the legacy default stream, so work that other libraries queue on
stream 0 (PyTorch's default) is ordered with weft's without explicit synchronisation. Events are created without
timing unless asked for, which makes recording and waiting cheaper.
"""

from __future__ import annotations

from .driver import api, check


def create_stream(device, priority: int = 0):
    """A new ``CUstream`` on ``device`` (priority clamped to the device's range)."""
    drv = api()
    ctx = device.backend
    ctx.make_current()
    least, greatest = check(drv.cuCtxGetStreamPriorityRange(), "cuCtxGetStreamPriorityRange")
    # CUDA priorities count down: `greatest` (most negative) is the highest; Warp's API uses the same numbers
    prio = max(min(int(priority), int(least)), int(greatest))
    return check(drv.cuStreamCreateWithPriority(drv.CUstream_flags.CU_STREAM_DEFAULT, prio),
                 "cuStreamCreateWithPriority")


#: ``device -> CUstream`` of the stream work on ``device`` goes to now; the runtime installs it (``wp.ScopedStream``
#: and the per-device default streams are runtime state), so this package needs nothing from the runtime.
current_stream_source = None


def current_stream(device):
    """The ``CUstream`` launches and copies on ``device`` go to now (respects ``wp.ScopedStream``)."""
    return current_stream_source(device) if current_stream_source is not None else 0


def event_handle(event):
    """The ``CUevent`` of a weft Event, created on first use (timing only when asked for; ``interprocess`` events
    are shareable with other processes)."""
    if event._native is None:
        drv = api()
        event.device.backend.make_current()
        flags = int(drv.CUevent_flags.CU_EVENT_DEFAULT if event.enable_timing else
                    drv.CUevent_flags.CU_EVENT_DISABLE_TIMING)
        if getattr(event, "interprocess", False):
            flags |= int(drv.CUevent_flags.CU_EVENT_INTERPROCESS)
        event._native = check(drv.cuEventCreate(flags), "cuEventCreate")
    return event._native


def record_event(event, stream) -> None:
    stream.device.backend.make_current()
    check(api().cuEventRecord(event_handle(event), stream._native), "cuEventRecord")


def wait_event(stream, event) -> None:
    """Make ``stream`` wait (on the GPU, without blocking the host) until ``event`` completes."""
    stream.device.backend.make_current()
    check(api().cuStreamWaitEvent(stream._native, event_handle(event), 0), "cuStreamWaitEvent")


def synchronize_stream(stream) -> None:
    stream.device.backend.make_current()
    check(api().cuStreamSynchronize(stream._native), "cuStreamSynchronize")


def synchronize_event(event) -> None:
    if event._native is not None:
        event.device.backend.make_current()
        check(api().cuEventSynchronize(event._native), "cuEventSynchronize")


def elapsed_time(start, end) -> float:
    """Milliseconds between two recorded timing events (both need ``enable_timing=True``)."""
    start.device.backend.make_current()
    return float(check(api().cuEventElapsedTime(event_handle(start), event_handle(end)), "cuEventElapsedTime"))


def synchronize_device(device) -> None:
    device.backend.synchronize()
