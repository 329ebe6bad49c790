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
                            f"'{', '.join(type(a).__name__ for a in args)}'")
    op, results, typed = found
    if not results:
        raise Error(f"wp.{name}() cannot be called from Python (it has no result)")
    key = (name, typed)
    kern = _cache.get(key)
    if kern is None:
        kern = _cache[key] = _make_kernel(op, typed, tuple(results))
    return kern(args)


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
        got = tuple(to_host_value(t, o.numpy()[0]) for t, o in zip(self.result_types, outs))
        return got[0] if len(got) == 1 else got


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
