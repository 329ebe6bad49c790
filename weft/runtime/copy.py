"""``wp.copy``: element copies between arrays, across devices; differentiable when recorded on a Tape."""

from __future__ import annotations

from ..errors import Error
from .backends import backend_for
from .capture import active_capture


def copy(dest, src, dest_offset: int = 0, src_offset: int = 0, count: int = 0, stream=None) -> None:
    """Copy ``count`` elements (all if 0) of ``src`` into ``dest`` (flattened order for offsets).

    Recorded on an active Tape: its adjoint adds ``dest.grad`` into ``src.grad``. Fabric arrays (``wp.fabricarray``,
    ``wp.indexedfabricarray``) copy to and from arrays of the same size and dtype (no gradient, as in Warp)."""
    from .fabric import _FabricBase
    from .indexed import indexedarray

    if isinstance(dest, (_FabricBase, indexedarray)) or isinstance(src, (_FabricBase, indexedarray)):
        _gather_copy(dest, src, dest_offset, src_offset, count)
        return
    _raw_copy(dest, src, dest_offset, src_offset, count, stream)
    from .tape import record_copy

    record_copy(dest, src, dest_offset, src_offset, count)


def _raw_copy(dest, src, dest_offset: int = 0, src_offset: int = 0, count: int = 0, stream=None) -> None:
    from .array import array
    from .fabric import _FabricBase
    from .indexed import indexedarray

    if isinstance(dest, (_FabricBase, indexedarray)) or isinstance(src, (_FabricBase, indexedarray)):
        _gather_copy(dest, src, dest_offset, src_offset, count)
        return

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


def _gather_copy(dest, src, dest_offset: int, src_offset: int, count: int) -> None:
    """Element copies with an indexed or Fabric array on either side, through the host (whole arrays, as Warp copies
    them; not recorded on a Tape)."""
    from .array import array
    from .fabric import _FabricBase
    from .indexed import indexedarray

    kinds = (array, indexedarray, _FabricBase)
    for side, a in (("dest", dest), ("src", src)):
        if not isinstance(a, kinds) or a._annotation:
            raise Error(f"wp.copy: {side} must be an array (regular, indexed or Fabric) with data, got "
                        f"{type(a).__name__}")
    if dest_offset or src_offset or (count and count != src.size):
        raise Error("wp.copy: offsets and partial counts are not supported with indexed or Fabric arrays (copy "
                    "whole arrays)")
    if dest._ir != src._ir:
        raise Error(f"wp.copy: dtype mismatch (dest {dest._ir}, src {src._ir})")
    if dest.size != src.size:
        raise Error(f"wp.copy: size mismatch (dest {dest.size} elements, src {src.size})")
    if src.size == 0:
        return
    host = src.numpy()
    values = host.reshape((src.size, *host.shape[src.ndim:]))
    if isinstance(dest, _FabricBase):
        dest._check_data("wp.copy")
        dest._scatter(lambda n: values)
    elif isinstance(dest, indexedarray):
        dest._set(values.reshape(dest.shape + values.shape[1:]))
    else:
        dest.assign(array(values.reshape(dest.shape + values.shape[1:]), dtype=dest.dtype, device="cpu"))
