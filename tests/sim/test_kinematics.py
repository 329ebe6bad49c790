"""Joints, forward and inverse kinematics (weft.sim.eval_fk / eval_ik) against float64 NumPy references."""

from __future__ import annotations

import math

import numpy as np
import pytest

import weft as wp
from weft.sim import SimError

# -- float64 reference ------------------------------------------------------------------------------------------


def _qmul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array([aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz])


def _qrot(q, v):
    u, w = np.asarray(q[:3]), q[3]
    return 2.0 * np.dot(u, v) * u + (w * w - np.dot(u, u)) * np.asarray(v) + 2.0 * w * np.cross(u, v)


def _axis_angle(axis, angle):
    axis = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
    return np.array([*(axis * math.sin(angle / 2)), math.cos(angle / 2)])


def _tf_mul(a, b):
    (pa, qa), (pb, qb) = a, b
    return pa + _qrot(qa, pb), _qmul(qa, qb)


def _tf_inv(a):
    p, q = a
    qi = np.array([-q[0], -q[1], -q[2], q[3]])
    return -_qrot(qi, p), qi


def _tf(t):
    return np.array(t.p, dtype=np.float64), np.array(t.q, dtype=np.float64)


def _ref_chain_fk(builder, q):
    """Body poses of a chain of revolute/prismatic joints (parents before children), float64."""
    poses = {}
    for j, jt in enumerate(builder.joint_type):
        parent, child = builder.joint_parent[j], builder.joint_child[j]
        X_p = _tf(builder.joint_X_p[j])
        X_wpj = X_p if parent < 0 else _tf_mul(poses[parent], X_p)
        axis = np.array(builder.joint_axis[builder.joint_axis_start[j]], dtype=np.float64)
        qi = q[builder.joint_q_start[j]]
        if jt == int(wp.sim.JOINT_REVOLUTE):
            X_j = (np.zeros(3), _axis_angle(axis, qi))
        else:
            X_j = (axis * qi, np.array([0.0, 0.0, 0.0, 1.0]))
        poses[child] = _tf_mul(_tf_mul(X_wpj, X_j), _tf_inv(_tf(builder.joint_X_c[j])))
    return poses


def _arm(n_links=4):
    """A chain mixing revolute joints about different axes and one prismatic joint, with offset anchors."""
    b = wp.sim.ModelBuilder()
    rng = np.random.default_rng(3)
    parent = -1
    for i in range(n_links):
        body = b.add_body(origin=wp.transform((0.0, 0.5 * i, 0.0), wp.quat_identity()), m=1.0,
                          I_m=np.eye(3) * 0.1)
        rot = _axis_angle(rng.normal(size=3), rng.uniform(-1, 1))
        parent_xform = wp.transform(tuple(rng.uniform(-0.5, 0.5, 3)), wp.quat(*rot))
        child_xform = wp.transform(tuple(rng.uniform(-0.2, 0.2, 3)), wp.quat_identity())
        axis = tuple(rng.normal(size=3))
        if i == 2:
            b.add_joint_prismatic(parent, body, parent_xform=parent_xform, child_xform=child_xform, axis=axis)
        else:
            b.add_joint_revolute(parent, body, parent_xform=parent_xform, child_xform=child_xform, axis=axis)
        parent = body
    return b


def test_chain_fk_matches_float64_reference():
    b = _arm()
    model = b.finalize("cpu")
    q = np.random.default_rng(0).uniform(-1.5, 1.5, model.joint_coord_count)
    state = model.state()
    wp.sim.eval_fk(model, wp.array(q, dtype=float), model.joint_qd, None, state)
    ref = _ref_chain_fk(b, q)
    got = state.body_q.numpy()
    for body, (p, rq) in ref.items():
        np.testing.assert_allclose(got[body, :3], p, atol=2e-5)
        sign = np.sign(np.dot(got[body, 3:], rq))  # q and -q are the same rotation
        np.testing.assert_allclose(got[body, 3:] * sign, rq, atol=2e-5)


