"""Rigid contacts between shapes and with the ground: a static candidate table (built once per model), a broad
phase over shape pairs (bounding spheres) and a narrow phase over candidate contact points, as in warp.sim 1.7.

Every shape pair has a fixed number of candidate points, one thread each: a sphere's centre; a box's 8 vertices
or 12 edges; a capsule's two half segments; a triangle mesh's vertices; 16 rim points of a cylinder and a cone's
apex and 8 base rim points (against planes); the 4 edges of a finite plane. Each candidate finds the closest
point on the other shape (for edges: the point of the edge deepest in the other shape's signed distance, by a
golden-section search), and becomes a contact when the gap minus the shapes' thicknesses (spheres and capsules
count their radius as thickness) is below ``model.rigid_contact_margin``. Contacts are appended to
``model.rigid_contact_*`` (``rigid_contact_count[0]`` of them); their contact points are stored in the bodies'
frames, so the force kernels move them with the bodies and gradients flow from the forces back to the poses.

The narrow phase is not differentiated (it is left off the tape): contact points are closest points and the normal
is parallel to their separation, so moving them along the surface or turning the normal changes the gap only to
second order; the gradient of every contact force with respect to the body poses and velocities comes through the
force kernel, which re-applies the current poses to the stored body-frame points. (This also spares an adjoint of
the narrow phase, which is one large kernel.)

Supported pairs: sphere with every shape type; box-box, box-capsule, box-mesh, box-plane; capsule-capsule,
capsule-mesh, capsule-plane; cylinder-plane and cone-plane (including the ground); mesh-mesh and mesh-plane.
Other pairs (box, capsule or mesh against a cylinder or cone; SDF shapes) produce no contacts and warn once.
"""

from __future__ import annotations

import warnings

import numpy as np

import weft as wp
from weft.runtime.capture import active_capture

from .collide import (
    _shape_sdf,
    box_sdf,
    box_sdf_grad,
    capsule_sdf,
    counter_increment,
)
from .model import (
    GEO_BOX,
    GEO_CAPSULE,
    GEO_CONE,
    GEO_CYLINDER,
    GEO_MESH,
    GEO_PLANE,
    GEO_SPHERE,
    ModelShapeGeometry,
)

RIM_POINTS = 8  # points per rim of a cylinder or cone in contacts with planes


# --- closest points and features -----------------------------------------------------------------------------

@wp.func
def closest_point_box(upper: wp.vec3, p: wp.vec3):
    """Closest point on the surface of a box of half extents ``upper`` (for an inside point: on the nearest face)."""
    c = wp.vec3(wp.clamp(p[0], -upper[0], upper[0]), wp.clamp(p[1], -upper[1], upper[1]),
                wp.clamp(p[2], -upper[2], upper[2]))
    if wp.abs(p[0]) <= upper[0] and wp.abs(p[1]) <= upper[1] and wp.abs(p[2]) <= upper[2]:
        gx = upper[0] - wp.abs(p[0])
        gy = upper[1] - wp.abs(p[1])
        gz = upper[2] - wp.abs(p[2])
        if gx <= gy and gx <= gz:
            c = wp.vec3(wp.where(p[0] < 0.0, -upper[0], upper[0]), p[1], p[2])
        elif gy <= gz:
            c = wp.vec3(p[0], wp.where(p[1] < 0.0, -upper[1], upper[1]), p[2])
        else:
            c = wp.vec3(p[0], p[1], wp.where(p[2] < 0.0, -upper[2], upper[2]))
    return c


@wp.func
def closest_point_plane(width: float, length: float, p: wp.vec3):
    """Closest point on the local XZ plane, or on its rectangle of half extents ``width`` x ``length``."""
    if width > 0.0 and length > 0.0:
        return wp.vec3(wp.clamp(p[0], -width, width), 0.0, wp.clamp(p[2], -length, length))
    return wp.vec3(p[0], 0.0, p[2])


@wp.func
def closest_point_segment(a: wp.vec3, b: wp.vec3, p: wp.vec3):
    """Closest point to ``p`` on the segment ``a``-``b``."""
    ab = b - a
    den = wp.dot(ab, ab)
    t = float(0.0)  # noqa: UP018
    if den > 0.0:
        t = wp.clamp(wp.dot(p - a, ab) / den, 0.0, 1.0)
    return a + ab * t


@wp.func
def box_vertex(i: int, upper: wp.vec3):
    """Vertex ``i`` (0..7, bits = x, y, z signs) of a box."""
    sx = wp.where((i & 1) != 0, 1.0, -1.0)
    sy = wp.where((i & 2) != 0, 1.0, -1.0)
    sz = wp.where((i & 4) != 0, 1.0, -1.0)
    return wp.vec3(sx * upper[0], sy * upper[1], sz * upper[2])


