"""Warp's CUDA runtime-management API (weft/runtime/cuda_api.py, weft/cuda/manage.py) against a fake driver.

The fake extends ``fake_driver.FakeDriver`` (device memory is host memory) with the calls the management API makes:
profiler range, managed memory and pointer attributes, peer and memory-pool access, IPC handles, function
attributes and occupancy, capture modes and DOT export. Each test checks what reached the driver and what the
runtime reports back; the CPU behaviour of the same names is in tests/runtime/test_cuda_api_cpu.py.
"""

from __future__ import annotations

import enum
import gc
import json
import types
import typing

import numpy as np
import pytest
from fake_driver import (
    OK,
    CUdevice_attribute,
    CUevent_flags,
    CUresult,
    CUstreamCaptureMode,
    FakeDriver,
    Handle,
    install,
)

import weft as wp
from weft.toolchain import nvrtc

needs_nvrtc = pytest.mark.skipif(not nvrtc.is_available(), reason="NVRTC not installed")


class CUpointer_attribute(enum.IntEnum):
    CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2
    CU_POINTER_ATTRIBUTE_IS_MANAGED = 8
    CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE = 17


class CUmemorytype(enum.IntEnum):
    CU_MEMORYTYPE_HOST = 1
    CU_MEMORYTYPE_DEVICE = 2


class CUmemAccess_flags(enum.IntEnum):
    CU_MEM_ACCESS_FLAGS_PROT_NONE = 0
    CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3


class CUmemLocationType(enum.IntEnum):
    CU_MEM_LOCATION_TYPE_DEVICE = 1


class CUmemAttach_flags(enum.IntEnum):
    CU_MEM_ATTACH_GLOBAL = 1


class CUipcMem_flags(enum.IntEnum):
    CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 1


class CUgraphDebugDot_flags(enum.IntEnum):
    CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE = 1


class CUfunction_attribute(enum.IntEnum):
    CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0
    CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1
    CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES = 2
    CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3
    CU_FUNC_ATTRIBUTE_NUM_REGS = 4
    CU_FUNC_ATTRIBUTE_PTX_VERSION = 5
    CU_FUNC_ATTRIBUTE_BINARY_VERSION = 6
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
    CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 12


class CUlaunchAttributeID(enum.IntEnum):
    CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4


class _Struct:
    """A cuda-bindings struct: attributes set freely."""

    def __init__(self):
        self.value = types.SimpleNamespace(clusterDim=types.SimpleNamespace(x=0, y=0, z=0))


class _Handle64:
    def __init__(self):
        self.reserved = bytes(64)


