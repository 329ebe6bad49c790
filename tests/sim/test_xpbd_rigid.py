"""Rigid bodies in the XPBDIntegrator: joints as position constraints (revolute, prismatic, ball, fixed), rigid
contacts with static friction, restitution; checked against closed forms (pendulum period, sliding on an incline,
Coulomb friction's stopping distance, bounce heights) and the SemiImplicitIntegrator."""

from __future__ import annotations

import math

import numpy as np
import pytest

import weft as wp
from weft import sim

G = 9.81
Z = (0.0, 0.0, 1.0)


def _run(m, steps, dt, integ, record=None, state=None):
    s0, s1 = state or m.state(), m.state()
    out = []
    for _ in range(steps):
        s0.clear_forces()
        sim.collide(m, s0)
        integ.simulate(m, s0, s1, dt)
        s0, s1 = s1, s0
        if record is not None:
            out.append(record(s0))
    return s0, out


def _anchor_error(xs, local, target):
    pts = np.array([np.array(wp.quat_rotate(wp.quat(*q[3:]), wp.vec3(*local))) + q[:3] for q in xs])
    return np.linalg.norm(pts - np.asarray(target), axis=1)


def _pendulum(joint, length=0.5, r=0.05, amp=0.3):
    b = sim.ModelBuilder(gravity=-G)
    body = b.add_body(origin=wp.transform((length * math.sin(amp), 2.0 - length * math.cos(amp), 0.0),
                                          wp.quat_from_axis_angle(wp.vec3(*Z), amp)))
    b.add_shape_sphere(body, radius=r, has_ground_collision=False)
    px, cx = wp.transform((0.0, 2.0, 0.0), wp.quat_identity()), wp.transform((0.0, length, 0.0), wp.quat_identity())
    if joint == "revolute":
        b.add_joint_revolute(-1, body, parent_xform=px, child_xform=cx, axis=Z)
    else:
        b.add_joint_ball(-1, body, parent_xform=px, child_xform=cx)
    m = b.finalize("cpu")
    m.ground = False
    return m


@pytest.mark.parametrize("joint", ["revolute", "ball"])
def test_pendulum_period_and_joint_error(joint):
    length, r, amp, dt = 0.5, 0.05, 0.3, 1e-3
    m = _pendulum(joint, length, r, amp)
    _, xs = _run(m, 1600, dt, sim.XPBDIntegrator(iterations=4, joint_linear_relaxation=1.0),
                 lambda s: s.body_q.numpy()[0].copy())
    xs = np.array(xs, dtype=np.float64)
    x = xs[:, 0]
    idx = np.nonzero(np.sign(x[:-1]) != np.sign(x[1:]))[0]
    t = (idx + x[idx] / (x[idx] - x[idx + 1])) * dt
    assert len(t) >= 2
    T = 2 * math.pi * math.sqrt((0.4 * r * r + length * length) / (G * length)) * (1 + amp * amp / 16)
    assert 2.0 * np.diff(t).mean() == pytest.approx(T, rel=2e-3)
    assert np.abs(x).max() == pytest.approx(length * math.sin(amp), rel=5e-3)  # no energy lost or gained
    assert _anchor_error(xs, (0.0, length, 0.0), (0.0, 2.0, 0.0)).max() < 5e-4
    assert np.abs(xs[:, 2]).max() < 1e-5  # stays in its plane


