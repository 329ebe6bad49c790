"""``FeatherstoneIntegrator``: reduced-coordinate articulated dynamics, one articulation per thread.

Per step and articulation: forward kinematics, spatial velocities and motion subspaces in the world frame (spatial
vectors (angular, linear) about the world origin), the bias forces by the recursive Newton-Euler algorithm (gravity,
Coriolis and centrifugal terms, external body wrenches such as contacts), the joint-space mass matrix by the
composite-rigid-body algorithm (plus joint armature), a Cholesky solve for the joint accelerations, then
semi-implicit Euler on the joint coordinates (quaternions of ball and free joints integrated on the sphere) and
forward kinematics of the new state. Joint forces: ``control.joint_act`` in force mode, PD drives to targets, limit
springs (as the Euler integrator's ``joint_axis_force``).

Coordinates follow :func:`weft.sim.eval_fk`: a free joint's velocity is (angular velocity, velocity of the child
anchor's origin), both in the parent anchor frame; a ball joint's is its angular velocity in the parent anchor frame;
universal, compound and D6 joints use their per-axis angles (each rotation axis carried by the rotations before it,
as in ``eval_fk``) and offsets. All joint types are supported (distance joints move as free joints). Rigid contacts
act through ``state.body_f`` (``wp.sim.collide`` then the contact forces on the bodies' poses from forward
kinematics).

Two kernels per step: ``eval_articulation_dynamics`` writes the mass matrix and the generalised forces (every output
element once, so its generated adjoint is exact) and ``cholesky_solve`` factors and solves, differentiated by hand
on a tape (``lam = H^-1 qdd_grad``, ``tau_grad += lam``, ``H_grad -= lam qdd^T``): the whole step is differentiable.
"""

from __future__ import annotations

import functools

import numpy as np

import weft as wp

from ...runtime.tape import active_tape
from ..articulation import _frame_offset, _joint_motion, eval_fk
from ..forces.joints import joint_axis_force
from ..forces.rigid import eval_rigid_contact_forces
from ..model import (
    JOINT_BALL,
    JOINT_COMPOUND,
    JOINT_D6,
    JOINT_DISTANCE,
    JOINT_FREE,
    JOINT_PRISMATIC,
    JOINT_REVOLUTE,
    JOINT_UNIVERSAL,
    SimError,
)
from .base import Integrator

MAX_JOINTS = 64  # joints of one articulation
MAX_DOFS = 64  # degrees of freedom of one articulation


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
def _rotation_axes(jtype: int, lin_count: int, ang_count: int, axis_start: int, q0: int,
                   joint_q: wp.array(dtype=float), joint_axis: wp.array(dtype=wp.vec3)):
    """The (up to three) rotation axes of a universal, compound or multi-axis D6 joint, parent anchor frame."""
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
    return _carried_axes(a0, a1, a2, joint_q[iq], joint_q[iq + 1])


@wp.func
def dof_axis(jtype: int, lin_count: int, ang_count: int, axis_start: int, q0: int, i: int,
             joint_q: wp.array(dtype=float), joint_axis: wp.array(dtype=wp.vec3)):
    """Direction of the joint's ``i``-th degree of freedom in the parent anchor frame, and 1 for a rotation
    (about the child anchor's origin) or 0 for a translation."""
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
        e0, b1, b2 = _rotation_axes(jtype, lin_count, ang_count, axis_start, q0, joint_q, joint_axis)
        e = e0
        if k == 1:
            e = b1
        elif k == 2:
            e = b2
    return e, angular


@wp.func
def carried_axes_rate(jtype: int, lin_count: int, ang_count: int, axis_start: int, q0: int, d0: int,
                      joint_q: wp.array(dtype=float), joint_qd: wp.array(dtype=float),
                      joint_axis: wp.array(dtype=wp.vec3)):
    """``dS/dt qd`` of the rotation axes that the joint's own coordinates carry (angular, parent anchor frame):
    ``qd1 w0 x b1 + qd2 (w0 + w1) x b2``; zero for joints with fixed axes."""
    alpha = wp.vec3(0.0, 0.0, 0.0)
    rotating = jtype == JOINT_UNIVERSAL or jtype == JOINT_COMPOUND or (jtype == JOINT_D6 and ang_count >= 2)
    if rotating:
        e0, b1, b2 = _rotation_axes(jtype, lin_count, ang_count, axis_start, q0, joint_q, joint_axis)
        idd = d0
        if jtype == JOINT_D6:
            idd = d0 + lin_count
        w0 = e0 * joint_qd[idd]
        alpha = wp.cross(w0, b1) * joint_qd[idd + 1]
        if jtype == JOINT_COMPOUND or (jtype == JOINT_D6 and ang_count == 3):
            alpha = alpha + wp.cross(w0 + b1 * joint_qd[idd + 1], b2) * joint_qd[idd + 2]
    return alpha


