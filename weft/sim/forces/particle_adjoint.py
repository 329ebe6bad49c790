"""The hand-written adjoint of a particle step on a tape: the symplectic Euler update (``integrate_particles``) and
the ground contact forces (``eval_particle_ground_contacts``) in one per-particle kernel, recorded as one callback.

The generic adjoints of those two kernels cost ten times their forward on the CPU (a replayed forward, a stack of
temporaries, atomics into shared gradients); per particle the adjoint is a few vector operations. The ground
plane's gradient is the only one shared between particles (atomics, contacts only). Checked against the generic
adjoints in tests/sim/test_elastic_adjoint.py.
"""

import weft as wp

from ...runtime.tape import OverwriteError
from ..integrators.base import gravity_vec
from ..model import PARTICLE_FLAG_ACTIVE
from .elastic import grad_or_sink
from .elastic_adjoint import corner_adjoint_sums
from .tape_params import record_on_tape


@wp.func
def _step_adjoint(tid: int, ax: wp.vec3, av: wp.vec3, x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3),
                  f: wp.array(dtype=wp.vec3), w: wp.array(dtype=float), particle_flags: wp.array(dtype=wp.uint32),
                  radius: wp.array(dtype=float), gravity: wp.vec3, dt: float, v_max: float, ground_on: int,
                  ground: wp.array(dtype=float), ke: float, kd: float, kf: float, mu: float,
                  x_grad: wp.array(dtype=wp.vec3), v_grad: wp.array(dtype=wp.vec3), f_grad: wp.array(dtype=wp.vec3),
                  w_grad: wp.array(dtype=float), radius_grad: wp.array(dtype=float),
                  ground_grad: wp.array(dtype=float)):
    """Particle ``tid``'s share of the step's adjoint, given the gradients ``ax`` / ``av`` of its new position and
    velocity."""
    if (particle_flags[tid] & PARTICLE_FLAG_ACTIVE) == wp.uint32(0):
        x_grad[tid] = x_grad[tid] + ax
        v_grad[tid] = v_grad[tid] + av
        return
    x0 = x[tid]
    v0 = v[tid]
    inv_mass = w[tid]
    fi = f[tid]
    # v1 = v0 + (f w + g [w == 0]) dt, clamped to v_max; x1 = x0 + v1 dt
    v1 = v0 + (fi * inv_mass + gravity * wp.step(-inv_mass)) * dt
    adj_v1 = av + ax * dt
    speed = wp.length(v1)
    if speed > v_max:
        vh = v1 / speed
        adj_v1 = (adj_v1 - vh * wp.dot(vh, adj_v1)) * (v_max / speed)
    af = f_grad[tid] + adj_v1 * (inv_mass * dt)
    f_grad[tid] = af
    w_grad[tid] = w_grad[tid] + wp.dot(fi, adj_v1) * dt
    adj_x = ax
    adj_v = adj_v1
    if ground_on != 0:
        n = wp.vec3(ground[0], ground[1], ground[2])
        c = wp.dot(n, x0) + ground[3] - radius[tid]
        if c < 0.0:
            # the contact force -n fn - t ft (contacts.particle_force) received the gradient af
            vn = wp.dot(n, v0)
            fn = c * ke + wp.min(vn, 0.0) * kd
            vt = v0 - n * vn
            vs = wp.length(vt)
            adj_fn = -wp.dot(n, af)
            adj_n = -af * fn
            adj_vt = wp.vec3()
            if vs > 0.0:
                t = vt / vs
                ft = wp.min(vs * kf, mu * wp.abs(fn))
                adj_ft = -wp.dot(t, af)
                adj_vs = float(0.0)  # noqa: UP018
                if vs * kf < mu * wp.abs(fn):
                    adj_vs = kf * adj_ft
                else:
                    adj_fn = adj_fn + mu * wp.sign(fn) * adj_ft
                adj_t = -af * ft
                adj_vt = (adj_t - t * wp.dot(t, adj_t)) / vs + t * adj_vs
            adj_vn = -wp.dot(n, adj_vt)
            adj_n = adj_n - adj_vt * vn
            if vn < 0.0:
                adj_vn = adj_vn + kd * adj_fn
            adj_c = ke * adj_fn
            adj_v = adj_v + adj_vt + n * adj_vn
            adj_x = adj_x + n * adj_c
            adj_n = adj_n + v0 * adj_vn + x0 * adj_c
            radius_grad[tid] = radius_grad[tid] - adj_c
            wp.atomic_add(ground_grad, 0, adj_n[0])
            wp.atomic_add(ground_grad, 1, adj_n[1])
            wp.atomic_add(ground_grad, 2, adj_n[2])
            wp.atomic_add(ground_grad, 3, adj_c)
    x_grad[tid] = x_grad[tid] + adj_x
    v_grad[tid] = v_grad[tid] + adj_v




