"""cr, gmres, BSR operators and block-Jacobi preconditioners, and the reusable solver objects of weft.optim.linear,
against float64 NumPy residuals."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import weft as wp
import weft.sparse as sp
from weft.optim.linear import CG, CR, GMRES, BiCGSTAB, bicgstab, cg, cr, gmres, preconditioner


def _spd(n, seed=0):
    rng = np.random.default_rng(seed)
    C = rng.uniform(-1.0, 1.0, (n, n))
    return C @ C.T + n * np.eye(n)


def _nonsymmetric(n, seed=1):
    rng = np.random.default_rng(seed)
    return _spd(n, seed) @ np.diag(rng.uniform(0.1, 10.0, n))


def _rhs(n, seed=2):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, n)


def _bsr(A_np, block):
    """The dense matrix as a BSR matrix of ``block x block`` blocks (float64)."""
    nb = A_np.shape[0] // block
    rows, cols = np.meshgrid(np.arange(nb), np.arange(nb), indexing="ij")
    vals = A_np.reshape(nb, block, nb, block).transpose(0, 2, 1, 3).reshape(-1, block, block)
    return sp.bsr_from_triplets(nb, nb, wp.array(rows.ravel().astype(np.int32), dtype=wp.int32),
                                wp.array(cols.ravel().astype(np.int32), dtype=wp.int32),
                                wp.array(vals, dtype=wp.float64))


@pytest.mark.parametrize("precond", [False, True])
def test_cr_converges_monotonically(precond):
    n = 36
    A_np, b_np = _spd(n), _rhs(n)
    A = wp.array(A_np, dtype=wp.float64)
    b = wp.array(b_np, dtype=wp.float64)
    x = wp.zeros(n, dtype=wp.float64)
    norms = []
    _it, err, atol = cr(A, b, x, tol=1e-10, maxiter=200, M=preconditioner(A) if precond else None, check_every=1,
                       callback=lambda i, e, t: norms.append(e))
    assert err <= atol
    assert np.linalg.norm(A_np @ x.numpy() - b_np) <= 2.0 * atol
    if not precond:  # unpreconditioned CR minimises |r| over growing Krylov spaces
        assert all(b2 <= b1 * (1 + 1e-9) for b1, b2 in itertools.pairwise(norms))


@pytest.mark.parametrize("mode", ["none", "right", "left"])
def test_gmres_nonsymmetric(mode):
    n = 30
    A_np, b_np = _nonsymmetric(n), _rhs(n)
    A = wp.array(A_np, dtype=wp.float64)
    b = wp.array(b_np, dtype=wp.float64)
    x = wp.zeros(n, dtype=wp.float64)
    M = preconditioner(A) if mode != "none" else None
    it, err, atol = gmres(A, b, x, tol=1e-9, restart=8, maxiter=400, M=M, is_left_preconditioner=mode == "left")
    assert err <= atol and it % 8 == 0
    ref = np.linalg.solve(A_np, b_np)
    np.testing.assert_allclose(x.numpy(), ref, rtol=1e-5, atol=1e-7)
    # a converged start needs no cycle
    it2, _err, _atol = gmres(A, b, x, tol=1e-9, restart=8, maxiter=400, M=M, is_left_preconditioner=mode == "left")
    assert it2 < it


@pytest.mark.parametrize("solver", [cg, cr, bicgstab, gmres])
def test_bsr_matrix_with_block_jacobi(solver):
    n = 24
    A_np = _spd(n, seed=3)
    b_np = _rhs(n, seed=4)
    A = _bsr(A_np, 3)
    M = preconditioner(A, "block_jacobi_direct")
    x = wp.zeros(n, dtype=wp.float64)
    _it, err, atol = solver(A, wp.array(b_np, dtype=wp.float64), x, tol=1e-10, maxiter=300, M=M)
    assert err <= atol
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(A_np, b_np), rtol=1e-6, atol=1e-8)
    # the block-Jacobi operator applies the inverse diagonal blocks
    v = np.arange(n, dtype=np.float64)
    out = wp.zeros(n, dtype=wp.float64)
    M.matvec(wp.array(v, dtype=wp.float64), out, out, 1.0, 0.0)
    ref = np.concatenate([np.linalg.solve(A_np[i:i + 3, i:i + 3], v[i:i + 3]) for i in range(0, n, 3)])
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-10)


@pytest.mark.parametrize("func, klass", [(cg, CG), (cr, CR), (bicgstab, BiCGSTAB), (gmres, GMRES)])
def test_solver_objects_are_reusable(func, klass):
    n = 16
    A1 = wp.array(_spd(n, 5), dtype=wp.float64)
    b1 = wp.array(_rhs(n, 6), dtype=wp.float64)
    x1 = wp.zeros(n, dtype=wp.float64)
    state = func(A1, b1, x1, tol=1e-10, maxiter=300, run=False)
    assert isinstance(state, klass)
    _it, err, atol = state()
    assert err <= atol
    A2_np, b2_np = _spd(n, 7), _rhs(n, 8)
    x2 = wp.zeros(n, dtype=wp.float64)
    _it, err, atol = state(A=wp.array(A2_np, dtype=wp.float64), b=wp.array(b2_np, dtype=wp.float64), x=x2)
    assert err <= atol
    np.testing.assert_allclose(x2.numpy(), np.linalg.solve(A2_np, b2_np), rtol=1e-6, atol=1e-8)


def test_bsr_jacobi_variants():
    n = 12
    A_np = _spd(n, seed=9)
    A = _bsr(A_np, 3)
    v = np.arange(1.0, n + 1.0)
    out = wp.zeros(n, dtype=wp.float64)

    def apply(M):
        M.matvec(wp.array(v, dtype=wp.float64), out, out, 1.0, 0.0)
        return out.numpy()

    # "diag" on a BSR matrix is scalar Jacobi (Warp's semantics), not the block inverse
    np.testing.assert_allclose(apply(preconditioner(A, "diag")), v / np.diag(A_np), rtol=1e-12)
    ref = np.concatenate([np.linalg.solve(A_np[i:i + 3, i:i + 3], v[i:i + 3]) for i in range(0, n, 3)])
    for ptype in ("block_jacobi_direct", "block_jacobi_sequential", "block_jacobi_tile"):
        np.testing.assert_allclose(apply(preconditioner(A, ptype)), ref, rtol=1e-10)
    # a non-symmetric block: only "direct" inverts it; a singular block: every strategy leaves it alone
    blk = np.array([[4.0, 1.0, 0.0], [0.1, 3.0, 0.0], [0.0, 0.0, 2.0]])
    B_np = np.kron(np.eye(2), np.eye(3))
    B_np[:3, :3] = blk
    B_np[3:, 3:] = [[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.0, 0.0, 0.0]]
    B = _bsr(B_np, 3)
    w = wp.array(v[:6], dtype=wp.float64)
    z = wp.zeros(6, dtype=wp.float64)
    for ptype, first in (("block_jacobi_direct", np.linalg.solve(blk, v[:3])), ("block_jacobi_sequential", v[:3])):
        preconditioner(B, ptype).matvec(w, z, z, 1.0, 0.0)
        np.testing.assert_allclose(z.numpy()[:3], first, rtol=1e-12)
        np.testing.assert_array_equal(z.numpy()[3:], v[3:6])
    with pytest.raises(ValueError, match="BsrMatrix"):
        preconditioner(wp.array(A_np, dtype=wp.float64), "block_jacobi_direct")
    with pytest.raises(ValueError, match="unknown preconditioner"):
        preconditioner(A, "block_jacobi_bogus")


def test_bsr_preconditioners_in_float16():
    # preconditioners (not the solvers) also apply to float16 BSR matrices; a rank-1 block stays unscaled
    m22 = wp.types.matrix(shape=(2, 2), dtype=wp.float16)
    A = sp.bsr_zeros(2, 2, m22)
    blocks = np.array([[[4.0, 1.0], [1.0, 2.0]], [[1.0, 2.0], [2.0, 4.0]]])
    sp.bsr_set_from_triplets(A, wp.array([0, 1], dtype=wp.int32), wp.array([0, 1], dtype=wp.int32),
                             wp.array(blocks, dtype=m22))
    x = wp.array(np.ones(4), dtype=wp.float16)
    z = wp.zeros_like(x)
    preconditioner(A, "block_jacobi_direct").matvec(x, z, z, 1.0, 0.0)
    np.testing.assert_allclose(z.numpy().astype(np.float64), [*np.linalg.solve(blocks[0], [1.0, 1.0]), 1.0, 1.0],
                               rtol=2e-3)
