"""Analytic Jacobians of points on articulated bodies with respect to the joint coordinates (a weft extension; in
warp.sim the same numbers come from ``wp.Tape`` passes through ``eval_fk``, one per output component).

``eval_point_jacobian(model, state, bodies, points, J)``: for each point ``points[i]`` (in the frame of body
``bodies[i]``), ``J[i, k, c] = d x_k / d q_c`` where ``x`` is the point's world position at ``state.body_q`` (as
written by ``eval_fk``) and ``c`` counts the coordinates of the body's articulation from its first one. One thread
per point walks the joints from the body to the root: a revolute joint contributes ``a x (x - o)`` (``a`` its world
axis, ``o`` its anchor), a prismatic one ``a``, a fixed one nothing.
"""

from __future__ import annotations

import numpy as np

import weft as wp

from .model import JOINT_FIXED, JOINT_PRISMATIC, JOINT_REVOLUTE, SimError


@wp.kernel
def point_jacobian(bodies: wp.array(dtype=int), points: wp.array(dtype=wp.vec3),
                   body_joint: wp.array(dtype=int), body_q: wp.array(dtype=wp.transform),
                   joint_type: wp.array(dtype=int), joint_parent: wp.array(dtype=int),
                   joint_X_p: wp.array(dtype=wp.transform), joint_axis: wp.array(dtype=wp.vec3),
                   joint_axis_start: wp.array(dtype=int), joint_q_start: wp.array(dtype=int),
                   joint_articulation_q0: wp.array(dtype=int), J: wp.array(dtype=float, ndim=3)):
    i = wp.tid()
    b = bodies[i]
    x = wp.transform_point(body_q[b], points[i])
    j = body_joint[b]
    ncol = J.shape[2]
    for c in range(ncol):
        for k in range(3):
            J[i, k, c] = 0.0
    while j >= 0:
        jtype = joint_type[j]
        parent = joint_parent[j]
        X = joint_X_p[j]
        if parent >= 0:
            X = body_q[parent] * X
        col = joint_q_start[j] - joint_articulation_q0[j]
        if jtype == JOINT_REVOLUTE or jtype == JOINT_PRISMATIC:
            a = wp.quat_rotate(wp.transform_get_rotation(X), joint_axis[joint_axis_start[j]])
            if jtype == JOINT_REVOLUTE:
                a = wp.cross(a, x - wp.transform_get_translation(X))
            for k in range(3):
                J[i, k, col] = a[k]
        j = -1
        if parent >= 0:
            j = body_joint[parent]


def _tables(model):
    """Per body the joint whose child it is (-1 for none), per joint the first coordinate of its articulation;
    built once per model and checked for supported joint types."""
    hit = model.__dict__.get("_point_jacobian_tables")
    if hit is not None:
        return hit
    types = model.joint_type.numpy()
    bad = sorted(set(types.tolist()) - {int(JOINT_REVOLUTE), int(JOINT_PRISMATIC), int(JOINT_FIXED)})
    if bad:
        raise SimError(f"eval_point_jacobian: joint types {bad} are not supported (revolute, prismatic and fixed "
                       "joints are; use wp.Tape through eval_fk for others)")
    body_joint = np.full(max(model.body_count, 1), -1, dtype=np.int32)
    body_joint[model.joint_child.numpy()] = np.arange(model.joint_count, dtype=np.int32)
    starts = model.articulation_start.numpy()
    qstart = model.joint_q_start.numpy()
    first = np.zeros(model.joint_count, dtype=np.int32)
    widths = []
    for a in range(model.articulation_count):
        first[starts[a]:starts[a + 1]] = qstart[starts[a]]
        widths.append(qstart[starts[a + 1]] - qstart[starts[a]])
    dev = model.device
    hit = (wp.array(body_joint, dtype=wp.int32, device=dev), wp.array(first, dtype=wp.int32, device=dev),
           max(widths, default=0))
    model.__dict__["_point_jacobian_tables"] = hit
    return hit


def eval_point_jacobian(model, state, bodies, points, J=None):
    """Jacobians of body-frame ``points`` on ``bodies`` w.r.t. their articulations' joint coordinates (see the
    module docstring). ``J``: a float array of shape (len(bodies), 3, n) with n at least the largest articulation's
    coordinate count (allocated when None); returned. Revolute, prismatic and fixed joints only (``SimError``
    otherwise). Not differentiated on a tape."""
    body_joint, first, width = _tables(model)
    if len(bodies) != len(points):
        raise SimError(f"eval_point_jacobian: 'bodies' has {len(bodies)} entries, 'points' {len(points)}")
    if J is None:
        J = wp.zeros((len(bodies), 3, max(width, 1)), dtype=float, device=model.device)
    elif J.ndim != 3 or J.shape[0] != len(bodies) or J.shape[1] != 3 or J.shape[2] < width:
        raise SimError(f"eval_point_jacobian: 'J' must have shape ({len(bodies)}, 3, >= {width}), got {J.shape}")
    wp.launch(point_jacobian, dim=len(bodies),
              inputs=[bodies, points, body_joint, state.body_q, model.joint_type, model.joint_parent,
                      model.joint_X_p, model.joint_axis, model.joint_axis_start, model.joint_q_start, first],
              outputs=[J], device=model.device, record_tape=False)
    return J
