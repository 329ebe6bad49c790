"""``wp.jax_kernel`` and ``wp.jax_callable``: weft kernels and Python functions of weft launches as JAX functions,
with Warp 1.19's signatures, plus the JAX device mapping.

Warp registers XLA FFI targets; weft runs the same work through JAX host callbacks (``jax.pure_callback``, or
``jax.experimental.io_callback`` with ``has_side_effect=True``) on weft's CPU device: JAX hands the callback host
copies of its buffers, weft launches the kernel (or calls the function) on weft arrays over copies of them, and
returns the outputs. It composes with ``jax.jit`` and ``jax.vmap`` (the vmapped batch dimensions are looped over);
``enable_backward=True`` gives a ``jax.custom_vjp`` whose backward replays the launch on a ``wp.Tape``. On a JAX GPU
the callbacks move data through the host. CUDA graph modes of ``jax_callable`` (``JaxCallableGraphMode.WARP*``)
need Warp's FFI path on a CUDA device: weft refuses them with a clear error, as Warp does for JAX CPU calls.
jax is imported inside the functions.
"""

from __future__ import annotations

import collections
import copy
import functools
import inspect
import threading
from enum import IntEnum

import numpy as np

from ..ir import types as T
from ..module import force_load, get_module
from ..runtime import device as D
from ..runtime.array import array as _WeftArray
from ..runtime.launch import launch
from ..runtime.tape import Tape, outside_tape
from ..types.composite import class_for
from ..types.dtypes import np_layout, resolve_dtype
from .dlpack import DeviceType


class JaxCallableGraphMode(IntEnum):
    """CUDA graph capture modes of :func:`weft.jax_callable` (Warp's values). weft runs JAX callables as host
    callbacks, which never capture: ``NONE`` and ``JAX`` run the function directly (as Warp does for JAX CPU
    calls); the ``WARP`` modes need CUDA graph capture inside an XLA FFI call and are refused."""

    NONE = 0
    """No graph capture."""
    JAX = 1
    """Let JAX capture (the callable may be part of an enclosing JAX capture)."""
    WARP = 2
    """Warp captures a graph and replays it for matching buffer addresses (CUDA only)."""
    WARP_STAGED = 3
    """Warp captures against staging buffers, copies inside the graph (CUDA only)."""
    WARP_STAGED_EX = 4
    """Warp captures against staging buffers, copies outside the graph (CUDA only)."""


class JaxModulePreloadMode(IntEnum):
    """Where ``jax_kernel`` / ``jax_callable`` compile the module of their kernel or function before the first
    call: ``NONE`` (on first execution), ``CURRENT_DEVICE``, ``ALL_DEVICES``. weft's callbacks run on its CPU
    device, so both preloading modes compile for the CPU."""

    NONE = 0
    CURRENT_DEVICE = 1
    ALL_DEVICES = 2


def _jax():
    import jax

    return jax


def device_to_jax(warp_device=None):
    """The JAX device of a weft device: the local JAX GPU with the CUDA device's ordinal, or the first local JAX
    CPU device.

    Raises:
        RuntimeError: this process has no such JAX device.
    """
    jax = _jax()
    d = D.get_device(warp_device)
    gpu = d.impl.dlpack_device == DeviceType.CUDA  # the device's memory kind names the JAX backend
    try:
        devices = jax.local_devices(backend="cuda" if gpu else "cpu")
    except RuntimeError:
        devices = []
    if gpu:
        for jd in devices:
            if jd.local_hardware_id == d.ordinal:
                return jd
    elif devices:
        return devices[0]
    raise RuntimeError(f"JAX device corresponding to '{d}' is not available")


