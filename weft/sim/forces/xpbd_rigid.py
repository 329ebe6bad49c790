"""Rigid-body constraints of the ``XPBDIntegrator`` (maximal coordinates, Macklin et al. 2016; Mueller et al. 2020,
"Detailed rigid body simulation with extended position based dynamics").

Each sweep projects every joint from the sweep's body poses (Jacobi: one thread per joint, corrections summed per
body), applies them, then projects every rigid contact the same way. A correction is a positional impulse ``P``
(impulse times ``dt``) at a point ``r`` from a body's centre of mass, or an angular one ``L``: the body moves by
``inv_m P`` and turns by ``I^-1 (r x P + L)`` (world-frame inverse inertia), and its velocity changes by the same
over ``dt``. For a constraint ``C`` with direction ``n`` the impulse is ``-C / (w_a + w_b + compliance / dt^2)``
with the generalised inverse masses ``w = 1/m + (r x n) . I^-1 (r x n)`` (positional) or ``w = n . I^-1 n``
(angular); a joint's 3-D point lock and rotation lock are solved as one linearised 3 x 3 system each
(``K = sum 1/m - [r]x I^-1 [r]x``, resp. ``sum I^-1``), which is smooth where the gap closes (a normalised gap
direction made the adjoint blow up there). Body deltas hold ``(L, P) / dt`` (warp.sim's convention: the particle-shape contacts write the same).

Joints: fixed (position and orientation locked), revolute (position locked, the hinge axes aligned; limits and a
target-position drive with compliance ``1 / target_ke`` and damping ``target_kd``, or a target-velocity drive, about
the axis), prismatic (orientation and the two directions normal to the axis locked; limits and drive along it), ball
(position locked); universal, compound and D6 joints: the angles of eval_fk's successive rotations, each limited and
driven along its gradient (the dual basis of the rotation axes), a universal's third angle locked, a D6 joint's
linear axes limited and driven and the directions normal to them locked; free and distance joints constrain
nothing. Rigid contacts: non-penetration along the contact normal and static (positional) Coulomb friction
on the tangential displacement of the contact points over the step, capped at ``mu`` times the normal impulse, and
torsional / rolling friction (``model.rigid_contact_torsional_friction`` / ``rolling_friction``, as warp.sim) against
the relative angular velocity about / across the normal, capped at ``mu`` times the coefficient times it; with
``rigid_contact_con_weighting`` each body's contact corrections are averaged over its contacts. Restitution (with
``enable_restitution``): after the sweeps, the normal velocity of each touching contact is set to ``-e`` times its
value at the start of the step (``e`` the mean of the two shapes' restitution).
"""

import weft as wp

from ..articulation import _frame_offset, _hinge_angle, _xyz_angles
from ..model import (
    JOINT_BALL,
    JOINT_COMPOUND,
    JOINT_D6,
    JOINT_FIXED,
    JOINT_MODE_FORCE,
    JOINT_MODE_TARGET_POSITION,
    JOINT_MODE_TARGET_VELOCITY,
    JOINT_PRISMATIC,
    JOINT_REVOLUTE,
    JOINT_UNIVERSAL,
    ModelShapeGeometry,
    ModelShapeMaterials,
)
from .joints import rotation_vector


@wp.func
def world_inv_inertia_times(q: wp.quat, inv_I: wp.mat33, v: wp.vec3):
    """``R inv_I R^T v``: the world-frame inverse inertia applied to ``v``."""
    return wp.quat_rotate(q, inv_I * wp.quat_rotate_inv(q, v))


@wp.func
def positional_weight(inv_m: float, inv_I: wp.mat33, q: wp.quat, r: wp.vec3, n: wp.vec3):
    rn = wp.cross(r, n)
    return inv_m + wp.dot(rn, world_inv_inertia_times(q, inv_I, rn))


@wp.func
def angular_weight(inv_I: wp.mat33, q: wp.quat, n: wp.vec3):
    return wp.dot(n, world_inv_inertia_times(q, inv_I, n))


@wp.func
def positional_impulse(err: wp.vec3, w_other: float, inv_m: float, inv_I: wp.mat33, q: wp.quat, r: wp.vec3,
                       inv_m_p: float, inv_I_p: wp.mat33, q_p: wp.quat, r_p: wp.vec3, alpha: float):
    """Positional impulse on the child that drives the error ``err`` (child anchor minus parent anchor) to zero
    (the parent gets its negative); ``alpha`` = compliance / dt^2."""
    c = wp.length(err)
    if c < 1.0e-9:
        return wp.vec3()
    n = err / c
    w = positional_weight(inv_m, inv_I, q, r, n) + positional_weight(inv_m_p, inv_I_p, q_p, r_p, n) + w_other
    if w <= 0.0:
        return wp.vec3()
    return n * (-c / (w + alpha))


