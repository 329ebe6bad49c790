"""Typed IR: variables, constants and structured statements. Every statement carries a source location.

The IR is structured (no gotos): straight-line ``Let`` definitions in SSA form, ``Assign`` to mutable locals,
and ``If`` / ``For`` / ``While`` regions with ``Break`` / ``Continue``. Funcs are inlined by the frontend, so a
kernel is one ``Function``. Operands of ``Let`` are always SSA values or constants, which is what lets the
adjoint transform replay a region and trust the values it reads.
"""

from __future__ import annotations

import enum
import itertools
from dataclasses import dataclass, field

from ..errors import SourceLoc
from .types import Type

_ids = itertools.count()


class VarKind(enum.Enum):
    SSA = "ssa"  # defined once by a Let (or as a loop index / parameter)
    MUTABLE = "mut"  # a local written by Assign (Python names rebound in loops or branches)
    PARAM = "param"


@dataclass(eq=False, slots=True)
class Var:
    type: Type
    name: str = ""
    kind: VarKind = VarKind.SSA
    id: int = field(default_factory=lambda: next(_ids))

    def __repr__(self) -> str:
        return f"%{self.name or 'v'}{self.id}"

    def __hash__(self) -> int:
        return self.id

    def __eq__(self, other) -> bool:
        return self is other


@dataclass(frozen=True, slots=True)
class Const:
    value: object
    type: Type

    def __repr__(self) -> str:
        return f"{self.value!r}:{self.type}"


Operand = Var | Const


@dataclass(frozen=True, slots=True)
class Call:
    """A resolved call of a registry op: the op record, the chosen native symbol and compile-time attributes."""

    op: object  # ops.registry.Op
    attrs: tuple = ()

    @property
    def name(self) -> str:
        return self.op.name


class Stmt:
    __slots__ = ()


@dataclass(slots=True)
class Let(Stmt):
    dsts: tuple[Var, ...]
    call: Call
    args: tuple[Operand, ...]
    loc: SourceLoc | None = None


@dataclass(slots=True)
class Assign(Stmt):
    dst: Var
    src: Operand
    loc: SourceLoc | None = None


@dataclass(slots=True)
class If(Stmt):
    cond: Operand
    then: list[Stmt]
    orelse: list[Stmt]
    loc: SourceLoc | None = None


@dataclass(slots=True)
class For(Stmt):
    var: Var
    start: Operand
    stop: Operand
    step: Operand
    body: list[Stmt]
    loc: SourceLoc | None = None


@dataclass(slots=True)
class While(Stmt):
    cond_body: list[Stmt]  # evaluated before every iteration; defines cond
    cond: Operand
    body: list[Stmt]
    loc: SourceLoc | None = None


@dataclass(slots=True)
class Break(Stmt):
    loc: SourceLoc | None = None


@dataclass(slots=True)
class Continue(Stmt):
    loc: SourceLoc | None = None


@dataclass(slots=True)
class Return(Stmt):
    """Leaves the kernel (kernels only: funcs are inlined and their returns lowered)."""

    loc: SourceLoc | None = None


@dataclass(slots=True)
class CustomCall(Stmt):
    """A func call with a user-defined gradient (``@wp.func_grad``) or replay (``@wp.func_replay``).

    The forward runs ``primal``; the backward replay runs ``replay`` (or ``primal``) and the reverse sweep runs
    ``grad`` (the user's gradient func, inlined, reading output adjoints and accumulating input adjoints)
    instead of differentiating ``primal``.
    """

    inputs: tuple
    outputs: tuple
    primal: list[Stmt]
    replay: list[Stmt] | None
    grad: list[Stmt] | None
    loc: SourceLoc | None = None


@dataclass(slots=True)
class Function:
    name: str
    params: list[Var]
    body: list[Stmt]
    locals: list[Var]  # mutable locals, declared at the top of the generated function
    loc: SourceLoc | None = None
    tile_dim: bool = False

    def walk(self):
        """Every statement, depth first, in program order."""
        yield from walk(self.body)


