"""Spatial (6-D twist/wrench) algebra (``weft/native/spatial.h``)."""

from __future__ import annotations

from ..ir import types as T
from . import rules as R
from .registry import Op, register

D = "spatial"


def _sv(args, n):
    return len(args) == n and all(R.is_vec(a, 6) and a.scalar.is_float for a in args) and len(set(args)) == 1


register(Op("spatial_top", lambda a, at: T.VectorType(3, a[0].scalar) if _sv(a, 1) else None, native="spatial_top",
            domain=D, doc="First three components."))
register(Op("spatial_bottom", lambda a, at: T.VectorType(3, a[0].scalar) if _sv(a, 1) else None,
            native="spatial_bottom", domain=D, doc="Last three components."))
register(Op("spatial_dot", lambda a, at: a[0].scalar if _sv(a, 2) else None, native="spatial_dot", domain=D,
            doc="Spatial dot product."))
register(Op("spatial_cross", lambda a, at: a[0] if _sv(a, 2) else None, native="spatial_cross", domain=D,
            doc="Spatial cross product (motion)."))
register(Op("spatial_cross_dual", lambda a, at: a[0] if _sv(a, 2) else None, native="spatial_cross_dual", domain=D,
            doc="Spatial cross product (force)."))
register(Op("spatial_adjoint", lambda a, at: T.MatrixType(6, 6, a[0].scalar)
            if len(a) == 2 and R.is_mat(a[0], 3, 3) and a[0] == a[1] else None, native="spatial_adjoint", domain=D,
            doc="6x6 adjoint matrix from a rotation R and a skew matrix S."))
