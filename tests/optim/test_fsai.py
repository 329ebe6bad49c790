"""``weft.optim.linear.FSAI``: the factor against float64 NumPy (exact inverse on a full pattern, local solves on
adaptive supports, the pivot guard), application ``z = a G^T G x + b y``, refits and use as a CG preconditioner."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp
import weft.sparse as sp
from weft.optim.linear import FSAI, cg, preconditioner


def _matrix(a, dtype=wp.float64, block=1):
    rows, cols = np.nonzero(a)
    m = sp.bsr_from_triplets(a.shape[0], a.shape[1], wp.array(rows, dtype=int), wp.array(cols, dtype=int),
                             wp.array(a[rows, cols], dtype=dtype))
    return sp.bsr_copy(m, block_shape=(block, block)) if block != 1 else m


def _dense(m):
    o, c, v = m.offsets.numpy(), m.columns.numpy(), m.values.numpy().astype(np.float64)
    out = np.zeros(m.shape)
    for r in range(m.nrow):
        out[r, c[o[r]:o[r + 1]]] = v[o[r]:o[r + 1]].reshape(-1)
    return out


def _path(n):
    return np.diag(np.full(n, 3.0)) + np.diag(-np.ones(n - 1), 1) + np.diag(-np.ones(n - 1), -1)


def test_factor_against_float64_references():
    rng = np.random.default_rng(7)
    r = rng.normal(size=(8, 8))
    a = r @ r.T + np.eye(8)
    g = _dense(FSAI(_matrix(a), max_row_size=8, kap_tolerance=0, max_step_size=3).G)
    np.testing.assert_allclose(g.T @ g, np.linalg.inv(a), rtol=1e-9, atol=1e-12)  # full pattern: exact inverse
    # adaptive supports (3x3 blocks, expanded to scalars): every row is the local solve on its support
    pre = FSAI(_matrix(_path(12), block=3), max_row_size=3)
    g = _dense(pre.G)
    np.testing.assert_array_equal(g, np.tril(g))
    np.testing.assert_array_equal(_dense(pre.GT), g.T)
    for i in range(12):
        s = np.flatnonzero(g[i])
        e = np.zeros(len(s))
        e[-1] = 1.0
        z = np.linalg.solve(_path(12)[np.ix_(s, s)], e)
        np.testing.assert_allclose(g[i, s], z / np.sqrt(z[-1]), rtol=1e-12)
    # the pivot guard: a nearly singular pair truncates the row to its diagonal
    b = np.array([[1.0, 1 - 1e-14, 0], [1 - 1e-14, 1.0, 0], [0, 0, 2.0]])
    pre = FSAI(_matrix(b), max_row_size=2)
    assert pre.truncated_rows == 1
    np.testing.assert_allclose(_dense(pre.G), np.diag(1 / np.sqrt(np.diag(b))))
    with pytest.raises(ValueError, match="positive diagonals"):
        FSAI(_matrix(np.diag([1.0, -1.0])))


def test_application_refit_and_preconditioning():
    a = _path(24)
    raw = _matrix(a)
    pre = FSAI(raw, max_row_size=4, reuse_pattern=True)
    g = _dense(pre.G)
    rng = np.random.default_rng(1)
    x, y = wp.array(rng.normal(size=24)), wp.array(rng.normal(size=24))
    expected = 0.7 * g.T @ g @ x.numpy() - 1.2 * y.numpy()
    pre.matvec(x, y, x, 0.7, -1.2)  # z aliases x
    np.testing.assert_allclose(x.numpy(), expected, rtol=1e-12, atol=1e-12)
    ptr = pre.G.values.ptr
    assert pre.update(_matrix(2.0 * a)) is pre and pre.G.values.ptr == ptr
    np.testing.assert_allclose(_dense(pre.G), g / np.sqrt(2.0), rtol=1e-12)
    bad = _matrix(a)
    bad.values.zero_()
    with pytest.raises(ValueError):
        pre.update(bad)
    np.testing.assert_allclose(_dense(pre.G), g / np.sqrt(2.0), rtol=1e-12)  # rolled back
    M = preconditioner(raw, "fsai")
    assert isinstance(M, FSAI)
    rhs, sol = wp.ones(24, dtype=wp.float64), wp.zeros(24, dtype=wp.float64)
    cg(raw, rhs, sol, M=M, tol=1e-11, maxiter=100)
    np.testing.assert_allclose(a @ sol.numpy(), 1.0, atol=1e-9)


def test_deferred_pattern_selected_by_the_first_update():
    a = _path(12)
    a[0, 5] = a[5, 0] = -0.5
    raw = _matrix(a, wp.float32, 3)
    raw.values.zero_()  # topology only: construction reads no values
    pre = FSAI(raw, max_row_size=4, max_step_size=2, reuse_pattern=True, defer_pattern=True)
    assert pre.truncated_rows is None and pre.pattern_ready.numpy()[0] == 0
    x = wp.array(np.arange(1.0, 13.0, dtype=np.float32))
    y = wp.empty_like(x)
    pre.matvec(x, y, y, 1.0, 0.0)
    np.testing.assert_array_equal(y.numpy(), x.numpy())  # the identity until the pattern exists
    with pytest.raises(ValueError):
        pre.update()  # zero diagonals: nothing selected
    assert pre.pattern_ready.numpy()[0] == 0
    raw.values.assign(_matrix(a, wp.float32, 3).values.numpy())
    pre.update()
    reference = FSAI(_matrix(a, wp.float32, 3), max_row_size=4, max_step_size=2, reuse_pattern=True)
    assert pre.pattern_ready.numpy()[0] == 1
    np.testing.assert_array_equal(_dense(sp.bsr_copy(pre.G, block_shape=(1, 1))),
                                  _dense(sp.bsr_copy(reference.G, block_shape=(1, 1))))
    pre.update(_matrix(2.0 * a, wp.float32, 3))  # later updates refit on the selected supports
    reference.update(_matrix(2.0 * a, wp.float32, 3))
    np.testing.assert_allclose(_dense(sp.bsr_copy(pre.G, block_shape=(1, 1))),
                               _dense(sp.bsr_copy(reference.G, block_shape=(1, 1))), rtol=1e-6)
    with pytest.raises(ValueError, match="requires reuse_pattern"):
        FSAI(raw, defer_pattern=True)