class ManagementFake(FakeDriver):
    """FakeDriver plus the management calls; ``devices`` GPUs that can all reach each other."""

    FUNC_ATTRS: typing.ClassVar[dict] = {CUfunction_attribute.CU_FUNC_ATTRIBUTE_NUM_REGS: 40,
                                         CUfunction_attribute.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: 16}

    def __init__(self, devices: int = 2, **kwargs):
        super().__init__(devices=devices, **kwargs)
        for name, value in vars(FakeDriver).items():  # log the base class's calls too
            if name.startswith("cu") and callable(value) and name not in vars(type(self)):
                setattr(self, name, self._logged(name, getattr(self, name)))
        for cls in (CUdevice_attribute, CUpointer_attribute, CUmemorytype, CUmemAccess_flags, CUmemLocationType,
                    CUmemAttach_flags, CUipcMem_flags, CUevent_flags, CUstreamCaptureMode, CUgraphDebugDot_flags,
                    CUfunction_attribute, CUlaunchAttributeID):
            setattr(self, cls.__name__, cls)
        self.CUmemLocation = lambda: types.SimpleNamespace(type=None, id=None)
        self.CUmemAccessDesc = lambda: types.SimpleNamespace(location=None, flags=None)
        self.CUipcMemHandle = _Handle64
        self.CUipcEventHandle = _Handle64
        self.CUlaunchConfig = lambda: types.SimpleNamespace()
        self.CUlaunchAttribute = _Struct
        self.managed: set[int] = set()
        self.pooled: set[int] = set()
        self.threshold = 0
        self.peer: set[tuple[int, int]] = set()  # (target context id, peer ordinal) enabled
        self.pool_access: dict[int, int] = {}  # peer ordinal -> flags
        self.capture_modes: list[int] = []
        self.event_flags: list[int] = []
        self.ipc_open: set[int] = set()
        self.current_ordinal = 0
        self.contexts: dict[int, int] = {}  # context handle id -> ordinal

    def cuDeviceGetAttribute(self, attr, dev):
        if attr == CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
            return (CUresult(OK), 1)
        return FakeDriver.cuDeviceGetAttribute(self, attr, dev)

    def cuDevicePrimaryCtxRetain(self, dev):
        ctx = Handle("context")
        self.contexts[ctx.id] = dev
        return (CUresult(OK), ctx)

    def cuCtxSetCurrent(self, ctx):
        self.current_ordinal = self.contexts.get(int(ctx), 0)
        return (CUresult(OK),)

    def cuProfilerStart(self):
        return (CUresult(OK),)

    def cuProfilerStop(self):
        return (CUresult(OK),)

    def cuMemAllocAsync(self, nbytes, stream):
        ptr = self._alloc(nbytes)
        self.pooled.add(ptr)
        return (CUresult(OK), ptr)

    def cuMemFreeAsync(self, ptr, stream):
        self.pooled.discard(int(ptr))
        return FakeDriver.cuMemFreeAsync(self, ptr, stream)

    def cuMemAllocManaged(self, nbytes, flags):
        assert flags == CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL
        ptr = self._alloc(nbytes)
        self.managed.add(ptr)
        return (CUresult(OK), ptr)

    def cuMemFree(self, ptr):
        self.managed.discard(int(ptr))
        return FakeDriver.cuMemFree(self, ptr)

    def _owner(self, ptr):
        return next((p for p, buf in self.allocs.items() if p <= ptr < p + len(buf)), None)

    def cuPointerGetAttribute(self, attr, ptr):
        base = self._owner(int(ptr))
        if base is None:
            return (CUresult(CUresult.CUDA_ERROR_INVALID_VALUE), None)
        if attr == CUpointer_attribute.CU_POINTER_ATTRIBUTE_IS_MANAGED:
            return (CUresult(OK), base in self.managed)
        if attr == CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
            return (CUresult(OK), 7 if base in self.pooled else 0)
        return (CUresult(OK), CUmemorytype.CU_MEMORYTYPE_DEVICE)

    def cuMemPoolGetAttribute(self, pool, attr):
        if attr == self.CUmemPool_attribute.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
            return (CUresult(OK), self.cuuint64_t(self.threshold))
        return FakeDriver.cuMemPoolGetAttribute(self, pool, attr)

    def cuMemPoolSetAttribute(self, pool, attr, value):
        if attr == self.CUmemPool_attribute.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
            self.threshold = int(value)
        return (CUresult(OK),)

    def cuMemPoolGetAccess(self, pool, location):
        return (CUresult(OK), self.pool_access.get(location.id, CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_NONE))

    def cuMemPoolSetAccess(self, pool, descs, count):
        for d in descs[:count]:
            self.pool_access[d.location.id] = d.flags
        return (CUresult(OK),)

    def cuDeviceCanAccessPeer(self, dev, peer):
        return (CUresult(OK), 1)

    def cuCtxEnablePeerAccess(self, ctx, flags):
        self.peer.add((self.contexts[int(ctx)], self.current_ordinal))
        return (CUresult(OK),)

    def cuCtxDisablePeerAccess(self, ctx):
        self.peer.discard((self.contexts[int(ctx)], self.current_ordinal))
        return (CUresult(OK),)

    def cuIpcGetMemHandle(self, ptr):
        h = _Handle64()
        h.reserved = int(ptr).to_bytes(8, "little") + bytes(56)
        return (CUresult(OK), h)

    def cuIpcOpenMemHandle(self, handle, flags):
        ptr = int.from_bytes(handle.reserved[:8], "little")
        self.ipc_open.add(ptr)
        return (CUresult(OK), ptr)

    def cuIpcCloseMemHandle(self, ptr):
        self.ipc_open.discard(int(ptr))
        return (CUresult(OK),)

    def cuEventCreate(self, flags):
        self.event_flags.append(int(flags))
        return FakeDriver.cuEventCreate(self, flags)

    def cuIpcGetEventHandle(self, event):
        h = _Handle64()
        h.reserved = int(event).to_bytes(8, "little") + bytes(56)
        return (CUresult(OK), h)

    def cuIpcOpenEventHandle(self, handle):
        ev = Handle("event")
        ev.opened_from = int.from_bytes(handle.reserved[:8], "little")
        return (CUresult(OK), ev)

    def cuStreamBeginCapture(self, stream, mode):
        self.capture_modes.append(int(mode))
        return FakeDriver.cuStreamBeginCapture(self, stream, mode)

    def cuGraphDebugDotPrint(self, graph, path, flags):
        with open(path.decode(), "w") as f:
            f.write(f"digraph fake {{ // {len(graph.launches)} launches, flags {int(flags)}\n}}\n")
        return (CUresult(OK),)

    def cuFuncGetAttribute(self, attr, fn):
        return (CUresult(OK), self.FUNC_ATTRS.get(attr, 0))

    def cuFuncSetAttribute(self, fn, attr, value):
        return (CUresult(OK),)

    def cuOccupancyMaxPotentialBlockSize(self, fn, b2s, shared, limit):
        return (CUresult(OK), 264, 768)

    def cuOccupancyMaxActiveClusters(self, fn, config):
        size = config.attrs[0].value.clusterDim.x
        return (CUresult(OK), 1 if size <= 8 else 0)