def test_fixed_joint_keeps_two_bodies_welded():
    b = sim.ModelBuilder(gravity=-G)
    a = b.add_body(origin=wp.transform((0.0, 2.0, 0.0), wp.quat_identity()))
    b.add_shape_box(a, hx=0.1, hy=0.1, hz=0.1)
    c = b.add_body(origin=wp.transform((0.3, 2.0, 0.0), wp.quat_identity()))
    b.add_shape_sphere(c, radius=0.08)
    b.add_joint_free(a)
    b.add_joint_fixed(a, c, parent_xform=wp.transform((0.3, 0.0, 0.0), wp.quat_identity()))
    b.body_qd[a] = (0.0, 0.0, 2.0, 0.0, 1.0, 0.0)  # spinning about z, thrown up
    b.body_qd[c] = (0.0, 0.0, 2.0, 0.0, 1.6, 0.0)  # the same rigid motion at the sphere's centre
    m = b.finalize("cpu")
    m.ground = False
    mass = m.body_mass.numpy().astype(np.float64)
    steps, dt = 300, 1e-3
    _s, xs = _run(m, steps, dt, sim.XPBDIntegrator(iterations=4), lambda s: s.body_q.numpy().copy())
    xs = np.array(xs, dtype=np.float64)
    # the sphere stays at (0.3, 0, 0) in the box's frame, unrotated relative to it
    for q in xs[::50]:
        rel = wp.transform_inverse(wp.transform(*np.split(q[0], [3]))) * wp.transform(*np.split(q[1], [3]))
        np.testing.assert_allclose(np.array(wp.transform_get_translation(rel)), [0.3, 0.0, 0.0], atol=2e-4)
        np.testing.assert_allclose(np.abs(np.array(wp.transform_get_rotation(rel))), [0, 0, 0, 1], atol=2e-4)
    # the centre of mass flies on its parabola; the pair turns at the initial rate
    com0 = (mass[0] * np.array([0.0, 2.0, 0.0]) + mass[1] * np.array([0.3, 2.0, 0.0])) / mass.sum()
    v0 = (mass[0] * np.array([0.0, 1.0, 0.0]) + mass[1] * np.array([-0.0, 1.6, 0.0])) / mass.sum()
    T = steps * dt
    com = (mass[0] * xs[-1, 0, :3] + mass[1] * xs[-1, 1, :3]) / mass.sum()
    np.testing.assert_allclose(com, com0 + v0 * T + [0.0, -0.5 * G * T * T, 0.0], atol=3e-3)
    angle = 2.0 * math.atan2(xs[-1, 0, 5], xs[-1, 0, 6])
    assert angle == pytest.approx(2.0 * T, rel=2e-2)


def test_prismatic_joint_slides_down_an_incline_and_stops_at_its_limit():
    slope = math.radians(30.0)
    axis = (math.cos(slope), -math.sin(slope), 0.0)  # downhill
    b = sim.ModelBuilder(gravity=-G)
    body = b.add_body(origin=wp.transform((0.0, 1.0, 0.0), wp.quat_identity()))
    b.add_shape_box(body, hx=0.05, hy=0.05, hz=0.05)
    b.add_joint_prismatic(-1, body, parent_xform=wp.transform((0.0, 1.0, 0.0), wp.quat_identity()), axis=axis,
                          limit_lower=-1.0, limit_upper=0.2)
    m = b.finalize("cpu")
    m.ground = False
    d = np.array(axis)
    steps, dt = 150, 1e-3
    _, xs = _run(m, 400, dt, sim.XPBDIntegrator(iterations=2), lambda s: s.body_q.numpy()[0].copy())
    xs = np.array(xs, dtype=np.float64)
    s = (xs[:, :3] - [0.0, 1.0, 0.0]) @ d
    off = (xs[:, :3] - [0.0, 1.0, 0.0]) - s[:, None] * d
    # frictionless slide: s = g sin(slope) t^2 / 2 (symplectic Euler: t (t + dt)), off the rail by < 0.1 mm
    t = steps * dt
    assert s[steps - 1] == pytest.approx(0.5 * G * math.sin(slope) * t * (t + dt), rel=1e-3)
    assert np.abs(off).max() < 1e-4
    np.testing.assert_allclose(np.abs(xs[:, 3:]), np.tile([0, 0, 0, 1], (len(xs), 1)), atol=1e-5)
    # the upper limit holds (the slide reaches it after 0.29 s)
    assert s[-1] == pytest.approx(0.2, abs=2e-3) and s.max() < 0.2 + 5e-3


def test_revolute_target_drive_and_limit():
    b = sim.ModelBuilder(gravity=0.0)
    arm = b.add_body(origin=wp.transform((0.25, 1.0, 0.0), wp.quat_identity()))
    b.add_shape_box(arm, hx=0.25, hy=0.05, hz=0.05)
    b.add_joint_revolute(-1, arm, parent_xform=wp.transform((0.0, 1.0, 0.0), wp.quat_identity()),
                         child_xform=wp.transform((-0.25, 0.0, 0.0), wp.quat_identity()), axis=Z,
                         mode=sim.JOINT_MODE_TARGET_POSITION, target=0.5, target_ke=50.0, target_kd=5.0, limit_lower=-1.0,
                         limit_upper=0.3)
    m = b.finalize("cpu")
    m.ground = False
    s, xs = _run(m, 600, 1e-3, sim.XPBDIntegrator(iterations=4), lambda s: s.body_q.numpy()[0].copy())
    angle = 2.0 * np.arctan2(np.array(xs)[:, 5], np.array(xs)[:, 6])
    # the drive pulls towards 0.5 rad; the limit stops it at 0.3
    assert angle[-1] == pytest.approx(0.3, abs=5e-3) and angle.max() < 0.3 + 1e-2
    ctrl = m.control()
    ctrl.joint_act.assign(np.array([-0.4], dtype=np.float32))
    integ = sim.XPBDIntegrator(iterations=4)
    s0, s1 = s, m.state()
    for _ in range(1500):
        integ.simulate(m, s0, s1, 1e-3, ctrl)
        s0, s1 = s1, s0
    q = s0.body_q.numpy()[0]
    assert 2.0 * math.atan2(q[5], q[6]) == pytest.approx(-0.4, abs=2e-2)


