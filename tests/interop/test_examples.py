"""Smoke tests: every example under examples/interop runs at its small size."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("torch")

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "interop"


def test_torch_training_small():
    env = dict(os.environ)
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    proc = subprocess.run([sys.executable, str(EXAMPLES / "torch_training.py"), "--small"], capture_output=True, check=False,
                          text=True, timeout=600, env=env, cwd=EXAMPLES.parents[1])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "loss" in proc.stdout and "->" in proc.stdout
