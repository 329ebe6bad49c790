"""weft.sparse against scipy.sparse (float64 references): construction, products, sums, copies, gradients."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sps

import weft as wp
import weft.sparse as sp


def _dense(A: sp.BsrMatrix) -> np.ndarray:
    """Dense float64 image of a BSR matrix, from its storage (active blocks only)."""
    br, bc = A.block_shape
    out = np.zeros(A.shape)
    off = A.offsets.numpy()
    counts = A.row_counts.numpy() if A.row_counts is not None else np.diff(off)
    cols = A.columns.numpy()
    vals = A.values.numpy().reshape(-1, br, bc)
    for r in range(A.nrow):
        for k in range(off[r], off[r] + counts[r]):
            out[r * br:(r + 1) * br, cols[k] * bc:(cols[k] + 1) * bc] += vals[k]
    return out


def _random(rng, nrow, ncol, shape, n, dtype=wp.float64):
    rows = rng.integers(0, nrow, n).astype(np.int32)
    cols = rng.integers(0, ncol, n).astype(np.int32)
    vals = rng.standard_normal((n, *shape))
    ref = np.zeros((nrow * shape[0], ncol * shape[1]))
    for r, c, v in zip(rows, cols, vals):
        ref[r * shape[0]:(r + 1) * shape[0], c * shape[1]:(c + 1) * shape[1]] += v
    A = sp.bsr_from_triplets(nrow, ncol, wp.array(rows, dtype=wp.int32), wp.array(cols, dtype=wp.int32),
                             wp.array(vals, dtype=dtype))
    return A, ref


def _vec(n):
    return wp.float64 if n == 1 else wp.types.vector(length=n, dtype=wp.float64)


SHAPES = [(1, 1), (2, 3), (3, 3)]


@pytest.mark.parametrize("shape", SHAPES)
def test_from_triplets_and_products_match_scipy(shape):
    rng = np.random.default_rng(1)
    A, ref = _random(rng, 5, 4, shape, 14)
    np.testing.assert_allclose(_dense(A), ref, atol=1e-12)
    ref_sp = sps.bsr_matrix(ref, blocksize=shape)
    # duplicates summed into one block each, columns sorted within rows (scipy's canonical BSR form)
    assert A.nnz_sync() == ref_sp.indices.shape[0]
    np.testing.assert_array_equal(A.offsets.numpy(), ref_sp.indptr)
    np.testing.assert_array_equal(A.columns.numpy()[:A.nnz], ref_sp.indices)
    x_np = rng.standard_normal(A.shape[1])
    x = wp.array(x_np.reshape(-1, shape[1]) if shape[1] > 1 else x_np, dtype=_vec(shape[1]))
    y_np = rng.standard_normal(A.shape[0])
    y = wp.array(y_np.reshape(-1, shape[0]) if shape[0] > 1 else y_np, dtype=_vec(shape[0]))
    sp.bsr_mv(A, x, y, alpha=2.0, beta=-0.5)
    np.testing.assert_allclose(y.numpy().ravel(), 2.0 * (ref_sp @ x_np) - 0.5 * y_np, atol=1e-10)
    # transposed product through the operator x @ A
    xt = (y @ A).numpy().ravel()
    np.testing.assert_allclose(xt, ref.T @ y.numpy().ravel(), atol=1e-10)
    # A^T, A A^T, A + 2 A^T-free sums
    At = sp.bsr_transposed(A)
    np.testing.assert_allclose(_dense(At), ref.T, atol=1e-12)
    AAt = A @ At
    np.testing.assert_allclose(_dense(AAt), (ref_sp @ ref_sp.T).toarray(), atol=1e-10)
    B, ref_b = _random(rng, 5, 4, shape, 9)
    C = sp.bsr_axpy(A, B, alpha=3.0, beta=-1.0)
    assert C is B
    np.testing.assert_allclose(_dense(C), 3.0 * ref - ref_b, atol=1e-10)


def test_mm_accumulate_masked_and_aliasing():
    rng = np.random.default_rng(2)
    X, rx = _random(rng, 4, 3, (2, 2), 8)
    Y, ry = _random(rng, 3, 4, (2, 2), 8)
    Z, rz = _random(rng, 4, 4, (2, 2), 6)
    sp.bsr_mm(X, Y, Z, alpha=0.5, beta=2.0)
    np.testing.assert_allclose(_dense(Z), 0.5 * rx @ ry + 2.0 * rz, atol=1e-10)
    # masked: only the diagonal blocks of the product
    D = sp.bsr_diag(rows_of_blocks=4, block_type=wp.types.matrix((2, 2), wp.float64))
    sp.bsr_mm(X, Y, D, topology="masked")
    full = rx @ ry
    mask = np.kron(np.eye(4), np.ones((2, 2)))
    np.testing.assert_allclose(_dense(D), full * mask, atol=1e-10)
    # z aliases x: z = z @ z
    ref = _dense(Z) @ _dense(Z)
    sp.bsr_mm(Z, Z, Z)
    np.testing.assert_allclose(_dense(Z), ref, atol=1e-9)


def test_copy_reblock_cast_scale_diag_identity():
    rng = np.random.default_rng(3)
    A, ref = _random(rng, 3, 4, (2, 2), 9)
    for bs in [(1, 1), (1, 2), (2, 4), (2, 1), (6, 8)]:
        np.testing.assert_allclose(_dense(sp.bsr_copy(A, block_shape=bs)), ref, atol=1e-12)
    with pytest.raises(ValueError, match="Incompatible dest and src block shapes"):
        sp.bsr_copy(A, block_shape=(3, 3))
    A32 = sp.bsr_copy(A, scalar_type=wp.float32)
    assert A32.scalar_type is wp.float32
    np.testing.assert_allclose(_dense(A32), ref, rtol=1e-6, atol=1e-6)
    sp.bsr_scale(A, -2.0)
    np.testing.assert_allclose(_dense(A), -2.0 * ref, atol=1e-12)
    diag = sp.bsr_get_diag(A).numpy()
    for i in range(3):
        np.testing.assert_allclose(diag[i], -2.0 * ref[2 * i:2 * i + 2, 2 * i:2 * i + 2], atol=1e-12)
    eye = sp.bsr_identity(3, wp.mat33d)
    np.testing.assert_allclose(_dense(eye), np.eye(9))
    d = sp.bsr_diag(wp.array([1.0, 2.0, 3.0], dtype=wp.float64))
    np.testing.assert_allclose(_dense(d), np.diag([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="block type must be either warp matrix or scalar"):
        sp.bsr_diag(wp.vec3(1.0), rows_of_blocks=2)


def test_triplet_rules_padded_and_status():
    rows = wp.array([0, 0, 2, 2, 2, -1, 5], dtype=wp.int32)
    cols = wp.array([1, 1, 0, 2, 3, 0, 0], dtype=wp.int32)
    vals = wp.array([1.0, 2.0, 0.0, 4.0, 5.0, 9.0, 9.0], dtype=wp.float32)
    A = sp.bsr_zeros(3, 4, wp.float32)
    sp.bsr_set_from_triplets(A, rows, cols, vals)  # duplicates summed, zeros pruned, out-of-range dropped
    assert A.nnz_sync() == 3
    np.testing.assert_array_equal(A.offsets.numpy(), [0, 1, 1, 3])
    np.testing.assert_array_equal(A.columns.numpy()[:3], [1, 2, 3])
    np.testing.assert_allclose(A.values.numpy()[:3], [3.0, 4.0, 5.0])
    P = sp.bsr_zeros(3, 4, wp.float32, row_capacity=1)
    sp.bsr_set_from_triplets(P, rows, cols, vals, topology="padded")
    assert P.status_sync() == sp.BSR_STATUS_ROW_CAPACITY_EXCEEDED
    np.testing.assert_array_equal(P.row_counts.numpy(), [1, 0, 1])
    np.testing.assert_allclose(_dense(P)[0], [0.0, 3.0, 0.0, 0.0])
    with pytest.raises(TypeError, match="int32"):
        sp.bsr_set_from_triplets(A, wp.array([0.0], dtype=wp.float32), wp.array([0.0], dtype=wp.float32), None)
    with pytest.raises(ValueError, match="same number of rows and columns"):
        sp.bsr_axpy(A, sp.bsr_zeros(4, 4, wp.float32))


def test_gradients_match_finite_differences():
    """d/d(values) of sum(w * (A^T A) x) through from_triplets, transpose, mm and mv, against central differences."""
    rng = np.random.default_rng(4)
    rows = np.array([0, 1, 1, 2, 0], dtype=np.int32)
    cols = np.array([0, 1, 2, 2, 1], dtype=np.int32)
    v0 = rng.standard_normal((5, 2, 2))
    x = wp.array(rng.standard_normal((3, 2)), dtype=wp.vec2d)
    w = rng.standard_normal(6)

    def loss(v_np, tape=None):
        v = wp.array(v_np, dtype=wp.mat22d, requires_grad=tape is not None)
        A = sp.bsr_from_triplets(3, 3, wp.array(rows, dtype=wp.int32), wp.array(cols, dtype=wp.int32), v)
        y = sp.bsr_mv(sp.bsr_transposed(A) @ A, x)
        return v, y

    tape = wp.Tape()
    with tape:
        v, y = loss(v0, tape)
    y.grad.assign(wp.array(w.reshape(3, 2), dtype=wp.vec2d))
    tape.backward()
    g = v.grad.numpy()
    eps = 1e-6
    for idx in [(0, 0, 0), (1, 1, 0), (3, 0, 1), (4, 1, 1), (2, 0, 0)]:
        vp, vm = v0.copy(), v0.copy()
        vp[idx] += eps
        vm[idx] -= eps
        fd = (np.dot(loss(vp)[1].numpy().ravel(), w) - np.dot(loss(vm)[1].numpy().ravel(), w)) / (2 * eps)
        assert g[idx] == pytest.approx(fd, rel=1e-6, abs=1e-8)


@wp.kernel
def _lookup(offsets: wp.array(dtype=wp.int32), columns: wp.array(dtype=wp.int32), rows_q: wp.array(dtype=wp.int32),
            cols_q: wp.array(dtype=wp.int32), slot: wp.array(dtype=wp.int32), row_of: wp.array(dtype=wp.int32)):
    i = wp.tid()
    s = sp.bsr_block_index(rows_q[i], cols_q[i], offsets, columns)
    slot[i] = s
    row_of[i] = sp.bsr_row_index(offsets, 3, s)


def test_kernel_index_helpers():
    A = sp.bsr_from_triplets(3, 4, wp.array([0, 2, 2, 1], dtype=wp.int32), wp.array([3, 0, 2, 1], dtype=wp.int32),
                             wp.array([1.0, 2.0, 3.0, 4.0], dtype=wp.float32))
    rq = wp.array([0, 2, 2, 1, 1], dtype=wp.int32)
    cq = wp.array([3, 0, 2, 1, 2], dtype=wp.int32)
    slot = wp.zeros(5, dtype=wp.int32)
    row_of = wp.zeros(5, dtype=wp.int32)
    wp.launch(_lookup, dim=5, inputs=[A.offsets, A.columns, rq, cq], outputs=[slot, row_of])
    np.testing.assert_array_equal(slot.numpy(), [0, 2, 3, 1, -1])
    np.testing.assert_array_equal(row_of.numpy(), [0, 2, 2, 1, -1])
