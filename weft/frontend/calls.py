"""Calls in kernel code: registry builtins, language forms (tid, static, print, casts, factories ...), constructors,
funcs. How each callable is lowered is a fact on its record (``weft/ops/forms.py``): the ``Op.syntax`` of a builtin or
the ``LanguageForm`` a Python object is declared as; ``weft/frontend/forms.py`` holds one rule per form."""

from __future__ import annotations

import ast
import typing

from .. import config
from ..errors import CompileError, KernelValueError, TypeError_
from ..ir import types as T
from ..ir.nodes import Const, Var, VarKind
from ..ops import registry
from ..ops.forms import Form, declared, language_form
from ..ops.param_names import PARAM_NAMES
from ..types.aliases import NAMED_TYPES
from ..types.mapping import to_ir
from ..types.reference import Reference
from ..types.scalars import BY_NAME
from ..typing.resolve import Weak
from . import statics
from .analysis import binding_analysis, only_tail_return
from .construct import construct
from .forms import LANGUAGE_RULES, OP_RULES, static_result
from .func import Func
from .grad_call import GradWrapper, lower_grad_call
from .native import NativeFunc, is_address_of, lower_native_call

#: builtins whose call needs their own call site (a format literal, the launch index): not wp.Function arguments
_NOT_FUNCTION_TARGETS = frozenset(("printf", "print", "tid"))


def lower_call(lw, node: ast.Call):
    fn = lw.frame.src.func
    declared = statics.lookup(fn, node)
    if declared is not statics.MISSING:  # a wp.static() evaluated when the function was declared
        lw.deps.add(fn, "declared", statics.key_of(node), declared)
        return static_result(declared, lw, node)
    callee = _callee(lw, node.func)
    if any(k.arg is None for k in node.keywords):
        raise lw.error("**-arguments are not supported in kernel calls",
                       next(k for k in node.keywords if k.arg is None), hint="pass the arguments by name")
    if any(isinstance(a, ast.Starred) for a in node.args):
        node = expand_starred(lw, node)
    if isinstance(callee, GradWrapper):
        return lower_grad_call(lw, callee, node)
    form = language_form(callee)
    if form is not None:
        return LANGUAGE_RULES[form.form](lw, node, form)
    name = getattr(callee, "_wp_kernel_builtin_", None)
    if name is not None:
        syntax = registry.syntax(name)
        if syntax.form is not Form.OPERANDS:
            if name in _NOT_FUNCTION_TARGETS and isinstance(node.func, ast.Name) and node.func.id in lw.frame.env:
                # a format-string or thread-index builtin bound to a wp.Function parameter
                raise lw.error(f"unsupported built-in function '{name}' as a wp.Function argument: it needs special "
                               "handling at its call site", node, hint=f"call wp.{name}() directly")
            return OP_RULES[syntax.form](lw, node, name, syntax)
    if is_address_of(callee):
        _address_target(lw, node)
        raise lw.error("weft supports wp.address_of(x) as an argument of a wp.func_native function only", node,
                       hint="pass x to the native function as a wp.ref[T] parameter instead")
    args, addressed = [], {}
    for i, a in enumerate(node.args):
        if isinstance(callee, NativeFunc) and isinstance(a, ast.Call) and is_address_of(lw.eval_static_or_none(a.func)):
            addressed[i] = _address_target(lw, a)
            args.append(Const(0, T.UINT64))  # the uint64 parameter's placeholder while binding
        else:
            args.append(lw.visit(a))
    kwargs = {k.arg: lw.visit(k.value) for k in node.keywords}
    if isinstance(callee, Func):
        return inline(lw, callee, args, kwargs, node, addressed)
    if name is not None:
        return _builtin(lw, name, args, kwargs, node)
    ir = getattr(callee, "_ir_", None) if isinstance(callee, type) else None
    if ir is not None:
        return construct(lw, ir, args, kwargs, node)
    if isinstance(callee, (Var, Const)):
        raise lw.error(f"a {callee.type} value is not callable", node)
    if getattr(callee, "_wp_is_kernel_", False):
        raise lw.error("kernels cannot be called from kernel code", node, hint="turn the callee into a @wp.func")
    raise lw.error(f"cannot call {_name_of(callee)} from kernel code", node,
                   hint="kernels can call weft builtins, @wp.func functions and type constructors")


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
        return lw.attribute(base, func_node.attr, func_node, call=True)
    return lw.visit(func_node)