@wp.func
def world_inv_inertia(q: wp.quat, inv_I: wp.mat33):
    R = wp.quat_to_matrix(q)
    return R * inv_I * wp.transpose(R)


@wp.func
def point_lock_impulse(err: wp.vec3, inv_m: float, inv_I: wp.mat33, q: wp.quat, r: wp.vec3, inv_m_p: float,
                       inv_I_p: wp.mat33, q_p: wp.quat, r_p: wp.vec3, alpha: float):
    """Positional impulse on the child that closes the 3-D anchor gap ``err`` (child minus parent anchor) in one
    linearised step: ``-K^-1 err`` with ``K = sum (1/m - [r]x I^-1 [r]x) + alpha``. Smooth in ``err`` (no normal
    to normalise, so its adjoint stays finite as the gap closes)."""
    sc = wp.skew(r)
    sp = wp.skew(r_p)
    K = wp.identity(3, dtype=float) * (inv_m + inv_m_p + alpha) - sc * world_inv_inertia(q, inv_I) * sc - (
        sp * world_inv_inertia(q_p, inv_I_p) * sp)
    if wp.determinant(K) <= 1.0e-20:
        return wp.vec3()
    return -(wp.inverse(K) * err)


@wp.func
def rotation_lock_impulse(err: wp.vec3, inv_I: wp.mat33, q: wp.quat, inv_I_p: wp.mat33, q_p: wp.quat,
                          alpha: float):
    """Angular impulse on the child that undoes the rotation error ``err`` (world axis times angle) in one
    linearised step: ``-(I_c^-1 + I_p^-1 + alpha)^-1 err``."""
    K = world_inv_inertia(q, inv_I) + world_inv_inertia(q_p, inv_I_p) + wp.identity(3, dtype=float) * alpha
    if wp.determinant(K) <= 1.0e-20:
        return wp.vec3()
    return -(wp.inverse(K) * err)


@wp.func
def axis_correction(x: float, rate: float, w: float, lower: float, upper: float, mode: int, target: float,
                    target_ke: float, target_kd: float, dt: float):
    """Impulse (times dt) along a joint axis with coordinate ``x``, rate ``rate`` and generalised inverse mass
    ``w``: a hard limit outside [lower, upper], else a target-position drive with compliance ``1 / target_ke`` and
    XPBD damping ``target_kd`` (Macklin et al. 2016: gamma = compliance kd / dt), or a target-velocity drive that
    moves the rate towards ``target`` (the position error ``(rate - target) dt``, compliance ``1 / target_ke``; as
    warp.sim 1.7)."""
    if w <= 0.0:
        return 0.0
    if x < lower:
        return (lower - x) / w
    if x > upper:
        return (upper - x) / w
    if target_ke > 0.0:
        alpha = 1.0 / (target_ke * dt * dt)
        gamma = target_kd / (target_ke * dt)
        if mode == JOINT_MODE_TARGET_POSITION:
            return -(x - target + gamma * rate * dt) / ((1.0 + gamma) * w + alpha)
        if mode == JOINT_MODE_TARGET_VELOCITY:
            return -(rate - target) * dt / ((1.0 + gamma) * w + alpha)
    return 0.0


@wp.func
def angles_and_gradients(a0: wp.vec3, a1: wp.vec3, a2: wp.vec3, q_p: wp.quat, q_c: wp.quat):
    """Angles of three successive rotations (about a0, then a1 as carried by the first, then a2 as carried by both;
    eval_fk's convention) between the anchor frames ``q_p`` and ``q_c``, and the world-frame gradient of each angle
    with respect to a rotation of the child: the dual basis ``g_k`` of the rotation axes (d angle_k = g_k . omega)."""
    off = _frame_offset(a0, a1, a2)
    ang = _xyz_angles(wp.quat_inverse(off) * wp.quat_inverse(q_p) * q_c * off)
    e0 = wp.quat_rotate(off, wp.vec3(1.0, 0.0, 0.0))
    e1 = wp.quat_rotate(off, wp.vec3(0.0, 1.0, 0.0))
    e2 = wp.quat_rotate(off, wp.vec3(0.0, 0.0, 1.0))
    r0 = wp.quat_from_axis_angle(e0, ang[0])
    b1 = wp.quat_rotate(r0, e1)
    b2 = wp.quat_rotate(wp.quat_from_axis_angle(b1, ang[1]) * r0, e2)
    inv_det = 1.0 / wp.dot(e0, wp.cross(b1, b2))
    return (ang, wp.quat_rotate(q_p, wp.cross(b1, b2) * inv_det), wp.quat_rotate(q_p, wp.cross(b2, e0) * inv_det),
            wp.quat_rotate(q_p, wp.cross(e0, b1) * inv_det))


