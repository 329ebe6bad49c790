"""CUDA graph capture behind ``wp.capture_begin`` / ``capture_end`` / ``capture_launch`` and ``wp.ScopedCapture``.

Capture records everything queued on the capturing stream (launches, copies, memsets, pool allocations) into a
graph, instantiated once at ``capture_end``; ``capture_launch`` replays it with a single driver call. Capture is
thread-local by default (``CU_STREAM_CAPTURE_MODE_THREAD_LOCAL``; ``capture_mode=`` picks another), so other threads keep working normally. Frees of memory
made outside the graph are deferred until capture ends (the driver rejects them inside a capture).
"""

from __future__ import annotations

import threading
import weakref

from .driver import api, check

_lock = threading.Lock()
_capturing: dict[int, object] = {}  # device ordinal -> stream handle being captured
_deferred_frees: dict[int, list] = {}


def _stream(graph, stream):
    from .streams import current_stream

    if stream is not None:
        return stream._native
    return current_stream(graph.device)


def is_capturing(device) -> bool:
    return device.ordinal in _capturing


def defer_free(device, free) -> bool:
    """Queue ``free()`` until the capture on ``device`` ends; False when no capture is active."""
    with _lock:
        if device.ordinal not in _capturing:
            return False
        _deferred_frees.setdefault(device.ordinal, []).append(free)
        return True


def begin(graph, stream=None) -> None:
    drv = api()
    graph.device.backend.make_current()
    handle = _stream(graph, stream)
    mode = drv.CUstreamCaptureMode(int(getattr(graph, "capture_mode", 1)))  # wp.CaptureMode: the driver's numbers
    check(drv.cuStreamBeginCapture(handle, mode), "cuStreamBeginCapture")
    graph._cuda_stream = handle
    with _lock:
        _capturing[graph.device.ordinal] = handle


def end(graph, stream=None) -> None:
    drv = api()
    graph.device.backend.make_current()
    handle = getattr(graph, "_cuda_stream", None) or _stream(graph, stream)
    try:
        cu_graph = check(drv.cuStreamEndCapture(handle), "cuStreamEndCapture (was the capture interrupted by a "
                                                         "synchronising call such as .numpy()?)")
    finally:
        with _lock:
            _capturing.pop(graph.device.ordinal, None)
            frees = _deferred_frees.pop(graph.device.ordinal, [])
        for free in frees:
            free()
    graph._cuda_graph = cu_graph
    graph.native = check(drv.cuGraphInstantiate(cu_graph, 0), "cuGraphInstantiate")
    weakref.finalize(graph, _destroy_handles, graph.native, cu_graph).atexit = False


def launch(graph, stream=None) -> None:
    graph.device.backend.make_current()
    handle = stream._native if stream is not None else _stream(graph, None)
    check(api().cuGraphLaunch(graph.native, handle), "cuGraphLaunch")


def _destroy_handles(graph_exec, cu_graph) -> None:
    try:
        drv = api()
        drv.cuGraphExecDestroy(graph_exec)
        drv.cuGraphDestroy(cu_graph)
    except Exception:  # noqa: BLE001, S110 - at interpreter shutdown the driver may be gone
        pass
