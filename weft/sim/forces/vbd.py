"""Vertex block descent (Chen et al. 2024) for cloth: per-vertex forces and 3x3 Hessians of the inertia, StVK
membrane, dihedral bending, damping and contact energies, and the kernels of one VBD step.

Energies (warp.sim 1.7.2's): inertia m/(2 dt^2) |x - y|^2 with y the unconstrained prediction; the StVK membrane
A (mu |G|^2 + lambda/2 tr(G)^2) with the Green strain G = (F^T F - I)/2 of the 3x2 deformation gradient (mu, lambda =
``tri_materials[:, 0:2]``, A = ``tri_areas``); bending k L0 (theta - theta0)^2 / 2 over each interior edge
(``edge_bending_properties[:, 0]``, L0 = ``edge_rest_length``); Rayleigh damping kd / dt times the element Hessian
applied to the step's displacement; penalty contacts ke d^2 / 2 against the ground and shapes with an IPC-style
smoothed Coulomb friction on the step's tangential displacement.
"""

import weft as wp

from ..model import PARTICLE_FLAG_ACTIVE, ModelShapeMaterials


@wp.func
def _col(F: wp.mat33, c: int):
    return wp.vec3(F[0, c], F[1, c], F[2, c])


@wp.func
def stvk_force_hessian(x0: wp.vec3, x1: wp.vec3, x2: wp.vec3, Dm: wp.mat22, area: float, mu: float, lmbd: float,
                       order: int):
    """Force on (and Hessian block of) corner ``order`` of a StVK membrane triangle."""
    e1 = x1 - x0
    e2 = x2 - x0
    # columns of F = [e1 e2] Dm
    fa = e1 * Dm[0, 0] + e2 * Dm[1, 0]
    fb = e1 * Dm[0, 1] + e2 * Dm[1, 1]
    g00 = 0.5 * (wp.dot(fa, fa) - 1.0)
    g11 = 0.5 * (wp.dot(fb, fb) - 1.0)
    g01 = 0.5 * wp.dot(fa, fb)
    tr = g00 + g11
    s00 = 2.0 * mu * g00 + lmbd * tr
    s11 = 2.0 * mu * g11 + lmbd * tr
    s01 = 2.0 * mu * g01
    # first Piola-Kirchhoff stress P = F S (columns)
    pa = fa * s00 + fb * s01
    pb = fa * s01 + fb * s11
    # d F / d x_corner: column a gets m1 x, column b gets m2 x
    m1 = Dm[0, 0]
    m2 = Dm[0, 1]
    if order == 0:
        m1 = -Dm[0, 0] - Dm[1, 0]
        m2 = -Dm[0, 1] - Dm[1, 1]
    elif order == 2:
        m1 = Dm[1, 0]
        m2 = Dm[1, 1]
    f = -(pa * m1 + pb * m2) * area
    # d2W/dFa dFb = S_ba I + mu fb fa^T + mu delta_ab (fa fa^T + fb fb^T) + lambda fa fb^T
    ff = wp.outer(fa, fa) + wp.outer(fb, fb)
    I = wp.identity(n=3, dtype=float)
    haa = I * s00 + wp.outer(fa, fa) * (mu + lmbd) + ff * mu
    hbb = I * s11 + wp.outer(fb, fb) * (mu + lmbd) + ff * mu
    hab = I * s01 + wp.outer(fb, fa) * mu + wp.outer(fa, fb) * lmbd
    h = (haa * (m1 * m1) + hbb * (m2 * m2) + (hab + wp.transpose(hab)) * (m1 * m2)) * area
    return f, h


