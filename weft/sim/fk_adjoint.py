"""The hand-written backward of ``eval_fk`` (one articulation per thread, joints in reverse order).

The generated adjoint of the forward kernel replays the joint loop with its thread-local pose and twist arrays on a
stack (about 10x the forward's time); this one walks each articulation's joints backwards once, reading the poses
and twists the forward wrote (``body_q`` / ``body_qd``: the Tape's overwrite check guards them as for any recorded
read) and accumulating the adjoints of the children's poses and twists into thread-local arrays. It gives the
gradients of every differentiable input the generated adjoint gives (``joint_q``, ``joint_qd``, ``joint_X_p``,
``joint_X_c``, ``joint_axis``, ``body_com`` and the poses and twists of parents outside the articulation), for
revolute, prismatic, ball, fixed, free and distance joints; models with universal, compound or D6 joints keep the
generated adjoint. Each ``adj_*`` helper is the derivative of the formula weft's native op computes, also for
quaternions off the unit sphere (so the gradients with respect to raw quaternion components agree with the
generated adjoint's).
"""

from __future__ import annotations

import functools

import numpy as np

import weft as wp

from ..runtime.array import is_pending_zero
from .model import JOINT_BALL, JOINT_DISTANCE, JOINT_FIXED, JOINT_FREE, JOINT_PRISMATIC, JOINT_REVOLUTE, SimError

# bits of the kernel's ``has_grad`` argument: the inputs whose gradients are accumulated
G_JOINT_Q, G_JOINT_QD, G_X_P, G_X_C, G_AXIS, G_COM = 1, 2, 4, 8, 16, 32
# and whether any twist adjoint can be non-zero (``body_qd``'s gradient is not all zero): without one the twist half
# of the backward adds only zeros and is skipped
G_TWIST = 64
# indices of the forward kernel's arguments (articulation.py's eval_articulation_fk)
_ARGS = {"joint_q": 3, "joint_qd": 4, "joint_X_p": 11, "joint_X_c": 12, "joint_axis": 13, "body_com": 16,
         "body_q": 17, "body_qd": 18}


@wp.func
def adj_rotate(q: wp.quat, v: wp.vec3, g: wp.vec3):
    """Adjoints (of q, of v) of ``quat_rotate(q, v)`` = v (2w^2 - 1) + 2w (u x v) + 2u (u . v) for result adjoint g."""
    u = wp.vec3(q[0], q[1], q[2])
    w = q[3]
    au = wp.cross(v, g) * (2.0 * w) + g * (2.0 * wp.dot(u, v)) + v * (2.0 * wp.dot(u, g))
    aw = 4.0 * w * wp.dot(v, g) + 2.0 * wp.dot(g, wp.cross(u, v))
    return wp.quat(au, aw), wp.quat_rotate_inv(q, g)


@wp.func
def adj_rotate_inv(q: wp.quat, v: wp.vec3, g: wp.vec3):
    """Adjoints (of q, of v) of ``quat_rotate_inv(q, v)`` = v (2w^2 - 1) - 2w (u x v) + 2u (u . v)."""
    u = wp.vec3(q[0], q[1], q[2])
    w = q[3]
    au = g * (2.0 * wp.dot(u, v)) + v * (2.0 * wp.dot(u, g)) - wp.cross(v, g) * (2.0 * w)
    aw = 4.0 * w * wp.dot(v, g) - 2.0 * wp.dot(g, wp.cross(u, v))
    return wp.quat(au, aw), wp.quat_rotate(q, g)


@wp.func
def adj_transform_mul(a: wp.transform, b: wp.transform, g: wp.transform):
    """Adjoints (of a, of b) of ``a * b`` = (rotate(a.q, b.p) + a.p, a.q b.q); quaternion products are bilinear
    with transposes conj: d/da = g conj(b.q), d/db = conj(a.q) g."""
    qa = wp.transform_get_rotation(a)
    qb = wp.transform_get_rotation(b)
    gp = wp.transform_get_translation(g)
    gq = wp.transform_get_rotation(g)
    aq, bp = adj_rotate(qa, wp.transform_get_translation(b), gp)
    return (wp.transform(gp, aq + gq * wp.quat_inverse(qb)), wp.transform(bp, wp.quat_inverse(qa) * gq))


