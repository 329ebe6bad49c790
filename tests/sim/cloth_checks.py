"""Float64 NumPy interpenetration checks for cloth (shared by the VBD self-contact tests and the warp.sim 1.7.2
cloth self-contact runner): candidate pairs come from k-d trees, so the checks stay cheap on the example's 50 x 50
cloth and exact (the pruning only drops pairs that cannot qualify)."""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree


def cloth_edges(tri: np.ndarray) -> np.ndarray:
    """The unique undirected edges of a triangle list, (E, 2) with the smaller index first."""
    return np.unique(np.sort(tri[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1), axis=0)


def _ball_pairs(points: np.ndarray, centres: np.ndarray, reach: float) -> tuple[np.ndarray, np.ndarray]:
    pairs = cKDTree(points).query_ball_tree(cKDTree(centres), reach)
    i = np.repeat(np.arange(len(points)), [len(p) for p in pairs])
    j = np.fromiter((k for p in pairs for k in p), dtype=np.int64, count=len(i))
    return i, j


def point_triangle_distance(p, a, b, c) -> np.ndarray:
    """Exact distances from points p to triangles (a, b, c), all (N, 3) float64: the plane distance where the
    projection falls inside, else the nearest of the three edges."""
    def seg(u, w):
        d = w - u
        s = np.clip(((p - u) * d).sum(1) / (d * d).sum(1), 0.0, 1.0)
        return np.linalg.norm(p - (u + d * s[:, None]), axis=1)

    n = np.cross(b - a, c - a)
    n /= np.linalg.norm(n, axis=1)[:, None]
    h = ((p - a) * n).sum(1)
    proj = p - n * h[:, None]
    inside = np.ones(len(p), bool)
    for u, w in ((a, b), (b, c), (c, a)):
        inside &= (np.cross(w - u, proj - u) * n).sum(1) >= 0.0
    return np.where(inside, np.abs(h), np.minimum(np.minimum(seg(a, b), seg(b, c)), seg(c, a)))


def edge_triangle_crossings(q: np.ndarray, tri: np.ndarray) -> int:
    """How many (edge, triangle) pairs sharing no vertex have the edge passing through the triangle."""
    q = q.astype(np.float64)
    edges = cloth_edges(tri)
    mid = q[edges].mean(axis=1)
    cen = q[tri].mean(axis=1)
    reach = (np.linalg.norm(q[edges[:, 1]] - q[edges[:, 0]], axis=1).max() / 2
             + np.linalg.norm(q[tri] - cen[:, None], axis=2).max())
    e, t = _ball_pairs(mid, cen, reach)
    keep = ~(edges[e][:, :, None] == tri[t][:, None, :]).any(axis=(1, 2))
    e, t = e[keep], t[keep]
    p0, d = q[edges[e, 0]], q[edges[e, 1]] - q[edges[e, 0]]
    a, e1, e2 = q[tri[t, 0]], q[tri[t, 1]] - q[tri[t, 0]], q[tri[t, 2]] - q[tri[t, 0]]
    h = np.cross(d, e2)
    det = (e1 * h).sum(1)
    ok = np.abs(det) > 1e-14
    inv = 1.0 / np.where(ok, det, 1.0)
    s = p0 - a
    u = inv * (s * h).sum(1)
    qv = np.cross(s, e1)
    v = inv * (d * qv).sum(1)
    w = inv * (e2 * qv).sum(1)
    return int((ok & (u >= 0) & (v >= 0) & (u + v <= 1) & (w >= 0) & (w <= 1)).sum())


def closest_vertex_triangle(q: np.ndarray, tri: np.ndarray, radius: float) -> float:
    """The smallest distance from a vertex to a triangle it is not a corner of, among pairs closer than ``radius``
    to the triangle's bounding sphere (inf when there is none)."""
    q = q.astype(np.float64)
    cen = q[tri].mean(axis=1)
    reach = np.linalg.norm(q[tri] - cen[:, None], axis=2).max() + radius
    v, t = _ball_pairs(q, cen, reach)
    keep = ~(tri[t] == v[:, None]).any(axis=1)
    v, t = v[keep], t[keep]
    dist = point_triangle_distance(q[v], q[tri[t, 0]], q[tri[t, 1]], q[tri[t, 2]])
    return float(dist.min()) if len(dist) else float("inf")
