"""The CUDA device backend (``weft.runtime.cuda_backend.CudaBackend``) method by method, against the fake driver.

test_fake_driver.py drives the CUDA runtime through the public API; these tests call the backend protocol
(``runtime.backends.DeviceBackend``) directly and check what reaches the driver: allocations and frees, copies in
each direction with offsets, fills, gradient accumulation, launch arguments (grid, block, stream, ``max_blocks``),
streams, events, synchronisation and graph capture. A regression in the CUDA backend fails here without a GPU.
"""

from __future__ import annotations

import gc
import inspect

import numpy as np
import pytest
from cuda_corpus import k_saxpy
from test_fake_driver import fake  # noqa: F401 - the fake-driver fixture

import weft as wp
from weft.runtime.backends import CpuBackend, DeviceBackend
from weft.runtime.capture import Graph
from weft.toolchain import nvrtc

needs_nvrtc = pytest.mark.skipif(not nvrtc.is_available(), reason="NVRTC not installed")


def _protocol_members():
    methods = {n for n, v in vars(DeviceBackend).items() if inspect.isfunction(v) and not n.startswith("_")}
    return methods, set(DeviceBackend.__annotations__)


def test_capabilities_and_protocol(fake):  # noqa: F811
    from weft.runtime.cuda_backend import CudaBackend

    impl = fake.device.impl
    assert isinstance(impl, CudaBackend)
    methods, flags = _protocol_members()
    assert {"alloc", "copy", "launch", "capture_begin", "pool_used_high"} <= methods
    for cls in (CudaBackend, CpuBackend):
        missing = {m for m in methods if not callable(getattr(cls, m, None))} | {f for f in flags if not hasattr(cls, f)}
        assert not missing, (cls, missing)
        for m in methods:  # same parameters as the protocol
            assert list(inspect.signature(getattr(cls, m)).parameters) == \
                list(inspect.signature(getattr(DeviceBackend, m)).parameters), (cls, m)
    cpu = wp.get_device("cpu").impl
    assert (impl.host_memory, impl.synchronous, impl.capture_by_replay, impl.fast_launch, impl.simt) == \
        (False, False, False, False, True)
    assert (cpu.host_memory, cpu.synchronous, cpu.capture_by_replay, cpu.fast_launch, cpu.simt) == \
        (True, True, True, True, False)
    assert (impl.dlpack_device, cpu.dlpack_device) == (2, 1)  # kDLCUDA, kDLCPU


def test_alloc_free_and_pool_counters(fake):  # noqa: F811
    dev, impl = fake.device, fake.device.impl
    base = impl.pool_used_current(dev)
    buf = impl.alloc(dev, 96, False)
    assert buf.ptr in fake.allocs and len(fake.allocs[buf.ptr]) == 96
    assert impl.pool_used_current(dev) == base + 96 and impl.pool_used_high(dev) >= base + 96
    assert fake.calls.count("cuMemAllocAsync") >= 1
    ptr = buf.ptr
    del buf
    gc.collect()
    assert ptr not in fake.allocs and impl.pool_used_current(dev) == base  # freed with the last reference
    empty = impl.alloc(dev, 0, False)
    assert empty.ptr == 0 and impl.pool_used_current(dev) == base  # nothing reaches the driver


def test_upload_to_host_and_copies(fake):  # noqa: F811
    dev, impl = fake.device, fake.device.impl
    a = wp.empty(8, dtype=float, device=dev)
    impl.upload(a, np.arange(8, dtype=np.float32))
    assert "cuMemcpyHtoDAsync" in fake.calls
    np.testing.assert_array_equal(impl.to_host(a), np.arange(8))
    assert "cuMemcpyDtoHAsync" in fake.calls or "cuMemcpyDtoH" in fake.calls
    b = wp.zeros(8, dtype=float, device=dev)
    fake.calls.clear()
    impl.copy(b, a, 2, 3, 4)  # device to device: b[2:6] = a[3:7]
    assert fake.calls == ["cuMemcpyAsync"]
    np.testing.assert_array_equal(impl.to_host(b), [0, 0, 3, 4, 5, 6, 0, 0])
    host = wp.zeros(8, dtype=float, device="cpu")
    impl.copy(host, b, 0, 0, 0)  # count 0: everything, to the host
    np.testing.assert_array_equal(host.numpy(), [0, 0, 3, 4, 5, 6, 0, 0])
    c = wp.zeros(8, dtype=float, device=dev)
    impl.copy(c, wp.array(np.full(8, 7.0, np.float32), device="cpu"), 1, 0, 2)  # from the host, with an offset
    np.testing.assert_array_equal(impl.to_host(c), [0, 7, 7, 0, 0, 0, 0, 0])


def test_fill_is_pitched_memsets(fake):  # noqa: F811
    impl = fake.device.impl
    a = wp.empty(6, dtype=wp.vec2, device=fake.device)
    fake.calls.clear()
    impl.fill(a, wp.vec2(1.5, -2.0))
    assert fake.calls == ["cuMemsetD2D32Async"] * 2  # one pitched memset per 32-bit word of the element
    np.testing.assert_array_equal(impl.to_host(a), np.tile([1.5, -2.0], (6, 1)))


def test_accumulate_strided_goes_through_the_host(fake):  # noqa: F811
    impl = fake.device.impl
    dst = wp.array(np.arange(12, dtype=np.float32).reshape(3, 4), device=fake.device)
    src = wp.array(np.ones((4, 3), np.float32), device=fake.device)
    impl.accumulate(dst.transpose(), src)  # strided destination: no kernel, read-add-write
    assert not fake.launches
    np.testing.assert_array_equal(impl.to_host(dst), np.arange(12).reshape(3, 4) + 1.0)
    impl.accumulate(dst[:0], src[:0])  # empty: nothing happens
    assert not fake.launches


