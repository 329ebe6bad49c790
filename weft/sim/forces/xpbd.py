"""XPBD constraint projections of particles: contacts (ground, shapes, other particles), distance constraints
(springs), dihedral bending and tetrahedral volume/deviatoric constraints, with warp.sim 1.7.2's XPBD formulas
(Macklin et al. 2016; Jacobi iterations: every constraint reads the positions at the start of the iteration).

Contacts add their position corrections to ``delta`` (one per particle). The element constraints store the
correction of each of their corners in a scratch array (``d[element * corners + corner]``) that
``gather.gather_forces`` sums per particle, as the Euler integrator does with forces (no float atomics on the CPU).

The Lagrange multipliers of warp.sim's spring and bending constraints are reset to zero before every iteration, so
the ``alpha * lambda`` term of the XPBD update is always zero there: the kernels here keep no multiplier array.
"""

import weft as wp

from ..model import PARTICLE_FLAG_ACTIVE, ModelShapeMaterials
from .elastic import _cols


@wp.func
def _friction_delta(n: wp.vec3, v: wp.vec3, lambda_n: float, mu: float, dt: float):
    """The friction correction along the tangential velocity ``v - n (n.v)``, at most ``mu`` times the normal one."""
    vt = v - n * wp.dot(n, v)
    lambda_f = wp.max(mu * lambda_n, -wp.length(vt) * dt)
    return wp.normalize(vt) * lambda_f


