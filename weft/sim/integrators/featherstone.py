"""``FeatherstoneIntegrator``: reduced-coordinate articulated dynamics, one articulation per thread.

Per step and articulation: forward kinematics, spatial velocities and motion subspaces in the world frame (spatial
vectors (angular, linear) about the world origin), the bias forces by the recursive Newton-Euler algorithm (gravity,
Coriolis and centrifugal terms, external body wrenches such as contacts), the joint-space mass matrix by the
composite-rigid-body algorithm (plus joint armature), a Cholesky solve for the joint accelerations, then
semi-implicit Euler on the joint coordinates (quaternions of ball and free joints integrated on the sphere) and
forward kinematics of the new state. Joint forces: ``control.joint_act`` in force mode, PD drives to targets, limit
springs (as the Euler integrator's ``joint_axis_force``).

Coordinates follow :func:`weft.sim.eval_fk`: a free joint's velocity is (angular velocity, velocity of the child
anchor's origin), both in the parent anchor frame; a ball joint's is its angular velocity in the parent anchor frame;
universal, compound and D6 joints use their per-axis angles (each rotation axis carried by the rotations before it,
as in ``eval_fk``) and offsets. All joint types are supported (distance joints move as free joints). Rigid contacts
act through ``state.body_f`` (``wp.sim.collide`` then the contact forces on the bodies' poses from forward
kinematics).

The mass matrix and the generalised forces come, for models with gradients, from four small per-joint kernels
(featherstone_dynamics.py; every output element written once, so their generated adjoints are exact) and otherwise
from one kernel with one articulation per thread (featherstone_fused.py, faster on the CPU, no backward);
``cholesky_solve`` factors and solves, differentiated by hand on a tape (``lam = H^-1 qdd_grad``,
``tau_grad += lam``, ``H_grad -= lam qdd^T``): the whole step is differentiable.
"""

from __future__ import annotations

import types

import numpy as np

import weft as wp

from ...runtime.tape import active_tape
from ..articulation import eval_fk
from ..forces.rigid import eval_rigid_contact_forces
from ..model import JOINT_BALL, SimError
from .base import Integrator
from .featherstone_dynamics import (
    dynamics_bias_forces,
    dynamics_joint_terms,
    dynamics_mass_matrix,
    dynamics_velocities,
)
from .featherstone_fused import dynamics_kernel
from .featherstone_math import dof_count, has_axes


@wp.kernel(enable_backward=False)
def cholesky_solve(articulation_start: wp.array(dtype=int), articulation_H_start: wp.array(dtype=int),
                   joint_qd_start: wp.array(dtype=int), factor: int, H: wp.array(dtype=float),
                   L: wp.array(dtype=float), rhs: wp.array(dtype=float), x: wp.array(dtype=float)):
    """Per articulation: (if ``factor``) the Cholesky factor ``H = L L^T`` (lower triangle of ``L``), then
    ``x = H^-1 rhs`` by two triangular solves. Differentiated by hand (``_record_solve_adjoint``)."""
    a = wp.tid()
    h0 = articulation_H_start[a]
    d0 = joint_qd_start[articulation_start[a]]
    n = joint_qd_start[articulation_start[a + 1]] - d0
    if factor != 0:
        for i in range(n):
            for jc in range(i + 1):
                s = H[h0 + i * n + jc]
                for p in range(jc):
                    s = s - L[h0 + i * n + p] * L[h0 + jc * n + p]
                if i == jc:
                    L[h0 + i * n + i] = wp.sqrt(wp.max(s, 1.0e-12))
                else:
                    L[h0 + i * n + jc] = s / L[h0 + jc * n + jc]
    for i in range(n):
        s = rhs[d0 + i]
        for p in range(i):
            s = s - L[h0 + i * n + p] * x[d0 + p]
        x[d0 + i] = s / L[h0 + i * n + i]
    for ii in range(n):
        i = n - 1 - ii
        s = x[d0 + i]
        for p in range(i + 1, n):
            s = s - L[h0 + p * n + i] * x[d0 + p]
        x[d0 + i] = s / L[h0 + i * n + i]