@wp.func
def axis_angular_impulse(angle: float, g: wp.vec3, w_rel: wp.vec3, inv_I_c: wp.mat33, q_bc: wp.quat,
                         inv_I_p: wp.mat33, q_bp: wp.quat, k: int, joint_axis_mode: wp.array(dtype=int),
                         joint_act: wp.array(dtype=float), joint_target_ke: wp.array(dtype=float),
                         joint_target_kd: wp.array(dtype=float), joint_limit_lower: wp.array(dtype=float),
                         joint_limit_upper: wp.array(dtype=float), dt: float):
    """Angular impulse on the child for the limits and drive of joint axis ``k``, whose angle has gradient ``g``."""
    w = angular_weight(inv_I_c, q_bc, g) + angular_weight(inv_I_p, q_bp, g)
    return g * axis_correction(angle, wp.dot(w_rel, g), w, joint_limit_lower[k], joint_limit_upper[k],
                               joint_axis_mode[k], joint_act[k], joint_target_ke[k], joint_target_kd[k], dt)


@wp.func
def axis_linear_impulse(x_err: wp.vec3, a: wp.vec3, v_rel: wp.vec3, inv_m_c: float, inv_I_c: wp.mat33,
                        q_bc: wp.quat, r_c: wp.vec3, inv_m_p: float, inv_I_p: wp.mat33, q_bp: wp.quat, r_p: wp.vec3,
                        k: int, joint_axis_mode: wp.array(dtype=int), joint_act: wp.array(dtype=float),
                        joint_target_ke: wp.array(dtype=float), joint_target_kd: wp.array(dtype=float),
                        joint_limit_lower: wp.array(dtype=float), joint_limit_upper: wp.array(dtype=float),
                        dt: float):
    """Positional impulse on the child for the limits and drive of linear joint axis ``k`` (world direction ``a``)."""
    w = positional_weight(inv_m_c, inv_I_c, q_bc, r_c, a) + positional_weight(inv_m_p, inv_I_p, q_bp, r_p, a)
    return a * axis_correction(wp.dot(x_err, a), wp.dot(v_rel, a), w, joint_limit_lower[k], joint_limit_upper[k],
                               joint_axis_mode[k], joint_act[k], joint_target_ke[k], joint_target_kd[k], dt)


@wp.func
def joint_axis_counts(jtype: int, d6_lin: int, d6_ang: int):
    """A joint's linear and angular axis counts (D6: as declared; prismatic 1 + 0, revolute 0 + 1, universal 0 + 2,
    compound 0 + 3; fixed, ball and free: none)."""
    n_lin = 0
    n_ang = 0
    if jtype == JOINT_D6:
        n_lin = d6_lin
        n_ang = d6_ang
    elif jtype == JOINT_PRISMATIC:
        n_lin = 1
    elif jtype == JOINT_REVOLUTE:
        n_ang = 1
    elif jtype == JOINT_UNIVERSAL:
        n_ang = 2
    elif jtype == JOINT_COMPOUND:
        n_ang = 3
    return n_lin, n_ang


