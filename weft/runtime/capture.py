"""Graph capture: ``wp.capture_begin`` / ``capture_end`` / ``capture_launch`` and ``wp.ScopedCapture``.

On the CPU, capture records the launches (and fills and copies) made inside it and ``capture_launch`` replays them,
so programs written for CUDA graphs run unchanged on the CPU; on a GPU it is CUDA stream capture (``weft.cuda.graphs``).
"""

from __future__ import annotations

import contextvars
import ctypes
import enum

from ..types.scalars import int32
from . import device as D

_capture: contextvars.ContextVar = contextvars.ContextVar("weft_capture", default=None)


class CaptureMode(enum.IntEnum):
    """How strictly a CUDA stream capture rejects capture-unsafe driver calls (``cudaStreamCaptureMode``'s numbers):
    ``GLOBAL`` (from any thread), ``THREAD_LOCAL`` (from the capturing thread; the default), ``RELAXED`` (never). A
    CPU capture records weft's own launches and has no such calls, so the mode is checked and kept only."""

    GLOBAL = 0
    THREAD_LOCAL = 1
    RELAXED = 2


class Graph:
    """A captured sequence of launches (what ``wp.capture_end`` returns and ``wp.capture_launch`` replays). On the
    CPU: the recorded launches, replayed in order; on a GPU: the instantiated CUDA graph (``native``)."""

    def __init__(self, device, capture_mode: CaptureMode = CaptureMode.THREAD_LOCAL):
        self.device = device
        self.launches: list = []
        self.native = None
        self.apic = False
        self.capture_mode = capture_mode

    @property
    def graph(self):
        """The captured ``CUgraph`` of a GPU capture (None on the CPU)."""
        return getattr(self, "_cuda_graph", None)

    @property
    def graph_exec(self):
        """The instantiated ``CUgraphExec`` of a GPU capture (None on the CPU)."""
        return self.native

    # ------------------------------------------------------------------ graphs loaded from a file (capture_file.py)
    _loaded = None

    @property
    def is_loaded(self) -> bool:
        """Whether the graph was loaded with ``wp.capture_load`` / ``capture_load_from_bytes``."""
        return self._loaded is not None

    def _param(self, name: str, arr, what: str):
        if self._loaded is None:
            raise RuntimeError(f"{what}() is only supported on loaded APIC graphs")
        from .array import array

        if not isinstance(arr, array):
            raise TypeError(f"Expected a Warp array for parameter '{name}', got {type(arr).__name__}")
        if arr.device != self.device:
            raise ValueError(f"Array device mismatch for parameter '{name}': graph is on {self.device}, array is on "
                             f"{arr.device}")
        window = self._loaded.window(name)
        if int(arr.capacity) != window.size:
            raise RuntimeError(f"Failed to {what[:3]} parameter '{name}': the array holds {arr.capacity} bytes, the "
                               f"parameter region {window.size}")
        if not arr.ptr:
            raise RuntimeError(f"parameter '{name}': the array has no memory")
        return window, arr.ptr

    def set_param(self, name: str, arr) -> None:
        """Copy ``arr``'s memory (its whole capacity) into the loaded graph's parameter ``name``."""
        window, ptr = self._param(name, arr, "set_param")
        ctypes.memmove(window.ctypes.data, ptr, window.size)

    def get_param(self, name: str, arr) -> None:
        """Copy the loaded graph's parameter ``name`` into ``arr``'s memory (its whole capacity)."""
        window, ptr = self._param(name, arr, "get_param")
        ctypes.memmove(ptr, window.ctypes.data, window.size)
        if hasattr(arr, "_mark_written"):
            arr._mark_written()

    def get_param_ptr(self, name: str) -> int:
        """The address of the loaded graph's parameter region ``name`` (host memory, owned by the graph)."""
        if self._loaded is None:
            raise RuntimeError("get_param_ptr() is only supported on loaded APIC graphs")
        return int(self._loaded.window(name).ctypes.data)

    def replay(self) -> None:
        for item in self.launches:
            item()


def _capture_mode(capture_mode) -> CaptureMode:
    try:
        return CaptureMode(capture_mode)
    except ValueError:
        raise ValueError(f"capture_mode must be a wp.CaptureMode (GLOBAL, THREAD_LOCAL or RELAXED), got "
                         f"{capture_mode!r}") from None


def capture_begin(device=None, stream=None, force_module_load=True, external=False, apic=False,
                  capture_mode=CaptureMode.THREAD_LOCAL):
    """Start recording launches into a graph on ``device`` (CUDA graph capture on a GPU, in ``capture_mode``; a
    replay list on the CPU)."""
    dev = D.get_device(device)
    graph = Graph(dev, _capture_mode(capture_mode))
    graph.apic = bool(apic)
    dev.impl.capture_begin(graph, stream)
    graph._token = _capture.set(graph)
    return graph


