"""Differentiable stable fluids over ~1000 steps with gradient checkpointing (``wp.checkpoint``).

A periodic unit square with N x N cells carries a velocity ``u`` (vec2) and a density ``rho``. One step:

1. semi-Lagrangian advection of ``u`` and ``rho`` (trace each cell centre back by ``dt * u``, bilinear sampling);
2. pressure projection: divergence, ``--jacobi`` Jacobi sweeps of the pressure Poisson equation, subtract grad p.

Every step writes new arrays (nothing is overwritten), so the whole rollout is differentiable. The optimiser (Adam)
changes the *initial velocity* so that the density advected for ``--steps`` steps matches a target image drawn
with NumPy (a ring; the density starts as a disk). The rollout runs under ``wp.checkpoint``: the forward keeps one
state per segment of about sqrt(steps) steps and the backward recomputes one segment at a time, so the memory for
gradients grows like sqrt(steps) instead of steps.

    python examples/fluids/stable_fluids_checkpoint.py            # N=64, 1000 steps, 30 iterations
    python examples/fluids/stable_fluids_checkpoint.py --small    # CI size: N=32, 60 steps, 3 iterations

Prints the peak memory (tracemalloc) of one forward + backward pass with checkpointing vs a full Tape at
``--memory-steps`` steps (where the full Tape still fits), checks that both give the same gradient, prints the
loss per iteration, and writes ``stable_fluids.png`` (initial density, target, optimised result, initial
velocity) and ``stable_fluids_loss.png`` into ``--out``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np

import weft as wp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from navier_stokes import cyclic_index


# ------------------------------------------------------------------------------------------ kernels
@wp.func
def bilinear(f: wp.array2d(dtype=Any), x: float, y: float, n: int):
    """f (scalar or vector field) at the point (x, y) in cell units (cell centres at integers), periodic."""
    fx = wp.floor(x)
    fy = wp.floor(y)
    tx = x - fx
    ty = y - fy
    i0 = cyclic_index(int(fx), n)
    j0 = cyclic_index(int(fy), n)
    i1 = cyclic_index(i0 + 1, n)
    j1 = cyclic_index(j0 + 1, n)
    return ((1.0 - tx) * ((1.0 - ty) * f[i0, j0] + ty * f[i0, j1])
            + tx * ((1.0 - ty) * f[i1, j0] + ty * f[i1, j1]))


@wp.kernel
def advect(n: int, dt_over_h: float, u: wp.array2d(dtype=wp.vec2), rho: wp.array2d(dtype=float),
           u_out: wp.array2d(dtype=wp.vec2), rho_out: wp.array2d(dtype=float)):
    """Semi-Lagrangian advection of the velocity and the density by the velocity."""
    i, j = wp.tid()
    v = u[i, j]
    x = float(i) - dt_over_h * v[0]
    y = float(j) - dt_over_h * v[1]
    u_out[i, j] = bilinear(u, x, y, n)
    rho_out[i, j] = bilinear(rho, x, y, n)


@wp.kernel
def divergence(n: int, inv_2h: float, u: wp.array2d(dtype=wp.vec2), div: wp.array2d(dtype=float)):
    i, j = wp.tid()
    div[i, j] = (u[cyclic_index(i + 1, n), j][0] - u[cyclic_index(i - 1, n), j][0]
                 + u[i, cyclic_index(j + 1, n)][1] - u[i, cyclic_index(j - 1, n)][1]) * inv_2h


@wp.kernel
def jacobi(n: int, h2: float, div: wp.array2d(dtype=float), p: wp.array2d(dtype=float),
           p_out: wp.array2d(dtype=float)):
    """One Jacobi sweep of lap(p) = div (5-point Laplacian)."""
    i, j = wp.tid()
    s = p[cyclic_index(i + 1, n), j] + p[cyclic_index(i - 1, n), j] + p[i, cyclic_index(j + 1, n)] + p[
        i, cyclic_index(j - 1, n)]
    p_out[i, j] = 0.25 * (s - h2 * div[i, j])


@wp.kernel
def subtract_gradient(n: int, inv_2h: float, u: wp.array2d(dtype=wp.vec2), p: wp.array2d(dtype=float),
                      u_out: wp.array2d(dtype=wp.vec2)):
    i, j = wp.tid()
    gx = (p[cyclic_index(i + 1, n), j] - p[cyclic_index(i - 1, n), j]) * inv_2h
    gy = (p[i, cyclic_index(j + 1, n)] - p[i, cyclic_index(j - 1, n)]) * inv_2h
    u_out[i, j] = u[i, j] - wp.vec2(gx, gy)


@wp.kernel
def squared_error(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float), inv_count: float,
                  loss: wp.array(dtype=float)):
    """loss += mean((a - b)^2), one atomic per row."""
    i = wp.tid()
    s = 0.0
    for j in range(a.shape[1]):
        d = a[i, j] - b[i, j]
        s += d * d
    wp.atomic_add(loss, 0, s * inv_count)


# ------------------------------------------------------------------------------------------ images
def smooth_disk(n: int, cx: float, cy: float, r: float, width: float = 0.02) -> np.ndarray:
    x = (np.arange(n) + 0.5) / n
    X, Y = np.meshgrid(x, x, indexing="ij")
    d = np.sqrt((X - cx) ** 2 + (Y - cy) ** 2)
    return 0.5 * (1.0 - np.tanh((d - r) / width))


def initial_density(n: int) -> np.ndarray:
    """A disk of radius 0.2 at the centre."""
    return smooth_disk(n, 0.5, 0.5, 0.2).astype(np.float32)


def target_density(n: int) -> np.ndarray:
    """A ring (radii 0.17 and 0.28, about the disk's area) at the centre: the image to match."""
    return (smooth_disk(n, 0.5, 0.5, 0.28) - smooth_disk(n, 0.5, 0.5, 0.17)).astype(np.float32)


# ------------------------------------------------------------------------------------------ the simulation
class StableFluids:
    """The rollout and the loss; ``checkpoint`` selects wp.checkpoint or a full Tape."""

    def __init__(self, n: int = 64, steps: int = 1000, total_time: float = 1.0, jacobi_iters: int = 12,
                 device=None):
        self.n, self.steps, self.jacobi_iters = n, steps, jacobi_iters
        self.h = 1.0 / n
        self.dt = total_time / steps
        self.device = wp.get_device(device)
        self.rho0 = wp.array(initial_density(n), dtype=float, device=self.device)
        self.target = wp.array(target_density(n), dtype=float, device=self.device)
        self.loss = wp.zeros(1, dtype=float, device=self.device, requires_grad=True)

    def _field(self, dtype=float):
        return wp.zeros((self.n, self.n), dtype=dtype, device=self.device, requires_grad=True)

    def step(self, state, t: int):
        """[u, rho] -> new [u, rho]: advect, then project (every launch writes a new array)."""
        u, rho = state
        n, dev = self.n, self.device
        u_adv, rho_adv = self._field(wp.vec2), self._field()
        wp.launch(advect, dim=(n, n), inputs=[n, self.dt / self.h, u, rho], outputs=[u_adv, rho_adv], device=dev)
        div = self._field()
        wp.launch(divergence, dim=(n, n), inputs=[n, 0.5 / self.h, u_adv], outputs=[div], device=dev)
        p = self._field()  # initial guess 0 (never written)
        for _ in range(self.jacobi_iters):
            p_next = self._field()
            wp.launch(jacobi, dim=(n, n), inputs=[n, self.h * self.h, div, p], outputs=[p_next], device=dev)
            p = p_next
        u_new = self._field(wp.vec2)
        wp.launch(subtract_gradient, dim=(n, n), inputs=[n, 0.5 / self.h, u_adv, p], outputs=[u_new], device=dev)
        return [u_new, rho_adv]

    def forward(self, u0, checkpoint: bool = True, segment: int | None = None):
        """Loss of the density after ``steps`` steps from (u0, rho0); returns the final density."""
        self.loss.zero_()
        state = [u0, self.rho0]
        if checkpoint:
            state = wp.checkpoint(self.step, state, self.steps, segment=segment)
        else:
            for t in range(self.steps):
                state = self.step(state, t)
        n = self.n
        wp.launch(squared_error, dim=n, inputs=[state[1], self.target, 1.0 / (n * n)], outputs=[self.loss],
                  device=self.device)
        return state[1]

    def gradient(self, u0, checkpoint: bool = True, segment: int | None = None):
        """(loss, d loss / d u0 as NumPy, final density as NumPy) for one forward + backward pass."""
        tape = wp.Tape()
        with tape:
            rho = self.forward(u0, checkpoint, segment)
        tape.backward(self.loss)
        g = u0.grad.numpy().copy()
        out = float(self.loss.numpy()[0]), g, rho.numpy().copy()
        tape.zero()
        return out


def peak_memory(sim: StableFluids, checkpoint: bool) -> tuple[float, np.ndarray]:
    """Peak traced bytes (MiB) of one forward + backward pass, and the gradient it produced."""
    u0 = wp.zeros((sim.n, sim.n), dtype=wp.vec2, device=sim.device, requires_grad=True)
    u0.assign(np.full((sim.n, sim.n, 2), 0.1, np.float32))
    sim.gradient(u0, checkpoint)  # compile first (kernels and their adjoints), outside the measurement
    tracemalloc.start()
    tracemalloc.reset_peak()
    _, g, _ = sim.gradient(u0, checkpoint)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20, g


# ------------------------------------------------------------------------------------------ the script
def _plots(out: Path, sim: StableFluids, rho_final: np.ndarray, u0: np.ndarray, losses: list[float]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(16, 4.2), dpi=90)
    panels = [(initial_density(sim.n), "initial density"), (target_density(sim.n), "target"),
              (rho_final, f"density after {sim.steps} steps")]
    for ax, (img, title) in zip(axes, panels):
        ax.imshow(img.T, origin="lower", cmap="magma", vmin=0.0, vmax=1.0, extent=(0, 1, 0, 1))
        ax.set_title(title)
    speed = np.sqrt((u0**2).sum(-1))
    axes[3].imshow(speed.T, origin="lower", cmap="viridis", extent=(0, 1, 0, 1))
    stride = max(1, sim.n // 16)
    x = (np.arange(sim.n) + 0.5) / sim.n
    X, Y = np.meshgrid(x, x, indexing="ij")
    axes[3].quiver(X[::stride, ::stride], Y[::stride, ::stride], u0[::stride, ::stride, 0],
                   u0[::stride, ::stride, 1], color="white")
    axes[3].set_title("optimised initial velocity")
    fig.tight_layout()
    fig.savefig(out / "stable_fluids.png")
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(5, 3.5), dpi=100)
    ax.semilogy(losses)
    ax.set_xlabel("iteration")
    ax.set_ylabel("mean squared density error")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / "stable_fluids_loss.png")
    plt.close(fig)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=64, help="cells per side")
    parser.add_argument("--steps", type=int, default=1000, help="time steps of the rollout")
    parser.add_argument("--iters", type=int, default=30, help="optimisation iterations")
    parser.add_argument("--lr", type=float, default=0.05, help="Adam learning rate (velocity units)")
    parser.add_argument("--jacobi", type=int, default=12, help="Jacobi sweeps per pressure projection")
    parser.add_argument("--segment", type=int, default=None, help="steps per checkpoint segment (default sqrt)")
    parser.add_argument("--memory-steps", type=int, default=200,
                        help="steps of the checkpoint vs full-Tape memory comparison (0: skip it)")
    parser.add_argument("--small", action="store_true", help="CI size: N=32, 60 steps, 3 iterations")
    parser.add_argument("--device", default=None, help="weft device")
    parser.add_argument("--out", default="stable_fluids_output", help="output directory for the PNGs")
    args = parser.parse_args(argv)
    if args.small:
        args.n, args.steps, args.iters, args.jacobi, args.memory_steps = 32, 60, 3, 6, 40

    from tqdm import tqdm

    from weft.optim import Adam

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    result: dict = {}

    if args.memory_steps > 0:
        small = StableFluids(args.n, args.memory_steps, jacobi_iters=args.jacobi, device=args.device)
        mem_ckpt, g_ckpt = peak_memory(small, checkpoint=True)
        mem_full, g_full = peak_memory(small, checkpoint=False)
        seg = max(1, round(math.sqrt(args.memory_steps)))
        same = bool(np.array_equal(g_ckpt, g_full))
        print(f"peak memory of one forward + backward at N={args.n}, {args.memory_steps} steps: "
              f"full Tape {mem_full:.1f} MiB, wp.checkpoint (segment {seg}) {mem_ckpt:.1f} MiB "
              f"({mem_full / max(mem_ckpt, 1e-9):.1f}x less); gradients "
              f"{'identical' if same else f'max diff {np.abs(g_ckpt - g_full).max():.3g}'}")
        result.update(mem_full_mib=mem_full, mem_checkpoint_mib=mem_ckpt, same_gradient=same)

    sim = StableFluids(args.n, args.steps, jacobi_iters=args.jacobi, device=args.device)
    u0 = wp.zeros((args.n, args.n), dtype=wp.vec2, device=sim.device, requires_grad=True)
    opt = Adam([u0.flatten()], lr=args.lr)
    print(f"optimising the initial velocity: N={args.n}, {args.steps} steps (dt={sim.dt:.2e}), "
          f"{args.jacobi} Jacobi sweeps per step, {args.iters} iterations, checkpointed rollout")
    losses: list[float] = []
    t0 = time.perf_counter()
    bar = tqdm(range(args.iters), desc="iterations", unit="it")
    rho = None
    for _ in bar:
        tape = wp.Tape()
        with tape:
            rho = sim.forward(u0, checkpoint=True, segment=args.segment)
        tape.backward(sim.loss)
        losses.append(float(sim.loss.numpy()[0]))
        opt.step([u0.grad.flatten()])
        tape.zero()
        bar.set_postfix(loss=f"{losses[-1]:.4g}")
    elapsed = time.perf_counter() - t0
    rho = sim.forward(u0, checkpoint=True)
    final = float(sim.loss.numpy()[0])
    losses.append(final)
    print(f"density loss {losses[0]:.4g} -> {final:.4g} after {args.iters} iterations "
          f"({elapsed / max(args.iters, 1):.2f} s per iteration)")
    _plots(out, sim, rho.numpy(), u0.numpy(), losses)
    print(f"wrote {out / 'stable_fluids.png'} and {out / 'stable_fluids_loss.png'}")
    result.update(losses=losses, loss_initial=losses[0], loss_final=final)
    return result


if __name__ == "__main__":
    main()
