"""Running an adversarial case in a child process: a case that used to crash the interpreter must end with a clean
weft error (or success) and an exit status, never a signal."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_child(code: str, timeout: float = 180, env: dict | None = None) -> str:
    """Run ``code`` (dedented) in a fresh interpreter with this checkout's weft; returns its stdout.

    Fails the test if the child is killed by a signal (a segfault) or runs past ``timeout`` seconds.
    """
    full_env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    full_env.update(env or {})
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "case.py"  # a file: weft reads kernels from their source
        script.write_text(textwrap.dedent(code))
        proc = subprocess.run([sys.executable, str(script)], check=False, capture_output=True, text=True,
                              timeout=timeout, env=full_env, cwd=tmp)
    report = f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert proc.returncode >= 0, f"child killed by signal {-proc.returncode}\n{report}"
    assert proc.returncode == 0, f"child exited with status {proc.returncode}\n{report}"
    return proc.stdout
