"""wp.ScopedMemoryTracker, wp.print_memory_report and wp.config.track_memory: weft's array allocations per device
(live bytes, peak, records with the allocating line of user code, report sorted by size)."""

import gc
import inspect
import io

import numpy as np
import pytest

import weft as wp
from weft.runtime import memtrack

FILE = "test_memtrack.py"


def _line() -> int:
    return inspect.currentframe().f_back.f_lineno


def _live_lines(text: str) -> list[str]:
    out, inside = [], False
    for ln in text.splitlines():
        if ln.startswith("  Live cpu allocations"):
            inside = True
        elif inside and ln.startswith("    "):
            out.append(ln.strip())
        elif inside:
            inside = False
    return out


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.setattr(wp.config, "track_memory", False)
    memtrack.reset()
    yield
    memtrack.reset()


def test_sizes_peak_frees_and_report_by_size():
    with wp.ScopedMemoryTracker("outer", print=False) as t:
        a = wp.zeros(1000, dtype=wp.float32); la = _line()
        b = wp.zeros((50, 50), dtype=wp.vec3); lb = _line()
        with wp.ScopedMemoryTracker("inner", print=False):
            c = wp.array(np.arange(10, dtype=np.float64)); lc = _line()  # copied from NumPy: an allocation
        assert memtrack.current_bytes("cpu") == 4000 + 2500 * 12 + 80
        del a
        gc.collect()
        assert memtrack.current_bytes("cpu") == 2500 * 12 + 80
        assert memtrack.peak_bytes("cpu") == 4000 + 2500 * 12 + 80
        out = io.StringIO()
        t.report(file=out)
    text = out.getvalue()
    assert "    cpu              3 (33.28 KB)" in text  # allocations made: 34080 bytes
    assert "    cpu              2 (29.38 KB)" in text  # live
    assert "    outer:\n      cpu: 2 allocs, 33.20 KB" in text
    assert "    outer/inner:\n      cpu: 1 allocs, 80 B" in text
    assert _live_lines(text) == [
        f"29.30 KB : cpu : array[vec3f, (50, 50)] : {FILE}:{lb} : test_sizes_peak_frees_and_report_by_size() [outer]",
        (f"80 B : cpu : array[float64, 10] : {FILE}:{lc} : test_sizes_peak_frees_and_report_by_size() "
        "[outer/inner]")]
    assert la < lb
    del b, c


def test_views_aliases_and_order():
    with wp.ScopedMemoryTracker(print=False) as t:
        big = wp.zeros((100, 10), dtype=float)
        view = big[10:20]  # a view: no allocation, and it keeps the memory alive
        alias = wp.array(np.zeros(64, np.float32), copy=False)  # the caller's memory: not weft's allocation
        small = wp.empty(3, dtype=wp.int64); ls = _line()
        del big
        gc.collect()
        assert memtrack.current_bytes() == 4000 + 24  # the view holds the 4000 bytes
        del view
        gc.collect()
        assert memtrack.current_bytes() == 24
        mid = wp.zeros(50, dtype=wp.int8)
        texts = []
        t.report_func = texts.append
        t.report(sort="chronological", max_items=1)
        assert _live_lines(texts[0]) == [
            f"24 B : cpu : array[int64, 3] : {FILE}:{ls} : test_views_aliases_and_order() [root]"]
        t.report(sort="size")
        assert [ln.split(" : ")[0] for ln in _live_lines(texts[1])] == ["50 B", "24 B"]
        with pytest.raises(ValueError, match="sort order"):
            t.report(sort="name")
        t.clear()
        assert memtrack.current_bytes() == 0
        assert alias.shape == (64,) and small.shape == (3,) and mid.shape == (50,)


def test_config_track_memory_and_print_memory_report(capsys, monkeypatch):
    with pytest.raises(RuntimeError, match="not active"):
        wp.print_memory_report()
    x = wp.zeros(16, dtype=float)  # tracking off: not recorded
    assert memtrack.current_bytes() == 0
    monkeypatch.setattr(wp.config, "track_memory", True)
    y = wp.full(256, 1.0, dtype=wp.float64); ly = _line()
    wp.print_memory_report()
    text = capsys.readouterr().out
    assert text.startswith("Allocation Tracking Report\n")
    assert _live_lines(text) == [(f"2.00 KB : cpu : array[float64, 256] : {FILE}:{ly} : "
                                 "test_config_track_memory_and_print_memory_report()")]
    assert "Scope breakdown" not in text  # no tracker scope
    with pytest.raises(ValueError, match="sort order"):
        wp.print_memory_report(sort="largest")
    assert x.size == 16 and y.size == 256


def test_tracker_prints_on_exit_and_inactive_tracker(capsys):
    with wp.ScopedMemoryTracker("quiet", active=False):
        a = wp.zeros(8, dtype=float)
    assert capsys.readouterr().out == "" and memtrack.current_bytes() == 0
    with wp.ScopedMemoryTracker("step"):
        b = wp.zeros(8, dtype=float)
    text = capsys.readouterr().out
    assert "Allocation Tracking Report" in text and "32 B : cpu : array[float32, 8]" in text
    assert not memtrack.enabled()  # the tracker turned tracking on, and off again
    c = wp.zeros(8, dtype=float)
    assert memtrack.current_bytes() == 32  # only b
    del a, b, c


def test_warp_private_tracker_entry_points():
    from weft._src import context

    core = context.runtime.core
    assert core.wp_alloc_tracker_is_enabled() == 0
    with wp.ScopedMemoryTracker("private", print=False):
        assert core.wp_alloc_tracker_is_enabled() == 1
        core.wp_alloc_tracker_reset()
        a = wp.zeros(100, dtype=float)
        b = wp.zeros(10, dtype=float, pinned=True)
        assert (core.wp_alloc_tracker_get_live_count(), core.wp_alloc_tracker_get_total_alloc_count()) == (2, 2)
        assert core.wp_alloc_tracker_get_total_alloc_bytes() == 440
        del a
        gc.collect()
        assert core.wp_alloc_tracker_get_live_count() == 1 and core.wp_alloc_tracker_get_current_bytes() == 40
        assert core.wp_alloc_tracker_get_peak_bytes() == 400  # the largest per-device peak
        text = context.alloc_tracker_report_text(1, 10)
        assert "40 B : cpu (pinned) : array[float32, 10]" in text
    assert b.shape == (10,)
