"""Internal and utility ops: copies, thread index, structs, printing and checks."""

from __future__ import annotations

from ..ir import types as T
from ..ir.roles import Role
from .forms import Form, Syntax
from .registry import Adjoint, InPlace, Op, OpKind, register

D = "misc"


def _copy(args, attrs):
    return args[0] if len(args) == 1 else None


register(Op("copy", _copy, kind=OpKind.SPECIAL, adjoint=Adjoint.SPECIAL, in_place=InPlace.ALL, public=False, domain=D,
            role=Role.COPY, adjoint_linear=True,
            doc="Read a mutable local into an SSA value."))
register(Op("tid", lambda a, at: tuple(T.INT32 for _ in range(at[0])) if not a else None, kind=OpKind.SPECIAL,
            syntax=Syntax(Form.TID),
            adjoint=Adjoint.NONE, public=False, domain=D, role=Role.TID,
            doc="Thread index in the launch grid (1-4 components)."))


def _getfield(args, attrs):
    if len(args) == 1 and isinstance(args[0], T.StructType):
        return args[0].field_type(attrs[0])
    return None


def _setfield(args, attrs):
    if len(args) == 2 and isinstance(args[0], T.StructType) and args[0].field_type(attrs[0]) == args[1]:
        return args[0]
    return None


register(Op("getfield", _getfield, kind=OpKind.SPECIAL, adjoint=Adjoint.SPECIAL, public=False, domain=D,
            role=Role.GETFIELD, doc="s.field"))
register(Op("setfield", _setfield, kind=OpKind.SPECIAL, adjoint=Adjoint.SPECIAL, public=False, domain=D,
            doc="A copy of struct s with one field replaced."))

register(Op("print", lambda a, at: T.VOID, kind=OpKind.SPECIAL, adjoint=Adjoint.SPECIAL, side_effect=True, domain=D,
            adjoint_reads_primal=False, adjoint_linear=True, public=False,
            doc="print(...) inside a kernel; the backward pass prints it again and, in its reverse sweep, "
                "'adj: ' and the adjoints of the printed values."))
register(Op("printf", lambda a, at: T.VOID, kind=OpKind.SPECIAL, adjoint=Adjoint.NONE, side_effect=True, domain=D,
            syntax=Syntax(Form.PRINTF),
            public=False, doc="C printf."))
register(Op("assert", lambda a, at: T.VOID if a == (T.BOOL,) else None, kind=OpKind.SPECIAL, adjoint=Adjoint.NONE,
            side_effect=True, public=False, domain=D, doc="assert in kernel code (checked in debug mode)."))


def _expect2(args, attrs):
    if len(args) == 2 and args[0] == args[1]:
        return T.VOID
    return None


def _expect_near(args, attrs):
    if len(args) == 3 and args[0] == args[1] and isinstance(args[2], T.ScalarType) and args[2].is_float:
        return T.VOID
    if len(args) == 2 and args[0] == args[1] and T.is_float_type(args[0]):
        return T.VOID
    return None


_EXPECT2 = Syntax(Form.EXPECT, params=("a", "b"))
register(Op("expect_eq", _expect2, kind=OpKind.SPECIAL, adjoint=Adjoint.NONE, side_effect=True, domain=D, syntax=_EXPECT2,
            public=False, doc="Report (and count) a failure when a != b."))
register(Op("expect_neq", _expect2, kind=OpKind.SPECIAL, adjoint=Adjoint.NONE, side_effect=True, domain=D,
            syntax=_EXPECT2,
            public=False, doc="Report a failure when a == b."))
register(Op("expect_near", _expect_near, kind=OpKind.SPECIAL, adjoint=Adjoint.NONE, side_effect=True, domain=D,
            syntax=Syntax(Form.EXPECT, params=("a", "b", "tolerance")),
            public=False, doc="Report a failure when |a - b| > tol."))
register(Op("breakpoint", lambda a, at: T.VOID if not a else None, native="breakpoint", adjoint=Adjoint.NONE,
            side_effect=True, domain=D,
            doc="Stop in an attached debugger (gdb / lldb on the CPU, cuda-gdb on CUDA); without one, nothing "
                "happens on the CPU."))
register(Op("bit_and_bool", lambda a, at: T.BOOL if a == (T.BOOL, T.BOOL) else None, kind=OpKind.INFIX,
            operator="&&", adjoint=Adjoint.NONE, public=False, domain=D,
            doc="Both of two booleans (chained comparisons)."))


# Only inside @wp.func_grad bodies (rendered by the adjoint backend).
register(Op("adj_value", lambda a, at: a[0] if len(a) == 1 else None, kind=OpKind.SPECIAL, adjoint=Adjoint.NONE,
            domain=D, doc="The adjoint of a custom-gradient func's result (its adj_ret parameter)."))
register(Op("adj_accum", lambda a, at: T.VOID if len(a) == 2 and a[0] == a[1] else None, kind=OpKind.SPECIAL,
            adjoint=Adjoint.NONE, side_effect=True, domain=D, doc="wp.adjoint[x] += value in a @wp.func_grad."))
register(Op("adj_array", lambda a, at: a[0] if len(a) == 1 and _plain_array(a[0]) else None, kind=OpKind.SPECIAL,
            adjoint=Adjoint.NONE, domain=D, doc="wp.adjoint[a] of an array input in a @wp.func_grad: its gradient."))
register(Op("adj_grad_add", lambda a, at: T.VOID if len(a) >= 3 and _plain_array(a[0]) and len(a) - 2 == a[0].ndim
            and a[-1] == a[0].dtype and all(isinstance(i, T.ScalarType) and i.is_int for i in a[1:-1]) else None,
            kind=OpKind.SPECIAL, adjoint=Adjoint.NONE, side_effect=True, domain=D,
            doc="wp.adjoint[a][i, ...] += v in a @wp.func_grad: an atomic add into the array's gradient."))
register(Op("adj_reset", lambda a, at: T.VOID if len(a) == 1 else None, kind=OpKind.SPECIAL, adjoint=Adjoint.NONE,
            side_effect=True, domain=D, doc="Zero the adjoint of a custom-gradient func's result once consumed."))



def _grad_call(a, at):
    """wp.grad(f)(args...): attrs[0] is the call's ``ir.nodes.GradSub``; one result per parameter of its function."""
    sub = at[0] if at else None
    params = getattr(getattr(sub, "fn", None), "params", None)
    if params is None or tuple(p.type for p in params) != tuple(a):
        return None
    return tuple(p.type for p in params)


# The gradient computed in forward code (Warp's wp.grad): forward-only, a constant for the reverse sweep (as in Warp).
register(Op("grad_call", _grad_call, kind=OpKind.SPECIAL, adjoint=Adjoint.NONE, public=False, domain=D,
            doc="wp.grad(f)(args...): the adjoints of f's arguments with f's result adjoint seeded to one."))

def _plain_array(t) -> bool:
    return isinstance(t, T.ArrayType) and t.kind is T.ArrayKind.ARRAY
