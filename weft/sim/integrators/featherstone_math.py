"""Spatial-algebra and per-joint helpers of the Featherstone integrator (world-frame spatial vectors (angular,
linear) about the world origin)."""

from __future__ import annotations

import weft as wp

from ..articulation import _frame_offset
from ..model import (
    JOINT_BALL,
    JOINT_COMPOUND,
    JOINT_D6,
    JOINT_DISTANCE,
    JOINT_FREE,
    JOINT_PRISMATIC,
    JOINT_REVOLUTE,
    JOINT_UNIVERSAL,
)


@wp.func
def cross_motion(v: wp.spatial_vector, m: wp.spatial_vector):
    """Spatial cross product ``v x m`` of motion vectors (angular, linear)."""
    w = wp.spatial_top(v)
    u = wp.spatial_bottom(v)
    a = wp.spatial_top(m)
    b = wp.spatial_bottom(m)
    return wp.spatial_vector(wp.cross(w, a), wp.cross(w, b) + wp.cross(u, a))


@wp.func
def cross_force(v: wp.spatial_vector, f: wp.spatial_vector):
    """Spatial cross product ``v x* f`` of a motion and a force vector."""
    w = wp.spatial_top(v)
    u = wp.spatial_bottom(v)
    n = wp.spatial_top(f)
    g = wp.spatial_bottom(f)
    return wp.spatial_vector(wp.cross(w, n) + wp.cross(u, g), wp.cross(w, g))


@wp.func
def inertia_apply(m: float, h: wp.vec3, I_o: wp.mat33, v: wp.spatial_vector):
    """Spatial inertia about the world origin (mass, first moment ``h = m c``, rotational inertia about the origin)
    times a motion vector."""
    w = wp.spatial_top(v)
    u = wp.spatial_bottom(v)
    return wp.spatial_vector(I_o * w + wp.cross(h, u), u * m - wp.cross(h, w))


@wp.func
def dot6(a: wp.spatial_vector, b: wp.spatial_vector):
    return wp.dot(wp.spatial_top(a), wp.spatial_top(b)) + wp.dot(wp.spatial_bottom(a), wp.spatial_bottom(b))


@wp.func
def dof_count(jtype: int, lin_count: int, ang_count: int):
    n = int(0)  # noqa: UP018, RUF046
    if jtype == JOINT_REVOLUTE or jtype == JOINT_PRISMATIC:
        n = 1
    elif jtype == JOINT_UNIVERSAL:
        n = 2
    elif jtype == JOINT_BALL or jtype == JOINT_COMPOUND:
        n = 3
    elif jtype == JOINT_FREE or jtype == JOINT_DISTANCE:
        n = 6
    elif jtype == JOINT_D6:
        n = lin_count + ang_count
    return n


@wp.func
def has_axes(jtype: int):
    """Whether the joint's coordinates are per-axis (drives and limits apply): not ball, free, distance, fixed."""
    return (jtype == JOINT_REVOLUTE or jtype == JOINT_PRISMATIC or jtype == JOINT_UNIVERSAL
            or jtype == JOINT_COMPOUND or jtype == JOINT_D6)


@wp.func
def _unit(i: int):
    return wp.vec3(wp.where(i == 0, 1.0, 0.0), wp.where(i == 1, 1.0, 0.0), wp.where(i == 2, 1.0, 0.0))


@wp.func
def _carried_axes(a0: wp.vec3, a1: wp.vec3, a2: wp.vec3, q0: float, q1: float):
    """The three rotation axes of ``_rotations_3`` in the parent anchor frame: the first fixed, the second carried
    by the first rotation, the third by the first two."""
    off = _frame_offset(a0, a1, a2)
    e0 = wp.quat_rotate(off, wp.vec3(1.0, 0.0, 0.0))
    r0 = wp.quat_from_axis_angle(e0, q0)
    b1 = wp.quat_rotate(r0, wp.quat_rotate(off, wp.vec3(0.0, 1.0, 0.0)))
    r1 = wp.quat_from_axis_angle(b1, q1)
    b2 = wp.quat_rotate(r1 * r0, wp.quat_rotate(off, wp.vec3(0.0, 0.0, 1.0)))
    return e0, b1, b2


@wp.func
def rotates_carried_axes(jtype: int, ang_count: int):
    """Whether the joint's rotation axes are carried by its own coordinates (universal, compound, D6 with two or three
    rotations)."""
    return jtype == JOINT_UNIVERSAL or jtype == JOINT_COMPOUND or (jtype == JOINT_D6 and ang_count >= 2)


@wp.func
def rotation_axes(jtype: int, lin_count: int, ang_count: int, axis_start: int, q0: int,
                  joint_q: wp.array(dtype=float), joint_axis: wp.array(dtype=wp.vec3)):
    """The (up to three) carried rotation axes of a universal, compound or multi-axis D6 joint in the parent anchor
    frame (zero for other joints): computed once per joint and passed to dof_axis / carried_axes_rate."""
    e0 = wp.vec3(0.0, 0.0, 0.0)
    b1 = wp.vec3(0.0, 0.0, 0.0)
    b2 = wp.vec3(0.0, 0.0, 0.0)
    if rotates_carried_axes(jtype, ang_count):
        ia = axis_start
        iq = q0
        if jtype == JOINT_D6:
            ia = axis_start + lin_count
            iq = q0 + lin_count
        a0 = joint_axis[ia]
        a1 = joint_axis[ia + 1]
        a2 = wp.cross(a0, a1)
        if jtype == JOINT_COMPOUND or (jtype == JOINT_D6 and ang_count == 3):
            a2 = joint_axis[ia + 2]
        e0, b1, b2 = _carried_axes(a0, a1, a2, joint_q[iq], joint_q[iq + 1])
    return e0, b1, b2


