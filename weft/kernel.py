"""``@wp.kernel`` and its compiled specialisations."""

from __future__ import annotations

import ctypes
import inspect
import re
import threading
import weakref
from dataclasses import dataclass, field

from . import ahead, config, pipeline, speccache
from .errors import CacheError, CompileError, LaunchError
from .frontend import statics
from .frontend.func import make_func, reject_union_annotations
from .frontend.source import FunctionSource, capture, evaluate_annotation, remember_source
from .ir import types as T
from .ir.access import array_access as _array_access
from .ir.access import replay_read_params, snapshot_params
from .ir.nodes import Function
from .pipeline import Direction, Target
from .runtime.packing import make_packer, padding_plan
from .toolchain import preamble
from .types.mapping import to_ir, type_of_value

_module_options: dict[str, dict] = {}


def set_module_options(options: dict, module=None) -> None:
    """Options for every kernel of a Python module (``enable_backward``, ``max_unroll``, ``mode``)."""
    name = module if isinstance(module, str) else getattr(module, "__name__", None)
    if name is None:
        name = inspect.currentframe().f_back.f_globals.get("__name__", "__main__")
    _module_options.setdefault(name, {}).update(options)


def get_module_options(module=None) -> dict:
    """The options of a Python module's kernels (weft's defaults for those never set)."""
    name = module if isinstance(module, str) else getattr(module, "__name__", None)
    if name is None:
        name = inspect.currentframe().f_back.f_globals.get("__name__", "__main__")
    defaults = {"enable_backward": config.enable_backward, "max_unroll": config.max_unroll, "mode": config.mode,
                "fast_math": False, "block_dim": 256, "lineinfo": False, "deterministic": config.deterministic,
                "deterministic_max_records": config.deterministic_max_records}
    return {**defaults, **_module_options.get(name, {})}


@dataclass
class Spec:
    """One compiled specialisation of a kernel (concrete parameter types)."""

    kernel: Kernel
    types: tuple[T.Type, ...]
    _fn: Function | None
    tid_arity: int
    _source: str | None
    debug: bool
    lib: object = None
    fwd: object = None
    packers: list = field(default_factory=list)
    pads: list = field(default_factory=list)
    tail: bytes = b""
    written: tuple[int, ...] = ()  # parameter indices of arrays the kernel writes
    read: tuple[int, ...] = ()
    snapshot: tuple[int, ...] = ()  # arrays a recorded launch must copy first (in-place updates)
    #: arrays only @wp.func_replay bodies read: a recorded launch copies them right after it runs (ir.access)
    replay_reads: tuple[int, ...] = ()
    adjoint: object = None  # autodiff.compiled.AdjointSpec, built on first backward
    #: frozenset of array parameters without gradients -> the AdjointSpec for launches with exactly those (tile
    #: kernels only, see Kernel.adjoint_of)
    adjoint_variants: dict = field(default_factory=dict)
    #: backward programs differentiated (and rendered) ahead of their compile (Kernel.adjoint_program,
    #: prepare_adjoint): inactive set -> (program, source or None), taken by adjoint_of
    pending_adjoints: dict = field(default_factory=dict)
    errors: object = None
    checks_errors: bool = False  # the module reports runtime errors in release mode too (exports weft_release_checks)
    tile_dim: int = 0  # block size of tile kernels (0: no tiles)
    _relower: object = None  # lowers the IR again when a warm start skipped it
    programs: dict = field(default_factory=dict)  # pipeline.Target -> pipeline.Program rendered for another target
    fwd_fast: object = None  # the forward entry without ctypes argument conversion (launch fast paths)
    deps: object = None  # what the lowering resolved statically (a warm-start record is saved when known)
    record_block_dim: int | None = None  # the block_dim the record key of this spec was made with
    cpp_key: str | None = None  # kernel-cache key of the CPU binary, from a warm-start record
    #: (parameter index, field path) of the arrays held in struct parameters that the kernel writes (what
    #: wp.config.verify_fp checks besides array parameters); computed on first need
    struct_written: tuple | None = None
    struct_read: tuple | None = None  # (parameter index, field path) of struct-held arrays the kernel loads from
    _strided: object = None  # the forward entry of the general (any layout) instantiation, built on first need

    def strided_fwd(self):
        """The forward entry for launches whose arrays are not all contiguous in their innermost dimension: the
        module's source compiled with WEFT_STRIDED (Renderer.render_entry), on the first launch that needs it."""
        if self._strided is None:
            name = self.kernel.__name__ if self.kernel is not None else self.fn.name
            self._strided = _strided_entry(self.source, name, self.debug, "weft_fwd")
        return self._strided

    @property
    def fn(self) -> Function:
        if self._fn is None:
            self._fn = self._relower()
        return self._fn

    @property
    def source(self) -> str:
        if self._source is None:
            program = pipeline.render_module(self.fn, self.kernel.__name__, self.debug, Target.CPU, Direction.FORWARD)
            self._source = preamble.apply(program.source, self.kernel.options, cuda=False)
        return self._source

    def pack(self, args, overrides: dict | None = None) -> bytes:
        """Pack launch arguments; ``overrides`` maps parameter index -> ready-made bytes (backward descs)."""
        parts = []
        for i, (pad, packer, v) in enumerate(zip(self.pads, self.packers, args)):
            if pad:
                parts.append(pad)
            parts.append(overrides[i] if overrides and i in overrides else packer(v))
        parts.append(self.tail)
        return b"".join(parts)


