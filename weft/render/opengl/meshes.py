"""Geometry and camera math of the OpenGL viewer, in NumPy (no OpenGL needed).

Meshes are ``(vertices, indices)``: float32 rows ``(x, y, z, nx, ny, nz, u, v)`` and uint32 triangle indices wound
counter-clockwise seen from outside (the side the normals point to). Matrices are row-major NumPy 4x4 arrays acting
on column vectors (``M @ p``).
"""

from __future__ import annotations

import numpy as np

DEFAULT_SEGMENTS = 32


def _grid_triangles(rows: int, cols: int) -> np.ndarray:
    """Two triangles per cell of a ``(rows + 1) x (cols + 1)`` vertex grid: (i, j), (i, j+1), (i+1, j) and
    (i, j+1), (i+1, j+1), (i+1, j)."""
    i, j = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    a = i * (cols + 1) + j
    b, c, d = a + 1, a + cols + 1, a + cols + 2
    return np.stack([np.stack([a, b, c], -1), np.stack([b, d, c], -1)], axis=2).reshape(-1, 3)


def _latitude_mesh(theta: np.ndarray, radius: float, segments: int, shift: np.ndarray | None = None):
    """Rings at polar angles ``theta`` (from +y) of a sphere of ``radius``, each ring moved up by ``shift``."""
    th = theta[:, None]
    phi = np.linspace(0.0, 2.0 * np.pi, segments + 1)[None, :]
    n = np.stack(np.broadcast_arrays(np.sin(th) * np.cos(phi), np.cos(th) + 0.0 * phi, np.sin(th) * np.sin(phi)),
                 axis=-1).reshape(-1, 3)
    p = n * radius
    if shift is not None:
        p[:, 1] += np.repeat(shift, segments + 1)
    u = np.broadcast_to(phi / (2.0 * np.pi), (len(theta), segments + 1)).reshape(-1, 1)
    v = np.broadcast_to(th / np.pi, (len(theta), segments + 1)).reshape(-1, 1)
    vertices = np.hstack([p, n, u, v]).astype(np.float32)
    return vertices, _grid_triangles(len(theta) - 1, segments)


def sphere_mesh(radius=1.0, num_latitudes=DEFAULT_SEGMENTS, num_longitudes=DEFAULT_SEGMENTS, reverse_winding=False):
    """A UV sphere: ``(num_latitudes + 1) x (num_longitudes + 1)`` vertices from the +y pole down."""
    vertices, tris = _latitude_mesh(np.linspace(0.0, np.pi, num_latitudes + 1), radius, num_longitudes)
    if reverse_winding:
        tris = tris[:, ::-1]
    return vertices, np.ascontiguousarray(tris).astype(np.uint32).ravel()


def _to_up_axis(vertices: np.ndarray, up_axis: int) -> np.ndarray:
    """Rotate a y-up mesh so that its y axis becomes ``up_axis`` (a cyclic permutation: winding is kept)."""
    if up_axis not in (0, 1, 2):
        raise ValueError(f"up_axis must be 0, 1 or 2, got {up_axis!r}")
    order = {0: (1, 2, 0), 1: (0, 1, 2), 2: (2, 0, 1)}[up_axis]  # new axis k takes old component order[k]
    out = vertices.copy()
    out[:, 0:3] = vertices[:, 0:3][:, order]
    out[:, 3:6] = vertices[:, 3:6][:, order]
    return out


