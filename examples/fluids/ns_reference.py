"""NumPy reference for the 2-D Navier-Stokes demo: the exact scheme of ``navier_stokes.py``, in any float dtype.

Vorticity-streamfunction form on the periodic square [0, 2*pi)^2 with N x N points (h = 2*pi / N):

    d(omega)/dt = (1/Re) lap(omega) + d(omega)/dy d(psi)/dx - d(omega)/dx d(psi)/dy,     lap(psi) = -omega

- the Laplacian and the Jacobian use second-order central differences (the 5-point stencil of ``rk3_update``;
  axis 0 is x, "left/right", axis 1 is y, "down/top");
- SSP-RK3 stages ``omega_out = c0 * omega_0 + c1 * omega_in + c2 * dt * rhs(omega_in, psi_in)`` with
  (c0, c1, c2) = (1, 0, 1), (3/4, 1/4, 1/4), (1/3, 2/3, 2/3), the streamfunction re-solved after every stage;
- the Poisson solve is spectral: psi_hat = omega_hat / (kx^2 + ky^2), with the mean (k = 0) mode set to 0;
- the initial vorticity has a San-Staples-type energy spectrum
  E(k) = 4 / (3 sqrt(pi)) * k^4 / k0^5 * exp(-(k / k0)^2) and random phases from a fixed seed.

Used as the float64 ground truth in tests and (in float32) as the NumPy column of the benchmark.
"""

from __future__ import annotations

import numpy as np

RK3_COEFFS = ((1.0, 0.0, 1.0), (3.0 / 4.0, 1.0 / 4.0, 1.0 / 4.0), (1.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0))
DOMAIN = 2.0 * np.pi


def wavenumbers(n: int) -> np.ndarray:
    """Integer wavenumbers of an n-point periodic grid on a 2*pi domain (NumPy FFT order)."""
    return np.fft.fftfreq(n, d=1.0 / n)


def initial_vorticity(n: int, seed: int = 42, k0: float = 10.0) -> np.ndarray:
    """A float64 (n, n) vorticity field with the San-Staples spectrum peaked at ``k0`` and random phases.

    The amplitude of each Fourier mode is sqrt(k E(k) / pi); phases are uniform in [0, 2*pi). Taking the real part
    of the inverse transform keeps the field real (it symmetrises the spectrum).
    """
    rng = np.random.default_rng(seed)
    k1 = wavenumbers(n)
    kx, ky = np.meshgrid(k1, k1, indexing="ij")
    k = np.sqrt(kx**2 + ky**2)
    energy = 4.0 / (3.0 * np.sqrt(np.pi)) * k**4 / k0**5 * np.exp(-((k / k0) ** 2))
    amplitude = np.sqrt(k * energy / np.pi)
    phase = np.exp(2j * np.pi * rng.random((n, n)))
    omega_hat = amplitude * phase
    omega_hat[0, 0] = 0.0
    return np.real(np.fft.ifft2(omega_hat)) * n * n


def stable_dt(omega: np.ndarray, re: float, cfl: float = 0.3) -> float:
    """A time step with advective CFL number ``cfl`` for the initial field (and well inside the diffusive limit)."""
    n = omega.shape[0]
    h = DOMAIN / n
    psi = solve_poisson(np.asarray(omega, np.float64))
    u = (np.roll(psi, -1, 1) - np.roll(psi, 1, 1)) / (2 * h)
    v = (np.roll(psi, -1, 0) - np.roll(psi, 1, 0)) / (2 * h)
    umax = max(float(np.abs(u).max()), float(np.abs(v).max()), 1e-6)
    return min(cfl * h / umax, 0.2 * h * h * re)


def solve_poisson(omega: np.ndarray) -> np.ndarray:
    """psi with lap(psi) = -omega, spectrally (real-to-complex FFTs), in omega's precision (complex64 for float32
    input)."""
    n = omega.shape[0]
    kx = wavenumbers(n).astype(omega.dtype)
    ky = np.arange(n // 2 + 1, dtype=omega.dtype)
    k2 = kx[:, None] ** 2 + ky[None, :] ** 2
    k2[0, 0] = 1.0
    psi_hat = np.fft.rfft2(omega) / k2
    psi_hat[0, 0] = 0.0
    return np.fft.irfft2(psi_hat, s=omega.shape).astype(omega.dtype, copy=False)


def rhs(omega: np.ndarray, psi: np.ndarray, h: float, re: float) -> np.ndarray:
    """(1/Re) lap(omega) + J2 - J1 with the central differences of ``rk3_update``."""
    right, left = np.roll(omega, -1, 0), np.roll(omega, 1, 0)
    top, down = np.roll(omega, -1, 1), np.roll(omega, 1, 1)
    inv_h2 = 1.0 / (h * h)
    inv_2h = 1.0 / (2.0 * h)
    laplacian = (right + left + top + down - 4.0 * omega) * inv_h2
    j1 = ((right - left) * inv_2h) * ((np.roll(psi, -1, 1) - np.roll(psi, 1, 1)) * inv_2h)
    j2 = ((top - down) * inv_2h) * ((np.roll(psi, -1, 0) - np.roll(psi, 1, 0)) * inv_2h)
    return (1.0 / re) * laplacian + j2 - j1


class ReferenceSolver:
    """The scheme step by step in NumPy (float64 by default)."""

    def __init__(self, omega: np.ndarray, re: float, dt: float, dtype=np.float64):
        self.n = omega.shape[0]
        self.h = DOMAIN / self.n
        self.re = re
        self.dt = dt
        self.omega = np.array(omega, dtype=dtype)
        self.psi = solve_poisson(self.omega)

    def step(self) -> None:
        omega_0 = self.omega
        omega, psi = omega_0, self.psi
        for c0, c1, c2 in RK3_COEFFS:
            omega = c0 * omega_0 + c1 * omega + c2 * self.dt * rhs(omega, psi, self.h, self.re)
            psi = solve_poisson(omega)
        self.omega, self.psi = omega, psi

    def run(self, steps: int) -> np.ndarray:
        for _ in range(steps):
            self.step()
        return self.omega
