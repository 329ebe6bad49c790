"""JAX interop: arrays through DLPack, and ``jax.custom_vjp`` wrappers around weft kernels and Tapes.

jax is optional and imported inside the functions. The wrappers run weft through host callbacks
(``jax.pure_callback``), so they work under ``jax.jit`` and ``jax.grad`` on the CPU; on a GPU the callback
moves data through the host. The backward recomputes the forward on a ``wp.Tape`` (JAX residuals must be JAX
values, so no tape is kept between the passes), seeds the outputs' gradients with the cotangents and returns
the inputs' gradients.
"""

from __future__ import annotations

import functools

import numpy as np

from ..ir import types as T
from ..runtime.array import array as _WeftArray
from ..runtime.tape import Tape, outside_tape
from ..types.dtypes import np_layout, resolve_dtype
from ..types.mapping import scalar_class
from .dlpack import from_dlpack
from .foreign import as_weft_array
from .kernel_fn import kernel_runner, param_dtypes


def from_jax(x, dtype=None):
    """A weft array sharing memory with the JAX array ``x`` (through DLPack; zero-copy where JAX allows).

    JAX arrays are immutable: writing into the weft view changes the JAX array behind JAX's back. Use it for
    inputs, or for buffers you own.
    """
    return from_dlpack(x, dtype=dtype)


def to_jax(a):
    """A JAX array over the weft array ``a`` (through DLPack; JAX copies only when it needs another alignment)."""
    import jax.dlpack

    return jax.dlpack.from_dlpack(a)


def dtype_to_jax(dtype):
    """The JAX (NumPy) scalar dtype storing a weft dtype."""
    return np.dtype(np_layout(resolve_dtype(dtype))[0])


def dtype_from_jax(jax_dtype):
    """The weft scalar type of a JAX dtype."""

    return scalar_class(np.dtype(jax_dtype).type)


