"""The ``@wp.func`` object: a user function inlined into the kernels that call it."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable

from ..errors import CompileError, KernelTypeError, UnionAnnotationError
from ..ir import types as T
from ..types.mapping import check_not_array_value, to_ir, type_of_value
from ..types.reference import Reference
from .analysis import in_place_params
from .source import FunctionSource, capture, evaluate_annotation, remember_source
from .statics import declare as declare_statics


def reject_union_annotations(fn: Callable, what: str) -> None:
    """``a: X | Y`` / ``Union[X, Y]`` on a kernel or func parameter: an error now (a RuntimeError, as in Warp):
    kernel code needs one type per parameter."""
    import types

    for param, ann in getattr(fn, "__annotations__", {}).items():
        try:
            check_not_array_value(ann, f"{what} {fn.__name__} parameter '{param}'")
        except TypeError as exc:
            raise KernelTypeError(str(exc)) from None
        if typing.get_origin(ann) is typing.Union or isinstance(ann, types.UnionType):
            where = "the return type" if param == "return" else f"parameter '{param}'"
            raise UnionAnnotationError(f"{what} {fn.__name__}: {where} is annotated {ann!r}: Union type annotations "
                                       f"are only supported at Python scope, not in kernels or funcs")


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
        self._annotations: dict | None = None
        reject_union_annotations(func, "func")
        try:
            self.signature = inspect.signature(func)
        except (TypeError, ValueError):
            self.signature = None
        remember_source(func)
        declare_statics(func, lambda: self.source)

    @property
    def source(self) -> FunctionSource:
        if self._source is None:
            self._source = capture(self.func)
        return self._source

    @property
    def annotations(self) -> dict:
        """Parameter annotations; strings (``from __future__ import annotations``) evaluated as Warp does, in the
        function's globals and closure, so that they are type-checked like any other annotation."""
        if self._annotations is None:
            raw = {k: v for k, v in getattr(self.func, "__annotations__", {}).items() if k != "return"}
            self._annotations = {k: self._evaluate(v, f"parameter '{k}'") for k, v in raw.items()}
        return self._annotations

    @property
    def return_annotation(self):
        ann = getattr(self.func, "__annotations__", {}).get("return")
        return self._evaluate(ann, "the result")

    def _evaluate(self, ann, what: str):
        if not isinstance(ann, str):
            return ann
        try:
            return evaluate_annotation(self.func, ann)
        except Exception as exc:  # noqa: BLE001 - any failure is the user's annotation
            raise CompileError(f"cannot evaluate the annotation '{ann}' of {what} of func {self.__name__}: {exc}",
                               hint="string annotations (from `from __future__ import annotations`) are evaluated "
                                    "in the module's globals and the function's closure") from None

    @property
    def tile_ref_params(self) -> tuple[str, ...]:
        """Tile parameters (annotated ``wp.tile[...]``) the body changes in place without rebinding them: the
        changes reach the caller's variable (Warp passes tiles by reference)."""
        out = []
        for p in in_place_params(self.source.tree):
            try:
                ann = to_ir(self.annotations.get(p))
            except (TypeError, CompileError):
                continue
            if isinstance(ann, T.TileType):
                out.append(p)
        return tuple(out)

    @property
    def ref_params(self) -> tuple[str, ...]:
        """Parameters annotated ``wp.ref[T]`` (passed by reference)."""
        return tuple(k for k, v in self.annotations.items() if isinstance(v, Reference))

    def __call__(self, *args, **kwargs):
        """On the host: run the Python code of the overload whose annotated parameter types the arguments match
        (Warp's rule: a Python float is a float32, an int an int32); ``RuntimeError`` if none does."""
        if len(self.overloads) == 1 and not kwargs and self._host_accepts(args) is not False:
            return self.func(*args, **kwargs)
        for strict in (True, False):
            for ov in self.overloads:
                ok = ov._host_accepts(args, strict) if not kwargs else True
                if ok:
                    return ov.func(*args, **kwargs)
        raise RuntimeError(f"Error calling function '{self.__name__}', no overload found for arguments {args!r}")

    @property
    def defaults(self) -> dict:
        """Warp's ``func.defaults``: {parameter: default value}. Assigning to it, or to one of its keys, changes the
        function's defaults (as if written in its signature)."""
        return _Defaults(self)

    @defaults.setter
    def defaults(self, values: dict) -> None:
        _set_defaults(self, dict(values))

    def get_overload(self, arg_types, kwarg_types=None):
        """The overload whose annotated parameter types are ``arg_types`` (then ``kwarg_types`` by name), or None."""
        wanted = [to_ir(t) for t in arg_types]
        by_name = {k: to_ir(t) for k, t in (kwarg_types or {}).items()}
        for ov in self.overloads:
            params = list(ov.signature.parameters) if ov.signature is not None else []
            anns = ov.annotations
            try:
                have = [to_ir(anns[p]) for p in params[:len(wanted)]]
                named = {k: to_ir(anns[k]) for k in by_name}
            except (KeyError, TypeError):
                continue
            if len(params) >= len(wanted) and have == wanted and named == by_name:
                return ov
        return None

    def _host_accepts(self, args, strict: bool = True) -> bool:
        """Whether host values ``args`` fit this overload's annotations (unknown annotations accept anything;
        non-strict: an int also fits a float parameter)."""
        params = list(self.signature.parameters) if self.signature is not None else []
        if len(args) > len(params):
            return False
        try:
            anns = self.annotations
        except CompileError:
            return True
        for p, value in zip(params, args):
            ann = anns.get(p)
            if ann is None or isinstance(ann, Reference):
                continue
            if not _host_value_fits(value, ann, strict):
                return False
        return True

    def __repr__(self) -> str:
        return f"<weft func {self.key}>"


