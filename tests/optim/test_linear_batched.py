"""Batched solves (``aslinearoperator(A, batch_offsets=...)``) and ``restart=`` of weft.optim.linear, against float64
NumPy residuals per subproblem."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp
from weft.optim.linear import CG, LinearOperator, aslinearoperator, bicgstab, cg, cr, gmres, preconditioner

SIZES = (6, 9, 5)


def _block_system(seed=0, tail=2):
    rng = np.random.default_rng(seed)
    n = sum(SIZES) + tail
    A = np.eye(n)
    o = 0
    for k in SIZES:
        C = rng.uniform(-1.0, 1.0, (k, k))
        A[o:o + k, o:o + k] = C @ C.T + k * np.eye(k)
        o += k
    return A, rng.uniform(-1.0, 1.0, n)


def _offsets():
    return wp.array(np.concatenate([[0], np.cumsum(SIZES)]).astype(np.int32), dtype=wp.int32)


def _check_blocks(A, b, x, tol, start_value):
    o = 0
    for k in SIZES:
        sl = slice(o, o + k)
        assert np.linalg.norm(A[sl, sl] @ x[sl] - b[sl]) <= 2.0 * tol * np.linalg.norm(b[sl])
        o += k
    np.testing.assert_array_equal(x[o:], start_value)  # the inactive tail is left alone


@pytest.mark.parametrize("solver", [cg, cr, bicgstab, gmres])
def test_batched_dense_and_user_operator(solver):
    A, b = _block_system()
    n = A.shape[0]
    Ad = wp.array(A, dtype=wp.float64)
    dense = aslinearoperator(Ad, batch_offsets=_offsets(), max_batch_length=max(SIZES))
    assert dense.batch_count == len(SIZES) and dense.max_batch_length == max(SIZES)
    plain = aslinearoperator(Ad)  # a user matvec: restricted by zero padding, not by a view
    user = LinearOperator(plain.shape, wp.float64, "cpu", plain.matvec, batch_offsets=_offsets())
    for op, M in ((dense, None), (user, preconditioner(Ad))):
        x = wp.full(n, 0.25, dtype=wp.float64)
        seen = []
        it, err, atol = solver(op, wp.array(b, dtype=wp.float64), x, tol=1e-10, M=M,
                               callback=lambda i, e, a, seen=seen: seen.append((i, e, a)))
        assert err <= atol and it > 0 and seen == [(it, err, atol)]
        _check_blocks(A, b, x.numpy(), 1e-10, 0.25)


def test_batched_validation():
    A = wp.array(np.eye(4), dtype=wp.float64)
    with pytest.raises(ValueError, match="requires batch_offsets"):
        aslinearoperator(A, max_batch_length=2)
    with pytest.raises(ValueError, match="non-negative"):
        aslinearoperator(A, batch_offsets=wp.array([0, 4], dtype=wp.int32), max_batch_length=-1)
    bad = aslinearoperator(A, batch_offsets=wp.array([0, 3, 2], dtype=wp.int32))
    with pytest.raises(ValueError, match="non-decreasing"):
        cg(bad, wp.ones(4, dtype=wp.float64), wp.zeros(4, dtype=wp.float64))


@pytest.mark.parametrize("solver", [cg, cr])
def test_restart(solver):
    rng = np.random.default_rng(3)
    C = rng.standard_normal((12, 12))
    A, b = C.T @ C + 4.0 * np.eye(12), rng.standard_normal(12)
    Ad, bd = wp.array(A, dtype=wp.float64), wp.array(b, dtype=wp.float64)
    for M in (None, preconditioner(Ad)):
        seen, x = [], wp.zeros(12, dtype=wp.float64)
        it, err, atol = solver(Ad, bd, x, tol=1e-10, maxiter=120, M=M, check_every=1, restart=3,
                               callback=lambda i, e, a, seen=seen: seen.append(i))
        assert err <= atol and it % 3 == 0 and seen[0] == 0 and seen[-1] == it
        assert all(i % 3 == 0 for i in seen)
        # after a restart the reported residual is the true one
        assert abs(np.linalg.norm(A @ x.numpy() - b) - err) <= 1e-12 * np.linalg.norm(b) + 1e-3 * err
    for bad, exc in ((True, TypeError), (1.5, TypeError), (0, ValueError), (-2, ValueError)):
        with pytest.raises(exc):
            solver(Ad, bd, x, run=False, restart=bad)
    assert isinstance(cg(Ad, bd, x, run=False, restart=np.int64(2)), CG)
    x.zero_()  # one restart cycle of one iteration solves the identity system exactly
    I = wp.array(np.eye(3), dtype=wp.float64)
    y = wp.zeros(3, dtype=wp.float64)
    assert solver(I, wp.array([1.0, 2.0, 3.0], dtype=wp.float64), y, maxiter=0.5, check_every=1, restart=1)[0] == 1
    np.testing.assert_allclose(y.numpy(), [1.0, 2.0, 3.0])


@pytest.mark.parametrize("solver, kw", [(cg, {}), (cr, {}), (bicgstab, {}), (gmres, {"restart": 2})])
def test_vector_operands_and_diagonal_operator(solver, kw):
    # a 1-D array is a diagonal matrix; vec2 right-hand sides are solved as their flat scalars; offsets count scalars
    diag = wp.array(((2.0, 2.0), (5.0, 5.0), (1.0, 1.0)), dtype=wp.vec2)
    b = wp.array(((2.0, 4.0), (10.0, 15.0), (9.0, 9.0)), dtype=wp.vec2)
    A = aslinearoperator(diag, batch_offsets=wp.array([0, 2, 4], dtype=wp.int32), max_batch_length=2)
    x = wp.zeros_like(b)
    solver(A, b, x, tol=1e-7, maxiter=4, check_every=1, **kw)
    np.testing.assert_allclose(x.numpy(), [[1.0, 2.0], [2.0, 3.0], [0.0, 0.0]], atol=1e-5)  # tail inactive
    dense = wp.array(np.diag([2.0, 3.0, 4.0, 5.0]), dtype=wp.float32)
    y = wp.zeros(2, dtype=wp.vec2)
    _it, err, atol = solver(dense, wp.array([[2.0, 3.0], [4.0, 5.0]], dtype=wp.vec2), y, tol=1e-6, maxiter=200, **kw)
    assert err <= atol
    np.testing.assert_allclose(y.numpy(), np.ones((2, 2)), rtol=1e-5)


def test_solver_objects_reject_incompatible_operands():
    rng = np.random.default_rng(5)
    C = rng.standard_normal((8, 8))
    A = wp.array(C @ C.T + 8.0 * np.eye(8), dtype=wp.float64)
    b, x = wp.array(rng.standard_normal(8), dtype=wp.float64), wp.zeros(8, dtype=wp.float64)
    state = cg(A, b, x, maxiter=50, run=False)
    with pytest.raises(ValueError):
        state(b=wp.zeros(16, dtype=wp.float64))
    with pytest.raises(ValueError):
        state(A=wp.array(np.eye(8), dtype=wp.float32), b=wp.zeros(8, dtype=wp.float32), x=wp.zeros(8, dtype=wp.float32))
    with pytest.raises(ValueError, match="batch_offsets"):
        state(A=aslinearoperator(A, batch_offsets=wp.array([0, 8], dtype=wp.int32)))
    with pytest.raises(ValueError):
        bicgstab(A, b, x, run=False)(M=preconditioner(A))
    _it, err, atol = state(b=wp.array(rng.standard_normal(8), dtype=wp.float64))
    assert err <= atol
