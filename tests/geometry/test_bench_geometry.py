"""benchmarks/bench_geometry.py runs at a small size (without the Warp subprocess) and its checks agree."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_geometry_small():
    env = dict(os.environ, BENCH_NO_WARP="1", PYTHONPATH=str(ROOT))
    res = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_geometry.py"), "--n", "3000",
                          "--repeat", "1"], capture_output=True, text=True, env=env, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "closest point, 3000 queries" in res.stdout and "'faces': 3000" in res.stdout
