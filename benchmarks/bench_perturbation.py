"""Optimal perturbation (examples/fluids/optimal_perturbation.py): time per optimisation iteration and memory with
and without gradients, weft CPU (full Tape and ``wp.checkpoint``) vs PyTorch CPU (autograd).

One iteration = forward rollout of ``--steps`` SSP-RK3 steps from omega_0 + delta_omega, loss = -MSE against the
unperturbed trajectory, backward to delta_omega, an Adam step and the RMS projection. The PyTorch column is a port of
the same differentiable solver (the ``TorchSolver`` of bench_navier_stokes.py: central differences, ``torch.fft``
Poisson solve after every stage) differentiated by autograd, with ``torch.optim.Adam``. "forward only" is the same
rollout without gradients (weft: the forward solver ``NavierStokes2D``, replayed; torch: under ``no_grad``).

Every (framework, N) cell runs in a fresh subprocess (kernels compiled and loaded by a warm-up first). Memory is the
peak resident set of a phase above the resident set at its start: the kernel's high-water mark (VmHWM) is reset
through ``/proc/self/clear_refs`` before each phase. The with-gradients phase counts everything it allocates: the
solver's arrays (weft: per-stage arrays and their gradients, allocated once; torch: the autograd graph's saved
tensors), the optimiser state and Y*.

Usage: ``python benchmarks/bench_perturbation.py [--full] [--steps 20] [--repeat 3] [--sizes 128 256]``.
``--full`` adds N = 512. Target of issue 7 on a 2-core machine: one iteration at N = 512 <= 1.4 s (Warp: 13.8 s).
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
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
FLUIDS = HERE.parent / "examples" / "fluids"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(FLUIDS))


def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _reset_peak() -> float:
    """Reset the kernel's resident-set high-water mark (Linux >= 4.0) and return the current resident set."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass  # then the peak below is the process's peak so far
    return _rss_mib()


