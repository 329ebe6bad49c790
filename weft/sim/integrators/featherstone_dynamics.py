"""The Featherstone integrator's joint-space mass matrix and generalised forces, as four small per-joint kernels.

One thread per joint in every kernel; the recursions over the kinematic tree walk each joint's chain of ancestors
(``joint_ancestor``, within its articulation) instead of keeping an articulation in thread-local arrays:

1. ``dynamics_joint_terms``: motion subspace columns ``S`` (world frame, about the world origin), the joint's relative
   velocity and velocity-product acceleration, the child body's spatial inertia about the world origin and the
   external wrench;
2. ``dynamics_velocities``: each body's velocity (the sum of the relative velocities along its chain) and the joint's
   velocity-product acceleration term with its parent's velocity;
3. ``dynamics_bias_forces``: each body's acceleration (the base's gravity plus the chain's terms) and bias force
   ``I a + v x* I v - f_ext``;
4. ``dynamics_mass_matrix``: the joint's composite inertia ``I^c`` and force ``F`` (sums over its subtree, a list
   made once per model), ``tau = joint forces - S^T F`` and the mass matrix ``H[r, s] = S_s^T I^c S_r`` of each
   joint's degrees of freedom with its own and its ancestors' (plus armature).

Every output element is written once (gathers, no atomics: a float atomic is a compare-and-swap loop on the CPU, and
scattering the composite sums along the chains made a step 1.5x slower), so the generated adjoints are exact; the
kernels hold no thread-local arrays, which kept the single articulation kernel's generated adjoint (a stack of every
array per joint iteration) the costliest unit of weft.sim to compile. Poses come from ``eval_fk`` (``body_q``), so the
joint transforms are not recomputed here.
"""

from __future__ import annotations

import weft as wp

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


@wp.kernel
def dynamics_joint_terms(joint_articulation: wp.array(dtype=int), joint_q: wp.array(dtype=float),
                         joint_qd: wp.array(dtype=float),
                         joint_q_start: wp.array(dtype=int), joint_qd_start: wp.array(dtype=int),
                         joint_type: wp.array(dtype=int), joint_parent: wp.array(dtype=int),
                         joint_child: wp.array(dtype=int), joint_ancestor: wp.array(dtype=int),
                         joint_X_p: wp.array(dtype=wp.transform), joint_X_c: wp.array(dtype=wp.transform),
                         joint_axis: wp.array(dtype=wp.vec3), joint_axis_start: wp.array(dtype=int),
                         joint_axis_dim: wp.array(dtype=int, ndim=2), body_q: wp.array(dtype=wp.transform),
                         body_f: wp.array(dtype=wp.spatial_vector), use_body_f: int,
                         body_com: wp.array(dtype=wp.vec3), body_mass: wp.array(dtype=float),
                         body_inertia: wp.array(dtype=wp.mat33), S: wp.array(dtype=wp.spatial_vector),
                         v_rel: wp.array(dtype=wp.spatial_vector), c_rel: wp.array(dtype=wp.spatial_vector),
                         b_m: wp.array(dtype=float), b_h: wp.array(dtype=wp.vec3), b_I: wp.array(dtype=wp.mat33),
                         f_ext: wp.array(dtype=wp.spatial_vector)):
    j = wp.tid()
    if joint_articulation[j] < 0:
        return
    parent = joint_parent[j]
    child = joint_child[j]
    X_wp = wp.transform_identity()
    if parent >= 0:
        X_wp = body_q[parent]
    # the joint's axes turn with its parent anchor frame and pass through the child anchor's origin P
    R = wp.transform_get_rotation(X_wp * joint_X_p[j])
    X_wc = body_q[child]
    P = wp.transform_point(X_wc, wp.transform_get_translation(joint_X_c[j]))
    jtype = joint_type[j]
    lin = joint_axis_dim[j, 0]
    ang = joint_axis_dim[j, 1]
    d0 = joint_qd_start[j]
    e0, b1, b2 = rotation_axes(jtype, lin, ang, joint_axis_start[j], joint_q_start[j], joint_q, joint_axis)
    v = wp.spatial_vector()
    w_rel = wp.vec3(0.0, 0.0, 0.0)
    u_rel = wp.vec3(0.0, 0.0, 0.0)
    for i in range(dof_count(jtype, lin, ang)):
        s, e, angular = motion_column(jtype, lin, ang, joint_axis_start[j], i, joint_axis, e0, b1, b2, R, P)
        qd = joint_qd[d0 + i]
        if angular != 0:
            w_rel = w_rel + e * qd
        else:
            u_rel = u_rel + e * qd
        S[d0 + i] = s
        v = v + s * qd
    v_rel[j] = v
    # velocity-product acceleration of the joint's own motion: axes carried by its coordinates, and for axes through
    # the moving child origin (free, D6) the term u_rel x w_rel (the parent's velocity enters in kernel 3)
    c_rel[j] = joint_bias_term(jtype, lin, ang, d0, joint_qd, e0, b1, b2, R, P, u_rel, w_rel)
    # the child body's spatial inertia about the world origin
    m = body_mass[child]
    h, I_o, com = body_inertia_world(X_wc, body_com[child], m, body_inertia[child])
    b_m[j] = m
    b_h[j] = h
    b_I[j] = I_o
    fe = wp.spatial_vector()
    if use_body_f != 0:
        # external wrench about the centre of mass -> about the world origin
        fe = wrench_about_origin(body_f[child], com)
    f_ext[j] = fe