def bare_builtin(name: str):
    """A kernel builtin or value type called without the ``wp.`` prefix (``dot(a, b)``, ``vec3(...)``), as Warp
    allows when no local, global or Python builtin has that name; None if weft has no such builtin."""
    obj = declared(name)  # a language form: wp.where, wp.static, wp.vector ...
    if obj is not None:
        return obj
    if any(op.public or op.syntax.form is not Form.OPERANDS for op in registry.overloads(name)):
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
    if kwargs:
        return _builtin_by_keyword(lw, name, args, kwargs, node)
    return lw.op(name, args, node=node)


def _builtin_by_keyword(lw, name: str, args, kwargs, node):
    """``wp.pow(x, y=2.0)``: keyword arguments placed by the builtin's parameter names (Warp's, one list per distinct
    signature: the first list they fit whose overload accepts the arguments)."""
    fits = []
    for params in PARAM_NAMES.get(name, ()):
        rest = params[len(args):]
        if set(kwargs) <= set(rest) and set(rest[:len(kwargs)]) == set(kwargs):
            fits.append([*args, *(kwargs[p] for p in rest[:len(kwargs)])])
    if not fits:
        known = " or ".join(f"({', '.join(p)})" for p in PARAM_NAMES.get(name, ())) or "none"
        raise lw.error(f"wp.{name}() got keyword arguments {', '.join(kwargs)} that do not match its parameters "
                       f"(parameters: {known})", node)
    for bound in fits[:-1]:
        try:
            return lw.op(name, bound, node=node)
        except CompileError:
            continue
    return lw.op(name, fits[-1], node=node)

# ---------------------------------------------------------------------- funcs
def _address_target(lw, call: ast.Call) -> ast.AST:
    """The storage ``wp.address_of(x)`` names (the AST of ``x``); raises for temporaries and Python literals."""
    if len(call.args) != 1 or call.keywords:
        raise lw.error("wp.address_of() takes one argument", call)
    target = call.args[0]
    root = target
    while isinstance(root, (ast.Subscript, ast.Attribute)):
        root = root.value
    if not isinstance(root, ast.Name):
        raise lw.error("wp.address_of() needs a variable, an array element, a struct field or a component, not a "
                       "temporary value", target)
    current = lw.frame.env.get(root.id)
    if root is target and isinstance(current, Weak):
        raise lw.error(f"wp.address_of({root.id}): '{root.id}' is a compile-time constant; give it storage of a "
                       f"fixed type: {root.id} = wp.{current.default_type}({current.value!r})", target)
    return target


def inline(lw, func: Func, args, kwargs, node, addressed: dict | None = None):
    chosen, bound = _select_overload(lw, func, args, kwargs, node)
    refs = _ref_arguments(lw, chosen, node)
    if isinstance(chosen, NativeFunc):
        params = list(bound)
        places = {params[i]: target for i, target in (addressed or {}).items()}
        values = {p: lw.operand(lw.visit(t), t) for p, t in places.items()}
        result, finals = lower_native_call(lw, chosen, bound, node, values)
        refs = {**refs, **places}
    elif chosen.custom_lowering is not None and not lw.in_custom_body:
        # a custom gradient or replay is attached (autodiff.custom); inside a gradient or replay func's body the
        # call only computes the forward (as in Warp: the gradient func may call the function it differentiates)
        return chosen.custom_lowering(lw, chosen, bound, node)
    else:
        if refs and lw.options.get("enable_backward", config.enable_backward):
            raise lw.error(f"Cannot call '{chosen.__name__}' with wp.ref[T] parameters from a kernel with "
                           "enable_backward=True: the reverse pass of a store through a reference is not defined",
                           node, hint="declare the kernel with @wp.kernel(enable_backward=False), or give the "
                                      "function a @wp.func_grad")
        # tiles changed in place, and tile stacks, reach the caller's variables (Warp passes both by reference)
        tiles = {**_tile_ref_arguments(chosen, bound, node), **_stack_arguments(chosen, bound, node)}
        finals = {} if refs or tiles else None
        result = inline_plain(lw, chosen, bound, node, finals=finals, extra_refs=tuple(tiles))
        refs = {**refs, **tiles}
    # wp.ref[T] parameters: copy-out of their final values into the arguments' places
    for pname, target in refs.items():
        if pname in finals:
            lw.store(target, finals[pname])
    return result


