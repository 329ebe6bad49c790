"""Warp's CUDA runtime-management API: allocators, memory pools, peer access, IPC, the profiler range, version and
kernel queries, the current stream.

On a GPU each call goes to the driver (``weft.cuda.manage``); on the CPU each behaves as Warp 1.19's does there:
queries answer what the CPU is (no pool, no peer access, ``(1, 1)`` block size), disabling is a no-op, and asking
for a CUDA-only feature raises the error Warp raises, naming the device.
"""

from __future__ import annotations

import os
import shutil
from typing import Protocol, runtime_checkable

import numpy as np

from .. import config
from ..cuda import driver, manage
from ..cuda import launch as cuda_launch
from ..errors import DeviceError
from ..toolchain import nvrtc
from . import device as D
from . import streams as S
from .memkind import MemoryKind


def _cuda(device) -> bool:
    return bool(D.get_device(device).impl.cuda_driver)


# ---------------------------------------------------------------------- allocators
@runtime_checkable
class Allocator(Protocol):
    """What a custom allocator provides: ``allocate(size_in_bytes) -> int`` (a device address) and
    ``deallocate(ptr, size_in_bytes)``; it may name the ``memory_kind`` of what it returns."""

    def allocate(self, size_in_bytes: int) -> int: ...

    def deallocate(self, ptr: int, size_in_bytes: int) -> None: ...


def _validate_allocator(allocator) -> None:
    if allocator is None:
        return
    if not (callable(getattr(allocator, "allocate", None)) and callable(getattr(allocator, "deallocate", None))):
        raise TypeError("allocator must implement the Allocator protocol (allocate(size_in_bytes) -> int, "
                        f"deallocate(ptr, size_in_bytes) -> None), got {type(allocator)!r}")


class CpuDefaultAllocator:
    """The host allocator of the CPU device (64-byte aligned host memory)."""

    memory_kind = MemoryKind.HOST

    def __init__(self):
        self._live: dict[int, np.ndarray] = {}

    def allocate(self, size_in_bytes: int) -> int:
        raw = np.zeros(int(size_in_bytes) + 64, dtype=np.uint8)
        ptr = (raw.ctypes.data + 63) // 64 * 64
        self._live[ptr] = raw
        return ptr

    def deallocate(self, ptr: int, size_in_bytes: int) -> None:
        self._live.pop(int(ptr), None)


class CudaDefaultAllocator:
    """A GPU's ordinary allocator (``cuMemAlloc`` / ``cuMemFree``)."""

    memory_kind = MemoryKind.CUDA_DEVICE

    def __init__(self, device):
        self.device = D.get_device(device)

    def allocate(self, size_in_bytes: int) -> int:
        ctx = self.device.backend
        ctx.make_current()
        return int(driver.check(driver.api().cuMemAlloc(int(size_in_bytes)), "cuMemAlloc"))

    def deallocate(self, ptr: int, size_in_bytes: int) -> None:
        manage.free(self.device.backend, ptr)


class CudaMempoolAllocator:
    """A GPU's stream-ordered pool allocator (``cuMemAllocAsync`` / ``cuMemFreeAsync`` on the current stream)."""

    memory_kind = MemoryKind.CUDA_MEMPOOL

    def __init__(self, device):
        self.device = D.get_device(device)

    def allocate(self, size_in_bytes: int) -> int:
        ctx = self.device.backend
        ctx.make_current()
        ctx.pool  # noqa: B018 - sets the pool's release threshold on first use
        stream = S.get_stream(self.device)._native
        return int(driver.check(driver.api().cuMemAllocAsync(int(size_in_bytes), stream), "cuMemAllocAsync"))

    def deallocate(self, ptr: int, size_in_bytes: int) -> None:
        self.device.backend.make_current()
        driver.check(driver.api().cuMemFreeAsync(int(ptr), S.get_stream(self.device)._native), "cuMemFreeAsync")


