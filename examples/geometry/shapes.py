"""Meshes generated in code for the geometry examples: a torus and a UV sphere (float32 points, int32 triangles)."""

from __future__ import annotations

import numpy as np


def torus(n_major: int = 48, n_minor: int = 24, major: float = 0.6, minor: float = 0.25):
    """A closed, outward-wound torus around the z axis."""
    u = 2 * np.pi * np.arange(n_major) / n_major
    v = 2 * np.pi * np.arange(n_minor) / n_minor
    uu, vv = np.meshgrid(u, v, indexing="ij")
    pts = np.stack([(major + minor * np.cos(vv)) * np.cos(uu), (major + minor * np.cos(vv)) * np.sin(uu),
                    minor * np.sin(vv)], axis=-1).reshape(-1, 3)
    i, j = np.meshgrid(np.arange(n_major), np.arange(n_minor), indexing="ij")

    def at(a, b):
        return (a % n_major) * n_minor + (b % n_minor)

    a, b, c, d = at(i, j), at(i + 1, j), at(i, j + 1), at(i + 1, j + 1)
    tris = np.concatenate([np.stack([a, b, d], -1).reshape(-1, 3), np.stack([a, d, c], -1).reshape(-1, 3)])
    return pts.astype(np.float32), tris.astype(np.int32)


def sphere(n_lat: int = 24, n_lon: int = 32, radius: float = 1.0):
    """A closed, outward-wound UV sphere."""
    th = np.pi * np.arange(1, n_lat) / n_lat
    ph = 2 * np.pi * np.arange(n_lon) / n_lon
    ring = np.stack([np.outer(np.sin(th), np.cos(ph)), np.outer(np.sin(th), np.sin(ph)),
                     np.outer(np.cos(th), np.ones(n_lon))], axis=-1).reshape(-1, 3)
    pts = radius * np.vstack([[0, 0, 1], ring, [0, 0, -1]])
    last = len(pts) - 1
    j = np.arange(n_lon)
    i = np.arange(1, n_lat - 1)[:, None]

    def at(a, b):
        return 1 + (a - 1) * n_lon + b % n_lon

    tris = np.vstack([np.stack([np.zeros(n_lon, int), at(1, j), at(1, j + 1)], 1),
                      np.stack([at(i, j), at(i + 1, j), at(i, j + 1)], -1).reshape(-1, 3),
                      np.stack([at(i, j + 1), at(i + 1, j), at(i + 1, j + 1)], -1).reshape(-1, 3),
                      np.stack([np.full(n_lon, last), at(n_lat - 1, j + 1), at(n_lat - 1, j)], 1)])
    return pts.astype(np.float32), tris.astype(np.int32)