@wp.func
def box_edge_start(i: int, upper: wp.vec3):
    """Start of edge ``i`` (0..11) of a box: edges 4k..4k+3 run along axis k from -upper[k] to +upper[k]."""
    k = i // 4
    s0 = wp.where((i & 1) != 0, 1.0, -1.0)
    s1 = wp.where((i & 2) != 0, 1.0, -1.0)
    p = wp.vec3()
    if k == 0:
        p = wp.vec3(-upper[0], s0 * upper[1], s1 * upper[2])
    elif k == 1:
        p = wp.vec3(s0 * upper[0], -upper[1], s1 * upper[2])
    else:
        p = wp.vec3(s0 * upper[0], s1 * upper[1], -upper[2])
    return p


@wp.func
def box_edge_end(i: int, upper: wp.vec3):
    k = i // 4
    p = box_edge_start(i, upper)
    if k == 0:
        p = wp.vec3(upper[0], p[1], p[2])
    elif k == 1:
        p = wp.vec3(p[0], upper[1], p[2])
    else:
        p = wp.vec3(p[0], p[1], upper[2])
    return p


@wp.func
def plane_corner(i: int, width: float, length: float):
    """Corner ``i`` (mod 4, counter-clockwise) of a finite plane's rectangle."""
    j = i % 4
    x = wp.where(j == 0 or j == 3, -width, width)
    z = wp.where(j < 2, -length, length)
    return wp.vec3(x, 0.0, z)


@wp.func
def rim_point(geo_type: int, scale: wp.vec3, i: int):
    """Surface point ``i`` of a cylinder (2 rims of RIM_POINTS) or a cone (RIM_POINTS base points, then the apex)."""
    r = scale[0]
    h = scale[1]
    k = i % RIM_POINTS
    a = 2.0 * 3.14159265358979 * float(k) / float(RIM_POINTS)
    p = wp.vec3(r * wp.cos(a), h, r * wp.sin(a))
    if geo_type == GEO_CYLINDER:
        if i >= RIM_POINTS:
            p = wp.vec3(p[0], -h, p[2])
    elif i >= RIM_POINTS:
        p = wp.vec3(0.0, -h, 0.0)  # the cone's apex (its SDF narrows towards -Y)
    return p


@wp.func
def edge_sdf(geo_type: int, scale: wp.vec3, mesh: wp.uint64, max_dist: float, p: wp.vec3):
    """Signed distance from a local point to the shapes edges are searched in: a box, a capsule or a mesh (meshes:
    ``max_dist`` when no face is that near)."""
    d = float(0.0)  # noqa: UP018
    if geo_type == GEO_MESH:
        face = int(0)  # noqa: UP018, RUF046
        fu = float(0.0)  # noqa: UP018
        fv = float(0.0)  # noqa: UP018
        sign = float(0.0)  # noqa: UP018
        d = max_dist
        q = wp.cw_div(p, scale)
        if wp.mesh_query_point_sign_normal(mesh, q, max_dist, sign, face, fu, fv):
            d = wp.length(wp.cw_mul(q - wp.mesh_eval_position(mesh, face, fu, fv), scale)) * sign
    elif geo_type == GEO_CAPSULE:
        d = capsule_sdf(scale[0], scale[1], p)
    else:
        d = box_sdf(scale, p)
    return d


@wp.func
def deepest_on_edge(geo_type: int, scale: wp.vec3, mesh: wp.uint64, max_dist: float, a: wp.vec3, b: wp.vec3,
                    iters: int):
    """Edge coordinate u in [0, 1] where the shape's signed distance along ``a + u (b - a)`` is smallest
    (golden-section search in the shape's local coordinates). Near-ties (an edge lying flat on a face) cut the
    interval from alternate sides, so the point settles near the middle instead of jumping between the ends."""
    g = 0.6180339887498949
    lo = float(0.0)  # noqa: UP018
    hi = float(1.0)  # noqa: UP018
    u1 = 1.0 - g
    u2 = g
    d1 = float(0.0)  # noqa: UP018
    d2 = float(0.0)  # noqa: UP018
    tol = 1.0e-6 * (1.0 + wp.length(a) + wp.length(b))
    # one evaluation per pass (the first two passes evaluate the starting points): a single inlined query
    for k in range(iters + 2):
        keep_low = False
        u = u1
        if k == 1:
            u = u2
        elif k >= 2:
            keep_low = d1 < d2 - tol
            if wp.abs(d1 - d2) <= tol:
                keep_low = (k % 2) == 0
            if keep_low:
                hi = u2
                u2 = u1
                d2 = d1
                u1 = hi - g * (hi - lo)
                u = u1
            else:
                lo = u1
                u1 = u2
                d1 = d2
                u2 = lo + g * (hi - lo)
                u = u2
        d = edge_sdf(geo_type, scale, mesh, max_dist, a + (b - a) * u)
        if k == 0 or (k >= 2 and keep_low):
            d1 = d
        else:
            d2 = d
    return 0.5 * (lo + hi)


