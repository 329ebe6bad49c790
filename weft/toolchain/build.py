"""Source -> loaded native module, through the cache."""

from __future__ import annotations

import contextlib
import ctypes
import shlex
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from .. import __version__ as WEFT_VERSION
from .. import config
from ..errors import CacheError, ToolchainError, log_debug
from . import cache, runtime
from .compiler import find_compiler, host_target, run
from .options import CpuOptions

_loaded: dict[str, ctypes.CDLL] = {}
_lock = threading.Lock()

#: Called with every newly loaded CPU module (e.g. weft.geometry attaches its object registry to modules that export
#: ``weft_geometry_attach``). Runtime packages register here; the toolchain knows nothing of them.
LOAD_HOOKS: list = []


_runtime_global = False


def _cxx_runtime_global() -> None:
    """Make the C++ runtime (and the math library) global before the first module loads: modules linked lean (see
    toolchain/options.py) resolve their C++ runtime symbols there. Loading by soname picks the library the dynamic
    loader would have picked for a module that named it; both are normally loaded already (NumPy, the interpreter),
    and this only adds them to the global scope."""
    global _runtime_global
    if _runtime_global:
        return
    _runtime_global = True
    if not sys.platform.startswith("linux"):
        return
    for soname in ("libstdc++.so.6", "libm.so.6"):
        try:
            ctypes.CDLL(soname, mode=ctypes.RTLD_GLOBAL)
        except OSError:  # a module that needs it then fails to load and says which symbol is missing
            pass


def _loaded_module(path, mode: int = ctypes.DEFAULT_MODE) -> ctypes.CDLL:
    _cxx_runtime_global()
    for _ in range(len(runtime.LIBRARIES) + 1):
        try:
            lib = ctypes.CDLL(str(path), mode=mode)
            break
        except OSError as exc:
            needed = runtime.for_missing_symbol(str(exc))
            if needed is None or needed.name in runtime._loaded:
                raise CacheError(f"cannot load the compiled kernel module {path}: {exc}") from None
            # a runtime library the module calls into (toolchain/runtime.py; the loader names one missing symbol at
            # a time): build or load it, then try again
            runtime.ensure(needed)
    else:
        raise CacheError(f"cannot load the compiled kernel module {path}: unresolved runtime symbols")
    for hook in LOAD_HOOKS:
        hook(lib)
    return lib


def _load_cached(key: str, path, mode: int = ctypes.DEFAULT_MODE, kind: str = "cpu") -> ctypes.CDLL | None:
    """A cache hit loaded; a binary the dynamic loader rejects (garbage that matches its digest) is evicted: None."""
    try:
        return _loaded_module(path, mode)
    except CacheError:
        cache.evict(kind, key)
        return None


def cpu_key(source: str, options: CpuOptions) -> str:
    cc = find_compiler()
    return cache.make_key("cpu", WEFT_VERSION, cache.source_identity(source), cache.headers_digest(), cc.path,
                          cc.version, options.key_flags(cc.is_clang), host_target())


def load_cpu(key: str) -> ctypes.CDLL | None:
    """The module cached under ``key``, loaded (None when the cache does not hold it)."""
    with _lock:
        lib = _loaded.get(key)
    if lib is not None:
        return lib
    wait_inflight(key)
    path = cache.lookup("cpu", key, "so")
    lib = _load_cached(key, path) if path is not None else None
    if lib is None:
        return None
    with _lock:
        _loaded[key] = lib
    return lib


# ---- modules being compiled by a batch of this process (toolchain/batch.py): a build of one waits for its batch
_inflight: dict[str, threading.Event] = {}


def start_inflight(keys) -> list[threading.Event]:
    """Mark ``keys`` as being compiled by a batch; returns the events finish_inflight sets."""
    events = []
    with _lock:
        for key in keys:
            ev = threading.Event()
            _inflight[key] = ev
            events.append(ev)
    return events


def finish_inflight(keys, events) -> None:
    with _lock:
        for key, ev in zip(keys, events):
            if _inflight.get(key) is ev:
                del _inflight[key]
    for ev in events:
        ev.set()


