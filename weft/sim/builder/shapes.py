"""ModelBuilder part: rigid bodies, collision shapes, their mass properties and the ground plane."""

from __future__ import annotations

import math

import numpy as np

import weft as wp

from .. import inertia as I_
from ..model import GEO_BOX, GEO_CAPSULE, GEO_CONE, GEO_CYLINDER, GEO_MESH, GEO_PLANE, GEO_SDF, GEO_SPHERE, SimError


def compute_shape_mass(type, scale, src, density, is_solid, thickness):
    """Mass, centre of mass and inertia of a shape of the given type, scale and density (hollow shapes: a wall
    of ``thickness``). Planes and zero density give zero mass."""
    if density == 0.0 or type == GEO_PLANE:
        return 0.0, wp.vec3(), wp.mat33()

    def hollow(solid, inner):
        if is_solid:
            return solid
        return solid[0] - inner[0], solid[1], wp.mat33(*(np.array(solid[2]) - np.array(inner[2])).reshape(-1))

    if type == GEO_SPHERE:
        return hollow(I_.compute_sphere_inertia(density, scale[0]),
                      I_.compute_sphere_inertia(density, scale[0] - thickness) if not is_solid else None)
    if type == GEO_BOX:
        w, h, d = (2.0 * s for s in scale)
        return hollow(I_.compute_box_inertia(density, w, h, d),
                      None if is_solid else I_.compute_box_inertia(density, w - thickness, h - thickness,
                                                                   d - thickness))
    fns = {GEO_CAPSULE: I_.compute_capsule_inertia, GEO_CYLINDER: I_.compute_cylinder_inertia,
           GEO_CONE: I_.compute_cone_inertia}
    if type in fns:
        r, h = scale[0], 2.0 * scale[1]
        return hollow(fns[type](density, r, h),
                      None if is_solid else fns[type](density, r - thickness, h - 2.0 * thickness))
    if type in (GEO_MESH, GEO_SDF):
        if src.has_inertia and src.mass > 0.0 and src.is_solid == is_solid:
            sx, sy, sz = scale
            ratio = sx * sy * sz * density
            Im = np.array(src.I, dtype=np.float64).reshape(3, 3)
            out = np.array([[Im[0, 0] * (sy**2 + sz**2) / 2, Im[0, 1] * sx * sy, Im[0, 2] * sx * sz],
                            [Im[0, 1] * sx * sy, Im[1, 1] * (sx**2 + sz**2) / 2, Im[1, 2] * sy * sz],
                            [Im[0, 2] * sx * sz, Im[1, 2] * sy * sz, Im[2, 2] * (sx**2 + sy**2) / 2]]) * ratio
            com = np.array(src.com) * np.array(scale)
            return src.mass * ratio, wp.vec3(*com), wp.mat33(*out.reshape(-1))
        if type == GEO_MESH:
            m, c, Im, _ = I_.compute_mesh_inertia(density, np.asarray(src.vertices) * np.asarray(scale), src.indices,
                                                  is_solid, thickness)
            return m, c, Im
    raise SimError(f"compute_shape_mass: unsupported shape type {type}")


