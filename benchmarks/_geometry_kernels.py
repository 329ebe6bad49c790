"""Geometry benchmark kernels, executed with ``wp`` bound to weft or to Warp (see _bench_util.load_kernels)."""

# no `from __future__ import annotations`: kernel annotations are evaluated where defined
import numpy as np

try:
    wp  # noqa: B018 - injected by the loader
except NameError:  # imported directly: weft
    import weft as wp


def sphere_mesh(n_tris: int, seed: int = 0):
    """A closed UV sphere of about n_tris triangles, radially perturbed (float32 points, flat int32 indices)."""
    n_lon = max(4, int(np.sqrt(n_tris / 2)))
    n_lat = max(3, n_tris // (2 * n_lon) + 1)
    th = np.pi * np.arange(1, n_lat) / n_lat
    ph = 2 * np.pi * np.arange(n_lon) / n_lon
    ring = np.stack([np.outer(np.sin(th), np.cos(ph)), np.outer(np.sin(th), np.sin(ph)),
                     np.outer(np.cos(th), np.ones(n_lon))], axis=-1).reshape(-1, 3)
    pts = np.vstack([[0, 0, 1], ring, [0, 0, -1]])
    pts *= 1.0 + 0.02 * np.random.default_rng(seed).standard_normal((len(pts), 1))
    last = len(pts) - 1
    j = np.arange(n_lon)
    i = np.arange(1, n_lat - 1)[:, None]

    def at(ii, jj):
        return 1 + (ii - 1) * n_lon + jj % n_lon

    caps_top = np.stack([np.zeros(n_lon, int), at(1, j), at(1, j + 1)], 1)
    quads_a = np.stack([at(i, j), at(i + 1, j), at(i, j + 1)], -1).reshape(-1, 3)
    quads_b = np.stack([at(i, j + 1), at(i + 1, j), at(i + 1, j + 1)], -1).reshape(-1, 3)
    caps_bot = np.stack([np.full(n_lon, last), at(n_lat - 1, j + 1), at(n_lat - 1, j)], 1)
    tris = np.vstack([caps_top, quads_a, quads_b, caps_bot]).astype(np.int32)
    return pts.astype(np.float32), tris.reshape(-1)


def workload(n: int, seed: int = 1):
    """Query points, rays and particles for a size n (1M in the full benchmark)."""
    rng = np.random.default_rng(seed)
    queries = (rng.random((n, 3)) * 3.0 - 1.5).astype(np.float32)
    origins = (rng.normal(size=(n, 3))).astype(np.float32)
    origins *= (3.0 / np.linalg.norm(origins, axis=1, keepdims=True)).astype(np.float32)
    dirs = (-origins + 0.5 * rng.normal(size=(n, 3))).astype(np.float32)
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    # particles at a density giving about 30 neighbours within the radius
    side = 1.0
    radius = float((30.0 / n * 3.0 / (4.0 * np.pi)) ** (1.0 / 3.0)) * side
    particles = (rng.random((n, 3)) * side).astype(np.float32)
    return queries, origins, dirs.astype(np.float32), particles, radius


def define():
    @wp.kernel
    def closest_point(mesh: wp.uint64, qs: wp.array(dtype=wp.vec3), face: wp.array(dtype=wp.int32)):
        i = wp.tid()
        r = wp.mesh_query_point_no_sign(mesh, qs[i], 1.0e6)
        face[i] = r.face

    @wp.kernel
    def ray_cast(mesh: wp.uint64, o: wp.array(dtype=wp.vec3), d: wp.array(dtype=wp.vec3), t: wp.array(dtype=float)):
        i = wp.tid()
        r = wp.mesh_query_ray(mesh, o[i], d[i], 1.0e6)
        t[i] = r.t

    @wp.kernel
    def neighbours(grid: wp.uint64, pts: wp.array(dtype=wp.vec3), radius: float, count: wp.array(dtype=wp.int32)):
        tid = wp.tid()
        i = wp.hash_grid_point_id(grid, tid)
        p = pts[i]
        n = int(0)  # noqa: UP018, RUF046
        q = wp.hash_grid_query(grid, p, radius)
        j = int(0)  # noqa: UP018, RUF046
        while wp.hash_grid_query_next(q, j):
            if wp.length(p - pts[j]) <= radius:
                n += 1
        count[i] = n

    return closest_point, ray_cast, neighbours