def _strided_entry(source: str, name: str, debug: bool, entry: str):
    lib = pipeline.build(source, name + "_strided", debug, strided=True)
    fn = lib._FuncPtr((entry, lib))  # called like the fast entries: (bytes, bytes, int, int)
    fn.restype = ctypes.c_int32
    return fn


@dataclass
class AdjointSpec:
    prog: object
    source: str
    lib: object
    bwd: object
    errors: object
    programs: dict = field(default_factory=dict)  # pipeline.Target -> pipeline.Program rendered for another target
    name: str = ""
    debug: bool = False
    _strided: object = None

    def strided_bwd(self):
        """The backward entry for launches with non-contiguous arrays (see Spec.strided_fwd)."""
        if self._strided is None:
            self._strided = _strided_entry(self.source, self.name, self.debug, "weft_bwd")
        return self._strided

    @property
    def snapshot_params(self) -> tuple[int, ...]:
        return self.prog.snapshot_params


@dataclass(frozen=True, slots=True)
class KernelArg:
    """One parameter of a kernel as ``kernel.adj.args`` lists it: its name, weft type, and whether the kernel reads
    or writes it (array parameters, through views; from the lowered IR)."""

    label: str
    type: T.Type
    is_read: bool
    is_write: bool


@dataclass(frozen=True, slots=True)
class KernelParams:
    """``kernel.adj`` (Warp's per-kernel code-generation object): weft exposes only its ``args`` (see KernelArg); the
    generated code itself (Warp's ``blocks``, ``variables``, ``tree``) has no weft counterpart."""

    args: tuple[KernelArg, ...]
    #: {expression text: value} of the wp.static() expressions evaluated when the kernel was declared
    resolved_static_expressions: dict = field(default_factory=dict)


