"""``wp.copy``: element copies between arrays, across devices; differentiable when recorded on a Tape."""

from __future__ import annotations

from ..errors import Error
from .backends import backend_for
from .capture import active_capture


def copy(dest, src, dest_offset: int = 0, src_offset: int = 0, count: int = 0, stream=None) -> None:
    """Copy ``count`` elements (all if 0) of ``src`` into ``dest`` (flattened order for offsets).

    Recorded on an active Tape: its adjoint adds ``dest.grad`` into ``src.grad``."""
    _raw_copy(dest, src, dest_offset, src_offset, count, stream)
    from .tape import record_copy

    record_copy(dest, src, dest_offset, src_offset, count)


def _raw_copy(dest, src, dest_offset: int = 0, src_offset: int = 0, count: int = 0, stream=None) -> None:
    from .array import array

    if not isinstance(dest, array) or not isinstance(src, array):
        raise Error("wp.copy(dest, src) needs two weft arrays")
    if dest._ir != src._ir:
        raise Error(f"wp.copy: dtype mismatch (dest {dest._ir}, src {src._ir})")
    whole = dest_offset == 0 and src_offset == 0 and (count == 0 or count == src.size == dest.size)
    if whole and dest.shape != src.shape and dest.size != src.size:
        raise Error(f"wp.copy: shape mismatch (dest {dest.shape}, src {src.shape})")
    impl = backend_for(dest.device, src.device)
    graph = active_capture()
    if graph is not None and impl.capture_by_replay and graph.device.impl.capture_by_replay:
        graph.launches.append(lambda: copy(dest, src, dest_offset, src_offset, count, stream))
        return
    if whole:
        count = 0  # the whole array (the backend knows its size)
    elif count == 0:
        count = min(src.size - src_offset, dest.size - dest_offset)
    if whole or count > 0:
        impl.copy(dest, src, dest_offset, src_offset, count, stream)
    dest._mark_written()