@wp.func
def bending_force_hessian(p: wp.vec3, q: wp.vec3, a: wp.vec3, b: wp.vec3, rest_angle: float, rest_length: float,
                          ke: float, order: int):
    """Force on corner ``order`` (0: o0 = p, 1: o1 = q, 2: v0 = a, 3: v1 = b) of a dihedral bending element and its
    Gauss-Newton Hessian block ke L0 g g^T (g the angle's gradient)."""
    n1 = wp.cross(a - p, b - p)
    n2 = wp.cross(b - q, a - q)
    l1 = wp.dot(n1, n1)
    l2 = wp.dot(n2, n2)
    e = b - a
    el = wp.length(e)
    if l1 < 1.0e-12 or l2 < 1.0e-12 or el < 1.0e-12:
        return wp.vec3(), wp.mat33()
    eh = e / el
    n1u = n1 / wp.sqrt(l1)
    n2u = n2 / wp.sqrt(l2)
    theta = wp.atan2(wp.dot(wp.cross(n2u, n1u), eh), wp.dot(n1u, n2u))
    u1 = n1 / l1
    u2 = n2 / l2
    g = u1 * el
    if order == 1:
        g = u2 * el
    elif order == 2:
        g = u1 * wp.dot(p - b, eh) + u2 * wp.dot(q - b, eh)
    elif order == 3:
        g = -(u1 * wp.dot(p - a, eh) + u2 * wp.dot(q - a, eh))
    k = ke * rest_length
    return -g * (k * (theta - rest_angle)), wp.outer(g, g) * k


@wp.func
def tangent_basis(n: wp.vec3):
    """Two unit vectors orthogonal to the unit vector ``n`` and to each other."""
    t = wp.vec3(1.0, 0.0, 0.0)
    if wp.abs(n[0]) > 0.9:
        t = wp.vec3(0.0, 1.0, 0.0)
    e0 = wp.normalize(wp.cross(n, t))
    return e0, wp.cross(n, e0)


@wp.func
def friction_force_hessian(n: wp.vec3, fn: float, mu: float, dx: wp.vec3, eps_u: float):
    """Smoothed Coulomb friction (IPC's f1 mollifier) on the tangential displacement ``dx``; the normal is held
    fixed in the Hessian. At zero displacement the force is zero and the Hessian takes its limit 2 mu fn / eps_u
    (a sticking contact keeps its tangential stiffness)."""
    e0, e1 = tangent_basis(n)
    u0 = wp.dot(e0, dx)
    u1 = wp.dot(e1, dx)
    un = wp.sqrt(u0 * u0 + u1 * u1)
    s = float(0.0)  # noqa: UP018 - a mutable float local
    if un > eps_u:
        s = 1.0 / un
    elif eps_u > 0.0:
        s = (2.0 - un / eps_u) / eps_u
    k = mu * fn * s
    return -(e0 * u0 + e1 * u1) * k, (wp.outer(e0, e0) + wp.outer(e1, e1)) * k


@wp.func
def contact_force_hessian(n: wp.vec3, depth: float, ke: float, mu: float, dx: wp.vec3, eps_u: float):
    """Penalty contact of penetration ``depth`` > 0 along ``n`` with friction on the relative displacement ``dx``."""
    fn = depth * ke
    ff, hf = friction_force_hessian(n, fn, mu, dx, eps_u)
    return n * fn + ff, wp.outer(n, n) * ke + hf


@wp.kernel
def vbd_forward_step(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), inv_mass: wp.array(dtype=float),
                     f_ext: wp.array(dtype=wp.vec3), particle_flags: wp.array(dtype=wp.uint32), gravity: wp.vec3,
                     dt: float, inertia: wp.array(dtype=wp.vec3), x_iter: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    x0 = x[tid]
    y = x0
    if (particle_flags[tid] & PARTICLE_FLAG_ACTIVE) != wp.uint32(0):
        y = x0 + (v[tid] + (gravity + f_ext[tid] * inv_mass[tid]) * dt) * dt
    inertia[tid] = y
    x_iter[tid] = y


