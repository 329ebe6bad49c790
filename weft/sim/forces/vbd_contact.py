"""Cloth self-contact for the VBD integrator: vertex-triangle and edge-edge pairs found once per step, their contact
and friction forces (with 3x3 Hessian blocks) evaluated in every sweep, and the per-vertex step bound.

Contact energy of a pair at distance d (warp.sim 1.7.2's model, contact radius r, stiffness k, tau = r / 2): the
quadratic penalty k (r - d)^2 / 2 for tau <= d < r and a log barrier -k tau^2 log(d) (+ const) below tau, so the force
k (r - d), then k tau^2 / d, grows without bound as the primitives meet (warp.sim uses k tau^2 / 2 there: its force
halves when d crosses tau; here it is continuous). The Hessian block is the Gauss-Newton one, E''(d) w^2 n n^T, with
w the vertex's weight in the pair's closest-point difference (1 for the vertex of a vertex-triangle pair, minus the
barycentric weight for a triangle corner, 1 - s / s for the end points of the first edge of an edge-edge pair and
-(1 - t) / -t for the second). Friction is IPC's smoothed Coulomb law on the pair's relative tangential displacement
over the step (closest points held at the step's barycentric weights): force -mu f_n f1(|u|) u / |u| with
f1(u) = 2 u / eps - u^2 / eps^2 below eps = ``friction_epsilon`` dt and 1 above, Hessian mu f_n f1(|u|) / |u| times the
tangent projector (the normal held fixed), scaled by w and w^2 as the normal force.
"""

import weft as wp

from ..model import PARTICLE_FLAG_ACTIVE, ModelShapeMaterials
from .self_contact import triangle_closest_point_barycentric
from .vbd import friction_force_hessian, newton_step, vbd_block


@wp.func
def self_contact_force_norm(d: float, radius: float, ke: float):
    """dE/dd and d2E/dd2 of the self-contact energy at distance ``d`` < ``radius``."""
    tau = 0.5 * radius
    if d < tau and d > 1.0e-5:
        k2 = ke * tau * tau
        return -k2 / d, k2 / (d * d)
    return -ke * (radius - d), ke


@wp.func
def vertex_triangle_force_hessian(v: int, t: int, order: int, x: wp.array(dtype=wp.vec3),
                                  x_prev: wp.array(dtype=wp.vec3), tri_indices: wp.array2d(dtype=int),
                                  radius: float, ke: float, mu: float, eps_u: float):
    """Force and Hessian block of the pair (vertex ``v``, triangle ``t``) on its participant ``order`` (0-2: the
    triangle's corners, 3: the vertex)."""
    i0 = tri_indices[t, 0]
    i1 = tri_indices[t, 1]
    i2 = tri_indices[t, 2]
    p = x[v]
    w = triangle_closest_point_barycentric(x[i0], x[i1], x[i2], p)
    closest = x[i0] * w[0] + x[i1] * w[1] + x[i2] * w[2]
    diff = p - closest
    d = wp.length(diff)
    if d >= radius or d <= 1.0e-8:
        return wp.vec3(), wp.mat33()
    weight = wp.vec4(-w[0], -w[1], -w[2], 1.0)[order]
    n = diff / d
    dE, d2E = self_contact_force_norm(d, radius, ke)
    closest_prev = x_prev[i0] * w[0] + x_prev[i1] * w[1] + x_prev[i2] * w[2]
    du = (p - x_prev[v]) - (closest - closest_prev)
    ff, hf = friction_force_hessian(n, -dE, mu, du, eps_u)
    return (n * (-dE) + ff) * weight, (wp.outer(n, n) * d2E + hf) * (weight * weight)


