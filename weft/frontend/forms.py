"""The lowering rule of each call ``Form`` (``weft/ops/forms.py``): one rule per form, never one per builtin name.

``OP_RULES`` lowers registry builtins whose ``Op.syntax`` is not plain operands: ``rule(lw, node, name, syntax)``
(the name only names the op to emit and the builtin in messages). ``LANGUAGE_RULES`` lowers the language forms
(Python's builtins, ``print``, ``wp.static``, ``wp.where``, the vector and matrix factories):
``rule(lw, node, form)``. The tile forms register their rules from ``weft/frontend/tiles.py``; tests/test_op_facts.py
checks that every form has one.
"""

from __future__ import annotations

import ast
import types

import numpy as np

from ..errors import CompileError, warn
from ..ir import types as T
from ..ir.nodes import Const, If, Var, VarKind
from ..ops import registry
from ..ops.forms import Form, LanguageForm, Syntax
from ..types.composite import class_for
from ..types.mapping import to_ir, type_of_value
from ..typing.resolve import Weak
from . import components
from .construct import construct
from .grad_call import lower_grad_form


# ---------------------------------------------------------------------------------------------- op forms
def _tid(lw, node, name: str, syntax: Syntax):
    if node.args or node.keywords:
        raise lw.error(f"wp.{name}() takes no arguments", node)
    n = _expected_outputs(lw, node)
    if n > 4:
        raise lw.error(f"wp.{name}() is unpacked into {n} values; launch grids have at most 4 dimensions", node)
    if lw.tid_arity and lw.tid_arity != n:
        raise lw.error(f"wp.{name}() is unpacked into {n} values here but {lw.tid_arity} elsewhere", node)
    lw.tid_arity = n
    return lw.op(name, [], attrs=(n,), node=node, result_name="tid")


def _expected_outputs(lw, call_node) -> int:
    """How many names the enclosing assignment unpacks this call into (1 if not unpacked)."""
    parent = lw.current_stmt_target(call_node)
    if isinstance(parent, (ast.Tuple, ast.List)):
        return len(parent.elts)
    return 1


_PRINTF_MAX_ARGS = 32


def _printf(lw, node, name: str, syntax: Syntax):
    if not node.args:
        raise lw.error(f"wp.{name}() needs a format string", node)
    fmt = lw.visit(node.args[0])
    if not isinstance(fmt, str):
        raise lw.error(f"the first argument of wp.{name}() must be a string literal", node.args[0])
    if len(node.args) - 1 > _PRINTF_MAX_ARGS:  # Warp's limit (its CUDA printf), kept so programs stay portable
        raise lw.error(f"the maximum number of variadic arguments that can be passed to `{name}` is "
                       f"{_PRINTF_MAX_ARGS}", node.args[_PRINTF_MAX_ARGS + 1])
    vals = [lw.operand(lw.visit(a), a) for a in node.args[1:]]
    for v, a in zip(vals, node.args[1:]):
        if not isinstance(v.type, T.ScalarType):
            raise lw.error(f"wp.{name}() prints scalars; got {v.type}", a, hint="use print(v) for vectors")
    lw.op(name, vals, attrs=(fmt,), node=node)


def _expect(lw, node, name: str, syntax: Syntax):
    args = [lw.visit(a) for a in node.args]
    for kw in node.keywords:
        if kw.arg not in syntax.params[2:] or len(args) != 2:
            raise lw.error(f"wp.{name}() got an unexpected keyword argument '{kw.arg}'", kw)
        args.append(lw.visit(kw.value))
    if len(args) not in (2, 3):
        raise lw.error(f"wp.{name}() takes two values (and a tolerance for expect_near)", node)
    loc = lw.b.loc
    vals = [lw.as_operand_or_weak(a, node) for a in args]
    kinds = (T.VectorType, T.MatrixType)
    exact = len(syntax.params) == 2  # expect_eq / expect_neq (expect_near names a tolerance)
    if exact and all(isinstance(getattr(v, "type", None), kinds) for v in vals[:2]) \
            and vals[0].type != vals[1].type:  # Warp's message for two composites of different types
        raise lw.error("Can't test equality for objects with different types", node)
    lw.op(name, vals, attrs=(f"{loc.file}:{loc.line}",), node=node)


