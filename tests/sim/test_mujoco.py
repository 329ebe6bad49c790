"""Rigid contact scenes and a pendulum cross-checked against MuJoCo (optional test dependency ``mujoco``; skipped
when it is not installed). MuJoCo's contacts are soft constraints and weft's are penalty springs, so contact scenes
agree qualitatively (rest height within a few mm, no drift, the same rolling speed to a few per cent); the pendulum's
period is compared with the closed form (complete elliptic integral) in both."""

from __future__ import annotations

import math

import numpy as np
import pytest

import weft as wp
from weft import sim

mujoco = pytest.importorskip("mujoco")

G = 9.81


def _mujoco(xml: str, qvel=None):
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    if qvel is not None:
        data.qvel[:] = qvel
    return model, data


def _weft_rigid(build, steps, dt):
    b = sim.ModelBuilder(gravity=-G)
    build(b)
    m = b.finalize("cpu")
    integ = sim.SemiImplicitIntegrator(angular_damping=0.0)
    s0, s1 = m.state(), m.state()
    for _ in range(steps):
        s0.clear_forces()
        sim.collide(m, s0)
        integ.simulate(m, s0, s1, dt)
        s0, s1 = s1, s0
    return s0


def test_box_rests_on_the_ground_like_mujoco():
    hx, hy, hz, drop = 0.2, 0.1, 0.15, 0.05  # weft's y (up) is MuJoCo's z

    def build(b):
        body = b.add_body(origin=wp.transform((0.0, hy + drop, 0.0), wp.quat_identity()))
        b.add_shape_box(body, hx=hx, hy=hy, hz=hz)

    s = _weft_rigid(build, 800, 1e-3)
    q, qd = s.body_q.numpy()[0], s.body_qd.numpy()[0]
    model, data = _mujoco(f"""<mujoco><option timestep="0.001"/><worldbody>
        <geom type="plane" size="5 5 0.1"/>
        <body pos="0 0 {hy + drop}"><freejoint/><geom type="box" size="{hx} {hz} {hy}" density="1000"/></body>
        </worldbody></mujoco>""")
    mujoco.mj_step(model, data, 800)
    mq = data.qpos.copy()
    # both settle at the half height (contact give: weft m g / (4 ke) = 0.94 mm, MuJoCo's soft constraint ~ mm)
    assert q[1] == pytest.approx(hy, abs=3e-3) and mq[2] == pytest.approx(hy, abs=3e-3)
    assert abs(q[1] - mq[2]) < 3e-3
    # no drift and no tilt in either
    assert np.hypot(q[0], q[2]) < 1e-4 and np.hypot(mq[0], mq[1]) < 1e-4
    np.testing.assert_allclose(np.abs(q[3:]), [0.0, 0.0, 0.0, 1.0], atol=1e-4)
    np.testing.assert_allclose(np.abs(mq[3:]), [1.0, 0.0, 0.0, 0.0], atol=1e-4)
    assert np.abs(qd).max() < 1e-2 and np.abs(data.qvel).max() < 1e-2


