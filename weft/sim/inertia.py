"""Mass, centre of mass and inertia tensors of shapes (host-side, float64 NumPy).

Every ``compute_*_inertia`` returns ``(mass, com, I)`` with ``I`` about the centre of mass, for a solid of the given
density; capsules, cylinders and cones extend along +Y.
"""

from __future__ import annotations

import math

import numpy as np

import weft as wp


def _diag(a: float, b: float, c: float):
    return wp.mat33(a, 0.0, 0.0, 0.0, b, 0.0, 0.0, 0.0, c)


def compute_sphere_inertia(density: float, r: float):
    """Mass and inertia of a solid sphere of radius ``r``."""
    m = density * 4.0 / 3.0 * math.pi * r**3
    ia = 0.4 * m * r * r
    return m, wp.vec3(), _diag(ia, ia, ia)


def compute_capsule_inertia(density: float, r: float, h: float):
    """Mass and inertia of a solid capsule along Y: radius ``r``, cylinder height ``h`` (between the caps)."""
    m_sph = density * 4.0 / 3.0 * math.pi * r**3
    m_cyl = density * math.pi * r * r * h
    # cylinder about its centre plus two hemispheres shifted to the cylinder ends (parallel-axis theorem)
    ia = m_cyl * (0.25 * r * r + h * h / 12.0) + m_sph * (0.4 * r * r + 0.375 * r * h + 0.25 * h * h)
    ib = (0.5 * m_cyl + 0.4 * m_sph) * r * r
    return m_sph + m_cyl, wp.vec3(), _diag(ia, ib, ia)


def compute_cylinder_inertia(density: float, r: float, h: float):
    """Mass and inertia of a solid cylinder along Y of radius ``r`` and height ``h``."""
    m = density * math.pi * r * r * h
    ia = m * (3.0 * r * r + h * h) / 12.0
    ib = 0.5 * m * r * r
    return m, wp.vec3(), _diag(ia, ib, ia)


def compute_cone_inertia(density: float, r: float, h: float):
    """Mass and inertia of a solid cone along Y of base radius ``r`` and height ``h`` (about the frame's origin
    at half height, as warp.sim reports it)."""
    m = density * math.pi * r * r * h / 3.0
    ia = m * (3.0 * r * r + 2.0 * h * h) / 20.0
    ib = 0.3 * m * r * r
    return m, wp.vec3(), _diag(ia, ib, ia)


def compute_box_inertia(density: float, w: float, h: float, d: float):
    """Mass and inertia of a solid box of full extents ``w`` x ``h`` x ``d``."""
    m = density * w * h * d
    return m, wp.vec3(), _diag(m * (h * h + d * d) / 12.0, m * (w * w + d * d) / 12.0, m * (w * w + h * h) / 12.0)


def _tet_moments(a: np.ndarray, b: np.ndarray, c: np.ndarray):
    """Signed volume, first and second moments of the tetrahedra (0, a, b, c) (rows of a, b, c)."""
    vol = np.einsum("ij,ij->i", a, np.cross(b, c)) / 6.0
    first = vol[:, None] * (a + b + c) / 4.0
    outer = lambda u, v: np.einsum("ij,ik->ijk", u, v)
    sym = outer(a, b) + outer(b, a) + outer(a, c) + outer(c, a) + outer(b, c) + outer(c, b)
    second = vol[:, None, None] * ((outer(a, a) + outer(b, b) + outer(c, c)) / 10.0 + sym / 20.0)
    return vol.sum(), first.sum(0), second.sum(0)


def compute_mesh_inertia(density: float, vertices, indices, is_solid: bool = True, thickness=0.001):
    """Mass, centre of mass, inertia (about the centre of mass) and volume of a closed triangle mesh.

    A hollow mesh (``is_solid=False``) is a shell of the given per-vertex or uniform ``thickness`` on both sides of
    the surface. Inward winding is handled (the signed volume is flipped).
    """
    v = np.asarray(vertices, dtype=np.float64).reshape(-1, 3)
    tri = np.asarray(indices, dtype=np.int64).reshape(-1, 3)
    p, q, r = v[tri[:, 0]], v[tri[:, 1]], v[tri[:, 2]]
    if is_solid:
        vol, first, second = _tet_moments(p, q, r)
    else:
        t = np.broadcast_to(np.asarray(thickness, dtype=np.float64), (len(v),))
        n = -np.cross(q - p, r - p)
        n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-30)
        ti, tj, tk = n * t[tri[:, 0], None], n * t[tri[:, 1], None], n * t[tri[:, 2], None]
        i0, i1, j0, j1, k0, k1 = p - ti, p + ti, q - tj, q + tj, r - tk, r + tk
        wedge = ((i0, j0, k0), (j0, k1, k0), (j0, j1, k1), (j0, i1, j1), (j0, i0, i1), (j1, i1, k1), (i1, i0, k0),
                 (i1, k0, k1))
        vol, first, second = 0.0, np.zeros(3), np.zeros((3, 3))
        for a, b, c in wedge:
            dv, df, ds = _tet_moments(a, b, c)
            vol, first, second = vol + dv, first + df, second + ds
    if vol < 0.0:
        vol, first, second = -vol, -first, -second
    mass = density * vol
    com = first / vol if vol > 0.0 else first
    second = second * density
    i_origin = np.trace(second) * np.eye(3) - second
    i_com = i_origin - mass * (com @ com * np.eye(3) - np.outer(com, com))
    return mass, wp.vec3(*com), wp.mat33(*i_com.reshape(-1)), vol


def transform_inertia(m, I, p, q):
    """Inertia ``I`` (about a body's centre of mass) of mass ``m`` rotated by ``q`` and shifted by ``p``
    (parallel-axis theorem): ``R I R^T + m (|p|^2 E - p p^T)``."""
    R = np.array(wp.quat_to_matrix(wp.quat(*q)), dtype=np.float64).reshape(3, 3)
    Im = np.array(I, dtype=np.float64).reshape(3, 3)
    pv = np.array(p, dtype=np.float64).reshape(3)
    out = R @ Im @ R.T + m * (pv @ pv * np.eye(3) - np.outer(pv, pv))
    return wp.mat33(*out.reshape(-1))