@needs_nvrtc
def test_accumulate_contiguous_launches_one_kernel(fake):  # noqa: F811
    impl = fake.device.impl
    dst = wp.zeros(300, device=fake.device)
    src = wp.array(np.ones(300, np.float32), device="cpu")  # another device: brought to dst's first
    impl.accumulate(dst, src)
    assert len(fake.launches) == 1 and fake.launches[0]["grid"] == (2, 1, 1)  # 300 threads in 256-thread blocks


@needs_nvrtc
def test_launch_arguments_streams_and_max_blocks(fake):  # noqa: F811
    dev, impl = fake.device, fake.device.impl
    x = wp.array(np.ones(1000, np.float32), device=dev)
    y = wp.zeros(1000, device=dev)
    args = [3.0, x, y]
    spec = k_saxpy.specialize(k_saxpy.infer_types(args))
    packed = spec.pack(args)
    fake.args_size = len(packed)
    stream = wp.Stream(dev)
    impl.launch(spec, packed, (1000,), dev, 128, stream, 0)
    rec = fake.launches[-1]
    assert rec["args"] == packed and rec["block"] == (128, 1, 1) and rec["grid"] == (8, 1, 1)
    assert rec["stream"] is stream._native
    impl.launch(spec, packed, (1000,), dev, 128, None, 3)  # max_blocks caps the grid; the entry strides
    rec = fake.launches[-1]
    assert rec["grid"] == (3, 1, 1) and rec["stream"] is wp.get_stream(dev)._native
    impl.launch(spec, packed, (0,), dev, 128, None, 0)  # an empty grid launches nothing
    assert len(fake.launches) == 2
    impl.launch_backward(spec, k_saxpy.adjoint_of(spec), packed, (1000,), dev, 256, stream, 0)
    back = fake.launches[-1]
    assert back["args"] == packed and back["grid"] == (4, 1, 1) and back["stream"] is stream._native
    assert len(fake.launches) == 3 and rec["function"] == b"weft_fwd" and back["function"] == b"weft_bwd"


def test_streams_events_and_synchronisation(fake):  # noqa: F811
    dev, impl = fake.device, fake.device.impl
    native = impl.create_stream(dev, 0)
    assert native is not None and native is not impl.create_stream(dev, 0)
    s = wp.Stream(dev)
    e1, e2 = wp.Event(dev, enable_timing=True), wp.Event(dev, enable_timing=True)
    fake.calls.clear()
    impl.record_event(e1, s)
    impl.wait_event(s, e1)
    impl.record_event(e2, s)
    impl.synchronize_event(e2)
    impl.synchronize_stream(s)
    impl.synchronize(dev)
    syncs = ("cuEventRecord", "cuStreamWaitEvent", "cuEventSynchronize", "cuStreamSynchronize", "cuCtxSynchronize")
    assert [c for c in fake.calls if c in syncs] == [
        "cuEventRecord", "cuStreamWaitEvent", "cuEventRecord", "cuEventSynchronize", "cuStreamSynchronize",
        "cuCtxSynchronize"]
    assert impl.elapsed_time(e1, e2) == 0.25  # the driver's answer


@needs_nvrtc
def test_capture_records_and_replays(fake):  # noqa: F811
    dev, impl = fake.device, fake.device.impl
    x = wp.array(np.ones(64, np.float32), device=dev)
    y = wp.zeros(64, device=dev)
    args = [1.0, x, y]
    spec = k_saxpy.specialize(k_saxpy.infer_types(args))
    packed = spec.pack(args)
    stream = wp.get_stream(dev)
    graph = Graph(dev)
    impl.capture_begin(graph, stream)
    impl.launch(spec, packed, (64,), dev, 64, stream, 0)
    impl.capture_end(graph, stream)
    assert not fake.launches and graph.native is not None  # captured into a native graph, not run
    impl.capture_launch(graph, stream)
    impl.capture_launch(graph, stream)
    assert len(fake.launches) == 2 and all(r["replayed"] and r["grid"] == (1, 1, 1) for r in fake.launches)
    replayed = []
    fallback = Graph(dev)  # a graph without a native one (e.g. recorded host work) replays its closures
    fallback.launches.append(lambda: replayed.append(1))
    impl.capture_launch(fallback, stream)
    assert replayed == [1]


@needs_nvrtc
def test_copy_adjoint_accumulates_the_range_and_consumes(fake):  # noqa: F811
    from types import SimpleNamespace

    impl = fake.device.impl
    src = wp.zeros(8, device=fake.device, requires_grad=True)
    dest = wp.zeros(8, device=fake.device, requires_grad=True)
    dest.grad.fill_(1.0)
    from weft.runtime.backends import CopyAdjoint

    rec = SimpleNamespace(dest=dest, src=src, dest_offset=2, src_offset=1, count=3, consume=True,
                          adjoint=CopyAdjoint.ACCUMULATE)
    impl.copy_adjoint(rec)
    assert len(fake.launches) == 1 and fake.launches[0]["grid"] == (1, 1, 1)  # one accumulation over the range
    np.testing.assert_array_equal(impl.to_host(dest.grad), [1, 1, 0, 0, 0, 1, 1, 1])  # the copied range consumed
