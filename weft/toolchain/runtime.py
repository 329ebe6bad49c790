"""weft's runtime libraries: native code shared by kernel modules instead of compiled into each of them.

A runtime library (``weft/native/runtime/<name>.cpp``) is compiled once per kernel cache, compiler, flag set and
CPU like any module (same cache, same trust checks) and loaded with global symbol visibility, so kernel modules
that declare its ``weft_rt_<name>*`` entry points resolve them when they are loaded. Today: ``fft_f32`` and
``fft_f64``, the passes of tile FFTs (see fft.h), which were most of the compile time of every kernel using
``tile_fft`` / ``tile_ifft``.

A kernel module that needs a library is recognised by its source when it is compiled (the library then starts
building alongside it) and, when a cached module is loaded, by the loader's "undefined symbol" error naming an
entry point (the library is then built or fetched from the cache, loaded, and the module loaded again).
"""

from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass

from .. import config


@dataclass(frozen=True, slots=True)
class RuntimeLibrary:
    name: str
    source: str  # under weft/native
    symbol_prefix: str  # every entry point starts with it
    calls: tuple[str, ...]  # generated code containing one of these ...
    operand: str  # ... and this type probably calls into the library (a guess to start building early)

    def probably_needed_by(self, source: str) -> bool:
        return self.operand in source and any(c in source for c in self.calls)


_FFT_CALLS = ("tile_fft(", "tile_ifft(")
# one library per scalar type: a program pays only for the types it transforms
LIBRARIES = (RuntimeLibrary("fft_f32", "runtime/fft_f32.cpp", "weft_rt_fft_f32", _FFT_CALLS, "vec_t<2,float>"),
             RuntimeLibrary("fft_f64", "runtime/fft_f64.cpp", "weft_rt_fft_f64", _FFT_CALLS, "vec_t<2,double>"))

_lock = threading.Lock()
_loaded: dict[str, ctypes.CDLL] = {}
_building: dict[str, threading.Thread] = {}


def _options():
    from .options import CpuOptions

    return CpuOptions(opt_level=config.optimization_level, extra=tuple(config.cpu_compile_flags))


def ensure(lib: RuntimeLibrary) -> ctypes.CDLL:
    """The library, loaded globally (compiled first when the cache does not hold it)."""
    loaded = _loaded.get(lib.name)
    if loaded is not None:
        return loaded
    with _lock:
        loaded = _loaded.get(lib.name)
        if loaded is None:
            from .build import build_cpu
            from .cache import native_dir

            source = (native_dir() / lib.source).read_text()
            loaded = build_cpu(source, _options(), f"weft_runtime_{lib.name}", mode=ctypes.RTLD_GLOBAL)
            _loaded[lib.name] = loaded
    return loaded


def start_for_source(source: str) -> None:
    """Start building (in a thread) the libraries a module about to be compiled will need."""
    for lib in LIBRARIES:
        if lib.name in _loaded or lib.name in _building or not lib.probably_needed_by(source):
            continue
        with _lock:
            if lib.name in _building:
                continue
            t = threading.Thread(target=_build_quietly, args=(lib,), name=f"weft-runtime-{lib.name}", daemon=True)
            _building[lib.name] = t
        t.start()


def _build_quietly(lib: RuntimeLibrary) -> None:
    try:
        ensure(lib)
    except Exception:  # noqa: BLE001 - the loader builds it again and reports the failure
        _building.pop(lib.name, None)


def for_missing_symbol(message: str) -> RuntimeLibrary | None:
    """The library whose entry point a loader error ("undefined symbol: ...") names, if any."""
    for lib in LIBRARIES:
        if f"undefined symbol: {lib.symbol_prefix}" in message:
            return lib
    return None
