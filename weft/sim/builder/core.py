"""``ModelBuilder``: collects a scene in Python lists and turns it into a :class:`~weft.sim.Model`."""

from __future__ import annotations

import copy

import numpy as np

import weft as wp

from ..coloring import ColoringAlgorithm, color_trimesh, combine_independent_particle_coloring
from ..model import JOINT_FREE, SimError
from .collapse import CollapseMixin
from .elements import ElementsMixin
from .finalize import finalize_model
from .grids import GridsMixin
from .joints import JointsMixin
from .shapes import ShapesMixin

# builder lists copied verbatim by add_builder (index lists are shifted separately)
_PLAIN_ATTRS = (
    "body_inertia", "body_mass", "body_inv_inertia", "body_inv_mass", "body_com", "body_qd", "body_name",
    "joint_type", "joint_enabled", "joint_X_c", "joint_armature", "joint_axis", "joint_axis_dim", "joint_axis_mode",
    "joint_name", "joint_qd", "joint_act", "joint_limit_lower", "joint_limit_upper", "joint_limit_ke",
    "joint_limit_kd", "joint_target_ke", "joint_target_kd", "joint_linear_compliance", "joint_angular_compliance",
    "shape_visible", "shape_geo_type", "shape_geo_scale", "shape_geo_src", "shape_geo_is_solid",
    "shape_geo_thickness", "shape_material_ke", "shape_material_kd", "shape_material_kf", "shape_material_ka",
    "shape_material_mu", "shape_material_restitution", "shape_collision_radius", "shape_ground_collision",
    "shape_shape_collision", "particle_qd", "particle_mass", "particle_radius", "particle_flags", "edge_rest_angle",
    "edge_rest_length", "edge_bending_properties", "spring_rest_length", "spring_stiffness", "spring_damping",
    "spring_control", "tri_poses", "tri_activations", "tri_materials", "tri_areas", "tet_poses", "tet_activations",
    "tet_materials", "muscle_params", "muscle_activations", "muscle_points",
)

_LIST_ATTRS = _PLAIN_ATTRS + (
    "particle_q", "shape_transform", "shape_body", "shape_collision_group", "spring_indices", "tri_indices",
    "edge_indices", "tet_indices", "muscle_start", "muscle_bodies", "body_q", "joint_parent", "joint_child",
    "joint_X_p", "joint_q", "joint_q_start", "joint_qd_start", "joint_axis_start", "joint_twist_lower",
    "joint_twist_upper", "articulation_start", "particle_coloring",
)


