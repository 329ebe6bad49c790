"""Device memory for weft arrays: stream-ordered pool allocations, pinned host memory, copies and fills.

Allocations come from the device's default memory pool (``cuMemAllocAsync`` on the current stream), whose release
threshold is raised so freed blocks are reused instead of returned to the driver: allocating inside a simulation
loop is cheap and works under graph capture. ``wp.get_mempool_used_mem_current/high`` read the pool's counters.
All copies are queued on a stream; copies into pageable host memory return when the data has arrived.
"""

from __future__ import annotations

import ctypes
import weakref

import numpy as np

from ..errors import Error
from ..types.dtypes import element_size, np_layout
from . import manage
from .driver import api, check

_MEMPOOL_ALLOC_FALLBACK: dict[int, int] = {}  # device ordinal -> bytes allocated without a pool (old GPUs)
_HIGH_FALLBACK: dict[int, int] = {}


class DeviceBuffer:
    """One device allocation; freed (stream-ordered) when the last array referencing it goes away."""

    __slots__ = ("__weakref__", "allocator", "device", "kind", "nbytes", "ptr")

    def __init__(self, ptr: int, nbytes: int, device, kind: int = 0, allocator=None):
        self.ptr = ptr
        self.nbytes = nbytes
        self.device = device
        self.kind = kind  # Warp's memory kind number (weft.cuda.manage.KIND_*; 0: unknown)
        self.allocator = allocator  # the user allocator that made it (None: weft's own)


def _stream_of(device, stream=None):
    if stream is not None:
        return getattr(stream, "_native", stream)
    from .streams import current_stream

    return current_stream(device)


def alloc(device, nbytes: int, pinned: bool = False) -> DeviceBuffer:
    """``nbytes`` of memory on a CUDA ``device`` (``pinned`` is meaningful for host arrays only)."""
    ctx = device.backend
    if nbytes == 0:
        return DeviceBuffer(0, 0, device)
    ctx.make_current()
    drv = api()
    if ctx.custom_allocator is not None:
        return _alloc_custom(device, ctx.custom_allocator, nbytes)
    if ctx.mempool_enabled:  # only ever set where the device has a pool (driver, set_mempool_enabled)
        ctx.pool  # noqa: B018 - configures the pool's release threshold on first use
        stream = _stream_of(device)
        ptr = int(check(drv.cuMemAllocAsync(nbytes, stream), f"allocating {nbytes} bytes on {device}"))
        pooled = True
    else:
        ptr = int(check(drv.cuMemAlloc(nbytes), f"allocating {nbytes} bytes on {device}"))
        pooled = False
        used = _MEMPOOL_ALLOC_FALLBACK.get(device.ordinal, 0) + nbytes
        _MEMPOOL_ALLOC_FALLBACK[device.ordinal] = used
        _HIGH_FALLBACK[device.ordinal] = max(_HIGH_FALLBACK.get(device.ordinal, 0), used)
    buf = DeviceBuffer(ptr, nbytes, device, manage.KIND_CUDA_MEMPOOL if pooled else manage.KIND_CUDA_DEVICE)
    weakref.finalize(buf, _free, device, ptr, nbytes, pooled).atexit = False
    return buf


def _alloc_custom(device, allocator, nbytes: int) -> DeviceBuffer:
    """An allocation made by a user allocator (Warp's Allocator protocol), with the device's context current;
    handed back with ``allocator.deallocate(ptr, nbytes)`` when the last array using it goes away."""
    ptr = allocator.allocate(nbytes)
    if not isinstance(ptr, int) and not hasattr(ptr, "__index__"):
        raise Error(f"the allocator of {device} returned {type(ptr).__name__} from allocate({nbytes}); expected an "
                    "int device address")
    ptr = int(ptr)
    if ptr == 0:
        raise Error(f"the allocator of {device} returned a null pointer for {nbytes} bytes")
    kind = getattr(allocator, "memory_kind", None)
    buf = DeviceBuffer(ptr, nbytes, device, int(kind) if kind is not None else manage.KIND_UNKNOWN, allocator)
    weakref.finalize(buf, _free_custom, device, allocator, ptr, nbytes).atexit = False
    return buf


def _free_custom(device, allocator, ptr: int, nbytes: int) -> None:
    from . import graphs

    if graphs.defer_free(device, lambda: _free_custom(device, allocator, ptr, nbytes)):
        return
    try:
        device.backend.make_current()
        allocator.deallocate(ptr, nbytes)
    except Exception:  # noqa: BLE001, S110 - never raise from a finaliser (e.g. at interpreter shutdown)
        pass


