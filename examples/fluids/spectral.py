"""A spectral Poisson solve (lap(psi) = -omega on the periodic 2*pi square) with tile FFTs, half the FFT work of the
seed's row -> transpose -> row version.

The seed transforms the real vorticity as a complex field: 4 N row FFTs of length N per solve (forward and inverse,
along both axes) and two full transposes. Two facts halve that:

1. *Two real rows per complex FFT.* Row p and row p + N/2 go into one complex row z = omega[p] + i omega[p + N/2];
   one FFT gives Z, and the spectra of the two real rows are (Z[k] + conj(Z[-k])) / 2 and
   (Z[k] - conj(Z[-k])) / 2i. The inverse packs the two (Hermitian) row spectra back into one complex row, and the
   real and imaginary parts of its inverse FFT are the two rows of psi.
2. *Half the columns.* A real row's spectrum is Hermitian, so only the N/2 + 1 columns k = 0 ... N/2 are
   transformed along the other axis.

The column pass loads a block of columns as a tile, transposes it in the tile (no transpose kernel, no strided
memory traffic beyond whole cache lines), runs the forward FFT, multiplies by 1 / (N^2 (kx^2 + ky^2)) (the
normalisation folded in), runs the inverse FFT and stores the block back: one kernel for the whole column work.
Per solve that is 2 N row FFTs instead of 4 N, plus two cheap element-wise kernels (split / merge).

Every kernel writes arrays it does not read, so the solve records on a ``wp.Tape`` and differentiates (the
optimal-perturbation demo gives each solve its own buffers).
"""

from __future__ import annotations

import functools
import math

import numpy as np

import weft as wp

#: rows (or columns) per tile: FFTs run batched over them, which is where the SIMD width is used
TILE_ROWS = 16


@wp.func
def make_complex(re: float, im: float) -> wp.vec2f:
    return wp.vec2f(re, im)


@wp.func
def real_part(z: wp.vec2f) -> float:
    return z[0]


@wp.func
def imag_part(z: wp.vec2f) -> float:
    return z[1]


@wp.func
def copy_complex(z: wp.vec2f) -> wp.vec2f:
    return z


@wp.func
def scale_complex(z: wp.vec2f, s: float) -> wp.vec2f:
    return z * s


@wp.kernel
def split_spectra(n: int, z: wp.array2d(dtype=wp.vec2f), s: wp.array2d(dtype=wp.vec2f)):
    """s[r, k] (k <= n/2) = spectrum of real row r, from z[p] = FFT(omega[p] + i omega[p + n/2]), p = r mod n/2."""
    r, k = wp.tid()
    half = n / 2
    top = r < half
    p = wp.where(top, r, r - half)
    a = z[p, k]
    b = z[p, wp.where(k == 0, 0, n - k)]  # conj(b) = Z[-k]
    # top row: (a + conj(b)) / 2; bottom row: (a - conj(b)) / 2i
    s[r, k] = wp.where(top, wp.vec2f(0.5 * (a[0] + b[0]), 0.5 * (a[1] - b[1])),
                       wp.vec2f(0.5 * (a[1] + b[1]), -0.5 * (a[0] - b[0])))


@wp.kernel
def merge_spectra(n: int, s: wp.array2d(dtype=wp.vec2f), z: wp.array2d(dtype=wp.vec2f)):
    """z[p, k] = X_p[k] + i X_{p + n/2}[k] for all k, the row spectra X beyond n/2 from Hermitian symmetry."""
    p, k = wp.tid()
    half = n / 2
    upper = k > half
    kk = wp.where(upper, n - k, k)
    sign = wp.where(upper, -1.0, 1.0)
    a = s[p, kk]
    b = s[p + half, kk]
    # conj for k > n/2: imaginary parts flip sign
    ar = a[0]
    ai = sign * a[1]
    br = b[0]
    bi = sign * b[1]
    z[p, k] = wp.vec2f(ar - bi, ai + br)


