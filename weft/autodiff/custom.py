"""Custom gradients: ``@wp.func_grad(f)`` and ``@wp.func_replay(f)``.

A call of ``f`` inside a kernel becomes a :class:`CustomCall`: the forward runs ``f`` inlined; the backward
replays ``f`` (or its replay func) and, instead of differentiating it, runs the user's gradient func with the
call's inputs and the adjoint of its result(s); ``wp.adjoint[x] += value`` accumulates into the adjoint of
input ``x``.
"""

from __future__ import annotations

from ..errors import CompileError
from ..frontend.calls import inline_plain
from ..frontend.func import Func
from ..ir.nodes import Call, Const, CustomCall, Let, Var
from ..ops import registry
from ..typing.resolve import Weak


class _AdjointAccessor:
    """``wp.adjoint[x]``: the adjoint of input ``x`` inside a ``@wp.func_grad`` function."""

    _wp_adjoint_marker_ = True

    def __getitem__(self, item):
        raise CompileError("wp.adjoint[...] can only be used inside a @wp.func_grad function")

    def __repr__(self) -> str:
        return "wp.adjoint"


adjoint = _AdjointAccessor()


class AdjRef:
    """The value of ``wp.adjoint[x]`` during lowering: a reference to the adjoint of operand ``x``."""

    def __init__(self, target):
        self.target = target


def _as_func(f) -> Func:
    if not isinstance(f, Func):
        raise TypeError("func_grad/func_replay expect a @wp.func")
    return f


def _overload_for(forward: Func, fn) -> Func:
    """The overload of ``forward`` whose parameters the gradient / replay function ``fn`` starts with (same names and
    annotations, as Warp matches them); the most recent overload when none matches exactly."""
    if len(forward.overloads) == 1:
        return forward
    mine = [(k, repr(v)) for k, v in getattr(fn, "__annotations__", {}).items() if k != "return"]
    for ov in forward.overloads:
        theirs = [(k, repr(v)) for k, v in getattr(ov.func, "__annotations__", {}).items() if k != "return"]
        if mine[:len(theirs)] == theirs:
            return ov
    return forward.overloads[-1]


def func_grad(forward):
    """Decorator: define the gradient of @wp.func ``forward``.

    The decorated function takes ``forward``'s parameters followed by the adjoint of each result, and adds
    into ``wp.adjoint[param]``. With overloads of ``forward``, the one whose parameters it starts with gets it.
    """
    group = _as_func(forward)

    def wrap(grad_fn):
        fwd = _overload_for(group, grad_fn)
        fwd.custom_grad = Func(grad_fn, key=fwd.key + ".grad")
        fwd.custom_lowering = lower_custom_call
        return fwd.custom_grad
    return wrap


def func_replay(forward):
    """Decorator: define what the backward pass runs instead of ``forward`` to recompute its results."""
    group = _as_func(forward)

    def wrap(replay_fn):
        fwd = _overload_for(group, replay_fn)
        fwd.custom_replay = Func(replay_fn, key=fwd.key + ".replay")
        fwd.custom_lowering = lower_custom_call
        return fwd.custom_replay
    return wrap


def lower_custom_call(lw, func: Func, bound: dict, node):
    """Lower a call of ``func`` (which has a custom gradient and/or replay) to a CustomCall statement."""
    inputs = tuple(lw.operand(v, node) if isinstance(v, (Var, Const, Weak)) or _is_number(v) else v
                   for v in bound.values())
    bound = dict(zip(bound.keys(), inputs))
    with lw.b.nested() as primal:
        result = inline_plain(lw, func, bound, node)
        outs = _materialize(lw, result, node)
    lw.in_custom_body += 1
    try:
        replay, grad = _replay_and_grad(lw, func, bound, inputs, outs, node)
    finally:
        lw.in_custom_body -= 1
    # (static arguments, such as wp.Function targets, specialise the bodies and are no operands of the call)
    operands = tuple(v for v in inputs if isinstance(v, (Var, Const)))
    lw.b.emit(CustomCall(operands, tuple(outs), primal, replay, grad, lw.b.loc))
    if not outs:
        return None
    return outs[0] if len(outs) == 1 else tuple(outs)


def _replay_and_grad(lw, func: Func, bound: dict, inputs: tuple, outs: list, node):
    """The replay and gradient blocks of a custom call (calls of custom-gradient funcs in them compute forwards)."""
    replay = None
    if func.custom_replay is not None:
        with lw.b.nested() as replay:
            r = inline_plain(lw, func.custom_replay, dict(bound), node)
            for out, value in zip(outs, _flatten(r)):
                _define(lw, out, lw.operand(value, node))
    grad = None
    if func.custom_grad is not None:
        grad_fn = func.custom_grad
        params = [a.arg for a in grad_fn.source.tree.args.args]
        n_in = len(bound)
        if len(params) != n_in + len(outs):
            raise lw.error(f"the gradient func of {func.__name__}() must take {n_in} input(s) followed by "
                           f"{len(outs)} result adjoint(s); it takes {len(params)}", node)
        with lw.b.nested() as grad:
            adj_vals = [lw.op("adj_value", [o], node=node) for o in outs]
            gbound = dict(zip(params, list(inputs) + adj_vals))
            inline_plain(lw, grad_fn, gbound, node, adjoint_targets=dict(zip(params[:n_in], inputs)))
            for o in outs:
                lw.op("adj_reset", [o], node=node)
    return replay, grad


def _define(lw, out: Var, value) -> None:
    """Define the existing SSA ``out`` (the replay block re-defines the primal's results)."""
    opr, _ = registry.resolve("copy", (value.type,))
    lw.b.emit(Let((out,), Call(opr), (value,), lw.b.loc))


def _is_number(v) -> bool:
    return isinstance(v, (bool, int, float))


def _flatten(result) -> list:
    if result is None:
        return []
    if isinstance(result, tuple):
        return list(result)
    return [result]


def _materialize(lw, result, node) -> list[Var]:
    """Fresh SSA results defined inside the primal block (so their adjoints belong to this call)."""
    outs = []
    for value in _flatten(result):
        o = lw.operand(value, node)
        outs.append(lw.op("copy", [o], node=node))
    return outs  # none for a func without a result (its gradient func then takes only the inputs)


