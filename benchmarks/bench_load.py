"""weft on a busy machine: each row timed as the machine is, then with one busy process per core added.

Rows: saxpy on 2^22 float32, a 5-point stencil on 2048^2 float32, and the tile ``fft2`` of a 512^2 complex64 field
(rows, transpose, rows, as in bench_tiles.py). Columns, timed in interleaved rounds (A/B/A/B in a new random order every round; medians):

- ``weft``: the default policy (``wp.config.num_threads = 0`` with ``load_aware_threads``: only the cores other
  runnable tasks leave free);
- ``weft all cores``: every core whatever the load (``load_aware_threads = False``);
- ``weft 1 thread``: ``wp.config.num_threads = 1``;
- ``numpy``: the same computation with NumPy.

The background load is ``os.sched_getaffinity`` many Python processes spinning in ``while True: pass``, started before
the loaded phase and killed after it. The target (issue 22): under load, ``weft`` no slower than ``weft 1 thread``.
The OpenMP spin count (``GOMP_SPINCOUNT``, see docs/architecture.md) is fixed when the process starts; to time
libgomp's own default, run with ``GOMP_SPINCOUNT=300000``.

Usage: ``python benchmarks/bench_load.py [--quick] [--rounds N] [--no-quiet]``. No timing is asserted anywhere.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _bench_util import HERE, load_kernels, print_table

COLUMNS = ["weft", "weft all cores", "weft 1 thread", "numpy"]


def _cases(wp, kc, kt):
    n = 1 << 22
    x_np = np.random.default_rng(0).random(n, dtype=np.float32)
    x = wp.array(x_np, device="cpu")
    y = wp.zeros(n, dtype=float, device="cpu")
    y_np = np.zeros(n, np.float32)

    def np_saxpy():
        y_np[:] += 2.0 * x_np

    m = 2048
    u_np = np.random.default_rng(1).random((m, m), dtype=np.float32)
    u = wp.array(u_np, device="cpu")
    out = wp.zeros((m, m), dtype=float, device="cpu")
    o_np = np.zeros_like(u_np)

    def np_stencil():
        c = u_np[1:-1, 1:-1]
        lap = u_np[:-2, 1:-1] + u_np[2:, 1:-1] + u_np[1:-1, :-2] + u_np[1:-1, 2:] - 4.0 * c
        o_np[1:-1, 1:-1] = c + 0.1 * lap

    f = kt.N_GRID
    z = (np.random.default_rng(2).standard_normal((f, f)) + 1j * np.random.default_rng(3).standard_normal((f, f)))
    z = z.astype(np.complex64)
    zx = wp.array(np.stack([z.real, z.imag], -1).astype(np.float32), dtype=wp.vec2f, device="cpu")
    t1, t2, t3 = (wp.zeros((f, f), dtype=wp.vec2f, device="cpu") for _ in range(3))

    def fft2():
        wp.launch_tiled(kt.fft_tiled, dim=[f, 1], inputs=[zx], outputs=[t1], block_dim=64, device="cpu")
        wp.launch(kt.transpose, dim=(f, f), inputs=[t1], outputs=[t2], device="cpu")
        wp.launch_tiled(kt.fft_tiled, dim=[f, 1], inputs=[t2], outputs=[t3], block_dim=64, device="cpu")

    return [
        ("saxpy 2^22 f32", lambda: wp.launch(kc.saxpy, dim=n, inputs=[2.0, x, y], device="cpu"), np_saxpy),
        ("5-point stencil 2048^2 f32",
         lambda: wp.launch(kc.stencil5, dim=(m - 2, m - 2), inputs=[0.1, u, out], device="cpu"), np_stencil),
        ("tile fft2 512^2 c64", fft2, lambda: np.fft.fft2(z)),
    ]


def shuffled_times(fns: dict, rounds: int, number: int) -> dict[str, float]:
    """Median seconds per call of each function over interleaved rounds, in a new random order every round.

    On a loaded machine the scheduler shares the cores fairly over time: a variant timed right after one that used
    little CPU (waiting at a barrier) gets the core sooner than one timed after a CPU-heavy variant, and a variant
    timed after NumPy's saxpy finds its caches flushed by NumPy's temporaries. A fixed (or merely rotated) order keeps
    the same predecessor for each column and so favours some columns; a shuffled order does not.
    """
    names = list(fns)
    rng = random.Random(0)
    for fn in fns.values():
        fn()
    samples: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(rounds):
        rng.shuffle(names)
        for name in names:
            t0 = time.perf_counter()
            for _ in range(number):
                fns[name]()
            samples[name].append((time.perf_counter() - t0) / number)
    return {name: statistics.median(s) for name, s in samples.items()}


def _policy(wp, column: str):
    def apply():
        wp.config.num_threads = 1 if column == "weft 1 thread" else 0
        wp.config.load_aware_threads = column != "weft all cores"
    return apply


def _with_policy(apply, fn):
    def run():
        apply()
        fn()
    return run


def _rows(wp, cases, rounds: int, title: str) -> list[dict]:
    rows = []
    for name, weft_fn, np_fn in cases:
        fns = {}
        for col in COLUMNS[:3]:
            fns[col] = _with_policy(_policy(wp, col), weft_fn)
        fns["numpy"] = np_fn
        t = shuffled_times(fns, rounds, number=3)
        rows.append({"name": f"{name}, {title}", "unit": "ms", **{k: v * 1e3 for k, v in t.items()},
                     "target": "weft <= weft 1 thread" if title == "loaded" else ""})
    _policy(wp, "weft")()
    return rows


def _start_load() -> list[subprocess.Popen]:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(cores)]


def _stop_load(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.kill()
    for p in procs:
        p.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds")
    ap.add_argument("--rounds", type=int, default=0, help="interleaved rounds per row (default 16, quick 4)")
    ap.add_argument("--no-quiet", action="store_true", help="skip the phase without added load")
    args = ap.parse_args()
    rounds = args.rounds or (4 if args.quick else 16)

    import weft as wp

    kc = load_kernels(HERE / "_core_kernels.py", wp, "weft")
    kt = load_kernels(HERE / "_tile_kernels.py", wp, "weft")
    cases = _cases(wp, kc, kt)
    for _, weft_fn, _ in cases:
        weft_fn()  # compile outside the timed rounds
    rows = [] if args.no_quiet else _rows(wp, cases, rounds, "no added load")
    procs = _start_load()
    try:
        time.sleep(0.5)  # let the spinners reach the run queue
        rows += _rows(wp, cases, rounds, "loaded")
    finally:
        _stop_load(procs)
    print_table(f"weft under load (median of {rounds} interleaved rounds; {len(procs)} busy processes when loaded)",
                rows, COLUMNS)


if __name__ == "__main__":
    main()
