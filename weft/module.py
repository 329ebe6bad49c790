"""Warp's module objects (``wp.get_module(name)``): a name, its options dict and ``load``.

weft compiles every kernel as its own unit, so a "module" is only the set of options shared by the kernels
defined in one Python module (or declared with ``@wp.kernel(module=name)``) plus a way to compile them now.

``@wp.kernel(module="unique")`` gives a kernel a module of its own, named ``<key>_<hash>`` after a content hash of
the kernel: its source text, its options and module options, and a fingerprint of every global or closure value
its code (and the code of the funcs it calls) names. Declaring the same content again returns the first kernel
object, so a factory called in a loop compiles once; different captured values (a ``wp.static`` list, a closure
func) give different kernels.
"""

from __future__ import annotations

import builtins
import hashlib
import operator
import sys
import types as pytypes
import weakref

from .frontend.deps import fingerprint, source_text
from .frontend.func import Func, func_sets, on_func_change
from .kernel import Kernel, _module_options, compile_kernels, get_module_options, live_kernels
from .runtime import device as D
from .runtime.launch import ModuleExec, resolve_block_dim
from .types.mapping import to_ir
from .types.struct import BY_MODULE as STRUCTS_BY_MODULE

#: module options Warp accepts that select nothing in weft (CUDA code generation, MathDx, compiler flags); accepted
#: in ``module_options`` and kept in the module's options dict
_WARP_ONLY_OPTIONS = ("fuse_fp", "cuda_output", "optimization_level", "cpu_compiler_flags", "compile_time_trace",
                      "strip_hash", "extra_build_options", "default_grid_stride", "enable_mathdx_gemm",
                      "enable_mathdx_solver", "enable_mathdx_fft")


