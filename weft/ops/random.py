"""Counter-based random numbers (``weft/native/random.h``). The state is threaded through SSA values."""

from __future__ import annotations

from ..ir import types as T
from .registry import Adjoint, Op, OpKind, register

D = "random"


def _ints(args):
    return all(isinstance(a, T.ScalarType) and a.is_int for a in args)


register(Op("rand_init", lambda a, at: T.UINT32 if 1 <= len(a) <= 2 and _ints(a) else None, native="rand_init",
            adjoint=Adjoint.NONE, domain=D, doc="rand_init(seed[, offset]) -> state."))


def _stateful(result):
    def rule(args, attrs):
        if args and args[0] == T.UINT32 and result(args[1:]) is not None:
            return (T.UINT32, result(args[1:]))
        return None
    return rule


register(Op("randi", _stateful(lambda r: T.INT32 if not r or (len(r) == 2 and r[0] == r[1] == T.INT32) else None),
            native="randi", kind=OpKind.SPECIAL, adjoint=Adjoint.NONE, domain=D,
            doc="randi(state[, lo, hi]): random int32; advances state."))
register(Op("randf", _stateful(lambda r: T.FLOAT32 if not r or (len(r) == 2 and r[0] == r[1] == T.FLOAT32) else None),
            native="randf", kind=OpKind.SPECIAL, adjoint=Adjoint.NONE, domain=D,
            doc="randf(state[, lo, hi]): uniform float in [lo, hi); advances state."))
register(Op("randn", _stateful(lambda r: T.FLOAT32 if not r else None), native="randn", kind=OpKind.SPECIAL,
            adjoint=Adjoint.NONE, domain=D, doc="randn(state): standard normal float; advances state."))
