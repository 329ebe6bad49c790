"""Scalar arithmetic, comparisons, bitwise ops and scalar math (``weft/native/scalar.h``)."""

from __future__ import annotations

import numpy as np

from ..ir import types as T
from . import rules as R
from .registry import Adjoint, Factor, Identity, Op, OpKind, register

D = "scalar"

# Python operators -> (op name, C++ operator, differentiable). Forward renders the operator, the adjoint calls
# weft::adj_<name>.
_ARITH = (
    ("add", "+"), ("sub", "-"), ("mul", "*"), ("div", "/"),
)
for _name, _sym in _ARITH:
    register(Op(_name, R.scalar_binary, native=_name, kind=OpKind.INFIX, operator=_sym, domain=D,
                adjoint_linear=_name in ("add", "sub"),
                constant_factor={"mul": Factor.EITHER, "div": Factor.DIVISOR}.get(_name, Factor.NONE),
                identity={"add": Identity.ZERO, "mul": Identity.ONE}.get(_name, Identity.NONE),
                doc=f"Scalar ``a {_sym} b`` (integer division truncates toward zero, as in C)."))

register(Op("div_approx", R.float_binary, native="div", domain=D, constant_factor=Factor.DIVISOR, host=np.divide,
            doc="``a / b`` (Warp's approximate GPU division; weft divides exactly on every target)."))
register(Op("floordiv", R.scalar_binary, native="floordiv", domain=D,
            doc="``a // b``: C truncating division for integers, floor(a / b) for floats."))
register(Op("mod", R.scalar_binary, native="mod", domain=D,
            doc="``a % b`` and ``wp.mod``: C semantics (the result has the sign of ``a``)."))
register(Op("neg", R.scalar_unary, native="neg", kind=OpKind.PREFIX, operator="-", domain=D, adjoint_linear=True,
            doc="``-a``."))
register(Op("pos", R.scalar_unary, native="pos", kind=OpKind.PREFIX, operator="+", domain=D, adjoint_linear=True,
            doc="``+a``."))

for _name, _sym in (("bit_and", "&"), ("bit_or", "|"), ("bit_xor", "^"), ("lshift", "<<"), ("rshift", ">>")):
    register(Op(_name, R.int_binary, native=_name, kind=OpKind.INFIX, operator=_sym, adjoint=Adjoint.NONE, domain=D,
                doc=f"Integer ``a {_sym} b``."))
register(Op("invert", lambda a, at: a[0] if len(a) == 1 and R.is_scalar(a[0], ints=True) else None, native="invert",
            kind=OpKind.PREFIX, operator="~", adjoint=Adjoint.NONE, domain=D, doc="Integer ``~a``."))

for _name, _sym in (("lt", "<"), ("le", "<="), ("gt", ">"), ("ge", ">=")):
    register(Op(_name, R.comparison, kind=OpKind.INFIX, operator=_sym, adjoint=Adjoint.NONE, public=False, domain=D,
                doc=f"``a {_sym} b``."))
for _name, _sym in (("eq", "=="), ("ne", "!=")):
    register(Op(_name, R.equality, kind=OpKind.INFIX, operator=_sym, adjoint=Adjoint.NONE, public=False, domain=D,
                doc=f"``a {_sym} b``."))
register(Op("eq", lambda a, at: T.BOOL if len(a) == 2 and a[0] == a[1] == T.BOOL else None, kind=OpKind.INFIX,
            operator="==", adjoint=Adjoint.NONE, public=False, domain=D))
register(Op("ne", lambda a, at: T.BOOL if len(a) == 2 and a[0] == a[1] == T.BOOL else None, kind=OpKind.INFIX,
            operator="!=", adjoint=Adjoint.NONE, public=False, domain=D))
register(Op("logical_not", lambda a, at: T.BOOL if len(a) == 1 and isinstance(a[0], T.ScalarType) else None,
            kind=OpKind.PREFIX, operator="!", adjoint=Adjoint.NONE, public=False, domain=D, doc="``not a``."))
register(Op("to_bool", lambda a, at: T.BOOL if len(a) == 1 and isinstance(a[0], T.ScalarType) else None,
            native="to_bool", kind=OpKind.SPECIAL, adjoint=Adjoint.NONE, public=False, domain=D,
            doc="Truth value of a scalar (``if x:``)."))



# Float math: name -> NumPy reference (used for host calls and by the tests).
_FLOAT_UNARY = {
    "sqrt": np.sqrt, "cbrt": np.cbrt, "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2,
    "log10": np.log10, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "degrees": np.degrees,
    "radians": np.radians,
}
for _name, _fn in _FLOAT_UNARY.items():
    register(Op(_name, R.float_unary, native=_name, domain=D, host=_fn, doc=f"``{_name}(x)`` of a float scalar."))

_NONDIFF_FLOAT_UNARY = {
    "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
    "round": lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5),
    "step": lambda x: np.where(x < 0, 1.0, 0.0).astype(np.asarray(x).dtype),
}
for _name, _fn in _NONDIFF_FLOAT_UNARY.items():
    register(Op(_name, R.float_unary, native=_name, adjoint=Adjoint.NONE, domain=D, host=_fn,
                doc=f"``{_name}(x)``; piecewise constant, so its gradient is zero."))

register(Op("frac", R.float_unary, native="frac", domain=D, host=lambda x: x - np.trunc(x), doc="x - trunc(x)."))
register(Op("abs", R.scalar_unary, native="abs", domain=D, host=np.abs, doc="Absolute value."))
register(Op("sign", R.scalar_unary, native="sign", adjoint=Adjoint.NONE, domain=D,
            host=lambda x: np.where(x < 0, -1, 1).astype(np.asarray(x).dtype), doc="-1 if x < 0 else 1."))
register(Op("min", R.scalar_binary, native="min", domain=D, host=np.fmin, identity=Identity.HIGHEST,
            doc="Smaller of two scalars (C's fmin for floats: a NaN operand counts as missing)."))
register(Op("max", R.scalar_binary, native="max", domain=D, host=np.fmax, identity=Identity.LOWEST,
            doc="Larger of two scalars (C's fmax for floats: a NaN operand counts as missing)."))
register(Op("clamp", R.scalar_ternary, native="clamp", domain=D, host=lambda x, a, b: np.fmin(np.fmax(x, a), b),
            doc="clamp(x, lo, hi) = min(max(x, lo), hi), with min / max's NaN rule."))
register(Op("pow", R.float_binary, native="pow", domain=D, host=np.power, doc="x ** y for floats."))
register(Op("atan2", R.float_binary, native="atan2", domain=D, host=np.arctan2, doc="atan2(y, x)."))
register(Op("lerp", R.float_ternary, native="lerp", domain=D, host=lambda a, b, t: a * (1 - t) + b * t,
            doc="a * (1 - t) + b * t."))


def _smoothstep(a, b, x):
    t = np.clip((x - a) / (b - a), 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


register(Op("smoothstep", R.float_ternary, native="smoothstep", domain=D, host=_smoothstep,
            doc="Hermite interpolation of x between edges a and b."))
for _name, _fn in (("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)):
    register(Op(_name, R.float_predicate, native=_name, adjoint=Adjoint.NONE, domain=D, host=_fn,
                doc=f"``{_name}`` of a float scalar, vector or matrix (any component)."))
