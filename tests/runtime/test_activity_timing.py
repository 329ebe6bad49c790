"""wp.timing_begin / timing_end / timing_print: CPU activities (Warp records CUDA work only; weft records both)."""

import numpy as np
import pytest

import weft as wp
from weft.runtime import activity
from weft.runtime.grad_kernels import accumulate_1d


@wp.kernel
def k_scale(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * 3.0


@wp.kernel
def k_square_sum(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(out, 0, x[i] * x[i])


def _arrays(n=1000):
    x = wp.array(np.linspace(0.0, 1.0, n, dtype=np.float32))
    return x, wp.zeros(n, dtype=float)


def _hooks_removed():
    impl = wp.get_device("cpu").impl
    return not activity.active and not any(name in vars(impl) for name in activity._HOOKED)


def test_kernels_copies_fills_are_recorded_in_order_on_the_cpu():
    x, y = _arrays()
    for _ in range(3):  # the kernel's fast launch path is enabled after its first launch
        wp.launch(k_scale, x.shape, inputs=[x, y])
    wp.timing_begin()
    wp.launch(k_scale, x.shape, inputs=[x, y])
    wp.copy(x, y)
    y.zero_()
    y.fill_(2.0)
    wp.launch(accumulate_1d, x.shape, inputs=[y, x])  # one of weft's own kernels
    results = wp.timing_end()
    assert [(r.name, r.filter) for r in results] == [
        ("forward kernel k_scale", wp.TIMING_KERNEL), ("memcpy HtoH", wp.TIMING_MEMCPY),
        ("memset", wp.TIMING_MEMSET), ("memset", wp.TIMING_MEMSET),
        ("builtin kernel accumulate_1d", wp.TIMING_KERNEL_BUILTIN)]
    assert all(r.device == wp.get_device("cpu") and isinstance(r.elapsed, float) and r.elapsed >= 0.0
               for r in results)
    # the work really ran: x = y = 3 x0 (launch, copy), y = 2 (fill), y += x (accumulate)
    x0 = np.linspace(0.0, 1.0, 1000, dtype=np.float32)
    np.testing.assert_allclose(x.numpy(), 3.0 * x0, rtol=1e-6)
    np.testing.assert_allclose(y.numpy(), 3.0 * x0 + 2.0, rtol=1e-6)
    assert _hooks_removed()
    wp.launch(k_scale, x.shape, inputs=[x, y])  # not recorded after timing_end
    assert wp.timing_end() == []


def test_filter_backward_and_record_cmd_launches():
    x = wp.array(np.arange(8, dtype=np.float32), requires_grad=True)
    out = wp.zeros(1, dtype=float, requires_grad=True)
    cmd = wp.launch(k_scale, 8, inputs=[x, wp.zeros(8, dtype=float)], record_cmd=True)
    cmd.launch()
    wp.timing_begin(wp.TIMING_KERNEL)
    tape = wp.Tape()
    with tape:
        wp.launch(k_square_sum, 8, inputs=[x, out])
    tape.backward(out)
    cmd.launch()
    out.zero_()  # a memset: filtered out
    results = wp.timing_end()
    assert [r.name for r in results] == ["forward kernel k_square_sum", "backward kernel k_square_sum",
                                         "forward kernel k_scale"]
    np.testing.assert_allclose(x.grad.numpy(), 2.0 * np.arange(8))


def test_graph_replay_is_one_activity():
    x, y = _arrays(64)
    with wp.ScopedCapture() as cap:
        wp.launch(k_scale, 64, inputs=[x, y])
        y.fill_(1.0)
    wp.timing_begin()
    wp.capture_launch(cap.graph)
    results = wp.timing_end()
    assert [(r.name, r.filter) for r in results] == [("graph", wp.TIMING_GRAPH)]
    np.testing.assert_array_equal(y.numpy(), np.ones(64))
    # kernels inside a capture made while timing are not timed (they run at replay)
    wp.timing_begin()
    with wp.ScopedCapture() as cap2:
        wp.launch(k_scale, 64, inputs=[x, y])
    results = wp.timing_end()
    assert results == []
    assert cap2.graph is not None


def test_timing_print_and_scoped_timer(capsys):
    x, y = _arrays(16)
    with wp.ScopedTimer("block", cuda_filter=wp.TIMING_ALL) as t:
        wp.launch(k_scale, 16, inputs=[x, y])
        wp.launch(k_scale, 16, inputs=[x, y])
        y.zero_()
    assert [r.name for r in t.timing_results] == ["forward kernel k_scale"] * 2 + ["memset"]
    text = capsys.readouterr().out
    assert "Activity timeline:" in text and "block took" in text
    wp.timing_print(t.timing_results, indent="  ")
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert lines[0] == "  Activity timeline:"
    summary = [ln for ln in lines if ln.endswith("| forward kernel k_scale") and "|       2 |" in ln.replace(
        "ms |", "|")]
    assert len(summary) == 1
    total = float(summary[0].split("ms")[0])
    assert total == pytest.approx(sum(r.elapsed for r in t.timing_results[:2]), abs=2e-6)
    assert any(ln.rstrip().endswith("| cpu") and "3 |" in ln for ln in lines)
    wp.timing_print([])
    assert capsys.readouterr().out == "No activity\n"


def test_timing_begin_checks_its_filter_and_restarts():
    with pytest.raises(TypeError, match="cuda_filter"):
        wp.timing_begin("all")
    x, y = _arrays(4)
    wp.timing_begin()
    wp.launch(k_scale, 4, inputs=[x, y])
    wp.timing_begin(wp.TIMING_MEMSET)  # restarts: the earlier records are dropped
    wp.launch(k_scale, 4, inputs=[x, y])
    y.zero_()
    assert [r.name for r in wp.timing_end()] == ["memset"]
    assert _hooks_removed()
    assert repr(wp.TimingResult(wp.get_device("cpu"), "memset", wp.TIMING_MEMSET, 0.5)).startswith("TimingResult(")
