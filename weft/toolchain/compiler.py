"""The system C++ compiler: discovery, identity (for cache keys) and invocation."""

from __future__ import annotations

import functools
import json
import os
import platform
import shutil
import subprocess
from dataclasses import dataclass

from ..errors import ToolchainError

_INSTALL_HINT = (
    "weft compiles CPU kernels with the system C++ compiler and could not find one.\n"
    "  Debian/Ubuntu:  sudo apt-get install g++\n"
    "  Fedora/RHEL:    sudo dnf install gcc-c++\n"
    "  macOS:          xcode-select --install (and `brew install libomp` for OpenMP)\n"
    "or point $CXX at a C++17 compiler."
)


@dataclass(frozen=True, slots=True)
class CompilerInfo:
    path: str
    version: str  # first line of `--version`
    is_clang: bool


@functools.cache
def find_compiler() -> CompilerInfo:
    """``$CXX``, else ``g++``, else ``clang++`` on PATH. Raises ToolchainError with install instructions."""
    candidates = []
    if os.environ.get("CXX"):
        candidates.append(os.environ["CXX"])
    candidates += ["g++", "clang++", "c++"]
    for name in candidates:
        path = shutil.which(name)
        if path is None:
            continue
        info = _identify(path, name)
        if info is not None:
            return info
    raise ToolchainError(_INSTALL_HINT)


def _identify(path: str, name: str) -> CompilerInfo | None:
    """The compiler's version line, remembered on disk per (path, size, mtime): saves a process per start."""
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError:
        return None
    stamp = f"{real}|{st.st_size}|{st.st_mtime_ns}"
    memo = _memo_path()
    if memo is not None:
        try:
            data = json.loads(memo.read_text())
            if data.get("stamp") == stamp and data.get("path") == path:
                return CompilerInfo(path, data["version"], bool(data["is_clang"]))
        except (OSError, ValueError, KeyError):
            pass
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    first = out.stdout.strip().splitlines()[0] if out.stdout.strip() else name
    info = CompilerInfo(path, first, "clang" in out.stdout.lower())
    if memo is not None:
        try:
            tmp = memo.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"stamp": stamp, "path": path, "version": first, "is_clang": info.is_clang}))
            os.replace(tmp, memo)
        except OSError:
            pass
    return info


def _memo_path():
    try:
        from . import cache

        return cache.root() / "compiler.json"
    except Exception:  # noqa: BLE001 - an unusable cache dir is reported when compiling, not here
        return None


@functools.cache
def host_target() -> str:
    """A description of the host CPU: kernels are built with -march=native, so the cache key must include it."""
    flags = ""
    model = ""  # not platform.processor(): on Linux it runs `uname -p` in a subprocess
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name") and not model.strip():
                    model = line.split(":", 1)[1].strip()
                if line.startswith(("flags", "Features")):
                    flags = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{platform.machine()}|{model or platform.machine()}|{flags}"


def run(cmd: list[str], cwd: str | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=timeout)
    except FileNotFoundError:
        raise ToolchainError(_INSTALL_HINT) from None
    except subprocess.TimeoutExpired:
        raise ToolchainError(f"the C++ compiler did not finish within {timeout:.0f} s: {' '.join(cmd)}") from None