class Module:
    """The kernels of one Python module (or one ``module=`` name) and their shared options."""

    def __new__(cls, name: str, kernel: Kernel | None = None, *args, **kwargs):
        """One module object per name (weft names a kernel's module by name): ``wp.Module("x")`` is the module
        kernels and funcs declared with ``module="x"`` (or with that object) belong to."""
        found = _MODULES.get(name) if kernel is None else None
        if found is not None:
            return found
        return super().__new__(cls)

    def __init__(self, name: str, kernel: Kernel | None = None, *args, **kwargs):
        if "references" in self.__dict__:  # an existing module asked for again
            return
        self.name = name
        self.options = _module_options.setdefault(name, {})
        for key, value in get_module_options(name).items():  # Warp's module options always hold every key
            self.options.setdefault(key, value)
        self._kernel = kernel  # the one kernel of a module="unique" module
        self.references: set[Module] = set()  # modules whose funcs this module's kernels call
        #: Warp's loaded variants: (device.context, block_dim) -> runtime.launch.ModuleExec, filled by launches,
        #: ``load`` and ``wp.force_load``
        self.execs: dict = {}
        self.dependents: set[Module] = set()  # modules whose kernels call this module's funcs
        if kernel is None:
            _MODULES.setdefault(name, self)

    def kernels(self) -> list:
        """The kernels defined in this module that are still alive."""
        if self._kernel is not None:
            return [self._kernel]
        mod = sys.modules.get(self.name)
        return [v for v in vars(mod).values() if isinstance(v, Kernel)] if mod is not None else []

    def load(self, device=None, block_dim=None) -> Module:
        """Compile the module's non-generic kernels now (several in parallel) and record the variant for
        ``device`` (default: the current device) and ``block_dim`` (resolved as a launch resolves it)."""
        dev = D.get_device(device)
        bd = resolve_block_dim(dev, block_dim)
        kernels = self.kernels()
        compile_kernels(kernels, block_dim=resolve_block_dim(D.CPU, block_dim))  # ahead: CPU code (CUDA at launch)
        key = (dev.context, bd)
        if key not in self.execs:
            self.execs[key] = ModuleExec(dev, bd)
        return self

    def get_module_hash(self, block_dim=None) -> bytes:
        """A digest of the module's content: its name, options and the specialisations of its kernels compiled or
        declared so far (a generic kernel's new overload changes it; launching an existing one does not). Also
        records the modules whose funcs the kernels call (``references`` / ``dependents``)."""
        for k in self.kernels():
            note_references(k)
        h = hashlib.sha256(self.name.encode())
        h.update(repr(sorted((k, repr(v)) for k, v in self.options.items())).encode())
        for k in self.kernels():
            h.update(getattr(k, "_content_hash", k._full_key).encode())
            h.update(repr(sorted(k.overloads)).encode())
        return h.digest()

    def hash_module(self) -> str:
        """A digest of what the module's kernels would compile from now: their source, options and every value
        their code and the funcs it calls name (func defaults included), computed afresh on each call."""
        hasher = _Hasher()
        hasher.h.update(self.name.encode())
        hasher.h.update(repr(sorted((k, repr(v)) for k, v in self.options.items())).encode())
        for k in sorted(self.kernels(), key=lambda k: k._full_key):
            hasher.h.update(f"\0kernel {k._full_key} {sorted((o, repr(v)) for o, v in k.options.items())}".encode())
            hasher.function(k.func)
        return hasher.h.hexdigest()

    @property
    def hashers(self) -> dict:
        """Warp's content hashers of the loaded variants, by block size: empty until the module is loaded (by a
        launch, ``load`` or ``wp.force_load``) and again after ``unload()`` / ``mark_modified()``."""
        return {bd: self.get_module_hash(bd) for bd in sorted({bd for _, bd in self.execs})}

    def mark_modified(self, _seen: set | None = None) -> None:
        """Recompile on the next launch: each kernel of the module, and of the modules calling its funcs
        (``dependents``), is lowered again with the values its code names then (a changed global or closure variable
        is compiled in; unchanged kernels reuse their binaries)."""
        seen = set() if _seen is None else _seen
        if self.name in seen:
            return
        seen.add(self.name)
        for k in self._get_live_kernels():
            k.invalidate()
        self.execs.clear()
        for dep in list(self.dependents):
            dep.mark_modified(seen)

    def unload(self) -> None:
        """Drop the module's loaded variants and its kernels' compiled specialisations: the next launch (or ``load``)
        loads them again, from the kernel cache when nothing changed. Launches already recorded (a captured graph, a
        ``wp.Launch``) keep the code they hold and still run."""
        for k in self._get_live_kernels():
            k.invalidate()
        self.execs.clear()

    @property
    def structs(self) -> dict:
        """The ``@wp.struct`` classes defined in this module, by qualified name (a redefinition replaces one)."""
        return dict(STRUCTS_BY_MODULE.get(self.name, {}))

    @property
    def functions(self) -> dict:
        """The ``@wp.func`` overload sets defined in this module, by key (all overloads of a name are one set)."""
        return {k: f for k, f in func_sets().items() if getattr(f.func, "__module__", None) == self.name}

    def _get_live_kernels(self) -> list:
        """The module's kernels still alive (Warp's private accessor, kept for its tests and tools)."""
        if self._kernel is not None:
            return [self._kernel]
        return list({id(k): k for k in (*self.kernels(), *live_kernels(self.name))}.values())

    def __repr__(self) -> str:
        return f"Module({self.name!r})"


_MODULES: dict[str, Module] = {}


def get_module(name: str) -> Module:
    """The module object for ``name`` (created on first use)."""
    mod = _MODULES.get(name)
    if mod is None:
        mod = _MODULES[name] = Module(name)
    return mod


def force_load(device=None, modules=None, block_dim=None, max_workers=None) -> None:
    """Compile the kernels of ``modules`` (Module objects or Python modules; default: every module with kernels)
    for ``device`` (a device, a name or a list of them; default: the current device). ``block_dim`` is resolved per
    device as a launch resolves it; without one, a module already loaded on a device keeps its variants and
    another one loads the launch default. ``max_workers`` is accepted for Warp's signature (weft compiles in
    parallel batches either way)."""
    devices = device if isinstance(device, (list, tuple)) else [device]
    if modules is None:
        modules = [get_module(name) for name, m in list(sys.modules.items())
                   if m is not None and any(isinstance(v, Kernel) for v in list(vars(m).values()))]
    for m in modules:
        if not isinstance(m, Module):
            m = get_module(m if isinstance(m, str) else m.__name__)
        for d in devices:
            dev = D.get_device(d)
            if block_dim is None and any(key[0] is dev.context and e.device == dev for key, e in m.execs.items()):
                continue
            m.load(dev, block_dim)


def _func_module(f: Func) -> Module:
    """Warp's ``func.module``: the module named by ``@wp.func(module=...)``, else the one of the Python module that
    defines the func."""
    return get_module(getattr(f, "_module_name", None) or f.func.__module__)


