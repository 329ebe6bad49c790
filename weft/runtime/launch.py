"""``wp.launch`` and ``wp.Launch``: argument checking, packing and the native call."""

from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass
from time import monotonic as _monotonic

import numpy as np

from .. import abi, config
from ..errors import Error, LaunchError, RuntimeError_
from ..ir import types as T
from ..types.composite import class_for
from ..types.layout import layout
from . import activity as _activity
from . import cuda_api
from . import device as D
from . import threads as _threads
from .array import _PENDING, materialize_launch
from .backends import _DIMS, finish_entry
from .capture import _capture, active_capture
from .struct_access import struct_arrays_written_by
from .tape import active_tape
from .threads import launch_threads

_INT32_MAX = 2**31 - 1
_INT64_MAX = 2**63 - 1


def _is_index(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def normalize_dim(dim) -> tuple[int, ...]:
    """``dim`` of a launch as a tuple of 1-4 non-negative ints (Python or NumPy ints; no floats, strings, bools)."""
    if _is_index(dim):
        dims = (int(dim),)
    else:
        items = tuple(dim) if isinstance(dim, (tuple, list, np.ndarray)) else None
        if items is None or not all(_is_index(d) for d in items):
            raise LaunchError(f"dim must be an int or a tuple of 1-4 ints, got {dim!r}") from None
        dims = tuple(int(d) for d in items)
    if not 1 <= len(dims) <= 4:
        raise LaunchError(f"dim must have 1 to 4 dimensions, got {dims}")
    if any(d < 0 for d in dims):
        raise LaunchError(f"dim must not be negative, got {dims}")
    total = 1
    for d in dims:
        total *= d
    if total > _INT64_MAX:
        raise LaunchError(f"dim {dims} has {total} points, more than a launch can index (2^63 - 1)")
    return dims


def check_grid(kernel, arity: int, dims: tuple[int, ...]) -> None:
    """Thread indices are 32-bit (as in Warp): every extent of the grid, and the flat index a kernel reads through
    ``i = wp.tid()``, must fit an int32; a kernel that unpacks ``wp.tid()`` needs a grid of that rank."""
    name = kernel.__name__
    if arity > 1 and arity != len(dims):
        raise LaunchError(f"kernel '{name}' unpacks wp.tid() into {arity} indices but was launched with a "
                          f"{len(dims)}-D dim {dims}\n{_tid_where(kernel)}")
    for d, n in enumerate(dims):
        if n > _INT32_MAX:
            raise LaunchError(f"kernel '{name}': dim {dims} has {n} points along dimension {d}; thread indices are "
                              "32-bit, so each extent is at most 2^31 - 1")
    if arity <= 1 and len(dims) > 1:
        total = 1
        for n in dims:
            total *= n
        if total > _INT32_MAX:
            raise LaunchError(f"kernel '{name}' reads its flat thread index (i = wp.tid()), which is 32-bit, but dim "
                              f"{dims} has {total} points; unpack wp.tid() into one index per dimension instead")


def _tid_where(kernel) -> str:
    """The user's line calling wp.tid() in ``kernel`` (the kernel's first line if there is none)."""
    import ast

    try:
        src = kernel.source
    except Exception:  # noqa: BLE001 - no source: the message stands without a location
        return ""
    for node in ast.walk(src.tree):
        if isinstance(node, ast.Call):
            f = node.func
            if (isinstance(f, ast.Attribute) and f.attr == "tid") or (isinstance(f, ast.Name) and f.id == "tid"):
                return src.loc(node).render()
    return src.loc(None).render()


def resolve_block_dim(device, requested) -> int:
    """The block size a launch on ``device`` runs with, by Warp 1.19's rule: omitted or non-positive means 1 on the
    CPU and 256 on a GPU; a GPU takes any other value as given; the CPU takes at most 1024 (ValueError beyond) and
    runs blocks of more than one lane only while ``wp.config.enable_cpu_blocks`` is True (else 1)."""
    impl = device.impl
    if requested is None or requested <= 0:
        return impl.default_block_dim
    requested = int(requested)
    if impl.max_block_dim and requested > impl.max_block_dim:
        raise ValueError(f"block_dim must be at most {impl.max_block_dim} on {device.alias.upper()}, got "
                         f"{requested}")
    return 1 if impl.lanes_opt_in and not config.enable_cpu_blocks else requested


@dataclass(frozen=True)
class ModuleExec:
    """Warp's record of a module loaded for one device and block size (``module.execs[(context, block_dim)]``)."""

    device: D.Device
    block_dim: int


def note_exec(kernel, device, block_dim: int) -> ModuleExec:
    """Record that ``kernel``'s module runs on ``device`` with ``block_dim`` (Warp's ``module.execs``)."""
    execs = kernel.module.execs
    key = (device.context, block_dim)
    found = execs.get(key)
    if found is None:
        found = execs[key] = ModuleExec(device, block_dim)
    return found


def launch(kernel, dim, inputs=(), outputs=(), adj_inputs=(), adj_outputs=(), device=None, stream=None,
           adjoint=False, record_tape=True, record_cmd=False, max_blocks=0, block_dim=None):
    """Launch ``kernel`` over the grid ``dim`` with ``inputs + outputs`` as its arguments.

    ``block_dim`` follows Warp 1.19 (:func:`resolve_block_dim`): on the CPU a launch runs one lane per block unless
    ``wp.config.enable_cpu_blocks`` is True."""
    fast = getattr(kernel, "_launch_fast", None)
    if (fast is not None and not adjoint and not record_cmd and (device is None or device is D.CPU or device == "cpu")
            and (block_dim is None or block_dim <= D.CPU.impl.max_block_dim)
            and _launch_fast(fast, dim, inputs, outputs, device, record_tape, block_dim)):
        return None
    from ..kernel import Kernel

    if not isinstance(kernel, Kernel):
        raise LaunchError(f"wp.launch expects a @wp.kernel, got {type(kernel).__name__}")
    args = list(inputs) + list(outputs)
    names = kernel._param_names
    if len(args) != len(names):
        raise LaunchError(f"kernel '{kernel.__name__}' takes {len(names)} arguments ({', '.join(names)}), "
                          f"got {len(args)}")
    dev = D.get_device(device) if device is not None else _infer_device(args)
    requested = block_dim
    block_dim = resolve_block_dim(dev, block_dim)
    dims = normalize_dim(dim)
    types = kernel.infer_types(args)
    read_only = adopt_foreign(kernel, types, args)
    if adjoint and record_cmd:
        return Launch(kernel, dev, True, dim=dims, args=args, adj_args=list(adj_inputs) + list(adj_outputs),
                      spec=kernel.specialize(types, block_dim), block_dim=block_dim)
    if adjoint:
        from .backward import launch_adjoint

        return launch_adjoint(kernel, dims, args, list(adj_inputs) + list(adj_outputs), dev, len(inputs),
                              block_dim=block_dim, stream=stream, max_blocks=max_blocks)
    spec = kernel.specialize(types, block_dim)
    note_exec(kernel, dev, block_dim)
    if spec.tile_dim and block_dim == 1 and requested is not None and requested > 1 and dev.impl.lanes_opt_in \
            and not record_cmd and (not record_tape or active_tape.get() is None):
        from .tiles import lanes_invariant

        # one-lane blocks (Warp 1.19's CPU rule) and blocks of the requested lanes give the same result for this
        # kernel: run the lanes together (SIMD across them); not on a Tape, whose backward sums in another order
        if lanes_invariant(spec.fn):
            block_dim = int(requested)
            spec = kernel.specialize(types, block_dim)
    if read_only:
        _check_read_only(kernel, spec, read_only)
    _check_devices(kernel, spec, args, dev)
    if spec.tile_dim:  # blocks of block_dim threads; wp.tid() gives leading launch coordinates (as Warp)
        from .tiles import check_tiled_launch

        check_tiled_launch(kernel, spec, dims)
    else:
        check_grid(kernel, spec.tid_arity, dims)
    packed = spec.pack(args)
    if record_cmd:
        return Launch(kernel, dev, spec=spec, dim=dims, args=args, packed=packed, block_dim=block_dim)
    tape = active_tape.get() if record_tape else None
    snapshots = tape._before_launch(spec, args) if tape is not None and spec.snapshot else {}
    graph = active_capture()
    if graph is not None and graph.device == dev and dev.impl.capture_by_replay:
        graph.launches.append(functools.partial(_run, spec, packed, dims, dev, args, block_dim))  # capture_file reads it
    else:
        _run(spec, packed, dims, dev, args, block_dim, stream, max_blocks)
    if tape is not None:
        # what only a @wp.func_replay reads is kept as this launch left it (not under graph capture, whose launches
        # run later: those arrays stay live, as without a custom replay)
        after = tape._after_launch(spec, args) if spec.replay_reads and graph is None else {}
        tape._record_launch(kernel, spec, dims, args, dev, len(inputs), block_dim, snapshots, stream=stream,
                            max_blocks=max_blocks, after=after)
    if dev.impl.fast_launch and not spec.debug and types is kernel._fixed_types and "_launch_fast" not in kernel.__dict__ \
            and not spec.tile_dim:  # tile kernels depend on block_dim, which the fast path does not check
        _enable_fast(kernel, spec)
    return None


# ---------------------------------------------------------------------------------------------------- fast path
# After a kernel with fixed parameter types has launched once on the CPU, later plain launches (CPU, release mode, no
# capture, no verify_fp, weft arrays and scalars) skip type inference, device resolution and the per-argument
# packers: one generated function checks and packs everything (runtime/packing.py), and the native entry point is
# called without ctypes argument conversion. Anything unusual falls through to the general path. A launch on a Tape
# takes this path too and is recorded like the general path records it, unless the kernel needs snapshots of arrays
# it updates in place (the general path takes them): a taped launch through the general path cost 40-60 us of
# Python on the CPU, three per substep of the taped cloth drape (about 150 us of its 600-900 us).
class _Fast:
    __slots__ = ("arity", "checks", "fwd", "has_arrays", "nargs", "pack", "spec", "written")

    def __init__(self, spec, pack, has_arrays: bool):
        self.spec = spec
        self.pack = pack
        self.fwd = spec.fwd_fast
        self.written = spec.written
        self.arity = spec.tid_arity
        self.nargs = len(spec.types)
        self.has_arrays = has_arrays
        # the module reports errors in release mode (geometry queries): its error state is read after each launch
        self.checks = spec.checks_errors


def _enable_fast(kernel, spec) -> None:
    from .packing import make_fast_packer

    pack = make_fast_packer(spec.types) if spec.fwd_fast is not None else None
    has_arrays = any(isinstance(t, T.ArrayType) for t in spec.types)
    kernel._launch_fast = _Fast(spec, pack, has_arrays) if pack is not None else None


def _default_is_cpu() -> bool:
    if D._current.get() is None and D._default_alias in (None, "cpu") and D._cuda_probed and len(D._devices) == 1:
        return True  # the CPU is the only device
    return D.get_device(None) is D.CPU


def _launch_fast(fast: _Fast, dim, inputs, outputs, device, record_tape, block_dim=None) -> bool:
    """Run the launch if it is a plain one; False (nothing done) sends it down the general path."""
    if _activity.active or config.mode == "debug" or fast.spec.debug or config.verify_fp or _capture.get() is not None:
        return False  # (timing: the backend's launch, which timing_begin hooks)
    tape = active_tape.get() if record_tape else None
    if tape is not None and (fast.spec.snapshot or fast.spec.replay_reads):
        return False
    if device is None and not fast.has_arrays and not _default_is_cpu():
        return False
    args = inputs if not outputs else [*inputs, *outputs]
    if len(args) != fast.nargs:
        return False
    if type(dim) is int:
        if dim < 0 or dim > _INT32_MAX or fast.arity > 1:
            return False
        dims, ndim = _DIMS[1].pack(dim), 1
    else:
        try:
            shape = normalize_dim(dim)
            check_grid(fast.spec.kernel, fast.arity, shape)
        except LaunchError:
            return False
        ndim = len(shape)
        dims = _DIMS[ndim].pack(*shape)
    try:
        packed = fast.pack(args)
    except Error:
        return False  # the general path reports it, naming the argument
    if packed is None:
        return False
    if _PENDING:
        materialize_launch(fast.spec.types, args, False)
    until, nthreads = _threads.state
    if _monotonic() >= until:
        nthreads = launch_threads()
    status = fast.fwd(packed, dims, ndim, nthreads)
    if status:
        finish_entry(status, fast.spec.strided_fwd, fast.spec.kernel.__name__, packed, dims, ndim, nthreads)
    for i in fast.written:
        args[i]._shared.version += 1
    if fast.checks:
        check_errors(fast.spec)
    if tape is not None:
        shape = (dim,) if type(dim) is int else tuple(normalize_dim(dim))
        tape._record_launch(fast.spec.kernel, fast.spec, shape, list(args), D.CPU, len(inputs),
                            resolve_block_dim(D.CPU, block_dim), {})
    return True


def _run(spec, packed: bytes, dims: tuple[int, ...], dev, args, block_dim=256, stream=None, max_blocks=0) -> None:
    if _PENDING:
        materialize_launch(spec.types, args, False)
    dev.impl.launch(spec, packed, dims, dev, block_dim, stream, max_blocks)
    for i in spec.written:
        a = args[i]
        if hasattr(a, "_mark_written"):
            a._mark_written()
    if spec.debug or (spec.checks_errors and dev.impl.synchronous):
        check_errors(spec)
    if config.verify_fp:
        verify_fp(spec, args)


class _ErrorState(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int32), ("count", ctypes.c_int32),
                ("message", ctypes.c_char * abi.ERROR_MESSAGE_BYTES)]


