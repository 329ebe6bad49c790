"""Calls in kernel code: registry builtins, special forms (tid, static, print ...), casts, constructors, funcs."""

from __future__ import annotations

import ast
import builtins

import numpy as np

from ..ir import types as T
from ..ir.nodes import Const, If, Var, VarKind
from ..ops import registry
from ..ops.noise import SIGNATURES
from ..ops.random import STATEFUL
from ..types import composite
from ..types.aliases import NAMED_TYPES
from ..types.composite import class_for
from ..types.mapping import to_ir
from ..types.scalars import BY_NAME
from ..typing.resolve import Weak
from .analysis import binding_analysis, only_tail_return
from .func import Func
from .queries import SPECIAL_NEXT


def lower_call(lw, node: ast.Call):
    callee = _callee(lw, node.func)
    starred = [a for a in node.args if isinstance(a, ast.Starred)] + [k for k in node.keywords if k.arg is None]
    if starred:
        raise lw.error("star-arguments are not supported in kernel calls", starred[0],
                       hint="pass the arguments one by one")
    name = getattr(callee, "_wp_kernel_builtin_", None)
    if callee is builtins.print:
        name = "print"
    if name in SPECIAL:
        return SPECIAL[name](lw, node)
    args = [lw.visit(a) for a in node.args]
    kwargs = {k.arg: lw.visit(k.value) for k in node.keywords}
    if isinstance(callee, Func):
        return inline(lw, callee, args, kwargs, node)
    if name is not None:
        return _builtin(lw, name, args, kwargs, node)
    if callee in _PY_BUILTINS:
        return _PY_BUILTINS[callee](lw, args, kwargs, node)
    factory = _factories().get(callee)
    if factory is not None:
        return factory(lw, args, kwargs, node)
    ir = getattr(callee, "_ir_", None) if isinstance(callee, type) else None
    if ir is not None:
        return construct(lw, ir, args, kwargs, node)
    if isinstance(callee, (Var, Const)):
        raise lw.error(f"a {callee.type} value is not callable", node)
    if getattr(callee, "_wp_is_kernel_", False):
        raise lw.error("kernels cannot be called from kernel code", node, hint="turn the callee into a @wp.func")
    raise lw.error(f"cannot call {_name_of(callee)} from kernel code", node,
                   hint="kernels can call weft builtins, @wp.func functions and type constructors")


def _factories() -> dict:
    from .. import mathfuncs

    return {composite.vector: _vector_factory, composite.matrix: _matrix_factory, mathfuncs.len: _py_len,
            composite.quaternion: _flavored_factory("quaternion", 4, T.VecFlavor.QUAT),
            composite.transformation: _flavored_factory("transformation", 7, T.VecFlavor.TRANSFORM),
            composite.matrix_from_rows: _matrix_from_vectors(False), composite.matrix_from_cols: _matrix_from_vectors(True)}


def _callee(lw, func_node):
    if isinstance(func_node, ast.Name):
        if not lw.name_bound(func_node.id):
            bare = bare_builtin(func_node.id)
            if bare is not None:
                return bare
        return lw.read_name(func_node.id, func_node)
    if isinstance(func_node, ast.Attribute):
        base = lw.visit(func_node.value)
        if isinstance(base, Var) and isinstance(base.type, T.ArrayType) and func_node.attr == "dtype":
            return lw.attribute(base, func_node.attr, func_node)  # a.dtype(x): a conversion to the element type
        if isinstance(base, (Var, Const)):
            raise lw.error(f"methods are not supported on {base.type} values", func_node,
                           hint=f"call the builtin instead, e.g. wp.{func_node.attr}(x)")
        return lw.attribute(base, func_node.attr, func_node)
    return lw.visit(func_node)


def bare_builtin(name: str):
    """A kernel builtin or value type called without the ``wp.`` prefix (``dot(a, b)``, ``vec3(...)``), as Warp
    allows when no local, global or Python builtin has that name; None if weft has no such builtin."""
    if name in SPECIAL or any(op.public for op in registry.overloads(name)):
        return _BareBuiltin(name)
    return NAMED_TYPES.get(name) or BY_NAME.get(name)