def _fixed_zeros(lw, node, name: str, syntax: Syntax):
    kwargs = {k.arg: k.value for k in node.keywords}
    shape_node = node.args[0] if node.args else kwargs.get("shape")
    dtype_node = node.args[1] if len(node.args) > 1 else kwargs.get("dtype")
    if shape_node is None or dtype_node is None:
        raise lw.error("wp.zeros() in a kernel needs shape= and dtype=", node)
    try:
        shape = lw.eval_static(shape_node)
    except CompileError:
        raise lw.error("wp.zeros() in a kernel makes a fixed-size local array: the `shape` argument must be specified "
                       "as a constant when zero-initializing an array", shape_node) from None
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    dtype = to_ir(lw.eval_static(dtype_node))
    t = T.ArrayType(dtype, len(shape), T.ArrayKind.FIXED, shape)
    return lw.op(name, [], attrs=(t,), node=node)


def _random_state(lw, node, name: str, syntax: Syntax):
    if node.keywords:
        raise lw.error(f"wp.{name}() takes no keyword arguments", node)
    args = [lw.visit(a) for a in node.args]
    if not args:
        raise lw.error(f"wp.{name}() needs the random state as first argument", node)
    new_state, value = lw.op(name, args, node=node)
    if isinstance(node.args[0], ast.Name):
        lw.bind(node.args[0].id, new_state, node.args[0])  # the state advances, as in Warp
    return value


def _results_or_outputs(lw, node, name: str, syntax: Syntax):
    """Warp's two forms: ``a, b = wp.f(x)`` (a tuple of results) or ``wp.f(x, a, b)`` (output variables)."""
    n_in = len(syntax.params)
    if len(node.args) == n_in and not node.keywords:
        return tuple(lw.op(name, [lw.visit(a) for a in node.args], node=node))
    if len(node.args) != n_in + syntax.outputs:
        raise lw.error(f"wp.{name}() takes {n_in} input(s) and {syntax.outputs} output variable(s)", node)
    outs = lw.op(name, [lw.visit(a) for a in node.args[:n_in]], node=node)
    for target, value in zip(node.args[n_in:], outs):
        if not isinstance(target, (ast.Name, ast.Attribute, ast.Subscript)):
            raise lw.error(f"output argument of wp.{name}() must be a variable", target)
        lw.store(target, value)


def _typed(lw, node, name: str, syntax: Syntax, sized: bool):
    kwargs = {k.arg: k.value for k in node.keywords}
    args = list(node.args)
    n = 0
    if sized:
        n_node = args.pop(0) if args else kwargs.pop("n", None)
        if n_node is None:
            raise lw.error(f"wp.{name}() needs n=", node)
        n = int(lw.eval_static(n_node))
    dtype_node = args.pop(0) if args else kwargs.pop("dtype", None)
    if args or kwargs:
        raise lw.error(f"unexpected arguments to wp.{name}()", node)
    scalar = to_ir(lw.eval_static(dtype_node)) if dtype_node is not None else T.FLOAT32
    return lw.op(name, [], attrs=(T.MatrixType(n, n, scalar) if sized else scalar,), node=node)


def _sized_identity(lw, node, name: str, syntax: Syntax):
    return _typed(lw, node, name, syntax, True)


def _typed_constant(lw, node, name: str, syntax: Syntax):
    return _typed(lw, node, name, syntax, False)


def bind_keywords(lw, node: ast.Call, name: str, syntax: Syntax) -> list:
    """The arguments of a builtin with named parameters: positional and keyword arguments, trailing defaults filled,
    literals given the declared parameter types, integers converted to a declared integer type."""
    params, defaults = syntax.params, syntax.defaults
    required = len(params) - len(defaults)
    if len(node.args) > len(params):
        raise lw.error(f"wp.{name}() takes at most {len(params)} arguments ({', '.join(params)}), "
                       f"got {len(node.args)}", node)
    values: dict = {p: lw.visit(a) for p, a in zip(params, node.args)}
    for kw in node.keywords:
        if kw.arg not in params:
            raise lw.error(f"wp.{name}() has no parameter '{kw.arg}' (parameters: {', '.join(params)})", kw)
        if kw.arg in values:
            raise lw.error(f"wp.{name}() got argument '{kw.arg}' twice", kw)
        values[kw.arg] = lw.visit(kw.value)
    for i, p in enumerate(params):
        if p not in values:
            if i < required:
                raise lw.error(f"wp.{name}() is missing argument '{p}'", node)
            values[p] = Weak(defaults[i - required])
    return typed_operands(lw, syntax, [values[p] for p in params], node)


