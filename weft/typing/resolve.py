"""Overload resolution with weak literals: ``x * 2`` with ``x: float64`` types the ``2`` as float64.

Python literals in kernel code are *weak* (as in JAX): they take the scalar type of the strong operands they
meet. Strong values never convert implicitly; narrowing or mixing needs an explicit cast.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import types as T
from ..ops import registry


@dataclass(frozen=True, slots=True)
class Weak:
    """A Python literal that has not been given a type yet."""

    value: object

    @property
    def default_type(self) -> T.ScalarType:
        if isinstance(self.value, bool):
            return T.BOOL
        if isinstance(self.value, int):
            return T.INT32
        return T.FLOAT32

    def fits(self, target: T.Type) -> bool:
        """Whether this literal may take scalar type ``target``."""
        if not isinstance(target, T.ScalarType):
            return False
        if isinstance(self.value, bool):
            return True
        if isinstance(self.value, int):
            return True
        return target.is_float


def describe(arg_types) -> str:
    return ", ".join(str(t) if not isinstance(t, Weak) else f"literal {t.value!r}" for t in arg_types)


def resolve(name: str, args: tuple, attrs: tuple = ()):
    """Resolve op ``name`` for ``args`` (IR types or :class:`Weak` literals).

    Returns ``(op, result_types, arg_types)`` where ``arg_types`` are the types the weak literals took,
    or None when no overload applies.
    """
    strong = [a for a in args if not isinstance(a, Weak)]
    candidates: list[tuple] = []
    if len(strong) == len(args):
        candidates.append(tuple(args))
    else:
        # Give every weak literal the scalar type of the strong operands, trying each distinct one.
        scalars: list[T.ScalarType] = []
        for t in strong:
            s = T.scalar_of(t)
            if s is None and isinstance(t, (T.TileType, T.ArrayType)):
                s = T.scalar_of(t.dtype)
            if s is not None and s not in scalars:
                scalars.append(s)
        for s in scalars:
            if all(a.fits(s) for a in args if isinstance(a, Weak)):
                candidates.append(tuple(s if isinstance(a, Weak) else a for a in args))
        candidates.append(tuple(a.default_type if isinstance(a, Weak) else a for a in args))
        # a float literal next to an int operand cannot narrow; ints next to floats may widen
        if any(isinstance(a, Weak) and isinstance(a.value, int) for a in args):
            candidates.append(tuple(T.FLOAT32 if isinstance(a, Weak) and isinstance(a.value, int)
                                    and not isinstance(a.value, bool) else
                                    (a.default_type if isinstance(a, Weak) else a) for a in args))
    seen = set()
    for cand in candidates:
        if cand in seen:
            continue
        seen.add(cand)
        found = registry.resolve(name, cand, attrs)
        if found is not None:
            op, results = found
            return op, results, cand
    return None
