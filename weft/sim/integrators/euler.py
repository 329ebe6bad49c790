"""``SemiImplicitIntegrator``: symplectic Euler over every force model of warp.sim's Euler integrator."""

from ...runtime.tape import active_tape
from .._compile import prepare
from ..forces.bodies import eval_muscle_forces
from ..forces.contacts import eval_particle_body_contact_forces, eval_particle_ground_contact_forces
from ..forces.elastic import eval_elastic_forces
from ..forces.joints import eval_body_joint_forces
from ..forces.particle_adjoint import hand_step_ok, integrate_particles_taped
from ..forces.particles import eval_particle_forces
from ..forces.rigid import eval_rigid_contact_forces
from ..forces.self_contact import eval_triangle_contact_forces
from .base import Integrator, integrate_particles


def compute_forces(model, state, control, particle_f, body_f, dt: float, ground_on_tape: bool = True) -> None:
    """Accumulate every particle and body force of ``state`` into ``particle_f`` / ``body_f`` (``ground_on_tape``:
    whether the ground contact launch is recorded on an active tape, see particle_adjoint)."""
    # springs, triangles, bending edges, tetrahedra: one scratch array, one gather
    eval_elastic_forces(model, state, control, particle_f)
    eval_triangle_contact_forces(model, state, particle_f)
    eval_particle_forces(model, state, particle_f)
    eval_particle_ground_contact_forces(model, state, particle_f, record_tape=ground_on_tape)
    eval_particle_body_contact_forces(model, state, particle_f, body_f, body_f_in_world_frame=False)
    eval_muscle_forces(model, state, control, body_f)


def compute_body_forces(model, state, control, body_f, friction_smoothing: float) -> None:
    """Joint (attachment, drive, limit) and rigid contact forces of maximal-coordinate bodies."""
    eval_body_joint_forces(model, state, control, body_f)
    eval_rigid_contact_forces(model, state, body_f, friction_smoothing)


def euler_kernels(model) -> list:
    """The kernels a SemiImplicitIntegrator step (and collide) launches for ``model``."""
    from .. import rigid_collide
    from ..collide import create_soft_contacts, soft_contact_geometry
    from ..forces import (
        bodies,
        contacts,
        elastic,
        elastic_adjoint,
        gather,
        joints,
        particle_adjoint,
        rigid,
        self_contact,
        tape_params,
    )
    from . import base

    rigid_contacts = rigid_collide.has_rigid_contacts(model) and model.body_count
    # a model with gradients steps on a tape without the lift/drag kernel when every coefficient is zero (the
    # hand-written triangle adjoint covers the rest): it compiles at its first launch if an untaped step needs it
    aero = model.tri_count and (not model.requires_grad or elastic.model_has_aero(model))
    # the row copies and parameter sums of the triangle and tetrahedron adjoints are kernels on CUDA only
    rows = model.requires_grad and tape_params.uses_kernels(model.device)

    pairs = [(model.spring_count, elastic.eval_springs), (model.tri_count, elastic.eval_triangles),
             (aero, elastic.eval_triangles_aero),
             (model.edge_count, elastic.eval_bending), (model.tet_count, elastic.eval_tetrahedra),
             (model.spring_count + model.tri_count + model.edge_count + model.tet_count, gather.gather_forces),
             (model.enable_tri_collisions and model.tri_count, self_contact.eval_triangles_contact),
             (model.ground and model.particle_count, contacts.eval_particle_ground_contacts),
             (model.particle_count and model.shape_count > 1, contacts.eval_particle_contacts),
             (model.particle_count and model.shape_count > 1, create_soft_contacts),
             (model.requires_grad and model.particle_count and model.shape_count > 1, soft_contact_geometry),
             (model.muscle_count and model.body_count, bodies.eval_muscles),
             (model.particle_count, base.integrate_particles), (model.body_count, base.integrate_bodies),
             (model.joint_count and model.body_count, joints.eval_body_joints),
             (rigid_contacts, rigid.eval_rigid_contacts), (rigid_contacts, rigid_collide.broad_phase),
             (rigid_contacts, rigid_collide.shape_world_poses),
             (rigid_contacts, rigid_collide.narrow_phase)]
    if model.requires_grad:  # the hand-written adjoints (forces/elastic_adjoint.py, forces/particle_adjoint.py)
        pairs += [(model.spring_count, elastic_adjoint.adj_springs), (model.tri_count, elastic_adjoint.adj_triangles),
                  (rows and model.tri_count, elastic_adjoint.tri_columns),
                  (rows and model.tri_count, elastic_adjoint.tri_param_grads),
                  (model.tet_count, elastic_adjoint.adj_tetrahedra), (rows and model.tet_count, elastic_adjoint.tet_columns),
                  (rows and model.tet_count, elastic_adjoint.tet_param_grads),
                  (model.edge_count, elastic_adjoint.adj_bending),
                  (model.spring_count + model.tri_count + model.edge_count + model.tet_count,
                   elastic_adjoint.gather_adjoints),
                  (model.particle_count, particle_adjoint.adj_gather_particle_step)]
    return [k for present, k in pairs if present]


