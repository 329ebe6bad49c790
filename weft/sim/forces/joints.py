"""Joints of maximal-coordinate rigid bodies as forces (``SemiImplicitIntegrator``): every joint pulls its two
anchor frames together with a stiff spring (``model.joint_attach_ke`` / ``joint_attach_kd``) in the directions it
locks, and applies each free axis's drive and limit force (``JointAxis`` mode, target gains, limits), as warp.sim
1.7's Euler integrator does.

Differences from warp.sim 1.7.2 (deliberate): rotation errors are taken along the shortest arc and with a formula
whose derivative is finite at zero error (Warp's ``acos`` form has an infinite derivative there, so gradients through
an aligned joint were NaN); hinge angles use ``atan2``; multi-axis joints (compound, universal, D6) read their axes
from ``joint_axis`` (as ``eval_fk`` does) instead of assuming X, Y, Z; and the locked third axis of a universal joint
(and of a two-axis D6 joint) is held by the attachment spring (Warp's call passes it in force mode with zero action,
which applies no torque).
"""

import weft as wp

from ..articulation import _frame_offset, _hinge_angle, _xyz_angles
from ..model import (
    JOINT_BALL,
    JOINT_D6,
    JOINT_DISTANCE,
    JOINT_FIXED,
    JOINT_FREE,
    JOINT_MODE_FORCE,
    JOINT_MODE_TARGET_POSITION,
    JOINT_MODE_TARGET_VELOCITY,
    JOINT_PRISMATIC,
    JOINT_REVOLUTE,
    JOINT_UNIVERSAL,
)

# angular attachment damping is scaled down for stability (as in warp.sim)
ANGULAR_DAMPING_SCALE = wp.constant(0.01)


@wp.func
def joint_axis_force(q: float, qd: float, act: float, target_ke: float, target_kd: float, lower: float, upper: float,
                     limit_ke: float, limit_kd: float, mode: int):
    """Generalised force of one joint axis: the drive (force, target position or target velocity mode) plus a
    spring-damper that acts only outside [lower, upper] (where it also switches a velocity drive off)."""
    drive = float(0.0)  # noqa: UP018
    if mode == JOINT_MODE_FORCE:
        drive = act
    elif mode == JOINT_MODE_TARGET_POSITION:
        drive = target_ke * (act - q) - target_kd * qd
    elif mode == JOINT_MODE_TARGET_VELOCITY:
        drive = target_ke * (act - qd)
    limit = float(0.0)  # noqa: UP018
    bound = float(0.0)  # noqa: UP018
    outside = False
    if q < lower:
        bound = lower
        outside = True
    elif q > upper:
        bound = upper
        outside = True
    if outside:
        limit = limit_ke * (bound - q) - limit_kd * qd
        if mode == JOINT_MODE_TARGET_VELOCITY:
            drive = 0.0
    return drive + limit


@wp.func
def rotation_vector(r: wp.quat):
    """Axis times angle of ``r`` along the shortest arc; smooth at the identity (no acos, no normalise of 0)."""
    v = wp.vec3(r[0], r[1], r[2])
    w = r[3]
    if w < 0.0:
        v = -v
        w = -w
    s = wp.length(v)
    k = float(0.0)  # noqa: UP018
    if s < 1.0e-6:
        k = 2.0 / w
    else:
        k = 2.0 * wp.atan2(s, w) / s
    return v * k


@wp.func
def axis_force(j: int, q: float, qd: float, joint_act: wp.array(dtype=float), joint_target_ke: wp.array(dtype=float),
               joint_target_kd: wp.array(dtype=float), joint_limit_lower: wp.array(dtype=float),
               joint_limit_upper: wp.array(dtype=float), joint_limit_ke: wp.array(dtype=float),
               joint_limit_kd: wp.array(dtype=float), joint_axis_mode: wp.array(dtype=int)):
    return joint_axis_force(q, qd, joint_act[j], joint_target_ke[j], joint_target_kd[j], joint_limit_lower[j],
                            joint_limit_upper[j], joint_limit_ke[j], joint_limit_kd[j], joint_axis_mode[j])


@wp.func
def carried_axes(a0: wp.vec3, a1: wp.vec3, a2: wp.vec3, ang: wp.vec3):
    """The three rotation axes of a 3-rotation joint at angles ``ang`` (each carried by the rotations before it),
    in the parent anchor frame."""
    off = _frame_offset(a0, a1, a2)
    e0 = wp.quat_rotate(off, wp.vec3(1.0, 0.0, 0.0))
    e1 = wp.quat_rotate(off, wp.vec3(0.0, 1.0, 0.0))
    e2 = wp.quat_rotate(off, wp.vec3(0.0, 0.0, 1.0))
    r0 = wp.quat_from_axis_angle(e0, ang[0])
    b1 = wp.quat_rotate(r0, e1)
    r1 = wp.quat_from_axis_angle(b1, ang[1])
    b2 = wp.quat_rotate(r1 * r0, e2)
    return e0, b1, b2