def capsule_mesh(radius, half_height, up_axis=1, segments=DEFAULT_SEGMENTS):
    """Two hemispheres of ``radius`` at +-``half_height`` joined by a cylinder, along ``up_axis``."""
    k = max(segments // 2, 2)
    theta = np.concatenate([np.linspace(0.0, np.pi / 2, k + 1), np.linspace(np.pi / 2, np.pi, k + 1)])
    shift = np.where(np.arange(2 * k + 2) <= k, half_height, -half_height)
    vertices, tris = _latitude_mesh(theta, radius, segments, shift)
    vertices[:, 7] = (vertices[:, 1] + half_height + radius) / (2.0 * (half_height + radius))  # v along the axis
    return _to_up_axis(vertices, up_axis), tris.astype(np.uint32).ravel()


def cylinder_mesh(radius, half_height, up_axis=1, segments=DEFAULT_SEGMENTS, top_radius=None):
    """A closed cylinder (a cone frustum with ``top_radius``; a cone when it is 0) along ``up_axis``."""
    r0, r1, h = float(radius), float(radius if top_radius is None else top_radius), float(half_height)
    theta = np.linspace(0.0, 2.0 * np.pi, segments, endpoint=False)
    c, s = np.cos(theta), np.sin(theta)
    slope = (r0 - r1) / (2.0 * h) if h > 0 else 0.0
    side_n = np.stack([c, np.full_like(c, slope), s], -1)
    side_n /= np.linalg.norm(side_n, axis=1, keepdims=True)
    u = (np.arange(segments) / segments)[:, None]
    rows, tris = [], []

    def add(p, n, uv):
        rows.append(np.hstack([p, n, uv]))
        return sum(len(r) for r in rows) - len(p)

    bottom = add(np.stack([r0 * c, -h + 0 * c, r0 * s], -1), side_n, np.hstack([u, 0 * u]))
    top = add(np.stack([r1 * c, h + 0 * c, r1 * s], -1), side_n, np.hstack([u, 1 + 0 * u]))
    i = np.arange(segments)
    nxt = (i + 1) % segments
    tris += [np.stack([bottom + i, top + i, bottom + nxt], -1), np.stack([bottom + nxt, top + i, top + nxt], -1)]
    cap_uv = np.stack([0.5 + 0.5 * c, 0.5 + 0.5 * s], -1)
    for y, r, sign in ((-h, r0, -1.0), (h, r1, 1.0)):
        if r <= 0.0:
            continue
        ring = add(np.stack([r * c, y + 0 * c, r * s], -1), np.tile([0.0, sign, 0.0], (segments, 1)), cap_uv)
        centre = add(np.array([[0.0, y, 0.0]]), np.array([[0.0, sign, 0.0]]), np.array([[0.5, 0.5]]))
        cap = np.stack([np.full(segments, centre), ring + nxt, ring + i], -1)
        tris.append(cap if sign > 0 else cap[:, ::-1])
    vertices = np.vstack(rows).astype(np.float32)
    return _to_up_axis(vertices, up_axis), np.vstack(tris).astype(np.uint32).ravel()


def cone_mesh(radius, half_height, up_axis=1, segments=DEFAULT_SEGMENTS):
    """A cone with its base of ``radius`` at -``half_height`` and its tip at +``half_height`` along ``up_axis``."""
    return cylinder_mesh(radius, half_height, up_axis, segments, top_radius=0.0)


def arrow_mesh(base_radius, base_height, cap_radius=None, cap_height=None, up_axis=1, segments=DEFAULT_SEGMENTS):
    """A cylinder shaft from the origin to ``base_height`` and a cone tip above it, along ``up_axis``."""
    cap_radius = base_radius * 1.8 if cap_radius is None else cap_radius
    cap_height = base_height * 0.18 if cap_height is None else cap_height
    v0, i0 = cylinder_mesh(base_radius, base_height / 2, 1, segments)
    v1, i1 = cone_mesh(cap_radius, cap_height / 2, 1, segments)
    v0[:, 1] += base_height / 2
    v1[:, 1] += base_height + cap_height / 2
    vertices = np.vstack([v0, v1])
    return _to_up_axis(vertices, up_axis), np.concatenate([i0, i1 + len(v0)]).astype(np.uint32)


def box_mesh(extents):
    """A box with half extents ``(hx, hy, hz)``: 4 vertices per face with the face normal."""
    ext = np.asarray(extents, dtype=np.float64).reshape(3)
    corners = np.array([(-1, -1), (1, -1), (1, 1), (-1, 1)], dtype=np.float64)
    rows, tris = [], []
    for a in range(3):
        b, c = (a + 1) % 3, (a + 2) % 3
        for sign in (1.0, -1.0):
            p = np.zeros((4, 3))
            p[:, a] = sign * ext[a]
            p[:, b] = corners[:, 0] * ext[b]
            p[:, c] = corners[:, 1] * ext[c]
            n = np.zeros((4, 3))
            n[:, a] = sign
            base = 4 * len(rows)
            rows.append(np.hstack([p, n, 0.5 + 0.5 * corners]))
            quad = np.array([[0, 1, 2], [0, 2, 3]]) + base
            tris.append(quad if sign > 0 else quad[:, ::-1])
    return np.vstack(rows).astype(np.float32), np.vstack(tris).astype(np.uint32).ravel()


def plane_mesh(width, length, u_scaling=1.0, v_scaling=1.0):
    """A quad of half sizes ``width`` (x) and ``length`` (z) in the y = 0 plane, facing +y."""
    w, h = float(width), float(length)
    p = np.array([[-w, 0, -h], [-w, 0, h], [w, 0, h], [w, 0, -h]], dtype=np.float64)
    uv = np.stack([(p[:, 0] + w) * 0.5 * u_scaling, (p[:, 2] + h) * 0.5 * v_scaling], -1)  # 1-unit squares
    vertices = np.hstack([p, np.tile([0.0, 1.0, 0.0], (4, 1)), uv]).astype(np.float32)
    return vertices, np.array([0, 1, 2, 0, 2, 3], dtype=np.uint32)


def mesh_vertices(points: np.ndarray, tris: np.ndarray, smooth: bool, colors: np.ndarray | None = None):
    """Vertex rows of a triangle mesh: shared vertices with area-weighted averaged normals (``smooth``) or three
    vertices per face with its normal; per-vertex ``colors`` (one RGB per point) as columns 8-10."""
    p = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    t = np.asarray(tris, dtype=np.int64).reshape(-1, 3)
    face_n = np.cross(p[t[:, 1]] - p[t[:, 0]], p[t[:, 2]] - p[t[:, 0]]) if len(t) else np.zeros((0, 3))
    if smooth:
        n = np.zeros_like(p)
        for k in range(3):
            np.add.at(n, t[:, k], face_n)
        idx = np.arange(len(p))
        indices = t.ravel()
    else:
        n = np.repeat(face_n, 3, axis=0)
        idx = t.ravel()
        indices = np.arange(3 * len(t))
    length = np.linalg.norm(n, axis=1, keepdims=True)
    n = np.divide(n, length, out=np.zeros_like(n), where=length > 0)
    cols = [p[idx], n, np.zeros((len(idx), 2))]
    if colors is not None:
        cols.append(np.asarray(colors, dtype=np.float64).reshape(-1, 3)[idx])
    return np.hstack(cols).astype(np.float32), indices.astype(np.uint32)


# --- transforms -----------------------------------------------------------------------------------------------


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrices of quaternions ``(..., 4)`` in ``(x, y, z, w)`` order (normalised first)."""
    q = np.asarray(q, dtype=np.float64)
    q = q / np.maximum(np.linalg.norm(q, axis=-1, keepdims=True), 1e-30)
    x, y, z, w = np.moveaxis(q, -1, 0)
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1),
    ], -2)


def transform_multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Compose transforms ``(..., 7)`` (p, q in x y z w): ``a * b`` applies b first."""
    pa, qa, pb, qb = a[..., :3], a[..., 3:], b[..., :3], b[..., 3:]
    p = pa + np.einsum("...ij,...j->...i", quat_to_matrix(qa), pb)
    x1, y1, z1, w1 = np.moveaxis(qa, -1, 0)
    x2, y2, z2, w2 = np.moveaxis(qb, -1, 0)
    q = np.stack([w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2, w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                  w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2, w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2], -1)
    return np.concatenate([p, q], -1)


def instance_matrices(tf: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """4x4 matrices ``(n, 4, 4)`` of transforms ``(n, 7)`` with per-axis ``scale`` ``(n, 3)`` applied first."""
    n = len(tf)
    m = np.zeros((n, 4, 4))
    m[:, :3, :3] = quat_to_matrix(tf[:, 3:]) * scale[:, None, :]
    m[:, :3, 3] = tf[:, :3]
    m[:, 3, 3] = 1.0
    return m


def segment_matrices(p0: np.ndarray, p1: np.ndarray, radius_scale: float = 1.0) -> np.ndarray:
    """Matrices taking a unit-length y-axis cylinder centred at the origin onto the segments ``p0 -> p1``."""
    d = p1 - p0
    length = np.linalg.norm(d, axis=1)
    ey = np.divide(d, length[:, None], out=np.tile([0.0, 1.0, 0.0], (len(d), 1)), where=length[:, None] > 0)
    helper = np.where(np.abs(ey[:, :1]) < 0.9, [[1.0, 0.0, 0.0]], [[0.0, 0.0, 1.0]])
    ez = np.cross(helper, ey)
    ez /= np.linalg.norm(ez, axis=1, keepdims=True)
    ex = np.cross(ey, ez)
    m = np.zeros((len(d), 4, 4))
    m[:, :3, 0] = ex * radius_scale
    m[:, :3, 1] = ey * length[:, None]
    m[:, :3, 2] = ez * radius_scale
    m[:, :3, 3] = 0.5 * (p0 + p1)
    m[:, 3, 3] = 1.0
    return m


def axis_permutation(up_axis: int) -> np.ndarray:
    """The rotation taking the world's ``up_axis`` to the viewer's y (a cyclic permutation of the axes)."""
    order = {0: (2, 0, 1), 1: (0, 1, 2), 2: (1, 2, 0)}[up_axis]  # viewer axis k is world axis order[k]
    m = np.zeros((3, 3))
    for row, col in enumerate(order):
        m[row, col] = 1.0
    return m


def perspective(fov_deg: float, aspect: float, near: float, far: float) -> np.ndarray:
    """OpenGL's perspective projection with a vertical field of view ``fov_deg``."""
    f = 1.0 / np.tan(np.deg2rad(fov_deg) / 2.0)
    return np.array([[f / aspect, 0, 0, 0], [0, f, 0, 0],
                     [0, 0, (far + near) / (near - far), 2 * far * near / (near - far)], [0, 0, -1, 0]])


def look_at(eye, front, up) -> np.ndarray:
    """View matrix of a camera at ``eye`` looking along ``front`` with ``up``."""
    eye = np.asarray(eye, dtype=np.float64)
    f = np.asarray(front, dtype=np.float64)
    f = f / np.linalg.norm(f)
    s = np.cross(f, np.asarray(up, dtype=np.float64))
    s = s / np.linalg.norm(s)
    u = np.cross(s, f)
    m = np.eye(4)
    m[0, :3], m[1, :3], m[2, :3] = s, u, -f
    m[:3, 3] = -m[:3, :3] @ eye
    return m


def linear_depth(d: np.ndarray, near: float, far: float) -> np.ndarray:
    """Distance along the view direction of depth-buffer values ``d`` in [0, 1] (1 gives ``far``)."""
    z = 2.0 * np.asarray(d, dtype=np.float64) - 1.0
    return 2.0 * near * far / (far + near - z * (far - near))


def tab10(i: int) -> tuple[float, float, float]:
    """The i-th color of Matplotlib's "tab10" cycle (Warp's default shape colors)."""
    table = ((31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189), (140, 86, 75),
             (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207))
    r, g, b = table[i % len(table)]
    return (r / 255.0, g / 255.0, b / 255.0)
