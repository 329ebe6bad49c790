"""A virtual X display for the OpenGL window tests."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess

import pytest


@contextlib.contextmanager
def xvfb_display(width: int, height: int):
    """Start Xvfb on a free display (``-displayfd``); yield an environment whose DISPLAY is it (WAYLAND_DISPLAY
    removed); stop it on exit. Skips the test when Xvfb is missing or does not start."""
    if shutil.which("Xvfb") is None:
        pytest.skip("no Xvfb to give the window a display (apt-get install xvfb)")
    read, write = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", f"{width}x{height}x24", "-nolisten",
                             "tcp"], pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write)
    try:
        with os.fdopen(read) as f:
            display = f.readline().strip()
        if not display:
            pytest.skip("Xvfb did not start")
        yield {**{k: v for k, v in os.environ.items() if k != "WAYLAND_DISPLAY"}, "DISPLAY": f":{display}"}
    finally:
        xvfb.terminate()
        xvfb.wait(timeout=30)
