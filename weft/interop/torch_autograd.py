"""Ready-made differentiable PyTorch ops from weft kernels (beyond Warp).

``function(fn)`` turns a Python function of weft launches into a differentiable torch op: the forward views the
tensor arguments as weft arrays (zero-copy, strided tensors included), runs ``fn`` on a ``wp.Tape`` and returns
its output arrays as tensors sharing their memory; the backward zeroes the tape's gradients, seeds the outputs'
gradients with the incoming ones, runs ``tape.backward()`` and hands the inputs' gradients to autograd. Each
backward allocates fresh gradient buffers, so ``backward(retain_graph=True)`` can run any number of times.

``kernel_op(kernel)`` does the same for a single kernel, allocating its outputs. ``custom_op(name, ...)``
registers a ``torch.library`` custom op whose backward is a second custom op that recomputes the forward on a
tape: no state is kept between the passes, so it composes with ``torch.compile`` and functional transforms.

This module imports torch at module level; ``weft.interop.torch`` loads it lazily.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from dataclasses import dataclass, field

import torch

from ..ir import types as T
from ..runtime.array import array as _WeftArray
from ..runtime.streams import ScopedStream
from ..runtime.tape import Tape, outside_tape
from ..types.dtypes import resolve_dtype
from .kernel_fn import kernel_runner
from .kernel_fn import param_dtypes as _param_dtypes
from .torch import _wrap_tensor, stream_from_torch, to_torch


# ---------------------------------------------------------------------- argument handling
def _has_overlap(t: torch.Tensor) -> bool:
    return any(s == 0 and n > 1 for n, s in zip(t.shape, t.stride()))


def _zero_grad_like(t: torch.Tensor) -> torch.Tensor:
    if t.is_contiguous():
        return torch.zeros_like(t, memory_format=torch.contiguous_format)
    return torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device=t.device).zero_()


@contextlib.contextmanager
def _torch_stream(tensors):
    """On CUDA, run weft's launches on torch's current stream (best effort); nothing to do on the CPU."""
    dev = next((t.device for t in tensors if t.is_cuda), None)
    if dev is None:
        yield
        return
    try:
        stream = stream_from_torch(dev)
    except (NotImplementedError, TypeError, ImportError):
        torch.cuda.current_stream(dev).synchronize()
        yield
        return
    with ScopedStream(stream, sync_enter=False):
        yield


@dataclass
class _Call:
    """What the forward leaves for the backward."""

    tape: Tape | None = None
    arrays: list = field(default_factory=list)  # one weft array (or None) per positional argument
    tensors: list = field(default_factory=list)  # the tensors the arrays view (None for other arguments)
    outputs: list = field(default_factory=list)  # the weft output arrays


class _WeftFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, op: WeftOp, kwargs: dict, *args):
        call = _Call()
        needs_grad = [isinstance(a, torch.Tensor) and a.requires_grad and a.dtype.is_floating_point for a in args]
        weft_args = []
        for name, a, needs in zip(op.arg_names(len(args)), args, needs_grad):
            if isinstance(a, torch.Tensor):
                t = a.detach()
                if _has_overlap(t):  # broadcast views: gradients must not alias
                    t = t.contiguous()
                arr = _wrap_tensor(t, op.dtypes.get(name))
                if needs:
                    arr.grad = _wrap_tensor(_zero_grad_like(t), arr.dtype)
                call.arrays.append(arr)
                call.tensors.append(t)
                weft_args.append(arr)
            else:
                call.arrays.append(None)
                call.tensors.append(None)
                weft_args.append(a)
        record = any(needs_grad)
        with _torch_stream([t for t in call.tensors if t is not None]):
            if record:
                with outside_tape(), Tape() as tape:
                    result = op.fn(*weft_args, **kwargs)
                call.tape = tape
            else:
                result = op.fn(*weft_args, **kwargs)
        single = isinstance(result, _WeftArray)
        outs = [result] if single else list(result)
        for o in outs:
            if not isinstance(o, _WeftArray):
                raise TypeError(f"{op.name}: the function must return weft arrays, got {type(o).__name__}")
            if record and o.grad is None and _is_float(o):
                o.requires_grad = True  # the tape re-packs descriptors at backward time
        call.outputs = outs
        tensors = [to_torch(o, requires_grad=False) for o in outs]
        ctx.mark_non_differentiable(*[t for t in tensors if not t.dtype.is_floating_point])
        ctx.call = call
        ctx.single = single
        ctx.save_for_backward(*[a for a in args if isinstance(a, torch.Tensor)])  # in-place edits are detected
        return tensors[0] if single else tuple(tensors)

    @staticmethod
    def backward(ctx, *grad_outputs):
        _ = ctx.saved_tensors  # raises if an input was modified in place since the forward
        call: _Call = ctx.call
        grads: list = [None, None]
        if call.tape is None:
            return tuple(grads + [None] * len(call.arrays))
        tape = call.tape
        tape.zero()
        fresh = []
        for arr, t, needs in zip(call.arrays, call.tensors, ctx.needs_input_grad[2:]):
            if arr is not None and needs and arr.grad is not None:
                g = _zero_grad_like(t)  # fresh each time: autograd may keep the tensor we return
                arr.grad = _wrap_tensor(g, arr.dtype)
                fresh.append(g)
            else:
                fresh.append(None)
        with _torch_stream([g for g in grad_outputs if g is not None]):
            for out, g in zip(call.outputs, grad_outputs):
                if g is None or out.grad is None:
                    continue
                _seed(out.grad, g)
            tape.backward()
        return tuple(grads + fresh)


def _is_float(a) -> bool:
    ir = a._ir
    scalar = getattr(ir, "scalar", ir)
    return isinstance(scalar, T.ScalarType) and scalar.name.startswith("float")


def _seed(grad_arr, g: torch.Tensor) -> None:
    if grad_arr.device.impl.host_memory:
        grad_arr.numpy()[...] = g.detach().numpy().reshape(grad_arr.numpy().shape)
        grad_arr._mark_written()
    else:
        grad_arr.assign(_wrap_tensor(g.detach().contiguous().reshape(to_torch(grad_arr).shape), grad_arr.dtype))


# ---------------------------------------------------------------------- public wrappers
class WeftOp:
    """A differentiable torch op made from a Python function of weft launches (see ``function``)."""

    def __init__(self, fn, dtypes: dict | None = None, name: str | None = None):
        self.fn = fn
        self.name = name or getattr(fn, "__name__", "weft_op")
        self.dtypes = _param_dtypes(fn)
        if dtypes:
            self.dtypes.update({k: resolve_dtype(v) for k, v in dtypes.items()})
        try:
            self._names = [p.name for p in inspect.signature(fn).parameters.values()
                           if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        except (TypeError, ValueError):
            self._names = []
        functools.update_wrapper(self, fn)

    def arg_names(self, n: int) -> list:
        return (self._names + [None] * n)[:n]

    def __call__(self, *args, **kwargs):
        """Run the op: positional tensors are differentiable inputs; keyword arguments are passed through."""
        return _WeftFunction.apply(self, kwargs, *args)


def function(fn=None, *, dtypes: dict | None = None, name: str | None = None):
    """Make a Python function of weft launches a differentiable torch op (usable as a decorator).

    ``fn`` receives weft arrays in place of the tensor arguments (zero-copy views; a ``wp.array(dtype=wp.vec3)``
    annotation, or ``dtypes={"x": wp.vec3}``, views an ``(n, 3)`` tensor as vec3) and returns one weft array or a
    tuple of them, freshly allocated. Keyword arguments are passed through unchanged and not differentiated.

    Example::

        @weft.interop.torch.function
        def scale(x: wp.array(dtype=float), s: float):
            y = wp.zeros_like(x)
            wp.launch(scale_kernel, x.shape, inputs=[x, s], outputs=[y])
            return y

        y = scale(torch_tensor, 2.0)   # differentiable w.r.t. torch_tensor
    """
    if fn is None:
        return lambda f: WeftOp(f, dtypes, name)
    return WeftOp(fn, dtypes, name)


def kernel_op(kernel, *, outputs=None, dim=None, output_shapes: dict | None = None,
              output_dtypes: dict | None = None, name: str | None = None) -> WeftOp:
    """A differentiable torch op launching one weft kernel.

    Args:
        kernel: a ``@wp.kernel``.
        outputs: names of the parameters the op allocates and returns (default: the last parameter).
        dim: the launch grid: an int/tuple, a callable of the input arrays, or the name of an input whose shape
            it is. Default: the shape of the first output.
        output_shapes: {output name: shape, input name or callable of the inputs}; default: the shape of the
            first array input.
        output_dtypes: {output name: weft dtype}; default: the annotation, or the first array input's dtype.

    Returns:
        A callable ``op(*inputs)`` taking the remaining parameters positionally (tensors or plain values) and
        returning the output tensor (or a tuple of them).
    """
    run, input_dtypes = kernel_runner(kernel, outputs=outputs, dim=dim, output_shapes=output_shapes,
                                      output_dtypes=output_dtypes, name=name)
    op = WeftOp(run, name=run.__name__)
    op.dtypes.update(input_dtypes)
    return op


# ---------------------------------------------------------------------- torch.library
_SCHEMA_TYPES = {float: "float", int: "int", bool: "bool"}


def custom_op(qualname: str, fn, *, n_outputs: int = 1, fake=None, dtypes: dict | None = None):
    """Register a weft function as a ``torch.library`` custom op with an autograd formula.

    Args:
        qualname: ``"namespace::name"``.
        fn: a Python function of weft launches (as for ``function``) whose positional parameters are annotated
            with weft array annotations (-> ``Tensor``) or ``float``/``int``/``bool``.
        n_outputs: how many arrays ``fn`` returns.
        fake: ``fake(*args) -> tensor(s)`` giving output metadata for tracing (``torch.compile``); default:
            outputs shaped like the first tensor argument.

    Returns:
        The custom op (call it like a function; ``torch.ops.namespace.name`` works too).

    The backward is a second custom op, ``<name>_weft_bwd``, that recomputes the forward on a tape: it costs a
    second forward pass and keeps no Python state between the passes.
    """
    if not hasattr(torch, "library") or not hasattr(torch.library, "custom_op"):
        raise NotImplementedError("torch.library.custom_op needs torch >= 2.4")
    op = WeftOp(fn, dtypes)
    params = [p for p in inspect.signature(fn).parameters.values()]
    arg_types = []
    for p in params:
        ann = p.annotation
        if isinstance(ann, str):
            ann = eval(ann, getattr(fn, "__globals__", {}))
        arg_types.append("Tensor" if isinstance(ann, _WeftArray) else _SCHEMA_TYPES.get(ann, "Tensor"))
    args_schema = ", ".join(f"{t} {p.name}" for t, p in zip(arg_types, params))
    outs_schema = "Tensor" if n_outputs == 1 else "(" + ", ".join(["Tensor"] * n_outputs) + ")"
    tensor_idx = [i for i, t in enumerate(arg_types) if t == "Tensor"]

    def forward_impl(*args):
        with torch.no_grad():
            return op(*args)

    fwd = torch.library.custom_op(qualname, forward_impl, mutates_args=(), schema=f"({args_schema}) -> {outs_schema}")

    grad_schema = ", ".join(f"Tensor grad_{i}" for i in range(n_outputs))

    def backward_impl(*args_and_grads):
        args = list(args_and_grads[:len(params)])
        gouts = args_and_grads[len(params):]
        leaves = [a.detach().requires_grad_(True) if i in tensor_idx and a.dtype.is_floating_point else a
                  for i, a in enumerate(args)]
        with torch.enable_grad():
            out = op(*leaves)
            outs = [out] if isinstance(out, torch.Tensor) else list(out)
            wrt = [leaves[i] for i in tensor_idx if leaves[i].requires_grad]
            got = torch.autograd.grad(outs, wrt, grad_outputs=list(gouts), allow_unused=True)
        it = iter(got)
        result = []
        for i in tensor_idx:
            g = next(it) if leaves[i].requires_grad else None
            result.append(torch.zeros_like(args[i]) if g is None else g.clone())
        return result

    bwd = torch.library.custom_op(f"{qualname}_weft_bwd", backward_impl, mutates_args=(),
                                  schema=f"({args_schema}, {grad_schema}) -> Tensor[]")

    def default_fake(*args):
        first = next(a for a in args if isinstance(a, torch.Tensor))
        outs = [torch.empty_like(first) for _ in range(n_outputs)]
        return outs[0] if n_outputs == 1 else tuple(outs)

    fwd.register_fake(fake or default_fake)
    bwd.register_fake(lambda *a: [torch.empty_like(a[i]) for i in tensor_idx])

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*[inputs[i] for i in tensor_idx])
        ctx.plain = [None if i in tensor_idx else inputs[i] for i in range(len(params))]
        outs = [output] if isinstance(output, torch.Tensor) else list(output)
        ctx.out_meta = [(o.shape, o.dtype, o.device) for o in outs]

    def autograd_backward(ctx, *gouts):
        saved = iter(ctx.saved_tensors)
        args = [next(saved) if v is None and i in tensor_idx else v for i, v in enumerate(ctx.plain)]
        gouts = [torch.zeros(m[0], dtype=m[1], device=m[2]) if g is None else g for g, m in zip(gouts, ctx.out_meta)]
        grads = iter(bwd(*args, *gouts))
        return tuple(next(grads) if i in tensor_idx else None for i in range(len(params)))

    fwd.register_autograd(autograd_backward, setup_context=setup_context)
    return fwd