@wp.kernel
def solve_rigid_joints(body_q: wp.array(dtype=wp.transform), body_qd: wp.array(dtype=wp.spatial_vector),
                       body_com: wp.array(dtype=wp.vec3),
                       body_inv_mass: wp.array(dtype=float), body_inv_inertia: wp.array(dtype=wp.mat33),
                       joint_type: wp.array(dtype=int), joint_enabled: wp.array(dtype=int),
                       joint_parent: wp.array(dtype=int), joint_child: wp.array(dtype=int),
                       joint_X_p: wp.array(dtype=wp.transform), joint_X_c: wp.array(dtype=wp.transform),
                       joint_axis: wp.array(dtype=wp.vec3), joint_axis_start: wp.array(dtype=int),
                       joint_axis_dim: wp.array(dtype=int, ndim=2),
                       joint_axis_mode: wp.array(dtype=int), joint_act: wp.array(dtype=float),
                       joint_target_ke: wp.array(dtype=float), joint_target_kd: wp.array(dtype=float),
                       joint_limit_lower: wp.array(dtype=float),
                       joint_limit_upper: wp.array(dtype=float), joint_linear_compliance: wp.array(dtype=float),
                       joint_angular_compliance: wp.array(dtype=float), linear_relaxation: float,
                       angular_relaxation: float, dt: float, deltas: wp.array(dtype=wp.spatial_vector)):
    tid = wp.tid()
    jtype = joint_type[tid]
    if joint_enabled[tid] == 0:
        return
    if jtype != JOINT_FIXED and jtype != JOINT_REVOLUTE and jtype != JOINT_PRISMATIC and jtype != JOINT_BALL and (
            jtype != JOINT_UNIVERSAL and jtype != JOINT_COMPOUND and jtype != JOINT_D6):
        return
    c = joint_child[tid]
    p = joint_parent[tid]
    X_wp = joint_X_p[tid]
    q_bp = wp.quat_identity()
    inv_m_p = float(0.0)  # noqa: UP018
    inv_I_p = wp.mat33()
    r_p = wp.vec3()
    w_p = wp.vec3()
    v_p = wp.vec3()
    if p >= 0:
        X_wp = body_q[p] * X_wp
        q_bp = wp.transform_get_rotation(body_q[p])
        inv_m_p = body_inv_mass[p]
        inv_I_p = body_inv_inertia[p]
        r_p = wp.transform_get_translation(X_wp) - wp.transform_point(body_q[p], body_com[p])
        w_p = wp.spatial_top(body_qd[p])
        v_p = wp.spatial_bottom(body_qd[p]) + wp.cross(w_p, r_p)
    X_wc = body_q[c] * joint_X_c[tid]
    q_bc = wp.transform_get_rotation(body_q[c])
    inv_m_c = body_inv_mass[c]
    inv_I_c = body_inv_inertia[c]
    r_c = wp.transform_get_translation(X_wc) - wp.transform_point(body_q[c], body_com[c])
    w_c = wp.spatial_top(body_qd[c])
    v_c = wp.spatial_bottom(body_qd[c]) + wp.cross(w_c, r_c)
    q_p = wp.transform_get_rotation(X_wp)
    q_c = wp.transform_get_rotation(X_wc)
    x_err = wp.transform_get_translation(X_wc) - wp.transform_get_translation(X_wp)
    inv_dt2 = 1.0 / (dt * dt)
    lin_alpha = joint_linear_compliance[tid] * inv_dt2
    ang_alpha = joint_angular_compliance[tid] * inv_dt2
    s = joint_axis_start[tid]

    # linear and angular axis counts (D6: as declared; prismatic 1 + 0, revolute 0 + 1, universal 0 + 2,
    # compound 0 + 3; fixed 0 + 0 locks all; ball locks only the position)
    n_lin, n_ang = joint_axis_counts(jtype, joint_axis_dim[tid, 0], joint_axis_dim[tid, 1])
    if jtype == JOINT_BALL:
        n_ang = 3
    v_rel = v_c - v_p
    w_rel = w_c - w_p

    P = wp.vec3()  # positional impulse on the child at its anchor (the parent gets -P at its anchor)
    L = wp.vec3()  # angular impulse on the child (the parent gets -L)
    if n_lin == 0:
        P = point_lock_impulse(x_err, inv_m_c, inv_I_c, q_bc, r_c, inv_m_p, inv_I_p, q_bp, r_p, lin_alpha)
    else:
        # lock the directions normal to the free axes (an orthonormal basis of their span), then each axis's limits
        # and drive
        a0 = wp.quat_rotate(q_p, joint_axis[s])
        perp = x_err - a0 * wp.dot(x_err, a0)
        if n_lin == 2:
            u1 = wp.quat_rotate(q_p, joint_axis[s + 1])
            u1 = wp.normalize(u1 - a0 * wp.dot(u1, a0))
            perp = perp - u1 * wp.dot(perp, u1)
        if n_lin < 3:
            P = positional_impulse(perp, 0.0, inv_m_c, inv_I_c, q_bc, r_c, inv_m_p, inv_I_p, q_bp, r_p, lin_alpha)
        for k in range(3):
            if k < n_lin:
                P = P + axis_linear_impulse(x_err, wp.quat_rotate(q_p, joint_axis[s + k]), v_rel, inv_m_c, inv_I_c,
                                            q_bc, r_c, inv_m_p, inv_I_p, q_bp, r_p, s + k, joint_axis_mode, joint_act,
                                            joint_target_ke, joint_target_kd, joint_limit_lower, joint_limit_upper,
                                            dt)
    ia = s + n_lin  # the first angular axis
    if n_ang == 0:
        L = rotation_lock_impulse(wp.quat_rotate(q_p, rotation_vector(wp.quat_inverse(q_p) * q_c)), inv_I_c, q_bc,
                                  inv_I_p, q_bp, ang_alpha)
    elif n_ang == 1:
        a = wp.quat_rotate(q_p, joint_axis[ia])
        a_c = wp.quat_rotate(q_c, joint_axis[ia])
        # the child's axis back onto the parent's: undo the rotation a -> a_c (its sine vector a x a_c; smooth where
        # the axes are aligned), without turning about the hinge
        L = rotation_lock_impulse(wp.cross(a, a_c), inv_I_c, q_bc, inv_I_p, q_bp, ang_alpha)
        L = L - a * wp.dot(L, a)
        angle = _hinge_angle(joint_axis[ia], wp.quat_inverse(q_p) * q_c)
        w = angular_weight(inv_I_c, q_bc, a) + angular_weight(inv_I_p, q_bp, a)
        L = L + a * axis_correction(angle, wp.dot(w_rel, a), w, joint_limit_lower[ia], joint_limit_upper[ia],
                                    joint_axis_mode[ia], joint_act[ia], joint_target_ke[ia], joint_target_kd[ia], dt)
    elif jtype != JOINT_BALL:
        # two or three rotation axes: each angle's limits and drive along its gradient; with two, the angle about
        # the third axis (their cross product, carried by both) is locked at zero
        b0 = joint_axis[ia]
        b1 = joint_axis[ia + 1]
        b2 = wp.cross(b0, b1)
        if n_ang == 3:
            b2 = joint_axis[ia + 2]
        ang, g0, g1, g2 = angles_and_gradients(b0, b1, b2, q_p, q_c)
        L = axis_angular_impulse(ang[0], g0, w_rel, inv_I_c, q_bc, inv_I_p, q_bp, ia, joint_axis_mode, joint_act,
                                 joint_target_ke, joint_target_kd, joint_limit_lower, joint_limit_upper, dt)
        L = L + axis_angular_impulse(ang[1], g1, w_rel, inv_I_c, q_bc, inv_I_p, q_bp, ia + 1, joint_axis_mode,
                                     joint_act, joint_target_ke, joint_target_kd, joint_limit_lower,
                                     joint_limit_upper, dt)
        if n_ang == 3:
            L = L + axis_angular_impulse(ang[2], g2, w_rel, inv_I_c, q_bc, inv_I_p, q_bp, ia + 2, joint_axis_mode,
                                         joint_act, joint_target_ke, joint_target_kd, joint_limit_lower,
                                         joint_limit_upper, dt)
        else:
            w2 = angular_weight(inv_I_c, q_bc, g2) + angular_weight(inv_I_p, q_bp, g2)
            if w2 > 0.0:
                L = L + g2 * (-ang[2] / (w2 + ang_alpha))
    P = P * linear_relaxation
    L = L * angular_relaxation
    inv_dt = 1.0 / dt
    wp.atomic_add(deltas, c, wp.spatial_vector((wp.cross(r_c, P) + L) * inv_dt, P * inv_dt))
    if p >= 0:
        wp.atomic_sub(deltas, p, wp.spatial_vector((wp.cross(r_p, P) + L) * inv_dt, P * inv_dt))


