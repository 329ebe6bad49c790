"""``ModelBuilder.finalize``: builder lists -> model arrays on a device."""

from __future__ import annotations

import itertools

import numpy as np

import weft as wp

from ..model import Model, SimError
from ..rigid_collide import build_rigid_contact_table


def _array(data, dtype, device, requires_grad=False, width=None):
    """Array of ``dtype`` from a (possibly empty) list; ``width`` gives 2-D float/int tables their column count."""
    np_dtype = {wp.float32: np.float32, wp.int32: np.int32, wp.uint32: np.uint32, wp.uint8: np.uint8,
                wp.uint64: np.uint64, wp.bool: np.bool_}.get(dtype)
    if np_dtype is not None:
        a = np.asarray(data, dtype=np_dtype)
        if width is not None:
            a = a.reshape(-1, width)
        if a.size == 0:
            return wp.zeros(a.shape if width is not None else 0, dtype=dtype, device=device,
                            requires_grad=requires_grad)
        return wp.array(a, dtype=dtype, device=device, requires_grad=requires_grad)
    rows = [np.asarray(v, dtype=np.float32).reshape(-1) for v in data]
    if not rows:
        return wp.zeros(0, dtype=dtype, device=device, requires_grad=requires_grad)
    return wp.array(np.stack(rows), dtype=dtype, device=device, requires_grad=requires_grad)


def _contact_pairs(m: Model, b) -> None:
    filters = set(b.shape_collision_filter_pairs)
    filters |= {(j, i) for i, j in b.shape_collision_filter_pairs}
    pairs = []
    group_map = b.shape_collision_group_map
    for group, shapes in group_map.items():
        for a, c in itertools.product(shapes, shapes):
            if b.shape_shape_collision[a] and b.shape_shape_collision[c] and a < c and (a, c) not in filters:
                pairs.append((a, c))
        if group != -1 and -1 in group_map:
            for a, c in itertools.product(shapes, group_map[-1]):
                if a < c and (a, c) not in filters:
                    pairs.append((a, c))
    m.shape_contact_pairs = _array(pairs, wp.int32, m.device, width=2)
    m.shape_contact_pair_count = len(pairs)
    ground = len(b.shape_geo_type) - 1
    gpairs = [(i, ground) for i in range(ground) if b.shape_ground_collision[i]]
    m.shape_ground_contact_pairs = _array(gpairs, wp.int32, m.device, width=2)
    m.shape_ground_contact_pair_count = len(gpairs)