class Kernel:
    """A kernel: a Python function compiled for each distinct set of argument types it is launched with."""

    _wp_is_kernel_ = True

    def __init__(self, func, key: str | None = None, options: dict | None = None, module=None):
        reject_union_annotations(func, "kernel")
        self.func = func
        # Warp's form: the qualified name with '.' -> '__' and other non-identifier characters dropped
        self.key = key or (options or {}).get("name") or re.sub("[^0-9a-zA-Z_]+", "",
                                                                    func.__qualname__.replace(".", "__"))
        self._full_key = f"{func.__module__}.{func.__qualname__}"
        mod_name = module if isinstance(module, str) and module != "unique" else getattr(module, "name", None)
        self._module_name = mod_name or func.__module__
        mod_opts = {**_module_options.get(func.__module__, {}), **_module_options.get(self._module_name, {})}
        self.options = {**mod_opts, **(options or {})}
        self.enable_backward = bool(self.options.get("enable_backward", config.enable_backward))
        self.__name__ = func.__name__
        self.__doc__ = func.__doc__
        self.__wrapped__ = func
        self._source: FunctionSource | None = None
        self._specs: dict[tuple, Spec] = {}
        self._lock = threading.Lock()
        self._param_names: list[str] = list(inspect.signature(func).parameters)
        self._annotations: list | None = None
        self._fixed_types: tuple | None = None
        self._overloads: list[tuple[T.Type, ...]] = []  # declared with wp.overload, compiled by compile()
        #: a hand-written backward: ``custom_adjoint(rec)`` runs instead of the generated adjoint for a launch
        #: recorded on a Tape (``rec``: its runtime.tape.LaunchRecord with the arguments, the snapshots of arrays it
        #: updated in place, the versions of the arrays right after it and the indices of the arrays whose gradients
        #: its stores consume); the Tape's overwrite check counts every argument as read by it and the generated
        #: adjoint is never compiled (weft.sim's eval_fk uses it); pending gradient zeros (Tape.zero) are written
        #: before it runs unless the function has ``zeroes_lazily = True`` (it touches memory only through weft
        #: launches and host accesses, which zero what they touch)
        self.custom_adjoint = None
        if "<locals>" in func.__qualname__:  # not an attribute of its module: compile-ahead waves find it here
            ahead.note_local_kernel(self)
        remember_source(func)
        statics.declare(func, lambda: self.source)  # wp.static() expressions evaluated now, as in Warp

    def _register(self) -> Kernel:
        """Record a kernel the decorator returns by its qualified name (the decorator form of ``wp.overload`` finds
        it there, and ``Module.mark_modified`` / ``_get_live_kernels``). A module-level or custom-named kernel is kept
        alive, as Warp's module keeps it (a stub rebinding its name still finds it); one made in a function without a
        name of its own lives as long as its references."""
        func = self.func
        same = _BY_QUALNAME.setdefault((func.__module__, func.__qualname__), [])
        same[:] = [r for r in same if r() is not None and r() is not self and r().key != self.key] + [weakref.ref(self)]
        if "<locals>" not in func.__qualname__ or self.options.get("name"):
            _KEPT[(func.__module__, func.__qualname__, self.key)] = self
        return self

    @property
    def module(self):
        """Warp's module object of this kernel (its name, shared options and ``load``)."""
        from .module import get_module

        return get_module(self._module_name)

    # ------------------------------------------------------------------ signature
    @property
    def source(self) -> FunctionSource:
        if self._source is None:
            self._source = capture(self.func)
        return self._source

    def annotations(self) -> list[T.Type]:
        if self._annotations is None:
            hints = dict(getattr(self.func, "__annotations__", {}))
            out = []
            for name in self._param_names:
                ann = hints.get(name, inspect.Parameter.empty)
                if ann is inspect.Parameter.empty:
                    raise CompileError(f"parameter '{name}' of kernel {self.__name__} has no type annotation",
                                       self.source.loc(_param_node(self.source, name)),
                                       hint=f"annotate it, e.g. {name}: float or {name}: wp.array(dtype=float)")
                if isinstance(ann, str):
                    try:
                        ann = evaluate_annotation(self.func, ann)
                    except Exception as exc:  # noqa: BLE001 - any failure is the user's annotation
                        raise CompileError(
                            f"cannot evaluate the annotation '{ann}' of parameter '{name}' of kernel "
                            f"{self.__name__}: {exc}", self.source.loc(_param_node(self.source, name)),
                            hint="string annotations (from `from __future__ import annotations`) are evaluated in "
                                 "the module's globals and the function's closure") from None
                try:
                    out.append(to_ir(ann))
                except TypeError as exc:
                    raise CompileError(f"parameter '{name}' of kernel {self.__name__}: {exc}",
                                       self.source.loc(_param_node(self.source, name))) from None
                if isinstance(out[-1], T.ArrayType) and out[-1].kind is T.ArrayKind.FIXED:
                    raise CompileError(f"parameter '{name}' of kernel {self.__name__}: a wp.fixedarray is a "
                                       f"kernel-local array (made with wp.zeros(shape, dtype) in kernel code), not a "
                                       f"launch argument", self.source.loc(_param_node(self.source, name)),
                                       hint="pass a wp.array; funcs may take fixed arrays from the kernel that made "
                                            "them")
            self._annotations = out
            if not any(_is_generic(t) for t in out):
                self._fixed_types = tuple(out)
        return self._annotations

    @property
    def arg_names(self) -> list[str]:
        return list(self._param_names)

    @property
    def adj(self) -> KernelParams:
        """The kernel's parameters with their array access (``kernel.adj.args[i].is_write``, as Warp's), from the
        most recent specialization, or from lowering the annotated types of a kernel not launched yet."""
        spec = next(reversed(self._specs.values()), None)
        if spec is None:
            self.annotations()
            if self._fixed_types is None:
                raise AttributeError(f"kernel {self.__name__} is generic: launch it (or wp.overload it) first")
            spec = self._lower(self._fixed_types, self.debug_mode())
        fn = spec.fn
        written, read = _array_access(fn)
        return KernelParams(tuple(KernelArg(name, p.type, i in read, i in written)
                                  for i, (name, p) in enumerate(zip(self._param_names, fn.params))),
                            statics.resolved_expressions(self.func))

    def infer_types(self, args) -> tuple[T.Type, ...]:
        anns = self.annotations()
        if self._fixed_types is not None:
            return self._fixed_types
        out = []
        for name, ann, v in zip(self._param_names, anns, args):
            if not _is_generic(ann):
                out.append(ann)
                continue
            try:
                vt = type_of_value(v)
            except TypeError:
                from .interop.foreign import as_weft_array

                try:
                    vt = type_of_value(as_weft_array(v))
                except (TypeError, ValueError):
                    raise LaunchError(f"kernel '{self.__name__}' argument '{name}': cannot infer a type from "
                                      f"{type(v).__name__}") from None
            if isinstance(ann, T.ArrayType):
                if not isinstance(vt, T.ArrayType) or vt.ndim != ann.ndim or not _kinds_match(ann, vt):
                    raise LaunchError(f"kernel '{self.__name__}' argument '{name}': expected {ann}, got {vt}")
            elif isinstance(ann, T.GenericType):
                if isinstance(vt, T.ScalarType) and type(v) in (int, float) and ann.kind is T.GenericKind.FLOAT:
                    vt = T.FLOAT32
                if not ann.accepts(vt):
                    raise LaunchError(f"kernel '{self.__name__}' argument '{name}': expected {ann}, got {vt}")
            out.append(vt)
        return tuple(out)

    # ------------------------------------------------------------------ compilation
    def debug_mode(self) -> bool:
        """Whether this kernel compiles in debug mode (bounds checks, asserts): its module's or its own ``mode``
        option (``wp.set_module_options({"mode": "debug"})``, ``@wp.kernel(module_options=...)``), else
        ``wp.config.mode``, as in Warp."""
        return self.options.get("mode", config.mode) == "debug"

    def specialize(self, types: tuple[T.Type, ...], block_dim: int | None = None) -> Spec:
        debug = self.debug_mode()
        key = (types, debug)
        spec = self._specs.get(key)
        if spec is not None and spec.tile_dim and block_dim and spec.tile_dim != block_dim:
            key = (types, debug, int(block_dim))  # tile kernels compile once per block_dim
            spec = self._specs.get(key)
        if spec is not None and spec.fwd is not None:
            return spec
        if self.options.get("entry_point_abi", "warp") != "warp":
            raise CompileError(f"kernel {self.__name__}: entry_point_abi={self.options['entry_point_abi']!r} (Warp's "
                               "OptiX-style CUDA entry point) is not supported by weft; use the default 'warp'")
        with self._lock:
            spec = self._specs.get(key)
            if spec is None:
                spec = self._lower(types, debug, block_dim)
                self._specs[key] = spec
                if spec.tile_dim:  # the block size tile kernels compiled ahead will most likely be launched with
                    ahead.note_tile_block_dim(spec.tile_dim)
            if spec.fwd is None:
                self._load(spec)
        return spec

    def prepare_ahead(self, tile_block_dim: int | None) -> Spec | None:
        """Lower this (non-generic) kernel as its first launch would, ahead of it (weft/ahead.py), and keep the
        specialisation unloaded: its compile is batched with its siblings', and its launch (or ``load_prepared``)
        loads it. A kernel using tiles is lowered for ``tile_block_dim`` (the block size of the program's latest
        first launch), else 1 (a CPU launch's block size unless ``wp.config.enable_cpu_blocks`` and an explicit
        ``block_dim``); a launch with another block size compiles it again. None when there is nothing to do, or when another
        thread holds the kernel (it is compiling it)."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            self.annotations()
            types = self._fixed_types
            debug = self.debug_mode()
            if types is None or self._specs:
                return None
            spec = self._lower(types, debug, 1)  # the block size a plain CPU wp.launch (and launch_tiled) runs with
            block_dim = int(tile_block_dim or 1)
            if spec.tile_dim and block_dim != spec.tile_dim:
                spec = self._lower(types, debug, block_dim)
            self._specs[(types, debug)] = spec
            return spec
        finally:
            self._lock.release()

    def load_prepared(self, spec: Spec) -> None:
        """Compile (or load) a specialisation made by prepare_ahead, unless a launch did already."""
        with self._lock:
            if spec.fwd is None:
                self._load(spec)

    def cpp_key(self, spec: Spec) -> str:
        """The kernel-cache key of a specialisation's CPU module."""
        return spec.cpp_key or pipeline.built_key(spec.source, spec.debug)

    def _lower(self, types: tuple[T.Type, ...], debug: bool, block_dim: int | None = None) -> Spec:
        name = _c_name(self.__name__)
        options = {**self.options, "block_dim": int(block_dim)} if block_dim else self.options
        param_types = dict(zip(self._param_names, types))

        def relower() -> Function:
            return pipeline.lower(self.source, param_types, name, options).fn

        spec = self._from_record(types, debug, block_dim, relower)
        if spec is None:
            lowered = pipeline.lower(self.source, param_types, name, options)
            source = pipeline.render_module(lowered.fn, self.__name__, debug, Target.CPU, Direction.FORWARD).source
            source = preamble.apply(source, self.options, cuda=False)
            spec = Spec(self, types, lowered.fn, lowered.tid_arity, source, debug)
            spec.written, spec.read = _array_access(lowered.fn)
            spec.snapshot = snapshot_params(lowered.fn)
            spec.replay_reads = replay_read_params(lowered.fn)
            spec.tile_dim = int(lowered.fn.tile_dim or 0)
            spec._relower = relower
            if lowered.deps.ok:
                spec.deps = lowered.deps.deps
                spec.record_block_dim = block_dim

        def where_for(i):
            return lambda: f"kernel '{self.__name__}' argument '{self._param_names[i]}'"

        spec.packers = [make_packer(t, where_for(i)) for i, t in enumerate(types)]
        spec.pads, spec.tail, _ = padding_plan(types)
        from .module import note_references  # module.py builds on this one (Warp's module objects)

        note_references(self)  # a redefinition of a func it calls (a reload) drops this spec
        return spec

    def _record_key(self, types, debug: bool, block_dim) -> str | None:
        if not config.spec_cache:
            return None
        flags = " ".join(pipeline.cpu_options(debug).flags(False))
        try:
            return speccache.record_key(self, types, debug, block_dim, flags)
        except Exception:  # noqa: BLE001 - no source, no compiler: no record, the normal path reports the problem
            return None

    def _from_record(self, types, debug: bool, block_dim, relower) -> Spec | None:
        """A Spec restored from an earlier process's lowering, if every dependency is unchanged."""
        key = self._record_key(types, debug, block_dim)
        record = speccache.load(self, key) if key else None
        if record is None:
            return None
        try:  # a record with missing or ill-typed fields (another weft version, a damaged file) is ignored
            tid_arity, tile_dim = int(record["tid_arity"]), int(record["tile_dim"])
            written, read, snapshot, replay_reads = (tuple(int(i) for i in record[f])
                                                     for f in ("written", "read", "snapshot", "replay_reads"))
            cpp_key = record["cpp_key"]
        except (KeyError, TypeError, ValueError):
            return None
        if not isinstance(cpp_key, str) or not all(0 <= i < len(types)
                                                   for i in written + read + snapshot + replay_reads):
            return None
        spec = Spec(self, types, None, tid_arity, None, debug)
        spec.written, spec.read, spec.snapshot, spec.tile_dim = written, read, snapshot, tile_dim
        spec.replay_reads = replay_reads
        spec._relower = relower
        spec.cpp_key = cpp_key
        return spec

    def _save_record(self, spec: Spec, cpp_key: str) -> None:
        deps = spec.deps
        key = self._record_key(spec.types, spec.debug, spec.record_block_dim) if deps is not None else None
        if key is None:
            return
        speccache.save(key, {"deps": deps, "cpp_key": cpp_key, "tid_arity": spec.tid_arity,
                             "written": list(spec.written), "read": list(spec.read), "snapshot": list(spec.snapshot),
                             "replay_reads": list(spec.replay_reads), "tile_dim": spec.tile_dim}, self, spec.source)

    def _load(self, spec: Spec) -> None:
        lib = None
        cpp_key = spec.cpp_key
        if cpp_key is not None:
            lib = pipeline.load_built(cpp_key)
            if lib is None:  # the binary was cleared: lower and compile as usual
                spec.cpp_key = None
        if lib is None:
            key = pipeline.built_key(spec.source, spec.debug)
            lib = pipeline.load_built(key)
            if lib is None:  # a cold compile: compile the module's other cold kernels with it (weft/ahead.py)
                ahead.module_cold(self, spec, key)
                lib = pipeline.build(spec.source, self.__name__, spec.debug)
            self._save_record(spec, key)
        try:
            fwd, size_fn = lib.weft_fwd, lib.weft_args_size
        except AttributeError:
            raise CacheError(f"the compiled module of kernel '{self.__name__}' ({lib._name}) lacks weft's entry "
                             "points; clear the kernel cache with wp.clear_kernel_cache()") from None
        fwd.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int32, ctypes.c_int32]
        fwd.restype = ctypes.c_int32  # a status (runtime/backends.py, finish_entry)
        size_fn.restype = ctypes.c_int32
        _, _, total = padding_plan(spec.types)
        if size_fn() != total:
            raise CompileError(f"internal error: argument layout mismatch for kernel {self.__name__} "
                               f"(C++ {size_fn()} bytes, Python {total} bytes)")
        errors = lib.weft_errors
        errors.restype = ctypes.c_void_p
        spec.errors = errors()
        spec.checks_errors = hasattr(lib, "weft_release_checks")
        spec.lib = lib
        spec.fwd = fwd
        # the same entry point without ctypes argument conversion (half the call cost), for the launch fast paths
        # that always pass (bytes, bytes, int, int)
        spec.fwd_fast = lib._FuncPtr(("weft_fwd", lib))
        spec.fwd_fast.restype = ctypes.c_int32

    def adjoint_of(self, spec: Spec, inactive: frozenset[int] = frozenset()) -> AdjointSpec:
        """The backward entry of a specialisation, compiled on first use (forward-only programs never pay).

        ``inactive``: indices of array parameters without a gradient in this launch. A tile kernel whose replay
        can drop more work when those gradients are absent (``prune_replay``) gets a backward of its own for that
        set, and the specialisation's full backward is then not compiled unless a launch runs it; every other
        launch shares the one backward of the specialisation."""
        key = inactive if inactive and spec.tile_dim else frozenset()
        hit = spec.adjoint_variants.get(key) if key else spec.adjoint
        if hit is not None:
            return hit
        self._check_backward()
        with self._lock:
            if not key:
                return self._compile_base(spec)
            hit = spec.adjoint_variants.get(key)
            if hit is None:
                prog = self._program(spec, key)
                if prog is self._program(spec, frozenset()):  # nothing to prune: the shared backward
                    spec.pending_adjoints.pop(key, None)
                    hit = self._compile_base(spec)
                else:
                    hit = self._compile_adjoint(spec, *spec.pending_adjoints.pop(key))
                spec.adjoint_variants[key] = hit
        return hit

    def adjoint_program(self, spec: Spec, inactive: frozenset[int] = frozenset()):
        """The backward program ``adjoint_of(spec, inactive)`` runs, differentiated (and pruned) without compiling
        anything: for what only reads the IR (the Tape's overwrite check). ``adjoint_of`` later compiles this same
        program."""
        self._check_backward()
        with self._lock:
            return self._program(spec, inactive if inactive and spec.tile_dim else frozenset())

    def prepare_adjoint(self, spec: Spec, inactive: frozenset[int] = frozenset()) -> list[str]:
        """Differentiate and render, without compiling, the backward module ``adjoint_of(spec, inactive)`` will
        compile (runtime/backward.py batches those of a Tape's first backward): its source, none when compiled
        already. A tile kernel's launch whose pruned backward differs from the specialisation's full one needs
        only the pruned one."""
        if not self.enable_backward:
            return []
        key = inactive if inactive and spec.tile_dim else frozenset()
        with self._lock:
            if key:
                if key in spec.adjoint_variants:
                    return []
                if self._program(spec, key) is not self._program(spec, frozenset()):
                    return [self._pending_source(spec, key)]
            if spec.adjoint is not None:
                return []
            return [self._pending_source(spec, frozenset())]

    def _check_backward(self) -> None:
        if not self.enable_backward:
            raise CompileError(f"kernel '{self.__name__}' was defined with enable_backward=False, so it has no "
                               "adjoint; remove the option (or keep this kernel off the Tape)", self.source.loc(None))

    def _program(self, spec: Spec, key: frozenset[int]):
        """(Holding the lock.) The backward program for the launches with inactive set ``key`` (empty: the full
        one), from the compiled module or the pending ones, else differentiated (and pruned) now and kept pending
        (``spec.pending_adjoints``: key -> (program, source or None)) for ``adjoint_of`` to compile. A pruned
        program identical to the full one is the same object."""
        if not key and spec.adjoint is not None:
            return spec.adjoint.prog
        if key and key in spec.adjoint_variants:
            return spec.adjoint_variants[key].prog
        pending = spec.pending_adjoints.get(key)
        if pending is None:
            if key:
                base = self._program(spec, frozenset())
                pending = (pipeline.without_gradients(base, key), None)
            else:
                pending = (pipeline.differentiate(spec.fn), None)
            spec.pending_adjoints[key] = pending
        return pending[0]

    def _pending_source(self, spec: Spec, key: frozenset[int]) -> str:
        """(Holding the lock.) The rendered source of a pending backward program (rendered once)."""
        self._program(spec, key)
        prog, source = spec.pending_adjoints[key]
        if source is None:
            source = self._adjoint_source(spec, prog)
            spec.pending_adjoints[key] = (prog, source)
        return source

    def _compile_base(self, spec: Spec) -> AdjointSpec:
        """(Holding the lock.) The specialisation's full backward, compiled now unless it is."""
        if spec.adjoint is None:
            self._program(spec, frozenset())
            spec.adjoint = self._compile_adjoint(spec, *spec.pending_adjoints.pop(frozenset()))
        return spec.adjoint

    def _adjoint_source(self, spec: Spec, prog) -> str:
        source = pipeline.render_module(prog, self.__name__, spec.debug, Target.CPU, Direction.ADJOINT).source
        return preamble.apply(source, self.options, cuda=False)

    def _compile_adjoint(self, spec: Spec, prog, source: str | None = None) -> AdjointSpec:
        source = source or self._adjoint_source(spec, prog)
        lib = pipeline.build(source, self.__name__ + "_adj", spec.debug)
        bwd = lib.weft_bwd
        bwd.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int32, ctypes.c_int32]
        bwd.restype = ctypes.c_int32  # a status (runtime/backends.py, finish_entry)
        errors = lib.weft_errors
        errors.restype = ctypes.c_void_p
        return AdjointSpec(prog, source, lib, bwd, errors(), name=self.__name__ + "_adj", debug=spec.debug)

    def compile(self, types: tuple | None = None, block_dim: int | None = None) -> Spec:
        """Compile ahead of the first launch. Without ``types``: a non-generic kernel's one specialisation, or every
        overload a generic kernel declared with ``wp.overload`` (the first is returned). ``block_dim``: as a CPU
        launch resolves it (one lane unless ``wp.config.enable_cpu_blocks``)."""
        from .runtime.device import CPU
        from .runtime.launch import resolve_block_dim

        block_dim = resolve_block_dim(CPU, block_dim)
        if types is None:
            self.annotations()
            if self._fixed_types is None:
                if not self._overloads:
                    raise CompileError(f"kernel {self.__name__} is generic; use wp.overload() to pick types")
                specs = [self.specialize(t, block_dim) for t in self._overloads]
                return specs[0]
            types = self._fixed_types
        return self.specialize(tuple(types), block_dim)

    def add_overload(self, arg_types) -> Kernel:
        """Declare a specialisation of a generic kernel (``wp.overload``): checked against the annotations now,
        compiled by :meth:`compile` (or on the first launch with matching arguments), as in Warp."""
        anns = self.annotations()
        if isinstance(arg_types, dict):
            unknown = sorted(set(arg_types) - set(self._param_names))
            if unknown:
                raise CompileError(f"wp.overload({self.__name__}): no parameter named {', '.join(unknown)}")
            types = tuple(to_ir(arg_types[n]) if n in arg_types else a for n, a in zip(self._param_names, anns))
        else:
            arg_types = list(arg_types)
            if len(arg_types) != len(anns):
                raise CompileError(f"wp.overload({self.__name__}): the kernel takes {len(anns)} arguments, "
                                   f"{len(arg_types)} types given")
            types = tuple(to_ir(a) for a in arg_types)
        for name, ann, t in zip(self._param_names, anns, types):
            if _is_generic(t):
                raise CompileError(f"wp.overload({self.__name__}): argument '{name}' must have a concrete type, "
                                   f"got {t}")
            if not _annotation_accepts(ann, t):
                raise CompileError(f"wp.overload({self.__name__}): argument '{name}' is annotated {ann}, got {t}")
        if types not in self._overloads:
            self._overloads.append(types)
        return self

    def invalidate(self) -> None:
        """Forget the compiled specialisations: the next launch lowers the kernel again (with the values its code
        names then) and compiles what changed."""
        with self._lock:
            self._specs.clear()
        self.__dict__.pop("_launch_fast", None)

    @property
    def is_generic(self) -> bool:
        """True if a parameter's annotation is generic (``Any``, ``wp.array(dtype=Any)``, ...), as in Warp."""
        self.annotations()
        return self._fixed_types is None

    @property
    def overloads(self) -> dict:
        """Warp's view of a generic kernel's specialisations: declared (``wp.overload``) and launched ones, keyed by
        their parameter types."""
        out = {repr(types): self for types in self._overloads}
        for key in self._specs:
            out.setdefault(repr(key[0]), self)
        return out if self.is_generic else {}

    def __call__(self, *args, **kwargs):
        raise LaunchError(f"kernel {self.__name__} cannot be called directly; use wp.launch({self.__name__}, dim, "
                          "inputs=[...])")

    def __repr__(self) -> str:
        return f"<weft kernel {self._full_key}>"


