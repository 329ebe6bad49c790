"""``wp.MemoryKind`` and ``array.memory_kind``: the class of memory behind an array, as Warp reports it.

CPU arrays are ``HOST`` or ``PINNED``. A CUDA array made by weft knows how it was allocated (the device's pool, the
default allocator, a user allocator with a ``memory_kind``); memory weft did not allocate (``wp.array(ptr=...)``,
IPC, DLPack) is classified by the driver's pointer attributes (``weft.cuda.manage.pointer_kind``).
"""

from __future__ import annotations

import enum

from ..cuda import manage


class MemoryKind(enum.IntEnum):
    """The memory class backing an array (not where its pages are now, nor who may access it: see
    ``wp.can_access``). The numbers are Warp's."""

    UNKNOWN = 0
    HOST = 1
    PINNED = 2
    CUDA_DEVICE = 3
    CUDA_MEMPOOL = 4
    CUDA_MANAGED = 5


def memory_kind(arr) -> MemoryKind:
    """The memory kind of ``arr`` (views report their owner's)."""
    device = arr.device
    if device.impl.host_memory:
        return MemoryKind.PINNED if arr.pinned else MemoryKind.HOST
    buf = arr._dev_mem
    if buf is not None and getattr(buf, "kind", 0):
        return MemoryKind(buf.kind)
    ptr = arr._ptr
    if not ptr or not device.impl.cuda_driver:
        return MemoryKind.UNKNOWN
    try:
        return MemoryKind(manage.pointer_kind(device.backend, ptr))
    except ValueError:
        return MemoryKind.UNKNOWN


def ipc_handle(arr) -> bytes:
    """The 64-byte IPC handle of a CUDA array made by weft's ordinary allocator (``wp.ScopedMempool(device, False)``
    while creating it), for ``wp.from_ipc_handle`` in another process."""
    device = arr.device
    if not device.impl.cuda_driver:
        raise RuntimeError("IPC requires a CUDA device")
    kind = memory_kind(arr)
    if kind is MemoryKind.CUDA_MANAGED:
        raise RuntimeError("IPC is not supported for managed-memory arrays")
    if not manage.ipc_supported(device.backend):
        raise RuntimeError("IPC does not appear to be supported on this CUDA device")
    if kind is MemoryKind.CUDA_MEMPOOL:
        raise RuntimeError("IPC is only supported for arrays of the default allocator: create the array inside "
                           f"wp.ScopedMempool('{device}', False)")
    if getattr(arr, "_parent", None) is not None:
        raise RuntimeError("IPC is not supported for array views")
    buf = arr._dev_mem
    if buf is None or buf.allocator is not None or buf.ptr != arr._ptr:
        raise RuntimeError("IPC is not supported for externally wrapped arrays")
    return manage.ipc_mem_handle(device.backend, arr._ptr)
