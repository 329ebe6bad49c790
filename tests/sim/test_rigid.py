"""Maximal-coordinate rigid bodies in the SemiImplicitIntegrator: rigid contacts from ``wp.sim.collide`` (shape pairs
and the ground) and joints as attachment/drive/limit forces. Physics checks against closed forms (resting
penetration, rolling at 5/7 of the initial speed, momentum, pendulum period, resting heights of every supported
pair) and Tape gradients through contacts and joints against central finite differences."""

from __future__ import annotations

import math

import numpy as np
import pytest

import weft as wp
from weft import sim
from weft.sim.collide import box_sdf, mesh_sdf

G = 9.80665


def _run(m, steps, dt, integ=None, state=None, control=None):
    integ = integ or sim.SemiImplicitIntegrator()
    s0 = state or m.state()
    s1 = m.state()
    for _ in range(steps):
        s0.clear_forces()
        sim.collide(m, s0)
        integ.simulate(m, s0, s1, dt, control)
        s0, s1 = s1, s0
    return s0


def _cube_mesh(h):
    v = np.array([[x, y, z] for x in (-h, h) for y in (-h, h) for z in (-h, h)], dtype=np.float32)
    f = [0, 1, 3, 0, 3, 2, 4, 6, 7, 4, 7, 5, 0, 4, 5, 0, 5, 1, 2, 3, 7, 2, 7, 6, 0, 2, 6, 0, 6, 4, 1, 5, 7, 1, 7, 3]
    return sim.Mesh(v, f)


def test_resting_box_penetration_matches_spring_balance():
    b = sim.ModelBuilder()
    body = b.add_body(origin=wp.transform((0.0, 0.1, 0.0), wp.quat_identity()))
    b.add_shape_box(body, hx=0.2, hy=0.1, hz=0.15)
    m = b.finalize("cpu")
    s = _run(m, 400, 1e-3)
    mass = 1000.0 * 8 * 0.2 * 0.1 * 0.15
    ke = 1.0e5  # mean of the box's and the ground's default stiffness
    q = s.body_q.numpy()[0]
    # four bottom corners carry the weight: 4 ke d = m g
    thickness = 2 * sim.ModelBuilder.default_shape_thickness
    assert q[1] == pytest.approx(0.1 + thickness - mass * G / (4 * ke), abs=2e-6)
    np.testing.assert_allclose(q[3:], [0.0, 0.0, 0.0, 1.0], atol=1e-5)
    assert int(m.rigid_contact_count.numpy()[0]) == 4
    assert np.abs(s.body_qd.numpy()[0]).max() < 1e-3


def test_sphere_slides_then_rolls_at_five_sevenths():
    r, v0 = 0.1, 1.0
    b = sim.ModelBuilder()
    body = b.add_body(origin=wp.transform((0.0, r, 0.0), wp.quat_identity()))
    b.add_shape_sphere(body, radius=r, mu=1.0, kf=1e3)
    b.body_qd[0] = (0.0, 0.0, 0.0, v0, 0.0, 0.0)
    m = b.finalize("cpu")
    s = _run(m, 300, 1e-3, sim.SemiImplicitIntegrator(angular_damping=0.0))
    qd = s.body_qd.numpy()[0]
    # friction turns sliding into rolling; angular momentum about the contact point is conserved: v = 5/7 v0
    assert qd[3] == pytest.approx(5.0 / 7.0 * v0, rel=5e-3)
    assert qd[2] == pytest.approx(-qd[3] / r, rel=5e-3)