def device_from_jax(jax_device):
    """The weft device of a JAX device: ``cpu`` for a JAX CPU device, ``cuda:<local_hardware_id>`` for a JAX GPU
    of this process.

    Raises:
        RuntimeError: a JAX GPU of another process, or a platform weft has no device for (TPU, ...).
    """
    platform = getattr(jax_device, "platform", None)
    if platform == "cpu":
        return D.get_device("cpu")
    if platform == "gpu":
        jax = _jax()
        if jax_device.process_index != jax.process_index() or jax_device.local_hardware_id is None:
            raise RuntimeError(f"JAX device '{jax_device}' belongs to process {jax_device.process_index} and is not "
                               f"addressable from process {jax.process_index()}")
        return D.get_device(f"cuda:{jax_device.local_hardware_id}")
    raise RuntimeError(f"Unsupported JAX device platform '{platform}' (jax_device={jax_device})")


# ---------------------------------------------------------------------- parameters
class _Arg:
    """One parameter: a weft array type (its element's scalar dtype and inner shape) or a scalar."""

    def __init__(self, name: str, ir: T.Type, in_out: bool = False):
        self.name = name
        self.ir = ir
        self.in_out = in_out
        self.is_array = isinstance(ir, T.ArrayType)
        if self.is_array:
            if isinstance(ir.dtype, (T.GenericType, T.StructType)):
                raise TypeError(f"argument '{name}': JAX arrays need a concrete numeric dtype, got {ir.dtype}")
            base, inner = np_layout(ir.dtype)
            self.np_dtype, self.inner, self.ndim = np.dtype(base), tuple(inner), ir.ndim
            self.dtype = class_for(ir.dtype)
        elif not isinstance(ir, (T.ScalarType, T.VectorType, T.MatrixType)):
            raise TypeError(f"argument '{name}': only arrays and scalar values are supported, got {ir}")

    def jax_shape(self, dims) -> tuple:
        """The JAX shape of an output of ``dims``: the array's dimensions (the element's are appended) or the
        whole JAX shape (its trailing dimensions must be the element's)."""
        dims = (int(dims),) if isinstance(dims, (int, np.integer)) else tuple(int(x) for x in dims)
        if len(dims) == self.ndim:
            return dims + self.inner
        if self.inner and len(dims) == self.ndim + len(self.inner) and dims[self.ndim:] == self.inner:
            return dims
        raise ValueError(f"Invalid output dimensions for argument '{self.name}': {dims}")

    def check(self, value) -> None:
        if value.dtype != self.np_dtype:
            raise TypeError(f"Invalid data type for array argument '{self.name}', expected {self.np_dtype}, "
                            f"got {value.dtype}")
        if value.ndim != self.ndim + len(self.inner):
            raise TypeError(f"Invalid dimensionality for array argument '{self.name}', expected "
                            f"{self.ndim + len(self.inner)} dimensions, got {value.ndim}")
        if self.inner and tuple(value.shape[self.ndim:]) != self.inner:
            raise TypeError(f"Invalid inner dimensions for array argument '{self.name}', expected {self.inner}, "
                            f"got {tuple(value.shape[self.ndim:])}")


def _split(names, irs, num_outputs, in_out_argnames):
    in_out_list = list(in_out_argnames or [])
    in_out = set(in_out_list)
    if len(in_out) != len(in_out_list):
        raise ValueError("in_out_argnames must not contain duplicate names")
    if num_outputs < 1:
        raise ValueError("At least one output is required")
    if num_outputs > len(names):
        raise ValueError("Number of outputs cannot be greater than the number of kernel arguments")
    if num_outputs < len(in_out):
        raise ValueError("Number of outputs cannot be smaller than the number of in_out_argnames")
    n_in = len(names) - num_outputs + len(in_out)
    inputs = [_Arg(n, t, n in in_out) for n, t in zip(names[:n_in], irs[:n_in])]
    outputs = []
    for n, t in zip(names[n_in:], irs[n_in:]):
        if n in in_out:
            raise ValueError(f"Expected an output-only argument for argument {n}. in_out arguments should be placed "
                             "before output-only arguments.")
        a = _Arg(n, t)
        if not a.is_array:
            raise TypeError("All output arguments must be arrays")
        outputs.append(a)
    unknown = in_out - {a.name for a in inputs}
    if unknown:
        raise ValueError(f"in_out_argnames: '{sorted(unknown)}' did not match any function argument names.")
    for a in inputs:
        if a.in_out and not a.is_array:
            raise TypeError(f"in_out argument '{a.name}' must be an array")
    return inputs, outputs