def _on_ground(shape, **kw):
    b = sim.ModelBuilder(gravity=-G)
    body = b.add_body(origin=wp.transform((0.0, kw.pop("y"), 0.0), wp.quat_identity()))
    getattr(b, "add_shape_" + shape)(body, **kw)
    return b, body


def test_box_rests_and_slides_to_a_stop_with_coulomb_friction():
    b, body = _on_ground("box", y=0.1, hx=0.2, hy=0.1, hz=0.15, mu=0.4)
    b.set_ground_plane(mu=0.4)
    v0 = 2.0
    b.body_qd[body] = (0.0, 0.0, 0.0, v0, 0.0, 0.0)
    m = b.finalize("cpu")
    s, xs = _run(m, 800, 1e-3, sim.XPBDIntegrator(iterations=4), lambda s: s.body_q.numpy()[0].copy())
    q, qd = s.body_q.numpy()[0], s.body_qd.numpy()[0]
    # it stops after v0^2 / (2 mu g), flat on the ground, not sunk in
    assert q[0] == pytest.approx(v0 * v0 / (2 * 0.4 * G), rel=2e-2)
    assert q[1] == pytest.approx(0.1, abs=5e-4)
    np.testing.assert_allclose(np.abs(q[3:]), [0.0, 0.0, 0.0, 1.0], atol=5e-3)
    assert np.abs(qd).max() < 1e-2
    assert min(x[1] for x in xs) > 0.1 - 2e-3


def _ball(w0, v0, mu=0.4, torsional=0.0, rolling=0.0, r=0.1):
    b, body = _on_ground("sphere", y=r, radius=r, mu=mu)
    b.set_ground_plane(mu=mu)
    b.body_qd[body] = (*w0, *v0)
    b.rigid_contact_torsional_friction = torsional
    b.rigid_contact_rolling_friction = rolling
    return b.finalize("cpu")


def test_sphere_rolling_sliding_and_rolling_and_torsional_friction():
    """A sphere (r = 0.1) on the ground: rolling without slipping it keeps rolling (friction sees the slip of the
    material contact point, not of its centre); sliding, friction brings it to rolling at 5/7 of its speed; rolling
    friction (coefficient mu * 0.05) decelerates it at mu 0.05 g / (1.4 r), and torsional friction (mu * 0.5) stops
    a spin about the vertical at mu 0.5 g / (0.4 r) (closed forms)."""
    r, mu, dt = 0.1, 0.4, 1e-3
    integ = sim.XPBDIntegrator(iterations=4)
    rec = (lambda s: s.body_qd.numpy()[0].copy())
    _, vs = _run(_ball((0.0, 0.0, -20.0), (2.0, 0.0, 0.0), mu), 200, dt, integ, rec)
    vs = np.array(vs)
    np.testing.assert_allclose(vs[:, 3], 2.0, rtol=1e-3)
    np.testing.assert_allclose(vs[:, 2], -20.0, rtol=1e-3)
    _, vs = _run(_ball((0.0, 0.0, 0.0), (2.0, 0.0, 0.0), mu), 300, dt, integ, rec)  # rolls after 0.15 s
    assert vs[-1][3] == pytest.approx(5.0 / 7.0 * 2.0, rel=1e-2)
    assert -vs[-1][2] * r == pytest.approx(vs[-1][3], rel=1e-2)
    _, vs = _run(_ball((0.0, 0.0, -20.0), (2.0, 0.0, 0.0), mu, rolling=0.05), 300, dt, integ, rec)
    a = (vs[50][3] - vs[250][3]) / (200 * dt)
    assert a == pytest.approx(mu * 0.05 * G / (1.4 * r), rel=2e-2)
    _, vs = _run(_ball((0.0, 10.0, 0.0), (0.0, 0.0, 0.0), mu, torsional=0.5), 40, dt, integ, rec)
    alpha = (vs[5][1] - vs[10][1]) / (5 * dt)
    assert alpha == pytest.approx(mu * 0.5 * G / (0.4 * r * r), rel=3e-2)
    assert abs(vs[-1][1]) < 1e-6  # stopped, not reversed


