"""The system C++ compiler: discovery, identity (for cache keys) and invocation."""

from __future__ import annotations

import functools
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


@functools.lru_cache(maxsize=None)
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
        try:
            out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if out.returncode == 0:
            first = out.stdout.strip().splitlines()[0] if out.stdout.strip() else name
            return CompilerInfo(path, first, "clang" in out.stdout.lower())
    raise ToolchainError(_INSTALL_HINT)


@functools.lru_cache(maxsize=None)
def host_target() -> str:
    """A description of the host CPU: kernels are built with -march=native, so the cache key must include it."""
    flags = ""
    model = platform.processor() or platform.machine()
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
    return f"{platform.machine()}|{model}|{flags}"


def run(cmd: list[str], cwd: str | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=timeout)
    except FileNotFoundError:
        raise ToolchainError(_INSTALL_HINT) from None
    except subprocess.TimeoutExpired:
        raise ToolchainError(f"the C++ compiler did not finish within {timeout:.0f} s: {' '.join(cmd)}") from None