# --- broad phase ------------------------------------------------------------------------------------------------

@wp.func
def shape_world(shape: int, body_q: wp.array(dtype=wp.transform), shape_X_bs: wp.array(dtype=wp.transform),
                shape_body: wp.array(dtype=int)):
    b = shape_body[shape]
    X = shape_X_bs[shape]
    if b >= 0:
        X = body_q[b] * X
    return X


@wp.kernel(enable_backward=False)
def shape_world_poses(body_q: wp.array(dtype=wp.transform), shape_X_bs: wp.array(dtype=wp.transform),
                      shape_body: wp.array(dtype=int), X_ws: wp.array(dtype=wp.transform),
                      contact_count: wp.array(dtype=int), active_count: wp.array(dtype=int)):
    """Every shape's world transform, once per collide for the broad phase (which made two per pair); the first
    thread zeroes the contact counter and the broad phase's count of active candidates (launched before both)."""
    s = wp.tid()
    if s == 0:
        contact_count[0] = 0
        active_count[0] = 0
    X_ws[s] = shape_world(s, body_q, shape_X_bs, shape_body)


@wp.kernel(enable_backward=False)
def broad_phase(pairs: wp.array(dtype=int, ndim=2), first_ground_pair: int, ground: int,
                X_ws: wp.array(dtype=wp.transform), shape_body: wp.array(dtype=int), body_mass: wp.array(dtype=float),
                geo: ModelShapeGeometry, radius: wp.array(dtype=float), margin: float,
                slot_start: wp.array(dtype=int), slot_count: wp.array(dtype=int), pair_active: wp.array(dtype=int),
                active_count: wp.array(dtype=int), active_slots: wp.array(dtype=int), contact_tids: wp.array(dtype=int)):
    """A pair is active when one of its bodies moves (has mass) and their bounding spheres (for a plane: the other
    shape's sphere against the plane's closest point) come within the margin (``X_ws``: shape_world_poses). The
    candidate slots of an active pair are appended to ``active_slots`` (the narrow phase runs over those only); the
    slots of every pair start with no contact (``contact_tids`` -1, as warp.sim's narrow-phase threads that find
    none)."""
    tid = wp.tid()
    pair_active[tid] = 0
    first = slot_start[tid]
    count = slot_count[tid]
    for k in range(count):
        contact_tids[first + k] = -1
    if tid >= first_ground_pair and ground == 0:
        return
    a = pairs[tid, 0]
    b = pairs[tid, 1]
    ba = shape_body[a]
    bb = shape_body[b]
    m = float(0.0)  # noqa: UP018
    if ba >= 0:
        m += body_mass[ba]
    if bb >= 0:
        m += body_mass[bb]
    if m == 0.0:
        return
    X_a = X_ws[a]
    X_b = X_ws[b]
    if geo.type[a] == GEO_PLANE:
        X_t = X_a
        X_a = X_b
        X_b = X_t
        t = a
        a = b
        b = t
    p_a = wp.transform_get_translation(X_a)
    gap = float(0.0)  # noqa: UP018
    if geo.type[b] == GEO_PLANE:
        s = geo.scale[b]
        q = wp.transform_point(wp.transform_inverse(X_b), p_a)
        gap = wp.length(q - closest_point_plane(s[0], s[1], q)) - radius[a]
    else:
        gap = wp.length(p_a - wp.transform_get_translation(X_b)) - radius[a] - radius[b]
    if gap <= margin + geo.thickness[a] + geo.thickness[b] and count > 0:
        pair_active[tid] = 1
        at = wp.atomic_add(active_count, 0, count)
        for k in range(count):
            active_slots[at + k] = first + k


# --- narrow phase -----------------------------------------------------------------------------------------------

