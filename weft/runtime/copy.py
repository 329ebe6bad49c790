"""``wp.copy``: element copies between arrays, across devices; differentiable when recorded on a Tape."""

from __future__ import annotations

import functools
import numbers

from ..errors import CopyError, Error
from ..types.dtypes import element_size
from .backends import backend_for
from .capture import active_capture


def copy(dest, src, dest_offset: int = 0, src_offset: int = 0, count: int = 0, stream=None) -> None:
    """Copy ``count`` elements (all if 0) of ``src`` into ``dest`` (flattened order for offsets).

    Recorded on an active Tape: its adjoint adds ``dest.grad`` into ``src.grad``. Fabric arrays (``wp.fabricarray``,
    ``wp.indexedfabricarray``) copy to and from arrays of the same size and dtype (no gradient, as in Warp)."""
    from .fabric import _FabricBase
    from .indexed import indexedarray

    _check_range(dest_offset, src_offset, count)
    if isinstance(dest, (_FabricBase, indexedarray)) or isinstance(src, (_FabricBase, indexedarray)):
        if dest_offset or src_offset or count:
            raise CopyError("wp.copy: offsets and count are not supported for indexed or Fabric arrays (they copy "
                            "whole arrays)")
        graph = active_capture()
        if graph is not None and graph.device.impl.capture_by_replay and graph.device in (dest.device, src.device):
            graph.launches.append(lambda: _gather_copy(dest, src, dest_offset, src_offset, count))
            return
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
        # contiguous arrays of one element size copy their bytes, as Warp's do (the values reinterpreted)
        if not (dest.is_contiguous and src.is_contiguous and element_size(dest._ir) == element_size(src._ir)):
            raise CopyError(f"wp.copy: incompatible dtypes (destination dtype={dest._ir}, source dtype={src._ir})")
        _raw_copy(dest, src.view(dest.dtype), dest_offset, src_offset, count, stream)
        return
    whole = dest_offset == 0 and src_offset == 0 and (count == 0 or count == src.size == dest.size)
    if whole and dest.shape != src.shape:
        if dest.size != src.size:  # an omitted count is the source's size: a bounded copy (checked below)
            whole, count = False, src.size
        elif not (dest.is_contiguous and src.is_contiguous):
            # (contiguous arrays of one size copy element by element in flat order, as Warp copies their bytes)
            raise CopyError(f"wp.copy: incompatible shapes (destination shape={dest.shape}, source shape="
                            f"{src.shape})")
    if not whole:
        for a, what in ((src, "source"), (dest, "destination")):
            if a.ndim > 1 and not a.is_contiguous:
                raise CopyError(f"wp.copy: offsets and count are only supported for 1-D or contiguous arrays (the "
                                f"{what} has shape {a.shape} and strides {a.strides})")
        for a, off, what in ((src, src_offset, "source"), (dest, dest_offset, "destination")):
            if count and off + count > a.size:
                raise CopyError(f"wp.copy: count {count} at offset {off} exceeds the {what} size {a.size}")
    impl = backend_for(dest.device, src.device)
    graph = active_capture()
    if graph is not None and impl.capture_by_replay and graph.device.impl.capture_by_replay:
        graph.launches.append(functools.partial(copy, dest, src, dest_offset, src_offset, count, stream))
        return
    if whole:
        count = 0  # the whole array (the backend knows its size)
    elif count == 0:
        count = min(src.size - src_offset, dest.size - dest_offset)
    if whole or count > 0:
        impl.copy(dest, src, dest_offset, src_offset, count, stream)
    dest._mark_written()


def _check_range(dest_offset, src_offset, count) -> None:
    """Warp's checks of ``wp.copy``'s offsets and count: integers, non-negative (0 copies everything)."""
    for v in (dest_offset, src_offset, count):
        if not isinstance(v, numbers.Integral) or isinstance(v, bool):
            raise CopyError(f"wp.copy: offsets and count must be integers, got {v!r}")
    if src_offset < 0:
        raise CopyError(f"wp.copy: Source offset must be non-negative, got {src_offset}")
    if dest_offset < 0:
        raise CopyError(f"wp.copy: Destination offset must be non-negative, got {dest_offset}")
    if count < 0:
        raise CopyError(f"wp.copy: count must be non-negative, got {count}")


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
