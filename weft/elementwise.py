"""``wp.map(func, *inputs, out=None)``: apply a function to the elements of arrays (Warp's ``warp.map``).

``func`` is a ``@wp.func``, a kernel builtin (``wp.clamp``, ``wp.add`` ...), a Python function or a lambda (made
into a ``@wp.func``). The inputs are arrays (``wp.array``, ``wp.indexedarray``) or values passed to every call;
array shapes broadcast by NumPy's rules. The result types come from lowering the call with the inputs' element
types (``frontend/probe.py``); the outputs are allocated from them unless ``out`` gives them. One kernel is
generated per function, input kinds, element types, dimensionalities and broadcast pattern, and kept in
``map_cache`` (shapes of the same rank share it).
"""

from __future__ import annotations

import ast
import itertools
import linecache

import numpy as np

from .builtins import tid
from .errors import CompileError
from .frontend.deps import fingerprint
from .frontend.func import Func, make_func
from .frontend.probe import return_types
from .frontend.source import capture, closure_of
from .ir import types as T
from .kernel import Kernel
from .runtime.array import array, empty
from .runtime.fabric import fabricarray, indexedfabricarray
from .runtime.indexed import indexedarray
from .runtime.launch import launch
from .types.composite import class_for
from .types.mapping import to_ir, type_of_value

#: generated kernels: (function key, input descriptors, output kinds) -> (result IR types, kernel)
map_cache: dict = {}

#: the array families map takes (instances of subclasses count as their family)
_FAMILIES = {"indexedarray": indexedarray, "fabricarray": fabricarray, "indexedfabricarray": indexedfabricarray,
             "array": array}
_ARRAYS = tuple(_FAMILIES.values())


def _family(x) -> str:
    """The family name of an array (``"array"`` for plain arrays and their subclasses)."""
    for name, cls in _FAMILIES.items():
        if isinstance(x, cls):
            return name
    raise TypeError(f"not an array: {type(x).__name__}")

_serial = itertools.count()


def map(func, *inputs, out=None, return_kernel: bool = False, block_dim: int | None = None, device=None):
    """Map ``func`` over the elements of the array inputs (see the module docstring). Returns the output array (a
    list for a function with several results), or with ``return_kernel=True`` the generated kernel."""
    callee, name, key, n_params = _callee(func)
    if n_params is not None and n_params != len(inputs):
        raise TypeError(f"Number of input arguments ({len(inputs)}) does not match expected number of function "
                        f"arguments ({n_params})")
    descs, types = [], []
    for x in inputs:
        if isinstance(x, _ARRAYS):
            t = to_ir(x.dtype)
            descs.append(("array", _family(x), t, x.ndim, tuple(d == 1 for d in x.shape)))
            if device is None:
                device = x.device
        else:
            t = type_of_value(x)
            descs.append(("value", t))
        types.append(t)
    shapes = [x.shape for x in inputs if isinstance(x, _ARRAYS)]
    if not shapes:
        raise ValueError("map requires at least one warp.array input")
    out_shape = _broadcast(shapes)
    kinds = () if out is None else tuple(_family(o) if isinstance(o, _ARRAYS) else "array"
                                         for o in (out if isinstance(out, (list, tuple)) else [out]))
    out_kinds = kinds if any(k != "array" for k in kinds) else None  # regular arrays, given or allocated, share it
    cache_key = (key, tuple(descs), out_kinds)
    cached = map_cache.get(cache_key)
    if cached is None:
        results = _result_types(callee, name, types)
        kernel = _make_kernel(callee, name, inputs, types, results, out_shape, out_kinds)
        map_cache[cache_key] = cached = (results, kernel)
    results, kernel = cached
    outputs = _outputs(out, results, out_shape, inputs, device)
    if return_kernel:
        return kernel
    launch(kernel, dim=out_shape, inputs=list(inputs), outputs=outputs, device=device,
           **({"block_dim": block_dim} if block_dim is not None else {}))
    return outputs[0] if len(outputs) == 1 else outputs


# ---------------------------------------------------------------------- the function
def _callee(func):
    """(what kernel code calls, its name, a cache key, its parameter count or None)."""
    if isinstance(func, Func):
        return func, _key_name(func), ("func", func.key, id(func)), _n_params(func)
    builtin = getattr(func, "_wp_kernel_builtin_", None)
    if builtin is not None:
        return func, builtin, ("builtin", builtin), None
    if not callable(func):
        raise TypeError("func must be a callable function or a warp.Function")
    if getattr(func, "__name__", "") == "<lambda>":
        f, body = _lambda_func(func)
        parts = [fingerprint(v) for v in closure_of(func).values()]
        ident = tuple(parts) if all(p is not None for p in parts) else id(func.__code__)
        return f, _key_name(f), ("lambda", func.__module__, func.__qualname__, body, ident), _n_params(f)
    f = make_func(func)
    return f, _key_name(f), ("func", f.key, id(func)), _n_params(f)


