"""The README's runnable examples run (as scripts, like a user would paste them)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)


def test_kernel_language_example_runs(tmp_path):
    block = next(b for b in _blocks() if "def integrate" in b)
    script = tmp_path / "readme_example.py"
    script.write_text(block)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(README.parent), env.get("PYTHONPATH")]))  # not installed
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    rows = [line for line in out.stdout.splitlines() if line.strip()]
    assert rows, "the example prints the first positions"
    assert "error" not in out.stderr.lower()