@wp.func
def plane_contact(p_a: wp.vec3, X_b: wp.transform, s_b: wp.vec3):
    """Closest plane point and normal (the plane's normal where the point is over the plane, else the direction
    to the closest edge point); ``inside`` is False when a finite plane does not lie under the point."""
    q = wp.transform_point(wp.transform_inverse(X_b), p_a)
    p_b = wp.transform_point(X_b, closest_point_plane(s_b[0], s_b[1], q))
    n = wp.transform_vector(X_b, wp.vec3(0.0, 1.0, 0.0))
    inside = True
    if s_b[0] > 0.0 and s_b[1] > 0.0 and (wp.abs(q[0]) > s_b[0] or wp.abs(q[2]) > s_b[1]):
        inside = False
    return p_b, n, inside


@wp.func
def point_vs_box(p_a: wp.vec3, X_b: wp.transform, s_b: wp.vec3):
    """Closest box point and the normal from the box to ``p_a`` (pointing out of the box also when inside)."""
    q = wp.transform_point(wp.transform_inverse(X_b), p_a)
    c = closest_point_box(s_b, q)
    n = wp.normalize(q - c)
    if box_sdf(s_b, q) < 0.0:
        n = box_sdf_grad(s_b, q)
    return wp.transform_point(X_b, c), wp.transform_vector(X_b, n)


@wp.func
def point_vs_mesh(p_a: wp.vec3, X_b: wp.transform, s_b: wp.vec3, mesh: wp.uint64, max_dist: float):
    """Closest mesh point, outward normal towards ``p_a`` and whether a face lies within ``max_dist``."""
    q = wp.cw_div(wp.transform_point(wp.transform_inverse(X_b), p_a), s_b)
    face = int(0)  # noqa: UP018, RUF046
    fu = float(0.0)  # noqa: UP018
    fv = float(0.0)  # noqa: UP018
    sign = float(0.0)  # noqa: UP018
    found = wp.mesh_query_point_sign_normal(mesh, q, max_dist, sign, face, fu, fv)
    p_b = p_a
    n = wp.vec3(0.0, 1.0, 0.0)
    if found:
        p_b = wp.transform_point(X_b, wp.cw_mul(wp.mesh_eval_position(mesh, face, fu, fv), s_b))
        n = wp.normalize(p_a - p_b) * sign
    return p_b, n, found


