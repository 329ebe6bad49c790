"""Every weft option in one place. Environment variables are read here and nowhere else.

Options are plain module attributes so Warp programs that write ``wp.config.mode = "debug"`` keep working.
"""

from __future__ import annotations

import enum
import os
from pathlib import Path


def _env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in ("1", "true", "yes", "on")


#: "release" or "debug". Debug mode adds bounds checks on every array access (errors name kernel, array, index).
mode: str = os.environ.get("WEFT_MODE", "release")
#: Check the arrays a kernel writes for NaN/Inf after every launch and raise if any appear.
verify_fp: bool = _env_bool("WEFT_VERIFY_FP", False)
#: Print compile and cache activity.
verbose: bool = _env_bool("WEFT_VERBOSE", False)
#: Default for kernels' ``enable_backward`` option. Adjoints are compiled lazily anyway.
enable_backward: bool = True
#: Warp 1.19's switch for CPU blocks of more than one lane. False (Warp's default): a CPU launch runs one lane per
#: block whatever ``block_dim`` it asks for (``wp.block_dim()`` is 1, ``wp.launch_tiled`` launches one thread per
#: block, tile operations act on whole tiles from that lane). True: an explicit ``block_dim`` of 2-1024 runs that many
#: lanes per block, results as on a GPU with the same ``block_dim`` (docs/tiles.md). Read at each launch.
enable_cpu_blocks: bool = _env_bool("WEFT_CPU_BLOCKS", False)
#: Where compiled kernels are cached. Must not be writable by other users.
kernel_cache_dir: str | None = os.environ.get("WEFT_CACHE_DIR") or os.environ.get("WARP_CACHE_PATH")
#: Where weft's runtime libraries (native code every program of a kind needs, e.g. the tile FFT passes; see
#: docs/compile.md) are kept once per machine, compiler, flag set and native source, shared by every kernel cache.
#: Default: ``weft-runtime`` beside the default kernel cache. Must not be writable by other users.
runtime_cache_dir: str | None = os.environ.get("WEFT_RUNTIME_DIR")
class DeterministicMode(enum.IntEnum):
    """Warp's deterministic modes; any mode other than NOT_GUARANTEED makes weft run CPU launches in order."""

    NOT_GUARANTEED = 0
    RUN_TO_RUN = 1
    GPU_TO_GPU = 2


#: Run CPU launches on one thread in index order (bitwise reproducible atomics and prints).
deterministic: bool = _env_bool("WEFT_DETERMINISTIC", False)
#: Warp's per-thread record budget of its GPU deterministic mode (module option ``deterministic_max_records``).
#: weft's deterministic mode runs CPU launches in order and needs no records; the value is validated and kept.
deterministic_max_records: int = 0
#: Number of CPU threads for launches (0: all cores, fewer while other processes keep the cores busy; see
#: ``load_aware_threads``). A fixed number is used as given.
num_threads: int = int(os.environ.get("WEFT_NUM_THREADS", "0") or 0)
#: With ``num_threads == 0``: before a launch, count the runnable tasks of the machine (``/proc/loadavg``, re-read at
#: most every ``load_check_interval`` seconds) and run on only the cores the other tasks leave free (at least one).
load_aware_threads: bool = _env_bool("WEFT_LOAD_AWARE", True)
#: Seconds between two readings of the machine's load (see ``load_aware_threads``).
load_check_interval: float = 0.1
#: How long an idle OpenMP worker spins before it sleeps (libgomp's ``GOMP_SPINCOUNT``), set before the OpenMP
#: runtime loads unless ``OMP_WAIT_POLICY`` or ``GOMP_SPINCOUNT`` is set already. libgomp's own default spins for
#: milliseconds, which on a busy machine takes the core from the very peer the barrier waits for.
omp_spin_count: int = int(os.environ.get("WEFT_SPINCOUNT", "10000") or 0)
if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
    os.environ["GOMP_SPINCOUNT"] = str(omp_spin_count)