def hand_differentiated(model) -> set:
    """The kernels of ``euler_kernels`` a taped step differentiates with hand-written adjoints, and the lift/drag
    kernel, recorded only for triangles with lift or drag: their generic adjoints are compiled only if a step needs
    them (triangles with lift or drag, a new state without gradients; the sphere's cold backward skips 0.9 s of g++
    CPU for the unused lift/drag adjoint)."""
    from ..collide import create_soft_contacts
    from ..forces import contacts, elastic, gather
    from . import base

    # (create_soft_contacts: a taped collide differentiates soft_contact_geometry instead)
    return {elastic.eval_springs, elastic.eval_triangles, elastic.eval_triangles_aero, elastic.eval_bending,
            elastic.eval_tetrahedra,
            gather.gather_forces, contacts.eval_particle_ground_contacts, base.integrate_particles,
            create_soft_contacts}


def prepare_euler(model) -> None:
    """Compile the kernels of ``euler_kernels`` (once: the list depends only on these settings, counts are fixed at
    finalize; rebuilding it cost ~40 us per step or collide call)."""
    key = (model.ground, model.enable_tri_collisions, model.rigid_contact_max, model.shape_contact_pair_count,
           model.shape_ground_contact_pair_count, model.requires_grad)
    if model.__dict__.get("_euler_prepared") != key:
        prepare(model, euler_kernels(model), no_adjoint=hand_differentiated(model))
        model.__dict__["_euler_prepared"] = key


def _default_control(model):
    """``model.control(clone_variables=False)``, kept on the model while its control arrays stay the same."""
    ident = (id(model.tri_activations), id(model.tet_activations), id(model.joint_act),
             id(model.muscle_activations))
    hit = model.__dict__.get("_default_control")
    if hit is None or hit[0] != ident:
        hit = model.__dict__["_default_control"] = (ident, model.control(clone_variables=False))
    return hit[1]


class SemiImplicitIntegrator(Integrator):
    """Semi-implicit (symplectic) Euler: forces from ``state_in``, then v += a dt, x += v dt.

    Explicit, so only conditionally stable: the time step must resolve the stiffest spring or contact,
    roughly ``dt < 2 sqrt(m / k)`` (see docs/sim.md).

    Args:
        angular_damping: angular velocity damping of rigid bodies (per second).
        friction_smoothing: Huber width of the sliding speed in rigid-contact friction (larger: smoother, more
            viscous friction near rest).
    """

    def __init__(self, angular_damping: float = 0.05, friction_smoothing: float = 1.0):
        self.angular_damping = angular_damping
        self.friction_smoothing = friction_smoothing

    def simulate(self, model, state_in, state_out, dt: float, control=None):
        """Advance ``model`` by ``dt`` from ``state_in`` to ``state_out``; forces accumulate into
        ``state_in``'s force arrays (clear them first when reusing a state). Returns ``state_out``."""
        self._check(model, state_in, state_out, dt)
        prepare_euler(model)
        if control is None:
            control = _default_control(model)
        particle_f = state_in.particle_f if state_in.particle_count else None
        body_f = state_in.body_f if state_in.body_count else None
        tape = active_tape.get()
        hand = tape is not None and hand_step_ok(model, state_in, state_out)
        compute_forces(model, state_in, control, particle_f, body_f, dt, ground_on_tape=not hand)
        if body_f is not None:
            compute_body_forces(model, state_in, control, body_f, self.friction_smoothing)
            self.integrate_bodies(model, state_in, state_out, dt, self.angular_damping)
        if hand:
            integrate_particles_taped(model, state_in, state_out, dt, tape, bool(model.ground), integrate_particles)
        else:
            self.integrate_particles(model, state_in, state_out, dt)
        return state_out
