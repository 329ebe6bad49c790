"""``FSAI``: adaptive factorized sparse approximate inverse of a symmetric positive-definite BSR matrix (Warp's
``warp.optim.linear.FSAI``), applied as ``G^T G``.

Setup runs on the host in float64 with NumPy (weft's sparse topology work is host-side too, see docs/sparse.md):
the matrix is expanded to scalar entries and diagonally equilibrated (``Ã = D^-1/2 A D^-1/2``). Row ``i`` of the
lower-triangular factor ``G`` starts from the support ``{i}`` and grows greedily: the candidates are the stored
columns ``c < i`` of the rows already in the support, ranked by ``|Ã[c, S] z|`` (ties: smaller column first); up
to ``max_step_size`` with a non-zero score join per step, then ``Ã[S, S] z = e_i`` is re-solved. Growth stops at
``max_row_size`` entries, when no candidate scores, or when the relative improvement ``1 - z_i(old) / z_i(new)``
is at most ``kap_tolerance`` (0 disables that test). Each solve is a Cholesky factorisation in growth order; a
pivot at or below ``pivot_floor`` (or not finite) truncates the row before that entry (``truncated_rows``). The
row is ``G[i, S] = z / sqrt(z_i diag(A)[S])``, stored (columns ascending) in ``factor_dtype``; ``GT`` is the
transpose of the stored, rounded factor.

``update()`` (with ``reuse_pattern=True``) refits the values on the same supports, in growth order, and keeps the
old factor when the topology changed (``sparsity``), a diagonal is not finite and positive, or a pivot fails
(``SPD``); with ``regularize_refit`` failing pivots are raised to the floor and rows that cannot be refit fall back
to their scaled diagonal, all counted in ``update_status``. The factor values are assigned in place (``G`` and
``GT`` keep their arrays). With ``defer_pattern`` (needs ``reuse_pattern``) construction reads only the matrix's
topology and the factor is the identity until the first successful ``update()``, which selects the supports from
that update's values (the same host selection; ``pattern_ready`` becomes 1, ``pattern_status[1]`` counts the rows
the pivot guard stopped, ``truncated_rows`` stays None) and publishes a new ``G`` / ``GT``; later updates refit.
Warp selects on the device so that a captured update can do it; weft's selection is host work and cannot be
captured.
"""

from __future__ import annotations

import math

import numpy as np

import weft as wp

from .linear import LinearOperator, scalar_values

_FLOORS = {wp.float16: 1e-3, wp.float32: 1e-6, wp.float64: 1e-12}


def _check_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= int(value) <= 64:
        raise ValueError(f"{name} must be an integer in [1, 64], got {value!r}")
    return int(value)