def _n_params(f: Func) -> int | None:
    return len(f.signature.parameters) if f.signature is not None else None


def _key_name(f: Func) -> str:
    """Warp's spelling of a function's name (``outer.<locals>.f`` -> ``outer__locals__f``)."""
    name = getattr(f.func, "__qualname__", f.__name__)
    return name.replace(".<locals>.", "__locals__").replace(".", "__").replace("<", "").replace(">", "")


def _lambda_func(fn) -> tuple[Func, str]:
    """A lambda as a ``@wp.func``: its body, found in its file's syntax tree, becomes ``return <body>`` of a named
    function whose globals are the lambda's globals and closure."""
    code = fn.__code__
    lines = linecache.getlines(code.co_filename)
    node = None
    if lines:
        try:
            tree = ast.parse("".join(lines))
        except SyntaxError:
            tree = None
        params = list(code.co_varnames[:code.co_argcount])
        for cand in ast.walk(tree) if tree is not None else ():
            if isinstance(cand, ast.Lambda) and cand.lineno == code.co_firstlineno \
                    and [a.arg for a in cand.args.args] == params:
                node = cand
                break
    if node is None:
        raise TypeError("wp.map: cannot read the source of this lambda; pass a @wp.func or a named function")
    name = f"map_lambda_{next(_serial)}"
    text = f"def {name}({', '.join(a.arg for a in node.args.args)}):\n    return {ast.unparse(node.body)}\n"
    key = f"({', '.join(a.arg for a in node.args.args)}) -> {ast.unparse(node.body)}"
    filename = f"<weft wp.map {fn.__qualname__} {name}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = {**fn.__globals__, **closure_of(fn)}
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102 - the user's own lambda body, as a def
    made = namespace[name]
    made.__qualname__ = fn.__qualname__
    made.__module__ = fn.__module__
    return make_func(made, key=f"{fn.__module__}.{fn.__qualname__}.{name}"), key


# ---------------------------------------------------------------------- types and shapes
def _broadcast(shapes) -> tuple[int, ...]:
    out = shapes[0]
    for s in shapes[1:]:
        try:
            out = np.broadcast_shapes(out, s)
        except ValueError:
            raise ValueError(f"Shapes {tuple(out)} and {tuple(s)} are not broadcastable") from None
    return tuple(int(d) for d in out)


def _type_name(t: T.Type) -> str:
    return str(t)


def _probe_source(callee, name: str, types) -> tuple:
    args = [f"a{i}" for i in range(len(types))]
    text = f"def map_probe_{name}({', '.join(f'{a}: __t{i}' for i, a in enumerate(args))}):\n" \
           f"    return __f({', '.join(args)})\n"
    return text, args


def _exec_generated(text: str, namespace: dict, fname: str):
    filename = f"<weft wp.map {fname} {next(_serial)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102 - generated from types and names only
    return namespace[fname]


def _result_types(callee, name: str, types) -> tuple[T.Type, ...]:
    text, args = _probe_source(callee, name, types)
    namespace = {"__f": callee, **{f"__t{i}": t for i, t in enumerate(types)}}
    probe = _exec_generated(text, namespace, f"map_probe_{name}")
    try:
        results = return_types(capture(probe), dict(zip(args, types)))
    except CompileError as exc:
        raise TypeError(f"Function {name} does not support the provided argument types "
                        f"{', '.join(_type_name(t) for t in types)} ({exc.message})") from None
    if not results:
        raise TypeError("The provided function must return a value")
    return results