class _BareBuiltin:
    """What a bare builtin name resolves to in kernel code (the ``wp.`` handle without importing the public API)."""

    __slots__ = ("_wp_kernel_builtin_",)

    def __init__(self, name: str):
        self._wp_kernel_builtin_ = name


def _name_of(obj) -> str:
    return repr(getattr(obj, "__name__", obj))


def _builtin(lw, name: str, args, kwargs, node):
    if not registry.has(name):
        raise lw.error(f"wp.{name} is not available in kernel code", node)
    attrs = ()
    if kwargs:
        hook = _KWARG_HOOKS.get(name)
        if hook is None:
            raise lw.error(f"wp.{name} takes no keyword arguments in kernel code", node)
        args, attrs = hook(lw, args, kwargs, node)
    return lw.op(name, args, attrs=attrs, node=node)


_KWARG_HOOKS: dict = {}


def construct(lw, t: T.Type, args, kwargs, node):
    """``wp.vec3(...)``, ``wp.float32(x)``, ``MyStruct()``, ``wp.mat33(...)``..."""
    if isinstance(t, T.VectorType) and t.flavor is T.VecFlavor.TRANSFORM and set(kwargs) <= {"p", "q"} \
            and len(args) + len(kwargs) in (1, 2) and (kwargs or _is_vec3(args[0])):
        return _transform_parts(lw, t, args, kwargs, node)
    if isinstance(t, T.StructType):
        return _construct_struct(lw, t, args, kwargs, node)
    if kwargs:
        raise lw.error(f"{t} constructor takes no keyword arguments", node)
    if isinstance(t, T.ScalarType):
        if len(args) != 1:
            raise lw.error(f"{t}() takes exactly one argument", node)
        value = lw.as_operand_or_weak(args[0], node)
        if isinstance(value, Weak):
            return lw.operand(value, node, want=t) if value.fits(t) else Const(t.np_dtype.type(value.value).item(), t)
        if value.type == t:
            return value
        return lw.op("cast", [value], attrs=(t,), node=node)
    if isinstance(t, T.GenericType):
        raise lw.error(f"{t} is a generic type and cannot be constructed", node)
    scalar = T.scalar_of(t)
    ops = [lw.operand(a, node, want=scalar) if isinstance(lw.as_operand_or_weak(a, node), Weak)
           else lw.as_operand_or_weak(a, node) for a in args]
    if isinstance(t, T.VectorType) and len(ops) >= 2 and any(isinstance(o.type, T.VectorType) for o in ops):
        if t.flavor is T.VecFlavor.TRANSFORM and len(ops) == 2:
            return lw.op("construct", ops, attrs=(t,), node=node)  # transform(p, q)
        piece_scalars = {o.type.scalar for o in ops if isinstance(o.type, T.VectorType)}
        if t.scalar == T.FLOAT32 and len(piece_scalars) == 1 and next(iter(piece_scalars)).is_float:
            # Warp's generic constructors (spatial_vector(w, v), quaternion(ijk, w)) take the pieces' precision
            t = T.VectorType(t.length, next(iter(piece_scalars)), t.flavor)
            ops = [lw.operand(a, node, want=t.scalar) if isinstance(lw.as_operand_or_weak(a, node), Weak)
                   else lw.as_operand_or_weak(a, node) for a in args]
        ops = _components(lw, t, ops, node)
    return lw.op("construct", ops, attrs=(t,), node=node)


def _construct_struct(lw, t: T.StructType, args, kwargs, node):
    """``MyStruct()`` (every field zero) or ``MyStruct(a, b, ...)`` / ``MyStruct(x=a, ...)`` giving every field."""
    value = lw.op("construct", [], attrs=(t,), node=node)
    if not args and not kwargs:
        return value
    names = [f for f, _ in t.fields]
    if len(args) > len(names):
        raise lw.error(f"{t.name}() takes {len(names)} field values ({', '.join(names)}), got {len(args)}", node)
    given = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names:
            raise lw.error(f"{t.name}() has no field '{k}'", node, hint="fields: " + ", ".join(names))
        if k in given:
            raise lw.error(f"{t.name}() got multiple values for field '{k}'", node)
        given[k] = v
    missing = [f for f in names if f not in given]
    if missing:
        raise lw.error(f"{t.name}() is missing the field value '{missing[0]}'", node,
                       hint="give every field, or none (then assign fields afterwards)")
    for fname, ftype in t.fields:
        v = lw.operand(given[fname], node, want=ftype)
        if v.type != ftype:
            raise lw.error(f"{t.name}() field '{fname}' is {ftype}, got {v.type}", node)
        value = lw.op("setfield", [value, v], attrs=(fname,), node=node)
    return value


