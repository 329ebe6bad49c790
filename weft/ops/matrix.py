"""Matrix functions and decompositions (``weft/native/mat.h``)."""

from __future__ import annotations

from ..ir import types as T
from . import rules as R
from .forms import Form, Syntax
from .registry import Op, OpKind, register

D = "matrix"


def _square(args, attrs, sizes=(2, 3, 4)):
    return len(args) == 1 and isinstance(args[0], T.MatrixType) and args[0].rows == args[0].cols and \
        args[0].rows in sizes and args[0].scalar.is_float


register(Op("transpose", lambda a, at: T.MatrixType(a[0].cols, a[0].rows, a[0].scalar)
            if len(a) == 1 and isinstance(a[0], T.MatrixType) else None, native="transpose", domain=D,
            doc="Matrix transpose."))
register(Op("determinant", lambda a, at: a[0].scalar if _square(a, at) else None, native="determinant", domain=D,
            doc="Determinant of a 2x2, 3x3 or 4x4 matrix."))
register(Op("inverse", lambda a, at: a[0] if _square(a, at) else None, native="inverse", domain=D,
            doc="Inverse of a 2x2, 3x3 or 4x4 matrix."))
register(Op("inverse_approx", lambda a, at: a[0] if _square(a, at) else None, native="inverse", domain=D,
            doc="Warp's approximate matrix inverse: the same inversion as ``inverse`` (as Warp does on the CPU)."))
register(Op("trace", lambda a, at: a[0].scalar if len(a) == 1 and isinstance(a[0], T.MatrixType) and
            a[0].rows == a[0].cols else None, native="trace", domain=D, doc="Sum of the diagonal."))
register(Op("diag", lambda a, at: T.MatrixType(a[0].length, a[0].length, a[0].scalar)
            if len(a) == 1 and R.is_vec(a[0]) else None, native="diag", domain=D, doc="Diagonal matrix of a vector."))
register(Op("get_diag", lambda a, at: T.VectorType(a[0].rows, a[0].scalar)
            if len(a) == 1 and isinstance(a[0], T.MatrixType) and a[0].rows == a[0].cols else None,
            native="get_diag", domain=D, doc="Diagonal of a square matrix."))
register(Op("skew", lambda a, at: T.MatrixType(3, 3, a[0].scalar) if len(a) == 1 and R.is_vec(a[0], 3) else None,
            native="skew", domain=D, doc="Cross-product matrix of a vec3."))
register(Op("ddot", lambda a, at: a[0].scalar if len(a) == 2 and a[0] == a[1] and isinstance(a[0], T.MatrixType)
            else None, native="ddot", domain=D, doc="Double contraction sum_ij a_ij b_ij."))
register(Op("identity", lambda a, at: at[0] if not a else None, native="identity", kind=OpKind.SPECIAL, domain=D,
            syntax=Syntax(Form.SIZED_IDENTITY),
            doc="wp.identity(n, dtype): the identity matrix."))


def _outputs(n: int) -> Syntax:
    """``U, s, V = wp.svd3(A)`` or Warp's ``wp.svd3(A, U, s, V)`` with output variables."""
    return Syntax(Form.RESULTS_OR_OUTPUTS, params=("A",), outputs=n)


def _mat33(args, attrs):
    return len(args) == 1 and R.is_mat(args[0], 3, 3) and args[0].scalar.is_float


def _mat22(args, attrs):
    return len(args) == 1 and R.is_mat(args[0], 2, 2) and args[0].scalar.is_float


register(Op("svd2", lambda a, at: (a[0], T.VectorType(2, a[0].scalar), a[0]) if _mat22(a, at) else None,
            native="svd2", kind=OpKind.OUT_CALL, domain=D, syntax=_outputs(3),
            doc="wp.svd2(A, U, sigma, V): A = U diag(sigma) V^T of a 2x2 matrix (U, V rotations, sigma[0] >= |sigma[1]|)."))
register(Op("svd3", lambda a, at: (a[0], T.VectorType(3, a[0].scalar), a[0]) if _mat33(a, at) else None,
            native="svd3", kind=OpKind.OUT_CALL, domain=D, syntax=_outputs(3), doc="wp.svd3(A, U, sigma, V): A = U diag(sigma) V^T."))
register(Op("qr3", lambda a, at: (a[0], a[0]) if _mat33(a, at) else None, native="qr3", kind=OpKind.OUT_CALL,
            domain=D, syntax=_outputs(2), doc="wp.qr3(A, Q, R): A = Q R."))
register(Op("eig3", lambda a, at: (a[0], T.VectorType(3, a[0].scalar)) if _mat33(a, at) else None, native="eig3",
            kind=OpKind.OUT_CALL, domain=D, syntax=_outputs(2), doc="wp.eig3(A, Q, d): symmetric A = Q diag(d) Q^T."))
register(Op("polar_decomposition", lambda a, at: (a[0], a[0]) if _mat33(a, at) else None,
            native="polar_decomposition", kind=OpKind.OUT_CALL, domain=D, syntax=_outputs(2),
            doc="wp.polar_decomposition(A, Q, P): A = Q P with Q orthogonal and P symmetric."))
