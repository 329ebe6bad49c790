"""The op registry: one typed record per op overload group, registered from the domain files in this package.

A record says how to type a call (``rule``), which native symbol implements it, how the backend renders it
(``kind``), how it is differentiated (``adjoint``) and the facts the IR passes need (whether its derivative rule
reads primal values, which operands its result may overwrite, whether its cooperative form needs scratch memory,
whether it is public, how a call is written in kernel code: ``syntax``). Autodiff and the frontend find everything
through here; the backends keep their rendering rules for SPECIAL ops in tables keyed by these records
(``weft.backend.rules``).

A plain native op needs one line: ``register(Op("my_fn", rule, native="my_fn"))`` renders as
``weft::my_fn(args...)`` and differentiates through ``weft::adj_my_fn(args..., adj_args..., adj_ret)``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field

from ..ir import types as T
from ..ir.roles import Role
from .forms import OPERANDS, Syntax


class OpKind(enum.Enum):
    CALL = "call"  # dst = native(args...)
    OUT_CALL = "out_call"  # native(args..., dst0, dst1, ...): results through reference parameters
    INFIX = "infix"  # dst = (a OP b), adjoint through weft::adj_<native>
    PREFIX = "prefix"  # dst = (OP a)
    SPECIAL = "special"  # rendered by a backend rule named after the op


class Adjoint(enum.Enum):
    NATIVE = "native"  # weft::adj_<native>(args..., adj_args..., adj_ret)
    NONE = "none"  # not differentiable: contributes no gradient (comparisons, floor, random ...)
    SPECIAL = "special"  # a rule in the backend's adjoint table for this record (array access, tiles, ...)
    UNSUPPORTED = "unsupported"  # no derivative rule yet: differentiating a kernel that calls it is an error


class Factor(enum.Enum):
    """Products whose adjoint rule reads only a constant factor when one operand is constant (no gradient flows into
    it): the Tape's overwrite check then ignores the other operand's values."""

    NONE = "none"
    EITHER = "either"  # a * b: the adjoint of each operand reads only the other
    DIVISOR = "divisor"  # a / b with b constant: the adjoint of a reads only b


class Identity(enum.Enum):
    """The identity element of a binary op used as a reduction (``tile_reduce`` of an axis slice with no element left,
    in a last, partial block); NONE: the op declares none."""

    NONE = 0
    ZERO = 1  # add
    ONE = 2  # mul
    HIGHEST = 3  # min: +inf (the type's largest value for integers)
    LOWEST = 4  # max: -inf (the type's smallest value for integers)


class InPlace(enum.Enum):
    """Which operands' storage the result may overwrite (the tile alias analysis shares storage through this)."""

    NONE = "none"
    ALL = "all"  # element-wise: every operand
    FIRST = "first"  # the first operand (in-place transforms such as FFTs)
    ACCUMULATOR = "accumulator"  # the accumulator of tile_matmul(a, b, acc, alpha, beta) (operand 2 of 5)

    def positions(self, nargs: int) -> frozenset[int]:
        if self is InPlace.ALL:
            return frozenset(range(nargs))
        if self is InPlace.FIRST:
            return frozenset({0})
        if self is InPlace.ACCUMULATOR and nargs == 5:
            return frozenset({2})
        return frozenset()


Rule = Callable[[tuple[T.Type, ...], tuple], object | None]