def test_chain_fk_velocities_are_pose_derivatives():
    """Angular velocities from eval_fk equal the finite-difference rate of the body frames along q + t qd; linear
    velocities follow warp.sim's convention (the child's joint-anchor point velocity, the parent's twist taken about
    its centre of mass), rebuilt here in float64 from finite-difference angular velocities."""
    b = _arm()
    model = b.finalize("cpu")
    rng = np.random.default_rng(1)
    q = rng.uniform(-1.0, 1.0, model.joint_coord_count)
    qd = rng.uniform(-1.0, 1.0, model.joint_dof_count)
    state = model.state()
    wp.sim.eval_fk(model, wp.array(q, dtype=float), wp.array(qd, dtype=float), None, state)
    twist = state.body_qd.numpy()
    h = 1e-4
    poses = _ref_chain_fk(b, q)
    plus, minus = _ref_chain_fk(b, q + h * qd), _ref_chain_fk(b, q - h * qd)
    ang = {}
    for body in plus:
        dq = (plus[body][1] - minus[body][1]) / (2 * h)
        qc = poses[body][1]
        ang[body] = 2.0 * _qmul(dq, np.array([-qc[0], -qc[1], -qc[2], qc[3]]))[:3]
        np.testing.assert_allclose(twist[body, :3], ang[body], atol=2e-3)
    lin = {}
    for j in range(len(b.joint_type)):
        parent, child = b.joint_parent[j], b.joint_child[j]
        X_p = _tf(b.joint_X_p[j])
        X_wpj = X_p if parent < 0 else _tf_mul(poses[parent], X_p)
        v = np.zeros(3)
        if parent >= 0:
            com = poses[parent][0] + _qrot(poses[parent][1], np.array(b.body_com[parent], dtype=np.float64))
            v = lin[parent] + np.cross(ang[parent], X_wpj[0] - com)
        if b.joint_type[j] == int(wp.sim.JOINT_PRISMATIC):
            axis = np.array(b.joint_axis[b.joint_axis_start[j]], dtype=np.float64)
            v = v + _qrot(X_wpj[1], axis * qd[b.joint_qd_start[j]])
        lin[child] = v
        np.testing.assert_allclose(twist[child, 3:], v, atol=2e-3)


def _single_joint_builder(kind):
    b = wp.sim.ModelBuilder()
    base = b.add_body(origin=wp.transform((0.1, 0.2, 0.3), wp.quat(*_axis_angle((1, 2, 3), 0.4))), m=1.0,
                      I_m=np.eye(3))
    body = b.add_body(m=1.0, I_m=np.eye(3))
    b.add_joint_fixed(-1, base, parent_xform=wp.transform((0.1, 0.2, 0.3), wp.quat(*_axis_angle((1, 2, 3), 0.4))))
    px = wp.transform((0.3, -0.1, 0.2), wp.quat(*_axis_angle((0, 1, 1), 0.3)))
    cx = wp.transform((-0.1, 0.05, 0.2), wp.quat(*_axis_angle((1, 0, 1), -0.2)))
    JA = wp.sim.JointAxis
    if kind == "revolute":
        b.add_joint_revolute(base, body, px, cx, axis=(0.0, 0.6, 0.8))
    elif kind == "prismatic":
        b.add_joint_prismatic(base, body, px, cx, axis=(1.0, 1.0, 0.0))
    elif kind == "ball":
        b.add_joint_ball(base, body, px, cx)
    elif kind == "free":
        b.add_joint_free(body, parent=base, parent_xform=px, child_xform=cx)
    elif kind == "universal":
        b.add_joint_universal(base, body, JA((1.0, 0.0, 0.0)), JA((0.0, 0.0, 1.0)), px, cx)
    elif kind == "compound":
        b.add_joint_compound(base, body, JA((1.0, 0.0, 0.0)), JA((0.0, 1.0, 0.0)), JA((0.0, 0.0, 1.0)), px, cx)
    elif kind == "d6":
        b.add_joint_d6(base, body, linear_axes=[JA((1.0, 0.0, 0.0)), JA((0.0, 1.0, 0.0))],
                       angular_axes=[JA((0.0, 0.0, 1.0)), JA((1.0, 0.0, 0.0))], parent_xform=px, child_xform=cx)
    return b


