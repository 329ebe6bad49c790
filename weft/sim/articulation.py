"""Forward and inverse kinematics of articulations: ``eval_fk`` (joint coordinates -> body poses and twists) and
``eval_ik`` (body poses and twists -> joint coordinates), as in warp.sim 1.7.

Conventions: a body's pose ``body_q`` is its frame in the world; its twist ``body_qd`` is (angular velocity,
linear velocity of the body frame's origin), both in world coordinates. A joint's motion ``X_j`` maps its parent
anchor frame to its child anchor frame; multi-axis rotations are applied about the first axis, then about the
second as carried by the first, then the third.
"""

from __future__ import annotations

import functools

import numpy as np

import weft as wp

from . import fk_adjoint
from .model import (
    JOINT_BALL,
    JOINT_COMPOUND,
    JOINT_D6,
    JOINT_DISTANCE,
    JOINT_FIXED,
    JOINT_FREE,
    JOINT_PRISMATIC,
    JOINT_REVOLUTE,
    JOINT_UNIVERSAL,
    SimError,
)


@wp.func
def _frame_offset(a0: wp.vec3, a1: wp.vec3, a2: wp.vec3):
    # rotation whose columns are the three axes
    m = wp.mat33(a0[0], a1[0], a2[0], a0[1], a1[1], a2[1], a0[2], a1[2], a2[2])
    return wp.quat_from_matrix(m)


@wp.func
def _rotations_3(a0: wp.vec3, a1: wp.vec3, a2: wp.vec3, q0: float, q1: float, q2: float, qd0: float, qd1: float,
                 qd2: float):
    """Rotation and angular velocity of three successive rotations (each axis carried by the ones before)."""
    off = _frame_offset(a0, a1, a2)
    e0 = wp.quat_rotate(off, wp.vec3(1.0, 0.0, 0.0))
    e1 = wp.quat_rotate(off, wp.vec3(0.0, 1.0, 0.0))
    e2 = wp.quat_rotate(off, wp.vec3(0.0, 0.0, 1.0))
    r0 = wp.quat_from_axis_angle(e0, q0)
    b1 = wp.quat_rotate(r0, e1)
    r1 = wp.quat_from_axis_angle(b1, q1)
    r10 = r1 * r0
    b2 = wp.quat_rotate(r10, e2)
    r2 = wp.quat_from_axis_angle(b2, q2)
    return r2 * r10, e0 * qd0 + b1 * qd1 + b2 * qd2


@wp.func
def _xyz_angles(q: wp.quat):
    """Angles (a, b, c) with R(q) = Rx(a) Ry(b) Rz(c)."""
    m = wp.quat_to_matrix(q)
    s = wp.clamp(m[0, 2], -1.0, 1.0)
    return wp.vec3(wp.atan2(-m[1, 2], m[2, 2]), wp.asin(s), wp.atan2(-m[0, 1], m[0, 0]))


@wp.func
def _invert_rotations_3(a0: wp.vec3, a1: wp.vec3, a2: wp.vec3, q_p: wp.quat, q_c: wp.quat, w_err: wp.vec3):
    """Coordinates and velocities of three successive rotations from the anchors' orientations and the relative
    angular velocity (world frame)."""
    off = _frame_offset(a0, a1, a2)
    rel = wp.quat_inverse(off) * wp.quat_inverse(q_p) * q_c * off
    ang = _xyz_angles(rel)
    e0 = wp.quat_rotate(off, wp.vec3(1.0, 0.0, 0.0))
    e1 = wp.quat_rotate(off, wp.vec3(0.0, 1.0, 0.0))
    e2 = wp.quat_rotate(off, wp.vec3(0.0, 0.0, 1.0))
    r0 = wp.quat_from_axis_angle(e0, ang[0])
    b1 = wp.quat_rotate(r0, e1)
    r1 = wp.quat_from_axis_angle(b1, ang[1])
    b2 = wp.quat_rotate(r1 * r0, e2)
    w = wp.quat_rotate_inv(q_p, w_err)
    # w = e0 qd0 + b1 qd1 + b2 qd2, solved by Cramer's rule
    det = wp.dot(e0, wp.cross(b1, b2))
    qd = wp.vec3(wp.dot(w, wp.cross(b1, b2)), wp.dot(e0, wp.cross(w, b2)), wp.dot(e0, wp.cross(b1, w))) / det
    return ang, qd