#: Extra flags for the CPU compiler, appended after weft's own.
cpu_compile_flags: tuple[str, ...] = tuple(os.environ.get("WEFT_CXXFLAGS", "").split())
#: Compile CPU kernels against a precompiled weft.h (GCC; built once per cache in the background).
precompiled_header: bool = _env_bool("WEFT_PCH", True)
#: When a kernel compiles cold, compile the other kernels of its Python module on background threads (weft/ahead.py).
compile_ahead: bool = _env_bool("WEFT_COMPILE_AHEAD", True)
#: Compile the cold kernels of a wave (compile-ahead siblings, wp.load_module) as one translation unit, each kernel
#: still its own library and cache entry (GCC on Linux; weft/toolchain/batch.py).
batch_compile: bool = _env_bool("WEFT_BATCH_COMPILE", True)
#: Optimisation level for the CPU compiler.
optimization_level: int = int(os.environ.get("WEFT_OPT_LEVEL", "3"))
#: Reuse the lowering of kernels from earlier processes when nothing they depend on changed (warm starts).
spec_cache: bool = _env_bool("WEFT_SPEC_CACHE", True)
#: Largest static loop trip count that is unrolled.
max_unroll: int = 16
#: Show weft-internal stack frames in errors.
debug_internal: bool = _env_bool("WEFT_DEBUG_INTERNAL", False)
#: Run the IR verifier on every program the pipeline produces, forward and adjoint (the test suite turns it on).
verify_ir: bool = _env_bool("WEFT_VERIFY_IR", False)
#: Track which arrays launches recorded on a Tape read, and warn when a later launch or copy writes one of them
#: (or a kernel writes an array parameter after reading it): Warp's overwrite diagnostic (weft/runtime/access_check.py).
verify_autograd_array_access: bool = False
#: Ignored; kept for Warp compatibility.
quiet: bool = True
#: Warp's switch for host vector/matrix element access: True returns Python ``float`` / ``int`` components; False (the
#: default) returns the NumPy scalar of the component type, weft's host scalars (``wp.float16`` ... ``wp.float64``)
legacy_scalar_return_types: bool = False
verbose_warnings: bool = False
print_launches: bool = False
cache_kernels: bool = True
verify_cuda: bool = False
enable_tiles_in_stack_memory: bool = True
max_unroll_default = max_unroll

#: The Warp version whose API weft implements (Warp's ``wp.config.version``; weft's own is ``weft.__version__``).
version: str = "1.19.0"


class LaunchArrayAccessMode(enum.IntEnum):
    """How a launch checks array arguments that live on another device than the launch (Warp 1.19's numbers).

    ``RELAXED`` and ``CHECKED``: an array from another device is passed when the launch device can access it (CUDA
    managed memory, pinned host memory for a GPU, a GPU whose peer or pool access to the launch device is enabled:
    ``wp.can_access``) and refused otherwise; where Warp's RELAXED passes such a pointer unchecked, weft refuses it,
    since the launch would crash. ``STRICT``: every array must be on the launch device."""

    RELAXED = 0
    CHECKED = 1
    STRICT = 2


#: Checking of array arguments from other devices at launch (``LaunchArrayAccessMode``).
launch_array_access_mode: LaunchArrayAccessMode = LaunchArrayAccessMode.RELAXED
#: Warp's CPU compiler flag string (Clang/LLVM flags for its JIT). When set to a string, its flags are weft's extra
#: CPU compiler flags (``cpu_compile_flags``), less LLVM's ``-mllvm`` options, which GCC does not take (a warning
#: names them); ``None``: weft's own flags (weft always compiles for the host CPU, as ``-march=native``).
cpu_compiler_flags: str | None = None
#: Use a precompiled weft.h for CPU compiles (Warp's name for ``precompiled_header``; setting either sets both).
use_precompiled_headers: bool = precompiled_header
#: NVRTC output of CUDA modules: ``"cubin"`` (weft's default), ``"ptx"`` (JIT-compiled by the driver) or None.
cuda_output: str | None = None
#: With PTX output: the architecture the PTX targets (``compute_<n>``), at most the GPU's; None: the GPU's.
ptx_target_arch: int | None = None
#: NVRTC architecture suffix: ``"a"`` (architecture-specific features, sm_90+), ``"f"`` (family, sm_100+) or None.
cuda_arch_suffix: str | None = None
#: Compile CUDA modules with line information (``-lineinfo``) also outside debug mode.
lineinfo: bool = False
#: In debug mode, map generated code back to the Python source with ``#line`` directives (False: comments only).
line_directives: bool = True
#: NVRTC writes a Trace Event Format file of each CUDA compile (``--fdevice-time-trace``) to ``<kernel cache>/trace``.
compile_time_trace: bool = False
#: New GPU devices allocate from their stream-ordered memory pool (``wp.set_mempool_enabled`` changes it later;
#: ``WARP_ENABLE_MEMPOOLS_AT_INIT=0`` before import turns it off).
enable_mempools_at_init: bool = os.environ.get("WARP_ENABLE_MEMPOOLS_AT_INIT", "1").lower() not in ("0", "false", "no")
#: Threads ``wp.load_module`` loads kernels with: a positive number caps them; 0 or None: one per core (Warp's 0 means
#: serial loading; weft loads in parallel unless capped, e.g. to 1).
load_module_max_workers: int | None = 0