# thread-local capacities (joints, degrees of freedom) of eval_articulation_dynamics' variants: the smallest that
# holds the model's largest articulation is used (its generated adjoint pushes every thread-local array on a stack
# each joint iteration, so the 64-entry arrays cost a 9-joint arm's backward several times what 16 entries do)
DYNAMICS_CAPACITIES = ((16, 32), (MAX_JOINTS, MAX_DOFS))


@functools.cache
def _dynamics_kernel(cap_j: int, cap_d: int):
    """``eval_articulation_dynamics`` keeping up to ``cap_j`` joints and ``cap_d`` degrees of freedom of an
    articulation in thread-local arrays."""

    @wp.func
    def articulation_dynamics(joint_start: int, joint_end: int, joint_q: wp.array(dtype=float),
                              joint_qd: wp.array(dtype=float), joint_act: wp.array(dtype=float),
                              joint_q_start: wp.array(dtype=int), joint_qd_start: wp.array(dtype=int),
                              joint_type: wp.array(dtype=int), joint_parent: wp.array(dtype=int),
                              joint_child: wp.array(dtype=int), joint_ancestor: wp.array(dtype=int),
                              joint_X_p: wp.array(dtype=wp.transform), joint_X_c: wp.array(dtype=wp.transform),
                              joint_axis: wp.array(dtype=wp.vec3), joint_axis_start: wp.array(dtype=int),
                              joint_axis_dim: wp.array(dtype=int, ndim=2), joint_axis_mode: wp.array(dtype=int),
                              joint_target_ke: wp.array(dtype=float), joint_target_kd: wp.array(dtype=float),
                              joint_limit_lower: wp.array(dtype=float), joint_limit_upper: wp.array(dtype=float),
                              joint_limit_ke: wp.array(dtype=float), joint_limit_kd: wp.array(dtype=float),
                              joint_armature: wp.array(dtype=float), body_q: wp.array(dtype=wp.transform),
                              body_f: wp.array(dtype=wp.spatial_vector), use_body_f: int,
                              body_com: wp.array(dtype=wp.vec3), body_mass: wp.array(dtype=float),
                              body_inertia: wp.array(dtype=wp.mat33), gravity: wp.vec3, h0: int,
                              H: wp.array(dtype=float), tau: wp.array(dtype=float)):
        """Joint-space mass matrix (row-major at ``H[h0:]``, plus armature) and generalised forces (joint forces minus
        the bias forces, at the joints' velocity indices of ``tau``) of one articulation. Every output element is written
        once."""
        poses = wp.zeros(cap_j, dtype=wp.transform)
        vel = wp.zeros(cap_j, dtype=wp.spatial_vector)
        acc = wp.zeros(cap_j, dtype=wp.spatial_vector)
        frc = wp.zeros(cap_j, dtype=wp.spatial_vector)
        c_m = wp.zeros(cap_j, dtype=float)
        c_h = wp.zeros(cap_j, dtype=wp.vec3)
        c_I = wp.zeros(cap_j, dtype=wp.mat33)
        S = wp.zeros(cap_d, dtype=wp.spatial_vector)
        d_first = joint_qd_start[joint_start]
        n = joint_qd_start[joint_end] - d_first
        # the base accelerates upwards: gravity without a separate force term
        a_base = wp.spatial_vector(wp.vec3(0.0, 0.0, 0.0), -gravity)

        # forward pass: poses, velocities, motion subspaces, bias accelerations and forces
        for j in range(joint_start, joint_end):
            k = j - joint_start
            parent = joint_parent[j]
            X_wp = wp.transform_identity()
            v_p = wp.spatial_vector()
            a_p = a_base
            anc = joint_ancestor[j]
            if parent >= 0:
                if anc >= joint_start and anc < j:
                    X_wp = poses[anc - joint_start]
                    v_p = vel[anc - joint_start]
                    a_p = acc[anc - joint_start]
                else:
                    X_wp = body_q[parent]
            X_wj = X_wp * joint_X_p[j]
            jtype = joint_type[j]
            q0 = joint_q_start[j]
            d0 = joint_qd_start[j]
            X_j, w_j, v_j = _joint_motion(jtype, joint_axis_dim[j, 0], joint_axis_dim[j, 1], joint_axis_start[j], q0,
                                          d0, joint_q, joint_qd, joint_axis)
            X_wcj = X_wj * X_j
            X_wc = X_wcj * wp.transform_inverse(joint_X_c[j])
            poses[k] = X_wc
            R = wp.transform_get_rotation(X_wj)
            P = wp.transform_get_translation(X_wcj)
            nd = dof_count(jtype, joint_axis_dim[j, 0], joint_axis_dim[j, 1])
            s0 = d0 - d_first
            for i in range(nd):
                e, angular = dof_axis(jtype, joint_axis_dim[j, 0], joint_axis_dim[j, 1], joint_axis_start[j], q0, i,
                                      joint_q, joint_axis)
                e = wp.quat_rotate(R, e)
                if angular != 0:
                    S[s0 + i] = wp.spatial_vector(e, wp.cross(P, e))
                else:
                    S[s0 + i] = wp.spatial_vector(wp.vec3(0.0, 0.0, 0.0), e)
            # the velocity-product acceleration of axes carried by the joint's own coordinates
            alpha = carried_axes_rate(jtype, joint_axis_dim[j, 0], joint_axis_dim[j, 1], joint_axis_start[j], q0, d0,
                                      joint_q, joint_qd, joint_axis)
            v_rel = wp.spatial_vector()
            for i in range(nd):
                v_rel = v_rel + S[s0 + i] * joint_qd[d0 + i]
            v_c = v_p + v_rel
            # velocity-product acceleration: the axes are fixed in the parent or carried by the joint's coordinates;
            # axes through the moving child origin (free, D6) add v_rel_lin x w_rel
            al = wp.quat_rotate(R, alpha)
            w_rel = wp.quat_rotate(R, w_j)
            u_rel = wp.quat_rotate(R, v_j)
            c = cross_motion(v_p, v_rel) + wp.spatial_vector(al, wp.cross(P, al) + wp.cross(u_rel, w_rel))
            a_c = a_p + c
            vel[k] = v_c
            acc[k] = a_c
            # the child body's spatial inertia about the world origin
            child = joint_child[j]
            m = body_mass[child]
            rot = wp.transform_get_rotation(X_wc)
            com = wp.transform_point(X_wc, body_com[child])
            Rm = wp.quat_to_matrix(rot)
            I_c = Rm * body_inertia[child] * wp.transpose(Rm)
            h = com * m
            I_o = I_c + (wp.identity(3, dtype=float) * wp.dot(com, com) - wp.outer(com, com)) * m
            c_m[k] = m
            c_h[k] = h
            c_I[k] = I_o
            f = inertia_apply(m, h, I_o, a_c) + cross_force(v_c, inertia_apply(m, h, I_o, v_c))
            if use_body_f != 0:
                # external wrench about the centre of mass -> about the world origin
                fe = body_f[child]
                fl = wp.spatial_bottom(fe)
                f = f - wp.spatial_vector(wp.spatial_top(fe) + wp.cross(com, fl), fl)
            frc[k] = f

        # backward pass: composite inertias, bias forces, joint forces, mass matrix entries
        for kk in range(joint_end - joint_start):
            j = joint_end - 1 - kk
            k = j - joint_start
            jtype = joint_type[j]
            nd = dof_count(jtype, joint_axis_dim[j, 0], joint_axis_dim[j, 1])
            d0 = joint_qd_start[j]
            s0 = d0 - d_first
            f = frc[k]
            for i in range(nd):
                # generalised force: per-axis drive/limit of the joints with axes (not ball/free), minus the bias
                applied = float(0.0)  # noqa: UP018
                if has_axes(jtype):
                    ax = joint_axis_start[j] + i
                    applied = joint_axis_force(joint_q[joint_q_start[j] + i], joint_qd[d0 + i], joint_act[ax],
                                               joint_target_ke[ax], joint_target_kd[ax], joint_limit_lower[ax],
                                               joint_limit_upper[ax], joint_limit_ke[ax], joint_limit_kd[ax],
                                               joint_axis_mode[ax])
                tau[d0 + i] = applied - dot6(S[s0 + i], f)
            # mass matrix entries of this joint's dofs with its own (lower triangle mirrored) and its ancestors' dofs
            for i in range(nd):
                F = inertia_apply(c_m[k], c_h[k], c_I[k], S[s0 + i])
                r = s0 + i
                for l in range(i):
                    val = dot6(S[s0 + l], F)
                    H[h0 + r * n + s0 + l] = val
                    H[h0 + (s0 + l) * n + r] = val
                H[h0 + r * n + r] = dot6(S[r], F) + joint_armature[d0 + i]
                jj = joint_ancestor[j]
                while jj >= joint_start:
                    ndj = dof_count(joint_type[jj], joint_axis_dim[jj, 0], joint_axis_dim[jj, 1])
                    sj = joint_qd_start[jj] - d_first
                    for l in range(ndj):
                        val = dot6(S[sj + l], F)
                        H[h0 + r * n + sj + l] = val
                        H[h0 + (sj + l) * n + r] = val
                    jj = joint_ancestor[jj]
            anc = joint_ancestor[j]
            if anc >= joint_start and anc < j:
                ka = anc - joint_start
                frc[ka] = frc[ka] + f
                c_m[ka] = c_m[ka] + c_m[k]
                c_h[ka] = c_h[ka] + c_h[k]
                c_I[ka] = c_I[ka] + c_I[k]


    @wp.kernel
    def eval_articulation_dynamics(articulation_start: wp.array(dtype=int), articulation_H_start: wp.array(dtype=int),
                                   joint_q: wp.array(dtype=float), joint_qd: wp.array(dtype=float),
                                   joint_act: wp.array(dtype=float), joint_q_start: wp.array(dtype=int),
                                   joint_qd_start: wp.array(dtype=int), joint_type: wp.array(dtype=int),
                                   joint_parent: wp.array(dtype=int), joint_child: wp.array(dtype=int),
                                   joint_ancestor: wp.array(dtype=int), joint_X_p: wp.array(dtype=wp.transform),
                                   joint_X_c: wp.array(dtype=wp.transform), joint_axis: wp.array(dtype=wp.vec3),
                                   joint_axis_start: wp.array(dtype=int), joint_axis_dim: wp.array(dtype=int, ndim=2),
                                   joint_axis_mode: wp.array(dtype=int), joint_target_ke: wp.array(dtype=float),
                                   joint_target_kd: wp.array(dtype=float), joint_limit_lower: wp.array(dtype=float),
                                   joint_limit_upper: wp.array(dtype=float), joint_limit_ke: wp.array(dtype=float),
                                   joint_limit_kd: wp.array(dtype=float), joint_armature: wp.array(dtype=float),
                                   body_q: wp.array(dtype=wp.transform), body_f: wp.array(dtype=wp.spatial_vector),
                                   use_body_f: int, body_com: wp.array(dtype=wp.vec3), body_mass: wp.array(dtype=float),
                                   body_inertia: wp.array(dtype=wp.mat33), gravity: wp.vec3, H: wp.array(dtype=float),
                                   tau: wp.array(dtype=float)):
        a = wp.tid()
        articulation_dynamics(articulation_start[a], articulation_start[a + 1], joint_q, joint_qd, joint_act,
                              joint_q_start, joint_qd_start, joint_type, joint_parent, joint_child, joint_ancestor,
                              joint_X_p, joint_X_c, joint_axis, joint_axis_start, joint_axis_dim, joint_axis_mode,
                              joint_target_ke, joint_target_kd, joint_limit_lower, joint_limit_upper, joint_limit_ke,
                              joint_limit_kd, joint_armature, body_q, body_f, use_body_f, body_com, body_mass,
                              body_inertia, gravity, articulation_H_start[a], H, tau)

    return eval_articulation_dynamics