@dataclass(frozen=True, slots=True)
class Op:
    name: str
    rule: Rule  # (arg types, attrs) -> result type, tuple of result types, or None if this overload does not apply
    native: str = ""
    kind: OpKind = OpKind.CALL
    adjoint: Adjoint = Adjoint.NATIVE
    side_effect: bool = False
    operator: str = ""
    doc: str = ""
    domain: str = ""
    host: Callable | None = field(default=None, compare=False)  # NumPy implementation for host calls
    header: str = ""  # native header (under weft/native) a module using this op includes beyond weft.h
    #: C++ definitions a module using this op emits after its structs (a ``wp.func_native`` function's forward,
    #: replay and adjoint functions, generated from the user's snippets)
    definition: str = field(default="", compare=False)
    #: the native function the backward pass calls to re-run this side-effecting op (a ``wp.func_native``
    #: function's replay); without it a side-effecting op with no replay rule is not re-run there
    replay_native: str = ""
    #: the derivative rule reads primal tile values (False: only result adjoints, arrays and offsets; replay
    #: pruning then skips replaying the tile operands)
    adjoint_reads_primal: bool = True
    in_place: InPlace = InPlace.NONE
    #: the cooperative (CUDA block) form of the forward / of the derivative rule takes the block's scratch memory
    scratch: bool = False
    adjoint_scratch: bool = False
    #: acts on the whole block (tile ops): rendered once per block, never per lane
    collective: bool = False
    #: computed by each lane on per-lane values (tile ops): no cooperative form, every target uses the CPU rule
    lane_level: bool = False
    #: a tile reduction or scan that, in a last, partial block, leaves out the elements of the lanes the block lacks
    #: (Warp's layout: element i of a tile belongs to lane i % block_dim); the tile renderers pass the block's
    #: running lanes (``weft::Lanes``) to its native forward and adjoint functions
    owner_lanes: bool = False
    #: the identity of a binary op used as a reduction (``tile_reduce``)
    identity: Identity = Identity.NONE
    #: callable as ``wp.<name>`` (False: an internal op the frontend emits, such as load, store, copy, comparisons)
    public: bool = True
    #: what the IR analyses must recognise the op as (array access, thread index, copy...): ``ir.roles.Role``
    role: Role = Role.CALL
    #: the derivative rule only scales or routes adjoints (of the result, and of array elements): it reads no operand
    #: values besides indices, so the Tape's overwrite check ignores them (``autodiff/value_reads.py``)
    adjoint_linear: bool = False
    #: a binary product whose adjoint reads only a constant factor (``autodiff/value_reads.py``)
    constant_factor: Factor = Factor.NONE
    #: argument positions whose adjoint slot the derivative rule can write in full instead of adding into: the
    #: target's store form (``weft::fresh(slot)`` overloads of the ``adj_`` function). A slot whose first contribution
    #: is such a write, dominating every other, needs no zero fill (``autodiff/decls.py``; CPU tile kernels)
    adjoint_store: tuple[int, ...] = ()
    #: the forward writes every element of its (tile) result, reading none of it first: a result slot whose first
    #: write is such a call, at the top level of a CPU tile body, is declared without zero fill
    #: (``backend/tiles.py`` ``BlockRendering.whole_written``)
    writes_result: bool = False
    #: how a call is written in kernel code: the frontend's lowering rule (``ops/forms.py``); the same on every
    #: overload of a name
    syntax: Syntax = OPERANDS

    def stores_adjoint(self, k: int) -> bool:
        """Whether the derivative rule has a store form for the adjoint of argument ``k`` (see adjoint_store;
        ``STORES_EVERY_ADJOINT``: of every argument)."""
        return self.adjoint_store == STORES_EVERY_ADJOINT or k in self.adjoint_store

    @property
    def differentiable(self) -> bool:
        return self.adjoint is not Adjoint.NONE

    @property
    def has_adjoint(self) -> bool:
        """Whether the reverse sweep can differentiate a call (NONE ops contribute no gradient, which is a rule)."""
        return self.adjoint is not Adjoint.UNSUPPORTED


#: Op.adjoint_store of an op whose derivative rule can store the adjoint of every argument (tile_map's element loop)
STORES_EVERY_ADJOINT = (-1,)

_REGISTRY: dict[str, list[Op]] = {}


def register(op: Op) -> Op:
    _REGISTRY.setdefault(op.name, []).append(op)
    return op


#: ops defined by user programs (``wp.func_native`` functions): found by name like builtins, but not part of
#: weft's op set (``all_ops``), which the registry's coverage tests enumerate
_USER: dict[str, list[Op]] = {}


def register_user(op: Op) -> Op:
    """Register an op a user program defines (its name must be unique to it)."""
    _USER.setdefault(op.name, []).append(op)
    return op


def has(name: str) -> bool:
    _ensure_loaded()
    return name in _REGISTRY or name in _USER


def overloads(name: str) -> list[Op]:
    _ensure_loaded()
    return _REGISTRY.get(name) or _USER.get(name, [])


def all_ops() -> list[Op]:
    """weft's own ops (not those user programs define)."""
    _ensure_loaded()
    return [op for group in _REGISTRY.values() for op in group]


def syntax(name: str) -> Syntax:
    """How ``name`` is called in kernel code (plain operands for a name that is not an op)."""
    group = overloads(name)
    return group[0].syntax if group else OPERANDS


def records(name: str, domain: str | None = None) -> list[Op]:
    """The records of ``name`` (only those of ``domain`` if given), for rule tables keyed by record."""
    found = [op for op in overloads(name) if domain is None or op.domain == domain]
    if not found:
        raise KeyError(f"no op '{name}'" + (f" in domain '{domain}'" if domain else ""))
    return found


class Rejected:
    """What a rule returns for arguments it recognises but refuses, with the reason: the overload does not apply (as
    for None) and, when no overload does, the compile error says ``reason`` (:func:`explain`) instead of listing the
    argument types. ``Rejected("Incompatible gradient type, expected mat43f, got mat34f")``."""

    __slots__ = ("reason",)

    def __init__(self, reason: str):
        self.reason = reason

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"Rejected({self.reason!r})"


def resolve(name: str, arg_types: tuple[T.Type, ...], attrs: tuple = ()) -> tuple[Op, tuple[T.Type, ...]] | None:
    """First overload of ``name`` whose rule accepts the argument types; None if none does."""
    for op in overloads(name):
        result = op.rule(arg_types, attrs)
        if result is None or isinstance(result, Rejected):
            continue
        if isinstance(result, tuple):
            return op, result
        return op, (result,) if result is not T.VOID else ()
    return None


def explain(name: str, arg_types: tuple[T.Type, ...], attrs: tuple = ()) -> str | None:
    """Why no overload of ``name`` accepts the argument types: the reason of the first overload whose rule
    :class:`Rejected` them (None when every rule simply did not apply)."""
    for op in overloads(name):
        result = op.rule(arg_types, attrs)
        if isinstance(result, Rejected):
            return result.reason
    return None


_loaded = False


def _ensure_loaded() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    from . import load_all

    load_all()
