"""The old home of streams, events, graph capture and timers, kept so ``weft.runtime.sync`` imports keep working.

They live by concern in ``runtime/streams.py`` (streams, events, synchronisation, memory-pool counters),
``runtime/capture.py`` (graph capture) and ``runtime/timing.py`` (``ScopedTimer``).
"""

from .capture import Graph, ScopedCapture, _capture, active_capture, capture_begin, capture_end, capture_launch
from .streams import (
           Event,
           ScopedStream,
           Stream,
           _current_stream,
           _streams,
           get_mempool_used_mem_current,
           get_mempool_used_mem_high,
           get_stream,
           record_event,
           synchronize,
           synchronize_device,
           synchronize_event,
           synchronize_stream,
           wait_event,
           wait_stream,
)
from .timing import ScopedTimer

__all__ = ["Event", "Graph", "ScopedCapture", "ScopedStream", "ScopedTimer", "Stream", "_capture", "_current_stream",
           "_streams", "active_capture", "capture_begin", "capture_end", "capture_launch",
           "get_mempool_used_mem_current", "get_mempool_used_mem_high", "get_stream", "record_event", "synchronize",
           "synchronize_device", "synchronize_event", "synchronize_stream", "wait_event", "wait_stream"]