@wp.kernel(enable_backward=False)
def narrow_phase(body_q: wp.array(dtype=wp.transform), shape_X_bs: wp.array(dtype=wp.transform),
                 shape_body: wp.array(dtype=int), geo: ModelShapeGeometry, mesh_points: wp.array(dtype=wp.vec3),
                 mesh_point_start: wp.array(dtype=int), margin: float, slot_shape0: wp.array(dtype=int),
                 slot_shape1: wp.array(dtype=int), slot_point: wp.array(dtype=int), active_slots: wp.array(dtype=int),
                 active_count: wp.array(dtype=int), edge_iters: int, contact_count: wp.array(dtype=int),
                 contact_shape0: wp.array(dtype=int), contact_shape1: wp.array(dtype=int),
                 contact_point0: wp.array(dtype=wp.vec3), contact_point1: wp.array(dtype=wp.vec3),
                 contact_offset0: wp.array(dtype=wp.vec3), contact_offset1: wp.array(dtype=wp.vec3),
                 contact_normal: wp.array(dtype=wp.vec3), contact_thickness: wp.array(dtype=float),
                 contact_tids: wp.array(dtype=int)):
    # one thread per candidate slot of the pairs the broad phase found active (threads past their count return)
    if wp.tid() >= active_count[0]:
        return
    tid = active_slots[wp.tid()]
    a = slot_shape0[tid]
    b = slot_shape1[tid]
    pid = slot_point[tid]
    X_a = shape_world(a, body_q, shape_X_bs, shape_body)
    X_b = shape_world(b, body_q, shape_X_bs, shape_body)
    t_a = geo.type[a]
    t_b = geo.type[b]
    s_a = geo.scale[a]
    s_b = geo.scale[b]
    th_a = geo.thickness[a]
    th_b = geo.thickness[b]
    thickness = th_a + th_b
    mesh_b = geo.source[b]
    max_dist = margin + thickness
    if t_b == GEO_MESH:
        max_dist = max_dist / wp.min(wp.min(s_b[0], s_b[1]), s_b[2])
    X_bi = wp.transform_inverse(X_b)

    p_a = wp.vec3()
    p_b = wp.vec3()
    n = wp.vec3(0.0, 1.0, 0.0)
    valid = True
    # the feature: a point of shape a (p_a), or an edge (e0, e1, world) searched in a box, capsule or mesh
    # ("searched": which of the two shapes, 0 = a, 1 = b)
    is_edge = False
    searched = int(1)  # noqa: UP018, RUF046
    e0 = wp.vec3()
    e1 = wp.vec3()
    if t_a == GEO_SPHERE:
        p_a = wp.transform_get_translation(X_a)
    elif t_a == GEO_BOX:
        is_edge = True
        if t_b == GEO_BOX:
            e0 = wp.transform_point(X_a, box_edge_start(pid, s_a))
            e1 = wp.transform_point(X_a, box_edge_end(pid, s_a))
        elif t_b == GEO_CAPSULE:
            # a half segment of the capsule (b) searched in the box (a)
            searched = 0
            e0 = wp.transform_point(X_b, wp.vec3(0.0, -s_b[1] * float(pid % 2), 0.0))
            e1 = wp.transform_point(X_b, wp.vec3(0.0, s_b[1] * float((pid + 1) % 2), 0.0))
        elif t_b == GEO_PLANE and pid >= 8:
            # an edge of the finite plane (b) searched in the box (a)
            searched = 0
            e0 = wp.transform_point(X_b, plane_corner(pid - 8, s_b[0], s_b[1]))
            e1 = wp.transform_point(X_b, plane_corner(pid - 7, s_b[0], s_b[1]))
        else:
            is_edge = False
            p_a = wp.transform_point(X_a, box_vertex(pid, s_a))
    elif t_a == GEO_CAPSULE:
        if t_b == GEO_PLANE and pid < 2:
            p_a = wp.transform_point(X_a, wp.vec3(0.0, s_a[1] * (2.0 * float(pid) - 1.0), 0.0))
        elif t_b == GEO_PLANE:
            is_edge = True
            searched = 0
            e0 = wp.transform_point(X_b, plane_corner(pid - 2, s_b[0], s_b[1]))
            e1 = wp.transform_point(X_b, plane_corner(pid - 1, s_b[0], s_b[1]))
        else:
            is_edge = True
            e0 = wp.transform_point(X_a, wp.vec3(0.0, s_a[1] * float(pid % 2), 0.0))
            e1 = wp.transform_point(X_a, wp.vec3(0.0, -s_a[1] * float((pid + 1) % 2), 0.0))
    elif t_a == GEO_CYLINDER or t_a == GEO_CONE:
        p_a = wp.transform_point(X_a, rim_point(t_a, s_a, pid))
    elif t_a == GEO_MESH:
        p_a = wp.transform_point(X_a, wp.cw_mul(mesh_points[mesh_point_start[a] + pid], s_a))

    if is_edge:
        X_s = X_b
        t_s = t_b
        s_s = s_b
        mesh_s = mesh_b
        if searched == 0:
            X_s = X_a
            t_s = t_a
            s_s = s_a
            mesh_s = wp.uint64(0)
        X_si = wp.transform_inverse(X_s)
        u = deepest_on_edge(t_s, s_s, mesh_s, max_dist, wp.transform_point(X_si, e0), wp.transform_point(X_si, e1),
                            edge_iters)
        p_e = e0 + (e1 - e0) * u
        if searched == 0:
            # the edge belongs to b (capsule segment or plane edge); the closest point of a is p_a
            p_b = p_e
            q = wp.transform_point(X_si, p_b)
            if t_a == GEO_BOX:
                p_a = wp.transform_point(X_a, closest_point_box(s_a, q))
                n = -wp.transform_vector(X_a, box_sdf_grad(s_a, q))
            else:
                p_a = closest_point_segment(wp.transform_point(X_a, wp.vec3(0.0, s_a[1], 0.0)),
                                            wp.transform_point(X_a, wp.vec3(0.0, -s_a[1], 0.0)), p_b)
                n = wp.normalize(p_a - p_b)
            if t_b == GEO_PLANE:
                # only contacts over the plane count; a box whose centre is over it pushes along its normal
                qa = wp.transform_point(X_bi, p_a)
                if wp.abs(qa[0]) > s_b[0] or wp.abs(qa[2]) > s_b[1]:
                    valid = False
                n = wp.normalize(p_a - p_b)
                if t_a == GEO_BOX:
                    qc = wp.transform_point(X_bi, wp.transform_get_translation(X_a))
                    if wp.abs(qc[0]) <= s_b[0] and wp.abs(qc[2]) <= s_b[1]:
                        n = wp.transform_vector(X_b, wp.vec3(0.0, 1.0, 0.0))
        else:
            p_a = p_e
            if t_b == GEO_BOX:
                # the separation direction outside b, the nearest face's normal inside (warp.sim takes b's normal
                # at a's centre, which pairs points across a gap: a resting box then felt a spurious torque)
                p_b, n = point_vs_box(p_a, X_b, s_b)
            elif t_b == GEO_CAPSULE:
                p_b = closest_point_segment(wp.transform_point(X_b, wp.vec3(0.0, s_b[1], 0.0)),
                                            wp.transform_point(X_b, wp.vec3(0.0, -s_b[1], 0.0)), p_a)
                n = wp.normalize(p_a - p_b)
    else:
        # a point of shape a against shape b
        if t_b == GEO_PLANE:
            inside = True
            p_b, n, inside = plane_contact(p_a, X_b, s_b)
            if not inside:
                if t_a == GEO_SPHERE or t_a == GEO_MESH:
                    n = wp.normalize(p_a - p_b)
                else:
                    valid = False  # box, capsule, cylinder points beyond a finite plane (its edges handle boxes)
        elif t_b == GEO_BOX:
            p_b, n = point_vs_box(p_a, X_b, s_b)
        elif t_b == GEO_CAPSULE:
            p_b = closest_point_segment(wp.transform_point(X_b, wp.vec3(0.0, s_b[1], 0.0)),
                                        wp.transform_point(X_b, wp.vec3(0.0, -s_b[1], 0.0)), p_a)
            n = wp.normalize(p_a - p_b)
        elif t_b == GEO_SPHERE:
            p_b = wp.transform_get_translation(X_b)
            n = wp.normalize(p_a - p_b)
        else:
            # cylinder, cone: closest point from the signed distance and its gradient
            q = wp.transform_point(X_bi, p_a)
            d, g = _shape_sdf(t_b, s_b, q)
            p_b = wp.transform_point(X_b, q - g * d)
            n = wp.transform_vector(X_b, g)
    if t_b == GEO_MESH and (searched == 1 or not is_edge):
        # a point of a, or the deepest point of a's edge, against the mesh b (one inlined query for both)
        p_b, n, valid = point_vs_mesh(p_a, X_b, s_b, mesh_b, max_dist)
        if valid and is_edge:
            p_a = closest_point_segment(e0, e1, p_b)
            n = wp.normalize(p_a - p_b)
    if not valid:
        return
    distance = wp.dot(p_a - p_b, n)
    if distance - thickness < margin:
        index = counter_increment(contact_count, 0, contact_tids, tid)
        if index < contact_shape0.shape[0]:
            X_wa = wp.transform_identity()
            X_wb = wp.transform_identity()
            if shape_body[a] >= 0:
                X_wa = body_q[shape_body[a]]
            if shape_body[b] >= 0:
                X_wb = body_q[shape_body[b]]
            contact_shape0[index] = a
            contact_shape1[index] = b
            contact_point0[index] = wp.transform_point(wp.transform_inverse(X_wa), p_a)
            contact_point1[index] = wp.transform_point(wp.transform_inverse(X_wb), p_b)
            contact_offset0[index] = wp.transform_vector(wp.transform_inverse(X_wa), -th_a * n)
            contact_offset1[index] = wp.transform_vector(wp.transform_inverse(X_wb), th_b * n)
            contact_normal[index] = n
            contact_thickness[index] = thickness