def typed_operands(lw, syntax: Syntax, values: list, node) -> list:
    """Literals take the declared parameter types; integers are converted to a declared integer type."""
    out = []
    for i, v in enumerate(values):
        want = syntax.types[i] if i < len(syntax.types) else None
        o = lw.as_operand_or_weak(v, node)
        if want is not None and isinstance(o, Weak):
            o = lw.operand(o, node, want=want)
        elif want is not None and isinstance(o.type, T.ScalarType) and o.type != want and o.type.is_int \
                and isinstance(want, T.ScalarType) and want.is_int:
            o = lw.op("cast", [o], attrs=(want,), node=node)
        out.append(o)
    return out


def _keywords(lw, node, name: str, syntax: Syntax):
    return lw.op(name, bind_keywords(lw, node, name, syntax), node=node)


# ---------------------------------------------------------------------------------------------- geometry queries
_INF = [Const(float("inf"), T.FLOAT32)]


def _lower_next(lw, node: ast.Call, name: str, syntax: Syntax):
    """``wp.<query>_next(query, index[, max_dist])``: advances both variables, returns whether an item was found."""
    n_extra = len(syntax.types) - 2  # bvh_query_next(query, index, max_dist=inf)
    if len(node.args) not in range(2, 3 + n_extra) or any(k.arg != "max_dist" or not n_extra
                                                           for k in node.keywords):
        raise lw.error(f"wp.{name}() takes the query and an index variable"
                       + (" (and max_dist)" if n_extra else ""), node)
    query_node, index_node = node.args[0], node.args[1]
    for arg, what in ((query_node, "query"), (index_node, "index")):
        if not isinstance(arg, (ast.Name, ast.Attribute, ast.Subscript)):
            raise lw.error(f"the {what} argument of wp.{name}() must be a variable (it is updated in place)",
                           arg, hint="e.g. index = int(0) before the loop")
    query = lw.visit(query_node)
    index = lw.operand(lw.visit(index_node), index_node, want=T.INT32)
    extra = [lw.visit(a) for a in node.args[2:]] + [lw.visit(k.value) for k in node.keywords]
    extra = typed_operands(lw, syntax, [query, index, *extra], node)[2:] + _INF[len(extra):n_extra]
    ok, new_query, new_index = lw.op(name, [query, index, *extra], node=node)
    lw.store(query_node, new_query)
    lw.store(index_node, new_index)
    return ok


def _lower_struct_query(lw, node: ast.Call, name: str, syntax: Syntax):
    """A query whose results are packed into ``syntax.struct``, or written to variables in Warp's older form (which
    returns whether something was found)."""
    fields = [f for f, _ in syntax.struct.fields]
    params, defaults, legacy = syntax.params, syntax.defaults, syntax.legacy
    required = len(params) - len(defaults)
    outs_nodes = node.args[required:required + len(legacy)]
    trailing = node.args[required + len(legacy):]  # Warp's older form puts optional inputs (root) last
    if (not node.keywords and legacy and len(params) < len(node.args) <= required + len(legacy) + len(defaults)
            and all(isinstance(a, (ast.Name, ast.Attribute, ast.Subscript)) for a in outs_nodes)):
        ins = ([lw.visit(a) for a in node.args[:required]] + [lw.visit(a) for a in trailing]
               + [Weak(d) for d in defaults[len(trailing):]])
        outs = dict(zip(fields, lw.op(name, typed_operands(lw, syntax, ins, node), node=node)))
        for target, field_name in zip(outs_nodes, legacy):
            lw.store(target, outs[field_name])
        return outs["result"]
    outs = lw.op(name, bind_keywords(lw, node, name, syntax), node=node)
    result = lw.op("construct", [], attrs=(syntax.struct,), node=node)
    for field_name, value in zip(fields, outs):
        result = lw.op("setfield", [result, value], attrs=(field_name,), node=node)
    return result


