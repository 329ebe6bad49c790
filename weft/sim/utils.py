"""Helpers for simulation code: rotations, twists, smooth min/max (all ``wp.func``, usable in kernels and from
Python), mesh loading and triangle-mesh adjacency."""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass

import numpy as np

import weft as wp


def _rotate(q, v) -> np.ndarray:
    """Rotate the 3-vector ``v`` by the quaternion ``q`` = (x, y, z, w) on the host (float64)."""
    x, y, z, w = (float(c) for c in q)
    u = np.array((x, y, z))
    v = np.asarray(v, dtype=np.float64)
    return v * (2.0 * w * w - 1.0) + np.cross(u, v) * (2.0 * w) + u * (2.0 * (u @ v))


@wp.func
def velocity_at_point(qd: wp.spatial_vector, r: wp.vec3):
    """Velocity of a point at offset ``r`` from a frame moving with spatial velocity ``qd`` (angular, linear)."""
    return wp.cross(wp.spatial_top(qd), r) + wp.spatial_bottom(qd)


@wp.func
def quat_twist(axis: wp.vec3, q: wp.quat):
    """The twist part of ``q`` about ``axis`` (swing-twist decomposition)."""
    a = wp.vec3(q[0], q[1], q[2])
    a = wp.dot(a, axis) * axis
    return wp.normalize(wp.quat(a[0], a[1], a[2], q[3]))


@wp.func
def quat_twist_angle(axis: wp.vec3, q: wp.quat):
    """Angle of the twist of ``q`` about ``axis``."""
    return 2.0 * wp.acos(quat_twist(axis, q)[3])


@wp.func
def quat_decompose(q: wp.quat):
    """Angles (x, y', z'') of the rotation sequence q = q_z'' q_y' q_x, returned negated as warp.sim does."""
    c0 = wp.quat_rotate(q, wp.vec3(1.0, 0.0, 0.0))
    c1 = wp.quat_rotate(q, wp.vec3(0.0, 1.0, 0.0))
    c2 = wp.quat_rotate(q, wp.vec3(0.0, 0.0, 1.0))
    # R = [c0 c1 c2]; R[1,2] = c2.y, R[2,2] = c2.z, R[0,2] = c2.x, R[0,1] = c1.x, R[0,0] = c0.x
    phi = wp.atan2(c2[1], c2[2])
    sinp = -c2[0]
    theta = float(0.0)  # noqa: UP018
    if wp.abs(sinp) >= 1.0:
        theta = 1.5707963267948966 * wp.sign(sinp)
    else:
        theta = wp.asin(-c2[0])
    psi = wp.atan2(c1[0], c0[0])
    return -wp.vec3(phi, theta, psi)


@wp.func
def quat_to_rpy(q: wp.quat):
    """Roll, pitch, yaw (about x, y, z) of a quaternion."""
    x = q[0]
    y = q[1]
    z = q[2]
    w = q[3]
    roll = wp.atan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))
    pitch = wp.asin(wp.clamp(2.0 * (w * y - z * x), -1.0, 1.0))
    yaw = wp.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return wp.vec3(roll, pitch, yaw)


@wp.func
def quat_to_euler(q: wp.quat, i: int, j: int, k: int) -> wp.vec3:
    """Euler angles about the axes ``i, j, k`` (0-based, i != j, j != k) of a quaternion (Bernardes & Viollet's
    general method; the inverse of :func:`quat_from_euler`)."""
    i1 = i + 1
    j1 = j + 1
    k1 = k + 1
    proper = i1 == k1
    if proper:
        k1 = 6 - i1 - j1
    e = float((i1 - j1) * (j1 - k1) * (k1 - i1)) / 2.0
    qs = wp.vec4(q[3], q[0], q[1], q[2])
    a = qs[0]
    b = qs[i1]
    c = qs[j1]
    d = qs[k1] * e
    if not proper:
        a = qs[0] - qs[j1]
        b = qs[i1] + qs[k1] * e
        c = qs[j1] + qs[0]
        d = qs[k1] * e - qs[i1]
    t2 = wp.acos(wp.clamp(2.0 * (a * a + b * b) / (a * a + b * b + c * c + d * d) - 1.0, -1.0, 1.0))
    tp = wp.atan2(b, a)
    tm = wp.atan2(d, c)
    t1 = float(0.0)  # noqa: UP018
    t3 = float(0.0)  # noqa: UP018
    if wp.abs(t2) < 1e-6:
        t3 = 2.0 * tp - t1
    elif wp.abs(t2 - 1.5707963267948966) < 1e-6:
        t3 = 2.0 * tm + t1
    else:
        t1 = tp - tm
        t3 = tp + tm
    if not proper:
        t2 = t2 - 1.5707963267948966
        t3 = t3 * e
    return wp.vec3(t1, t2, t3)


@wp.func
def quat_from_euler(e: wp.vec3, i: int, j: int, k: int) -> wp.quat:
    """Quaternion of the Euler angles ``e`` about the axes ``i, j, k`` (0-based; (0, 1, 2) is XYZ)."""
    h = e * 0.5
    cr = wp.cos(h[i])
    sr = wp.sin(h[i])
    cp = wp.cos(h[j])
    sp = wp.sin(h[j])
    cy = wp.cos(h[k])
    sy = wp.sin(h[k])
    return wp.quat(cy * sr * cp - sy * cr * sp, cy * cr * sp + sy * sr * cp, sy * cr * cp - cy * sr * sp,
                   cy * cr * cp + sy * sr * sp)


