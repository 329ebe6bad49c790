"""The CUDA runtime on a real GPU (skipped without one): memory, copies, launches against the CPU reference, debug
bounds checks, streams and events, graph capture, the memory pool counters.
"""

from __future__ import annotations

import numpy as np
import pytest
from cuda_corpus import CASES, NUMERIC, k_bounds, k_saxpy

import weft as wp


def _host(value):
    if isinstance(value, wp.array):
        return value.numpy().copy()
    return value


def test_array_roundtrip_fill_and_views(cuda_device):
    data = np.arange(24, dtype=np.float32).reshape(4, 6)
    a = wp.array(data, dtype=float, device=cuda_device)
    assert a.device == cuda_device and a.ptr != 0
    np.testing.assert_array_equal(a.numpy(), data)
    np.testing.assert_array_equal(a[1].numpy(), data[1])
    np.testing.assert_array_equal(a[:, 2].numpy(), data[:, 2])  # strided view
    np.testing.assert_array_equal(a.transpose().numpy(), data.T)
    a.fill_(3.5)
    assert (a.numpy() == 3.5).all()
    a.zero_()
    assert not a.numpy().any()
    v = wp.full(5, wp.vec3(1.0, 2.0, 3.0), dtype=wp.vec3, device=cuda_device)
    np.testing.assert_array_equal(v.numpy(), np.tile([1.0, 2.0, 3.0], (5, 1)))
    d = wp.full(3, 1.25, dtype=wp.float64, device=cuda_device)  # 8-byte pattern: staged fill
    assert d.numpy().tolist() == [1.25] * 3


def test_copies_between_host_and_devices(cuda_device):
    src = wp.array(np.arange(10, dtype=np.float32), device="cpu")
    dev = wp.zeros(10, device=cuda_device)
    wp.copy(dev, src)
    dev2 = wp.zeros(10, device=cuda_device)
    wp.copy(dev2, dev, dest_offset=2, src_offset=0, count=5)
    back = wp.zeros(10, device="cpu")
    wp.copy(back, dev2)
    assert back.numpy().tolist() == [0, 0, 0, 1, 2, 3, 4, 0, 0, 0]
    pinned = wp.zeros(10, device="cpu", pinned=True)
    wp.copy(pinned, dev)
    wp.synchronize_device(cuda_device)
    assert pinned.numpy().tolist() == list(range(10))
    assert dev.to("cpu").numpy().tolist() == list(range(10))
    assert wp.clone(dev).numpy().tolist() == list(range(10))


@pytest.mark.parametrize("name", NUMERIC)
def test_corpus_matches_cpu(name, cuda_device):
    kernel, make_args, dim = CASES[name]
    cpu_args = make_args("cpu")
    gpu_args = make_args(cuda_device)
    wp.launch(kernel, dim, inputs=cpu_args, device="cpu")
    wp.launch(kernel, dim, inputs=gpu_args, device=cuda_device)
    for c, g in zip(cpu_args, gpu_args):
        if isinstance(c, wp.array):
            cv, gv = c.numpy(), g.numpy()
            if cv.dtype.names:  # structs
                for field in cv.dtype.names:
                    np.testing.assert_allclose(gv[field], cv[field], rtol=1e-5, atol=1e-5)
            else:
                np.testing.assert_allclose(gv.astype(np.float64), cv.astype(np.float64), rtol=2e-5, atol=2e-5)


def test_large_and_multidimensional_grids(cuda_device):
    n = 3_000_001  # not a multiple of the block size
    x = wp.full(n, 1.0, dtype=float, device=cuda_device)
    y = wp.full(n, 2.0, dtype=float, device=cuda_device)
    wp.launch(k_saxpy, n, inputs=[3.0, x, y], device=cuda_device)
    out = y.numpy()
    assert out[0] == 5.0 and out[-1] == 5.0 and (out == 5.0).all()
    kernel, make_args, dim = CASES["grid4"]
    (arr,) = make_args(cuda_device)
    wp.launch(kernel, dim, inputs=[arr], device=cuda_device)
    i, j, k, l = np.indices(dim)
    np.testing.assert_array_equal(arr.numpy(), (i * 1000 + j * 100 + k * 10 + l).astype(np.float32))


def test_debug_bounds_check_raises(cuda_device, debug_mode):
    x = wp.zeros(4, device=cuda_device)
    y = wp.zeros((4, 2), device=cuda_device)
    with pytest.raises(wp.RuntimeError_, match="out of bounds"):
        wp.launch(k_bounds, 4, inputs=[x, y, 1], device=cuda_device)
    wp.launch(k_bounds, 3, inputs=[x, y, 1], device=cuda_device)  # in bounds: the error state was reset


def test_streams_and_events(cuda_device):
    s1 = wp.Stream(cuda_device)
    s2 = wp.Stream(cuda_device)
    x = wp.full(1 << 20, 1.0, dtype=float, device=cuda_device)
    y = wp.zeros(1 << 20, device=cuda_device)
    with wp.ScopedStream(s1):
        wp.launch(k_saxpy, x.size, inputs=[2.0, x, y], device=cuda_device)
    s2.wait_stream(s1)
    with wp.ScopedStream(s2):
        wp.launch(k_saxpy, x.size, inputs=[1.0, x, y], device=cuda_device)
    done = s2.record_event()
    done.synchronize()
    assert (y.numpy() == 3.0).all()
    start = wp.Event(cuda_device, enable_timing=True)
    end = wp.Event(cuda_device, enable_timing=True)
    s1.record_event(start)
    with wp.ScopedStream(s1):
        wp.launch(k_saxpy, x.size, inputs=[1.0, x, y], device=cuda_device)
    s1.record_event(end)
    wp.synchronize()
    assert start.elapsed_time(end) >= 0.0


def test_graph_capture_and_replay(cuda_device):
    x = wp.full(1000, 1.0, dtype=float, device=cuda_device)
    y = wp.zeros(1000, device=cuda_device)
    wp.synchronize_device(cuda_device)
    with wp.ScopedCapture(device=cuda_device) as capture:
        wp.launch(k_saxpy, 1000, inputs=[1.0, x, y], device=cuda_device)
        wp.launch(k_saxpy, 1000, inputs=[0.5, x, y], device=cuda_device)
    assert capture.graph.native is not None
    assert not y.numpy().any()  # capturing does not run the work
    for _ in range(4):
        wp.capture_launch(capture.graph)
    assert (y.numpy() == 6.0).all()


def test_mempool_counters(cuda_device):
    before = wp.get_mempool_used_mem_current(cuda_device)
    a = wp.zeros(1 << 22, dtype=wp.uint8, device=cuda_device)
    assert wp.get_mempool_used_mem_current(cuda_device) >= before + (1 << 22)
    assert wp.get_mempool_used_mem_high(cuda_device) >= before + (1 << 22)
    del a
    wp.synchronize_device(cuda_device)
