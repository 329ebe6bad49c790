"""Triangle-particle repulsion for cloth self-collision in the Euler integrator (``model.enable_tri_collisions``):
every particle against every triangle it is not a vertex of, O(triangles x particles)."""

import weft as wp


@wp.func
def triangle_closest_point_barycentric(a: wp.vec3, b: wp.vec3, c: wp.vec3, p: wp.vec3):
    """Barycentric coordinates of the point of triangle (a, b, c) closest to ``p`` (Ericson, RTCD 5.1.5)."""
    ab = b - a
    ac = c - a
    ap = p - a
    d1 = wp.dot(ab, ap)
    d2 = wp.dot(ac, ap)
    if d1 <= 0.0 and d2 <= 0.0:
        return wp.vec3(1.0, 0.0, 0.0)
    bp = p - b
    d3 = wp.dot(ab, bp)
    d4 = wp.dot(ac, bp)
    if d3 >= 0.0 and d4 <= d3:
        return wp.vec3(0.0, 1.0, 0.0)
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        v = d1 / (d1 - d3)
        return wp.vec3(1.0 - v, v, 0.0)
    cp = p - c
    d5 = wp.dot(ab, cp)
    d6 = wp.dot(ac, cp)
    if d6 >= 0.0 and d5 <= d6:
        return wp.vec3(0.0, 0.0, 1.0)
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        w = d2 / (d2 - d6)
        return wp.vec3(1.0 - w, 0.0, w)
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0:
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        return wp.vec3(0.0, 1.0 - w, w)
    denom = 1.0 / (va + vb + vc)
    v = vb * denom
    w = vc * denom
    return wp.vec3(1.0 - v - w, v, w)


@wp.kernel
def eval_triangles_contact(num_particles: int, x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3),
                           indices: wp.array2d(dtype=int), materials: wp.array2d(dtype=float),
                           particle_radius: wp.array(dtype=float), f: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    face_no = tid // num_particles
    particle_no = tid % num_particles
    pos = x[particle_no]
    i = indices[face_no, 0]
    j = indices[face_no, 1]
    k = indices[face_no, 2]
    if i == particle_no or j == particle_no or k == particle_no:
        return
    p = x[i]
    q = x[j]
    r = x[k]
    bary = triangle_closest_point_barycentric(p, q, r, pos)
    closest = p * bary[0] + q * bary[1] + r * bary[2]
    diff = pos - closest
    dist = wp.dot(diff, diff)
    n = wp.normalize(diff)
    # warp.sim compares the squared distance with the radius; kept for identical behaviour
    c = wp.min(dist - particle_radius[particle_no], 0.0)
    fn = n * c * 1e5
    wp.atomic_sub(f, particle_no, fn)
    wp.atomic_add(f, i, fn * bary[0])
    wp.atomic_add(f, j, fn * bary[1])
    wp.atomic_add(f, k, fn * bary[2])


def eval_triangle_contact_forces(model, state, particle_f) -> None:
    """Add triangle-particle repulsion forces when ``model.enable_tri_collisions`` is set."""
    if model.enable_tri_collisions and model.tri_count:
        wp.launch(eval_triangles_contact, dim=model.tri_count * model.particle_count,
                  inputs=[model.particle_count, state.particle_q, state.particle_qd, model.tri_indices,
                          model.tri_materials, model.particle_radius], outputs=[particle_f], device=model.device)