def dynamics_capacity(model) -> tuple[int, int]:
    """The smallest of DYNAMICS_CAPACITIES that holds ``model``'s articulations (joints, degrees of freedom)."""
    n_dofs = 0
    if model.articulation_count:
        starts = model.articulation_start.numpy()
        dstart = model.joint_qd_start.numpy()
        n_dofs = int(np.max(dstart[starts[1:]] - dstart[starts[:-1]]))
    return next((c for c in DYNAMICS_CAPACITIES if c[0] >= model.articulation_max_joints and c[1] >= n_dofs),
                DYNAMICS_CAPACITIES[-1])


def dynamics_kernel(model):
    """The ``eval_articulation_dynamics`` variant for ``model`` (see dynamics_capacity)."""
    hit = model.__dict__.get("_featherstone_dynamics_kernel")
    if hit is None:
        hit = model.__dict__["_featherstone_dynamics_kernel"] = _dynamics_kernel(*dynamics_capacity(model))
    return hit


@wp.kernel(enable_backward=False)
def cholesky_solve(articulation_start: wp.array(dtype=int), articulation_H_start: wp.array(dtype=int),
                   joint_qd_start: wp.array(dtype=int), factor: int, H: wp.array(dtype=float),
                   L: wp.array(dtype=float), rhs: wp.array(dtype=float), x: wp.array(dtype=float)):
    """Per articulation: (if ``factor``) the Cholesky factor ``H = L L^T`` (lower triangle of ``L``), then
    ``x = H^-1 rhs`` by two triangular solves. Differentiated by hand (``_record_solve_adjoint``)."""
    a = wp.tid()
    h0 = articulation_H_start[a]
    d0 = joint_qd_start[articulation_start[a]]
    n = joint_qd_start[articulation_start[a + 1]] - d0
    if factor != 0:
        for i in range(n):
            for jc in range(i + 1):
                s = H[h0 + i * n + jc]
                for p in range(jc):
                    s = s - L[h0 + i * n + p] * L[h0 + jc * n + p]
                if i == jc:
                    L[h0 + i * n + i] = wp.sqrt(wp.max(s, 1.0e-12))
                else:
                    L[h0 + i * n + jc] = s / L[h0 + jc * n + jc]
    for i in range(n):
        s = rhs[d0 + i]
        for p in range(i):
            s = s - L[h0 + i * n + p] * x[d0 + p]
        x[d0 + i] = s / L[h0 + i * n + i]
    for ii in range(n):
        i = n - 1 - ii
        s = x[d0 + i]
        for p in range(i + 1, n):
            s = s - L[h0 + p * n + i] * x[d0 + p]
        x[d0 + i] = s / L[h0 + i * n + i]


