"""What a user needs to see when something is wrong: ``python -m weft``, ``wp.print_diagnostics()``, and
``wp.init()`` with ``wp.config.verbose``.

Nothing here runs at ``import weft``: the checks (compiler version, an OpenMP test build, the CPU's SIMD macros,
the cache's size, CUDA driver and NVRTC probes) run only when a report is asked for. Every check catches its own
failure and reports why, so a machine without a compiler or without the CUDA pieces gets a report, not a traceback.
"""

from __future__ import annotations

import ctypes
import enum
import os
import platform
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import config
from .cuda import driver
from .errors import CacheError, ToolchainError
from .runtime.device import get_cuda_devices
from .toolchain import cache, nvrtc, runtime
from .toolchain.compiler import find_compiler
from .toolchain.options import CpuOptions


class Status(enum.Enum):
    OK = "ok"
    MISSING = "missing"  # optional piece not there (CUDA): weft works without it
    PROBLEM = "problem"  # CPU kernels cannot be built or loaded: weft does not work until this is fixed


@dataclass(frozen=True, slots=True)
class Item:
    name: str
    value: str
    status: Status = Status.OK


# x86 and Arm feature macros the compiler defines under -march=native, widest first
_SIMD_MACROS = (
    ("__AVX512F__", "AVX-512F"), ("__AVX512BW__", "AVX-512BW"), ("__AVX512VL__", "AVX-512VL"),
    ("__AVX512FP16__", "AVX-512FP16"), ("__AVX2__", "AVX2"), ("__FMA__", "FMA"), ("__AVX__", "AVX"),
    ("__F16C__", "F16C"), ("__SSE4_2__", "SSE4.2"), ("__SSE2__", "SSE2"),
    ("__ARM_FEATURE_SVE2", "SVE2"), ("__ARM_FEATURE_SVE", "SVE"), ("__ARM_NEON", "NEON"),
)

_OMP_PROBE = """
#include <omp.h>
extern "C" __attribute__((visibility("default"))) int weft_probe_threads() {
    int n = 0;
#pragma omp parallel
    {
#pragma omp atomic
        n += 1;
    }
    return n;
}
"""


def _first_line(text: str) -> str:
    return next((line.strip() for line in str(text).splitlines() if line.strip()), "")


def _size(path: Path) -> tuple[int, int]:
    total = files = 0
    for dirpath, _dirs, names in os.walk(path):
        for name in names:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
                files += 1
            except OSError:
                pass
    return total, files


def _compiler_items() -> list[Item]:
    try:
        cc = find_compiler()
    except ToolchainError as exc:
        return [Item("C++ compiler", f"not found. {exc}", Status.PROBLEM)]
    items = [Item("C++ compiler", f"{cc.path} ({cc.version})")]
    flags = CpuOptions(opt_level=config.optimization_level, extra=tuple(config.cpu_compile_flags)).flags(cc.is_clang)
    items.append(Item("compile flags", " ".join(flags)))

    # what -march=native means on this CPU: the target name (GCC) and the SIMD macros it enables
    try:
        macros = subprocess.run([cc.path, "-march=native", "-fopenmp", "-dM", "-E", "-x", "c++", os.devnull],
                                capture_output=True, text=True, timeout=60, check=False).stdout
        found = [label for macro, label in _SIMD_MACROS if f"#define {macro} " in macros]
        target = ""
        if not cc.is_clang:
            q = subprocess.run([cc.path, "-march=native", "-Q", "--help=target"], capture_output=True, text=True,
                               timeout=60, check=False).stdout
            target = next((ln.split()[-1] for ln in q.splitlines() if ln.strip().startswith("-march=")), "")
        items.append(Item("SIMD (-march=native)", (f"{target}: " if target else "") + (", ".join(found) or "none")))
        omp = next((ln.split()[-1] for ln in macros.splitlines() if ln.startswith("#define _OPENMP ")), "")
    except (OSError, subprocess.SubprocessError) as exc:
        items.append(Item("SIMD (-march=native)", f"could not ask the compiler ({exc})", Status.PROBLEM))
        omp = ""
    items.append(_openmp_item(cc.path, flags, omp))
    return items


