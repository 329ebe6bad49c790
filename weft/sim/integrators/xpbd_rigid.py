"""The rigid-body part of an ``XPBDIntegrator`` step: joints and rigid contacts projected every sweep, restitution
after the sweeps (kernels and conventions in ``weft/sim/forces/xpbd_rigid.py``)."""

import numpy as np

import weft as wp

from ..forces import xpbd_rigid as kr
from ..model import (
    JOINT_COMPOUND,
    JOINT_D6,
    JOINT_MODE_FORCE,
    JOINT_PRISMATIC,
    JOINT_REVOLUTE,
    JOINT_UNIVERSAL,
)
from ..rigid_collide import has_rigid_contacts

# joint types with axes (their force-mode axes apply forces or torques)
_AXIS_JOINTS = [int(t) for t in (JOINT_PRISMATIC, JOINT_REVOLUTE, JOINT_UNIVERSAL, JOINT_COMPOUND, JOINT_D6)]
# a touching contact (for restitution) is at most this far apart after the sweeps (m)
RESTITUTION_MARGIN = 1.0e-4


def rigid_kernels(model) -> list:
    """The rigid-body kernels an XPBD step launches for ``model``."""
    joints = bool(model.body_count and model.joint_count)
    contacts = bool(model.body_count and has_rigid_contacts(model))
    out = []
    if joints:
        out.append(kr.solve_rigid_joints)
    if contacts:
        out += [kr.solve_rigid_contacts, kr.rigid_contact_restitution]
    if joints or contacts:
        out.append(kr.apply_rigid_deltas)
    if joints and _has_force_drives(model):
        out.append(kr.apply_joint_actions)
    return out


def _has_force_drives(model) -> bool:
    """Whether an axis of a joint with axes is force-driven (checked once per model)."""
    hit = model.__dict__.get("_xpbd_force_drives")
    if hit is None:
        types = model.joint_type.numpy()
        modes = model.joint_axis_mode.numpy()
        starts = model.joint_axis_start.numpy()
        dims = model.joint_axis_dim.numpy().reshape(-1, 2).sum(axis=1)
        hit = any(t in _AXIS_JOINTS and np.any(modes[starts[j]:starts[j] + dims[j]] == int(JOINT_MODE_FORCE))
                  for j, t in enumerate(types.tolist()))
        model.__dict__["_xpbd_force_drives"] = bool(hit)
    return model.__dict__["_xpbd_force_drives"]


def joint_action_forces(model, state_in, control, grad: bool):
    """``state_in.body_f`` plus the force-mode joint drives' wrenches (a new array; ``state_in.body_f`` itself when
    no joint is force-driven)."""
    if not model.joint_count or not _has_force_drives(model):
        return state_in.body_f
    f = wp.clone(state_in.body_f, requires_grad=grad)
    wp.launch(kr.apply_joint_actions, dim=model.joint_count,
              inputs=[state_in.body_q, model.body_com, model.joint_type, model.joint_enabled, model.joint_parent,
                      model.joint_child, model.joint_X_p, model.joint_X_c, model.joint_axis, model.joint_axis_start,
                      model.joint_axis_dim, model.joint_axis_mode, control.joint_act], outputs=[f], device=model.device)
    return f


def _apply(integ, model, body, deltas, counts, use_counts, positions, dt, grad):
    """Apply summed impulses to ``body.q`` / ``body.qd`` (in place, or into new arrays on a tape)."""
    if grad:
        q_out, qd_out = wp.empty_like(body.q, requires_grad=True), wp.empty_like(body.qd, requires_grad=True)
    else:
        q_out, qd_out = body.q, body.qd
    wp.launch(kr.apply_rigid_deltas, dim=model.body_count,
              inputs=[body.q, body.qd, model.body_com, model.body_inv_mass, model.body_inv_inertia, deltas, counts,
                      int(use_counts), int(positions), dt], outputs=[q_out, qd_out], device=model.device)
    body.q, body.qd = q_out, qd_out


def _work(integ, model, state, name, grad):
    """Zeroed per-body impulse and count buffers (new ones on a tape)."""
    deltas = integ._buffer(model, name, state.body_qd, grad)
    counts = integ._buffer(model, name + "_count", model.body_inv_mass, grad)
    if not grad:
        deltas.zero_()
        counts.zero_()
    return deltas, counts


def _contact_args(model):
    return [model.shape_body, model.shape_materials, model.shape_geo, model.rigid_contact_count,
            model.rigid_contact_point0, model.rigid_contact_point1, model.rigid_contact_normal,
            model.rigid_contact_shape0, model.rigid_contact_shape1]


def solve_body_constraints(integ, model, state_in, body, control, dt: float) -> None:
    """One sweep of joints (with the particle-shape contact reactions already in ``body.deltas``, applied together
    as warp.sim does) and rigid contacts; updates ``body.q`` / ``body.qd``."""
    grad = bool(state_in.requires_grad)
    dev = model.device
    if model.joint_count:
        wp.launch(kr.solve_rigid_joints, dim=model.joint_count,
                  inputs=[body.q, body.qd, model.body_com, model.body_inv_mass, model.body_inv_inertia, model.joint_type,
                          model.joint_enabled, model.joint_parent, model.joint_child, model.joint_X_p,
                          model.joint_X_c, model.joint_axis, model.joint_axis_start, model.joint_axis_dim,
                          model.joint_axis_mode,
                          control.joint_act, model.joint_target_ke, model.joint_target_kd, model.joint_limit_lower, model.joint_limit_upper,
                          model.joint_linear_compliance, model.joint_angular_compliance,
                          integ.joint_linear_relaxation, integ.joint_angular_relaxation, dt],
                  outputs=[body.deltas], device=dev)
        _apply(integ, model, body, body.deltas, model.body_inv_mass, False, True, dt, grad)  # counts unused
    if has_rigid_contacts(model):
        from ..forces.rigid import _contact_dim

        deltas, counts = _work(integ, model, state_in, "rigid_contact_deltas", grad)
        wp.launch(kr.solve_rigid_contacts, dim=_contact_dim(model),
                  inputs=[body.q, body.qd, state_in.body_q, model.body_com, model.body_inv_mass,
                          model.body_inv_inertia, *_contact_args(model), float(model.rigid_contact_torsional_friction),
                          float(model.rigid_contact_rolling_friction), integ.rigid_contact_relaxation, dt],
                  outputs=[deltas, counts], device=dev)
        _apply(integ, model, body, deltas, counts, integ.rigid_contact_con_weighting, True, dt, grad)


def apply_restitution(integ, model, state_in, body, dt: float) -> None:
    """Set the normal velocity of each touching rigid contact to ``-e`` times its value at the start of the step."""
    if not has_rigid_contacts(model):
        return
    from ..forces.rigid import _contact_dim

    grad = bool(state_in.requires_grad)
    deltas, counts = _work(integ, model, state_in, "rigid_restitution_deltas", grad)
    wp.launch(kr.rigid_contact_restitution, dim=_contact_dim(model),
              inputs=[body.q, body.qd, state_in.body_q, state_in.body_qd, model.body_com, model.body_inv_mass,
                      model.body_inv_inertia, *_contact_args(model), RESTITUTION_MARGIN],
              outputs=[deltas, counts], device=model.device)
    _apply(integ, model, body, deltas, counts, True, False, dt, grad)