@wp.func
def contact_frame(body: int, point: wp.vec3, offset: wp.vec3, body_q: wp.array(dtype=wp.transform),
                  body_com: wp.array(dtype=wp.vec3)):
    """World position of a contact point (body frame, or world for static shapes) and its arm from the body's
    centre of mass."""
    x = point + offset
    r = wp.vec3()
    if body >= 0:
        X = body_q[body]
        x = wp.transform_point(X, point) + offset
        r = x - wp.transform_point(X, body_com[body])
    return x, r


@wp.func
def material_displacement(body: int, point: wp.vec3, offset: wp.vec3, body_q: wp.array(dtype=wp.transform),
                          body_q_prev: wp.array(dtype=wp.transform)):
    """Displacement over the step of the body's material point at ``point`` (body frame) plus the world ``offset``
    as placed at the start of the step (zero for static shapes)."""
    if body < 0:
        return wp.vec3()
    X0 = body_q_prev[body]
    local = point + wp.quat_rotate_inv(wp.transform_get_rotation(X0), offset)
    return wp.transform_point(body_q[body], local) - wp.transform_point(X0, local)


@wp.func
def body_weight(body: int, body_q: wp.array(dtype=wp.transform), body_inv_mass: wp.array(dtype=float),
                body_inv_inertia: wp.array(dtype=wp.mat33), r: wp.vec3, n: wp.vec3):
    if body < 0:
        return 0.0
    return positional_weight(body_inv_mass[body], body_inv_inertia[body], wp.transform_get_rotation(body_q[body]),
                             r, n)


@wp.func
def body_angular_weight(body: int, body_q: wp.array(dtype=wp.transform), body_inv_inertia: wp.array(dtype=wp.mat33),
                        n: wp.vec3):
    if body < 0:
        return 0.0
    return angular_weight(body_inv_inertia[body], wp.transform_get_rotation(body_q[body]), n)


