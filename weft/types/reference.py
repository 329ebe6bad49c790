"""``wp.ref[T]``: a ``@wp.func`` parameter passed by reference (Warp 1.19's ``Reference``).

A call binds such a parameter to the caller's storage: a local, an array element, a struct field or a vector /
matrix component. Assignments to the parameter inside the function change that storage. weft inlines funcs, so
it lowers a reference as copy-in / copy-out: the argument's value goes in, and the parameter's final value is
stored back into the argument's place when the function returns (``frontend/calls.py``).
"""

from __future__ import annotations


class Reference:
    """The annotation ``wp.ref[T]``: ``dtype`` / ``value_type`` is ``T``."""

    __slots__ = ("value_type",)

    def __init__(self, value_type):
        self.value_type = value_type

    @property
    def dtype(self):
        return self.value_type

    def __eq__(self, other) -> bool:
        return isinstance(other, Reference) and self.value_type is other.value_type

    def __hash__(self) -> int:
        return hash((Reference, id(self.value_type)))

    def __repr__(self) -> str:
        name = getattr(self.value_type, "__name__", None) or repr(self.value_type)
        return f"wp.ref[{name}]"


class _RefFactory:
    """``wp.ref[T]`` builds the annotation."""

    def __getitem__(self, value_type) -> Reference:
        if isinstance(value_type, Reference):
            raise TypeError("wp.ref[wp.ref[T]] is not allowed: a reference refers to a value")
        return Reference(value_type)

    def __repr__(self) -> str:
        return "wp.ref"


ref = _RefFactory()


def is_reference(t) -> bool:
    return isinstance(t, Reference)
