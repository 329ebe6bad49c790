"""Tile benchmarks side by side with NumPy, PyTorch (CPU) and NVIDIA Warp (CPU, when installed).

One run prints one table:

1. 2-D FFT of a 512x512 complex64 field, computed as the seed's Poisson solver does it: ``fft_tiled`` (one block
   per row, ``tile_fft``) -> ``transpose`` -> ``fft_tiled``; against ``numpy.fft.fft2`` and ``torch.fft.fft2``;
2. the row pass alone (512 row FFTs of length 512 through tiles) against ``numpy.fft.fft(axis=1)``;
3. a 512x512x512 float32 matrix product from 64x64 ``tile_matmul`` blocks against NumPy's BLAS (``A @ B``).

Usage: ``python benchmarks/bench_tiles.py [--quick] [--no-warp] [--threads N]``. No timing is asserted anywhere; the last column
lists the targets of issue 4.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench_util import HERE, load_kernels, median_time, optional_torch, optional_warp, print_table

COLUMNS = ["weft", "numpy", "torch", "warp"]


def timed(fns: dict, repeat: int) -> dict:
    """Median seconds per call of each function, one framework after the other.

    Not interleaved: OpenMP runtimes (torch's, Warp's, weft's) keep their worker threads spinning for a while after
    a parallel region, so a framework timed right after another one would share its cores with those spinners.
    """
    out = {}
    for name, fn in fns.items():
        time.sleep(0.2)  # let the previous framework's worker threads go idle
        out[name] = median_time(fn, repeat, warmup=3)
    return out


def _fft_case(wp, mod, z: np.ndarray, block_dim: int):
    n = z.shape[0]
    pairs = np.stack([z.real, z.imag], -1).astype(np.float32)
    x = wp.array(pairs, dtype=wp.vec2f, device="cpu")
    t1 = wp.zeros((n, n), dtype=wp.vec2f, device="cpu")
    t2 = wp.zeros((n, n), dtype=wp.vec2f, device="cpu")
    t3 = wp.zeros((n, n), dtype=wp.vec2f, device="cpu")

    def rows():
        wp.launch_tiled(mod.fft_tiled, dim=[n, 1], inputs=[x], outputs=[t1], block_dim=block_dim, device="cpu")

    def fft2():
        rows()
        wp.launch(mod.transpose, dim=(n, n), inputs=[t1], outputs=[t2], device="cpu")
        wp.launch_tiled(mod.fft_tiled, dim=[n, 1], inputs=[t2], outputs=[t3], block_dim=block_dim, device="cpu")

    fft2()
    got = t3.numpy()
    got = (got[..., 0] + 1j * got[..., 1]).T
    ref = np.fft.fft2(z.astype(np.complex128))
    err = float(np.linalg.norm(got - ref) / np.linalg.norm(ref))
    return rows, fft2, err


def _gemm_case(wp, mod, a: np.ndarray, b: np.ndarray, block_dim: int):
    tile = mod.TILE
    A = wp.array(a, dtype=float, device="cpu")
    B = wp.array(b, dtype=float, device="cpu")
    C = wp.zeros((a.shape[0], b.shape[1]), dtype=float, device="cpu")

    def run():
        wp.launch_tiled(mod.tile_gemm, dim=(a.shape[0] // tile, b.shape[1] // tile), inputs=[A, B, C],
                        block_dim=block_dim, device="cpu")

    run()
    err = float(np.abs(C.numpy() - a @ b).max() / np.abs(a @ b).max())
    return run, err


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer timing rounds")
    parser.add_argument("--no-warp", action="store_true", help="skip NVIDIA Warp even when installed")
    parser.add_argument("--threads", type=int, default=0,
                        help="CPU threads for weft and torch (default: all; set OPENBLAS_NUM_THREADS for NumPy)")
    args = parser.parse_args()
    rounds = 10 if args.quick else 30

    import weft

    torch = optional_torch()
    if args.threads:
        weft.config.num_threads = args.threads
        if torch is not None:
            torch.set_num_threads(args.threads)
    warp = None if args.no_warp else optional_warp()
    w_mod = load_kernels(HERE / "_tile_kernels.py", weft, "weft")
    n = w_mod.N_GRID
    rng = np.random.default_rng(0)
    z = (rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))).astype(np.complex64)
    block_dim = 256

    w_rows, w_fft2, w_err = _fft_case(weft, w_mod, z, block_dim)
    fns = {"weft": w_fft2, "numpy": lambda: np.fft.fft2(z)}
    row_fns = {"weft": w_rows, "numpy": lambda: np.fft.fft(z, axis=1)}
    if torch is not None:
        tz = torch.from_numpy(z)
        fns["torch"] = lambda: torch.fft.fft2(tz)
        row_fns["torch"] = lambda: torch.fft.fft(tz, dim=1)
    if warp is not None:
        p_mod = load_kernels(HERE / "_tile_kernels.py", warp, "warp")
        p_rows, p_fft2, _ = _fft_case(warp, p_mod, z, block_dim)
        fns["warp"] = p_fft2
        row_fns["warp"] = p_rows
    t_fft2 = timed(fns, rounds)
    t_rows = timed(row_fns, rounds)

    m = 512
    a = rng.standard_normal((m, m)).astype(np.float32)
    b = rng.standard_normal((m, m)).astype(np.float32)
    w_gemm, g_err = _gemm_case(weft, w_mod, a, b, 64)
    gemm_fns = {"weft": w_gemm, "numpy": lambda: a @ b}
    if torch is not None:
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        gemm_fns["torch"] = lambda: ta @ tb
    if warp is not None:
        p_gemm, _ = _gemm_case(warp, p_mod, a, b, 64)
        gemm_fns["warp"] = p_gemm
    t_gemm = timed(gemm_fns, rounds)

    ms = {k: v * 1e3 for k, v in t_fft2.items()}
    rows = [
        {"name": f"fft2 {n}x{n} c64 (seed: rows, transpose, rows)", "unit": "ms", **ms,
         "target": ">= numpy; >= 5x warp"},
        {"name": f"row ffts {n}x{n} c64 (one tile pass)", "unit": "ms", **{k: v * 1e3 for k, v in t_rows.items()},
         "target": ""},
        {"name": f"matmul {m}^3 f32 from 64x64 tiles", "unit": "GFLOP/s", "higher_is_better": True,
         **{k: 2 * m ** 3 / v / 1e9 for k, v in t_gemm.items()}, "target": "within 3x of numpy"},
    ]
    cols = [c for c in COLUMNS if any(c in r for r in rows)]
    print_table(f"weft tiles on {os.cpu_count()} CPU cores (median of {rounds} runs); "
                f"fft2 rel. error {w_err:.1e}, matmul rel. error {g_err:.1e}", rows, cols)


if __name__ == "__main__":
    main()
