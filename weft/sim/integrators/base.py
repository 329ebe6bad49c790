"""``Integrator`` base class and the symplectic-Euler particle and rigid-body updates shared by integrators."""

import weft as wp

from ..model import PARTICLE_FLAG_ACTIVE, SimError


@wp.kernel
def integrate_particles(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), f: wp.array(dtype=wp.vec3),
                        w: wp.array(dtype=float), particle_flags: wp.array(dtype=wp.uint32), gravity: wp.vec3,
                        dt: float, v_max: float, x_new: wp.array(dtype=wp.vec3), v_new: wp.array(dtype=wp.vec3)):
    """One symplectic Euler step of every active particle (speed clamped to ``v_max``); one thread per particle."""
    tid = wp.tid()
    x0 = x[tid]
    v0 = v[tid]
    if (particle_flags[tid] & PARTICLE_FLAG_ACTIVE) == wp.uint32(0):
        # inactive particles keep their state (also when state_out is a different state than state_in)
        x_new[tid] = x0
        v_new[tid] = v0
        return
    inv_mass = w[tid]
    # v1 = v0 + a dt, x1 = x0 + v1 dt; kinematic particles (inv_mass 0) feel no gravity
    v1 = v0 + (f[tid] * inv_mass + gravity * wp.step(-inv_mass)) * dt
    speed = wp.length(v1)
    if speed > v_max:
        v1 = v1 * (v_max / speed)
    x_new[tid] = x0 + v1 * dt
    v_new[tid] = v1


@wp.func
def integrate_rigid_body(q: wp.transform, qd: wp.spatial_vector, f: wp.spatial_vector, com: wp.vec3,
                         inertia: wp.mat33, inv_mass: float, inv_inertia: wp.mat33, gravity: wp.vec3,
                         angular_damping: float, dt: float):
    """One semi-implicit Euler step of a rigid body (wrench ``f`` about its centre of mass, world frame)."""
    x0 = wp.transform_get_translation(q)
    r0 = wp.transform_get_rotation(q)
    w0 = wp.spatial_top(qd)
    v0 = wp.spatial_bottom(qd)
    t0 = wp.spatial_top(f)
    f0 = wp.spatial_bottom(f)
    x_com = x0 + wp.quat_rotate(r0, com)
    has_mass = float(0.0)  # noqa: UP018
    if inv_mass != 0.0:
        has_mass = 1.0
    v1 = v0 + (f0 * inv_mass + gravity * has_mass) * dt
    x1 = x_com + v1 * dt
    # angular part in the body frame, with the gyroscopic term
    wb = wp.quat_rotate_inv(r0, w0)
    tb = wp.quat_rotate_inv(r0, t0) - wp.cross(wb, inertia * wb)
    w1 = wp.quat_rotate(r0, wb + inv_inertia * tb * dt)
    r1 = wp.normalize(r0 + wp.quat(w1[0], w1[1], w1[2], 0.0) * r0 * 0.5 * dt)
    w1 = w1 * (1.0 - angular_damping * dt)
    return wp.transform(x1 - wp.quat_rotate(r1, com), r1), wp.spatial_vector(w1, v1)


@wp.kernel
def integrate_bodies(body_q: wp.array(dtype=wp.transform), body_qd: wp.array(dtype=wp.spatial_vector),
                     body_f: wp.array(dtype=wp.spatial_vector), body_com: wp.array(dtype=wp.vec3),
                     m: wp.array(dtype=float), I: wp.array(dtype=wp.mat33), inv_m: wp.array(dtype=float),
                     inv_I: wp.array(dtype=wp.mat33), gravity: wp.vec3, angular_damping: float, dt: float,
                     body_q_new: wp.array(dtype=wp.transform), body_qd_new: wp.array(dtype=wp.spatial_vector)):
    """One semi-implicit Euler step of every rigid body (gyroscopic term, angular damping); one thread per body."""
    tid = wp.tid()
    q_new, qd_new = integrate_rigid_body(body_q[tid], body_qd[tid], body_f[tid], body_com[tid], I[tid], inv_m[tid],
                                         inv_I[tid], gravity, angular_damping, dt)
    body_q_new[tid] = q_new
    body_qd_new[tid] = qd_new


def gravity_vec(model):
    """``model.gravity`` as a ``wp.vec3`` (kept on the model while the gravity is unchanged)."""
    g = model.gravity
    key = g.tobytes() if hasattr(g, "tobytes") else tuple(g)
    hit = model.__dict__.get("_gravity_vec")
    if hit is None or hit[0] != key:
        hit = model.__dict__["_gravity_vec"] = (key, wp.vec3(*[float(c) for c in g]))
    return hit[1]


class Integrator:
    """Base class of the time integrators: shared particle and rigid-body updates and input checks."""

    def integrate_bodies(self, model, state_in, state_out, dt: float, angular_damping: float = 0.0) -> None:
        """Advance rigid bodies by ``dt`` (semi-implicit Euler) from ``state_in`` into ``state_out``."""
        if model.body_count:
            wp.launch(integrate_bodies, dim=model.body_count,
                      inputs=[state_in.body_q, state_in.body_qd, state_in.body_f, model.body_com, model.body_mass,
                              model.body_inertia, model.body_inv_mass, model.body_inv_inertia,
                              gravity_vec(model), angular_damping, dt],
                      outputs=[state_out.body_q, state_out.body_qd], device=model.device)

    def integrate_particles(self, model, state_in, state_out, dt: float) -> None:
        """Advance particles by ``dt`` (semi-implicit Euler, speeds clamped to ``model.particle_max_velocity``)."""
        if model.particle_count:
            wp.launch(integrate_particles, dim=model.particle_count,
                      inputs=[state_in.particle_q, state_in.particle_qd, state_in.particle_f, model.particle_inv_mass,
                              model.particle_flags, gravity_vec(model), dt, model.particle_max_velocity],
                      outputs=[state_out.particle_q, state_out.particle_qd], device=model.device)

    def _check(self, model, state_in, state_out, dt) -> None:
        model.check_state(state_in, "state_in")
        model.check_state(state_out, "state_out")
        if not dt > 0.0:
            raise SimError(f"simulate: 'dt' must be > 0, got {dt}")

    def simulate(self, model, state_in, state_out, dt: float, control=None):
        """Advance ``model`` from ``state_in`` to ``state_out`` by ``dt`` under ``control``."""
        raise NotImplementedError(f"{type(self).__name__}.simulate")