def test_sphere_collision_conserves_momentum():
    b = sim.ModelBuilder(gravity=0.0)
    a = b.add_body(origin=wp.transform((-0.3, 1.0, 0.0), wp.quat_identity()))
    b.add_shape_sphere(a, radius=0.1, kd=0.0)
    c = b.add_body(origin=wp.transform((0.3, 1.05, 0.0), wp.quat_identity()))
    b.add_shape_sphere(c, radius=0.2, kd=0.0)
    b.body_qd[0] = (0.0, 0.0, 0.0, 2.0, 0.0, 0.0)
    b.body_qd[1] = (0.0, 0.0, 0.0, -1.0, 0.0, 0.0)
    m = b.finalize("cpu")
    m.ground = False
    masses = m.body_mass.numpy()
    p0 = masses[0] * np.array([2.0, 0, 0]) + masses[1] * np.array([-1.0, 0, 0])
    e0 = 0.5 * masses[0] * 4.0 + 0.5 * masses[1] * 1.0
    s = _run(m, 300, 5e-4, sim.SemiImplicitIntegrator(angular_damping=0.0))
    v = s.body_qd.numpy()[:, 3:]
    np.testing.assert_allclose(masses[0] * v[0] + masses[1] * v[1], p0, atol=2e-4 * np.abs(p0).max())
    assert v[0, 0] < v[1, 0]  # they bounced apart
    e1 = 0.5 * (masses * (v * v).sum(1)).sum()
    assert e1 == pytest.approx(e0, rel=2e-2)  # undamped contact (friction takes a little)


def _rest_height(kind):
    b = sim.ModelBuilder()
    if kind == "sphere-mesh":
        b.add_shape_mesh(-1, pos=(0.0, 0.4, 0.0), mesh=_cube_mesh(0.4))
        body = b.add_body(origin=wp.transform((0.05, 0.95, 0.0), wp.quat_identity()))
        b.add_shape_sphere(body, radius=0.1)
        return b, 0.8 + 0.1
    if kind == "box-box":
        low = b.add_body(origin=wp.transform((0.0, 0.1, 0.0), wp.quat_identity()))
        b.add_shape_box(low, hx=0.3, hy=0.1, hz=0.3, density=100.0)
        body = b.add_body(origin=wp.transform((0.02, 0.35, 0.0), wp.quat_identity()))
        b.add_shape_box(body, hx=0.15, hy=0.1, hz=0.15)
        return b, 0.3
    if kind == "box-capsule":
        low = b.add_body(origin=wp.transform((0.0, 0.1, 0.0), wp.quat_identity()))
        b.add_shape_box(low, hx=0.4, hy=0.1, hz=0.4, density=100.0)
        body = b.add_body(origin=wp.transform((0.0, 0.32, 0.0), wp.quat_identity()))
        b.add_shape_capsule(body, radius=0.1, half_height=0.2, up_axis=0)
        return b, 0.3
    if kind == "capsule-capsule":
        low = b.add_body(origin=wp.transform((0.0, 0.1, 0.0), wp.quat_identity()))
        b.add_shape_capsule(low, radius=0.1, half_height=0.3, up_axis=0, density=100.0)
        b.add_shape_capsule(low, pos=(0.0, 0.0, 0.5), radius=0.1, half_height=0.3, up_axis=0, density=100.0)
        body = b.add_body(origin=wp.transform((0.0, 0.32, 0.25), wp.quat_identity()))
        b.add_shape_capsule(body, radius=0.1, half_height=0.4, up_axis=2)
        return b, 0.3
    heights = {"mesh-ground": 0.3, "capsule-ground": 0.1, "cylinder-ground": 0.15, "cone-ground": 0.15}
    body = b.add_body(origin=wp.transform((0.0, heights[kind] + 0.01, 0.0), wp.quat_identity()))
    if kind == "mesh-ground":
        b.add_shape_mesh(body, mesh=_cube_mesh(0.3), density=100.0)
    elif kind == "capsule-ground":
        b.add_shape_capsule(body, radius=0.1, half_height=0.3, up_axis=0)
    elif kind == "cylinder-ground":
        b.add_shape_cylinder(body, radius=0.2, half_height=0.15)
    elif kind == "cone-ground":
        # base down (the cone's signed distance narrows towards -Y)
        # (kf 100: with the default 1e3 the explicit friction torque of the 8 rim points overshoots at dt = 1 ms,
        # kf sum(r^2) dt / I > 2, and the cone flips its spin every step)
        b.add_shape_cone(body, rot=wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0), math.pi), radius=0.2,
                         half_height=0.15, kf=100.0)
    return b, heights[kind]
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["sphere-mesh", "box-box", "box-capsule", "capsule-capsule", "mesh-ground", "capsule-ground",
                                  "cylinder-ground", "cone-ground"])