@wp.func
def _hinge_angle(axis: wp.vec3, q: wp.quat):
    """Angle of the twist of ``q`` about ``axis`` (unit)."""
    return 2.0 * wp.atan2(wp.dot(axis, wp.vec3(q[0], q[1], q[2])), q[3])


@wp.func
def _joint_motion(jtype: int, lin_count: int, ang_count: int, axis_start: int, q0: int, d0: int,
                  joint_q: wp.array(dtype=float), joint_qd: wp.array(dtype=float),
                  joint_axis: wp.array(dtype=wp.vec3)):
    """The joint's transform and twist (angular, linear) in its parent anchor frame."""
    pos = wp.vec3(0.0, 0.0, 0.0)
    rot = wp.quat_identity()
    w = wp.vec3(0.0, 0.0, 0.0)
    v = wp.vec3(0.0, 0.0, 0.0)
    if jtype == JOINT_PRISMATIC:
        a = joint_axis[axis_start]
        pos = a * joint_q[q0]
        v = a * joint_qd[d0]
    elif jtype == JOINT_REVOLUTE:
        a = joint_axis[axis_start]
        rot = wp.quat_from_axis_angle(a, joint_q[q0])
        w = a * joint_qd[d0]
    elif jtype == JOINT_BALL:
        rot = wp.quat(joint_q[q0], joint_q[q0 + 1], joint_q[q0 + 2], joint_q[q0 + 3])
        w = wp.vec3(joint_qd[d0], joint_qd[d0 + 1], joint_qd[d0 + 2])
    elif jtype == JOINT_FREE or jtype == JOINT_DISTANCE:
        pos = wp.vec3(joint_q[q0], joint_q[q0 + 1], joint_q[q0 + 2])
        rot = wp.quat(joint_q[q0 + 3], joint_q[q0 + 4], joint_q[q0 + 5], joint_q[q0 + 6])
        w = wp.vec3(joint_qd[d0], joint_qd[d0 + 1], joint_qd[d0 + 2])
        v = wp.vec3(joint_qd[d0 + 3], joint_qd[d0 + 4], joint_qd[d0 + 5])
    elif jtype == JOINT_UNIVERSAL:
        a0 = joint_axis[axis_start]
        a1 = joint_axis[axis_start + 1]
        rot, w = _rotations_3(a0, a1, wp.cross(a0, a1), joint_q[q0], joint_q[q0 + 1], 0.0, joint_qd[d0],
                              joint_qd[d0 + 1], 0.0)
    elif jtype == JOINT_COMPOUND:
        rot, w = _rotations_3(joint_axis[axis_start], joint_axis[axis_start + 1], joint_axis[axis_start + 2],
                              joint_q[q0], joint_q[q0 + 1], joint_q[q0 + 2], joint_qd[d0], joint_qd[d0 + 1],
                              joint_qd[d0 + 2])
    elif jtype == JOINT_D6:
        for k in range(3):
            if k < lin_count:
                a = joint_axis[axis_start + k]
                pos = pos + a * joint_q[q0 + k]
                v = v + a * joint_qd[d0 + k]
        ia = axis_start + lin_count
        iq = q0 + lin_count
        idd = d0 + lin_count
        if ang_count == 1:
            a = joint_axis[ia]
            rot = wp.quat_from_axis_angle(a, joint_q[iq])
            w = a * joint_qd[idd]
        elif ang_count == 2:
            a0 = joint_axis[ia]
            a1 = joint_axis[ia + 1]
            rot, w = _rotations_3(a0, a1, wp.cross(a0, a1), joint_q[iq], joint_q[iq + 1], 0.0, joint_qd[idd],
                                  joint_qd[idd + 1], 0.0)
        elif ang_count == 3:
            rot, w = _rotations_3(joint_axis[ia], joint_axis[ia + 1], joint_axis[ia + 2], joint_q[iq],
                                  joint_q[iq + 1], joint_q[iq + 2], joint_qd[idd], joint_qd[idd + 1],
                                  joint_qd[idd + 2])
    return wp.transform(pos, rot), w, v


