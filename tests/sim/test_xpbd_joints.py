"""XPBDIntegrator: universal, compound and D6 joints (locks, limits, position/velocity/force drives along each
axis) and target-velocity drives, against closed forms and the single-axis joints they reduce to."""

from __future__ import annotations

import math

import numpy as np
import pytest

import weft as wp
from weft import sim

G = 9.81
JA = sim.JointAxis
X, Y, Z = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)
L = 0.5  # pendulum length


def _pendulum(kind, amp=0.0, gravity=-G, axes=None, spin=None, length=L):
    """A sphere hanging ``length`` below a world anchor at (0, 2, 0), turned by ``amp`` about z, on a joint of
    ``kind`` (``axes``: the JointAxis list); ``spin``: its initial (angular, linear) velocity."""
    b = sim.ModelBuilder(gravity=gravity)
    q0 = wp.quat_from_axis_angle(wp.vec3(*Z), amp)
    c = np.array(wp.quat_rotate(q0, wp.vec3(0.0, -length, 0.0)))
    body = b.add_body(origin=wp.transform((float(c[0]), 2.0 + float(c[1]), float(c[2])), q0))
    b.add_shape_sphere(body, radius=0.05, has_ground_collision=False)
    px, cx = wp.transform((0.0, 2.0, 0.0), wp.quat_identity()), wp.transform((0.0, length, 0.0), wp.quat_identity())
    if kind == "revolute":
        b.add_joint_revolute(-1, body, px, cx, axis=axes[0])
    elif kind == "universal":
        b.add_joint_universal(-1, body, *axes, px, cx)
    elif kind == "compound":
        b.add_joint_compound(-1, body, *axes, px, cx)
    elif kind == "d6":
        b.add_joint_d6(-1, body, angular_axes=axes, parent_xform=px, child_xform=cx)
    if spin is not None:
        b.body_qd[body] = spin
    m = b.finalize("cpu")
    m.ground = False
    return m


def _run(m, steps, dt=1e-3, control=None, iterations=4):
    integ = sim.XPBDIntegrator(iterations=iterations, joint_linear_relaxation=1.0)
    s0, s1 = m.state(), m.state()
    xs, vs = [], []
    for _ in range(steps):
        s0.clear_forces()
        integ.simulate(m, s0, s1, dt, control)
        s0, s1 = s1, s0
        xs.append(s0.body_q.numpy()[0].copy())
        vs.append(s0.body_qd.numpy()[0].copy())
    return np.array(xs, dtype=np.float64), np.array(vs, dtype=np.float64)


def _angles(m, xs):
    """Joint coordinates along a trajectory (eval_ik)."""
    out = []
    state = m.state()
    q = wp.zeros(m.joint_coord_count, dtype=float)
    qd = wp.zeros(m.joint_dof_count, dtype=float)
    for x in xs:
        state.body_q.assign(x[None].astype(np.float32))
        sim.eval_ik(m, state, q, qd)
        out.append(q.numpy().copy())
    return np.array(out)


def _anchor_error(xs):
    pts = np.array([np.array(wp.quat_rotate(wp.quat(*x[3:]), wp.vec3(0.0, L, 0.0))) + x[:3] for x in xs])
    return np.linalg.norm(pts - [0.0, 2.0, 0.0], axis=1).max()