@wp.func
def adj_transform_inverse(t: wp.transform, g: wp.transform):
    """Adjoint of t in ``transform_inverse(t)`` = (-rotate_inv(t.q, t.p), conj(t.q))."""
    aq, ap = adj_rotate_inv(wp.transform_get_rotation(t), wp.transform_get_translation(t),
                            -wp.transform_get_translation(g))
    return wp.transform(ap, aq + wp.quat_inverse(wp.transform_get_rotation(g)))


@wp.func
def _is_identity(t: wp.transform):
    """Whether ``t`` is exactly the identity (a URDF/MJCF child frame usually is: its products are then skipped)."""
    return (t[0] == 0.0 and t[1] == 0.0 and t[2] == 0.0 and t[3] == 0.0 and t[4] == 0.0 and t[5] == 0.0 and
            t[6] == 1.0)


@functools.cache
def fk_adjoint_kernel(cap: int):
    """The backward kernel for articulations of up to ``cap`` joints."""

    @wp.kernel(enable_backward=False)
    def eval_articulation_fk_adjoint(
            articulation_start: wp.array(dtype=int), articulation_mask: wp.array(dtype=int), use_mask: int,
            joint_q: wp.array(dtype=float), joint_qd: wp.array(dtype=float), joint_q_start: wp.array(dtype=int),
            joint_qd_start: wp.array(dtype=int), joint_type: wp.array(dtype=int), joint_parent: wp.array(dtype=int),
            joint_child: wp.array(dtype=int), joint_ancestor: wp.array(dtype=int),
            joint_X_p: wp.array(dtype=wp.transform), joint_X_c: wp.array(dtype=wp.transform),
            joint_axis: wp.array(dtype=wp.vec3), joint_axis_start: wp.array(dtype=int), body_com: wp.array(dtype=wp.vec3),
            body_q: wp.array(dtype=wp.transform), body_qd: wp.array(dtype=wp.spatial_vector),
            adj_body_q: wp.array(dtype=wp.transform), adj_body_qd: wp.array(dtype=wp.spatial_vector),
            consume_q: int, consume_qd: int, has_grad: int,
            adj_joint_q: wp.array(dtype=float), adj_joint_qd: wp.array(dtype=float),
            adj_X_p: wp.array(dtype=wp.transform), adj_X_c: wp.array(dtype=wp.transform),
            adj_axis: wp.array(dtype=wp.vec3), adj_com: wp.array(dtype=wp.vec3)):
        a = wp.tid()
        if use_mask != 0 and articulation_mask[a] == 0:
            return
        start = articulation_start[a]
        end = articulation_start[a + 1]
        # adjoints of the children's poses and twists from joints further down the articulation
        acc_pose = wp.zeros(cap, dtype=wp.transform)
        acc_twist = wp.zeros(cap, dtype=wp.spatial_vector)
        zero_tf = wp.transform(wp.vec3(0.0), wp.quat(0.0, 0.0, 0.0, 0.0))
        twist = (has_grad & G_TWIST) != 0
        j = end - 1
        while j >= start:
            child = joint_child[j]
            g_pose = acc_pose[j - start]
            g_tw = wp.spatial_vector()
            if twist:
                g_tw = acc_twist[j - start]
            if adj_body_q.shape[0] > 0:
                g_pose = g_pose + adj_body_q[child]
                if consume_q != 0:
                    adj_body_q[child] = zero_tf
            if twist and adj_body_qd.shape[0] > 0:
                g_tw = g_tw + adj_body_qd[child]
                if consume_qd != 0:
                    adj_body_qd[child] = wp.spatial_vector()
            parent = joint_parent[j]
            X_pj = joint_X_p[j]
            X_wpj = X_pj
            X_wp = wp.transform_identity()
            w_in = wp.vec3(0.0)
            r = wp.vec3(0.0)
            if parent >= 0:
                X_wp = body_q[parent]
                X_wpj = X_wp * X_pj
                if twist:
                    r = wp.transform_get_translation(X_wpj) - wp.transform_point(X_wp, body_com[parent])
                    w_in = wp.spatial_top(body_qd[parent])
            # the joint's motion (as articulation._joint_motion for these types)
            jtype = joint_type[j]
            ia = joint_axis_start[j]
            q0 = joint_q_start[j]
            d0 = joint_qd_start[j]
            pos = wp.vec3(0.0)
            rot = wp.quat_identity()
            w_j = wp.vec3(0.0)
            v_j = wp.vec3(0.0)
            axis = wp.vec3(0.0)
            s = 0.0
            c = 1.0
            if jtype == JOINT_PRISMATIC:
                axis = joint_axis[ia]
                pos = axis * joint_q[q0]
                v_j = axis * joint_qd[d0]
            elif jtype == JOINT_REVOLUTE:
                axis = joint_axis[ia]
                h = 0.5 * joint_q[q0]
                s = wp.sin(h)
                c = wp.cos(h)
                rot = wp.quat(axis * s, c)  # quat_from_axis_angle(axis, q), its sine and cosine kept
                if twist:
                    w_j = axis * joint_qd[d0]
            elif jtype == JOINT_BALL:
                rot = wp.quat(joint_q[q0], joint_q[q0 + 1], joint_q[q0 + 2], joint_q[q0 + 3])
                w_j = wp.vec3(joint_qd[d0], joint_qd[d0 + 1], joint_qd[d0 + 2])
            elif jtype == JOINT_FREE or jtype == JOINT_DISTANCE:
                pos = wp.vec3(joint_q[q0], joint_q[q0 + 1], joint_q[q0 + 2])
                rot = wp.quat(joint_q[q0 + 3], joint_q[q0 + 4], joint_q[q0 + 5], joint_q[q0 + 6])
                w_j = wp.vec3(joint_qd[d0], joint_qd[d0 + 1], joint_qd[d0 + 2])
                v_j = wp.vec3(joint_qd[d0 + 3], joint_qd[d0 + 4], joint_qd[d0 + 5])
            # the joint moves no origin (revolute, ball, fixed): X_j = (0, rot) makes the products below rotations
            rot_only = jtype == JOINT_REVOLUTE or jtype == JOINT_BALL or jtype == JOINT_FIXED
            X_j = wp.transform(pos, rot)
            q_wpj = wp.transform_get_rotation(X_wpj)
            # twist: (w_in + R w_j, v_parent + w_in x r + R v_j), R the rotation of X_wpj
            g_v = wp.vec3(0.0)
            a_wj = wp.vec3(0.0)
            a_vj = wp.vec3(0.0)
            a_w_in = wp.vec3(0.0)
            a_r = wp.vec3(0.0)
            a_twq = wp.quat(0.0, 0.0, 0.0, 0.0)
            if twist:
                g_w = wp.spatial_top(g_tw)
                g_v = wp.spatial_bottom(g_tw)
                aq1, a_wj = adj_rotate(q_wpj, w_j, g_w)
                aq2, a_vj = adj_rotate(q_wpj, v_j, g_v)
                a_w_in = g_w + wp.cross(r, g_v)
                a_r = wp.cross(g_v, w_in)
                a_twq = aq1 + aq2
            # pose: (X_wpj * X_j) * inverse(X_c)
            X_c = joint_X_c[j]
            M = wp.transform(wp.transform_get_translation(X_wpj), q_wpj * rot)
            if not rot_only:
                M = X_wpj * X_j
            a_M = g_pose
            a_Xci = zero_tf
            xc_identity = _is_identity(X_c)
            if not xc_identity:
                a_M, a_Xci = adj_transform_mul(M, wp.transform_inverse(X_c), g_pose)
            elif (has_grad & G_X_C) != 0:  # adj_transform_mul with b = identity: a's adjoint is g itself
                q_M = wp.transform_get_rotation(M)
                a_Xci = wp.transform(wp.quat_rotate_inv(q_M, wp.transform_get_translation(g_pose)),
                                     wp.quat_inverse(q_M) * wp.transform_get_rotation(g_pose))
            a_Xwpj = wp.transform_identity()
            a_Xj = wp.transform_identity()
            if rot_only:  # adj_transform_mul with b.p = 0: no rotation adjoint of a, no translation adjoint of b
                a_Mq = wp.transform_get_rotation(a_M)
                a_Xwpj = wp.transform(wp.transform_get_translation(a_M), a_Mq * wp.quat_inverse(rot))
                a_Xj = wp.transform(wp.vec3(0.0), wp.quat_inverse(q_wpj) * a_Mq)
            else:
                a_Xwpj, a_Xj = adj_transform_mul(X_wpj, X_j, a_M)
            if twist:
                a_Xwpj = a_Xwpj + wp.transform(a_r, a_twq)
            if (has_grad & G_X_C) != 0:
                if xc_identity:  # adj_transform_inverse at the identity
                    adj_X_c[j] = adj_X_c[j] + wp.transform(-wp.transform_get_translation(a_Xci),
                                                           wp.quat_inverse(wp.transform_get_rotation(a_Xci)))
                else:
                    adj_X_c[j] = adj_X_c[j] + adj_transform_inverse(X_c, a_Xci)
            # the joint's coordinates, velocities and axis
            a_pos = wp.transform_get_translation(a_Xj)
            a_rot = wp.transform_get_rotation(a_Xj)
            a_axis = wp.vec3(0.0)
            if jtype == JOINT_PRISMATIC:
                if (has_grad & G_JOINT_Q) != 0:
                    adj_joint_q[q0] = adj_joint_q[q0] + wp.dot(axis, a_pos)
                if (has_grad & G_JOINT_QD) != 0:
                    adj_joint_qd[d0] = adj_joint_qd[d0] + wp.dot(axis, a_vj)
                a_axis = a_pos * joint_q[q0] + a_vj * joint_qd[d0]
            elif jtype == JOINT_REVOLUTE:
                g_xyz = wp.vec3(a_rot[0], a_rot[1], a_rot[2])
                if (has_grad & G_JOINT_Q) != 0:
                    adj_joint_q[q0] = adj_joint_q[q0] + 0.5 * (c * wp.dot(axis, g_xyz) - s * a_rot[3])
                a_axis = g_xyz * s
                if twist:
                    if (has_grad & G_JOINT_QD) != 0:
                        adj_joint_qd[d0] = adj_joint_qd[d0] + wp.dot(axis, a_wj)
                    a_axis = a_axis + a_wj * joint_qd[d0]
            elif jtype == JOINT_BALL:
                for k in range(4):
                    if (has_grad & G_JOINT_Q) != 0:
                        adj_joint_q[q0 + k] = adj_joint_q[q0 + k] + a_rot[k]
                for k in range(3):
                    if (has_grad & G_JOINT_QD) != 0:
                        adj_joint_qd[d0 + k] = adj_joint_qd[d0 + k] + a_wj[k]
            elif jtype == JOINT_FREE or jtype == JOINT_DISTANCE:
                if (has_grad & G_JOINT_Q) != 0:
                    for k in range(3):
                        adj_joint_q[q0 + k] = adj_joint_q[q0 + k] + a_pos[k]
                    for k in range(4):
                        adj_joint_q[q0 + 3 + k] = adj_joint_q[q0 + 3 + k] + a_rot[k]
                if (has_grad & G_JOINT_QD) != 0:
                    for k in range(3):
                        adj_joint_qd[d0 + k] = adj_joint_qd[d0 + k] + a_wj[k]
                        adj_joint_qd[d0 + 3 + k] = adj_joint_qd[d0 + 3 + k] + a_vj[k]
            if (has_grad & G_AXIS) != 0 and (jtype == JOINT_PRISMATIC or jtype == JOINT_REVOLUTE):
                adj_axis[ia] = adj_axis[ia] + a_axis
            # the parent anchor X_wpj = X_wp * X_pj, r = X_wpj.p - X_wp com, and the parent's twist
            if parent >= 0:
                a_Xwp, a_Xpj = adj_transform_mul(X_wp, X_pj, a_Xwpj)
                if twist:
                    aq3, a_com = adj_rotate(wp.transform_get_rotation(X_wp), body_com[parent], -a_r)
                    a_Xwp = a_Xwp + wp.transform(-a_r, aq3)
                    if (has_grad & G_COM) != 0:
                        adj_com[parent] = adj_com[parent] + a_com
                if (has_grad & G_X_P) != 0:
                    adj_X_p[j] = adj_X_p[j] + a_Xpj
                a_tw = wp.spatial_vector(a_w_in, g_v)
                anc = joint_ancestor[j]
                if anc >= start and anc < j:
                    acc_pose[anc - start] = acc_pose[anc - start] + a_Xwp
                    if twist:
                        acc_twist[anc - start] = acc_twist[anc - start] + a_tw
                else:  # a parent outside this articulation: other threads may add to it too
                    if adj_body_q.shape[0] > 0:
                        wp.atomic_add(adj_body_q, parent, a_Xwp)
                    if twist and adj_body_qd.shape[0] > 0:
                        wp.atomic_add(adj_body_qd, parent, a_tw)
            elif (has_grad & G_X_P) != 0:
                adj_X_p[j] = adj_X_p[j] + a_Xwpj
            j = j - 1

    return eval_articulation_fk_adjoint