# ---------------------------------------------------------------------- the common call machinery
class _JaxWrapper:
    """Common call path: validate JAX inputs, compute output types, run ``self._host`` in a host callback."""

    def _prepare(self, args, output_dims, default_dims):
        jax = _jax()
        if len(args) != len(self.input_args):
            names = ", ".join(a.name for a in self.input_args)
            raise ValueError(f"Expected {len(self.input_args)} inputs ({names}), but got {len(args)}")
        arrays, statics = [], {}
        for a, v in zip(self.input_args, args):
            if a.is_array:
                a.check(v)
                arrays.append(v)
            else:
                if isinstance(v, jax.core.Tracer):
                    raise ValueError(f"Argument '{a.name}' must be a static value")
                statics[a.name] = v
        if default_dims is None:
            first = next((i for i, a in enumerate(self.input_args) if a.is_array), None)
            if first is None:
                raise ValueError("Unable to determine output dimensions: no array input; pass output_dims")
            default_dims = tuple(args[first].shape[:self.input_args[first].ndim])
        specs = [jax.ShapeDtypeStruct(tuple(v.shape), v.dtype) for a, v in zip(self.input_args, args) if a.in_out]
        if isinstance(output_dims, dict):
            for o in self.output_args:
                if output_dims.get(o.name) is None:
                    raise ValueError(f"Missing output dimensions for argument '{o.name}'")
                specs.append(jax.ShapeDtypeStruct(o.jax_shape(output_dims[o.name]), o.np_dtype))
        else:
            dims = default_dims if output_dims is None else output_dims
            specs += [jax.ShapeDtypeStruct(o.jax_shape(dims), o.np_dtype) for o in self.output_args]
        return arrays, statics, specs

    def _run_batched(self, fn, host_arrays, specs):
        """Call ``fn(arrays) -> list of outputs`` once per vmapped batch element (leading dims beyond the
        declared ranks) and stack the results."""
        arrs = [np.asarray(h) for h in host_arrays]
        batch = ()
        for a, h in zip([x for x in self.input_args if x.is_array], arrs):
            extra = h.ndim - a.ndim - len(a.inner)
            if extra > 0:
                batch = h.shape[:extra]
                break
        if not batch:
            return fn(arrs)
        outs = [np.empty(tuple(batch) + tuple(s.shape), s.dtype) for s in specs]
        for idx in np.ndindex(*batch):
            sub = []
            for a, h in zip([x for x in self.input_args if x.is_array], arrs):
                extra = h.ndim - a.ndim - len(a.inner)
                sub.append(h[idx[len(batch) - extra:]] if extra > 0 else h)
            for o, r in zip(outs, fn(sub)):
                o[idx] = r
        return outs

    def _callback(self, host_fn, specs, arrays, vmap_method):
        jax = _jax()
        if self.has_side_effect:
            from jax.experimental import io_callback

            return list(io_callback(host_fn, specs, *arrays, ordered=False))
        return list(jax.pure_callback(host_fn, specs, *arrays, vmap_method=vmap_method))


def _inputs_to_weft(input_args, host_arrays, statics, requires_grad=False):
    """(kernel arguments for the inputs, the in-out weft arrays) from host copies of the JAX inputs."""
    it = iter(host_arrays)
    args, in_outs = [], []
    for a in input_args:
        if a.is_array:
            h = np.array(next(it), dtype=a.np_dtype, copy=True)
            shape = h.shape[:a.ndim]
            w = _WeftArray(h.reshape(shape + a.inner) if h.size else np.zeros(shape + a.inner, a.np_dtype),
                           dtype=a.dtype, device="cpu", requires_grad=requires_grad and a.np_dtype.kind == "f")
            args.append(w)
            if a.in_out:
                in_outs.append(w)
        else:
            args.append(statics[a.name])
    return args, in_outs