def _tile_ref_arguments(chosen: Func, bound: dict, node) -> dict:
    """{tile parameter: the caller's variable} for tile parameters the body changes in place, passed as plain
    variables (Warp passes tiles by reference, so the caller sees the change)."""
    names = chosen.tile_ref_params
    if not names:
        return {}
    params = list(chosen.signature.parameters) if chosen.signature is not None else []
    given = dict(zip(params, node.args))
    given.update({k.arg: k.value for k in node.keywords})
    return {p: given[p] for p in names if isinstance(given.get(p), ast.Name) and
            isinstance(getattr(bound.get(p), "type", None), T.TileType)}


def _stack_arguments(chosen: Func, bound: dict, node) -> dict:
    """{parameter: the caller's variable} for tile stacks (wp.tile_stack) passed as plain variables: pushes and pops
    in the body change the caller's stack."""
    from .tile_stack import TileStack

    if not isinstance(node, ast.Call):
        return {}  # an operator calling a user func (a * b on structs): no stack arguments
    params = list(chosen.signature.parameters) if chosen.signature is not None else []
    given = dict(zip(params, node.args))
    given.update({k.arg: k.value for k in node.keywords})
    return {p: given[p] for p in params if isinstance(bound.get(p), TileStack) and isinstance(given.get(p), ast.Name)}


def _ref_arguments(lw, chosen: Func, node) -> dict:
    """{ref parameter: the argument's AST} for the ``wp.ref[T]`` parameters of ``chosen`` that the arguments bind
    (arrays excluded: they are references already). Raises if an argument has no storage to refer to."""
    names = chosen.ref_params
    if not names:
        return {}
    params = list(chosen.signature.parameters) if chosen.signature is not None else []
    given = dict(zip(params, node.args))
    given.update({k.arg: k.value for k in node.keywords})
    out = {}
    for p in names:
        arg = given.get(p)
        if arg is None:
            continue
        ann = chosen.annotations[p].value_type
        if isinstance(to_ir_or_none(ann), T.ArrayType):
            continue
        root = arg
        while isinstance(root, (ast.Subscript, ast.Attribute)):
            root = root.value
        if not isinstance(root, ast.Name):
            raise lw.error(f"argument '{p}' of {chosen.__name__}() is passed by reference (wp.ref[T]): it must be a "
                           "variable, an array element, a struct field or a component, not a temporary value", arg)
        if root is arg and lw.frame.env.get(arg.id) is not None:
            current = lw.frame.env[arg.id]
            if isinstance(current, Weak):  # x = 0: a Python literal has no storage (wp.int32(0) has)
                t = current.default_type
                raise lw.error(f"argument '{p}' of {chosen.__name__}() is passed by reference (wp.ref[T]), but "
                               f"'{arg.id}' is a compile-time constant; give it storage of a fixed type: "
                               f"{arg.id} = wp.{t}({current.value!r})", arg)
        out[p] = arg
    return out


def to_ir_or_none(ann):
    try:
        return to_ir(ann)
    except TypeError:
        return None


def ref_positions_in(src):
    """For ``binding_analysis``: the argument positions a call in ``src`` passes by reference (the callee resolved
    statically through the function's globals and closure)."""
    globals_, closure = src.globals_and_closure()

    def positions(call: ast.Call) -> tuple[int, ...]:
        f = call.func
        path = []
        while isinstance(f, ast.Attribute):
            path.append(f.attr)
            f = f.value
        if not isinstance(f, ast.Name):
            return ()
        obj = closure.get(f.id, globals_.get(f.id))
        for part in reversed(path):
            obj = getattr(obj, part, None)
        if not isinstance(obj, Func):
            return ()
        refs = set()
        for ov in obj.overloads:
            try:
                names = ov.ref_params + ov.tile_ref_params
            except CompileError:
                continue
            params = list(ov.signature.parameters) if ov.signature is not None else []
            refs |= {params.index(n) for n in names}
        return tuple(sorted(refs))
    return positions


