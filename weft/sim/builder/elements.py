"""ModelBuilder part: particles, springs, FEM triangles, bending edges, tetrahedra and muscles."""

from __future__ import annotations

import warnings

import numpy as np

from ..model import PARTICLE_FLAG_ACTIVE, SimError


def _unit(a: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(a, axis=-1, keepdims=True)
    return a / np.where(n == 0.0, 1.0, n)


def _dihedral(x1, x2, x3, x4) -> np.ndarray:
    """Signed angle across the edge x3-x4 between triangles (x1, x3, x4) and (x2, x4, x3) (rows)."""
    n1 = _unit(np.cross(x3 - x1, x4 - x1))
    n2 = _unit(np.cross(x4 - x2, x3 - x2))
    e = _unit(x4 - x3)
    d = np.clip(np.sum(n1 * n2, axis=-1), -1.0, 1.0)
    return np.arccos(d) * np.sign(np.sum(np.cross(n2, n1) * e, axis=-1))


class ElementsMixin:
    """Particles and the elements between them."""

    def _check_particle(self, idx, name: str) -> None:
        if not (0 <= int(idx) < len(self.particle_q)):
            raise SimError(f"'{name}' = {idx} is not a particle index (the builder has {len(self.particle_q)})")

    def add_particle(self, pos, vel, mass: float, radius: float | None = None, flags=PARTICLE_FLAG_ACTIVE) -> int:
        """Add a particle; zero ``mass`` makes it kinematic. Returns its index."""
        if mass < 0.0:
            raise SimError(f"add_particle: 'mass' must be >= 0, got {mass}")
        self.particle_q.append(tuple(float(c) for c in pos))
        self.particle_qd.append(tuple(float(c) for c in vel))
        self.particle_mass.append(float(mass))
        self.particle_radius.append(float(self.default_particle_radius if radius is None else radius))
        self.particle_flags.append(int(flags))
        return len(self.particle_q) - 1

    def add_spring(self, i: int, j: int, ke: float, kd: float, control: float) -> None:
        """Add a damped spring between particles ``i`` and ``j`` with the current distance as rest length."""
        self._check_particle(i, "i")
        self._check_particle(j, "j")
        self.spring_indices.extend((int(i), int(j)))
        self.spring_stiffness.append(float(ke))
        self.spring_damping.append(float(kd))
        self.spring_control.append(float(control))
        d = np.subtract(self.particle_q[i], self.particle_q[j])
        self.spring_rest_length.append(float(np.sqrt(d @ d)))

    def add_particle_grid(self, pos, rot, vel, dim_x: int, dim_y: int, dim_z: int, cell_x: float, cell_y: float,
                          cell_z: float, mass: float, jitter: float, radius_mean: float | None = None,
                          radius_std: float = 0.0) -> None:
        """Add a dim_x x dim_y x dim_z block of particles, rotated by ``rot`` and moved to ``pos``, each jittered
        by up to ``jitter`` (seeded RNG, reproducible) with normally distributed radii."""
        from ..utils import _rotate

        radius_mean = self.default_particle_radius if radius_mean is None else radius_mean
        rng = np.random.default_rng(42)
        for z in range(dim_z):
            for y in range(dim_y):
                for x in range(dim_x):
                    p = _rotate(rot, (x * cell_x, y * cell_y, z * cell_z)) + np.asarray(pos) + rng.random(3) * jitter
                    r = radius_mean + rng.standard_normal() * radius_std if radius_std > 0.0 else radius_mean
                    self.add_particle(p, vel, mass, r)

    # -- triangles ---------------------------------------------------------------------------------------------

    def add_triangle(self, i: int, j: int, k: int, tri_ke: float | None = None, tri_ka: float | None = None, tri_kd: float | None = None,
                     tri_drag: float | None = None, tri_lift: float | None = None) -> float:
        """Add a membrane FEM triangle (i, j, k) with its current shape as rest shape. Returns its rest area;
        an inverted or degenerate triangle is skipped with a warning and 0 is returned."""
        areas = self.add_triangles(np.array([i]), np.array([j]), np.array([k]),
                                   None if tri_ke is None else [tri_ke], None if tri_ka is None else [tri_ka],
                                   None if tri_kd is None else [tri_kd], None if tri_drag is None else [tri_drag],
                                   None if tri_lift is None else [tri_lift])
        return areas[0]

    def add_triangles(self, i, j, k, tri_ke=None, tri_ka=None, tri_kd=None, tri_drag=None, tri_lift=None) -> list:
        """Add several FEM triangles (index arrays ``i, j, k``). Returns their rest areas (0 for skipped ones)."""
        i, j, k = (np.asarray(a, dtype=np.int64).reshape(-1) for a in (i, j, k))
        n = len(i)
        for name, arr in (("i", i), ("j", j), ("k", k)):
            if n and (arr.min() < 0 or arr.max() >= len(self.particle_q)):
                raise SimError(f"add_triangles: '{name}' holds an index outside [0, {len(self.particle_q)})")
        x = np.asarray(self.particle_q, dtype=np.float64)
        qp, rp = x[j] - x[i], x[k] - x[i]
        nrm = _unit(np.cross(qp, rp))
        e1 = _unit(qp)
        e2 = _unit(np.cross(nrm, e1))
        # rest shape in the triangle's own 2-D frame (e1, e2): D = R^T M
        D = np.stack([np.stack([np.sum(e1 * qp, -1), np.sum(e1 * rp, -1)], -1),
                      np.stack([np.sum(e2 * qp, -1), np.sum(e2 * rp, -1)], -1)], 1)
        areas = np.linalg.det(D) / 2.0 if n else np.zeros(0)
        valid = areas > 0.0
        if not valid.all():
            warnings.warn(f"add_triangles: {int((~valid).sum())} inverted or degenerate triangle(s) skipped",
                          stacklevel=2)
        areas = np.where(valid, areas, 0.0)
        D[~valid] = np.eye(2)
        inv_D = np.linalg.inv(D) if n else D

        def col(v, default):
            return np.full(n, default, dtype=np.float64) if v is None else np.asarray(v, dtype=np.float64)

        mats = np.stack([col(tri_ke, self.default_tri_ke), col(tri_ka, self.default_tri_ka),
                         col(tri_kd, self.default_tri_kd), col(tri_drag, self.default_tri_drag),
                         col(tri_lift, self.default_tri_lift)], -1) if n else np.zeros((0, 5))
        for t in np.nonzero(valid)[0]:
            self.tri_indices.append((int(i[t]), int(j[t]), int(k[t])))
            self.tri_poses.append(inv_D[t].tolist())
            self.tri_activations.append(0.0)
            self.tri_materials.append(tuple(float(m) for m in mats[t]))
            self.tri_areas.append(float(areas[t]))
        return areas.tolist()

    # -- bending edges -----------------------------------------------------------------------------------------

    def add_edge(self, i: int, j: int, k: int, l: int, rest: float | None = None, edge_ke: float | None = None,
                 edge_kd: float | None = None) -> None:
        """Add a bending element across the edge (k, l) shared by triangles (i, k, l) and (j, l, k); ``i`` or
        ``j`` = -1 marks a boundary edge (no bending force). The rest angle defaults to the current one."""
        self.add_edges([i], [j], [k], [l], None if rest is None else [rest],
                       None if edge_ke is None else [edge_ke], None if edge_kd is None else [edge_kd])

    def add_edges(self, i, j, k, l, rest=None, edge_ke=None, edge_kd=None) -> None:
        """Add several bending elements (index arrays ``i, j, k, l``, see :meth:`add_edge`)."""
        idx = np.stack([np.asarray(a, dtype=np.int64).reshape(-1) for a in (i, j, k, l)], -1)
        n = len(idx)
        x = np.asarray(self.particle_q, dtype=np.float64)
        x3, x4 = x[idx[:, 2]], x[idx[:, 3]]
        if rest is None:
            inner = (idx[:, 0] >= 0) & (idx[:, 1] >= 0)
            rest = np.zeros(n)
            if inner.any():
                rest[inner] = _dihedral(x[idx[inner, 0]], x[idx[inner, 1]], x3[inner], x4[inner])
        rest = np.asarray(rest, dtype=np.float64).reshape(-1)
        ke = np.full(n, self.default_edge_ke) if edge_ke is None else np.asarray(edge_ke, dtype=np.float64)
        kd = np.full(n, self.default_edge_kd) if edge_kd is None else np.asarray(edge_kd, dtype=np.float64)
        lengths = np.linalg.norm(x4 - x3, axis=-1)
        for t in range(n):
            self.edge_indices.append(tuple(int(v) for v in idx[t]))
            self.edge_rest_angle.append(float(rest[t]))
            self.edge_rest_length.append(float(lengths[t]))
            self.edge_bending_properties.append((float(ke[t]), float(kd[t])))

    # -- tetrahedra --------------------------------------------------------------------------------------------

    def add_tetrahedron(self, i: int, j: int, k: int, l: int, k_mu: float = 1.0e3,
                        k_lambda: float = 1.0e3, k_damp: float = 0.0) -> float:
        """Add a Neo-Hookean tetrahedron (Smith et al. 2018) with its current shape as rest shape.

        Returns the signed rest volume; an inverted or degenerate element (volume <= 0) is skipped with a
        warning, as warp.sim skips it.
        """
        for name, v in (("i", i), ("j", j), ("k", k), ("l", l)):
            self._check_particle(v, name)
        if k_lambda == 0.0:
            raise SimError("add_tetrahedron: 'k_lambda' must be non-zero (the volume term divides by it)")
        p, q, r, s = (np.asarray(self.particle_q[v], dtype=np.float64) for v in (i, j, k, l))
        Dm = np.stack([q - p, r - p, s - p], axis=1)
        volume = float(np.linalg.det(Dm) / 6.0)
        scale = max(np.abs(Dm).max(), 1e-30) ** 3
        if volume <= 1e-9 * scale:
            warnings.warn(f"add_tetrahedron: inverted or degenerate tetrahedron ({i}, {j}, {k}, {l}) with volume "
                          f"{volume:.3g} skipped", stacklevel=2)
            return volume
        self.tet_indices.append((int(i), int(j), int(k), int(l)))
        self.tet_poses.append(np.linalg.inv(Dm).tolist())
        self.tet_activations.append(0.0)
        self.tet_materials.append((float(k_mu), float(k_lambda), float(k_damp)))
        return volume

    # -- muscles -----------------------------------------------------------------------------------------------

    def add_muscle(self, bodies, positions, f0: float, lm: float, lt: float, lmax: float, pen: float) -> int:
        """Add a muscle through waypoints ``positions`` (local to ``bodies``). Returns the muscle index."""
        if len(bodies) != len(positions) or len(bodies) < 2:
            raise SimError("add_muscle: 'bodies' and 'positions' need the same length, at least 2")
        self.muscle_start.append(len(self.muscle_bodies))
        self.muscle_params.append((f0, lm, lt, lmax, pen))
        self.muscle_activations.append(0.0)
        for b, p in zip(bodies, positions):
            self.muscle_bodies.append(int(b))
            self.muscle_points.append(tuple(float(c) for c in p))
        return len(self.muscle_start) - 1

