"""Each tile primitive against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp

from ._helpers import as_complex, complex_array, rel_err

TM = 8
TN = 4


@wp.kernel
def load_store(a: wp.array2d(dtype=float), out: wp.array2d(dtype=float), oi: int, oj: int):
    t = wp.tile_load(a, shape=(TM, TN), offset=(oi, oj))
    wp.tile_store(out, t, offset=(oi + 1, oj - 1))


def test_load_store_out_of_bounds():
    # loads read zeros outside the array; stores skip elements outside it (Warp semantics)
    a = np.arange(100, dtype=np.float32).reshape(10, 10) + 1.0
    for oi, oj in [(0, 0), (6, 8), (-3, -2), (9, 9)]:
        out = wp.zeros((10, 10), dtype=float)
        wp.launch_tiled(load_store, dim=1, inputs=[wp.array(a), out, oi, oj], block_dim=16)
        pad = np.zeros((30, 30), np.float32)
        pad[10:20, 10:20] = a
        tile = pad[10 + oi:10 + oi + TM, 10 + oj:10 + oj + TN]
        want = np.zeros((30, 30), np.float32)
        want[10 + oi + 1:10 + oi + 1 + TM, 10 + oj - 1:10 + oj - 1 + TN] = tile
        np.testing.assert_array_equal(out.numpy(), want[10:20, 10:20])


@wp.kernel
def row_sum(a: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(a[i], 16)
    s = wp.tile_sum(t)
    wp.tile_store(out, s, offset=i)


def test_view_load_and_sum():
    a = np.random.default_rng(0).standard_normal((5, 16)).astype(np.float32)
    out = wp.zeros(5, dtype=float)
    wp.launch_tiled(row_sum, dim=5, inputs=[wp.array(a), out], block_dim=8)
    np.testing.assert_allclose(out.numpy(), a.sum(1), rtol=1e-5)


@wp.kernel
def constructors(out: wp.array2d(dtype=float), iout: wp.array(dtype=int)):
    z = wp.tile_zeros(shape=(2, 3), dtype=float)
    o = wp.tile_ones(shape=(2, 3), dtype=float)
    f = wp.tile_full(shape=(2, 3), value=2.5, dtype=float)
    r = z + o * 3.0 - f
    wp.tile_store(out, r)
    wp.tile_store(iout, wp.tile_arange(2, 12, 2, dtype=int))


@wp.kernel
def aranges(f: wp.array(dtype=float), i: wp.array(dtype=int), q: wp.array(dtype=float)):
    wp.tile_store(f, wp.tile_arange(0.0, 2.0, 0.3))  # float32 by default; the partial last step kept (7 values)
    wp.tile_store(i, wp.tile_arange(10, 0, -3, dtype=int))  # 10, 7, 4, 1
    wp.tile_store(q, wp.tile_arange(0.0, 0.3, 0.1))  # (0.3 - 0) / 0.1 is 3 in float32: 3 values, not 4


def test_tile_arange_lengths_and_errors():
    f, i, q = wp.full(8, -1.0, dtype=float), wp.full(5, -1, dtype=int), wp.full(4, -1.0, dtype=float)
    wp.launch_tiled(aranges, dim=1, inputs=[f, i, q], block_dim=4)
    np.testing.assert_allclose(f.numpy(), [*(np.float32(0.3) * np.arange(7, dtype=np.float32)), -1.0])
    np.testing.assert_array_equal(i.numpy(), [10, 7, 4, 1, -1])
    np.testing.assert_allclose(q.numpy(), [0.0, np.float32(0.1), np.float32(0.2), -1.0], rtol=1e-7)

    @wp.kernel
    def zero_step(out: wp.array(dtype=int)):
        wp.tile_store(out, wp.tile_arange(0, 10, 0, dtype=int))

    @wp.kernel
    def too_wide(out: wp.array(dtype=int)):
        wp.tile_store(out, wp.tile_arange(0, 2**40, dtype=int))

    @wp.kernel
    def runtime_stop(out: wp.array(dtype=int), n: int):
        wp.tile_store(out, wp.tile_arange(0, n, 1, dtype=int))

    for k, err, match in ((zero_step, ValueError, "step cannot be zero"), (too_wide, ValueError, "out of range"),
                          (runtime_stop, TypeError, "compile time constants, but stop")):
        with pytest.raises(err, match=match):
            wp.launch_tiled(k, dim=1, inputs=[i] + ([3] if k is runtime_stop else []), block_dim=4)


def test_constructors_and_arithmetic():
    out = wp.zeros((2, 3), dtype=float)
    iout = wp.zeros(5, dtype=int)
    wp.launch_tiled(constructors, dim=1, inputs=[out, iout], block_dim=4)
    np.testing.assert_allclose(out.numpy(), np.full((2, 3), 0.5))
    np.testing.assert_array_equal(iout.numpy(), np.arange(2, 12, 2))


@wp.func
def smooth(x: float, y: float):
    return wp.sin(x) * y + 1.0


@wp.func
def bigger(x: float, y: float):
    return wp.max(x, y)


@wp.kernel
def map_reduce(a: wp.array(dtype=float), b: wp.array(dtype=float), out: wp.array(dtype=float),
               red: wp.array(dtype=float), idx: wp.array(dtype=int)):
    x = wp.tile_load(a, shape=32)
    y = wp.tile_load(b, shape=32)
    m = wp.tile_map(smooth, x, y)
    n = wp.tile_map(wp.abs, -m)
    wp.tile_store(out, n / 2.0)
    wp.tile_store(red, wp.tile_reduce(wp.add, x), offset=0)
    wp.tile_store(red, wp.tile_reduce(bigger, x), offset=1)
    wp.tile_store(red, wp.tile_min(x), offset=2)
    wp.tile_store(red, wp.tile_max(x), offset=3)
    wp.tile_store(idx, wp.tile_argmin(x), offset=0)
    wp.tile_store(idx, wp.tile_argmax(x), offset=1)


def test_map_reduce():
    rng = np.random.default_rng(2)
    a = rng.standard_normal(32).astype(np.float32)
    b = rng.standard_normal(32).astype(np.float32)
    out = wp.zeros(32, dtype=float)
    red = wp.zeros(4, dtype=float)
    idx = wp.zeros(2, dtype=int)
    wp.launch_tiled(map_reduce, dim=1, inputs=[wp.array(a), wp.array(b), out, red, idx], block_dim=32)
    np.testing.assert_allclose(out.numpy(), np.abs(np.sin(a) * b + 1.0) / 2.0, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(red.numpy(), [a.sum(), a.max(), a.min(), a.max()], rtol=1e-5)
    np.testing.assert_array_equal(idx.numpy(), [a.argmin(), a.argmax()])


@wp.kernel
def reshape_ops(a: wp.array2d(dtype=float), t_out: wp.array2d(dtype=float), b_out: wp.array2d(dtype=float),
                v_out: wp.array2d(dtype=float), r_out: wp.array(dtype=float)):
    t = wp.tile_load(a, shape=(4, 6))
    wp.tile_store(t_out, wp.tile_transpose(t))
    row = wp.tile_load(a[1], shape=6)
    wp.tile_store(b_out, wp.tile_broadcast(row, shape=(3, 6)))
    wp.tile_store(v_out, wp.tile_view(t, offset=(1, 2), shape=(2, 3)))
    wp.tile_store(r_out, wp.tile_view(t, offset=(2,)))


def test_transpose_broadcast_view():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    t_out = wp.zeros((6, 4), dtype=float)
    b_out = wp.zeros((3, 6), dtype=float)
    v_out = wp.zeros((2, 3), dtype=float)
    r_out = wp.zeros(6, dtype=float)
    wp.launch_tiled(reshape_ops, dim=1, inputs=[wp.array(a), t_out, b_out, v_out, r_out], block_dim=4)
    np.testing.assert_array_equal(t_out.numpy(), a.T)
    np.testing.assert_array_equal(b_out.numpy(), np.broadcast_to(a[1], (3, 6)))
    np.testing.assert_array_equal(v_out.numpy(), a[1:3, 2:5])
    np.testing.assert_array_equal(r_out.numpy(), a[2])


TILE = 16


@wp.kernel
def gemm(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=(TILE, TILE), dtype=float)
    count = A.shape[1] // TILE
    for k in range(count):
        a = wp.tile_load(A, shape=(TILE, TILE), offset=(i * TILE, k * TILE))
        b = wp.tile_load(B, shape=(TILE, TILE), offset=(k * TILE, j * TILE))
        wp.tile_matmul(a, b, acc)
    wp.tile_store(C, acc, offset=(i * TILE, j * TILE))


@wp.kernel
def matmul_ops(A: wp.array2d(dtype=wp.float64), B: wp.array2d(dtype=wp.float64), C: wp.array2d(dtype=wp.float64),
               D: wp.array2d(dtype=wp.float64)):
    a = wp.tile_load(A, shape=(3, 5))
    b = wp.tile_load(B, shape=(5, 2))
    wp.tile_store(C, a @ b)
    c = wp.tile_load(D, shape=(3, 2))
    wp.tile_matmul(a, b, c, alpha=2.0, beta=0.5)
    wp.tile_store(D, c)


def test_matmul():
    rng = np.random.default_rng(3)
    A = rng.standard_normal((48, 64)).astype(np.float32)
    B = rng.standard_normal((64, 32)).astype(np.float32)
    C = wp.zeros((48, 32), dtype=float)
    wp.launch_tiled(gemm, dim=(3, 2), inputs=[wp.array(A), wp.array(B), C], block_dim=64)
    np.testing.assert_allclose(C.numpy(), A @ B, rtol=1e-4, atol=1e-4)
    a = rng.standard_normal((3, 5))
    b = rng.standard_normal((5, 2))
    d = rng.standard_normal((3, 2))
    c_out = wp.zeros((3, 2), dtype=wp.float64)
    d_out = wp.array(d, dtype=wp.float64)
    wp.launch_tiled(matmul_ops, dim=1, inputs=[wp.array(a, dtype=wp.float64), wp.array(b, dtype=wp.float64), c_out,
                                               d_out], block_dim=8)
    np.testing.assert_allclose(c_out.numpy(), a @ b)
    np.testing.assert_allclose(d_out.numpy(), 2.0 * a @ b + 0.5 * d)


@wp.kernel
def cholesky(A: wp.array2d(dtype=wp.float64), b: wp.array(dtype=wp.float64), L_out: wp.array2d(dtype=wp.float64),
             x_out: wp.array(dtype=wp.float64)):
    a = wp.tile_load(A, shape=(6, 6))
    L = wp.tile_cholesky(a)
    wp.tile_store(L_out, L)
    wp.tile_store(x_out, wp.tile_cholesky_solve(L, wp.tile_load(b, shape=6)))


def test_cholesky():
    rng = np.random.default_rng(4)
    m = rng.standard_normal((6, 6))
    A = m @ m.T + 6 * np.eye(6)
    b = rng.standard_normal(6)
    L_out = wp.zeros((6, 6), dtype=wp.float64)
    x_out = wp.zeros(6, dtype=wp.float64)
    wp.launch_tiled(cholesky, dim=1, inputs=[wp.array(A, dtype=wp.float64), wp.array(b, dtype=wp.float64), L_out,
                                             x_out], block_dim=8)
    np.testing.assert_allclose(L_out.numpy(), np.linalg.cholesky(A), rtol=1e-12)
    np.testing.assert_allclose(x_out.numpy(), np.linalg.solve(A, b), rtol=1e-10)


@wp.kernel
def atomic(a: wp.array(dtype=float), out: wp.array(dtype=float), old: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(a, shape=8)
    prev = wp.tile_atomic_add(out, t, offset=4)
    wp.tile_store(old[i], prev)


def test_atomic_add():
    a = np.arange(8, dtype=np.float32)
    out = wp.zeros(10, dtype=float)
    old = wp.zeros((3, 8), dtype=float)
    wp.launch_tiled(atomic, dim=3, inputs=[wp.array(a), out, old], block_dim=4)
    want = np.zeros(10, np.float32)
    want[4:] = 3 * a[:6]
    np.testing.assert_array_equal(out.numpy(), want)
    assert np.all(old.numpy()[:, 6:] == 0)  # out-of-bounds elements read as zero


@wp.kernel
def fft_rows(x: wp.array2d(dtype=wp.vec2d), y: wp.array2d(dtype=wp.vec2d), z: wp.array2d(dtype=wp.vec2d)):
    a = wp.tile_load(x, shape=(5, 97))
    wp.tile_fft(a)
    wp.tile_store(y, a)
    wp.tile_ifft(a)
    wp.tile_store(z, a)


def test_fft_batched_prime_length_float64():
    # leading dimension batched; 97 is prime (Bluestein) in double precision
    rng = np.random.default_rng(5)
    v = rng.standard_normal((5, 97)) + 1j * rng.standard_normal((5, 97))
    y = wp.zeros((5, 97), dtype=wp.vec2d)
    z = wp.zeros((5, 97), dtype=wp.vec2d)
    wp.launch_tiled(fft_rows, dim=1, inputs=[complex_array(v), y, z], block_dim=32)
    assert rel_err(as_complex(y), np.fft.fft(v, axis=1)) < 1e-12
    assert rel_err(as_complex(z), v * 97) < 1e-12


@pytest.mark.parametrize("n", [1, 2, 3, 5, 7, 12, 30, 49, 121, 210, 1009])
def test_fft_lengths(n):
    @wp.kernel
    def fft1(x: wp.array2d(dtype=wp.vec2f), y: wp.array2d(dtype=wp.vec2f)):
        a = wp.tile_load(x, shape=(3, n))
        wp.tile_fft(a)
        wp.tile_store(y, a)

    rng = np.random.default_rng(n)
    v = (rng.standard_normal((3, n)) + 1j * rng.standard_normal((3, n))).astype(np.complex64)
    y = wp.zeros((3, n), dtype=wp.vec2f)
    wp.launch_tiled(fft1, dim=1, inputs=[complex_array(v), y], block_dim=16)
    assert rel_err(as_complex(y), np.fft.fft(v.astype(np.complex128), axis=1)) < 1e-5


@wp.kernel
def fft_row_groups(a6: wp.array2d(dtype=wp.vec2f), a27: wp.array2d(dtype=wp.vec2f), a64: wp.array2d(dtype=wp.vec2f),
                   a512: wp.array2d(dtype=wp.vec2f), a40: wp.array2d(dtype=wp.vec2d)):
    t6 = wp.tile_load(a6, shape=(11, 6))
    wp.tile_fft(t6)
    wp.tile_store(a6, t6)
    t27 = wp.tile_load(a27, shape=(11, 27))
    wp.tile_fft(t27)
    wp.tile_store(a27, t27)
    t64 = wp.tile_load(a64, shape=(11, 64))
    wp.tile_ifft(t64)
    wp.tile_store(a64, t64)
    t512 = wp.tile_load(a512, shape=(11, 512))
    wp.tile_fft(t512)
    wp.tile_store(a512, t512)
    t40 = wp.tile_load(a40, shape=(11, 40))
    wp.tile_ifft(t40)
    wp.tile_store(a40, t40)


def test_fft_row_groups_and_pass_orders():
    # 11 rows: a group of 8 rows transformed together and 3 rows one at a time (lengths <= 256), or all 11 one at a
    # time (512); the passes' three loop orders (stride 1, the runtime-stride loop of radix 3 after radix 2 (6) and
    # of 3^3 (27), the vectorised-across-rows loop) in float32 and float64
    rng = np.random.default_rng(11)
    vals = {n: rng.standard_normal((11, n)) + 1j * rng.standard_normal((11, n)) for n in (6, 27, 64, 512, 40)}
    arrs = [complex_array(vals[n].astype(np.complex64)) for n in (6, 27, 64, 512)]
    arrs.append(complex_array(vals[40]))
    wp.launch_tiled(fft_row_groups, dim=1, inputs=arrs, block_dim=16)
    for n, a in zip((6, 27, 512), (arrs[0], arrs[1], arrs[3])):
        assert rel_err(as_complex(a), np.fft.fft(vals[n].astype(np.complex64).astype(np.complex128), axis=1)) < 1e-5
    want64 = 64 * np.fft.ifft(vals[64].astype(np.complex64).astype(np.complex128), axis=1)
    assert rel_err(as_complex(arrs[2]), want64) < 1e-5
    assert rel_err(as_complex(arrs[4]), 40 * np.fft.ifft(vals[40], axis=1)) < 1e-12


@wp.kernel
def aliasing(a: wp.array2d(dtype=float), out: wp.array2d(dtype=float), n: int):
    acc = wp.tile_load(a, shape=(4, 4))
    eye = wp.tile_load(a, shape=(4, 4), offset=(4, 0))
    for _k in range(n):
        old = acc
        wp.tile_matmul(eye, eye, acc)  # acc += eye @ eye, in place
        acc = acc + old * 0.5  # old must still hold the value from before the update
    wp.tile_store(out, acc)
    first = wp.tile_load(a, shape=(4, 4))
    keep = first
    doubled = first * 2.0
    wp.tile_store(out, keep + doubled, offset=(4, 0))


def test_values_survive_in_place_updates():
    rng = np.random.default_rng(6)
    a = rng.standard_normal((8, 4)).astype(np.float32)
    out = wp.zeros((8, 4), dtype=float)
    n = 3
    wp.launch_tiled(aliasing, dim=1, inputs=[wp.array(a), out, n], block_dim=4)
    acc, e = a[:4].astype(np.float64), a[4:].astype(np.float64)
    for _ in range(n):
        old = acc.copy()
        acc = acc + e @ e
        acc = acc + old * 0.5
    np.testing.assert_allclose(out.numpy()[:4], acc, rtol=1e-4)
    np.testing.assert_allclose(out.numpy()[4:], 3 * a[:4], rtol=1e-6)
