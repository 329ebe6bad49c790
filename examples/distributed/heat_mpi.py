"""Explicit heat equation u_t = alpha lap(u) on a 2-D or 3-D grid split over MPI ranks in every direction.

Each rank owns a block with one ghost layer; every step refreshes the ghosts with ``weft.distributed.HaloExchange``
and applies the 5-point (2-D) or 7-point (3-D) stencil to the block. Axes are periodic or walls (u = 0 beyond the
wall: the ghosts there keep their zeros). ``reference()`` is the same scheme in NumPy float64 on the whole grid.

    mpirun -n 4 python examples/distributed/heat_mpi.py --dim 2 --n 64 --steps 200          # 2 x 2 ranks
    mpirun -n 4 python examples/distributed/heat_mpi.py --dim 3 --n 24 --dims 2 2 1
    python examples/distributed/heat_mpi.py --dim 3 --n 16 --steps 20                      # one rank

Rank 0 prints the total heat and the relative L2 error against ``reference()``; ``--save`` writes the field.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import weft as wp
import weft.distributed as wd


@wp.kernel
def heat_step_2d(k: wp.float64, u: wp.array2d(dtype=wp.float64), o0: int, o1: int,
                 out: wp.array2d(dtype=wp.float64)):
    """One explicit Euler step of the 5-point Laplacian on a box of the block starting at (o0, o1) in the local
    array (which has one ghost layer)."""
    ti, tj = wp.tid()
    i = ti + o0
    j = tj + o1
    lap = u[i + 1, j] + u[i - 1, j] + u[i, j + 1] + u[i, j - 1] - wp.float64(4.0) * u[i, j]
    out[i, j] = u[i, j] + k * lap


@wp.kernel
def heat_step_3d(k: wp.float64, u: wp.array3d(dtype=wp.float64), o0: int, o1: int, o2: int,
                 out: wp.array3d(dtype=wp.float64)):
    """One explicit Euler step of the 7-point Laplacian on a box of the block starting at (o0, o1, o2)."""
    ti, tj, tk = wp.tid()
    i = ti + o0
    j = tj + o1
    m = tk + o2
    lap = (u[i + 1, j, m] + u[i - 1, j, m] + u[i, j + 1, m] + u[i, j - 1, m] + u[i, j, m + 1] + u[i, j, m - 1]
           - wp.float64(6.0) * u[i, j, m])
    out[i, j, m] = u[i, j, m] + k * lap


STEP = {2: heat_step_2d, 3: heat_step_3d}


def split_block(shape) -> tuple[tuple, list[tuple]]:
    """(the interior box, the boundary boxes) of a block with one ghost layer, as (offset, extent) in the local
    array: the interior's stencil reads no ghost, the boundary boxes cover the rest exactly once."""
    nd = len(shape)
    interior = (tuple([2] * nd), tuple(n - 2 for n in shape))
    shell = []
    for d in range(nd):
        for side in sorted({0, shape[d] - 1}):
            off = tuple(1 + side if e == d else (2 if e < d else 1) for e in range(nd))
            ext = tuple(1 if e == d else (shape[e] - 2 if e < d else shape[e]) for e in range(nd))
            shell.append((off, ext))
    boxes = [b for b in shell if all(n > 0 for n in b[1])]
    return interior, boxes


def initial_field(shape, seed: int = 0) -> np.ndarray:
    """A smooth random field plus a hot spot (the same on every rank)."""
    rng = np.random.default_rng(seed)
    grids = np.meshgrid(*[np.linspace(0.0, 1.0, n, endpoint=False) for n in shape], indexing="ij")
    r2 = sum((g - 0.3) ** 2 for g in grids)
    return np.exp(-40.0 * r2) + 0.1 * rng.standard_normal(shape)


def reference(u0: np.ndarray, steps: int, k: float, periodic) -> np.ndarray:
    """The same scheme in NumPy float64 on the global grid (walls: zeros beyond)."""
    u = u0.astype(np.float64).copy()
    nd = u.ndim
    for _ in range(steps):
        pad = np.pad(u, 1)
        for ax in range(nd):
            if periodic[ax]:  # wrap the ghost planes of periodic axes
                lo = [slice(None)] * nd
                hi = [slice(None)] * nd
                src_lo = [slice(None)] * nd
                src_hi = [slice(None)] * nd
                lo[ax], src_lo[ax] = 0, -2
                hi[ax], src_hi[ax] = -1, 1
                pad[tuple(lo)] = pad[tuple(src_lo)]
                pad[tuple(hi)] = pad[tuple(src_hi)]
        inner = tuple(slice(1, -1) for _ in range(nd))
        lap = -2.0 * nd * pad[inner]
        for ax in range(nd):
            for s in (-1, 1):
                idx = [slice(1, -1)] * nd
                idx[ax] = slice(1 + s, pad.shape[ax] - 1 + s)
                lap = lap + pad[tuple(idx)]
        u = u + k * lap
    return u