@wp.kernel(enable_backward=False)
def solve_adjoint(articulation_start: wp.array(dtype=int), articulation_H_start: wp.array(dtype=int),
                  joint_qd_start: wp.array(dtype=int), lam: wp.array(dtype=float), x: wp.array(dtype=float),
                  rhs_grad: wp.array(dtype=float), H_grad: wp.array(dtype=float)):
    """Adjoint of ``x = H^-1 rhs`` given ``lam = H^-1 x_grad``: ``rhs_grad += lam``, ``H_grad -= lam x^T``."""
    a = wp.tid()
    h0 = articulation_H_start[a]
    d0 = joint_qd_start[articulation_start[a]]
    n = joint_qd_start[articulation_start[a + 1]] - d0
    for i in range(n):
        rhs_grad[d0 + i] = rhs_grad[d0 + i] + lam[d0 + i]
        for jc in range(n):
            H_grad[h0 + i * n + jc] = H_grad[h0 + i * n + jc] - lam[d0 + i] * x[d0 + jc]


@wp.kernel
def integrate_joints(joint_type: wp.array(dtype=int), joint_axis_dim: wp.array(dtype=int, ndim=2),
                     joint_q_start: wp.array(dtype=int),
                     joint_qd_start: wp.array(dtype=int), joint_q: wp.array(dtype=float),
                     joint_qd: wp.array(dtype=float), qdd: wp.array(dtype=float), dt: float,
                     joint_q_new: wp.array(dtype=float), joint_qd_new: wp.array(dtype=float)):
    """Semi-implicit Euler on one joint's coordinates: qd += qdd dt, then q += qd dt (quaternions on the sphere)."""
    j = wp.tid()
    jtype = joint_type[j]
    q0 = joint_q_start[j]
    d0 = joint_qd_start[j]
    nd = dof_count(jtype, joint_axis_dim[j, 0], joint_axis_dim[j, 1])
    for i in range(nd):
        joint_qd_new[d0 + i] = joint_qd[d0 + i] + qdd[d0 + i] * dt
    # the new velocities are re-read from the inputs (not from joint_qd_new) so that the adjoint sees every use
    if has_axes(jtype):
        for i in range(nd):
            joint_q_new[q0 + i] = joint_q[q0 + i] + (joint_qd[d0 + i] + qdd[d0 + i] * dt) * dt
    elif jtype == JOINT_BALL or nd == 6:
        qo = q0
        if nd == 6:
            qo = q0 + 3
            for i in range(3):
                joint_q_new[q0 + i] = joint_q[q0 + i] + (joint_qd[d0 + 3 + i] + qdd[d0 + 3 + i] * dt) * dt
        r = wp.quat(joint_q[qo], joint_q[qo + 1], joint_q[qo + 2], joint_q[qo + 3])
        w = wp.vec3(joint_qd[d0] + qdd[d0] * dt, joint_qd[d0 + 1] + qdd[d0 + 1] * dt,
                    joint_qd[d0 + 2] + qdd[d0 + 2] * dt)
        r = wp.normalize(r + wp.quat(w[0], w[1], w[2], 0.0) * r * (0.5 * dt))
        for i in range(4):
            joint_q_new[qo + i] = r[i]


@wp.kernel
def com_velocities(joint_child: wp.array(dtype=int), joint_X_c: wp.array(dtype=wp.transform),
                   body_q: wp.array(dtype=wp.transform), body_com: wp.array(dtype=wp.vec3),
                   body_qd: wp.array(dtype=wp.spatial_vector), body_qd_com: wp.array(dtype=wp.spatial_vector)):
    """Body twists with the centre of mass's velocity: ``eval_fk`` (as warp.sim's) gives the velocity of the
    child's joint anchor, the contact forces read the centre of mass's."""
    j = wp.tid()
    c = joint_child[j]
    X = body_q[c]
    tw = body_qd[c]
    w = wp.spatial_top(tw)
    r = wp.transform_point(X, body_com[c]) - wp.transform_point(X, wp.transform_get_translation(joint_X_c[j]))
    body_qd_com[c] = wp.spatial_vector(w, wp.spatial_bottom(tw) + wp.cross(w, r))


_STALE_ON_TAPE = ("FeatherstoneIntegrator: reusing a mass-matrix factor (update_mass_matrix_every > 1) is not "
                  "differentiable; use update_mass_matrix_every=1 on a wp.Tape")