@wp.func
def _parent_anchor(parent: int, X_pj: wp.transform, body_q: wp.array(dtype=wp.transform),
                   body_qd: wp.array(dtype=wp.spatial_vector), body_com: wp.array(dtype=wp.vec3)):
    """World frame of the parent anchor, the parent's angular velocity and the anchor point's linear velocity."""
    X = X_pj
    w = wp.vec3(0.0, 0.0, 0.0)
    v = wp.vec3(0.0, 0.0, 0.0)
    if parent >= 0:
        X_wp = body_q[parent]
        X = X_wp * X_pj
        r = wp.transform_get_translation(X) - wp.transform_point(X_wp, body_com[parent])
        tw = body_qd[parent]
        w = wp.spatial_top(tw)
        v = wp.spatial_bottom(tw) + wp.cross(w, r)
    return X, w, v


MAX_ARTICULATION_JOINTS = 256  # joints of one articulation that eval_fk keeps in registers/stack


# thread-local capacities of eval_fk's kernel variants: the smallest that holds the model's largest articulation is
# used (zeroing and replaying 256-entry arrays made the backward of a 9-joint arm 3x slower than with 16)
FK_CAPACITIES = (16, 64, MAX_ARTICULATION_JOINTS)


@functools.cache
def _fk_kernel(cap: int, hand_adjoint: bool = True, inside_only: bool = False):
    """``eval_articulation_fk`` keeping up to ``cap`` joints of an articulation in thread-local arrays; its backward
    is the hand-written one of fk_adjoint.py when ``hand_adjoint`` (models whose joints it covers), else generated.
    ``inside_only`` (hand-written backward only): every joint's parent is a body of its own articulation or the
    world, so the kernel never reads ``body_q`` / ``body_qd`` and a Tape records it without copying them first
    (an array a kernel reads and writes is copied before a recorded launch: 1.7 MB for 4,096 arms)."""
    reads_outside = not (hand_adjoint and inside_only)

    @wp.func
    def _fk_range(joint_start: int, joint_end: int, joint_q: wp.array(dtype=float), joint_qd: wp.array(dtype=float),
                  joint_q_start: wp.array(dtype=int), joint_qd_start: wp.array(dtype=int),
                  joint_type: wp.array(dtype=int), joint_parent: wp.array(dtype=int),
                  joint_child: wp.array(dtype=int), joint_ancestor: wp.array(dtype=int),
                  joint_X_p: wp.array(dtype=wp.transform), joint_X_c: wp.array(dtype=wp.transform),
                  joint_axis: wp.array(dtype=wp.vec3), joint_axis_start: wp.array(dtype=int),
                  joint_axis_dim: wp.array(dtype=int, ndim=2), body_com: wp.array(dtype=wp.vec3),
                  body_q: wp.array(dtype=wp.transform), body_qd: wp.array(dtype=wp.spatial_vector)):
        # The articulation's poses and twists are kept in thread-local arrays while they are computed and stored to
        # body_q / body_qd afterwards: body_q is then only read in the first loop and only written in the second, so
        # the backward replay reads the values each iteration saw (a parent's pose from an earlier articulation is
        # read from body_q, which this articulation never writes).
        poses = wp.zeros(cap, dtype=wp.transform)
        twists = wp.zeros(cap, dtype=wp.spatial_vector)
        for j in range(joint_start, joint_end):
            parent = joint_parent[j]
            X_pj = joint_X_p[j]
            X_wpj = X_pj
            w_p = wp.vec3(0.0, 0.0, 0.0)
            v_p = wp.vec3(0.0, 0.0, 0.0)
            if parent >= 0:
                anc = joint_ancestor[j]
                X_wp = wp.transform_identity()
                tw = wp.spatial_vector()
                if wp.static(not reads_outside):  # noqa: SIM114 (a static branch: no body_q read is compiled)
                    X_wp = poses[anc - joint_start]
                    tw = twists[anc - joint_start]
                elif anc >= joint_start and anc < j:
                    X_wp = poses[anc - joint_start]
                    tw = twists[anc - joint_start]
                else:
                    X_wp = body_q[parent]
                    tw = body_qd[parent]
                X_wpj = X_wp * X_pj
                r = wp.transform_get_translation(X_wpj) - wp.transform_point(X_wp, body_com[parent])
                w_p = wp.spatial_top(tw)
                v_p = wp.spatial_bottom(tw) + wp.cross(w_p, r)
            X_j, w_j, v_j = _joint_motion(joint_type[j], joint_axis_dim[j, 0], joint_axis_dim[j, 1],
                                          joint_axis_start[j], joint_q_start[j], joint_qd_start[j], joint_q, joint_qd,
                                          joint_axis)
            X_c = joint_X_c[j]
            pose = X_wpj * X_j
            # an identity child frame (URDF/MJCF joints) is skipped; only under the hand-written backward, which
            # differentiates the identity branch itself (the generated adjoint would see no X_c there)
            if not (hand_adjoint and fk_adjoint._is_identity(X_c)):
                pose = pose * wp.transform_inverse(X_c)
            poses[j - joint_start] = pose
            twists[j - joint_start] = wp.spatial_vector(w_p + wp.transform_vector(X_wpj, w_j), v_p + wp.transform_vector(X_wpj, v_j))
        for j in range(joint_start, joint_end):
            body_q[joint_child[j]] = poses[j - joint_start]
            body_qd[joint_child[j]] = twists[j - joint_start]


    @wp.kernel
    def eval_articulation_fk(articulation_start: wp.array(dtype=int), articulation_mask: wp.array(dtype=int),
                             use_mask: int, joint_q: wp.array(dtype=float), joint_qd: wp.array(dtype=float),
                             joint_q_start: wp.array(dtype=int), joint_qd_start: wp.array(dtype=int),
                             joint_type: wp.array(dtype=int), joint_parent: wp.array(dtype=int),
                             joint_child: wp.array(dtype=int), joint_ancestor: wp.array(dtype=int),
                             joint_X_p: wp.array(dtype=wp.transform), joint_X_c: wp.array(dtype=wp.transform),
                             joint_axis: wp.array(dtype=wp.vec3), joint_axis_start: wp.array(dtype=int),
                             joint_axis_dim: wp.array(dtype=int, ndim=2), body_com: wp.array(dtype=wp.vec3),
                             body_q: wp.array(dtype=wp.transform), body_qd: wp.array(dtype=wp.spatial_vector)):
        """Forward kinematics of one articulation per thread (joints in order, parents before children)."""
        a = wp.tid()
        if use_mask != 0 and articulation_mask[a] == 0:  # short-circuits: the dummy mask is never read
            return
        _fk_range(articulation_start[a], articulation_start[a + 1], joint_q, joint_qd, joint_q_start, joint_qd_start,
                  joint_type, joint_parent, joint_child, joint_ancestor, joint_X_p, joint_X_c, joint_axis,
                  joint_axis_start, joint_axis_dim, body_com, body_q, body_qd)

    if hand_adjoint:
        eval_articulation_fk.custom_adjoint = fk_adjoint.launcher(cap, eval_articulation_fk)
    return eval_articulation_fk


