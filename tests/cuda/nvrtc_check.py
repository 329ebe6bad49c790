"""Pytest plugin: every kernel the test suite compiles is also rendered as CUDA and compiled by NVRTC.

Registered by ``tests/cuda/conftest.py`` (a plugin object, so it sees the tests of every directory). After each
test, the kernel specialisations that test lowered (forward and, when differentiable, adjoint) are rendered with
the CUDA renderer and compiled by NVRTC; an NVRTC error (or a renderer crash) fails that test, naming the kernel;
tile kernels included. No GPU is needed. Each distinct CUDA source is compiled once per run: results go through the
kernel cache, which the xdist workers share (a per-key lock makes the second worker wait for the first's result),
so reruns with ``WEFT_TEST_REUSE_CACHE=1`` are quick too.

``WEFT_NVRTC_CHECK`` chooses how:

- ``quick`` (the default, the README's test command): PTX for ``compute_80`` (the oldest architecture weft targets,
  so the strictest) with NVVM's optimiser off (``-Xnvvm -opt=0``). This runs NVRTC's whole C++ front end and NVVM's
  code generation on every kernel - the stages where the CUDA renderer's bugs show - at a fraction of the cost of
  optimised CUBINs: a mesh query 0.2 s instead of 4.1 s, the Featherstone dynamics adjoint 4 s instead of ~8
  minutes. It leaves out the optimiser and ``ptxas`` (machine code), which the full mode covers;
- ``full`` (CI: ``.ci/run`` sets it): optimised CUBINs for sm_80 and sm_90 (NVVM at -O3 and ``ptxas``);
- ``0``: off.

``WEFT_NVRTC_ARCHS`` (comma-separated, e.g. ``80,90``) overrides the architectures of either mode.
``WEFT_REQUIRE_NVRTC=1`` makes a missing NVRTC an error (CI sets it) instead of a skipped check.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
_recorded: list = []
_recorded_lock = threading.Lock()


MODES = ("quick", "full", "0")


def mode() -> str:
    value = os.environ.get("WEFT_NVRTC_CHECK", "quick").strip().lower() or "quick"
    value = {"1": "quick", "off": "0"}.get(value, value)
    if value not in MODES:
        raise pytest.UsageError(f"WEFT_NVRTC_CHECK must be one of {', '.join(MODES)}, got {value!r}")
    return value


def archs() -> tuple[int, ...]:
    default = "80,90" if mode() == "full" else "80"
    return tuple(int(a) for a in os.environ.get("WEFT_NVRTC_ARCHS", default).split(",") if a.strip())


def options(arch: int, debug: bool):
    """The NVRTC options of one check: optimised CUBINs in the full mode, unoptimised PTX in the quick mode.
    (``-G``, unoptimised CUBINs, was measured too: 3-8x dearer than unoptimised PTX, the articulation kernels worst.)"""
    from weft.toolchain import nvrtc

    if mode() == "full":
        return nvrtc.NvrtcOptions(arch=arch, debug=debug)
    return nvrtc.NvrtcOptions(arch=arch, debug=debug, output="ptx", extra=("-Xnvvm", "-opt=0"))


def install_recorder() -> None:
    """Record every Spec the kernel pipeline lowers (wrapping ``Kernel._lower``; idempotent)."""
    from weft.kernel import Kernel

    if getattr(Kernel._lower, "_weft_nvrtc_recorder", False):
        return
    original = Kernel._lower

    def _lower(self, *args, **kwargs):
        spec = original(self, *args, **kwargs)
        with _recorded_lock:
            _recorded.append(spec)
        return spec

    _lower._weft_nvrtc_recorder = True
    Kernel._lower = _lower


def cuda_sources(spec) -> list[tuple[str, str]]:
    """(label, CUDA source) of a spec's forward pass and, when the kernel is differentiable, its adjoint."""
    from weft import pipeline
    from weft.cuda.launch import args_bytes
    from weft.errors import Error
    from weft.pipeline import Direction, Target
    from weft.toolchain import preamble

    name = spec.kernel.__name__
    size = args_bytes(spec)  # NVRTC also verifies the Args layout against Python's packing
    opts = spec.kernel.options  # wp.ModuleBuildOptions preambles, as weft.cuda.launch.cuda_program applies them
    out = [(f"{name} (forward)", preamble.apply(pipeline.render_module(spec.fn, name, spec.debug, Target.CUDA,
                                                                       Direction.FORWARD, size).source, opts, True))]
    if spec.kernel.enable_backward and spec.kernel.custom_adjoint is None:  # a hand-written backward is its own kernel
        try:
            from weft import pipeline

            prog = pipeline.differentiate(spec.fn)
        except (Error, NotImplementedError, ImportError, AttributeError):
            prog = None  # not differentiable (an error users see only when they ask for a backward pass)
        if prog is not None:
            out.append((f"{name} (adjoint)", preamble.apply(pipeline.render_module(
                prog, name, spec.debug, Target.CUDA, Direction.ADJOINT, size).source, opts, True)))
    return out


def compile_all(specs, arch_list=None, workers: int = 2) -> tuple[int, list[str]]:
    """Compile the specs' CUDA sources for every arch; returns (modules compiled, failure messages)."""
    from weft.toolchain import nvrtc

    jobs = []
    failures: list[str] = []
    for spec in specs:
        try:
            sources = cuda_sources(spec)
        except Exception as exc:  # noqa: BLE001 - a renderer crash is a failure to report, not to hide
            failures.append(f"{spec.kernel.__name__}: the CUDA renderer failed: {type(exc).__name__}: {exc}")
            continue
        for label, source in sources:
            for arch in arch_list or archs():
                jobs.append((label, source, arch, spec))

    def run(job):
        label, source, arch, spec = job
        try:
            nvrtc.build_cuda(source, options(arch, spec.debug), spec.kernel.__name__)
        except Exception as exc:  # noqa: BLE001
            return f"{label} for sm_{arch}: {exc}"
        return None

    with ThreadPoolExecutor(max_workers=workers) as pool:
        for result in pool.map(run, jobs):
            if result:
                failures.append(result)
    return len(jobs), failures


class NvrtcCheckPlugin:
    def __init__(self) -> None:
        self.compiled = 0
        self.kernels = 0

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item):
        if _HERE in item.path.parents:  # this directory's tests compile their kernels with NVRTC themselves
            return (yield)
        with _recorded_lock:
            start = len(_recorded)
        result = yield  # a failing test raises here: nothing more to check
        with _recorded_lock:
            new = [s for s in _recorded[start:] if getattr(s, "fwd", None) is not None or _is_cuda_only(s)]
        if new:
            count, failures = compile_all(new)
            self.compiled += count
            self.kernels += len(new)
            if failures:
                pytest.fail("NVRTC could not compile the CUDA code of kernels this test defines:\n  "
                            + "\n  ".join(failures), pytrace=False)
        return result

    def pytest_terminal_summary(self, terminalreporter):
        if self.kernels:
            how = ("optimised CUBINs" if mode() == "full"
                   else "unoptimised PTX (WEFT_NVRTC_CHECK=full: optimised CUBINs for sm_80 and sm_90)")
            terminalreporter.write_line(f"weft NVRTC check: {self.kernels} kernel specialisations, {self.compiled} "
                                        f"CUDA modules compiled for sm_{', sm_'.join(map(str, archs()))}: {how}")


def _is_cuda_only(spec) -> bool:
    # specs launched only on a GPU never build the CPU module; they were lowered fine all the same
    from weft.pipeline import Target

    return Target.CUDA in spec.programs
