"""Joints between rigid bodies: ``JointAxis`` and the ``add_joint*`` family of ``ModelBuilder`` (warp.sim 1.7's API).

A joint connects a parent body (``-1``: the world) to a child body through two anchor frames, ``parent_xform`` in
the parent's frame and ``child_xform`` in the child's. Its generalized coordinates ``joint_q`` and velocities
``joint_qd`` live in flat arrays; ``joint_q_start`` / ``joint_qd_start`` give each joint's first entry.
"""

from __future__ import annotations

import math

import numpy as np

import weft as wp

from ..model import (
    JOINT_BALL,
    JOINT_COMPOUND,
    JOINT_D6,
    JOINT_DISTANCE,
    JOINT_FIXED,
    JOINT_FREE,
    JOINT_MODE_FORCE,
    JOINT_MODE_TARGET_POSITION,
    JOINT_PRISMATIC,
    JOINT_REVOLUTE,
    JOINT_UNIVERSAL,
    SimError,
)

# (coordinates, degrees of freedom) per joint type; D6 has one of each per axis
_FIXED_COUNTS = {
    int(JOINT_PRISMATIC): (1, 1),
    int(JOINT_REVOLUTE): (1, 1),
    int(JOINT_BALL): (4, 3),
    int(JOINT_FIXED): (0, 0),
    int(JOINT_FREE): (7, 6),
    int(JOINT_DISTANCE): (7, 6),
    int(JOINT_UNIVERSAL): (2, 2),
    int(JOINT_COMPOUND): (3, 3),
}
# joint types whose coordinates end with an orientation quaternion (x, y, z, w)
_QUAT_TYPES = (int(JOINT_BALL), int(JOINT_FREE), int(JOINT_DISTANCE))
_UNLIMITED = 1.0e6  # what an infinite limit is stored as


class JointAxis:
    """One axis of a joint, with position limits and a drive.

    Args:
        axis: the axis direction (normalized here), or another ``JointAxis`` to copy.
        limit_lower, limit_upper: position limits (infinite: unlimited).
        limit_ke, limit_kd: stiffness and damping of the limits.
        action: the default force, target position or target velocity (by ``mode``); ``None`` picks 0, or the
            middle of the limits for a position target whose range excludes 0.
        target_ke, target_kd: gains of the drive's PD controller.
        mode: ``JOINT_MODE_FORCE``, ``JOINT_MODE_TARGET_POSITION`` or ``JOINT_MODE_TARGET_VELOCITY``.
    """

    def __init__(self, axis, limit_lower=-math.inf, limit_upper=math.inf, limit_ke=100.0, limit_kd=10.0,
                 action=None, target_ke=0.0, target_kd=0.0, mode=JOINT_MODE_FORCE):
        if isinstance(axis, JointAxis):
            self.__dict__.update(axis.__dict__)
            return
        direction = np.asarray(axis, dtype=np.float64).reshape(-1)
        norm = float(np.linalg.norm(direction)) if direction.size == 3 else 0.0
        if norm == 0.0 or not math.isfinite(norm):
            raise SimError(f"JointAxis: 'axis' must be a nonzero, finite 3-vector, got {axis!r}")
        self.axis = wp.vec3(*(direction / norm))
        self.limit_lower = float(limit_lower)
        self.limit_upper = float(limit_upper)
        self.limit_ke = float(limit_ke)
        self.limit_kd = float(limit_kd)
        if action is None:
            centred = int(mode) == int(JOINT_MODE_TARGET_POSITION) and (limit_lower > 0.0 or limit_upper < 0.0)
            action = 0.5 * (limit_lower + limit_upper) if centred else 0.0
        self.action = float(action)
        self.target_ke = float(target_ke)
        self.target_kd = float(target_kd)
        self.mode = int(mode)

    def __repr__(self) -> str:
        return (f"JointAxis(axis={tuple(self.axis)}, limits=({self.limit_lower}, {self.limit_upper}), "
                f"mode={self.mode}, action={self.action})")


def _xform(value, name: str):
    if value is None:
        return wp.transform()
    try:
        return wp.transform(*value) if not isinstance(value, type(wp.transform())) else value
    except Exception as exc:  # any malformed input is reported with the argument's name
        raise SimError(f"'{name}' must be a transform (p, q), got {value!r}") from exc