def _is_vec3(value) -> bool:
    return isinstance(value, (Var, Const)) and isinstance(value.type, T.VectorType) and value.type.length == 3 \
        and value.type.flavor is T.VecFlavor.VECTOR


def _transform_parts(lw, t: T.VectorType, args, kwargs, node):
    """``wp.transform(p, q)`` with keywords or a default rotation: ``transform(p=v)`` is ``transform(v, identity)``."""
    parts = dict(zip(("p", "q"), args))
    for k, v in kwargs.items():
        if k in parts:
            raise lw.error(f"transform() got '{k}' twice", node)
        parts[k] = v
    p = parts.get("p")
    if p is None:
        p = lw.op("construct", [], attrs=(T.VectorType(3, t.scalar),), node=node)
    q = parts.get("q")
    if q is None:
        q = lw.op("quat_identity", [], attrs=(t.scalar,), node=node)
    return lw.op("construct", [lw.operand(p, node), lw.operand(q, node)], attrs=(t,), node=node)


def _components(lw, t: T.VectorType, ops, node):
    """The scalars of a vector built from pieces: ``spatial_vector(w, v)`` from two vec3, ``quaternion(ijk, w)``,
    ``vec4(v3, 1.0)``: vectors contribute their components in order (the same scalar type everywhere)."""
    flat = []
    for o in ops:
        if isinstance(o.type, T.VectorType) and o.type.scalar == t.scalar:
            flat += [lw.op("extract", [o, Const(i, T.INT32)], node=node) for i in range(o.type.length)]
        elif o.type == t.scalar:
            flat.append(o)
        else:
            raise lw.error(f"{t} cannot be built from a {o.type} (pieces must be {t.scalar} scalars or vectors)",
                           node)
    if len(flat) != t.length:
        raise lw.error(f"{t} has {t.length} components, the pieces given have {len(flat)}", node)
    return flat


# ---------------------------------------------------------------------- funcs
def inline(lw, func: Func, args, kwargs, node):
    chosen, bound = _select_overload(lw, func, args, kwargs, node)
    if chosen.custom_grad is not None or chosen.custom_replay is not None:
        from ..autodiff.custom import lower_custom_call

        return lower_custom_call(lw, chosen, bound, node)
    return inline_plain(lw, chosen, bound, node)


def inline_plain(lw, chosen: Func, bound: dict, node, adjoint_targets: dict | None = None):
    """Inline ``chosen`` with parameters already bound to values."""
    from .lower import Frame

    if chosen in lw.inline_stack:
        raise lw.error(f"recursive call of {chosen.__name__}() is not supported", node,
                       hint="rewrite the recursion as a loop")
    src = chosen.source
    tree = src.tree
    mutable, component_only = binding_analysis(tree)
    frame = Frame(src, mutable=mutable, component_only=component_only, is_func=True,
                  tail_only=only_tail_return(tree), call_loc=lw.frame.src.loc(node), name=chosen.__name__)
    frame.adjoint_targets = adjoint_targets
    lw.inline_stack.append(chosen)
    lw.frames.append(frame)
    try:
        if not frame.tail_only:
            frame.done = lw.b.new_var(T.BOOL, f"{chosen.__name__}_done", VarKind.MUTABLE)
            lw.b.assign(frame.done, Const(False, T.BOOL))
        for pname, value in bound.items():
            lw._bind_initial(pname, value)
        lw.lower_block(tree.body)
    finally:
        lw.frames.pop()
        lw.inline_stack.pop()
    if frame.tail_only:
        return frame.result
    if frame.ret_vars is None:
        return None
    outs = tuple(lw.op("copy", [v], node=node) for v in frame.ret_vars)
    return outs[0] if len(outs) == 1 else outs


