"""Activity timing on a CUDA device (wp.timing_begin / timing_end) against the fake driver: each activity is timed
between two events recorded on its stream, and its elapsed time is the driver's cuEventElapsedTime answer."""

from __future__ import annotations

import numpy as np
from test_fake_driver import fake  # noqa: F401 - the fake-driver fixture

import weft as wp


def test_cuda_activities_are_timed_with_events(fake):  # noqa: F811
    dev = fake.device
    a = wp.zeros(8, dtype=float, device=dev)
    wp.timing_begin()
    fake.calls.clear()
    b = wp.array(np.arange(8, dtype=np.float32), device=dev)  # upload
    wp.copy(a, b)  # device to device
    host = wp.zeros(8, dtype=float, device="cpu")
    wp.copy(host, a)  # to the host
    a.fill_(2.0)
    values = a.numpy()  # read back
    results = wp.timing_end()
    np.testing.assert_array_equal(host.numpy(), np.arange(8))
    np.testing.assert_array_equal(values, np.full(8, 2.0))
    assert [(r.name, r.filter) for r in results] == [
        ("memcpy HtoD", wp.TIMING_MEMCPY), ("memcpy DtoD", wp.TIMING_MEMCPY), ("memcpy DtoH", wp.TIMING_MEMCPY),
        ("memset", wp.TIMING_MEMSET), ("memcpy DtoH", wp.TIMING_MEMCPY)]
    assert all(r.device == dev and r.elapsed == 0.25 for r in results)  # the driver's elapsed time
    assert fake.calls.count("cuEventRecord") == 2 * len(results)
    fake.calls.clear()
    a.fill_(1.0)
    assert "cuEventRecord" not in fake.calls  # timing ended: no events


def test_device_allocations_are_tracked_until_freed(fake):  # noqa: F811
    import gc

    from weft.runtime import memtrack

    dev = fake.device
    memtrack.reset()
    with wp.ScopedMemoryTracker("gpu", print=False) as t:
        a = wp.zeros(256, dtype=float, device=dev)
        b = wp.array(np.ones((4, 4), np.float64), device=dev)
        ptr = a.ptr
        assert memtrack.current_bytes(dev) == 1024 + 128
        del a
        gc.collect()
        assert ptr not in fake.allocs  # freed by the driver, and recorded as freed
        assert memtrack.current_bytes(dev) == 128 and memtrack.peak_bytes(dev) == 1152
        texts = []
        t.report_func = texts.append
        t.report()
    alias = dev.alias
    assert f"    {alias:16s} 2 (1.12 KB)" in texts[0]  # allocations made
    assert f"128 B : {alias} : array[float64, (4, 4)] : test_activity_cuda.py:" in texts[0]
    memtrack.reset()
    del b