def wait_inflight(key: str) -> None:
    """Block while a batch of this process is compiling ``key`` (its result is then in the cache, or not: the
    caller compiles it alone)."""
    with _lock:
        ev = _inflight.get(key)
    if ev is not None:
        ev.wait()


def build_cpu(source: str, options: CpuOptions, name: str, mode: int = ctypes.DEFAULT_MODE, kind: str = "cpu",
              key: str | None = None) -> ctypes.CDLL:
    """Compile (or fetch from the cache) and load a CPU module (``mode``: dlopen flags, e.g. RTLD_GLOBAL; ``kind``
    and ``key``: the cache entry, by default a kernel module's)."""
    key = key or cpu_key(source, options)
    with _lock:
        lib = _loaded.get(key)
    if lib is not None:
        return lib
    wait_inflight(key)
    path = cache.lookup(kind, key, "so")
    lib = _load_cached(key, path, mode, kind) if path is not None else None
    if lib is None:
        t0 = time.perf_counter()
        built = []  # stays empty when another process built it while this one waited for the build lock

        def compile_into(tmp):
            built.append(True)
            return _compile(source, options, tmp, name, key)

        path = cache.publish(kind, key, "so", compile_into, keep={"cpp": source})
        if config.debug_messages():
            done = "compiled" if built else "waited for another process to compile"
            log_debug(f"weft: {done} {name} in {time.perf_counter() - t0:.3f} s -> {path}")
        lib = _loaded_module(path, mode)
    elif config.debug_messages():
        log_debug(f"weft: loaded {name} from cache {path}")
    with _lock:
        _loaded[key] = lib
    return lib


# ------------------------------------------------------------------------------------------------ precompiled header
# Parsing weft.h is about 40% of a kernel's compile time. With GCC, a precompiled weft.h (built once per cache, compiler,
# flag set, CPU and header version, kept in <cache>/pch/<key>/weft.h.gch) cuts that to a few milliseconds: GCC looks for
# weft.h.gch in each include directory before weft.h, checks it matches the compile, and otherwise parses weft.h
# as usual, so a missing or unusable PCH only costs speed. The first compile in a fresh cache starts the PCH build
# in a detached process (it outlives short scripts) and does not wait for it (a one-kernel script is then done
# sooner); later compiles use it once it is ready, and only compiles ahead of need wait for it (_compile).
_pch_builds: dict[str, subprocess.Popen] = {}

# The detached build: compile into a private temp directory beside the final one, then rename it into place (atomic;
# another process may have published first). A POSIX shell runs it (a Python interpreter's start-up cost 0.02-0.03 s
# of CPU more); without one, the same steps in Python.
_PCH_SH = """
final="$1"; shift
tmp=$(mktemp -d "${final%/*}/.pch-XXXXXXXX") || exit 0
if "$@" -o "$tmp/weft.h.gch" >/dev/null 2>&1; then
    chmod 600 "$tmp/weft.h.gch"  # whatever the umask: weft uses only files no other user can write
    # rename(2) of the directory: fails when another process published first; a mv without -T (BusyBox) instead
    # moves only when nothing is there yet
    mv -T "$tmp" "$final" 2>/dev/null || { [ -e "$final" ] || mv "$tmp" "$final" 2>/dev/null; }
fi
rm -rf "$tmp"
"""
_PCH_PY = """
import os, shutil, subprocess, sys, tempfile
final, cmd = sys.argv[1], sys.argv[2:]
tmp = tempfile.mkdtemp(prefix=".pch-", dir=os.path.dirname(final))
try:
    out = os.path.join(tmp, "weft.h.gch")
    if subprocess.run(cmd + ["-o", out], capture_output=True).returncode == 0:
        os.chmod(out, 0o600)
        try:
            os.rename(tmp, final)
        except OSError:
            pass
finally:
    shutil.rmtree(tmp, ignore_errors=True)
"""


def _pch_helper() -> list[str]:
    sh = shutil.which("sh") if sys.platform.startswith("linux") else None
    return [sh, "-c", _PCH_SH, "weft-pch"] if sh else [sys.executable, "-c", _PCH_PY]


