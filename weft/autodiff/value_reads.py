"""Which arrays' *values* a recorded launch's backward reads (for the Tape's overwrite check).

The backward replays the forward so that derivative rules can read primal values (``prune.py`` drops the tile
replay work no rule reads). An array overwritten after a recorded launch makes that launch's gradient wrong only
if a rule depends on the array's old values. Many rules depend on none: the adjoint of a load, a store or an
atomic add indexes the array's *gradient*; sums, differences, negations, component extraction, constructors,
copies and products with a constant are linear, so their rules read no operand values; tile rules flagged
``Op.adjoint_reads_primal = False`` (transpose, FFT ...) read only adjoints. A chain of such steps (a copy, a
spectral split, a transpose) therefore never reads its input, and overwriting the input later is harmless.

The analysis is a flow-insensitive liveness over the replay: a replayed value is needed if a rule reads it or a
needed replayed statement computes from it; an array counts as read if a needed statement or a value-reading
rule takes it as an operand.
"""

from __future__ import annotations

from ..ir import types as T
from ..ir.blocks import stmt_vars
from ..ir.nodes import AdjAssign, AdjLet, AdjointProgram, Assign, For, If, Let, ReplayLet, Var, While, walk
from ..ir.roles import OVERWRITES_ARRAY, Role
from ..ops.registry import Factor, OpKind

_CONTROL = (If, For, While)



def _is_index(v) -> bool:
    """Integer scalars, and integer tiles (the indices of tile_load_indexed and its kin)."""
    t = v.type.dtype if isinstance(v, Var) and isinstance(v.type, T.TileType) else getattr(v, "type", None)
    return isinstance(v, Var) and isinstance(t, T.ScalarType) and not t.is_float


def _inactive(x, active: set[int] | None) -> bool:
    if not isinstance(x, Var):
        return True
    return active is not None and x.id not in active


def rule_reads(let: Let, active: set[int] | None) -> list:
    """The operands (Vars) a derivative rule of ``let`` reads."""
    args, op = let.args, let.call.op
    idx = [a for a in args if _is_index(a)]  # indices and conditions are always read
    if op.adjoint_linear:  # the rule scales or routes adjoints (array ops: only the array's gradient)
        return idx
    if op.role is Role.TILE_MAP and let.call.attrs:
        # the mapped function (a builtin or an inlined @wp.func) is a block on element parameters: the map's rule
        # reads a tile operand's values only if the block's own rules need that parameter's values
        body = let.call.attrs[0]
        read = _body_param_reads(body, [not _inactive(a, active) for a in args])
        if read is not None:
            return idx + [a for a, r in zip(args, read) if r and isinstance(a, Var)]
    if not op.adjoint_reads_primal:
        return [a for a in args if isinstance(a, Var) and not isinstance(a.type, (T.TileType, T.ArrayType))]
    if op.constant_factor is not Factor.NONE and len(args) == 2:
        # a product with a constant (a literal or a value no gradient flows into): the variable's adjoint reads
        # only the constant, and the constant's adjoint is never computed
        a, b = (_inactive(x, active) for x in args)
        if b or (a and op.constant_factor is Factor.EITHER):
            return idx + [x for x in args if isinstance(x, Var) and _inactive(x, active)]
    reads = [a for a in args if isinstance(a, Var)]
    if op.kind is OpKind.OUT_CALL:
        reads += list(let.dsts)
    return reads


def _body_param_reads(body, active_params: list[bool]) -> list[bool] | None:
    """For a ``tile_map`` body (``params``, straight-line ``block``, ``result``): whether the derivative of the
    block reads each parameter's value (directly, or through a value a rule reads). None when the block is not
    straight-line code (then the caller assumes every operand is read)."""
    params = getattr(body, "params", None)
    block = getattr(body, "block", None)
    if params is None or block is None or not all(isinstance(x, Let) for x in block):
        return None
    active = {p.id for p, a in zip(params, active_params) if a}
    for let in block:  # activity: values a gradient can flow into
        if let.call.op.differentiable and any(isinstance(a, Var) and a.id in active for a in let.args):
            active |= {d.id for d in let.dsts}
    needed: set[int] = set()
    for let in block:
        needed.update(v.id for v in rule_reads(let, active) if isinstance(v, Var))
    for let in reversed(block):  # recomputing a needed value needs its operands
        if any(d.id in needed for d in let.dsts):
            needed.update(a.id for a in let.args if isinstance(a, Var))
    return [p.id in needed for p in params]


