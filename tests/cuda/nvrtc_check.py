"""Pytest plugin: every kernel the test suite compiles is also rendered as CUDA and compiled by NVRTC.

Registered by ``tests/cuda/conftest.py`` (a plugin object, so it sees the tests of every directory). After each
test, the kernel specialisations that test lowered (forward and, when differentiable, adjoint) are rendered with
the CUDA renderer and compiled by NVRTC; an NVRTC error (or a renderer crash) fails that test, naming the kernel;
tile kernels included. No GPU is needed. Each distinct CUDA source is compiled once per run: results go through the
kernel cache, which the xdist workers share (a per-key lock makes the second worker wait for the first's result),
so reruns with ``WEFT_TEST_REUSE_CACHE=1`` are quick too.

``WEFT_NVRTC_CHECK`` chooses how:

- ``quick`` (the default, the README's test command): optimised CUBINs for one architecture, sm_80 (the oldest
  weft targets, so the strictest);
- ``full`` (CI: ``.ci/run`` sets it): optimised CUBINs for sm_80 and sm_90;
- ``0``: off.

In the quick mode, kernels that keep more than ``LOCAL_ARRAY_LIMIT`` scalars in thread-local arrays (``wp.zeros``
inside a kernel: weft.sim's articulation kernels, eval_fk and the Featherstone mass matrix) are left to the full
mode: NVRTC takes 10-30 s CPU per forward module for them and minutes for their adjoints (eval_fk's 16-joint
variant, 208 scalars: 8.6 s forward, 114 s adjoint), and their code is the same in every test that uses them. The terminal summary names them; CI's full mode checks every kernel.

``WEFT_NVRTC_ARCHS`` (comma-separated, e.g. ``80,90``) overrides the architectures of either mode.
``WEFT_REQUIRE_NVRTC=1`` makes a missing NVRTC an error (CI sets it) instead of a skipped check.
"""

from __future__ import annotations

import os
import re
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


#: thread-local array scalars above which the quick mode leaves a kernel's NVRTC check to the full mode
LOCAL_ARRAY_LIMIT = 192
_FIXED_DECL = re.compile(r"weft::fixedarray_t<(.+?),(\d+),\d>\s+(\w+)\s*=")
_COMPONENTS = {"transform_t": 7, "quat_t": 4}


def local_array_scalars(source: str) -> int:
    """Scalars the kernel keeps in thread-local arrays (the adjoint's adj_ copies not counted)."""
    total = 0
    for m in _FIXED_DECL.finditer(source):
        if m.group(3).startswith("adj_"):
            continue
        dtype, count = m.group(1), int(m.group(2))
        dims = re.match(r"weft::(?:vec_t<(\d+)|mat_t<(\d+),(\d+))", dtype)
        width = next((v for k, v in _COMPONENTS.items() if k in dtype), 1)
        if dims:
            width = int(dims.group(1)) if dims.group(1) else int(dims.group(2)) * int(dims.group(3))
        total += count * width
    return total


def deferred(source: str) -> bool:
    """Whether the quick mode leaves this module to the full mode (``LOCAL_ARRAY_LIMIT``)."""
    return mode() != "full" and local_array_scalars(source) > LOCAL_ARRAY_LIMIT


def extra_flags() -> tuple[str, ...]:
    """No extra NVRTC flags in either mode. ``-G`` (unoptimised device code) was tried for the quick mode and
    measured a net loss: tile-FFT and geometry modules 3-4x cheaper, but the inverse-kinematics example's articulation
    kernels 2.3x dearer (349 s vs 150 s CPU); tests/examples in all: 392 s vs 246 s of NVRTC."""
    return ()


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

    name = spec.kernel.__name__
    size = args_bytes(spec)  # NVRTC also verifies the Args layout against Python's packing
    out = [(f"{name} (forward)", pipeline.render_module(spec.fn, name, spec.debug,
                                                        Target.CUDA, Direction.FORWARD, size).source)]
    if spec.kernel.enable_backward:
        try:
            from weft import pipeline

            prog = pipeline.differentiate(spec.fn)
        except (Error, NotImplementedError, ImportError, AttributeError):
            prog = None  # not differentiable (an error users see only when they ask for a backward pass)
        if prog is not None:
            out.append((f"{name} (adjoint)", pipeline.render_module(prog, name, spec.debug,
                                                                    Target.CUDA, Direction.ADJOINT, size).source))
    return out


def compile_all(specs, arch_list=None, workers: int = 2, deferred_out: set | None = None) -> tuple[int, list[str]]:
    """Compile the specs' CUDA sources for every arch; returns (modules compiled, failure messages). With
    ``deferred_out``, modules the quick mode leaves to the full mode are skipped and their labels added to it."""
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
            if deferred_out is not None and deferred(source):
                deferred_out.add(label)
                continue
            for arch in arch_list or archs():
                jobs.append((label, source, arch, spec))

    def run(job):
        label, source, arch, spec = job
        try:
            options = nvrtc.NvrtcOptions(arch=arch, debug=spec.debug, extra=extra_flags())
            nvrtc.build_cuda(source, options, spec.kernel.__name__)
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
        self.deferred: set[str] = set()

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
            count, failures = compile_all(new, deferred_out=self.deferred)
            self.compiled += count
            self.kernels += len(new)
            if failures:
                pytest.fail("NVRTC could not compile the CUDA code of kernels this test defines:\n  "
                            + "\n  ".join(failures), pytrace=False)
        return result

    def pytest_terminal_summary(self, terminalreporter):
        if self.kernels:
            how = "optimised" + ("" if mode() == "full" else " (WEFT_NVRTC_CHECK=full: sm_80 and sm_90)")
            terminalreporter.write_line(f"weft NVRTC check: {self.kernels} kernel specialisations, {self.compiled} "
                                        f"CUDA modules compiled for sm_{', sm_'.join(map(str, archs()))}, {how}")
        if self.deferred:
            terminalreporter.write_line(f"weft NVRTC check: {len(self.deferred)} modules with more than "
                                        f"{LOCAL_ARRAY_LIMIT} scalars in thread-local arrays left to "
                                        f"WEFT_NVRTC_CHECK=full: {', '.join(sorted(self.deferred))}")


def _is_cuda_only(spec) -> bool:
    # specs launched only on a GPU never build the CPU module; they were lowered fine all the same
    from weft.pipeline import Target

    return Target.CUDA in spec.programs