# --- candidate table (host, once per model) --------------------------------------------------------------------

_EDGES_OF_PLANE = 4


def _candidates(ta: int, tb: int, scale_b, nverts_a: int, nverts_b: int):
    """Candidate features of an ordered pair (type a <= type b): a list of (swap, point ids), where ``swap`` makes
    shape b the slot's first shape. None when the pair is not supported."""
    finite_b = tb == GEO_PLANE and scale_b[0] > 0.0 and scale_b[1] > 0.0
    plane_edges = list(range(_EDGES_OF_PLANE)) if finite_b else []
    if ta == GEO_SPHERE:
        return [(False, [0])]
    if ta == GEO_BOX:
        if tb == GEO_BOX:
            return [(False, list(range(12))), (True, list(range(12)))]
        if tb == GEO_CAPSULE:
            return [(False, [0, 1])]
        if tb == GEO_MESH:
            return [(False, list(range(8))), (True, list(range(nverts_b)))]
        if tb == GEO_PLANE:
            return [(False, list(range(8)) + [8 + e for e in plane_edges])]
        return None
    if ta == GEO_CAPSULE:
        if tb == GEO_CAPSULE:
            return [(False, [0, 1])]
        if tb == GEO_MESH:
            return [(False, [0, 1]), (True, list(range(nverts_b)))]
        if tb == GEO_PLANE:
            return [(False, [0, 1] + [2 + e for e in plane_edges])]
        return None
    if ta in (GEO_CYLINDER, GEO_CONE) and tb == GEO_PLANE:
        return [(False, list(range(2 * RIM_POINTS if ta == GEO_CYLINDER else RIM_POINTS + 1)))]
    if ta == GEO_MESH:
        if tb == GEO_MESH:
            return [(False, list(range(nverts_a))), (True, list(range(nverts_b)))]
        if tb == GEO_PLANE:
            return [(False, list(range(nverts_a)))]
    return None


