"""2-D decaying turbulence (the Navier-Stokes demo of examples/fluids) on a slab-decomposed grid over MPI ranks.

Rank p owns rows [p N/P, (p + 1) N/P) of the vorticity and streamfunction, with one ghost layer on every side.
Each SSP-RK3 stage runs the seed's stencil on the local slab, refreshes the ghosts with a halo exchange, and
solves the Poisson equation with ``weft.distributed.SlabFFT2D`` (row tile FFTs, an all-to-all transpose, row tile
FFTs; divide by k^2; and back), the seed's row -> transpose -> row solve with the transpose done across ranks.
Rank 0 gathers the field and writes the same PNG snapshots and GIF as ``examples/fluids/navier_stokes.py``.

    mpirun -n 2 python examples/distributed/navier_stokes_mpi.py --n 256 --steps 1500
    python examples/distributed/navier_stokes_mpi.py --n 64 --steps 20          # one rank (no mpirun needed)

``--save FILE.npy`` writes the final vorticity (rank 0); the tests compare it with the single-process demo.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import weft as wp
import weft.distributed as wd

FLUIDS = Path(__file__).resolve().parents[1] / "fluids"
sys.path.insert(0, str(FLUIDS))
from ns_reference import DOMAIN, RK3_COEFFS, initial_vorticity, stable_dt


@wp.kernel
def rk3_update_halo(
    h: float, re: float, dt: float,
    coeff0: float, coeff1: float, coeff2: float,
    omega_0: wp.array2d(dtype=float),
    omega_1: wp.array2d(dtype=float),
    psi: wp.array2d(dtype=float),
    omega_out: wp.array2d(dtype=float)
):
    """The seed's SSP-RK3 stage on a block with one ghost layer (neighbours read from the ghosts, not wrapped)."""
    ti, tj = wp.tid()
    i = ti + 1
    j = tj + 1
    left = i - 1
    right = i + 1
    top = j + 1
    down = j - 1

    inv_h2 = 1.0 / (h * h)
    laplacian = (
        omega_1[right, j] + omega_1[left, j] + omega_1[i, top] + omega_1[i, down] - 4.0 * omega_1[i, j]
    ) * inv_h2

    inv_2h = 1.0 / (2.0 * h)
    j1 = ((omega_1[right, j] - omega_1[left, j]) * inv_2h) * ((psi[i, top] - psi[i, down]) * inv_2h)
    j2 = ((omega_1[i, top] - omega_1[i, down]) * inv_2h) * ((psi[right, j] - psi[left, j]) * inv_2h)

    rhs = (1.0 / re) * laplacian + j2 - j1

    omega_out[i, j] = coeff0 * omega_0[i, j] + coeff1 * omega_1[i, j] + coeff2 * dt * rhs


@wp.kernel
def interior_to_complex(x: wp.array2d(dtype=float), z: wp.array2d(dtype=wp.vec2f)):
    i, j = wp.tid()
    z[i, j] = wp.vec2f(x[i + 1, j + 1], 0.0)


@wp.func
def signed_wavenumber(i: int, n: int) -> float:
    k = i
    if i >= n / 2:
        k = i - n
    return float(k)


@wp.kernel
def poisson_divide_slab(n: int, first: int, z: wp.array2d(dtype=wp.vec2f)):
    """psi_hat = omega_hat / k^2 on the transposed spectral slab: row c is wavenumber first + c of axis 1."""
    c, k = wp.tid()
    kx = signed_wavenumber(first + c, n)
    ky = signed_wavenumber(k, n)
    k2 = kx * kx + ky * ky
    if k2 == 0.0:
        z[c, k] = wp.vec2f(0.0, 0.0)
    else:
        z[c, k] = z[c, k] / k2


@wp.kernel
def complex_to_interior(z: wp.array2d(dtype=wp.vec2f), scale: float, x: wp.array2d(dtype=float)):
    i, j = wp.tid()
    x[i + 1, j + 1] = z[i, j][0] * scale