def _free(device, ptr: int, nbytes: int, pooled: bool) -> None:
    from . import graphs

    if graphs.defer_free(device, lambda: _free(device, ptr, nbytes, pooled)):
        return
    try:
        drv = api()
        device.backend.make_current()
        if pooled:
            drv.cuMemFreeAsync(ptr, _stream_of(device))
        else:
            drv.cuMemFree(ptr)
            _MEMPOOL_ALLOC_FALLBACK[device.ordinal] -= nbytes
    except Exception:  # noqa: BLE001, S110 - never raise from a finaliser (e.g. at interpreter shutdown)
        pass


def _pool_attr(device, which: str) -> int:
    ctx = device.backend
    if not ctx.mempool_supported:
        table = _HIGH_FALLBACK if which.endswith("HIGH") else _MEMPOOL_ALLOC_FALLBACK
        return table.get(device.ordinal, 0)
    drv = api()
    attr = getattr(drv.CUmemPool_attribute, which)
    return int(check(drv.cuMemPoolGetAttribute(ctx.pool, attr), "cuMemPoolGetAttribute"))


def pool_used_current(device) -> int:
    """Bytes of the device's memory pool in use by live allocations."""
    return _pool_attr(device, "CU_MEMPOOL_ATTR_USED_MEM_CURRENT")


def pool_used_high(device) -> int:
    """High-water mark of :func:`pool_used_current` since the process started (or the last reset)."""
    return _pool_attr(device, "CU_MEMPOOL_ATTR_USED_MEM_HIGH")


# ---------------------------------------------------------------------- pinned host memory
def pinned_empty(shape: tuple[int, ...], dtype: np.dtype, context=None) -> np.ndarray:
    """A NumPy array in page-locked host memory (fast, truly asynchronous transfers); freed with the array.
    ``context``: the GPU's :class:`~weft.cuda.driver.Context` to pin with (None: no GPU, ordinary memory)."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if context is None or nbytes == 0:
        return np.zeros(shape, dtype)  # no driver: ordinary memory keeps programs portable
    context.make_current()
    drv = api()
    ptr = int(check(drv.cuMemHostAlloc(nbytes, drv.CU_MEMHOSTALLOC_PORTABLE), f"pinning {nbytes} host bytes"))
    raw = (ctypes.c_byte * nbytes).from_address(ptr)
    weakref.finalize(raw, _free_host, ptr).atexit = False
    out = np.frombuffer(raw, dtype=dtype).reshape(shape)
    out[...] = 0
    return out


def _free_host(ptr: int) -> None:
    try:
        api().cuMemFreeHost(ptr)
    except Exception:  # noqa: BLE001, S110 - never raise from a finaliser
        pass


# ---------------------------------------------------------------------- layout helpers
def _span(arr) -> tuple[int, int]:
    """Byte offsets [lo, hi) relative to ``arr.ptr`` covering every element of a (possibly strided) array."""
    if any(n == 0 for n in arr.shape):
        return 0, 0
    lo = sum(min(0, (n - 1) * s) for n, s in zip(arr.shape, arr.strides))
    hi = sum(max(0, (n - 1) * s) for n, s in zip(arr.shape, arr.strides)) + element_size(arr._ir)
    return lo, hi


def _host_view(arr, buf: np.ndarray, lo: int) -> np.ndarray:
    """A NumPy view of ``arr``'s elements inside ``buf``, a host copy of its span starting at byte ``lo``."""
    base, trailing = np_layout(arr._ir)
    tstrides = []
    step = base.itemsize
    for n in reversed(trailing):
        tstrides.insert(0, step)
        step *= n
    return np.ndarray(tuple(arr.shape) + trailing, dtype=base, buffer=buf, offset=-lo,
                      strides=tuple(arr.strides) + tuple(tstrides))


def _download(ptr: int, nbytes: int, device, stream=None) -> np.ndarray:
    buf = np.empty(nbytes, dtype=np.uint8)
    if nbytes:
        device.backend.make_current()
        drv = api()
        s = _stream_of(device, stream)
        check(drv.cuMemcpyDtoHAsync(buf.ctypes.data, ptr, nbytes, s), "device-to-host copy")
        check(drv.cuStreamSynchronize(s), "cuStreamSynchronize")
    return buf


def _upload(ptr: int, host: np.ndarray, device, stream=None) -> None:
    nbytes = host.nbytes
    if nbytes:
        device.backend.make_current()
        check(api().cuMemcpyHtoDAsync(ptr, host.ctypes.data, nbytes, _stream_of(device, stream)),
              "host-to-device copy")


# ---------------------------------------------------------------------- array operations
def copy_from_host(arr, host: np.ndarray, stream=None) -> None:
    """Fill a device array from a host array of the same shape."""
    if arr.is_contiguous:
        _upload((arr.ptr or 0), np.ascontiguousarray(host), arr.device, stream)
        return
    lo, hi = _span(arr)
    buf = _download((arr.ptr or 0) + lo, hi - lo, arr.device, stream)
    _host_view(arr, buf, lo)[...] = host
    _upload((arr.ptr or 0) + lo, buf, arr.device, stream)


