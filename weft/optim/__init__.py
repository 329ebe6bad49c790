"""``weft.optim``: gradient-based optimizers and iterative linear solvers, built only on weft kernels.

Everything here launches kernels and never does arithmetic on the host, so it runs on any device and its steps
can be recorded with ``wp.ScopedCapture`` and replayed with ``wp.capture_launch``.
"""

from __future__ import annotations

from . import linear
from .adam import Adam
from .linear import (
    CG,
    CR,
    GMRES,
    BiCGSTAB,
    LinearOperator,
    LinearSolverState,
    aslinearoperator,
    bicgstab,
    cg,
    cr,
    gmres,
    preconditioner,
)
from .sgd import SGD

__all__ = ["CG", "CR", "GMRES", "SGD", "Adam", "BiCGSTAB", "LinearOperator", "LinearSolverState", "aslinearoperator",
           "bicgstab", "cg", "cr", "gmres", "linear", "preconditioner"]
