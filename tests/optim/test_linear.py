"""CG and BiCGSTAB against numpy.linalg.solve: dense matrices, Jacobi preconditioning, user operators, capture."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import weft as wp
from weft.optim import LinearOperator, bicgstab, cg, preconditioner
from weft.optim.linear import aslinearoperator

N = 64
NP = {wp.float32: np.float32, wp.float64: np.float64}
TOL = {wp.float32: 1e-6, wp.float64: 1e-12}  # relative residual asked of the solver
ERR = {wp.float32: 1e-4, wp.float64: 1e-9}  # relative error accepted in the solution


def _spd(n, seed=0):
    # Badly scaled SPD matrix: diagonal from 1 to 1000 plus a small symmetric coupling, so Jacobi helps.
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((n, n)) / np.sqrt(n)
    return Q @ Q.T + np.diag(np.geomspace(1.0, 1000.0, n))


def _nonsymmetric(n, seed=1):
    rng = np.random.default_rng(seed)
    return np.diag(np.geomspace(1.0, 100.0, n)) * 4 + rng.standard_normal((n, n)) / np.sqrt(n)


def _rhs(n, seed=2):
    return np.random.default_rng(seed).standard_normal(n)


def _check(x, A_np, b_np, dtype):
    ref = np.linalg.solve(A_np, b_np)
    err = np.linalg.norm(x.numpy().astype(np.float64) - ref) / np.linalg.norm(ref)
    assert err < ERR[dtype], err


@pytest.mark.parametrize("dtype", [wp.float32, wp.float64])
@pytest.mark.parametrize("precond", [False, True])
def test_cg_dense(dtype, precond):
    A_np = _spd(N).astype(NP[dtype])
    b_np = _rhs(N).astype(NP[dtype])
    A, b = wp.array(A_np, dtype=dtype), wp.array(b_np, dtype=dtype)
    x = wp.zeros(N, dtype=dtype)
    M = preconditioner(A, "diag") if precond else None
    iters, err, atol = cg(A, b, x, tol=TOL[dtype], maxiter=4 * N, M=M, check_every=1)
    assert err <= atol
    assert atol == pytest.approx(TOL[dtype] * np.linalg.norm(b_np.astype(np.float64)), rel=1e-4)
    _check(x, A_np.astype(np.float64), b_np.astype(np.float64), dtype)
    assert 0 < iters < 4 * N


def test_jacobi_reduces_cg_iterations():
    A_np, b_np = _spd(N), _rhs(N)
    A, b = wp.array(A_np, dtype=wp.float64), wp.array(b_np, dtype=wp.float64)
    plain = cg(A, b, wp.zeros(N, dtype=wp.float64), tol=1e-10, maxiter=10 * N, check_every=1)[0]
    jacobi = cg(A, b, wp.zeros(N, dtype=wp.float64), tol=1e-10, maxiter=10 * N, M=preconditioner(A),
                check_every=1)[0]
    assert jacobi < plain


@pytest.mark.parametrize("dtype", [wp.float32, wp.float64])
@pytest.mark.parametrize("precond", ["none", "right", "left"])
def test_bicgstab_dense_nonsymmetric(dtype, precond):
    A_np = _nonsymmetric(N).astype(NP[dtype])
    b_np = _rhs(N).astype(NP[dtype])
    A, b = wp.array(A_np, dtype=dtype), wp.array(b_np, dtype=dtype)
    x = wp.zeros(N, dtype=dtype)
    M = None if precond == "none" else preconditioner(A, "diag_abs")
    iters, err, atol = bicgstab(A, b, x, tol=TOL[dtype], maxiter=4 * N, M=M, check_every=2,
                                is_left_preconditioner=precond == "left")
    assert err <= atol and iters <= 4 * N
    _check(x, A_np.astype(np.float64), b_np.astype(np.float64), dtype)


def test_initial_guess_already_solves():
    A_np, b_np = _spd(N), _rhs(N)
    A, b = wp.array(A_np, dtype=wp.float64), wp.array(b_np, dtype=wp.float64)
    x = wp.array(np.linalg.solve(A_np, b_np), dtype=wp.float64)
    assert cg(A, b, x, tol=1e-8)[0] == 0
    assert bicgstab(A, b, x, tol=1e-8)[0] == 0


def test_callback_and_check_every():
    A_np, b_np = _spd(N), _rhs(N)
    A, b = wp.array(A_np, dtype=wp.float64), wp.array(b_np, dtype=wp.float64)
    seen = []
    iters, err, atol = cg(A, b, wp.zeros(N, dtype=wp.float64), tol=1e-10, maxiter=10 * N, check_every=3,
                          callback=lambda i, e, a: seen.append((i, e, a)))
    # Warp's schedule: iteration 0, every check that has not converged, then the final state
    assert [i for i, _, _ in seen] == [0, *range(3, iters, 3), iters]
    assert seen[-1][1] == err <= atol
    assert all(e > a for _, e, a in seen[:-1])


def test_maxiter_limits_iterations():
    A_np, b_np = _spd(N), _rhs(N)
    A, b = wp.array(A_np, dtype=wp.float64), wp.array(b_np, dtype=wp.float64)
    iters, err, atol = cg(A, b, wp.zeros(N, dtype=wp.float64), tol=1e-14, maxiter=7, check_every=5)
    assert iters == 7 and err > atol


# ------------------------------------------------------------------------------------------- user operators
@wp.kernel
def _tridiag_matvec(x: wp.array(dtype=Any), y: wp.array(dtype=Any), alpha: Any, beta: Any,
                    z: wp.array(dtype=Any)):
    # 1-D Laplacian plus a shift: 3 on the diagonal, -1 off it (SPD), without storing the matrix.
    i = wp.tid()
    n = x.shape[0]
    ax = 3.0 * x[i]
    if i > 0:
        ax = ax - x[i - 1]
    if i < n - 1:
        ax = ax - x[i + 1]
    z[i] = alpha * ax + beta * y[i]


def _tridiag_dense(n):
    return 3.0 * np.eye(n) - np.eye(n, k=1) - np.eye(n, k=-1)


def _tridiag_operator(n, dtype):
    def matvec(x, y, z, alpha, beta):
        wp.launch(_tridiag_matvec, dim=n, inputs=[x, y, dtype(alpha), dtype(beta)], outputs=[z])

    return LinearOperator((n, n), dtype, "cpu", matvec)


@pytest.mark.parametrize("solver", [cg, bicgstab])
@pytest.mark.parametrize("dtype", [wp.float32, wp.float64])
def test_user_linear_operator(solver, dtype):
    b_np = _rhs(N).astype(NP[dtype])
    b = wp.array(b_np, dtype=dtype)
    x = wp.zeros(N, dtype=dtype)
    op = _tridiag_operator(N, dtype)
    assert op.shape == (N, N) and op.dtype is dtype and op.scalar_type is dtype and op.device.is_cpu
    # The dense Jacobi preconditioner of the same matrix, used with the matrix-free operator.
    M = preconditioner(wp.array(_tridiag_dense(N), dtype=dtype))
    _, err, atol = solver(op, b, x, tol=TOL[dtype], maxiter=4 * N, M=M)
    assert err <= atol
    _check(x, _tridiag_dense(N), b_np.astype(np.float64), dtype)


@pytest.mark.parametrize("n", [1001, 4096])
def test_user_operator_large_system(n):
    # Sizes that are not multiples of the number of partial sums: chunked reductions with a ragged last chunk.
    b_np = _rhs(n)
    x = wp.zeros(n, dtype=wp.float64)
    _, err, atol = cg(_tridiag_operator(n, wp.float64), wp.array(b_np, dtype=wp.float64), x, tol=1e-12)
    assert err <= atol
    _check(x, _tridiag_dense(n), b_np, wp.float64)


def test_user_operator_as_preconditioner():
    # M given as a LinearOperator: multiply by 1/3 (the diagonal of the tridiagonal matrix).
    def scale(x, y, z, alpha, beta):
        wp.launch(_scale, dim=N, inputs=[x, y, alpha / 3.0, beta], outputs=[z])

    M = LinearOperator((N, N), wp.float64, "cpu", scale)
    b_np = _rhs(N)
    x = wp.zeros(N, dtype=wp.float64)
    _, err, atol = cg(_tridiag_operator(N, wp.float64), wp.array(b_np, dtype=wp.float64), x, tol=1e-12, M=M)
    assert err <= atol
    _check(x, _tridiag_dense(N), b_np, wp.float64)


@wp.kernel
def _scale(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64), alpha: wp.float64, beta: wp.float64,
           z: wp.array(dtype=wp.float64)):
    i = wp.tid()
    z[i] = alpha * x[i] + beta * y[i]


def test_dense_operator_matvec():
    rng = np.random.default_rng(3)
    A_np = rng.standard_normal((5, 5))
    x_np, y_np = rng.standard_normal(5), rng.standard_normal(5)
    op = aslinearoperator(wp.array(A_np, dtype=wp.float64))
    x, y = wp.array(x_np, dtype=wp.float64), wp.array(y_np, dtype=wp.float64)
    op.matvec(x, y, y, 2.0, -0.5)  # z aliasing y
    np.testing.assert_allclose(y.numpy(), 2.0 * A_np @ x_np - 0.5 * y_np, rtol=1e-12)
    d = preconditioner(wp.array(A_np, dtype=wp.float64), "diag_abs")
    z = wp.zeros(5, dtype=wp.float64)
    d.matvec(x, z, z, 1.0, 0.0)
    np.testing.assert_allclose(z.numpy(), x_np / np.abs(np.diag(A_np)), rtol=1e-12)
    assert preconditioner(wp.array(A_np, dtype=wp.float64), "id") is None


# ------------------------------------------------------------------------------------------- capture
@pytest.mark.parametrize("solver", [cg, bicgstab])
def test_solve_recorded_in_capture(solver):
    # check_every=0: no host reads, so the whole solve (setup included) can be recorded and replayed; iterations
    # after convergence are no-ops, so running all maxiter of them gives the converged answer.
    A_np = _spd(N) if solver is cg else _nonsymmetric(N)
    b_np = _rhs(N)
    A, b = wp.array(A_np, dtype=wp.float64), wp.array(b_np, dtype=wp.float64)
    x = wp.zeros(N, dtype=wp.float64)
    with wp.ScopedCapture() as capture:
        iters, err, atol = solver(A, b, x, tol=1e-10, maxiter=3 * N, M=preconditioner(A), check_every=0)
    wp.capture_launch(capture.graph)
    assert iters == 3 * N
    assert float(err.numpy()[0]) <= float(atol.numpy()[0])
    _check(x, A_np, b_np, wp.float64)
    # Replaying again restarts from the current x (already the solution): still the solution.
    wp.capture_launch(capture.graph)
    _check(x, A_np, b_np, wp.float64)


def test_bad_operands_raise():
    A = wp.zeros((4, 4), dtype=wp.float64)
    with pytest.raises(ValueError, match="shapes do not match"):
        cg(A, wp.zeros(5, dtype=wp.float64), wp.zeros(5, dtype=wp.float64))
    with pytest.raises(TypeError, match="dtypes do not match"):
        cg(A, wp.zeros(4, dtype=wp.float32), wp.zeros(4, dtype=wp.float64))
    with pytest.raises(TypeError, match="float32 or float64"):
        cg(A, wp.zeros(4, dtype=wp.float16), wp.zeros(4, dtype=wp.float16))
    with pytest.raises(TypeError, match="LinearOperator"):
        cg(np.eye(4), wp.zeros(4, dtype=wp.float64), wp.zeros(4, dtype=wp.float64))
    with pytest.raises(ValueError, match="unknown preconditioner"):
        preconditioner(A, "ilu")


# ------------------------------------------------------------------------------------------- other devices
CUDA_DEVICES = [str(d) for d in wp.get_cuda_devices()] if wp.is_cuda_available() else []


@pytest.mark.skipif(not CUDA_DEVICES, reason="no CUDA device")
@pytest.mark.parametrize("device", CUDA_DEVICES)
@pytest.mark.parametrize("use_graph", [False, True])
@pytest.mark.parametrize("solver", [cg, bicgstab])
def test_cuda_solvers(device, use_graph, solver):
    n = 2000  # more rows than partial sums: exercises the interleaved reduction
    A_np = _spd(n) if solver is cg else _nonsymmetric(n)
    b_np = _rhs(n)
    A = wp.array(A_np, dtype=wp.float64, device=device)
    b = wp.array(b_np, dtype=wp.float64, device=device)
    x = wp.zeros(n, dtype=wp.float64, device=device)
    _, err, atol = solver(A, b, x, tol=1e-10, maxiter=n, M=preconditioner(A), use_cuda_graph=use_graph)
    assert err <= atol
    _check(x, A_np, b_np, wp.float64)
