"""The seed's Poisson-solver FFT kernels (fft_tiled / ifft_tiled / transpose), exactly as written there, against
numpy.fft.fft2 / ifft2 (unnormalised inverse, as Warp)."""

from __future__ import annotations

import numpy as np
import pytest
from sizes import sizes

import weft as wp

from ._helpers import as_complex, complex_array, rel_err

# ---- verbatim from the seed (N_GRID is a module constant there) --------------------------------------------
N_GRID = 64


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


@wp.kernel
def transpose(x: wp.array2d(dtype=wp.vec2f), y: wp.array2d(dtype=wp.vec2f)):
    i, j = wp.tid()
    y[i, j] = x[j, i]
# -------------------------------------------------------------------------------------------------------------


def make_kernels(N_GRID):  # the seed's kernel bodies, unchanged, for other sizes
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


_KERNELS = {64: (fft_tiled, ifft_tiled)}


def kernels(n):
    if n not in _KERNELS:
        _KERNELS[n] = make_kernels(n)
    return _KERNELS[n]


def fft_2d(kernel, x, n, block_dim):
    """The seed's composition: row FFT -> transpose -> row FFT (the result is the transposed 2-D transform)."""
    t1 = wp.zeros((n, n), dtype=wp.vec2f)
    t2 = wp.zeros((n, n), dtype=wp.vec2f)
    t3 = wp.zeros((n, n), dtype=wp.vec2f)
    wp.launch_tiled(kernel, dim=[n, 1], inputs=[x], outputs=[t1], block_dim=block_dim)
    wp.launch(transpose, dim=(n, n), inputs=[t1], outputs=[t2])
    wp.launch_tiled(kernel, dim=[n, 1], inputs=[t2], outputs=[t3], block_dim=block_dim)
    return t3


def check_size(n, block_dim=None):
    rng = np.random.default_rng(n)
    z = (rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))).astype(np.complex64)
    x = complex_array(z)
    fwd, inv = kernels(n)
    bd = block_dim or max(n // 2, 1)
    got = as_complex(fft_2d(fwd, x, n, bd)).T
    assert rel_err(got, np.fft.fft2(z.astype(np.complex128))) < 1e-5
    got = as_complex(fft_2d(inv, x, n, bd)).T
    assert rel_err(got, np.fft.ifft2(z.astype(np.complex128)) * n * n) < 1e-5


@pytest.mark.parametrize("n", [64, 48, 96])
def test_seed_fft2(n):
    check_size(n)


@pytest.mark.slow
@pytest.mark.parametrize("n", sizes(small=[128, 384, 1000], full=[128, 256, 512, 1024, 384, 1000]))
def test_seed_fft2_large(n):
    check_size(n)


def test_seed_module_kernels_block_dims():
    # the same kernel at several block sizes gives the same answer (block_dim only changes the lane count)
    for bd in (1, 32, 64, 256):
        check_size(64, bd)


def test_roundtrip_poisson_like():
    # forward then inverse 2-D transform returns the input scaled by n^2 (Warp's unnormalised convention)
    n = 64
    rng = np.random.default_rng(1)
    z = rng.standard_normal((n, n)).astype(np.complex64)
    fwd, inv = kernels(n)
    y = fft_2d(fwd, complex_array(z), n, 32)
    back = as_complex(fft_2d(inv, complex_array(as_complex(y).T.astype(np.complex64)), n, 32)).T
    assert rel_err(back / (n * n), z) < 1e-5


def test_seed_fft2_gradient_on_tape():
    # d/dx of L = <w, FFT2(x)> (complex pairs as reals) is the unnormalised inverse transform of w, conjugate-
    # symmetric to the forward one; the seed's three launches recorded on a Tape must give exactly that
    n = 48
    rng = np.random.default_rng(7)
    z = (rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))).astype(np.complex64)
    w = (rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))).astype(np.complex64)
    fwd, _ = kernels(n)
    x = complex_array(z)
    x.requires_grad = True
    t1, t2, t3 = (wp.zeros((n, n), dtype=wp.vec2f, requires_grad=True) for _ in range(3))
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(fwd, dim=[n, 1], inputs=[x], outputs=[t1], block_dim=32)
        wp.launch(transpose, dim=(n, n), inputs=[t1], outputs=[t2])
        wp.launch_tiled(fwd, dim=[n, 1], inputs=[t2], outputs=[t3], block_dim=32)
    tape.backward(grads={t3: complex_array(w)})
    # t3 = FFT2(z)^T; L = Re<w, t3> with pairs => grad = conj(F)^T-applied: ifft2-unnormalised of w^T
    want = np.fft.ifft2(w.T.astype(np.complex128)) * n * n
    assert rel_err(as_complex(x.grad), want) < 1e-5
