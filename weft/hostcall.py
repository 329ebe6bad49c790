"""Builtins called from Python: run the native op on one element through a tiny cached kernel.

This gives host calls exactly the semantics of kernel code (``wp.quat_rotate(q, v)`` on the host computes what
the same call computes in a kernel), for every builtin, without a second implementation.
"""

from __future__ import annotations

import numpy as np

from . import config, pipeline
from .errors import Error, HostCallError
from .ir import types as T
from .ir.builder import Builder
from .ir.nodes import Call, Const, Function, Var, VarKind
from .ir.verify import verify
from .ops import registry
from .types.composite import class_for
from .types.dtypes import to_host_value
from .types.mapping import type_of_value
from .typing.resolve import Weak, resolve

_cache: dict[tuple, object] = {}


def call_on_host(name: str, args):
    types = []
    for a in args:
        if isinstance(a, (bool, int, float)) and not isinstance(a, np.generic):
            types.append(Weak(a))
        else:
            try:
                types.append(type_of_value(a))
            except TypeError:
                raise Error(f"wp.{name}(): cannot pass a {type(a).__name__} from Python") from None
    found = resolve(name, tuple(types))
    if found is None:
        raise HostCallError(f"Couldn't find a function '{name}' compatible with the arguments "
                            f"'{', '.join(_type_name(a) for a in args)}'")
    op, results, typed = found
    if not results:
        raise Error(f"wp.{name}() cannot be called from Python (it has no result)")
    key = (name, typed)
    kern = _cache.get(key)
    if kern is None:
        kern = _cache[key] = _make_kernel(op, typed, tuple(results))
    return kern(args)


def _type_name(a) -> str:
    ir = getattr(type(a), "_ir_", None)  # a host scalar (wp.float64(x) is a float64_value): its type's name
    return ir.name if isinstance(ir, T.ScalarType) else type(a).__name__


class _HostKernel:
    def __init__(self, spec, arg_types, result_types):
        self.spec = spec
        self.arg_types = arg_types
        self.result_types = result_types

    def __call__(self, args):
        """The builtin's result, or the tuple of its results (``axis, angle = wp.quat_to_axis_angle(q)``)."""
        from .runtime.array import zeros
        from .runtime.launch import _run

        outs = [zeros(1, dtype=class_for(t)) for t in self.result_types]
        values = list(args) + outs
        packed = self.spec.pack(values)
        _run(self.spec, packed, (1,), outs[0].device, values)
        got = tuple(host_result(t, o.numpy()[0]) for t, o in zip(self.result_types, outs))
        return got[0] if len(got) == 1 else got


#: result types a host call returns as Python numbers (Warp's "native" scalar types); other scalar results are
#: weft's host scalars of their type (NumPy scalars), as Warp returns its own scalar instances for them
_PYTHON_RESULTS = (T.FLOAT32, T.INT32, T.BOOL)


def host_result(t: T.Type, raw):
    """The value a host call returns for a result of IR type ``t``: Warp's types (a float32, int32 or bool result is
    a Python ``float`` / ``int`` / ``bool``; other scalars keep their type; ``wp.config.legacy_scalar_return_types``
    makes every scalar a Python number)."""
    if not isinstance(t, T.ScalarType):
        return to_host_value(t, raw)
    if t in _PYTHON_RESULTS or config.legacy_scalar_return_types:
        return raw.item() if hasattr(raw, "item") else raw
    return class_for(t)(raw)


def _python_number(a) -> bool:
    return isinstance(a, (bool, int, float)) and not isinstance(a, np.generic)


def numpy_result(args, out):
    """The value a builtin computed by its NumPy implementation returns: Python numbers in give a Python number
    (Warp types a Python float as float32 and returns float32 results as Python floats), otherwise a NumPy
    scalar result follows :func:`host_result` for its dtype."""
    if isinstance(out, np.ndarray) and out.ndim == 0:
        out = out[()]
    if not isinstance(out, np.generic):
        return out
    if all(_python_number(a) for a in args):
        return out.item()
    t = next((t for t in T.SCALARS if t.np_dtype == out.dtype), None)
    return out if t is None else host_result(t, out)


def _make_kernel(op, arg_types, result_types):
    import ctypes

    from .kernel import Spec
    from .runtime.packing import make_packer, padding_plan

    b = Builder()
    params = [Var(t, f"a{i}", VarKind.PARAM) for i, t in enumerate(arg_types)]
    out_ts = [T.ArrayType(t, 1) for t in result_types]
    outs = [Var(t, f"out{k}", VarKind.PARAM) for k, t in enumerate(out_ts)]
    res = b.let(Call(op), tuple(params), tuple(result_types))
    for out, out_t, r, t in zip(outs, out_ts, res, result_types):
        store = registry.resolve("store", (out_t, T.INT32, t))[0]
        b.let(Call(store), (out, Const(0, T.INT32), r), ())
    fn = Function(f"host_{op.name}", params + outs, b.blocks[0], b.locals)
    if config.verify_ir:
        verify(fn)
    # the same stages and compile options (config.cpu_compile_flags, optimisation level) as kernels
    source = pipeline.render_module(fn, fn.name, False, pipeline.Target.CPU, pipeline.Direction.FORWARD).source
    lib = pipeline.build(source, fn.name, False)
    types = tuple(arg_types) + tuple(out_ts)
    spec = Spec(kernel=None, types=types, _fn=fn, tid_arity=1, _source=source, debug=False)
    spec.packers = [make_packer(t, lambda i=i: f"wp.{op.name}() argument {i}") for i, t in enumerate(types)]
    spec.pads, spec.tail, _ = padding_plan(types)
    spec.written = tuple(range(len(arg_types), len(types)))
    spec.fwd = lib.weft_fwd
    spec.fwd.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int32, ctypes.c_int32]
    spec.fwd.restype = ctypes.c_int32
    spec.lib = lib
    return _HostKernel(spec, arg_types, result_types)