class CudaManagedAllocator:
    """Makes arrays in CUDA managed memory (``cuMemAllocManaged``), reachable from the host and every GPU. Not tied
    to one device: each allocation is made in the context of the device the array is created on."""

    memory_kind = MemoryKind.CUDA_MANAGED
    deallocate_requires_context_guard = False

    def __init__(self):
        self._owner: dict[int, object] = {}

    def _context(self):
        current = D.get_device()
        if not current.impl.cuda_driver:
            cudas = D.get_cuda_devices()
            if not cudas:
                raise RuntimeError("CudaManagedAllocator requires a current CUDA device")
            current = cudas[0]
        return current

    def allocate(self, size_in_bytes: int) -> int:
        device = self._context()
        ctx = device.backend
        if not manage.managed_supported(ctx):
            raise RuntimeError(f"CudaManagedAllocator requires CUDA managed memory support on device '{device}'")
        ptr = manage.alloc_managed(ctx, size_in_bytes)
        self._owner[ptr] = ctx
        return ptr

    def deallocate(self, ptr: int, size_in_bytes: int) -> None:
        if not ptr:
            return
        ctx = self._owner.pop(int(ptr), None) or self._context().backend
        manage.free(ctx, ptr)


_CPU_ALLOCATOR = CpuDefaultAllocator()


def _require_cuda_for_allocator(device):
    dev = D.get_device(device)
    if not dev.impl.cuda_driver:
        raise RuntimeError("Custom allocators are only supported on CUDA devices")
    return dev


def set_device_allocator(device, allocator) -> None:
    """Allocate the arrays of CUDA ``device`` with ``allocator`` (an :class:`Allocator`; None: the built-in one)."""
    dev = _require_cuda_for_allocator(device)
    _validate_allocator(allocator)
    dev.backend.custom_allocator = allocator


def set_cuda_allocator(allocator) -> None:
    """:func:`set_device_allocator` for every CUDA device."""
    _validate_allocator(allocator)
    cudas = D.get_cuda_devices()
    if not cudas:
        raise RuntimeError("set_cuda_allocator: no CUDA devices available")
    for dev in cudas:
        dev.backend.custom_allocator = allocator


def get_device_allocator(device):
    """The allocator arrays of ``device`` come from: a custom one set for it, else the built-in pool or default
    allocator of a GPU, or the host allocator of the CPU."""
    dev = D.get_device(device)
    if not dev.impl.cuda_driver:
        return _CPU_ALLOCATOR
    ctx = dev.backend
    if ctx.custom_allocator is not None:
        return ctx.custom_allocator
    return CudaMempoolAllocator(dev) if ctx.mempool_enabled else CudaDefaultAllocator(dev)


class ScopedAllocator:
    """``with wp.ScopedAllocator(device, allocator):`` arrays of CUDA ``device`` come from ``allocator`` inside."""

    def __init__(self, device, allocator):
        self.device = _require_cuda_for_allocator(device)
        _validate_allocator(allocator)
        self.allocator = allocator

    def __enter__(self):
        self.saved = self.device.backend.custom_allocator
        self.device.backend.custom_allocator = self.allocator
        return self

    def __exit__(self, *exc):
        self.device.backend.custom_allocator = self.saved
        return False


# ---------------------------------------------------------------------- memory pools
def is_mempool_enabled(device=None) -> bool:
    """Whether ``device``'s arrays come from its stream-ordered memory pool (False on the CPU)."""
    return D.get_device(device).is_mempool_enabled


def set_mempool_enabled(device, enable: bool) -> None:
    """Allocate ``device``'s arrays from its memory pool (True) or with the ordinary allocator (False); pooled
    allocation is faster and works under graph capture. Disabling on the CPU is a no-op, enabling is an error."""
    dev = D.get_device(device)
    if not dev.impl.cuda_driver:
        if enable:
            raise ValueError("Memory pools are only supported on CUDA devices")
        return
    if enable and not dev.backend.mempool_supported:
        raise RuntimeError(f"Device {dev} does not support memory pools")
    dev.backend.mempool_enabled = bool(enable)


def _pool_device(device):
    dev = D.get_device(device)
    if not dev.impl.cuda_driver:
        raise ValueError("Memory pools are only supported on CUDA devices")
    if not dev.backend.mempool_supported:
        raise RuntimeError(f"Device {dev} does not support memory pools")
    return dev


def set_mempool_release_threshold(device, threshold) -> None:
    """Keep up to ``threshold`` bytes of freed memory in ``device``'s pool before returning it to the driver; a
    value in (0, 1] is a fraction of the device's memory, a negative one is 0."""
    dev = _pool_device(device)
    if threshold < 0:
        threshold = 0
    elif 0 < threshold <= 1:
        threshold = int(threshold * dev.backend.total_memory)
    manage.set_release_threshold(dev.backend, int(threshold))