def test_universal_and_d6_lock_the_twist_and_keep_energy():
    """A swinging, spinning pendulum on a universal joint (z, then x): the twist about the third axis stays locked
    (a compound joint keeps the spin), the anchor holds, the energy is kept; a D6 joint with the same two angular
    axes moves the same way."""
    spin = (0.0, 3.0, 0.0, 0.0, 0.0, 0.0)  # about the pendulum's own (locked) axis, plus a swing in 3-D below
    ms = {k: _pendulum(k, amp=0.4, axes=[JA(Z), JA(X)], spin=spin) for k in ("universal", "d6")}
    xs = {k: _run(m, 500)[0] for k, m in ms.items()}
    comp = _pendulum("compound", amp=0.4, axes=[JA(Z), JA(X), JA(Y)], spin=spin)
    xc = _run(comp, 500)[0]
    a = _angles(ms["universal"], xs["universal"])
    assert np.abs(a[:, 0]).max() == pytest.approx(0.4, abs=2e-2)  # swings about z
    # the twist: the body's y axis stays in the plane spanned by the anchor's y and the swing
    twist = [np.dot(np.array(wp.quat_rotate(wp.quat(*x[3:]), wp.vec3(*X))), [0.0, 0.0, 1.0]) for x in xs["universal"]]
    assert np.abs(twist).max() < 1e-3
    assert _anchor_error(xs["universal"]) < 1e-3
    np.testing.assert_allclose(xs["d6"], xs["universal"], atol=1e-5)
    # the compound joint keeps turning about the hanging axis
    yaw = 2.0 * np.arctan2(xc[-1, 4], xc[-1, 6])
    assert abs(yaw) > 0.5
    # energy of the universal pendulum: potential + kinetic of a point mass plus the sphere's spin (small)
    m = ms["universal"]
    mass = float(m.body_mass.numpy()[0])
    _, vs = _run(m, 500)
    e = mass * G * xs["universal"][:, 1] + 0.5 * mass * (vs[:, 3:] ** 2).sum(axis=1)
    assert np.ptp(e) < 2e-2 * abs(mass * G * L)


@pytest.mark.parametrize("kind", ["universal", "compound"])
def test_multi_axis_limits(kind):
    """Swinging about the first axis from the bottom at 3 rad/s (free amplitude 0.69 rad) with limits [-0.2, 0.2]
    on it: the swing is stopped at the limits as a hinge with the same limits stops it (the Jacobi sweeps let both
    overshoot by 0.03 rad at 4 sweeps per step)."""
    spin = (0.0, 0.0, 3.0, 3.0 * L, 0.0, 0.0)
    axes = [JA(Z, limit_lower=-0.2, limit_upper=0.2), JA(X)] + ([JA(Y)] if kind == "compound" else [])
    m = _pendulum(kind, axes=axes, spin=spin)
    xs, _ = _run(m, 300)
    hinge = _pendulum("revolute", axes=axes[:1], spin=spin)
    xh, _ = _run(hinge, 300)
    a = _angles(m, xs)[:, 0]
    np.testing.assert_allclose(a, _angles(hinge, xh)[:, 0], atol=1e-4)
    assert 0.2 < a.max() < 0.2 + 3e-2 and -0.2 - 3e-2 < a.min() < -0.2
    assert _anchor_error(xs) < 1e-2  # the limit's impulses stretch the anchor by up to 6 mm (the hinge's too)


def test_compound_position_and_velocity_drives():
    """No gravity, a ball centred on the joint: a stiff position drive turns the second axis to its target; a
    velocity drive on the first spins it at the target rate."""
    pos = [JA(Z), JA(X, mode=sim.JOINT_MODE_TARGET_POSITION, action=0.4, target_ke=200.0, target_kd=20.0), JA(Y)]
    m = _pendulum("compound", axes=pos, gravity=0.0, length=0.0)
    xs, _ = _run(m, 1500)
    assert _angles(m, xs[-1:])[0, 1] == pytest.approx(0.4, abs=5e-3)
    vel = [JA(Z, mode=sim.JOINT_MODE_TARGET_VELOCITY, action=1.5, target_ke=1e4), JA(X), JA(Y)]
    m = _pendulum("compound", axes=vel, gravity=0.0, length=0.0)
    _, vs = _run(m, 300)
    assert vs[-1, 2] == pytest.approx(1.5, rel=1e-3)


@pytest.mark.parametrize("kind", ["revolute", "d6"])
def test_target_velocity_drive_spins_at_the_target_rate(kind):
    """A wheel on an axle through its centre, driven at 2 rad/s (velocity mode), then at the control's -1 rad/s."""
    m = _pendulum(kind, axes=[JA(Z, mode=sim.JOINT_MODE_TARGET_VELOCITY, action=2.0, target_ke=1e4)], gravity=0.0,
                  length=0.0)
    _, vs = _run(m, 300)
    assert vs[-1, 2] == pytest.approx(2.0, rel=1e-3)
    ctrl = m.control()
    ctrl.joint_act.assign(np.array([-1.0], dtype=np.float32))
    _, vs = _run(m, 300, control=ctrl)
    assert vs[-1, 2] == pytest.approx(-1.0, rel=1e-3)
    np.testing.assert_allclose(vs[-1, [0, 1, 3, 4, 5]], 0.0, atol=1e-4)