def _select_overload(lw, func: Func, args, kwargs, node):
    errors = []
    for cand in func.overloads:
        try:
            return cand, _bind_args(lw, cand, args, kwargs, node)
        except _Mismatch as exc:
            errors.append((f"{cand.__name__}{_sig(cand)}", str(exc)))
    if len(errors) == 1:
        raise lw.error(f"bad arguments for {func.__name__}{_sig(func)}: {errors[0][1]}", node)
    raise lw.error(f"no overload of {func.__name__}() matches these arguments", node,
                   hint="; ".join(f"{sig}: {why}" for sig, why in errors))


class _Mismatch(Exception):
    pass


def _sig(f: Func) -> str:
    return "(" + ", ".join(f"{k}: {getattr(v, '__name__', v)}" for k, v in f.annotations.items()) + ")"


def _bind_args(lw, f: Func, args, kwargs, node) -> dict:
    tree = f.source.tree
    params = [a.arg for a in tree.args.args]
    defaults = f.func.__defaults__ or ()
    default_map = dict(zip(params[len(params) - len(defaults):], defaults))
    if len(args) > len(params):
        raise _Mismatch(f"takes {len(params)} arguments, got {len(args)}")
    bound: dict = {}
    for p, a in zip(params, args):
        bound[p] = a
    for k, v in kwargs.items():
        if k not in params:
            raise _Mismatch(f"unexpected keyword argument '{k}'")
        if k in bound:
            raise _Mismatch(f"argument '{k}' given twice")
        bound[k] = v
    for p in params:
        if p not in bound:
            if p in default_map:
                bound[p] = Weak(default_map[p]) if isinstance(default_map[p], (bool, int, float)) else default_map[p]
            else:
                raise _Mismatch(f"missing argument '{p}'")
    ann = f.annotations
    out = {}
    for p in params:
        value = bound[p]
        if p not in ann:
            out[p] = value
            continue
        try:
            want = to_ir(ann[p])
        except TypeError:
            out[p] = value
            continue
        out[p] = _coerce_param(lw, p, value, want, node)
    return out


def _coerce_param(lw, pname, value, want: T.Type, node):
    if isinstance(value, tuple):
        raise _Mismatch(f"argument '{pname}' is a tuple")
    v = lw.as_operand_or_weak(value, node)
    if isinstance(v, Weak):
        if isinstance(want, T.GenericType):
            return v
        if isinstance(want, T.ScalarType) and v.fits(want):
            return lw.operand(v, node, want=want)
        raise _Mismatch(f"argument '{pname}' expects {want}, got literal {v.value!r}")
    if isinstance(want, T.GenericType):
        if not want.accepts(v.type):
            raise _Mismatch(f"argument '{pname}' expects {want}, got {v.type}")
        return v
    if isinstance(want, T.ArrayType) and isinstance(v.type, T.ArrayType):
        if want.ndim == v.type.ndim and (want.is_generic or want.dtype == v.type.dtype):
            return v
        raise _Mismatch(f"argument '{pname}' expects {want}, got {v.type}")
    if v.type != want:
        raise _Mismatch(f"argument '{pname}' expects {want}, got {v.type}")
    return v


# ---------------------------------------------------------------------- special forms
def _tid(lw, node):
    if node.args or node.keywords:
        raise lw.error("wp.tid() takes no arguments", node)
    n = _expected_outputs(lw, node)
    if n > 4:
        raise lw.error(f"wp.tid() is unpacked into {n} values; launch grids have at most 4 dimensions", node)
    if lw.tid_arity and lw.tid_arity != n:
        raise lw.error(f"wp.tid() is unpacked into {n} values here but {lw.tid_arity} elsewhere", node)
    lw.tid_arity = n
    outs = lw.op("tid", [], attrs=(n,), node=node, result_name="tid")
    return outs


def _expected_outputs(lw, call_node) -> int:
    """How many names the enclosing assignment unpacks this call into (1 if not unpacked)."""
    parent = lw.current_stmt_target(call_node)
    if isinstance(parent, (ast.Tuple, ast.List)):
        return len(parent.elts)
    return 1