class _Defaults(dict):
    """A func's parameter defaults; setting a key sets that default."""

    def __init__(self, f: Func):
        sig = f.signature
        super().__init__({k: p.default for k, p in sig.parameters.items() if p.default is not inspect.Parameter.empty}
                         if sig is not None else {})
        self._func = f

    def __setitem__(self, key, value) -> None:
        super().__setitem__(key, value)
        _set_defaults(self._func, dict(self))


def _set_defaults(f: Func, values: dict) -> None:
    """Give ``f``'s Python function the defaults ``values`` (trailing positional parameters, keyword-only ones)."""
    params = list(inspect.signature(f.func).parameters.values())
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    unknown = set(values) - {p.name for p in params}
    if unknown:
        raise KeyError(f"func {f.__name__} has no parameter named {', '.join(sorted(unknown))}")
    first = next((i for i, p in enumerate(positional) if p.name in values), len(positional))
    missing = [p.name for p in positional[first:] if p.name not in values]
    if missing:
        raise ValueError(f"func {f.__name__}: parameter '{missing[0]}' follows one with a default and needs one too")
    f.func.__defaults__ = tuple(values[p.name] for p in positional[first:]) or None
    f.func.__kwdefaults__ = {p.name: values[p.name] for p in params if p.kind == p.KEYWORD_ONLY and p.name in values} \
        or None
    f.signature = inspect.signature(f.func)


def _host_value_fits(value, ann, strict: bool) -> bool:
    if ann is Func:  # a wp.Function parameter takes a @wp.func or a kernel builtin, not any Python callable
        return isinstance(value, Func) or isinstance(getattr(value, "_wp_kernel_builtin_", None), str)
    try:
        want = to_ir(ann)
    except TypeError:
        return True
    if isinstance(want, T.GenericType) or not isinstance(want, (T.ScalarType, T.VectorType, T.MatrixType)):
        return True
    try:
        got = type_of_value(value)
    except TypeError:
        return True
    if got == want:
        return True
    return not strict and isinstance(want, T.ScalarType) and want.is_float and isinstance(value, int) \
        and not isinstance(value, bool)


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
    module_name = None if module is None or module == "unique" else (
        module if isinstance(module, str) else getattr(module, "name", None) or getattr(module, "__name__", None))

    def declare(fn):
        out = make_func(fn, key=name)
        if module_name is not None:  # the module object the func belongs to (Warp's func.module)
            for ov in out.overloads:
                if ov.func is fn:
                    ov._module_name = module_name
        return out

    return declare if f is None else declare(f)


def func_sets() -> dict[str, Func]:
    """Every ``@wp.func`` overload set by key (Warp's registry of user functions)."""
    return dict(_FUNCS)


#: called with the key of an overload set that changed after kernels may have used it (an overload added or
#: redefined, e.g. by ``importlib.reload`` of its module): the runtime drops what those kernels compiled
_CHANGE_LISTENERS: list[Callable[[str], None]] = []


def on_func_change(callback: Callable[[str], None]) -> None:
    """Register ``callback(key)``, called when an existing ``@wp.func`` overload set changes."""
    _CHANGE_LISTENERS.append(callback)


def make_func(fn: Callable, key: str | None = None, cls: type | None = None, **extra) -> Func:
    """Create or extend an overload set: a second ``@wp.func`` with the same name adds an overload."""
    new = (cls or Func)(fn, key=key, **extra)
    existing = _FUNCS.get(new.key)
    if existing is not None and _sig_key(existing) != _sig_key(new):
        _check_refness(existing, new)
        existing.overloads = [f for f in existing.overloads if _sig_key(f) != _sig_key(new)] + [new]
        _changed(new.key)
        return existing
    if existing is not None:  # the first overload redefined: the others stay (as in Warp)
        new.overloads = [new] + [f for f in existing.overloads if _sig_key(f) != _sig_key(new)]
    _FUNCS[new.key] = new
    if existing is not None:
        _changed(new.key)
    return new


def _changed(key: str) -> None:
    for callback in _CHANGE_LISTENERS:
        callback(key)


def _raw_annotations(f: Func) -> dict:
    return {k: v for k, v in getattr(f.func, "__annotations__", {}).items() if k != "return"}


def _sig_key(f: Func) -> tuple:
    return tuple((k, repr(v)) for k, v in _raw_annotations(f).items())


def _check_refness(existing: Func, new: Func) -> None:
    """Overloads may not differ only in which parameters are ``wp.ref[T]`` (a call could not choose between them)."""
    def plain(f: Func):
        return tuple(repr(v.value_type if isinstance(v, Reference) else v) for v in _raw_annotations(f).values())

    if not any(isinstance(v, Reference) for f in (*existing.overloads, new) for v in _raw_annotations(f).values()):
        return
    for f in existing.overloads:
        if plain(f) == plain(new):
            raise CompileError(f"overloads of {new.__name__}() differ only in wp.ref[T] parameters: a call cannot "
                               "choose between them", hint="give the reference version another name")
