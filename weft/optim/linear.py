"""Iterative linear solvers: conjugate gradients and BiCGSTAB, with a Jacobi (diagonal) preconditioner.

The interface is Warp's ``warp.optim.linear``: the matrix is a dense 2-D weft array or a ``LinearOperator``
whose ``matvec(x, y, z, alpha, beta)`` computes ``z = alpha A x + beta y``. Every iteration is a fixed sequence
of kernel launches: dot products are two-stage reductions written into a small device array of scalars, and
step lengths are computed on the device. The host only reads the residual every ``check_every`` iterations, so
a block of iterations can be captured into a graph (``use_cuda_graph``), and with ``check_every=0`` a whole
solve can be recorded inside ``wp.ScopedCapture``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

import weft as wp

from . import _batched, _block_jacobi, _kernels

__all__ = ["CG", "CR", "FSAI", "GMRES", "BiCGSTAB", "LinearOperator", "LinearSolverState", "aslinearoperator", "bicgstab",
           "cg", "cr", "gmres", "preconditioner"]


class LinearOperator:
    """A linear map used as the left-hand side (or preconditioner) of the iterative solvers.

    Args:
        shape: ``(rows, cols)`` of the operator.
        dtype: scalar type of its elements (``wp.float32`` or ``wp.float64``).
        device: device the products run on.
        matvec: ``matvec(x, y, z, alpha, beta)`` computing ``z = alpha * (A @ x) + beta * y`` with weft arrays
            ``x, y, z`` (``y`` and ``z`` may be the same array; ``y``'s contents are irrelevant when ``beta`` is 0).
            For graph capture it must only launch kernels.
        batch_offsets: optional int array of ``B + 1`` offsets splitting the unknowns into ``B`` independent
            subproblems (the operator must be block-diagonal with these blocks); unknowns at or past the last
            offset are inactive. The solvers then solve every subproblem to its own tolerance (see ``cg``).
        max_batch_length: optional upper bound on a subproblem's length (needs ``batch_offsets``).
    """

    def __init__(self, shape: tuple[int, int], dtype, device, matvec: Callable, batch_offsets=None,
                 max_batch_length: int | None = None):
        if max_batch_length is not None:
            if batch_offsets is None:
                raise ValueError("max_batch_length requires batch_offsets")
            if max_batch_length < 0:
                raise ValueError("max_batch_length must be non-negative")
        self._shape = (int(shape[0]), int(shape[1]))
        self._dtype = dtype
        self._device = wp.get_device(device)
        self._matvec = matvec
        self._batch_offsets = batch_offsets
        self._max_batch_length = max_batch_length
        self._dense = None  # the dense array this operator multiplies by, when it is one

    @property
    def batch_offsets(self):
        """The subproblem offsets (``None``: one problem)."""
        return self._batch_offsets

    @property
    def batch_count(self) -> int:
        """Number of independent subproblems (1 without ``batch_offsets``)."""
        return 1 if self._batch_offsets is None else self._batch_offsets.shape[0] - 1

    @property
    def max_batch_length(self) -> int | None:
        return self._max_batch_length

    @property
    def shape(self) -> tuple[int, int]:
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    @property
    def device(self):
        return self._device

    @property
    def matvec(self) -> Callable:
        return self._matvec

    @property
    def scalar_type(self):
        return wp.types.type_scalar_type(self._dtype)


def aslinearoperator(A, batch_offsets=None, max_batch_length: int | None = None) -> LinearOperator | None:
    """Wrap a dense 2-D weft array or a ``weft.sparse.BsrMatrix`` as a ``LinearOperator`` (a ``LinearOperator`` or
    None is returned as is, ignoring ``batch_offsets``). ``batch_offsets`` / ``max_batch_length`` declare
    independent subproblems (see ``LinearOperator``).

    Raises:
        TypeError: for anything else.
    """
    if A is None or isinstance(A, LinearOperator):
        return A
    if isinstance(A, wp.array) and A.ndim == 1:  # a diagonal matrix, as in Warp
        d = scalar_values(A)
        op = _diag_operator(d, _check_float_scalar(d.dtype, "A"))
        return LinearOperator(op.shape, op.dtype, op.device, op.matvec, batch_offsets, max_batch_length)
    op = _wrap(A)
    if batch_offsets is not None or max_batch_length is not None:
        op = LinearOperator(op.shape, op.dtype, op.device, op.matvec, batch_offsets, max_batch_length)
        op._dense = A if isinstance(A, wp.array) else None
    return op


def _wrap(A) -> LinearOperator:
    if isinstance(A, wp.array) and A.ndim == 2:
        scalar = _check_float_scalar(A.dtype, "A")
        kernels = _kernels.basic_kernels(scalar)

        def matvec(x, y, z, alpha, beta):
            wp.launch(kernels.dense_matvec, dim=A.shape[0], device=A.device,
                      inputs=[A, x, y, scalar(alpha), scalar(beta)], outputs=[z])

        op = LinearOperator(A.shape, scalar, A.device, matvec)
        op._dense = A
        return op
    if _is_bsr(A):
        return _bsr_operator(A)
    raise TypeError(f"expected a dense 2-D weft array, a 1-D array (a diagonal), a BsrMatrix or a LinearOperator, "
                    f"got {type(A).__name__} of {getattr(A, 'ndim', '?')} dimensions")


def scalar_values(v):
    """A 1-D array of vectors (``vec3``...) as the flat array of its scalars (same memory); scalars as they are."""
    if isinstance(v, wp.array) and v.ndim == 1 and wp.types.type_is_vector(v.dtype):
        from weft.sparse._views import flat

        return flat(v)
    return v


def _is_bsr(A) -> bool:
    sparse = __import__("sys").modules.get("weft.sparse")
    return sparse is not None and isinstance(A, (sparse.BsrMatrix, sparse.ScaledBsr))


def _bsr_operator(A, half: bool = False) -> LinearOperator:
    """``z = alpha A x + beta y`` through ``bsr_mv`` on the flat scalar vectors of the solvers (float16 too for a
    preconditioner, ``half``)."""
    from weft import sparse

    M, _scale = sparse._matrix.split(A)
    scalar = _check_float_scalar(M.scalar_type, "A", half)

    def matvec(x, y, z, alpha, beta):
        if float(beta) != 0.0 and y.ptr != z.ptr:
            wp.copy(z, y)
        sparse.bsr_mv(A, x, z, alpha=float(alpha), beta=float(beta))

    return LinearOperator(M.shape, scalar, M.device, matvec)


def preconditioner(A, ptype: str = "diag") -> LinearOperator | None:
    """A preconditioner for ``A`` (Warp's ``ptype`` names).

    Args:
        A: dense square 2-D weft array or ``weft.sparse.BsrMatrix`` (float32 or float64).
        ptype: ``"diag"`` (Jacobi: multiply by the inverse diagonal coefficients, also for BSR matrices),
            ``"diag_abs"`` (inverse of their absolute values), ``"block_jacobi_direct"`` /
            ``"block_jacobi_sequential"`` / ``"block_jacobi_tile"`` (BSR only: the inverses of the diagonal
            blocks, see ``weft.optim._block_jacobi``; 1x1 blocks fall back to ``"diag"``) or ``"id"`` (no
            preconditioning: returns None). A zero diagonal coefficient, or a block the strategy cannot invert,
            leaves its rows unpreconditioned.

    Raises:
        TypeError: when ``A`` is neither a dense 2-D array nor a BSR matrix (``"diag"``).
        ValueError: for an unknown ``ptype``, a non-square ``A``, or a block-Jacobi ``ptype`` with a dense ``A``
            or non-square blocks.
    """
    if ptype == "id":
        return None
    if ptype == "fsai":
        return FSAI(A)
    if ptype in _block_jacobi.STRATEGIES:
        _block_jacobi.check(A, ptype)
        from weft import sparse

        M, _scale = sparse._matrix.split(A)
        if M.block_shape == (1, 1):
            return preconditioner(A, "diag")
        inv = _block_jacobi.inverse_blocks(A, ptype)
        diag = wp.array(inv, dtype=M.values.dtype, device=M.device)
        op = _bsr_operator(sparse.bsr_diag(diag), half=True)
        op.inv_diagonal = diag
        return op
    if ptype not in ("diag", "diag_abs"):
        raise ValueError(f"unknown preconditioner type {ptype!r}; expected 'diag', 'diag_abs', "
                         f"{', '.join(repr(s) for s in _block_jacobi.STRATEGIES)} or 'id'")
    if _is_bsr(A):
        from weft import sparse

        M, _scale = sparse._matrix.split(A)
        if M.nrow != M.ncol or M.block_shape[0] != M.block_shape[1]:
            raise ValueError(f"preconditioner: A must be square with square blocks, got {M.shape}, {M.block_shape}")
        scalar = _check_float_scalar(M.scalar_type, "A", half=True)
        inv_diag = wp.array(_block_jacobi.inverse_diagonal(A, ptype == "diag_abs"), dtype=scalar, device=M.device)
        return _diag_operator(inv_diag, scalar)
    if not (isinstance(A, wp.array) and A.ndim == 2):
        raise TypeError(f"preconditioner: expected a dense 2-D weft array or a BsrMatrix, got {type(A).__name__}")
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"preconditioner: A must be square, got shape {A.shape}")
    scalar = _check_float_scalar(A.dtype, "A")
    kernels = _kernels.basic_kernels(scalar)
    n = A.shape[0]
    inv_diag = wp.empty(n, dtype=scalar, device=A.device)
    wp.launch(kernels.inverse_diagonal, dim=n, device=A.device, inputs=[A, int(ptype == "diag_abs")],
              outputs=[inv_diag])
    return _diag_operator(inv_diag, scalar)


def _diag_operator(inv_diag, scalar) -> LinearOperator:
    """``z = alpha diag(inv_diag) x + beta y``."""
    kernels = _kernels.basic_kernels(scalar)
    n = inv_diag.shape[0]

    def matvec(x, y, z, alpha, beta):
        wp.launch(kernels.diag_matvec, dim=n, device=inv_diag.device,
                  inputs=[inv_diag, x, y, scalar(alpha), scalar(beta)], outputs=[z])

    op = LinearOperator((n, n), scalar, inv_diag.device, matvec)
    op.inv_diagonal = inv_diag
    return op


# ---------------------------------------------------------------------------------------------------- shared
def _check_float_scalar(dtype, what: str, half: bool = False):
    if dtype not in ((wp.float16, wp.float32, wp.float64) if half else (wp.float32, wp.float64)):
        raise TypeError(f"{what}: the solvers work on float32 or float64 values, got {dtype}")
    return dtype


class _Problem:
    """Validated operands of a solve, the device array of scalars and the two-stage dot product."""

    def __init__(self, A, b, x, M, nslots: int):
        self.A = aslinearoperator(A)
        self.M = aslinearoperator(M)
        b, x = scalar_values(b), scalar_values(x)
        for name, v in (("b", b), ("x", x)):
            if not (isinstance(v, wp.array) and v.ndim == 1):
                raise TypeError(f"{name}: expected a 1-D weft array, got {type(v).__name__}")
        self.C = _check_float_scalar(x.dtype, "x")
        n = x.shape[0]
        rows, cols = self.A.shape
        if rows != cols or b.shape[0] != n or rows != n:
            raise ValueError(f"shapes do not match: A {self.A.shape}, b {b.shape}, x {x.shape}")
        if b.dtype is not self.C or self.A.scalar_type is not self.C:
            raise TypeError(f"dtypes do not match: A {self.A.dtype}, b {b.dtype}, x {x.dtype}")
        if self.M is not None and self.M.shape != self.A.shape:
            raise ValueError(f"preconditioner shape {self.M.shape} does not match A {self.A.shape}")
        self.b, self.x, self.n, self.device = b, x, n, x.device
        self.k = _kernels.basic_kernels(self.C)
        self.scal = wp.zeros(nslots, dtype=self.C, device=self.device)
        if self.device.impl.simt:  # interleaved partial sums: coalesced loads
            self.nparts = max(1, min(n, 1024))
            self.chunk_stride, self.elem_stride = 1, self.nparts
        else:  # contiguous chunks: one cache-friendly stretch per CPU thread
            self.nparts = max(1, min(n, 64))
            self.chunk_stride, self.elem_stride = -(-n // self.nparts), 1
        self.count = -(-n // self.nparts)
        self.partial = wp.zeros(self.nparts, dtype=self.C, device=self.device)

    def vector(self):
        return wp.zeros(self.n, dtype=self.C, device=self.device)

    def launch(self, kernel, dim, inputs):
        wp.launch(kernel, dim=dim, inputs=inputs, device=self.device)

    def dot(self, a, b, slot: int) -> None:
        self.launch(self.k.dot_partial, self.nparts,
                    [a, b, self.n, self.chunk_stride, self.elem_stride, self.count, self.partial])
        self.launch(self.k.dot_final, 1, [self.partial, self.nparts, slot, self.scal])

    def copy(self, src, dst) -> None:
        self.launch(self.k.copy, self.n, [src, dst])

    def residual(self, r) -> None:
        """r = b - A x"""
        self.A.matvec(self.x, self.b, r, self.C(-1.0), self.C(1.0))

    def apply(self, op: LinearOperator, src, dst) -> None:
        """dst = op src"""
        op.matvec(src, dst, dst, self.C(1.0), self.C(0.0))

    def set_tolerance(self, tol, atol, bb_slot: int, tol2_slot: int) -> None:
        self.dot(self.b, self.b, bb_slot)
        self.launch(self.k.set_tolerance, 1, [self.scal, bb_slot, tol2_slot, self.C(atol * atol), self.C(tol * tol)])


def _tolerances(tol, atol, C) -> tuple[float, float]:
    # Defaults: relative tolerance sqrt(machine epsilon) of the compute type, no absolute floor.
    if tol is None:
        tol = float(np.sqrt(np.finfo(np.float64 if C is wp.float64 else np.float32).eps)) if atol is None else 0.0
    return float(tol), float(atol or 0.0)


def _run(problem: _Problem, cycle: Callable[[], None], cycle_size: int, rr_slot: int, tol2_slot: int, maxiter,
         check_every: int, callback, use_cuda_graph: bool):
    """Drive ``cycle`` (``cycle_size`` iterations each) and return (iterations, residual norm, absolute tolerance)
    as Warp does: the callback sees iteration 0, every check that has not converged, and the final state; at least
    one cycle runs unless the initial guess has converged; ``maxiter`` may be exceeded by up to a cycle."""
    if check_every <= 0:
        # No host synchronisation at all: run every cycle (converged ones are no-ops) and return the residual
        # norm and tolerance as 1-element device arrays, so the whole solve can be graph-captured.
        cycles = max(1, math.ceil(maxiter / cycle_size))
        for _ in range(cycles):
            cycle()
        err = wp.empty(1, dtype=problem.C, device=problem.device)
        tol = wp.empty(1, dtype=problem.C, device=problem.device)
        problem.launch(problem.k.slot_sqrt, 1, [problem.scal, rr_slot, err])
        problem.launch(problem.k.slot_sqrt, 1, [problem.scal, tol2_slot, tol])
        return cycles * cycle_size, err, tol

    def read() -> tuple[float, float]:
        host = problem.scal.numpy()
        return math.sqrt(max(float(host[rr_slot]), 0.0)), math.sqrt(max(float(host[tol2_slot]), 0.0))

    check_every = max(int(check_every), cycle_size)
    err, atol = read()
    if callback is not None:
        callback(0, err, atol)
    if err <= atol:
        return 0, err, atol
    iterations = 0
    graph = None
    # Native graphs only: a replayed "graph" (the CPU's) repeats launches only, and a user matvec may do host work.
    use_graph = use_cuda_graph and not problem.device.impl.capture_by_replay
    while True:
        if use_graph and iterations > 0:
            if graph is None:
                with wp.ScopedCapture(device=problem.device) as capture:
                    cycle()
                graph = capture.graph
            wp.capture_launch(graph)
        else:
            cycle()
        iterations += cycle_size
        if iterations >= maxiter:
            break
        if iterations % check_every < cycle_size:
            err, atol = read()
            if err <= atol:
                break
            if callback is not None:
                callback(iterations, err, atol)
    err, atol = read()
    if callback is not None:
        callback(iterations, err, atol)
    return iterations, err, atol


def _options(**options) -> dict:
    return options


def _maxiter(maxiter, n: int):
    return maxiter if maxiter and maxiter > 0 else n


def _check_restart(restart) -> int | None:
    """``restart`` of cg / cr: None, or a positive integer."""
    if restart is None:
        return None
    if isinstance(restart, bool) or not isinstance(restart, (int, np.integer)):
        raise TypeError(f"restart: expected a positive integer or None, got {type(restart).__name__}")
    if restart <= 0:
        raise ValueError(f"restart: expected a positive integer, got {restart}")
    return int(restart)


def _cycle(iterate: Callable[[], None], start: Callable[[], None], restart: int | None):
    """One solver cycle: a single iteration, or ``restart`` iterations followed by a restart from the true
    residual (``start``)."""
    if restart is None:
        return iterate, 1

    def cycle() -> None:
        for _ in range(restart):
            iterate()
        start()

    return cycle, restart


# ---------------------------------------------------------------------------------------------------- CG
class _CG:
    RZ, RZ_NEW, PAP, RR, TOL2, BETA, BB = range(7)


def cg(A, b, x, tol: float | None = None, atol: float | None = None, maxiter: int = 0, M=None,
       callback: Callable | None = None, check_every: int = 10, use_cuda_graph: bool = True, run: bool = True, *,
       restart: int | None = None):
    """Solve the symmetric positive-definite system ``A x = b`` by (preconditioned) conjugate gradients.

    Args:
        A: dense 2-D weft array or ``LinearOperator``.
        b: right-hand side, 1-D array.
        x: initial guess, overwritten with the solution (1-D array, same dtype as ``b``).
        tol: relative tolerance on the residual norm, as a fraction of ``|b|`` (default sqrt(machine epsilon)).
        atol: absolute tolerance on the residual norm; the solver stops when ``|b - A x| <= max(atol, tol |b|)``.
        maxiter: most iterations; 0 means the system size.
        M: optional preconditioner (dense array or ``LinearOperator``) approximating ``A^-1``, e.g. from
            ``preconditioner(A)``.
        callback: called as ``callback(iteration, residual_norm, atol)`` after every check.
        check_every: iterations between host-side residual checks. 0 disables them: all ``maxiter`` iterations are
            launched (those after convergence change nothing) and nothing is read back.
        use_cuda_graph: on CUDA devices, capture a block of ``check_every`` iterations once and replay it.

        run: False returns a ``CG`` solver object instead of solving (call it to solve; see ``LinearSolverState``).
        restart: restart every ``restart`` iterations from the true residual ``b - A x`` (resetting the search
            direction), which bounds the drift of the recursively updated residual; convergence checks and
            callbacks then happen at restart boundaries and the reported residual is the true one. None: never.

    A with ``batch_offsets`` (``aslinearoperator(A, batch_offsets=...)``) solves every subproblem to its own
    tolerance (see ``weft.optim._batched``).

    Returns:
        ``(iterations, residual_norm, atol)``; with ``check_every=0`` the last two are 1-element device arrays.
    """
    restart = _check_restart(restart)
    if not run:
        return CG(A, b, x, tol, atol, maxiter, M, callback, check_every, use_cuda_graph, restart=restart)
    if _batched.is_batched(A):
        return _batched.solve(cg, A, b, x, M, _options(tol=tol, atol=atol, maxiter=maxiter, callback=callback,
                                                       check_every=check_every, use_cuda_graph=use_cuda_graph,
                                                       restart=restart))
    S = _CG
    pb = _Problem(A, b, x, M, 7)
    b, x = pb.b, pb.x  # flat scalar views of vector-valued operands
    ck = _kernels.cg_kernels(pb.C)
    tol, atol = _tolerances(tol, atol, pb.C)
    maxiter = _maxiter(maxiter, pb.n)
    r, p, Ap = pb.vector(), pb.vector(), pb.vector()
    z = pb.vector() if pb.M is not None else r

    pb.set_tolerance(tol, atol, S.BB, S.TOL2)

    def start() -> None:
        pb.residual(r)
        if pb.M is not None:
            pb.apply(pb.M, r, z)
        pb.copy(z, p)
        pb.dot(r, z, S.RZ)
        pb.dot(r, r, S.RR)

    start()

    def iterate() -> None:
        pb.apply(pb.A, p, Ap)
        pb.dot(p, Ap, S.PAP)
        pb.launch(ck.update_xr, pb.n, [pb.scal, p, Ap, x, r])
        if pb.M is not None:
            pb.apply(pb.M, r, z)
            pb.dot(r, r, S.RR)
        pb.dot(r, z, S.RZ_NEW)
        pb.launch(ck.scalars, 1, [pb.scal, int(pb.M is None)])
        pb.launch(ck.update_p, pb.n, [pb.scal, z, p])

    cycle, size = _cycle(iterate, start, restart)
    return _run(pb, cycle, size, S.RR, S.TOL2, maxiter, check_every, callback, use_cuda_graph)


# ---------------------------------------------------------------------------------------------------- BiCGSTAB
class _BICGSTAB:
    RHO, R0V, RHO_NEW, RR, TOL2, BETA, ALPHA, OMEGA, TS, TT, BB = range(11)


def bicgstab(A, b, x, tol: float | None = None, atol: float | None = None, maxiter: int = 0, M=None,
             callback: Callable | None = None, check_every: int = 10, use_cuda_graph: bool = True,
             is_left_preconditioner: bool = False, run: bool = True):
    """Solve the (possibly non-symmetric) system ``A x = b`` by the biconjugate gradient stabilised method.

    Arguments and return value as for ``cg``, plus:

    Args:
        is_left_preconditioner: Warp's left variant: the stabilising step ``omega`` minimises the preconditioned
            residual ``|M (s - omega t)|`` instead of ``|s - omega t|``. Either way ``M`` is applied to the search
            directions and convergence is judged on the true residual ``|b - A x|``.
    """
    if not run:
        return BiCGSTAB(A, b, x, tol, atol, maxiter, M, callback, check_every, use_cuda_graph,
                        is_left_preconditioner=is_left_preconditioner)
    if _batched.is_batched(A):
        return _batched.solve(bicgstab, A, b, x, M, _options(tol=tol, atol=atol, maxiter=maxiter, callback=callback,
                                                             check_every=check_every, use_cuda_graph=use_cuda_graph,
                                                             is_left_preconditioner=is_left_preconditioner))
    S = _BICGSTAB
    left = bool(is_left_preconditioner and M is not None)
    pb = _Problem(A, b, x, M, 11)
    b, x = pb.b, pb.x  # flat scalar views of vector-valued operands
    bk = _kernels.bicgstab_kernels(pb.C)
    tol, atol = _tolerances(tol, atol, pb.C)
    maxiter = _maxiter(maxiter, pb.n)
    r, r0, p, v, t = pb.vector(), pb.vector(), pb.vector(), pb.vector(), pb.vector()
    y = pb.vector() if pb.M is not None else p
    z = pb.vector() if pb.M is not None else r  # r is overwritten by s = r - alpha v, so z = M s reads r
    Mt = pb.vector() if left else None

    pb.set_tolerance(tol, atol, S.BB, S.TOL2)
    pb.residual(r)
    pb.copy(r, r0)
    pb.copy(r, p)
    pb.dot(r0, r, S.RHO)
    pb.dot(r, r, S.RR)

    def iterate() -> None:
        if pb.M is not None:
            pb.apply(pb.M, p, y)
        pb.apply(pb.A, y, v)
        pb.dot(r0, v, S.R0V)
        pb.launch(bk.alpha, 1, [pb.scal])
        pb.launch(bk.axpy2, pb.n, [pb.scal, S.ALPHA, y, v, x, r])  # x += alpha y ; s = r - alpha v (in r)
        if pb.M is not None:
            pb.apply(pb.M, r, z)
        pb.apply(pb.A, z, t)
        if left:  # omega minimises the preconditioned residual |M (s - omega t)| (z = M s); Mt in v's place
            pb.apply(pb.M, t, Mt)
            pb.dot(Mt, z, S.TS)
            pb.dot(Mt, Mt, S.TT)
        else:
            pb.dot(t, r, S.TS)
            pb.dot(t, t, S.TT)
        pb.launch(bk.omega, 1, [pb.scal])
        pb.launch(bk.axpy2, pb.n, [pb.scal, S.OMEGA, z, t, x, r])  # x += omega z ; r = s - omega t
        pb.dot(r0, r, S.RHO_NEW)
        pb.dot(r, r, S.RR)
        pb.launch(bk.beta, 1, [pb.scal])
        pb.launch(bk.update_p, pb.n, [pb.scal, r, v, p])

    return _run(pb, iterate, 1, S.RR, S.TOL2, maxiter, check_every, callback, use_cuda_graph)



# ---------------------------------------------------------------------------------------------------- CR
class _CR:
    ZAZ, APMAP, ZAZ_NEW, RR, TOL2, BETA, ALPHA, BB = range(8)


def cr(A, b, x, tol: float | None = None, atol: float | None = None, maxiter: int = 0, M=None,
       callback: Callable | None = None, check_every: int = 10, use_cuda_graph: bool = True, run: bool = True, *,
       restart: int | None = None):
    """Solve the symmetric (possibly indefinite) system ``A x = b`` by (preconditioned) conjugate residuals: each
    iteration minimises the residual norm over the Krylov space, so it decreases monotonically. Arguments and
    return value as for ``cg`` (``M`` must be symmetric positive definite), ``restart`` included."""
    restart = _check_restart(restart)
    if not run:
        return CR(A, b, x, tol, atol, maxiter, M, callback, check_every, use_cuda_graph, restart=restart)
    if _batched.is_batched(A):
        return _batched.solve(cr, A, b, x, M, _options(tol=tol, atol=atol, maxiter=maxiter, callback=callback,
                                                       check_every=check_every, use_cuda_graph=use_cuda_graph,
                                                       restart=restart))
    S = _CR
    pb = _Problem(A, b, x, M, 8)
    b, x = pb.b, pb.x  # flat scalar views of vector-valued operands
    ck = _kernels.cr_kernels(pb.C)
    tol, atol = _tolerances(tol, atol, pb.C)
    maxiter = _maxiter(maxiter, pb.n)
    r, p, Az, Ap = pb.vector(), pb.vector(), pb.vector(), pb.vector()
    z = pb.vector() if pb.M is not None else r
    MAp = pb.vector() if pb.M is not None else Ap

    pb.set_tolerance(tol, atol, S.BB, S.TOL2)

    def start() -> None:
        pb.residual(r)
        if pb.M is not None:
            pb.apply(pb.M, r, z)
        pb.apply(pb.A, z, Az)
        pb.copy(z, p)
        pb.copy(Az, Ap)
        pb.dot(z, Az, S.ZAZ)
        pb.dot(r, r, S.RR)

    start()

    def iterate() -> None:
        if pb.M is not None:
            pb.apply(pb.M, Ap, MAp)
        pb.dot(Ap, MAp, S.APMAP)
        pb.launch(ck.alpha, 1, [pb.scal])
        pb.launch(ck.update, pb.n, [pb.scal, p, Ap, MAp, int(pb.M is not None), x, r, z])
        pb.dot(r, r, S.RR)
        pb.apply(pb.A, z, Az)
        pb.dot(z, Az, S.ZAZ_NEW)
        pb.launch(ck.beta, 1, [pb.scal])
        pb.launch(ck.update_p, pb.n, [pb.scal, z, Az, p, Ap])

    cycle, size = _cycle(iterate, start, restart)
    return _run(pb, cycle, size, S.RR, S.TOL2, maxiter, check_every, callback, use_cuda_graph)


# ---------------------------------------------------------------------------------------------------- GMRES
class _GMRES:
    DOT, WW, TOL2, RR, BB = range(5)


def gmres(A, b, x, tol: float | None = None, atol: float | None = None, restart: int = 31, maxiter: int = 0, M=None,
          callback: Callable | None = None, check_every: int = 31, use_cuda_graph: bool = True,
          is_left_preconditioner: bool = False, run: bool = True):
    """Solve the general system ``A x = b`` by restarted GMRES(``restart``): Arnoldi with modified Gram-Schmidt
    and Givens rotations, all on the device; the solution is updated and the true residual recomputed after each
    cycle of ``restart`` iterations, which is also when the host checks convergence (``check_every`` is rounded
    up to whole cycles). ``M`` preconditions on the right (``is_left_preconditioner``: on the left: the Arnoldi
    process runs on ``M A`` from ``M r``, while convergence is judged on the true residual, as in Warp). Arguments and
    return value otherwise as for ``cg``; iterations are counted in whole cycles."""
    if not run:
        return GMRES(A, b, x, tol, atol, restart, maxiter, M, callback, check_every, use_cuda_graph,
                     is_left_preconditioner=is_left_preconditioner)
    if _batched.is_batched(A):
        return _batched.solve(gmres, A, b, x, M, _options(tol=tol, atol=atol, restart=restart, maxiter=maxiter,
                                                          callback=callback, check_every=check_every,
                                                          use_cuda_graph=use_cuda_graph,
                                                          is_left_preconditioner=is_left_preconditioner))
    S = _GMRES
    left = bool(is_left_preconditioner and M is not None)
    pb = _Problem(A, b, x, M, 5)
    b, x = pb.b, pb.x  # flat scalar views of vector-valued operands
    gk = _kernels.gmres_kernels(pb.C)
    tol, atol = _tolerances(tol, atol, pb.C)
    m = max(1, min(int(restart), pb.n))
    maxiter = _maxiter(maxiter, pb.n)
    n, C, dev = pb.n, pb.C, pb.device
    V = wp.zeros((m + 1, n), dtype=C, device=dev)
    H = wp.zeros((m + 1, m), dtype=C, device=dev)
    cs, sn = wp.zeros(m, dtype=C, device=dev), wp.zeros(m, dtype=C, device=dev)
    g, y = wp.zeros(m + 1, dtype=C, device=dev), wp.zeros(m, dtype=C, device=dev)
    w, tmp = pb.vector(), pb.vector()

    pb.set_tolerance(tol, atol, S.BB, S.TOL2)
    pb.residual(w)
    pb.dot(w, w, S.RR)

    def cycle() -> None:
        start = w
        if left:  # Arnoldi on M A from M r; RR holds |M r|^2 until the true residual is recomputed below
            pb.apply(pb.M, w, tmp)
            pb.dot(tmp, tmp, S.RR)
            start = tmp
        pb.launch(gk.start, 1, [pb.scal, g, m])
        pb.launch(gk.set_row, n, [start, g, V, 0])
        for j in range(m):
            vj = V[j]
            if left:
                pb.apply(pb.A, vj, tmp)
                pb.apply(pb.M, tmp, w)
            elif pb.M is not None:
                pb.apply(pb.M, vj, tmp)
                pb.apply(pb.A, tmp, w)
            else:
                pb.apply(pb.A, vj, w)
            for i in range(j + 1):
                vi = V[i]
                pb.dot(w, vi, S.DOT)
                pb.launch(gk.store_h, 1, [pb.scal, S.DOT, 0, H, i, j])
                pb.launch(gk.orthogonalize, n, [pb.scal, S.DOT, V, i, w])
            pb.dot(w, w, S.WW)
            pb.launch(gk.store_h, 1, [pb.scal, S.WW, 1, H, j + 1, j])
            pb.launch(gk.normalize, n, [w, H, j, V])
            pb.launch(gk.givens, 1, [pb.scal, H, cs, sn, g, j])
        pb.launch(gk.back_solve, 1, [H, g, m, y])
        pb.launch(gk.combine, n, [V, y, m, tmp])
        if pb.M is not None and not left:
            pb.M.matvec(tmp, x, x, C(1.0), C(1.0))
        else:
            pb.launch(_axpy_kernel(C), n, [tmp, x])
        pb.residual(w)
        pb.dot(w, w, S.RR)

    return _run(pb, cycle, m, S.RR, S.TOL2, maxiter, check_every, callback, use_cuda_graph)


@__import__("functools").cache
def _axpy_kernel(C):
    @wp.kernel
    def add_into(src: wp.array(dtype=Any), dst: wp.array(dtype=Any)):
        i = wp.tid()
        dst[i] = dst[i] + src[i]

    return add_into


# ---------------------------------------------------------------------------------------------------- solver objects
class LinearSolverState:
    """A configured solve (``cg(..., run=False)`` and friends return one): calling it runs the solver, optionally
    on another system of the same size (``state(A=..., b=..., x=...)``), and returns ``(iterations, residual_norm,
    atol)`` as the function does."""

    _solve: Callable = None

    def __init__(self, A, b, x, tol=None, atol=None, maxiter=0, M=None, callback=None, check_every=10,
                 use_cuda_graph=True, **options):
        self.A, self.b, self.x, self.M = A, b, x, M
        self.options = dict(tol=tol, atol=atol, maxiter=maxiter, callback=callback, check_every=check_every,
                            use_cuda_graph=use_cuda_graph, **options)

    #: whether a call may add or drop the preconditioner given at construction (BiCGSTAB: no, as in Warp)
    _m_presence_fixed = False

    def __call__(self, A=None, b=None, x=None, M=None):
        """Solve again, optionally with other operands of the same size, dtype and batch layout (``ValueError``
        otherwise)."""
        self._check_compatible(A, b, x, M)
        if A is not None:
            self.A = A
        if b is not None:
            self.b = b
        if x is not None:
            self.x = x
        if M is not None:
            self.M = M
        return type(self)._solve(self.A, self.b, self.x, M=self.M, **self.options)

    @staticmethod
    def _layout(v):
        v = scalar_values(v)
        return tuple(v.shape), wp.types.type_scalar_type(v.dtype)

    def _check_compatible(self, A, b, x, M) -> None:
        for name, new, old in (("b", b, self.b), ("x", x, self.x)):
            if new is not None and self._layout(new) != self._layout(old):
                raise ValueError(f"{name}: shape/dtype {self._layout(new)} does not match the solver's "
                                 f"{self._layout(old)}")
        if A is not None:
            new, old = aslinearoperator(A), aslinearoperator(self.A)
            if new.shape != old.shape or new.scalar_type is not old.scalar_type:
                raise ValueError(f"A: shape/dtype {new.shape}, {new.scalar_type} does not match the solver's "
                                 f"{old.shape}, {old.scalar_type}")
            if new.batch_offsets is not old.batch_offsets:
                raise ValueError("A: batch_offsets must be the array the solver was built with")
            if new.max_batch_length != old.max_batch_length:
                raise ValueError(f"A: max_batch_length {new.max_batch_length} differs from the solver's "
                                 f"{old.max_batch_length}")
        if self._m_presence_fixed and M is not None and self.M is None:
            raise ValueError("M: this solver was built without a preconditioner; build a new one to add it")


class CG(LinearSolverState):
    """Conjugate gradients as a reusable solver object (see ``cg``)."""

    _solve = staticmethod(cg)


class CR(LinearSolverState):
    """Conjugate residuals as a reusable solver object (see ``cr``)."""

    _solve = staticmethod(cr)


class BiCGSTAB(LinearSolverState):
    """BiCGSTAB as a reusable solver object (see ``bicgstab``); whether it has a preconditioner is fixed."""

    _m_presence_fixed = True

    _solve = staticmethod(bicgstab)


class GMRES(LinearSolverState):
    """Restarted GMRES as a reusable solver object (see ``gmres``)."""

    _solve = staticmethod(gmres)

    def __init__(self, A, b, x, tol=None, atol=None, restart=31, maxiter=0, M=None, callback=None, check_every=31,
                 use_cuda_graph=True, **options):
        super().__init__(A, b, x, tol, atol, maxiter, M, callback, check_every, use_cuda_graph, restart=restart,
                         **options)


from ._fsai import FSAI  # FSAI is a LinearOperator (defined above)