def get_mempool_release_threshold(device=None) -> int:
    """The release threshold of ``device``'s memory pool in bytes."""
    return manage.release_threshold(_pool_device(device).backend)


_mempool_access: dict[tuple[int, int], bool] = {}
_peer_access: dict[tuple[int, int], bool] = {}


def _two_cuda(target_device, peer_device):
    target, peer = D.get_device(target_device), D.get_device(peer_device)
    return target, peer, bool(target.impl.cuda_driver and peer.impl.cuda_driver)


def is_peer_access_supported(target_device, peer_device) -> bool:
    """Whether ``peer_device`` can access ``target_device``'s ordinary allocations directly (never for the CPU)."""
    target, peer, both = _two_cuda(target_device, peer_device)
    return both and manage.peer_supported(target.backend, peer.backend)


def is_peer_access_enabled(target_device, peer_device) -> bool:
    """Whether ``peer_device``'s kernels may access ``target_device``'s ordinary allocations now."""
    target, peer, both = _two_cuda(target_device, peer_device)
    if not both:
        return False
    if target == peer:
        return True
    return _peer_access.get((target.ordinal, peer.ordinal), False)


def set_peer_access_enabled(target_device, peer_device, enable: bool) -> None:
    """Let ``peer_device``'s kernels access ``target_device``'s ordinary allocations (or stop them)."""
    target, peer, both = _two_cuda(target_device, peer_device)
    if not both:
        if enable:
            raise ValueError("Peer access is only supported between CUDA devices")
        return
    if not manage.peer_supported(target.backend, peer.backend):
        if enable:
            raise RuntimeError(f"Device {peer} cannot access device {target}")
        return
    manage.set_peer_access(target.backend, peer.backend, bool(enable))
    if target != peer:
        _peer_access[(target.ordinal, peer.ordinal)] = bool(enable)


def is_mempool_access_supported(target_device, peer_device) -> bool:
    """Whether ``peer_device`` can be given access to ``target_device``'s memory pool."""
    target, _, both = _two_cuda(target_device, peer_device)
    return both and target.backend.mempool_supported and is_peer_access_supported(target_device, peer_device)


def is_mempool_access_enabled(target_device, peer_device) -> bool:
    """Whether ``peer_device``'s kernels may access allocations of ``target_device``'s memory pool now."""
    target, peer, both = _two_cuda(target_device, peer_device)
    if not both or not target.backend.mempool_supported:
        return False
    if target == peer:
        return True
    return manage.mempool_access_enabled(target.backend, peer.backend)


def set_mempool_access_enabled(target_device, peer_device, enable: bool) -> None:
    """Grant (or revoke) ``peer_device`` access to every allocation of ``target_device``'s memory pool."""
    target, peer, both = _two_cuda(target_device, peer_device)
    if not both:
        if enable:
            raise ValueError("Memory pool access is only supported between CUDA devices")
        return
    if not target.backend.mempool_supported:
        if enable:
            raise RuntimeError(f"Device {target} does not support memory pools")
        return
    if not manage.peer_supported(target.backend, peer.backend):
        if enable:
            raise RuntimeError(f"Device {peer} cannot access device {target}")
        return
    if target != peer:
        manage.set_mempool_access(target.backend, peer.backend, bool(enable))


class ScopedMempool:
    """``with wp.ScopedMempool(device, enable):`` pooled allocation on or off inside the block, restored after."""

    def __init__(self, device, enable: bool):
        self.device = D.get_device(device)
        self.enable = enable

    def __enter__(self):
        self.saved = is_mempool_enabled(self.device)
        set_mempool_enabled(self.device, self.enable)

    def __exit__(self, *exc):
        set_mempool_enabled(self.device, self.saved)


class ScopedMempoolAccess:
    """``with wp.ScopedMempoolAccess(target, peer, enable):`` pool access from ``peer`` set inside, restored after."""

    def __init__(self, target_device, peer_device, enable: bool):
        self.target_device, self.peer_device, self.enable = target_device, peer_device, enable

    def __enter__(self):
        self.saved = is_mempool_access_enabled(self.target_device, self.peer_device)
        set_mempool_access_enabled(self.target_device, self.peer_device, self.enable)

    def __exit__(self, *exc):
        set_mempool_access_enabled(self.target_device, self.peer_device, self.saved)


