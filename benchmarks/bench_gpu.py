"""weft's GPU benchmarks, side by side with NVIDIA Warp (``warp-lang``) when it is installed.

One run prints one table:

1. saxpy bandwidth (GB/s, 12 bytes per element) against a device-to-device copy of the same array (8 bytes per
   element): the target is saxpy >= 85% of copy bandwidth;
2. launch overhead (microseconds per launch): a tiny kernel launched one by one, and the same launches replayed from
   a captured CUDA graph;
3. the Navier-Stokes step of ``examples/fluids/navier_stokes.py`` at N = 512, 1024, 2048, captured in a graph
   (ms per step): the target is no slower than Warp. Skipped when the example is not there.

Usage: ``python benchmarks/bench_gpu.py [--device cuda:0] [--quick] [--no-warp]``. ``--device cpu --quick`` runs
every code path on the CPU at tiny sizes (a smoke test of this script on machines without a GPU). Nothing is
asserted: the last column states the targets of issue 5.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import os
import sys
import time
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench_util import HERE, load_kernels, print_table

ROOT = HERE.parent
NS_EXAMPLE = ROOT / "examples" / "fluids" / "navier_stokes.py"


class Framework:
    """weft or warp, with the few calls the benchmarks need."""

    def __init__(self, name: str, wp, device: str):
        self.name = name
        self.wp = wp
        self.device = device
        self.kernels = load_kernels(HERE / "_core_kernels.py", wp, f"gpu_{name}")

    def sync(self) -> None:
        self.wp.synchronize_device(self.device)

    def timed(self, fn, iters: int, warmup: int = 2) -> float:
        """Seconds per call of ``fn`` (device work included), best of three samples."""
        for _ in range(warmup):
            fn()
        self.sync()
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            for _ in range(iters):
                fn()
            self.sync()
            best = min(best, (time.perf_counter() - t0) / iters)
        return best

    def capture(self, fn):
        """A graph of whatever ``fn`` launches (compiled and warmed up first)."""
        fn()
        self.sync()
        with self.wp.ScopedCapture(device=self.device) as cap:
            fn()
        return cap.graph


# ----------------------------------------------------------------------------------------------------------- saxpy
def bench_bandwidth(fw: Framework, n: int, iters: int) -> dict[str, float]:
    wp = fw.wp
    x = wp.array(np.ones(n, dtype=np.float32), dtype=float, device=fw.device)
    y = wp.zeros(n, dtype=float, device=fw.device)
    dst = wp.zeros(n, dtype=float, device=fw.device)
    saxpy = fw.kernels.saxpy
    t_saxpy = fw.timed(lambda: wp.launch(saxpy, n, inputs=[2.0, x, y], device=fw.device), iters)
    t_copy = fw.timed(lambda: wp.copy(dst, x), iters)
    return {"saxpy": 12 * n / t_saxpy / 1e9, "copy": 8 * n / t_copy / 1e9}


# ----------------------------------------------------------------------------------------------------------- launches
def bench_launch(fw: Framework, launches: int, per_graph: int) -> dict[str, float]:
    wp = fw.wp
    a = wp.zeros(1, dtype=float, device=fw.device)
    kernel = fw.kernels.saxpy

    def one():
        wp.launch(kernel, 1, inputs=[1.0, a, a], device=fw.device)

    t_plain = fw.timed(one, launches)

    def many():
        for _ in range(per_graph):
            one()

    graph = fw.capture(many)
    t_graph = fw.timed(lambda: wp.capture_launch(graph), max(launches // per_graph, 2)) / per_graph
    return {"plain": t_plain * 1e6, "graph": t_graph * 1e6}


# ----------------------------------------------------------------------------------------------------------- Navier-Stokes
def load_navier_stokes(framework: str):
    """The example module executed with ``wp`` bound to weft or warp (the source is shared, as Warp programs run
    unchanged on weft); None when the example does not exist."""
    if not NS_EXAMPLE.exists():
        return None
    if str(NS_EXAMPLE.parent) not in sys.path:
        sys.path.insert(0, str(NS_EXAMPLE.parent))  # the example's sibling modules
    name = f"_bench_navier_stokes_{framework}"
    path = NS_EXAMPLE
    if framework == "warp":  # the same program with `wp` bound to Warp, in a real file (kernels need their source)
        path = Path(os.environ.get("TMPDIR", "/tmp")) / f"{name}.py"
        path.write_text(NS_EXAMPLE.read_text().replace("import weft as wp", "import warp as wp"))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def make_solver(module, n: int, device: str):
    """Build the example's solver for an n x n grid: ``make_solver(n, device)`` if the example offers one, else the
    first class with a ``step`` method whose constructor takes the resolution (n / N / resolution / grid_size)."""
    if hasattr(module, "make_solver"):
        return module.make_solver(n, device)
    classes = [c for _, c in inspect.getmembers(module, inspect.isclass)
               if c.__module__ == module.__name__ and callable(getattr(c, "step", None))]
    for cls in classes:
        params = inspect.signature(cls).parameters
        kwargs = {}
        for key in ("n", "N", "resolution", "grid_size", "res"):
            if key in params:
                kwargs[key] = n
                break
        else:
            continue
        if "device" in params:
            kwargs["device"] = device
        return cls(**kwargs)
    raise RuntimeError(f"{NS_EXAMPLE.name}: no make_solver(n, device) and no solver class with step() taking n")


def bench_navier_stokes(fw: Framework, module, n: int, steps: int) -> float:
    """Milliseconds per step, the step replayed from a captured graph."""
    with fw.wp.ScopedDevice(fw.device):
        solver = make_solver(module, n, fw.device)
        if getattr(solver, "graph", None) is not None:  # the example records its own graph: step() replays it
            return fw.timed(solver.step, steps) * 1e3
        graph = fw.capture(solver.step)
        return fw.timed(lambda: fw.wp.capture_launch(graph), steps) * 1e3


# ----------------------------------------------------------------------------------------------------------- driver
def frameworks(device: str, use_warp: bool) -> list[Framework]:
    import weft

    out = [Framework("weft", weft, device)]
    if use_warp and not os.environ.get("BENCH_NO_WARP"):
        try:
            import warp

            warp.config.quiet = True
            warp.init()
            out.append(Framework("warp", warp, device))
        except ImportError:
            pass
        except Exception as exc:  # noqa: BLE001 - Warp present but unusable here: report and go on
            print(f"warp-lang is installed but could not be used: {exc}")
    return out


def run(device: str, quick: bool, use_warp: bool, sizes: list[int]) -> list[dict]:
    fws = frameworks(device, use_warp)
    n_bw = 1 << (18 if quick else 26)
    iters = 5 if quick else 50
    rows: dict[str, dict] = {}

    def put(key: str, unit: str, higher: bool, target: str, fw: str, value):
        rows.setdefault(key, {"name": key, "unit": unit, "higher_is_better": higher, "target": target})[fw] = value

    for fw in fws:
        bw = bench_bandwidth(fw, n_bw, iters)
        put(f"saxpy 2^{n_bw.bit_length() - 1} f32", "GB/s", True, ">= 85% of copy", fw.name, bw["saxpy"])
        put("d2d copy (same array)", "GB/s", True, "", fw.name, bw["copy"])
        put("saxpy / copy", "%", True, ">= 85", fw.name, 100.0 * bw["saxpy"] / bw["copy"])
        lo = bench_launch(fw, 200 if quick else 5000, 20 if quick else 100)
        put("launch, one by one", "us", False, "", fw.name, lo["plain"])
        put("launch, from a graph", "us", False, "", fw.name, lo["graph"])
    for fw in fws:
        try:
            module = load_navier_stokes(fw.name)
        except Exception:  # noqa: BLE001
            print(f"Navier-Stokes example failed to load for {fw.name}:\n{traceback.format_exc(limit=3)}")
            module = None
        for n in sizes:
            key = f"Navier-Stokes step N={n} (graph)"
            if module is None:
                put(key, "ms", False, "<= warp", fw.name, None)
                continue
            try:
                put(key, "ms", False, "<= warp", fw.name, bench_navier_stokes(fw, module, n, 3 if quick else 50))
            except Exception:  # noqa: BLE001 - one failing row must not lose the table
                print(f"Navier-Stokes N={n} failed for {fw.name}:\n{traceback.format_exc(limit=4)}")
                put(key, "ms", False, "<= warp", fw.name, None)
    return list(rows.values())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--quick", action="store_true", help="tiny sizes (smoke test)")
    parser.add_argument("--no-warp", action="store_true")
    parser.add_argument("--sizes", default="512,1024,2048", help="Navier-Stokes grid sizes")
    args = parser.parse_args(argv)
    import weft

    dev = weft.get_device(args.device)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.quick and args.sizes == "512,1024,2048":
        sizes = [64]
    rows = run(args.device, args.quick, not args.no_warp, sizes)
    title = f"weft GPU benchmarks on {dev} ({dev.name})" + (" [quick]" if args.quick else "")
    columns = ["weft"] + (["warp"] if any("warp" in r for r in rows) else [])
    print_table(title, rows, columns)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
