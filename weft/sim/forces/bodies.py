"""Muscle forces on rigid bodies: a muscle pulls its consecutive waypoints together with its activation."""

import weft as wp


@wp.kernel
def eval_muscles(body_X_s: wp.array(dtype=wp.transform), body_v_s: wp.array(dtype=wp.spatial_vector),
                 body_com: wp.array(dtype=wp.vec3), muscle_start: wp.array(dtype=int),
                 muscle_params: wp.array2d(dtype=float), muscle_links: wp.array(dtype=int),
                 muscle_points: wp.array(dtype=wp.vec3), muscle_activation: wp.array(dtype=float),
                 body_f_s: wp.array(dtype=wp.spatial_vector)):
    tid = wp.tid()
    m_start = muscle_start[tid]
    m_end = muscle_start[tid + 1] - 1
    activation = muscle_activation[tid]
    for i in range(m_start, m_end):
        link_0 = muscle_links[i]
        link_1 = muscle_links[i + 1]
        if link_0 != link_1:
            pos_0 = wp.transform_point(body_X_s[link_0], muscle_points[i] - body_com[link_0])
            pos_1 = wp.transform_point(body_X_s[link_1], muscle_points[i + 1] - body_com[link_1])
            f = wp.normalize(pos_1 - pos_0) * activation
            # wrenches as (torque, force) about the world origin
            wp.atomic_add(body_f_s, link_0, wp.spatial_vector(wp.cross(pos_0, f), f))
            wp.atomic_sub(body_f_s, link_1, wp.spatial_vector(wp.cross(pos_1, f), f))


def eval_muscle_forces(model, state, control, body_f) -> None:
    """Add muscle forces (activation times the unit direction between consecutive waypoints) to ``body_f``.

    warp.sim 1.7 has this kernel but never calls it (its Euler integrator guards it with ``if False``); weft applies
    it whenever the model has muscles.
    """
    if model.muscle_count and body_f is not None:
        wp.launch(eval_muscles, dim=model.muscle_count,
                  inputs=[state.body_q, state.body_qd, model.body_com, model.muscle_start, model.muscle_params,
                          model.muscle_bodies, model.muscle_points, control.muscle_activations],
                  outputs=[body_f], device=model.device)