class ScopedPeerAccess:
    """``with wp.ScopedPeerAccess(target, peer, enable):`` peer access from ``peer`` set inside, restored after."""

    def __init__(self, target_device, peer_device, enable: bool):
        self.target_device, self.peer_device, self.enable = target_device, peer_device, enable

    def __enter__(self):
        self.saved = is_peer_access_enabled(self.target_device, self.peer_device)
        set_peer_access_enabled(self.target_device, self.peer_device, self.enable)

    def __exit__(self, *exc):
        set_peer_access_enabled(self.target_device, self.peer_device, self.saved)


# ---------------------------------------------------------------------- access checks
def can_access(device, resource) -> bool:
    """Whether ``device`` can read and write ``resource`` (a weft array) directly: its own memory; managed memory
    from any GPU or the host; pinned host memory from a GPU; another GPU's memory when peer (or pool) access from
    ``device`` is enabled."""
    from .array import array
    from .indexed import indexedarray

    if not isinstance(resource, (array, indexedarray)) or getattr(resource, "_annotation", False):
        raise TypeError("wp.can_access() only supports concrete Warp arrays in this release")
    dev = D.get_device(device)
    if isinstance(resource, indexedarray):
        parts = [resource.data] + [i for i in resource.indices if i is not None]
        return all(can_access(dev, p) for p in parts)
    owner = resource.device
    if owner == dev:
        return True
    kind = resource.memory_kind
    if dev.impl.cuda_driver and not owner.impl.cuda_driver:
        return kind is MemoryKind.PINNED
    if kind is MemoryKind.CUDA_MANAGED:
        return True
    if dev.impl.cuda_driver and owner.impl.cuda_driver:
        if kind is MemoryKind.CUDA_MEMPOOL:
            return is_mempool_access_enabled(owner, dev)
        if kind is MemoryKind.CUDA_DEVICE:
            return is_peer_access_enabled(owner, dev)
    return False


def reachable(device, value) -> bool:
    """:func:`can_access` for a launch argument: False for anything that is not a weft array."""
    try:
        return can_access(device, value)
    except TypeError:
        return False


# ---------------------------------------------------------------------- IPC
def from_ipc_handle(handle: bytes, dtype, shape, strides=None, device=None):
    """An array over another process's device allocation (``array.ipc_handle()`` there): no copy is made; the
    mapping is closed when the array goes away."""
    from .array import array

    dev = D.get_device(device)
    if not dev.impl.cuda_driver or not manage.ipc_supported(dev.backend):
        raise RuntimeError(f"IPC is not supported on device {dev}.")
    ctx = dev.backend
    ptr = manage.ipc_open_mem(ctx, handle)
    return array(ptr=ptr, dtype=dtype, shape=shape, strides=strides, device=dev,
                 deleter=lambda p, _size: manage.ipc_close_mem(ctx, p))


def event_from_ipc_handle(handle: bytes, device=None):
    """A ``wp.Event`` for another process's interprocess event (``Event.ipc_handle()`` there)."""
    dev = D.get_device(device)
    if not dev.impl.cuda_driver or not manage.ipc_supported(dev.backend):
        raise RuntimeError(f"IPC is not supported on device {dev}.")
    event = S.Event(dev)
    event._native = manage.ipc_open_event(dev.backend, handle)
    return event


# ---------------------------------------------------------------------- events, streams, profiler
def get_event_elapsed_time(start_event, end_event, synchronize: bool = True) -> float:
    """Milliseconds between two recorded events (synchronising on ``end_event`` first unless ``synchronize`` is
    False)."""
    for name, ev in (("start_event", start_event), ("end_event", end_event)):
        if not isinstance(ev, S.Event):
            raise TypeError(f"get_event_elapsed_time: {name} must be a wp.Event, got {type(ev).__name__}")
    if synchronize:
        S.synchronize_event(end_event)
    return start_event.elapsed_time(end_event)


