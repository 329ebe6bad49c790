"""``ModelBuilder.collapse_fixed_joints``: merge bodies welded by fixed joints into the nearest body above them that
moves (or into the world), with their shapes, masses and inertias."""

from __future__ import annotations

import numpy as np

import weft as wp

from ..model import JOINT_FIXED


def _rt(tf):
    """A transform as (rotation matrix, translation), float64."""
    rot = np.array(wp.quat_to_matrix(wp.quat(*tf.q)), dtype=np.float64).reshape(3, 3)
    return rot, np.array(tf.p, dtype=np.float64)


def _mul(a, b):
    return a[0] @ b[0], a[0] @ b[1] + a[1]


def _inv(a):
    return a[0].T, -a[0].T @ a[1]


def _to_transform(a):
    return wp.transform(wp.vec3(*a[1]), wp.quat_from_matrix(wp.mat33(*a[0].reshape(-1))))


def _shift(d):
    return d @ d * np.eye(3) - np.outer(d, d)


class CollapseMixin:
    """``collapse_fixed_joints``."""

    def _merge_mass(self, target: int, body: int, pose) -> None:
        """Add ``body``'s mass, placed at ``pose`` in ``target``'s frame, to ``target``."""
        m_a, m_b = float(self.body_mass[target]), float(self.body_mass[body])
        m = m_a + m_b
        if m_b == 0.0 and not np.any(np.array(self.body_inertia[body])):
            return
        com_a = np.array(self.body_com[target], dtype=np.float64)
        com_b = pose[0] @ np.array(self.body_com[body], dtype=np.float64) + pose[1]
        com = (m_a * com_a + m_b * com_b) / m if m > 0.0 else com_a
        I_a = np.array(self.body_inertia[target], dtype=np.float64).reshape(3, 3)
        I_b = np.array(self.body_inertia[body], dtype=np.float64).reshape(3, 3)
        inertia = I_a + m_a * _shift(com_a - com) + pose[0] @ I_b @ pose[0].T + m_b * _shift(com_b - com)
        self.body_mass[target] = m
        self.body_inv_mass[target] = 1.0 / m if m > 0.0 else 0.0
        self.body_com[target] = wp.vec3(*com)
        self.body_inertia[target] = wp.mat33(*inertia.reshape(-1))
        inv = np.linalg.inv(inertia) if m > 0.0 and np.linalg.det(inertia) != 0.0 else np.zeros((3, 3))
        self.body_inv_inertia[target] = wp.mat33(*inv.reshape(-1))

    def collapse_fixed_joints(self, verbose: bool | None = None) -> None:
        """Remove the fixed joints and merge each body they weld into the nearest body above it that a non-fixed
        joint moves (or into the world, whose shapes are static), as warp.sim 1.7 does.

        Merged bodies' shapes move to that body (their transforms composed with the welds); their masses,
        centres of mass and inertias are combined exactly (parallel-axis theorem, in float64). Joints below a
        merged body are re-anchored on the body it merged into. Retained bodies and joints keep their relative
        order; joint coordinates, axes and articulation starts are renumbered to match.

        Args:
            verbose: print each merge (default: ``wp.config.verbose``).
        """
        verbose = wp.config.verbose if verbose is None else verbose
        n_joints, n_bodies = self.joint_count, self.body_count
        children: dict[int, list[int]] = {}
        for j in range(n_joints):
            children.setdefault(self.joint_parent[j], []).append(j)
        for js in children.values():
            js.sort(key=lambda j: self.joint_child[j])
        target = {}  # removed body -> the body (or -1) it merged into
        new_X_p, new_parent, kept = {}, {}, []
        identity = (np.eye(3), np.zeros(3))
        # depth-first from the world; 'acc' is the current parent body's frame in its target's frame
        stack = [(j, -1, identity) for j in reversed(children.get(-1, []))]
        seen = set()
        while stack:
            j, into, acc = stack.pop()
            child = self.joint_child[j]
            if child in seen:
                continue
            seen.add(child)
            if int(self.joint_type[j]) == int(JOINT_FIXED):
                pose = _mul(_mul(acc, _rt(self.joint_X_p[j])), _inv(_rt(self.joint_X_c[j])))
                target[child] = into
                if verbose:
                    print(f"collapse_fixed_joints: removed joint {self.joint_name[j]!r}, merged body "
                          f"{self.body_name[child]!r} into {self.body_name[into] if into > -1 else 'the world'!r}")
                for s in self.body_shapes.get(child, []):
                    self.shape_transform[s] = _to_transform(_mul(pose, _rt(self.shape_transform[s])))
                if into > -1:
                    self._merge_mass(into, child, pose)
                next_into, next_acc = into, pose
            else:
                new_X_p[j] = _to_transform(_mul(acc, _rt(self.joint_X_p[j])))
                new_parent[j] = into
                kept.append(j)
                next_into, next_acc = child, identity
            stack.extend((c, next_into, next_acc) for c in reversed(children.get(child, [])))
        if not target:
            return
        kept.sort()
        bodies = [b for b in range(n_bodies) if b not in target]
        body_map = {-1: -1, **{b: i for i, b in enumerate(bodies)}}
        for b, into in target.items():
            body_map[b] = body_map[into] if into > -1 else -1
        self._renumber_joints(kept, new_X_p, new_parent, body_map)
        self._renumber_bodies(bodies, body_map)

    def _renumber_joints(self, kept, new_X_p, new_parent, body_map) -> None:
        n = self.joint_count
        q_end = [*self.joint_q_start[1:], self.joint_coord_count]
        qd_end = [*self.joint_qd_start[1:], self.joint_dof_count]
        sizes = [(q_end[j] - self.joint_q_start[j], qd_end[j] - self.joint_qd_start[j], sum(self.joint_axis_dim[j]))
                 for j in kept]
        coords = [i for j in kept for i in range(self.joint_q_start[j], q_end[j])]
        dofs = [i for j in kept for i in range(self.joint_qd_start[j], qd_end[j])]
        axes = [self.joint_axis_start[j] + k for j in kept for k in range(sum(self.joint_axis_dim[j]))]
        per_joint = ("joint_type", "joint_enabled", "joint_X_c", "joint_axis_dim", "joint_name",
                     "joint_linear_compliance", "joint_angular_compliance", "joint_twist_lower", "joint_twist_upper")
        for name in per_joint:
            values = getattr(self, name)
            if len(values) == n:
                setattr(self, name, [values[j] for j in kept])
        for name in ("joint_axis", "joint_axis_mode", "joint_act", "joint_target_ke", "joint_target_kd",
                     "joint_limit_ke", "joint_limit_kd", "joint_limit_lower", "joint_limit_upper"):
            values = getattr(self, name)
            setattr(self, name, [values[i] for i in axes])
        self.joint_q = [self.joint_q[i] for i in coords]
        self.joint_qd = [self.joint_qd[i] for i in dofs]
        self.joint_armature = [self.joint_armature[i] for i in dofs]
        self.joint_X_p = [new_X_p[j] for j in kept]
        self.joint_child = [body_map[self.joint_child[j]] for j in kept]
        self.joint_parent = [body_map[new_parent[j]] for j in kept]
        self.joint_q_start, self.joint_qd_start, self.joint_axis_start = [], [], []
        nq = nqd = nax = 0
        for q_size, qd_size, ax_size in sizes:
            self.joint_q_start.append(nq)
            self.joint_qd_start.append(nqd)
            self.joint_axis_start.append(nax)
            nq, nqd, nax = nq + q_size, nqd + qd_size, nax + ax_size
        self.joint_coord_count, self.joint_dof_count, self.joint_axis_total_count = nq, nqd, nax
        # an articulation now starts at its first retained joint; articulations left empty disappear
        first_kept = [next((i for i, j in enumerate(kept) if j >= s), len(kept)) for s in self.articulation_start]
        self.articulation_start = sorted({s for s in first_kept if s < len(kept)})
        self.joint_parents = {}
        for parent, child in zip(self.joint_parent, self.joint_child):
            self.joint_parents.setdefault(child, []).append(parent)

    def _renumber_bodies(self, bodies, body_map) -> None:
        for name in ("body_q", "body_qd", "body_mass", "body_inv_mass", "body_com", "body_inertia",
                     "body_inv_inertia", "body_name"):
            values = getattr(self, name)
            setattr(self, name, [values[b] for b in bodies])
        self.shape_body = [body_map[b] for b in self.shape_body]
        self.muscle_bodies = [body_map[b] for b in self.muscle_bodies]
        shapes: dict[int, list[int]] = {i: [] for i in range(len(bodies))}
        for s, b in enumerate(self.shape_body):
            shapes.setdefault(b, []).append(s)
        for body, group in shapes.items():  # shapes welded into one body do not collide with each other
            if body == -1:
                continue
            for k, a in enumerate(group):
                for c in group[k + 1:]:
                    self.shape_collision_filter_pairs.add((a, c))
        self.body_shapes = shapes