def _pch_key(options: CpuOptions) -> str:
    cc = find_compiler()
    options = options.header_options
    return cache.make_key("pch", WEFT_VERSION, cache.headers_digest(), cc.path, cc.version,
                          " ".join(options.flags(cc.is_clang)), host_target())


def pch_include_dir(options: CpuOptions, start: bool = True) -> Path | None:
    """The directory holding a ready weft.h.gch for ``options``; when there is none, start building it."""
    cc = find_compiler()
    if cc.is_clang or not config.precompiled_header:
        return None
    key = _pch_key(options)
    d = cache.root() / "pch" / key
    if (d / "weft.h.gch").is_file() and cache.trusted_file(d / "weft.h.gch"):
        return d
    with _lock:
        if start and key not in _pch_builds:
            d.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            flags = [f for f in options.header_options.flags(cc.is_clang) if f != "-shared"]
            cmd = [cc.path, *flags, "-x", "c++-header", str(cache.native_dir() / "weft.h")]
            _pch_builds[key] = subprocess.Popen([*_pch_helper(), str(d), *cmd],
                                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                                start_new_session=True)
    return None


_ahead = threading.local()


@contextlib.contextmanager
def compiling_ahead():
    """Compiles in this block run ahead of need (weft/ahead.py): they wait for a precompiled header being built
    instead of parsing weft.h themselves (the foreground compile that started the build does not wait)."""
    _ahead.on = True
    try:
        yield
    finally:
        _ahead.on = False


def wait_for_pch(options: CpuOptions, timeout: float = 120.0) -> bool:
    """Block until the PCH build for ``options`` started by this process (if any) ends; True if a PCH is ready."""
    if pch_include_dir(options) is None:
        proc = _pch_builds.get(_pch_key(options))
        if proc is not None:
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                pass
    return pch_include_dir(options, start=False) is not None


def _compile(source: str, options: CpuOptions, tmp: Path, name: str, key: str) -> Path:
    cc = find_compiler()
    src = tmp / "module.cpp"
    src.write_text(source)
    out = tmp / "module.so"
    pch = pch_include_dir(options, start=False)
    if pch is None and getattr(_ahead, "on", False) and wait_for_pch(options):
        # a compile ahead of need (a background thread, one of several: weft/ahead.py started the build before
        # queueing them) waits for the header rather than parsing weft.h itself. A compile a launch waits for does
        # not: parsing weft.h (0.09 s of g++ CPU) costs it less than the rest of a build (0.3 s) started just before,
        # e.g. by the compile of the kernel before it (a rollout's loss kernel and then its adjoint: the adjoint
        # waited 0.9 s for it in the sphere benchmark at load 12)
        pch = pch_include_dir(options, start=False)
    includes = ([f"-I{pch}"] if pch is not None else []) + [f"-I{cache.native_dir()}"]
    cmd = [cc.path, *options.flags(cc.is_clang), *includes, str(src), *options.libs(cc.is_clang), "-o", str(out)]
    result = run(cmd)
    if pch is None:
        pch_include_dir(options)  # build the precompiled header now, in the background, for the next kernels
    if result.returncode != 0 and "No space left on device" in (result.stderr or ""):
        raise CacheError(f"no space left on the device of the kernel cache {cache.root()} while compiling '{name}'; "
                         "free space or choose another directory with wp.config.kernel_cache_dir")
    if result.returncode != 0:
        failed = cache.root() / "failed"
        failed.mkdir(exist_ok=True, mode=0o700)
        keep = failed / f"{name}-{key[:12]}.cpp"
        keep.write_text(source)
        repro = " ".join(shlex.quote(c) for c in [cc.path, *options.flags(cc.is_clang), *includes, str(keep),
                                                  *options.libs(cc.is_clang), "-o", "/tmp/weft_repro.so"])
        log_path = failed / f"{name}-{key[:12]}.log"
        log_path.write_text(result.stderr or result.stdout)
        raise ToolchainError(
            f"internal error: the C++ compiler rejected the code weft generated for '{name}'. This is a weft bug, "
            f"not an error in your program; please report it.\n  generated source: {keep}\n"
            f"  compiler log: {log_path}\n  reproduce: {repro}")
    return out
