"""Warm starts reuse an earlier process's lowering only while everything it resolved is unchanged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

MODULE = """
import numpy as np
import weft as wp

SCALE = {scale}

@wp.func
def twice(x: float):
    return x * float(FACTOR)

FACTOR = {factor}

@wp.kernel
def scale(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = twice(a[i]) * wp.static(float(SCALE))  # evaluated at the declaration (weft.frontend.statics)

a = wp.array(np.arange(4, dtype=np.float32), dtype=float)
out = wp.zeros(4, dtype=float)
wp.launch(scale, dim=4, inputs=[a, out])
spec = next(iter(scale._specs.values()))
print(__import__("json").dumps({{"out": out.numpy().tolist(), "from_record": spec.cpp_key is not None,
                                 "ir_lowered": spec._fn is not None}}))
"""


def _run(tmp_path, scale: int, factor: int, cache_dir) -> dict:
    path = tmp_path / "spec_cache_kernel.py"
    path.write_text(textwrap.dedent(MODULE.format(scale=scale, factor=factor)))
    env = dict(os.environ, WEFT_CACHE_DIR=str(cache_dir))
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_record_reused_only_while_dependencies_match(tmp_path):
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir(mode=0o700)
    first = _run(tmp_path, 2, 3, cache_dir)
    assert first["out"] == [0.0, 6.0, 12.0, 18.0]
    assert not first["from_record"]
    again = _run(tmp_path, 2, 3, cache_dir)
    assert again["out"] == first["out"]
    assert again["from_record"] and not again["ir_lowered"]  # the warm start skipped lowering
    # the kernel's lines are unchanged, but a global it reads changed: the record must not be used
    changed = _run(tmp_path, 5, 3, cache_dir)
    assert changed["out"] == [0.0, 15.0, 30.0, 45.0]
    assert not changed["from_record"]
    # a global read inside the inlined func changed
    changed_func = _run(tmp_path, 5, 7, cache_dir)
    assert changed_func["out"] == [0.0, 35.0, 70.0, 105.0]
    assert not changed_func["from_record"]


def test_spec_cache_can_be_disabled(tmp_path, monkeypatch):
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir(mode=0o700)
    monkeypatch.setenv("WEFT_SPEC_CACHE", "0")
    _run(tmp_path, 2, 3, cache_dir)
    second = _run(tmp_path, 2, 3, cache_dir)
    assert not second["from_record"]
    assert not (cache_dir / "spec").exists()