@pytest.fixture
def fake(monkeypatch):
    yield from install(monkeypatch, ManagementFake())


class CountingAllocator:
    """A user allocator over the fake driver's memory, counting its calls."""

    memory_kind = wp.MemoryKind.CUDA_DEVICE

    def __init__(self, drv):
        self.drv = drv
        self.live: dict[int, int] = {}

    def allocate(self, size_in_bytes):
        ptr = self.drv._alloc(size_in_bytes)
        self.live[ptr] = size_in_bytes
        return ptr

    def deallocate(self, ptr, size_in_bytes):
        assert self.live.pop(ptr) == size_in_bytes
        self.drv._release(ptr)


def test_custom_device_allocator(fake):
    dev = fake.device
    alloc = CountingAllocator(fake)
    assert isinstance(alloc, wp.Allocator)
    wp.set_device_allocator(dev, alloc)
    try:
        assert wp.get_device_allocator(dev) is alloc
        a = wp.full(16, 3.0, dtype=float, device=dev)
        assert list(alloc.live.values()) == [64]
        np.testing.assert_array_equal(a.numpy(), np.full(16, 3.0))
        assert a.memory_kind is wp.MemoryKind.CUDA_DEVICE  # the allocator's memory_kind
        del a
        gc.collect()
        assert alloc.live == {}  # handed back through deallocate
    finally:
        wp.set_device_allocator(dev, None)
    assert isinstance(wp.get_device_allocator(dev), wp.Allocator)
    assert wp.get_device_allocator(dev) is not alloc
    with pytest.raises(TypeError, match="Allocator protocol"):
        wp.set_device_allocator(dev, object())


def test_scoped_and_all_device_allocators(fake):
    alloc = CountingAllocator(fake)
    with wp.ScopedAllocator("cuda:1", alloc):
        b = wp.zeros(4, dtype=wp.int32, device="cuda:1")
        c = wp.zeros(4, dtype=wp.int32, device="cuda:0")  # another device: its own allocator
        assert len(alloc.live) == 1
    assert wp.get_device_allocator("cuda:1") is not alloc
    wp.set_cuda_allocator(alloc)
    try:
        assert wp.get_device_allocator("cuda:0") is alloc and wp.get_device_allocator("cuda:1") is alloc
    finally:
        wp.set_cuda_allocator(None)
    del b, c


def test_managed_allocator_memory_kind_and_access(fake):
    with wp.ScopedAllocator(fake.device, wp.CudaManagedAllocator()):
        m = wp.array(np.arange(6, dtype=np.float32), device=fake.device)
    assert fake.managed and m.memory_kind is wp.MemoryKind.CUDA_MANAGED
    assert wp.can_access("cpu", m) and wp.can_access("cuda:1", m)
    plain = wp.zeros(6, dtype=float, device=fake.device)
    assert plain.memory_kind is wp.MemoryKind.CUDA_MEMPOOL
    assert not wp.can_access("cpu", plain) and wp.can_access(fake.device, plain)
    ptr = m.ptr
    del m
    gc.collect()
    assert ptr not in fake.managed  # cuMemFree


