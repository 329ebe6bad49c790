"""Distributed Navier-Stokes (examples/distributed/navier_stokes_mpi.py): time per step and the share spent in
communication on 1 and 2 MPI ranks, with the message counts and bytes per step that docs/distributed.md's model
predicts.

Usage: ``python benchmarks/bench_distributed.py [--sizes 128 256] [--ranks 1 2] [--steps 50] [--quick]``. The
script starts ``mpirun`` itself (``--oversubscribe``, one thread per rank). Each rank times its steps (wall clock
and its own CPU time) and counts what ``weft.distributed`` sent (``comm_stats``); rank 0 reports the maximum over
ranks. "comm" is wall time inside halo exchanges and all-to-alls (MPI calls, waits, staging; packing kernels
excluded), so on an oversubscribed machine it includes the time a rank waits for a slower one.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def model(n: int, ranks: int) -> dict:
    """Messages and bytes one rank sends per time step (docs/distributed.md, float32 field, complex64 spectrum)."""
    p = ranks
    halo_msgs = 3 * 2 * 2 if p > 1 else 0  # 3 stages x (omega, psi) x 2 neighbours along the split axis
    halo_bytes = 3 * 2 * 2 * 4 * n if p > 1 else 0  # faces only: the n owned points of a row
    a2a_msgs = 3 * 2 * (p - 1)  # 3 stages x (forward, inverse) x (P - 1) blocks
    a2a_bytes = 3 * 2 * (p - 1) * 8 * (n // p) ** 2
    return {"messages": halo_msgs + a2a_msgs, "bytes": halo_bytes + a2a_bytes}


def worker(n: int, steps: int) -> None:
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "examples" / "distributed"))
    from mpi4py import MPI
    from navier_stokes_mpi import DistributedNavierStokes2D

    import weft.distributed as wd

    comm = MPI.COMM_WORLD
    sim = DistributedNavierStokes2D(n=n)
    for _ in range(3):
        sim.step()
    comm.Barrier()
    wd.reset_comm_stats()
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps):
        sim.step()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    stats = wd.comm_stats()
    # self-messages (the undecomposed axis, one-rank runs) are local copies: count only messages to other ranks
    mine = {"wall": wall / steps, "cpu": cpu / steps, "comm": stats.total_seconds / steps,
            "bytes": sum(stats.bytes.values()) / steps, "messages": sum(stats.messages.values()) / steps}
    everyone = comm.gather(mine, root=0)
    if comm.Get_rank() == 0:
        out = {k: max(r[k] for r in everyone) for k in mine}
        out.update(n=n, ranks=comm.Get_size())
        print(json.dumps(out))


def run(n: int, ranks: int, steps: int) -> dict:
    launcher = shutil.which("mpirun") or str(Path(sys.executable).parent / "mpirun")
    cmd = [launcher, "--oversubscribe", "-n", str(ranks), sys.executable, __file__, "--worker", "--sizes", str(n),
           "--steps", str(steps)]
    if os.geteuid() == 0:
        cmd.insert(1, "--allow-run-as-root")
    env = {**os.environ, "WEFT_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return json.loads([line for line in proc.stdout.splitlines() if line.startswith("{")][-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[128, 256])
    parser.add_argument("--ranks", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--quick", action="store_true", help="N = 64, 20 steps")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.steps = [64], 20
    if args.worker:
        worker(args.sizes[0], args.steps)
        return
    print(f"{'N':>5} {'ranks':>5} {'ms/step':>9} {'CPU ms/step':>12} {'comm %':>7} {'msgs/step':>10} "
          f"{'model':>6} {'KiB/step':>9} {'model':>9}")
    for n in args.sizes:
        for ranks in args.ranks:
            r = run(n, ranks, args.steps)
            m = model(n, ranks)
            print(f"{n:>5} {ranks:>5} {1e3 * r['wall']:>9.2f} {1e3 * r['cpu']:>12.2f} "
                  f"{100 * r['comm'] / r['wall']:>6.0f}% {r['messages']:>10.0f} {m['messages']:>6} "
                  f"{r['bytes'] / 1024:>9.1f} {m['bytes'] / 1024:>9.1f}")


if __name__ == "__main__":
    main()