# joint types the hand-written eval_fk backward covers (fk_adjoint.py)
_HAND_ADJOINT_TYPES = frozenset(int(t) for t in (JOINT_PRISMATIC, JOINT_REVOLUTE, JOINT_BALL, JOINT_FIXED, JOINT_FREE,
                                                  JOINT_DISTANCE))


def fk_kernel(model):
    """The ``eval_fk`` kernel variant for ``model`` (the smallest capacity that holds its articulations; the
    hand-written backward unless a joint type it does not cover is present)."""
    n = max(int(model.articulation_max_joints), 1)
    hand = model.__dict__.get("_fk_hand_adjoint")
    if hand is None:
        hand = model.__dict__["_fk_hand_adjoint"] = set(model.joint_type.numpy().tolist()) <= _HAND_ADJOINT_TYPES
    inside = model.__dict__.get("_fk_inside_only")
    if inside is None:
        inside = model.__dict__["_fk_inside_only"] = _parents_inside(model)
    return _fk_kernel(next(c for c in FK_CAPACITIES if c >= n), hand, hand and inside)


def _parents_inside(model) -> bool:
    """Whether every joint's parent is the world or a body an earlier joint of the same articulation moves."""
    parent, anc = model.joint_parent.numpy(), model.joint_ancestor.numpy()
    starts = model.articulation_start.numpy()
    j = np.arange(int(starts[0]), int(starts[-1]))
    lo = starts[np.searchsorted(starts, j, side="right") - 1]  # first joint of each joint's articulation
    return not np.any((parent[j] >= 0) & ((anc[j] < lo) | (anc[j] >= j)))