class FSAI(LinearOperator):
    """``G^T G`` with ``G`` the adaptive FSAI factor of ``A`` (see the module docstring for the algorithm)."""

    def __init__(self, A, max_row_size: int = 8, kap_tolerance: float = 1.0e-3, pivot_floor: float | None = None,
                 factor_dtype=None, reuse_pattern: bool = False, max_step_size: int = 1,
                 regularize_refit: bool = False, validate_topology: bool = True, defer_pattern: bool = False):
        from weft import sparse

        if not isinstance(A, sparse.BsrMatrix) or A.nrow != A.ncol or A.block_shape[0] != A.block_shape[1]:
            raise ValueError("FSAI needs a square BSR matrix with square blocks")
        scalar = A.scalar_type
        if scalar not in _FLOORS:
            raise TypeError(f"FSAI supports float16, float32 and float64 matrices, got {scalar}")
        self.max_row_size = _check_int("max_row_size", max_row_size)
        self.max_step_size = _check_int("max_step_size", max_step_size)
        if not (isinstance(kap_tolerance, (int, float)) and 0.0 <= float(kap_tolerance) < 1.0):
            raise ValueError(f"kap_tolerance must be in [0, 1), got {kap_tolerance!r}")
        if pivot_floor is not None and not (isinstance(pivot_floor, (int, float)) and 0.0 < pivot_floor < 1.0):
            raise ValueError(f"pivot_floor must be in (0, 1), got {pivot_floor!r}")
        allowed = (scalar, wp.float32) if scalar is wp.float64 else (scalar,)
        if factor_dtype is not None and factor_dtype not in allowed:
            raise ValueError(f"factor_dtype must be the matrix scalar type {scalar} (or float32 for a float64 matrix), "
                             f"got {factor_dtype!r}")
        if defer_pattern and not reuse_pattern:
            raise ValueError("defer_pattern requires reuse_pattern")
        self.kap_tolerance = float(kap_tolerance)
        self.pivot_floor = float(pivot_floor) if pivot_floor is not None else _FLOORS[scalar]
        self.factor_dtype = factor_dtype or scalar
        self.regularize_refit = bool(regularize_refit)
        self.validate_topology = bool(validate_topology)
        self.reuse_pattern = bool(reuse_pattern)
        self.pattern_ready = None
        self.pattern_status = None
        b = A.block_shape[0]
        n = A.nrow * b
        super().__init__((n, n), scalar, A.device, self._apply)
        if reuse_pattern and A.row_counts is not None:
            raise ValueError("reuse_pattern needs compact input storage: compact a padded matrix with "
                             "weft.sparse.bsr_compress(A, prune_numerical_zeros=False) first")
        self._topology = _topology(A) if reuse_pattern else None
        self.update_status = wp.zeros(4, dtype=int, device=A.device) if reuse_pattern else None
        self.source = A
        if defer_pattern:  # the identity until the first successful update selects the supports
            self.truncated_rows = None
            self._supports = None
            self.pattern_ready = wp.zeros(1, dtype=int, device=A.device)
            self.pattern_status = wp.zeros(3, dtype=int, device=A.device)
            self.G, self.GT = self._store([[i] for i in range(n)], [np.ones(1)] * n, n, None)
            self._widen()
            return
        rows, diag = _scalar_rows(A)
        _check_diagonal(diag)
        supports, values, self.truncated_rows = self._select_all(rows, diag)
        self._supports = supports  # growth order, for refits
        self.G, self.GT = self._store(supports, values, n, None)
        self._widen()

    def _select_all(self, rows, diag) -> tuple[list, list, int]:
        """Every row's support (growth order) and factor values, and how many rows the pivot guard stopped."""
        supports, values, truncated_rows = [], [], 0
        for i in range(len(diag)):
            s, z, truncated = self._select(i, rows, diag)
            truncated_rows += truncated
            supports.append(s)
            values.append(_g_row(s, z, diag))
        return supports, values, truncated_rows

    def _widen(self) -> None:
        """The factor in the matrix scalar type for application (its values are the stored, rounded ones), when it
        is stored in another type (a float32 factor of a float64 matrix)."""
        from weft import sparse

        if self.factor_dtype is self.dtype:
            self._apply_G, self._apply_GT = self.G, self.GT
            return
        self._apply_G = sparse.bsr_copy(self.G, scalar_type=self.dtype)
        self._apply_GT = sparse.bsr_copy(self.GT, scalar_type=self.dtype)

    # ------------------------------------------------------------------ setup
    def _select(self, i: int, rows, diag) -> tuple[list[int], np.ndarray, int]:
        """Support (growth order) and equilibrated solution ``z`` of row ``i``; whether the pivot guard stopped it."""
        support, z = [i], np.ones(1)
        while len(support) < self.max_row_size:
            frontier = set()
            for r in support:
                frontier.update(c for c in rows[r] if c < i)
            frontier -= set(support)
            if not frontier:
                break
            scores = []
            for c in sorted(frontier):
                s = abs(sum(_eq(rows, diag, c, r) * zr for r, zr in zip(support, z)))
                if s > 0:
                    scores.append((-s, c))
            if not scores:
                break
            scores.sort()
            take = [c for _, c in scores[:min(self.max_step_size, self.max_row_size - len(support))]]
            trial = support + take
            L, bad = _cholesky(_local(rows, diag, trial), self.pivot_floor)
            if bad is not None:  # the pivot guard: keep the entries before the rejected pivot, stop growing
                if bad > len(support):
                    support = trial[:bad]
                    z = _solve(_cholesky(_local(rows, diag, support), self.pivot_floor)[0])
                return support, z, 1
            old, support, z = z[0], trial, _solve(L)
            if self.kap_tolerance > 0 and 1.0 - old / z[0] <= self.kap_tolerance:
                break
        return support, z, 0

    def _store(self, supports, values, n: int, into):
        """``G`` (and ``GT``) from the rows' values (support order); raises unless every stored entry is finite and every
        diagonal positive in ``factor_dtype``. With ``into`` = (G, GT), assigns their values in place."""
        from weft import sparse

        rows, cols, vals = [], [], []
        for i, (s, z) in enumerate(zip(supports, values)):
            order = np.argsort(s)
            for k in order:
                rows.append(i)
                cols.append(s[k])
                vals.append(z[k])
        npd = np.dtype(wp.dtype_to_numpy(self.factor_dtype))
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            stored = np.asarray(vals, dtype=np.float64).astype(npd)
        diag_ok = all(stored[k] > 0 for k in range(len(rows)) if rows[k] == cols[k])
        if not (np.all(np.isfinite(stored)) and diag_ok):
            raise ValueError(f"FSAI: the factor has no finite representation with a positive diagonal in "
                             f"{self.factor_dtype} (scale the matrix, or store the factor in float64)")
        if into is not None:
            G, GT = into
            G.values.assign(stored)
            t = sparse.bsr_transposed(G)
            GT.values.assign(t.values.numpy())
            return G, GT
        r = wp.array(np.asarray(rows, dtype=np.int32), dtype=int, device=self.device)
        c = wp.array(np.asarray(cols, dtype=np.int32), dtype=int, device=self.device)
        v = wp.array(stored, dtype=self.factor_dtype, device=self.device)
        G = sparse.bsr_from_triplets(n, n, r, c, v)
        return G, sparse.bsr_transposed(G)

    # ------------------------------------------------------------------ refit
    def update(self, A=None):
        """Refit the factor values for ``A`` (default: the matrix of the last construction or update) on the same
        supports; returns ``self``. Raises ``ValueError`` (and keeps the factor) on a changed sparsity pattern, an
        invalid diagonal or a failed local factorisation (unless ``regularize_refit``)."""
        from weft import sparse

        if not self.reuse_pattern:
            raise ValueError("FSAI.update() needs reuse_pattern=True at construction")
        if A is None:
            A = self.source
        if not isinstance(A, sparse.BsrMatrix):
            raise ValueError(f"FSAI.update() expects a BSR matrix, got {type(A).__name__}")  # noqa: TRY004 - Warp's type
        if (A.shape, A.dtype, str(A.device)) != (self.source.shape, self.source.dtype, str(self.source.device)):
            raise ValueError("FSAI.update(): the matrix must keep the shape, dtype, device of the original")
        status = [0, 0, 0, 0]
        if self.validate_topology and not _same_topology(_topology(A), self._topology):
            status[0] = 1
            self.update_status.assign(np.asarray(status, dtype=np.int32))
            raise ValueError("FSAI.update(): the sparsity pattern differs from the original matrix")
        rows, diag = _scalar_rows(A)
        if self._supports is None:  # defer_pattern: this update selects the supports
            if not np.all(np.isfinite(diag) & (diag > 0)):
                status[1] = int(np.sum(~(np.isfinite(diag) & (diag > 0))))
                self.update_status.assign(np.asarray(status, dtype=np.int32))
                raise ValueError("FSAI.update(): the matrix has diagonals that are not finite and positive; the "
                                 "pattern was not selected (the factor stays the identity)")
            supports, values, truncated = self._select_all(rows, diag)
            self.G, self.GT = self._store(supports, values, self.shape[0], None)
            self._supports = supports
            self._widen()
            self.pattern_status.assign(np.asarray([0, truncated, 0], dtype=np.int32))
            self.pattern_ready.fill_(1)
            self.update_status.assign(np.asarray(status, dtype=np.int32))
            self.source = A
            return self
        values = []
        for i, s in enumerate(self._supports):
            if not (np.isfinite(diag[i]) and diag[i] > 0):
                status[1] += 1
                if not self.regularize_refit:
                    continue
                status[2] += 1
                values.append(_fallback_row(s, diag))
                continue
            bad_diag = any(not (np.isfinite(diag[c]) and diag[c] > 0) for c in s)
            L, bad = (None, 0) if bad_diag else _cholesky(_local(rows, diag, s), self.pivot_floor,
                                                          regularize=self.regularize_refit)
            if bad is not None or L is None:
                if not self.regularize_refit:
                    status[2] += 1
                    continue
                status[2] += 1
                values.append(_fallback_row(s, diag))
                continue
            row = _g_row(s, _solve(L), diag)
            if not (np.all(np.isfinite(row)) and row[0] > 0):
                status[2] += 1
                if not self.regularize_refit:
                    continue
                row = _fallback_row(s, diag)
            elif L.regularized:
                status[3] += 1
            values.append(row)
        self.update_status.assign(np.asarray(status, dtype=np.int32))
        if not self.regularize_refit and (status[1] or status[2]):
            raise ValueError("FSAI.update(): the matrix is not SPD on the factor's supports (an invalid diagonal or "
                             "a failed local factorization); the factor was kept")
        self._store(self._supports, values, self.shape[0], (self.G, self.GT))
        self._widen()
        self.source = A
        return self

    # ------------------------------------------------------------------ application
    def _apply(self, x, y, z, alpha, beta) -> None:
        """``z = alpha G^T G x + beta y`` (x, y, z may alias; x is not read when alpha is 0, y when beta is 0)."""
        from weft import sparse

        x, y, z = scalar_values(x), scalar_values(y), scalar_values(z)
        n = self.shape[0]
        if n == 0:
            return
        alpha, beta = float(alpha), float(beta)
        if alpha == 0.0:
            _axpby(y, z, beta)
            return
        t = wp.empty(n, dtype=self.dtype, device=self.device)
        sparse.bsr_mv(self._apply_G, x, t, alpha=1.0, beta=0.0)
        if beta != 0.0 and y.ptr != z.ptr:
            wp.copy(z, y)
        sparse.bsr_mv(self._apply_GT, t, z, alpha=alpha, beta=beta)