class JointsMixin:
    """``add_joint`` and its typed forms."""

    def _check_body(self, body: int, name: str, allow_world: bool) -> int:
        if isinstance(body, bool) or not isinstance(body, (int, np.integer)):
            raise SimError(f"add_joint: '{name}' must be a body index, got {body!r}")
        body = int(body)
        low = -1 if allow_world else 0
        if body < low or body >= self.body_count:
            raise SimError(f"add_joint: '{name}' = {body} is not a body of this builder "
                           f"(it has {self.body_count}{'; -1 is the world' if allow_world else ''})")
        return body

    def add_joint(self, joint_type, parent: int, child: int, linear_axes=None, angular_axes=None,
                  name: str | None = None, parent_xform=None, child_xform=None, linear_compliance: float = 0.0,
                  angular_compliance: float = 0.0, armature: float = 1e-2, collision_filter_parent: bool = True,
                  enabled: bool = True) -> int:
        """Add a joint of any type between ``parent`` (-1: the world) and ``child``.

        Args:
            joint_type: one of the ``JOINT_*`` constants.
            parent, child: body indices.
            linear_axes, angular_axes: lists of :class:`JointAxis` (or 3-vectors).
            name: the joint's name.
            parent_xform, child_xform: the joint's anchor frame in the parent's and in the child's frame.
            linear_compliance, angular_compliance: compliances (XPBD).
            armature: artificial inertia added to each degree of freedom (Featherstone).
            collision_filter_parent: disable collisions between the shapes of parent and child.
            enabled: whether maximal-coordinate integrators enforce the joint.

        Returns:
            The index of the new joint.
        """
        joint_type = int(joint_type)
        if joint_type not in _FIXED_COUNTS and joint_type != int(JOINT_D6):
            raise SimError(f"add_joint: unknown 'joint_type' {joint_type}")
        parent = self._check_body(parent, "parent", allow_world=True)
        child = self._check_body(child, "child", allow_world=False)
        if parent == child:
            raise SimError(f"add_joint: 'parent' and 'child' are the same body ({child})")
        linear = [JointAxis(a) for a in (linear_axes or [])]
        angular = [JointAxis(a) for a in (angular_axes or [])]
        if len(linear) > 3 or len(angular) > 3:
            raise SimError("add_joint: at most 3 linear and 3 angular axes")
        if joint_type == int(JOINT_D6):
            n_coords = n_dofs = len(linear) + len(angular)
        else:
            n_coords, n_dofs = _FIXED_COUNTS[joint_type]
        if not self.articulation_start:
            self.add_articulation()
        index = self.joint_count
        self.joint_type.append(joint_type)
        self.joint_parent.append(parent)
        self.joint_child.append(child)
        self.joint_parents.setdefault(child, []).append(parent)
        self.joint_X_p.append(_xform(parent_xform, "parent_xform"))
        self.joint_X_c.append(_xform(child_xform, "child_xform"))
        self.joint_name.append(name or f"joint {index}")
        self.joint_axis_start.append(len(self.joint_axis))
        self.joint_axis_dim.append((len(linear), len(angular)))
        self.joint_axis_total_count += len(linear) + len(angular)
        self.joint_linear_compliance.append(float(linear_compliance))
        self.joint_angular_compliance.append(float(angular_compliance))
        self.joint_enabled.append(bool(enabled))
        for ax in linear + angular:
            self._add_axis(ax)
        coords = [0.0] * n_coords
        if joint_type in _QUAT_TYPES:
            coords[-1] = 1.0  # identity orientation
        self.joint_q.extend(coords)
        self.joint_qd.extend([0.0] * n_dofs)
        self.joint_armature.extend([float(armature)] * n_dofs)
        self.joint_q_start.append(self.joint_coord_count)
        self.joint_qd_start.append(self.joint_dof_count)
        self.joint_coord_count += n_coords
        self.joint_dof_count += n_dofs
        if collision_filter_parent and parent > -1:
            for child_shape in self.body_shapes.get(child, []):
                for parent_shape in self.body_shapes.get(parent, []):
                    self.shape_collision_filter_pairs.add((parent_shape, child_shape))
        return index

    def _add_axis(self, ax: JointAxis) -> None:
        self.joint_axis.append(ax.axis)
        self.joint_axis_mode.append(ax.mode)
        self.joint_act.append(ax.action)
        self.joint_target_ke.append(ax.target_ke)
        self.joint_target_kd.append(ax.target_kd)
        self.joint_limit_ke.append(ax.limit_ke)
        self.joint_limit_kd.append(ax.limit_kd)
        self.joint_limit_lower.append(ax.limit_lower if math.isfinite(ax.limit_lower) else -_UNLIMITED)
        self.joint_limit_upper.append(ax.limit_upper if math.isfinite(ax.limit_upper) else _UNLIMITED)

    def _one_axis_joint(self, joint_type, parent, child, parent_xform, child_xform, axis, target, target_ke,
                        target_kd, mode, limit_lower, limit_upper, limit_ke, limit_kd, linear_compliance,
                        angular_compliance, armature, name, collision_filter_parent, enabled) -> int:
        # as warp.sim: a given target turns a force-mode axis into a position drive; a position drive without a
        # target aims at the middle of the limits
        if target is not None and int(mode) == int(JOINT_MODE_FORCE):
            mode = JOINT_MODE_TARGET_POSITION
        elif target is None and int(mode) == int(JOINT_MODE_TARGET_POSITION):
            target = 0.5 * (limit_lower + limit_upper)
        ax = JointAxis(axis, limit_lower=limit_lower, limit_upper=limit_upper,
                       limit_ke=self.default_joint_limit_ke if limit_ke is None else limit_ke,
                       limit_kd=self.default_joint_limit_kd if limit_kd is None else limit_kd,
                       action=target, target_ke=target_ke, target_kd=target_kd, mode=mode)
        prismatic = int(joint_type) == int(JOINT_PRISMATIC)
        return self.add_joint(joint_type, parent, child, linear_axes=[ax] if prismatic else None,
                              angular_axes=None if prismatic else [ax], name=name, parent_xform=parent_xform,
                              child_xform=child_xform, linear_compliance=linear_compliance,
                              angular_compliance=angular_compliance, armature=armature,
                              collision_filter_parent=collision_filter_parent, enabled=enabled)

    def add_joint_revolute(self, parent: int, child: int, parent_xform=None, child_xform=None,
                           axis=(1.0, 0.0, 0.0), target: float | None = None, target_ke: float = 0.0,
                           target_kd: float = 0.0, mode: int = JOINT_MODE_FORCE, limit_lower: float = -2 * math.pi,
                           limit_upper: float = 2 * math.pi, limit_ke: float | None = None,
                           limit_kd: float | None = None, linear_compliance: float = 0.0,
                           angular_compliance: float = 0.0, armature: float = 1e-2, name: str | None = None,
                           collision_filter_parent: bool = True, enabled: bool = True) -> int:
        """Add a hinge: one rotational degree of freedom about ``axis`` (in the joint frame). Returns its index."""
        return self._one_axis_joint(JOINT_REVOLUTE, parent, child, parent_xform, child_xform, axis, target,
                                    target_ke, target_kd, mode, limit_lower, limit_upper, limit_ke, limit_kd,
                                    linear_compliance, angular_compliance, armature, name, collision_filter_parent,
                                    enabled)

    def add_joint_prismatic(self, parent: int, child: int, parent_xform=None, child_xform=None,
                            axis=(1.0, 0.0, 0.0), target: float | None = None, target_ke: float = 0.0,
                            target_kd: float = 0.0, mode: int = JOINT_MODE_FORCE, limit_lower: float = -1e4,
                            limit_upper: float = 1e4, limit_ke: float | None = None, limit_kd: float | None = None,
                            linear_compliance: float = 0.0, angular_compliance: float = 0.0,
                            armature: float = 1e-2, name: str | None = None, collision_filter_parent: bool = True,
                            enabled: bool = True) -> int:
        """Add a slider: one translational degree of freedom along ``axis``. Returns its index."""
        return self._one_axis_joint(JOINT_PRISMATIC, parent, child, parent_xform, child_xform, axis, target,
                                    target_ke, target_kd, mode, limit_lower, limit_upper, limit_ke, limit_kd,
                                    linear_compliance, angular_compliance, armature, name, collision_filter_parent,
                                    enabled)

    def add_joint_ball(self, parent: int, child: int, parent_xform=None, child_xform=None,
                       linear_compliance: float = 0.0, angular_compliance: float = 0.0, armature: float = 1e-2,
                       name: str | None = None, collision_filter_parent: bool = True, enabled: bool = True) -> int:
        """Add a ball joint: three rotational degrees of freedom, coordinates a quaternion. Returns its index."""
        return self.add_joint(JOINT_BALL, parent, child, name=name, parent_xform=parent_xform,
                              child_xform=child_xform, linear_compliance=linear_compliance,
                              angular_compliance=angular_compliance, armature=armature,
                              collision_filter_parent=collision_filter_parent, enabled=enabled)

    def add_joint_fixed(self, parent: int, child: int, parent_xform=None, child_xform=None,
                        linear_compliance: float = 0.0, angular_compliance: float = 0.0, armature: float = 1e-2,
                        name: str | None = None, collision_filter_parent: bool = True, enabled: bool = True) -> int:
        """Add a weld: no degrees of freedom. Returns its index."""
        return self.add_joint(JOINT_FIXED, parent, child, name=name, parent_xform=parent_xform,
                              child_xform=child_xform, linear_compliance=linear_compliance,
                              angular_compliance=angular_compliance, armature=armature,
                              collision_filter_parent=collision_filter_parent, enabled=enabled)

    def add_joint_free(self, child: int, parent_xform=None, child_xform=None, armature: float = 0.0,
                       parent: int = -1, name: str | None = None, collision_filter_parent: bool = True,
                       enabled: bool = True) -> int:
        """Add a free joint (6 degrees of freedom): coordinates (position, quaternion xyzw), velocities
        (angular, linear). Returns its index."""
        return self.add_joint(JOINT_FREE, parent, child, name=name, parent_xform=parent_xform,
                              child_xform=child_xform, armature=armature,
                              collision_filter_parent=collision_filter_parent, enabled=enabled)

    def add_joint_distance(self, parent: int, child: int, parent_xform=None, child_xform=None,
                           min_distance: float = -1.0, max_distance: float = 1.0, compliance: float = 0.0,
                           collision_filter_parent: bool = True, enabled: bool = True) -> int:
        """Add a distance joint: the anchors stay between ``min_distance`` and ``max_distance`` apart (a negative
        bound is no bound); coordinates as a free joint. Returns its index."""
        ax = JointAxis((1.0, 0.0, 0.0), limit_lower=min_distance, limit_upper=max_distance)
        return self.add_joint(JOINT_DISTANCE, parent, child, linear_axes=[ax], parent_xform=parent_xform,
                              child_xform=child_xform, linear_compliance=compliance,
                              collision_filter_parent=collision_filter_parent, enabled=enabled)

    def add_joint_universal(self, parent: int, child: int, axis_0, axis_1, parent_xform=None, child_xform=None,
                            linear_compliance: float = 0.0, angular_compliance: float = 0.0,
                            armature: float = 1e-2, name: str | None = None, collision_filter_parent: bool = True,
                            enabled: bool = True) -> int:
        """Add a universal joint: rotation about ``axis_0``, then about ``axis_1`` carried by the first. Returns
        its index."""
        return self.add_joint(JOINT_UNIVERSAL, parent, child, angular_axes=[axis_0, axis_1], name=name,
                              parent_xform=parent_xform, child_xform=child_xform,
                              linear_compliance=linear_compliance, angular_compliance=angular_compliance,
                              armature=armature, collision_filter_parent=collision_filter_parent, enabled=enabled)

    def add_joint_compound(self, parent: int, child: int, axis_0, axis_1, axis_2, parent_xform=None,
                           child_xform=None, linear_compliance: float = 0.0, angular_compliance: float = 0.0,
                           armature: float = 1e-2, name: str | None = None, collision_filter_parent: bool = True,
                           enabled: bool = True) -> int:
        """Add a compound joint: three successive rotations about ``axis_0``, ``axis_1``, ``axis_2``. Returns its
        index."""
        return self.add_joint(JOINT_COMPOUND, parent, child, angular_axes=[axis_0, axis_1, axis_2], name=name,
                              parent_xform=parent_xform, child_xform=child_xform,
                              linear_compliance=linear_compliance, angular_compliance=angular_compliance,
                              armature=armature, collision_filter_parent=collision_filter_parent, enabled=enabled)

    def add_joint_d6(self, parent: int, child: int, linear_axes=None, angular_axes=None, name: str | None = None,
                     parent_xform=None, child_xform=None, linear_compliance: float = 0.0,
                     angular_compliance: float = 0.0, armature: float = 1e-2, collision_filter_parent: bool = True,
                     enabled: bool = True) -> int:
        """Add a generic joint with up to 3 linear and 3 angular axes. Returns its index."""
        return self.add_joint(JOINT_D6, parent, child, linear_axes=linear_axes, angular_axes=angular_axes,
                              name=name, parent_xform=parent_xform, child_xform=child_xform,
                              linear_compliance=linear_compliance, angular_compliance=angular_compliance,
                              armature=armature, collision_filter_parent=collision_filter_parent, enabled=enabled)