def _static(lw, node):
    if len(node.args) != 1 or node.keywords:
        raise lw.error("wp.static() takes exactly one expression", node)
    value = lw.eval_static(node.args[0])
    if isinstance(value, (bool, int, float)):
        return Weak(value)
    if isinstance(value, np.generic):
        return Const(value.item(), to_ir(type(value)))
    return value


def _printf(lw, node):
    if not node.args:
        raise lw.error("wp.printf() needs a format string", node)
    fmt = lw.visit(node.args[0])
    if not isinstance(fmt, str):
        raise lw.error("the first argument of wp.printf() must be a string literal", node.args[0])
    vals = [lw.operand(lw.visit(a), a) for a in node.args[1:]]
    for v, a in zip(vals, node.args[1:]):
        if not isinstance(v.type, T.ScalarType):
            raise lw.error(f"wp.printf() prints scalars; got {v.type}", a, hint="use print(v) for vectors")
    lw.op("printf", vals, attrs=(fmt,), node=node)


def _print(lw, node):
    if node.keywords:
        raise lw.error("print() keyword arguments are not supported in kernels", node)
    parts = []
    vals = []
    for a in node.args:
        v = lw.visit(a)
        if isinstance(v, str):
            parts.append(("str", v))
            continue
        o = lw.operand(v, a)
        parts.append(("val", len(vals)))
        vals.append(o)
    lw.op("print", vals, attrs=(tuple(parts),), node=node)


def _expect(opname):
    def handler(lw, node):
        args = [lw.visit(a) for a in node.args]
        for kw in node.keywords:
            if opname != "expect_near" or kw.arg != "tolerance" or len(args) != 2:
                raise lw.error(f"wp.{opname}() got an unexpected keyword argument '{kw.arg}'", kw)
            args.append(lw.visit(kw.value))
        if len(args) not in (2, 3):
            raise lw.error(f"wp.{opname}() takes two values (and a tolerance for expect_near)", node)
        loc = lw.b.loc
        vals = [lw.as_operand_or_weak(a, node) for a in args]
        lw.op(opname, vals, attrs=(f"{loc.file}:{loc.line}",), node=node)
    return handler


def _local_zeros(lw, node):
    kwargs = {k.arg: k.value for k in node.keywords}
    shape_node = node.args[0] if node.args else kwargs.get("shape")
    dtype_node = node.args[1] if len(node.args) > 1 else kwargs.get("dtype")
    if shape_node is None or dtype_node is None:
        raise lw.error("wp.zeros() in a kernel needs shape= and dtype=", node)
    shape = lw.eval_static(shape_node)
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    dtype = to_ir(lw.eval_static(dtype_node))
    t = T.ArrayType(dtype, len(shape), T.ArrayKind.FIXED, shape)
    return lw.op("fixed_zeros", [], attrs=(t,), node=node)


def _where(lw, node):
    """wp.where(cond, value_if_true, value_if_false): both values are evaluated (it is a call), then one is chosen.
    Lowered like a conditional expression on the evaluated values, so it is differentiable through the branch and
    the C++ compiler turns it into a select."""
    if len(node.args) != 3 or node.keywords:
        raise lw.error("wp.where() takes three arguments: cond, value_if_true, value_if_false", node)
    cond = lw.condition(lw.visit(node.args[0]), node.args[0])
    vals = [lw.as_operand_or_weak(lw.visit(a), a) for a in node.args[1:]]
    strong = [v for v in vals if not isinstance(v, Weak)]
    want = strong[0].type if strong else lw.operand(vals[0], node.args[1]).type
    ops = [lw.operand(v, a, want=want) for v, a in zip(vals, node.args[1:])]
    for o, a in zip(ops, node.args[1:]):
        if o.type != want:
            raise lw.error(f"wp.where() needs two values of one type; got {ops[0].type} and {ops[1].type}", a)
    result = lw.b.new_var(want, "where", VarKind.MUTABLE)
    with lw.b.nested() as then:
        lw.b.assign(result, ops[0])
    with lw.b.nested() as orelse:
        lw.b.assign(result, ops[1])
    lw.b.emit(If(cond, then, orelse, lw.b.loc))
    return lw.op("copy", [result], node=node)


