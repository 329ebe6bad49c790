"""``XPBDIntegrator``: extended position-based dynamics (Macklin et al. 2016) with warp.sim 1.7.2's constraint set.

One step: integrate particles (and bodies) without constraints to predicted positions, then ``iterations`` Jacobi
sweeps; each sweep projects every constraint from the sweep's starting positions, sums the corrections per particle
and moves the particles, recomputing velocities as ``(x - x_start_of_step) / dt``.

Particle constraints (this module): ground and shape contacts (with friction), particle-particle contacts through
``model.particle_grid``, springs (distance constraints with compliance ``1 / ke`` and damping), dihedral bending
of the cloth edges and the tetrahedra's deviatoric and volume constraints; optional restitution. The rigid-body
constraints (joints, rigid contacts) plug in through :meth:`XPBDIntegrator.solve_body_constraints`, which every
sweep calls after the particle projection with the sweep's body deltas (the reactions of particle-shape contacts).
"""

from dataclasses import dataclass

import weft as wp

from .._compile import prepare
from ..forces import xpbd as k
from ..forces.gather import gather_list, launch_gather, scratch
from . import xpbd_rigid
from .base import Integrator, integrate_bodies, integrate_particles


@dataclass
class BodyIterate:
    """The rigid-body iterate of one step, handed to :meth:`XPBDIntegrator.solve_body_constraints`.

    ``q`` / ``qd`` are the current body poses and velocities (state_out's arrays until a body pass writes new
    ones); ``deltas`` holds this sweep's body corrections from particle-shape contacts (spatial, (angular,
    linear)), zeroed at the start of every sweep.
    """

    q: object
    qd: object
    deltas: object


def xpbd_kernels(model) -> list:
    """The kernels an XPBD step (and collide) launches for ``model``."""
    from ..collide import create_soft_contacts
    from ..forces import gather

    elements = model.spring_count + model.edge_count + model.tet_count
    pairs = [(model.particle_count, integrate_particles), (model.body_count, integrate_bodies),
             (model.ground and model.particle_count, k.solve_particle_ground_contacts),
             (model.particle_count and model.shape_count > 1, k.solve_particle_shape_contacts),
             (model.particle_count and model.shape_count > 1, create_soft_contacts),
             (model.particle_count > 1 and model.particle_max_radius > 0.0, k.solve_particle_particle_contacts),
             (model.spring_count, k.solve_springs), (model.edge_count, k.solve_bending),
             (model.tet_count, k.solve_tetrahedra), (elements, gather.gather_forces),
             (model.particle_count, k.apply_particle_deltas)]
    return [kern for present, kern in pairs if present] + xpbd_rigid.rigid_kernels(model)