def _zeros_for(outputs, specs, requires_grad=False):
    out = []
    for o, s in zip(outputs, specs):
        shape = tuple(s.shape[:len(s.shape) - len(o.inner)])
        out.append(_WeftArray(np.zeros(shape + o.inner, o.np_dtype), dtype=o.dtype, device="cpu",
                              requires_grad=requires_grad))
    return out


def _preload(wrapper, module_name, mode, block_dim=None):
    """Compile ``module_name``'s kernels on the first call of ``wrapper`` (its module preload mode); later calls
    launch, which compiles whatever a reload changed."""
    if wrapper.__dict__.get("_preloaded"):
        return
    if JaxModulePreloadMode(mode) != JaxModulePreloadMode.NONE:
        force_load("cpu", [get_module(module_name)], block_dim)
    wrapper._preloaded = True


# ---------------------------------------------------------------------- jax_kernel
class JaxKernel(_JaxWrapper):
    """A weft kernel callable from JAX (made by :func:`weft.jax_kernel`)."""

    def __init__(self, kernel, num_outputs, vmap_method, launch_dims, output_dims, in_out_argnames,
                 module_preload_mode, enable_backward, has_side_effect, block_dim):
        self.kernel = kernel
        self.num_outputs = num_outputs
        self.vmap_method = vmap_method
        self.launch_dims = launch_dims
        self.output_dims = output_dims
        self.module_preload_mode = JaxModulePreloadMode(module_preload_mode)
        self.enable_backward = enable_backward
        self.has_side_effect = has_side_effect
        self.block_dim = block_dim
        self._in_out_argnames = in_out_argnames
        anns = list(kernel.annotations())
        # a generic kernel: each call picks the wp.overload whose input types match the JAX inputs (weft's
        # wp.overload returns the generic kernel itself, not one object per specialisation)
        self._generic = any(t.is_generic or isinstance(t, T.GenericType) for t in anns)
        if not self._generic:
            self.input_args, self.output_args = _split(list(kernel._param_names), anns, num_outputs, in_out_argnames)
        self._vjp_cache: dict = {}

    def _overload_for(self, args):
        names = list(self.kernel._param_names)
        for types in self.kernel._overloads:
            ins, outs = _split(names, list(types), self.num_outputs, self._in_out_argnames)
            if len(ins) == len(args) and all(not a.is_array or (np.dtype(v.dtype) == a.np_dtype and
                                                                np.ndim(v) == a.ndim + len(a.inner) and
                                                                tuple(np.shape(v)[a.ndim:]) == a.inner)
                                             for a, v in zip(ins, args)):
                return ins, outs
        have = ", ".join(f"{np.dtype(v.dtype)}[{np.ndim(v)}]" for v in args if hasattr(v, "dtype"))
        raise TypeError(f"jax_kernel(): kernel '{self.kernel.__name__}' is generic and no wp.overload of it takes "
                        f"inputs of these types ({have}); declare one with wp.overload")

    def _launch(self, arrays, statics, specs, dims, requires_grad=False):
        args, in_outs = _inputs_to_weft(self.input_args, arrays, statics, requires_grad)
        outs = _zeros_for(self.output_args, specs[len(in_outs):], requires_grad)
        if dims is None:
            first = next(w for w, a in zip(args, self.input_args) if a.is_array)
            dims = first.shape
        launch(self.kernel, dims, inputs=args, outputs=outs, device="cpu", block_dim=self.block_dim)
        return args, in_outs, outs

    def __call__(self, *args, output_dims=None, launch_dims=None, vmap_method=None):
        if self._generic:
            view = copy.copy(self)
            view._generic = False
            view.input_args, view.output_args = self._overload_for(args)
            return view(*args, output_dims=output_dims, launch_dims=launch_dims, vmap_method=vmap_method)
        if self.enable_backward:  # Warp's errors: the differentiable wrapper is fixed at construction
            if launch_dims is not None:
                raise TypeError("jax_kernel(): launch_dims cannot be overridden per-call when enable_backward=True")
            if output_dims is not None:
                raise TypeError("jax_kernel(): output_dims is not supported when enable_backward=True")
            if vmap_method is not None:
                raise TypeError("jax_kernel(): vmap_method cannot be overridden per-call when enable_backward=True")
        launch_dims = self.launch_dims if launch_dims is None else launch_dims
        output_dims = self.output_dims if output_dims is None else output_dims
        vmap_method = self.vmap_method if vmap_method is None else vmap_method
        if isinstance(launch_dims, (int, np.integer)):
            launch_dims = (int(launch_dims),)
        elif launch_dims is not None:
            launch_dims = tuple(int(d) for d in launch_dims)
        arrays, statics, specs = self._prepare(args, output_dims, launch_dims)
        _preload(self, self.kernel.__module__, self.module_preload_mode, self.block_dim)
        dims = launch_dims

        def host(*host_arrays):
            def one(sub):
                _, in_outs, outs = self._launch(sub, statics, specs, dims)
                return [np.array(w.numpy(), copy=True) for w in in_outs + outs]

            return tuple(self._run_batched(one, host_arrays, specs))

        if not self.enable_backward:
            return self._callback(host, specs, arrays, vmap_method)
        return list(self._differentiable(statics, specs, dims, vmap_method, host)(*arrays))

    def _differentiable(self, statics, specs, dims, vmap_method, host):
        jax = _jax()
        key = (tuple(sorted((k, repr(v)) for k, v in statics.items())), tuple((s.shape, str(s.dtype)) for s in specs),
               dims, vmap_method)
        f = self._vjp_cache.get(key)
        if f is not None:
            return f
        arr_args = [a for a in self.input_args if a.is_array]

        def host_bwd(*arrays_and_cts):
            n = len(arr_args)
            arrays, cts = arrays_and_cts[:n], arrays_and_cts[n:]

            def one(sub):
                sub_arrays, sub_cts = sub[:n], sub[n:]
                with outside_tape(), Tape() as tape:
                    args, _, outs = self._launch(sub_arrays, statics, specs, dims, requires_grad=True)
                for o, ct in zip(outs, sub_cts):
                    o.grad.numpy()[...] = np.asarray(ct).reshape(o.grad.numpy().shape)
                tape.backward()
                res = []
                for w, a in zip([x for x, p in zip(args, self.input_args) if p.is_array], arr_args):
                    g = w.grad.numpy() if w.grad is not None else np.zeros(w.numpy().shape, a.np_dtype)
                    res.append(np.array(g, dtype=a.np_dtype, copy=True))
                return res

            if any(np.ndim(h) > a.ndim + len(a.inner) for h, a in zip(arrays, arr_args)):
                raise NotImplementedError("jax_kernel(enable_backward=True): gradients under jax.vmap are not "
                                          "supported by weft")
            return tuple(one(list(arrays) + list(cts)))

        @jax.custom_vjp
        def f(*arrays):
            return tuple(jax.pure_callback(host, specs, *arrays, vmap_method=vmap_method))

        def f_fwd(*arrays):
            return f(*arrays), arrays

        def f_bwd(arrays, cts):
            gspecs = [jax.ShapeDtypeStruct(np.shape(a), a.dtype) for a in arrays]
            grads = jax.pure_callback(host_bwd, gspecs, *arrays, *cts, vmap_method=vmap_method)
            return tuple(g if np.issubdtype(s.dtype, np.floating) else None for g, s in zip(grads, gspecs))

        f.defvjp(f_fwd, f_bwd)
        self._vjp_cache[key] = f
        return f


