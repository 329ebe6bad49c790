"""What a lowered kernel depends on, so a warm start can reuse the lowering of an earlier process.

While lowering, the frontend records every Python value it resolved statically: a global or closure name, a
dotted attribute path, a ``wp.static`` expression, each with a fingerprint of the value (numbers by value, funcs
by their source text and annotations, types by their IR, modules by name). A later process re-resolves the same
names in the same functions and compares fingerprints; only if all match is the recorded result reused. A value
that cannot be fingerprinted makes the kernel uncacheable (it is simply lowered every time).
"""

from __future__ import annotations

import builtins
import hashlib
import linecache
import types as pytypes
import typing

import numpy as np

from ..ir import types as T
from . import statics


def source_text(fn) -> str | None:
    """The source lines of a Python function, located through its code positions (no tokenizer)."""
    code = getattr(fn, "__code__", None)
    if code is None or not hasattr(code, "co_positions"):
        return None
    lines = linecache.getlines(code.co_filename)
    if not lines:
        return None
    first = code.co_firstlineno
    last = first
    for pos in code.co_positions():
        if pos[1] is not None and pos[1] > last:
            last = pos[1]
    return "".join(lines[first - 1:last])


def scope_key(fn) -> str:
    """Names a function across processes. Not its file: the same code in a copied script or a re-run notebook cell
    (a new file name) is the same scope; generated code that shows a file path is checked by the caller."""
    code = fn.__code__
    return f"{fn.__module__}:{fn.__qualname__}:{code.co_firstlineno}"


def _func_fingerprint(f) -> str | None:
    from .func import Func

    parts = []
    for ov in f.overloads:
        for g in (ov, ov.custom_grad, ov.custom_replay):
            if g is None:
                parts.append("-")
                continue
            text = source_text(g.func)
            if text is None:
                return None
            anns = [(k, fingerprint(v)) for k, v in g.annotations.items()]
            if any(a is None for _, a in anns):
                return None
            defaults = [fingerprint(d) for d in (g.func.__defaults__ or ())]
            if any(d is None for d in defaults):
                return None
            parts.append(repr((scope_key(g.func), text, anns, defaults)))
    if not isinstance(f, Func):
        return None
    return "func:" + hashlib.sha256("\n".join(parts).encode()).hexdigest()


def fingerprint(v) -> str | None:
    """A string that changes whenever ``v`` would lower differently; None if ``v`` cannot be fingerprinted."""
    from .func import Func

    if v is None or isinstance(v, (bool, int, float, complex, str)):
        return f"{type(v).__name__}:{v!r}"
    if isinstance(v, np.generic):
        return f"np:{v.dtype}:{v.item()!r}"
    if isinstance(v, pytypes.ModuleType):
        return f"module:{v.__name__}"
    if isinstance(v, Func):
        return _func_fingerprint(v)
    if getattr(v, "_wp_is_kernel_", False):
        return f"kernel:{getattr(v, '_full_key', v.key)}"
    if v is typing.Any:
        return "typing.Any"
    if getattr(v, "_wp_adjoint_marker_", False):
        return "wp.adjoint"
    ir = getattr(v, "_ir_", None)
    if isinstance(ir, T.Type):
        return f"type:{ir!r}"
    if isinstance(v, type) and getattr(v, "_ir_", "x") is None:  # wp.Scalar / wp.Float / wp.Int
        return f"generic:{v.__qualname__}"
    if getattr(v, "_annotation", False) and callable(getattr(v, "_annotation_ir", None)):
        return f"annotation:{v._annotation_ir()!r}"
    name = getattr(v, "_wp_kernel_builtin_", None)
    if isinstance(name, str) and callable(v):
        return f"builtin:{name}"
    if isinstance(v, (pytypes.BuiltinFunctionType, type)) and getattr(builtins, getattr(v, "__name__", ""), None) is v:
        return f"py:{v.__name__}"
    if type(v).__name__ == "_ArrayNd":
        return f"arraynd:{v.ndim}"
    if isinstance(v, (tuple, list)):
        parts = [fingerprint(x) for x in v]
        return None if any(p is None for p in parts) else f"{type(v).__name__}:({','.join(parts)})"
    return None


class DepRecorder:
    """The static resolutions made while lowering one kernel, in order."""

    def __init__(self) -> None:
        self.deps: list[tuple[str, str, str, str]] = []
        self.ok = True

    def add(self, fn, kind: str, key: str, value) -> None:
        if not self.ok:
            return
        fp = fingerprint(value)
        if fp is None:
            self.ok = False
            return
        self.deps.append((scope_key(fn), kind, key, fp))

    def fail(self) -> None:
        self.ok = False


def _namespace(fn) -> tuple[dict, dict]:
    closure = {}
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                closure[name] = cell.cell_contents
            except ValueError:
                pass
    return fn.__globals__, closure


_MISSING = object()


def _resolve(fn, kind: str, key: str):
    if kind == "declared":  # a wp.static() evaluated when fn was declared (weft.frontend.statics)
        value = statics.declared_value(fn, key)
        return _MISSING if value is statics.MISSING else value
    globals_, closure = _namespace(fn)
    if kind == "eval":
        env = dict(globals_)
        env.update(closure)
        return eval(compile(key, "<weft-static>", "eval"), env)  # the user's own expression
    names = key.split(".")
    head = names[0]
    if head in closure:
        value = closure[head]
    elif head in globals_:
        value = globals_[head]
    elif hasattr(builtins, head):
        value = getattr(builtins, head)
    else:
        return _MISSING
    for attr in names[1:]:
        value = getattr(value, attr)
    return value


def verify(kernel_fn, deps) -> bool:
    """Whether every recorded resolution gives a value with the same fingerprint in this process."""
    return verified_scopes(kernel_fn, deps) is not None


def verified_scopes(kernel_fn, deps) -> dict | None:
    """The functions (scope key -> function) the recorded resolutions walk through, if every one of them gives a value
    with the same fingerprint in this process; None otherwise."""
    from .func import Func

    scopes = {scope_key(kernel_fn): kernel_fn}
    for scope, kind, key, fp in deps:
        fn = scopes.get(scope)
        if fn is None:
            return None
        try:
            value = _resolve(fn, kind, key)
        except Exception:  # noqa: BLE001 - the expression or attribute no longer evaluates: lower afresh
            return None
        if value is _MISSING or fingerprint(value) != fp:
            return None
        if isinstance(value, Func):
            for ov in value.overloads:
                for g in (ov, ov.custom_grad, ov.custom_replay):
                    if g is not None:
                        scopes[scope_key(g.func)] = g.func
    return scopes