@wp.func
def dof_axis(jtype: int, lin_count: int, ang_count: int, axis_start: int, i: int,
             joint_axis: wp.array(dtype=wp.vec3), e0: wp.vec3, b1: wp.vec3, b2: wp.vec3):
    """Direction of the joint's ``i``-th degree of freedom in the parent anchor frame, and 1 for a rotation
    (about the child anchor's origin) or 0 for a translation (``e0, b1, b2``: rotation_axes)."""
    e = wp.vec3(0.0, 0.0, 0.0)
    angular = int(1)  # noqa: UP018, RUF046
    if jtype == JOINT_REVOLUTE:
        e = joint_axis[axis_start]
    elif jtype == JOINT_PRISMATIC:
        e = joint_axis[axis_start]
        angular = 0
    elif jtype == JOINT_BALL:
        e = _unit(i)
    elif jtype == JOINT_FREE or jtype == JOINT_DISTANCE:
        if i < 3:
            e = _unit(i)
        else:
            e = _unit(i - 3)
            angular = 0
    elif jtype == JOINT_D6 and i < lin_count:
        e = joint_axis[axis_start + i]
        angular = 0
    elif jtype == JOINT_D6 and ang_count == 1:
        e = joint_axis[axis_start + lin_count]
    else:
        # universal, compound, D6 with two or three rotations
        k = i
        if jtype == JOINT_D6:
            k = i - lin_count
        e = e0
        if k == 1:
            e = b1
        elif k == 2:
            e = b2
    return e, angular


@wp.func
def carried_axes_rate(jtype: int, lin_count: int, ang_count: int, d0: int, joint_qd: wp.array(dtype=float),
                      e0: wp.vec3, b1: wp.vec3, b2: wp.vec3):
    """``dS/dt qd`` of the rotation axes that the joint's own coordinates carry (angular, parent anchor frame):
    ``qd1 w0 x b1 + qd2 (w0 + w1) x b2``; zero for joints with fixed axes (``e0, b1, b2``: rotation_axes)."""
    alpha = wp.vec3(0.0, 0.0, 0.0)
    if rotates_carried_axes(jtype, ang_count):
        idd = d0
        if jtype == JOINT_D6:
            idd = d0 + lin_count
        w0 = e0 * joint_qd[idd]
        alpha = wp.cross(w0, b1) * joint_qd[idd + 1]
        if jtype == JOINT_COMPOUND or (jtype == JOINT_D6 and ang_count == 3):
            alpha = alpha + wp.cross(w0 + b1 * joint_qd[idd + 1], b2) * joint_qd[idd + 2]
    return alpha


# ------------------------------------------------------------------ terms shared by the fused and per-joint kernels
@wp.func
def motion_column(jtype: int, lin_count: int, ang_count: int, axis_start: int, i: int,
                  joint_axis: wp.array(dtype=wp.vec3), e0: wp.vec3, b1: wp.vec3, b2: wp.vec3, R: wp.quat, P: wp.vec3):
    """Column ``i`` of the joint's motion subspace (world frame, about the world origin) for axes turned by ``R``
    through ``P``, its world axis and whether it is angular."""
    e, angular = dof_axis(jtype, lin_count, ang_count, axis_start, i, joint_axis, e0, b1, b2)
    e = wp.quat_rotate(R, e)
    s = wp.spatial_vector(wp.vec3(0.0, 0.0, 0.0), e)
    if angular != 0:
        s = wp.spatial_vector(e, wp.cross(P, e))
    return s, e, angular


@wp.func
def joint_bias_term(jtype: int, lin_count: int, ang_count: int, d0: int, joint_qd: wp.array(dtype=float),
                    e0: wp.vec3, b1: wp.vec3, b2: wp.vec3, R: wp.quat, P: wp.vec3, u_rel: wp.vec3, w_rel: wp.vec3):
    """The joint's own velocity-product acceleration (without the parent's velocity): axes carried by its
    coordinates, and ``u_rel x w_rel`` for axes through the moving child origin (free, D6)."""
    al = wp.quat_rotate(R, carried_axes_rate(jtype, lin_count, ang_count, d0, joint_qd, e0, b1, b2))
    return wp.spatial_vector(al, wp.cross(P, al) + wp.cross(u_rel, w_rel))


@wp.func
def body_inertia_world(X_wc: wp.transform, com_body: wp.vec3, m: float, inertia: wp.mat33):
    """A body's spatial inertia about the world origin (``h = m c``, ``I_o``) and its world centre of mass ``c``."""
    com = wp.transform_point(X_wc, com_body)
    Rm = wp.quat_to_matrix(wp.transform_get_rotation(X_wc))
    I_o = Rm * inertia * wp.transpose(Rm) + (wp.identity(3, dtype=float) * wp.dot(com, com)
                                             - wp.outer(com, com)) * m
    return com * m, I_o, com


@wp.func
def wrench_about_origin(w: wp.spatial_vector, com: wp.vec3):
    """An external wrench (torque, force) about the centre of mass ``com``, moved to the world origin."""
    return wp.spatial_vector(wp.spatial_top(w) + wp.cross(com, wp.spatial_bottom(w)), wp.spatial_bottom(w))