def _vars(stmt) -> list:
    return [v for v in stmt_vars(stmt) if isinstance(v, Var)]


def adjoint_value_reads(prog: AdjointProgram, grad_params=None) -> frozenset[int]:
    """Indices of the array parameters whose values the backward of ``prog`` reads.

    ``grad_params``: indices of the array parameters that have gradients in this launch (None: all); values
    computed only from the others are constants for the rules."""
    params = {p.id: i for i, p in enumerate(prog.fn.params) if isinstance(p.type, T.ArrayType)}
    active = None if grad_params is None else activity(prog, {p.id for i, p in enumerate(prog.fn.params)
                                                                if i in grad_params})
    needed: set[int] = set()
    reads: set[int] = set()
    for s in walk(prog.reverse):
        if isinstance(s, AdjLet):
            operands = rule_reads(s.let, active)
        elif isinstance(s, AdjAssign):
            operands = []
        else:
            operands = _vars(s)
        needed.update(v.id for v in operands)
        reads.update(params[v.id] for v in operands if v.id in params)

    flat = list(_flatten(prog.replay, ()))
    stmts = [x for x, _ in flat]
    read_in_replay = set()
    for x in stmts:
        ops = _vars(x)
        let = _let(x)
        if let is not None and let.call.op.role in OVERWRITES_ARRAY:
            ops = [v for v in let.args[1:] if isinstance(v, Var)]
        read_in_replay.update(v.id for v in ops if v.id in params)
    live: set[int] = set()
    changed = True
    while changed:  # fixpoint: a statement is live if it defines a needed value or has a visible effect
        changed = False
        for k, x in enumerate(stmts):
            if k in live or not _is_live(x, needed, params, read_in_replay):
                continue
            live.add(k)
            changed = True
            let = _let(x)
            ops = _vars(x)
            if let is not None:
                ops = [v for v in let.args if isinstance(v, Var)]
                if let.call.op.role in OVERWRITES_ARRAY:
                    ops = ops[1:]
            elif isinstance(x, Assign):
                ops = [x.src] if isinstance(x.src, Var) else []
            ops = ops + list(flat[k][1])  # the conditions and loop bounds that decide whether it runs
            needed.update(v.id for v in ops)
            reads.update(params[v.id] for v in ops if v.id in params)
    return frozenset(reads)


def activity(prog: AdjointProgram, seeds: set[int]) -> set[int]:
    """Ids of the values a gradient can flow into: computed (transitively) from an array with a gradient."""
    active = set(seeds)
    stmts = list(walk(prog.replay))
    changed = True
    while changed:
        changed = False
        for x in stmts:
            let = _let(x)
            if let is not None:
                if let.call.op.differentiable and any(isinstance(a, Var) and a.id in active for a in let.args):
                    new = {d.id for d in let.dsts} - active
                    if new:
                        active |= new
                        changed = True
            elif isinstance(x, Assign) and isinstance(x.src, Var) and x.src.id in active and x.dst.id not in active:
                active.add(x.dst.id)
                changed = True
    return active


def _let(x):
    if isinstance(x, ReplayLet):
        return x.let
    return x if isinstance(x, Let) else None


def _is_live(x, needed: set[int], params: dict, read_in_replay: set[int]) -> bool:
    let = _let(x)
    if let is not None:
        if let.call.op.role in OVERWRITES_ARRAY:
            dst = let.args[0]
            return not (isinstance(dst, Var) and dst.id in params and dst.id not in read_in_replay)
        if let.call.op.side_effect:
            return True
        return any(d.id in needed for d in let.dsts)
    if isinstance(x, Assign):
        return x.dst.id in needed
    # control statements: their conditions or bounds become needed through the live statements they guard
    return not isinstance(x, _CONTROL)


def _flatten(block, guards: tuple):
    """(statement, guard Vars) for every statement; guards are the enclosing conditions and loop bounds."""
    for stmt in block:
        yield stmt, guards
        if isinstance(stmt, _CONTROL) or type(stmt).__name__ in ("Repeat", "CustomCall"):
            inner = guards + tuple(_vars(stmt))
            for name in ("then", "orelse", "cond_body", "body", "primal", "replay", "grad"):
                yield from _flatten(getattr(stmt, name, None) or [], inner)