_REGISTRY_LOCK = threading.Lock()
_KERNELS: dict = {}
_CALLABLES: dict = {}


def _hashable(x):
    if isinstance(x, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in x.items()))
    if hasattr(x, "__len__") and not isinstance(x, str):
        return tuple(x)
    return x


def jax_kernel(kernel, num_outputs=1, vmap_method="broadcast_all", launch_dims=None, output_dims=None,
               in_out_argnames=None, module_preload_mode=JaxModulePreloadMode.CURRENT_DEVICE,
               enable_backward: bool = False, has_side_effect: bool = False, block_dim: int | None = None):
    """A JAX function launching a weft kernel (Warp's ``jax_kernel``).

    The kernel's last ``num_outputs`` parameters (in-out ones, ``in_out_argnames``, counted in) are outputs,
    allocated by the call with ``output_dims`` (per call or here: a shape for all outputs, or ``{name: shape}``;
    default: the launch dimensions); the others are inputs: JAX arrays (dtype and rank checked against the
    annotations; vector dtypes take trailing dimensions) or static scalars. ``launch_dims`` default to the shape of
    the first array input. The call returns the list of outputs (in-out arguments first). ``enable_backward``
    makes it differentiable with ``jax.grad`` (no in-out arguments or ``output_dims`` then). Wrappers are cached:
    the same arguments give the same object.

    Raises:
        ValueError / TypeError: bad output counts, in-out names, argument types (at construction); input dtype,
        rank or count mismatches, traced scalars (at call).
    """
    if block_dim is not None:
        if isinstance(block_dim, bool) or not isinstance(block_dim, (int, np.integer)):
            raise TypeError("jax_kernel(): block_dim must be an integer or None.")
        if block_dim <= 0:
            raise ValueError("jax_kernel(): block_dim must be positive.")
    if enable_backward and in_out_argnames:
        raise NotImplementedError("jax_kernel(): Input-output arguments (in_out_argnames) are not supported when "
                                  "enable_backward=True.")
    if enable_backward and output_dims is not None:
        raise NotImplementedError("jax_kernel(): output_dims is not supported when enable_backward=True.")
    key = (kernel, num_outputs, vmap_method, _hashable(launch_dims), _hashable(output_dims),
           tuple(in_out_argnames) if in_out_argnames else None, int(module_preload_mode), bool(enable_backward),
           bool(has_side_effect), block_dim)
    with _REGISTRY_LOCK:
        k = _KERNELS.get(key)
        if k is None:
            k = _KERNELS[key] = JaxKernel(kernel, num_outputs, vmap_method, launch_dims, output_dims,
                                          in_out_argnames, module_preload_mode, enable_backward, has_side_effect,
                                          block_dim)
    return k


