"""Tile linear algebra beyond tile_cholesky(A): fill_mode="upper" factors and solves, tile_lower_solve /
tile_upper_solve, tile_diag_add and the in-place forms, against float64 NumPy and central differences."""

from __future__ import annotations

import numpy as np

import weft as wp

from .test_grad import arr, fd_check

F64 = wp.float64
N = 5


@wp.kernel
def solves(a: wp.array2d(dtype=F64), d: wp.array(dtype=F64), b: wp.array2d(dtype=F64),
           u_out: wp.array2d(dtype=F64), x_up: wp.array2d(dtype=F64), z_lo: wp.array2d(dtype=F64),
           x_hi: wp.array2d(dtype=F64), x_in: wp.array2d(dtype=F64)):
    A = wp.tile_diag_add(wp.tile_load(a, shape=(N, N)), wp.tile_load(d, shape=(N,)))
    y = wp.tile_load(b, shape=(N, 2))
    U = wp.tile_cholesky(A, fill_mode="upper")  # reads A's upper triangle: A = U^T U
    wp.tile_store(u_out, U)
    wp.tile_store(x_up, wp.tile_cholesky_solve(U, y, fill_mode="upper"))
    wp.tile_store(z_lo, wp.tile_lower_solve(A, y))  # A's lower triangle as L
    wp.tile_store(x_hi, wp.tile_upper_solve(A, y))  # A's upper triangle as U
    L = wp.tile_load(a, shape=(N, N))
    L = wp.tile_diag_add(L, wp.tile_load(d, shape=(N,)))
    wp.tile_cholesky_inplace(L)
    r = wp.tile_load(b, shape=(N, 2))
    wp.tile_cholesky_solve_inplace(L, r)
    wp.tile_lower_solve_inplace(L, r)
    wp.tile_upper_solve_inplace(U, r)
    wp.tile_store(x_in, r)


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((N, N))  # not symmetric: each op reads only its triangle
    d = 4.0 + rng.random(N) * 2.0
    b = rng.standard_normal((N, 2))
    return a, d, b


