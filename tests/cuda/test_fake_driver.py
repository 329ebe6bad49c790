"""weft's CUDA runtime logic (discovery, memory, copies, fills, launches, debug errors, streams, graphs) run against
a host-memory fake of ``cuda.bindings.driver``: the Python side is verified without a GPU. Kernels are really
compiled by NVRTC; only the launch itself is recorded instead of executed.
"""

from __future__ import annotations

import gc
import struct

import numpy as np
import pytest
from cuda_corpus import k_bounds, k_saxpy
from fake_driver import FakeDriver, install

import weft as wp
from weft.toolchain import nvrtc


@pytest.fixture
def fake(monkeypatch):
    yield from install(monkeypatch, FakeDriver())


def test_discovery(fake):
    dev = fake.device
    assert dev.is_cuda and dev.alias == "cuda:0" and dev.name == "Fake GPU 0" and dev.arch == 90
    assert wp.is_cuda_available() and wp.get_cuda_device_count() == 1
    assert wp.get_device("cuda") is dev
    with pytest.raises(wp.DeviceError, match="cuda:3"):
        wp.get_device("cuda:3")


def test_roundtrip_views_and_pool_counters(fake):
    data = np.arange(24, dtype=np.float32).reshape(4, 6)
    before = wp.get_mempool_used_mem_current("cuda:0")
    a = wp.array(data, dtype=float, device="cuda:0")
    assert wp.get_mempool_used_mem_current("cuda:0") == before + data.nbytes
    assert wp.get_mempool_used_mem_high("cuda:0") >= before + data.nbytes
    np.testing.assert_array_equal(a.numpy(), data)
    np.testing.assert_array_equal(a[2].numpy(), data[2])
    np.testing.assert_array_equal(a[:, 1].numpy(), data[:, 1])
    np.testing.assert_array_equal(a[::2, ::-3].numpy(), data[::2, ::-3])
    np.testing.assert_array_equal(a.transpose().numpy(), data.T)
    assert a[1, 2] == 8.0
    del a
    gc.collect()
    assert wp.get_mempool_used_mem_current("cuda:0") == before
    assert wp.zeros(0, device="cuda:0").numpy().shape == (0,)


@pytest.mark.parametrize("dtype, value, call", [
    (float, 0.0, "cuMemsetD8Async"), (float, 1.5, "cuMemsetD32Async"), (wp.float16, 2.0, "cuMemsetD16Async"),
    (wp.float64, 1.25, "cuMemsetD2D32Async"), (wp.vec3, wp.vec3(1.0, 2.0, 3.0), "cuMemsetD2D32Async"),
    (wp.vec3h, wp.vec3h(1.0, 2.0, 3.0), "cuMemsetD2D16Async"),
    (wp.int8, 7, "cuMemsetD8Async")])
def test_fill(fake, dtype, value, call):
    a = wp.zeros(10, dtype=dtype, device="cuda:0")
    fake.calls.clear()
    a.fill_(value)
    assert call in fake.calls
    expected = np.broadcast_to(np.asarray(getattr(value, "_a", value)), a.numpy().shape)
    np.testing.assert_array_equal(a.numpy(), expected)


def test_fill_strided_view(fake):
    a = wp.zeros((4, 4), device="cuda:0")
    a[:, 1].fill_(3.0)
    expected = np.zeros((4, 4), np.float32)
    expected[:, 1] = 3.0
    np.testing.assert_array_equal(a.numpy(), expected)


def test_copies(fake):
    host = wp.array(np.arange(10, dtype=np.float32), device="cpu")
    dev = wp.zeros(10, device="cuda:0")
    wp.copy(dev, host)
    dev2 = wp.zeros(10, device="cuda:0")
    wp.copy(dev2, dev, dest_offset=2, src_offset=1, count=4)
    out = wp.zeros(10, device="cpu")
    wp.copy(out, dev2)
    assert out.numpy().tolist() == [0, 0, 1, 2, 3, 4, 0, 0, 0, 0]
    assert dev.to("cpu").numpy().tolist() == list(range(10))
    assert wp.clone(dev).numpy().tolist() == list(range(10))
    m = wp.array(np.arange(12, dtype=np.float32).reshape(3, 4), device="cuda:0")
    t = wp.zeros((4, 3), device="cuda:0")
    wp.copy(t, m.transpose())  # strided source: through the host
    np.testing.assert_array_equal(t.numpy(), np.arange(12).reshape(3, 4).T)
    pinned = wp.zeros(10, device="cpu", pinned=True)
    assert pinned.pinned
    wp.copy(pinned, dev)
    wp.synchronize_device("cuda:0")
    assert pinned.numpy().tolist() == list(range(10))


