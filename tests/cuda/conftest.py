"""CUDA test setup: the NVRTC compile check of every kernel of the suite, and the ``cuda_device`` fixture.

The check is registered as a plugin object from here (rather than through the root conftest), so it applies to
the tests of every directory while this directory's conftest is collected, that is on any full-suite run.
"""

from __future__ import annotations

import os

import nvrtc_check  # this directory is on sys.path (pytest rootdir-relative import, no __init__.py)
import pytest

_PLUGIN_NAME = "weft-nvrtc-check"


def pytest_configure(config):
    if nvrtc_check.mode() == "0" or config.pluginmanager.has_plugin(_PLUGIN_NAME):
        return
    from weft.toolchain import nvrtc

    if not nvrtc.is_available():
        if os.environ.get("WEFT_REQUIRE_NVRTC") == "1":
            raise pytest.UsageError("WEFT_REQUIRE_NVRTC=1 but NVRTC is not available: pip install -e '.[cuda]'")
        return
    nvrtc_check.install_recorder()
    config.pluginmanager.register(nvrtc_check.NvrtcCheckPlugin(), _PLUGIN_NAME)


@pytest.fixture(scope="session")
def cuda_device():
    """The GPU the CUDA runtime tests use (``WEFT_TEST_DEVICE`` if it names one, else cuda:0); skips without one."""
    import weft as wp

    if not wp.is_cuda_available():
        pytest.skip("no CUDA device")
    name = os.environ.get("WEFT_TEST_DEVICE", "cuda:0")
    return wp.get_device(name if name.startswith("cuda") else "cuda:0")