SPECIAL = {
    "tid": _tid,
    "where": _where,
    "static": _static,
    "printf": _printf,
    "print": _print,
    "expect_eq": _expect("expect_eq"),
    "expect_neq": _expect("expect_neq"),
    "expect_near": _expect("expect_near"),
    "fixed_zeros": _local_zeros,
}


# ---------------------------------------------------------------------- Python builtins
def _py_cast(t):
    def handler(lw, args, kwargs, node):
        return construct(lw, t, args, kwargs, node)
    return handler


def _py_op(name):
    def handler(lw, args, kwargs, node):
        if kwargs:
            raise lw.error(f"{name}() keyword arguments are not supported in kernels", node)
        if name in ("min", "max") and len(args) > 2:
            out = args[0]
            for a in args[1:]:
                out = lw.op(name, [out, a], node=node)
            return out
        return lw.op(name, args, node=node)
    return handler


def _py_len(lw, args, kwargs, node):
    (v,) = args
    if isinstance(v, (Var, Const)):
        if isinstance(v.type, T.ArrayType):
            return lw.op("array_shape", [v], attrs=(0,), node=node)
        if isinstance(v.type, T.VectorType):
            return Weak(v.type.length)
        if isinstance(v.type, T.MatrixType):
            return Weak(v.type.rows)
    if isinstance(v, tuple):
        return Weak(len(v))
    raise lw.error("len() needs an array, vector or matrix", node)


def _py_range(lw, args, kwargs, node):
    raise lw.error("range() can only be used as the iterable of a for loop", node)


def _py_round(lw, args, kwargs, node):
    return lw.op("round", args, node=node)


def _py_pow(lw, args, kwargs, node):
    return lw.op("pow", args, node=node)


def _plain(x):
    if isinstance(x, tuple):
        return tuple(_plain(e) for e in x)  # shape=(4, 4): a tuple of literals
    return x.value if isinstance(x, Weak) else x


def _scalar_of_args(lw, args, dtype, node) -> T.ScalarType:
    if dtype is not None:
        return to_ir(dtype)
    for a in args:
        if isinstance(a, (Var, Const)):
            return a.type.scalar if isinstance(a.type, (T.VectorType, T.MatrixType)) else a.type
    return T.FLOAT32


def _py_type(lw, args, kwargs, node):
    """``type(x)``: the value type of ``x`` as a constructor (``type(a)(0.5)`` converts to ``a``'s type)."""
    if len(args) != 1 or kwargs:
        raise lw.error("type() takes one argument in kernel code", node)
    v = lw.operand(args[0], node)
    return class_for(v.type)


def _vector_factory(lw, args, kwargs, node):
    """``wp.vector(x, y, ..., dtype=)`` or ``wp.vector(length=n, dtype=)`` (zeros) in kernel code."""
    kwargs = {k: _plain(v) for k, v in kwargs.items()}
    dtype, length = kwargs.pop("dtype", None), kwargs.pop("length", None)
    if kwargs:
        raise lw.error(f"wp.vector() takes no keyword argument {next(iter(kwargs))!r}", node)
    scalar = _scalar_of_args(lw, args, dtype, node)
    single = args[0] if len(args) == 1 and isinstance(args[0], (Var, Const)) else None
    if single is not None and isinstance(single.type, T.VectorType):
        n = single.type.length  # wp.vector(v, dtype=...): a copy or conversion
    elif length is not None:
        n = int(length)  # wp.vector(length=n) zeros, wp.vector(x, length=n) x broadcast
    else:
        n = len(args)
    if n == 0:
        raise lw.error("wp.vector() needs components or length=", node)
    return construct(lw, T.VectorType(n, scalar), args, {}, node)


def _flavored_factory(name: str, length: int, flavor):
    """``wp.quaternion(...)`` / ``wp.transformation(...)`` in kernel code: components, pieces (``quaternion(ijk,
    w)``, ``transformation(p, q)``) or nothing (zeros), the precision from ``dtype=`` or else the arguments."""
    def factory(lw, args, kwargs, node):
        kwargs = {k: _plain(v) for k, v in kwargs.items()}
        dtype = kwargs.pop("dtype", None)
        if kwargs:
            raise lw.error(f"wp.{name}() takes no keyword argument {next(iter(kwargs))!r}", node)
        if dtype is None and len(args) == 1 and isinstance(_plain(args[0]), type):
            dtype, args = _plain(args[0]), []
        t = T.VectorType(length, _scalar_of_args(lw, args, dtype, node), flavor)
        return construct(lw, t, args, {}, node)
    return factory