def _peak_mib() -> float:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def _median_seconds(fn, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


# ------------------------------------------------------------------------------------------ workers
def worker_weft(n: int, steps: int, repeat: int, checkpoint: bool) -> dict:
    from navier_stokes import NavierStokes2D
    from optimal_perturbation import OptimalPerturbation

    import weft as wp

    # compile and load every kernel (forward and adjoint, this N) on a throwaway 1-step problem
    warm = OptimalPerturbation(n=n, steps=1, checkpoint=checkpoint)
    warm.iterate()
    del warm
    base = _reset_peak()
    sim = NavierStokes2D(n=n)
    sim.step()

    def forward():
        for _ in range(steps):
            sim.step()

    t_fwd = _median_seconds(forward, repeat)
    peak_fwd = _peak_mib() - base
    base = _reset_peak()
    problem = OptimalPerturbation(n=n, steps=steps, checkpoint=checkpoint)
    problem.iterate()
    t_iter = _median_seconds(problem.iterate, repeat)
    peak_grad = _peak_mib() - base
    wp.synchronize()
    return {"iter": t_iter, "forward": t_fwd, "mem_grad": peak_grad, "mem_fwd": peak_fwd, "mse": problem.mse()}


def worker_torch(n: int, steps: int, repeat: int) -> dict:
    import torch
    from bench_navier_stokes import TorchSolver
    from ns_reference import RK3_COEFFS, initial_vorticity, stable_dt
    from optimal_perturbation import RMS_FRACTION

    torch.set_num_threads(os.cpu_count() or 1)
    omega0_np = initial_vorticity(n, 42)
    re = 1000.0
    dt = stable_dt(omega0_np, re)
    solver = TorchSolver(torch, omega0_np, re, dt)
    omega0 = solver.omega.clone()

    def rollout(omega):
        psi = solver.poisson(omega)
        for _ in range(steps):
            omega_start = omega
            for c0, c1, c2 in RK3_COEFFS:
                omega = c0 * omega_start + c1 * omega + c2 * dt * solver.rhs(omega, psi)
                psi = solver.poisson(omega)
        return omega

    with torch.no_grad():  # warm-up
        rollout(omega0)
    base = _reset_peak()
    with torch.no_grad():
        target = rollout(omega0)
        t_fwd = _median_seconds(lambda: rollout(omega0), repeat)
    peak_fwd = _peak_mib() - base

    init = initial_vorticity(n, 43)
    rms0 = float(omega0.pow(2).mean().sqrt())
    init *= 0.01 * rms0 / np.sqrt(np.mean(init**2))
    delta = torch.tensor(init.astype(np.float32), requires_grad=True)
    opt = torch.optim.Adam([delta], lr=0.05)
    bound = RMS_FRACTION * rms0
    last = {}
    base = _reset_peak()

    def iterate():
        opt.zero_grad()
        final = rollout(omega0 + delta)
        loss = -torch.mean((target - final) ** 2)
        loss.backward()
        opt.step()
        with torch.no_grad():
            rms = delta.pow(2).mean().sqrt()
            if rms > bound:
                delta.mul_(bound / rms)
        last["loss"] = float(loss)

    iterate()
    t_iter = _median_seconds(iterate, repeat)
    peak_grad = _peak_mib() - base
    return {"iter": t_iter, "forward": t_fwd, "mem_grad": peak_grad, "mem_fwd": peak_fwd, "mse": -last["loss"]}


def run_worker(framework: str, n: int, steps: int, repeat: int) -> dict | None:
    cmd = [sys.executable, __file__, "--worker", framework, "--sizes", str(n), "--steps", str(steps),
           "--repeat", str(repeat)]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        print(f"{framework} N={n}: failed ({' | '.join(tail)})")
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------------------------ main
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="also N = 512")
    parser.add_argument("--sizes", type=int, nargs="+", default=None, help="grid sizes (default 128 256)")
    parser.add_argument("--steps", type=int, default=20, help="time steps to the lead time per iteration")
    parser.add_argument("--repeat", type=int, default=3, help="timed iterations per cell (median)")
    parser.add_argument("--no-torch", action="store_true", help="leave PyTorch out")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker:
        n = args.sizes[0]
        if args.worker == "torch":
            out = worker_torch(n, args.steps, args.repeat)
        else:
            out = worker_weft(n, args.steps, args.repeat, checkpoint=args.worker == "weft_ckpt")
        print(json.dumps(out))
        return

    from _bench_util import print_table

    sizes = args.sizes or ([128, 256, 512] if args.full else [128, 256])
    frameworks = ["weft", "weft_ckpt"]
    torch_version = "-"
    if not args.no_torch:
        try:
            import torch

            frameworks.append("torch")
            torch_version = torch.__version__
        except ImportError:
            pass
    import weft

    print(f"weft {weft.__version__} | torch {torch_version} | {os.cpu_count()} CPU cores | {args.steps} steps per "
          f"iteration, median of {args.repeat}")
    rows = []
    for n in sizes:
        results = {}
        for fw in frameworks:
            results[fw] = run_worker(fw, n, args.steps, args.repeat)
            r = results[fw]
            if r is not None:
                print(f"  N={n} {fw:9s} iteration {r['iter']:.3f} s, forward {r['forward']:.3f} s, memory "
                      f"{r['mem_grad']:.0f} MiB with gradients / {r['mem_fwd']:.0f} MiB forward only, "
                      f"MSE after {args.repeat + 1} iterations {r['mse']:.4g}", flush=True)
        spec = [("iteration (fwd+bwd+Adam)", "iter", "s", "<= 1.4 s" if n == 512 else ""),
                ("forward only", "forward", "s", ""),
                ("memory with gradients", "mem_grad", "MiB", ""),
                ("memory forward only", "mem_fwd", "MiB", "")]
        for label, key, unit, target in spec:
            row = {"name": f"N={n} {label}", "unit": unit, "target": target}
            for fw, r in results.items():
                row[fw] = r[key] if r is not None else None
            rows.append(row)
    columns = [c for c in frameworks if any(r.get(c) is not None for r in rows)]
    print_table(f"Optimal perturbation, {args.steps} steps per iteration (float32, CPU); weft_ckpt = wp.checkpoint; "
                "'weft vs X' > 1 means weft is faster / smaller", rows, columns)


if __name__ == "__main__":
    main()
