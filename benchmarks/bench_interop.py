"""Per-call cost of weft's PyTorch interop against the same math in plain torch.

For y = x**3 + sin(x) over n float32 values it times: plain torch; ``wp.launch`` with torch tensors as arguments
(zero-copy views, no autograd); the ``weft.interop.torch.kernel_op`` wrapper in forward only (no grad) and in
forward + backward (Tape recording, seeding, adjoint launch); and the bare conversions ``wp.from_torch`` and
``wp.to_torch``. Small n shows the fixed per-call overhead; large n the kernels themselves.

    python benchmarks/bench_interop.py            # n = 1, 1e3, 1e5, 1e6
    python benchmarks/bench_interop.py --small    # quick
"""

from __future__ import annotations

import os

# Both weft and torch run OpenMP pools; passive waiting keeps one's idle pool off the cores the other needs
# (see docs/interop.md). Set before the imports; run with OMP_WAIT_POLICY=ACTIVE to see the difference.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import time

import torch

import weft as wp
from weft.interop.api import from_torch, to_torch
from weft.interop.torch import kernel_op


@wp.kernel
def poly(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    y[i] = v * v * v + wp.sin(v)


poly_op = kernel_op(poly)


def per_call_us(fn, budget_s: float) -> float:
    fn()
    fn()
    calls, start = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed > budget_s and calls >= 5:
            return elapsed / calls * 1e6


def bench(n: int, budget_s: float) -> dict[str, float]:
    x = torch.rand(n)
    xg = x.clone().requires_grad_(True)
    y = torch.empty(n)
    wx = wp.zeros(n)

    def torch_fwd():
        return x**3 + torch.sin(x)

    def torch_fwd_bwd():
        xg.grad = None
        (xg**3 + torch.sin(xg)).sum().backward()

    def launch_tensors():
        wp.launch(poly, n, inputs=[x], outputs=[y])

    def wrapper_fwd():
        with torch.no_grad():
            return poly_op(x)

    def wrapper_fwd_bwd():
        xg.grad = None
        poly_op(xg).sum().backward()

    return {
        "torch fwd": per_call_us(torch_fwd, budget_s),
        "wp.launch(tensors)": per_call_us(launch_tensors, budget_s),
        "wrapper fwd": per_call_us(wrapper_fwd, budget_s),
        "torch fwd+bwd": per_call_us(torch_fwd_bwd, budget_s),
        "wrapper fwd+bwd": per_call_us(wrapper_fwd_bwd, budget_s),
        "from_torch": per_call_us(lambda: from_torch(x), budget_s),
        "to_torch": per_call_us(lambda: to_torch(wx), budget_s),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true")
    args = parser.parse_args()
    sizes = [1, 1000] if args.small else [1, 1000, 100_000, 1_000_000]
    budget = 0.05 if args.small else 0.5
    rows = {n: bench(n, budget) for n in sizes}
    cols = list(next(iter(rows.values())))
    print(f"microseconds per call (torch {torch.__version__}, {torch.get_num_threads()} torch threads, "
          f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')})")
    print(f"{'n':>9} | " + " | ".join(f"{c:>18}" for c in cols))
    print("-" * (12 + 21 * len(cols)))
    for n, r in rows.items():
        print(f"{n:>9} | " + " | ".join(f"{r[c]:>18.1f}" for c in cols))


if __name__ == "__main__":
    main()