def _is_generic(t: T.Type) -> bool:
    return t.is_generic or isinstance(t, T.GenericType)


def _annotation_accepts(ann: T.Type, t: T.Type) -> bool:
    if not _is_generic(ann):
        return ann == t
    if isinstance(ann, T.GenericType):
        return ann.accepts(t)
    if isinstance(ann, T.ArrayType):
        return isinstance(t, T.ArrayType) and t.ndim == ann.ndim and _kinds_match(ann, t) and (
            ann.dtype.is_generic or isinstance(ann.dtype, T.GenericType) or ann.dtype == t.dtype)
    return True  # other generic forms are checked when the specialisation is lowered


_FABRIC_KINDS = (T.ArrayKind.FABRIC, T.ArrayKind.FABRIC_INDEXED)


def _kinds_match(ann: T.ArrayType, t: T.ArrayType) -> bool:
    """A Fabric array parameter takes only its own kind of array, and other array parameters no Fabric array."""
    return ann.kind == t.kind or (ann.kind not in _FABRIC_KINDS and t.kind not in _FABRIC_KINDS)


def _param_node(src: FunctionSource, name: str):
    for a in src.tree.args.args:
        if a.arg == name:
            return a
    return src.tree


def _c_name(name: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in name)


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_ENTRY_POINT_ABIS = ("warp", "external_constant_params")


