"""Shared test setup.

Kernels are defined at module level in the test files so each compiles once per session. By default the
suite uses a per-session kernel cache and runtime library directory under pytest's tmp base (hermetic), one for all
xdist workers of the run; set WEFT_TEST_REUSE_CACHE=1 to reuse the normal directories (~/.cache/weft and
~/.cache/weft-runtime, or $WEFT_CACHE_DIR and $WEFT_RUNTIME_DIR) across sessions for faster reruns.
"""

from __future__ import annotations

import os

import pytest

import weft as wp

# every program the pipeline produces (forward and adjoint) goes through the IR verifier in the test suite
wp.config.verify_ir = True


@pytest.fixture(scope="session", autouse=True)
def weft_cache_dir(tmp_path_factory):
    if os.environ.get("WEFT_TEST_REUSE_CACHE") == "1":
        yield wp.config.cache_dir()
        return
    old = wp.config.kernel_cache_dir
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # xdist: one cache for the whole run, shared by its workers (their basetemps are <run dir>/popen-gwN). The
        # cache's per-key build lock makes a kernel both workers need compile once (g++ and the NVRTC check alike).
        base = base.parent
    path = base / "weft-kernel-cache"
    path.mkdir(mode=0o700, exist_ok=True)
    os.chmod(path, 0o700)
    wp.config.kernel_cache_dir = str(path)
    os.environ["WEFT_CACHE_DIR"] = str(path)  # for subprocesses started by tests
    # the runtime libraries (toolchain/runtime.py) too: hermetic, shared by the run's workers
    old_runtime = wp.config.runtime_cache_dir
    runtime = base / "weft-runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    os.chmod(runtime, 0o700)
    wp.config.runtime_cache_dir = str(runtime)
    os.environ["WEFT_RUNTIME_DIR"] = str(runtime)
    yield path
    wp.config.kernel_cache_dir = old
    wp.config.runtime_cache_dir = old_runtime


@pytest.fixture(scope="session", autouse=True)
def no_compile_ahead():
    """Tests launch a few kernels of modules that define many: compiling every sibling ahead (weft/ahead.py) would
    compile kernels no test on this worker launches, on both xdist workers. Its own tests turn it back on."""
    old_env = os.environ.get("WEFT_COMPILE_AHEAD")
    old = wp.config.compile_ahead
    wp.config.compile_ahead = False
    os.environ["WEFT_COMPILE_AHEAD"] = "0"  # for subprocesses started by tests
    yield
    wp.config.compile_ahead = old
    if old_env is None:
        os.environ.pop("WEFT_COMPILE_AHEAD", None)
    else:
        os.environ["WEFT_COMPILE_AHEAD"] = old_env


@pytest.fixture
def debug_mode():
    """Run a test with wp.config.mode = "debug", restoring the previous mode afterwards."""
    old = wp.config.mode
    wp.config.mode = "debug"
    yield
    wp.config.mode = old