def set_stream(stream, device=None, sync: bool = False) -> None:
    """Make ``stream`` the current stream of ``device`` (default: the stream's device) for launches and copies that
    name none; ``sync``: it first waits for the work queued on the previous current stream."""
    if not isinstance(stream, S.Stream):
        raise TypeError(f"set_stream: stream must be a wp.Stream, got {type(stream).__name__}")
    dev = D.get_device(device) if device is not None else stream.device
    if not dev.impl.cuda_driver:
        raise RuntimeError(f"Device {dev} is not a CUDA device")
    if stream.device != dev:
        raise RuntimeError(f"Stream from device {stream.device} cannot be used on device {dev}")
    previous = S.get_stream(dev)
    if sync and previous is not stream:
        stream.wait_stream(previous)
    S.set_device_stream(dev, stream)


def cuda_profiler_start(device=None) -> None:
    """Start an external profiler's capture range (``cuProfilerStart``) for ``device``'s context; no effect on the
    CPU."""
    dev = D.get_device(device)
    if dev.impl.cuda_driver:
        manage.profiler_start(dev.backend)


def cuda_profiler_stop(device=None) -> None:
    """Stop an external profiler's capture range (``cuProfilerStop``); no effect on the CPU."""
    dev = D.get_device(device)
    if dev.impl.cuda_driver:
        manage.profiler_stop(dev.backend)


class ScopedCudaProfiler:
    """``with wp.ScopedCudaProfiler():`` limits an external profiler's capture range to the block."""

    def __init__(self, device=None):
        self.device = D.get_device(device)

    def __enter__(self):
        cuda_profiler_start(self.device)
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            cuda_profiler_stop(self.device)
        except Exception:
            if exc_type is None:
                raise
        return False


# ---------------------------------------------------------------------- devices and versions
def get_cuda_device(ordinal: int | None = None):
    """The CUDA device ``ordinal`` (None: the current device when it is a GPU, else the first GPU)."""
    cudas = D.get_cuda_devices()
    if not cudas:
        raise DeviceError(f'"cuda" device requested but no CUDA device is available ({driver.unavailable_reason})')
    if ordinal is None:
        current = D.get_device()
        return current if current.impl.cuda_driver else cudas[0]
    if not isinstance(ordinal, int) or not 0 <= ordinal < len(cudas):
        raise DeviceError(f"get_cuda_device: ordinal {ordinal!r} is not one of the {len(cudas)} CUDA devices")
    return cudas[ordinal]