def _written_values(rec, forward_kernel):
    """``body_q`` and ``body_qd`` as the recorded launch left them: the arrays themselves, or, when a later write
    on the tape changed them, the forward run again from the Tape's snapshots of their old contents."""
    iq, iqd = _ARGS["body_q"], _ARGS["body_qd"]
    args = list(rec.args)
    if all(args[i]._version == rec.versions_after.get(i, args[i]._version) for i in (iq, iqd)):
        return args[iq], args[iqd]
    if iq not in rec.spec.snapshot and iqd not in rec.spec.snapshot:
        # the variant that reads no pose or twist it did not compute (articulation._fk_kernel's inside_only): the
        # forward again into fresh arrays gives the same values for the bodies it writes (the others are not read)
        bq, bqd = wp.zeros_like(args[iq]), wp.zeros_like(args[iqd])
        wp.launch(forward_kernel, dim=rec.dims, inputs=args[:iq], outputs=[bq, bqd], device=rec.device,
                  record_tape=False)
        return bq, bqd
    if iq not in rec.snapshots or iqd not in rec.snapshots:
        raise SimError("eval_fk's backward: state.body_q / body_qd were overwritten after eval_fk on the "
                              "tape and no copy of their old contents was kept")
    bq, bqd = wp.clone(rec.snapshots[iq]), wp.clone(rec.snapshots[iqd])
    wp.launch(forward_kernel, dim=rec.dims, inputs=args[:iq], outputs=[bq, bqd], device=rec.device,
              record_tape=False)
    return bq, bqd