# ---------------------------------------------------------------------- helpers
def _scalar_rows(A) -> tuple[list[dict], np.ndarray]:
    """Scalar rows of a BSR matrix ({column: value}, stored entries only, padded rows honoured) and its diagonal."""
    b = A.block_shape[0]
    n = A.nrow * b
    offsets = A.offsets.numpy()[:A.nrow + 1]
    counts = A.row_counts.numpy() if A.row_counts is not None else None
    columns = A.columns.numpy()
    values = A.values.numpy().astype(np.float64).reshape(-1, b, b) if A.values.shape[0] else np.zeros((0, b, b))
    rows: list[dict] = [{} for _ in range(n)]
    for r in range(A.nrow):
        end = offsets[r] + counts[r] if counts is not None else offsets[r + 1]
        for k in range(int(offsets[r]), int(end)):
            c = int(columns[k])
            if c < 0:
                continue
            for p in range(b):
                row = rows[r * b + p]
                for q in range(b):
                    row[c * b + q] = values[k, p, q]
    diag = np.array([rows[i].get(i, 0.0) for i in range(n)], dtype=np.float64)
    return rows, diag


def _check_diagonal(diag: np.ndarray) -> None:
    if not np.all(np.isfinite(diag) & (diag > 0)):
        raise ValueError("FSAI requires finite positive diagonals")