@wp.func
def edge_edge_force_hessian(e1: int, e2: int, order: int, x: wp.array(dtype=wp.vec3),
                            x_prev: wp.array(dtype=wp.vec3), edges: wp.array2d(dtype=int), radius: float, ke: float,
                            mu: float, eps_u: float, parallel_eps: float):
    """Force and Hessian block of the edge pair (``e1``, ``e2``) on end point ``order`` (0, 1) of ``e1``."""
    a0 = edges[e1, 0]
    a1 = edges[e1, 1]
    b0 = edges[e2, 0]
    b1 = edges[e2, 1]
    st = wp.closest_point_edge_edge(x[a0], x[a1], x[b0], x[b1], parallel_eps)
    s = st[0]
    t = st[1]
    d = st[2]
    if d >= radius or d <= 1.0e-8:
        return wp.vec3(), wp.mat33()
    c1 = x[a0] + (x[a1] - x[a0]) * s
    c2 = x[b0] + (x[b1] - x[b0]) * t
    n = (c1 - c2) / d
    weight = 1.0 - s
    if order == 1:
        weight = s
    dE, d2E = self_contact_force_norm(d, radius, ke)
    c1_prev = x_prev[a0] + (x_prev[a1] - x_prev[a0]) * s
    c2_prev = x_prev[b0] + (x_prev[b1] - x_prev[b0]) * t
    ff, hf = friction_force_hessian(n, -dE, mu, (c1 - c1_prev) - (c2 - c2_prev), eps_u)
    return (n * (-dE) + ff) * weight, (wp.outer(n, n) * d2E + hf) * (weight * weight)


