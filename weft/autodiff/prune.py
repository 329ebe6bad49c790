"""Replay pruning for tile kernels: the backward replays only the tile values its reverse sweep reads.

The replay recomputes the forward so that derivative rules can read primal values. Many tile rules read none:
the adjoint of an FFT is an FFT of the output's adjoint, that of a transpose a transpose, that of a load an add into
the array's gradient. A tile value that only such rules (and stores) consume need not be replayed at all: in a
spectral solve ``load -> fft -> scale -> ifft -> store`` the replay stops at the values ``scale``'s adjoint reads.
The C++ compiler cannot drop these itself: tile ops write their results into block buffers through out-of-line
functions (FFT passes, transposes).

Only top-level replay statements that define tile values are dropped, and replays of stores into arrays the kernel
does not read (a replay store writes only into the private copy of a snapshot array, see ``replay_tile_store``).
Everything else, including every statement inside a loop or a branch, is kept along with what it reads.
"""

from __future__ import annotations

import dataclasses

from ..ir import types as T
from ..ir.blocks import stmt_vars
from ..ir.nodes import AdjLet, AdjointProgram, Let, ReplayLet, Var, VarKind, walk
from ..ir.roles import Role
from ..ops.registry import OpKind
from .value_reads import activity, rule_reads


def prune_replay(prog: AdjointProgram, inactive: frozenset[int] = frozenset()) -> AdjointProgram:
    """``inactive``: indices of array parameters without a gradient in the launches this program serves (values
    computed only from them are constants to the rules: a product of a tile with such a tile reads only the
    constant, so the other factor need not be replayed). Pruning an already pruned program again drops more."""
    if not prog.fn.tile_dim:
        return prog

    snapshot = {prog.fn.params[i].id for i in prog.snapshot_params}
    active = None
    if inactive:
        seeds = {p.id for i, p in enumerate(prog.fn.params) if i not in inactive}
        active = activity(prog, seeds)
    needed: set[int] = set()

    def need(operands) -> None:
        needed.update(v.id for v in operands if isinstance(v, Var))

    for s in walk(prog.reverse):
        if isinstance(s, AdjLet) and s.let.call.op.role is Role.TILE_MAP:
            # the map's rule reads a tile operand only where the mapped function's own rules read that parameter
            # (an extract, a copy or a constructor reads none); scalar operands are always kept
            need(a for a in s.let.args if not isinstance(a.type, T.TileType))
            need(rule_reads(s.let, active))
        elif isinstance(s, AdjLet) and not s.let.call.op.adjoint_reads_primal:
            # the rule reads only the result's adjoint, arrays and offsets (Op.adjoint_reads_primal)
            need(a for a in s.let.args if not isinstance(a.type, T.TileType))
        elif isinstance(s, AdjLet) and s.let.call.op.kind is not OpKind.OUT_CALL:
            need(s.let.args)  # rules get the operands, not the result (out-parameter calls get both)
        else:
            need(stmt_vars(s))
    kept = []
    for s in reversed(prog.replay):
        if _droppable(s, needed, snapshot):
            continue
        kept.append(s)
        for x in walk([s]):
            need(stmt_vars(x))
    if len(kept) == len(prog.replay):
        return prog
    return dataclasses.replace(prog, replay=kept[::-1])


def _droppable(s, needed: set[int], snapshot: set[int]) -> bool:
    if isinstance(s, Let):
        return (bool(s.dsts) and not s.call.op.side_effect and all(isinstance(d.type, T.TileType) for d in s.dsts)
                and not any(d.id in needed for d in s.dsts))
    if isinstance(s, ReplayLet) and s.let.call.op.role is Role.TILE_STORE:
        arr = s.let.args[0]
        return isinstance(arr, Var) and arr.kind is VarKind.PARAM and arr.id not in snapshot
    return False
