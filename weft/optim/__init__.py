"""``weft.optim``: gradient-based optimizers and iterative linear solvers, built only on weft kernels.

Everything here launches kernels and never does arithmetic on the host, so it runs on any device and its steps
can be recorded with ``wp.ScopedCapture`` and replayed with ``wp.capture_launch``.
"""

from __future__ import annotations

from . import linear
from .adam import Adam
from .linear import LinearOperator, aslinearoperator, bicgstab, cg, preconditioner
from .sgd import SGD

__all__ = ["SGD", "Adam", "LinearOperator", "aslinearoperator", "bicgstab", "cg", "linear", "preconditioner"]