Func.module = property(_func_module)  # Func lives in a lower layer; its module object is made here


# ---------------------------------------------------------------------------------------------- func references
#: func key -> the kernels whose code calls a func of that key (directly, through a module attribute such as
#: ``ref.magic``, a kernel-local binding ``f = ref.magic``, or inside another func they call)
_USERS: dict[str, weakref.WeakSet] = {}


def _called_funcs(fn, found: dict[int, Func], seen: set[int]) -> None:
    """The ``@wp.func``s the code of ``fn`` can call: names bound to funcs, and attributes of modules it names."""
    code = getattr(fn, "__code__", None)
    if code is None or id(fn) in seen:
        return
    seen.add(id(fn))
    names = _code_names(code)
    closure = _closure_values(fn)
    values = list(fn.__defaults__ or ()) + list((fn.__kwdefaults__ or {}).values())  # g: wp.Function = target
    for name in names:
        v = closure[name] if name in closure else fn.__globals__.get(name)
        if isinstance(v, pytypes.ModuleType):
            values.extend(getattr(v, attr, None) for attr in names)  # ref.magic
        else:
            values.append(v)
    for v in values:
        if isinstance(v, Func) and id(v) not in found:
            found[id(v)] = v
            for ov in v.overloads:
                for g in (ov, ov.custom_grad, ov.custom_replay):
                    if g is not None:
                        _called_funcs(g.func, found, seen)


def note_references(kernel: Kernel) -> None:
    """Record which funcs ``kernel`` calls: its module's ``references`` and their ``dependents``, and the index that
    drops the kernel's compiled code when one of those funcs is redefined (``importlib.reload`` of their module)."""
    found: dict[int, Func] = {}
    _called_funcs(kernel.func, found, set())
    mod = get_module(kernel._module_name)
    for f in found.values():
        _USERS.setdefault(f.key, weakref.WeakSet()).add(kernel)
        for ov in f.overloads:
            ref = _func_module(ov)
            if ref is not mod:
                mod.references.add(ref)
                ref.dependents.add(mod)


def _func_changed(key: str) -> None:
    """An overload set changed: the kernels that called it lower again on their next launch."""
    for k in list(_USERS.get(key, ())):
        k.invalidate()
        mod = _MODULES.get(k._module_name)
        if mod is not None:
            mod.execs.clear()


on_func_change(_func_changed)


def is_cpu_available() -> bool:
    """The CPU device is always available (it needs only a C++ compiler, checked on first compile)."""
    return True


# ---------------------------------------------------------------------------------------------- module="unique"
_UNIQUE: dict[str, Kernel] = {}
#: values fingerprinted by identity stay alive as long as the kernel that named them (ids are never reused)
_KEEP: dict[str, list] = {}


def check_module_options(kernel_name: str, module, module_options) -> dict:
    """Warp's checks of ``@wp.kernel(module_options=...)``: a dict, only with ``module="unique"``, known keys, and a
    non-negative integer ``deterministic_max_records``."""
    if not isinstance(module_options, dict):
        raise TypeError(f"@wp.kernel for '{kernel_name}': module_options must be a dict, got "
                        f"{type(module_options).__name__}")
    if module != "unique":
        raise ValueError(f"@wp.kernel for '{kernel_name}': module_options requires module=\"unique\"; use "
                         "wp.set_module_options() for the options of a shared module")
    valid = set(get_module_options("__weft_defaults__")) | set(_WARP_ONLY_OPTIONS)
    unknown = sorted(set(module_options) - valid)
    if unknown:
        raise ValueError(f"@wp.kernel for '{kernel_name}': unknown module_options: "
                         f"{', '.join(repr(k) for k in unknown)}. Valid options are: "
                         f"{', '.join(repr(k) for k in sorted(valid))}.")
    if "deterministic_max_records" in module_options:
        value = module_options["deterministic_max_records"]
        if isinstance(value, bool):
            raise TypeError("deterministic_max_records must be a non-negative integer, got bool")
        try:
            value = operator.index(value)
        except TypeError:
            raise TypeError("deterministic_max_records must be a non-negative integer, got "
                            f"{type(value).__name__}") from None
        if value < 0:
            raise ValueError(f"deterministic_max_records must be non-negative, got {value}")
    return dict(module_options)