@wp.kernel
def solve_rigid_contacts(body_q: wp.array(dtype=wp.transform), body_qd: wp.array(dtype=wp.spatial_vector),
                         body_q_prev: wp.array(dtype=wp.transform),
                         body_com: wp.array(dtype=wp.vec3), body_inv_mass: wp.array(dtype=float),
                         body_inv_inertia: wp.array(dtype=wp.mat33), shape_body: wp.array(dtype=int),
                         materials: ModelShapeMaterials, geo: ModelShapeGeometry,
                         contact_count: wp.array(dtype=int), contact_point0: wp.array(dtype=wp.vec3),
                         contact_point1: wp.array(dtype=wp.vec3), contact_normal: wp.array(dtype=wp.vec3),
                         contact_shape0: wp.array(dtype=int), contact_shape1: wp.array(dtype=int),
                         torsional_friction: float, rolling_friction: float, relaxation: float, dt: float,
                         deltas: wp.array(dtype=wp.spatial_vector), counts: wp.array(dtype=float)):
    tid = wp.tid()
    if tid >= wp.min(contact_count[0], contact_shape0.shape[0]):
        return
    a = contact_shape0[tid]
    b = contact_shape1[tid]
    if a == b or a < 0 or b < 0:
        return
    body_a = shape_body[a]
    body_b = shape_body[b]
    n = contact_normal[tid]
    off_a = -geo.thickness[a] * n
    off_b = geo.thickness[b] * n
    x_a, r_a = contact_frame(body_a, contact_point0[tid], off_a, body_q, body_com)
    x_b, r_b = contact_frame(body_b, contact_point1[tid], off_b, body_q, body_com)
    d = wp.dot(n, x_a - x_b)
    if d >= 0.0:
        return
    w = body_weight(body_a, body_q, body_inv_mass, body_inv_inertia, r_a, n) + body_weight(
        body_b, body_q, body_inv_mass, body_inv_inertia, r_b, n)
    if w <= 0.0:
        return
    lam = -d / w  # > 0: pushes a along n, b against it
    P = n * lam
    # static friction: undo the tangential slip of the contact points over the step, within the friction cone; the
    # slip is that of the material points of the bodies at the contact (the surface offsets carried by the bodies'
    # rotations from the start of the step), so a rolling sphere or capsule does not slip
    slip = material_displacement(body_a, contact_point0[tid], off_a, body_q, body_q_prev) - material_displacement(
        body_b, contact_point1[tid], off_b, body_q, body_q_prev)
    slip = slip - n * wp.dot(n, slip)
    sl = wp.length(slip)
    mu = 0.5 * (materials.mu[a] + materials.mu[b])
    if sl > 1.0e-9:
        t = slip / sl
        wt = body_weight(body_a, body_q, body_inv_mass, body_inv_inertia, r_a, t) + body_weight(
            body_b, body_q, body_inv_mass, body_inv_inertia, r_b, t)
        P = P - t * wp.min(sl / wt, mu * lam)
    # torsional and rolling friction (warp.sim's): angular impulses against the relative spin about the normal and
    # the relative rolling, each stopping it within the step, capped at mu times the coefficient times the normal
    # impulse
    Lt = wp.vec3()
    w_ab = wp.vec3()
    if body_a >= 0:
        w_ab = wp.spatial_top(body_qd[body_a])
    if body_b >= 0:
        w_ab = w_ab - wp.spatial_top(body_qd[body_b])
    spin = wp.dot(w_ab, n)
    cap = mu * torsional_friction * lam
    if cap > 0.0 and spin != 0.0:
        wn = body_angular_weight(body_a, body_q, body_inv_inertia, n) + body_angular_weight(body_b, body_q,
                                                                                            body_inv_inertia, n)
        if wn > 0.0:
            Lt = n * wp.clamp(-spin * dt / wn, -cap, cap)
    roll = w_ab - n * spin
    rl = wp.length(roll)
    cap = mu * rolling_friction * lam
    if cap > 0.0 and rl > 1.0e-9:
        u = roll / rl
        wr = body_angular_weight(body_a, body_q, body_inv_inertia, u) + body_angular_weight(body_b, body_q,
                                                                                            body_inv_inertia, u)
        if wr > 0.0:
            Lt = Lt - u * wp.min(rl * dt / wr, cap)
    P = P * (relaxation / dt)
    Lt = Lt * (relaxation / dt)
    if body_a >= 0:
        wp.atomic_add(deltas, body_a, wp.spatial_vector(wp.cross(r_a, P) + Lt, P))
        wp.atomic_add(counts, body_a, 1.0)
    if body_b >= 0:
        wp.atomic_sub(deltas, body_b, wp.spatial_vector(wp.cross(r_b, P) + Lt, P))
        wp.atomic_add(counts, body_b, 1.0)


