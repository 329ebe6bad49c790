"""Batched solves: a ``LinearOperator`` with ``batch_offsets`` holds ``B`` independent subproblems (its matrix is
block-diagonal with those blocks), and each is solved to its own tolerance.

weft solves the subproblems one after another with the unbatched solvers, on views of ``b`` and ``x``: a dense
operator is restricted to its diagonal block (a strided view, no copy); any other operator (a BSR matrix, a user
``matvec``) is applied to the subproblem's vector padded with zeros, which costs a full product per subproblem
product. Warp iterates all subproblems together in fused kernels; the solutions agree to the tolerance, the
iteration counts are per subproblem here, and the returned ``(iterations, residual, atol)`` are the largest over
the subproblems (Warp returns the worst-case residual and the largest tolerance too). The callback is called
once, with those aggregates, after the last subproblem.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import weft as wp

from . import linear


def is_batched(A) -> bool:
    return isinstance(A, linear.LinearOperator) and A.batch_offsets is not None


@wp.kernel
def _axpby(a: wp.array(dtype=Any), y: wp.array(dtype=Any), alpha: Any, beta: Any, use_y: int,
           z: wp.array(dtype=Any)):
    i = wp.tid()
    v = alpha * a[i]
    if use_y != 0:
        v = v + beta * y[i]
    z[i] = v


def _restrict(op, start: int, end: int):
    """The diagonal block ``[start, end)`` of the block-diagonal operator ``op``."""
    if op._dense is not None:
        return linear.aslinearoperator(op._dense[start:end, start:end])
    C, dev, n = op.scalar_type, op.device, op.shape[0]
    xf, zf = wp.zeros(n, dtype=C, device=dev), wp.zeros(n, dtype=C, device=dev)

    def matvec(x, y, z, alpha, beta):
        xf.zero_()
        wp.copy(xf[start:end], x)
        op.matvec(xf, zf, zf, C(1.0), C(0.0))
        wp.launch(_axpby, dim=end - start, device=dev,
                  inputs=[zf[start:end], y, C(alpha), C(beta), int(float(beta) != 0.0)], outputs=[z])

    return linear.LinearOperator((end - start, end - start), op.dtype, dev, matvec)


def solve(solver, A, b, x, M, options: dict):
    """Solve each subproblem of ``A`` with ``solver`` (cg, cr, bicgstab, gmres) and aggregate the results."""
    offsets = A.batch_offsets.numpy().astype(np.int64)
    n = A.shape[0]
    b, x = linear.scalar_values(b), linear.scalar_values(x)  # offsets count scalar unknowns
    if offsets.ndim != 1 or offsets.shape[0] < 1 or np.any(np.diff(offsets) < 0) or offsets[0] < 0 \
            or offsets[-1] > n:
        raise ValueError(f"batch_offsets: expected non-decreasing offsets within [0, {n}], got {offsets.tolist()}")
    for name, v in (("b", b), ("x", x)):
        if not (isinstance(v, wp.array) and v.ndim == 1 and v.shape[0] == n):
            raise ValueError(f"{name}: expected a 1-D array of {n} values for the batched operator")
    callback = options.pop("callback", None)
    M = linear.aslinearoperator(M)
    results = []
    for start, end in zip(offsets[:-1].tolist(), offsets[1:].tolist()):
        if end == start:
            continue
        sub_M = _restrict(M, start, end) if M is not None else None
        results.append(solver(_restrict(A, start, end), b[start:end], x[start:end], M=sub_M, **options))
    if not results:
        return 0, 0.0, 0.0
    if isinstance(results[0][1], wp.array):  # check_every=0: device scalars, read once here
        err = max(float(r[1].numpy()[0]) for r in results)
        atol = max(float(r[2].numpy()[0]) for r in results)
        dev, C = x.device, x.dtype
        return max(r[0] for r in results), wp.array([err], dtype=C, device=dev), wp.array([atol], dtype=C, device=dev)
    iterations = max(r[0] for r in results)
    err, atol = max(r[1] for r in results), max(r[2] for r in results)
    if callback is not None:
        callback(iterations, err, atol)
    return iterations, err, atol