@pytest.mark.parametrize("kind", ["revolute", "prismatic", "ball", "free", "universal", "compound", "d6"])
def test_fk_then_ik_recovers_coordinates(kind):
    model = _single_joint_builder(kind).finalize("cpu")
    rng = np.random.default_rng(7)
    n_q, n_qd = model.joint_coord_count, model.joint_dof_count
    q = rng.uniform(-0.6, 0.6, n_q)
    starts = model.joint_q_start.numpy()
    jt = model.joint_type.numpy()
    for j in range(model.joint_count):
        if jt[j] in (int(wp.sim.JOINT_BALL), int(wp.sim.JOINT_FREE)):
            s = starts[j + 1] - 4
            q[s:s + 4] = _axis_angle(rng.normal(size=3), rng.uniform(-1.0, 1.0))
    qd = rng.uniform(-1.0, 1.0, n_qd)
    state = model.state()
    wp.sim.eval_fk(model, wp.array(q, dtype=float), wp.array(qd, dtype=float), None, state)
    q_out = wp.zeros(n_q, dtype=float)
    qd_out = wp.zeros(n_qd, dtype=float)
    wp.sim.eval_ik(model, state, q_out, qd_out)
    got_q = q_out.numpy()
    if kind in ("ball", "free"):  # a quaternion is recovered up to its sign
        s = n_q - 4
        got_q[s:] *= np.sign(np.dot(got_q[s:], q[s:]))
    np.testing.assert_allclose(got_q, q, atol=5e-5)
    np.testing.assert_allclose(qd_out.numpy(), qd, atol=5e-5)


def test_fk_gradient_matches_finite_differences():
    """d(end-effector position)/d(joint_q) through wp.Tape vs central differences (float64 reference FK)."""
    b = _arm()
    model = b.finalize("cpu", requires_grad=True)
    q0 = np.random.default_rng(2).uniform(-1.0, 1.0, model.joint_coord_count)
    q = wp.array(q0, dtype=float, requires_grad=True)
    state = model.state(requires_grad=True)
    tip = model.body_count - 1
    weights = np.array([0.3, -0.7, 0.5])

    @wp.kernel
    def tip_loss(body_q: wp.array(dtype=wp.transform), tip: int, w: wp.vec3, loss: wp.array(dtype=float)):
        loss[0] = wp.dot(wp.transform_get_translation(body_q[tip]), w)

    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.sim.eval_fk(model, q, model.joint_qd, None, state)
        wp.launch(tip_loss, dim=1, inputs=[state.body_q, tip, wp.vec3(*weights)], outputs=[loss])
    tape.backward(loss)
    grad = q.grad.numpy()

    def f(qq):
        return float(np.dot(_ref_chain_fk(b, qq)[tip][0], weights))

    h = 1e-6
    fd = np.array([(f(q0 + h * e) - f(q0 - h * e)) / (2 * h) for e in np.eye(len(q0))])
    np.testing.assert_allclose(grad, fd, rtol=1e-3, atol=1e-4)


def test_mask_skips_articulations():
    b = wp.sim.ModelBuilder()
    for k in range(2):
        b.add_articulation()
        body = b.add_body(m=1.0, I_m=np.eye(3))
        b.add_joint_revolute(-1, body, parent_xform=wp.transform((float(k), 0.0, 0.0), wp.quat_identity()),
                             child_xform=wp.transform((0.0, 1.0, 0.0), wp.quat_identity()), axis=(0.0, 0.0, 1.0))
    model = b.finalize("cpu")
    state = model.state()
    before = state.body_q.numpy().copy()
    q = wp.array([0.5, 0.5], dtype=float)
    wp.sim.eval_fk(model, q, model.joint_qd, wp.array([False, True], dtype=wp.bool), state)
    after = state.body_q.numpy()
    np.testing.assert_array_equal(after[0], before[0])
    assert not np.allclose(after[1], before[1])


def test_bad_joints_are_clear_errors():
    b = wp.sim.ModelBuilder()
    body = b.add_body(m=1.0)
    with pytest.raises(SimError, match="'child' = 5"):
        b.add_joint_revolute(-1, 5)
    with pytest.raises(SimError, match="same body"):
        b.add_joint_revolute(body, body)
    with pytest.raises(SimError, match="unknown 'joint_type'"):
        b.add_joint(42, -1, body)
    with pytest.raises(SimError, match="'axis'"):
        wp.sim.JointAxis((0.0, 0.0, 0.0))
    b.add_joint_revolute(-1, body)
    model = b.finalize("cpu")
    with pytest.raises(SimError, match="'joint_q' must have 1"):
        wp.sim.eval_fk(model, wp.zeros(3, dtype=float), model.joint_qd, None, model.state())