# ---------------------------------------------------------------------- jax_callable
def _annotation_ir(func, name, ann):
    if isinstance(ann, str):
        ann = eval(ann, getattr(func, "__globals__", {}))
    if isinstance(ann, _WeftArray) and getattr(ann, "_annotation", False):
        return T.ArrayType(ann._ir, ann.ndim)
    if ann is inspect.Parameter.empty:
        raise TypeError(f"jax_callable: argument '{name}' of {func.__name__} needs a type annotation")
    return resolve_dtype(ann)


class JaxCallable(_JaxWrapper):
    """A Python function of weft launches callable from JAX (made by :func:`weft.jax_callable`)."""

    def __init__(self, func, num_outputs, graph_mode, vmap_method, output_dims, in_out_argnames, stage_in_argnames,
                 stage_out_argnames, graph_cache_max, module_preload_mode, has_side_effect):
        self.func = func
        self.num_outputs = num_outputs
        self.graph_mode = JaxCallableGraphMode(graph_mode)
        self.vmap_method = vmap_method
        self.output_dims = output_dims
        self.graph_cache_max = graph_cache_max
        self.module_preload_mode = JaxModulePreloadMode(module_preload_mode)
        self.has_side_effect = has_side_effect
        self.captures: collections.OrderedDict = collections.OrderedDict()  # graphs captured (CUDA modes only)
        params = list(inspect.signature(func).parameters.values())
        names = [p.name for p in params]
        irs = [_annotation_ir(func, p.name, p.annotation) for p in params]
        self.input_args, self.output_args = _split(names, irs, num_outputs, in_out_argnames)
        for label, sel in (("stage_in_argnames", stage_in_argnames), ("stage_out_argnames", stage_out_argnames)):
            unknown = set(sel or ()) - set(names)
            if unknown:
                raise ValueError(f"{label}: {sorted(unknown)} did not match any function argument names")
        self.stage_in_argnames = set(stage_in_argnames) if stage_in_argnames else None
        self.stage_out_argnames = set(stage_out_argnames) if stage_out_argnames else None
        functools.update_wrapper(self, func)

    def __call__(self, *args, output_dims=None, vmap_method=None):
        if self.graph_mode not in (JaxCallableGraphMode.NONE, JaxCallableGraphMode.JAX):
            raise ValueError(f"jax_callable: graph_mode=JaxCallableGraphMode.{self.graph_mode.name} needs CUDA graph "
                             "capture inside an XLA FFI call; weft runs JAX callables as host callbacks on the CPU "
                             "(use JaxCallableGraphMode.NONE or JAX)")
        output_dims = self.output_dims if output_dims is None else output_dims
        vmap_method = self.vmap_method if vmap_method is None else vmap_method
        arrays, statics, specs = self._prepare(args, output_dims, None)
        _preload(self, self.func.__module__, self.module_preload_mode)

        def host(*host_arrays):
            def one(sub):
                ins, in_outs = _inputs_to_weft(self.input_args, sub, statics)
                outs = _zeros_for(self.output_args, specs[len(in_outs):])
                with D.ScopedDevice("cpu"):
                    self.func(*ins, *outs)
                return [np.array(w.numpy(), copy=True) for w in in_outs + outs]

            return tuple(self._run_batched(one, host_arrays, specs))

        return self._callback(host, specs, arrays, vmap_method)