@wp.func
def vbd_block(i: int, dt: float, x_prev: wp.array(dtype=wp.vec3), x: wp.array(dtype=wp.vec3),
              mass: wp.array(dtype=float), inertia: wp.array(dtype=wp.vec3), tri_indices: wp.array2d(dtype=int),
              tri_poses: wp.array(dtype=wp.mat22), tri_materials: wp.array2d(dtype=float),
              tri_areas: wp.array(dtype=float), edge_indices: wp.array2d(dtype=int),
              edge_rest_angle: wp.array(dtype=float), edge_rest_length: wp.array(dtype=float),
              edge_bending_properties: wp.array2d(dtype=float), tri_offsets: wp.array(dtype=wp.int32),
              tri_adj: wp.array(dtype=wp.int32), edge_offsets: wp.array(dtype=wp.int32),
              edge_adj: wp.array(dtype=wp.int32), soft_contact_ke: float, friction_mu: float,
              friction_epsilon: float, particle_radius: wp.array(dtype=float), contact_prealloc: int,
              contact_counts: wp.array(dtype=wp.int32), contact_ids: wp.array(dtype=wp.int32),
              shape_materials: ModelShapeMaterials, shape_body: wp.array(dtype=int),
              body_q: wp.array(dtype=wp.transform), body_qd: wp.array(dtype=wp.spatial_vector),
              body_com: wp.array(dtype=wp.vec3), contact_shape: wp.array(dtype=int),
              contact_body_pos: wp.array(dtype=wp.vec3), contact_body_vel: wp.array(dtype=wp.vec3),
              contact_normal: wp.array(dtype=wp.vec3), has_ground: bool, ground: wp.array(dtype=float)):
    """Force and 3x3 Hessian on particle ``i`` of the inertia, membrane, bending, damping, shape and ground contact
    energies (everything but self-contact)."""
    xi = x[i]
    inv_dt2 = 1.0 / (dt * dt)
    disp = x_prev[i] - xi
    f = (inertia[i] - xi) * (mass[i] * inv_dt2)
    h = wp.identity(n=3, dtype=float) * (mass[i] * inv_dt2)
    for k in range(tri_offsets[i], tri_offsets[i + 1]):
        t = int(tri_adj[2 * k])
        order = int(tri_adj[2 * k + 1])
        ft, ht = stvk_force_hessian(x[tri_indices[t, 0]], x[tri_indices[t, 1]], x[tri_indices[t, 2]], tri_poses[t],
                                    tri_areas[t], tri_materials[t, 0], tri_materials[t, 1], order)
        hd = ht * (tri_materials[t, 2] / dt)
        f = f + ft + hd * disp
        h = h + ht + hd
    for k in range(edge_offsets[i], edge_offsets[i + 1]):
        e = int(edge_adj[2 * k])
        order = int(edge_adj[2 * k + 1])
        o0 = edge_indices[e, 0]
        o1 = edge_indices[e, 1]
        if o0 >= 0 and o1 >= 0:
            fe, he = bending_force_hessian(x[o0], x[o1], x[edge_indices[e, 2]], x[edge_indices[e, 3]],
                                           edge_rest_angle[e], edge_rest_length[e], edge_bending_properties[e, 0],
                                           order)
            hd = he * (edge_bending_properties[e, 1] / dt)
            f = f + fe + hd * disp
            h = h + he + hd
    eps_u = friction_epsilon * dt
    for k in range(wp.min(contact_counts[i], contact_prealloc)):
        c = int(contact_ids[i * contact_prealloc + k])
        shape = contact_shape[c]
        body = shape_body[shape]
        X_wb = wp.transform_identity()
        X_com = wp.vec3()
        body_v_s = wp.spatial_vector()
        if body >= 0:
            X_wb = body_q[body]
            X_com = body_com[body]
            body_v_s = body_qd[body]
        bx = wp.transform_point(X_wb, contact_body_pos[c])
        n = contact_normal[c]
        depth = particle_radius[i] - wp.dot(n, xi - bx)
        if depth > 0.0:
            r = bx - wp.transform_point(X_wb, X_com)
            bv = wp.spatial_bottom(body_v_s) + wp.cross(wp.spatial_top(body_v_s), r)
            bv = bv + wp.transform_vector(X_wb, contact_body_vel[c])
            mu = 0.5 * (friction_mu + shape_materials.mu[shape])
            fc, hc = contact_force_hessian(n, depth, soft_contact_ke, mu, -disp - bv * dt, eps_u)
            f = f + fc
            h = h + hc
    if has_ground:
        n = wp.vec3(ground[0], ground[1], ground[2])
        depth = particle_radius[i] - wp.dot(n, xi) - ground[3]
        if depth > 0.0:
            fc, hc = contact_force_hessian(n, depth, soft_contact_ke, friction_mu, -disp, eps_u)
            f = f + fc
            h = h + hc
    return f, h


@wp.func
def newton_step(xi: wp.vec3, f: wp.vec3, h: wp.mat33):
    """xi + h^-1 f, or xi where the block is (near) singular."""
    if wp.abs(wp.determinant(h)) > 1.0e-5:
        return xi + wp.inverse(h) * f
    return xi