def build_rigid_contact_table(m, b) -> None:
    """Fill the model's candidate table (``rigid_contact_broad_shape0/1``, ``rigid_contact_point_id``, the pair
    of each candidate), the mesh vertex table and the contact buffers; ``rigid_contact_max`` is the number of
    candidates (``b.rigid_contact_max``/``num_rigid_contacts_per_env`` bound the stored contacts, as in Warp)."""
    types = [int(t) for t in b.shape_geo_type]
    pairs = np.concatenate([m.shape_contact_pairs.numpy().reshape(-1, 2),
                            m.shape_ground_contact_pairs.numpy().reshape(-1, 2)]).astype(np.int64)
    starts = np.zeros(len(types), dtype=np.int32)
    points = []
    total = 0
    for i, src in enumerate(b.shape_geo_src):
        starts[i] = total
        if types[i] == int(GEO_MESH) and src is not None:
            points.append(np.asarray(src.vertices, dtype=np.float32))
            total += len(src.vertices)
    nverts = [len(src.vertices) if types[i] == int(GEO_MESH) and src is not None else 0
              for i, src in enumerate(b.shape_geo_src)]
    s0, s1, pid, pair_of = [], [], [], []
    slot_start = np.zeros(max(len(pairs), 1), dtype=np.int32)
    slot_count = np.zeros(max(len(pairs), 1), dtype=np.int32)
    unsupported = set()
    for k, (sa, sb) in enumerate(pairs):
        sa, sb = int(sa), int(sb)
        slot_start[k] = len(s0)
        if (b.shape_body[sa] == -1 and b.shape_body[sb] == -1) or types[sa] == types[sb] == int(GEO_PLANE):
            continue
        if types[sb] < types[sa] or (types[sa] == int(GEO_PLANE)):
            sa, sb = sb, sa
        cands = _candidates(types[sa], types[sb], b.shape_geo_scale[sb], nverts[sa], nverts[sb])
        if cands is None:
            unsupported.add((types[sa], types[sb]))
            continue
        for swap, ids in cands:
            first, second = (sb, sa) if swap else (sa, sb)
            s0.extend([first] * len(ids))
            s1.extend([second] * len(ids))
            pid.extend(ids)
            pair_of.extend([k] * len(ids))
            slot_count[k] += len(ids)
    dev = m.device
    m.rigid_contact_unsupported_pairs = sorted(unsupported)
    m.rigid_pair_count = len(pairs)
    m.rigid_first_ground_pair = m.shape_contact_pair_count
    m.rigid_contact_pairs = wp.array(pairs.astype(np.int32).reshape(-1, 2), dtype=wp.int32, device=dev) \
        if len(pairs) else wp.zeros((0, 2), dtype=wp.int32, device=dev)
    m.rigid_mesh_points = wp.array(np.concatenate(points) if points else np.zeros((1, 3), np.float32),
                                   dtype=wp.vec3, device=dev)
    m.rigid_mesh_point_start = wp.array(starts, dtype=wp.int32, device=dev)
    n = len(s0)
    m.rigid_contact_max = n

    def ints(v):
        return wp.array(np.asarray(v if n else [0], dtype=np.int32), dtype=wp.int32, device=dev)

    m.rigid_contact_broad_shape0 = ints(s0)
    m.rigid_contact_broad_shape1 = ints(s1)
    m.rigid_contact_point_id = ints(pid)
    m.rigid_contact_pair = ints(pair_of)
    # each pair's candidates are consecutive slots: the broad phase lists those of the active pairs for the narrow one
    m.rigid_pair_slot_start = wp.array(slot_start, dtype=wp.int32, device=dev)
    m.rigid_pair_slot_count = wp.array(slot_count, dtype=wp.int32, device=dev)
    m.rigid_active_slot_count = wp.zeros(1, dtype=wp.int32, device=dev)
    m.rigid_active_slots = wp.zeros(max(n, 1), dtype=wp.int32, device=dev)
    limit = b.rigid_contact_max if getattr(b, "rigid_contact_max", None) else n
    if b.num_rigid_contacts_per_env is not None:
        limit = min(limit, b.num_rigid_contacts_per_env * max(b.num_envs, 1))
    m.rigid_contact_max_limited = max(min(limit, n), 1) if n else 0
    allocate_rigid_contacts(m, m.requires_grad)