def _typed_outputs(lw, node: ast.Call, name: str, syntax: Syntax):
    """Named parameters; ``dtype`` (when declared) is evaluated at compile time and passed as the op's attribute;
    the output variables at ``syntax.updates`` take the op's results after the first, which the call returns."""
    params = syntax.params
    if len(node.args) > len(params):
        raise lw.error(f"wp.{name}() takes at most {len(params)} arguments ({', '.join(params)}), "
                       f"got {len(node.args)}", node)
    given = dict(zip(params, node.args))
    for kw in node.keywords:
        if kw.arg not in params:
            raise lw.error(f"wp.{name}() has no parameter '{kw.arg}' (parameters: {', '.join(params)})", kw)
        if kw.arg in given:
            raise lw.error(f"wp.{name}() got argument '{kw.arg}' twice", kw)
        given[kw.arg] = kw.value
    for p, default in zip(params[len(params) - len(syntax.defaults):], syntax.defaults):  # trailing defaults
        given.setdefault(p, ast.copy_location(ast.Constant(default), node))
    missing = [p for p in params if p not in given]
    if missing:
        raise lw.error(f"wp.{name}() is missing argument '{missing[0]}'", node)
    attrs = ()
    if "dtype" in params:
        dtype_node = given["dtype"]
        try:
            attrs = (to_ir(lw.eval_static(dtype_node)),)
        except TypeError as exc:
            raise lw.error(f"wp.{name}(): dtype: {exc}", dtype_node) from None
    operand_params = [p for p in params if p != "dtype"]
    for pos in syntax.updates:
        target = given[operand_params[pos]]
        if not isinstance(target, (ast.Name, ast.Attribute, ast.Subscript)):
            raise lw.error(f"the {operand_params[pos]} argument of wp.{name}() must be a variable (it is written)",
                           target)
    values = typed_operands(lw, syntax, [lw.visit(given[p]) for p in operand_params], node)
    try:
        outs = lw.op(name, values, attrs=attrs, node=node)
    except CompileError:  # the operands are lowered: only the overload resolution is left to fail
        sig = ", ".join(f"{p}: {getattr(v, 'type', 'literal')}" for p, v in zip(operand_params, values))
        doc = registry.overloads(name)[0].doc if registry.overloads(name) else ""
        types = tuple(v.default_type if isinstance(v, Weak) else getattr(v, "type", None) for v in values)
        why = registry.explain(name, types, attrs) if None not in types else None
        if why:  # an overload's rule said why it refuses these arguments (ops.registry.Rejected)
            raise lw.error(f"wp.{name}(): {why}", node, hint=doc) from None
        raise lw.error(f"no overload of wp.{name}() accepts ({sig})" + (f" with dtype={attrs[0]}" if attrs else ""),
                       node, hint=doc) from None
    if not syntax.updates:
        return outs
    for pos, value in zip(syntax.updates, outs[1:]):
        lw.store(given[operand_params[pos]], value)
    return outs[0]


#: Form -> rule(lw, node, name, syntax) for registry builtins (the tile forms are added by frontend/tiles.py)
OP_RULES = {
    Form.TID: _tid,
    Form.PRINTF: _printf,
    Form.EXPECT: _expect,
    Form.FIXED_ZEROS: _fixed_zeros,
    Form.RANDOM_STATE: _random_state,
    Form.RESULTS_OR_OUTPUTS: _results_or_outputs,
    Form.SIZED_IDENTITY: _sized_identity,
    Form.TYPED_CONSTANT: _typed_constant,
    Form.KEYWORDS: _keywords,
    Form.QUERY_NEXT: _lower_next,
    Form.STRUCT_QUERY: _lower_struct_query,
    Form.TYPED_OUTPUTS: _typed_outputs,
}


# ---------------------------------------------------------------------------------------------- language forms
def _static(lw, node, form: LanguageForm):
    if len(node.args) != 1 or node.keywords:
        raise lw.error(f"wp.{form.name}() takes exactly one expression", node)
    return static_result(lw.eval_static(node.args[0]), lw, node)