@wp.kernel(enable_backward=False)
def solve_adjoint(articulation_start: wp.array(dtype=int), articulation_H_start: wp.array(dtype=int),
                  joint_qd_start: wp.array(dtype=int), lam: wp.array(dtype=float), x: wp.array(dtype=float),
                  rhs_grad: wp.array(dtype=float), H_grad: wp.array(dtype=float)):
    """Adjoint of ``x = H^-1 rhs`` given ``lam = H^-1 x_grad``: ``rhs_grad += lam``, ``H_grad -= lam x^T``."""
    a = wp.tid()
    h0 = articulation_H_start[a]
    d0 = joint_qd_start[articulation_start[a]]
    n = joint_qd_start[articulation_start[a + 1]] - d0
    for i in range(n):
        rhs_grad[d0 + i] = rhs_grad[d0 + i] + lam[d0 + i]
        for jc in range(n):
            H_grad[h0 + i * n + jc] = H_grad[h0 + i * n + jc] - lam[d0 + i] * x[d0 + jc]


@wp.kernel
def integrate_joints(joint_type: wp.array(dtype=int), joint_axis_dim: wp.array(dtype=int, ndim=2),
                     joint_q_start: wp.array(dtype=int),
                     joint_qd_start: wp.array(dtype=int), joint_q: wp.array(dtype=float),
                     joint_qd: wp.array(dtype=float), qdd: wp.array(dtype=float), dt: float,
                     joint_q_new: wp.array(dtype=float), joint_qd_new: wp.array(dtype=float)):
    """Semi-implicit Euler on one joint's coordinates: qd += qdd dt, then q += qd dt (quaternions on the sphere)."""
    j = wp.tid()
    jtype = joint_type[j]
    q0 = joint_q_start[j]
    d0 = joint_qd_start[j]
    nd = dof_count(jtype, joint_axis_dim[j, 0], joint_axis_dim[j, 1])
    for i in range(nd):
        joint_qd_new[d0 + i] = joint_qd[d0 + i] + qdd[d0 + i] * dt
    # the new velocities are re-read from the inputs (not from joint_qd_new) so that the adjoint sees every use
    if has_axes(jtype):
        for i in range(nd):
            joint_q_new[q0 + i] = joint_q[q0 + i] + (joint_qd[d0 + i] + qdd[d0 + i] * dt) * dt
    elif jtype == JOINT_BALL or nd == 6:
        qo = q0
        if nd == 6:
            qo = q0 + 3
            for i in range(3):
                joint_q_new[q0 + i] = joint_q[q0 + i] + (joint_qd[d0 + 3 + i] + qdd[d0 + 3 + i] * dt) * dt
        r = wp.quat(joint_q[qo], joint_q[qo + 1], joint_q[qo + 2], joint_q[qo + 3])
        w = wp.vec3(joint_qd[d0] + qdd[d0] * dt, joint_qd[d0 + 1] + qdd[d0 + 1] * dt,
                    joint_qd[d0 + 2] + qdd[d0 + 2] * dt)
        r = wp.normalize(r + wp.quat(w[0], w[1], w[2], 0.0) * r * (0.5 * dt))
        for i in range(4):
            joint_q_new[qo + i] = r[i]