def test_shapes_come_to_rest_on_each_other(kind):
    b, height = _rest_height(kind)
    m = b.finalize("cpu")
    s = _run(m, 700, 1e-3)
    q = s.body_q.numpy()[-1]
    # resting on top of the other shape (within the contact springs' sag) and at rest
    assert q[1] == pytest.approx(height, abs=3e-3)
    assert np.abs(s.body_qd.numpy()[-1]).max() < 0.05


def test_static_sphere_collides_with_its_radius():
    # warp.sim 1.7.2 skips the thickness of static shapes (a static sphere acts as its centre point); weft does not
    b = sim.ModelBuilder()
    b.add_shape_sphere(-1, pos=(0.0, 0.3, 0.0), radius=0.3)
    body = b.add_body(origin=wp.transform((0.0, 0.75, 0.0), wp.quat_identity()))
    b.add_shape_sphere(body, radius=0.1)
    m = b.finalize("cpu")
    s = _run(m, 300, 1e-3)
    assert s.body_q.numpy()[0, 1] == pytest.approx(0.7, abs=3e-3)


def _pendulum(length, amplitude, r=0.1, attach_ke=1e4):
    b = sim.ModelBuilder()
    body = b.add_body(origin=wp.transform((length * math.sin(amplitude), 2.0 - length * math.cos(amplitude), 0.0),
                                          wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), amplitude)))
    b.add_shape_sphere(body, radius=r, has_ground_collision=False)
    b.add_joint_revolute(-1, body, parent_xform=wp.transform((0.0, 2.0, 0.0), wp.quat_identity()),
                         child_xform=wp.transform((0.0, length, 0.0), wp.quat_identity()), axis=(0.0, 0.0, 1.0))
    m = b.finalize("cpu")
    m.ground = False
    # explicit penalty joints: the swing stiffness over the bob's own inertia bounds dt (ke / I_com dt^2 < 4)
    m.joint_attach_ke = attach_ke
    m.joint_attach_kd = 10.0
    return m


def test_pendulum_period_matches_physical_pendulum():
    length, amp, r = 0.5, 0.1, 0.1
    m = _pendulum(length, amp, r)
    integ = sim.SemiImplicitIntegrator(angular_damping=0.0)
    s0, s1 = m.state(), m.state()
    dt = 1e-3
    xs = []
    for _ in range(2400):
        s0.clear_forces()
        integ.simulate(m, s0, s1, dt)
        s0, s1 = s1, s0
        xs.append(s0.body_q.numpy()[0, 0])
    xs = np.array(xs)
    # zero crossings of x (linearly interpolated): half periods
    idx = np.nonzero(np.sign(xs[:-1]) != np.sign(xs[1:]))[0]
    t = (idx + xs[idx] / (xs[idx] - xs[idx + 1])) * dt
    assert len(t) >= 3
    period = 2.0 * np.diff(t).mean()
    # physical pendulum (a solid sphere about the pivot), the rod stretched by the joint spring's static sag, with
    # the finite-amplitude correction
    mass = float(m.body_mass.numpy()[0])
    arm = length + mass * G / m.joint_attach_ke
    T = 2 * math.pi * math.sqrt((0.4 * r * r + arm * arm) / (G * arm)) * (1 + amp * amp / 16)
    assert period == pytest.approx(T, rel=2e-3)