def _closure_values(fn) -> dict:
    """The values of ``fn``'s closure cells by free-variable name (cells not filled yet left out)."""
    closure = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            closure[name] = cell.cell_contents
        except ValueError:  # a cell not filled yet
            pass
    return closure


def _code_names(code) -> set[str]:
    names = set(code.co_names) | set(code.co_freevars)
    for c in code.co_consts:
        if isinstance(c, pytypes.CodeType):
            names |= _code_names(c)
    return names


class _Hasher:
    """Hashes a function's source and every value its code names (recursively through the funcs it calls)."""

    def __init__(self) -> None:
        self.h = hashlib.sha256()
        self.funcs: list[Func] = []
        self.keep: list = []
        self._seen: set[int] = set()

    def function(self, fn) -> None:
        if id(fn) in self._seen:
            return
        self._seen.add(id(fn))
        code = getattr(fn, "__code__", None)
        if code is None:
            self.h.update(self.value(fn).encode())
            return
        self.h.update((source_text(fn) or repr(code.co_code)).encode())
        closure = _closure_values(fn)
        for name in sorted(_code_names(code)):
            if name in closure:
                v = closure[name]
            elif name in fn.__globals__:
                v = fn.__globals__[name]
            else:  # a builtin, an attribute name, or a name defined later (resolved when lowered)
                continue
            if v is getattr(builtins, name, None):
                continue
            self.h.update(f"\0{name}={self.value(v)}".encode())
        for d in fn.__defaults__ or ():
            self.h.update(f"\0default={self.value(d)}".encode())
        # annotations are evaluated where the function is defined, so the names in them (a dtype in
        # `wp.array[dtype]`, a return alias) are not the code's names: their values name the content too
        for pname, ann in sorted(getattr(fn, "__annotations__", {}).items()):
            self.h.update(f"\0annotation {pname}={self.annotation(ann)}".encode())

    def annotation(self, ann) -> str:
        """An annotation by the type it denotes (equal annotations made twice hash alike), else by value."""
        if isinstance(ann, str):
            return f"str:{ann}"
        try:
            return f"type:{to_ir(ann)}"
        except Exception:  # noqa: BLE001 - not a weft type (None, a Python class, ...): by value
            return self.value(ann)

    def value(self, v) -> str:
        if isinstance(v, Func):
            self.funcs.append(v)
            for ov in v.overloads:
                for g in (ov, ov.custom_grad, ov.custom_replay):
                    if g is not None:
                        self.function(g.func)
            return f"func:{v.key}"
        if isinstance(v, Kernel):
            return f"kernel:{getattr(v, '_content_hash', v._full_key)}"
        fp = fingerprint(v)
        if fp is not None:
            return fp
        if isinstance(v, dict):
            return "dict:{" + ",".join(f"{self.value(k)}:{self.value(x)}" for k, x in v.items()) + "}"
        if isinstance(v, (tuple, list, set, frozenset)):
            return f"{type(v).__name__}:(" + ",".join(self.value(x) for x in v) + ")"
        self.keep.append(v)
        return f"id:{type(v).__qualname__}:{id(v)}"


def unique_kernel(fn, options: dict, module, module_options) -> Kernel:
    """``@wp.kernel(module="unique", module_options=...)``: the kernel of its own content-named module, reusing an
    existing kernel of identical content."""
    opts = check_module_options(fn.__name__, module, module_options) if module_options is not None else {}
    kernel = Kernel(fn, options=options)
    hasher = _Hasher()
    hasher.h.update(repr(sorted((k, repr(v)) for k, v in options.items())).encode())
    hasher.h.update(repr(sorted((k, repr(v)) for k, v in opts.items())).encode())
    hasher.function(fn)
    digest = hasher.h.hexdigest()
    name = f"{kernel.key}_{digest[:8]}"
    found = _UNIQUE.get(digest)
    if found is not None:
        return found
    _module_options[name] = opts
    kernel._module_name = name
    kernel._content_hash = digest
    kernel.options = {**opts, **options}
    kernel.enable_backward = bool(kernel.options.get("enable_backward", kernel.enable_backward))
    mod = _MODULES[name] = Module(name, kernel)
    for f in hasher.funcs:
        ref = f.module
        mod.references.add(ref)
        ref.dependents.add(mod)
    _UNIQUE[digest] = kernel
    _KEEP[digest] = hasher.keep
    return kernel