def finalize_model(b, device=None, requires_grad: bool = False) -> Model:
    """See :meth:`weft.sim.ModelBuilder.finalize`."""
    if not b.particle_q and not b.body_q and not b.shape_geo_type:
        raise SimError("ModelBuilder.finalize: the builder is empty (add particles, bodies or shapes first)")
    n = len(b.particle_q)
    for name, idx in (("spring_indices", b.spring_indices), ("tri_indices", b.tri_indices),
                      ("tet_indices", b.tet_indices)):
        flat = np.asarray(idx, dtype=np.int64).reshape(-1)
        if flat.size and (flat.min() < 0 or flat.max() >= n):
            raise SimError(f"ModelBuilder.finalize: '{name}' refers to particles outside [0, {n})")
    b.num_envs = max(1, b.num_envs)
    if not b._ground_created:
        b._create_ground_plane()
    rg = requires_grad
    m = Model(device)
    dev = m.device
    m.requires_grad = rg
    m.ground_plane_params = b._ground_params["plane"]
    m.num_envs = b.num_envs

    masses = np.asarray(b.particle_mass, dtype=np.float32)
    inv_mass = np.divide(1.0, masses, out=np.zeros_like(masses), where=masses != 0.0)
    m.particle_q = _array(b.particle_q, wp.vec3, dev, rg)
    m.particle_qd = _array(b.particle_qd, wp.vec3, dev, rg)
    m.particle_mass = _array(masses, wp.float32, dev, rg)
    m.particle_inv_mass = _array(inv_mass, wp.float32, dev, rg)
    m.particle_radius = _array(b.particle_radius, wp.float32, dev, rg)
    m.particle_flags = _array([int(f) for f in b.particle_flags], wp.uint32, dev)
    m.particle_max_radius = float(np.max(b.particle_radius)) if n else 0.0
    m.particle_max_velocity = b.particle_max_velocity
    m.particle_coloring = [_array(np.asarray(g), wp.int32, dev) for g in b.particle_coloring]
    m._particle_grid_lazy = True  # Model.particle_grid: a HashGrid made on first access

    m.shape_transform = _array(b.shape_transform, wp.transform, dev, rg)
    m.shape_body = _array(b.shape_body, wp.int32, dev)
    m.shape_visible = _array(b.shape_visible, wp.bool, dev)
    m.body_shapes = b.body_shapes
    finalized = {}
    sources = []
    for src in b.shape_geo_src:
        if src is None:
            sources.append(0)
            continue
        key = hash(src)
        if key not in finalized:
            finalized[key] = src.finalize(device=dev)
        sources.append(finalized[key])
    m.shape_geo.type = _array(b.shape_geo_type, wp.int32, dev)
    m.shape_geo.source = _array(sources, wp.uint64, dev)
    m.shape_geo.scale = _array(b.shape_geo_scale, wp.vec3, dev, rg)
    m.shape_geo.is_solid = _array(b.shape_geo_is_solid, wp.uint8, dev)
    m.shape_geo.thickness = _array(b.shape_geo_thickness, wp.float32, dev, rg)
    m.shape_geo_src = b.shape_geo_src
    m.geo_meshes = b.geo_meshes
    m.geo_sdfs = b.geo_sdfs
    for attr in ("ke", "kd", "kf", "ka", "mu", "restitution"):
        setattr(m.shape_materials, attr, _array(getattr(b, "shape_material_" + attr), wp.float32, dev, rg))
    m.shape_collision_filter_pairs = b.shape_collision_filter_pairs
    m.shape_collision_group = b.shape_collision_group
    m.shape_collision_group_map = b.shape_collision_group_map
    m.shape_collision_radius = _array(b.shape_collision_radius, wp.float32, dev, rg)
    m.shape_ground_collision = b.shape_ground_collision
    m.shape_shape_collision = b.shape_shape_collision

    m.spring_indices = _array(b.spring_indices, wp.int32, dev)
    for attr in ("spring_rest_length", "spring_stiffness", "spring_damping", "spring_control"):
        setattr(m, attr, _array(getattr(b, attr), wp.float32, dev, rg))
    m.tri_indices = _array(b.tri_indices, wp.int32, dev, width=3)
    m.tri_poses = _array(b.tri_poses, wp.mat22, dev, rg)
    m.tri_activations = _array(b.tri_activations, wp.float32, dev, rg)
    m.tri_materials = _array(b.tri_materials, wp.float32, dev, rg, width=5)
    m.tri_areas = _array(b.tri_areas, wp.float32, dev, rg)
    m.edge_indices = _array(b.edge_indices, wp.int32, dev, width=4)
    m.edge_rest_angle = _array(b.edge_rest_angle, wp.float32, dev, rg)
    m.edge_rest_length = _array(b.edge_rest_length, wp.float32, dev, rg)
    m.edge_bending_properties = _array(b.edge_bending_properties, wp.float32, dev, rg, width=2)
    m.tet_indices = _array(b.tet_indices, wp.int32, dev, width=4)
    m.tet_poses = _array(b.tet_poses, wp.mat33, dev, rg)
    m.tet_activations = _array(b.tet_activations, wp.float32, dev, rg)
    m.tet_materials = _array(b.tet_materials, wp.float32, dev, rg, width=3)

    m.muscle_start = _array(list(b.muscle_start) + [len(b.muscle_bodies)], wp.int32, dev)
    m.muscle_params = _array(b.muscle_params, wp.float32, dev, rg, width=5)
    m.muscle_bodies = _array(b.muscle_bodies, wp.int32, dev)
    m.muscle_points = _array(b.muscle_points, wp.vec3, dev, rg)
    m.muscle_activations = _array(b.muscle_activations, wp.float32, dev, rg)

    m.body_q = _array(b.body_q, wp.transform, dev, rg)
    m.body_qd = _array(b.body_qd, wp.spatial_vector, dev, rg)
    m.body_inertia = _array(b.body_inertia, wp.mat33, dev, rg)
    m.body_inv_inertia = _array(b.body_inv_inertia, wp.mat33, dev, rg)
    m.body_mass = _array(b.body_mass, wp.float32, dev, rg)
    m.body_inv_mass = _array(b.body_inv_mass, wp.float32, dev, rg)
    m.body_com = _array(b.body_com, wp.vec3, dev, rg)
    m.body_name = b.body_name

    # joints: the arrays rigid-body integrators read (filled by the joint builder of the rigid-body part)
    m.joint_type = _array(b.joint_type, wp.int32, dev)
    m.joint_parent = _array(b.joint_parent, wp.int32, dev)
    m.joint_child = _array(b.joint_child, wp.int32, dev)
    m.joint_X_p = _array(b.joint_X_p, wp.transform, dev, rg)
    m.joint_X_c = _array(b.joint_X_c, wp.transform, dev, rg)
    m.joint_axis_start = _array(b.joint_axis_start, wp.int32, dev)
    m.joint_axis_dim = _array(b.joint_axis_dim, wp.int32, dev, width=2)
    m.joint_axis = _array(b.joint_axis, wp.vec3, dev, rg)
    m.joint_q = _array(b.joint_q, wp.float32, dev, rg)
    m.joint_qd = _array(b.joint_qd, wp.float32, dev, rg)
    m.joint_name = b.joint_name
    child_to_joint = {c: i for i, c in enumerate(b.joint_child)}
    m.joint_ancestor = _array([child_to_joint.get(p, -1) for p in b.joint_parent], wp.int32, dev)
    for attr in ("joint_armature", "joint_target_ke", "joint_target_kd", "joint_act", "joint_limit_lower",
                 "joint_limit_upper", "joint_limit_ke", "joint_limit_kd", "joint_linear_compliance",
                 "joint_angular_compliance", "joint_twist_lower", "joint_twist_upper"):
        setattr(m, attr, _array(getattr(b, attr), wp.float32, dev, rg))
    m.joint_axis_mode = _array(b.joint_axis_mode, wp.int32, dev)
    m.joint_enabled = _array(b.joint_enabled, wp.int32, dev)
    m.joint_q_start = _array(list(b.joint_q_start) + [b.joint_coord_count], wp.int32, dev)
    m.joint_qd_start = _array(list(b.joint_qd_start) + [b.joint_dof_count], wp.int32, dev)
    m.articulation_start = _array(list(b.articulation_start) + [len(b.joint_type)], wp.int32, dev)

    m.joint_count = len(b.joint_type)
    m.joint_axis_count = len(b.joint_axis)
    m.joint_dof_count = b.joint_dof_count
    m.joint_coord_count = b.joint_coord_count
    m.particle_count = n
    m.body_count = len(b.body_q)
    m.shape_count = len(b.shape_geo_type)
    m.tri_count = len(b.tri_poses)
    m.tet_count = len(b.tet_poses)
    m.edge_count = len(b.edge_rest_angle)
    m.spring_count = len(b.spring_rest_length)
    m.muscle_count = len(b.muscle_start)
    m.articulation_count = len(b.articulation_start)
    starts = list(b.articulation_start) + [len(b.joint_type)]
    m.articulation_max_joints = max((e - s for s, e in itertools.pairwise(starts)), default=0)

    if n:
        # one contact per (particle, non-ground shape) pair at most: larger buffers are never filled, and with
        # gradients collide() allocates them afresh every call (65,536 slots by default)
        pairs = max(n * (len(b.shape_geo_type) - 1), 1)
        m.allocate_soft_contacts(min(b.soft_contact_max, pairs), requires_grad=rg)
    _contact_pairs(m, b)
    m.rigid_mesh_contact_max = b.rigid_mesh_contact_max
    m.rigid_contact_margin = b.rigid_contact_margin
    build_rigid_contact_table(m, b)
    m.rigid_contact_torsional_friction = b.rigid_contact_torsional_friction
    m.rigid_contact_rolling_friction = b.rigid_contact_rolling_friction
    m.ground_plane = _array(b._ground_params["plane"], wp.float32, dev, rg)
    m.gravity = np.array(b.up_vector, dtype=np.float32) * b.gravity
    m.up_axis = b.up_axis
    m.up_vector = np.array(b.up_vector, dtype=np.float32)
    m.enable_tri_collisions = False
    return m
