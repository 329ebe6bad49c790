"""Penalty contact forces of particles: against the ground plane, against shapes (from ``wp.sim.collide``'s soft
contacts) and against each other (through ``wp.HashGrid``). Normal force ``ke * c + kd * min(vn, 0)``, Coulomb
friction ``min(kf |vt|, mu |fn|)`` along the tangential velocity, as in warp.sim 1.7."""

import weft as wp
from weft.runtime.capture import active_capture

from ..model import PARTICLE_FLAG_ACTIVE, ModelShapeMaterials


@wp.func
def particle_force(n: wp.vec3, v: wp.vec3, c: float, k_n: float, k_d: float, k_f: float, k_mu: float):
    """Contact force on a particle at penetration ``c`` (< 0) along normal ``n`` with relative velocity ``v``."""
    vn = wp.dot(n, v)
    fn = c * k_n + wp.min(vn, 0.0) * k_d
    vt = v - n * vn
    vs = wp.length(vt)
    if vs > 0.0:
        vt = vt / vs
    ft = wp.min(vs * k_f, k_mu * wp.abs(fn))
    return -n * fn - vt * ft


@wp.kernel
def eval_particle_ground_contacts(particle_x: wp.array(dtype=wp.vec3), particle_v: wp.array(dtype=wp.vec3),
                                  particle_radius: wp.array(dtype=float), particle_flags: wp.array(dtype=wp.uint32),
                                  ke: float, kd: float, kf: float, mu: float, ground: wp.array(dtype=float),
                                  f: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    if (particle_flags[tid] & PARTICLE_FLAG_ACTIVE) == wp.uint32(0):
        return
    x = particle_x[tid]
    n = wp.vec3(ground[0], ground[1], ground[2])
    c = wp.min(wp.dot(n, x) + ground[3] - particle_radius[tid], 0.0)
    if c >= 0.0:
        return
    wp.atomic_add(f, tid, particle_force(n, particle_v[tid], c, ke, kd, kf, mu))


@wp.kernel
def eval_particle_contacts(particle_x: wp.array(dtype=wp.vec3), particle_v: wp.array(dtype=wp.vec3),
                           body_q: wp.array(dtype=wp.transform), body_qd: wp.array(dtype=wp.spatial_vector),
                           particle_radius: wp.array(dtype=float), particle_flags: wp.array(dtype=wp.uint32),
                           body_com: wp.array(dtype=wp.vec3), shape_body: wp.array(dtype=int),
                           shape_materials: ModelShapeMaterials, particle_ke: float, particle_kd: float,
                           particle_kf: float, particle_mu: float, particle_ka: float,
                           contact_count: wp.array(dtype=int), contact_particle: wp.array(dtype=int),
                           contact_shape: wp.array(dtype=int), contact_body_pos: wp.array(dtype=wp.vec3),
                           contact_body_vel: wp.array(dtype=wp.vec3), contact_normal: wp.array(dtype=wp.vec3),
                           contact_max: int, body_f_in_world_frame: bool, particle_f: wp.array(dtype=wp.vec3),
                           body_f: wp.array(dtype=wp.spatial_vector)):
    tid = wp.tid()
    count = wp.min(contact_max, contact_count[0])
    if tid >= count:
        return
    shape_index = contact_shape[tid]
    body_index = shape_body[shape_index]
    particle_index = contact_particle[tid]
    if (particle_flags[particle_index] & PARTICLE_FLAG_ACTIVE) == wp.uint32(0):
        return
    px = particle_x[particle_index]
    pv = particle_v[particle_index]
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
    c = wp.dot(n, px - bx) - particle_radius[particle_index]
    if c > particle_ka:
        return
    # average of the particle and shape materials
    ke = 0.5 * (particle_ke + shape_materials.ke[shape_index])
    kd = 0.5 * (particle_kd + shape_materials.kd[shape_index])
    kf = 0.5 * (particle_kf + shape_materials.kf[shape_index])
    mu = 0.5 * (particle_mu + shape_materials.mu[shape_index])
    body_w = wp.spatial_top(body_v_s)
    bv = wp.spatial_bottom(body_v_s) + wp.transform_vector(X_wb, contact_body_vel[tid])
    if body_f_in_world_frame:
        bv = bv + wp.cross(body_w, bx)
    else:
        bv = bv + wp.cross(body_w, r)
    v = pv - bv
    vn = wp.dot(n, v)
    vt = v - n * vn
    fn = n * c * ke
    fd = n * wp.min(vn, 0.0) * kd
    ft = wp.normalize(vt) * wp.min(kf * wp.length(vt), wp.abs(mu * c * ke))
    f_total = fn + (fd + ft)
    wp.atomic_sub(particle_f, particle_index, f_total)
    if body_index >= 0:
        if body_f_in_world_frame:
            wp.atomic_sub(body_f, body_index, wp.spatial_vector(wp.cross(bx, f_total), f_total))
        else:
            wp.atomic_add(body_f, body_index, wp.spatial_vector(wp.cross(r, f_total), f_total))


def eval_particle_ground_contact_forces(model, state, particle_f, record_tape: bool = True) -> None:
    """Add ground-plane contact forces of all active particles (if ``model.ground``); ``record_tape=False`` when
    the caller records their adjoint itself (forces/particle_adjoint.py)."""
    if model.ground and model.particle_count:
        wp.launch(eval_particle_ground_contacts, dim=model.particle_count,
                  inputs=[state.particle_q, state.particle_qd, model.particle_radius, model.particle_flags,
                          model.soft_contact_ke, model.soft_contact_kd, model.soft_contact_kf, model.soft_contact_mu,
                          model.ground_plane], outputs=[particle_f], device=model.device, record_tape=record_tape)


def eval_particle_body_contact_forces(model, state, particle_f, body_f, body_f_in_world_frame: bool = False) -> None:
    """Add particle-shape contact forces from the soft contacts found by ``wp.sim.collide`` (and their
    reactions on dynamic bodies to ``body_f``)."""
    if model.particle_count and model.shape_count > 1:
        if body_f is None:
            body_f = _dummy_body_f(model)
        body_q = state.body_q if state.body_q is not None else _dummy_body_q(model)
        body_qd = state.body_qd if state.body_qd is not None else _dummy_body_qd(model)
        wp.launch(eval_particle_contacts, dim=_contact_dim(model),
                  inputs=[state.particle_q, state.particle_qd, body_q, body_qd, model.particle_radius,
                          model.particle_flags, model.body_com, model.shape_body, model.shape_materials,
                          model.soft_contact_ke, model.soft_contact_kd, model.soft_contact_kf, model.soft_contact_mu,
                          model.particle_adhesion, model.soft_contact_count, model.soft_contact_particle,
                          model.soft_contact_shape, model.soft_contact_body_pos, model.soft_contact_body_vel,
                          model.soft_contact_normal, model.soft_contact_max, body_f_in_world_frame],
                  outputs=[particle_f, body_f], device=model.device)


def _contact_dim(model) -> int:
    """Threads for the soft-contact force kernel: the live contact count where reading it is free (CPU, not
    capturing a graph); else the most contacts collide can make, one per (particle, shape) pair, capped by
    ``soft_contact_max`` (warp.sim launches ``soft_contact_max`` threads, 65,536 by default; the threads past the
    count return at once)."""
    bound = min(model.soft_contact_max, model.particle_count * max(model.shape_count - 1, 0))
    if model.device.impl.host_memory and active_capture() is None:
        return min(int(model.soft_contact_count.numpy()[0]), bound)
    return bound


def _dummy_body_f(model):
    # bodiless models still need typed arrays for the body arguments (never indexed: shape_body is -1)
    a = getattr(model, "_empty_body_f", None)
    if a is None:
        a = model._empty_body_f = wp.zeros(0, dtype=wp.spatial_vector, device=model.device)
    return a


def _dummy_body_qd(model):
    a = getattr(model, "_empty_body_qd", None)
    if a is None:
        a = model._empty_body_qd = wp.zeros(0, dtype=wp.spatial_vector, device=model.device)
    return a


def _dummy_body_q(model):
    a = getattr(model, "_empty_body_q", None)
    if a is None:
        a = model._empty_body_q = wp.zeros(0, dtype=wp.transform, device=model.device)
    return a
