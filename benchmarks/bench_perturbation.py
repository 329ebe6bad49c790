"""Optimal perturbation (examples/fluids/optimal_perturbation.py): time per optimisation iteration and memory with
and without gradients, weft CPU (full Tape and ``wp.checkpoint``) vs PyTorch CPU (autograd).

Columns: ``weft`` (arrays per RK stage, full Tape), ``weft_shared`` (the same with one set of FFT arrays for every
Poisson solve, ``--share-fft-scratch``), ``weft_ckpt`` (``wp.checkpoint``), ``torch``.

One iteration = forward rollout of ``--steps`` SSP-RK3 steps from omega_0 + delta_omega, loss = -MSE against the
unperturbed trajectory, backward to delta_omega, an Adam step and the RMS projection. The PyTorch column is a port of
the same differentiable solver (the ``TorchSolver`` of bench_navier_stokes.py: central differences, ``torch.fft``
Poisson solve after every stage) differentiated by autograd, with ``torch.optim.Adam``. "forward only" is the same
rollout without gradients (weft: the forward solver ``NavierStokes2D``, replayed; torch: under ``no_grad``).

Times are medians over rounds in which the frameworks take turns (weft, weft_ckpt, torch, weft, ...), so load from
other jobs on a shared machine hits every column alike. Memory is measured in a fresh subprocess per (framework, N)
(kernels compiled and loaded by a 1-step warm-up first): the peak resident set of a phase above the resident set at its start: the kernel's high-water mark (VmHWM) is reset
through ``/proc/self/clear_refs`` before each phase. The with-gradients phase counts everything it allocates: the
solver's arrays (weft: per-stage arrays and their gradients, allocated once; torch: the autograd graph's saved
tensors), the optimiser state and Y*.

``--cpu-time`` times by process CPU seconds instead of wall clock, with weft and PyTorch on one thread each
(``WEFT_NUM_THREADS=1``, ``torch.set_num_threads(1)``): the comparison to use on a machine other jobs load, where
wall-clock times mostly measure the other jobs.

Usage: ``python benchmarks/bench_perturbation.py [--full] [--steps 20] [--repeat 3] [--sizes 128 256] [--cpu-time]``.
``--full`` adds N = 512. Target of issue 7 on a 2-core machine: one iteration at N = 512 <= 1.4 s (Warp: 13.8 s).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
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


# ------------------------------------------------------------------------------------------ the two solvers
class WeftProblem:
    """weft: ``NavierStokes2D`` (forward only, replayed) and ``OptimalPerturbation`` (one iteration)."""

    def __init__(self, n: int, steps: int, checkpoint: bool = False, grad: bool = True, share: bool = False):
        from navier_stokes import NavierStokes2D
        from optimal_perturbation import OptimalPerturbation

        self.steps = steps
        self.sim = NavierStokes2D(n=n)
        self.problem = None
        if grad:
            self.problem = OptimalPerturbation(n=n, steps=steps, checkpoint=checkpoint, share_fft_scratch=share)

    def forward(self) -> None:
        for _ in range(self.steps):
            self.sim.step()

    def iterate(self) -> None:
        self.problem.iterate()

    def mse(self) -> float:
        return self.problem.mse()


class TorchProblem:
    """PyTorch: the same differentiable solver (``bench_navier_stokes.TorchSolver``'s operators), autograd, Adam."""

    def __init__(self, n: int, steps: int, grad: bool = True):
        import torch
        from bench_navier_stokes import TorchSolver
        from ns_reference import initial_vorticity, stable_dt
        from optimal_perturbation import RMS_FRACTION

        self.torch = torch
        torch.set_num_threads(os.cpu_count() or 1)
        self.steps = steps
        omega0 = initial_vorticity(n, 42)
        self.dt = stable_dt(omega0, 1000.0)
        self.solver = TorchSolver(torch, omega0, 1000.0, self.dt)
        self.omega0 = self.solver.omega.clone()
        self.target = None
        if not grad:
            return
        with torch.no_grad():
            self.target = self.rollout(self.omega0)
        init = initial_vorticity(n, 43)  # OptimalPerturbation's start: seed + 1, 1% of rms(omega_0)
        rms0 = float(self.omega0.pow(2).mean().sqrt())
        init *= 0.01 * rms0 / np.sqrt(np.mean(init**2))
        self.delta = torch.tensor(init.astype(np.float32), requires_grad=True)
        self.opt = torch.optim.Adam([self.delta], lr=0.05)
        self.bound = RMS_FRACTION * rms0
        self.loss = 0.0

    def rollout(self, omega):
        from ns_reference import RK3_COEFFS

        solver, dt = self.solver, self.dt
        psi = solver.poisson(omega)
        for _ in range(self.steps):
            omega_start = omega
            for c0, c1, c2 in RK3_COEFFS:
                omega = c0 * omega_start + c1 * omega + c2 * dt * solver.rhs(omega, psi)
                psi = solver.poisson(omega)
        return omega

    def forward(self) -> None:
        with self.torch.no_grad():
            self.rollout(self.omega0)

    def iterate(self) -> None:
        torch = self.torch
        self.opt.zero_grad()
        final = self.rollout(self.omega0 + self.delta)
        loss = -torch.mean((self.target - final) ** 2)
        loss.backward()
        self.opt.step()
        with torch.no_grad():
            rms = self.delta.pow(2).mean().sqrt()
            if rms > self.bound:
                self.delta.mul_(self.bound / rms)
        self.loss = float(loss.detach())

    def mse(self) -> float:
        with self.torch.no_grad():
            return float(((self.target - self.rollout(self.omega0 + self.delta)) ** 2).mean())


def make(framework: str, n: int, steps: int, grad: bool = True):
    if framework == "torch":
        return TorchProblem(n, steps, grad)
    return WeftProblem(n, steps, checkpoint=framework == "weft_ckpt", grad=grad, share=framework == "weft_shared")


def worker_memory(framework: str, n: int, steps: int) -> dict:
    """Peak resident MiB of the forward-only rollout and of optimisation iterations, in this fresh process."""
    warm = make(framework, n, 1)  # compile and load every kernel (forward and adjoint) for this N
    warm.forward()
    warm.iterate()
    del warm
    base = _reset_peak()
    fwd = make(framework, n, steps, grad=False)
    fwd.forward()
    peak_fwd = _peak_mib() - base
    del fwd
    base = _reset_peak()
    prob = make(framework, n, steps)
    prob.iterate()
    prob.iterate()
    peak_grad = _peak_mib() - base
    return {"mem_grad": peak_grad, "mem_fwd": peak_fwd}


def run_worker(framework: str, n: int, steps: int) -> dict | None:
    cmd = [sys.executable, __file__, "--worker", framework, "--sizes", str(n), "--steps", str(steps)]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        print(f"{framework} N={n}: memory run failed ({' | '.join(tail)})")
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def bench_size(n: int, frameworks: list[str], steps: int, rounds: int, cpu_time: bool = False) -> dict[str, dict]:
    """Seconds per iteration and per forward rollout (interleaved rounds, in this process), memory (subprocesses)."""
    import time

    from _bench_util import interleaved_times, process_cpu_time

    problems = {fw: make(fw, n, steps) for fw in frameworks}
    if cpu_time and "torch" in problems:
        problems["torch"].torch.set_num_threads(1)  # TorchProblem asks for every core
    clock = process_cpu_time if cpu_time else time.perf_counter
    t_iter = interleaved_times({fw: p.iterate for fw, p in problems.items()}, rounds, clock=clock)
    t_fwd = interleaved_times({fw: p.forward for fw, p in problems.items()}, rounds, clock=clock)
    results = {}
    for fw, p in problems.items():
        results[fw] = {"iter": t_iter[fw], "forward": t_fwd[fw], "mse": p.mse()}
    del problems
    for fw in frameworks:
        mem = run_worker(fw, n, steps)
        results[fw].update(mem or {"mem_grad": None, "mem_fwd": None})
    return results


# ------------------------------------------------------------------------------------------ main
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="also N = 512")
    parser.add_argument("--sizes", type=int, nargs="+", default=None, help="grid sizes (default 128 256)")
    parser.add_argument("--steps", type=int, default=20, help="time steps to the lead time per iteration")
    parser.add_argument("--repeat", type=int, default=3, help="timed rounds (median; frameworks interleaved)")
    parser.add_argument("--no-torch", action="store_true", help="leave PyTorch out")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time by process CPU seconds, weft and PyTorch on one thread each (loaded machines)")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cpu_time:
        os.environ["WEFT_NUM_THREADS"] = "1"  # read when weft is imported (below)

    if args.worker:
        print(json.dumps(worker_memory(args.worker, args.sizes[0], args.steps)))
        return

    from _bench_util import print_table

    sizes = args.sizes or ([128, 256, 512] if args.full else [128, 256])
    frameworks = ["weft", "weft_shared", "weft_ckpt"]
    torch_version = "-"
    if not args.no_torch:
        try:
            import torch

            frameworks.append("torch")
            torch_version = torch.__version__
        except ImportError:
            pass
    import weft

    clock = "CPU seconds, one thread each" if args.cpu_time else "wall clock"
    print(f"weft {weft.__version__} | torch {torch_version} | {os.cpu_count()} CPU cores | {args.steps} steps per "
          f"iteration, median of {args.repeat} | {clock}")
    rows = []
    for n in sizes:
        results = bench_size(n, frameworks, args.steps, args.repeat, args.cpu_time)
        for fw, r in results.items():
            mem = "-" if r["mem_grad"] is None else f"{r['mem_grad']:.0f} MiB with gradients / {r['mem_fwd']:.0f} MiB"
            print(f"  N={n} {fw:9s} iteration {r['iter']:.3f} s, forward {r['forward']:.3f} s, memory {mem} "
                  f"forward only, MSE after {args.repeat + 1} iterations {r['mse']:.4g}", flush=True)
        spec = [("iteration (fwd+bwd+Adam)", "iter", "s", "<= 1.4 s" if n == 512 else ""),
                ("forward only", "forward", "s", ""),
                ("memory with gradients", "mem_grad", "MiB", ""),
                ("memory forward only", "mem_fwd", "MiB", "")]
        for label, key, unit, target in spec:
            row = {"name": f"N={n} {label}", "unit": unit, "target": target}
            for fw, r in results.items():
                row[fw] = r[key]
            rows.append(row)
    columns = [c for c in frameworks if any(r.get(c) is not None for r in rows)]
    print_table(f"Optimal perturbation, {args.steps} steps per iteration (float32, CPU); weft: arrays per RK stage, "
                "weft_shared: one set of FFT arrays (--share-fft-scratch), weft_ckpt: wp.checkpoint; "
                "'weft vs X' > 1 means weft is faster / smaller", rows, columns)


if __name__ == "__main__":
    main()