@wp.kernel(enable_backward=False)
def adj_gather_particle_step(offsets: wp.array(dtype=wp.int32), slots: wp.array(dtype=wp.int32),
                             adj_xs: wp.array(dtype=wp.vec3), adj_vs: wp.array(dtype=wp.vec3),
                             x_new_grad: wp.array(dtype=wp.vec3), v_new_grad: wp.array(dtype=wp.vec3),
                             x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), f: wp.array(dtype=wp.vec3),
                             w: wp.array(dtype=float), particle_flags: wp.array(dtype=wp.uint32),
                             radius: wp.array(dtype=float), gravity: wp.vec3, dt: float, v_max: float, ground_on: int,
                             ground: wp.array(dtype=float), ke: float, kd: float, kf: float, mu: float,
                             x_grad: wp.array(dtype=wp.vec3), v_grad: wp.array(dtype=wp.vec3),
                             f_grad: wp.array(dtype=wp.vec3), w_grad: wp.array(dtype=float),
                             radius_grad: wp.array(dtype=float), ground_grad: wp.array(dtype=float)):
    """``elastic_adjoint.gather_adjoints`` of one step's element corners into the gradients of its state (``x_new``,
    ``v_new``: stored, they are that state's gradients) and, with those complete, the adjoint of the particle step
    that made the state, in one pass over the particles (see ``fuse_gather``). With an empty gather (``_no_gather``)
    it is the step's adjoint alone."""
    i = wp.tid()
    sx, sv = corner_adjoint_sums(offsets, slots, adj_xs, adj_vs, i)
    ax = x_new_grad[i] + sx
    av = v_new_grad[i] + sv
    x_new_grad[i] = ax
    v_new_grad[i] = av
    _step_adjoint(i, ax, av, x, v, f, w, particle_flags, radius, gravity, dt, v_max, ground_on, ground, ke, kd, kf,
                  mu, x_grad, v_grad, f_grad, w_grad, radius_grad, ground_grad)


def _no_gather(model) -> tuple:
    """The first four arguments of ``adj_gather_particle_step`` for a gather of nothing (every particle's range of
    slots empty): the step adjoint of a state no elastic adjoint gathers into (the rollout's last step) runs on the
    same kernel as the fused ones, so a cold backward compiles one particle-step adjoint, not two (0.25 s of g++ CPU
    for the sphere)."""
    hit = model.__dict__.get("_no_gather")
    if hit is None or len(hit[0]) != model.particle_count + 1:
        dev = model.device
        hit = model.__dict__["_no_gather"] = (wp.zeros(model.particle_count + 1, dtype=wp.int32, device=dev),
                                              wp.zeros(0, dtype=wp.int32, device=dev),
                                              wp.zeros(0, dtype=wp.vec3, device=dev),
                                              wp.zeros(0, dtype=wp.vec3, device=dev))
    return hit


def hand_step_ok(model, state_in, state_out) -> bool:
    """Whether a taped particle step can use the hand-written step adjoint (``adj_gather_particle_step``): the new
    state has gradients to propagate."""
    return bool(model.particle_count and state_out.particle_q.grad is not None
                and state_out.particle_qd.grad is not None and state_in.particle_f is not None
                and state_in.particle_f.grad is not None)


