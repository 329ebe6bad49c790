"""Navier-Stokes 2-D (examples/fluids) ms per time step: weft CPU vs NumPy vs PyTorch CPU vs NVIDIA Warp CPU.

Every column runs the same scheme in float32 (SSP-RK3, central differences, spectral Poisson solve with
real-to-complex FFTs after each of the three stages): weft and Warp run ``examples/fluids/navier_stokes.py`` and its
``spectral.py`` themselves (weft replays the recorded ``step()``; Warp launches eagerly, its graph capture being
CUDA-only), NumPy runs ``ns_reference.py`` (``np.fft.rfft2``) and PyTorch a line-by-line port of it
(``torch.fft.rfft2``). ``--seed-poisson`` adds a ``weft_seed`` column: the seed's complex row/transpose/row solve.
Warp runs the seed's solve: its CPU ``tile_fft`` does not compile for the multi-row tiles of ``spectral.py``
(warp-lang 1.19: "no matching function for call to 'tile_fft_cpu_impl'").

Usage: ``python benchmarks/bench_navier_stokes.py [--quick] [--sizes 128 256 512] [--no-warp]``.
Target of issue 7 on a 2-core machine: N = 512 step <= 4 ms.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
FLUIDS = HERE.parent / "examples" / "fluids"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(FLUIDS))

import ns_reference as ref
from _bench_util import interleaved_times, optional_torch, optional_warp, print_table


class TorchSolver:
    """``ns_reference.ReferenceSolver`` in PyTorch (CPU, float32)."""

    def __init__(self, torch, omega: np.ndarray, re: float, dt: float):
        self.torch = torch
        n = omega.shape[0]
        self.h, self.re, self.dt = ref.DOMAIN / n, re, dt
        kx = torch.from_numpy(ref.wavenumbers(n).astype(np.float32))
        ky = torch.arange(n // 2 + 1, dtype=torch.float32)
        self.k2 = kx[:, None] ** 2 + ky[None, :] ** 2
        self.k2[0, 0] = 1.0
        self.shape = (n, n)
        self.omega = torch.from_numpy(omega.astype(np.float32))
        self.psi = self.poisson(self.omega)

    def poisson(self, omega):
        psi_hat = self.torch.fft.rfft2(omega) / self.k2
        psi_hat[0, 0] = 0.0
        return self.torch.fft.irfft2(psi_hat, s=self.shape).contiguous()

    def rhs(self, omega, psi):
        roll = self.torch.roll
        h, re = self.h, self.re
        right, left, top, down = roll(omega, -1, 0), roll(omega, 1, 0), roll(omega, -1, 1), roll(omega, 1, 1)
        laplacian = (right + left + top + down - 4.0 * omega) * (1.0 / (h * h))
        inv_2h = 1.0 / (2.0 * h)
        j1 = ((right - left) * inv_2h) * ((roll(psi, -1, 1) - roll(psi, 1, 1)) * inv_2h)
        j2 = ((top - down) * inv_2h) * ((roll(psi, -1, 0) - roll(psi, 1, 0)) * inv_2h)
        return (1.0 / re) * laplacian + j2 - j1

    def step(self) -> None:
        omega_0 = self.omega
        omega, psi = omega_0, self.psi
        for c0, c1, c2 in ref.RK3_COEFFS:
            omega = c0 * omega_0 + c1 * omega + c2 * self.dt * self.rhs(omega, psi)
            psi = self.poisson(omega)
        self.omega, self.psi = omega, psi


def _load_module(name: str, text: str, framework: str):
    path = Path(tempfile.mkdtemp(prefix=f"ns-{framework}-")) / f"{name}_{framework}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def load_example_with(framework: str):
    """examples/fluids/navier_stokes.py (and the spectral.py it imports) with ``import weft as wp`` replaced by
    ``import <framework> as wp``: every framework runs the same kernels and the same launches."""
    text = (FLUIDS / "navier_stokes.py").read_text()
    if framework != "weft":
        text = text.replace("import weft as wp", f"import {framework} as wp")
        spectral = (FLUIDS / "spectral.py").read_text().replace("import weft as wp", f"import {framework} as wp")
        _load_module("spectral", spectral, framework)
        text = text.replace("from spectral import", f"from spectral_{framework} import")
    return _load_module("navier_stokes", text, framework)


def bench_size(n: int, weft_ns, warp_ns, torch, rounds: int, steps: int, seed_poisson: bool = False) -> dict:
    omega0 = ref.initial_vorticity(n, 42)
    sim = weft_ns.NavierStokes2D(n=n, device="cpu")
    solvers = {"weft": sim.step}
    if seed_poisson:
        solvers["weft_seed"] = weft_ns.NavierStokes2D(n=n, device="cpu", poisson="seed").step
    numpy_solver = ref.ReferenceSolver(omega0, sim.re, sim.dt, dtype=np.float32)
    solvers["numpy"] = numpy_solver.step
    if torch is not None:
        solvers["torch"] = TorchSolver(torch, omega0, sim.re, sim.dt).step
    if warp_ns is not None:
        try:
            warp_sim = warp_ns.NavierStokes2D(n=n, device="cpu", use_graph=False, poisson="seed")
            warp_sim.step()
            solvers["warp"] = warp_sim.step
        except Exception as exc:  # noqa: BLE001 - report and carry on without the column
            print(f"warp: N={n} not run ({type(exc).__name__}: {str(exc).splitlines()[0][:100]})")
    times = interleaved_times(solvers, rounds, number=steps)
    check = ref.ReferenceSolver(omega0, sim.re, sim.dt)
    row = {"name": f"N={n} step", "unit": "ms", "target": "<= 4 ms" if n == 512 else ""}
    row.update({name: t * 1e3 for name, t in times.items()})
    # both advanced the same number of steps from the same field: a cheap sanity check of the timed solver
    taken = 1 + rounds * steps
    err = np.linalg.norm(sim.vorticity() - check.run(taken)) / np.linalg.norm(check.omega)
    if err > 1e-3:
        print(f"warning: weft N={n} deviates from the reference by {err:.2e} after {taken} steps")
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps")
    parser.add_argument("--sizes", type=int, nargs="+", default=[128, 256, 512])
    parser.add_argument("--no-warp", action="store_true", help="skip NVIDIA Warp even if it is installed")
    parser.add_argument("--seed-poisson", action="store_true",
                        help="add a weft column with the seed's complex row/transpose/row Poisson solve")
    args = parser.parse_args()
    if args.no_warp:
        os.environ["BENCH_NO_WARP"] = "1"
    torch = optional_torch()
    warp = optional_warp(tempfile.mkdtemp(prefix="bench-warp-cache-"))
    import weft

    weft_ns = load_example_with("weft")
    warp_ns = load_example_with("warp") if warp is not None else None
    print(f"weft {weft.__version__} | numpy {np.__version__} | torch {torch.__version__ if torch else '-'} | "
          f"warp {warp.__version__ if warp else '-'} | {os.cpu_count()} CPU cores")
    rounds, steps = (3, 2) if args.quick else (7, 5)
    rows = [bench_size(n, weft_ns, warp_ns, torch, rounds, steps, args.seed_poisson) for n in args.sizes]
    columns = [c for c in ("weft", "weft_seed", "numpy", "torch", "warp") if any(r.get(c) is not None for r in rows)]
    print_table("Navier-Stokes 2-D, ms per SSP-RK3 step (float32, CPU); 'weft vs X' > 1 means weft is faster",
                rows, columns)


if __name__ == "__main__":
    main()
