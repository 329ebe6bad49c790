"""2-D decaying turbulence: vorticity-streamfunction Navier-Stokes on a periodic square, solved with weft.

The time stepping is the seed's SSP-RK3 stencil kernel ``rk3_update``; the streamfunction comes from a spectral
Poisson solve built on tile FFTs. Two solves are here: the seed's (row FFT -> transpose -> row FFT of the vorticity as
a complex field, ``--poisson seed``) and, by default, ``spectral.SpectralPoisson``, which packs two real rows into one
complex FFT and transforms only the N/2 + 1 Hermitian columns, with the column FFTs, the division by k^2 and the
inverse column FFTs fused in one tile kernel: half the FFT work and no transpose kernels. On the CPU, ``step()`` is
recorded once with ``wp.ScopedCapture`` and replayed with ``wp.capture_launch`` (a CUDA graph on GPUs), so a step
costs no Python dispatch beyond the replay loop.

    python examples/fluids/navier_stokes.py                    # N=256, 1500 steps (t ~ 5), pictures in ./ns_output
    python examples/fluids/navier_stokes.py --n 64 --steps 20  # a quick look

Writes PNG snapshots and an animated GIF of the vorticity, shows a progress bar and prints the step rate.
``ns_reference.py`` holds a NumPy version of the same scheme (the tests compare the two).
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path

import numpy as np

import weft as wp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ns_reference import DOMAIN, RK3_COEFFS, initial_vorticity, stable_dt
from spectral import SpectralPoisson

BLOCK_DIM = 64


# ------------------------------------------------------------------------------------------ the seed's kernels
@wp.func
def cyclic_index(idx: wp.int32, n: wp.int32) -> wp.int32:
    """Periodic wrap of an index into [0, n)."""
    ret = idx % n
    if ret < 0:
        ret += n
    return ret


@wp.kernel
def rk3_update(
    n: int, h: float, re: float, dt: float,
    coeff0: float, coeff1: float, coeff2: float,
    omega_0: wp.array2d(dtype=float),
    omega_1: wp.array2d(dtype=float),
    psi: wp.array2d(dtype=float),
    omega_out: wp.array2d(dtype=float)
):
    """Perform a single substep of SSP-RK3."""

    i, j = wp.tid()

    left = cyclic_index(i - 1, n)
    right = cyclic_index(i + 1, n)
    top = cyclic_index(j + 1, n)
    down = cyclic_index(j - 1, n)

    inv_h2 = 1.0 / (h * h)
    laplacian = (
        omega_1[right, j] + omega_1[left, j] + omega_1[i, top] + omega_1[i, down] - 4.0 * omega_1[i,j]
    ) * inv_h2

    inv_2h = 1.0 / (2.0 * h)
    j1 = ((omega_1[right, j] - omega_1[left, j]) * inv_2h) * ((psi[i, top] - psi[i, down]) * inv_2h)
    j2 = ((omega_1[i, top] - omega_1[i, down]) * inv_2h) * ((psi[right, j] - psi[left, j]) * inv_2h)

    rhs = (1.0 / re) * laplacian + j2 - j1

    omega_out[i, j] = coeff0 * omega_0[i, j] + coeff1 * omega_1[i, j] + coeff2 * dt * rhs


@wp.kernel
def transpose(x: wp.array2d(dtype=wp.vec2f), y: wp.array2d(dtype=wp.vec2f)):
    i, j = wp.tid()
    y[i, j] = x[j, i]


@functools.cache
def fft_kernels(n_grid: int):
    """The seed's row FFT kernels for rows of ``n_grid`` points.

    The tile shape is a compile-time constant; the seed reads it from a module global ``N_GRID``. Defining the
    kernels in this factory gives each grid size its own ``N_GRID`` (one compiled pair per size), so one process can
    run several sizes.
    """
    N_GRID = n_grid

    @wp.kernel
    def fft_tiled(x: wp.array2d(dtype=wp.vec2f), y: wp.array2d(dtype=wp.vec2f)):
        """Row-wise FFT using tile primitives."""
        i, _, _ = wp.tid()
        a = wp.tile_load(x, shape=(1, N_GRID), offset=(i, 0))
        wp.tile_fft(a)
        wp.tile_store(y, a, offset=(i, 0))

    @wp.kernel
    def ifft_tiled(x: wp.array2d(dtype=wp.vec2f), y: wp.array2d(dtype=wp.vec2f)):
        """Row-wise inverse FFT using tile primitives."""
        i, _, _ = wp.tid()
        a = wp.tile_load(x, shape=(1, N_GRID), offset=(i, 0))
        wp.tile_ifft(a)
        wp.tile_store(y, a, offset=(i, 0))

    return fft_tiled, ifft_tiled


# ------------------------------------------------------------------------------------------ helper kernels
@wp.kernel
def real_to_complex(x: wp.array2d(dtype=float), z: wp.array2d(dtype=wp.vec2f)):
    i, j = wp.tid()
    z[i, j] = wp.vec2f(x[i, j], 0.0)


@wp.func
def signed_wavenumber(i: int, n: int) -> float:
    """FFT order: 0, 1, ..., n/2 - 1, -n/2, ..., -1 (the square is the same for the Nyquist mode either way)."""
    k = i
    if i >= n / 2:
        k = i - n
    return float(k)


@wp.kernel
def poisson_divide(n: int, z: wp.array2d(dtype=wp.vec2f)):
    """psi_hat = omega_hat / (kx^2 + ky^2), mean mode set to zero. Symmetric in (i, j), so it applies to the
    transposed spectrum the row-transpose-row FFT produces."""
    i, j = wp.tid()
    kx = signed_wavenumber(i, n)
    ky = signed_wavenumber(j, n)
    k2 = kx * kx + ky * ky
    if k2 == 0.0:
        z[i, j] = wp.vec2f(0.0, 0.0)
    else:
        z[i, j] = z[i, j] / k2


@wp.kernel
def complex_to_real(z: wp.array2d(dtype=wp.vec2f), scale: float, x: wp.array2d(dtype=float)):
    i, j = wp.tid()
    x[i, j] = z[i, j][0] * scale


# ------------------------------------------------------------------------------------------ the solver
class NavierStokes2D:
    """Decaying 2-D turbulence at Reynolds number ``re`` on an ``n`` x ``n`` periodic grid of side 2*pi.

    Args:
        n: grid points per side (even; powers of two are fastest).
        re: Reynolds number.
        dt: time step; by default CFL 0.3 for the initial field.
        seed: random phases of the initial condition.
        device: weft device ("cpu", "cuda:0", ...).
        use_graph: record ``step()`` once and replay it (graph capture).
        poisson: ``"fast"`` (``spectral.SpectralPoisson``) or ``"seed"`` (the seed's row/transpose/row solve).
    """

    def __init__(self, n: int = 256, re: float = 1000.0, dt: float | None = None, seed: int = 42, device=None,
                 use_graph: bool = True, poisson: str = "fast"):
        if poisson not in ("fast", "seed"):
            raise ValueError(f"NavierStokes2D: poisson must be 'fast' or 'seed', got {poisson!r}")
        self.n = n
        self.h = DOMAIN / n
        self.re = re
        omega = initial_vorticity(n, seed)
        self.dt = float(dt) if dt is not None else stable_dt(omega, re)
        self.device = wp.get_device(device)
        self.rk3_coeffs = RK3_COEFFS
        self.fft_tiled, self.ifft_tiled = fft_kernels(n)

        def field(data=None):
            if data is None:
                return wp.zeros((n, n), dtype=float, device=self.device)
            return wp.array(data.astype(np.float32), dtype=float, device=self.device)

        def spectrum():
            return wp.zeros((n, n), dtype=wp.vec2f, device=self.device)

        self.omega_0 = field(omega)
        self.omega_1 = field(omega)
        self.omega_tmp = field()
        self.psi = field()
        self.poisson = SpectralPoisson(n, self.device) if poisson == "fast" else None
        if poisson == "seed":
            self.fft_a, self.fft_b = spectrum(), spectrum()
        self._solve_poisson(self.omega_0)
        self.graph = None
        if use_graph:
            # recording compiles every kernel; replaying runs the recorded launches in order
            with wp.ScopedCapture(device=self.device) as capture:
                self._record_step()
            self.graph = capture.graph

    def _solve_poisson(self, omega) -> None:
        """psi from omega: FFT (rows, transpose, rows), divide by k^2, inverse FFT, real part / N^2."""
        if self.poisson is not None:
            self.poisson.solve(omega, self.psi)
            return
        n, dev = self.n, self.device
        a, b = self.fft_a, self.fft_b
        wp.launch(real_to_complex, dim=(n, n), inputs=[omega], outputs=[a], device=dev)
        wp.launch_tiled(self.fft_tiled, dim=[n, 1], inputs=[a], outputs=[b], block_dim=BLOCK_DIM, device=dev)
        wp.launch(transpose, dim=(n, n), inputs=[b], outputs=[a], device=dev)
        wp.launch_tiled(self.fft_tiled, dim=[n, 1], inputs=[a], outputs=[b], block_dim=BLOCK_DIM, device=dev)
        wp.launch(poisson_divide, dim=(n, n), inputs=[n], outputs=[b], device=dev)
        wp.launch_tiled(self.ifft_tiled, dim=[n, 1], inputs=[b], outputs=[a], block_dim=BLOCK_DIM, device=dev)
        wp.launch(transpose, dim=(n, n), inputs=[a], outputs=[b], device=dev)
        wp.launch_tiled(self.ifft_tiled, dim=[n, 1], inputs=[b], outputs=[a], block_dim=BLOCK_DIM, device=dev)
        wp.launch(complex_to_real, dim=(n, n), inputs=[a, 1.0 / (n * n)], outputs=[self.psi], device=dev)

    def _record_step(self) -> None:
        """One SSP-RK3 step on fixed buffers.

        The seed swaps ``omega_1`` and ``omega_tmp`` after each of the three stages. Three swaps leave the Python
        names exchanged, which a recorded graph (bound to the arrays it saw) cannot follow, so the stages here
        write to fixed buffers instead: stage 1 reads omega_0 (where the seed's omega_1 holds a copy of it) and
        writes omega_1, stage 2 writes omega_tmp, stage 3 writes omega_1 again. The arithmetic is the seed's.
        """
        n = self.n
        sources = (self.omega_0, self.omega_1, self.omega_tmp)
        targets = (self.omega_1, self.omega_tmp, self.omega_1)
        for stage_coeff, omega_in, omega_out in zip(self.rk3_coeffs, sources, targets):
            wp.launch(
                rk3_update,
                dim=(n, n),
                inputs=[
                    n, self.h, self.re, self.dt,
                    stage_coeff[0], stage_coeff[1], stage_coeff[2],
                    self.omega_0,
                    omega_in,
                    self.psi,
                ],
                outputs=[omega_out],
                device=self.device,
            )
            # Update streamfunction for next substep
            self._solve_poisson(omega_out)
        # Copy updated vorticity to self.omega_0 for the next timestep
        wp.copy(self.omega_0, self.omega_1)

    def step(self) -> None:
        """Advance the simulation by one time step (SSP-RK3)."""
        if self.graph is not None:
            wp.capture_launch(self.graph)
        else:
            self._record_step()

    def vorticity(self) -> np.ndarray:
        return self.omega_0.numpy().copy()


# ------------------------------------------------------------------------------------------ the script
def _render(omega: np.ndarray, title: str, path: Path | None, vmax: float):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 5), dpi=100)
    ax.imshow(omega.T, origin="lower", cmap="RdBu_r", vmin=-vmax, vmax=vmax, extent=(0, DOMAIN, 0, DOMAIN))
    ax.set_title(title)
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    fig.tight_layout()
    fig.canvas.draw()
    frame = np.asarray(fig.canvas.buffer_rgba())[..., :3].copy()
    if path is not None:
        fig.savefig(path)
    plt.close(fig)
    return frame


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=256, help="grid points per side (power of two)")
    parser.add_argument("--steps", type=int, default=1500, help="time steps")
    parser.add_argument("--re", type=float, default=1000.0, help="Reynolds number")
    parser.add_argument("--device", default=None, help="weft device (default: the preferred one)")
    parser.add_argument("--out", default="ns_output", help="output directory for PNGs and the GIF")
    parser.add_argument("--frames", type=int, default=30, help="GIF frames")
    parser.add_argument("--snapshots", type=int, default=4, help="PNG snapshots")
    parser.add_argument("--no-graph", action="store_true", help="launch step() eagerly instead of replaying it")
    parser.add_argument("--poisson", choices=("fast", "seed"), default="fast",
                        help="Poisson solve: weft's real-to-complex tile FFTs (fast) or the seed's complex ones")
    args = parser.parse_args(argv)

    from tqdm import tqdm

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    sim = NavierStokes2D(n=args.n, re=args.re, device=args.device, use_graph=not args.no_graph,
                         poisson=args.poisson)
    print(f"N={args.n} Re={args.re:g} dt={sim.dt:.3e} on {sim.device}; setup (compile + first step) "
          f"{time.perf_counter() - t0:.2f} s")
    vmax = float(np.abs(sim.vorticity()).max()) * 0.6
    frame_every = max(1, args.steps // max(1, args.frames))
    snap_every = max(1, args.steps // max(1, args.snapshots))
    frames = [_render(sim.vorticity(), "t = 0.000", out / "vorticity_0000.png", vmax)]
    sim_time = 0.0
    for step in tqdm(range(1, args.steps + 1), desc="steps", unit="step"):
        t = time.perf_counter()
        sim.step()
        sim_time += time.perf_counter() - t
        if step % frame_every == 0 or step % snap_every == 0 or step == args.steps:
            omega = sim.vorticity()
            png = out / f"vorticity_{step:04d}.png" if (step % snap_every == 0 or step == args.steps) else None
            frames.append(_render(omega, f"t = {step * sim.dt:.3f}", png, vmax))
    rate = args.steps / sim_time if sim_time > 0 else float("inf")
    print(f"{args.steps} steps in {sim_time:.2f} s of solver time: {rate:.1f} steps/s "
          f"({1e3 / rate:.2f} ms/step at N={args.n})")
    import imageio.v2 as imageio

    gif = out / "vorticity.gif"
    imageio.mimsave(gif, frames, duration=0.1, loop=0)
    print(f"wrote {len(frames)} frames to {gif} and PNG snapshots to {out}/")


if __name__ == "__main__":
    main()