@wp.kernel
def solve_particle_ground_contacts(particle_x: wp.array(dtype=wp.vec3), particle_v: wp.array(dtype=wp.vec3),
                                   inv_mass: wp.array(dtype=float), particle_radius: wp.array(dtype=float),
                                   particle_flags: wp.array(dtype=wp.uint32), mu: float, ground: wp.array(dtype=float),
                                   dt: float, relaxation: float, delta: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    if (particle_flags[tid] & PARTICLE_FLAG_ACTIVE) == wp.uint32(0):
        return
    if inv_mass[tid] == 0.0:
        return
    x = particle_x[tid]
    n = wp.vec3(ground[0], ground[1], ground[2])
    c = wp.min(wp.dot(n, x) + ground[3] - particle_radius[tid], 0.0)
    if c >= 0.0:
        return
    d = _friction_delta(n, particle_v[tid], c, mu, dt) - n * c
    wp.atomic_add(delta, tid, d * relaxation)


@wp.kernel
def solve_particle_shape_contacts(particle_x: wp.array(dtype=wp.vec3), particle_v: wp.array(dtype=wp.vec3),
                                  inv_mass: wp.array(dtype=float), particle_radius: wp.array(dtype=float),
                                  particle_flags: wp.array(dtype=wp.uint32), body_q: wp.array(dtype=wp.transform),
                                  body_qd: wp.array(dtype=wp.spatial_vector), body_com: wp.array(dtype=wp.vec3),
                                  body_inv_mass: wp.array(dtype=float), body_inv_inertia: wp.array(dtype=wp.mat33),
                                  shape_body: wp.array(dtype=int), shape_materials: ModelShapeMaterials,
                                  particle_mu: float, particle_ka: float, contact_count: wp.array(dtype=int),
                                  contact_particle: wp.array(dtype=int), contact_shape: wp.array(dtype=int),
                                  contact_body_pos: wp.array(dtype=wp.vec3), contact_body_vel: wp.array(dtype=wp.vec3),
                                  contact_normal: wp.array(dtype=wp.vec3), contact_max: int, dt: float,
                                  relaxation: float, delta: wp.array(dtype=wp.vec3),
                                  body_delta: wp.array(dtype=wp.spatial_vector)):
    tid = wp.tid()
    if tid >= wp.min(contact_max, contact_count[0]):
        return
    shape_index = contact_shape[tid]
    body_index = shape_body[shape_index]
    particle_index = contact_particle[tid]
    if (particle_flags[particle_index] & PARTICLE_FLAG_ACTIVE) == wp.uint32(0):
        return
    X_wb = wp.transform_identity()
    X_com = wp.vec3()
    body_v_s = wp.spatial_vector()
    if body_index >= 0:
        X_wb = body_q[body_index]
        X_com = body_com[body_index]
        body_v_s = body_qd[body_index]
    bx = wp.transform_point(X_wb, contact_body_pos[tid])
    r = bx - wp.transform_point(X_wb, X_com)
    n = contact_normal[tid]
    c = wp.dot(n, particle_x[particle_index] - bx) - particle_radius[particle_index]
    if c > particle_ka:
        return
    mu = 0.5 * (particle_mu + shape_materials.mu[shape_index])
    bv = wp.spatial_bottom(body_v_s) + wp.cross(wp.spatial_top(body_v_s), r)
    bv = bv + wp.transform_vector(X_wb, contact_body_vel[tid])
    # generalised inverse masses of the particle and of the body at the contact point
    w1 = inv_mass[particle_index]
    w2 = float(0.0)  # noqa: UP018
    if body_index >= 0:
        ang = wp.quat_rotate_inv(wp.transform_get_rotation(X_wb), wp.cross(r, n))
        w2 = body_inv_mass[body_index] + wp.dot(ang, body_inv_inertia[body_index] * ang)
    denom = w1 + w2
    if denom == 0.0:
        return
    d = (_friction_delta(n, particle_v[particle_index] - bv, c, mu, dt) - n * c) / denom * relaxation
    wp.atomic_add(delta, particle_index, d * w1)
    if body_index >= 0:
        wp.atomic_sub(body_delta, body_index, wp.spatial_vector(wp.cross(r, d), d))


@wp.kernel
def solve_particle_particle_contacts(grid: wp.uint64, particle_x: wp.array(dtype=wp.vec3),
                                     particle_v: wp.array(dtype=wp.vec3), inv_mass: wp.array(dtype=float),
                                     particle_radius: wp.array(dtype=float), particle_flags: wp.array(dtype=wp.uint32),
                                     k_mu: float, k_cohesion: float, max_radius: float, dt: float, relaxation: float,
                                     delta: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    i = wp.hash_grid_point_id(grid, tid)
    if i == -1:
        return
    if (particle_flags[i] & PARTICLE_FLAG_ACTIVE) == wp.uint32(0):
        return
    x = particle_x[i]
    v = particle_v[i]
    radius = particle_radius[i]
    w1 = inv_mass[i]
    d = wp.vec3()
    query = wp.hash_grid_query(grid, x, radius + max_radius + k_cohesion)
    index = int(0)  # noqa: UP018, RUF046 - a mutable int local
    while wp.hash_grid_query_next(query, index):
        if (particle_flags[index] & PARTICLE_FLAG_ACTIVE) != wp.uint32(0) and index != i:
            n = x - particle_x[index]
            dist = wp.length(n)
            err = dist - radius - particle_radius[index]
            denom = w1 + inv_mass[index]
            if err <= k_cohesion and denom > 0.0:
                n = n / dist
                # (warp.sim 1.7.2 takes the friction direction from the particle's own velocity's tangential part)
                vn = wp.dot(n, v - particle_v[index])
                vt = v - n * vn
                lambda_f = wp.max(k_mu * err, -wp.length(vt) * dt)
                d = d + (wp.normalize(vt) * lambda_f - n * err) / denom
    wp.atomic_add(delta, i, d * w1 * relaxation)


@wp.kernel
def solve_springs(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), inv_mass: wp.array(dtype=float),
                  spring_indices: wp.array(dtype=int), spring_rest_lengths: wp.array(dtype=float),
                  spring_stiffness: wp.array(dtype=float), spring_damping: wp.array(dtype=float), dt: float, base: int,
                  d: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    d[base + tid * 2 + 0] = wp.vec3()
    d[base + tid * 2 + 1] = wp.vec3()
    i = spring_indices[tid * 2 + 0]
    j = spring_indices[tid * 2 + 1]
    if i == -1 or j == -1:
        return
    ke = spring_stiffness[tid]
    kd = spring_damping[tid]
    xij = x[i] - x[j]
    length = wp.length(xij)
    if length == 0.0:
        return
    n = xij / length
    wi = inv_mass[i]
    wj = inv_mass[j]
    denom = wi + wj
    # zero damping is allowed, negative is not
    if denom <= 0.0 or ke <= 0.0 or kd < 0.0:
        return
    c = length - spring_rest_lengths[tid]
    alpha = 1.0 / (ke * dt * dt)
    gamma = kd / (ke * dt)
    # the damping term uses the displacement over the step, dt * v
    dlambda = -(c + gamma * dt * wp.dot(n, v[i] - v[j])) / ((1.0 + gamma) * denom + alpha)
    d[base + tid * 2 + 0] = n * (wi * dlambda)
    d[base + tid * 2 + 1] = n * (-wj * dlambda)


@wp.kernel
def solve_bending(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), inv_mass: wp.array(dtype=float),
                  indices: wp.array2d(dtype=int), rest: wp.array(dtype=float),
                  bending_properties: wp.array2d(dtype=float), dt: float, base: int, d: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    for c in range(4):
        d[base + tid * 4 + c] = wp.vec3()
    ke = bending_properties[tid, 0]
    kd = bending_properties[tid, 1]
    i = indices[tid, 0]
    j = indices[tid, 1]
    k = indices[tid, 2]
    m = indices[tid, 3]
    if i == -1 or j == -1 or k == -1 or m == -1:
        return
    x1 = x[i]
    x2 = x[j]
    x3 = x[k]
    x4 = x[m]
    w1 = inv_mass[i]
    w2 = inv_mass[j]
    w3 = inv_mass[k]
    w4 = inv_mass[m]
    # the two face normals across the edge x3-x4
    n1 = wp.cross(x3 - x1, x4 - x1)
    n2 = wp.cross(x4 - x2, x3 - x2)
    l1 = wp.length(n1)
    l2 = wp.length(n2)
    if l1 < 1.0e-6 or l2 < 1.0e-6:
        return
    n1 = n1 / l1
    n2 = n2 / l2
    e = x4 - x3
    e_hat = wp.normalize(e)
    e_len = wp.length(e)
    s = -wp.sign(wp.dot(wp.cross(n1, n2), e))
    g1 = n1 * e_len * s
    g2 = n2 * e_len * s
    g3 = (n1 * wp.dot(x1 - x4, e_hat) + n2 * wp.dot(x2 - x4, e_hat)) * s
    g4 = (n1 * wp.dot(x3 - x1, e_hat) + n2 * wp.dot(x3 - x2, e_hat)) * s
    c = wp.acos(wp.dot(n1, n2)) - rest[tid]
    denom = w1 * wp.length_sq(g1) + w2 * wp.length_sq(g2) + w3 * wp.length_sq(g3) + w4 * wp.length_sq(g4)
    if denom <= 0.0 or ke <= 0.0 or kd < 0.0:
        return
    alpha = 1.0 / (ke * dt * dt)
    gamma = kd / (ke * dt)
    gv = dt * (wp.dot(g1, v[i]) + wp.dot(g2, v[j]) + wp.dot(g3, v[k]) + wp.dot(g4, v[m]))
    dlambda = -(c + gamma * gv) / ((1.0 + gamma) * denom + alpha)
    d[base + tid * 4 + 0] = g1 * (w1 * dlambda)
    d[base + tid * 4 + 1] = g2 * (w2 * dlambda)
    d[base + tid * 4 + 2] = g3 * (w3 * dlambda)
    d[base + tid * 4 + 3] = g4 * (w4 * dlambda)


@wp.func
def _col(m: wp.mat33, c: int):
    return wp.vec3(m[0, c], m[1, c], m[2, c])


@wp.kernel
def solve_tetrahedra(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), inv_mass: wp.array(dtype=float),
                     indices: wp.array2d(dtype=int), rest_matrix: wp.array(dtype=wp.mat33),
                     activation: wp.array(dtype=float), materials: wp.array2d(dtype=float), dt: float,
                     relaxation: float, base: int, d: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    i = indices[tid, 0]
    j = indices[tid, 1]
    k = indices[tid, 2]
    m = indices[tid, 3]
    x0 = x[i]
    w0 = inv_mass[i]
    w1 = inv_mass[j]
    w2 = inv_mass[k]
    w3 = inv_mass[m]
    Dm = rest_matrix[tid]
    inv_QT = wp.transpose(Dm)
    inv_rest_volume = wp.determinant(Dm) * 6.0
    F = _cols(x[j] - x0, x[k] - x0, x[m] - x0) * Dm
    f1 = _col(F, 0)
    f2 = _col(F, 1)
    f3 = _col(F, 2)
    # warp.sim 1.7.2's XPBD tetrahedra: a deviatoric constraint tr(F^T F) - 3 and a volume constraint det(F) - 1,
    # projected one after the other from the same positions, both with compliance ``relaxation`` per unit rest
    # volume (the materials' k_mu / k_lambda are not used)
    alpha = relaxation / dt / dt
    if inv_rest_volume > 0.0:
        alpha = alpha * inv_rest_volume
    d0 = wp.vec3()
    d1 = wp.vec3()
    d2 = wp.vec3()
    d3 = wp.vec3()
    for term in range(2):
        C = wp.ddot(F, F) - 3.0
        dC = F * 2.0
        if term == 1:
            C = wp.determinant(F) - 1.0
            dC = _cols(wp.cross(f2, f3), wp.cross(f3, f1), wp.cross(f1, f2))
        if C != 0.0:
            dP = dC * inv_QT
            g1 = _col(dP, 0)
            g2 = _col(dP, 1)
            g3 = _col(dP, 2)
            g0 = -(g1 + g2 + g3)
            w = wp.dot(g0, g0) * w0 + wp.dot(g1, g1) * w1 + wp.dot(g2, g2) * w2 + wp.dot(g3, g3) * w3
            if w > 0.0:
                dlambda = -C / (w + alpha)
                d0 = d0 + g0 * (w0 * dlambda)
                d1 = d1 + g1 * (w1 * dlambda)
                d2 = d2 + g2 * (w2 * dlambda)
                d3 = d3 + g3 * (w3 * dlambda)
    d[base + tid * 4 + 0] = d0
    d[base + tid * 4 + 1] = d1
    d[base + tid * 4 + 2] = d2
    d[base + tid * 4 + 3] = d3


@wp.kernel
def apply_particle_deltas(x_orig: wp.array(dtype=wp.vec3), x_pred: wp.array(dtype=wp.vec3),
                          v_pred: wp.array(dtype=wp.vec3), particle_flags: wp.array(dtype=wp.uint32),
                          delta: wp.array(dtype=wp.vec3), dt: float, v_max: float, x_out: wp.array(dtype=wp.vec3),
                          v_out: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    xp = x_pred[tid]
    if (particle_flags[tid] & PARTICLE_FLAG_ACTIVE) == wp.uint32(0):
        x_out[tid] = xp
        v_out[tid] = v_pred[tid]
        return
    x_new = xp + delta[tid]
    v_new = (x_new - x_orig[tid]) / dt
    speed = wp.length(v_new)
    if speed > v_max:
        v_new = v_new * (v_max / speed)
    x_out[tid] = x_new
    v_out[tid] = v_new


@wp.kernel
def apply_particle_ground_restitution(particle_v_new: wp.array(dtype=wp.vec3), particle_x_old: wp.array(dtype=wp.vec3),
                                      particle_v_old: wp.array(dtype=wp.vec3), inv_mass: wp.array(dtype=float),
                                      particle_radius: wp.array(dtype=float),
                                      particle_flags: wp.array(dtype=wp.uint32), particle_ka: float,
                                      restitution: float, ground: wp.array(dtype=float),
                                      particle_v_out: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    if (particle_flags[tid] & PARTICLE_FLAG_ACTIVE) == wp.uint32(0):
        return
    if inv_mass[tid] == 0.0:
        return
    n = wp.vec3(ground[0], ground[1], ground[2])
    if wp.dot(n, particle_x_old[tid]) + ground[3] - particle_radius[tid] > particle_ka:
        return
    vn = wp.dot(n, particle_v_old[tid])
    if vn < 0.0:
        # replace the normal velocity by the restituted pre-step approach velocity
        wp.atomic_add(particle_v_out, tid, n * (wp.max(-restitution * vn, 0.0) - wp.dot(n, particle_v_new[tid])))


@wp.kernel
def apply_particle_shape_restitution(particle_v_new: wp.array(dtype=wp.vec3), particle_x_old: wp.array(dtype=wp.vec3),
                                     particle_v_old: wp.array(dtype=wp.vec3), particle_radius: wp.array(dtype=float),
                                     particle_flags: wp.array(dtype=wp.uint32), body_q: wp.array(dtype=wp.transform),
                                     shape_body: wp.array(dtype=int), particle_ka: float, restitution: float,
                                     contact_count: wp.array(dtype=int), contact_particle: wp.array(dtype=int),
                                     contact_shape: wp.array(dtype=int), contact_body_pos: wp.array(dtype=wp.vec3),
                                     contact_normal: wp.array(dtype=wp.vec3), contact_max: int,
                                     particle_v_out: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    if tid >= wp.min(contact_max, contact_count[0]):
        return
    body_index = shape_body[contact_shape[tid]]
    p = contact_particle[tid]
    if (particle_flags[p] & PARTICLE_FLAG_ACTIVE) == wp.uint32(0):
        return
    X_wb = wp.transform_identity()
    if body_index >= 0:
        X_wb = body_q[body_index]
    n = contact_normal[tid]
    if wp.dot(n, particle_x_old[p] - wp.transform_point(X_wb, contact_body_pos[tid])) - particle_radius[p] > particle_ka:
        return
    vn = wp.dot(n, particle_v_old[p])
    if vn < 0.0:
        wp.atomic_add(particle_v_out, p, n * (wp.max(-restitution * vn, 0.0) - wp.dot(n, particle_v_new[p])))