# Warp options whose effect does not exist in weft: accepted and kept; setting one to a value that would ask for
# that effect warns once, naming the reason (docs/warp_compat.md, "API names added in session 8").
#: Warp's Clang/LLVM CUDA compiler; weft compiles CUDA with NVRTC only.
llvm_cuda: bool = False
#: Warp's RTDyld JIT linker for CPU modules; weft loads CPU kernels as shared libraries (no JIT linker).
legacy_cpu_linker: bool = False
#: Warp's MathDx (cuBLASDx / cuSolverDx / cuFFTDx) tile paths; weft's tile operations are its own code.
enable_mathdx_gemm: bool = True
enable_mathdx_solver: bool = True
enable_mathdx_fft: bool = True
#: Warp's grid-stride default for CUDA entries; weft's entries always stride over the grid (``max_blocks`` works).
default_grid_stride: bool = True
#: Warp's module preload before graph capture on drivers older than 12.3; weft loads a CUDA module at its first
#: launch, and its GPU support needs a 12.3+ driver for capture with loads.
enable_graph_capture_module_load_by_default: bool = True
#: Warp's GPU deterministic-mode buffer diagnostics; weft's deterministic mode runs CPU launches in order, no buffers.
deterministic_debug: bool = False
#: Warp's permission for repeated writes to one vector component in differentiable kernels; weft's IR differentiates
#: them correctly always.
enable_vector_component_overwrites: bool = False
#: Record every array allocation and free (``wp.print_memory_report``; weft/runtime/memtrack.py), from the moment it
#: is set (Warp reads it at ``wp.init``); ``wp.ScopedMemoryTracker`` turns tracking on for a block.
track_memory: bool = False

#: option -> (the value that asks for an effect weft lacks, the reason)
_NO_EFFECT = {
    "llvm_cuda": (True, "weft compiles CUDA code with NVRTC only"),
    "legacy_cpu_linker": (True, "weft loads CPU kernels as shared libraries, with no JIT linker"),
    "enable_mathdx_gemm": (False, "weft's tile_matmul does not use MathDx"),
    "enable_mathdx_solver": (False, "weft's tile solvers do not use MathDx"),
    "enable_mathdx_fft": (False, "weft's tile FFTs do not use MathDx"),
    "default_grid_stride": (False, "weft's CUDA entries always stride over the grid"),
    "deterministic_debug": (True, "weft's deterministic mode keeps no record buffers to diagnose"),
}


#: Log levels, as Warp numbers them (``wp.LOG_DEBUG`` ... ``wp.LOG_ERROR``).
LOG_DEBUG, LOG_INFO, LOG_WARNING, LOG_ERROR = 10, 20, 30, 40
#: Threshold for weft's own messages: the compile / cache-load lines are debug-level (printed when this is
#: ``LOG_DEBUG`` or lower, or when ``verbose`` is set); warnings go through ``warnings`` whatever the level.
log_level: int = LOG_INFO


def debug_messages() -> bool:
    """Whether weft prints its debug-level messages (compiles, cache loads): ``verbose`` or ``log_level <= DEBUG``."""
    return bool(verbose) or log_level <= LOG_DEBUG