def _make_kernel(callee, name: str, inputs, types, results, out_shape, out_kinds) -> Kernel:
    tids = [f"__tid_{i}" for i in range(len(out_shape))]
    params, loads, args = [], [], []
    namespace: dict = {"__f": callee, **{f"__{k}": v for k, v in _FAMILIES.items()}}
    for i, (x, t) in enumerate(zip(inputs, types)):
        namespace[f"__t{i}"] = t
        if isinstance(x, _ARRAYS):
            kind = f"__{_family(x)}"
            params.append(f"a{i}_array: {kind}(dtype=__t{i}, ndim={x.ndim})")
            idx = [("0" if d == 1 else tids[len(tids) - x.ndim + k]) for k, d in enumerate(x.shape)]
            loads.append(f"    a{i} = a{i}_array[{', '.join(idx)}]")
        else:
            params.append(f"a{i}: __t{i}")
        args.append(f"a{i}")
    for k, r in enumerate(results):
        namespace[f"__r{k}"] = r
        kind = f"__{out_kinds[k]}" if out_kinds is not None and k < len(out_kinds) else "__array"
        params.append(f"__out_{k}: {kind}(dtype=__r{k}, ndim={len(out_shape)})")
    at = ", ".join(tids)
    body = [f"    {at} = __tid()", *loads]
    outs = [f"__o_{k}" for k in range(len(results))]
    body.append(f"    {', '.join(outs)} = __f({', '.join(args)})")
    body += [f"    __out_{k}[{at}] = __o_{k}" for k in range(len(results))]
    fname = f"map_{name}"
    text = f"def {fname}({', '.join(params)}):\n" + "\n".join(body) + "\n"
    namespace["__tid"] = tid
    fn = _exec_generated(text, namespace, fname)
    return Kernel(fn, key=fname)


def _outputs(out, results, out_shape, inputs, device) -> list:
    names = ", ".join(_type_name(r) for r in results)
    if out is None:
        rg = any(getattr(x, "requires_grad", False) for x in inputs if isinstance(x, _ARRAYS))
        return [empty(out_shape, dtype=class_for(r) if not isinstance(r, T.StructType) else r.pyclass,
                      device=device, requires_grad=rg and T.is_differentiable_type(r)) for r in results]
    if len(results) == 1 and isinstance(out, _ARRAYS):
        outs = [out]
    elif len(results) > 1 and isinstance(out, (list, tuple)):
        if len(out) != len(results):
            raise TypeError(f"Number of provided output arrays ({len(out)}) does not match expected number of "
                            f"function outputs ({len(results)})")
        outs = list(out)
    elif len(results) > 1:
        raise TypeError(f"Invalid output provided, expected {len(results)} Warp arrays with shape {out_shape} and "
                        f"dtypes ({names})")
    else:
        outs = list(out)
    for k, (o, r) in enumerate(zip(outs, results)):
        which = "Output array" if len(results) == 1 else f"Output array {k}"
        if to_ir(o.dtype) != r:
            raise TypeError(f"{which} dtype {_type_name(to_ir(o.dtype))} does not match expected dtype "
                            f"{_type_name(r)}")
        if tuple(o.shape) != out_shape:
            raise TypeError(f"{which} shape {tuple(o.shape)} does not match expected shape {out_shape}")
    return outs



# ---------------------------------------------------------------------- array arithmetic (Warp's array operators)
def _binary(builtin: str, reflected: bool = False, in_place: bool = False):
    def op(self, other):
        import weft

        fn = getattr(weft, builtin)
        if in_place:
            map(fn, self, other, out=self)
            return self
        return map(fn, other, self) if reflected else map(fn, self, other)
    op.__name__ = f"__{'r' if reflected else 'i' if in_place else ''}{builtin}__"
    return op


def _unary(builtin: str):
    def op(self):
        import weft

        return map(getattr(weft, builtin), self)
    return op


def install_array_operators(*classes) -> None:
    """Element-wise ``+ - * / // % **`` (and reflected / in-place forms) and unary ``-`` / ``+`` on arrays, computed
    by ``wp.map`` with the kernel builtins (so ``int32 / int32`` is Warp's integer division, and the operations are
    recorded on a Tape)."""
    names = {"add": "add", "sub": "sub", "mul": "mul", "truediv": "div", "floordiv": "floordiv", "pow": "pow",
             "mod": "mod"}
    for cls in classes:
        for dunder, builtin in names.items():
            setattr(cls, f"__{dunder}__", _binary(builtin))
            setattr(cls, f"__r{dunder}__", _binary(builtin, reflected=True))
            setattr(cls, f"__i{dunder}__", _binary(builtin, in_place=True))
        cls.__neg__ = _unary("neg")
        cls.__pos__ = _unary("pos")
        # NumPy scalars (weft's scalar values are NumPy scalars) defer to these operators: np.float32(5) + a
        # is a weft array, as in Warp; NumPy functions still convert arrays through __array__
        cls.__array_priority__ = 1000.0


install_array_operators(array, indexedarray, fabricarray, indexedfabricarray)
