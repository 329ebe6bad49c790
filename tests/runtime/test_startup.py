"""Start-up does no work a CPU program does not need: no ml_dtypes (imported at the first bfloat16 use), no weft.sim or
SciPy, no CUDA
bindings imported by ``import weft``, a CPU launch or ``wp.synchronize()`` on a machine without an NVIDIA driver."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

CODE = """
import sys
import numpy as np
import weft as wp
assert "ml_dtypes" not in sys.modules, "import weft imported ml_dtypes"
# weft.sim (and SciPy, for its MJCF importer) load at the first wp.sim use: importing them made `import weft` ~0.4 s slower
assert "weft.sim" not in sys.modules and "scipy" not in sys.modules, "import weft imported weft.sim or SciPy"

@wp.kernel
def twice(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] * 2.0

a = wp.array(np.ones(4, dtype=np.float32), dtype=float)
wp.launch(twice, dim=4, inputs=[a], device="cpu")
wp.synchronize()
assert a.numpy().tolist() == [2.0] * 4
# the default device needs to know whether a GPU exists: without a driver library that is a dlopen, not an import
# of the CUDA bindings (0.1-0.2 s)
from weft.cuda.driver import _driver_library_present
if not _driver_library_present():
    assert not any(m.startswith("cuda.bindings") for m in sys.modules), "imported the CUDA bindings without a driver"
assert "ml_dtypes" not in sys.modules
x = wp.bfloat16(1.5)  # the first bfloat16 use may import it (when installed)
assert float(x) == 1.5
print("ok")
"""


def test_cpu_start_does_no_cuda_or_bfloat16_work(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    env = dict(os.environ, WEFT_CACHE_DIR=str(cache), PYTHONPATH=str(REPO))
    script = tmp_path / "start.py"
    script.write_text(CODE)
    res = subprocess.run([sys.executable, str(script)], check=False, capture_output=True, text=True, env=env,
                         timeout=600)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stdout + res.stderr
