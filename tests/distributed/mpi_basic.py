"""Run under mpirun: checks decompose, halo exchange (dtypes, widths, periodic or not, 1-3-D), gather,
reductions and the slab FFT against NumPy; prints one JSON line per check on rank 0."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from mpi4py import MPI

import weft as wp
import weft.distributed as wd

comm = MPI.COMM_WORLD
results = {}


def expected_halo(g, dec, h):
    """The local array with ghosts, cut from the global array (wrapped where periodic, 0 beyond walls)."""
    out = np.zeros(tuple(n + 2 * h for n in dec.local_shape) + g.shape[dec.ndim:], dtype=g.dtype)
    idx = []
    for ax in range(dec.ndim):
        gi = np.arange(dec.offset[ax] - h, dec.offset[ax] + dec.local_shape[ax] + h)
        idx.append(gi)
    mesh = np.meshgrid(*idx, indexing="ij")
    valid = np.ones(mesh[0].shape, dtype=bool)
    wrapped = []
    for ax, m in enumerate(mesh):
        n = dec.shape[ax]
        if dec.periodic[ax]:
            wrapped.append(m % n)
        else:
            valid &= (m >= 0) & (m < n)
            wrapped.append(np.clip(m, 0, n - 1))
    vals = g[tuple(wrapped)]
    out[valid] = vals[valid]
    return out


def check_halo(shape, dims, periodic, h, dtype, npdtype, trailing=(), corners=True):
    dec = wd.decompose(shape, comm, dims=dims, periodic=periodic)
    rng = np.random.default_rng(1)
    g = rng.standard_normal(shape + trailing).astype(npdtype) if npdtype != np.int32 else \
        rng.integers(-100, 100, size=shape + trailing).astype(np.int32)
    a = dec.scatter(g, halo=h, dtype=dtype)
    want = expected_halo(g, dec, h)
    if corners:
        wd.halo_exchange(a, dec, halo=h)
        ok = np.array_equal(a.numpy(), want)
    else:  # faces only, split into start / finish: every point with at most one ghost coordinate
        ex = wd.HaloExchange(dec, h, dtype, corners=False)
        ex.start(a)
        ex.finish()
        ghost = sum(((np.arange(n + 2 * h) < h) | (np.arange(n + 2 * h) >= n + h)).reshape(
            [-1 if d == ax else 1 for d in range(dec.ndim)]) for ax, n in enumerate(dec.local_shape))
        face = ghost <= 1
        ok = np.array_equal(a.numpy()[face], want[face])
    back = wd.gather(a, dec, halo=h)
    ok_gather = bool(np.array_equal(back, g)) if dec.rank == 0 else True
    return bool(comm.allreduce(int(not (ok and ok_gather))) == 0)


results["halo_1d_f32"] = check_halo((17,), None, True, 2, float, np.float32)
results["halo_2d_f64_walls"] = check_halo((12, 10), None, (False, True), 1, wp.float64, np.float64)
results["halo_2d_vec3_w2"] = check_halo((9, 11), None, True, 2, wp.vec3, np.float32, (3,))
results["halo_2d_faces_split"] = check_halo((9, 11), None, (True, False), 2, float, np.float32, corners=False)
results["halo_3d_faces_split"] = check_halo((6, 5, 7), None, True, 1, float, np.float32, corners=False)
results["halo_3d_f32_walls"] = check_halo((6, 5, 7), None, (True, False, True), 1, float, np.float32)

# reductions
dec = wd.decompose((16, 8), comm, dims=(comm.size, 1))
g = np.arange(16 * 8, dtype=np.float64).reshape(16, 8)
a = dec.scatter(g, halo=1, dtype=wp.float64)
s = wp.zeros(1, dtype=wp.float64)
wd.global_sum(dec.interior(a, 1), s, dec)
results["global_sum"] = bool(abs(s.numpy()[0] - g.sum()) < 1e-9)
results["global_max"] = wd.global_reduce(float(comm.rank), dec, wd.ReduceOp.MAX) == comm.size - 1
v = wp.array(np.full(3, comm.rank + 1, dtype=np.int32), dtype=wp.int32)  # an MPI op, no kernel
wd.allreduce(v, dec, wd.ReduceOp.SUM)
results["allreduce_int"] = bool((v.numpy() == sum(range(1, comm.size + 1))).all())

# slab FFT vs NumPy
for n0, n1, dt, cdt, tol in ((64, 64, wp.vec2f, np.complex64, 1e-5), (32, 32, wp.vec2d, np.complex128, 1e-12)):
    fft = wd.SlabFFT2D((n0, n1), comm, dtype=dt)
    rng = np.random.default_rng(3)
    z = (rng.standard_normal((n0, n1)) + 1j * rng.standard_normal((n0, n1))).astype(cdt)
    m0, m1 = fft.local_shape[0], fft.spectral_shape[0]
    x = wp.array(np.ascontiguousarray(z[fft.row_offset:fft.row_offset + m0]).view(np.float32 if dt is wp.vec2f
                 else np.float64).reshape(m0, n1, 2), dtype=dt)
    spec = wp.zeros(fft.spectral_shape, dtype=dt)
    fft.forward(x, spec)
    got = spec.numpy()[..., 0] + 1j * spec.numpy()[..., 1]
    want = np.fft.fft2(z.astype(np.complex128)).T[fft.col_offset:fft.col_offset + m1]
    err_f = np.abs(got - want).max() / np.abs(want).max()
    back = wp.zeros(fft.local_shape, dtype=dt)
    fft.inverse(spec, back)
    gb = (back.numpy()[..., 0] + 1j * back.numpy()[..., 1]) / (n0 * n1)
    err_i = np.abs(gb - z[fft.row_offset:fft.row_offset + m0]).max()
    results[f"fft_{n0}x{n1}_{dt.__name__}"] = bool(comm.allreduce(int(err_f > tol or err_i > tol)) == 0)

if comm.rank == 0:
    print(json.dumps(results))