def get_cuda_driver_version() -> tuple[int, int] | None:
    """The installed driver's CUDA version ``(major, minor)``; None without a driver."""
    version = driver.driver_version()
    return (version // 1000, version % 1000 // 10) if version else None


def get_cuda_toolkit_version() -> tuple[int, int] | None:
    """The version of the CUDA toolkit weft compiles GPU code with (NVRTC's); None without NVRTC."""
    if not nvrtc.is_available():
        return None
    return nvrtc.version()


def clear_lto_cache() -> None:
    """Remove the ``lto`` folder of the kernel cache (Warp keeps link-time-optimised MathDx code there; weft writes
    none, so there is nothing to remove unless another tool put it there)."""
    path = os.path.join(str(config.cache_dir()), "lto")
    if os.path.isdir(path):
        shutil.rmtree(path, ignore_errors=True)


# ---------------------------------------------------------------------- compiled kernels
def _forward_entry(kernel, device, api_name: str, block_dim=None):
    from ..kernel import Kernel

    if not isinstance(kernel, Kernel):
        raise TypeError(f"{api_name}() expected a wp.Kernel, got {type(kernel)}")
    if block_dim is not None and (not isinstance(block_dim, int) or isinstance(block_dim, bool) or block_dim <= 0):
        raise ValueError(f"block_dim must be a positive integer, got {block_dim!r}")
    dev = D.get_device(device)
    if kernel.is_generic and not kernel._overloads:
        raise RuntimeError(f"{api_name}() requires a concrete overload of generic kernel '{kernel.__name__}'; create "
                           "one with wp.overload() and pass the returned kernel")
    spec = kernel.compile(block_dim=block_dim)
    prog, program = cuda_launch.forward_function(spec, dev)
    return dev, prog, program


def get_cuda_kernel_properties(kernel, device=None, block_dim: int | None = None) -> dict[str, int]:
    """``{"register_count": registers per thread, "local_memory_size": bytes per thread}`` of a kernel's compiled
    forward entry on CUDA ``device``."""
    dev = D.get_device(device)
    if not dev.impl.cuda_driver:
        raise RuntimeError(f"get_cuda_kernel_properties() requires a CUDA device, got '{dev}'")
    dev, prog, _ = _forward_entry(kernel, dev, "get_cuda_kernel_properties", block_dim)
    attrs = manage.function_attributes(dev.backend, prog.function)
    return {"register_count": attrs["num_regs"], "local_memory_size": attrs["local_size_bytes"]}


def get_suggested_block_size(kernel, device=None) -> tuple[int, int]:
    """``(block_size, min_grid_size)`` maximising a kernel's occupancy on ``device`` (``(1, 1)`` on the CPU)."""
    from ..kernel import Kernel

    if not isinstance(kernel, Kernel):
        raise TypeError(f"get_suggested_block_size() expected a wp.Kernel, got {type(kernel)}")
    dev = D.get_device(device)
    if not dev.impl.cuda_driver:
        return (1, 1)
    dev, prog, program = _forward_entry(kernel, dev, "get_suggested_block_size")
    grid, block = manage.suggested_block_size(dev.backend, prog.function, program.shared_bytes)
    return block, grid


def get_cuda_max_cluster_dim(kernel, device=None, *, block_dim: int | None = None, dynamic_smem_bytes: int = 0) -> int:
    """The largest thread-block cluster size ``kernel`` can launch with (1 below sm_90 and on the CPU)."""
    dev = D.get_device(device)
    if not dev.impl.cuda_driver or dev.arch < 90:
        return 1
    dev, prog, program = _forward_entry(kernel, dev, "get_cuda_max_cluster_dim", block_dim)
    threads = block_dim or program.block_dim or 256
    try:
        return manage.max_cluster_dim(dev.backend, prog.function, threads, dynamic_smem_bytes + program.shared_bytes)
    except driver.CudaError:
        return 1



def capture_debug_dot_print(graph, path: str, verbose: bool = True) -> None:
    """Write a captured CUDA graph to ``path`` as Graphviz DOT (``cuGraphDebugDotPrint``; ``verbose``: with each
    node's parameters). A CPU capture is a list of recorded Python launches with no graph to print: an error, as in
    Warp."""
    from .capture import Graph

    if not isinstance(graph, Graph):
        raise TypeError(f"capture_debug_dot_print: graph must be a wp.Graph, got {type(graph).__name__}")
    if graph.graph is None:
        raise RuntimeError(f"Graph debug dot print error: the graph captured on {graph.device} is not a CUDA graph "
                           "(a CPU capture records launches for replay and has no graph nodes to print)")
    manage.graph_dot(graph.graph, os.fspath(path), bool(verbose))


class AllocatorRmm:
    """Routes weft's GPU arrays through RAPIDS Memory Manager (``wp.set_cuda_allocator(wp.utils.AllocatorRmm())``):
    each allocation is an ``rmm.DeviceBuffer`` from the active RMM memory resource, stream-ordered on the device's
    current weft stream, kept until ``deallocate``. Needs the ``rmm`` package (``pip install rmm-cu12``)."""

    def __init__(self):
        try:
            import rmm  # noqa: F401 - optional dependency
        except ImportError as exc:
            raise ImportError("wp.utils.AllocatorRmm needs the 'rmm' package (RAPIDS Memory Manager), which is not "
                              "installed: pip install rmm-cu12 (Linux)") from exc
        self._buffers: dict[int, object] = {}

    @staticmethod
    def _stream():
        from rmm.pylibrmm.stream import Stream as RmmStream

        device = D.get_device()
        if not device.impl.cuda_driver:
            device = get_cuda_device()
        return RmmStream(obj=S.get_stream(device))  # weft's Stream speaks the __cuda_stream__ protocol

    def allocate(self, size_in_bytes: int) -> int:
        if size_in_bytes == 0:
            return 0
        import rmm

        buf = rmm.DeviceBuffer(size=int(size_in_bytes), stream=self._stream())
        self._buffers[int(buf.ptr)] = buf
        return int(buf.ptr)

    def deallocate(self, ptr: int, size_in_bytes: int) -> None:
        if ptr == 0:
            return
        if self._buffers.pop(int(ptr), None) is None:
            raise RuntimeError(f"AllocatorRmm.deallocate: pointer {int(ptr):#x} ({size_in_bytes} bytes) was not "
                               "allocated by this AllocatorRmm (a double free?)")

    def __repr__(self) -> str:
        return f"AllocatorRmm(active_buffers={len(self._buffers)})"