class ScopedLogLevel:
    """``with wp.ScopedLogLevel(wp.LOG_WARNING):`` sets ``wp.config.log_level`` inside the block, restores it after."""

    def __init__(self, log_level: int):
        self.log_level = log_level

    def __enter__(self):
        import sys

        mod = sys.modules[__name__]
        self._saved = mod.log_level
        mod.log_level = self.log_level
        return self

    def __exit__(self, *exc):
        import sys

        sys.modules[__name__].log_level = self._saved
        return False


def _user_cache() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"))


def cache_dir() -> Path:
    """The effective kernel cache directory."""
    if kernel_cache_dir:
        return Path(kernel_cache_dir).expanduser()
    return _user_cache() / "weft"


def runtime_dir() -> Path:
    """The effective runtime library directory (``runtime_cache_dir``)."""
    if runtime_cache_dir:
        return Path(runtime_cache_dir).expanduser()
    return _user_cache() / "weft-runtime"


#: Called (no arguments) after ``deterministic``, ``num_threads``, ``load_aware_threads`` or ``load_check_interval``
#: is set: the runtime caches the thread count it derives from them (weft/runtime/threads.py).
on_thread_option_change: list = []
_THREAD_OPTIONS = frozenset(("deterministic", "num_threads", "load_aware_threads", "load_check_interval"))


class _Options(type(os)):
    """Options annotated ``int`` or ``bool`` take NumPy integers and booleans too (stored as Python values, since
    some are passed straight to native code): ``wp.config.num_threads = np.int64(4)`` works as with Warp's numbers."""

    def __setattr__(self, name, value):
        value = _check_option(self, name, value)
        kind = self.__annotations__.get(name)
        if kind == "int" and not isinstance(value, int) and hasattr(value, "__index__"):
            value = value.__index__()
        elif kind == "bool" and type(value).__module__ == "numpy" and hasattr(value, "__bool__"):
            value = bool(value)
        super().__setattr__(name, value)
        if name in ("precompiled_header", "use_precompiled_headers"):
            super().__setattr__("precompiled_header", bool(value))
            super().__setattr__("use_precompiled_headers", bool(value))
        if name in _THREAD_OPTIONS:
            for callback in on_thread_option_change:
                callback()


def _check_option(mod, name: str, value):
    """Validate Warp's options as Warp does, derive weft's from them, warn for effects weft does not have."""
    import warnings

    if name == "launch_array_access_mode":
        if not isinstance(value, LaunchArrayAccessMode):
            raise ValueError("warp.config.launch_array_access_mode must be a warp.config.LaunchArrayAccessMode "
                             f"value, got {value!r}")
    elif name == "cpu_compiler_flags":
        if value is not None and not isinstance(value, str):
            raise TypeError(f"wp.config.cpu_compiler_flags must be a string or None, got {type(value).__name__}")
        flags = value.split() if value is not None else os.environ.get("WEFT_CXXFLAGS", "").split()
        dropped = [f for f in flags if f.startswith("-mllvm")]
        kept = [f for f in flags if not f.startswith("-mllvm")]
        if dropped:
            warnings.warn(f"wp.config.cpu_compiler_flags: LLVM options {dropped} do not apply to weft's C++ compiler "
                          "and are left out", stacklevel=3)
        type(os).__setattr__(mod, "cpu_compile_flags", tuple(kept))
    elif name == "cuda_output" and value not in (None, "ptx", "cubin"):
        raise ValueError(f"wp.config.cuda_output must be None, 'ptx' or 'cubin', got {value!r}")
    elif name == "cuda_arch_suffix" and value not in (None, "a", "f"):
        raise ValueError(f"wp.config.cuda_arch_suffix must be None, 'a' or 'f', got {value!r}")
    elif name == "ptx_target_arch" and value is not None and (not hasattr(value, "__index__") or int(value) <= 0):
        raise ValueError(f"wp.config.ptx_target_arch must be a positive architecture number or None, got {value!r}")
    elif name in _NO_EFFECT and value == _NO_EFFECT[name][0]:
        warnings.warn(f"wp.config.{name} = {value!r} has no effect in weft: {_NO_EFFECT[name][1]}", stacklevel=3)
    return value


import sys as _sys

_sys.modules[__name__].__class__ = _Options
