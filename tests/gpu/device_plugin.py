"""Pytest plugin for GPU runs: ``WEFT_TEST_DEVICE=cuda:0 pytest -p device_plugin`` (with tests/gpu on sys.path).

Makes ``WEFT_TEST_DEVICE`` weft's default device for the whole session, so every test that does not name a device
runs there (its arrays are allocated there and its kernels launched there); tests that pin ``device="cpu"`` stay on
the CPU reference. Also provides a ``device`` fixture (the test device) for tests that want to name it; a
``device`` fixture in a conftest takes precedence.
"""

from __future__ import annotations

import os

import pytest


def _name() -> str:
    return os.environ.get("WEFT_TEST_DEVICE", "cpu")


def pytest_configure(config):
    import weft as wp

    name = _name()
    if name != "cpu" and not wp.is_cuda_available():
        from weft.cuda import driver

        raise pytest.UsageError(f"WEFT_TEST_DEVICE={name} but no CUDA device is usable: {driver.unavailable_reason}")
    wp.set_device(name)


def pytest_report_header(config):
    import weft as wp

    dev = wp.get_device(_name())
    return f"weft test device: {dev} ({dev.name})"


@pytest.fixture(scope="session")
def device():
    import weft as wp

    return wp.get_device(_name())
