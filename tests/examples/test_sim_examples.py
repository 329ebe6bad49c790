"""Smoke runs of the weft.sim examples at tiny sizes (each writes its images; USD when usd-core is installed)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

SIM = Path(__file__).resolve().parents[2] / "examples" / "sim"
sys.path.insert(0, str(SIM))


def _has_usd() -> bool:
    try:
        importlib.import_module("pxr.Usd")
    except ImportError:
        return False
    return True


def test_elastic_sphere_smoke(tmp_path):
    import elastic_sphere

    args = ["--cells", "3", "--frames", "3", "--substeps", "4", "--out", str(tmp_path / "sphere"), "--quiet"]
    if _has_usd():
        args += ["--usd", str(tmp_path / "sphere.usda")]
    assert elastic_sphere.main(args) == 0
    assert (tmp_path / "sphere.png").stat().st_size > 0 and (tmp_path / "sphere.gif").stat().st_size > 0
    if _has_usd():
        assert "particles" in (tmp_path / "sphere.usda").read_text() or "surface" in (tmp_path / "sphere.usda").read_text()


def test_voxel_sphere_has_the_seed_counts():
    from scenes import voxel_sphere_tets

    verts, idx = voxel_sphere_tets(0.5, 10)
    assert len(verts) == 823 and len(idx) == 4 * 3312
    import numpy as np

    t = idx.reshape(-1, 4)
    a, b, c, d = (verts[t[:, k]] for k in range(4))
    vol = np.einsum("ij,ij->i", np.cross(b - a, c - a), d - a) / 6.0
    assert vol.min() > 0 and vol.sum() == pytest.approx(552 * 0.1**3)


def test_soft_body_throw_smoke(tmp_path):
    import soft_body_throw

    out = str(tmp_path / "throw")
    assert soft_body_throw.main(["--iters", "2", "--steps", "20", "--out", out, "--quiet"]) == 0
    assert (tmp_path / "throw_loss.png").stat().st_size > 0 and (tmp_path / "throw.gif").stat().st_size > 0


@pytest.mark.parametrize("script,args", [
    ("cloth_drape", ["--cells", "4", "--substeps", "2"]),
    ("cloth_drape", ["--cells", "4", "--substeps", "2", "--integrator", "euler"]),
    ("granular_box", ["--n", "3", "--substeps", "2"]),
    ("granular_box", ["--n", "3", "--substeps", "2", "--integrator", "xpbd"]),
    ("soft_body_twist", ["--cells", "3", "--substeps", "4"]),
    ("rigid_contact", ["--n", "1", "--substeps", "4"]),
    ("cartpole", ["--substeps", "2"]),
    ("soft_body_twist", ["--cells", "3", "--substeps", "8", "--integrator", "xpbd"]),
])
def test_deformable_examples_smoke(tmp_path, script, args):
    mod = importlib.import_module(script)
    out = tmp_path / script
    assert mod.main([*args, "--frames", "3", "--out", str(out), "--quiet"]) == 0
    assert (tmp_path / f"{script}.png").stat().st_size > 0 and (tmp_path / f"{script}.gif").stat().st_size > 0


def test_soft_body_twist_turns_the_end():
    import soft_body_twist

    ex = soft_body_twist.Example(cells=3, substeps=4)
    for _ in range(6):
        ex.step()
    # 0.5 turns per second for 0.1 s: 18 degrees
    assert np.degrees(ex.twist_angle()) == pytest.approx(18.0, abs=0.5)


def test_cartpole_lqr_balances_the_pole():
    pytest.importorskip("scipy")
    import cartpole

    ex = cartpole.Example(tilt=0.2, substeps=10)
    for _ in range(180):
        ex.step()
    q = ex.state_0.joint_q.numpy()
    # three seconds of LQR feedback bring a 0.2 rad tilt back upright over the rail's centre
    assert abs(q[1]) < 0.01 and abs(q[0]) < 0.02


def test_quadruped_stands_on_its_feet(tmp_path):
    import quadruped

    assert quadruped.main(["--robots", "1", "--frames", "40", "--out", str(tmp_path / "quad"), "--quiet"]) == 0
    assert (tmp_path / "quad.png").stat().st_size > 0 and (tmp_path / "quad.gif").stat().st_size > 0
    ex = quadruped.Example(robots=1)
    for _ in range(40):
        ex.step()
    base = ex.base_poses()[0]
    # the hips stand 2 x 0.2 m cos(0.5) above the feet's centres (foot radius 0.025), less the contact's give
    stand = 0.4 * np.cos(0.5) + 0.025
    assert stand - 0.01 < base[1] < stand + 1e-3
    np.testing.assert_allclose(np.abs(base[3:]), [0.0, 0.0, 0.0, 1.0], atol=2e-2)


def test_ball_bounce_gradient_matches_finite_differences():
    import ball_bounce

    # a short throw that bounces once (undamped contact) and is airborne at the end
    ex = ball_bounce.Bounce(steps=120, height=0.25, v0=(1.0, 0.0, 0.2), target=(0.6, 0.2, 0.0))
    _, g, states = ex.gradient()
    heights = np.array([s.body_q.numpy()[0, 1] for s in states])
    assert heights.min() < 0.1 and heights[-1] > 0.1
    # a small step: contact onset is quantised to time steps, so the loss is a sawtooth in v0 (docs/sim.md)
    fd = ex.finite_difference(h=3e-4)
    np.testing.assert_allclose(g, fd, rtol=2e-2, atol=1e-3)


def test_ball_bounce_smoke(tmp_path):
    import ball_bounce

    out = str(tmp_path / "bounce")
    assert ball_bounce.main(["--steps", "120", "--height", "0.25", "--iters", "2", "--out", out, "--quiet"]) == 0
    assert (tmp_path / "bounce_loss.png").stat().st_size > 0 and (tmp_path / "bounce.gif").stat().st_size > 0