@wp.kernel
def _world_points(body_q: wp.array(dtype=wp.transform), bodies: wp.array(dtype=int),
                  points: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out[i] = wp.transform_point(body_q[bodies[i]], points[i])


def test_point_jacobian_matches_tape_jacobian():
    import os

    arm = wp.sim.ModelBuilder()
    wp.sim.parse_urdf(os.path.join(os.path.dirname(wp.sim.__file__), "assets", "arm7.urdf"), arm)
    b = wp.sim.ModelBuilder()
    for i in range(2):
        b.add_builder(arm, xform=wp.transform((float(i), 0.0, 0.0), wp.quat_identity()))
    # a third articulation: a prismatic joint then a revolute one, offset anchors
    base = b.add_body(origin=wp.transform_identity())
    b.add_shape_box(base, hx=0.1, hy=0.1, hz=0.1)
    b.add_articulation()
    b.add_joint_prismatic(-1, base, parent_xform=wp.transform((0.0, 1.0, 2.0), wp.quat_identity()),
                          axis=(0.6, 0.0, 0.8))
    tip = b.add_body(origin=wp.transform_identity())
    b.add_shape_sphere(tip, radius=0.05)
    b.add_joint_revolute(base, tip, parent_xform=wp.transform((0.2, 0.0, 0.0), wp.quat_identity()),
                         child_xform=wp.transform((0.0, -0.3, 0.0), wp.quat_identity()), axis=(0.0, 0.0, 1.0))
    m = b.finalize("cpu", requires_grad=True)
    q = wp.array(np.random.default_rng(3).uniform(-1, 1, m.joint_coord_count).astype(np.float32), dtype=float,
                 requires_grad=True)
    qd = wp.zeros(m.joint_dof_count, dtype=float, requires_grad=True)
    state = m.state()
    nb = arm.body_count
    bodies = wp.array([nb - 1, 2 * nb - 1, tip, 3], dtype=int)
    points = wp.array([(0.0, 0.0, 0.1), (0.05, 0.0, 0.1), (0.1, 0.0, 0.0), (0.0, 0.02, 0.03)], dtype=wp.vec3)
    out = wp.zeros(4, dtype=wp.vec3, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.sim.eval_fk(m, q, qd, None, state)
        wp.launch(_world_points, dim=4, inputs=[state.body_q, bodies, points], outputs=[out])
    J = wp.sim.eval_point_jacobian(m, state, bodies, points).numpy()
    qs = m.joint_q_start.numpy()
    art = m.articulation_start.numpy()
    owner = [0, 1, 2, 0]  # articulation of each point
    for k in range(3):
        for i in range(4):
            seed = np.zeros((4, 3), dtype=np.float32)
            seed[i, k] = 1.0
            tape.backward(grads={out: wp.array(seed, dtype=wp.vec3)})
            g = q.grad.numpy().copy()  # a view of q.grad on the CPU, which zero() clears
            tape.zero()
            lo, hi = qs[art[owner[i]]], qs[art[owner[i] + 1]]
            assert not np.delete(g, np.arange(lo, hi)).any()
            np.testing.assert_allclose(J[i, k, : hi - lo], g[lo:hi], atol=2e-5, err_msg=f"point {i} row {k}")
            assert not J[i, k, hi - lo:].any()
    with pytest.raises(SimError, match="'bodies' has 4 entries"):
        wp.sim.eval_point_jacobian(m, state, bodies, wp.zeros(3, dtype=wp.vec3))
    fb = wp.sim.ModelBuilder()
    body = fb.add_body(origin=wp.transform_identity())
    fb.add_joint_free(body)
    with pytest.raises(SimError, match="not supported"):
        fm = fb.finalize("cpu")
        wp.sim.eval_point_jacobian(fm, fm.state(), wp.array([0], dtype=int), wp.zeros(1, dtype=wp.vec3))


# -- eval_fk's hand-written backward (weft/sim/fk_adjoint.py) -----------------------------------------------------


def _tree_model():
    """Two articulations mixing free, revolute, ball, prismatic and fixed joints, a branch, random anchors (half the
    child frames the identity) and COM offsets."""
    rng = np.random.default_rng(1)

    def rtf():
        return wp.transform(tuple(rng.uniform(-0.5, 0.5, 3)), wp.quat(*_axis_angle(rng.normal(size=3),
                                                                                     rng.uniform(-1, 1))))

    b = wp.sim.ModelBuilder()
    for _ in range(2):
        b.add_articulation()
        bodies = [b.add_body(m=1.0, I_m=np.eye(3), com=tuple(rng.uniform(-0.2, 0.2, 3))) for _ in range(6)]
        base, l1, l2, l3, l4, l5 = bodies
        b.add_joint_free(base, parent_xform=rtf(), child_xform=rtf())
        b.add_joint_revolute(base, l1, rtf(), rtf(), axis=tuple(rng.normal(size=3)))
        b.add_joint_ball(l1, l2, rtf(), rtf())
        b.add_joint_prismatic(base, l3, rtf(), rtf(), axis=tuple(rng.normal(size=3)))  # a second branch
        b.add_joint_fixed(l3, l4, rtf(), rtf())
        b.add_joint_revolute(l4, l5, rtf(), rtf(), axis=tuple(rng.normal(size=3)))
    model = b.finalize("cpu", requires_grad=True)
    # every other child frame the identity (as URDF/MJCF joints have them): eval_fk takes shortcuts there
    xc = model.joint_X_c.numpy()
    xc[::2] = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
    model.joint_X_c.assign(xc)
    return model


@wp.kernel
def _copy_bodies(body_q: wp.array(dtype=wp.transform), body_qd: wp.array(dtype=wp.spatial_vector),
                 out_q: wp.array(dtype=wp.transform), out_qd: wp.array(dtype=wp.spatial_vector)):
    i = wp.tid()
    out_q[i] = body_q[i]
    out_qd[i] = body_qd[i]


@wp.kernel
def _pose_loss(body_q: wp.array(dtype=wp.transform), body_qd: wp.array(dtype=wp.spatial_vector),
               w: wp.array(dtype=wp.transform), wd: wp.array(dtype=wp.spatial_vector), loss: wp.array(dtype=float)):
    i = wp.tid()
    t = body_q[i]
    u = w[i]
    s = wp.dot(body_qd[i], wd[i])
    for k in range(7):
        s += t[k] * u[k] * t[k]  # quadratic: the backward reads the poses
    wp.atomic_add(loss, 0, s)


def _taped_fk(model, kernel, qs, qd, weights):
    """Tape eval_fk's kernel once per entry of ``qs`` into the same state (each result copied out before the next
    overwrites it); returns the gradients of every differentiable input and the loss."""
    for name in ("joint_X_p", "joint_X_c", "joint_axis", "body_com"):
        getattr(model, name).grad.zero_()
    qs = [wp.array(q, dtype=float, requires_grad=True) for q in qs]
    qd = wp.array(qd, dtype=float, requires_grad=True)
    state = model.state(requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        for q, (w, wd) in zip(qs, weights):
            wp.launch(kernel, dim=model.articulation_count,
                      inputs=[model.articulation_start, wp.zeros(1, dtype=int), 0, q, qd, model.joint_q_start,
                              model.joint_qd_start, model.joint_type, model.joint_parent, model.joint_child,
                              model.joint_ancestor, model.joint_X_p, model.joint_X_c, model.joint_axis,
                              model.joint_axis_start, model.joint_axis_dim, model.body_com],
                      outputs=[state.body_q, state.body_qd])
            out = model.state(requires_grad=True)
            wp.launch(_copy_bodies, dim=model.body_count, inputs=[state.body_q, state.body_qd],
                      outputs=[out.body_q, out.body_qd])
            wp.launch(_pose_loss, dim=model.body_count, inputs=[out.body_q, out.body_qd, w, wd], outputs=[loss])
    tape.backward(loss)
    grads = {f"q{k}": q.grad.numpy().copy() for k, q in enumerate(qs)}
    grads["qd"] = qd.grad.numpy().copy()
    for name in ("joint_X_p", "joint_X_c", "joint_axis", "body_com"):
        grads[name] = getattr(model, name).grad.numpy().copy()
    return grads, float(loss.numpy()[0])


def test_fk_hand_adjoint_matches_generated_adjoint_and_fd():
    """The hand-written backward gives the generated adjoint's gradients for every input (raw quaternion components
    off the unit sphere included), also when eval_fk overwrites the state it wrote before on the same tape and when
    only poses are differentiated; the joint_q gradient matches central differences."""
    from weft.sim.articulation import _fk_kernel, fk_kernel

    model = _tree_model()
    hand = fk_kernel(model)
    assert hand.custom_adjoint is not None
    generated = _fk_kernel(16, False)
    rng = np.random.default_rng(4)
    q = model.joint_q.numpy() + rng.uniform(-0.3, 0.3, model.joint_coord_count)  # quaternions not unit
    q2 = q + rng.uniform(-0.3, 0.3, q.shape)
    qd = rng.uniform(-1.0, 1.0, model.joint_dof_count)
    weights = [(wp.array(rng.normal(size=(model.body_count, 7)), dtype=wp.transform),
                wp.array(rng.normal(size=(model.body_count, 6)), dtype=wp.spatial_vector)) for _ in range(2)]
    # the last case differentiates poses only (body_qd's gradient stays zero: the backward skips its twist half)
    pose_only = [(w, wp.zeros(model.body_count, dtype=wp.spatial_vector)) for w, _ in weights]
    for qs, ws in (([q], weights), ([q, q2], weights), ([q, q2], pose_only)):
        got, _ = _taped_fk(model, hand, qs, qd, ws)
        ref, _ = _taped_fk(model, generated, qs, qd, ws)
        for key in ref:
            np.testing.assert_allclose(got[key], ref[key], atol=2e-5 * max(1.0, np.abs(ref[key]).max()),
                                       err_msg=key)
    # directional central difference of the loss in q (float32 forward, h = 1e-3)
    d = rng.normal(size=q.shape)
    h = 1e-3
    lp = _taped_fk(model, hand, [q + h * d], qd, weights)[1]
    lm = _taped_fk(model, hand, [q - h * d], qd, weights)[1]
    got, _ = _taped_fk(model, hand, [q], qd, weights)
    np.testing.assert_allclose(np.dot(got["q0"], d), (lp - lm) / (2 * h), rtol=5e-3)


def _rows_after_zero(model, kernel, q, qd, seeds):
    """One tape of eval_fk's kernel; per seed (body_q, body_qd gradients of a copy of the bodies) a backward, the
    gradients of every input read, then tape.zero() (pending zeros: the next row's backward sees them)."""
    q = wp.array(q, dtype=float, requires_grad=True)
    qd = wp.array(qd, dtype=float, requires_grad=True)
    state = model.state(requires_grad=True)
    out = model.state(requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(kernel, dim=model.articulation_count,
                  inputs=[model.articulation_start, wp.zeros(1, dtype=int), 0, q, qd, model.joint_q_start,
                          model.joint_qd_start, model.joint_type, model.joint_parent, model.joint_child,
                          model.joint_ancestor, model.joint_X_p, model.joint_X_c, model.joint_axis,
                          model.joint_axis_start, model.joint_axis_dim, model.body_com],
                  outputs=[state.body_q, state.body_qd])
        wp.launch(_copy_bodies, dim=model.body_count, inputs=[state.body_q, state.body_qd],
                  outputs=[out.body_q, out.body_qd])
    tape.zero()
    rows = []
    for gq, gqd in seeds:
        tape.backward(grads={out.body_q: gq, out.body_qd: gqd})
        rows.append({"q": q.grad.numpy().copy(), "qd": qd.grad.numpy().copy(),
                     **{n: getattr(model, n).grad.numpy().copy()
                        for n in ("joint_X_p", "joint_X_c", "joint_axis", "body_com")}})
        tape.zero()
    return rows


def test_fk_hand_adjoint_rows_after_tape_zero():
    """Backward rows on one tape with tape.zero() between them (its zeros pending until touched), pose-only rows
    (the twist half skipped on a pending body_qd gradient) and a row with twist gradients between them: every row
    gives the generated adjoint's gradients."""
    from weft.sim.articulation import _fk_kernel, fk_kernel

    model = _tree_model()
    rng = np.random.default_rng(7)
    q = model.joint_q.numpy() + rng.uniform(-0.3, 0.3, model.joint_coord_count)
    qd = rng.uniform(-1.0, 1.0, model.joint_dof_count)
    nb = model.body_count

    def seed(twist):
        return (wp.array(rng.normal(size=(nb, 7)), dtype=wp.transform),
                wp.array(rng.normal(size=(nb, 6)) if twist else np.zeros((nb, 6)), dtype=wp.spatial_vector))

    seeds = [seed(False), seed(False), seed(True), seed(False)]
    got = _rows_after_zero(model, fk_kernel(model), q, qd, seeds)
    ref = _rows_after_zero(model, _fk_kernel(16, False), q, qd, seeds)
    for k, (g, r) in enumerate(zip(got, ref)):
        for key in r:
            np.testing.assert_allclose(g[key], r[key], atol=2e-5 * max(1.0, np.abs(r[key]).max()),
                                       err_msg=f"row {k} {key}")
    assert np.abs(ref[2]["qd"]).max() > 0.1 and not ref[0]["qd"].any()  # the twist row differs from pose rows


def test_fk_kernel_variant_reading_parents_outside_its_articulation():
    """A second articulation hanging from a body of the first reads that pose from body_q (the kernel variant that
    the Tape copies body_q / body_qd for); models whose parents all lie inside their articulation get the variant
    that reads neither. Both backward passes give the generated adjoint's gradients, also after an overwrite."""
    from weft.sim.articulation import _fk_kernel, fk_kernel

    rng = np.random.default_rng(5)
    b = wp.sim.ModelBuilder()
    b.add_articulation()
    base = b.add_body(m=1.0, I_m=np.eye(3), com=(0.1, 0.0, 0.0))
    b.add_joint_revolute(-1, base, wp.transform((0.0, 1.0, 0.0), wp.quat_identity()), axis=(0.0, 0.0, 1.0))
    link = b.add_body(m=1.0, I_m=np.eye(3))
    b.add_joint_revolute(base, link, wp.transform((0.5, 0.0, 0.0), wp.quat_identity()), axis=(0.0, 1.0, 0.0))
    b.add_articulation()
    hang = b.add_body(m=1.0, I_m=np.eye(3), com=(0.0, -0.1, 0.0))
    b.add_joint_prismatic(link, hang, wp.transform((0.0, -0.3, 0.2), wp.quat_identity()), axis=(0.0, 1.0, 0.0))
    model = b.finalize("cpu", requires_grad=True)
    kernel = fk_kernel(model)
    assert kernel.custom_adjoint is not None and kernel is not _fk_kernel(16, True, True)
    assert fk_kernel(_tree_model()) is _fk_kernel(16, True, True)
    q = rng.uniform(-1.0, 1.0, model.joint_coord_count)
    qd = rng.uniform(-1.0, 1.0, model.joint_dof_count)
    weights = [(wp.array(rng.normal(size=(model.body_count, 7)), dtype=wp.transform),
                wp.array(rng.normal(size=(model.body_count, 6)), dtype=wp.spatial_vector)) for _ in range(2)]
    # one thread per articulation: the hanging one may read its parent before or after that is written, so the
    # model's (and every new state's) poses are set to the result first and the overwriting launch repeats q
    s = model.state()
    wp.sim.eval_fk(model, wp.array(q, dtype=float), wp.array(qd, dtype=float), None, s)
    model.body_q.assign(s.body_q)
    model.body_qd.assign(s.body_qd)
    for qs in ([q], [q, q]):
        got, _ = _taped_fk(model, kernel, qs, qd, weights)
        ref, _ = _taped_fk(model, _fk_kernel(16, False), qs, qd, weights)
        for key in ref:
            np.testing.assert_allclose(got[key], ref[key], atol=2e-5 * max(1.0, np.abs(ref[key]).max()),
                                       err_msg=key)