def copy_to_host(arr, stream=None) -> np.ndarray:
    """A new host NumPy array (C-contiguous) with the device array's elements (waits for the data)."""
    lo, hi = _span(arr)
    buf = _download((arr.ptr or 0) + lo, hi - lo, arr.device, stream)
    if hi == lo:
        base, trailing = np_layout(arr._ir)
        return np.zeros(tuple(arr.shape) + trailing, dtype=base)
    view = _host_view(arr, buf, lo)
    return view if arr.is_contiguous else np.ascontiguousarray(view)


def fill(arr, pattern: bytes, stream=None) -> None:
    """Set every element of a device array to the element bytes ``pattern`` (memset when the pattern allows)."""
    count = arr.size
    if count == 0:
        return
    if arr.is_contiguous:
        nbytes = count * len(pattern)
        for width, fn in ((1, "cuMemsetD8Async"), (2, "cuMemsetD16Async"), (4, "cuMemsetD32Async")):
            if len(pattern) % width == 0 and pattern == pattern[:width] * (len(pattern) // width):
                word = int.from_bytes(pattern[:width], "little")
                arr.device.backend.make_current()
                check(getattr(api(), fn)(arr.ptr, word, nbytes // width, _stream_of(arr.device, stream)), fn)
                return
        if _fill_words(arr, pattern, count, stream):
            return
        # pageable host -> device copies are staged before the call returns, so the host buffer may go
        _upload(arr.ptr, np.frombuffer(pattern * count, dtype=np.uint8), arr.device, stream)
        return
    base, trailing = np_layout(arr._ir)
    host = np.empty(tuple(arr.shape) + trailing, dtype=base)
    host.reshape(-1).view(np.uint8)[...] = np.frombuffer(pattern * count, dtype=np.uint8)
    copy_from_host(arr, host, stream)


def _fill_words(arr, pattern: bytes, count: int, stream) -> bool:
    """Fill with a multi-word element pattern (float64, vectors, ...) as one strided 2-D memset per 32/16-bit word
    of the element: no host staging, so it also works inside graph capture."""
    for width, fn in ((4, "cuMemsetD2D32Async"), (2, "cuMemsetD2D16Async")):
        if len(pattern) % width or arr.ptr % width:
            continue
        arr.device.backend.make_current()
        drv, handle = api(), _stream_of(arr.device, stream)
        for k in range(0, len(pattern), width):
            word = int.from_bytes(pattern[k:k + width], "little")
            check(getattr(drv, fn)(arr.ptr + k, len(pattern), word, 1, count, handle), fn)
        return True
    return False


def copy(dest, src, dest_offset: int = 0, src_offset: int = 0, count: int = 0, stream=None) -> None:
    """``wp.copy`` when either side is on a GPU: host<->device, device<->device (also across GPUs).

    Offsets and ``count`` are in elements of the flattened arrays. Contiguous ranges are one driver copy;
    strided arrays are gathered through the host (correct, but slow: make them contiguous for speed).
    """
    esize = element_size(src._ir)
    whole = dest_offset == 0 and src_offset == 0 and count == src.size == dest.size
    if not (dest.is_contiguous and src.is_contiguous):
        if not whole:
            raise Error("wp.copy with offsets or a count needs contiguous arrays")
        host = src.numpy() if src.device.is_cuda else np.ascontiguousarray(src.numpy())
        if dest.device.is_cuda:
            copy_from_host(dest, host.reshape(tuple(dest.shape) + host.shape[src.ndim:]), stream)
        else:
            dest.numpy()[...] = host.reshape(dest.numpy().shape)
        return
    nbytes = count * esize
    if nbytes == 0:
        return
    dst_ptr = dest.ptr + dest_offset * esize
    src_ptr = src.ptr + src_offset * esize
    drv = api()
    if dest.device.is_cuda and src.device.is_cuda:
        dest.device.backend.make_current()
        check(drv.cuMemcpyAsync(dst_ptr, src_ptr, nbytes, _stream_of(dest.device, stream)),
              f"device-to-device copy ({src.device} -> {dest.device})")
    elif dest.device.is_cuda:
        dest.device.backend.make_current()
        check(drv.cuMemcpyHtoDAsync(dst_ptr, src_ptr, nbytes, _stream_of(dest.device, stream)), "host-to-device copy")
    else:
        src.device.backend.make_current()
        s = _stream_of(src.device, stream)
        check(drv.cuMemcpyDtoHAsync(dst_ptr, src_ptr, nbytes, s), "device-to-host copy")
        if not dest.pinned:  # pinned destinations stay asynchronous, as in Warp (synchronize before reading)
            check(drv.cuStreamSynchronize(s), "cuStreamSynchronize")