def test_values_against_numpy():
    a, d, b = _inputs()
    outs = [wp.zeros((N, N), dtype=F64)] + [wp.zeros((N, 2), dtype=F64) for _ in range(4)]
    wp.launch_tiled(solves, dim=1, inputs=[wp.array(a, dtype=F64), wp.array(d, dtype=F64), wp.array(b, dtype=F64),
                                            *outs], block_dim=8)
    A = a + np.diag(d)
    sym_up = np.triu(A) + np.triu(A, 1).T  # the symmetric matrix the upper triangle describes
    sym_lo = np.tril(A) + np.tril(A, -1).T
    U = np.linalg.cholesky(sym_up).T
    np.testing.assert_allclose(outs[0].numpy(), U, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(outs[1].numpy(), np.linalg.solve(sym_up, b), rtol=1e-10)
    np.testing.assert_allclose(outs[2].numpy(), np.linalg.solve(np.tril(A), b), rtol=1e-10)
    np.testing.assert_allclose(outs[3].numpy(), np.linalg.solve(np.triu(A), b), rtol=1e-10)
    L = np.linalg.cholesky(sym_lo)
    r = np.linalg.solve(sym_lo, b)
    r = np.linalg.solve(L, r)
    r = np.linalg.solve(U, r)
    np.testing.assert_allclose(outs[4].numpy(), r, rtol=1e-10)


def test_gradients_against_central_differences():
    a, d, b = _inputs(1)
    fd_check(solves, {"a": wp.array(a, dtype=F64), "d": wp.array(d, dtype=F64), "b": wp.array(b, dtype=F64)},
             {"u": wp.zeros((N, N), dtype=F64), "x_up": wp.zeros((N, 2), dtype=F64),
              "z_lo": wp.zeros((N, 2), dtype=F64), "x_hi": wp.zeros((N, 2), dtype=F64),
              "x_in": wp.zeros((N, 2), dtype=F64)}, dim=1, block_dim=8, tol=1e-5)


def test_errors_name_the_argument():
    import pytest

    @wp.kernel
    def bad_mode(a: wp.array2d(dtype=F64)):
        t = wp.tile_load(a, shape=(N, N))
        wp.tile_store(a, wp.tile_cholesky(t, fill_mode="diagonal"))

    with pytest.raises(ValueError, match="fill_mode"):
        wp.launch_tiled(bad_mode, dim=1, inputs=[arr((N, N), 0)], block_dim=8)


@wp.kernel
def mixed_matmul(a: wp.array2d(dtype=wp.float16), b: wp.array2d(dtype=wp.float32), c: wp.array2d(dtype=F64)):
    x = wp.tile_load(a, shape=(3, 4))
    y = wp.tile_load(b, shape=(4, 2))
    acc = wp.tile_load(c, shape=(3, 2))
    wp.tile_matmul(x, y, acc, alpha=0.5, beta=-1.25, precision="default")  # operands converted to out's float64
    wp.tile_store(c, acc)


@wp.kernel
def bf16_matmul(a: wp.array2d(dtype=wp.bfloat16), b: wp.array2d(dtype=wp.float32), c: wp.array2d(dtype=wp.float32)):
    acc = wp.tile_zeros(shape=(3, 2), dtype=wp.float32)
    wp.tile_matmul(wp.tile_load(a, shape=(3, 4)), wp.tile_load(b, shape=(4, 2)), acc)  # Warp rejects with backward
    wp.tile_store(c, acc)


def test_bfloat16_operand_matmul_gradients():
    rng = np.random.default_rng(4)
    a = rng.integers(-8, 8, (3, 4)) / 8.0  # exact in bfloat16
    b = rng.standard_normal((4, 2)).astype(np.float32)
    aw, bw = wp.array(a, dtype=wp.bfloat16, requires_grad=True), wp.array(b, requires_grad=True)
    cw = wp.zeros((3, 2), dtype=wp.float32, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(bf16_matmul, dim=1, inputs=[aw, bw, cw], block_dim=4)
    np.testing.assert_allclose(cw.numpy(), a @ b, rtol=1e-6)
    g = rng.standard_normal((3, 2))
    tape.backward(grads={cw: wp.array(g, dtype=wp.float32)})
    np.testing.assert_allclose(aw.grad.numpy().astype(np.float64), g @ b.T, rtol=8e-3, atol=1e-6)  # bfloat16
    np.testing.assert_allclose(bw.grad.numpy(), a.T @ g, rtol=1e-6)


def test_mixed_precision_matmul_and_errors():
    import pytest

    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 4)).astype(np.float16)
    b = rng.standard_normal((4, 2)).astype(np.float32)
    c = rng.standard_normal((3, 2))
    aw, bw = wp.array(a, requires_grad=True), wp.array(b, requires_grad=True)
    cw = wp.array(c, dtype=F64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(mixed_matmul, dim=1, inputs=[aw, bw, cw], block_dim=4)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    np.testing.assert_allclose(cw.numpy(), 0.5 * a64 @ b64 - 1.25 * c, rtol=1e-12)
    g = np.ones((3, 2))
    tape.backward(grads={cw: wp.array(g, dtype=F64)})
    np.testing.assert_allclose(aw.grad.numpy(), (0.5 * g @ b64.T).astype(np.float16), rtol=2e-3)
    np.testing.assert_allclose(bw.grad.numpy(), 0.5 * a64.T @ g, rtol=1e-6)

    @wp.kernel
    def tf32_on_doubles(c: wp.array2d(dtype=F64)):
        t = wp.tile_load(c, shape=(3, 2))
        wp.tile_store(c, wp.tile_matmul(t, wp.tile_transpose(t), precision="tf32"))

    with pytest.raises(TypeError, match="tf32' requires float32"):
        wp.launch_tiled(tf32_on_doubles, dim=1, inputs=[cw], block_dim=4)