def _check_kernel_decorator(name, entry_point_abi, enable_backward) -> None:
    """Warp's checks of ``@wp.kernel(name=, entry_point_abi=)``, made when the kernel is declared."""
    if name is not None and (not isinstance(name, str) or not _IDENTIFIER.match(name)):
        raise ValueError(f"@wp.kernel(name={name!r}): the name must be a valid C++ identifier (letters, digits and "
                         "underscores, not starting with a digit)")
    if entry_point_abi is None or entry_point_abi == "warp":
        return
    if entry_point_abi not in _ENTRY_POINT_ABIS:
        raise ValueError(f"@wp.kernel(entry_point_abi={entry_point_abi!r}): entry_point_abi must be 'warp' or "
                         "'external_constant_params'")
    if enable_backward is not False:
        raise ValueError("@wp.kernel(entry_point_abi='external_constant_params') requires enable_backward=False (the "
                         "entry point has no adjoint)")


#: kernels by (Python module, qualified name): the decorator form of ``wp.overload`` finds a kernel from its stub
_BY_QUALNAME: dict[tuple[str, str], list] = {}
_KEPT: dict[tuple[str, str, str], Kernel] = {}


def live_kernels(module_name: str) -> list:
    """The kernels of a module (by name) that are still alive, declared at module level or in functions."""
    out = []
    for refs in list(_BY_QUALNAME.values()):
        for r in refs:
            k = r()
            if k is not None and k._module_name == module_name and k not in out:
                out.append(k)
    return out


