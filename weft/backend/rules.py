"""Per-op rendering rules, one table per transformation, keyed by the op record (never by its name).

Ops of kind CALL / OUT_CALL / INFIX / PREFIX render generically from their record (``native``, ``operator``) and,
with ``Adjoint.NATIVE``, differentiate through ``weft::adj_<native>``: they need no entry here. A SPECIAL op has a
forward rule, and, with ``Adjoint.SPECIAL``, a derivative rule; side-effecting ops may have a replay rule (how the
backward pass re-runs them; without one they are skipped there, as prints and asserts are).

A renderer class declares the tables it adds in its own class body (``forward_rules``, ``adjoint_rules``,
``replay_rules``); :func:`lookup` searches the classes of a renderer in method-resolution order, so a subclass
(the tile renderer, the CUDA block renderer) overrides the rules of its bases for the records it lists and
inherits the rest. Rule signatures:

* forward: ``rule(renderer, let, args)``
* adjoint: ``rule(renderer, let, args, adj_args, adj_results)``
* replay: ``rule(renderer, let, args)``

where ``args`` / ``adj_args`` / ``adj_results`` hold the C++ expressions of the operands, their adjoints and the
adjoints of the results.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..ops import registry
from ..ops.registry import Op

Rule = Callable[..., None]


class RuleTable:
    """Rules of one transformation added by one renderer class."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._rules: dict[Op, Rule] = {}

    def add(self, ops: Op | Iterable[Op], rule: Rule) -> None:
        for op in [ops] if isinstance(ops, Op) else ops:
            self._rules[op] = rule

    def get(self, op: Op) -> Rule | None:
        return self._rules.get(op)

    def ops(self) -> list[Op]:
        return list(self._rules)

    def __len__(self) -> int:
        return len(self._rules)


def ops(name: str, domain: str | None = None) -> list[Op]:
    """The op records a rule is registered for (all overloads of ``name`` in ``domain``)."""
    return registry.records(name, domain)


def lookup(renderer_class: type, table: str, op: Op) -> Rule | None:
    """The rule for ``op`` in the nearest class (method-resolution order) whose ``table`` lists it."""
    cache = _cache.setdefault((renderer_class, table), {})
    try:
        return cache[op]
    except KeyError:
        pass
    found = None
    for klass in renderer_class.__mro__:
        rules = klass.__dict__.get(table)
        if rules is not None:
            found = rules.get(op)
            if found is not None:
                break
    cache[op] = found
    return found


_cache: dict[tuple[type, str], dict[Op, Rule | None]] = {}