@wp.kernel
def eval_articulation_ik(body_q: wp.array(dtype=wp.transform), body_qd: wp.array(dtype=wp.spatial_vector),
                         body_com: wp.array(dtype=wp.vec3), joint_type: wp.array(dtype=int),
                         joint_parent: wp.array(dtype=int), joint_child: wp.array(dtype=int),
                         joint_X_p: wp.array(dtype=wp.transform), joint_X_c: wp.array(dtype=wp.transform),
                         joint_axis: wp.array(dtype=wp.vec3), joint_axis_start: wp.array(dtype=int),
                         joint_axis_dim: wp.array(dtype=int, ndim=2), joint_q_start: wp.array(dtype=int),
                         joint_qd_start: wp.array(dtype=int), joint_q: wp.array(dtype=float),
                         joint_qd: wp.array(dtype=float)):
    """Joint coordinates and velocities of one joint per thread from the poses and twists of its two bodies."""
    j = wp.tid()
    X_wpj, w_p, v_p = _parent_anchor(joint_parent[j], joint_X_p[j], body_q, body_qd, body_com)
    X_wcj = body_q[joint_child[j]] * joint_X_c[j]
    tw_c = body_qd[joint_child[j]]
    q_p = wp.transform_get_rotation(X_wpj)
    q_c = wp.transform_get_rotation(X_wcj)
    x_err = wp.transform_get_translation(X_wcj) - wp.transform_get_translation(X_wpj)
    w_err = wp.spatial_top(tw_c) - w_p
    v_err = wp.spatial_bottom(tw_c) - v_p
    q_rel = wp.quat_inverse(q_p) * q_c
    x_loc = wp.quat_rotate_inv(q_p, x_err)
    v_loc = wp.quat_rotate_inv(q_p, v_err)
    w_loc = wp.quat_rotate_inv(q_p, w_err)
    jtype = joint_type[j]
    s = joint_axis_start[j]
    q0 = joint_q_start[j]
    d0 = joint_qd_start[j]
    lin_count = joint_axis_dim[j, 0]
    ang_count = joint_axis_dim[j, 1]
    if jtype == JOINT_PRISMATIC:
        a = joint_axis[s]
        joint_q[q0] = wp.dot(x_loc, a)
        joint_qd[d0] = wp.dot(v_loc, a)
    elif jtype == JOINT_REVOLUTE:
        a = joint_axis[s]
        joint_q[q0] = _hinge_angle(a, q_rel)
        joint_qd[d0] = wp.dot(w_loc, a)
    elif jtype == JOINT_BALL:
        for k in range(4):
            joint_q[q0 + k] = q_rel[k]
        for k in range(3):
            joint_qd[d0 + k] = w_loc[k]
    elif jtype == JOINT_FREE or jtype == JOINT_DISTANCE:
        for k in range(3):
            joint_q[q0 + k] = x_loc[k]
            joint_qd[d0 + k] = w_loc[k]
            joint_qd[d0 + 3 + k] = v_loc[k]
        for k in range(4):
            joint_q[q0 + 3 + k] = q_rel[k]
    elif jtype == JOINT_UNIVERSAL:
        a0 = joint_axis[s]
        a1 = joint_axis[s + 1]
        ang, qd = _invert_rotations_3(a0, a1, wp.cross(a0, a1), q_p, q_c, w_err)
        for k in range(2):
            joint_q[q0 + k] = ang[k]
            joint_qd[d0 + k] = qd[k]
    elif jtype == JOINT_COMPOUND:
        ang, qd = _invert_rotations_3(joint_axis[s], joint_axis[s + 1], joint_axis[s + 2], q_p, q_c, w_err)
        for k in range(3):
            joint_q[q0 + k] = ang[k]
            joint_qd[d0 + k] = qd[k]
    elif jtype == JOINT_D6:
        for k in range(3):
            if k < lin_count:
                a = joint_axis[s + k]
                joint_q[q0 + k] = wp.dot(x_loc, a)
                joint_qd[d0 + k] = wp.dot(v_loc, a)
        ia = s + lin_count
        iq = q0 + lin_count
        idd = d0 + lin_count
        if ang_count == 1:
            a = joint_axis[ia]
            joint_q[iq] = _hinge_angle(a, q_rel)
            joint_qd[idd] = wp.dot(w_loc, a)
        elif ang_count >= 2:
            a0 = joint_axis[ia]
            a1 = joint_axis[ia + 1]
            a2 = wp.cross(a0, a1)
            if ang_count == 3:
                a2 = joint_axis[ia + 2]
            ang, qd = _invert_rotations_3(a0, a1, a2, q_p, q_c, w_err)
            for k in range(3):
                if k < ang_count:
                    joint_q[iq + k] = ang[k]
                    joint_qd[idd + k] = qd[k]