def _eq(rows, diag, r: int, c: int) -> float:
    return rows[r].get(c, 0.0) / math.sqrt(diag[r] * diag[c])


def _local(rows, diag, support) -> np.ndarray:
    return np.array([[_eq(rows, diag, r, c) for c in support] for r in support])


class _Chol:
    __slots__ = ("L", "regularized")

    def __init__(self, L, regularized):
        self.L = L
        self.regularized = regularized


def _cholesky(a: np.ndarray, floor: float, regularize: bool = False):
    """Cholesky factor of ``a`` in its given order; (factor, index of the first pivot at or below ``floor`` or not
    finite, or None). With ``regularize`` such pivots are raised to the floor (a non-finite one still fails)."""
    m = a.shape[0]
    L = np.zeros_like(a)
    regularized = False
    for k in range(m):
        pivot = a[k, k] - L[k, :k] @ L[k, :k]
        if not np.isfinite(pivot):
            return _Chol(L, regularized), k
        if pivot <= floor:
            if not regularize:
                return _Chol(L, regularized), k
            pivot, regularized = floor, True
        L[k, k] = math.sqrt(pivot)
        for j in range(k + 1, m):
            L[j, k] = (a[j, k] - L[j, :k] @ L[k, :k]) / L[k, k]
    return _Chol(L, regularized), None


def _solve(chol: _Chol) -> np.ndarray:
    """``a z = e_0`` from the Cholesky factor."""
    L = chol.L
    e = np.zeros(L.shape[0])
    e[0] = 1.0
    w = np.linalg.solve(L, e)
    return np.linalg.solve(L.T, w)


def _topology(A) -> tuple:
    offsets = A.offsets.numpy()[:A.nrow + 1].copy()
    nnz = int(offsets[-1]) if A.nrow else 0
    return offsets, A.columns.numpy()[:nnz].copy(), A.block_shape


def _same_topology(a, b) -> bool:
    return a[2] == b[2] and np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def _g_row(support, z: np.ndarray, diag: np.ndarray) -> np.ndarray:
    """Factor values of a row (support order) from its equilibrated solution: ``z / sqrt(z_i diag(A)[S])``."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return z / np.sqrt(z[0] * diag[np.asarray(support)])


def _fallback_row(support, diag: np.ndarray) -> np.ndarray:
    """A row that cannot be refit: its scaled diagonal (1 where the diagonal itself is invalid)."""
    d = diag[support[0]]
    row = np.zeros(len(support))
    row[0] = 1.0 / math.sqrt(d) if np.isfinite(d) and d > 0 else 1.0
    return row


def _axpby(y, z, beta: float) -> None:
    """``z = beta y`` (y not read when beta is 0)."""
    if beta == 0.0:
        z.zero_()
        return
    wp.launch(_scale_kernel, dim=z.shape[0], inputs=[y, float(beta)], outputs=[z], device=z.device)


@wp.kernel(enable_backward=False)
def _scale_kernel(y: wp.array(dtype=wp.Any), beta: float, z: wp.array(dtype=wp.Any)):
    i = wp.tid()
    z[i] = y[i] * type(y[i])(beta)
