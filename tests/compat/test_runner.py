"""The conformance runner runs a small module of Warp's own suite against weft (skipped without warp-lang)."""

import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_warp_tests


def _tests_dir():
    try:
        return run_warp_tests.find_tests_dir(None)
    except SystemExit:
        return None


def test_scope_list_has_reasons():
    assert all(isinstance(r, str) and len(r) > 10 for r in run_warp_tests.OUT_OF_SCOPE.values())
    assert run_warp_tests.scope_reason("fem/test_fem") is not None
    assert run_warp_tests.scope_reason("test_vec") is None
    assert run_warp_tests.group_of("matrix/test_mat") == "matrix"


@pytest.mark.skipif(_tests_dir() is None, reason="warp-lang's test files are not installed")
def test_runner_runs_a_warp_module(tmp_path):
    out = tmp_path / "res.json"
    proc = subprocess.run([sys.executable, os.path.join(HERE, "run_warp_tests.py"), "test_smoothstep", "--save", str(out),
                           "--baseline", ""], capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "test_smoothstep" in proc.stdout and "TOTAL" in proc.stdout
    import json

    res = json.loads(out.read_text())["test_smoothstep"]
    assert res["import_error"] is None
    assert [t["outcome"] for t in res["tests"].values()] == ["pass"]