def _unsupported_static(value) -> str | None:
    """Why a wp.static() value cannot be used in kernel code (Warp's wording), or None."""
    if value is None:
        return "None is returned"
    if isinstance(value, (bool, int, float, str, tuple, type, np.generic, types.ModuleType)) or callable(value):
        return None
    try:
        t = type_of_value(value)
    except TypeError:
        module = type(value).__module__.split(".")[0]
        return None if module in ("weft", "numpy", "builtins", "enum") else f"value of type {type(value)}"
    if isinstance(t, T.ArrayType):
        return "a Warp array cannot be created inside Warp kernels"
    if isinstance(t, T.StructType):
        path = _array_field(t, t.name)
        if path:
            return ("the returned Warp struct contains a data type that cannot be constructed inside Warp kernels: a "
                    f"Warp array cannot be created inside Warp kernels at {path}")
    return None


def _array_field(t: T.StructType, path: str) -> str | None:
    for name, ft in t.fields:
        if isinstance(ft, T.ArrayType):
            return f"{path}.{name}"
        if isinstance(ft, T.StructType):
            found = _array_field(ft, f"{path}.{name}")
            if found:
                return found
    return None


def static_result(value, lw=None, node=None):
    """A wp.static() expression's Python value as kernel code sees it (checked when ``lw`` is given)."""
    why = _unsupported_static(value) if lw is not None else None
    if why is not None:
        raise lw.error(f"Static expression returns an unsupported value: {why}", node)
    if isinstance(value, (bool, int, float)):
        return Weak(value)
    if isinstance(value, np.generic):
        return Const(value.item(), to_ir(type(value)))
    return value


def _print(lw, node, form: LanguageForm):
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
    if any(isinstance(v.type, T.TileType) for v in vals):
        if len(parts) != 1:
            raise lw.error("print() of a tile takes the tile alone", node, hint="print(t)")
        from .tiles import tile_storage

        lw.op("tile_print", vals, attrs=(tile_storage(lw, vals[0]),), node=node)
        return
    lw.op("print", vals, attrs=(tuple(parts),), node=node)


def _unot(lw, node, form: LanguageForm):
    """``wp.unot(a)``: logical not of a scalar (True for zero)."""
    if len(node.args) != 1 or node.keywords:
        raise lw.error(f"wp.{form.name}() takes one value", node)
    return lw.op("logical_not", [lw.condition(lw.visit(node.args[0]), node.args[0])], node=node)


def _where(lw, node, form: LanguageForm):
    """wp.where(cond, value_if_true, value_if_false): both values are evaluated (it is a call), then one is chosen.
    Lowered like a conditional expression on the evaluated values, so it is differentiable through the branch and
    the C++ compiler turns it into a select. A form declared with ``arg="false_first"`` is Warp's deprecated
    ``wp.select(cond, value_if_false, value_if_true)``: the values are evaluated in source order, then swapped."""
    false_first = form.arg == "false_first"
    order = "value_if_false, value_if_true" if false_first else "value_if_true, value_if_false"
    if len(node.args) != 3 or node.keywords:
        raise lw.error(f"wp.{form.name}() takes three arguments: cond, {order}", node)
    if false_first:
        warn(f"wp.{form.name}() is deprecated (Warp 1.7; removed in Warp 1.10): use wp.where(cond, value_if_true, "
             "value_if_false), which has the values the other way round", DeprecationWarning, stacklevel=2)
        lw.deps.fail()  # a lowering that warns is not reused by later processes: each one warns again
    cond = lw.condition(lw.visit(node.args[0]), node.args[0])
    value_nodes = list(node.args[1:])
    vals = [lw.as_operand_or_weak(lw.visit(a), a) for a in value_nodes]
    if false_first:  # evaluated in source order, then put in where's order
        vals.reverse()
        value_nodes.reverse()
    strong = [v for v in vals if not isinstance(v, Weak)]
    want = strong[0].type if strong else lw.operand(vals[0], value_nodes[0]).type
    ops = [lw.operand(v, a, want=want) for v, a in zip(vals, value_nodes)]
    for o, a in zip(ops, value_nodes):
        if o.type != want:
            raise lw.error(f"wp.{form.name}() needs two values of one type; got {ops[0].type} and {ops[1].type}", a)
    result = lw.b.new_var(want, "where", VarKind.MUTABLE)
    with lw.b.nested() as then:
        lw.b.assign(result, ops[0])
    with lw.b.nested() as orelse:
        lw.b.assign(result, ops[1])
    lw.b.emit(If(cond, then, orelse, lw.b.loc))
    return lw.op("copy", [result], node=node)