@pytest.mark.parametrize("e", [0.0, 0.5, 0.8])
def test_sphere_bounces_with_restitution(e):
    r, h = 0.1, 0.5
    b, _body = _on_ground("sphere", y=r + h, radius=r, restitution=e)
    b.set_ground_plane(restitution=e)
    m = b.finalize("cpu")
    _, ys = _run(m, 800, 1e-3, sim.XPBDIntegrator(iterations=4, enable_restitution=True),
                 lambda s: float(s.body_q.numpy()[0, 1]))
    ys = np.array(ys) - r
    first = int(np.argmax(ys < 1e-3))
    # the rebound rises to e^2 h
    assert ys[first:].max() == pytest.approx(e * e * h, abs=0.03 * h)
    assert ys.min() > -2e-3


@wp.kernel
def _loss(q: wp.array(dtype=wp.transform), out: wp.array(dtype=float)):
    p = wp.transform_get_translation(q[0])
    out[0] = p[0] + 0.5 * p[1]


def _taped_loss(m, qd0, steps):
    integ = sim.XPBDIntegrator(iterations=2)
    states = [m.state(requires_grad=True) for _ in range(steps + 1)]
    wp.copy(states[0].body_qd, qd0)
    for k in range(steps):
        states[k].clear_forces()
        sim.collide(m, states[k])
        integ.simulate(m, states[k], states[k + 1], 1e-3)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    wp.launch(_loss, 1, inputs=[states[-1].body_q], outputs=[loss])
    return loss


@pytest.mark.parametrize("scene", ["pendulum", "sliding_box"])
def test_gradient_matches_finite_differences(scene):
    if scene == "pendulum":
        m = _pendulum("revolute")
        qd = (0.0, 0.0, 1.0, 0.5, -0.2, 0.0)
    else:
        b, _ = _on_ground("box", y=0.1, hx=0.2, hy=0.1, hz=0.15, mu=0.4)
        b.set_ground_plane(mu=0.4)
        m = b.finalize("cpu")
        qd = (0.0, 0.0, 0.0, 1.0, 0.0, 0.3)
    m.requires_grad = True
    steps = 60
    qd0 = wp.array([qd], dtype=wp.spatial_vector, requires_grad=True)
    tape = wp.Tape()
    with tape:
        loss = _taped_loss(m, qd0, steps)
    tape.backward(loss)
    g = qd0.grad.numpy()[0].astype(np.float64)
    fd = np.zeros(6)
    h = 1e-3
    for i in (2, 3, 5):
        hi, lo = np.array(qd), np.array(qd)
        hi[i] += h
        lo[i] -= h
        f = [float(_taped_loss(m, wp.array([x], dtype=wp.spatial_vector), steps).numpy()[0]) for x in (hi, lo)]
        fd[i] = (f[0] - f[1]) / (2 * h)
    np.testing.assert_allclose(g[[2, 3, 5]], fd[[2, 3, 5]], rtol=3e-2, atol=1e-3)
    assert np.abs(g[[3]]).max() > 1e-2


def test_force_mode_drive_turns_the_arm():
    b = sim.ModelBuilder(gravity=0.0)
    arm = b.add_body(origin=wp.transform((0.25, 1.0, 0.0), wp.quat_identity()))
    b.add_shape_box(arm, hx=0.25, hy=0.05, hz=0.05)
    b.add_joint_revolute(-1, arm, parent_xform=wp.transform((0.0, 1.0, 0.0), wp.quat_identity()),
                         child_xform=wp.transform((-0.25, 0.0, 0.0), wp.quat_identity()), axis=Z,
                         mode=sim.JOINT_MODE_FORCE)
    m = b.finalize("cpu")
    m.ground = False
    ctrl = m.control()
    tau = 2.0
    ctrl.joint_act.assign(np.array([tau], dtype=np.float32))
    integ = sim.XPBDIntegrator(iterations=4, joint_linear_relaxation=1.0)
    s0, s1 = m.state(), m.state()
    steps, dt = 200, 1e-3
    for _ in range(steps):
        integ.simulate(m, s0, s1, dt, ctrl)
        s0, s1 = s1, s0
    q = s0.body_q.numpy()[0]
    mass = float(m.body_mass.numpy()[0])
    inertia = mass * (0.25**2 + 0.05**2) / 3.0 + mass * 0.25**2  # about the pivot
    t = steps * dt
    # constant torque about a fixed pivot: angle = tau t^2 / (2 I) (symplectic Euler: t (t + dt))
    assert 2.0 * math.atan2(q[5], q[6]) == pytest.approx(0.5 * tau / inertia * t * (t + dt), rel=1e-2)
