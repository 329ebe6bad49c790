"""The tile tests check results lane by lane as on a GPU with the same ``block_dim``: on the CPU that needs
``wp.config.enable_cpu_blocks`` (Warp 1.19's switch; off by default, when a CPU block has one lane)."""

import pytest

import weft as wp


@pytest.fixture(autouse=True)
def cpu_blocks():
    old = wp.config.enable_cpu_blocks
    wp.config.enable_cpu_blocks = True
    yield
    wp.config.enable_cpu_blocks = old
