"""Penalty forces of rigid contacts (from ``wp.sim.collide``): normal spring ``ke * d`` and damper
``kd * min(vn, 0)`` while penetrating (``d < 0``), Coulomb friction ``min(kf * |vt|_h, mu * |fn|)`` along the sliding
velocity, with ``|.|_h`` the Huber norm of width ``friction_smoothing`` (smooth at rest, so gradients stay finite);
materials are the mean of the two shapes', as in warp.sim 1.7's Euler integrator. Unlike warp.sim 1.7.2, the
thickness offset is applied to static shapes too (Warp skips it, so a static sphere or capsule acted as its core
point or segment)."""

import weft as wp
from weft.runtime.capture import active_capture

from ..model import ModelShapeGeometry, ModelShapeMaterials


@wp.func
def contact_point_world(body: int, point: wp.vec3, offset: wp.vec3, body_q: wp.array(dtype=wp.transform),
                        body_qd: wp.array(dtype=wp.spatial_vector), body_com: wp.array(dtype=wp.vec3)):
    """World position of a contact point (body frame, or world for static shapes), its arm from the body's centre
    of mass and its velocity."""
    x = point + offset
    r = wp.vec3()
    v = wp.vec3()
    if body >= 0:
        X = body_q[body]
        x = wp.transform_point(X, point) + offset
        r = x - wp.transform_point(X, body_com[body])
        tw = body_qd[body]
        v = wp.spatial_bottom(tw) + wp.cross(wp.spatial_top(tw), r)
    return x, r, v


@wp.kernel
def eval_rigid_contacts(body_q: wp.array(dtype=wp.transform), body_qd: wp.array(dtype=wp.spatial_vector),
                        body_com: wp.array(dtype=wp.vec3), materials: ModelShapeMaterials, geo: ModelShapeGeometry,
                        shape_body: wp.array(dtype=int), contact_count: wp.array(dtype=int),
                        contact_point0: wp.array(dtype=wp.vec3), contact_point1: wp.array(dtype=wp.vec3),
                        contact_normal: wp.array(dtype=wp.vec3), contact_shape0: wp.array(dtype=int),
                        contact_shape1: wp.array(dtype=int), friction_smoothing: float,
                        body_f: wp.array(dtype=wp.spatial_vector)):
    tid = wp.tid()
    if tid >= wp.min(contact_count[0], contact_shape0.shape[0]):
        return
    a = contact_shape0[tid]
    b = contact_shape1[tid]
    if a == b or a < 0 or b < 0:
        return
    ke = 0.5 * (materials.ke[a] + materials.ke[b])
    kd = 0.5 * (materials.kd[a] + materials.kd[b])
    kf = 0.5 * (materials.kf[a] + materials.kf[b])
    ka = 0.5 * (materials.ka[a] + materials.ka[b])
    mu = 0.5 * (materials.mu[a] + materials.mu[b])
    n = contact_normal[tid]
    body_a = shape_body[a]
    body_b = shape_body[b]
    # surface points: the core contact points moved out by each shape's thickness
    x_a, r_a, v_a = contact_point_world(body_a, contact_point0[tid], -geo.thickness[a] * n, body_q, body_qd, body_com)
    x_b, r_b, v_b = contact_point_world(body_b, contact_point1[tid], geo.thickness[b] * n, body_q, body_qd, body_com)
    d = wp.dot(n, x_a - x_b)
    if d >= ka:
        return
    v = v_a - v_b
    vn = wp.dot(n, v)
    vt = v - n * vn
    fn = d * ke
    fd = float(0.0)  # noqa: UP018
    ft = wp.vec3()
    if d < 0.0:
        fd = wp.min(vn, 0.0) * kd
        vs = wp.norm_huber(vt, delta=friction_smoothing)
        if vs > 0.0:
            ft = vt / vs * wp.min(kf * vs, -mu * (fn + fd))
    f = n * (fn + fd) + ft
    if body_a >= 0:
        wp.atomic_sub(body_f, body_a, wp.spatial_vector(wp.cross(r_a, f), f))
    if body_b >= 0:
        wp.atomic_add(body_f, body_b, wp.spatial_vector(wp.cross(r_b, f), f))


def eval_rigid_contact_forces(model, state, body_f, friction_smoothing: float = 1.0) -> None:
    """Add the forces of the rigid contacts found by the last ``wp.sim.collide`` to ``body_f``."""
    from ..rigid_collide import has_rigid_contacts

    if body_f is None or not has_rigid_contacts(model):
        return
    wp.launch(eval_rigid_contacts, dim=_contact_dim(model),
              inputs=[state.body_q, state.body_qd, model.body_com, model.shape_materials, model.shape_geo,
                      model.shape_body, model.rigid_contact_count, model.rigid_contact_point0,
                      model.rigid_contact_point1, model.rigid_contact_normal, model.rigid_contact_shape0,
                      model.rigid_contact_shape1, friction_smoothing],
              outputs=[body_f], device=model.device)


def _contact_dim(model) -> int:
    """Threads for the contact force kernel: the live count where reading it is free (CPU, no graph capture),
    else the buffer size (threads past the count return at once)."""
    cap = len(model.rigid_contact_shape0)
    if model.device.impl.host_memory and active_capture() is None:
        return max(min(int(model.rigid_contact_count.numpy()[0]), cap), 0)
    return cap
