"""warp.sim 1.7.2's own deformable builder, XPBD and VBD tests, run with ``warp`` aliased to weft (in a child
process, so the alias never leaks into this one). Skipped when warp-lang 1.7.2's files are not installed at
/opt/warp172."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

WARP172_TESTS = Path("/opt/warp172/lib/python3.11/site-packages/warp/tests")
ROOT = Path(__file__).resolve().parents[2]

_SUITE = r"""
import importlib.util, sys, unittest
sys.path.insert(0, {root!r}); sys.path.insert(0, {compat!r})
import warp_shim
warp_shim.install({tests!r})
modules = {{}}
def case(module, cls, name):
    if module not in modules:
        spec = importlib.util.spec_from_file_location("warp.tests.sim." + module, {tests!r} + "/sim/" + module + ".py")
        modules[module] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(modules[module])
    return getattr(modules[module], cls)(name)
cases = {cases!r}
suite = unittest.TestSuite([case(*c) for c in cases])
result = unittest.TextTestRunner(verbosity=2).run(suite)
ok = result.wasSuccessful() and result.testsRun == len(cases) and ({allow_skips!r} or not result.skipped)
sys.exit(0 if ok else 1)
"""


def _run_warp172_tests(cases, timeout=600, allow_skips=True):
    """Run warp.sim 1.7.2's unittest cases ``(module, class, test)`` in a child interpreter with ``warp`` aliased to
    weft (tests/compat/warp_shim.py); every case must run and pass."""
    code = _SUITE.format(root=str(ROOT), compat=str(ROOT / "tests" / "compat"), tests=str(WARP172_TESTS),
                         cases=list(cases), allow_skips=allow_skips)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.skipif(not (WARP172_TESTS / "sim" / "test_model.py").exists(), reason="warp-lang 1.7.2 not installed")
def test_warp172_deformable_tests_pass_under_weft():
    _run_warp172_tests([("test_model", "TestModel", "test_add_triangles"), ("test_model", "TestModel", "test_add_edges"),
                        ("test_xpbd", "TestXPBD", "test_xpbd_free_falling_cpu"),
                        ("test_vbd", "TestVbd", "test_vbd_bending_cpu"),
                        ("test_vbd", "TestVbd", "test_vbd_bending_non_zero_rest_angle_bending_cpu")])


@pytest.mark.skipif(not (WARP172_TESTS / "sim" / "test_inertia.py").exists(), reason="warp-lang 1.7.2 not installed")
def test_warp172_rigid_tests_pass_under_weft():
    """warp.sim 1.7.2's kinematics, inertia and collapse_fixed_joints tests (its test_sim_grad and
    test_sim_grad_bounce_linear pass too, 3 of 3, but take minutes of compiling: run by hand, docs/sim.md)."""
    inertia = [("test_inertia", "TestInertia", n)
               for n in ("test_cube_mesh_inertia", "test_sphere_mesh_inertia", "test_body_inertia")]
    _run_warp172_tests([("test_sim_kinematics", "TestSimKinematics", "test_fk_ik_cpu"),
                        ("test_model", "TestModel", "test_collapse_fixed_joints"), *inertia])


@pytest.mark.slow
@pytest.mark.skipif(not (WARP172_TESTS.parent / "examples" / "sim" / "example_cloth_self_contact.py").exists(),
                    reason="warp-lang 1.7.2 not installed")
def test_warp172_cloth_self_contact_example_runs_without_interpenetration():
    """warp.sim 1.7.2's example_cloth_self_contact.py under weft (tests/sim/warp172_cloth_self_contact.py): finite,
    and no cloth edge passes through a cloth triangle in any checked frame (4 frames small, 300 full)."""
    import json

    from sizes import size

    pytest.importorskip("pxr", reason="the example reads its cloth mesh through usd-core (pxr)")
    frames = size(small=4, full=300)
    proc = subprocess.run([sys.executable, str(ROOT / "tests" / "sim" / "warp172_cloth_self_contact.py"), "--frames",
                           str(frames), "--check-every", str(max(1, frames // 30)), "--out", "none"],
                          capture_output=True, text=True, timeout=3600, check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["finite"] and result["frames"] == frames
    assert result["worst_crossings"] == 0


def _run_collision_tests(names):
    _run_warp172_tests([("test_collision", "TestCollision", n + "_cpu") for n in names], timeout=1800,
                       allow_skips=False)


@pytest.mark.skipif(not (WARP172_TESTS / "sim" / "test_collision.py").exists(), reason="warp-lang 1.7.2 not installed")
def test_warp172_collision_tests_pass_under_weft():
    """warp.sim 1.7.2's test_collision imports under weft (TriMeshCollisionDetector and the names it takes from
    warp.sim.collide / warp.sim.integrator_euler); its particle-triangle contact and mesh-ground contact index tests
    pass."""
    _run_collision_tests(["test_particle_collision", "test_mesh_ground_collision_index"])


@pytest.mark.slow
@pytest.mark.skipif(not (WARP172_TESTS / "sim" / "test_collision.py").exists(), reason="warp-lang 1.7.2 not installed")
def test_warp172_trimesh_detector_tests_pass_under_weft():
    """warp.sim 1.7.2's vertex-triangle and edge-edge tests: TriMeshCollisionDetector on the Stanford bunny at four
    query radii against the test's brute-force kernels (equal counts and minimum distances). Each brute force is
    O(vertices x triangles): about a minute per test on this machine, so they run at WEFT_TEST_SIZE=full only
    (tests/sim/test_trimesh_collision.py checks the same at a small size against NumPy)."""
    from sizes import size

    pytest.importorskip("pxr", reason="the tests read the bunny through usd-core (pxr)")
    if not size(small=0, full=1):
        pytest.skip("about two minutes of brute force: runs at WEFT_TEST_SIZE=full")
    _run_collision_tests(["test_vertex_triangle_collision", "test_edge_edge_collision"])
