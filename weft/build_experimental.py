"""Warp's experimental external-compilation API (``warp.build_experimental``): ``add_builtin`` registers a C++
function, defined by the program (usually in a ``wp.ModuleBuildOptions`` preamble), as the kernel builtin
``wp.<name>``.

weft makes each registered function a native function (``wp.func_native``) whose body calls the C++ function by its
exact qualified name (``wp::<name>`` by default, looked up from the global namespace, as the preamble declares it),
with the declared parameter and result types; it is not differentiable and cannot be called from Python, as in Warp.
One signature per name: registering the same contract again returns the existing builtin, another signature under
the same name is an error. ``add_native_type`` (external C++ value types) is not available in weft.
"""

from __future__ import annotations

import linecache
import re
import sys
from collections.abc import Mapping

from .frontend.func import make_func
from .frontend.native import NativeFunc

__all__ = ["add_builtin"]

_NATIVE_NAME = re.compile(r"^(?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*$")
_registered: dict[str, tuple] = {}


class ExternalBuiltin(NativeFunc):
    """A kernel builtin backed by an external C++ function (``add_builtin``); kernels only."""

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"wp.{self.__name__} is an external C++ builtin (build_experimental.add_builtin): it can "
                           "be called from kernels only")


def add_builtin(name: str, input_types: Mapping | None = None, value_type=None, *, native_name: str | None = None,
                doc: str = ""):
    """Make the C++ function ``native_name`` (default ``wp::<name>``) callable in kernels as ``wp.<name>(...)``
    with parameters ``input_types`` (name -> weft type, in order) and result ``value_type`` (None: void).
    Returns the builtin."""
    weft = sys.modules["weft"]
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"name must be a valid Python identifier, got {name!r}")
    if input_types is None:
        input_types = {}
    if not isinstance(input_types, Mapping):
        raise TypeError(f"input_types must be a mapping or None, got {type(input_types).__name__}")
    if not all(isinstance(p, str) and p.isidentifier() for p in input_types):
        raise ValueError("input_types keys must be valid Python identifiers")
    if not isinstance(doc, str):
        raise TypeError(f"doc must be a str, got {type(doc).__name__}")
    if native_name is None:
        native_name = f"wp::{name}"
    if not isinstance(native_name, str) or not _NATIVE_NAME.fullmatch(native_name):
        raise ValueError(f"native_name must be a qualified C++ identifier, got {native_name!r}")
    contract = (tuple((p, repr(t)) for p, t in input_types.items()), repr(value_type), native_name)
    if name in _registered:
        existing, known = _registered[name]
        if known == contract:
            return existing
        raise RuntimeError(f"Cannot register conflicting external builtin overload '{name}' with input types "
                           f"{dict(input_types)!r} (weft keeps one signature per external builtin)")
    if name in vars(weft) and name not in _registered:
        raise ValueError(f"add_builtin: wp.{name} already exists in weft")
    params = list(input_types)
    symbol = native_name if native_name.startswith("::") else "::" + native_name
    call = f"{symbol}({', '.join(params)})"
    snippet = f"return {call};" if value_type is not None else f"{call};"
    ns = {f"_T{i}": t for i, t in enumerate(input_types.values())}
    ns["_R"] = value_type
    sig = ", ".join(f"{p}: _T{i}" for i, p in enumerate(params))
    source = f"def {name}({sig}){' -> _R' if value_type is not None else ''}:\n    ...\n"
    filename = f"<weft external builtin {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # weft reads the source
    exec(compile(source, filename, "exec"), ns)  # noqa: S102 - the stub declaring the typed signature
    stub = ns[name]
    stub.__doc__ = doc or f"External C++ function {native_name}."
    builtin = make_func(stub, cls=ExternalBuiltin, snippet=snippet)
    _registered[name] = (builtin, contract)
    setattr(weft, name, builtin)
    if name not in weft.__all__:
        weft.__all__.append(name)  # a public name of weft now (the API table of tests/docs checks the two agree)
    return builtin