@wp.func
def transform_twist(t: wp.transform, x: wp.spatial_vector):
    """Twist ``x`` (angular, linear) expressed in the frame ``t`` moved to the parent frame."""
    q = wp.transform_get_rotation(t)
    p = wp.transform_get_translation(t)
    w = wp.quat_rotate(q, wp.spatial_top(x))
    v = wp.quat_rotate(q, wp.spatial_bottom(x)) + wp.cross(p, w)
    return wp.spatial_vector(w, v)


@wp.func
def transform_wrench(t: wp.transform, x: wp.spatial_vector):
    """Wrench ``x`` (torque, force) expressed in the frame ``t`` moved to the parent frame."""
    q = wp.transform_get_rotation(t)
    p = wp.transform_get_translation(t)
    v = wp.quat_rotate(q, wp.spatial_bottom(x))
    w = wp.quat_rotate(q, wp.spatial_top(x)) + wp.cross(p, v)
    return wp.spatial_vector(w, v)


@wp.func
def smooth_max(a: float, b: float, eps: float):
    """Differentiable max: 0.5 (a + b + sqrt((a - b)^2 + eps))."""
    d = a - b
    return 0.5 * (a + b + wp.sqrt(d * d + eps))


@wp.func
def smooth_min(a: float, b: float, eps: float):
    """Differentiable min: 0.5 (a + b - sqrt((a - b)^2 + eps))."""
    d = a - b
    return 0.5 * (a + b - wp.sqrt(d * d + eps))


@wp.func
def leaky_max(a: float, b: float):
    """smooth_max with eps = 1e-5."""
    return smooth_max(a, b, 1e-5)


@wp.func
def leaky_min(a: float, b: float):
    """smooth_min with eps = 1e-5."""
    return smooth_min(a, b, 1e-5)


@wp.func
def vec_min(a: wp.vec3, b: wp.vec3):
    """Component-wise minimum."""
    return wp.vec3(wp.min(a[0], b[0]), wp.min(a[1], b[1]), wp.min(a[2], b[2]))


@wp.func
def vec_max(a: wp.vec3, b: wp.vec3):
    """Component-wise maximum."""
    return wp.vec3(wp.max(a[0], b[0]), wp.max(a[1], b[1]), wp.max(a[2], b[2]))


@wp.func
def vec_abs(a: wp.vec3):
    """Component-wise absolute value."""
    return wp.vec3(wp.abs(a[0]), wp.abs(a[1]), wp.abs(a[2]))


def load_mesh(filename: str, method: str | None = None):
    """Load a triangle surface mesh (OBJ, STL, PLY, ... through trimesh or meshio).

    Returns:
        ``(points, indices)``: (n, 3) float32 vertex positions and (m, 3) int32 triangle indices.
    Raises:
        FileNotFoundError: the file does not exist. ImportError: no loader is installed.
    """
    if not os.path.exists(filename):
        raise FileNotFoundError(f"File not found: {filename}")
    methods = [method] if method else ["trimesh", "meshio"]
    errors = []
    for m in methods:
        try:
            if m == "trimesh":
                import trimesh

                mesh = trimesh.load(filename, force="mesh", process=False)
                pts, idx = np.asarray(mesh.vertices), np.asarray(mesh.faces)
            elif m == "meshio":
                import meshio

                mesh = meshio.read(filename)
                pts = np.asarray(mesh.points)
                idx = np.concatenate([c.data for c in mesh.cells if c.type == "triangle"])
            else:
                raise ValueError(f"load_mesh: unknown method {m!r} (use 'trimesh' or 'meshio')")
        except ImportError as exc:
            errors.append(str(exc))
            continue
        if len(pts):
            return pts.astype(np.float32), idx.astype(np.int32)
    raise ImportError(f"load_mesh: could not load {filename} ({'; '.join(errors) or 'no vertices'})")


@dataclass
class MeshEdge:
    """An edge (v0, v1) of a triangle mesh with its opposite vertices o0, o1 and faces f0, f1 (-1: boundary)."""

    v0: int
    v1: int
    o0: int
    o1: int
    f0: int
    f1: int


class MeshAdjacency:
    """Edges of a triangle mesh with the two faces (and opposite vertices) each edge borders.

    Args:
        indices: sequence of (i, j, k) triangles.
        num_tris: number of triangles to read from ``indices``.
    """

    def __init__(self, indices, num_tris=None):
        self.edges: dict[tuple[int, int], MeshEdge] = {}
        tris = list(indices)[: num_tris if num_tris is not None else None]
        for f, (i, j, k) in enumerate(tris):
            self._add(i, j, k, f)
            self._add(j, k, i, f)
            self._add(k, i, j, f)

    def _add(self, i0: int, i1: int, o: int, f: int) -> None:
        key = (min(i0, i1), max(i0, i1))
        e = self.edges.get(key)
        if e is None:
            self.edges[key] = MeshEdge(i0, i1, o, -1, f, -1)
        elif e.f1 == -1:
            e.o1, e.f1 = o, f
        else:
            warnings.warn(f"MeshAdjacency: non-manifold edge {key} (a third face is ignored)", stacklevel=3)