def allocate_rigid_contacts(m, requires_grad: bool) -> None:
    """(Re)allocate the contact buffers (``rigid_contact_max_limited`` entries)."""
    dev = m.device
    cap = max(m.rigid_contact_max_limited, 1)
    m.rigid_contact_count = wp.zeros(1, dtype=wp.int32, device=dev)
    for name in ("shape0", "shape1"):
        setattr(m, "rigid_contact_" + name, wp.full(cap, -1, dtype=wp.int32, device=dev))
    for name in ("point0", "point1", "offset0", "offset1", "normal"):
        setattr(m, "rigid_contact_" + name, wp.zeros(cap, dtype=wp.vec3, device=dev, requires_grad=requires_grad))
    m.rigid_contact_thickness = wp.zeros(cap, dtype=wp.float32, device=dev, requires_grad=requires_grad)
    m.rigid_contact_tids = wp.full(max(m.rigid_contact_max, 1), -1, dtype=wp.int32, device=dev)
    m.rigid_pair_active = wp.zeros(max(m.rigid_pair_count, 1), dtype=wp.int32, device=dev)


def has_rigid_contacts(model) -> bool:
    return bool(model.rigid_contact_max) and (model.shape_contact_pair_count > 0 or
                                              (model.ground and model.shape_ground_contact_pair_count > 0))


def collide_rigid(model, state, edge_sdf_iter: int, requires_grad: bool) -> None:
    """Broad and narrow phase of the model's shape pairs at ``state``'s body poses (see the module docstring)."""
    if not has_rigid_contacts(model):
        return
    if model.rigid_contact_unsupported_pairs and not getattr(model, "_warned_unsupported", False):
        model._warned_unsupported = True
        names = {int(GEO_SPHERE): "sphere", int(GEO_BOX): "box", int(GEO_CAPSULE): "capsule",
                 int(GEO_CYLINDER): "cylinder", int(GEO_CONE): "cone", int(GEO_MESH): "mesh", int(GEO_PLANE): "plane"}
        kinds = ", ".join(f"{names.get(a, a)}-{names.get(b, b)}" for a, b in model.rigid_contact_unsupported_pairs)
        warnings.warn(f"collide: rigid contacts between {kinds} shapes are not supported; those pairs never touch",
                      stacklevel=3)
    if requires_grad:
        allocate_rigid_contacts(model, True)
    dev = model.device
    X_ws = model.__dict__.get("_rigid_shape_world")
    if X_ws is None or X_ws.shape[0] != model.shape_count or X_ws.device != dev:
        X_ws = model.__dict__["_rigid_shape_world"] = wp.zeros(model.shape_count, dtype=wp.transform, device=dev)
    wp.launch(shape_world_poses, dim=model.shape_count,
              inputs=[state.body_q, model.shape_transform, model.shape_body],
              outputs=[X_ws, model.rigid_contact_count, model.rigid_active_slot_count], device=dev, record_tape=False)
    wp.launch(broad_phase, dim=model.rigid_pair_count,
              inputs=[model.rigid_contact_pairs, model.rigid_first_ground_pair, int(bool(model.ground)), X_ws,
                      model.shape_body, model.body_mass, model.shape_geo, model.shape_collision_radius,
                      model.rigid_contact_margin, model.rigid_pair_slot_start, model.rigid_pair_slot_count],
              outputs=[model.rigid_pair_active, model.rigid_active_slot_count, model.rigid_active_slots,
                       model.rigid_contact_tids], device=dev, record_tape=False)
    wp.launch(narrow_phase, dim=_narrow_dim(model),
              inputs=[state.body_q, model.shape_transform, model.shape_body, model.shape_geo, model.rigid_mesh_points,
                      model.rigid_mesh_point_start, model.rigid_contact_margin, model.rigid_contact_broad_shape0,
                      model.rigid_contact_broad_shape1, model.rigid_contact_point_id, model.rigid_active_slots,
                      model.rigid_active_slot_count, edge_sdf_iter],
              outputs=[model.rigid_contact_count, model.rigid_contact_shape0, model.rigid_contact_shape1,
                       model.rigid_contact_point0, model.rigid_contact_point1, model.rigid_contact_offset0,
                       model.rigid_contact_offset1, model.rigid_contact_normal, model.rigid_contact_thickness,
                       model.rigid_contact_tids], device=dev, record_tape=False)


def _narrow_dim(model) -> int:
    """Narrow-phase threads: the broad phase's count of active candidate slots where reading it is free (memory the
    host reads, no graph capture), else every slot (threads past the count return at once)."""
    if model.device.impl.host_memory and active_capture() is None:
        return int(model.rigid_active_slot_count.numpy()[0])
    return model.rigid_contact_max