@functools.cache
def _tile_kernels(n: int, rows: int):
    """The row and column tile kernels for an n x n grid (tile shapes are compile-time constants)."""
    N, R, HALF = n, rows, n // 2

    @wp.kernel
    def rows_forward(omega: wp.array2d(dtype=float), z: wp.array2d(dtype=wp.vec2f)):
        b, _, _ = wp.tid()
        top = wp.tile_load(omega, shape=(R, N), offset=(b * R, 0))
        bottom = wp.tile_load(omega, shape=(R, N), offset=(b * R + HALF, 0))
        t = wp.tile_map(make_complex, top, bottom)
        wp.tile_fft(t)
        wp.tile_store(z, t, offset=(b * R, 0))

    @wp.kernel
    def columns_solve(s: wp.array2d(dtype=wp.vec2f), inv_k2: wp.array2d(dtype=float),
                      out: wp.array2d(dtype=wp.vec2f)):
        c, _, _ = wp.tid()
        cols = wp.tile_load(s, shape=(N, R), offset=(0, c * R))
        # tile_map makes a register tile of the transposed view: Warp's tile_fft takes register tiles only
        t = wp.tile_map(copy_complex, wp.tile_transpose(cols))
        wp.tile_fft(t)
        k = wp.tile_load(inv_k2, shape=(R, N), offset=(c * R, 0))
        u = wp.tile_map(scale_complex, t, k)
        wp.tile_ifft(u)
        wp.tile_store(out, wp.tile_transpose(u), offset=(0, c * R))

    @wp.kernel
    def rows_inverse(z: wp.array2d(dtype=wp.vec2f), psi: wp.array2d(dtype=float)):
        b, _, _ = wp.tid()
        t = wp.tile_load(z, shape=(R, N), offset=(b * R, 0))
        wp.tile_ifft(t)
        wp.tile_store(psi, wp.tile_map(real_part, t), offset=(b * R, 0))
        wp.tile_store(psi, wp.tile_map(imag_part, t), offset=(b * R + HALF, 0))

    return rows_forward, columns_solve, rows_inverse


def inverse_laplacian_symbol(n: int) -> np.ndarray:
    """1 / (n^2 (kx^2 + ky^2)) laid out as [ky = 0 ... n/2, kx in FFT order], mean mode 0 (float32)."""
    k = np.fft.fftfreq(n, d=1.0 / n)
    ky = np.arange(n // 2 + 1, dtype=np.float64)
    k2 = ky[:, None] ** 2 + k[None, :] ** 2
    with np.errstate(divide="ignore"):
        sym = np.where(k2 > 0, 1.0 / (k2 * n * n), 0.0)
    return sym.astype(np.float32)


class SpectralBuffers:
    """The intermediate spectra of one solve (a differentiable rollout gives every solve its own)."""

    def __init__(self, n: int, device, requires_grad: bool = False):
        def spectrum(shape):
            return wp.zeros(shape, dtype=wp.vec2f, device=device, requires_grad=requires_grad)

        self.rows = spectrum((n // 2, n))         # FFT of the packed row pairs
        self.split = spectrum((n, n // 2 + 1))    # spectra of the real rows, k <= n/2
        self.solved = spectrum((n, n // 2 + 1))   # after the column FFT, the division and the inverse column FFT
        self.merged = spectrum((n // 2, n))       # packed row pairs of psi's row spectra


class SpectralPoisson:
    """psi = solve(omega): lap(psi) = -omega on the periodic [0, 2 pi)^2 grid, mean of psi zero.

    Args:
        n: grid points per side (even; the tile FFT takes any length, powers of two are fastest).
        device: weft device.
        rows: rows per tile (a divisor of n / 2 is used).
    """

    def __init__(self, n: int, device=None, rows: int = TILE_ROWS):
        if n < 2 or n % 2:
            raise ValueError(f"SpectralPoisson: n must be even and >= 2, got {n}")
        self.n = n
        self.device = wp.get_device(device)
        self.rows = math.gcd(rows, n // 2)
        self.rows_forward, self.columns_solve, self.rows_inverse = _tile_kernels(n, self.rows)
        self.inv_k2 = wp.array(inverse_laplacian_symbol(n), dtype=float, device=self.device)
        self.buffers = SpectralBuffers(n, self.device)

    def solve(self, omega, psi, buffers: SpectralBuffers | None = None) -> None:
        """Write the streamfunction of ``omega`` into ``psi`` (both (n, n) float32 arrays)."""
        n, dev, r = self.n, self.device, self.rows
        b = buffers if buffers is not None else self.buffers
        half, cols = n // 2, n // 2 + 1
        wp.launch_tiled(self.rows_forward, dim=[half // r, 1], inputs=[omega], outputs=[b.rows],
                        block_dim=64, device=dev)
        wp.launch(split_spectra, dim=(n, cols), inputs=[n, b.rows], outputs=[b.split], device=dev)
        wp.launch_tiled(self.columns_solve, dim=[(cols + r - 1) // r, 1], inputs=[b.split, self.inv_k2],
                        outputs=[b.solved], block_dim=64, device=dev)
        wp.launch(merge_spectra, dim=(half, n), inputs=[n, b.solved], outputs=[b.merged], device=dev)
        wp.launch_tiled(self.rows_inverse, dim=[half // r, 1], inputs=[b.merged], outputs=[psi],
                        block_dim=64, device=dev)