@wp.kernel
def dynamics_velocities(joint_articulation: wp.array(dtype=int), articulation_start: wp.array(dtype=int),
                        joint_ancestor: wp.array(dtype=int), v_rel: wp.array(dtype=wp.spatial_vector),
                        c_rel: wp.array(dtype=wp.spatial_vector), v_body: wp.array(dtype=wp.spatial_vector),
                        c_acc: wp.array(dtype=wp.spatial_vector)):
    j = wp.tid()
    a = joint_articulation[j]
    if a < 0:
        return
    start = articulation_start[a]
    # the parent's velocity: the relative velocities of the strict ancestors (zero above the articulation's root)
    v_p = wp.spatial_vector()
    jj = joint_ancestor[j]
    while jj >= start:
        v_p = v_p + v_rel[jj]
        jj = joint_ancestor[jj]
    v = v_rel[j]
    v_body[j] = v_p + v
    # the joint's term of its child's acceleration (besides the parent's acceleration)
    c_acc[j] = c_rel[j] + cross_motion(v_p, v)


@wp.kernel
def dynamics_bias_forces(joint_articulation: wp.array(dtype=int), articulation_start: wp.array(dtype=int),
                         joint_ancestor: wp.array(dtype=int), gravity: wp.vec3,
                         c_acc: wp.array(dtype=wp.spatial_vector), v_body: wp.array(dtype=wp.spatial_vector),
                         b_m: wp.array(dtype=float), b_h: wp.array(dtype=wp.vec3), b_I: wp.array(dtype=wp.mat33),
                         f_ext: wp.array(dtype=wp.spatial_vector), f_body: wp.array(dtype=wp.spatial_vector)):
    j = wp.tid()
    a = joint_articulation[j]
    if a < 0:
        return
    start = articulation_start[a]
    acc = wp.spatial_vector(wp.vec3(0.0, 0.0, 0.0), -gravity)  # the base accelerates upwards: gravity
    jj = j
    while jj >= start:
        acc = acc + c_acc[jj]
        jj = joint_ancestor[jj]
    v = v_body[j]
    m = b_m[j]
    h = b_h[j]
    I_o = b_I[j]
    f_body[j] = inertia_apply(m, h, I_o, acc) + cross_force(v, inertia_apply(m, h, I_o, v)) - f_ext[j]