def _transform_set(lw, node, form: LanguageForm):
    """``wp.transform_set_translation(t, p)`` / ``_rotation(t, q)``: updates the variable ``t`` in place."""
    if len(node.args) != 2 or node.keywords:
        raise lw.error(f"wp.{form.name}() takes a transform variable and a value", node)
    target = node.args[0]
    if not isinstance(target, (ast.Name, ast.Attribute, ast.Subscript)):
        raise lw.error(f"the first argument of wp.{form.name}() must be a variable", target)
    base = lw.operand(lw.visit(target), target)
    if not (isinstance(base.type, T.VectorType) and base.type.flavor is T.VecFlavor.TRANSFORM):
        raise lw.error(f"wp.{form.name}() takes a transform, got {base.type}", target)
    lw.store(target, components.set_transform_part(lw, base, form.arg, lw.visit(node.args[1]), node))


def _arguments(lw, node) -> tuple[list, dict]:
    return [lw.visit(a) for a in node.args], {k.arg: lw.visit(k.value) for k in node.keywords}


def _cast(lw, node, form: LanguageForm):
    args, kwargs = _arguments(lw, node)
    return construct(lw, form.arg, args, kwargs, node)


def _py_op(lw, node, form: LanguageForm):
    args, kwargs = _arguments(lw, node)
    if kwargs:
        raise lw.error(f"{form.name}() keyword arguments are not supported in kernels", node)
    return lw.op(form.arg, args, node=node)


def _fold(lw, node, form: LanguageForm):
    """``min(a, b, c)``: the binary op applied left to right."""
    args, kwargs = _arguments(lw, node)
    if kwargs:
        raise lw.error(f"{form.name}() keyword arguments are not supported in kernels", node)
    if len(args) <= 2:
        return lw.op(form.arg, args, node=node)
    out = args[0]
    for a in args[1:]:
        out = lw.op(form.arg, [out, a], node=node)
    return out


def _len(lw, node, form: LanguageForm):
    args, _ = _arguments(lw, node)
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


def _range(lw, node, form: LanguageForm):
    _arguments(lw, node)
    raise lw.error("range() can only be used as the iterable of a for loop", node)


def _type(lw, node, form: LanguageForm):
    """``type(x)``: the value type of ``x`` as a constructor (``type(a)(0.5)`` converts to ``a``'s type)."""
    args, kwargs = _arguments(lw, node)
    if len(args) != 1 or kwargs:
        raise lw.error("type() takes one argument in kernel code", node)
    v = lw.operand(args[0], node)
    if isinstance(v.type, T.ArrayType):
        from .lower import _StaticArrayFacts

        return _StaticArrayFacts(v.type)  # type(a).dtype, type(a).ndim: compile-time facts, as in Warp
    return class_for(v.type)


def _bit_cast(lw, node, form: LanguageForm):
    """``wp.cast(a, dtype)``: the bytes of ``a`` reinterpreted as ``dtype`` (a compile-time type of the same size)."""
    given = dict(zip(("a", "dtype"), node.args))
    for kw in node.keywords:
        if kw.arg not in ("a", "dtype") or kw.arg in given:
            raise lw.error(f"wp.cast() takes the arguments a and dtype, got '{kw.arg}'", kw)
        given[kw.arg] = kw.value
    if len(node.args) > 2 or set(given) != {"a", "dtype"}:
        raise lw.error("wp.cast() takes two arguments: wp.cast(a, dtype)", node)
    try:
        target = to_ir(lw.eval_static(given["dtype"]))
    except TypeError as exc:
        raise lw.error(f"wp.cast(): dtype: {exc}", given["dtype"]) from None
    v = lw.operand(lw.visit(given["a"]), node)
    if registry.resolve("bit_cast", (v.type,), (target,)) is None:
        raise lw.error(f"wp.cast() cannot reinterpret a {v.type} as {target}: both must be value types of the same "
                       "size in bytes", node)
    return lw.op("bit_cast", [v], attrs=(target,), node=node)


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
    if args and all(isinstance(a, Weak) and isinstance(a.value, bool) for a in args):
        return T.BOOL  # wp.vector(True, False, ...): a boolean vector, as in Warp
    return T.FLOAT32