class FeatherstoneIntegrator(Integrator):
    """Reduced-coordinate articulated-body integrator (composite rigid body mass matrix, Cholesky solve); see the
    module docstring.

    Args:
        model: the model to simulate (checked for supported joints and sizes).
        angular_damping: kept for warp.sim's signature (joint damping comes from the drives' ``target_kd``).
        friction_smoothing: Huber width of the contact friction (as ``SemiImplicitIntegrator``).
        update_mass_matrix_every: factor the mass matrix on every n-th call of ``simulate`` only (counting from
            the first) and solve the calls in between with that factor, as warp.sim does (the generalised forces are
            recomputed every call). Must be 1 on a ``wp.Tape`` (a reused factor is not differentiated).
        use_tile_gemm, fuse_cholesky: warp.sim's tuning knobs of its GPU mass-matrix kernels, accepted and ignored.
    """

    def __init__(self, model=None, angular_damping: float = 0.05, update_mass_matrix_every: int = 1,
                 friction_smoothing: float = 1.0, use_tile_gemm: bool = False, fuse_cholesky: bool = True):
        if isinstance(update_mass_matrix_every, bool) or not isinstance(update_mass_matrix_every, (int, np.integer)) \
                or update_mass_matrix_every < 1:
            raise SimError("FeatherstoneIntegrator: 'update_mass_matrix_every' must be an int >= 1, got "
                           f"{update_mass_matrix_every!r}")
        self.angular_damping = angular_damping
        self.friction_smoothing = friction_smoothing
        self.update_mass_matrix_every = int(update_mass_matrix_every)
        self._step = 0  # calls of simulate so far (warp.sim's counter for update_mass_matrix_every)
        self._factor_key = None  # the layout of the cached factor "L", None until a step has factored
        self._qd_com = None

    def _layout(self, model):
        """Start of each articulation's dense ``n x n`` mass matrix in the flat matrix arrays, and their total."""
        key = (id(model), model.articulation_count, model.joint_count)
        if getattr(self, "_layout_key", None) != key:
            starts = model.articulation_start.numpy()
            dstart = model.joint_qd_start.numpy()
            n = (dstart[starts[1:]] - dstart[starts[:-1]]).astype(np.int64)
            offsets = np.concatenate([[0], np.cumsum(n * n)]).astype(np.int32)
            self._H_start = wp.array(offsets[:-1], dtype=wp.int32, device=model.device)
            self._H_size = max(1, int(offsets[-1]))
            owner = np.full(model.joint_count, -1, dtype=np.int32)  # each joint's articulation (-1: none)
            for a in range(model.articulation_count):
                owner[starts[a]:starts[a + 1]] = a
            self._joint_articulation = wp.array(owner, dtype=wp.int32, device=model.device)
            # each joint's subtree (itself and its descendants in its articulation) as lists: CSR over joints
            anc = model.joint_ancestor.numpy()
            members = [[] for _ in range(model.joint_count)]
            for j in range(model.joint_count):
                if owner[j] < 0:
                    continue
                jj, first = j, starts[owner[j]]
                while jj >= first:
                    members[jj].append(j)
                    jj = anc[jj]
            sizes = np.array([len(x) for x in members], dtype=np.int64)
            self._subtree_start = wp.array(np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32),
                                           dtype=wp.int32, device=model.device)
            flat = np.concatenate([np.asarray(x, dtype=np.int32) for x in members] + [np.zeros(1, np.int32)])
            self._subtree = wp.array(flat, dtype=wp.int32, device=model.device)
            self._layout_key = key
            self._buffers = {}
        return self._H_start, self._H_size

    def _buffer(self, model, name, size, grad, dtype=float):
        """A work array: a fresh one on a tape (its values are read by the backward pass), else a cached one."""
        if grad:
            return wp.zeros(size, dtype=dtype, device=model.device, requires_grad=True)
        buf = self._buffers.get(name)
        if buf is None or len(buf) != size:
            buf = self._buffers[name] = wp.zeros(size, dtype=dtype, device=model.device)
        return buf

    def eval_mass_matrix(self, model, state, control=None, use_body_f: bool = False, body_q=None):
        """The joint-space mass matrix (plus ``joint_armature``) and the generalised forces at ``state``: returns
        ``(H, tau)``. ``tau`` (``model.joint_dof_count`` floats) is the joint forces of ``control`` (drives, limits)
        minus the bias forces (gravity, Coriolis and centrifugal terms, and with ``use_body_f`` the wrenches in
        ``state.body_f``), so that ``H qdd = tau``. ``H`` holds each articulation's dense row-major ``n x n``
        matrix (``n`` its degrees of freedom), one after the other in articulation order. ``body_q``: the body
        poses of ``eval_fk`` at ``state.joint_q`` when the caller has them (``simulate`` does), else they are
        computed here. Differentiable."""
        if control is None:
            control = model.control(clone_variables=False)
        H_start, H_size = self._layout(model)
        grad = bool(state.requires_grad or getattr(model, "requires_grad", False))
        dev = model.device
        body_f = state.body_f if state.body_f is not None else wp.zeros(1, dtype=wp.spatial_vector, device=dev)
        fused = None if grad else dynamics_kernel(model)
        if fused is not None:  # not differentiated: the one-kernel variant (faster on the CPU)
            H = self._buffer(model, "H", H_size, grad)
            tau = self._buffer(model, "tau", model.joint_dof_count, grad)
            wp.launch(fused, dim=model.articulation_count,
                      inputs=[model.articulation_start, H_start, state.joint_q, state.joint_qd, control.joint_act,
                              model.joint_q_start, model.joint_qd_start, model.joint_type, model.joint_parent,
                              model.joint_child, model.joint_ancestor, model.joint_X_p, model.joint_X_c,
                              model.joint_axis, model.joint_axis_start, model.joint_axis_dim, model.joint_axis_mode,
                              model.joint_target_ke, model.joint_target_kd, model.joint_limit_lower,
                              model.joint_limit_upper, model.joint_limit_ke, model.joint_limit_kd,
                              model.joint_armature, state.body_q if body_q is None else body_q, body_f,
                              int(bool(use_body_f)), model.body_com, model.body_mass, model.body_inertia,
                              wp.vec3(*model.gravity)],
                      outputs=[H, tau], device=dev)
            return H, tau
        if body_q is None:
            fk = types.SimpleNamespace(
                body_q=wp.zeros(model.body_count, dtype=wp.transform, device=dev, requires_grad=grad),
                body_qd=wp.zeros(model.body_count, dtype=wp.spatial_vector, device=dev, requires_grad=grad))
            eval_fk(model, state.joint_q, state.joint_qd, None, fk)
            body_q = fk.body_q
        nj, nd = model.joint_count, model.joint_dof_count
        H = self._buffer(model, "H", H_size, grad)
        tau = self._buffer(model, "tau", nd, grad)
        S = self._buffer(model, "S", nd, grad, wp.spatial_vector)
        v_rel = self._buffer(model, "v_rel", nj, grad, wp.spatial_vector)
        c_rel = self._buffer(model, "c_rel", nj, grad, wp.spatial_vector)
        b_m = self._buffer(model, "b_m", nj, grad)
        b_h = self._buffer(model, "b_h", nj, grad, wp.vec3)
        b_I = self._buffer(model, "b_I", nj, grad, wp.mat33)
        f_ext = self._buffer(model, "f_ext", nj, grad, wp.spatial_vector)
        f_body = self._buffer(model, "f_body", nj, grad, wp.spatial_vector)
        owner = self._joint_articulation
        wp.launch(dynamics_joint_terms, dim=nj,
                  inputs=[owner, state.joint_q, state.joint_qd, model.joint_q_start,
                          model.joint_qd_start, model.joint_type, model.joint_parent, model.joint_child,
                          model.joint_ancestor, model.joint_X_p, model.joint_X_c, model.joint_axis,
                          model.joint_axis_start, model.joint_axis_dim, body_q, body_f, int(bool(use_body_f)),
                          model.body_com, model.body_mass, model.body_inertia],
                  outputs=[S, v_rel, c_rel, b_m, b_h, b_I, f_ext], device=dev)
        v_body = self._buffer(model, "v_body", nj, grad, wp.spatial_vector)
        c_acc = self._buffer(model, "c_acc", nj, grad, wp.spatial_vector)
        wp.launch(dynamics_velocities, dim=nj,
                  inputs=[owner, model.articulation_start, model.joint_ancestor, v_rel, c_rel],
                  outputs=[v_body, c_acc], device=dev)
        wp.launch(dynamics_bias_forces, dim=nj,
                  inputs=[owner, model.articulation_start, model.joint_ancestor, wp.vec3(*model.gravity), c_acc,
                          v_body, b_m, b_h, b_I, f_ext],
                  outputs=[f_body], device=dev)
        wp.launch(dynamics_mass_matrix, dim=nj,
                  inputs=[owner, model.articulation_start, H_start, state.joint_q, state.joint_qd, control.joint_act,
                          model.joint_q_start, model.joint_qd_start, model.joint_type, model.joint_ancestor,
                          model.joint_axis_start, model.joint_axis_dim, model.joint_axis_mode, model.joint_target_ke,
                          model.joint_target_kd, model.joint_limit_lower, model.joint_limit_upper,
                          model.joint_limit_ke, model.joint_limit_kd, model.joint_armature, self._subtree_start,
                          self._subtree, S, f_body, b_m, b_h, b_I],
                  outputs=[H, tau], device=dev)
        return H, tau

    def eval_qdd(self, model, state, control=None, use_body_f: bool = False, refactor: bool = True, body_q=None):
        """Joint accelerations at ``state`` (joint coordinates and velocities) under ``control``'s joint forces,
        gravity and (``use_body_f``) the external wrenches in ``state.body_f``; a float array (differentiable: on a
        tape the Cholesky solve records its adjoint, ``lam = H^-1 qdd_grad``, ``tau_grad += lam``,
        ``H_grad -= lam qdd^T``). ``refactor=False`` solves with the factor of the last call that factored (the
        first call always factors; not on a tape)."""
        H, tau = self.eval_mass_matrix(model, state, control, use_body_f, body_q)
        H_start, H_size = self._layout(model)
        grad = H.requires_grad
        tape = active_tape.get()
        taped = grad and tape is not None
        if taped and not refactor:
            raise SimError(_STALE_ON_TAPE)
        if taped:  # the backward reads this step's own factor
            L = wp.zeros(H_size, dtype=float, device=model.device)
            self._factor_key = None
        else:
            L = self._buffer(model, "L", H_size, False)
            refactor = refactor or self._factor_key != self._layout_key  # no cached factor for this layout yet
            self._factor_key = self._layout_key
        qdd = self._buffer(model, "qdd", model.joint_dof_count, grad)
        wp.launch(cholesky_solve, dim=model.articulation_count,
                  inputs=[model.articulation_start, H_start, model.joint_qd_start, int(refactor), H, L, tau],
                  outputs=[qdd], device=model.device, record_tape=False)
        if taped:
            def backward():
                lam = wp.zeros(model.joint_dof_count, dtype=float, device=model.device)
                wp.launch(cholesky_solve, dim=model.articulation_count,
                          inputs=[model.articulation_start, H_start, model.joint_qd_start, 0, H, L, qdd.grad],
                          outputs=[lam], device=model.device, record_tape=False)
                wp.launch(solve_adjoint, dim=model.articulation_count,
                          inputs=[model.articulation_start, H_start, model.joint_qd_start, lam, qdd],
                          outputs=[tau.grad, H.grad], device=model.device, record_tape=False)

            tape.record_func(backward, [H, tau, qdd])
        return qdd

    def simulate(self, model, state_in, state_out, dt: float, control=None):
        """Advance the joint coordinates of ``state_in`` by ``dt`` into ``state_out`` (and its bodies by forward
        kinematics). Contact forces of the last ``wp.sim.collide`` and ``state_in.body_f`` act on the bodies."""
        self._check(model, state_in, state_out, dt)
        if not model.joint_count:
            return state_out
        if control is None:
            control = model.control(clone_variables=False)
        # bodies at the input coordinates (contacts are evaluated on them)
        eval_fk(model, state_in.joint_q, state_in.joint_qd, None, state_in)
        from ..rigid_collide import has_rigid_contacts

        if has_rigid_contacts(model):
            # on a tape every step gets its own buffer (the contact kernel's backward reads it)
            if state_in.requires_grad or self._qd_com is None or len(self._qd_com) != model.body_count:
                self._qd_com = wp.zeros(model.body_count, dtype=wp.spatial_vector, device=model.device,
                                        requires_grad=bool(state_in.requires_grad))
            wp.launch(com_velocities, dim=model.joint_count,
                      inputs=[model.joint_child, model.joint_X_c, state_in.body_q, model.body_com, state_in.body_qd],
                      outputs=[self._qd_com], device=model.device)
            qd_fk = state_in.body_qd
            state_in.body_qd = self._qd_com
            try:
                eval_rigid_contact_forces(model, state_in, state_in.body_f, self.friction_smoothing)
            finally:
                state_in.body_qd = qd_fk
        if self.update_mass_matrix_every > 1 and active_tape.get() is not None and (
                state_in.requires_grad or getattr(model, "requires_grad", False)):
            raise SimError(_STALE_ON_TAPE)
        refactor = self._step % self.update_mass_matrix_every == 0
        self._step += 1
        qdd = self.eval_qdd(model, state_in, control, use_body_f=True, refactor=refactor, body_q=state_in.body_q)
        wp.launch(integrate_joints, dim=model.joint_count,
                  inputs=[model.joint_type, model.joint_axis_dim, model.joint_q_start, model.joint_qd_start, state_in.joint_q,
                          state_in.joint_qd, qdd, dt],
                  outputs=[state_out.joint_q, state_out.joint_qd], device=model.device)
        eval_fk(model, state_out.joint_q, state_out.joint_qd, None, state_out)
        return state_out