@wp.kernel
def _double(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = 2.0 * x[i]


def test_launch_array_access_mode(fake, monkeypatch):
    # the fake's device memory is host memory, so a CPU launch on a managed array runs for real
    with wp.ScopedAllocator(fake.device, wp.CudaManagedAllocator()):
        m = wp.array(np.arange(4, dtype=np.float32), device=fake.device)
    wp.launch(_double, 4, inputs=[m], device="cpu")  # RELAXED (default): the CPU can reach managed memory
    np.testing.assert_array_equal(m.numpy(), [0, 2, 4, 6])
    monkeypatch.setattr(wp.config, "launch_array_access_mode", wp.config.LaunchArrayAccessMode.STRICT)
    with pytest.raises(wp.LaunchError, match="STRICT"):
        wp.launch(_double, 4, inputs=[m], device="cpu")
    monkeypatch.setattr(wp.config, "launch_array_access_mode", wp.config.LaunchArrayAccessMode.CHECKED)
    wp.launch(_double, 4, inputs=[m], device="cpu")
    np.testing.assert_array_equal(m.numpy(), [0, 4, 8, 12])
    pooled = wp.zeros(4, dtype=float, device=fake.device)
    with pytest.raises(wp.LaunchError, match="memory_kind=CUDA_MEMPOOL"):
        wp.launch(_double, 4, inputs=[pooled], device="cpu")  # never: the CPU cannot reach device memory


def test_mempool_enable_and_threshold(fake):
    dev = fake.device
    assert wp.is_mempool_enabled(dev)
    with wp.ScopedMempool(dev, False):
        assert not wp.is_mempool_enabled(dev)
        fake.calls.clear()
        a = wp.zeros(8, dtype=float, device=dev)
        assert "cuMemAlloc" in fake.calls and "cuMemAllocAsync" not in fake.calls
        assert a.memory_kind is wp.MemoryKind.CUDA_DEVICE
        assert isinstance(wp.get_device_allocator(dev), wp.Allocator)
        assert wp.get_device_allocator(dev).memory_kind is wp.MemoryKind.CUDA_DEVICE
    assert wp.is_mempool_enabled(dev)
    assert wp.get_device_allocator(dev).memory_kind is wp.MemoryKind.CUDA_MEMPOOL
    wp.set_mempool_release_threshold(dev, 1 << 20)
    assert wp.get_mempool_release_threshold(dev) == 1 << 20
    wp.set_mempool_release_threshold(dev, 0.25)  # a fraction of the device's memory (the fake has 16 GiB)
    assert wp.get_mempool_release_threshold(dev) == (1 << 34) // 4
    wp.set_mempool_release_threshold(dev, -5)
    assert wp.get_mempool_release_threshold(dev) == 0
    del a


def test_peer_and_mempool_access(fake):
    assert wp.is_peer_access_supported("cuda:0", "cuda:1")
    assert not wp.is_peer_access_enabled("cuda:0", "cuda:1")
    with wp.ScopedMempool("cuda:0", False):
        a = wp.zeros(4, dtype=float, device="cuda:0")
    assert not wp.can_access("cuda:1", a)
    with wp.ScopedPeerAccess("cuda:0", "cuda:1", True):
        assert (0, 1) in fake.peer and wp.is_peer_access_enabled("cuda:0", "cuda:1")
        assert wp.can_access("cuda:1", a)
    assert (0, 1) not in fake.peer and not wp.can_access("cuda:1", a)
    p = wp.zeros(4, dtype=float, device="cuda:0")
    assert wp.is_mempool_access_supported("cuda:0", "cuda:1") and not wp.is_mempool_access_enabled("cuda:0", "cuda:1")
    with wp.ScopedMempoolAccess("cuda:0", "cuda:1", True):
        assert fake.pool_access[1] == CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE
        assert wp.is_mempool_access_enabled("cuda:0", "cuda:1") and wp.can_access("cuda:1", p)
    assert fake.pool_access[1] == CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_NONE
    with pytest.raises(ValueError, match="between CUDA devices"):
        wp.set_peer_access_enabled("cpu", "cuda:0", True)
    with pytest.raises(ValueError, match="between CUDA devices"):
        wp.set_mempool_access_enabled("cuda:0", "cpu", True)


def test_profiler_devices_versions_streams_events(fake):
    fake.calls.clear()
    with wp.ScopedCudaProfiler(fake.device):
        pass
    wp.cuda_profiler_start("cpu")  # no effect on the CPU
    assert fake.calls.count("cuProfilerStart") == 1 and fake.calls.count("cuProfilerStop") == 1
    assert wp.get_cuda_device() is fake.device and wp.get_cuda_device(1) is wp.get_device("cuda:1")
    with wp.ScopedDevice("cuda:1"):
        assert wp.get_cuda_device() is wp.get_device("cuda:1")
    with pytest.raises(wp.DeviceError, match="ordinal 5"):
        wp.get_cuda_device(5)
    assert wp.get_cuda_driver_version() == (12, 8)
    s = wp.Stream(fake.device)
    old = wp.get_stream(fake.device)
    fake.calls.clear()
    wp.set_stream(s, sync=True)  # the stream's device
    assert wp.get_stream(fake.device) is s and "cuStreamWaitEvent" in fake.calls
    wp.set_stream(old, fake.device)
    with pytest.raises(RuntimeError, match="cannot be used on device cuda:1"):
        wp.set_stream(s, "cuda:1")
    e0, e1 = wp.Event(fake.device, enable_timing=True), wp.Event(fake.device, enable_timing=True)
    wp.record_event(e0)
    wp.record_event(e1)
    assert wp.get_event_elapsed_time(e0, e1) == 0.25  # the fake's cuEventElapsedTime
    assert wp.get_event_elapsed_time(e0, e1, synchronize=False) == 0.25


def test_ipc_arrays_and_events(fake):
    with wp.ScopedMempool(fake.device, False):
        a = wp.array(np.arange(5, dtype=np.float32), device=fake.device)
    handle = a.ipc_handle()
    assert isinstance(handle, bytes) and len(handle) == 64
    b = wp.from_ipc_handle(handle, wp.float32, (5,), device=fake.device)
    assert b.ptr == a.ptr and b.ptr in fake.ipc_open
    np.testing.assert_array_equal(b.numpy(), np.arange(5))
    ptr = b.ptr
    del b
    gc.collect()
    assert ptr not in fake.ipc_open  # closed with the array
    with pytest.raises(RuntimeError, match="default allocator"):
        wp.zeros(3, dtype=float, device=fake.device).ipc_handle()  # a pool allocation
    with pytest.raises(RuntimeError, match="views"):
        a[1:].ipc_handle()
    ev = wp.Event(fake.device, interprocess=True)
    wp.record_event(ev)
    assert fake.event_flags[-1] & CUevent_flags.CU_EVENT_INTERPROCESS
    opened = wp.event_from_ipc_handle(ev.ipc_handle(), device=fake.device)
    assert opened._native.opened_from == int(ev._native)
    with pytest.raises(ValueError, match="interprocess"):
        wp.Event(fake.device, enable_timing=True, interprocess=True)
    with pytest.raises(RuntimeError, match="interprocess=True"):
        wp.Event(fake.device).ipc_handle()


def test_capture_mode_graph_and_dot(fake, tmp_path):
    with wp.ScopedCapture(fake.device, capture_mode=wp.CaptureMode.RELAXED) as cap:
        pass
    assert fake.capture_modes[-1] == CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED
    g = cap.graph
    assert isinstance(g, wp.Graph) and g.graph is not None and g.graph_exec is g.native
    wp.capture_begin(fake.device)
    wp.capture_end(fake.device)
    assert fake.capture_modes[-1] == CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL  # Warp's default
    path = tmp_path / "g.dot"
    wp.capture_debug_dot_print(g, str(path), verbose=True)
    assert path.read_text().startswith("digraph") and "flags 1" in path.read_text()


@needs_nvrtc
def test_kernel_queries(fake):
    props = wp.get_cuda_kernel_properties(_double, fake.device)
    assert props == {"register_count": 40, "local_memory_size": 16}
    assert wp.get_suggested_block_size(_double, fake.device) == (768, 264)  # (block size, min grid size)
    assert wp.get_cuda_max_cluster_dim(_double, fake.device) == 8  # the largest size the fake can place
    with pytest.raises(ValueError, match="block_dim"):
        wp.get_cuda_kernel_properties(_double, fake.device, block_dim=0)
    with pytest.raises(TypeError, match="wp.Kernel"):
        wp.get_suggested_block_size(len, fake.device)


def test_allocator_rmm_without_and_with_rmm(fake, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "rmm", None)  # not installed
    with pytest.raises(ImportError, match="rmm"):
        wp.utils.AllocatorRmm()
    seen_streams = []

    class DeviceBuffer:  # rmm.DeviceBuffer over the fake driver's memory
        def __init__(self, size, stream):
            seen_streams.append(stream.obj.__cuda_stream__())
            self.ptr = fake._alloc(size)

        def __del__(self):
            fake._release(self.ptr)

    class Stream:
        def __init__(self, obj):
            self.obj = obj

    rmm = types.ModuleType("rmm")
    rmm.DeviceBuffer = DeviceBuffer
    stream_mod = types.ModuleType("rmm.pylibrmm.stream")
    stream_mod.Stream = Stream
    monkeypatch.setitem(sys.modules, "rmm", rmm)
    monkeypatch.setitem(sys.modules, "rmm.pylibrmm", types.ModuleType("rmm.pylibrmm"))
    monkeypatch.setitem(sys.modules, "rmm.pylibrmm.stream", stream_mod)
    alloc = wp.utils.AllocatorRmm()
    wp.set_cuda_allocator(alloc)
    try:
        a = wp.full(8, 1.5, dtype=float, device=fake.device)
        assert repr(alloc) == "AllocatorRmm(active_buffers=1)"
        assert seen_streams == [(0, wp.get_stream(fake.device).cuda_stream)]  # stream-ordered on weft's stream
        np.testing.assert_array_equal(a.numpy(), np.full(8, 1.5))
        ptr = a.ptr
        del a
        gc.collect()
        assert repr(alloc) == "AllocatorRmm(active_buffers=0)" and ptr not in fake.allocs
        with pytest.raises(RuntimeError, match="double free"):
            alloc.deallocate(ptr, 32)
    finally:
        wp.set_cuda_allocator(None)


@needs_nvrtc
def test_load_aot_module_on_gpu(fake, tmp_path, monkeypatch):
    import importlib.util
    import sys

    path = tmp_path / "weft_aot_fake_mod.py"
    path.write_text("import weft as wp\n\n\n@wp.kernel\ndef twice(x: wp.array(dtype=float)):\n"
                    "    i = wp.tid()\n    x[i] = 2.0 * x[i]\n")
    spec = importlib.util.spec_from_file_location("weft_aot_fake_mod", path)
    mod = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "weft_aot_fake_mod", mod)
    spec.loader.exec_module(mod)
    out = tmp_path / "aot"
    (manifest,) = wp.compile_aot_module(mod, arch=90, module_dir=out)  # NVRTC, for the fake GPU's sm_90
    cubin = (out / json.loads(manifest.read_text())["kernels"][0]["file"]).read_bytes()

    def no_nvrtc(*args, **kwargs):
        raise AssertionError("compiled with NVRTC instead of loading the AOT binary")
    from weft.toolchain import nvrtc as nvrtc_mod

    monkeypatch.setattr(nvrtc_mod, "build_cuda", no_nvrtc)
    fake.calls.clear()
    wp.load_aot_module(mod, device=fake.device, module_dir=out)
    assert fake.calls.count("cuModuleLoadData") == 1
    x = wp.zeros(4, dtype=float, device=fake.device)
    wp.launch(mod.twice, 4, inputs=[x], device=fake.device)  # the loaded module: no compile
    assert fake.launches[-1]["function"] == b"weft_fwd"
    assert [i for i in fake.calls if i == "cuModuleLoadData"] == ["cuModuleLoadData"]
    assert cubin[:4] == b"\x7fELF"
    with pytest.raises(FileNotFoundError, match="compute_75"):
        wp.load_aot_module(mod, device=fake.device, arch=75, module_dir=out)


def test_gpu_device_facts(fake):
    d = fake.device
    assert d.is_mempool_supported and d.is_mempool_enabled and d.is_managed_memory_supported and d.is_uva
    assert d.is_ipc_supported  # Linux
    assert d.total_memory == 1 << 34 and d.free_memory == (1 << 34) - fake.used
    with wp.ScopedMempool(d, False):
        assert not d.is_mempool_enabled