def kernel(f=None, *, enable_backward: bool | None = None, module=None, launch_bounds=None, module_options=None,
           name: str | None = None, entry_point_abi: str | None = None, **options):
    """Decorator: compile ``f`` as a kernel launched over a grid with ``wp.launch``.

    ``module="unique"`` gives the kernel a module of its own, named after the kernel and a hash of its content (its
    source, options and every value it refers to); defining the same content again returns the same kernel object.
    ``module_options`` (only with ``module="unique"``) sets that module's options. ``name`` replaces the kernel's
    key (a C++ identifier). ``entry_point_abi``: Warp's ``"warp"`` (the default) is the only one weft compiles;
    ``"external_constant_params"`` (Warp's OptiX-style CUDA entry point reading its parameters from a ``__constant__``
    block) is checked as Warp checks it, then refused when the kernel is compiled."""
    _check_kernel_decorator(name, entry_point_abi, enable_backward)

    def wrap(fn):
        opts = {k: v for k, v in options.items() if v is not None}
        if name is not None:
            opts["name"] = name
        if entry_point_abi not in (None, "warp"):
            opts["entry_point_abi"] = entry_point_abi
        if opts.get("enable_cuda_smem_spilling") is False:  # the default, as if not given
            del opts["enable_cuda_smem_spilling"]
        if enable_backward is not None:
            opts["enable_backward"] = enable_backward
        if launch_bounds is not None:
            opts["launch_bounds"] = launch_bounds
        if module_options is not None or module == "unique":
            from .module import unique_kernel

            return unique_kernel(fn, opts, module, module_options)._register()
        return Kernel(fn, options=opts, module=module)._register()

    if f is not None:
        return wrap(f)
    return wrap


