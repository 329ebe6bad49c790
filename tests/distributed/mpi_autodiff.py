"""Run under mpirun: a wp.Tape through a distributed step (halo exchanges, the slab FFT's all-to-alls, a global
sum) gives the single-process gradient, checked by central finite differences. Prints JSON on rank 0."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples" / "distributed"))
from heat_mpi import DistributedHeat
from mpi4py import MPI

import weft as wp
import weft.distributed as wd
from weft.distributed._mpi import wait_all

N, STEPS = 32, 2


@wp.kernel
def blur9(u: wp.array2d(dtype=wp.float64), out: wp.array2d(dtype=wp.float64)):
    """A 9-point weighted average: reads the corner ghosts (a halo exchange with corners)."""
    ti, tj = wp.tid()
    i = ti + 1
    j = tj + 1
    edge = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1]
    corner = u[i - 1, j - 1] + u[i - 1, j + 1] + u[i + 1, j - 1] + u[i + 1, j + 1]
    out[i, j] = wp.float64(0.5) * u[i, j] + wp.float64(0.1) * edge + wp.float64(0.025) * corner


@wp.kernel
def interior_to_complex(u: wp.array2d(dtype=wp.float64), z: wp.array2d(dtype=wp.vec2d)):
    i, j = wp.tid()
    z[i, j] = wp.vec2d(u[i + 1, j + 1], wp.float64(0.0))


@wp.kernel
def apply_symbol(z: wp.array2d(dtype=wp.vec2d), s: wp.array2d(dtype=wp.float64), out: wp.array2d(dtype=wp.vec2d)):
    i, j = wp.tid()
    out[i, j] = z[i, j] * s[i, j]


@wp.kernel
def weighted_square(z: wp.array2d(dtype=wp.vec2d), w: wp.array2d(dtype=wp.float64),
                    q: wp.array2d(dtype=wp.float64)):
    i, j = wp.tid()
    x = z[i, j][0]
    q[i, j] = w[i, j] * x * x


def symbol_slab(fft) -> np.ndarray:
    """1 / (N^2 (1 + kx^2 + ky^2)) on the transposed spectral slab (a smoothing operator, normalised)."""
    k = np.fft.fftfreq(N, d=1.0 / N)
    rows = k[fft.col_offset:fft.col_offset + fft.spectral_shape[0]]
    return 1.0 / (N * N * (1.0 + rows[:, None] ** 2 + k[None, :] ** 2))


def run(comm, u0, w, grad: bool):
    heat = DistributedHeat((N, N), k=0.1, comm=comm, dims=(0, 1), periodic=(False, True))
    dec = heat.decomp
    fft = wd.SlabFFT2D((N, N), dec, dtype=wp.vec2d)
    sym = wp.array(symbol_slab(fft), dtype=wp.float64)
    wl = dec.scatter(w, dtype=wp.float64)
    u = heat.field(u0, requires_grad=grad)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=grad)

    def spectral(shape):
        return wp.zeros(shape, dtype=wp.vec2d, requires_grad=grad)

    corners = wd.HaloExchange(dec, 1, wp.float64, corners=True)
    tape = wp.Tape()
    with tape:
        corners(u)  # sequential axes, corner ghosts included (the heat steps exchange faces only, all axes at once)
        u1 = dec.zeros(1, wp.float64, requires_grad=grad)
        wp.launch(blur9, dim=dec.local_shape, inputs=[u], outputs=[u1])
        v = heat.rollout(u1, STEPS)
        z, spec, spec2, back = (spectral(fft.local_shape), spectral(fft.spectral_shape),
                                spectral(fft.spectral_shape), spectral(fft.local_shape))
        q = wp.zeros(fft.local_shape, dtype=wp.float64, requires_grad=grad)
        wp.launch(interior_to_complex, dim=fft.local_shape, inputs=[v], outputs=[z])
        fft.forward(z, spec, wd.FFTBuffers(fft, grad))
        wp.launch(apply_symbol, dim=fft.spectral_shape, inputs=[spec, sym], outputs=[spec2])
        fft.inverse(spec2, back, wd.FFTBuffers(fft, grad))
        wp.launch(weighted_square, dim=fft.local_shape, inputs=[back, wl], outputs=[q])
        wd.global_sum(q, loss, dec)
    value = float(loss.numpy()[0])
    if not grad:
        return value, None
    tape.backward(loss)
    return value, wd.gather(u.grad, dec, halo=1)


world = MPI.COMM_WORLD
rng = np.random.default_rng(7)
u0 = rng.standard_normal((N, N))
w = rng.random((N, N))
if world.Get_rank() == 0:
    loss1, g1 = run(MPI.COMM_SELF, u0, w, grad=True)  # the single-process run (first: it compiles the kernels)
# sleeps while it waits (MPI's Barrier would spin on the CPU); rank 0 may compile for minutes on a loaded machine
wait_all([world.Ibarrier()], "barrier", [0], timeout=900)
loss, g = run(world, u0, w, grad=True)
m = N // max(world.Get_size(), 2)
# the wall row, both sides of a slab edge, the periodic edge, and corners of blocks (slab edge x periodic edge)
points = [(0, 3), (m - 1, 5), (m, 5), (N - 1, 0), (N // 2 + 1, N - 1), (m - 1, N - 1), (m, 0)]
eps = 1e-5
fd = []
for p in points:
    up, um = u0.copy(), u0.copy()
    up[p] += eps
    um[p] -= eps
    fd.append((run(world, up, w, False)[0] - run(world, um, w, False)[0]) / (2 * eps))
if world.Get_rank() == 0:
    ad = [g[p] for p in points]
    print(json.dumps({
        "ranks": world.Get_size(),
        "loss_rel_diff": abs(loss - loss1) / abs(loss1),
        "grad_rel_diff": float(np.linalg.norm(g - g1) / np.linalg.norm(g1)),
        "fd_rel_err": max(abs(a - f) / max(abs(f), 1e-300) for a, f in zip(ad, fd)),
        "grad_norm": float(np.linalg.norm(g)),
    }))
