"""Special functions and further Warp builtins (``weft/native/mathx.h``): the erf family, ``rint``,
``copysign``, ``bit_count``, ``quat_rpy`` and ``lerp`` of vectors, matrices, quaternions and transforms."""

from __future__ import annotations

import math

import numpy as np

from ..errors import HostCallError
from ..ir import types as T
from . import rules as R
from .forms import Form, Syntax
from .registry import Adjoint, Op, OpKind, register

D = "mathx"
H = "mathx.h"


def _erfinv(x):
    from scipy.special import erfinv

    return erfinv(x)


def _erfcinv(x):
    from scipy.special import erfcinv

    return erfcinv(x)


_np_erf = np.vectorize(math.erf, otypes=[float])
_np_erfc = np.vectorize(math.erfc, otypes=[float])

for _name, _fn, _doc in (
    ("erf", _np_erf, "The error function 2/sqrt(pi) * integral_0^x exp(-t^2) dt."),
    ("erfc", _np_erfc, "The complementary error function 1 - erf(x)."),
    ("erfinv", _erfinv, "The inverse error function (erfinv(erf(x)) = x on (-1, 1); +-inf at +-1)."),
    ("erfcinv", _erfcinv, "The inverse complementary error function (erfcinv(erfc(x)) = x on (0, 2))."),
):
    register(Op(_name, R.float_unary, native=_name, domain=D, header=H, host=_fn, doc=f"``{_name}(x)``: {_doc}"))

register(Op("rint", R.float_unary, native="rint", adjoint=Adjoint.NONE, domain=D, header=H, host=np.rint,
            doc="``rint(x)``: x rounded to the nearest integer, halfway cases to the even one (as numpy.rint)."))
register(Op("copysign", R.float_binary, native="copysign", domain=D, header=H, host=np.copysign,
            doc="``copysign(x, y)``: the magnitude of x with the sign of y."))


def _popcount(x):
    """``wp.bit_count`` on the host: an integer scalar (a Python int is an int32, as Warp takes it)."""
    if type(x) is int:
        x = np.array(x & 0xFFFFFFFF, dtype=np.uint32)
    a = np.asarray(x)
    if a.ndim != 0 or a.dtype.kind not in "iu":
        raise HostCallError(f"Couldn't find a function 'bit_count' compatible with the arguments "
                            f"'{type(x).__name__}' (it takes an integer scalar)")
    u = a.astype(np.uint64) if a.dtype.kind == "u" else a.astype(np.int64).view(np.uint64)
    if a.dtype.itemsize < 8:
        u = u & np.uint64((1 << (8 * a.dtype.itemsize)) - 1)
    return np.vectorize(lambda v: int(v).bit_count(), otypes=[np.int32])(u)


register(Op("bit_count", lambda a, at: T.INT32 if len(a) == 1 and R.is_scalar(a[0], ints=True) else None,
            native="bit_count", adjoint=Adjoint.NONE, domain=D, header=H, host=_popcount,
            doc="``bit_count(x)``: the number of set bits of an integer (int32)."))


def _rpy_rule(args, attrs):
    if len(args) == 3 and R.is_scalar(args[0], floats=True) and args[0] == args[1] == args[2]:
        return T.VectorType(4, args[0], T.VecFlavor.QUAT)
    return None


register(Op("quat_rpy", _rpy_rule, native="quat_rpy", domain=D, header=H,
            doc="``quat_rpy(roll, pitch, yaw)``: the rotation by roll about x, then pitch about y, then yaw about z "
                "(fixed axes), as a quaternion."))


def _lerp_rule(args, attrs):
    if len(args) != 3 or args[0] != args[1]:
        return None
    a = args[0]
    if isinstance(a, (T.VectorType, T.MatrixType)) and a.scalar.is_float and args[2] == a.scalar:
        return a
    return None


register(Op("lerp", _lerp_rule, native="lerp", domain=D, header=H,
            doc="``lerp(a, b, t) = a * (1 - t) + b * t`` for vectors, matrices, quaternions and transforms "
                "(component-wise)."))


def _int_composite(t) -> bool:
    return isinstance(t, (T.VectorType, T.MatrixType)) and t.scalar.is_int


for _name, _sym in (("bit_and", "&"), ("bit_or", "|"), ("bit_xor", "^"), ("lshift", "<<"), ("rshift", ">>")):
    register(Op(_name, lambda a, at: a[0] if len(a) == 2 and a[0] == a[1] and _int_composite(a[0]) else None,
                native=_name, kind=OpKind.INFIX, operator=_sym, adjoint=Adjoint.NONE, domain=D, header=H,
                doc=f"``a {_sym} b`` of integer vectors or matrices, component-wise."))
register(Op("invert", lambda a, at: a[0] if len(a) == 1 and _int_composite(a[0]) else None, native="invert",
            kind=OpKind.PREFIX, operator="~", adjoint=Adjoint.NONE, domain=D, header=H,
            doc="``~a`` of an integer vector or matrix, component-wise."))

register(Op("nonzero", R.scalar_unary, native="nonzero", adjoint=Adjoint.NONE, domain=D, header=H,
            host=lambda x: (np.asarray(x) != 0).astype(np.asarray(x).dtype),
            doc="``nonzero(x)``: 1 where x != 0, else 0, in x's type."))
