"""Kernels defined in Jupyter notebook cells: compiled from the cell source IPython keeps, cached across kernel
restarts (each restart gives the cells new file names), errors pointing at the cell's line.

Runs a real IPython kernel through nbclient; skipped when nbclient / ipykernel are not installed (the ``test``
extra installs them).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")
pytest.importorskip("ipykernel")

REPO = Path(__file__).resolve().parents[2]

CELLS = [
    "import json\nimport numpy as np\nimport weft as wp",
    # a func and a kernel in one cell, a second kernel in another
    ("@wp.func\ndef affine(x: float, s: float):\n    return x * s + 1.0\n\n"
     "@wp.kernel\ndef scale(a: wp.array(dtype=float), s: float):\n    i = wp.tid()\n    a[i] = affine(a[i], s)\n"),
    "@wp.kernel\ndef shift(a: wp.array(dtype=float)):\n    i = wp.tid()\n    a[i] = a[i] - 0.5\n",
    ("a = wp.array(np.arange(4, dtype=np.float32), dtype=float)\n"
     "wp.launch(scale, dim=4, inputs=[a, 2.0])\nwp.launch(shift, dim=4, inputs=[a])\n"
     "@wp.kernel\ndef bad(a: wp.array(dtype=float)):\n    i = wp.tid()\n    a[i] = a[i] * i\n"
     "try:\n    wp.launch(bad, dim=4, inputs=[a])\n    error = ''\nexcept wp.CompileError as exc:\n    error = exc.full_text\n"
     "print(json.dumps({'out': a.numpy().tolist(), 'error': error, 'file': bad.func.__code__.co_filename}))"),
]


def _run_notebook(monkeypatch, cache: Path) -> dict:
    monkeypatch.setenv("WEFT_CACHE_DIR", str(cache))
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in CELLS]
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3").execute()  # a fresh kernel every time
    text = "".join(o.get("text", "") for o in nb.cells[-1]["outputs"] if o.get("name") == "stdout")
    return json.loads(text.strip().splitlines()[-1])


def _entries(cache: Path) -> set[str]:
    return {p.name for p in cache.rglob("*") if p.suffix in (".so", ".json") and p.parent.parent.name in ("cpu", "spec")}


def test_notebook_kernels_cached_across_restarts(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    first = _run_notebook(monkeypatch, cache)
    assert first["out"] == [0.5, 2.5, 4.5, 6.5]
    # the error names the cell's (IPython) file and the offending line
    assert f'{first["file"]}:7:' in first["error"] and "a[i] = a[i] * i" in first["error"]
    built = _entries(cache)
    assert any(name.endswith(".so") for name in built)

    again = _run_notebook(monkeypatch, cache)  # restart and run all
    assert again["out"] == first["out"]
    assert again["file"] != first["file"]  # a restarted kernel names its cells' files afresh
    assert f'{again["file"]}:7:' in again["error"]
    # nothing compiled and no lowering record written a second time, although the cells' files are new
    assert _entries(cache) == built
