"""Counter-based random numbers (``weft/native/random.h``). The state is threaded through SSA values.

The generators take the state first and advance it: ``x = wp.randf(state)`` rebinds ``state`` to the next state
(the frontend binds the op's first result back to the variable), so two calls in a row draw two numbers, as in
Warp. For the same seed the streams equal Warp's bit for bit (the same PCG hash and the same mapping to floats).
"""

from __future__ import annotations

from ..ir import types as T
from .forms import Form, Syntax
from .registry import Adjoint, Op, OpKind, register

D = "random"
VEC2F = T.VectorType(2, T.FLOAT32)
VEC3F = T.VectorType(3, T.FLOAT32)

#: ops that take the state first and return (new state, value); rendered and lowered as one family
STATEFUL: list[str] = []


def _ints(args):
    return all(isinstance(a, T.ScalarType) and a.is_int for a in args)


register(Op("rand_init", lambda a, at: T.UINT32 if 1 <= len(a) <= 2 and _ints(a) else None, native="rand_init",
            adjoint=Adjoint.NONE, domain=D, doc="rand_init(seed[, offset]) -> state."))


#: ``x = wp.randf(state)``: the call returns x and rebinds ``state`` to the next state
_STATEFUL = Syntax(Form.RANDOM_STATE, updates=(0,))


def _stateful(name, result, doc):
    def rule(args, attrs):
        if args and args[0] == T.UINT32:
            out = result(args[1:])
            if out is not None:
                return (T.UINT32, out)
        return None
    STATEFUL.append(name)
    register(Op(name, rule, native=name, kind=OpKind.SPECIAL, adjoint=Adjoint.NONE, domain=D, doc=doc,
                syntax=_STATEFUL))


def _range_of(scalar):
    return lambda r: scalar if not r or (len(r) == 2 and r[0] == r[1] == scalar) else None


def _only(result):
    return lambda r: result if not r else None


def _cdf(r):
    if len(r) == 1 and isinstance(r[0], T.ArrayType) and r[0].kind is T.ArrayKind.ARRAY and r[0].ndim == 1 \
            and r[0].dtype == T.FLOAT32:
        return T.INT32
    return None


_stateful("randi", _range_of(T.INT32), "randi(state[, low, high]): random int32 (all 32 bits, or uniform in "
          "[low, high)); advances state.")
_stateful("randu", _range_of(T.UINT32), "randu(state[, low, high]): random uint32 (all 32 bits, or uniform in "
          "[low, high)); advances state.")
_stateful("randf", _range_of(T.FLOAT32), "randf(state[, low, high]): uniform float in [0, 1) (2^24 equal steps) "
          "or in [low, high); advances state.")
_stateful("randn", _only(T.FLOAT32), "randn(state): standard normal float (Box-Muller); advances state.")
_stateful("sample_cdf", _cdf, "sample_cdf(state, cdf): the first index i with cdf[i] >= u for u uniform in [0, 1) "
          "(cdf: a 1-D non-decreasing float32 array); advances state.")
_stateful("poisson", lambda r: T.UINT32 if len(r) == 1 and r[0] == T.FLOAT32 else None,
          "poisson(state, lam): a Poisson(lam) count as uint32 (multiplication method below lam = 10, "
          "Hoermann's transformed rejection from there); advances state.")
for _name, _t, _what in (
    ("sample_triangle", VEC2F, "barycentric (u, v), uniform over the triangle u, v >= 0, u + v <= 1"),
    ("sample_unit_ring", VEC2F, "a point uniform on the unit circle"),
    ("sample_unit_disk", VEC2F, "a point uniform in the unit disk"),
    ("sample_unit_square", VEC2F, "a point uniform in the square [-0.5, 0.5)^2"),
    ("sample_unit_sphere_surface", VEC3F, "a point uniform on the unit sphere"),
    ("sample_unit_sphere", VEC3F, "a point uniform in the unit ball"),
    ("sample_unit_hemisphere_surface", VEC3F, "a point uniform on the unit hemisphere z > 0"),
    ("sample_unit_hemisphere", VEC3F, "a point uniform in the unit half-ball z > 0"),
    ("sample_unit_cube", VEC3F, "a point uniform in the cube [-0.5, 0.5)^3"),
):
    _stateful(_name, _only(_t), f"{_name}(state): {_what}; advances state.")