def _launch_record(fake, kernel, dim, args):
    spec = kernel.specialize(kernel.infer_types(args))
    fake.args_size = len(spec.pack(args))
    wp.launch(kernel, dim, inputs=args, device="cuda:0")
    return spec, fake.launches[-1]


@pytest.mark.skipif(not nvrtc.is_available(), reason="NVRTC not installed")
def test_launch_passes_args_and_grid(fake):
    x = wp.array(np.ones(1000, np.float32), device="cuda:0")
    y = wp.zeros(1000, device="cuda:0")
    spec, rec = _launch_record(fake, k_saxpy, 1000, [2.0, x, y])
    assert rec["function"] == b"weft_fwd"
    assert rec["grid"] == (4, 1, 1) and rec["block"] == (256, 1, 1)
    assert struct.unpack("<4qi4x", rec["grid_bytes"]) == (1000, 1, 1, 1, 1)
    assert rec["args"] == spec.pack([2.0, x, y])
    wp.launch(k_saxpy, (0,), inputs=[2.0, x, y], device="cuda:0")  # empty grid: nothing launched
    assert len(fake.launches) == 1
    wp.launch(k_saxpy, 10, inputs=[2.0, x, y], device="cuda:0", block_dim=64)
    assert fake.launches[-1]["block"] == (64, 1, 1) and fake.launches[-1]["grid"] == (1, 1, 1)


@pytest.mark.skipif(not nvrtc.is_available(), reason="NVRTC not installed")
def test_debug_error_state_is_read_and_reset(fake, debug_mode):
    x = wp.zeros(4, device="cuda:0")
    y = wp.zeros((4, 2), device="cuda:0")
    wp.launch(k_bounds, 2, inputs=[x, y, 1], device="cuda:0")  # error state clear: no error
    message = b"write out of bounds in kernel 'k_bounds': array 'x' index [4] shape (4)"
    fake.error_state.raw = struct.pack("<ii", 1, 3) + message + bytes(488 - 8 - len(message))
    with pytest.raises(wp.RuntimeError_, match=r"out of bounds.*\(and 2 more\)"):
        wp.launch(k_bounds, 4, inputs=[x, y, 1], device="cuda:0")
    assert fake.error_state.raw == bytes(488)  # reset for the next launch


@pytest.mark.skipif(not nvrtc.is_available(), reason="NVRTC not installed")
def test_streams_events_and_graphs(fake):
    x = wp.array(np.ones(100, np.float32), device="cuda:0")
    y = wp.zeros(100, device="cuda:0")
    default = wp.get_stream("cuda:0")
    s = wp.Stream("cuda:0")
    assert s.cuda_stream != default.cuda_stream
    with wp.ScopedStream(s):
        wp.launch(k_saxpy, 100, inputs=[1.0, x, y])
    assert fake.launches[-1]["stream"] is s._native
    s.wait_stream(default)
    start, end = wp.Event("cuda:0", enable_timing=True), wp.Event("cuda:0", enable_timing=True)
    s.record_event(start)
    s.record_event(end)
    assert start.elapsed_time(end) == 0.25
    wp.synchronize()
    count = len(fake.launches)
    with wp.ScopedCapture(device="cuda:0") as capture:
        wp.launch(k_saxpy, 100, inputs=[1.0, x, y], device="cuda:0")
        wp.launch(k_saxpy, 100, inputs=[2.0, x, y], device="cuda:0")
        tmp = wp.zeros(10, device="cuda:0")  # allocated inside the capture
        del tmp
    assert len(fake.launches) == count  # captured, not run
    wp.capture_launch(capture.graph)
    wp.capture_launch(capture.graph)
    assert len(fake.launches) == count + 4 and all(r.get("replayed") for r in fake.launches[count:])


def test_device_queries_through_the_driver(fake):
    dev = wp.get_device("cuda:0")
    assert dev.sm_count == 132 and dev.max_shared_memory_per_block == 232448