def check_errors(spec) -> None:
    if not spec.errors:
        return
    state = _ErrorState.from_address(spec.errors)
    if state.code:
        code, count, msg = state.code, state.count, state.message.decode(errors="replace")
        state.code = 0
        state.count = 0
        state.message = b""
        report = abi.error_report(code, count, msg)
        if report is not None:
            raise RuntimeError_(report)


def verify_fp(spec, args) -> None:
    """wp.config.verify_fp: raise if the launch left NaN/Inf in an array it writes (parameters, and arrays held in
    struct parameters)."""
    name = spec.kernel.__name__
    targets = [(f"argument '{spec.kernel._param_names[i]}'", args[i]) for i in spec.written]
    for i, path in struct_arrays_written_by(spec):
        obj = args[i]
        for field in path:
            obj = getattr(obj, field, None)
        targets.append((f"argument '{spec.kernel._param_names[i]}.{'.'.join(path)}'", obj))
    for label, a in targets:
        if not hasattr(a, "numpy"):
            continue
        data = a.numpy()
        if data.dtype.kind == "f" and not np.isfinite(data).all():
            bad = np.argwhere(~np.isfinite(data))[0]
            raise RuntimeError_(f"kernel '{name}' wrote a non-finite value ({data[tuple(bad)]}) into {label} at index "
                                f"{tuple(int(x) for x in bad)} (wp.config.verify_fp is set)")