class ShapesMixin:
    """Bodies, shapes and the ground plane."""

    def add_articulation(self) -> None:
        """Start a new articulation at the next joint."""
        self.articulation_start.append(len(self.joint_type))

    def add_body(self, origin=None, armature: float = 0.0, com=None, I_m=None, m: float = 0.0,
                 name: str | None = None) -> int:
        """Add a rigid body at ``origin`` (a transform); zero mass makes it kinematic. Returns its index."""
        origin = wp.transform() if origin is None else wp.transform(*origin) if not isinstance(origin,
                                                                                             type(wp.transform())) \
            else origin
        I_m = np.zeros((3, 3)) if I_m is None else np.array(I_m, dtype=np.float64).reshape(3, 3)
        inertia = I_m + np.eye(3) * armature
        body = len(self.body_mass)
        self.body_inertia.append(wp.mat33(*inertia.reshape(-1)))
        self.body_mass.append(float(m))
        self.body_com.append(wp.vec3() if com is None else wp.vec3(*com))
        self.body_inv_mass.append(1.0 / m if m > 0.0 else 0.0)
        inv = np.linalg.inv(inertia) if np.any(inertia) else inertia
        self.body_inv_inertia.append(wp.mat33(*np.asarray(inv).reshape(-1)))
        self.body_q.append(origin)
        self.body_qd.append(wp.spatial_vector())
        self.body_name.append(name or f"body {body}")
        self.body_shapes[body] = []
        return body

    def _update_body_mass(self, i, m, I, p, q) -> None:
        if i == -1:
            return
        new_mass = self.body_mass[i] + m
        if new_mass == 0.0:
            return
        com = np.array(self.body_com[i], dtype=np.float64)
        pv = np.array(p, dtype=np.float64)
        new_com = (com * self.body_mass[i] + pv * m) / new_mass
        inertia = np.array(I_.transform_inertia(self.body_mass[i], self.body_inertia[i], new_com - com,
                                                (0.0, 0.0, 0.0, 1.0))).reshape(3, 3) + \
            np.array(I_.transform_inertia(m, I, new_com - pv, q)).reshape(3, 3)
        self.body_mass[i] = new_mass
        self.body_inertia[i] = wp.mat33(*inertia.reshape(-1))
        self.body_com[i] = wp.vec3(*new_com)
        self.body_inv_mass[i] = 1.0 / new_mass
        inv = np.linalg.inv(inertia) if np.any(inertia) else inertia
        self.body_inv_inertia[i] = wp.mat33(*np.asarray(inv).reshape(-1))

    def _shape_radius(self, type, scale, src) -> float:
        if type == GEO_SPHERE:
            return scale[0]
        if type == GEO_BOX:
            return float(np.linalg.norm(scale))
        if type in (GEO_CAPSULE, GEO_CYLINDER, GEO_CONE):
            return scale[0] + scale[1]
        if type == GEO_MESH:
            return float(np.linalg.norm(np.max(np.abs(src.vertices), axis=0) * np.max(scale)))
        if type == GEO_PLANE:
            return float(np.linalg.norm(scale)) if scale[0] > 0.0 and scale[1] > 0.0 else 1.0e6
        return 10.0

    def _add_shape(self, body, pos, rot, type, scale, src=None, density=None, ke=None, kd=None, kf=None, ka=None,
                   mu=None, restitution=None, thickness=None, is_solid=True, collision_group=-1,
                   collision_filter_parent=True, has_ground_collision=True, has_shape_collision=True,
                   is_visible=True) -> int:
        if body != -1 and not (0 <= body < len(self.body_q)):
            raise SimError(f"'body' = {body} is not a body index (use -1 for a static shape)")
        shape = len(self.shape_geo_type)
        self.shape_body.append(body)
        if body in self.body_shapes:
            for other in self.body_shapes[body]:
                self.shape_collision_filter_pairs.add((other, shape))
            self.body_shapes[body].append(shape)
        else:
            self.body_shapes[body] = [shape]
        d = self.default_shape_density if density is None else density
        thickness = self.default_shape_thickness if thickness is None else thickness
        self.shape_transform.append(wp.transform(wp.vec3(*pos), wp.quat(*rot)))
        self.shape_visible.append(is_visible)
        self.shape_geo_type.append(type)
        self.shape_geo_scale.append((float(scale[0]), float(scale[1]), float(scale[2])))
        self.shape_geo_src.append(src)
        self.shape_geo_thickness.append(thickness)
        self.shape_geo_is_solid.append(is_solid)
        for attr, value, default in (("ke", ke, self.default_shape_ke), ("kd", kd, self.default_shape_kd),
                                     ("kf", kf, self.default_shape_kf), ("ka", ka, self.default_shape_ka),
                                     ("mu", mu, self.default_shape_mu),
                                     ("restitution", restitution, self.default_shape_restitution)):
            getattr(self, "shape_material_" + attr).append(float(default if value is None else value))
        self.shape_collision_group.append(collision_group)
        self.shape_collision_group_map.setdefault(collision_group, []).append(shape)
        self.last_collision_group = max(self.last_collision_group, collision_group)
        self.shape_collision_radius.append(self._shape_radius(type, scale, src))
        if collision_filter_parent and body > -1 and body in self.joint_parents:
            for parent in self.joint_parents[body]:
                if parent > -1:
                    for ps in self.body_shapes[parent]:
                        self.shape_collision_filter_pairs.add((ps, shape))
        self.shape_ground_collision.append(False if body == -1 else has_ground_collision)
        self.shape_shape_collision.append(has_shape_collision)
        if d > 0.0:
            m, c, Im = compute_shape_mass(type, scale, src, d, is_solid, thickness)
            com_body = wp.transform_point(wp.transform(wp.vec3(*pos), wp.quat(*rot)), c)
            self._update_body_mass(body, m, Im, com_body, rot)
        return shape

    def add_shape_plane(self, plane=(0.0, 1.0, 0.0, 0.0), pos=None, rot=None, width: float = 10.0,
                        length: float = 10.0, body: int = -1, ke=None, kd=None, kf=None, ka=None, mu=None,
                        restitution=None, thickness=None, has_ground_collision: bool = False,
                        has_shape_collision: bool = True, is_visible: bool = True, collision_group: int = -1) -> int:
        """Add a plane (a*x + b*y + c*z + d = 0, or ``pos``/``rot`` with local normal +Y); ``width``/``length``
        are its half extents along local X/Z, 0 for infinite."""
        if pos is None or rot is None:
            normal = np.array(plane[:3], dtype=np.float64)
            normal /= np.linalg.norm(normal)
            pos = plane[3] * normal
            if np.allclose(normal, (0.0, 1.0, 0.0)):
                rot = (0.0, 0.0, 0.0, 1.0)
            else:
                c = np.cross(normal, (0.0, 1.0, 0.0))
                angle = float(np.arcsin(np.linalg.norm(c)))
                axis = np.abs(c) / np.linalg.norm(c)
                rot = wp.quat_from_axis_angle(wp.vec3(*axis), angle)
        return self._add_shape(body, pos, rot, GEO_PLANE, (width, length, 0.0), None, 0.0, ke, kd, kf, ka, mu,
                               restitution, thickness, has_ground_collision=has_ground_collision,
                               has_shape_collision=has_shape_collision, is_visible=is_visible,
                               collision_group=collision_group)

    def add_shape_sphere(self, body, pos=(0.0, 0.0, 0.0), rot=(0.0, 0.0, 0.0, 1.0), radius: float = 1.0,
                         density=None, ke=None, kd=None, kf=None, ka=None, mu=None, restitution=None,
                         is_solid: bool = True, thickness=None, has_ground_collision: bool = True,
                         has_shape_collision: bool = True, collision_group: int = -1, is_visible: bool = True) -> int:
        """Add a sphere of ``radius`` to ``body`` (-1: static)."""
        t = self.default_shape_thickness if thickness is None else thickness
        return self._add_shape(body, pos, rot, GEO_SPHERE, (radius, 0.0, 0.0), None, density, ke, kd, kf, ka, mu,
                               restitution, t + radius, is_solid, collision_group=collision_group,
                               has_ground_collision=has_ground_collision, has_shape_collision=has_shape_collision,
                               is_visible=is_visible)

    def add_shape_box(self, body: int, pos=(0.0, 0.0, 0.0), rot=(0.0, 0.0, 0.0, 1.0), hx: float = 0.5,
                      hy: float = 0.5, hz: float = 0.5, density=None, ke=None, kd=None, kf=None, ka=None, mu=None,
                      restitution=None, is_solid: bool = True, thickness=None, has_ground_collision: bool = True,
                      has_shape_collision: bool = True, collision_group: int = -1, is_visible: bool = True) -> int:
        """Add a box of half extents ``hx, hy, hz`` to ``body``."""
        return self._add_shape(body, pos, rot, GEO_BOX, (hx, hy, hz), None, density, ke, kd, kf, ka, mu,
                               restitution, thickness, is_solid, collision_group=collision_group,
                               has_ground_collision=has_ground_collision, has_shape_collision=has_shape_collision,
                               is_visible=is_visible)

    def _axis_rot(self, rot, up_axis: int):
        sqh = math.sqrt(0.5)
        q = wp.quat(*rot)
        if up_axis == 0:
            q = wp.mul(q, wp.quat(0.0, 0.0, -sqh, sqh))
        elif up_axis == 2:
            q = wp.mul(q, wp.quat(sqh, 0.0, 0.0, sqh))
        return q

    def add_shape_capsule(self, body: int, pos=(0.0, 0.0, 0.0), rot=(0.0, 0.0, 0.0, 1.0), radius: float = 1.0,
                          half_height: float = 0.5, up_axis: int = 1, density=None, ke=None, kd=None, kf=None,
                          ka=None, mu=None, restitution=None, is_solid: bool = True, thickness=None,
                          has_ground_collision: bool = True, has_shape_collision: bool = True,
                          collision_group: int = -1, is_visible: bool = True) -> int:
        """Add a capsule (axis ``up_axis``, Y by default) of ``radius`` and cylinder ``half_height``."""
        t = self.default_shape_thickness if thickness is None else thickness
        return self._add_shape(body, pos, self._axis_rot(rot, up_axis), GEO_CAPSULE, (radius, half_height, 0.0),
                               None, density, ke, kd, kf, ka, mu, restitution, t + radius, is_solid,
                               collision_group=collision_group, has_ground_collision=has_ground_collision,
                               has_shape_collision=has_shape_collision, is_visible=is_visible)

    def add_shape_cylinder(self, body: int, pos=(0.0, 0.0, 0.0), rot=(0.0, 0.0, 0.0, 1.0), radius: float = 1.0,
                           half_height: float = 0.5, up_axis: int = 1, density=None, ke=None, kd=None, kf=None,
                           ka=None, mu=None, restitution=None, is_solid: bool = True, thickness=None,
                           has_ground_collision: bool = True, has_shape_collision: bool = True,
                           collision_group: int = -1, is_visible: bool = True) -> int:
        """Add a cylinder (axis ``up_axis``) of ``radius`` and ``half_height``."""
        return self._add_shape(body, pos, self._axis_rot(rot, up_axis), GEO_CYLINDER, (radius, half_height, 0.0),
                               None, density, ke, kd, kf, ka, mu, restitution, thickness, is_solid,
                               collision_group=collision_group, has_ground_collision=has_ground_collision,
                               has_shape_collision=has_shape_collision, is_visible=is_visible)

    def add_shape_cone(self, body: int, pos=(0.0, 0.0, 0.0), rot=(0.0, 0.0, 0.0, 1.0), radius: float = 1.0,
                       half_height: float = 0.5, up_axis: int = 1, density=None, ke=None, kd=None, kf=None, ka=None,
                       mu=None, restitution=None, is_solid: bool = True, thickness=None,
                       has_ground_collision: bool = True, has_shape_collision: bool = True,
                       collision_group: int = -1, is_visible: bool = True) -> int:
        """Add a cone (axis ``up_axis``, apex up) of base ``radius`` and ``half_height``."""
        return self._add_shape(body, pos, self._axis_rot(rot, up_axis), GEO_CONE, (radius, half_height, 0.0), None,
                               density, ke, kd, kf, ka, mu, restitution, thickness, is_solid,
                               collision_group=collision_group, has_ground_collision=has_ground_collision,
                               has_shape_collision=has_shape_collision, is_visible=is_visible)

    def add_shape_mesh(self, body: int, pos=None, rot=None, mesh=None, scale=None, density=None, ke=None, kd=None,
                       kf=None, ka=None, mu=None, restitution=None, is_solid: bool = True, thickness=None,
                       has_ground_collision: bool = True, has_shape_collision: bool = True,
                       collision_group: int = -1, is_visible: bool = True) -> int:
        """Add a triangle-mesh shape (a :class:`weft.sim.Mesh`) scaled by ``scale``."""
        if mesh is None:
            raise SimError("add_shape_mesh: 'mesh' (a weft.sim.Mesh) is required")
        return self._add_shape(body, (0.0, 0.0, 0.0) if pos is None else pos, (0.0, 0.0, 0.0, 1.0) if rot is None
                               else rot, GEO_MESH, (1.0, 1.0, 1.0) if scale is None else scale, mesh, density, ke, kd,
                               kf, ka, mu, restitution, thickness, is_solid, collision_group=collision_group,
                               has_ground_collision=has_ground_collision, has_shape_collision=has_shape_collision,
                               is_visible=is_visible)

    def set_ground_plane(self, normal=None, offset: float = 0.0, ke=None, kd=None, kf=None, mu=None,
                         restitution=None) -> None:
        """Set the ground plane (normal defaults to the up vector) and its contact material."""
        normal = tuple(self.up_vector) if normal is None else tuple(normal)
        self._ground_params = {
            "plane": (*normal, offset), "width": 0.0, "length": 0.0,
            "ke": self.default_shape_ke if ke is None else ke, "kd": self.default_shape_kd if kd is None else kd,
            "kf": self.default_shape_kf if kf is None else kf, "mu": self.default_shape_mu if mu is None else mu,
            "restitution": self.default_shape_restitution if restitution is None else restitution,
        }

    def _create_ground_plane(self) -> None:
        ground = self.add_shape_plane(**self._ground_params)
        self._ground_created = True
        for i in range(len(self.shape_geo_type) - 1):
            self.shape_collision_filter_pairs.add((i, ground))
