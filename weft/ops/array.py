"""Array element access inside kernels: loads, stores, sub-array views, shapes, kernel-local fixed arrays."""

from __future__ import annotations

from ..ir import types as T
from ..ir.roles import Role
from .forms import Form, Syntax
from .registry import Adjoint, Op, OpKind, register

D = "array"


def _indices_ok(idx) -> bool:
    return all(isinstance(t, T.ScalarType) and t.is_int for t in idx)


def _load(args, attrs):
    if args and isinstance(args[0], T.ArrayType) and len(args) - 1 == args[0].ndim and _indices_ok(args[1:]):
        return args[0].dtype
    return None


def _store(args, attrs):
    if args and isinstance(args[0], T.ArrayType) and len(args) - 2 == args[0].ndim and _indices_ok(args[1:-1]) \
            and args[-1] == args[0].dtype:
        return T.VOID
    return None


def _view(args, attrs):
    if args and isinstance(args[0], T.ArrayType) and 0 < len(args) - 1 < args[0].ndim and _indices_ok(args[1:]):
        a = args[0]
        if a.kind is T.ArrayKind.FIXED:  # a plain array viewing the local array's storage (writes go through)
            return T.ArrayType(a.dtype, a.ndim - (len(args) - 1))
        if a.kind is T.ArrayKind.INDEXED:  # a[i] of an indexed array: an indexed array of the remaining dimensions
            return T.ArrayType(a.dtype, a.ndim - (len(args) - 1), T.ArrayKind.INDEXED)
        return T.ArrayType(a.dtype, a.ndim - (len(args) - 1))
    return None


register(Op("load", _load, native="load", kind=OpKind.SPECIAL, adjoint=Adjoint.SPECIAL, public=False, domain=D,
            role=Role.LOAD, adjoint_linear=True,
            doc="a[i, j]: read an element (bounds-checked in debug mode)."))
register(Op("store", _store, native="store", kind=OpKind.SPECIAL, adjoint=Adjoint.SPECIAL, side_effect=True,
            public=False, domain=D, role=Role.STORE, adjoint_linear=True, doc="a[i, j] = v: write an element."))
register(Op("view", _view, native="view", kind=OpKind.SPECIAL, adjoint=Adjoint.NONE, public=False, domain=D,
            role=Role.VIEW, adjoint_linear=True,
            doc="a[i]: the sub-array of a multi-dimensional array."))
def _slice(args, attrs):
    nd, kinds = attrs
    if not (args and isinstance(args[0], T.ArrayType) and args[0].kind is T.ArrayKind.ARRAY and _indices_ok(args[1:])):
        return None
    a = args[0]
    sliced = kinds.bit_count()
    if not 0 < nd <= a.ndim or not sliced or len(args) - 1 != 3 * sliced + (nd - sliced):
        return None
    return T.ArrayType(a.dtype, a.ndim - (nd - sliced))


register(Op("array_slice", _slice, native="slice", kind=OpKind.SPECIAL, adjoint=Adjoint.NONE, public=False, domain=D,
            role=Role.VIEW, adjoint_linear=True, header="release_checks.h",  # a run-time zero step raises
            doc="a[i:j:k, l]: a strided view of an array (NumPy's slice rules; same memory and gradient)."))
register(Op("array_shape", lambda a, at: T.INT32 if len(a) == 1 and isinstance(a[0], T.ArrayType) else None,
            kind=OpKind.SPECIAL, adjoint=Adjoint.NONE, public=False, domain=D, role=Role.SHAPE, doc="a.shape[k]"))
register(Op("array_valid", lambda a, at: T.BOOL if len(a) == 1 and isinstance(a[0], T.ArrayType)
            and a[0].kind is T.ArrayKind.ARRAY else None, native="array_valid", adjoint=Adjoint.NONE, public=False,
            domain=D, doc="An array as a condition (`if a:`): whether it has data (None was passed: False), as Warp."))
register(Op("fixed_zeros", lambda a, at: at[0] if not a else None, kind=OpKind.SPECIAL, syntax=Syntax(Form.FIXED_ZEROS), adjoint=Adjoint.NONE,
            public=False, domain=D, role=Role.FRESH, doc="wp.zeros(shape, dtype) inside a kernel: a zeroed local array."))


def _array_at(args, attrs):
    (t,) = attrs
    if len(args) == 1 + t.ndim and args[0] == T.UINT64 and all(a == T.INT32 for a in args[1:]):
        return t
    return None


register(Op("array_at", _array_at, native="array_at", adjoint=Adjoint.NONE, public=False, domain=D,
            doc="wp.array(ptr=, shape=, dtype=) in kernel code: a contiguous array over memory at an address."))
register(Op("array_ptr", lambda a, at: T.UINT64 if len(a) == 1 and isinstance(a[0], T.ArrayType)
            and a[0].kind is T.ArrayKind.ARRAY else None, native="array_ptr", adjoint=Adjoint.NONE, public=False,
            domain=D, doc="a.ptr in kernel code: the address of an array's data (uint64; 0 for a null array)."))
