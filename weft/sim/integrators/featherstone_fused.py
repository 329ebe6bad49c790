"""The Featherstone integrator's mass matrix and generalised forces in one kernel, one articulation per thread, for
steps that are not differentiated.

The same quantities as featherstone_dynamics.py's four per-joint kernels (tested equal; the per-joint terms -
motion subspace columns, the joint's velocity-product acceleration, the child's spatial inertia about the origin and
the external wrench - are featherstone_math's funcs, used by both), computed in one recursive
pass over each articulation with its poses, velocities, composite inertias and motion subspaces in thread-local
arrays. It runs 1.6-1.7x faster than the four kernels on the CPU (one launch, no per-joint chain walks), but its
generated adjoint was the costliest unit of weft.sim to compile (about 50 s of g++, 8 minutes of NVRTC per
architecture optimised), so it has no backward: steps on a ``wp.Tape`` use the per-joint kernels.
"""

from __future__ import annotations

import functools

import numpy as np

import weft as wp

from ..articulation import _joint_motion
from ..forces.joints import joint_axis_force
from .featherstone_math import (
    body_inertia_world,
    cross_force,
    cross_motion,
    dof_count,
    dot6,
    has_axes,
    inertia_apply,
    joint_bias_term,
    motion_column,
    rotation_axes,
    wrench_about_origin,
)

# thread-local capacity (joints, degrees of freedom) of eval_articulation_dynamics: larger articulations use the
# per-joint kernels (one variant keeps the compile cost of the suite and of CI's NVRTC check down)
DYNAMICS_CAPACITIES = ((16, 32),)


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
        the bias forces, at the joints' velocity indices of ``tau``) of one articulation."""
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
            ax0 = joint_axis_start[j]
            e0, b1, b2 = rotation_axes(jtype, joint_axis_dim[j, 0], joint_axis_dim[j, 1], ax0, q0, joint_q, joint_axis)
            for i in range(nd):
                s_i, _e_i, _angular = motion_column(jtype, joint_axis_dim[j, 0], joint_axis_dim[j, 1], ax0, i,
                                                    joint_axis, e0, b1, b2, R, P)
                S[s0 + i] = s_i
            v_rel = wp.spatial_vector()
            for i in range(nd):
                v_rel = v_rel + S[s0 + i] * joint_qd[d0 + i]
            v_c = v_p + v_rel
            # velocity-product acceleration: the axes are fixed in the parent or carried by the joint's coordinates;
            # axes through the moving child origin (free, D6) add v_rel_lin x w_rel
            c = cross_motion(v_p, v_rel) + joint_bias_term(jtype, joint_axis_dim[j, 0], joint_axis_dim[j, 1], d0,
                                                           joint_qd, e0, b1, b2, R, P, wp.quat_rotate(R, v_j),
                                                           wp.quat_rotate(R, w_j))
            a_c = a_p + c
            vel[k] = v_c
            acc[k] = a_c
            # the child body's spatial inertia about the world origin
            child = joint_child[j]
            m = body_mass[child]
            h, I_o, com = body_inertia_world(X_wc, body_com[child], m, body_inertia[child])
            c_m[k] = m
            c_h[k] = h
            c_I[k] = I_o
            f = inertia_apply(m, h, I_o, a_c) + cross_force(v_c, inertia_apply(m, h, I_o, v_c))
            if use_body_f != 0:
                # external wrench about the centre of mass -> about the world origin
                f = f - wrench_about_origin(body_f[child], com)
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


    @wp.kernel(enable_backward=False)
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


def dynamics_capacity(model) -> tuple[int, int] | None:
    """The smallest of DYNAMICS_CAPACITIES that holds ``model``'s articulations (joints, degrees of freedom), None if
    none does (the per-joint kernels then run)."""
    n_dofs = 0
    if model.articulation_count:
        starts = model.articulation_start.numpy()
        dstart = model.joint_qd_start.numpy()
        n_dofs = int(np.max(dstart[starts[1:]] - dstart[starts[:-1]]))
    return next((c for c in DYNAMICS_CAPACITIES if c[0] >= model.articulation_max_joints and c[1] >= n_dofs), None)


def dynamics_kernel(model):
    """The ``eval_articulation_dynamics`` variant for ``model`` (see dynamics_capacity), None if its articulations
    are too large."""
    key = "_featherstone_dynamics_kernel"
    if key not in model.__dict__:
        cap = dynamics_capacity(model)
        model.__dict__[key] = None if cap is None else _dynamics_kernel(*cap)
    return model.__dict__[key]
