"""Driver-level management of CUDA devices behind Warp's runtime-management API (``weft.runtime.cuda_api``).

The profiler range, memory-pool release threshold and peer access, peer access between contexts, managed memory,
IPC handles of allocations and events, pointer memory kinds, compiled-function attributes and occupancy queries.
Every function takes the device's :class:`~weft.cuda.driver.Context` (``Device.backend``) and makes it current
first; failures raise :class:`~weft.cuda.driver.CudaError` naming the call.
"""

from __future__ import annotations

from .driver import api, check

#: Warp's memory kinds, by number (``wp.MemoryKind``; the runtime's enum uses the same values)
KIND_UNKNOWN, KIND_HOST, KIND_PINNED, KIND_CUDA_DEVICE, KIND_CUDA_MEMPOOL, KIND_CUDA_MANAGED = range(6)


# ---------------------------------------------------------------------- profiler
def profiler_start(ctx) -> None:
    """Start an external profiler's capture range (``cuProfilerStart``) in ``ctx``."""
    ctx.make_current()
    check(api().cuProfilerStart(), "cuProfilerStart")


def profiler_stop(ctx) -> None:
    """Stop an external profiler's capture range (``cuProfilerStop``) in ``ctx``."""
    ctx.make_current()
    check(api().cuProfilerStop(), "cuProfilerStop")


# ---------------------------------------------------------------------- memory pool
def release_threshold(ctx) -> int:
    """The release threshold of ``ctx``'s default memory pool, in bytes."""
    drv = api()
    value = check(drv.cuMemPoolGetAttribute(ctx.pool, drv.CUmemPool_attribute.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD),
                  "cuMemPoolGetAttribute")
    return int(value)


def set_release_threshold(ctx, nbytes: int) -> None:
    """Keep up to ``nbytes`` of freed memory in ``ctx``'s default pool before returning memory to the driver."""
    drv = api()
    check(drv.cuMemPoolSetAttribute(ctx.pool, drv.CUmemPool_attribute.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                                    drv.cuuint64_t(int(nbytes))), "cuMemPoolSetAttribute")


def _location(ctx):
    drv = api()
    loc = drv.CUmemLocation()
    loc.type = drv.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    loc.id = ctx.ordinal
    return loc


def mempool_access_enabled(target, peer) -> bool:
    """Whether ``peer``'s kernels may read and write allocations of ``target``'s default pool."""
    drv = api()
    flags = check(drv.cuMemPoolGetAccess(target.pool, _location(peer)), "cuMemPoolGetAccess")
    return int(flags) == int(drv.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE)


def set_mempool_access(target, peer, enable: bool) -> None:
    """Grant (or revoke) ``peer`` read-write access to every allocation of ``target``'s default pool."""
    drv = api()
    desc = drv.CUmemAccessDesc()
    desc.location = _location(peer)
    desc.flags = (drv.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE if enable else
                  drv.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_NONE)
    check(drv.cuMemPoolSetAccess(target.pool, [desc], 1), "cuMemPoolSetAccess")


# ---------------------------------------------------------------------- peer access
_PEER_ACCESS_ALREADY_ENABLED, _PEER_ACCESS_NOT_ENABLED = 704, 705  # CUresult codes: the state asked for holds already


def peer_supported(target, peer) -> bool:
    """Whether ``peer`` can map ``target``'s memory (``cuDeviceCanAccessPeer``); a context always reaches its own."""
    if target.ordinal == peer.ordinal:
        return True
    return bool(check(api().cuDeviceCanAccessPeer(peer.handle, target.handle), "cuDeviceCanAccessPeer"))


def set_peer_access(target, peer, enable: bool) -> None:
    """Let kernels running in ``peer``'s context access ``target``'s ordinary allocations (or stop them)."""
    if target.ordinal == peer.ordinal:
        return
    drv = api()
    peer.make_current()
    if enable:
        result = drv.cuCtxEnablePeerAccess(target.context, 0)
        benign = _PEER_ACCESS_ALREADY_ENABLED
    else:
        result = drv.cuCtxDisablePeerAccess(target.context)
        benign = _PEER_ACCESS_NOT_ENABLED
    if int(result[0]) not in (0, benign):
        check(result, "cuCtxEnablePeerAccess" if enable else "cuCtxDisablePeerAccess")


# ---------------------------------------------------------------------- managed memory, pointer kinds
def alloc_managed(ctx, nbytes: int) -> int:
    """``nbytes`` of managed (unified) memory, reachable from the host and every GPU (``cuMemAllocManaged``)."""
    drv = api()
    ctx.make_current()
    return int(check(drv.cuMemAllocManaged(int(nbytes), drv.CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL.value),
                     f"cuMemAllocManaged ({nbytes} bytes)"))


def free(ctx, ptr: int) -> None:
    """``cuMemFree`` of an ordinary or managed allocation."""
    ctx.make_current()
    check(api().cuMemFree(int(ptr)), "cuMemFree")


def managed_supported(ctx) -> bool:
    return bool(ctx._attr(api().CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY))


def free_memory(ctx) -> int:
    """Bytes of device memory free now (``cuMemGetInfo``)."""
    ctx.make_current()
    free, _total = check(api().cuMemGetInfo(), "cuMemGetInfo")
    return int(free)


