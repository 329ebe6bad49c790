"""The ``@wp.func`` object: a user function inlined into the kernels that call it."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable

from .source import FunctionSource, capture


class Func:
    """A device function. Calling it from a kernel inlines it; calling it on the host runs the Python code."""

    def __init__(self, func: Callable, key: str | None = None, native_snippet=None):
        self.func = func
        self.key = key or f"{func.__module__}.{func.__qualname__}"
        self.__name__ = func.__name__
        self.__doc__ = func.__doc__
        self.__wrapped__ = func
        self.overloads: list[Func] = [self]
        self.custom_grad: Func | None = None
        self.custom_replay: Func | None = None
        #: how a call is lowered when a custom gradient or replay is attached: the rule of the layer that attached
        #: them (``autodiff.custom.lower_custom_call``, which marks the call for the reverse sweep)
        self.custom_lowering: Callable | None = None
        self._source: FunctionSource | None = None
        try:
            self.signature = inspect.signature(func)
        except (TypeError, ValueError):
            self.signature = None

    @property
    def source(self) -> FunctionSource:
        if self._source is None:
            self._source = capture(self.func)
        return self._source

    @property
    def annotations(self) -> dict:
        return {k: v for k, v in getattr(self.func, "__annotations__", {}).items() if k != "return"}

    def __call__(self, *args, **kwargs):
        return self.func(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<weft func {self.key}>"


_FUNCS: dict[str, Func] = {}


_P = typing.ParamSpec("_P")
_R = typing.TypeVar("_R")


@typing.overload
def func(f: Callable[_P, _R]) -> Callable[_P, _R]:
    ...


@typing.overload
def func(f: None = None, *, name: str | None = None, module=None,
         inline: bool | None = None) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    ...


def func(f: Callable | None = None, *, name: str | None = None, module=None, inline: bool | None = None):
    """``@wp.func`` or ``@wp.func(name=..., module=..., inline=...)``: a device function, inlined into the kernels
    that call it. ``name`` sets its registration key (functions with one key form an overload set); ``module``
    and ``inline`` are accepted for Warp programs: weft compiles each kernel with the functions it calls as one
    unit and always inlines them."""
    if inline is not None and not isinstance(inline, bool):
        raise TypeError(f"inline must be a bool or None, got {type(inline).__name__}: {inline!r}")
    if f is None:
        return lambda fn: make_func(fn, key=name)
    return make_func(f, key=name)


def make_func(fn: Callable, key: str | None = None) -> Func:
    """Create or extend an overload set: a second ``@wp.func`` with the same name adds an overload."""
    new = Func(fn, key=key)
    existing = _FUNCS.get(new.key)
    if existing is not None and _sig_key(existing) != _sig_key(new):
        existing.overloads = [f for f in existing.overloads if _sig_key(f) != _sig_key(new)] + [new]
        return existing
    _FUNCS[new.key] = new
    return new


def _sig_key(f: Func) -> tuple:
    return tuple((k, repr(v)) for k, v in f.annotations.items())