def _matrix_from_vectors(transpose: bool):
    """``wp.matrix_from_rows(v0, v1, ...)`` / ``wp.matrix_from_cols(...)`` in kernel code."""
    name = "matrix_from_cols" if transpose else "matrix_from_rows"

    def factory(lw, args, kwargs, node):
        vecs = [lw.operand(a, node) for a in args]
        if kwargs or not vecs or len({v.type for v in vecs}) != 1 or not isinstance(vecs[0].type, T.VectorType):
            raise lw.error(f"wp.{name}() takes one or more vectors of one type", node)
        vt = vecs[0].type
        if not transpose:
            return lw.op("construct", vecs, attrs=(T.MatrixType(len(vecs), vt.length, vt.scalar),), node=node)
        comps = [lw.op("extract", [vecs[c], Const(r, T.INT32)], node=node)
                 for r in range(vt.length) for c in range(len(vecs))]
        return lw.op("construct", comps, attrs=(T.MatrixType(vt.length, len(vecs), vt.scalar),), node=node)
    return factory


def _matrix_factory(lw, args, kwargs, node):
    """``wp.matrix(rows or components..., shape=(r, c), dtype=)`` in kernel code."""
    kwargs = {k: _plain(v) for k, v in kwargs.items()}
    dtype, shape = kwargs.pop("dtype", None), kwargs.pop("shape", None)
    if kwargs:
        raise lw.error(f"wp.matrix() takes no keyword argument {next(iter(kwargs))!r}", node)
    scalar = _scalar_of_args(lw, args, dtype, node)
    if shape is None:
        rows = [a for a in args if isinstance(a, (Var, Const)) and isinstance(a.type, T.VectorType)]
        if not rows or len(rows) != len(args):
            raise lw.error("wp.matrix() of scalar components needs shape=(rows, cols)", node)
        shape = (len(rows), rows[0].type.length)
    return construct(lw, T.MatrixType(int(shape[0]), int(shape[1]), scalar), args, {}, node)


_PY_BUILTINS = {
    builtins.type: _py_type,
    builtins.float: _py_cast(T.FLOAT32),
    builtins.int: _py_cast(T.INT32),
    builtins.bool: _py_cast(T.BOOL),
    builtins.abs: _py_op("abs"),
    builtins.min: _py_op("min"),
    builtins.max: _py_op("max"),
    builtins.len: _py_len,
    builtins.range: _py_range,
    builtins.round: _py_round,
    builtins.pow: _py_pow,
}


def _random(opname):
    def handler(lw, node):
        if node.keywords:
            raise lw.error(f"wp.{opname}() takes no keyword arguments", node)
        args = [lw.visit(a) for a in node.args]
        if not args:
            raise lw.error(f"wp.{opname}() needs the random state as first argument", node)
        new_state, value = lw.op(opname, args, node=node)
        if isinstance(node.args[0], ast.Name):
            lw.bind(node.args[0].id, new_state, node.args[0])  # the state advances, as in Warp
        return value
    return handler


def _out_params(opname, n_in, n_out):
    def handler(lw, node):
        if len(node.args) != n_in + n_out:
            raise lw.error(f"wp.{opname}() takes {n_in} input(s) and {n_out} output variable(s)", node)
        ins = [lw.visit(a) for a in node.args[:n_in]]
        outs = lw.op(opname, ins, node=node)
        for target, value in zip(node.args[n_in:], outs):
            if not isinstance(target, (ast.Name, ast.Attribute, ast.Subscript)):
                raise lw.error(f"output argument of wp.{opname}() must be a variable", target)
            lw.store(target, value)
    return handler


def _results_or_out_params(opname, n_in, n_out):
    """Warp's two forms: ``a, b = wp.f(x)`` (a tuple of results) or ``wp.f(x, a, b)`` (output variables)."""
    out_form = _out_params(opname, n_in, n_out)

    def handler(lw, node):
        if len(node.args) == n_in and not node.keywords:
            return tuple(lw.op(opname, [lw.visit(a) for a in node.args], node=node))
        return out_form(lw, node)
    return handler


