"""``FeatherstoneIntegrator``: reduced-coordinate articulated dynamics, one articulation per thread.

Per step and articulation: forward kinematics, spatial velocities and motion subspaces in the world frame (spatial
vectors (angular, linear) about the world origin), the bias forces by the recursive Newton-Euler algorithm (gravity,
Coriolis and centrifugal terms, external body wrenches such as contacts), the joint-space mass matrix by the
composite-rigid-body algorithm (plus joint armature), a Cholesky solve for the joint accelerations, then
semi-implicit Euler on the joint coordinates (quaternions of ball and free joints integrated on the sphere) and
forward kinematics of the new state. Joint forces: ``control.joint_act`` in force mode, PD drives to targets, limit
springs (as the Euler integrator's ``joint_axis_force``).

Coordinates follow :func:`weft.sim.eval_fk`: a free joint's velocity is (angular velocity, velocity of the child
anchor's origin), both in the parent anchor frame; a ball joint's is its angular velocity in the parent anchor frame.
Supported joints: revolute, prismatic, ball, fixed, free (and distance, as free); compound, universal and D6 joints
raise :class:`~weft.sim.SimError`. Rigid contacts act through ``state.body_f`` (``wp.sim.collide`` then the contact
forces on the bodies' poses from forward kinematics). The step is not differentiable yet (its kernel has no
adjoint); use ``SemiImplicitIntegrator`` for gradients.
"""

from __future__ import annotations

import numpy as np

import weft as wp