@wp.kernel
def dynamics_mass_matrix(joint_articulation: wp.array(dtype=int), articulation_start: wp.array(dtype=int),
                         articulation_H_start: wp.array(dtype=int), joint_q: wp.array(dtype=float),
                         joint_qd: wp.array(dtype=float), joint_act: wp.array(dtype=float),
                         joint_q_start: wp.array(dtype=int), joint_qd_start: wp.array(dtype=int),
                         joint_type: wp.array(dtype=int), joint_ancestor: wp.array(dtype=int),
                         joint_axis_start: wp.array(dtype=int), joint_axis_dim: wp.array(dtype=int, ndim=2),
                         joint_axis_mode: wp.array(dtype=int), joint_target_ke: wp.array(dtype=float),
                         joint_target_kd: wp.array(dtype=float), joint_limit_lower: wp.array(dtype=float),
                         joint_limit_upper: wp.array(dtype=float), joint_limit_ke: wp.array(dtype=float),
                         joint_limit_kd: wp.array(dtype=float), joint_armature: wp.array(dtype=float),
                         subtree_start: wp.array(dtype=int), subtree: wp.array(dtype=int),
                         S: wp.array(dtype=wp.spatial_vector), f_body: wp.array(dtype=wp.spatial_vector),
                         b_m: wp.array(dtype=float), b_h: wp.array(dtype=wp.vec3), b_I: wp.array(dtype=wp.mat33),
                         H: wp.array(dtype=float), tau: wp.array(dtype=float)):
    j = wp.tid()
    a = joint_articulation[j]
    if a < 0:
        return
    start = articulation_start[a]
    h0 = articulation_H_start[a]
    d_first = joint_qd_start[start]
    n = joint_qd_start[articulation_start[a + 1]] - d_first
    jtype = joint_type[j]
    nd = dof_count(jtype, joint_axis_dim[j, 0], joint_axis_dim[j, 1])
    d0 = joint_qd_start[j]
    # the joint's subtree (itself and its descendants): composite inertia and the sum of the bias forces
    m = float(0.0)  # noqa: UP018
    hc = wp.vec3(0.0, 0.0, 0.0)
    Ic = wp.mat33()
    f = wp.spatial_vector()
    for k in range(subtree_start[j], subtree_start[j + 1]):
        i = subtree[k]
        m = m + b_m[i]
        hc = hc + b_h[i]
        Ic = Ic + b_I[i]
        f = f + f_body[i]
    for i in range(nd):
        # generalised force: per-axis drive/limit of the joints with axes (not ball/free), minus the bias
        applied = float(0.0)  # noqa: UP018
        if has_axes(jtype):
            ax = joint_axis_start[j] + i
            applied = joint_axis_force(joint_q[joint_q_start[j] + i], joint_qd[d0 + i], joint_act[ax],
                                       joint_target_ke[ax], joint_target_kd[ax], joint_limit_lower[ax],
                                       joint_limit_upper[ax], joint_limit_ke[ax], joint_limit_kd[ax],
                                       joint_axis_mode[ax])
        tau[d0 + i] = applied - dot6(S[d0 + i], f)
    # mass matrix entries of this joint's dofs with its own (lower triangle mirrored) and its ancestors' dofs
    for i in range(nd):
        Fi = inertia_apply(m, hc, Ic, S[d0 + i])
        r = d0 + i - d_first
        for l in range(i):
            val = dot6(S[d0 + l], Fi)
            H[h0 + r * n + r - i + l] = val
            H[h0 + (r - i + l) * n + r] = val
        H[h0 + r * n + r] = dot6(S[d0 + i], Fi) + joint_armature[d0 + i]
        jj = joint_ancestor[j]
        while jj >= start:
            sj = joint_qd_start[jj]
            for l in range(dof_count(joint_type[jj], joint_axis_dim[jj, 0], joint_axis_dim[jj, 1])):
                val = dot6(S[sj + l], Fi)
                H[h0 + r * n + sj - d_first + l] = val
                H[h0 + (sj - d_first + l) * n + r] = val
            jj = joint_ancestor[jj]
