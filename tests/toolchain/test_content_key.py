"""The kernel cache is keyed on content, not on where a script lives: a copied or moved script reuses every binary,
while the locations in its messages name the copy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

SCRIPT = """
import json, sys
import numpy as np
import weft as wp

wp.config.mode = sys.argv[1]

@wp.func
def shifted(x: float, s: float):
    return x + s

@wp.kernel
def add(a: wp.array(dtype=float), s: float, out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = shifted(a[i], s)

@wp.kernel
def checked(a: wp.array(dtype=float)):
    i = wp.tid()
    assert a[i] < 2.0

a = wp.array(np.arange(4, dtype=np.float32), dtype=float)
out = wp.zeros(4, dtype=float)
wp.launch(add, dim=4, inputs=[a, 0.5, out])
message = ""
try:
    wp.launch(checked, dim=4, inputs=[a])
    wp.synchronize()
except wp.RuntimeError_ as exc:
    message = str(exc)
print(json.dumps({"out": out.numpy().tolist(), "assert": message}))
"""


def _run(script: Path, cache: Path, mode: str) -> dict:
    env = dict(os.environ, WEFT_CACHE_DIR=str(cache), PYTHONPATH=str(REPO))
    res = subprocess.run([sys.executable, str(script), mode], check=False, capture_output=True, text=True, env=env,
                         timeout=600)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


def _binaries(cache: Path) -> set[str]:
    return {p.name for p in (cache / "cpu").rglob("*.so")}


def test_copied_script_reuses_the_cache(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    first = tmp_path / "checkout_a" / "sim.py"
    first.parent.mkdir()
    first.write_text(textwrap.dedent(SCRIPT))
    second = tmp_path / "elsewhere" / "deeper" / "sim.py"
    second.parent.mkdir(parents=True)
    second.write_text(first.read_text())

    out_a = _run(first, cache, "release")
    built = _binaries(cache)
    assert out_a["out"] == [0.5, 1.5, 2.5, 3.5]
    out_b = _run(second, cache, "release")
    assert out_b["out"] == out_a["out"]
    assert _binaries(cache) == built, "the copied script compiled again"

    # debug mode: the kernels' #line directives name the file, the assert message too
    dbg_a = _run(first, cache, "debug")
    assert str(first) in dbg_a["assert"] and "assert a[i] < 2.0" in dbg_a["assert"]
    built_debug = _binaries(cache)
    dbg_b = _run(second, cache, "debug")
    assert str(second) in dbg_b["assert"], dbg_b["assert"]  # the copy's own path, not the original's
    assert str(first) not in dbg_b["assert"]
    # only the kernel whose message shows its path compiled again; 'add' (with #line directives) was reused
    assert len(_binaries(cache) - built_debug) == 1


def test_moved_script_reuses_lowering_records(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    first = tmp_path / "a" / "sim.py"
    first.parent.mkdir()
    first.write_text(textwrap.dedent(SCRIPT))
    _run(first, cache, "release")
    records = {p.name for p in (cache / "spec").rglob("*.json")}
    moved = tmp_path / "b" / "sim.py"
    moved.parent.mkdir()
    first.rename(moved)
    _run(moved, cache, "release")
    # the records are keyed without the file name: the moved script found them (no new record written)
    assert {p.name for p in (cache / "spec").rglob("*.json")} == records
