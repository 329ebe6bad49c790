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
    assert all(len(r) > 10 for r in run_warp_tests.OUT_OF_SCOPE_TESTS.values())
    bvh = "warp.tests.geometry.test_bvh.TestBvh."
    assert run_warp_tests.test_scope_reason("geometry/test_bvh", bvh + "test_sah_depth_fits_query_stack") is not None
    assert run_warp_tests.test_scope_reason("geometry/test_bvh", bvh + "test_bvh_ray_cpu") is None
    assert run_warp_tests.test_scope_reason("geometry/test_mesh", bvh + "test_sah_depth_fits_query_stack") is None


def test_out_of_scope_tests_leave_the_rate():
    baseline = {"test_x": {"pass": ["TestX.test_a_cpu", "TestX.test_b_cpu"], "fail": [], "skip": []}}
    res = {"module": "test_x", "import_error": None, "complete": True,
           "tests": {"warp.tests.test_x.TestX.test_a_cpu": {"outcome": "pass", "reason": ""},
                     "warp.tests.test_x.TestX.test_b_cpu": {"outcome": "skip", "reason": "out of scope: private"}}}
    s = run_warp_tests.summarize(res, baseline)
    assert (s["warp_pass"], s["pass_of_warp_pass"], s["skipped"]) == (1, 1, 1)


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


def test_rate_is_over_the_tests_passing_on_warp():
    baseline = {"test_x": {"pass": ["TestX.test_a_cpu", "TestX.test_b_cpu", "TestX.test_c_cpu"],
                           "fail": ["TestX.test_d_cpu"], "skip": []}}
    res = {"module": "test_x", "import_error": None, "complete": True,
           "tests": {"warp.tests.test_x.TestX.test_a_cpu": {"outcome": "pass", "reason": ""},
                     "warp.tests.test_x.TestX.test_b_cpu": {"outcome": "fail", "reason": "KeyError: 'V'"},
                     "warp.tests.test_x.TestX.test_d_cpu": {"outcome": "pass", "reason": ""}}}
    s = run_warp_tests.summarize(res, baseline)
    # test_c did not run on weft: it counts as failed; test_d passes on weft only and is outside the rate
    assert (s["warp_pass"], s["pass_of_warp_pass"]) == (3, 1)
    assert s["base_classes"] == {"KeyError: 'V'": 1, "not run: missing": 1}
    assert (s["tests"], s["passed"], s["failed"]) == (4, 2, 2)


def test_baseline_file_is_compact_and_complete():
    import json

    import gen_warp_baseline

    path = gen_warp_baseline.BASELINE
    if not os.path.isfile(path):
        pytest.skip("no committed baseline")
    with open(path) as f:
        doc = json.load(f)
    assert doc["warp"] == "1.19.0" and doc["device"] == "cpu"
    for mod, entry in doc["modules"].items():
        assert run_warp_tests.scope_reason(mod) is None, f"{mod} is out of scope but in the baseline"
        assert set(entry) <= {"pass", "fail", "skip", "timeout", "complete", "import_error"}
        assert all("." in name for name in entry["pass"])


def test_fem_stand_in_imports_and_raises_when_used():
    import warp_shim

    fem = warp_shim._fem_module()

    @fem.integrand
    def value(s: fem.Sample):
        return 1.0

    assert "warp.fem" in repr(value)
    for use in (lambda: value(None), lambda: fem.Cells(fem.Grid2D(res=(2, 2))), lambda: fem.interpolate(value)):
        with pytest.raises(NotImplementedError, match="not part of weft"):
            use()
    assert run_warp_tests.test_scope_reason("test_array_subclass",
                                            "warp.tests.test_array_subclass.TestArraySubclass.test_fem_cache_cpu")


def test_submodule_alias_keeps_the_function_of_the_same_name(tmp_path):
    """`from warp.sim.collide import X` (Warp's test_collision, example_drone) must leave `wp.sim.collide` the
    function: it was replaced by the module and every later `wp.sim.collide(model, state)` failed."""
    code = (f"import sys, types; sys.path.insert(0, {HERE!r}); import warp_shim; warp_shim.install({str(tmp_path)!r})\n"
            "from warp.sim.collide import sphere_sdf\n"
            "import warp, warp.render.render_opengl as r\n"
            "assert callable(warp.sim.collide) and not isinstance(warp.sim.collide, types.ModuleType)\n"
            "assert r.OpenGLRenderer is warp.render.OpenGLRenderer\n")
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(HERE))}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
