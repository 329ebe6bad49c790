"""Test meshes and float64 NumPy references for the geometry tests."""

from __future__ import annotations

import numpy as np


def uv_sphere(n_lat: int = 12, n_lon: int = 16, radius: float = 1.0, centre=(0.0, 0.0, 0.0)):
    """A closed, outward-wound sphere: (points (n, 3) float32, indices (m, 3) int32)."""
    pts = [(0.0, 0.0, radius)]
    for i in range(1, n_lat):
        th = np.pi * i / n_lat
        for j in range(n_lon):
            ph = 2 * np.pi * j / n_lon
            pts.append((radius * np.sin(th) * np.cos(ph), radius * np.sin(th) * np.sin(ph), radius * np.cos(th)))
    pts.append((0.0, 0.0, -radius))
    tris = []
    ring = lambda i, j: 1 + (i - 1) * n_lon + (j % n_lon)
    for j in range(n_lon):
        tris.append((0, ring(1, j), ring(1, j + 1)))
    for i in range(1, n_lat - 1):
        for j in range(n_lon):
            a, b, c, d = ring(i, j), ring(i, j + 1), ring(i + 1, j), ring(i + 1, j + 1)
            tris.append((a, c, b))
            tris.append((b, c, d))
    last = len(pts) - 1
    for j in range(n_lon):
        tris.append((last, ring(n_lat - 1, j + 1), ring(n_lat - 1, j)))
    p = np.asarray(pts, np.float64) + np.asarray(centre)
    return p.astype(np.float32), np.asarray(tris, np.int32)


def random_soup(n_tris: int, rng, degenerate: int = 0):
    """Random triangles in the unit cube, some degenerate (repeated or collinear vertices)."""
    centres = rng.random((n_tris, 1, 3))
    pts = (centres + 0.15 * (rng.random((n_tris, 3, 3)) - 0.5)).reshape(-1, 3)
    for k in range(degenerate):
        t = 3 * (k * 7 % n_tris)
        if k % 2:
            pts[t + 1] = pts[t]  # repeated vertex
        else:
            pts[t + 2] = 0.5 * (pts[t] + pts[t + 1])  # collinear
    return pts.astype(np.float32), np.arange(3 * n_tris, dtype=np.int32).reshape(-1, 3)


def closest_on_triangles(p, a, b, c):
    """Closest points of p (3,) on every triangle (float64), by projecting and clamping to edges."""
    p = np.asarray(p, np.float64)
    a, b, c = (np.asarray(x, np.float64) for x in (a, b, c))
    n = np.cross(b - a, c - a)
    nn = np.einsum("ij,ij->i", n, n)
    # projection and its barycentrics
    with np.errstate(invalid="ignore", divide="ignore"):
        q = p - (np.einsum("ij,ij->i", p - a, n) / nn)[:, None] * n
        w_a = np.einsum("ij,ij->i", np.cross(b - q, c - q), n) / nn
        w_b = np.einsum("ij,ij->i", np.cross(c - q, a - q), n) / nn
    inside = (w_a >= 0) & (w_b >= 0) & (1 - w_a - w_b >= 0)
    best = np.where(inside[:, None], q, np.nan)
    d_best = np.where(inside, np.linalg.norm(p - q, axis=1), np.inf)
    for x, y in ((a, b), (b, c), (c, a)):
        e = y - x
        with np.errstate(invalid="ignore", divide="ignore"):
            t = np.clip(np.einsum("ij,ij->i", p - x, e) / np.einsum("ij,ij->i", e, e), 0, 1)
        t = np.nan_to_num(t)
        s = x + t[:, None] * e
        d = np.linalg.norm(p - s, axis=1)
        better = d < d_best
        best[better] = s[better]
        d_best = np.minimum(d, d_best)
    return best, d_best


def degenerate_mask(a, b, c):
    a, b, c = (np.asarray(x, np.float32) for x in (a, b, c))
    e0, e1, e2 = b - a, c - a, c - b
    ll = np.maximum(np.maximum((e0 * e0).sum(1), (e1 * e1).sum(1)), (e2 * e2).sum(1))
    n = np.cross(e0, e1)
    return ~((n * n).sum(1) > 1e-10 * ll * ll)


def ray_hits(o, d, a, b, c):
    """t of every triangle the ray (o, d) hits at t >= 0 (inf where it misses), float64 Moller-Trumbore."""
    o, d = np.asarray(o, np.float64), np.asarray(d, np.float64)
    a, b, c = (np.asarray(x, np.float64) for x in (a, b, c))
    e1, e2 = b - a, c - a
    pv = np.cross(np.broadcast_to(d, e2.shape), e2)
    det = np.einsum("ij,ij->i", e1, pv)
    with np.errstate(invalid="ignore", divide="ignore"):
        inv = 1.0 / det
        tv = o - a
        b1 = np.einsum("ij,ij->i", tv, pv) * inv
        qv = np.cross(tv, e1)
        b2 = (qv @ d) * inv
        t = np.einsum("ij,ij->i", e2, qv) * inv
        ok = (det != 0) & (b1 >= 0) & (b2 >= 0) & (b1 + b2 <= 1) & (t >= 0)
    return np.where(ok, t, np.inf)