def test_joint_drive_reaches_target_and_limits_hold():
    b = sim.ModelBuilder(gravity=0.0)
    arm = b.add_body(origin=wp.transform((0.25, 1.0, 0.0), wp.quat_identity()))
    b.add_shape_box(arm, hx=0.25, hy=0.05, hz=0.05)
    b.add_joint_revolute(-1, arm, parent_xform=wp.transform((0.0, 1.0, 0.0), wp.quat_identity()),
                         child_xform=wp.transform((-0.25, 0.0, 0.0), wp.quat_identity()), axis=(0.0, 0.0, 1.0),
                         target=0.6, target_ke=20.0, target_kd=5.0)
    slider = b.add_body(origin=wp.transform((0.0, 0.0, 1.0), wp.quat_identity()))
    b.add_shape_box(slider, hx=0.1, hy=0.1, hz=0.1)
    b.add_joint_prismatic(-1, slider, parent_xform=wp.transform((0.0, 0.0, 1.0), wp.quat_identity()),
                          axis=(1.0, 0.0, 0.0), mode=sim.JOINT_MODE_FORCE, limit_lower=-0.2, limit_upper=0.2,
                          limit_ke=1e4, limit_kd=500.0)
    m = b.finalize("cpu")
    m.ground = False
    m.joint_attach_ke, m.joint_attach_kd = 1e4, 100.0
    control = m.control()
    act = control.joint_act.numpy()
    act[1] = 50.0  # constant push along the slider into its upper limit
    control.joint_act.assign(act)
    s = _run(m, 1500, 1e-3, control=control)
    q, qd = wp.zeros(m.joint_coord_count), wp.zeros(m.joint_dof_count)
    sim.eval_ik(m, s, q, qd)
    q = q.numpy()
    assert q[0] == pytest.approx(0.6, abs=2e-3)
    assert q[1] == pytest.approx(0.2 + 50.0 / 1e4, abs=2e-4)


@wp.kernel
def _pose_loss(q: wp.array(dtype=wp.transform), loss: wp.array(dtype=float)):
    p = wp.transform_get_translation(q[0])
    loss[0] = p[0] + 0.5 * p[1] + 0.3 * wp.transform_get_rotation(q[0])[2]


def _contact_rollout(kind, qd0, tape, steps=40, dt=2e-3):
    b = sim.ModelBuilder()
    body = b.add_body(origin=wp.transform((0.0, 0.095, 0.0), wp.quat_rpy(0.0, 0.0, 0.05)))
    if kind == "sphere":
        b.add_shape_sphere(body, radius=0.1, kf=100.0, mu=0.5)
    else:
        b.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1, kf=100.0, mu=0.5)
    m = b.finalize("cpu", requires_grad=tape)
    states = [m.state() for _ in range(steps + 1)]
    states[0].body_qd.assign(wp.array(qd0.reshape(1, 6), dtype=wp.spatial_vector))
    loss = wp.zeros(1, dtype=float, requires_grad=tape)
    integ = sim.SemiImplicitIntegrator()
    with wp.Tape() as t:
        for k in range(steps):
            sim.collide(m, states[k])
            integ.simulate(m, states[k], states[k + 1], dt)
        wp.launch(_pose_loss, dim=1, inputs=[states[-1].body_q], outputs=[loss])
    if not tape:
        return float(loss.numpy()[0])
    t.backward(loss)
    return states[0].body_qd.grad.numpy().reshape(-1).copy()


@pytest.mark.parametrize("kind", ["sphere", "box"])
def test_gradient_through_ground_contact_matches_fd(kind):
    qd0 = np.array([0.0, 0.0, 0.5, 1.0, -0.5, 0.2], dtype=np.float32)
    g = _contact_rollout(kind, qd0, True)
    fd = np.zeros(6)
    for i in range(6):
        e = np.zeros(6, np.float32)
        e[i] = 1e-2
        fd[i] = (_contact_rollout(kind, qd0 + e, False) - _contact_rollout(kind, qd0 - e, False)) / 2e-2
    np.testing.assert_allclose(g, fd, atol=2e-3 * max(1.0, np.abs(fd).max()), rtol=2e-2)
    assert np.abs(g).max() > 1e-2


