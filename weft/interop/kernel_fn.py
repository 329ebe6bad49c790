"""Framework-neutral helpers of the autodiff wrappers: dtype hints from annotations, one-kernel runners."""

from __future__ import annotations

import inspect

from ..ir import types as T
from ..runtime.array import array as _WeftArray
from ..runtime.array import zeros as _wp_zeros
from ..runtime.launch import launch
from ..types.composite import class_for


def param_dtypes(fn) -> dict[str, T.Type]:
    """Weft dtypes named by ``fn``'s ``wp.array(dtype=...)`` annotations (to view ``(n, 3)`` tensors as vec3)."""
    out: dict[str, T.Type] = {}
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return out
    for name, p in params.items():
        ann = p.annotation
        if isinstance(ann, str):
            try:
                ann = eval(ann, getattr(fn, "__globals__", {}))
            except Exception:  # noqa: BLE001,S112 - an unresolvable annotation just gives no dtype hint
                continue
        ir = getattr(ann, "_ir", None)
        if isinstance(ann, _WeftArray) and isinstance(ir, T.Type) and not isinstance(ir, T.GenericType):
            out[name] = ir
    return out


def kernel_runner(kernel, *, outputs=None, dim=None, output_shapes: dict | None = None,
                  output_dtypes: dict | None = None, name: str | None = None):
    """A Python function ``run(*inputs)`` that allocates ``kernel``'s outputs (with gradients), launches it and
    returns them, plus the dtypes of its array inputs (see ``weft.interop.torch.kernel_op`` for the arguments)."""
    names = list(kernel._param_names)
    out_names = [names[-1]] if outputs is None else list(outputs)
    in_names = [n for n in names if n not in out_names]
    anns = dict(zip(names, kernel.annotations()))

    def ann_dtype(n):
        ann = anns.get(n)
        if isinstance(ann, T.ArrayType) and not isinstance(ann.dtype, T.GenericType):
            return ann.dtype
        return None

    def run(*inputs):

        by_name = dict(zip(in_names, inputs))
        first = next((a for a in inputs if isinstance(a, _WeftArray)), None)
        outs = []
        for n in out_names:
            rule = (output_shapes or {}).get(n)
            if rule is None:
                shape = first.shape
            elif callable(rule):
                shape = rule(*inputs)
            elif isinstance(rule, str):
                shape = by_name[rule].shape
            else:
                shape = rule
            dt = (output_dtypes or {}).get(n) or ann_dtype(n) or first._ir
            dt = class_for(dt) if isinstance(dt, T.Type) else dt
            outs.append(_wp_zeros(shape, dtype=dt, device=first.device if first is not None else None,
                                  requires_grad=True))
        if dim is None:
            grid = outs[0].shape
        elif callable(dim):
            grid = dim(*inputs)
        elif isinstance(dim, str):
            grid = by_name[dim].shape
        else:
            grid = dim
        launch(kernel, grid, inputs=list(inputs), outputs=outs)
        return outs[0] if len(outs) == 1 else tuple(outs)

    run.__name__ = name or kernel.__name__
    run.__signature__ = inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                                           for n in in_names])
    input_dtypes = {n: ann_dtype(n) for n in in_names if ann_dtype(n) is not None}
    return run, input_dtypes
