"""``wp.grad(f)`` in kernel code: the gradient of a func (or builtin) evaluated in forward code, as Warp's.

``wp.grad(f)`` is a static handle (a :class:`GradWrapper`, like a func bound to a local); calling it lowers ``f`` on
its own, with one parameter per value argument, into a :class:`~weft.ir.nodes.GradSub`, and emits one ``grad_call``
op whose results are the adjoints of those arguments with the adjoint of ``f``'s result seeded to one. The backends
render the adjoint of the sub-function as a helper (``weft/backend/grad_call.py``); the reverse sweep of the kernel
treats the results as constants (Warp: no gradient flows through a ``wp.grad`` call), while ``wp.grad`` inside a
``@wp.func_grad`` body is the way to differentiate through it.
"""

from __future__ import annotations

import ast
import re

from ..errors import KernelTypeError
from ..ir import types as T
from ..ir.nodes import Call, Const, Function, GradSub, Var, VarKind
from ..ops import registry
from ..ops.forms import Form
from ..typing.resolve import Weak
from .func import Func


class GradWrapper:
    """What ``wp.grad(f)`` returns: a handle to the gradient of ``f``, callable only in kernel code."""

    __slots__ = ("func",)

    def __init__(self, func) -> None:
        self.func = func

    def __call__(self, *args, **kwargs):
        raise RuntimeError("grad() wrapper can only be called inside Warp kernels and functions.")

    def __repr__(self) -> str:
        return f"GradWrapper({getattr(self.func, 'key', None) or _name(self.func)})"


def grad(func) -> GradWrapper:
    """The gradient of a ``@wp.func`` or builtin, for use in kernel code: ``wp.grad(f)(x, y)`` returns the adjoints of
    ``f``'s arguments (one value, or a tuple for several) with the adjoint of its result set to one. Forward-only:
    the reverse sweep treats the result as a constant, as in Warp.

    Raises:
        TypeError: ``func`` is not a weft function.
    """
    if isinstance(func, Func) or _builtin_name(func) is not None:
        return GradWrapper(func)
    raise TypeError(f"grad() expects a Warp function, got {type(func)}")


def lower_grad_form(lw, node: ast.Call, form) -> GradWrapper:
    """``wp.grad(f)`` in kernel code (the language form)."""
    if len(node.args) != 1 or node.keywords:
        raise lw.error("grad() expects exactly one function argument", node)
    target = lw.visit(node.args[0])
    if isinstance(target, GradWrapper):
        raise lw.error("wp.grad(wp.grad(f)) is not supported: weft computes first derivatives in forward code",
                       node.args[0])
    if not isinstance(target, Func) and _builtin_name(target) is None:
        what = target.type if isinstance(target, (Var, Const)) else type(target).__name__
        raise lw.error(f"grad() expects a Warp function, got {what}", node.args[0], kind=KernelTypeError)
    return GradWrapper(target)


def lower_grad_call(lw, wrapper: GradWrapper, node: ast.Call):
    """``g(args...)`` for ``g = wp.grad(f)``: the adjoints of the value arguments (one operand or a tuple)."""
    from .calls import _select_overload, inline_plain
    from .lower import Frame, Lowerer

    args = [lw.visit(a) for a in node.args]
    kwargs = {k.arg: lw.visit(k.value) for k in node.keywords}
    target = wrapper.func
    if isinstance(target, Func):
        chosen, bound = _select_overload(lw, target, args, kwargs, node)
        label = chosen.__name__
    else:
        name = _builtin_name(target)
        if kwargs:
            raise lw.error(f"wp.grad(wp.{name}) takes no keyword arguments", node)
        if registry.syntax(name).form is not Form.OPERANDS:
            raise lw.error(f"wp.grad() of wp.{name} is not supported: it is not a plain function of its operands", node)
        chosen, bound, label = None, {f"a{i}": a for i, a in enumerate(args)}, name
    operands, params, sub_bound = [], [], {}
    for pname, value in bound.items():
        if isinstance(value, (Var, Const, Weak, bool, int, float)):
            operand = lw.operand(value, node)
            if isinstance(operand.type, T.ArrayType):
                raise lw.error(f"wp.grad({label}): argument '{pname}' is an array; weft differentiates funcs of "
                               "values only in forward code", node, hint="pass the array's elements instead")
            param = Var(operand.type, pname, VarKind.PARAM)
            operands.append(operand)
            params.append(param)
            sub_bound[pname] = param
        elif isinstance(value, tuple):
            raise lw.error(f"wp.grad({label}): argument '{pname}' is a tuple", node)
        else:
            sub_bound[pname] = value  # static arguments (wp.Function targets) specialise the sub-function
    counter = lw.grad_subs
    sub = Lowerer(lw.frame.src, {}, f"{lw.name}_grad", lw.options)
    sub.deps = lw.deps
    sub.grad_subs = counter
    sub.inline_stack = list(lw.inline_stack)
    sub.in_custom_body = lw.in_custom_body
    sub.frames.append(Frame(lw.frame.src, name=lw.frame.name))
    sub.b.loc = lw.b.loc
    if chosen is not None:
        result = inline_plain(sub, chosen, sub_bound, node)
    else:
        result = sub.op(label, list(sub_bound.values()), node=node)
    results = result if isinstance(result, tuple) else (result,)
    if result is None or not results:
        raise lw.error(f"Cannot compute gradient of void function '{label}'", node)
    results = tuple(sub.operand(r, node) for r in results)
    for r in results:
        if not _seedable(r.type):
            raise lw.error(f"wp.grad({label}): its result is a {r.type} value; weft seeds the adjoint of float "
                           "scalars, vectors and matrices", node, kind=KernelTypeError)
    fn = Function(f"{lw.name}_grad", params, sub.b.blocks[0], sub.b.locals, lw.b.loc)
    helper = GradSub(f"weft_grad_{len(counter)}_{re.sub(r'[^0-9A-Za-z_]', '_', label)}", fn, results)
    counter.append(helper)
    opr = registry.resolve("grad_call", tuple(p.type for p in params), (helper,))
    if opr is None or not params:
        raise lw.error(f"wp.grad({label}): no argument has a gradient", node)
    dsts = lw.b.let(Call(opr[0], (helper,)), tuple(operands), opr[1])
    return dsts[0] if len(dsts) == 1 else tuple(dsts)


def _seedable(t: T.Type) -> bool:
    if isinstance(t, T.ScalarType):
        return t.is_float
    if isinstance(t, T.VectorType) and t.flavor is not T.VecFlavor.VECTOR:
        return False  # quaternions and transforms: no one-valued constructor
    return isinstance(t, (T.VectorType, T.MatrixType)) and t.scalar.is_float


def _builtin_name(obj) -> str | None:
    name = getattr(obj, "_wp_kernel_builtin_", None)
    return name if isinstance(name, str) and registry.has(name) else None


def _name(obj) -> str:
    return getattr(obj, "__name__", None) or repr(obj)