class DistributedHeat:
    """The heat equation on ``shape`` (2-D or 3-D) split over the ranks of ``comm``.

    Args:
        shape: global grid.
        k: alpha dt / h^2 (stable for k <= 1 / (2 dim)).
        comm: mpi4py communicator (default COMM_WORLD).
        dims: ranks per axis (0: chosen by MPI).
        periodic: a bool per axis (False: a wall with u = 0 beyond it).
        device: weft device.
    """

    def __init__(self, shape, k: float = 0.1, comm=None, dims=None, periodic=True, device=None):
        self.decomp = wd.decompose(shape, comm, dims=dims, periodic=periodic)
        self.k = float(k)
        self.device = wp.get_device(device)
        # faces only (a 5- or 7-point stencil reads no corner): every axis at once, split into start / finish
        self.halo = wd.HaloExchange(self.decomp, 1, wp.float64, self.device, corners=False)
        self.kernel = STEP[len(shape)]
        self.interior, self.boundary = split_block(self.decomp.local_shape)

    def field(self, values, requires_grad: bool = False):
        """This rank's block of the global ``values`` with a (zero) ghost layer."""
        return self.decomp.scatter(values, halo=1, dtype=wp.float64, device=self.device,
                                   requires_grad=requires_grad)

    def step(self, u, out) -> None:
        """One step of ``u`` into ``out``'s block: the interior is updated while the ghosts travel, the boundary
        after they arrived."""
        k = wp.float64(self.k)
        self.halo.start(u)
        off, ext = self.interior
        if all(n > 0 for n in ext):
            wp.launch(self.kernel, dim=ext, inputs=[k, u, *off], outputs=[out], device=self.device)
        self.halo.finish()
        for off, ext in self.boundary:
            wp.launch(self.kernel, dim=ext, inputs=[k, u, *off], outputs=[out], device=self.device)

    def run(self, u, steps: int):
        """``steps`` steps from ``u`` with two ping-pong buffers (not for a Tape: see ``rollout``)."""
        v = self.decomp.zeros(1, wp.float64, self.device)
        for _ in range(steps):
            self.step(u, v)
            u, v = v, u
        return u

    def rollout(self, u, steps: int):
        """``steps`` steps writing a new array each (records on a ``wp.Tape``); returns the last."""
        for _ in range(steps):
            v = self.decomp.zeros(1, wp.float64, self.device, requires_grad=u.grad is not None)
            self.step(u, v)
            u = v
        return u


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dim", type=int, choices=(2, 3), nargs="+", default=[2], help="2-D and/or 3-D grid")
    parser.add_argument("--n", type=int, default=64, help="points per side")
    parser.add_argument("--steps", type=int, default=200, help="time steps")
    parser.add_argument("--k", type=float, default=0.1, help="alpha dt / h^2")
    parser.add_argument("--dims", type=int, nargs="+", default=None,
                        help="ranks per axis (0: MPI chooses; with one --dim only)")
    parser.add_argument("--walls", type=int, nargs="*", default=[0], help="axes with walls (the rest periodic)")
    parser.add_argument("--save", default=None, help="write the final field to SAVE_2d.npy / SAVE_3d.npy (rank 0)")
    args = parser.parse_args(argv)
    for dim in args.dim:
        run(dim, args.n, args.steps, args.k, args.dims if len(args.dim) == 1 else None, args.walls, args.save)


def run(dim: int, n: int, steps: int, k: float, dims, walls, save) -> None:
    """One run of the script (one grid dimension)."""
    shape = (n,) * dim
    periodic = tuple(ax not in walls for ax in range(dim))
    heat = DistributedHeat(shape, k, dims=dims, periodic=periodic)
    u0 = initial_field(shape)
    t0 = time.perf_counter()
    u = heat.run(heat.field(u0), steps)
    elapsed = time.perf_counter() - t0
    total = wp.zeros(1, dtype=wp.float64)
    wd.global_sum(heat.decomp.interior(u, 1), total, heat.decomp)
    field = wd.gather(u, heat.decomp, halo=1)
    if heat.decomp.rank == 0:
        ref = reference(u0, steps, k, periodic)
        err = np.linalg.norm(field - ref) / np.linalg.norm(ref)
        print(f"{dim}-D heat, grid {shape}, ranks {heat.decomp.dims}, periodic {periodic}: {steps} steps "
              f"in {elapsed:.3f} s; total heat {total.numpy()[0]:.6f}; relative L2 vs NumPy {err:.2e}")
        if save:
            np.save(f"{save}_{dim}d.npy", field)


if __name__ == "__main__":
    main()
