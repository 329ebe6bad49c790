"""Acceptance: the seed's rk3_update kernel and cyclic_index func (shared/seeds/004_981d61ad81f696fc.txt) run as
written under ``import weft as wp`` with a 2-D launch and inputs=/outputs=, and match NumPy float64 to float32
rounding.

The kernel body is the seed's, verbatim, except for one whitespace fix: the seed indents the docstring by three
spaces and the body by four, which Python itself rejects (IndentationError), so the docstring is indented by four.
The seed does not print cyclic_index; this is the natural version.
"""

import numpy as np
import pytest

import weft as wp


@wp.func
def cyclic_index(idx: int, n: int):
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


def rk3_reference(n, h, re, dt, c0, c1, c2, omega_0, omega_1, psi):
    """The same stencil in NumPy float64 (axis 0 is i, axis 1 is j; periodic)."""
    w0, w1, p = (np.asarray(a, dtype=np.float64) for a in (omega_0, omega_1, psi))

    def shift(a, di, dj):  # a[i + di, j + dj] with wrap-around
        return np.roll(a, (-di, -dj), axis=(0, 1))

    lap = (shift(w1, 1, 0) + shift(w1, -1, 0) + shift(w1, 0, 1) + shift(w1, 0, -1) - 4.0 * w1) / (h * h)
    inv_2h = 1.0 / (2.0 * h)
    j1 = ((shift(w1, 1, 0) - shift(w1, -1, 0)) * inv_2h) * ((shift(p, 0, 1) - shift(p, 0, -1)) * inv_2h)
    j2 = ((shift(w1, 0, 1) - shift(w1, 0, -1)) * inv_2h) * ((shift(p, 1, 0) - shift(p, -1, 0)) * inv_2h)
    rhs = (1.0 / re) * lap + j2 - j1
    return c0 * w0 + c1 * w1 + c2 * dt * rhs


class Solver:
    """Holds the state the way the seed's solver does, so the launch below is the seed's, character for character."""

    rk3_coeffs = ((1.0, 0.0, 1.0), (3.0 / 4.0, 1.0 / 4.0, 1.0 / 4.0), (1.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0))

    def __init__(self, n, seed=0):
        rng = np.random.default_rng(seed)
        self.n = n
        self.h = 2.0 * np.pi / n
        self.re = 1000.0
        self.dt = 0.01
        x = np.arange(n) * self.h
        X, Y = np.meshgrid(x, x, indexing="ij")
        omega = np.sin(X) * np.cos(2 * Y) + 0.1 * rng.standard_normal((n, n))
        psi = np.cos(X + Y) + 0.1 * rng.standard_normal((n, n))
        self.omega_0 = wp.array(omega.astype(np.float32))
        self.omega_1 = wp.array(omega.astype(np.float32))
        self.psi = wp.array(psi.astype(np.float32))
        self.omega_tmp = wp.zeros((n, n), dtype=float)

    def substep(self, stage_coeff):
        wp.launch(rk3_update,
                  dim=(self.n, self.n), # one thread per grid point
                  inputs=[self.n, self.h, self.re, self.dt,
                          stage_coeff[0], stage_coeff[1], stage_coeff[2],
                          self.omega_0,
                          self.omega_1,
                          self.psi,
                        ],
                  outputs=[self.omega_tmp]
                 )


def _assert_float32_close(got, ref, rtol=2e-6):
    scale = np.max(np.abs(ref))
    err = np.max(np.abs(got.astype(np.float64) - ref))
    assert err <= rtol * scale, f"max error {err:.3e} vs max |ref| {scale:.3e} (relative {err / scale:.2e})"


@pytest.mark.parametrize("n", [16, 64, 97])
def test_rk3_substep_matches_numpy(n):
    s = Solver(n)
    coeffs = [0.75, 0.25, 0.25]
    s.substep(coeffs)
    ref = rk3_reference(np.int32(n), np.float32(s.h), np.float32(s.re), np.float32(s.dt), *np.float32(coeffs),
                        s.omega_0.numpy(), s.omega_1.numpy(), s.psi.numpy())
    _assert_float32_close(s.omega_tmp.numpy(), ref)
    # and the update is not trivial: rhs contributes well above rounding
    assert np.max(np.abs(ref - (0.75 * s.omega_0.numpy() + 0.25 * s.omega_1.numpy()))) > 1e-4


def test_full_rk3_step_matches_numpy():
    s = Solver(48, seed=1)
    w0 = s.omega_0.numpy().astype(np.float64)
    psi = s.psi.numpy().astype(np.float64)
    w = w0.copy()
    for c in s.rk3_coeffs:
        s.substep(c)
        wp.copy(s.omega_1, s.omega_tmp)  # the next stage reads this stage's result
        w = rk3_reference(s.n, s.h, s.re, s.dt, *c, w0, w, psi)
    _assert_float32_close(s.omega_1.numpy(), w, rtol=5e-6)


def test_cyclic_index_wraps_negative_indices():
    assert cyclic_index.func(-1, 5) == 4  # on the host the func is plain Python (Python %, already >= 0)

    @wp.kernel
    def probe(out: wp.array(dtype=int)):
        k = wp.tid()
        out[k] = cyclic_index(k - 7, 5)

    out = wp.zeros(14, dtype=int)
    wp.launch(probe, dim=14, inputs=[out])
    np.testing.assert_array_equal(out.numpy(), [(k - 7) % 5 for k in range(14)])