@wp.kernel
def vbd_solve_color(dt: float, ids: wp.array(dtype=wp.int32), x_prev: wp.array(dtype=wp.vec3),
                    x: wp.array(dtype=wp.vec3), mass: wp.array(dtype=float), inertia: wp.array(dtype=wp.vec3),
                    particle_flags: wp.array(dtype=wp.uint32), tri_indices: wp.array2d(dtype=int),
                    tri_poses: wp.array(dtype=wp.mat22), tri_materials: wp.array2d(dtype=float),
                    tri_areas: wp.array(dtype=float), edge_indices: wp.array2d(dtype=int),
                    edge_rest_angle: wp.array(dtype=float), edge_rest_length: wp.array(dtype=float),
                    edge_bending_properties: wp.array2d(dtype=float), tri_offsets: wp.array(dtype=wp.int32),
                    tri_adj: wp.array(dtype=wp.int32), edge_offsets: wp.array(dtype=wp.int32),
                    edge_adj: wp.array(dtype=wp.int32), soft_contact_ke: float, friction_mu: float,
                    friction_epsilon: float, particle_radius: wp.array(dtype=float),
                    contact_prealloc: int, contact_counts: wp.array(dtype=wp.int32),
                    contact_ids: wp.array(dtype=wp.int32),
                    shape_materials: ModelShapeMaterials, shape_body: wp.array(dtype=int),
                    body_q: wp.array(dtype=wp.transform), body_qd: wp.array(dtype=wp.spatial_vector),
                    body_com: wp.array(dtype=wp.vec3), contact_shape: wp.array(dtype=int),
                    contact_body_pos: wp.array(dtype=wp.vec3), contact_body_vel: wp.array(dtype=wp.vec3),
                    contact_normal: wp.array(dtype=wp.vec3), has_ground: bool, ground: wp.array(dtype=float),
                    x_new: wp.array(dtype=wp.vec3)):
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
    x_new[i] = newton_step(xi, f, h)


@wp.kernel
def vbd_bin_contacts(contact_count: wp.array(dtype=int), contact_particle: wp.array(dtype=int), contact_max: int,
                     contact_prealloc: int, counts: wp.array(dtype=wp.int32), ids: wp.array(dtype=wp.int32)):
    # the soft contacts of each particle (at most contact_prealloc) as a per-particle list; counts starts at zero
    c = wp.tid()
    if c >= wp.min(contact_max, contact_count[0]):
        return
    p = contact_particle[c]
    slot = wp.atomic_add(counts, p, 1)
    if slot < contact_prealloc:
        ids[p * contact_prealloc + slot] = c


@wp.kernel
def vbd_copy_color(ids: wp.array(dtype=wp.int32), x_new: wp.array(dtype=wp.vec3), x: wp.array(dtype=wp.vec3)):
    i = ids[wp.tid()]
    x[i] = x_new[i]


@wp.func
def bounded_position(x_start: wp.vec3, x_new: wp.vec3, limit: float):
    """``x_new``, pulled back towards ``x_start`` onto the sphere of radius ``limit`` if it lies outside."""
    d = x_new - x_start
    length = wp.length(d)
    if length > limit:
        return x_start + d * (limit / length)
    return x_new


@wp.kernel
def vbd_copy_color_bounded(ids: wp.array(dtype=wp.int32), x_new: wp.array(dtype=wp.vec3),
                           x_start: wp.array(dtype=wp.vec3), bound: wp.array(dtype=float), relaxation: float,
                           x: wp.array(dtype=wp.vec3)):
    """``vbd_copy_color`` with the self-contact step limit: no vertex moves further from its start of step position
    than ``relaxation`` times its bound (the nearest vertex-triangle distance, or the margin)."""
    i = ids[wp.tid()]
    x[i] = bounded_position(x_start[i], x_new[i], relaxation * bound[i])


@wp.kernel
def vbd_bound_all(x_start: wp.array(dtype=wp.vec3), bound: wp.array(dtype=float), relaxation: float,
                  x: wp.array(dtype=wp.vec3)):
    """The step limit applied to the initial guess (the inertial prediction) of every vertex."""
    i = wp.tid()
    x[i] = bounded_position(x_start[i], x[i], relaxation * bound[i])


@wp.kernel
def vbd_update_velocity(x_prev: wp.array(dtype=wp.vec3), x: wp.array(dtype=wp.vec3), dt: float,
                        v: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    v[tid] = (x[tid] - x_prev[tid]) / dt
