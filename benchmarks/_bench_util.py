"""Helpers shared by the benchmark scripts: optional frameworks, kernel loading, timing and table printing."""

from __future__ import annotations

import importlib.util
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent


def optional_torch():
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(os.cpu_count() or 1)
    return torch


def optional_warp(cache_dir: str | None = None):
    """NVIDIA Warp (``warp-lang``) initialised on the CPU, or None when it is not installed."""
    if os.environ.get("BENCH_NO_WARP"):
        return None
    try:
        import warp
    except ImportError:
        return None
    warp.config.quiet = True
    if cache_dir is not None:
        warp.config.kernel_cache_dir = cache_dir
    warp.init()
    return warp


def load_kernels(path: Path, wp, tag: str):
    """Execute the kernel file ``path`` with the global ``wp`` bound to ``wp`` (weft or warp)."""
    name = f"_bench_{path.stem}_{tag}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    module.wp = wp
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def median_time(fn: Callable[[], object], repeat: int, number: int = 1, sync: Callable[[], object] | None = None,
                warmup: int = 1) -> float:
    """Median over ``repeat`` samples of the seconds per call of ``fn`` (each sample runs ``number`` calls)."""
    for _ in range(warmup):
        fn()
    if sync:
        sync()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        if sync:
            sync()
        samples.append((time.perf_counter() - t0) / number)
    return statistics.median(samples)


def process_cpu_time() -> float:
    """CPU seconds of this process so far (user + system, every thread): on a loaded machine the work done, where
    wall-clock time also counts the time other jobs held the cores."""
    return time.process_time()


def interleaved_times(fns: dict[str, Callable[[], object]], rounds: int, number: int = 1,
                      clock: Callable[[], float] = time.perf_counter) -> dict[str, float]:
    """Median seconds per call of each function, sampled in interleaved rounds (``clock``: wall clock by default,
    ``process_cpu_time`` for CPU time).

    Shared machines (CI runners, VMs) drift in memory bandwidth and clock over seconds; timing the frameworks in
    alternation gives each the same conditions, so ratios stay meaningful even when absolute numbers wander. The
    order rotates every round, so no framework always runs right after another one's cache-trashing call.
    """
    for fn in fns.values():
        fn()
    samples: dict[str, list[float]] = {name: [] for name in fns}
    items = list(fns.items())
    for r in range(rounds):
        shift = r % len(items)
        for name, fn in items[shift:] + items[:shift]:
            t0 = clock()
            for _ in range(number):
                fn()
            samples[name].append((clock() - t0) / number)
    return {name: statistics.median(s) for name, s in samples.items()}


def fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit in ("us", "ms"):
        return f"{value:.2f}" if value < 100 else f"{value:.0f}"
    if unit == "s":
        return f"{value:.3f}"
    return f"{value:.1f}"


def print_table(title: str, rows: list[dict], columns: list[str], baseline: str = "weft") -> None:
    """Rows: {"name", "unit", "higher_is_better", "target", <column>: value or None}.

    Each non-baseline column also shows ``weft / column`` as a speed-up of weft over that framework (> 1: weft
    faster), whichever direction the unit runs.
    """
    header = ["benchmark", "unit"] + columns + [f"weft vs {c}" for c in columns if c != baseline] + ["target"]
    table = [header]
    for row in rows:
        cells = [row["name"], row["unit"]] + [fmt(row.get(c), row["unit"]) for c in columns]
        w = row.get(baseline)
        for c in columns:
            if c == baseline:
                continue
            o = row.get(c)
            if w is None or o is None or w == 0 or o == 0:
                cells.append("-")
            else:
                speedup = (w / o) if row.get("higher_is_better") else (o / w)
                cells.append(f"{speedup:.2f}x")
        cells.append(row.get("target", ""))
        table.append(cells)
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    print(f"\n{title}")
    line = "  ".join("-" * w for w in widths)
    print(line)
    for k, r in enumerate(table):
        print("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths))))
        if k == 0:
            print(line)
    print(line)