def _vector(lw, node, form: LanguageForm):
    """``wp.vector(x, y, ..., dtype=)`` or ``wp.vector(length=n, dtype=)`` (zeros) in kernel code."""
    args, kwargs = _arguments(lw, node)
    kwargs = {k: _plain(v) for k, v in kwargs.items()}
    dtype, length = kwargs.pop("dtype", None), kwargs.pop("length", None)
    if kwargs:
        raise lw.error(f"wp.vector() takes no keyword argument {next(iter(kwargs))!r}", node)
    if dtype is None and len(args) > 1:  # the element type comes from the values: they must agree (as in Warp)
        kinds = {type(a.value) for a in args if isinstance(a, Weak)}
        typed = {a.type for a in args if isinstance(a, (Var, Const))}
        if len(kinds) > 1 or len(typed) > 1:
            raise lw.error("wp.vector() without dtype=: all values given when constructing a vector must have the "
                           "same type", node)
    scalar = _scalar_of_args(lw, args, dtype, node)
    single = args[0] if len(args) == 1 and isinstance(args[0], (Var, Const)) else None
    if single is not None and isinstance(single.type, T.VectorType):
        n = single.type.length  # wp.vector(v, dtype=...): a copy or conversion
        if length is not None and int(length) != n:  # (Warp's wording names the requested length first)
            raise lw.error(f"wp.vector(length={int(length)}) cannot copy a {single.type}: incompatible vector of "
                           f"length {int(length)} given when copy constructing a vector of length {n}", node)
    elif length is not None:
        n = int(length)  # wp.vector(length=n) zeros, wp.vector(x, length=n) x broadcast
    else:
        n = len(args)
    if n == 0:
        raise lw.error("wp.vector() needs components or length=: the `length` argument must be specified when "
                       "zero-initializing a vector", node)
    return construct(lw, T.VectorType(n, scalar), args, {}, node)


def _flavored_vector(lw, node, form: LanguageForm):
    """``wp.quaternion(...)`` / ``wp.transformation(...)`` in kernel code: components, pieces (``quaternion(ijk,
    w)``, ``transformation(p, q)``) or nothing (zeros), the precision from ``dtype=`` or else the arguments."""
    args, kwargs = _arguments(lw, node)
    length, flavor = form.arg
    kwargs = {k: _plain(v) for k, v in kwargs.items()}
    dtype = kwargs.pop("dtype", None)
    # wp.transformation(p=..., q=...): the parts by name, as the host constructor takes them
    parts = {k: v for k, v in kwargs.items() if k in ("p", "q")} if flavor is T.VecFlavor.TRANSFORM else {}
    kwargs = {k: v for k, v in kwargs.items() if k not in parts}
    if kwargs:
        raise lw.error(f"wp.{form.name}() takes no keyword argument {next(iter(kwargs))!r}", node)
    if dtype is None and len(args) == 1 and isinstance(_plain(args[0]), type):
        dtype, args = _plain(args[0]), []
    t = T.VectorType(length, _scalar_of_args(lw, [*args, *parts.values()], dtype, node), flavor)
    return construct(lw, t, args, parts, node)


def _matrix_from_vectors(lw, node, form: LanguageForm):
    """``wp.matrix_from_rows(v0, v1, ...)`` / ``wp.matrix_from_cols(...)`` in kernel code."""
    args, kwargs = _arguments(lw, node)
    vecs = [lw.operand(a, node) for a in args]
    if kwargs or not vecs or len({v.type for v in vecs}) != 1 or not isinstance(vecs[0].type, T.VectorType):
        raise lw.error(f"wp.{form.name}() takes one or more vectors of one type", node)
    vt = vecs[0].type
    if not form.arg:
        return lw.op("construct", vecs, attrs=(T.MatrixType(len(vecs), vt.length, vt.scalar),), node=node)
    comps = [lw.op("extract", [vecs[c], Const(r, T.INT32)], node=node)
             for r in range(vt.length) for c in range(len(vecs))]
    return lw.op("construct", comps, attrs=(T.MatrixType(vt.length, len(vecs), vt.scalar),), node=node)