def inline_plain(lw, chosen: Func, bound: dict, node, adjoint_targets: dict | None = None, finals: dict | None = None,
                 extra_refs: tuple[str, ...] = ()):
    """Inline ``chosen`` with parameters already bound to values. With ``finals``, the final values of its
    ``wp.ref[T]`` parameters are put there (the caller stores them back)."""
    from .lower import Frame

    if chosen in lw.inline_stack:
        raise lw.error(f"recursive call of {chosen.__name__}() is not supported", node,
                       hint="rewrite the recursion as a loop")
    src = chosen.source
    tree = src.tree
    mutable, component_only = binding_analysis(tree, ref_positions_in(src))
    frame = Frame(src, mutable=mutable, component_only=component_only, is_func=True,
                  tail_only=only_tail_return(tree), call_loc=lw.frame.src.loc(node), name=chosen.__name__)
    frame.adjoint_targets = adjoint_targets
    frame.ref_params = frozenset(chosen.ref_params)
    lw.inline_stack.append(chosen)
    lw.frames.append(frame)
    try:
        if not frame.tail_only:
            frame.done = lw.b.new_var(T.BOOL, f"{chosen.__name__}_done", VarKind.MUTABLE)
            lw.b.assign(frame.done, Const(False, T.BOOL))
        refs = chosen.ref_params + extra_refs if finals is not None else ()
        for pname, value in bound.items():
            if pname in refs and isinstance(value, Var) and not isinstance(value.type, T.ArrayType):
                frame.mutable.add(pname)  # its final value is read after the body
            lw._bind_initial(pname, value)
        lw.lower_block(tree.body)
        for pname in refs:
            if pname in bound and not isinstance(getattr(bound[pname], "type", None), T.ArrayType):
                finals[pname] = lw.read_name(pname, tree)
    finally:
        lw.frames.pop()
        lw.inline_stack.pop()
    if frame.tail_only:
        result = frame.result
    elif frame.ret_vars is None:
        result = None
    else:
        outs = tuple(lw.op("copy", [v], node=node) for v in frame.ret_vars)
        result = outs[0] if len(outs) == 1 else outs
    _check_return_annotation(lw, chosen, result, node)
    return result


def _ann_text(ann) -> str:
    """An annotation as Warp's messages write it: ``int``, ``int16``, ``tuple[int, int]``, ``Array[int32]``."""
    if typing.get_origin(ann) is tuple:
        return f"tuple[{', '.join(_ann_text(a) for a in typing.get_args(ann))}]"
    t = to_ir_or_none(ann)
    if isinstance(t, T.ArrayType):
        return f"Array[{t.dtype}]"
    return getattr(ann, "__name__", None) or str(t if t is not None else ann)


def _value_type(v):
    return v.default_type if isinstance(v, Weak) else getattr(v, "type", None)


def _fits(v, want) -> bool:
    """Whether a returned value matches the annotated type (a Python literal fits any scalar type it converts to;
    generic annotations and those weft cannot type are not checked)."""
    if want is None or want.is_generic or isinstance(want, T.GenericType):
        return True
    if isinstance(v, Weak):
        return v.fits(want)
    t = getattr(v, "type", None)
    if isinstance(t, T.ArrayType) and isinstance(want, T.ArrayType):
        return t.kind is not T.ArrayKind.FIXED or want.kind is T.ArrayKind.FIXED
    return t is None or t == want


def _check_return_annotation(lw, chosen: Func, result, node) -> None:
    """Warp's checks of a func's result against its return annotation (the error names the function)."""
    try:
        ann = chosen.return_annotation
    except CompileError:
        return
    if ann is None or ann is type(None) or ann is typing.Any:
        return
    head = f"The function `{chosen.__name__}` "
    values = result if isinstance(result, tuple) else (() if result is None else (result,))
    if typing.get_origin(ann) is tuple:
        want = [to_ir_or_none(a) for a in typing.get_args(ann)]
        if len(values) != len(want):
            raise lw.error(f"{head}has its return type annotated as a tuple of {len(want)} elements but the code "
                           f"returns {len(values)} values.", node)
        if not all(_fits(v, w) for v, w in zip(values, want)):
            got = ", ".join(str(_value_type(v)) for v in values)
            raise lw.error(f"{head}has its return type annotated as `{_ann_text(ann)}` but the code returns a tuple "
                           f"with types `({got})`.", node)
        return
    want = to_ir_or_none(ann)
    if len(values) > 1:
        raise lw.error(f"{head}has its return type annotated as `{_ann_text(ann)}` but the code returns "
                       f"{len(values)} values.", node)
    if len(values) == 1 and not _fits(values[0], want):
        got = _value_type(values[0])
        if isinstance(got, T.ArrayType) and got.kind is T.ArrayKind.FIXED:
            raise lw.error(f"{head}returns a fixed-size array whereas it has its return type annotated as "
                           f"`{_ann_text(ann)}`.", node)
        raise lw.error(f"{head}has its return type annotated as `{_ann_text(ann)}` but the code returns a value of "
                       f"type `{got}`.", node)


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
        a = ann[p]
        try:
            want = to_ir(a.value_type if isinstance(a, Reference) else a)
        except TypeError:
            out[p] = value
            continue
        out[p] = _coerce_param(lw, p, value, want, node)
    return out