def adopt_foreign(kernel, types, args: list) -> list[int]:
    """Replace foreign array arguments (NumPy, torch, DLPack, array interfaces) in ``args`` by weft arrays over them.

    The launch holds ``args`` until its kernel has run (and a recorded launch, tape or capture keeps it), so memory a
    conversion made (a read-only NumPy array is copied) lives as long as the kernel can read it. Returns the
    indices of read-only foreign arrays.
    """
    from .array import array
    from .packing import wrap_foreign

    read_only = []
    for i, (t, v) in enumerate(zip(types, args)):
        if v is None or isinstance(v, (array, _RawParam)) or not isinstance(t, T.ArrayType) or \
                t.kind is not T.ArrayKind.ARRAY:
            continue
        if _is_read_only(v):
            read_only.append(i)
        args[i] = wrap_foreign(v, t, lambda i=i: f"kernel '{kernel.__name__}' argument '{kernel._param_names[i]}'")
    return read_only


def _is_read_only(v) -> bool:
    if isinstance(v, np.ndarray):
        return not v.flags.writeable
    for attr in ("__array_interface__", "__cuda_array_interface__"):
        iface = getattr(v, attr, None)
        if isinstance(iface, dict) and isinstance(iface.get("data"), tuple) and len(iface["data"]) == 2:
            return bool(iface["data"][1])
    return False


