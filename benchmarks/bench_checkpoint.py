"""Gradient checkpointing: time per gradient and peak memory against the number of steps, full Tape vs
``wp.checkpoint``.

Workloads (``--workload``):

- ``stable`` (default): the stable-fluids rollout of ``examples/fluids/stable_fluids_checkpoint.py`` (N x N grid,
  advection + divergence + ``--jacobi`` Jacobi sweeps + gradient subtraction per step, every step allocating new
  arrays), one forward + backward pass to the initial velocity;
- ``perturbation``: one optimisation iteration of ``examples/fluids/optimal_perturbation.py`` (SSP-RK3 steps with a
  tile-FFT Poisson solve per stage; the full-Tape solver preallocates every stage's arrays, the checkpointed one
  allocates them as it goes), forward + backward + Adam.

Every (steps, mode) runs in a fresh process, as a user's script would (an allocator warmed up by another mode's run
would hide allocation costs): kernels are compiled and loaded by a 2-step warm-up first, then peak memory is measured
with ``tracemalloc`` over the construction of the problem and two gradient passes (every array buffer is a traced
NumPy allocation, including the buffers ``wp.checkpoint``'s pool keeps for reuse), then the time per gradient is the
median of ``--repeat`` passes without tracing (elapsed and CPU seconds; set ``WEFT_NUM_THREADS=1`` for numbers that
other jobs on a shared machine disturb less) and the minor page faults per pass (fresh memory mapped in: the
cost that made checkpointing slow before its buffer pool). The workers of the two modes alternate, so load from other jobs on a
shared machine hits both alike. ``ratio`` is checkpoint time / full-Tape time: the cost model is one extra forward
pass, about 1.3x when a backward pass costs twice a forward pass.

Usage: ``python benchmarks/bench_checkpoint.py [--workload stable|perturbation] [--steps 50 100 200 400]
[--n 64] [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

HERE = Path(__file__).resolve().parent
FLUIDS = HERE.parent / "examples" / "fluids"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(FLUIDS))

DEFAULTS = {"stable": {"n": 64, "steps": [50, 100, 200, 400, 800]},
            "perturbation": {"n": 128, "steps": [10, 20, 40, 80]}}


def make(workload: str, n: int, steps: int, checkpoint: bool, jacobi: int):
    """A zero-argument function that computes one gradient (and, for ``perturbation``, takes the Adam step)."""
    import numpy as np

    import weft as wp

    if workload == "stable":
        from stable_fluids_checkpoint import StableFluids

        sim = StableFluids(n, steps, jacobi_iters=jacobi)
        u0 = wp.zeros((n, n), dtype=wp.vec2, requires_grad=True)
        rng = np.random.default_rng(0)
        u0.assign((0.1 + 0.05 * rng.standard_normal((n, n, 2))).astype(np.float32))
        return lambda: sim.gradient(u0, checkpoint=checkpoint)
    from optimal_perturbation import OptimalPerturbation

    return OptimalPerturbation(n=n, steps=steps, checkpoint=checkpoint).iterate


def worker(workload: str, n: int, steps: int, mode: str, repeat: int, jacobi: int) -> dict:
    checkpoint = mode == "checkpoint"
    warm = make(workload, n, 2, checkpoint, jacobi)  # compile and load the kernels and their adjoints
    warm()
    del warm
    tracemalloc.start()
    run = make(workload, n, steps, checkpoint, jacobi)
    run()
    run()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    times, cpu = [], []
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        run()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults) / repeat
    return {"time": statistics.median(times), "cpu": statistics.median(cpu), "peak_mib": peak / 2**20,
            "faults": faults}


def run_worker(args, steps: int, mode: str) -> dict | None:
    cmd = [sys.executable, __file__, "--worker", mode, "--workload", args.workload, "--n", str(args.n), "--steps",
           str(steps), "--repeat", str(args.repeat), "--jacobi", str(args.jacobi)]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        print(f"  {mode} steps={steps}: worker failed ({' | '.join(tail)})")
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", choices=sorted(DEFAULTS), default="stable")
    parser.add_argument("--n", type=int, default=None, help="grid size (stable: 64, perturbation: 128)")
    parser.add_argument("--steps", type=int, nargs="+", default=None, help="numbers of steps")
    parser.add_argument("--repeat", type=int, default=5, help="timed gradient passes per worker (median)")
    parser.add_argument("--jacobi", type=int, default=12, help="Jacobi sweeps per step (stable)")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.n = args.n or DEFAULTS[args.workload]["n"]
    if args.worker:
        print(json.dumps(worker(args.workload, args.n, args.steps[0], args.worker, args.repeat, args.jacobi)))
        return

    import weft

    steps_list = args.steps or DEFAULTS[args.workload]["steps"]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"weft {weft.__version__} | {os.cpu_count()} CPU cores | load average {load:.1f} | workload "
          f"{args.workload}, N={args.n} | median of {args.repeat} gradient passes per (steps, mode), fresh process "
          f"each")
    rows = []
    for steps in steps_list:
        res = {mode: run_worker(args, steps, mode) for mode in ("full", "checkpoint")}
        rows.append((steps, res["full"], res["checkpoint"]))
        _print_row(*rows[-1])
    print(f"\nwp.checkpoint vs full Tape ({args.workload}, N={args.n}): seconds per gradient and peak traced MiB")
    print("(s: elapsed seconds; cpu: CPU seconds of all threads, less sensitive to other jobs on the machine; "
          "faults: minor page faults per gradient)")
    header = (f"{'steps':>6} {'full s':>8} {'ckpt s':>8} {'ckpt/full':>9} {'full cpu':>9} {'ckpt cpu':>9} "
              f"{'ckpt/full':>9} {'full MiB':>9} {'ckpt MiB':>9} {'full/ckpt':>9} {'faults full':>11} "
              f"{'faults ckpt':>11}")
    print(header)
    print("-" * len(header))
    for steps, full, ck in rows:
        if not (full and ck):
            print(f"{steps:>6} {'-':>8}")
            continue
        print(f"{steps:>6} {full['time']:8.3f} {ck['time']:8.3f} {ck['time'] / full['time']:8.2f}x "
              f"{full['cpu']:9.3f} {ck['cpu']:9.3f} {ck['cpu'] / full['cpu']:8.2f}x "
              f"{full['peak_mib']:9.1f} {ck['peak_mib']:9.1f} {full['peak_mib'] / ck['peak_mib']:8.1f}x "
              f"{full['faults']:11.0f} {ck['faults']:11.0f}")


def _print_row(steps: int, full: dict | None, ck: dict | None) -> None:
    if full and ck:
        print(f"  steps={steps:5d}  full Tape {full['time']:.3f} s, {full['peak_mib']:.1f} MiB | checkpoint "
              f"{ck['time']:.3f} s, {ck['peak_mib']:.1f} MiB | time x{ck['time'] / full['time']:.2f}, memory "
              f"/{full['peak_mib'] / max(ck['peak_mib'], 1e-9):.1f}", flush=True)


if __name__ == "__main__":
    main()