@dataclass(frozen=True, eq=False)
class GradSub:
    """What a ``wp.grad(f)(args...)`` call in kernel code computes: ``fn`` is ``f`` lowered on its own (one PARAM per
    value argument), ``result`` the operands ``f`` returns. The call yields the adjoint of every parameter of ``fn``
    with the adjoint of each result seeded to one; backends render ``fn``'s adjoint as a helper named ``name``."""

    name: str
    fn: Function
    result: tuple


def grad_subs(block: list[Stmt]) -> list[GradSub]:
    """The ``wp.grad`` calls of a block and, first, those nested in their functions (each once)."""
    found: list[GradSub] = []
    for s in walk(block):
        if isinstance(s, Let) and s.call.attrs and isinstance(s.call.attrs[0], GradSub):
            sub = s.call.attrs[0]
            for inner in grad_subs(sub.fn.body):
                if inner not in found:
                    found.append(inner)
            if sub not in found:
                found.append(sub)
    return found


def walk(block: list[Stmt]):
    for stmt in block:
        yield stmt
        if isinstance(stmt, If):
            yield from walk(stmt.then)
            yield from walk(stmt.orelse)
        elif isinstance(stmt, For):
            yield from walk(stmt.body)
        elif isinstance(stmt, While):
            yield from walk(stmt.cond_body)
            yield from walk(stmt.body)
        elif type(stmt).__name__ == "Repeat":
            yield from walk(stmt.body)
        elif isinstance(stmt, CustomCall):
            yield from walk(stmt.primal)
            yield from walk(stmt.replay or [])
            yield from walk(stmt.grad or [])


# ---------------------------------------------------------------------- adjoint program statements
# The adjoint transform (weft.autodiff.reverse) builds a backward program from these together with the
# primal statements above; backends render them (weft.backend.adjoint).


@dataclass(slots=True)
class AdjLet(Stmt):
    """The reverse of ``let``: propagate the adjoints of its results to its operands, then zero them."""

    let: Let


@dataclass(slots=True)
class AdjAssign(Stmt):
    """The reverse of ``assign``: ``adj(src) += adj(dst); adj(dst) = 0``."""

    assign: Assign


@dataclass(slots=True)
class ReplayLet(Stmt):
    """A side-effecting Let re-executed in the backward replay (stores only into replay scratch arrays)."""

    let: Let


@dataclass(slots=True)
class Push(Stmt):
    """Save values on the per-thread loop stack (a dynamic loop's state at the start of an iteration)."""

    values: list[Operand]


@dataclass(slots=True)
class Pop(Stmt):
    """Restore values saved by the matching Push (in reverse order)."""

    vars: list[Var]


@dataclass(slots=True)
class Repeat(Stmt):
    """Run ``body`` ``count`` times (the reverse sweep of a recorded dynamic loop)."""

    count: Var
    body: list[Stmt]


@dataclass(slots=True)
class AdjointProgram:
    """The backward function of a kernel: replay the forward (recording loops), then sweep in reverse."""

    fn: Function
    replay: list[Stmt]
    reverse: list[Stmt]
    locals: list[Var]
    uses_stack: bool
    snapshot_params: tuple[int, ...]  # array params the forward both reads and writes (replayed on a copy)

    def extra_locals(self) -> list[Var]:
        """The locals the backward program declares beyond the primal function's (loop counters, adjoint slots of
        mutable locals...), in declaration order: what the printer lists and the verifier counts as declared."""
        known = {v.id for v in self.fn.locals}
        return [v for v in self.locals if v.id not in known]

    def declared(self) -> set[int]:
        """Ids of everything declared at the top of the backward body: parameters and all locals."""
        return {p.id for p in self.fn.params} | {v.id for v in self.fn.locals} | {v.id for v in self.locals}
