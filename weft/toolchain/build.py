"""Source -> loaded native module, through the cache."""

from __future__ import annotations

import ctypes
import shlex
import threading
import time
from pathlib import Path

from .. import __version__ as WEFT_VERSION
from .. import config
from ..errors import ToolchainError
from . import cache
from .compiler import find_compiler, host_target, run
from .options import CpuOptions

_loaded: dict[str, ctypes.CDLL] = {}
_lock = threading.Lock()


def cpu_key(source: str, options: CpuOptions) -> str:
    cc = find_compiler()
    return cache.make_key("cpu", WEFT_VERSION, source, cache.headers_digest(), cc.path, cc.version,
                          " ".join(options.flags(cc.is_clang)), host_target())


def build_cpu(source: str, options: CpuOptions, name: str) -> ctypes.CDLL:
    """Compile (or fetch from the cache) and load a CPU module."""
    key = cpu_key(source, options)
    with _lock:
        lib = _loaded.get(key)
    if lib is not None:
        return lib
    path = cache.lookup("cpu", key, "so")
    if path is None:
        t0 = time.perf_counter()
        path = cache.publish("cpu", key, "so", lambda tmp: _compile(source, options, tmp, name, key),
                             keep={"cpp": source})
        if config.verbose:
            print(f"weft: compiled {name} in {time.perf_counter() - t0:.3f} s -> {path}")
    elif config.verbose:
        print(f"weft: loaded {name} from cache {path}")
    lib = ctypes.CDLL(str(path))
    with _lock:
        _loaded[key] = lib
    return lib


def _compile(source: str, options: CpuOptions, tmp: Path, name: str, key: str) -> Path:
    cc = find_compiler()
    src = tmp / "module.cpp"
    src.write_text(source)
    out = tmp / "module.so"
    cmd = [cc.path, *options.flags(cc.is_clang), f"-I{cache.native_dir()}", str(src), "-o", str(out)]
    result = run(cmd)
    if result.returncode != 0:
        failed = cache.root() / "failed"
        failed.mkdir(exist_ok=True, mode=0o700)
        keep = failed / f"{name}-{key[:12]}.cpp"
        keep.write_text(source)
        repro = " ".join(shlex.quote(c) for c in cmd[:-3]) + f" {shlex.quote(str(keep))} -o /tmp/weft_repro.so"
        log_path = failed / f"{name}-{key[:12]}.log"
        log_path.write_text(result.stderr or result.stdout)
        raise ToolchainError(
            f"internal error: the C++ compiler rejected the code weft generated for '{name}'. This is a weft bug, "
            f"not an error in your program; please report it.\n  generated source: {keep}\n"
            f"  compiler log: {log_path}\n  reproduce: {repro}")
    return out