def _matrix(lw, node, form: LanguageForm):
    """``wp.matrix(rows or components..., shape=(r, c), dtype=)`` in kernel code."""
    args, kwargs = _arguments(lw, node)
    kwargs = {k: _plain(v) for k, v in kwargs.items()}
    dtype, shape = kwargs.pop("dtype", None), kwargs.pop("shape", None)
    if kwargs:
        raise lw.error(f"wp.matrix() takes no keyword argument {next(iter(kwargs))!r}", node)
    scalar = _scalar_of_args(lw, args, dtype, node)
    if shape is None:
        rows = [a for a in args if isinstance(a, (Var, Const)) and isinstance(a.type, T.VectorType)]
        if not rows or len(rows) != len(args):
            raise lw.error("wp.matrix() of scalar components needs shape=(rows, cols): the `shape` argument must be "
                           "specified when initializing a matrix by value", node)
        shape = (len(rows), rows[0].type.length)
    return construct(lw, T.MatrixType(int(shape[0]), int(shape[1]), scalar), args, {}, node)


def _array_at(lw, node, form: LanguageForm):
    """``wp.array(ptr=p, shape=(n, m), dtype=T)`` in kernel code: a contiguous array over the memory at address
    ``p`` (a uint64 value, e.g. ``a.ptr`` or a kernel argument); the extents may be run-time values, ``dtype`` is a
    compile-time type. The array has no gradient."""
    if node.args:
        raise lw.error("wp.array() in kernel code takes keyword arguments only: wp.array(ptr=, shape=, dtype=)", node)
    kwargs = {k.arg: k.value for k in node.keywords}
    unknown = sorted(set(kwargs) - {"ptr", "shape", "dtype"})
    if unknown:
        raise lw.error(f"wp.array() in kernel code does not take {', '.join(unknown)}: only ptr=, shape= and dtype=",
                       node)
    missing = [k for k in ("ptr", "shape", "dtype") if k not in kwargs]
    if missing:
        raise lw.error(f"wp.array() in kernel code needs {', '.join(k + '=' for k in missing)}", node)
    ptr = lw.operand(lw.visit(kwargs["ptr"]), kwargs["ptr"], want=T.UINT64)
    if not (isinstance(ptr.type, T.ScalarType) and ptr.type.is_int):
        raise lw.error(f"wp.array(ptr=...) needs an integer address (uint64), got {ptr.type}", kwargs["ptr"])
    if ptr.type != T.UINT64:
        ptr = lw.op("cast", [ptr], attrs=(T.UINT64,), node=node)
    shape = lw.visit(kwargs["shape"])
    extents = list(shape) if isinstance(shape, tuple) else [shape]
    if not 1 <= len(extents) <= 4:
        raise lw.error(f"wp.array(shape=...) needs 1 to 4 extents, got {len(extents)}", kwargs["shape"])
    sizes = []
    for e in extents:
        v = lw.operand(e, kwargs["shape"], want=T.INT32)
        if not (isinstance(v.type, T.ScalarType) and v.type.is_int):
            raise lw.error(f"wp.array(shape=...) extents must be integers, got {v.type}", kwargs["shape"])
        sizes.append(v if v.type == T.INT32 else lw.op("cast", [v], attrs=(T.INT32,), node=node))
    dtype = to_ir(lw.eval_static(kwargs["dtype"]))
    return lw.op("array_at", [ptr, *sizes], attrs=(T.ArrayType(dtype, len(sizes)),), node=node)


#: Form -> rule(lw, node, form) for the language forms
LANGUAGE_RULES = {
    Form.STATIC: _static,
    Form.GRAD: lower_grad_form,
    Form.WHERE: _where,
    Form.UNOT: _unot,
    Form.PRINT: _print,
    Form.TRANSFORM_SET: _transform_set,
    Form.CAST: _cast,
    Form.PY_OP: _py_op,
    Form.FOLD: _fold,
    Form.LEN: _len,
    Form.RANGE: _range,
    Form.TYPE: _type,
    Form.BIT_CAST: _bit_cast,
    Form.VECTOR: _vector,
    Form.MATRIX: _matrix,
    Form.FLAVORED_VECTOR: _flavored_vector,
    Form.MATRIX_FROM_VECTORS: _matrix_from_vectors,
    Form.ARRAY_AT: _array_at,
}
