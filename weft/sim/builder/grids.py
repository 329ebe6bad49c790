"""ModelBuilder part: cloth and soft-body generators (grids and meshes)."""

from __future__ import annotations

import numpy as np

from ..model import PARTICLE_FLAG_ACTIVE, SimError
from ..utils import MeshAdjacency, _rotate


def _pick(value, default):
    return default if value is None else value


class _BoundaryFaces:
    """Faces seen once (the boundary of a tet mesh): a face added twice cancels."""

    def __init__(self):
        self.faces: dict[tuple, tuple] = {}

    def add(self, i: int, j: int, k: int) -> None:
        key = tuple(sorted((i, j, k)))
        if key in self.faces:
            del self.faces[key]
        else:
            self.faces[key] = (i, j, k)


class GridsMixin:
    """Cloth grids and meshes, tetrahedral grids and meshes."""

    def _edges_and_springs(self, start_tri: int, edge_ke, edge_kd, add_springs, spring_ke, spring_kd) -> None:
        adj = MeshAdjacency(self.tri_indices[start_tri:])
        edges = np.array([(e.o0, e.o1, e.v0, e.v1) for e in adj.edges.values()], dtype=np.int64).reshape(-1, 4)
        n = len(edges)
        self.add_edges(edges[:, 0], edges[:, 1], edges[:, 2], edges[:, 3], edge_ke=[edge_ke] * n,
                       edge_kd=[edge_kd] * n)
        if add_springs:
            pairs = set()
            for i, j, k, l in edges.tolist():
                pairs.add((min(k, l), max(k, l)))
                if i != -1:
                    pairs.add((min(i, k), max(i, k)))
                    pairs.add((min(i, l), max(i, l)))
                if j != -1:
                    pairs.add((min(j, k), max(j, k)))
                    pairs.add((min(j, l), max(j, l)))
                if i != -1 and j != -1:
                    pairs.add((min(i, j), max(i, j)))
            for i, j in pairs:  # set order, as warp.sim
                self.add_spring(i, j, spring_ke, spring_kd, control=0.0)

    def add_cloth_grid(self, pos, rot, vel, dim_x: int, dim_y: int, cell_x: float, cell_y: float, mass: float,
                       reverse_winding: bool = False, fix_left: bool = False, fix_right: bool = False,
                       fix_top: bool = False, fix_bottom: bool = False, tri_ke: float | None = None, tri_ka: float | None = None,
                       tri_kd: float | None = None, tri_drag: float | None = None, tri_lift: float | None = None, edge_ke: float | None = None,
                       edge_kd: float | None = None, add_springs: bool = False, spring_ke: float | None = None,
                       spring_kd: float | None = None, particle_radius: float | None = None) -> None:
        """Add a (dim_x+1) x (dim_y+1) planar cloth in the local XY plane, rotated by ``rot`` and moved to
        ``pos``: particles of mass ``mass``, two FEM triangles per cell, a bending element per interior edge and
        optionally springs. ``fix_*`` makes that border kinematic (zero mass, inactive)."""
        if dim_x < 1 or dim_y < 1:
            raise SimError(f"add_cloth_grid: 'dim_x' and 'dim_y' must be >= 1, got {dim_x}, {dim_y}")
        radius = _pick(particle_radius, self.default_particle_radius)
        start = len(self.particle_q)
        start_tri = len(self.tri_indices)

        def gid(x, y):
            return start + y * (dim_x + 1) + x

        tris = []
        for y in range(dim_y + 1):
            for x in range(dim_x + 1):
                p = _rotate(rot, (x * cell_x, y * cell_y, 0.0)) + np.asarray(pos, dtype=np.float64)
                fixed = (x == 0 and fix_left) or (x == dim_x and fix_right) or (y == 0 and fix_bottom) or \
                        (y == dim_y and fix_top)
                flags = int(PARTICLE_FLAG_ACTIVE) & ~int(PARTICLE_FLAG_ACTIVE) if fixed else int(PARTICLE_FLAG_ACTIVE)
                self.add_particle(p, vel, 0.0 if fixed else mass, radius=radius, flags=flags)
                if x > 0 and y > 0:
                    if reverse_winding:
                        tris += [(gid(x - 1, y - 1), gid(x, y - 1), gid(x, y)), (gid(x - 1, y - 1), gid(x, y),
                                                                               gid(x - 1, y))]
                    else:
                        tris += [(gid(x - 1, y - 1), gid(x, y - 1), gid(x - 1, y)), (gid(x, y - 1), gid(x, y),
                                                                                   gid(x - 1, y))]
        t = np.array(tris, dtype=np.int64)
        n = len(t)
        self.add_triangles(t[:, 0], t[:, 1], t[:, 2], [_pick(tri_ke, self.default_tri_ke)] * n,
                           [_pick(tri_ka, self.default_tri_ka)] * n, [_pick(tri_kd, self.default_tri_kd)] * n,
                           [_pick(tri_drag, self.default_tri_drag)] * n, [_pick(tri_lift, self.default_tri_lift)] * n)
        self._edges_and_springs(start_tri, _pick(edge_ke, self.default_edge_ke), _pick(edge_kd, self.default_edge_kd),
                                add_springs, _pick(spring_ke, self.default_spring_ke),
                                _pick(spring_kd, self.default_spring_kd))

    def add_cloth_mesh(self, pos, rot, scale: float, vel, vertices, indices, density: float, edge_callback=None,
                       face_callback=None, tri_ke: float | None = None, tri_ka: float | None = None, tri_kd: float | None = None,
                       tri_drag: float | None = None, tri_lift: float | None = None, edge_ke: float | None = None, edge_kd: float | None = None,
                       add_springs: bool = False, spring_ke: float | None = None, spring_kd: float | None = None,
                       particle_radius: float | None = None) -> None:
        """Add a cloth from a two-manifold triangle mesh: one FEM triangle per face, one bending element per edge;
        particle masses from ``density`` (per area) spread over each face's vertices."""
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        if idx.size % 3:
            raise SimError(f"add_cloth_mesh: 'indices' has {idx.size} entries, not a multiple of 3")
        radius = _pick(particle_radius, self.default_particle_radius)
        start = len(self.particle_q)
        start_tri = len(self.tri_indices)
        for v in np.asarray(vertices, dtype=np.float64).reshape(-1, 3):
            self.add_particle(_rotate(rot, v * scale) + np.asarray(pos, dtype=np.float64), vel, 0.0, radius=radius)
        t = idx.reshape(-1, 3) + start
        n = len(t)
        areas = self.add_triangles(t[:, 0], t[:, 1], t[:, 2], [_pick(tri_ke, self.default_tri_ke)] * n,
                                   [_pick(tri_ka, self.default_tri_ka)] * n, [_pick(tri_kd, self.default_tri_kd)] * n,
                                   [_pick(tri_drag, self.default_tri_drag)] * n,
                                   [_pick(tri_lift, self.default_tri_lift)] * n)
        for f in range(n):
            for v in t[f]:
                self.particle_mass[v] += density * areas[f] / 3.0
        self._edges_and_springs(start_tri, _pick(edge_ke, self.default_edge_ke), _pick(edge_kd, self.default_edge_kd),
                                add_springs, _pick(spring_ke, self.default_spring_ke),
                                _pick(spring_kd, self.default_spring_kd))

    def _surface_triangles(self, faces: _BoundaryFaces, tri_ke, tri_ka, tri_kd, tri_drag, tri_lift) -> None:
        if not faces.faces:
            return
        t = np.array(list(faces.faces.values()), dtype=np.int64)
        n = len(t)
        self.add_triangles(t[:, 0], t[:, 1], t[:, 2], [_pick(tri_ke, self.default_tri_ke)] * n,
                           [_pick(tri_ka, self.default_tri_ka)] * n, [_pick(tri_kd, self.default_tri_kd)] * n,
                           [_pick(tri_drag, self.default_tri_drag)] * n, [_pick(tri_lift, self.default_tri_lift)] * n)

    def add_soft_grid(self, pos, rot, vel, dim_x: int, dim_y: int, dim_z: int, cell_x: float, cell_y: float,
                      cell_z: float, density: float, k_mu: float, k_lambda: float, k_damp: float,
                      fix_left: bool = False, fix_right: bool = False, fix_top: bool = False,
                      fix_bottom: bool = False, tri_ke: float | None = None, tri_ka: float | None = None, tri_kd: float | None = None,
                      tri_drag: float | None = None, tri_lift: float | None = None) -> None:
        """Add a box of dim_x x dim_y x dim_z hexahedral cells, each split into 5 Neo-Hookean tetrahedra (in
        alternating orientation), with FEM triangles on its surface. Each particle has mass
        ``density * cell volume``; ``fix_*`` makes that face kinematic (zero mass)."""
        if min(dim_x, dim_y, dim_z) < 1:
            raise SimError(f"add_soft_grid: dims must be >= 1, got {dim_x}, {dim_y}, {dim_z}")
        start = len(self.particle_q)
        mass = cell_x * cell_y * cell_z * density
        for z in range(dim_z + 1):
            for y in range(dim_y + 1):
                for x in range(dim_x + 1):
                    fixed = (fix_left and x == 0) or (fix_right and x == dim_x) or (fix_top and y == dim_y) or \
                            (fix_bottom and y == 0)
                    p = _rotate(rot, (x * cell_x, y * cell_y, z * cell_z)) + np.asarray(pos, dtype=np.float64)
                    self.add_particle(p, vel, 0.0 if fixed else mass)

        def gid(x, y, z):
            return start + (dim_x + 1) * (dim_y + 1) * z + (dim_x + 1) * y + x

        faces = _BoundaryFaces()

        def tet(i, j, k, l):
            self.add_tetrahedron(i, j, k, l, k_mu, k_lambda, k_damp)
            faces.add(i, k, j)
            faces.add(j, k, l)
            faces.add(i, j, l)
            faces.add(i, l, k)

        for z in range(dim_z):
            for y in range(dim_y):
                for x in range(dim_x):
                    v0, v1, v2, v3 = gid(x, y, z), gid(x + 1, y, z), gid(x + 1, y, z + 1), gid(x, y, z + 1)
                    v4, v5, v6, v7 = gid(x, y + 1, z), gid(x + 1, y + 1, z), gid(x + 1, y + 1, z + 1), \
                        gid(x, y + 1, z + 1)
                    if (x & 1) ^ (y & 1) ^ (z & 1):
                        for a in ((v0, v1, v4, v3), (v2, v3, v6, v1), (v5, v4, v1, v6), (v7, v6, v3, v4),
                                  (v4, v1, v6, v3)):
                            tet(*a)
                    else:
                        for a in ((v1, v2, v5, v0), (v3, v0, v7, v2), (v4, v7, v0, v5), (v6, v5, v2, v7),
                                  (v5, v2, v7, v0)):
                            tet(*a)
        self._surface_triangles(faces, tri_ke, tri_ka, tri_kd, tri_drag, tri_lift)

    def add_soft_mesh(self, pos, rot, scale: float, vel, vertices, indices, density: float, k_mu: float,
                      k_lambda: float, k_damp: float, tri_ke: float | None = None, tri_ka: float | None = None,
                      tri_kd: float | None = None, tri_drag: float | None = None, tri_lift: float | None = None) -> None:
        """Add a soft body from a tetrahedral mesh (``indices``: 4 per tet, flat): Neo-Hookean tets, FEM
        triangles on the boundary, particle masses ``density * volume / 4`` per tet vertex."""
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        if idx.size % 4:
            raise SimError(f"add_soft_mesh: 'indices' has {idx.size} entries, not a multiple of 4")
        verts = np.asarray(vertices, dtype=np.float64).reshape(-1, 3)
        if idx.size and (idx.min() < 0 or idx.max() >= len(verts)):
            raise SimError(f"add_soft_mesh: 'indices' refers to vertices outside [0, {len(verts)})")
        start = len(self.particle_q)
        for v in verts:
            self.add_particle(_rotate(rot, v * scale) + np.asarray(pos, dtype=np.float64), vel, 0.0)
        faces = _BoundaryFaces()
        for t in idx.reshape(-1, 4) + start:
            v0, v1, v2, v3 = (int(c) for c in t)
            volume = self.add_tetrahedron(v0, v1, v2, v3, k_mu, k_lambda, k_damp)
            if volume > 0.0 and len(self.tet_indices) and self.tet_indices[-1] == (v0, v1, v2, v3):
                for v in (v0, v1, v2, v3):
                    self.particle_mass[v] += density * volume / 4.0
                faces.add(v0, v2, v1)
                faces.add(v1, v2, v3)
                faces.add(v0, v1, v3)
                faces.add(v0, v3, v2)
        self._surface_triangles(faces, tri_ke, tri_ka, tri_kd, tri_drag, tri_lift)