@wp.kernel
def apply_rigid_deltas(q_in: wp.array(dtype=wp.transform), qd_in: wp.array(dtype=wp.spatial_vector),
                       body_com: wp.array(dtype=wp.vec3), body_inv_mass: wp.array(dtype=float),
                       body_inv_inertia: wp.array(dtype=wp.mat33), deltas: wp.array(dtype=wp.spatial_vector),
                       counts: wp.array(dtype=float), use_counts: int, positions: int, dt: float,
                       q_out: wp.array(dtype=wp.transform), qd_out: wp.array(dtype=wp.spatial_vector)):
    """Move each body by its summed impulses ``deltas`` ((angular, linear) / dt; averaged over ``counts`` when
    ``use_counts``): velocities change by the impulses, and with ``positions`` the pose by the velocity change
    times ``dt``."""
    tid = wp.tid()
    X = q_in[tid]
    tw = qd_in[tid]
    inv_m = body_inv_mass[tid]
    if inv_m == 0.0:
        q_out[tid] = X
        qd_out[tid] = tw
        return
    dl = deltas[tid]
    if use_counts != 0:
        k = counts[tid]
        if k > 1.0:
            dl = dl / k
    q0 = wp.transform_get_rotation(X)
    dv = wp.spatial_bottom(dl) * inv_m
    dw = world_inv_inertia_times(q0, body_inv_inertia[tid], wp.spatial_top(dl))
    qd_out[tid] = wp.spatial_vector(wp.spatial_top(tw) + dw, wp.spatial_bottom(tw) + dv)
    if positions != 0:
        q1 = wp.normalize(q0 + wp.quat(dw * dt, 0.0) * q0 * 0.5)
        com = body_com[tid]
        p1 = wp.transform_get_translation(X) + wp.quat_rotate(q0, com) + dv * dt - wp.quat_rotate(q1, com)
        q_out[tid] = wp.transform(p1, q1)
    else:
        q_out[tid] = X


@wp.kernel
def rigid_contact_restitution(body_q: wp.array(dtype=wp.transform), body_qd: wp.array(dtype=wp.spatial_vector),
                              body_q_prev: wp.array(dtype=wp.transform),
                              body_qd_prev: wp.array(dtype=wp.spatial_vector), body_com: wp.array(dtype=wp.vec3),
                              body_inv_mass: wp.array(dtype=float), body_inv_inertia: wp.array(dtype=wp.mat33),
                              shape_body: wp.array(dtype=int), materials: ModelShapeMaterials,
                              geo: ModelShapeGeometry, contact_count: wp.array(dtype=int),
                              contact_point0: wp.array(dtype=wp.vec3), contact_point1: wp.array(dtype=wp.vec3),
                              contact_normal: wp.array(dtype=wp.vec3), contact_shape0: wp.array(dtype=int),
                              contact_shape1: wp.array(dtype=int), margin: float,
                              deltas: wp.array(dtype=wp.spatial_vector), counts: wp.array(dtype=float)):
    tid = wp.tid()
    if tid >= wp.min(contact_count[0], contact_shape0.shape[0]):
        return
    a = contact_shape0[tid]
    b = contact_shape1[tid]
    if a == b or a < 0 or b < 0:
        return
    body_a = shape_body[a]
    body_b = shape_body[b]
    n = contact_normal[tid]
    off_a = -geo.thickness[a] * n
    off_b = geo.thickness[b] * n
    x_a, r_a = contact_frame(body_a, contact_point0[tid], off_a, body_q, body_com)
    x_b, r_b = contact_frame(body_b, contact_point1[tid], off_b, body_q, body_com)
    if wp.dot(n, x_a - x_b) > margin:
        return  # not touching after the step
    # normal velocities of the contact points now and at the start of the step
    v = wp.vec3()
    v_prev = wp.vec3()
    if body_a >= 0:
        _xp_a, rp_a = contact_frame(body_a, contact_point0[tid], off_a, body_q_prev, body_com)
        v = v + wp.spatial_bottom(body_qd[body_a]) + wp.cross(wp.spatial_top(body_qd[body_a]), r_a)
        v_prev = v_prev + wp.spatial_bottom(body_qd_prev[body_a]) + wp.cross(wp.spatial_top(body_qd_prev[body_a]),
                                                                              rp_a)
    if body_b >= 0:
        _xp_b, rp_b = contact_frame(body_b, contact_point1[tid], off_b, body_q_prev, body_com)
        v = v - wp.spatial_bottom(body_qd[body_b]) - wp.cross(wp.spatial_top(body_qd[body_b]), r_b)
        v_prev = v_prev - wp.spatial_bottom(body_qd_prev[body_b]) - wp.cross(
            wp.spatial_top(body_qd_prev[body_b]), rp_b)
    vn_prev = wp.dot(n, v_prev)
    if vn_prev >= 0.0:
        return  # it was not approaching
    e = 0.5 * (materials.restitution[a] + materials.restitution[b])
    dvn = -e * vn_prev - wp.dot(n, v)
    w = body_weight(body_a, body_q, body_inv_mass, body_inv_inertia, r_a, n) + body_weight(
        body_b, body_q, body_inv_mass, body_inv_inertia, r_b, n)
    if w <= 0.0:
        return
    J = n * (dvn / w)
    if body_a >= 0:
        wp.atomic_add(deltas, body_a, wp.spatial_vector(wp.cross(r_a, J), J))
        wp.atomic_add(counts, body_a, 1.0)
    if body_b >= 0:
        wp.atomic_sub(deltas, body_b, wp.spatial_vector(wp.cross(r_b, J), J))
        wp.atomic_add(counts, body_b, 1.0)