class ModelBuilder(ElementsMixin, GridsMixin, ShapesMixin, JointsMixin, CollapseMixin):
    """Build a simulation scene (particles, cloth, soft bodies, rigid bodies and shapes) and finalize it into a
    :class:`~weft.sim.Model`. The API and defaults are warp.sim 1.7's.

    Args:
        up_vector: the world's up direction (+Y by default); gravity acts against it.
        gravity: signed gravity magnitude along ``up_vector`` (m/s^2).

    Example::

        builder = wp.sim.ModelBuilder()
        builder.add_particle((0.0, 1.0, 0.0), (0.0, 0.0, 0.0), 1.0)
        model = builder.finalize("cpu")
    """

    default_particle_radius = 0.1
    default_tri_ke = 100.0
    default_tri_ka = 100.0
    default_tri_kd = 10.0
    default_tri_drag = 0.0
    default_tri_lift = 0.0
    default_spring_ke = 100.0
    default_spring_kd = 0.0
    default_edge_ke = 100.0
    default_edge_kd = 0.0
    default_shape_ke = 1.0e5
    default_shape_kd = 1000.0
    default_shape_kf = 1000.0
    default_shape_ka = 0.0
    default_shape_mu = 0.5
    default_shape_restitution = 0.0
    default_shape_density = 1000.0
    default_shape_thickness = 1e-5
    default_joint_limit_ke = 100.0
    default_joint_limit_kd = 1.0

    def __init__(self, up_vector=(0.0, 1.0, 0.0), gravity: float = -9.80665):
        for name in _LIST_ATTRS:
            setattr(self, name, [])
        self.num_envs = 0
        self.particle_max_velocity = 1e5
        self.shape_collision_group_map: dict[int, list[int]] = {}
        self.last_collision_group = 0
        self.shape_collision_filter_pairs: set[tuple[int, int]] = set()
        self.geo_meshes = []
        self.geo_sdfs = []
        self.body_shapes: dict[int, list[int]] = {}
        self.joint_parents: dict[int, list[int]] = {}
        self.joint_dof_count = 0
        self.joint_coord_count = 0
        self.joint_axis_total_count = 0
        self.up_vector = wp.vec3(*up_vector)
        self.up_axis = int(np.argmax(np.abs(up_vector)))
        self.gravity = gravity
        self._ground_created = False
        self._ground_params = {
            "plane": (*up_vector, 0.0), "width": 0.0, "length": 0.0, "ke": self.default_shape_ke,
            "kd": self.default_shape_kd, "kf": self.default_shape_kf, "mu": self.default_shape_mu,
            "restitution": self.default_shape_restitution,
        }
        self.soft_contact_max = 64 * 1024
        self.rigid_mesh_contact_max = 0
        self.rigid_contact_margin = 0.1
        self.rigid_contact_torsional_friction = 0.5
        self.rigid_contact_rolling_friction = 0.001
        self.num_rigid_contacts_per_env = None

    # -- counts ------------------------------------------------------------------------------------------------

    @property
    def shape_count(self) -> int:
        """Number of shapes."""
        return len(self.shape_geo_type)

    @property
    def body_count(self) -> int:
        """Number of rigid bodies."""
        return len(self.body_q)

    @property
    def joint_count(self) -> int:
        """Number of joints."""
        return len(self.joint_type)

    @property
    def joint_axis_count(self) -> int:
        """Number of joint axes."""
        return len(self.joint_axis)

    @property
    def particle_count(self) -> int:
        """Number of particles."""
        return len(self.particle_q)

    @property
    def tri_count(self) -> int:
        """Number of FEM triangles."""
        return len(self.tri_poses)

    @property
    def tet_count(self) -> int:
        """Number of tetrahedra."""
        return len(self.tet_poses)

    @property
    def edge_count(self) -> int:
        """Number of bending edges."""
        return len(self.edge_rest_angle)

    @property
    def spring_count(self) -> int:
        """Number of springs."""
        return len(self.spring_rest_length)

    @property
    def muscle_count(self) -> int:
        """Number of muscles."""
        return len(self.muscle_start)

    @property
    def articulation_count(self) -> int:
        """Number of articulations."""
        return len(self.articulation_start)

    # -- composition -------------------------------------------------------------------------------------------

    def set_coloring(self, particle_coloring) -> None:
        """Use the given particle colouring (a list of index lists or arrays, one per colour) for VBD."""
        self.particle_coloring = [np.asarray(g, dtype=np.int32) for g in particle_coloring]

    def color(self, include_bending: bool = False, balance_colors: bool = True,
              target_max_min_color_ratio: float = 1.1,
              coloring_algorithm: ColoringAlgorithm = ColoringAlgorithm.MCS) -> None:
        """Colour the particles for the VBD integrator: particles joined by a mesh edge (``edge_indices``' v0-v1;
        with ``include_bending`` also the opposite vertices o0-o1) get different colours.

        Args:
            include_bending: also separate the two opposite vertices of every bending edge.
            balance_colors: move particles between colours until the largest/smallest size ratio is at most
                ``target_max_min_color_ratio`` (a ``UserWarning`` when that cannot be reached).
            target_max_min_color_ratio: the balancing target.
            coloring_algorithm: :class:`~weft.sim.ColoringAlgorithm` ``MCS`` (maximum cardinality search, fewer
                colours) or ``ORDERED_GREEDY`` (decreasing degree).
        """
        if not isinstance(coloring_algorithm, ColoringAlgorithm):
            raise SimError(f"color: 'coloring_algorithm' must be a ColoringAlgorithm, got {coloring_algorithm!r}")
        self.particle_coloring = color_trimesh(len(self.particle_q), np.asarray(self.edge_indices).reshape(-1, 4),
                                               include_bending, balance_colors=balance_colors,
                                               target_max_min_color_ratio=target_max_min_color_ratio,
                                               algorithm=coloring_algorithm)

    def add_builder(self, builder: ModelBuilder, xform=None, update_num_env_count: bool = True,
                    separate_collision_group: bool = True) -> None:
        """Append everything in ``builder`` (an environment) to this builder, its particles moved by ``xform``'s
        translation and its root bodies and static shapes by ``xform``.

        Args:
            builder: the builder to copy from.
            xform: optional transform applied to the copy.
            update_num_env_count: count the copy as one more environment.
            separate_collision_group: put the copy's shapes into one new collision group.
        """
        if not isinstance(builder, ModelBuilder):
            raise SimError(f"add_builder: 'builder' must be a ModelBuilder, got {type(builder).__name__}")
        xform = None if xform is None else wp.transform(*xform)
        p0, b0, s0 = self.particle_count, self.body_count, self.shape_count
        if builder.particle_count:
            self.particle_max_velocity = builder.particle_max_velocity
            off = np.zeros(3) if xform is None else np.array(xform.p, dtype=np.float64)
            self.particle_q.extend(tuple(float(c) for c in np.asarray(q) + off) for q in builder.particle_q)
        self.spring_indices.extend(i + p0 for i in builder.spring_indices)
        self.edge_indices.extend(tuple(v + p0 if v != -1 else -1 for v in e) for e in builder.edge_indices)
        self.tri_indices.extend(tuple(v + p0 for v in t) for t in builder.tri_indices)
        self.tet_indices.extend(tuple(v + p0 for v in t) for t in builder.tet_indices)
        self.particle_coloring = combine_independent_particle_coloring(
            self.particle_coloring, [np.asarray(c, dtype=np.int32) + p0 for c in builder.particle_coloring])
        for s, b in enumerate(builder.shape_body):
            if b > -1:
                self.shape_body.append(b + b0)
                self.shape_transform.append(builder.shape_transform[s])
            else:
                self.shape_body.append(-1)
                t = builder.shape_transform[s]
                self.shape_transform.append(t if xform is None else wp.transform_multiply(xform, t))
        for b, shapes in builder.body_shapes.items():
            key = b + b0 if b > -1 else -1
            self.body_shapes.setdefault(key, []).extend(s + s0 for s in shapes)
        if builder.joint_count:
            joint_X_p = copy.deepcopy(builder.joint_X_p)
            joint_q = list(builder.joint_q)
            if xform is not None:
                for i in range(len(joint_X_p)):
                    if builder.joint_type[i] == JOINT_FREE:
                        qi = builder.joint_q_start[i]
                        tf = wp.transform_multiply(xform, wp.transform(wp.vec3(*joint_q[qi:qi + 3]),
                                                                       wp.quat(*joint_q[qi + 3:qi + 7])))
                        joint_q[qi:qi + 7] = [*tf.p, *tf.q]
                    elif builder.joint_parent[i] == -1:
                        joint_X_p[i] = wp.transform_multiply(xform, joint_X_p[i])
            self.joint_X_p.extend(joint_X_p)
            self.joint_q.extend(joint_q)
            self.articulation_start.extend(a + self.joint_count for a in builder.articulation_start)
            self.joint_parent.extend(p + b0 if p != -1 else -1 for p in builder.joint_parent)
            self.joint_child.extend(c + b0 for c in builder.joint_child)
            self.joint_q_start.extend(c + self.joint_coord_count for c in builder.joint_q_start)
            self.joint_qd_start.extend(c + self.joint_dof_count for c in builder.joint_qd_start)
            self.joint_axis_start.extend(a + self.joint_axis_total_count for a in builder.joint_axis_start)
            self.joint_twist_lower.extend(builder.joint_twist_lower)
            self.joint_twist_upper.extend(builder.joint_twist_upper)
        for q in builder.body_q:
            self.body_q.append(q if xform is None else wp.transform_multiply(xform, q))
        self.muscle_start.extend(m + len(self.muscle_bodies) for m in builder.muscle_start)
        self.muscle_bodies.extend(b + b0 for b in builder.muscle_bodies)
        if separate_collision_group:
            group = self.last_collision_group + 1
            self.shape_collision_group.extend(group for _ in builder.shape_collision_group)
        else:
            self.shape_collision_group.extend(g + self.last_collision_group if g > -1 else -1
                                              for g in builder.shape_collision_group)
        for i, j in builder.shape_collision_filter_pairs:
            self.shape_collision_filter_pairs.add((i + s0, j + s0))
        for g, shapes in builder.shape_collision_group_map.items():
            if separate_collision_group:
                eg = self.last_collision_group + 1
            else:
                eg = g + self.last_collision_group if g > -1 else -1
            self.shape_collision_group_map.setdefault(eg, []).extend(s + s0 for s in shapes)
        if separate_collision_group:
            self.last_collision_group += 1
        elif builder.last_collision_group > -1:
            self.last_collision_group += builder.last_collision_group
        for attr in _PLAIN_ATTRS:
            getattr(self, attr).extend(getattr(builder, attr))
        self.joint_dof_count += builder.joint_dof_count
        self.joint_coord_count += builder.joint_coord_count
        self.joint_axis_total_count += builder.joint_axis_total_count
        self.up_vector = builder.up_vector
        self.gravity = builder.gravity
        self._ground_params = builder._ground_params
        if update_num_env_count:
            self.num_envs += 1

    def finalize(self, device=None, requires_grad: bool = False):
        """Copy the scene to arrays on ``device`` and return a :class:`~weft.sim.Model`.

        Args:
            device: the simulation device ("cpu", "cuda:0", ...; default: the current device).
            requires_grad: give the model's and its states' float arrays gradients (for ``wp.Tape``).
        Raises:
            SimError: the builder is empty, or indices refer to missing particles or bodies.
        """
        return finalize_model(self, device, requires_grad)
