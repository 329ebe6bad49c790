"""Particle-particle contact forces (granular materials), neighbours found through ``wp.HashGrid``."""

import weft as wp

from ..model import PARTICLE_FLAG_ACTIVE
from .contacts import particle_force


def _kernel():
    @wp.kernel
    def eval_particle_forces_kernel(grid: wp.uint64, particle_x: wp.array(dtype=wp.vec3),
                                    particle_v: wp.array(dtype=wp.vec3), particle_radius: wp.array(dtype=float),
                                    particle_flags: wp.array(dtype=wp.uint32), k_contact: float, k_damp: float,
                                    k_friction: float, k_mu: float, k_cohesion: float, max_radius: float,
                                    particle_f: wp.array(dtype=wp.vec3)):
        tid = wp.tid()
        i = wp.hash_grid_point_id(grid, tid)
        if i == -1:
            return
        if (particle_flags[i] & PARTICLE_FLAG_ACTIVE) == wp.uint32(0):
            return
        x = particle_x[i]
        v = particle_v[i]
        radius = particle_radius[i]
        f = wp.vec3()
        query = wp.hash_grid_query(grid, x, radius + max_radius + k_cohesion)
        index = int(0)  # noqa: UP018, RUF046 - a mutable int local, as in Warp
        while wp.hash_grid_query_next(query, index):
            if (particle_flags[index] & PARTICLE_FLAG_ACTIVE) != wp.uint32(0) and index != i:
                n = x - particle_x[index]
                d = wp.length(n)
                err = d - radius - particle_radius[index]
                if err <= k_cohesion:
                    f = f + particle_force(n / d, v - particle_v[index], err, k_contact, k_damp, k_friction, k_mu)
        wp.atomic_add(particle_f, i, f)

    return eval_particle_forces_kernel


_KERNEL = []


def eval_particle_forces(model, state, forces) -> None:
    """Add particle-particle contact forces to ``forces`` once ``model.particle_grid`` has been built over the
    particles (``model.particle_grid.build(state.particle_q, radius)``, as warp.sim's examples do each frame)."""
    grid = model.built_particle_grid()
    if not (model.particle_count > 1 and model.particle_max_radius > 0.0 and grid is not None):
        return
    count = min(grid.num_points, model.particle_count)
    if count == 0:
        return
    wp.launch(particle_forces_kernel(), dim=count,
              inputs=[grid.id, state.particle_q, state.particle_qd, model.particle_radius, model.particle_flags,
                      model.particle_ke, model.particle_kd, model.particle_kf, model.particle_mu,
                      model.particle_cohesion, model.particle_max_radius], outputs=[forces], device=model.device)


def particle_forces_kernel():
    """The particle-particle contact kernel (built on first use)."""
    if not _KERNEL:
        _KERNEL.append(_kernel())
    return _KERNEL[0]