def _drive_rollout(target, tape, steps=60, dt=1e-3):
    m = _pendulum(0.25, 0.2)
    m.joint_target_ke.assign(np.array([5.0], np.float32))
    m.joint_axis_mode.assign(np.array([int(sim.JOINT_MODE_TARGET_POSITION)], np.int32))
    m.requires_grad = tape
    control = m.control(requires_grad=tape)
    control.joint_act.assign(np.array([target], np.float32))
    states = [m.state(requires_grad=tape) for _ in range(steps + 1)]
    loss = wp.zeros(1, dtype=float, requires_grad=tape)
    integ = sim.SemiImplicitIntegrator()
    with wp.Tape() as t:
        for k in range(steps):
            integ.simulate(m, states[k], states[k + 1], dt, control)
        wp.launch(_pose_loss, dim=1, inputs=[states[-1].body_q], outputs=[loss])
    if not tape:
        return float(loss.numpy()[0])
    t.backward(loss)
    return float(control.joint_act.grad.numpy()[0])


def test_gradient_through_joint_drive_matches_fd():
    g = _drive_rollout(0.5, True)
    fd = (_drive_rollout(0.51, False) - _drive_rollout(0.49, False)) / 0.02
    assert g == pytest.approx(fd, rel=2e-2, abs=1e-4)
    assert abs(g) > 1e-3



@wp.kernel
def _mesh_and_box_sdf(mesh: wp.uint64, h: float, pts: wp.array(dtype=wp.vec3), out: wp.array(dtype=float, ndim=2)):
    i = wp.tid()
    out[i, 0] = mesh_sdf(mesh, pts[i], 10.0)
    out[i, 1] = box_sdf(wp.vec3(h), pts[i])
    out[i, 2] = mesh_sdf(mesh, pts[i], 0.05)


def test_mesh_sdf_of_a_cube_equals_the_box_sdf():
    """warp.sim.collide.mesh_sdf (Warp's drone example imports it): signed distance to a closed mesh, max_dist
    beyond it."""
    h = 0.4
    cube = _cube_mesh(h)
    mesh = wp.Mesh(points=wp.array(cube.vertices, dtype=wp.vec3), indices=wp.array(cube.indices.ravel(), dtype=int))
    pts = np.random.default_rng(3).uniform(-1.0, 1.0, (64, 3)).astype(np.float32)
    out = wp.zeros((64, 3), dtype=float)
    wp.launch(_mesh_and_box_sdf, 64, inputs=[mesh.id, h, wp.array(pts, dtype=wp.vec3)], outputs=[out])
    d = out.numpy()
    np.testing.assert_allclose(d[:, 0], d[:, 1], atol=2e-6)
    assert (d[:, 1] < 0).any() and (d[:, 1] > 0).any()
    far = np.abs(d[:, 1]) > 0.05
    np.testing.assert_allclose(d[far, 2], 0.05)


def test_pile_under_graph_capture_matches_eager_steps():
    """The narrow phase runs over the candidates the broad phase lists: eagerly as many threads as listed (the count
    read on the host), under a graph capture every candidate slot (the count then changes between replays). Boxes,
    spheres and capsules dropped on each other: replaying a captured substep gives the eager run's contacts and
    poses."""
    import os
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples", "sim"))
    import scenes

    def build():
        return scenes.build_rigid_pile(wp, n=2)

    integ = sim.SemiImplicitIntegrator()
    dt = 1.0 / 1200.0

    def substep(m, s0, s1):
        s0.clear_forces()
        sim.collide(m, s0)
        integ.simulate(m, s0, s1, dt)

    m_eager, m_graph = build(), build()
    eager = [m_eager.state(), m_eager.state()]
    graph = [m_graph.state(), m_graph.state()]
    with wp.ScopedCapture() as capture:
        substep(m_graph, graph[0], graph[1])
        substep(m_graph, graph[1], graph[0])
    counts = []
    for _ in range(150):
        substep(m_eager, eager[0], eager[1])
        substep(m_eager, eager[1], eager[0])
        wp.capture_launch(capture.graph)
        counts.append(int(m_eager.rigid_contact_count.numpy()[0]))
        assert int(m_graph.rigid_contact_count.numpy()[0]) == counts[-1]
    assert max(counts) > 10 and len(set(counts)) > 2  # the piles touch, and the contact count changes
    np.testing.assert_allclose(graph[0].body_q.numpy(), eager[0].body_q.numpy(), atol=1e-4)