@wp.kernel
def com_velocities(joint_child: wp.array(dtype=int), joint_X_c: wp.array(dtype=wp.transform),
                   body_q: wp.array(dtype=wp.transform), body_com: wp.array(dtype=wp.vec3),
                   body_qd: wp.array(dtype=wp.spatial_vector), body_qd_com: wp.array(dtype=wp.spatial_vector)):
    """Body twists with the centre of mass's velocity: ``eval_fk`` (as warp.sim's) gives the velocity of the
    child's joint anchor, the contact forces read the centre of mass's."""
    j = wp.tid()
    c = joint_child[j]
    X = body_q[c]
    tw = body_qd[c]
    w = wp.spatial_top(tw)
    r = wp.transform_point(X, body_com[c]) - wp.transform_point(X, wp.transform_get_translation(joint_X_c[j]))
    body_qd_com[c] = wp.spatial_vector(w, wp.spatial_bottom(tw) + wp.cross(w, r))


_STALE_ON_TAPE = ("FeatherstoneIntegrator: reusing a mass-matrix factor (update_mass_matrix_every > 1) is not "
                  "differentiable; use update_mass_matrix_every=1 on a wp.Tape")


class FeatherstoneIntegrator(Integrator):
    """Reduced-coordinate articulated-body integrator (composite rigid body mass matrix, Cholesky solve); see the
    module docstring.

    Args:
        model: the model to simulate (checked for supported joints and sizes).
        angular_damping: kept for warp.sim's signature (joint damping comes from the drives' ``target_kd``).
        friction_smoothing: Huber width of the contact friction (as ``SemiImplicitIntegrator``).
        update_mass_matrix_every: factor the mass matrix on every n-th call of ``simulate`` only (counting from
            the first) and solve the calls in between with that factor, as warp.sim does (the generalised forces are
            recomputed every call). Must be 1 on a ``wp.Tape`` (a reused factor is not differentiated).
        use_tile_gemm, fuse_cholesky: warp.sim's tuning knobs of its GPU mass-matrix kernels, accepted and ignored.
    """

    def __init__(self, model=None, angular_damping: float = 0.05, update_mass_matrix_every: int = 1,
                 friction_smoothing: float = 1.0, use_tile_gemm: bool = False, fuse_cholesky: bool = True):
        if isinstance(update_mass_matrix_every, bool) or not isinstance(update_mass_matrix_every, (int, np.integer)) \
                or update_mass_matrix_every < 1:
            raise SimError("FeatherstoneIntegrator: 'update_mass_matrix_every' must be an int >= 1, got "
                           f"{update_mass_matrix_every!r}")
        self.angular_damping = angular_damping
        self.friction_smoothing = friction_smoothing
        self.update_mass_matrix_every = int(update_mass_matrix_every)
        self._step = 0  # calls of simulate so far (warp.sim's counter for update_mass_matrix_every)
        self._factor_key = None  # the layout of the cached factor "L", None until a step has factored
        self._qd_com = None
        self._validated = None
        if model is not None:
            self._validate(model)
            self._validated = model

    @staticmethod
    def _validate(model) -> None:
        if model.articulation_max_joints > MAX_JOINTS:
            raise SimError(f"FeatherstoneIntegrator: an articulation has more than {MAX_JOINTS} joints")
        if model.articulation_count:
            starts = model.articulation_start.numpy()
            dstart = model.joint_qd_start.numpy()
            if np.max(dstart[starts[1:]] - dstart[starts[:-1]]) > MAX_DOFS:
                raise SimError(f"FeatherstoneIntegrator: an articulation has more than {MAX_DOFS} degrees of freedom")

    def _layout(self, model):
        """Start of each articulation's dense ``n x n`` mass matrix in the flat matrix arrays, and their total."""
        key = (id(model), model.articulation_count, model.joint_count)
        if getattr(self, "_layout_key", None) != key:
            starts = model.articulation_start.numpy()
            dstart = model.joint_qd_start.numpy()
            n = (dstart[starts[1:]] - dstart[starts[:-1]]).astype(np.int64)
            offsets = np.concatenate([[0], np.cumsum(n * n)]).astype(np.int32)
            self._H_start = wp.array(offsets[:-1], dtype=wp.int32, device=model.device)
            self._H_size = max(1, int(offsets[-1]))
            self._layout_key = key
            self._buffers = {}
        return self._H_start, self._H_size

    def _buffer(self, model, name, size, grad):
        """A work array: a fresh one on a tape (its values are read by the backward pass), else a cached one."""
        if grad:
            return wp.zeros(size, dtype=float, device=model.device, requires_grad=True)
        buf = self._buffers.get(name)
        if buf is None or len(buf) != size:
            buf = self._buffers[name] = wp.zeros(size, dtype=float, device=model.device)
        return buf

    def eval_mass_matrix(self, model, state, control=None, use_body_f: bool = False):
        """The joint-space mass matrix (plus ``joint_armature``) and the generalised forces at ``state``: returns
        ``(H, tau)``. ``tau`` (``model.joint_dof_count`` floats) is the joint forces of ``control`` (drives, limits)
        minus the bias forces (gravity, Coriolis and centrifugal terms, and with ``use_body_f`` the wrenches in
        ``state.body_f``), so that ``H qdd = tau``. ``H`` holds each articulation's dense row-major ``n x n``
        matrix (``n`` its degrees of freedom), one after the other in articulation order. Differentiable."""
        if control is None:
            control = model.control(clone_variables=False)
        H_start, H_size = self._layout(model)
        grad = bool(state.requires_grad or getattr(model, "requires_grad", False))
        H = self._buffer(model, "H", H_size, grad)
        tau = self._buffer(model, "tau", model.joint_dof_count, grad)
        body_f = state.body_f if state.body_f is not None else wp.zeros(1, dtype=wp.spatial_vector,
                                                                         device=model.device)
        wp.launch(dynamics_kernel(model), dim=model.articulation_count,
                  inputs=[model.articulation_start, H_start, state.joint_q, state.joint_qd, control.joint_act,
                          model.joint_q_start, model.joint_qd_start, model.joint_type, model.joint_parent,
                          model.joint_child, model.joint_ancestor, model.joint_X_p, model.joint_X_c, model.joint_axis,
                          model.joint_axis_start, model.joint_axis_dim, model.joint_axis_mode, model.joint_target_ke,
                          model.joint_target_kd, model.joint_limit_lower, model.joint_limit_upper,
                          model.joint_limit_ke, model.joint_limit_kd, model.joint_armature, state.body_q, body_f,
                          int(bool(use_body_f)), model.body_com, model.body_mass, model.body_inertia,
                          wp.vec3(*model.gravity)],
                  outputs=[H, tau], device=model.device)
        return H, tau

    def eval_qdd(self, model, state, control=None, use_body_f: bool = False, refactor: bool = True):
        """Joint accelerations at ``state`` (joint coordinates and velocities) under ``control``'s joint forces,
        gravity and (``use_body_f``) the external wrenches in ``state.body_f``; a float array (differentiable: on a
        tape the Cholesky solve records its adjoint, ``lam = H^-1 qdd_grad``, ``tau_grad += lam``,
        ``H_grad -= lam qdd^T``). ``refactor=False`` solves with the factor of the last call that factored (the
        first call always factors; not on a tape)."""
        H, tau = self.eval_mass_matrix(model, state, control, use_body_f)
        H_start, H_size = self._layout(model)
        grad = H.requires_grad
        tape = active_tape.get()
        taped = grad and tape is not None
        if taped and not refactor:
            raise SimError(_STALE_ON_TAPE)
        if taped:  # the backward reads this step's own factor
            L = wp.zeros(H_size, dtype=float, device=model.device)
            self._factor_key = None
        else:
            L = self._buffer(model, "L", H_size, False)
            refactor = refactor or self._factor_key != self._layout_key  # no cached factor for this layout yet
            self._factor_key = self._layout_key
        qdd = self._buffer(model, "qdd", model.joint_dof_count, grad)
        wp.launch(cholesky_solve, dim=model.articulation_count,
                  inputs=[model.articulation_start, H_start, model.joint_qd_start, int(refactor), H, L, tau],
                  outputs=[qdd], device=model.device, record_tape=False)
        if taped:
            def backward():
                lam = wp.zeros(model.joint_dof_count, dtype=float, device=model.device)
                wp.launch(cholesky_solve, dim=model.articulation_count,
                          inputs=[model.articulation_start, H_start, model.joint_qd_start, 0, H, L, qdd.grad],
                          outputs=[lam], device=model.device, record_tape=False)
                wp.launch(solve_adjoint, dim=model.articulation_count,
                          inputs=[model.articulation_start, H_start, model.joint_qd_start, lam, qdd],
                          outputs=[tau.grad, H.grad], device=model.device, record_tape=False)

            tape.record_func(backward, [H, tau, qdd])
        return qdd

    def simulate(self, model, state_in, state_out, dt: float, control=None):
        """Advance the joint coordinates of ``state_in`` by ``dt`` into ``state_out`` (and its bodies by forward
        kinematics). Contact forces of the last ``wp.sim.collide`` and ``state_in.body_f`` act on the bodies."""
        self._check(model, state_in, state_out, dt)
        if not model.joint_count:
            return state_out
        if self._validated is not model:
            self._validate(model)
            self._validated = model
        if control is None:
            control = model.control(clone_variables=False)
        # bodies at the input coordinates (contacts are evaluated on them)
        eval_fk(model, state_in.joint_q, state_in.joint_qd, None, state_in)
        from ..rigid_collide import has_rigid_contacts

        if has_rigid_contacts(model):
            # on a tape every step gets its own buffer (the contact kernel's backward reads it)
            if state_in.requires_grad or self._qd_com is None or len(self._qd_com) != model.body_count:
                self._qd_com = wp.zeros(model.body_count, dtype=wp.spatial_vector, device=model.device,
                                        requires_grad=bool(state_in.requires_grad))
            wp.launch(com_velocities, dim=model.joint_count,
                      inputs=[model.joint_child, model.joint_X_c, state_in.body_q, model.body_com, state_in.body_qd],
                      outputs=[self._qd_com], device=model.device)
            qd_fk = state_in.body_qd
            state_in.body_qd = self._qd_com
            try:
                eval_rigid_contact_forces(model, state_in, state_in.body_f, self.friction_smoothing)
            finally:
                state_in.body_qd = qd_fk
        if self.update_mass_matrix_every > 1 and active_tape.get() is not None and (
                state_in.requires_grad or getattr(model, "requires_grad", False)):
            raise SimError(_STALE_ON_TAPE)
        refactor = self._step % self.update_mass_matrix_every == 0
        self._step += 1
        qdd = self.eval_qdd(model, state_in, control, use_body_f=True, refactor=refactor)
        wp.launch(integrate_joints, dim=model.joint_count,
                  inputs=[model.joint_type, model.joint_axis_dim, model.joint_q_start, model.joint_qd_start, state_in.joint_q,
                          state_in.joint_qd, qdd, dt],
                  outputs=[state_out.joint_q, state_out.joint_qd], device=model.device)
        eval_fk(model, state_out.joint_q, state_out.joint_qd, None, state_out)
        return state_out
