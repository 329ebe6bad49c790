"""A host-memory stand-in for ``cuda.bindings.driver``, enough to run weft's CUDA runtime logic without a GPU.

"Device" memory is host memory (so tests can check it with NumPy), copies and memsets are ``memmove``/``memset``,
streams and events are counters, graph capture records launches, and ``cuLaunchKernel`` records the grid and the
parameter bytes it was given (read through the ``void**`` array exactly as the driver reads it).
Results follow cuda-bindings' convention: a tuple ``(CUresult, *values)``.
"""

from __future__ import annotations

import ctypes
import enum
import itertools

OK = 0


class CUresult(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1
    CUDA_ERROR_NOT_FOUND = 500


class CUdevice_attribute(enum.IntEnum):
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
    CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
    CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 83


class CUmemPool_attribute(enum.IntEnum):
    CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4
    CU_MEMPOOL_ATTR_USED_MEM_CURRENT = 7
    CU_MEMPOOL_ATTR_USED_MEM_HIGH = 8


class CUstream_flags(enum.IntEnum):
    CU_STREAM_DEFAULT = 0
    CU_STREAM_NON_BLOCKING = 1


class CUevent_flags(enum.IntEnum):
    CU_EVENT_DEFAULT = 0
    CU_EVENT_DISABLE_TIMING = 2
    CU_EVENT_INTERPROCESS = 4


class CUstreamCaptureMode(enum.IntEnum):
    CU_STREAM_CAPTURE_MODE_GLOBAL = 0
    CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1
    CU_STREAM_CAPTURE_MODE_RELAXED = 2


CU_MEMHOSTALLOC_PORTABLE = 1


class cuuint64_t(int):
    pass


class Handle:
    _ids = itertools.count(1)

    def __init__(self, kind: str):
        self.kind = kind
        self.id = next(self._ids)

    def __int__(self) -> int:
        return self.id

    def __repr__(self) -> str:
        return f"<fake {self.kind} {self.id}>"


class FakeDriver:
    """One fake GPU (sm_90) by default."""

    def __init__(self, devices: int = 1, arch: int = 90, mempool: bool = True, error_state: bytes | None = None):
        self.devices = devices
        self.arch = arch
        self.mempool = mempool
        self.allocs: dict[int, ctypes.Array] = {}
        self.used = 0
        self.high = 0
        self.launches: list[dict] = []
        self.capturing: dict[int, list] = {}
        self.calls: list[str] = []
        self.args_size = 0  # bytes of the Args parameter to keep per launch (set by tests)
        self.error_state = ctypes.create_string_buffer(error_state or bytes(488), 488)
        for name, value in vars(type(self)).items():
            if name.startswith("cu") and callable(value):
                setattr(self, name, self._logged(name, getattr(self, name)))
        for cls in (CUresult, CUdevice_attribute, CUmemPool_attribute, CUstream_flags, CUevent_flags,
                    CUstreamCaptureMode, cuuint64_t):
            setattr(self, cls.__name__, cls)
        self.CU_MEMHOSTALLOC_PORTABLE = CU_MEMHOSTALLOC_PORTABLE

    def _logged(self, name, fn):
        def call(*args):
            self.calls.append(name)
            return fn(*args)
        return call

    # ---- init and devices
    def cuInit(self, flags):
        return (CUresult(OK),)

    def cuDriverGetVersion(self):
        return (CUresult(OK), 12080)

    def cuDeviceGetCount(self):
        return (CUresult(OK), self.devices)

    def cuDeviceGet(self, ordinal):
        return (CUresult(OK), ordinal)

    def cuDeviceGetName(self, length, dev):
        return (CUresult(OK), b"Fake GPU %d" % dev + bytes(length - 10))

    def cuDeviceGetAttribute(self, attr, dev):
        values = {CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: self.arch // 10,
                  CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: self.arch % 10,
                  CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: 132,
                  CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: int(self.mempool),
                  CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: 232448}
        return (CUresult(OK), values[attr])

    def cuDeviceTotalMem(self, dev):
        return (CUresult(OK), 1 << 34)

    def cuDevicePrimaryCtxRetain(self, dev):
        return (CUresult(OK), Handle("context"))

    def cuCtxSetCurrent(self, ctx):
        return (CUresult(OK),)

    def cuCtxSynchronize(self):
        return (CUresult(OK),)

    def cuMemGetInfo(self):
        return (CUresult(OK), (1 << 34) - self.used, 1 << 34)

    def cuGetErrorName(self, err):
        return (CUresult(OK), CUresult(err).name.encode())

    def cuGetErrorString(self, err):
        return (CUresult(OK), b"fake error")

    # ---- memory
    def _alloc(self, nbytes):
        buf = ctypes.create_string_buffer(nbytes)
        ptr = ctypes.addressof(buf)
        self.allocs[ptr] = buf
        self.used += nbytes
        self.high = max(self.high, self.used)
        return ptr

    def _release(self, ptr):
        buf = self.allocs.pop(int(ptr))
        self.used -= len(buf)

    def cuDeviceGetDefaultMemPool(self, dev):
        return (CUresult(OK), Handle("pool"))

    def cuMemPoolSetAttribute(self, pool, attr, value):
        return (CUresult(OK),)

    def cuMemPoolGetAttribute(self, pool, attr):
        value = self.used if attr == CUmemPool_attribute.CU_MEMPOOL_ATTR_USED_MEM_CURRENT else self.high
        return (CUresult(OK), cuuint64_t(value))

    def cuMemAllocAsync(self, nbytes, stream):
        return (CUresult(OK), self._alloc(nbytes))

    def cuMemAlloc(self, nbytes):
        return (CUresult(OK), self._alloc(nbytes))

    def cuMemFreeAsync(self, ptr, stream):
        self._release(ptr)
        return (CUresult(OK),)

    def cuMemFree(self, ptr):
        self._release(ptr)
        return (CUresult(OK),)

    def cuMemHostAlloc(self, nbytes, flags):
        return (CUresult(OK), self._alloc(nbytes))

    def cuMemFreeHost(self, ptr):
        self._release(ptr)
        return (CUresult(OK),)

    def _memmove(self, dst, src, n):
        ctypes.memmove(int(dst), int(src), n)
        return (CUresult(OK),)

    def cuMemcpyHtoDAsync(self, dst, src, n, stream):
        return self._memmove(dst, src, n)

    def cuMemcpyDtoHAsync(self, dst, src, n, stream):
        return self._memmove(dst, src, n)

    def cuMemcpyAsync(self, dst, src, n, stream):
        return self._memmove(dst, src, n)

    def cuMemcpyDtoH(self, dst, src, n):
        return self._memmove(dst, src, n)

    def _memset(self, dst, word, count, width):
        data = int(word).to_bytes(width, "little") * count
        ctypes.memmove(int(dst), data, len(data))
        return (CUresult(OK),)

    def cuMemsetD8Async(self, dst, word, count, stream):
        return self._memset(dst, word, count, 1)

    def cuMemsetD16Async(self, dst, word, count, stream):
        return self._memset(dst, word, count, 2)

    def cuMemsetD32Async(self, dst, word, count, stream):
        return self._memset(dst, word, count, 4)

    def _memset_2d(self, dst, pitch, word, width, height, size):
        for row in range(height):
            self._memset(int(dst) + row * pitch, word, width, size)
        return (CUresult(OK),)

    def cuMemsetD2D32Async(self, dst, pitch, word, width, height, stream):
        return self._memset_2d(dst, pitch, word, width, height, 4)

    def cuMemsetD2D16Async(self, dst, pitch, word, width, height, stream):
        return self._memset_2d(dst, pitch, word, width, height, 2)

    def cuMemsetD8(self, dst, word, count):
        return self._memset(dst, word, count, 1)

    # ---- streams, events, graphs
    def cuCtxGetStreamPriorityRange(self):
        return (CUresult(OK), 0, -5)

    def cuStreamCreateWithPriority(self, flags, priority):
        return (CUresult(OK), Handle("stream"))

    def cuStreamDestroy(self, stream):
        return (CUresult(OK),)

    def cuStreamSynchronize(self, stream):
        return (CUresult(OK),)

    def cuEventCreate(self, flags):
        return (CUresult(OK), Handle("event"))

    def cuEventRecord(self, event, stream):
        return (CUresult(OK),)

    def cuStreamWaitEvent(self, stream, event, flags):
        return (CUresult(OK),)

    def cuEventSynchronize(self, event):
        return (CUresult(OK),)

    def cuEventQuery(self, event):
        return (CUresult(OK),)

    def cuEventElapsedTime(self, start, end):
        return (CUresult(OK), 0.25)

    def cuStreamBeginCapture(self, stream, mode):
        self.capturing[int(stream)] = []
        return (CUresult(OK),)

    def cuStreamEndCapture(self, stream):
        graph = Handle("graph")
        graph.launches = self.capturing.pop(int(stream))
        return (CUresult(OK), graph)

    def cuGraphInstantiate(self, graph, flags):
        exe = Handle("graph_exec")
        exe.launches = graph.launches
        return (CUresult(OK), exe)

    def cuGraphLaunch(self, exe, stream):
        self.launches.extend(dict(launch, replayed=True) for launch in exe.launches)
        return (CUresult(OK),)

    def cuGraphExecDestroy(self, exe):
        return (CUresult(OK),)

    def cuGraphDestroy(self, graph):
        return (CUresult(OK),)

    # ---- modules and launches
    def cuModuleLoadData(self, image):
        module = Handle("module")
        module.image = bytes(image)
        return (CUresult(OK), module)

    def cuModuleGetFunction(self, module, name):
        fn = Handle("function")
        fn.name = name
        return (CUresult(OK), fn)

    def cuModuleGetGlobal(self, module, name):
        if name != b"weft_error_storage":
            return (CUresult(CUresult.CUDA_ERROR_NOT_FOUND), None, None)
        return (CUresult(OK), ctypes.addressof(self.error_state), len(self.error_state))

    def cuLaunchKernel(self, fn, gx, gy, gz, bx, by, bz, shmem, stream, params, extra):
        ptrs = (ctypes.c_void_p * 2).from_address(params)
        record = {"function": fn.name, "grid": (gx, gy, gz), "block": (bx, by, bz), "stream": stream,
                  "grid_bytes": ctypes.string_at(ptrs[1], 40), "args": ctypes.string_at(ptrs[0], self.args_size)}
        target = self.capturing.get(int(stream)) if stream is not None and stream != 0 else None
        (target if target is not None else self.launches).append(record)
        return (CUresult(OK),)


def install(monkeypatch, drv):
    """Install ``drv`` as weft's CUDA driver with fresh device, stream, program and capture state (a generator for
    pytest fixtures: yields ``drv``, then frees fake allocations while the fake is still installed and restores the
    device table)."""
    import gc

    import weft as wp
    from weft.cuda import driver, graphs
    from weft.cuda import launch as cuda_launch
    from weft.runtime import cuda_api, sync
    from weft.runtime import device as D
    from weft.runtime import streams as S

    saved = dict(D._devices)
    monkeypatch.setattr(driver, "override", drv)
    monkeypatch.setattr(driver, "_initialised", None)
    monkeypatch.setattr(D, "_cuda_probed", False)
    monkeypatch.setattr(sync, "_streams", {})
    monkeypatch.setattr(S, "_streams", {})
    monkeypatch.setattr(cuda_launch, "_programs", {})
    monkeypatch.setattr(graphs, "_capturing", {})
    monkeypatch.setattr(cuda_api, "_peer_access", {})
    driver._tls.current = None
    drv.device = wp.get_device("cuda:0")
    yield drv
    gc.collect()
    D._devices.clear()
    D._devices.update(saved)
    driver._tls.current = None