def _transform_setter(part: str):
    """``wp.transform_set_translation(t, p)`` / ``_rotation(t, q)``: updates the variable ``t`` in place."""
    name = "transform_set_translation" if part == "p" else "transform_set_rotation"

    def handler(lw, node):
        if len(node.args) != 2 or node.keywords:
            raise lw.error(f"wp.{name}() takes a transform variable and a value", node)
        target = node.args[0]
        if not isinstance(target, (ast.Name, ast.Attribute, ast.Subscript)):
            raise lw.error(f"the first argument of wp.{name}() must be a variable", target)
        base = lw.operand(lw.visit(target), target)
        if not (isinstance(base.type, T.VectorType) and base.type.flavor is T.VecFlavor.TRANSFORM):
            raise lw.error(f"wp.{name}() takes a transform, got {base.type}", target)
        lw.store(target, lw.set_transform_part(base, part, lw.visit(node.args[1]), node))
    return handler


def _typed_identity(opname):
    def handler(lw, node):
        kwargs = {k.arg: k.value for k in node.keywords}
        args = list(node.args)
        if opname == "identity":
            n_node = args.pop(0) if args else kwargs.pop("n", None)
            if n_node is None:
                raise lw.error("wp.identity() needs n=", node)
            n = int(lw.eval_static(n_node))
        dtype_node = args.pop(0) if args else kwargs.pop("dtype", None)
        if args or kwargs:
            raise lw.error(f"unexpected arguments to wp.{opname}()", node)
        scalar = to_ir(lw.eval_static(dtype_node)) if dtype_node is not None else T.FLOAT32
        if opname == "identity":
            return lw.op("identity", [], attrs=(T.MatrixType(n, n, scalar),), node=node)
        return lw.op(opname, [], attrs=(scalar,), node=node)
    return handler


def _signature(opname):
    """A builtin with named parameters, declared types and trailing defaults (``weft.ops.noise.SIGNATURES``)."""
    params, types, defaults = SIGNATURES[opname]
    required = len(params) - len(defaults)

    def handler(lw, node):
        if len(node.args) > len(params):
            raise lw.error(f"wp.{opname}() takes at most {len(params)} arguments ({', '.join(params)})", node)
        values = dict(zip(params, node.args))
        for kw in node.keywords:
            if kw.arg not in params or kw.arg in values:
                raise lw.error(f"wp.{opname}() got an unexpected or repeated argument '{kw.arg}' "
                               f"(parameters: {', '.join(params)})", kw)
            values[kw.arg] = kw.value
        args = []
        for i, (p, want) in enumerate(zip(params, types)):
            if p in values:
                value = lw.as_operand_or_weak(lw.visit(values[p]), values[p])
            elif i >= required:
                value = Weak(defaults[i - required])
            else:
                raise lw.error(f"wp.{opname}() is missing argument '{p}'", node)
            if want is not None and isinstance(value, Weak):
                value = lw.operand(value, node, want=want)
            elif want is not None and isinstance(value.type, T.ScalarType) and value.type != want \
                    and value.type.is_int and want.is_int:
                value = lw.op("cast", [value], attrs=(want,), node=node)
            args.append(value)
        return lw.op(opname, args, node=node)
    return handler


SPECIAL.update(SPECIAL_NEXT)
SPECIAL.update({name: _signature(name) for name in SIGNATURES})
SPECIAL.update({
    **{name: _random(name) for name in STATEFUL},
    "svd3": _results_or_out_params("svd3", 1, 3),
    "quat_to_axis_angle": _results_or_out_params("quat_to_axis_angle", 1, 2),
    "qr3": _results_or_out_params("qr3", 1, 2),
    "eig3": _results_or_out_params("eig3", 1, 2),
    "polar_decomposition": _results_or_out_params("polar_decomposition", 1, 2),
    "identity": _typed_identity("identity"),
    "transform_set_translation": _transform_setter("p"),
    "transform_set_rotation": _transform_setter("q"),
    "quat_identity": _typed_identity("quat_identity"),
    "transform_identity": _typed_identity("transform_identity"),
})