def _openmp_item(cc: str, flags: list[str], omp_macro: str) -> Item:
    """Build and load a tiny OpenMP library with weft's own flags: the real test of what kernels need."""
    with tempfile.TemporaryDirectory(prefix="weft-diag-") as tmp:
        src, lib = Path(tmp) / "probe.cpp", Path(tmp) / "probe.so"
        src.write_text(_OMP_PROBE)
        try:
            proc = subprocess.run([cc, *[f for f in flags if f != "-w"], str(src), "-o", str(lib)],
                                  capture_output=True, text=True, timeout=120, check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            return Item("OpenMP", f"the test build did not run ({exc})", Status.PROBLEM)
        if proc.returncode != 0:
            return Item("OpenMP", "a test build with weft's flags failed (weft needs OpenMP; on macOS "
                        f"`brew install libomp`): {_first_line(proc.stderr)}", Status.PROBLEM)
        try:
            threads = ctypes.CDLL(str(lib)).weft_probe_threads()
        except OSError as exc:
            return Item("OpenMP", f"the test library did not load ({exc})", Status.PROBLEM)
    version = f"_OPENMP {omp_macro}, " if omp_macro else ""
    setting = f", wp.config.num_threads = {config.num_threads}" if config.num_threads else ""
    return Item("OpenMP", f"yes ({version}{threads} threads in a parallel region{setting})")


def _cache_items() -> list[Item]:
    items = []
    for what, path, note in (("kernel cache", config.cache_dir(), "wp.clear_kernel_cache() empties it"),
                             ("runtime libraries", config.runtime_dir(), "kept when the kernel cache is emptied")):
        if not path.exists():
            items.append(Item(what, f"{path} (not created yet)"))
            continue
        try:
            cache.check_safe(path)
        except (CacheError, OSError) as exc:
            items.append(Item(what, str(exc), Status.PROBLEM))
            continue
        size, files = _size(path)
        items.append(Item(what, f"{path} ({size / 2**20:.1f} MiB in {files} files; {note})"))
    return items


def _cuda_items() -> list[Item]:
    items = []
    try:

        major, minor = nvrtc.version()
        archs = nvrtc.supported_archs()
        items.append(Item("NVRTC", f"{major}.{minor} (sm_{min(archs)} .. sm_{max(archs)})"))
    except Exception as exc:  # noqa: BLE001 - any failure to load NVRTC is reported, never raised
        items.append(Item("NVRTC", f"not available: {_first_line(exc)}", Status.MISSING))
    try:

        version = driver.driver_version()
        if not version:
            items.append(Item("CUDA driver", f"not available: {driver.unavailable_reason}", Status.MISSING))
        else:
            devices = get_cuda_devices()
            names = ", ".join(f"{d.alias} {d.name}" for d in devices) or f"none ({driver.unavailable_reason})"
            items.append(Item("CUDA driver", f"CUDA {version // 1000}.{version % 1000 // 10}; devices: {names}",
                              Status.OK if devices else Status.MISSING))
    except Exception as exc:  # noqa: BLE001
        items.append(Item("CUDA driver", f"not available: {type(exc).__name__}: {_first_line(exc)}", Status.MISSING))
    return items


def collect() -> list[Item]:
    """Every check, in report order (runs a compiler a few times: about a second)."""
    import numpy as np

    from . import __version__

    items = [
        Item("weft", f"{__version__} ({Path(__file__).resolve().parent})"),
        Item("Python", f"{platform.python_version()} ({sys.executable})"),
        Item("NumPy", np.__version__),
        Item("platform", f"{platform.platform()}, {os.cpu_count()} CPUs"),
        Item("mode", f"{config.mode}{' (verbose)' if config.verbose else ''}"),
    ]
    for part in (_compiler_items, _cache_items, _cuda_items):
        try:
            items += part()
        except Exception as exc:  # noqa: BLE001 - a report must never crash
            items.append(Item(part.__name__.strip("_").replace("_items", ""), f"check failed: {exc!r}",
                              Status.PROBLEM))
    return items


def report(items: list[Item] | None = None) -> str:
    items = collect() if items is None else items
    width = max(len(i.name) for i in items)
    marks = {Status.OK: " ", Status.MISSING: "-", Status.PROBLEM: "!"}
    lines = [f"{marks[i.status]} {i.name:<{width}}  {i.value}" for i in items]
    problems = [i.name for i in items if i.status is Status.PROBLEM]
    lines.append("")
    lines.append("PROBLEM: " + ", ".join(problems) + " (see the lines marked !)" if problems else
                 "CPU kernels can be built here." + ("" if all(i.status is Status.OK for i in items) else
                                                     " Lines marked - are optional pieces that are missing."))
    return "\n".join(lines)


def print_diagnostics() -> None:
    """Print weft's version, the C++ compiler, OpenMP, the SIMD level of ``-march=native``, the kernel cache
    and the CUDA driver / NVRTC status (with the reason when unavailable)."""
    print(report())


def main(argv: list[str] | None = None) -> int:
    """``python -m weft``: the report; exit status 1 when CPU kernels cannot be built here. ``--build-runtime``
    builds weft's runtime libraries into the runtime directory first (toolchain/runtime.py), e.g. in an image build."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if args and args != ["--build-runtime"]:
        print("usage: python -m weft [--build-runtime]")
        return 2
    if args:
        names = runtime.build_all()
        print(f"weft: {len(names)} runtime libraries ready in {config.runtime_dir()}")
    items = collect()
    print(report(items))
    return 1 if any(i.status is Status.PROBLEM for i in items) else 0