def overload(kernel_or_func, arg_types=None):
    """``wp.overload(generic_kernel, [types])``: pre-declare a specialisation (compiled on first use)."""
    if isinstance(kernel_or_func, Kernel):
        return kernel_or_func.add_overload(arg_types)
    found = _stub_kernel(kernel_or_func) if arg_types is None else None
    if found is not None:
        return found
    # used as a decorator on a func with concrete annotations: an extra overload of a generic func

    return make_func(kernel_or_func)


def _stub_kernel(stub):
    """The kernel a ``@wp.overload`` stub (a function with a kernel's qualified name and concrete annotations)
    specialises, with the stub's types declared; None when no kernel has that name (a function overload)."""
    refs = _BY_QUALNAME.get((getattr(stub, "__module__", None), getattr(stub, "__qualname__", None)), [])
    kernels = [k for k in (r() for r in refs) if k is not None]
    if not kernels:
        return None
    if len(kernels) > 1:
        raise RuntimeError(f"Ambiguous kernel lookup for @wp.overload stub {stub.__qualname__}: kernels "
                           f"{', '.join(repr(k.key) for k in kernels)} share its qualified name; declare the overload "
                           "with wp.overload(kernel, [types]) instead")
    anns = dict(getattr(stub, "__annotations__", {}))
    if anns.get("return", 0) in (None, type(None), "None", "types.NoneType"):
        del anns["return"]
    if "return" in anns:
        raise TypeError(f"Return annotations are not allowed on @wp.overload stubs ({stub.__qualname__}): kernels "
                        "return nothing")
    names = list(inspect.signature(stub).parameters)
    k = kernels[0]
    if names != k._param_names:
        raise CompileError(f"wp.overload({k.__name__}): the stub's parameters ({', '.join(names)}) differ from the "
                           f"kernel's ({', '.join(k._param_names)})")
    return k.add_overload({n: evaluate_annotation(stub, a) if isinstance(a, str) else a for n, a in anns.items()})


def compile_kernels(kernels, block_dim: int | None = None) -> None:
    """Compile several kernels now: the cold ones in batches (weft/ahead.py), then each loaded (those a batch left
    out compiled alone, several at once). ``block_dim``: that of the CPU launches to come (see ``compile``)."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    todo = []
    for k in kernels:
        k.annotations()
        if k._fixed_types is not None:
            todo.append(k)
    ahead.batch_kernels(todo)
    workers = config.load_module_max_workers or max(os.cpu_count() or 1, 1)  # a positive option caps the threads
    with ThreadPoolExecutor(max_workers=int(workers)) as pool:
        list(pool.map(lambda k: k.compile(block_dim=block_dim), todo))
