"""Where a backward body declares its locals: at first use instead of all at the top (an IR pass, read by
``backend/adjoint.py``).

The backward body (``AdjointProgram``: replay, then reverse sweep) used to declare every primal variable and every
adjoint slot at its top, zero-initialised. A large kernel then keeps all of them alive, zeroed, for the whole body
(the Featherstone FK backward's vector temporaries made a ~55 KB frame). This pass moves each declaration down to
the statement that first names the variable, inside the innermost branch that holds every use, so that the C++
compiler sees short, nested lifetimes.

Exactness: a declaration is placed only in a block that the body runs at most once per thread (the top level or an
``If`` branch with no loop or ``Repeat`` around it), before the first statement of that block that names the
variable, and every statement naming it is in that block at or after that point. Nothing named the variable before,
so it still holds its zero there, as it did with the declaration at the top; the zero-initialisation itself stays
(weft's value types zero in their default constructors, and the native adjoint functions accumulate into the slot
they are given, so the first contribution after the declaration adds to an explicit zero the compiler can fold).
A variable used inside a loop body is declared before the loop (each iteration must see the previous one's value).

An adjoint slot whose first contribution is an op's full write (``Op.adjoint_store``: the derivative rule has a
store form), at the top level of the reverse sweep and before any other statement names the variable, is ``fresh``:
the renderer declares it without zeroing and passes it to the store form (``weft::fresh(slot)``). The tile kernels'
FFT and transpose adjoints take this form (a 64 KB tile's zero fill, and the FFT adjoint's temporary, saved).

Adjoint slots of a ``Let``'s results are also no longer reset after the reverse of a ``Let`` that the sweep runs once
(outside every loop): SSA results are defined once, so nothing reads their adjoint again (``dead_resets``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from ..ir.blocks import stmt_vars
from ..ir.nodes import (
    AdjLet,
    CustomCall,
    For,
    If,
    Repeat,
    Stmt,
    Var,
    VarKind,
    While,
    walk,
)


@dataclass(frozen=True)
class DeclPlan:
    """Declaration points of a backward body's locals, keyed by ``(id(block), index)``: the variables (and, in
    ``adjoints_at``, the adjoint slots) to declare just before statement ``index`` of that statement list. Variables
    in neither map (never named by a statement) stay declared at the top of the body."""

    at: Mapping[tuple[int, int], tuple[Var, ...]]
    adjoints_at: Mapping[tuple[int, int], tuple[Var, ...]]
    dead_resets: frozenset[int]  # ids of the Lets whose results' adjoint slots need no reset after their reverse
    #: variable id -> (id of the Let, argument position) whose reverse writes the variable's adjoint slot first, in
    #: full, before anything else names it (the op's ``adjoint_store`` form): the slot needs no zero fill
    fresh: Mapping[int, tuple[int, int]]

    def placed(self) -> set[int]:
        return {v.id for vs in self.at.values() for v in vs}

    def adjoints_placed(self) -> set[int]:
        return {v.id for vs in self.adjoints_at.values() for v in vs}


def named_vars(s: Stmt) -> list[Var]:
    """Variables a statement names itself (not those of the blocks it holds): ``ir.blocks.stmt_vars``, plus everything
    a CustomCall holds (not descended into, so all of it counts as named here)."""
    if isinstance(s, CustomCall):
        found = list(s.inputs) + list(s.outputs)
        for x in walk(s.primal + (s.replay or []) + (s.grad or [])):
            found += named_vars(x)
    else:
        found = stmt_vars(s)
    return [v for v in found if isinstance(v, Var)]


def _children(s: Stmt) -> list[tuple[list[Stmt], bool]]:
    """The statement lists a statement holds, each with whether it may run more than once per run of the statement."""
    if isinstance(s, If):
        return [(s.then, False), (s.orelse, False)]
    if isinstance(s, For):
        return [(s.body, True)]
    if isinstance(s, While):
        return [(s.cond_body, True), (s.body, True)]
    if isinstance(s, Repeat):
        return [(s.body, True)]
    return []


def plan_declarations(replay: list[Stmt], reverse: list[Stmt], pinned_adjoints: set[int] = frozenset(),
                      once: set[int] = frozenset()) -> DeclPlan:
    """The declaration points of a backward body whose top level is ``replay`` then ``reverse``.

    ``pinned_adjoints``: ids of variables whose adjoint slots are named outside these statements (the result seeds of
    a ``wp.grad`` helper): they stay at the top. ``once``: ids of the Lets whose reverse the sweep runs at most once.
    """
    # every naming of a variable: the path of (statement list, index) from the top; a path element is cut where a
    # statement list may run repeatedly (a declaration is never placed inside one)
    primal: dict[int, tuple[Var, list]] = {}
    adjoint: dict[int, tuple[Var, list]] = {}
    shared: set[int] = set()  # statement lists met at two places (none today): everything in them stays at the top
    seen_lists: set[int] = set()
    first_in_reverse: dict[int, tuple[Stmt, bool]] = {}  # var id -> the first reverse statement naming it, top level?

    def visit(block: list[Stmt], path: tuple, repeated: bool, in_reverse: bool) -> None:
        if id(block) in seen_lists:
            shared.add(id(block))
        seen_lists.add(id(block))
        for k, s in enumerate(block):
            here = path if repeated else path + ((block, k),)
            for v in named_vars(s):
                if v.kind is VarKind.PARAM:
                    continue
                primal.setdefault(v.id, (v, []))[1].append(here)
                if in_reverse:
                    adjoint.setdefault(v.id, (v, []))[1].append(here)
                    first_in_reverse.setdefault(v.id, (s, block is root_reverse))
            for child, loops in _children(s):
                visit(child, here, repeated or loops, in_reverse)

    root_replay: list[Stmt] = replay
    root_reverse: list[Stmt] = reverse
    visit(root_replay, (), False, False)
    visit(root_reverse, (), False, True)

    def place(uses: list) -> tuple[int, int] | None:
        # the top level is one sequence: the replay, then the reverse sweep
        def key(path):
            block, k = path[0]
            return (0 if block is root_replay else 1, k)

        first = min(uses, key=key)
        if not first:
            return None
        depth = min(len(p) for p in uses)
        common = 0
        while common < depth and all(p[common][0] is first[common][0] for p in uses):
            common += 1
        if common == 0:  # different top-level lists, or a naming in a repeated list of the top level
            return (id(first[0][0]), first[0][1])
        level = common - 1
        block = first[level][0]
        return (id(block), min(p[level][1] for p in uses))

    def plan(uses_of: dict, pinned: set[int]) -> dict:
        out: dict[tuple[int, int], list[Var]] = {}
        for vid, (v, uses) in uses_of.items():
            if vid in pinned or any(not p for p in uses):
                continue  # named only inside a top-level loop: the top of the body, as before
            if any(id(b) in shared for p in uses for b, _ in p):
                continue
            at = place(uses)
            if at is not None:
                out.setdefault(at, []).append(v)
        return out

    at = plan(primal, set())
    adjoints_at = plan(adjoint, set(pinned_adjoints))
    dead: set[int] = set()
    for s in walk(reverse):
        if isinstance(s, AdjLet) and id(s.let) in once and all(d.kind is VarKind.SSA for d in s.let.dsts):
            dead.add(id(s.let))
    fresh: dict[int, tuple[int, int]] = {}
    for vid, (s, top) in first_in_reverse.items():
        if not top or not isinstance(s, AdjLet):
            continue  # under a branch or in a loop the write may not run, or run again
        let = s.let
        spots = [k for k, a in enumerate(let.args) if a is primal[vid][0]]
        if len(spots) == 1 and let.call.op.stores_adjoint(spots[0]) and all(d.id != vid for d in let.dsts):
            fresh[vid] = (id(let), spots[0])
    return DeclPlan(MappingProxyType({k: tuple(v) for k, v in at.items()}),
                    MappingProxyType({k: tuple(v) for k, v in adjoints_at.items()}), frozenset(dead),
                    MappingProxyType(fresh))