class DistributedNavierStokes2D:
    """The demo's solver on P ranks (row slabs; ``n`` divisible by P), same scheme and time step.

    Args:
        n: grid points per side.
        re: Reynolds number.
        dt: time step; by default CFL 0.3 for the initial field (computed from the global field on every rank).
        seed: random phases of the initial condition.
        comm: mpi4py communicator (default COMM_WORLD).
        device: weft device.
    """

    def __init__(self, n: int = 256, re: float = 1000.0, dt: float | None = None, seed: int = 42, comm=None,
                 device=None):
        self.n, self.h, self.re = n, DOMAIN / n, re
        self.device = wp.get_device(device)
        omega = initial_vorticity(n, seed)
        self.dt = float(dt) if dt is not None else stable_dt(omega, re)
        self.decomp = wd.decompose((n, n), comm, dims=(0, 1), periodic=True)
        d = self.decomp
        self.fft = wd.SlabFFT2D((n, n), d, dtype=wp.vec2f, device=self.device)
        self.halo = wd.HaloExchange(d, 1, float, self.device, corners=False)  # a 5-point stencil: faces only
        self.omega_0 = d.scatter(omega.astype(np.float32), halo=1, device=self.device)
        self.omega_1 = d.scatter(omega.astype(np.float32), halo=1, device=self.device)
        self.omega_tmp = d.zeros(1, device=self.device)
        self.psi = d.zeros(1, device=self.device)
        self.z = wp.zeros(self.fft.local_shape, dtype=wp.vec2f, device=self.device)
        self.spectrum = wp.zeros(self.fft.spectral_shape, dtype=wp.vec2f, device=self.device)
        self.back = wp.zeros(self.fft.local_shape, dtype=wp.vec2f, device=self.device)
        self.halo(self.omega_0)
        self.halo(self.omega_1)
        self.solve_poisson(self.omega_0)

    def solve_poisson(self, omega) -> None:
        """psi (ghosts refreshed) from omega: distributed FFT, divide by k^2, inverse FFT, real part / N^2."""
        n, dev = self.n, self.device
        wp.launch(interior_to_complex, dim=self.fft.local_shape, inputs=[omega], outputs=[self.z], device=dev)
        self.fft.forward(self.z, self.spectrum)
        wp.launch(poisson_divide_slab, dim=self.fft.spectral_shape, inputs=[n, self.fft.col_offset],
                  outputs=[self.spectrum], device=dev)
        self.fft.inverse(self.spectrum, self.back)
        wp.launch(complex_to_interior, dim=self.fft.local_shape, inputs=[self.back, 1.0 / (n * n)],
                  outputs=[self.psi], device=dev)
        self.halo(self.psi)

    def step(self) -> None:
        """One SSP-RK3 step (the demo's fixed-buffer stage order: omega_0 -> omega_1 -> omega_tmp -> omega_1)."""
        sources = (self.omega_0, self.omega_1, self.omega_tmp)
        targets = (self.omega_1, self.omega_tmp, self.omega_1)
        for (c0, c1, c2), omega_in, omega_out in zip(RK3_COEFFS, sources, targets):
            wp.launch(rk3_update_halo, dim=self.decomp.local_shape,
                      inputs=[self.h, self.re, self.dt, c0, c1, c2, self.omega_0, omega_in, self.psi],
                      outputs=[omega_out], device=self.device)
            self.halo(omega_out)
            self.solve_poisson(omega_out)
        wp.copy(self.omega_0, self.omega_1)

    def vorticity(self, root: int = 0):
        """The global vorticity on rank ``root`` (None on the others). Collective."""
        return wd.gather(self.omega_0, self.decomp, halo=1, root=root)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=256, help="grid points per side (divisible by the rank count)")
    parser.add_argument("--steps", type=int, default=1500, help="time steps")
    parser.add_argument("--re", type=float, default=1000.0, help="Reynolds number")
    parser.add_argument("--device", default=None, help="weft device (default: the preferred one)")
    parser.add_argument("--out", default="ns_output", help="output directory for PNGs and the GIF (rank 0)")
    parser.add_argument("--frames", type=int, default=30, help="GIF frames")
    parser.add_argument("--snapshots", type=int, default=4, help="PNG snapshots")
    parser.add_argument("--save", default=None, help="write the final vorticity to this .npy file (rank 0)")
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    sim = DistributedNavierStokes2D(n=args.n, re=args.re, device=args.device)
    root = sim.decomp.rank == 0
    out = Path(args.out)
    if root:
        import navier_stokes as demo  # the single-process demo's renderer: the same pictures
        from tqdm import tqdm

        out.mkdir(parents=True, exist_ok=True)
        print(f"N={args.n} Re={args.re:g} dt={sim.dt:.3e} on {sim.decomp.size} rank(s) (slabs of "
              f"{sim.decomp.local_shape[0]} rows), device {sim.device}; setup {time.perf_counter() - t0:.2f} s")
    omega = sim.vorticity()
    vmax = float(np.abs(omega).max()) * 0.6 if root else 0.0
    frames = [demo._render(omega, "t = 0.000", out / "vorticity_0000.png", vmax)] if root else []
    frame_every = max(1, args.steps // max(1, args.frames))
    snap_every = max(1, args.steps // max(1, args.snapshots))
    wd.reset_comm_stats()
    sim_time = 0.0
    steps = tqdm(range(1, args.steps + 1), desc="steps", unit="step") if root else range(1, args.steps + 1)
    for step in steps:
        t = time.perf_counter()
        sim.step()
        sim_time += time.perf_counter() - t
        if step % frame_every == 0 or step % snap_every == 0 or step == args.steps:
            omega = sim.vorticity()  # collective: every rank takes part
            if root:
                png = out / f"vorticity_{step:04d}.png" if (step % snap_every == 0 or step == args.steps) else None
                frames.append(demo._render(omega, f"t = {step * sim.dt:.3f}", png, vmax))
    comm_time = wd.comm_stats().total_seconds
    if root:
        rate = args.steps / sim_time if sim_time > 0 else float("inf")
        print(f"{args.steps} steps in {sim_time:.2f} s: {1e3 / rate:.2f} ms/step at N={args.n} on "
              f"{sim.decomp.size} rank(s), {100 * comm_time / max(sim_time, 1e-12):.0f}% in communication (rank 0)")
        import imageio.v2 as imageio

        gif = out / "vorticity.gif"
        imageio.mimsave(gif, frames, duration=0.1, loop=0)
        print(f"wrote {len(frames)} frames to {gif} and PNG snapshots to {out}/")
        if args.save:
            np.save(args.save, omega)


if __name__ == "__main__":
    main()