def capture_end(device=None, stream=None, graph=None) -> Graph:
    """Stop the capture started by :func:`capture_begin` and return the recorded graph."""
    graph = _capture.get()
    if graph is None:
        raise RuntimeError("wp.capture_end() without wp.capture_begin()")
    _capture.reset(graph._token)
    graph.device.impl.capture_end(graph, stream)
    return graph


def capture_launch(graph: Graph, stream=None) -> None:
    """Replay a graph returned by :func:`capture_end` (or held by ``wp.ScopedCapture().graph``)."""
    graph.device.impl.capture_launch(graph, stream)


def active_capture():
    return _capture.get()


def capture_if(condition, on_true=None, on_false=None, stream=None, **kwargs) -> None:
    """Run ``on_true`` or ``on_false`` (callbacks, given ``kwargs``, or captured graphs) as ``condition[0]`` is
    non-zero or zero (Warp's ``wp.capture_if``). Inside a CPU capture the branch is decided at each replay: both
    branches are recorded now and the graph reads ``condition`` when it runs.

    Raises:
        TypeError: ``condition`` is not an int32 array, or a branch is neither a callable nor a graph.
        NotImplementedError: inside a CUDA graph capture (weft's graphs have no conditional nodes).
    """
    if on_true is None and on_false is None:
        return
    _check_condition(condition)
    recorded = _recording(condition)
    if recorded is not None:
        true_branch, false_branch = _record(recorded, on_true, kwargs), _record(recorded, on_false, kwargs)
        recorded.launches.append(lambda: (true_branch if _value(condition) else false_branch)())
        return
    branch = on_true if _value(condition) else on_false
    if branch is not None:
        _run_body(branch, kwargs, stream)


def capture_while(condition, while_body, stream=None, **kwargs) -> None:
    """Run ``while_body`` (a callback given ``kwargs``, or a captured graph) while ``condition[0]`` is non-zero; the
    body updates the condition (Warp's ``wp.capture_while``). Inside a CPU capture the loop runs at each replay.

    Raises:
        TypeError: ``condition`` is not an int32 array, or ``while_body`` is neither a callable nor a graph.
        NotImplementedError: inside a CUDA graph capture (weft's graphs have no conditional nodes).
    """
    _check_condition(condition)
    recorded = _recording(condition)
    if recorded is not None:
        body = _record(recorded, while_body, kwargs)

        def loop() -> None:
            while _value(condition):
                body()
        recorded.launches.append(loop)
        return
    while _value(condition):
        _run_body(while_body, kwargs, stream)


def _check_condition(condition) -> None:
    from .array import array

    if not isinstance(condition, array) or condition.dtype is not int32:
        raise TypeError("Condition must be a Warp array of int32 with a single element")


def _recording(condition):
    """The CPU graph being recorded on the condition's device (None when not capturing there)."""
    graph = _capture.get()
    if graph is None or graph.device != condition.device:
        return None
    if not graph.device.impl.capture_by_replay:
        raise NotImplementedError("wp.capture_if / wp.capture_while inside a CUDA graph capture need conditional graph "
                                  "nodes, which weft's graphs do not have (wp.is_conditional_graph_supported() is "
                                  "False); call them outside the capture")
    return graph


def _record(graph: Graph, body, kwargs):
    """Record ``body`` (callback or graph) into a sub-graph of ``graph``; returns what runs it at replay."""
    if body is None:
        return lambda: None
    if isinstance(body, Graph):
        return body.replay
    if not callable(body):
        raise TypeError("a capture_if / capture_while body must be a callable or a graph")
    sub = Graph(graph.device)
    token = _capture.set(sub)
    try:
        body(**kwargs)
    finally:
        _capture.reset(token)
    return sub.replay


def _run_body(body, kwargs, stream) -> None:
    if isinstance(body, Graph):
        capture_launch(body, stream)
    elif callable(body):
        body(**kwargs)
    else:
        raise TypeError("a capture_if / capture_while body must be a callable or a graph")


def _value(condition) -> bool:
    return bool(condition.numpy().reshape(-1)[0])


class ScopedCapture:
    """``with wp.ScopedCapture() as capture: step()`` then ``wp.capture_launch(capture.graph)``."""

    def __init__(self, device=None, stream=None, force_module_load=True, external=False, apic=False,
                 capture_mode=CaptureMode.THREAD_LOCAL):
        self.device = device
        self.stream = stream
        self.apic = bool(apic)  # Warp's serializable CPU capture: objects that cannot be serialized refuse it
        self.capture_mode = _capture_mode(capture_mode)
        self.graph = None

    def __enter__(self):
        self._g = capture_begin(self.device, self.stream, apic=self.apic, capture_mode=self.capture_mode)
        return self

    def __exit__(self, exc_type, exc, tb):
        self.graph = capture_end(self.device, self.stream)
        return False