def test_sliding_sphere_rolls_like_mujoco():
    r, v0, steps, dt = 0.1, 1.0, 400, 1e-3

    def build(b):
        body = b.add_body(origin=wp.transform((0.0, r, 0.0), wp.quat_identity()))
        b.add_shape_sphere(body, radius=r, mu=0.5, kf=1e3)
        b.body_qd[0] = (0.0, 0.0, 0.0, v0, 0.0, 0.0)

    s = _weft_rigid(build, steps, dt)
    q, qd = s.body_q.numpy()[0], s.body_qd.numpy()[0]
    model, data = _mujoco(f"""<mujoco><option timestep="{dt}"/><worldbody>
        <geom type="plane" size="5 5 0.1" friction="0.5 0 0"/>
        <body pos="0 0 {r}"><freejoint/><geom type="sphere" size="{r}" density="1000" friction="0.5 0 0"/></body>
        </worldbody></mujoco>""", qvel=[v0, 0, 0, 0, 0, 0])
    mujoco.mj_step(model, data, steps)
    # friction turns the slide into rolling at 5/7 v0 (angular momentum about the contact point) in both, with no
    # sideways drift
    v, mv = qd[3], data.qvel[0]
    assert v == pytest.approx(5.0 / 7.0 * v0, rel=1e-2) and mv == pytest.approx(5.0 / 7.0 * v0, rel=1e-2)
    assert v == pytest.approx(mv, rel=1e-2)
    assert qd[2] == pytest.approx(-v / r, rel=1e-2) and data.qvel[4] == pytest.approx(mv / r, rel=1e-2)
    # MuJoCo's slip phase is Coulomb's, 2 v0 / (7 mu g) = 58 ms: x = 5/7 v0 T + v0 t_slip / 7. warp.sim's friction
    # law (weft keeps it) is |ft| = min(kf |vt|, mu fn |vt| / |vt|_h) with the Huber norm |vt|_h of width 1 m/s,
    # i.e. 2 mu fn at 1 m/s and more below, so weft's sphere stops slipping sooner (20 ms) and travels a little less
    t_slip = 2.0 * v0 / (7.0 * 0.5 * G)
    assert data.qpos[0] == pytest.approx(5.0 / 7.0 * v0 * steps * dt + v0 * t_slip / 7.0, abs=1e-3)
    assert 5.0 / 7.0 * v0 * steps * dt < q[0] < data.qpos[0]
    assert abs(q[2]) < 1e-5 and abs(data.qpos[1]) < 1e-5
    assert q[1] == pytest.approx(r, abs=2e-3) and data.qpos[2] == pytest.approx(r, abs=2e-3)


def _crossings(x, dt):
    idx = np.nonzero(np.sign(x[:-1]) != np.sign(x[1:]))[0]
    return (idx + x[idx] / (x[idx] - x[idx + 1])) * dt


def test_pendulum_period_matches_closed_form_and_mujoco():
    from scipy.special import ellipk

    length, r, amp, dt, steps = 0.5, 0.05, 1.0, 1e-3, 2500
    b = sim.ModelBuilder(gravity=-G)
    body = b.add_body(origin=wp.transform_identity())
    b.add_shape_sphere(body, radius=r, has_ground_collision=False)
    b.add_joint_revolute(-1, body, parent_xform=wp.transform((0.0, 2.0, 0.0), wp.quat_identity()),
                         child_xform=wp.transform((0.0, length, 0.0), wp.quat_identity()), axis=(0.0, 0.0, 1.0))
    b.joint_q[0] = amp
    m = b.finalize("cpu")
    m.ground = False
    for name in ("joint_limit_ke", "joint_limit_kd", "joint_armature"):
        getattr(m, name).zero_()
    integ = sim.FeatherstoneIntegrator(m)
    s0, s1 = m.state(), m.state()
    th = []
    for _ in range(steps):
        s0.clear_forces()
        integ.simulate(m, s0, s1, dt)
        s0, s1 = s1, s0
        th.append(float(s0.joint_q.numpy()[0]))
    model, data = _mujoco(f"""<mujoco><option timestep="{dt}" integrator="RK4"/><worldbody>
        <body pos="0 0 2"><joint type="hinge" axis="0 1 0"/>
        <geom type="sphere" size="{r}" pos="0 0 -{length}" density="1000"/></body></worldbody></mujoco>""")
    data.qpos[0] = amp
    mth = []
    for _ in range(steps):
        mujoco.mj_step(model, data)
        mth.append(float(data.qpos[0]))
    # a physical pendulum (a solid sphere about the pivot) at a 1 rad amplitude: T = 4 sqrt(I / (m g L)) K(sin(a/2))
    T = 4.0 * math.sqrt((0.4 * r * r + length * length) / (G * length)) * ellipk(math.sin(amp / 2) ** 2)
    for x in (np.array(th), np.array(mth)):
        t = _crossings(x, dt)
        assert len(t) >= 3
        assert 2.0 * np.diff(t).mean() == pytest.approx(T, rel=1e-3)
        assert np.abs(x).max() == pytest.approx(amp, rel=2e-3)  # and neither gains nor loses amplitude
