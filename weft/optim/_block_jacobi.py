"""Jacobi preconditioners of BSR matrices: scalar Jacobi (``"diag"``, ``"diag_abs"``: the inverses of the diagonal
coefficients, as Warp builds them for BSR matrices too) and block Jacobi (``"block_jacobi_direct"``,
``"block_jacobi_sequential"``, ``"block_jacobi_tile"``: the inverses of the diagonal blocks).

Computed once on the host with NumPy in float64 and applied as a block-diagonal ``BsrMatrix`` (or an inverse
diagonal). Zero-safe as Warp's: a zero diagonal coefficient leaves its row unscaled, and a block the strategy
cannot invert becomes the identity block. ``direct`` inverts any block whose condition number is below 1/eps of
the matrix's scalar type; ``sequential`` and ``tile`` (Warp factorises with LDL^T and tile Cholesky) require a
symmetric positive-definite block: a non-symmetric block, or one whose smallest eigenvalue is not above
``n * eps`` times its largest, becomes the identity (for ``tile`` Warp leaves non-definite symmetric blocks
undefined; weft falls back there too). ``tile`` accepts float32 / float64 only, as Warp's does.
"""

from __future__ import annotations

import numpy as np

import weft as wp

STRATEGIES = ("block_jacobi_direct", "block_jacobi_sequential", "block_jacobi_tile")


def _eps(scalar) -> float:
    return float(np.finfo(np.dtype(wp.dtype_to_numpy(scalar))).eps)


def _diag_blocks(A) -> np.ndarray:
    from weft import sparse

    M, _scale = sparse._matrix.split(A)
    b = M.block_shape[0]
    return sparse.bsr_get_diag(A).numpy().astype(np.float64).reshape(M.nrow, b, b)


def inverse_diagonal(A, use_abs: bool) -> np.ndarray:
    """Scalar Jacobi of a BSR matrix: 1 / a_ii of every diagonal coefficient (1 where a_ii is 0)."""
    d = np.diagonal(_diag_blocks(A), axis1=1, axis2=2).reshape(-1)
    if use_abs:
        d = np.abs(d)
    out = np.ones_like(d)
    np.divide(1.0, d, out=out, where=d != 0.0)
    return out


def check(A, ptype: str) -> None:
    """Raise ``ValueError`` unless ``A`` is a square BSR matrix with square blocks (and a float type for tile)."""
    from .linear import _is_bsr

    if not _is_bsr(A):
        raise ValueError(f"preconditioner {ptype!r} needs a weft.sparse.BsrMatrix, got {type(A).__name__}")
    from weft import sparse

    M, _scale = sparse._matrix.split(A)
    if M.block_shape[0] != M.block_shape[1]:
        raise ValueError(f"preconditioner {ptype!r} needs square matrix blocks, got blocks of shape {M.block_shape}")
    if M.nrow != M.ncol:
        raise ValueError(f"preconditioner {ptype!r} needs a square matrix, got {M.nrow} x {M.ncol} blocks")
    if ptype == "block_jacobi_tile" and M.scalar_type not in (wp.float32, wp.float64):
        raise ValueError(f"preconditioner 'block_jacobi_tile' needs float32 or float64 values, got {M.scalar_type}")


def inverse_blocks(A, ptype: str) -> np.ndarray:
    """The inverse of every diagonal block under ``ptype``'s rule (identity where it does not apply)."""
    from weft import sparse

    M, _scale = sparse._matrix.split(A)
    blocks = _diag_blocks(A)
    n = blocks.shape[1]
    eps = _eps(M.scalar_type)
    eye = np.eye(n)
    out = np.empty_like(blocks)
    for i, blk in enumerate(blocks):
        ok = bool(np.all(np.isfinite(blk)))
        if ok and ptype == "block_jacobi_direct":
            ok = np.linalg.cond(blk) < 1.0 / eps
        elif ok:
            scale = max(float(np.abs(blk).max()), np.finfo(np.float64).tiny)
            ok = bool(np.all(np.abs(blk - blk.T) <= eps * scale))
            if ok:
                w = np.linalg.eigvalsh(blk)
                ok = w[0] > n * eps * max(w[-1], 0.0)
        out[i] = np.linalg.inv(blk) if ok else eye
    return out
