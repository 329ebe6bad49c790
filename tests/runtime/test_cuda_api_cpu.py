"""Warp's CUDA runtime-management names on the CPU device: what Warp 1.19 does there (checked against it), no GPU.

Queries answer what the CPU is, turning a CUDA feature off is a no-op, turning it on (or asking for a CUDA-only
object) raises the error Warp raises. The GPU side of the same names runs against a fake driver in
tests/cuda/test_cuda_management.py.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import weft as wp
from weft.runtime import device as D
from weft.toolchain import nvrtc

no_gpu = pytest.mark.skipif(bool(D.get_cuda_devices()), reason="checks the behaviour without a GPU")


@wp.kernel
def _inc(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] + 1.0


def test_memory_kind_and_can_access():
    a = wp.zeros(3, dtype=float, device="cpu")
    assert a.memory_kind is wp.MemoryKind.HOST and a[1:].memory_kind is wp.MemoryKind.HOST
    assert [m.value for m in wp.MemoryKind] == [0, 1, 2, 3, 4, 5]  # Warp's numbers
    assert wp.can_access("cpu", a)
    idx = wp.indexedarray(a, [wp.array([0, 2], dtype=wp.int32, device="cpu")])
    assert wp.can_access("cpu", idx)
    with pytest.raises(TypeError, match="concrete Warp arrays"):
        wp.can_access("cpu", np.zeros(3))
    with pytest.raises(TypeError, match="concrete Warp arrays"):
        wp.can_access("cpu", wp.array(dtype=float))  # an annotation
    with pytest.raises(RuntimeError, match="IPC requires a CUDA device"):
        a.ipc_handle()


def test_cpu_allocator_and_custom_allocators_refused():
    cpu_alloc = wp.get_device_allocator("cpu")
    assert isinstance(cpu_alloc, wp.Allocator) and cpu_alloc.memory_kind is wp.MemoryKind.HOST
    ptr = cpu_alloc.allocate(256)
    assert ptr % 64 == 0
    view = np.ctypeslib.as_array((np.ctypeslib.ctypes.c_uint8 * 256).from_address(ptr))
    view[:] = 7  # the memory is usable
    assert int(view.sum()) == 7 * 256
    cpu_alloc.deallocate(ptr, 256)
    with pytest.raises(RuntimeError, match="only supported on CUDA devices"):
        wp.set_device_allocator("cpu", None)
    with pytest.raises(RuntimeError, match="only supported on CUDA devices"):
        wp.ScopedAllocator("cpu", wp.CudaManagedAllocator())
    assert isinstance(wp.CudaManagedAllocator(), wp.Allocator)
    assert wp.CudaManagedAllocator.memory_kind is wp.MemoryKind.CUDA_MANAGED


@no_gpu
def test_without_gpu():
    with pytest.raises(RuntimeError, match="no CUDA devices"):
        wp.set_cuda_allocator(None)
    with pytest.raises(wp.DeviceError, match="no CUDA device"):
        wp.get_cuda_device()
    assert wp.get_cuda_driver_version() is None
    with pytest.raises(RuntimeError, match="requires a current CUDA device"):
        wp.CudaManagedAllocator().allocate(16)


def test_toolkit_version_is_nvrtc():
    expected = tuple(nvrtc.version()) if nvrtc.is_available() else None
    assert wp.get_cuda_toolkit_version() == expected


def test_mempool_and_peer_functions_on_cpu():
    wp.set_mempool_enabled("cpu", False)  # no-op, as in Warp
    assert not wp.is_mempool_enabled("cpu") and not wp.is_mempool_supported("cpu")
    with pytest.raises(ValueError, match="only supported on CUDA devices"):
        wp.set_mempool_enabled("cpu", True)
    with pytest.raises(ValueError, match="only supported on CUDA devices"):
        wp.set_mempool_release_threshold("cpu", 0.5)
    with pytest.raises(ValueError, match="only supported on CUDA devices"):
        wp.get_mempool_release_threshold("cpu")
    with wp.ScopedMempool("cpu", False):
        assert not wp.is_mempool_enabled("cpu")
    with pytest.raises(ValueError, match="only supported on CUDA devices"), wp.ScopedMempool("cpu", True):
        pass
    wp.set_peer_access_enabled("cpu", "cpu", False)
    wp.set_mempool_access_enabled("cpu", "cpu", False)
    with pytest.raises(ValueError, match="Peer access is only supported between CUDA devices"):
        wp.set_peer_access_enabled("cpu", "cpu", True)
    with pytest.raises(ValueError, match="Memory pool access is only supported between CUDA devices"):
        wp.set_mempool_access_enabled("cpu", "cpu", True)
    with wp.ScopedPeerAccess("cpu", "cpu", False), wp.ScopedMempoolAccess("cpu", "cpu", False):
        assert not wp.is_peer_access_enabled("cpu", "cpu") and not wp.is_mempool_access_enabled("cpu", "cpu")
    assert not wp.is_peer_access_supported("cpu", "cpu") and not wp.is_mempool_access_supported("cpu", "cpu")


def test_profiler_stream_event_ipc_on_cpu():
    wp.cuda_profiler_start("cpu")  # no effect on the CPU (Warp: the same)
    wp.cuda_profiler_stop("cpu")
    with wp.ScopedCudaProfiler("cpu") as prof:
        assert prof.device == "cpu"
    with pytest.raises(RuntimeError, match="Device cpu is not a CUDA device"):
        wp.set_stream(wp.get_stream("cpu"), "cpu")
    with pytest.raises(TypeError, match="wp.Stream"):
        wp.set_stream(None)
    with pytest.raises(TypeError, match="start_event must be a wp.Event"):
        wp.get_event_elapsed_time(None, None)
    e0 = wp.record_event(wp.Event("cpu", enable_timing=True))
    e1 = wp.record_event(wp.Event("cpu", enable_timing=True))
    assert wp.get_event_elapsed_time(e0, e1) == e0.elapsed_time(e1) >= 0.0
    with pytest.raises(RuntimeError, match="IPC is not supported on device cpu"):
        wp.from_ipc_handle(bytes(64), wp.float32, (4,), device="cpu")
    with pytest.raises(RuntimeError, match="IPC is not supported on device cpu"):
        wp.event_from_ipc_handle(bytes(64), device="cpu")
    with pytest.raises(RuntimeError, match="does not support IPC"):
        wp.Event("cpu").ipc_handle()


def test_kernel_queries_on_cpu():
    assert wp.get_suggested_block_size(_inc, "cpu") == (1, 1)
    assert wp.get_cuda_max_cluster_dim(_inc, "cpu") == 1
    with pytest.raises(RuntimeError, match="requires a CUDA device, got 'cpu'"):
        wp.get_cuda_kernel_properties(_inc, "cpu")
    with pytest.raises(TypeError, match="expected a wp.Kernel"):
        wp.get_suggested_block_size(print, "cpu")


def test_clear_lto_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(tmp_path))
    (tmp_path / "lto").mkdir()
    (tmp_path / "lto" / "gemm.ltoir").write_bytes(b"x")
    (tmp_path / "keep").write_bytes(b"y")
    wp.clear_lto_cache()
    assert not (tmp_path / "lto").exists() and (tmp_path / "keep").exists()
    wp.clear_lto_cache()  # nothing there: no error


def test_capture_mode_and_graph_on_cpu(tmp_path):
    a = wp.zeros(4, dtype=float, device="cpu")
    with wp.ScopedCapture("cpu", capture_mode=wp.CaptureMode.GLOBAL) as cap:
        wp.launch(_inc, 4, inputs=[a], device="cpu")
    g = cap.graph
    assert isinstance(g, wp.Graph) and g.capture_mode is wp.CaptureMode.GLOBAL and g.graph is None
    wp.capture_launch(g)
    wp.capture_launch(g)
    np.testing.assert_array_equal(a.numpy(), [2, 2, 2, 2])
    g2 = wp.capture_begin("cpu", capture_mode=wp.CaptureMode.RELAXED)
    assert wp.capture_end("cpu") is g2 and g2.capture_mode is wp.CaptureMode.RELAXED
    assert [m.value for m in wp.CaptureMode] == [0, 1, 2]
    with pytest.raises(ValueError, match="capture_mode"):
        wp.ScopedCapture("cpu", capture_mode=7)
    with pytest.raises(RuntimeError, match="not a CUDA graph"):
        wp.capture_debug_dot_print(g, str(tmp_path / "g.dot"))
    with pytest.raises(TypeError, match="wp.Graph"):
        wp.capture_debug_dot_print("graph", str(tmp_path / "g.dot"))


def test_config_options(monkeypatch):
    cfg = wp.config
    assert cfg.version == "1.19.0" and cfg.launch_array_access_mode is cfg.LaunchArrayAccessMode.RELAXED
    with pytest.raises(ValueError, match="LaunchArrayAccessMode"):
        cfg.launch_array_access_mode = 2
    saved = (cfg.cpu_compile_flags, cfg.cpu_compiler_flags, cfg.precompiled_header)
    try:
        with pytest.warns(UserWarning, match="-mllvm=-inline-threshold=9000"):
            cfg.cpu_compiler_flags = "-O2 -fno-slp-vectorize -mllvm=-inline-threshold=9000"
        assert cfg.cpu_compile_flags == ("-O2", "-fno-slp-vectorize")
        with pytest.raises(TypeError, match="cpu_compiler_flags"):
            cfg.cpu_compiler_flags = 3
        cfg.use_precompiled_headers = False
        assert cfg.precompiled_header is False
        cfg.precompiled_header = True
        assert cfg.use_precompiled_headers is True
    finally:
        cfg.cpu_compile_flags, cfg.cpu_compiler_flags, cfg.precompiled_header = saved
        cfg.use_precompiled_headers = saved[2]
    for name, bad in (("cuda_output", "sass"), ("cuda_arch_suffix", "b"), ("ptx_target_arch", -1)):
        with pytest.raises(ValueError, match=name):
            setattr(cfg, name, bad)
    for name, value in (("llvm_cuda", True), ("enable_mathdx_gemm", False),
                        ("default_grid_stride", False), ("legacy_cpu_linker", True)):
        old = getattr(cfg, name)
        with pytest.warns(UserWarning, match=f"{name} = {value!r} has no effect in weft"):
            setattr(cfg, name, value)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            setattr(cfg, name, old)  # back to the default: no warning
    monkeypatch.setattr(cfg, "enable_vector_component_overwrites", True)


def test_nvrtc_options_from_config(monkeypatch):
    from weft.cuda import launch as cuda_launch

    if not nvrtc.is_available():
        pytest.skip("NVRTC not installed")
    base = cuda_launch.nvrtc_options(90, False, "k")
    assert base.output == "cubin" and "--gpu-architecture=sm_90" in base.flags() and "-lineinfo" not in base.flags()
    monkeypatch.setattr(wp.config, "cuda_output", "ptx")
    monkeypatch.setattr(wp.config, "ptx_target_arch", 75)
    monkeypatch.setattr(wp.config, "lineinfo", True)
    monkeypatch.setattr(wp.config, "cuda_arch_suffix", "a")
    opts = cuda_launch.nvrtc_options(90, False, "k")
    assert "--gpu-architecture=compute_75a" in opts.flags() and "-lineinfo" in opts.flags()
    assert nvrtc.cuda_key("x", opts) != nvrtc.cuda_key("x", base)  # the options are part of the cache key


def test_line_directives_option(monkeypatch):
    from weft import pipeline
    from weft.types.mapping import to_ir

    @wp.kernel
    def k(x: wp.array(dtype=float)):
        x[0] = 1.0

    fn = pipeline.lower(k.source, {"x": to_ir(wp.array(dtype=float))}, "k", None).fn
    monkeypatch.setattr(wp.config, "mode", "debug")
    with_lines = pipeline.render_module(fn, "k", True, pipeline.Target.CPU, pipeline.Direction.FORWARD).source
    monkeypatch.setattr(wp.config, "line_directives", False)
    without = pipeline.render_module(fn, "k", True, pipeline.Target.CPU, pipeline.Direction.FORWARD).source
    assert "#line" in with_lines and "#line" not in without


def test_cpu_device_facts():
    d = wp.get_device("cpu")
    # Warp 1.19 on the CPU: no pool, no IPC, no managed memory, no UVA; memory from psutil (0 without it)
    assert (d.is_mempool_supported, d.is_mempool_enabled, d.is_ipc_supported, d.is_managed_memory_supported,
            d.is_uva) == (False, False, False, False, False)
    try:
        import psutil
    except ImportError:
        assert d.total_memory == 0 and d.free_memory == 0
    else:
        assert d.total_memory == psutil.virtual_memory().total and 0 < d.free_memory <= d.total_memory


def test_stream_protocol():
    assert wp.get_stream("cpu").__cuda_stream__() == (0, 0)  # the CPU's implicit stream has no CUDA handle