@wp.kernel
def apply_joint_actions(body_q: wp.array(dtype=wp.transform), body_com: wp.array(dtype=wp.vec3),
                        joint_type: wp.array(dtype=int), joint_enabled: wp.array(dtype=int),
                        joint_parent: wp.array(dtype=int), joint_child: wp.array(dtype=int),
                        joint_X_p: wp.array(dtype=wp.transform), joint_X_c: wp.array(dtype=wp.transform),
                        joint_axis: wp.array(dtype=wp.vec3), joint_axis_start: wp.array(dtype=int),
                        joint_axis_dim: wp.array(dtype=int, ndim=2), joint_axis_mode: wp.array(dtype=int),
                        joint_act: wp.array(dtype=float), body_f: wp.array(dtype=wp.spatial_vector)):
    """Force-mode drives: ``joint_act`` of a linear axis as a force along it at the child's anchor, of an angular
    axis as a torque whose power is ``joint_act`` times the axis angle's rate (the axis itself for a hinge; the dual
    basis of the rotation axes for universal, compound and D6 joints), on the child, with the reaction on the
    parent; added to the wrenches (about the centres of mass) that the prediction integrates."""
    tid = wp.tid()
    jtype = joint_type[tid]
    if joint_enabled[tid] == 0:
        return
    n_lin, n_ang = joint_axis_counts(jtype, joint_axis_dim[tid, 0], joint_axis_dim[tid, 1])
    s = joint_axis_start[tid]
    c = joint_child[tid]
    p = joint_parent[tid]
    X_wp = joint_X_p[tid]
    if p >= 0:
        X_wp = body_q[p] * X_wp
    q_p = wp.transform_get_rotation(X_wp)
    force = wp.vec3()
    torque = wp.vec3()
    for k in range(3):
        if k < n_lin and joint_axis_mode[s + k] == JOINT_MODE_FORCE:
            force = force + wp.quat_rotate(q_p, joint_axis[s + k]) * joint_act[s + k]
    ia = s + n_lin
    if n_ang == 1:
        if joint_axis_mode[ia] == JOINT_MODE_FORCE:
            torque = wp.quat_rotate(q_p, joint_axis[ia]) * joint_act[ia]
    elif n_ang >= 2:
        b0 = joint_axis[ia]
        b1 = joint_axis[ia + 1]
        b2 = wp.cross(b0, b1)
        if n_ang == 3:
            b2 = joint_axis[ia + 2]
        q_c = wp.transform_get_rotation(body_q[c] * joint_X_c[tid])
        _ang, g0, g1, g2 = angles_and_gradients(b0, b1, b2, q_p, q_c)
        if joint_axis_mode[ia] == JOINT_MODE_FORCE:
            torque = torque + g0 * joint_act[ia]
        if joint_axis_mode[ia + 1] == JOINT_MODE_FORCE:
            torque = torque + g1 * joint_act[ia + 1]
        if n_ang == 3 and joint_axis_mode[ia + 2] == JOINT_MODE_FORCE:
            torque = torque + g2 * joint_act[ia + 2]
    if wp.length_sq(force) + wp.length_sq(torque) == 0.0:
        return
    # the force acts at the child's anchor; the parent's reaction at the same world point
    x = wp.transform_get_translation(body_q[c] * joint_X_c[tid])
    r_c = x - wp.transform_point(body_q[c], body_com[c])
    wp.atomic_add(body_f, c, wp.spatial_vector(wp.cross(r_c, force) + torque, force))
    if p >= 0:
        r_p = x - wp.transform_point(body_q[p], body_com[p])
        wp.atomic_sub(body_f, p, wp.spatial_vector(wp.cross(r_p, force) + torque, force))