def _mask_array(model, mask):
    if mask is None:  # a dummy the kernel never reads (kept on the model: one allocation, not one per call)
        dummy = model.__dict__.get("_fk_no_mask")
        if dummy is None:
            dummy = model.__dict__["_fk_no_mask"] = wp.zeros(1, dtype=wp.int32, device=model.device)
        return dummy, 0
    if len(mask) != model.articulation_count:
        raise SimError(f"eval_fk: 'mask' has {len(mask)} entries, the model {model.articulation_count} articulations")
    if mask.dtype == wp.int32:
        return mask, 1
    return wp.array(mask.numpy().astype("int32"), dtype=wp.int32, device=model.device), 1


def eval_fk(model, joint_q, joint_qd, mask, state) -> None:
    """Set ``state.body_q`` / ``state.body_qd`` from joint coordinates and velocities (differentiable).

    Args:
        model: the :class:`~weft.sim.Model`.
        joint_q: joint coordinates, ``model.joint_coord_count`` floats.
        joint_qd: joint velocities, ``model.joint_dof_count`` floats.
        mask: ``None`` (all articulations) or an int32/bool array with one entry per articulation; 0 skips it.
        state: the :class:`~weft.sim.State` whose bodies are written.
    """
    if model.articulation_count == 0 or model.joint_count == 0:
        return
    for name, arr, n in (("joint_q", joint_q, model.joint_coord_count), ("joint_qd", joint_qd, model.joint_dof_count)):
        if arr is None or len(arr) != n:
            raise SimError(f"eval_fk: '{name}' must have {n} entries, got {None if arr is None else len(arr)}")
    if state.body_q is None or len(state.body_q) != model.body_count:
        raise SimError("eval_fk: 'state' does not belong to this model (body count differs)")
    if model.articulation_max_joints > MAX_ARTICULATION_JOINTS:
        raise SimError(f"eval_fk: an articulation has more than {MAX_ARTICULATION_JOINTS} joints")
    mask_arr, use_mask = _mask_array(model, mask)
    wp.launch(fk_kernel(model), dim=model.articulation_count,
              inputs=[model.articulation_start, mask_arr, use_mask, joint_q, joint_qd, model.joint_q_start,
                      model.joint_qd_start, model.joint_type, model.joint_parent, model.joint_child,
                      model.joint_ancestor, model.joint_X_p, model.joint_X_c, model.joint_axis,
                      model.joint_axis_start, model.joint_axis_dim, model.body_com],
              outputs=[state.body_q, state.body_qd], device=model.device)


def eval_ik(model, state, joint_q, joint_qd) -> None:
    """Set joint coordinates and velocities from ``state.body_q`` / ``state.body_qd`` (the inverse of
    :func:`eval_fk` for poses that the joints can reach).

    Args:
        model: the :class:`~weft.sim.Model`.
        state: the :class:`~weft.sim.State` whose bodies are read.
        joint_q: output joint coordinates, ``model.joint_coord_count`` floats.
        joint_qd: output joint velocities, ``model.joint_dof_count`` floats.
    """
    if model.joint_count == 0:
        return
    for name, arr, n in (("joint_q", joint_q, model.joint_coord_count), ("joint_qd", joint_qd, model.joint_dof_count)):
        if arr is None or len(arr) != n:
            raise SimError(f"eval_ik: '{name}' must have {n} entries, got {None if arr is None else len(arr)}")
    wp.launch(eval_articulation_ik, dim=model.joint_count,
              inputs=[state.body_q, state.body_qd, model.body_com, model.joint_type, model.joint_parent,
                      model.joint_child, model.joint_X_p, model.joint_X_c, model.joint_axis, model.joint_axis_start,
                      model.joint_axis_dim, model.joint_q_start, model.joint_qd_start],
              outputs=[joint_q, joint_qd], device=model.device)
