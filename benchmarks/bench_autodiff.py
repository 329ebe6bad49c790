"""Cost of reverse-mode autodiff in weft, side by side with PyTorch autograd and NVIDIA Warp (CPU, when installed).

Two workloads:

1. ``rk3_update``, one SSP-RK3 substep of the 2-D Navier-Stokes seed on an N x N periodic grid (N = 512, float32);
2. ``mat_chain``, a mat33-heavy kernel per element (F = A B, inverse, determinant, transposes, products),
   M = 2^18 elements (float32).

For each framework: the forward time (plain launch, no tape / no autograd graph), the backward time (the recorded
launch's adjoint, seeded with a random output gradient; the forward is not included), their ratio, and memory:
bytes of arrays without gradients (inputs and outputs), and with gradients (plus every ``.grad`` array and every
buffer the framework keeps for the backward pass: weft's replay snapshots, PyTorch's saved tensors). weft and Warp
replay the forward inside the adjoint kernel, so they keep nothing but the ``.grad`` arrays; when every array of a
kernel needs a gradient, the ratio is 2.0 by construction.

Usage: ``python benchmarks/bench_autodiff.py [--quick] [--no-warp] [--no-torch]``. No timing is asserted; the last
column lists the targets of issue 3.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench_util import HERE, load_kernels, median_time, optional_torch, optional_warp, print_table

COLUMNS = ["weft", "torch", "warp"]


# ------------------------------------------------------------------------------------------------ warp-like (weft,
# NVIDIA Warp): the same kernel source, the Tape
def _nbytes(a) -> int:
    return int(a.numpy().nbytes)


def bench_kernel_framework(wp, mod, workload: str, size: int, repeat: int, framework: str) -> dict:
    rng = np.random.default_rng(0)
    if workload == "rk3":
        n = size
        shape = (n, n)
        arrays = [wp.array(rng.standard_normal(shape).astype(np.float32), dtype=float, requires_grad=True)
                  for _ in range(3)]
        out = wp.zeros(shape, dtype=float, requires_grad=True)
        h = 2 * np.pi / n
        scalars = [n, h, 1000.0, 1e-3, 0.75, 0.25, 0.25]
        kernel, dim, inputs = mod.rk3_update, shape, scalars + arrays
        seed = rng.standard_normal(shape).astype(np.float32)
    else:
        m = size
        mats = (np.eye(3) + 0.2 * rng.standard_normal((2, m, 3, 3))).astype(np.float32)
        arrays = [wp.array(mats[k], dtype=wp.mat33, requires_grad=True) for k in range(2)]
        out = wp.zeros(m, dtype=wp.mat33, requires_grad=True)
        kernel, dim, inputs = mod.mat_chain, m, list(arrays)
        seed = rng.standard_normal((m, 3, 3)).astype(np.float32)
    seed_arr = wp.array(seed, dtype=out.dtype)

    def forward():
        wp.launch(kernel, dim=dim, inputs=inputs, outputs=[out], device="cpu")
        wp.synchronize()

    fwd = median_time(forward, repeat)
    tape = wp.Tape()
    with tape:
        wp.launch(kernel, dim=dim, inputs=inputs, outputs=[out], device="cpu")

    def backward():
        tape.backward(grads={out: seed_arr})
        wp.synchronize()

    bwd = median_time(backward, repeat)
    data = sum(_nbytes(a) for a in arrays) + _nbytes(out)
    grads = sum(_nbytes(a.grad) for a in arrays) + _nbytes(out.grad)
    saved = 0
    if framework == "weft":
        # replay snapshots of in-place kernels (none here), plus the fresh copy each backward replays from
        saved = 2 * sum(_nbytes(s) for rec in tape.launches for s in getattr(rec, "snapshots", {}).values())
    return {"fwd": fwd, "bwd": bwd, "data": data, "with_grads": data + grads + saved}


# ------------------------------------------------------------------------------------------------ PyTorch autograd
def bench_torch(torch, workload: str, size: int, repeat: int) -> dict:
    rng = np.random.default_rng(0)
    if workload == "rk3":
        n = size
        o0, o1, psi = (torch.tensor(rng.standard_normal((n, n)).astype(np.float32), requires_grad=True)
                       for _ in range(3))
        leaves = [o0, o1, psi]
        h = 2 * np.pi / n
        re, dt, c0, c1, c2 = 1000.0, 1e-3, 0.75, 0.25, 0.25

        def f():
            def r(x, shift, axis):  # x[i + shift] with periodic wrap along axis
                return torch.roll(x, -shift, dims=axis)
            inv_h2 = 1.0 / (h * h)
            lap = (r(o1, 1, 0) + r(o1, -1, 0) + r(o1, 1, 1) + r(o1, -1, 1) - 4.0 * o1) * inv_h2
            inv_2h = 1.0 / (2.0 * h)
            j1 = ((r(o1, 1, 0) - r(o1, -1, 0)) * inv_2h) * ((r(psi, 1, 1) - r(psi, -1, 1)) * inv_2h)
            j2 = ((r(o1, 1, 1) - r(o1, -1, 1)) * inv_2h) * ((r(psi, 1, 0) - r(psi, -1, 0)) * inv_2h)
            rhs = (1.0 / re) * lap + j2 - j1
            return c0 * o0 + c1 * o1 + c2 * dt * rhs
        seed = torch.tensor(rng.standard_normal((n, n)).astype(np.float32))
    else:
        m = size
        mats = (np.eye(3) + 0.2 * rng.standard_normal((2, m, 3, 3))).astype(np.float32)
        a, b = (torch.tensor(mats[k], requires_grad=True) for k in range(2))
        leaves = [a, b]

        def f():
            F = a @ b
            Finv = torch.linalg.inv(F)
            J = torch.linalg.det(F)
            C = F.transpose(1, 2) @ F
            tr = C.diagonal(dim1=1, dim2=2).sum(-1)
            return (C @ Finv) * J[:, None, None] + Finv.transpose(1, 2) * tr[:, None, None] - F @ b.transpose(1, 2)
        seed = torch.tensor(rng.standard_normal((m, 3, 3)).astype(np.float32))

    def forward():
        with torch.no_grad():
            return f()

    fwd = median_time(forward, repeat)
    saved: dict[int, int] = {}

    def pack(t):
        saved[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = f()

    def backward():
        out.backward(seed, retain_graph=True)

    bwd = median_time(backward, repeat)
    data = sum(t.numel() * 4 for t in leaves) + out.numel() * 4
    leaf_ptrs = {t.untyped_storage().data_ptr() for t in leaves}
    extra = sum(v for k, v in saved.items() if k not in leaf_ptrs)  # intermediates kept for backward
    grads = sum(t.grad.numel() * 4 for t in leaves) + seed.numel() * 4
    return {"fwd": fwd, "bwd": bwd, "data": data, "with_grads": data + grads + extra}


# ------------------------------------------------------------------------------------------------ table
def rows_for(title: str, results: dict) -> list[dict]:
    def get(key):
        return {f: (r[key] if r else None) for f, r in results.items()}

    def ratio(a, b):
        return {f: (r[a] / r[b] if r else None) for f, r in results.items()}

    fwd = {f: (v * 1e3 if v is not None else None) for f, v in get("fwd").items()}
    bwd = {f: (v * 1e3 if v is not None else None) for f, v in get("bwd").items()}
    mb = {f: (v / 2**20 if v is not None else None) for f, v in get("data").items()}
    mbg = {f: (v / 2**20 if v is not None else None) for f, v in get("with_grads").items()}
    return [
        {"name": f"{title}: forward", "unit": "ms", **fwd},
        {"name": f"{title}: backward", "unit": "ms", **bwd},
        {"name": f"{title}: backward / forward", "unit": "x", **ratio("bwd", "fwd"), "target": "<= 1.5"},
        {"name": f"{title}: arrays, no grads", "unit": "MiB", **mb},
        {"name": f"{title}: arrays + grads + saved", "unit": "MiB", **mbg},
        {"name": f"{title}: memory with / without grads", "unit": "x", **ratio("with_grads", "data"),
         "target": "<= 1.5"},
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes and fewer repeats (smoke run)")
    parser.add_argument("--no-warp", action="store_true")
    parser.add_argument("--no-torch", action="store_true")
    args = parser.parse_args()
    repeat = 3 if args.quick else 15
    n = 128 if args.quick else 512
    m = 2**14 if args.quick else 2**18

    import weft

    frameworks = {"weft": weft}
    torch = None if args.no_torch else optional_torch()
    warp = None
    if not args.no_warp:
        warp = optional_warp()
        if warp is not None:
            frameworks["warp"] = warp
    mods = {name: load_kernels(HERE / "_autodiff_kernels.py", wp, name) for name, wp in frameworks.items()}

    rows = []
    for workload, size, title in (("rk3", n, f"rk3_update {n}x{n}"), ("mat", m, f"mat_chain mat33 x {m}")):
        results = {c: None for c in COLUMNS}
        for name, wp in frameworks.items():
            results[name] = bench_kernel_framework(wp, mods[name], workload, size, repeat, name)
        if torch is not None:
            results["torch"] = bench_torch(torch, workload, size, repeat)
        rows += rows_for(title, results)
    threads = os.cpu_count()
    print_table(f"reverse-mode autodiff on the CPU ({threads} cores; Warp's CPU backend runs one thread)", rows,
                COLUMNS)


if __name__ == "__main__":
    main()