# ---------------------------------------------------------------------- custom_vjp wrappers
class JaxOp:
    """A differentiable JAX function made from a Python function of weft launches (see ``function``)."""

    def __init__(self, fn, out_specs=None, dtypes: dict | None = None, name: str | None = None):
        import inspect

        self.fn = fn
        self.name = name or getattr(fn, "__name__", "weft_op")
        self.out_specs = out_specs
        self.dtypes = param_dtypes(fn)
        if dtypes:

            self.dtypes.update({k: resolve_dtype(v) for k, v in dtypes.items()})
        try:
            self._names = [p.name for p in inspect.signature(fn).parameters.values()]
        except (TypeError, ValueError):
            self._names = []
        self._cache: dict = {}
        functools.update_wrapper(self, fn)

    # ---- host side
    def _weft_inputs(self, args, requires_grad: bool):
        out = []
        for name, a in zip((self._names + [None] * len(args))[:len(args)], args):
            a = np.asarray(a)
            if a.ndim == 0:  # scalars go to the kernel as values
                out.append(a.item())
                continue
            arr = as_weft_array(np.array(a, copy=True), _hint(self.dtypes.get(name), a.ndim))
            if requires_grad and a.dtype.kind == "f":
                arr.requires_grad = True
            out.append(arr)
        return out

    def _outputs(self, result) -> list:
        outs = [result] if isinstance(result, _WeftArray) else list(result)
        for o in outs:
            if not isinstance(o, _WeftArray):
                raise TypeError(f"{self.name}: the function must return weft arrays, got {type(o).__name__}")
        return outs

    def _host_forward(self, kwargs, *args):
        outs = self._outputs(self.fn(*self._weft_inputs(args, False), **kwargs))
        return tuple(np.array(o.numpy(), copy=True) for o in outs)

    def _host_backward(self, kwargs, n_args, *args_and_cts):
        args, cts = args_and_cts[:n_args], args_and_cts[n_args:]
        inputs = self._weft_inputs(args, True)
        with outside_tape(), Tape() as tape:
            outs = self._outputs(self.fn(*inputs, **kwargs))
        for o, ct in zip(outs, cts):
            if o.grad is None:
                o.requires_grad = True
            o.grad.numpy()[...] = np.asarray(ct).reshape(o.grad.numpy().shape)
        tape.backward()
        grads = []
        for a, w in zip(args, inputs):
            a = np.asarray(a)
            if isinstance(w, _WeftArray) and w.grad is not None:
                grads.append(np.array(w.grad.numpy(), copy=True).reshape(a.shape))
            else:
                grads.append(np.zeros(a.shape, a.dtype))
        return tuple(grads)

    # ---- JAX side
    def _specs(self, kwargs, args):
        import jax

        if self.out_specs is not None:
            specs = self.out_specs(*args, **kwargs) if callable(self.out_specs) else self.out_specs
        else:
            # probe: run the function once on zeros of the input shapes to learn its output shapes
            zeros = [np.zeros(a.shape, a.dtype) for a in args]
            specs = [jax.ShapeDtypeStruct(o.shape, o.dtype) for o in self._host_forward(kwargs, *zeros)]
        if isinstance(specs, jax.ShapeDtypeStruct):
            specs = [specs]
        return tuple(specs)

    def _build(self, kwargs: dict):
        import jax

        op = self

        @jax.custom_vjp
        def f(*args):
            specs = op._specs(kwargs, args)
            out = jax.pure_callback(functools.partial(op._host_forward, kwargs), specs, *args)
            return out[0] if len(out) == 1 else tuple(out)

        def f_fwd(*args):
            return f(*args), args

        def f_bwd(args, cts):
            cts = (cts,) if not isinstance(cts, (tuple, list)) else tuple(cts)
            specs = tuple(jax.ShapeDtypeStruct(np.shape(a), jax.numpy.result_type(a)) for a in args)
            grads = jax.pure_callback(functools.partial(op._host_backward, kwargs, len(args)), specs, *args, *cts)
            return tuple(g if np.issubdtype(s.dtype, np.floating) else None for g, s in zip(grads, specs))

        f.defvjp(f_fwd, f_bwd)
        return f

    def __call__(self, *args, **kwargs):
        """Positional arguments are JAX arrays (differentiable); keyword arguments are static values."""
        key = tuple(sorted(kwargs.items()))
        try:
            f = self._cache.get(key)
        except TypeError:  # unhashable keyword values: build uncached
            return self._build(kwargs)(*args)
        if f is None:
            f = self._cache[key] = self._build(kwargs)
        return f(*args)


def _hint(ir, ndim):
    if ir is None:
        return None
    return T.ArrayType(ir, 1)


def function(fn=None, *, out_specs=None, dtypes: dict | None = None, name: str | None = None):
    """Make a Python function of weft launches a differentiable JAX function (``jax.custom_vjp``).

    Args:
        fn: takes weft arrays (copies of the JAX inputs; ``(n, 3)`` inputs become vec3 arrays where an annotation
            or ``dtypes`` says so) and returns one weft array or a tuple of them.
        out_specs: the outputs' ``jax.ShapeDtypeStruct`` (or a callable of the inputs giving them); default:
            learned by running ``fn`` once on zeros when the function is traced.
        dtypes: {parameter name: weft dtype}.

    Keyword arguments of the returned function are static (not differentiated, part of the cache key).
    """
    if fn is None:
        return lambda f: JaxOp(f, out_specs, dtypes, name)
    return JaxOp(fn, out_specs, dtypes, name)


def kernel_op(kernel, *, outputs=None, dim=None, output_shapes: dict | None = None,
              output_dtypes: dict | None = None, out_specs=None, name: str | None = None) -> JaxOp:
    """A differentiable JAX function launching one weft kernel (arguments as ``weft.interop.torch.kernel_op``)."""
    run, input_dtypes = kernel_runner(kernel, outputs=outputs, dim=dim, output_shapes=output_shapes,
                                      output_dtypes=output_dtypes, name=name)
    op = JaxOp(run, out_specs, name=run.__name__)
    op.dtypes.update(input_dtypes)
    return op
