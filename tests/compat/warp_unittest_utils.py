"""weft's own equivalent of the test helpers Warp's unit tests import from ``warp.tests.unittest_utils``.

Written for the conformance runner: same helper names and behaviour (register one test per device, compare
arrays, fail a test that prints unexpectedly), implemented on weft. Test modules do
``from warp.tests.unittest_utils import *`` and rely on ``np``, ``wp``, ``unittest`` ... coming with it.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util  # noqa: F401
import functools
import gc  # noqa: F401
import importlib.util
import io
import os
import re
import subprocess
import sys
import tempfile
import time  # noqa: F401
import unittest  # noqa: F401  (re-exported to the test modules)

import numpy as np
import warp as wp  # weft, through the runner's alias


def _normalize_direct_test_sys_path():
    """Running a test file by path puts its folder first on ``sys.path``, where a folder of tests could hide a
    top-level package of the same name: drop this folder from ``sys.path`` and keep the folder two levels up (the
    repository root) importable instead."""
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    if root not in {os.path.abspath(p or os.getcwd()) for p in sys.path}:
        sys.path.insert(0, root)
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.getcwd()) != here]


USD_AVAILABLE = importlib.util.find_spec("pxr") is not None
test_mode = "basic"
coverage_enabled = False


def get_cpu_test_devices():
    """The CPU device."""
    return [wp.get_device("cpu")]


def get_test_devices(mode=None):
    """Devices tests run on: the CPU, and the first CUDA device when one is available."""
    devices = get_cpu_test_devices()
    if wp.is_cuda_available():
        devices.append(wp.get_device("cuda:0"))
    return devices


def get_selected_cuda_test_devices(mode=None):
    """CUDA devices to test on (the first one, if any)."""
    return [d for d in get_test_devices(mode) if d.is_cuda]


get_cuda_test_devices = get_selected_cuda_test_devices


def _with_mempool(devices):
    return [d for d in devices if getattr(d, "is_mempool_supported", False)]


def get_cuda_test_devices_with_mempool(mode=None):
    """CUDA devices with a stream-ordered memory pool."""
    return _with_mempool(get_cuda_test_devices(mode))


get_selected_cuda_test_devices_with_mempool = get_cuda_test_devices_with_mempool


def get_test_devices_with_graph_capture_allocation(mode=None):
    """Devices that can allocate during graph capture (the CPU always; CUDA with a memory pool)."""
    return [d for d in get_test_devices(mode) if d.is_cpu or getattr(d, "is_mempool_supported", False)]


def get_test_devices_with_cuda_graph_module_load(mode=None):
    """Devices that can load modules during capture (all of weft's)."""
    return get_test_devices(mode)


get_test_devices_with_graph_capture_allocation_and_cuda_graph_module_load = \
    get_test_devices_with_graph_capture_allocation


def is_cuda_graph_module_load_supported(device) -> bool:
    """weft loads kernels during capture on every device."""
    return True


def get_cuda_device_pair_with_peer_access_support(devices=None):
    """No peer pairs are tested (weft runs one device at a time here)."""
    return


get_cuda_device_pair_with_mempool_access_support = get_cuda_device_pair_with_peer_access_support


@contextlib.contextmanager
def suppress_native_error_output():
    """weft's native code reports errors through exceptions, so there is nothing to silence."""
    yield


def make_isolated_kernel(func, **kwargs):
    """A kernel of its own (weft compiles every kernel separately anyway)."""
    return wp.kernel(func, **kwargs) if kwargs else wp.kernel(func)


class StreamCapture:
    """Capture a standard stream at the file-descriptor level (native printf included)."""

    def __init__(self, stream_name):
        self.stream_name = stream_name

    def begin(self):
        stream = getattr(sys, self.stream_name)
        stream.flush()
        self._saved = stream
        self._fd = stream.fileno()
        self._dup = os.dup(self._fd)
        self._tmp = tempfile.TemporaryFile()  # noqa: SIM115 - closed in end()
        os.dup2(self._tmp.fileno(), self._fd)
        setattr(sys, self.stream_name, io.TextIOWrapper(os.fdopen(os.dup(self._fd), "wb"), write_through=True))

    def end(self):
        getattr(sys, self.stream_name).flush()
        try:
            import ctypes

            ctypes.CDLL(None).fflush(None)
        except OSError:
            pass
        os.dup2(self._dup, self._fd)
        os.close(self._dup)
        setattr(sys, self.stream_name, self._saved)
        self._tmp.seek(0)
        text = self._tmp.read().decode("utf-8", errors="replace")
        self._tmp.close()
        return text


class StdOutCapture(StreamCapture):
    """Capture stdout."""

    def __init__(self):
        super().__init__("stdout")


class StdErrCapture(StreamCapture):
    """Capture stderr."""

    def __init__(self):
        super().__init__("stderr")


class CheckOutput:
    """Fail the test if it prints anything to stdout."""

    def __init__(self, test):
        self.test = test

    def __enter__(self):
        self.capture = StdOutCapture()
        self.capture.begin()

    def __exit__(self, exc_type, exc, tb):
        try:
            wp.synchronize()
        finally:
            text = self.capture.end()
        if text.strip():
            print(text.rstrip())
            if exc_type is None:
                self.test.fail(f"Unexpected output:\n'{text.rstrip()}'")


def assert_array_equal(result, expect):
    """Exact equality of two weft arrays."""
    np.testing.assert_equal(result.numpy(), expect.numpy())


def assert_np_equal(result, expect, tol=0.0):
    """Equality (or closeness within ``tol``) of two NumPy arrays."""
    if tol != 0.0:
        np.testing.assert_allclose(np.asarray(result).flatten(), np.asarray(expect).flatten(), atol=tol,
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(result, expect)


def run_python_subprocess(source, *args, timeout=60, hide_gpu=False, env_updates=None):
    """Run Python source in a child interpreter that resolves ``warp`` to weft."""
    env = os.environ.copy()
    env.update(env_updates or {})
    if hide_gpu:
        env["CUDA_VISIBLE_DEVICES"] = ""
    here = os.path.dirname(os.path.abspath(__file__))
    tests_dir = os.path.dirname(sys.modules["warp.tests"].__file__)
    prelude = f"import sys; sys.path.insert(0, {here!r}); import warp_shim; warp_shim.install({tests_dir!r})\n"
    return subprocess.run([sys.executable, "-u", "-c", prelude + source, *args], check=False, capture_output=True,
                          text=True, timeout=timeout, env=env)


def run_test_in_subprocess(test, *, timeout=600, hide_gpu=False, env_updates=None):
    """Run the test in this process (weft needs no process isolation); returns False so the body runs."""
    return False


def create_test_func(func, device, check_output, device_check=None, enable_cpu_blocks=False, **kwargs):
    """A unittest method calling ``func(self, device, **kwargs)``, optionally failing on unexpected output;
    ``enable_cpu_blocks`` sets ``wp.config.enable_cpu_blocks`` while it runs (as Warp's helper does)."""

    @functools.wraps(func)
    def test_func(self):
        if device_check is not None:
            device_check(self, device)
        previous = wp.config.enable_cpu_blocks
        if enable_cpu_blocks:
            wp.config.enable_cpu_blocks = True
        try:
            if check_output:
                with CheckOutput(self):
                    func(self, device, **kwargs)
            else:
                func(self, device, **kwargs)
        finally:
            wp.config.enable_cpu_blocks = previous

    return test_func


def skip_test_func(self):
    """Placeholder test for functions with no suitable device."""
    self.skipTest("No suitable devices to run the test.")


def sanitize_identifier(s):
    """Turn a device name into an identifier suffix."""
    s = str(s)
    return s if s.isidentifier() else re.sub(r"\W|^(?=\d)", "_", s)


def add_function_test(cls, name, func, devices=None, check_output=True, device_check=None, **kwargs):
    """Register ``func`` as a test of ``cls`` once per device (suffix ``_<device>``)."""
    if devices is None:
        setattr(cls, name, create_test_func(func, None, check_output, device_check=device_check, **kwargs))
    elif isinstance(devices, list):
        if not devices:
            setattr(cls, name, skip_test_func)
        for d in devices:
            setattr(cls, f"{name}_{sanitize_identifier(d)}",
                    create_test_func(func, d, check_output, device_check=device_check, **kwargs))
    else:
        setattr(cls, f"{name}_{sanitize_identifier(devices)}",
                create_test_func(func, devices, check_output, device_check=device_check, **kwargs))


def add_kernel_test(cls, kernel, dim, name=None, expect=None, inputs=None, devices=None, inputs_factory=None):
    """Register a test that launches ``kernel`` and compares an int output array with ``expect``."""

    def test_func(self, device):
        args = list(inputs_factory(device) if inputs_factory is not None else (inputs or []))
        if expect:
            result = wp.array(expect, dtype=int, device=device)
            output = wp.zeros_like(result)
            args.append(output)
        with CheckOutput(self):
            wp.launch(kernel, dim=dim, inputs=args, device=device)
        if expect:
            assert_array_equal(output, result)

    name = name or kernel.key
    for d in devices if devices is not None else get_test_devices():
        setattr(cls, f"{name}_{sanitize_identifier(d)}", lambda self, device=d: test_func(self, device))


def add_function_test_register_kernel(cls, name, func, devices=None, **kwargs):
    """Call ``func`` once to build its kernels, then register it like ``add_function_test``."""
    func(None, None, **kwargs, register_kernels=True)
    add_function_test(cls, name, func, devices=devices, **kwargs)