def _check_read_only(kernel, spec, read_only: list[int]) -> None:
    for i in read_only:
        if i in spec.written:
            raise LaunchError(f"kernel '{kernel.__name__}' argument '{kernel._param_names[i]}' is a read-only array "
                              "but the kernel writes it; pass a writable array (e.g. np.array(x) makes a copy)")


def _infer_device(args):
    for a in args:
        dev = getattr(a, "device", None)
        if isinstance(dev, D.Device):
            return dev
    return D.get_device(None)


def _check_devices(kernel, spec, args, dev) -> None:
    for name, a in zip(kernel._param_names, args):
        adev = getattr(a, "device", None)
        if isinstance(adev, D.Device) and adev != dev:
            # wp.config.launch_array_access_mode: memory the launch device can reach (managed, pinned, peer) may be
            # passed unless STRICT; memory it cannot reach never is (the launch would crash)
            strict = config.launch_array_access_mode == config.LaunchArrayAccessMode.STRICT
            if not strict and cuda_api.reachable(dev, a):
                continue
            why = " (wp.config.launch_array_access_mode is STRICT)" if strict else ""
            kind = getattr(a, "memory_kind", None)
            kind = f" (memory_kind={kind.name})" if kind is not None else ""
            raise LaunchError(f"kernel '{kernel.__name__}' argument '{name}' is on device '{adev}'{kind} but the "
                              f"launch is on '{dev}'{why}; copy it with "
                              f"a.to('{dev}') or launch on '{adev}'")