def test_velocity_drive_of_an_offset_pendulum():
    """Driven about a pivot 0.5 m from the centre of mass: the drive turns the body about its centre of mass and the
    point lock's reaction takes part of it back within a step (Jacobi sweeps), so the rate settles 2.7% below the
    target with 4 sweeps and closer with more."""
    bld = sim.ModelBuilder(gravity=0.0)
    body = bld.add_body(origin=wp.transform((0.0, 1.5, 0.0), wp.quat_identity()))
    bld.add_shape_sphere(body, radius=0.05, has_ground_collision=False)
    bld.add_joint_revolute(-1, body, wp.transform((0.0, 2.0, 0.0), wp.quat_identity()),
                           wp.transform((0.0, L, 0.0), wp.quat_identity()), axis=Z,
                           mode=sim.JOINT_MODE_TARGET_VELOCITY, target=2.0, target_ke=1e4)
    m = bld.finalize("cpu")
    m.ground = False
    rates = [_run(m, 600, iterations=n)[1][-1, 2] for n in (4, 16)]
    assert 1.9 < rates[0] < rates[1] < 2.0 and rates[1] == pytest.approx(2.0, rel=1e-2)


def _slider(linear_axes, slope, **joint):
    b = sim.ModelBuilder(gravity=-G)
    body = b.add_body(origin=wp.transform((0.0, 1.0, 0.0), wp.quat_identity()))
    b.add_shape_box(body, hx=0.05, hy=0.05, hz=0.05)
    b.add_joint_d6(-1, body, linear_axes=linear_axes, parent_xform=wp.transform((0.0, 1.0, 0.0), wp.quat_identity()),
                   **joint)
    m = b.finalize("cpu")
    m.ground = False
    return m


def test_d6_planar_slide_down_an_incline_and_velocity_drive():
    """A D6 joint with two linear axes spanning a 30 degree incline (no rotation): a frictionless slide,
    s = g sin(slope) t^2 / 2 down the fall line, nothing off the plane, orientation locked; with a velocity drive on
    the horizontal axis it also moves sideways at the target speed."""
    slope = math.radians(30.0)
    down = (math.cos(slope), -math.sin(slope), 0.0)
    m = _slider([JA(down), JA(Z, mode=sim.JOINT_MODE_TARGET_VELOCITY, action=0.5, target_ke=1e5)], slope)
    steps, dt = 300, 1e-3
    xs, vs = _run(m, steps, dt)
    d = xs[:, :3] - [0.0, 1.0, 0.0]
    s = d @ np.array(down)
    normal = np.cross(down, Z)
    t = steps * dt
    assert s[-1] == pytest.approx(0.5 * G * math.sin(slope) * t * (t + dt), rel=2e-3)
    assert np.abs(d @ normal).max() < 1e-4
    assert vs[-1, 5] == pytest.approx(0.5, rel=1e-2)
    np.testing.assert_allclose(np.abs(xs[:, 3:]), np.tile([0, 0, 0, 1], (len(xs), 1)), atol=1e-5)


def test_force_mode_torque_on_a_universal_axis():
    """A constant torque action on the first axis of a universal joint, from rest without gravity: the angle follows
    tau t^2 / (2 I) about the pivot (as a hinge would)."""
    tau = 0.5
    m = _pendulum("universal", axes=[JA(Z), JA(X)], gravity=0.0)
    ctrl = m.control()
    ctrl.joint_act.assign(np.array([tau, 0.0], dtype=np.float32))
    steps, dt = 200, 1e-3
    xs, _ = _run(m, steps, dt, control=ctrl)
    mass = float(m.body_mass.numpy()[0])
    inertia = mass * (0.4 * 0.05**2 + L * L)
    t = steps * dt
    assert _angles(m, xs[-1:])[0, 0] == pytest.approx(0.5 * tau / inertia * t * (t + dt), rel=1e-2)