def _twist_adjoint(grad_qd) -> bool:
    """Whether ``body_qd``'s gradient may hold a non-zero entry: not when it is a pending zero of ``Tape.zero``
    (nothing wrote it since: a tape Jacobian of positions, row after row), else a host array is looked at (~0.1 ms
    for 4,096 arms, against ~3 ms of twist backward it saves when only poses are differentiated)."""
    if grad_qd is None or is_pending_zero(grad_qd):
        return False
    if not grad_qd.device.impl.host_memory or not grad_qd.is_contiguous:
        return True
    # a transient look (numpy() would mark the memory as seen outside weft: Tape.zero would then write its zeros)
    return bool(np.any(grad_qd._host_np()))


_EMPTY: dict = {}


def _empty(dtype, device):
    """A zero-length array standing for a gradient the backward does not write (one per dtype and device)."""
    key = (dtype, device)
    a = _EMPTY.get(key)
    if a is None:
        a = _EMPTY[key] = wp.empty(0, dtype=dtype, device=device)
    return a


def launcher(cap: int, forward_kernel):
    """The ``custom_adjoint`` of eval_fk's kernel variant ``forward_kernel`` of capacity ``cap`` (weft/kernel.py)."""

    def run(rec) -> None:
        args, device = rec.args, rec.device
        grad_q, grad_qd = args[_ARGS["body_q"]].grad, args[_ARGS["body_qd"]].grad
        if grad_q is None and grad_qd is None:
            return  # no gradient reaches the outputs
        body_q, body_qd = _written_values(rec, forward_kernel)
        twist = _twist_adjoint(grad_qd)
        grads = []
        has = G_TWIST if twist else 0
        for name, bit, dtype in (("joint_q", G_JOINT_Q, float), ("joint_qd", G_JOINT_QD, float),
                                 ("joint_X_p", G_X_P, wp.transform), ("joint_X_c", G_X_C, wp.transform),
                                 ("joint_axis", G_AXIS, wp.vec3), ("body_com", G_COM, wp.vec3)):
            g = getattr(args[_ARGS[name]], "grad", None)
            if g is not None and not twist and bit in (G_JOINT_QD, G_COM):
                g = None  # only the twist half adds to these: without it they stay untouched (a pending zero stays so)
            if g is not None:
                has |= bit
            grads.append(g if g is not None else _empty(dtype, device))
        inputs = [*args[:15], args[16], body_q, body_qd,
                  grad_q if grad_q is not None else _empty(wp.transform, device),
                  grad_qd if grad_qd is not None and twist else _empty(wp.spatial_vector, device),
                  int(_ARGS["body_q"] in rec.consume), int(_ARGS["body_qd"] in rec.consume), has]
        wp.launch(fk_adjoint_kernel(cap), dim=rec.dims, inputs=inputs, outputs=grads, device=device,
                  record_tape=False)

    run.zeroes_lazily = True  # it reaches memory only through wp.launch and _twist_adjoint's look (both zero first)
    return run