class Launch:
    """A launch prepared once and relaunched cheaply with ``launch()``: what ``wp.launch(..., record_cmd=True)``
    returns, or Warp's ``wp.Launch(kernel, device, adjoint=False)`` built empty and filled with ``set_dim`` and
    ``set_param_by_name`` / ``set_param_at_index`` (parameters not set are zero; arrays must be set before
    ``launch()``; ``adjoint=True`` runs the backward kernel, whose adjoint arrays are set with ``adjoint=True``)."""

    def __init__(self, kernel, device=None, adjoint: bool = False, *, dim=None, args=None, adj_args=None,
                 spec=None, packed: bytes | None = None, block_dim: int | None = None):
        self.kernel = kernel
        self.device = D.get_device(device)
        self.adjoint = bool(adjoint)
        self.block_dim = block_dim = resolve_block_dim(self.device, block_dim)
        #: Warp's loaded-module record of this launch (its device and block size)
        self.module_exec = note_exec(kernel, self.device, block_dim)
        if spec is None:
            kernel.annotations()
            if kernel._fixed_types is None:
                raise LaunchError(f"wp.Launch(kernel '{kernel.__name__}'): the kernel is generic; record a launch "
                                  "with wp.launch(..., record_cmd=True) instead")
            spec = kernel.specialize(kernel._fixed_types, block_dim)
        self.spec = spec
        self.args = list(args) if args is not None else [_zero_argument(t) for t in spec.types]
        self.adj_args = list(adj_args) if adj_args is not None else [None] * len(self.args)
        self.dim = None
        self._raw: dict[int, bytes] = {}  # parameters set from their bytes (set_param_at_index_from_ctype)
        self._packed = packed
        self._fast_fwd = None
        self._written = ()
        if dim is not None:
            self.set_dim(dim)
        if packed is not None:
            self._prepare()

    def _prepare(self) -> None:
        """What launch() needs, resolved once: the raw entry point and the version counters of written arrays."""
        spec = self.spec
        fwd = spec.fwd_fast
        self._fast_fwd = fwd if fwd is not None and self.device.impl.fast_launch and not spec.debug \
            and not spec.checks_errors and not self.adjoint else None
        try:
            self._written = tuple(self.args[i]._shared for i in spec.written)
        except AttributeError:  # a foreign array argument: take the general path
            self._fast_fwd = None

    def set_dim(self, dim) -> None:
        dims = normalize_dim(dim)
        if not self.spec.tile_dim:
            check_grid(self.kernel, self.spec.tid_arity, dims)
        self.dim = dims
        self._dims = _DIMS[len(self.dim)].pack(*self.dim)
        self._ndim = len(self.dim)

    def set_param_at_index(self, index: int, value, adjoint: bool = False) -> None:
        if adjoint:
            self.adj_args[index] = value
            return
        t = self.spec.types[index]
        if isinstance(t, (T.VectorType, T.MatrixType)) and isinstance(value, (int, float, np.number)):
            raise LaunchError(f"kernel '{self.kernel.__name__}' argument '{self.kernel._param_names[index]}' "
                                      f"expects {t} but got a single value")
        args = list(self.args)
        args[index] = value
        self.set_params(args)

    def set_param_by_name(self, name: str, value, adjoint: bool = False) -> None:
        self.set_param_at_index(self._index(name), value, adjoint)

    def set_param_at_index_from_ctype(self, index: int, value) -> None:
        """Set parameter ``index`` from its kernel-side form: the bytes ``__ctype__()`` of a struct or an array
        returns (the parameter is passed as those bytes), or a plain value (as ``set_param_at_index``)."""
        if not isinstance(value, (bytes, bytearray, memoryview)):
            self.set_param_at_index(index, value)
            return
        want = layout(self.spec.types[index]).size
        if len(value) != want:
            raise LaunchError(f"kernel '{self.kernel.__name__}' argument '{self.kernel._param_names[index]}': "
                              f"{len(value)} bytes given, its kernel-side form takes {want}")
        args = list(self.args)
        args[index] = _RawParam(bytes(value))
        self._raw = {**self._raw, index: bytes(value)}
        self.set_params(args)

    def set_param_by_name_from_ctype(self, name: str, value) -> None:
        self.set_param_at_index_from_ctype(self._index(name), value)

    def _index(self, name: str) -> int:
        try:
            return self.kernel._param_names.index(name)
        except ValueError:
            raise LaunchError(f"kernel '{self.kernel.__name__}' has no parameter '{name}'") from None

    @property
    def params(self) -> list:
        """Warp's parameter list of the launch: the launch dimensions, the parameter values, and for an adjoint
        launch the adjoint values after them (zero for parameters that are not arrays, the adjoint arrays set with
        ``adjoint=True`` or None)."""
        values = [v.data if isinstance(v, _RawParam) else v for v in self.args]
        out = [self.dim, *values]
        if self.adjoint:
            out += [g if isinstance(t, T.ArrayType) else _zero_argument(t)
                    for t, g in zip(self.spec.types, self.adj_args)]
        return out

    def set_params(self, values) -> None:
        args = list(values)
        if any(a is None for a in args):
            self.args = args
            self._packed = None
            return  # arrays still unset: packed at launch()
        # a rejected value (an error below) leaves the command's previous parameters in place
        read_only = adopt_foreign(self.kernel, self.spec.types, args)
        if read_only:
            _check_read_only(self.kernel, self.spec, read_only)
        self._raw = {i: b for i, b in self._raw.items() if isinstance(args[i], _RawParam)}
        packed = self.spec.pack(args, self._raw)
        self.args = args
        self._packed = packed
        self._prepare()

    def launch(self, stream=None) -> None:
        if self.dim is None:
            raise LaunchError(f"kernel '{self.kernel.__name__}': set the launch dimensions (set_dim) first")
        missing = [n for n, a in zip(self.kernel._param_names, self.args) if a is None]
        if missing:
            raise LaunchError(f"kernel '{self.kernel.__name__}': parameter '{missing[0]}' (an array) was not set")
        if self.adjoint:
            from .backward import launch_adjoint

            launch_adjoint(self.kernel, self.dim, self.args, self.adj_args, self.device, len(self.args),
                           block_dim=self.block_dim, stream=stream)
            return
        if self._packed is None:
            self.set_params(self.args)
        fwd = self._fast_fwd
        if fwd is not None and not config.verify_fp and not _activity.active:
            until, nthreads = _threads.state
            if _monotonic() >= until:
                nthreads = launch_threads()
            status = fwd(self._packed, self._dims, self._ndim, nthreads)
            if status:
                finish_entry(status, self.spec.strided_fwd, self.kernel.__name__, self._packed, self._dims,
                             self._ndim, nthreads)
            for shared in self._written:
                shared.version += 1
            return
        _run(self.spec, self._packed, self.dim, self.device, self.args, stream=stream)


class _RawParam:
    """A parameter set from its kernel-side bytes (``Launch.set_param_at_index_from_ctype``)."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


def _zero_argument(t: T.Type):
    """The value of a parameter a ``wp.Launch`` has not been given: zero (None for arrays, which must be set)."""
    if isinstance(t, T.ArrayType):
        return None
    if isinstance(t, T.StructType):
        return t.pyclass() if t.pyclass is not None else None
    cls = class_for(t)
    if isinstance(t, T.ScalarType):
        return cls(0)
    if isinstance(t, T.VectorType):
        return cls(*([0] * t.length))  # zero quaternions and transforms too (their constructors default to identity)
    return cls()