register(Op("step", lambda a, at: a[0] if len(a) == 1 and R.is_scalar(a[0], ints=True) else None, native="step",
            adjoint=Adjoint.NONE, domain=D, header=H, host=lambda x: (np.asarray(x) < 0).astype(np.asarray(x).dtype),
            doc="``step(x)`` of an integer: 1 where x < 0, else 0 (the native rule of scalar.h)."))


def _quat_axis_angle_rule(args, attrs):
    if len(args) == 1 and isinstance(args[0], T.VectorType) and args[0].flavor is T.VecFlavor.QUAT \
            and args[0].scalar.is_float:
        return (T.VectorType(3, args[0].scalar), args[0].scalar)
    return None


register(Op("quat_to_axis_angle", _quat_axis_angle_rule, native="quat_to_axis_angle", kind=OpKind.OUT_CALL, domain=D,
            syntax=Syntax(Form.RESULTS_OR_OUTPUTS, params=("q",), outputs=2),
            header=H, doc="``axis, angle = quat_to_axis_angle(q)`` (or ``quat_to_axis_angle(q, axis, angle)``): the "
                          "rotation axis and the angle in [0, pi] of q, so that quat_from_axis_angle(axis, angle) is "
                          "+-normalize(q); the axis is (1, 0, 0) when the angle is 0."))
register(Op("quat_from_matrix", lambda a, at: T.VectorType(4, a[0].scalar, T.VecFlavor.QUAT)
            if len(a) == 1 and isinstance(a[0], T.MatrixType) and (a[0].rows, a[0].cols) == (4, 4)
            and a[0].scalar.is_float else None, native="quat_from_matrix", domain=D, header=H,
            doc="The rotation of a 4x4 affine matrix (its upper-left 3x3 block) as a unit quaternion."))


# ---- Warp's vector reductions and component-wise overloads, scalar / matrix, 4x4 point and vector transforms
def _vec_scalar(args, attrs):
    return args[0].scalar if len(args) == 1 and R.is_vec(args[0]) and not args[0].scalar.is_bool else None


for _name, _what in (("max", "largest"), ("min", "smallest")):
    register(Op(_name, _vec_scalar, native=_name, domain=D, header=H,
                doc=f"``{_name}(v)``: the {_what} component of a vector (its gradient goes to that component)."))
for _name, _what in (("argmax", "largest"), ("argmin", "smallest")):
    register(Op(_name, lambda a, at: T.UINT32 if _vec_scalar(a, at) is not None else None, native=_name,
                adjoint=Adjoint.NONE, domain=D, header=H,
                doc=f"``{_name}(v)``: the index (uint32) of the {_what} component (the first on ties)."))
register(Op("sign", lambda a, at: a[0] if len(a) == 1 and R.is_vec(a[0]) and not a[0].scalar.is_bool else None,
            native="sign", adjoint=Adjoint.NONE, domain=D, header=H,
            doc="``sign(v)``: -1 for negative components, else 1, component-wise."))
register(Op("mod", lambda a, at: a[0] if len(a) == 2 and R.is_vec(a[0]) and a[0] == a[1] else None, native="mod",
            domain=D, header=H, doc="``mod(a, b)`` of vectors, component-wise (the sign of a, as C fmod / %)."))
register(Op("div", lambda a, at: a[1] if len(a) == 2 and R.is_mat(a[1]) and a[0] == a[1].scalar else None,
            native="div", domain=D, header=H, doc="``s / m``: a scalar divided by each component of a matrix."))
register(Op("div_approx", lambda a, at: a[1] if len(a) == 2 and R.is_mat(a[1]) and a[0] == a[1].scalar
            and a[0].is_float else None, native="div", domain=D, header=H,
            doc="``div_approx(s, m)``: a scalar divided by each component of a matrix, as ``s / m`` (exact on every "
                "target)."))
for _name, _what in (("transform_point", "a point (w = 1)"), ("transform_vector", "a direction (w = 0)")):
    register(Op(_name, lambda a, at: a[1] if len(a) == 2 and R.is_mat(a[0], 4, 4) and a[0].scalar.is_float
                and a[1] == T.VectorType(3, a[0].scalar) else None, native=_name, domain=D, header=H,
                doc=f"``{_name}(m, v)``: the 4x4 matrix m applied to {_what}, the first three components."))


def _lower_bound_rule(args, attrs):
    if not args or not isinstance(args[0], T.ArrayType) or args[0].ndim != 1 or args[0].kind is not T.ArrayKind.ARRAY \
            or not R.is_scalar(args[0].dtype) or args[-1] != args[0].dtype:
        return None
    if len(args) == 2 or (len(args) == 4 and args[1] == args[2] == T.INT32):
        return T.INT32
    return None


register(Op("lower_bound", _lower_bound_rule, native="lower_bound", adjoint=Adjoint.NONE, domain=D, header=H,
            doc="``lower_bound(arr, [begin, end,] value)``: the first index i (in [begin, end)) of the sorted 1-D "
                "array with arr[i] >= value; the last index of the range if there is none (Warp's result)."))
