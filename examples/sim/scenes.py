"""Scenes shared by the weft.sim examples, tests and benchmarks. Each ``build_*`` takes the ``wp`` module (weft, or
NVIDIA Warp 1.7 for the side-by-side benchmark) and returns a finalized model plus the scene's simulation settings,
so the same scene runs under both frameworks. Only NumPy is imported here."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SceneConfig:
    """Time stepping of a scene: frames per second, substeps per frame, number of frames."""

    fps: int = 60
    substeps: int = 32
    frames: int = 60

    @property
    def dt(self) -> float:
        """The substep."""
        return 1.0 / (self.fps * self.substeps)


def voxel_sphere_tets(radius: float = 0.5, cells: int = 10):
    """Tetrahedralise a voxelised sphere: the cells of a ``cells``^3 grid over [-r, r]^3 whose centres lie inside
    the sphere, each cube split into 6 tetrahedra around its main diagonal (Kuhn subdivision, conforming across
    faces). radius 0.5 and 10 cells give the seed's 823 vertices and 3,312 tetrahedra.

    Returns:
        ``(vertices, indices)``: (n, 3) float64 positions and a flat int32 list, 4 indices per positively oriented
        tetrahedron.
    """
    h = 2.0 * radius / cells
    centres = (np.arange(cells) + 0.5) * h - radius
    cx, cy, cz = np.meshgrid(centres, centres, centres, indexing="ij")
    inside = np.argwhere(cx**2 + cy**2 + cz**2 <= radius * radius)
    corner_id: dict[tuple[int, int, int], int] = {}
    vertices = []

    def vid(c):
        if c not in corner_id:
            corner_id[c] = len(vertices)
            vertices.append(np.array(c, dtype=np.float64) * h - radius)
        return corner_id[c]

    # the 6 monotone paths from corner (0,0,0) to (1,1,1): each is one tetrahedron
    paths = [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
    tets = []
    for i, j, k in inside:
        for path in paths:
            c = [int(i), int(j), int(k)]
            ids = [vid(tuple(c))]
            for axis in path:
                c[axis] += 1
                ids.append(vid(tuple(c)))
            tets.append(ids)
    verts = np.array(vertices)
    tets = np.array(tets, dtype=np.int64)
    # orient every tetrahedron positively
    a, b, c, d = (verts[tets[:, m]] for m in range(4))
    vol = np.einsum("ij,ij->i", np.cross(b - a, c - a), d - a)
    flip = vol < 0.0
    tets[flip, 2], tets[flip, 3] = tets[flip, 3].copy(), tets[flip, 2].copy()
    return verts, tets.reshape(-1).astype(np.int32)


@dataclass(frozen=True)
class ElasticSphere:
    """The seed's scene: a Neo-Hookean voxel sphere (radius 0.5, density 1000) dropped from 2 cm above the ground
    moving at (0.3, -1, 0) m/s, soft ground contact ke 1e4, kd 1, kf 1e2, mu 0.5; 60 fps x 32 substeps."""

    cells: int = 10
    radius: float = 0.5
    density: float = 1000.0
    k_mu: float = 5.0e5
    k_lambda: float = 2.0e5
    k_damp: float = 1.0
    height: float = 0.02
    velocity: tuple = (0.3, -1.0, 0.0)

    def build(self, wp, device="cpu", requires_grad: bool = False):
        """Build and finalize the model with ``wp`` (weft or warp)."""
        verts, idx = voxel_sphere_tets(self.radius, self.cells)
        builder = wp.sim.ModelBuilder()
        builder.add_soft_mesh(pos=wp.vec3(0.0, self.radius + self.height, 0.0), rot=wp.quat_identity(), scale=1.0,
                              vel=wp.vec3(*self.velocity), vertices=[wp.vec3(*v) for v in verts],
                              indices=idx.tolist(), density=self.density, k_mu=self.k_mu, k_lambda=self.k_lambda,
                              k_damp=self.k_damp)
        model = builder.finalize(device=device, requires_grad=requires_grad)
        model.ground = True
        model.soft_contact_ke = 1.0e4
        model.soft_contact_kd = 1.0
        model.soft_contact_kf = 1.0e2
        model.soft_contact_mu = 0.5
        return model


def build_cloth_drape(wp, n: int = 16, device="cpu", requires_grad: bool = False):
    """A square cloth (n x n cells, 1 m) dropped onto a static sphere (radius 0.3) above the ground."""
    builder = wp.sim.ModelBuilder()
    builder.add_cloth_grid(pos=wp.vec3(-0.5, 0.9, -0.5), rot=wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0),
                                                                                    np.pi * 0.5),
                           vel=wp.vec3(0.0, 0.0, 0.0), dim_x=n, dim_y=n, cell_x=1.0 / n, cell_y=1.0 / n,
                           mass=0.5 / (n + 1) ** 2, tri_ke=1.0e3, tri_ka=1.0e3, tri_kd=1.0e1, edge_ke=1.0e-2,
                           edge_kd=0.0, particle_radius=0.5 / n)
    builder.add_shape_sphere(-1, pos=(0.0, 0.4, 0.0), radius=0.3, ke=1.0e3, kd=1.0e1, kf=1.0e1, mu=0.5)
    model = builder.finalize(device=device, requires_grad=requires_grad)
    model.soft_contact_ke = 1.0e3
    model.soft_contact_kd = 1.0e1
    model.soft_contact_kf = 1.0e1
    model.soft_contact_mu = 0.5
    model.soft_contact_margin = 0.02
    return model


def build_granular(wp, n: int = 8, device="cpu"):
    """n^3 particles (radius 2.5 cm) falling into a static box made of plane-free walls: a box shape as the floor
    and particle-particle contacts through the hash grid."""
    radius = 0.025
    builder = wp.sim.ModelBuilder()
    builder.add_particle_grid(pos=wp.vec3(-0.1, 0.3, -0.1), rot=wp.quat_identity(), vel=wp.vec3(0.0, 0.0, 0.0),
                              dim_x=n, dim_y=n, dim_z=n, cell_x=2.0 * radius, cell_y=2.0 * radius,
                              cell_z=2.0 * radius, mass=0.1, jitter=radius * 0.1, radius_mean=radius)
    model = builder.finalize(device=device)
    model.particle_ke = 1.0e3
    model.particle_kd = 1.0e1
    model.particle_kf = 10.0
    model.particle_mu = 0.5
    model.soft_contact_ke = 1.0e3
    model.soft_contact_kd = 1.0e1
    model.soft_contact_kf = 10.0
    return model


def build_rigid_pile(wp, n: int = 3, device="cpu", requires_grad: bool = False):
    """n x n columns of three rigid bodies each (a box, a sphere, a capsule, rotated) dropped onto the ground and onto
    each other: rigid shape-shape and shape-ground contacts with friction; 60 fps x 20 substeps."""
    builder = wp.sim.ModelBuilder()
    rng = np.random.default_rng(42)
    spacing = 0.6
    for i in range(n):
        for j in range(n):
            x, z = (i - 0.5 * (n - 1)) * spacing, (j - 0.5 * (n - 1)) * spacing
            for level in range(3):
                axis = rng.normal(size=3)
                axis /= np.linalg.norm(axis)
                rot = wp.quat_from_axis_angle(wp.vec3(*axis), float(rng.uniform(0.0, np.pi)))
                body = builder.add_body(origin=wp.transform(wp.vec3(x, 0.3 + 0.45 * level, z), rot))
                kind = (i + j + level) % 3
                if kind == 0:
                    builder.add_shape_box(body, hx=0.15, hy=0.1, hz=0.12, density=500.0)
                elif kind == 1:
                    builder.add_shape_sphere(body, radius=0.12, density=500.0)
                else:
                    builder.add_shape_capsule(body, radius=0.08, half_height=0.12, density=500.0)
    return builder.finalize(device=device, requires_grad=requires_grad)


WARP172_QUADRUPED = "/opt/warp172/lib/python3.11/site-packages/warp/examples/assets/quadruped.urdf"


def build_quadruped(wp, n_envs: int = 8, device="cpu", urdf: str = WARP172_QUADRUPED):
    """warp.sim 1.7.2's quadruped example scene (its own URDF from the installed wheel): ``n_envs`` floating-base
    quadrupeds with position-driven legs standing on the ground, for ``FeatherstoneIntegrator``; 100 fps x 10."""
    import math

    art = wp.sim.ModelBuilder()
    wp.sim.parse_urdf(urdf, art, xform=wp.transform([0.0, 0.7, 0.0], wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0),
                                                                                              -math.pi * 0.5)),
                      floating=True, density=1000, armature=0.01, stiffness=200, damping=1, contact_ke=1.0e4,
                      contact_kd=1.0e2, contact_kf=1.0e2, contact_mu=1.0, limit_ke=1.0e4, limit_kd=1.0e1)
    builder = wp.sim.ModelBuilder()
    pose = [0.2, 0.4, -0.6, -0.2, -0.4, 0.6, -0.2, 0.4, -0.6, 0.2, -0.4, 0.6]
    side = math.ceil(math.sqrt(n_envs))
    for i in range(n_envs):
        builder.add_builder(art, xform=wp.transform(((i % side) * 1.5, 0.0, (i // side) * 1.5), wp.quat_identity()))
        builder.joint_q[-12:] = pose
        builder.joint_axis_mode = [wp.sim.JOINT_MODE_TARGET_POSITION] * len(builder.joint_axis_mode)
        builder.joint_act[-12:] = pose
    model = builder.finalize(device=device)
    model.ground = True
    return model