@wp.func
def self_contact_force_hessian(i: int, x: wp.array(dtype=wp.vec3), x_prev: wp.array(dtype=wp.vec3),
                               tri_indices: wp.array2d(dtype=int), edges: wp.array2d(dtype=int), radius: float,
                               ke: float, mu: float, eps_u: float, parallel_eps: float, vt_max: int, corner_max: int,
                               ee_max: int, vt_count: wp.array(dtype=wp.int32), vt_tri: wp.array(dtype=wp.int32),
                               corner_count: wp.array(dtype=wp.int32), corner_ids: wp.array(dtype=wp.int32),
                               vertex_edge_offsets: wp.array(dtype=wp.int32), vertex_edge_adj: wp.array(dtype=wp.int32),
                               ee_count: wp.array(dtype=wp.int32), ee_ids: wp.array(dtype=wp.int32)):
    """Sum over vertex ``i``'s self-contact pairs: as the vertex of a vertex-triangle pair, as a corner of the
    triangle of one, and as an end point of an edge of an edge-edge pair."""
    f = wp.vec3()
    h = wp.mat33()
    for j in range(wp.min(vt_count[i], vt_max)):
        fc, hc = vertex_triangle_force_hessian(i, int(vt_tri[i * vt_max + j]), 3, x, x_prev, tri_indices, radius, ke,
                                               mu, eps_u)
        f = f + fc
        h = h + hc
    for j in range(wp.min(corner_count[i], corner_max)):
        cid = int(corner_ids[i * corner_max + j])
        t = int(vt_tri[cid])
        order = int(0)  # noqa: UP018, RUF046 - a mutable int local
        if tri_indices[t, 1] == i:
            order = 1
        elif tri_indices[t, 2] == i:
            order = 2
        fc, hc = vertex_triangle_force_hessian(cid // vt_max, t, order, x, x_prev, tri_indices, radius, ke, mu, eps_u)
        f = f + fc
        h = h + hc
    for k in range(vertex_edge_offsets[i], vertex_edge_offsets[i + 1]):
        e = int(vertex_edge_adj[2 * k])
        order = int(vertex_edge_adj[2 * k + 1])
        for j in range(wp.min(ee_count[e], ee_max)):
            fc, hc = edge_edge_force_hessian(e, int(ee_ids[e * ee_max + j]), order, x, x_prev, edges, radius, ke, mu,
                                             eps_u, parallel_eps)
            f = f + fc
            h = h + hc
    return f, h


# ---------------------------------------------------------------------------------------------------------------------
# detection (once per step, at the step's start positions)


@wp.kernel
def vbd_detect_vertex_triangle(mesh: wp.uint64, x: wp.array(dtype=wp.vec3), tri_indices: wp.array2d(dtype=int),
                               margin: float, vt_max: int, corner_max: int, vt_count: wp.array(dtype=wp.int32),
                               vt_tri: wp.array(dtype=wp.int32), corner_count: wp.array(dtype=wp.int32),
                               corner_ids: wp.array(dtype=wp.int32), bound: wp.array(dtype=float)):
    # every triangle (not incident to vertex v) within ``margin`` of v; each pair is also listed under the
    # triangle's three corners (corner_count starts at zero). bound (filled with margin before) receives, for v and
    # for the triangle's corners, the smallest vertex-triangle distance they take part in (all pairs, not only the
    # first vt_max): the step's conservative displacement bound
    v = wp.tid()
    p = x[v]
    lo = p - wp.vec3(margin, margin, margin)
    hi = p + wp.vec3(margin, margin, margin)
    query = wp.mesh_query_aabb(mesh, lo, hi)
    t = int(0)  # noqa: UP018, RUF046 - a mutable int local
    n = int(0)  # noqa: UP018, RUF046
    while wp.mesh_query_aabb_next(query, t):
        i0 = tri_indices[t, 0]
        i1 = tri_indices[t, 1]
        i2 = tri_indices[t, 2]
        if i0 != v and i1 != v and i2 != v:
            a = x[i0]
            b = x[i1]
            c = x[i2]
            w = triangle_closest_point_barycentric(a, b, c, p)
            dist = wp.length(p - (a * w[0] + b * w[1] + c * w[2]))
            if dist < margin:
                wp.atomic_min(bound, v, dist)
                wp.atomic_min(bound, i0, dist)
                wp.atomic_min(bound, i1, dist)
                wp.atomic_min(bound, i2, dist)
            if dist < margin and n < vt_max:
                cid = v * vt_max + n
                vt_tri[cid] = t
                n = n + 1
                for k in range(3):
                    u = tri_indices[t, k]
                    slot = wp.atomic_add(corner_count, u, 1)
                    if slot < corner_max:
                        corner_ids[u * corner_max + slot] = cid
    vt_count[v] = n


@wp.kernel
def vbd_detect_edge_edge(mesh: wp.uint64, x: wp.array(dtype=wp.vec3), edges: wp.array2d(dtype=int),
                         tri_edges: wp.array2d(dtype=int), margin: float, parallel_eps: float, ee_max: int,
                         ee_count: wp.array(dtype=wp.int32), ee_ids: wp.array(dtype=wp.int32),
                         bound: wp.array(dtype=float)):
    """For each mesh edge, the edges sharing no vertex with it closer than ``margin`` (each found through the one
    triangle that owns it in ``tri_edges``): at most ``ee_max`` listed (the pair is listed under both edges, each
    from its own thread); every such pair lowers the step bound of its four end points to its distance."""
    e = wp.tid()
    i = edges[e, 0]
    j = edges[e, 1]
    a = x[i]
    b = x[j]
    pad = wp.vec3(margin, margin, margin)
    query = wp.mesh_query_aabb(mesh, wp.min(a, b) - pad, wp.max(a, b) + pad)
    t = int(0)  # noqa: UP018, RUF046 - a mutable int local
    n = int(0)  # noqa: UP018, RUF046
    while wp.mesh_query_aabb_next(query, t):
        for k in range(3):
            e2 = tri_edges[t, k]
            if e2 >= 0:
                u = edges[e2, 0]
                w = edges[e2, 1]
                if u != i and u != j and w != i and w != j:
                    dist = wp.closest_point_edge_edge(a, b, x[u], x[w], parallel_eps)[2]
                    if dist < margin:
                        wp.atomic_min(bound, i, dist)
                        wp.atomic_min(bound, j, dist)
                        wp.atomic_min(bound, u, dist)
                        wp.atomic_min(bound, w, dist)
                        if n < ee_max:
                            ee_ids[e * ee_max + n] = e2
                            n = n + 1
    ee_count[e] = n


@wp.kernel
def vbd_solve_color_self_contact(dt: float, ids: wp.array(dtype=wp.int32), x_prev: wp.array(dtype=wp.vec3),
                                 x: wp.array(dtype=wp.vec3), mass: wp.array(dtype=float),
                                 inertia: wp.array(dtype=wp.vec3), particle_flags: wp.array(dtype=wp.uint32),
                                 tri_indices: wp.array2d(dtype=int), tri_poses: wp.array(dtype=wp.mat22),
                                 tri_materials: wp.array2d(dtype=float), tri_areas: wp.array(dtype=float),
                                 edge_indices: wp.array2d(dtype=int), edge_rest_angle: wp.array(dtype=float),
                                 edge_rest_length: wp.array(dtype=float),
                                 edge_bending_properties: wp.array2d(dtype=float),
                                 tri_offsets: wp.array(dtype=wp.int32), tri_adj: wp.array(dtype=wp.int32),
                                 edge_offsets: wp.array(dtype=wp.int32), edge_adj: wp.array(dtype=wp.int32),
                                 soft_contact_ke: float, friction_mu: float, friction_epsilon: float,
                                 particle_radius: wp.array(dtype=float), contact_prealloc: int,
                                 contact_counts: wp.array(dtype=wp.int32), contact_ids: wp.array(dtype=wp.int32),
                                 shape_materials: ModelShapeMaterials, shape_body: wp.array(dtype=int),
                                 body_q: wp.array(dtype=wp.transform), body_qd: wp.array(dtype=wp.spatial_vector),
                                 body_com: wp.array(dtype=wp.vec3), contact_shape: wp.array(dtype=int),
                                 contact_body_pos: wp.array(dtype=wp.vec3), contact_body_vel: wp.array(dtype=wp.vec3),
                                 contact_normal: wp.array(dtype=wp.vec3), has_ground: bool,
                                 ground: wp.array(dtype=float), edges: wp.array2d(dtype=int), radius: float,
                                 parallel_eps: float, vt_max: int, corner_max: int, ee_max: int,
                                 vt_count: wp.array(dtype=wp.int32), vt_tri: wp.array(dtype=wp.int32),
                                 corner_count: wp.array(dtype=wp.int32), corner_ids: wp.array(dtype=wp.int32),
                                 vertex_edge_offsets: wp.array(dtype=wp.int32),
                                 vertex_edge_adj: wp.array(dtype=wp.int32), ee_count: wp.array(dtype=wp.int32),
                                 ee_ids: wp.array(dtype=wp.int32), x_new: wp.array(dtype=wp.vec3)):
    """``vbd_solve_color`` plus the self-contact forces (vertex-triangle and edge-edge, with friction)."""
    i = int(ids[wp.tid()])
    xi = x[i]
    if (particle_flags[i] & PARTICLE_FLAG_ACTIVE) == wp.uint32(0):
        x_new[i] = xi
        return
    f, h = vbd_block(i, dt, x_prev, x, mass, inertia, tri_indices, tri_poses, tri_materials, tri_areas, edge_indices,
                     edge_rest_angle, edge_rest_length, edge_bending_properties, tri_offsets, tri_adj, edge_offsets,
                     edge_adj, soft_contact_ke, friction_mu, friction_epsilon, particle_radius, contact_prealloc,
                     contact_counts, contact_ids, shape_materials, shape_body, body_q, body_qd, body_com,
                     contact_shape, contact_body_pos, contact_body_vel, contact_normal, has_ground, ground)
    fs, hs = self_contact_force_hessian(i, x, x_prev, tri_indices, edges, radius, soft_contact_ke, friction_mu,
                                        friction_epsilon * dt, parallel_eps, vt_max, corner_max, ee_max, vt_count,
                                        vt_tri, corner_count, corner_ids, vertex_edge_offsets, vertex_edge_adj,
                                        ee_count, ee_ids)
    x_new[i] = newton_step(xi, f + fs, h + hs)
