"""Per-step time of Warp 1.19's own CPU-capable examples, run unchanged under weft and under Warp, in one run.

The examples are read from an installed ``warp-lang`` wheel (never copied into this repository): by default from the
interpreter given by ``--warp-python`` (or ``$WARP_PYTHON``; ``/opt/warp119/bin/python`` when it exists, else this
interpreter if it can import ``warp``). Each (example, framework) pair runs in its own process
(``_example_driver.py``): the example's ``Example`` is built headless, its ``step()`` (or ``render()`` for the ray
tracers) is called once to compile and warm up, then timed. weft runs with its default thread count (every core it
is given); Warp's CPU backend runs one thread. Kernel caches are warm for neither on the first row of a fresh machine;
the first-call column (build + compile + first step) is reported for information, not compared.

    python benchmarks/bench_warp_examples.py                 # all examples, >= 2 s of steps each
    python benchmarks/bench_warp_examples.py --only sph dem  # a subset
    python benchmarks/bench_warp_examples.py --seconds 0.5   # quicker, noisier

Prints a table: ms per step under weft and Warp (wall; process CPU in brackets), the ratio Warp / weft (higher is
better for weft), and why a row failed when it did (the first line of the example's error).

    python benchmarks/bench_warp_examples.py --cpu-time      # process CPU time, weft and Warp on one thread each

``--cpu-time`` is the mode for a loaded machine (wall times of the same row varied 7x with other jobs on the cores):
weft runs on one thread (``WEFT_NUM_THREADS=1``, as Warp's CPU backend always does), each row is timed for
``--seconds`` of process CPU time instead of wall time, the ratio is of CPU times, and the load average is printed
before and after the run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DRIVER = HERE / "_example_driver.py"


@dataclass(frozen=True)
class ExampleCase:
    name: str
    path: str  # relative to warp/examples
    method: str = "step"


CASES = (
    ExampleCase("fft_poisson_navier_stokes_2d", "core/example_fft_poisson_navier_stokes_2d.py"),
    ExampleCase("fluid (grid, 100 pressure iterations)", "core/example_fluid.py"),
    ExampleCase("wave", "core/example_wave.py"),
    ExampleCase("sph", "core/example_sph.py"),
    ExampleCase("dem", "core/example_dem.py"),
    ExampleCase("fdtd_3d", "core/example_fdtd_3d.py"),
    ExampleCase("mesh (particles vs mesh)", "core/example_mesh.py"),
    ExampleCase("sample_mesh", "core/example_sample_mesh.py"),
    ExampleCase("raycast (render)", "core/example_raycast.py", "render"),
    ExampleCase("raymarch (render)", "core/example_raymarch.py", "render"),
    ExampleCase("tile_nbody", "tile/example_tile_nbody.py"),
    ExampleCase("particle_repulsion (optim)", "optim/example_particle_repulsion.py"),
    ExampleCase("navier_stokes_perturbation (optim)", "optim/example_navier_stokes_perturbation.py"),
)


def default_warp_python() -> str | None:
    for candidate in (os.environ.get("WARP_PYTHON"), "/opt/warp119/bin/python"):
        if candidate and Path(candidate).exists():
            return candidate
    try:
        import warp  # noqa: F401
    except ImportError:
        return None
    return sys.executable


def warp_examples_dir(python: str) -> Path:
    out = subprocess.run([python, "-c", "import os, warp; print(os.path.dirname(warp.__file__))"],
                         capture_output=True, text=True, check=True)
    return Path(out.stdout.strip()) / "examples"


def run_case(python: str, framework: str, example: Path, method: str, seconds: float, max_steps: int,
             timeout: float, env: dict, cpu_time: bool = False) -> dict:
    cmd = [python, str(DRIVER), framework, str(example), method, str(seconds), str(max_steps),
           "cpu" if cpu_time else "wall"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=tempfile.gettempdir())
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        # the exception's line, not the caret markers Python prints under the failing expression
        err = [ln for ln in proc.stderr.strip().splitlines() if ln.strip().strip("^~ ")]
        return {"error": err[-1][:110] if err else f"exit code {proc.returncode}"}
    return json.loads(lines[-1])


def _load() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def fmt(result: dict) -> str:
    if "error" in result:
        return "failed"
    return f"{result['wall_s'] * 1e3:9.2f} ({result['cpu_s'] * 1e3:8.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--warp-python", default=default_warp_python(), help="interpreter with warp-lang 1.19")
    parser.add_argument("--only", nargs="*", help="substrings of example names to run")
    parser.add_argument("--seconds", type=float, default=2.0,
                        help="minimum timed seconds per row (wall, or process CPU with --cpu-time)")
    parser.add_argument("--max-steps", type=int, default=200)
    parser.add_argument("--timeout", type=float, default=600.0, help="per example and framework")
    parser.add_argument("--no-warp", action="store_true", help="time weft only")
    parser.add_argument("--cpu-time", action="store_true",
                        help="compare process CPU time, weft on one thread like Warp (for loaded machines)")
    args = parser.parse_args()
    if args.warp_python is None:
        sys.exit("bench_warp_examples: warp-lang is needed as the source of the examples (--warp-python)")
    examples = warp_examples_dir(args.warp_python)

    weft_env = dict(os.environ)
    weft_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    weft_env.setdefault("WEFT_CACHE_DIR", str(Path(tempfile.gettempdir()) / "weft-bench-examples-cache"))
    warp_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if args.cpu_time:
        weft_env["WEFT_NUM_THREADS"] = "1"
    clock = "cpu_s" if args.cpu_time else "wall_s"

    cases = [c for c in CASES if not args.only or any(s in c.name for s in args.only)]
    print(f"Warp's examples from {examples} ({os.cpu_count()} CPUs; weft threads: "
          f"{weft_env.get('WEFT_NUM_THREADS', 'default')}; Warp CPU: 1 thread; ratio of "
          f"{'process CPU' if args.cpu_time else 'wall'} times; load average {_load()})")
    header = f"{'example':40s} {'weft ms/step (cpu)':>22s} {'Warp ms/step (cpu)':>22s} {'Warp/weft':>9s} {'weft 1st s':>10s}"
    print(header)
    print("-" * len(header))
    failures = []
    for case in cases:
        path = examples / case.path
        weft = run_case(sys.executable, "weft", path, case.method, args.seconds, args.max_steps, args.timeout,
                        weft_env, args.cpu_time)
        warp = ({"error": "not run"} if args.no_warp else
                run_case(args.warp_python, "warp", path, case.method, args.seconds, args.max_steps, args.timeout,
                         warp_env, args.cpu_time))
        ratio = (f"{warp[clock] / weft[clock]:8.2f}x" if "error" not in weft and "error" not in warp
                 else "       -")
        first = f"{weft['first_s']:10.2f}" if "error" not in weft else "         -"
        print(f"{case.name:40s} {fmt(weft):>22s} {fmt(warp):>22s} {ratio:>9s} {first}", flush=True)
        for who, res in (("weft", weft), ("Warp", warp)):
            if "error" in res and res["error"] != "not run":
                failures.append(f"  {case.name} under {who}: {res['error']}")
    print(f"load average at the end: {_load()}")
    if failures:
        print("\nfailed rows:")
        print("\n".join(failures))


if __name__ == "__main__":
    main()
