"""The result types of a call, found by lowering it: ``wp.map`` sizes its output arrays from them."""

from __future__ import annotations

import ast

from ..ir import types as T
from ..ir.nodes import Var, VarKind
from .lower import Frame, Lowerer
from .source import FunctionSource


def return_types(src: FunctionSource, param_types: dict[str, T.Type]) -> tuple[T.Type, ...]:
    """The types of the value a generated function's last statement, ``return <call>``, evaluates to (lowered as
    kernel code, with the parameters of ``param_types``); () when the call gives no value."""
    lw = Lowerer(src, param_types, f"{src.func.__name__}_probe")
    lw.frames.append(Frame(src, name=src.func.__name__))
    lw.b.loc = src.loc(src.tree)
    for arg in src.tree.args.args:
        lw._bind_initial(arg.arg, Var(param_types[arg.arg], arg.arg, VarKind.PARAM))
    last = src.tree.body[-1]
    if not isinstance(last, ast.Return) or last.value is None:
        raise ValueError("the probe must end in 'return <call>'")
    value = lw.visit(last.value)
    if value is None:
        return ()
    values = value if isinstance(value, tuple) else (value,)
    return tuple(lw.operand(v, last).type for v in values)