class XPBDIntegrator(Integrator):
    """Extended position-based dynamics for particles, cloth (springs and bending) and soft bodies (tetrahedra).

    Unconditionally stable in the sense of position-based methods: stiffnesses act as compliances (``1 / ke``), so a
    stiff spring converges to an inextensible one instead of exploding; more ``iterations`` (or substeps) make
    constraints stiffer in effect.

    Args:
        iterations: Jacobi sweeps per step.
        soft_body_relaxation: compliance of the tetrahedra's constraints (per unit rest volume; warp.sim 1.7.2's
            XPBD does not use the tet materials).
        soft_contact_relaxation: scale of the particle contact corrections.
        joint_linear_relaxation, joint_angular_relaxation, rigid_contact_relaxation, rigid_contact_con_weighting:
            rigid-body constraint settings (used by the rigid-body constraints).
        angular_damping: angular velocity damping of rigid bodies (per second).
        enable_restitution: apply ``model.soft_contact_restitution`` to particles that hit the ground or a shape.
    """

    def __init__(self, iterations: int = 2, soft_body_relaxation: float = 0.9, soft_contact_relaxation: float = 0.9,
                 joint_linear_relaxation: float = 0.7, joint_angular_relaxation: float = 0.4,
                 rigid_contact_relaxation: float = 0.8, rigid_contact_con_weighting: bool = True,
                 angular_damping: float = 0.0, enable_restitution: bool = False):
        self.iterations = iterations
        self.soft_body_relaxation = soft_body_relaxation
        self.soft_contact_relaxation = soft_contact_relaxation
        self.joint_linear_relaxation = joint_linear_relaxation
        self.joint_angular_relaxation = joint_angular_relaxation
        self.rigid_contact_relaxation = rigid_contact_relaxation
        self.rigid_contact_con_weighting = rigid_contact_con_weighting
        self.angular_damping = angular_damping
        self.enable_restitution = enable_restitution
        self.compute_body_velocity_from_position_delta = False

    # ------------------------------------------------------------------ rigid-body hook
    def solve_body_constraints(self, model, state_in, state_out, body: BodyIterate, control, dt: float,
                               iteration: int) -> None:
        """Project the rigid-body constraints of one sweep (joints, rigid contacts; ``integrators/xpbd_rigid.py``)
        and update ``body.q`` / ``body.qd``. As in warp.sim 1.7.2, the reactions of particle-shape contacts in
        ``body.deltas`` reach the bodies through the joint pass (so only in models with joints)."""
        xpbd_rigid.solve_body_constraints(self, model, state_in, body, control, dt)

    def finish_bodies(self, model, state_in, state_out, body: BodyIterate, control, dt: float) -> None:
        """After the sweeps: rigid-contact restitution (``enable_restitution``), then ``body.q`` / ``body.qd`` into
        ``state_out``."""
        if self.enable_restitution:
            xpbd_rigid.apply_restitution(self, model, state_in, body, dt)
        if body.q is not state_out.body_q:
            wp.copy(state_out.body_q, body.q)
            wp.copy(state_out.body_qd, body.qd)

    # ------------------------------------------------------------------ step
    def simulate(self, model, state_in, state_out, dt: float, control=None):
        """Advance ``model`` by ``dt`` from ``state_in`` to ``state_out`` (``state_in`` is not modified); external
        forces in ``state_in.particle_f`` / ``body_f`` act in the prediction. Returns ``state_out``."""
        self._check(model, state_in, state_out, dt)
        prepare(model, xpbd_kernels(model))
        if control is None:
            control = model.control(clone_variables=False)
        grad = bool(state_in.requires_grad)
        body = None
        if model.body_count:
            # state_in.body_f plus force-mode joint drives; on a tape the iterates are fresh arrays and state_out's
            # are written once, at the end
            body_f = xpbd_rigid.joint_action_forces(model, state_in, control, grad)
            if grad:
                body = BodyIterate(wp.empty_like(state_out.body_q, requires_grad=True),
                                   wp.empty_like(state_out.body_qd, requires_grad=True), None)
            else:
                body = BodyIterate(state_out.body_q, state_out.body_qd, None)
            wp.launch(integrate_bodies, dim=model.body_count,
                      inputs=[state_in.body_q, state_in.body_qd, body_f, model.body_com, model.body_mass,
                              model.body_inertia, model.body_inv_mass, model.body_inv_inertia, wp.vec3(*model.gravity),
                              self.angular_damping, dt],
                      outputs=[body.q, body.qd], device=model.device)
        particles = model.particle_count > 0
        if particles:
            x, v = self._predict(model, state_in, state_out, dt, grad)
        for it in range(self.iterations):
            if body is not None:
                body.deltas = self._buffer(model, "body_deltas", state_out.body_qd, grad)
                if not grad:
                    body.deltas.zero_()
            if particles:
                last = it == self.iterations - 1
                x, v = self._sweep(model, state_in, state_out, x, v, body, dt, grad, it, last)
            if body is not None:
                self.solve_body_constraints(model, state_in, state_out, body, control, dt, it)
        if body is not None:
            self.finish_bodies(model, state_in, state_out, body, control, dt)
        if particles and self.enable_restitution:
            self._restitution(model, state_in, state_out, body)
        return state_out

    def _buffer(self, model, name, like, grad, tag=0):
        """A work array shaped like ``like``: a new one on a tape (every value the backward reads must survive),
        else one cached per model."""
        if grad:
            return wp.zeros_like(like, requires_grad=grad)
        cache = model.__dict__.setdefault("_xpbd_buffers", {})
        a = cache.get((name, tag))
        if a is None or a.shape != like.shape:
            a = cache[(name, tag)] = wp.zeros_like(like, requires_grad=False)
        return a

    def _predict(self, model, state_in, state_out, dt, grad):
        """Unconstrained positions and velocities; with no sweeps they go straight into ``state_out``."""
        if self.iterations <= 0:
            self.integrate_particles(model, state_in, state_out, dt)
            return state_out.particle_q, state_out.particle_qd
        x = self._buffer(model, "x", state_in.particle_q, grad, tag=0)
        v = self._buffer(model, "v", state_in.particle_qd, grad, tag=0)
        wp.launch(integrate_particles, dim=model.particle_count,
                  inputs=[state_in.particle_q, state_in.particle_qd, state_in.particle_f, model.particle_inv_mass,
                          model.particle_flags, wp.vec3(*model.gravity), dt, model.particle_max_velocity],
                  outputs=[x, v], device=model.device)
        return x, v

    def _sweep(self, model, state_in, state_out, x, v, body, dt, grad, it, last):
        """One Jacobi sweep over the particle constraints from (x, v); returns the new (x, v)."""
        dev = model.device
        delta = self._buffer(model, "delta", state_in.particle_qd, grad)
        if not grad:
            delta.zero_()
        relax = self.soft_contact_relaxation
        if model.ground:
            wp.launch(k.solve_particle_ground_contacts, dim=model.particle_count,
                      inputs=[x, v, model.particle_inv_mass, model.particle_radius, model.particle_flags,
                              model.soft_contact_mu, model.ground_plane, dt, relax], outputs=[delta], device=dev)
        if model.shape_count > 1 and model.soft_contact_count is not None:
            from ..forces.contacts import _contact_dim, _dummy_body_f, _dummy_body_q, _dummy_body_qd

            if body is not None:
                bq, bqd, bd = body.q, body.qd, body.deltas
            else:
                bq, bqd, bd = _dummy_body_q(model), _dummy_body_qd(model), _dummy_body_f(model)
            wp.launch(k.solve_particle_shape_contacts, dim=_contact_dim(model),
                      inputs=[x, v, model.particle_inv_mass, model.particle_radius, model.particle_flags, bq, bqd,
                              model.body_com, model.body_inv_mass, model.body_inv_inertia, model.shape_body,
                              model.shape_materials, model.soft_contact_mu, model.particle_adhesion,
                              model.soft_contact_count, model.soft_contact_particle, model.soft_contact_shape,
                              model.soft_contact_body_pos, model.soft_contact_body_vel, model.soft_contact_normal,
                              model.soft_contact_max, dt, relax], outputs=[delta, bd], device=dev)
        grid = model.built_particle_grid()
        if model.particle_max_radius > 0.0 and model.particle_count > 1 and grid is not None:
            count = min(grid.num_points, model.particle_count)
            if count:
                wp.launch(k.solve_particle_particle_contacts, dim=count,
                          inputs=[grid.id, x, v, model.particle_inv_mass, model.particle_radius, model.particle_flags,
                                  model.particle_mu, model.particle_cohesion, model.particle_max_radius, dt, relax],
                          outputs=[delta], device=dev)
        self._elements(model, state_in, x, v, dt, delta)
        if last:
            x_out, v_out = state_out.particle_q, state_out.particle_qd
        else:
            # alternate between two cached buffers (the prediction's and another) when not on a tape
            x_out = self._buffer(model, "x", x, grad, tag=1 - it % 2)
            v_out = self._buffer(model, "v", v, grad, tag=1 - it % 2)
        wp.launch(k.apply_particle_deltas, dim=model.particle_count,
                  inputs=[state_in.particle_q, x, v, model.particle_flags, delta, dt, model.particle_max_velocity],
                  outputs=[x_out, v_out], device=dev)
        return x_out, v_out

    def _elements(self, model, state, x, v, dt, delta) -> None:
        """Project springs, bending edges and tetrahedra; their corner corrections are gathered into ``delta``."""
        segs = [(model.spring_count, 2, model.spring_indices, k.solve_springs,
                 (model.spring_rest_length, model.spring_stiffness, model.spring_damping, dt)),
                (model.edge_count, 4, model.edge_indices, k.solve_bending,
                 (model.edge_rest_angle, model.edge_bending_properties, dt)),
                (model.tet_count, 4, model.tet_indices, k.solve_tetrahedra,
                 (model.tet_poses, model.tet_activations, model.tet_materials, dt, self.soft_body_relaxation))]
        segs = [s for s in segs if s[0]]
        if not segs:
            return
        key = "xpbd:" + "+".join(s[3].__name__ for s in segs)
        total = sum(n * c for n, c, *_ in segs)
        elem_d = scratch(model, state, key, total)
        base = 0
        for n, corners, indices, kernel, inputs in segs:
            wp.launch(kernel, dim=n, inputs=[x, v, model.particle_inv_mass, indices, *inputs, base], outputs=[elem_d],
                      device=model.device)
            base += n * corners
        glist = gather_list(model, key, [s[2] for s in segs], [s[1] for s in segs])
        launch_gather(model, glist, elem_d, delta)

    def _restitution(self, model, state_in, state_out, body) -> None:
        dev = model.device
        v_new = wp.clone(state_out.particle_qd)
        if model.shape_count > 1 and model.soft_contact_count is not None:
            from ..forces.contacts import _contact_dim, _dummy_body_q

            bq = body.q if body is not None else _dummy_body_q(model)
            wp.launch(k.apply_particle_shape_restitution, dim=_contact_dim(model),
                      inputs=[v_new, state_in.particle_q, state_in.particle_qd, model.particle_radius,
                              model.particle_flags, bq, model.shape_body, model.particle_adhesion,
                              model.soft_contact_restitution, model.soft_contact_count, model.soft_contact_particle,
                              model.soft_contact_shape, model.soft_contact_body_pos, model.soft_contact_normal,
                              model.soft_contact_max], outputs=[state_out.particle_qd], device=dev)
        if model.ground:
            wp.launch(k.apply_particle_ground_restitution, dim=model.particle_count,
                      inputs=[v_new, state_in.particle_q, state_in.particle_qd, model.particle_inv_mass,
                              model.particle_radius, model.particle_flags, model.particle_adhesion,
                              model.soft_contact_restitution, model.ground_plane], outputs=[state_out.particle_qd],
                      device=dev)