def pointer_kind(ctx, ptr: int) -> int:
    """The memory kind (``KIND_*``) of the allocation holding device address ``ptr``, as the driver reports it."""
    if not ptr:
        return KIND_UNKNOWN
    drv = api()
    ctx.make_current()
    attr = drv.CUpointer_attribute
    err, managed = drv.cuPointerGetAttribute(attr.CU_POINTER_ATTRIBUTE_IS_MANAGED, int(ptr))
    if int(err) != 0:
        return KIND_UNKNOWN
    if managed:
        return KIND_CUDA_MANAGED
    err, pool = drv.cuPointerGetAttribute(attr.CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, int(ptr))
    if int(err) == 0 and pool:
        return KIND_CUDA_MEMPOOL
    err, mtype = drv.cuPointerGetAttribute(attr.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, int(ptr))
    if int(err) != 0:
        return KIND_UNKNOWN
    if int(mtype) == int(drv.CUmemorytype.CU_MEMORYTYPE_HOST):
        return KIND_PINNED
    return KIND_CUDA_DEVICE


# ---------------------------------------------------------------------- IPC
def ipc_supported(ctx) -> bool:
    """Whether allocations and events of ``ctx`` can be shared with other processes (Linux, not integrated GPUs)."""
    import sys

    return sys.platform.startswith("linux")


def ipc_mem_handle(ctx, ptr: int) -> bytes:
    """The 64-byte IPC handle of the allocation holding ``ptr`` (``cuIpcGetMemHandle``)."""
    ctx.make_current()
    handle = check(api().cuIpcGetMemHandle(int(ptr)), "cuIpcGetMemHandle")
    return bytes(handle.reserved)


def ipc_open_mem(ctx, handle: bytes) -> int:
    """Map another process's allocation into ``ctx`` (``cuIpcOpenMemHandle``); the device address."""
    drv = api()
    ctx.make_current()
    h = drv.CUipcMemHandle()
    h.reserved = bytes(handle)
    flags = drv.CUipcMem_flags.CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS.value
    return int(check(drv.cuIpcOpenMemHandle(h, flags), "cuIpcOpenMemHandle"))


def ipc_close_mem(ctx, ptr: int) -> None:
    try:
        ctx.make_current()
        api().cuIpcCloseMemHandle(int(ptr))
    except Exception:  # noqa: BLE001, S110 - called from a deleter: never raise (e.g. at interpreter shutdown)
        pass


def ipc_event_handle(ctx, event) -> bytes:
    """The 64-byte IPC handle of an interprocess event (``cuIpcGetEventHandle``)."""
    ctx.make_current()
    handle = check(api().cuIpcGetEventHandle(event), "cuIpcGetEventHandle")
    return bytes(handle.reserved)


def ipc_open_event(ctx, handle: bytes):
    """Open another process's interprocess event in ``ctx`` (``cuIpcOpenEventHandle``): a ``CUevent``."""
    drv = api()
    ctx.make_current()
    h = drv.CUipcEventHandle()
    h.reserved = bytes(handle)
    return check(drv.cuIpcOpenEventHandle(h), "cuIpcOpenEventHandle")


# ---------------------------------------------------------------------- compiled functions
#: Warp's names for the function attributes ``get_cuda_kernel_properties`` reports
FUNCTION_ATTRIBUTES = {
    "max_threads_per_block": "CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK",
    "shared_size_bytes": "CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES",
    "const_size_bytes": "CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES",
    "local_size_bytes": "CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES",
    "num_regs": "CU_FUNC_ATTRIBUTE_NUM_REGS",
    "ptx_version": "CU_FUNC_ATTRIBUTE_PTX_VERSION",
    "binary_version": "CU_FUNC_ATTRIBUTE_BINARY_VERSION",
    "max_dynamic_shared_size_bytes": "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES",
}


def function_attributes(ctx, function) -> dict[str, int]:
    """The driver's attributes of a loaded function (``cuFuncGetAttribute``), by :data:`FUNCTION_ATTRIBUTES` name."""
    drv = api()
    ctx.make_current()
    return {name: int(check(drv.cuFuncGetAttribute(getattr(drv.CUfunction_attribute, which), function),
                            "cuFuncGetAttribute"))
            for name, which in FUNCTION_ATTRIBUTES.items()}


def suggested_block_size(ctx, function, shared_bytes: int = 0) -> tuple[int, int]:
    """``(min_grid_size, block_size)`` reaching the highest occupancy (``cuOccupancyMaxPotentialBlockSize``)."""
    ctx.make_current()
    grid, block = check(api().cuOccupancyMaxPotentialBlockSize(function, None, int(shared_bytes), 0),
                        "cuOccupancyMaxPotentialBlockSize")
    return int(grid), int(block)


def max_cluster_dim(ctx, function, block_dim: int, shared_bytes: int = 0) -> int:
    """The largest 1-D cluster size (16 down to 2) the driver can place for ``function``; 1 when none or on error."""
    drv = api()
    ctx.make_current()
    allowed = drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED
    drv.cuFuncSetAttribute(function, allowed, 1)  # sizes above the portable 8 need the opt-in; ignored if refused
    for size in range(16, 1, -1):
        config = drv.CUlaunchConfig()
        config.gridDimX, config.gridDimY, config.gridDimZ = size, 1, 1
        config.blockDimX, config.blockDimY, config.blockDimZ = int(block_dim), 1, 1
        config.sharedMemBytes = int(shared_bytes)
        attr = drv.CUlaunchAttribute()
        attr.id = drv.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z = size, 1, 1
        config.attrs = [attr]
        config.numAttrs = 1
        err, count = drv.cuOccupancyMaxActiveClusters(function, config)
        if int(err) == 0 and int(count) > 0:
            return size
    return 1


def graph_dot(cu_graph, path: str, verbose: bool) -> None:
    """Write a captured graph as Graphviz DOT (``cuGraphDebugDotPrint``)."""
    drv = api()
    flags = drv.CUgraphDebugDot_flags.CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE.value if verbose else 0
    check(drv.cuGraphDebugDotPrint(cu_graph, path.encode(), flags), "cuGraphDebugDotPrint")