from ..articulation import _joint_motion, eval_fk
from ..forces.joints import joint_axis_force
from ..forces.rigid import eval_rigid_contact_forces
from ..model import (
    JOINT_BALL,
    JOINT_DISTANCE,
    JOINT_FIXED,
    JOINT_FREE,
    JOINT_PRISMATIC,
    JOINT_REVOLUTE,
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
def dof_count(jtype: int):
    n = int(0)  # noqa: UP018, RUF046
    if jtype == JOINT_REVOLUTE or jtype == JOINT_PRISMATIC:
        n = 1
    elif jtype == JOINT_BALL:
        n = 3
    elif jtype == JOINT_FREE or jtype == JOINT_DISTANCE:
        n = 6
    return n


@wp.func
def articulation_qdd(a: int, joint_start: int, joint_end: int, joint_q: wp.array(dtype=float),
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
                     body_qd: wp.array(dtype=wp.spatial_vector), body_f: wp.array(dtype=wp.spatial_vector),
                     use_body_f: int, body_com: wp.array(dtype=wp.vec3), body_mass: wp.array(dtype=float),
                     body_inertia: wp.array(dtype=wp.mat33), gravity: wp.vec3, qdd: wp.array(dtype=float)):
    """Joint accelerations of one articulation (written to ``qdd`` at the joints' velocity indices)."""
    poses = wp.zeros(MAX_JOINTS, dtype=wp.transform)
    vel = wp.zeros(MAX_JOINTS, dtype=wp.spatial_vector)
    acc = wp.zeros(MAX_JOINTS, dtype=wp.spatial_vector)
    frc = wp.zeros(MAX_JOINTS, dtype=wp.spatial_vector)
    c_m = wp.zeros(MAX_JOINTS, dtype=float)
    c_h = wp.zeros(MAX_JOINTS, dtype=wp.vec3)
    c_I = wp.zeros(MAX_JOINTS, dtype=wp.mat33)
    S = wp.zeros(MAX_DOFS, dtype=wp.spatial_vector)
    tau = wp.zeros(MAX_DOFS, dtype=float)
    H = wp.zeros(MAX_DOFS * MAX_DOFS, dtype=float)
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
        nd = dof_count(jtype)
        s0 = d0 - d_first
        if jtype == JOINT_REVOLUTE:
            e = wp.quat_rotate(R, joint_axis[joint_axis_start[j]])
            S[s0] = wp.spatial_vector(e, wp.cross(P, e))
        elif jtype == JOINT_PRISMATIC:
            S[s0] = wp.spatial_vector(wp.vec3(0.0, 0.0, 0.0), wp.quat_rotate(R, joint_axis[joint_axis_start[j]]))
        elif jtype == JOINT_BALL:
            for i in range(3):
                e = wp.quat_rotate(R, wp.vec3(wp.where(i == 0, 1.0, 0.0), wp.where(i == 1, 1.0, 0.0),
                                              wp.where(i == 2, 1.0, 0.0)))
                S[s0 + i] = wp.spatial_vector(e, wp.cross(P, e))
        elif nd == 6:
            for i in range(3):
                e = wp.quat_rotate(R, wp.vec3(wp.where(i == 0, 1.0, 0.0), wp.where(i == 1, 1.0, 0.0),
                                              wp.where(i == 2, 1.0, 0.0)))
                S[s0 + i] = wp.spatial_vector(e, wp.cross(P, e))
                S[s0 + 3 + i] = wp.spatial_vector(wp.vec3(0.0, 0.0, 0.0), e)
        v_rel = wp.spatial_vector()
        for i in range(nd):
            v_rel = v_rel + S[s0 + i] * joint_qd[d0 + i]
        v_c = v_p + v_rel
        # velocity-product acceleration: the axes are fixed in the parent (a free joint's rotation axes pass
        # through the moving child origin, which adds v_rel_lin x w_rel)
        c = cross_motion(v_p, v_rel)
        if nd == 6:
            w_rel = wp.quat_rotate(R, w_j)
            u_rel = wp.quat_rotate(R, v_j)
            c = c + wp.spatial_vector(wp.vec3(0.0, 0.0, 0.0), wp.cross(u_rel, w_rel))
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

    # backward pass: composite inertias, bias forces, joint forces, mass matrix columns
    for kk in range(joint_end - joint_start):
        j = joint_end - 1 - kk
        k = j - joint_start
        jtype = joint_type[j]
        nd = dof_count(jtype)
        d0 = joint_qd_start[j]
        s0 = d0 - d_first
        f = frc[k]
        for i in range(nd):
            # generalised force: joint drive/limit for 1-dof joints, minus the bias
            applied = float(0.0)  # noqa: UP018
            if jtype == JOINT_REVOLUTE or jtype == JOINT_PRISMATIC:
                ax = joint_axis_start[j]
                applied = joint_axis_force(joint_q[joint_q_start[j]], joint_qd[d0], joint_act[ax], joint_target_ke[ax],
                                           joint_target_kd[ax], joint_limit_lower[ax], joint_limit_upper[ax],
                                           joint_limit_ke[ax], joint_limit_kd[ax], joint_axis_mode[ax])
            tau[s0 + i] = applied - dot6(S[s0 + i], f)
        # mass matrix entries of this joint's dofs with its own and its ancestors' dofs
        for i in range(nd):
            F = inertia_apply(c_m[k], c_h[k], c_I[k], S[s0 + i])
            jj = j
            while jj >= joint_start:
                ndj = dof_count(joint_type[jj])
                sj = joint_qd_start[jj] - d_first
                for l in range(ndj):
                    val = dot6(S[sj + l], F)
                    H[(s0 + i) * MAX_DOFS + sj + l] = val
                    H[(sj + l) * MAX_DOFS + s0 + i] = val
                nxt = joint_ancestor[jj]
                if nxt < joint_start:
                    jj = joint_start - 1
                else:
                    jj = nxt
            H[(s0 + i) * MAX_DOFS + s0 + i] = H[(s0 + i) * MAX_DOFS + s0 + i] + joint_armature[d0 + i]
        anc = joint_ancestor[j]
        if anc >= joint_start and anc < j:
            ka = anc - joint_start
            frc[ka] = frc[ka] + f
            c_m[ka] = c_m[ka] + c_m[k]
            c_h[ka] = c_h[ka] + c_h[k]
            c_I[ka] = c_I[ka] + c_I[k]

    # Cholesky H = L L^T (in place, lower triangle), then L L^T qdd = tau
    for i in range(n):
        for jc in range(i + 1):
            s = H[i * MAX_DOFS + jc]
            for p in range(jc):
                s = s - H[i * MAX_DOFS + p] * H[jc * MAX_DOFS + p]
            if i == jc:
                H[i * MAX_DOFS + i] = wp.sqrt(wp.max(s, 1.0e-12))
            else:
                H[i * MAX_DOFS + jc] = s / H[jc * MAX_DOFS + jc]
    for i in range(n):
        s = tau[i]
        for p in range(i):
            s = s - H[i * MAX_DOFS + p] * tau[p]
        tau[i] = s / H[i * MAX_DOFS + i]
    for ii in range(n):
        i = n - 1 - ii
        s = tau[i]
        for p in range(i + 1, n):
            s = s - H[p * MAX_DOFS + i] * tau[p]
        tau[i] = s / H[i * MAX_DOFS + i]
    for i in range(n):
        qdd[d_first + i] = tau[i]


@wp.kernel(enable_backward=False)
def eval_articulation_qdd(articulation_start: wp.array(dtype=int), joint_q: wp.array(dtype=float),
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
                          body_qd: wp.array(dtype=wp.spatial_vector), body_f: wp.array(dtype=wp.spatial_vector),
                          use_body_f: int, body_com: wp.array(dtype=wp.vec3), body_mass: wp.array(dtype=float),
                          body_inertia: wp.array(dtype=wp.mat33), gravity: wp.vec3, qdd: wp.array(dtype=float)):
    a = wp.tid()
    articulation_qdd(a, articulation_start[a], articulation_start[a + 1], joint_q, joint_qd, joint_act,
                     joint_q_start, joint_qd_start, joint_type, joint_parent, joint_child, joint_ancestor, joint_X_p,
                     joint_X_c, joint_axis, joint_axis_start, joint_axis_dim, joint_axis_mode, joint_target_ke,
                     joint_target_kd, joint_limit_lower, joint_limit_upper, joint_limit_ke, joint_limit_kd,
                     joint_armature, body_q, body_qd, body_f, use_body_f, body_com, body_mass, body_inertia, gravity,
                     qdd)


@wp.kernel(enable_backward=False)
def integrate_joints(joint_type: wp.array(dtype=int), joint_q_start: wp.array(dtype=int),
                     joint_qd_start: wp.array(dtype=int), joint_q: wp.array(dtype=float),
                     joint_qd: wp.array(dtype=float), qdd: wp.array(dtype=float), dt: float,
                     joint_q_new: wp.array(dtype=float), joint_qd_new: wp.array(dtype=float)):
    """Semi-implicit Euler on one joint's coordinates: qd += qdd dt, then q += qd dt (quaternions on the sphere)."""
    j = wp.tid()
    jtype = joint_type[j]
    q0 = joint_q_start[j]
    d0 = joint_qd_start[j]
    nd = dof_count(jtype)
    for i in range(nd):
        joint_qd_new[d0 + i] = joint_qd[d0 + i] + qdd[d0 + i] * dt
    if jtype == JOINT_REVOLUTE or jtype == JOINT_PRISMATIC:
        joint_q_new[q0] = joint_q[q0] + joint_qd_new[d0] * dt
    elif jtype == JOINT_BALL or nd == 6:
        qo = q0
        if nd == 6:
            qo = q0 + 3
            for i in range(3):
                joint_q_new[q0 + i] = joint_q[q0 + i] + joint_qd_new[d0 + 3 + i] * dt
        r = wp.quat(joint_q[qo], joint_q[qo + 1], joint_q[qo + 2], joint_q[qo + 3])
        w = wp.vec3(joint_qd_new[d0], joint_qd_new[d0 + 1], joint_qd_new[d0 + 2])
        r = wp.normalize(r + wp.quat(w[0], w[1], w[2], 0.0) * r * (0.5 * dt))
        for i in range(4):
            joint_q_new[qo + i] = r[i]


@wp.kernel(enable_backward=False)
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


class FeatherstoneIntegrator(Integrator):
    """Reduced-coordinate articulated-body integrator (composite rigid body mass matrix, Cholesky solve); see the
    module docstring.

    Args:
        model: the model to simulate (checked for supported joints and sizes).
        angular_damping: kept for warp.sim's signature (joint damping comes from the drives' ``target_kd``).
        friction_smoothing: Huber width of the contact friction (as ``SemiImplicitIntegrator``).
        update_mass_matrix_every, use_tile_gemm, fuse_cholesky: warp.sim's tuning knobs, accepted and ignored (the
            mass matrix is rebuilt and factored every step, per articulation).
    """

    def __init__(self, model=None, angular_damping: float = 0.05, update_mass_matrix_every: int = 1,
                 friction_smoothing: float = 1.0, use_tile_gemm: bool = False, fuse_cholesky: bool = True):
        self.angular_damping = angular_damping
        self.friction_smoothing = friction_smoothing
        self._qd_com = None
        self._validated = None
        if model is not None:
            self._validate(model)
            self._validated = model

    @staticmethod
    def _validate(model) -> None:
        types = model.joint_type.numpy() if model.joint_count else np.zeros(0, np.int32)
        ok = {int(JOINT_REVOLUTE), int(JOINT_PRISMATIC), int(JOINT_BALL), int(JOINT_FIXED), int(JOINT_FREE),
              int(JOINT_DISTANCE)}
        bad = sorted({int(t) for t in types} - ok)
        if bad:
            raise SimError(f"FeatherstoneIntegrator: joint types {bad} are not supported (revolute, prismatic, ball, "
                           "fixed, free, distance)")
        if model.articulation_max_joints > MAX_JOINTS:
            raise SimError(f"FeatherstoneIntegrator: an articulation has more than {MAX_JOINTS} joints")
        if model.articulation_count:
            starts = model.articulation_start.numpy()
            dstart = model.joint_qd_start.numpy()
            if np.max(dstart[starts[1:]] - dstart[starts[:-1]]) > MAX_DOFS:
                raise SimError(f"FeatherstoneIntegrator: an articulation has more than {MAX_DOFS} degrees of freedom")

    def eval_qdd(self, model, state, control=None, use_body_f: bool = False):
        """Joint accelerations at ``state`` (joint coordinates and velocities) under ``control``'s joint forces,
        gravity and (``use_body_f``) the external wrenches in ``state.body_f``; a new float array."""
        if control is None:
            control = model.control(clone_variables=False)
        qdd = wp.empty(model.joint_dof_count, dtype=float, device=model.device)
        body_f = state.body_f if state.body_f is not None else wp.zeros(1, dtype=wp.spatial_vector,
                                                                         device=model.device)
        wp.launch(eval_articulation_qdd, dim=model.articulation_count,
                  inputs=[model.articulation_start, state.joint_q, state.joint_qd, control.joint_act,
                          model.joint_q_start, model.joint_qd_start, model.joint_type, model.joint_parent,
                          model.joint_child, model.joint_ancestor, model.joint_X_p, model.joint_X_c, model.joint_axis,
                          model.joint_axis_start, model.joint_axis_dim, model.joint_axis_mode, model.joint_target_ke,
                          model.joint_target_kd, model.joint_limit_lower, model.joint_limit_upper,
                          model.joint_limit_ke, model.joint_limit_kd, model.joint_armature, state.body_q,
                          state.body_qd, body_f, int(bool(use_body_f)), model.body_com, model.body_mass,
                          model.body_inertia, wp.vec3(*model.gravity)],
                  outputs=[qdd], device=model.device)
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
            if self._qd_com is None or len(self._qd_com) != model.body_count:
                self._qd_com = wp.zeros(model.body_count, dtype=wp.spatial_vector, device=model.device)
            wp.launch(com_velocities, dim=model.joint_count,
                      inputs=[model.joint_child, model.joint_X_c, state_in.body_q, model.body_com, state_in.body_qd],
                      outputs=[self._qd_com], device=model.device)
            qd_fk = state_in.body_qd
            state_in.body_qd = self._qd_com
            try:
                eval_rigid_contact_forces(model, state_in, state_in.body_f, self.friction_smoothing)
            finally:
                state_in.body_qd = qd_fk
        qdd = self.eval_qdd(model, state_in, control, use_body_f=True)
        wp.launch(integrate_joints, dim=model.joint_count,
                  inputs=[model.joint_type, model.joint_q_start, model.joint_qd_start, state_in.joint_q,
                          state_in.joint_qd, qdd, dt],
                  outputs=[state_out.joint_q, state_out.joint_qd], device=model.device)
        eval_fk(model, state_out.joint_q, state_out.joint_qd, None, state_out)
        return state_out