@wp.func
def rotations_3_state(a0: wp.vec3, a1: wp.vec3, a2: wp.vec3, q_p: wp.quat, r_err: wp.quat, w_err: wp.vec3):
    """Angles, rates and world axes of a 3-rotation joint from the relative rotation ``r_err`` (parent anchor frame)
    and the relative angular velocity ``w_err`` (world)."""
    off = _frame_offset(a0, a1, a2)
    ang = _xyz_angles(wp.quat_inverse(off) * r_err * off)
    e0, b1, b2 = carried_axes(a0, a1, a2, ang)
    w0 = wp.quat_rotate(q_p, e0)
    w1 = wp.quat_rotate(q_p, b1)
    w2 = wp.quat_rotate(q_p, b2)
    # w_err = w0 qd0 + w1 qd1 + w2 qd2 (Cramer's rule)
    det = wp.dot(w0, wp.cross(w1, w2))
    qd = wp.vec3(wp.dot(w_err, wp.cross(w1, w2)), wp.dot(w0, wp.cross(w_err, w2)), wp.dot(w0, wp.cross(w1, w_err)))
    return ang, qd / det, w0, w1, w2


@wp.kernel
def eval_body_joints(body_q: wp.array(dtype=wp.transform), body_qd: wp.array(dtype=wp.spatial_vector),
                     body_com: wp.array(dtype=wp.vec3), joint_type: wp.array(dtype=int),
                     joint_enabled: wp.array(dtype=int), joint_child: wp.array(dtype=int),
                     joint_parent: wp.array(dtype=int), joint_X_p: wp.array(dtype=wp.transform),
                     joint_X_c: wp.array(dtype=wp.transform), joint_axis: wp.array(dtype=wp.vec3),
                     joint_axis_start: wp.array(dtype=int), joint_axis_dim: wp.array(dtype=int, ndim=2),
                     joint_axis_mode: wp.array(dtype=int), joint_act: wp.array(dtype=float),
                     joint_target_ke: wp.array(dtype=float), joint_target_kd: wp.array(dtype=float),
                     joint_limit_lower: wp.array(dtype=float), joint_limit_upper: wp.array(dtype=float),
                     joint_limit_ke: wp.array(dtype=float), joint_limit_kd: wp.array(dtype=float),
                     attach_ke: float, attach_kd: float, body_f: wp.array(dtype=wp.spatial_vector)):
    tid = wp.tid()
    jtype = joint_type[tid]
    if joint_enabled[tid] == 0:
        return
    # free and distance joints exert no force
    if jtype == JOINT_FREE or jtype == JOINT_DISTANCE:
        return
    child = joint_child[tid]
    parent = joint_parent[tid]
    X_wp = joint_X_p[tid]
    r_p = wp.vec3()
    w_p = wp.vec3()
    v_p = wp.vec3()
    if parent >= 0:
        X_wp = body_q[parent] * X_wp
        r_p = wp.transform_get_translation(X_wp) - wp.transform_point(body_q[parent], body_com[parent])
        w_p = wp.spatial_top(body_qd[parent])
        v_p = wp.spatial_bottom(body_qd[parent]) + wp.cross(w_p, r_p)
    X_wc = body_q[child] * joint_X_c[tid]
    r_c = wp.transform_get_translation(X_wc) - wp.transform_point(body_q[child], body_com[child])
    w_c = wp.spatial_top(body_qd[child])
    v_c = wp.spatial_bottom(body_qd[child]) + wp.cross(w_c, r_c)

    q_p = wp.transform_get_rotation(X_wp)
    q_c = wp.transform_get_rotation(X_wc)
    x_err = wp.transform_get_translation(X_wc) - wp.transform_get_translation(X_wp)
    v_err = v_c - v_p
    w_err = w_c - w_p
    r_err = wp.quat_inverse(q_p) * q_c
    lock_ang = wp.quat_rotate(q_p, rotation_vector(r_err)) * attach_ke + w_err * (attach_kd * ANGULAR_DAMPING_SCALE)
    s = joint_axis_start[tid]
    lin_count = joint_axis_dim[tid, 0]
    ang_count = joint_axis_dim[tid, 1]

    # force and torque that pull the child towards the parent (applied with opposite signs)
    f = wp.vec3()
    t = wp.vec3()
    if jtype == JOINT_FIXED:
        f = x_err * attach_ke + v_err * attach_kd
        t = lock_ang
    elif jtype == JOINT_BALL:
        f = x_err * attach_ke + v_err * attach_kd
    elif jtype == JOINT_PRISMATIC:
        a = wp.quat_rotate(q_p, joint_axis[s])
        q = wp.dot(x_err, a)
        qd = wp.dot(v_err, a)
        fq = axis_force(s, q, qd, joint_act, joint_target_ke, joint_target_kd, joint_limit_lower,
                        joint_limit_upper, joint_limit_ke, joint_limit_kd, joint_axis_mode)
        f = (x_err - a * q) * attach_ke + (v_err - a * qd) * attach_kd - a * fq
        t = lock_ang
    elif jtype == JOINT_REVOLUTE:
        a = wp.quat_rotate(q_p, joint_axis[s])
        a_c = wp.quat_rotate(q_c, joint_axis[s])
        q = _hinge_angle(joint_axis[s], r_err)
        qd = wp.dot(w_err, a)
        fq = axis_force(s, q, qd, joint_act, joint_target_ke, joint_target_kd, joint_limit_lower,
                        joint_limit_upper, joint_limit_ke, joint_limit_kd, joint_axis_mode)
        f = x_err * attach_ke + v_err * attach_kd
        t = wp.cross(a, a_c) * attach_ke + (w_err - a * qd) * (attach_kd * ANGULAR_DAMPING_SCALE) - a * fq
    else:
        # compound, universal, D6: linear axes (D6) then up to three carried rotation axes
        pos = wp.vec3()
        vel = wp.vec3()
        for k in range(3):
            if jtype == JOINT_D6 and k < lin_count:
                a = wp.quat_rotate(q_p, joint_axis[s + k])
                q = wp.dot(x_err, a)
                qd = wp.dot(v_err, a)
                fq = axis_force(s + k, q, qd, joint_act, joint_target_ke, joint_target_kd, joint_limit_lower,
                                joint_limit_upper, joint_limit_ke, joint_limit_kd, joint_axis_mode)
                f = f - a * fq
                pos = pos + a * q
                vel = vel + a * qd
        f = f + (x_err - pos) * attach_ke + (v_err - vel) * attach_kd
        ia = s
        n_ang = 3
        if jtype == JOINT_UNIVERSAL:
            n_ang = 2
        elif jtype == JOINT_D6:
            ia = s + lin_count
            n_ang = ang_count
        if n_ang == 0:
            t = lock_ang
        elif n_ang == 1:
            a = wp.quat_rotate(q_p, joint_axis[ia])
            a_c = wp.quat_rotate(q_c, joint_axis[ia])
            q = _hinge_angle(joint_axis[ia], r_err)
            qd = wp.dot(w_err, a)
            fq = axis_force(ia, q, qd, joint_act, joint_target_ke, joint_target_kd, joint_limit_lower,
                            joint_limit_upper, joint_limit_ke, joint_limit_kd, joint_axis_mode)
            t = wp.cross(a, a_c) * attach_ke + (w_err - a * qd) * (attach_kd * ANGULAR_DAMPING_SCALE) - a * fq
        else:
            a0 = joint_axis[ia]
            a1 = joint_axis[ia + 1]
            a2 = wp.cross(a0, a1)
            if n_ang == 3:
                a2 = joint_axis[ia + 2]
            ang, rates, w0, w1, w2 = rotations_3_state(a0, a1, a2, q_p, r_err, w_err)
            f0 = axis_force(ia, ang[0], rates[0], joint_act, joint_target_ke, joint_target_kd, joint_limit_lower,
                            joint_limit_upper, joint_limit_ke, joint_limit_kd, joint_axis_mode)
            f1 = axis_force(ia + 1, ang[1], rates[1], joint_act, joint_target_ke, joint_target_kd, joint_limit_lower,
                            joint_limit_upper, joint_limit_ke, joint_limit_kd, joint_axis_mode)
            f2 = float(0.0)  # noqa: UP018
            if n_ang == 3:
                f2 = axis_force(ia + 2, ang[2], rates[2], joint_act, joint_target_ke, joint_target_kd,
                                joint_limit_lower, joint_limit_upper, joint_limit_ke, joint_limit_kd, joint_axis_mode)
            else:
                # the locked third rotation
                f2 = -attach_ke * ang[2] - attach_kd * ANGULAR_DAMPING_SCALE * rates[2]
            t = -(w0 * f0 + w1 * f1 + w2 * f2)

    if parent >= 0:
        wp.atomic_add(body_f, parent, wp.spatial_vector(t + wp.cross(r_p, f), f))
    wp.atomic_sub(body_f, child, wp.spatial_vector(t + wp.cross(r_c, f), f))


def eval_body_joint_forces(model, state, control, body_f) -> None:
    """Add the joint attachment, drive and limit forces of every enabled joint to ``body_f`` (wrenches about the
    bodies' centres of mass, world frame)."""
    if model.joint_count and body_f is not None:
        wp.launch(eval_body_joints, dim=model.joint_count,
                  inputs=[state.body_q, state.body_qd, model.body_com, model.joint_type, model.joint_enabled,
                          model.joint_child, model.joint_parent, model.joint_X_p, model.joint_X_c, model.joint_axis,
                          model.joint_axis_start, model.joint_axis_dim, model.joint_axis_mode, control.joint_act,
                          model.joint_target_ke, model.joint_target_kd, model.joint_limit_lower,
                          model.joint_limit_upper, model.joint_limit_ke, model.joint_limit_kd, model.joint_attach_ke,
                          model.joint_attach_kd],
                  outputs=[body_f], device=model.device)