class _StepAdjoint:
    """The recorded backward of one taped particle step (x, v, f -> xn, vn).

    The next step's elastic adjoint (``elastic._record_adjoint``), recorded right after it and so run right before it,
    sums its element corners into this step's ``xn`` / ``vn`` gradients: with those complete it runs this adjoint in
    the same kernel (``fuse_gather``, one pass over the particles instead of two: ``adj_gather_particle_step``), and
    this callback then has nothing left to do."""

    __slots__ = ("args", "fused", "grads", "model", "versions", "vn", "xn")

    def __init__(self, model, x, v, f, xn, vn, gravity, dt, ground):
        self.model, self.xn, self.vn = model, xn, vn
        self.versions = (x, v, f, x._version, v._version, f._version)
        self.args = [x, v, f, model.particle_inv_mass, model.particle_flags, model.particle_radius, gravity, dt,
                     model.particle_max_velocity, int(ground), model.ground_plane, model.soft_contact_ke,
                     model.soft_contact_kd, model.soft_contact_kf, model.soft_contact_mu]
        self.grads = (x, v, f, model.particle_inv_mass, model.particle_radius, model.ground_plane)
        self.fused = False

    def _check(self) -> None:
        x, v, f, *versions = self.versions
        if [x._version, v._version, f._version] != versions:
            raise OverwriteError("a simulate() step's particle update read state_in's particles or forces, which were "
                                 "then overwritten; replaying it in backward would give a wrong gradient. Simulate "
                                 "into a new State each step while a Tape records (or use wp.checkpoint).")

    def _grad_args(self) -> list:
        return [grad_or_sink(self.model, a) for a in self.grads]

    def fuse_gather(self, offsets, slots, adj_x, adj_v) -> bool:
        """Gather the per-slot gradients ``adj_x`` / ``adj_v`` (``elastic_adjoint.gather_adjoints``' arguments) into
        ``xn.grad`` / ``vn.grad`` and run this step's adjoint in one launch; False (nothing done) when they have no
        gradients."""
        xg, vg = self.xn.grad, self.vn.grad
        if xg is None or vg is None:
            return False
        self._check()
        wp.launch(adj_gather_particle_step, dim=self.model.particle_count,
                  inputs=[offsets, slots, adj_x, adj_v, xg, vg, *self.args, *self._grad_args()],
                  device=self.model.device, record_tape=False)
        self.fused = True
        return True

    def __call__(self) -> None:
        if self.fused:  # done by the next step's gather (this callback runs right after it)
            self.fused = False
            return
        self._check()
        wp.launch(adj_gather_particle_step, dim=self.model.particle_count,
                  inputs=[*_no_gather(self.model), self.xn.grad, self.vn.grad, *self.args, *self._grad_args()],
                  device=self.model.device, record_tape=False)


def integrate_particles_taped(model, state_in, state_out, dt: float, tape, ground: bool, integrate_kernel) -> None:
    """Launch ``integrate_kernel`` (symplectic Euler) off the tape and record the adjoint of the step, including the
    ground contacts when ``ground`` (their forward launch, already made, was left off the tape)."""
    x, v, f = state_in.particle_q, state_in.particle_qd, state_in.particle_f
    gravity = gravity_vec(model)
    wp.launch(integrate_kernel, dim=model.particle_count,
              inputs=[x, v, f, model.particle_inv_mass, model.particle_flags, gravity, dt, model.particle_max_velocity],
              outputs=[state_out.particle_q, state_out.particle_qd], device=model.device, record_tape=False)
    xn, vn = state_out.particle_q, state_out.particle_qd
    record_on_tape(tape, _StepAdjoint(model, x, v, f, xn, vn, gravity, dt, ground), [x, v, f, xn, vn],
                   (model.particle_inv_mass, model.particle_radius, model.ground_plane))