def _coerce_param(lw, pname, value, want: T.Type, node):
    if isinstance(value, tuple):
        if isinstance(want, T.GenericType) and want.kind is T.GenericKind.ANY:
            return value  # an Any parameter takes a tuple of values as it is (Warp's variadic funcs)
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


_STAR_COUNT = [0]


def expand_starred(lw, node: ast.Call) -> ast.Call:
    """``f(*v)``: a call whose starred arguments have a length known when compiling (a vector, quaternion or
    transform: its components; a matrix: its rows; an array slice with constant bounds: its elements; a tuple), as
    the same call with one argument per element. Each starred value is evaluated once."""
    args = []
    for a in node.args:
        if not isinstance(a, ast.Starred):
            args.append(a)
            continue
        parts = _array_slice_parts(lw, a.value, KernelValueError)
        if parts is None:
            value = lw.visit(a.value)
            t = getattr(value, "type", None)
            if isinstance(value, tuple):
                items = list(value)
            elif isinstance(t, T.VectorType):
                items = [value] * t.length
            elif isinstance(t, T.MatrixType):
                items = [value] * t.rows
            else:
                what = describe_value(value)
                raise lw.error(f"Starred expressions are only supported for vectors, matrices, quaternions, "
                               f"transforms, tuples and array slices with constant bounds, got {what}", a,
                               kind=TypeError_)
            base = _temp_name(lw, value if not isinstance(value, tuple) else None)
            for i, item in enumerate(items):
                if isinstance(value, tuple):
                    name = _temp_name(lw, item)
                    elem = ast.Name(id=name, ctx=ast.Load())
                else:
                    elem = ast.Subscript(value=ast.Name(id=base, ctx=ast.Load()), slice=ast.Constant(i),
                                         ctx=ast.Load())
                args.append(ast.copy_location(elem, a))
        else:
            base_value, indices = parts
            base = _temp_name(lw, base_value)
            for i in indices:
                elem = ast.Subscript(value=ast.Name(id=base, ctx=ast.Load()), slice=ast.Constant(i), ctx=ast.Load())
                args.append(ast.copy_location(elem, a))
    out = ast.Call(func=node.func, args=args, keywords=node.keywords)
    ast.copy_location(out, node)
    for n in ast.walk(out):
        if not hasattr(n, "lineno"):
            ast.copy_location(n, node)
    return out


def describe_value(value) -> str:
    t = getattr(value, "type", None)
    if t is not None:
        return str(t)
    return type(getattr(value, "value", value)).__name__


def _temp_name(lw, value) -> str:
    """Bind an already lowered value to a fresh name of the current frame (no Python name can clash: '.' inside)."""
    _STAR_COUNT[0] += 1
    name = f"star.{_STAR_COUNT[0]}"
    if value is not None:
        lw.frame.env[name] = value
    return name


def _array_slice_parts(lw, expr, value_error):
    """``arr[a:b:c]`` of an array (all bounds known when compiling): ``(the lowered arr, indices)``; else None."""
    if not (isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Slice)):
        return None
    base = lw.visit(expr.value)
    if not (isinstance(getattr(base, "type", None), T.ArrayType)):
        return None
    sl = expr.slice
    if sl.upper is None:
        raise lw.error("unpacking an array slice requires explicit upper bound (arrays have no length known when "
                       "compiling)", expr, kind=value_error)
    bounds = []
    for part, default in ((sl.lower, 0), (sl.upper, None), (sl.step, 1)):
        if part is None:
            bounds.append(default)
            continue
        v = lw.visit(part)
        v = getattr(v, "value", None) if isinstance(v, (Weak, Const)) else None
        if not isinstance(v, int) or isinstance(v, bool):
            raise lw.error("Slice component must be a compile-time constant integer to unpack an array slice",
                           part, kind=value_error)
        bounds.append(v)
    start, stop, step = bounds
    if step <= 0:
        raise lw.error("unpacking an array slice: the step cannot be negative or zero", sl.step, kind=value_error)
    if start < 0 or stop < 0:
        raise lw.error("unpacking an array slice: bounds cannot be negative for arrays (their length is not known "
                       "when compiling)", expr, kind=value_error)
    return base, list(range(start, stop, step))
