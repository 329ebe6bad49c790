"""Graph capture: ``wp.capture_begin`` / ``capture_end`` / ``capture_launch`` and ``wp.ScopedCapture``.

On the CPU, capture records the launches (and fills and copies) made inside it and ``capture_launch`` replays them,
so programs written for CUDA graphs run unchanged on the CPU; on a GPU it is CUDA stream capture (``weft.cuda.graphs``).
"""

from __future__ import annotations

import contextvars

from . import device as D

_capture: contextvars.ContextVar = contextvars.ContextVar("weft_capture", default=None)


class Graph:
    """A captured sequence of launches. On the CPU: the recorded launches, replayed in order."""

    def __init__(self, device):
        self.device = device
        self.launches: list = []
        self.native = None
        self.apic = False

    def replay(self) -> None:
        for item in self.launches:
            item()


def capture_begin(device=None, stream=None, force_module_load=True, external=False):
    """Start recording launches into a graph on ``device`` (CUDA graph capture on a GPU; a replay list on the CPU)."""
    dev = D.get_device(device)
    graph = Graph(dev)
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


class ScopedCapture:
    """``with wp.ScopedCapture() as capture: step()`` then ``wp.capture_launch(capture.graph)``."""

    def __init__(self, device=None, stream=None, force_module_load=True, external=False, apic=False):
        self.device = device
        self.stream = stream
        self.apic = bool(apic)  # Warp's serializable CPU capture: objects that cannot be serialized refuse it
        self.graph = None

    def __enter__(self):
        self._g = capture_begin(self.device, self.stream)
        self._g.apic = self.apic
        return self

    def __exit__(self, exc_type, exc, tb):
        self.graph = capture_end(self.device, self.stream)
        return False