def jax_callable(func, num_outputs: int = 1, graph_mode=JaxCallableGraphMode.JAX, vmap_method="broadcast_all",
                 output_dims=None, in_out_argnames=None, stage_in_argnames=None, stage_out_argnames=None,
                 graph_cache_max: int | None = 32, module_preload_mode=JaxModulePreloadMode.CURRENT_DEVICE,
                 has_side_effect: bool = False):
    """A JAX function calling an annotated Python function of weft launches (Warp's ``jax_callable``).

    ``func``'s parameters are annotated like a kernel's (``wp.array(dtype=...)``, scalars); its last
    ``num_outputs`` parameters (in-out ones counted in) are outputs the call allocates (``output_dims``: a shape
    for all or ``{name: shape}``; default: the leading shape of the first array input) and passes to ``func`` as
    weft arrays for it to fill. The call returns the list of outputs. ``graph_mode``: ``NONE`` or ``JAX`` (weft's
    host callbacks never capture CUDA graphs; the ``WARP`` modes raise ValueError at call). The same arguments
    return the same cached object; ``graph_cache_max`` is updated on it.
    """
    graph_mode = JaxCallableGraphMode(graph_mode)
    key = (func, num_outputs, graph_mode, vmap_method, _hashable(output_dims),
           tuple(in_out_argnames) if in_out_argnames else None,
           tuple(stage_in_argnames) if stage_in_argnames else None,
           tuple(stage_out_argnames) if stage_out_argnames else None, int(module_preload_mode), bool(has_side_effect))
    with _REGISTRY_LOCK:
        c = _CALLABLES.get(key)
        if c is None:
            c = _CALLABLES[key] = JaxCallable(func, num_outputs, graph_mode, vmap_method, output_dims,
                                              in_out_argnames, stage_in_argnames, stage_out_argnames,
                                              graph_cache_max, module_preload_mode, has_side_effect)
        else:
            c.graph_cache_max = graph_cache_max
    return c


def clear_jax_callable_graph_cache(callable=None):
    """Clear the captured-graph cache of one ``jax_callable`` (or of all of them). weft's callables never
    capture graphs (see :class:`JaxCallableGraphMode`), so their caches are always empty; this keeps Warp's API."""
    if callable is not None:
        if not isinstance(callable, JaxCallable):
            raise TypeError(f"clear_jax_callable_graph_cache: callable must be a jax_callable wrapper, got "
                            f"{type(callable).__name__}")
        callable.captures.clear()
        return
    with _REGISTRY_LOCK:
        for c in _CALLABLES.values():
            c.captures.clear()
