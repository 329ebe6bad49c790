"""Op-table cases of the differentiable geometry ops (float32: a mesh is float32 data), added by ``op_table.py``.

The kernels query a closed sphere mesh built at import; its id is a captured constant.
"""

# no `from __future__ import annotations`: kernel annotations are evaluated where defined
import numpy as np

import weft as wp


def _sphere(n_lat: int = 10, n_lon: int = 12):
    """A closed, outward-wound unit UV sphere (float32 points, int32 triangles)."""
    th = np.pi * np.arange(1, n_lat) / n_lat
    ph = 2 * np.pi * np.arange(n_lon) / n_lon
    ring = np.stack([np.outer(np.sin(th), np.cos(ph)), np.outer(np.sin(th), np.sin(ph)),
                     np.outer(np.cos(th), np.ones(n_lon))], axis=-1).reshape(-1, 3)
    pts = np.vstack([[0, 0, 1], ring, [0, 0, -1]])
    last = len(pts) - 1

    def at(i, j):
        return 1 + (i - 1) * n_lon + j % n_lon

    tris = [(0, at(1, j), at(1, j + 1)) for j in range(n_lon)]
    for i in range(1, n_lat - 1):
        for j in range(n_lon):
            tris += [(at(i, j), at(i + 1, j), at(i, j + 1)), (at(i, j + 1), at(i + 1, j), at(i + 1, j + 1))]
    tris += [(last, at(n_lat - 1, j + 1), at(n_lat - 1, j)) for j in range(n_lon)]
    return pts.astype(np.float32), np.asarray(tris, np.int32)


_PTS, _TRIS = _sphere()
_VEL = np.random.default_rng(0).normal(size=_PTS.shape).astype(np.float32)
SPHERE = wp.Mesh(wp.array(_PTS, dtype=wp.vec3), wp.array(_TRIS.reshape(-1), dtype=wp.int32),
                 velocities=wp.array(_VEL, dtype=wp.vec3), support_winding_number=True)
MESH = SPHERE.id
V3F = wp.vec3


def _shell(rng, n):
    """Points off the surface on both sides, above face interiors (away from the kinks where the closest feature
    changes from a face to an edge, and from the medial surfaces where it jumps between faces)."""
    faces = rng.integers(0, len(_TRIS), size=n)
    a, b, c = (_PTS[_TRIS[faces, k]].astype(np.float64) for k in range(3))
    w = rng.dirichlet([8.0, 8.0, 8.0], size=n)
    q = w[:, :1] * a + w[:, 1:2] * b + w[:, 2:] * c
    nrm = np.cross(b - a, c - a)
    nrm /= np.linalg.norm(nrm, axis=1, keepdims=True)
    return q + nrm * rng.choice([-0.05, 0.3], size=(n, 1))


def _rays(rng, n):
    o = rng.normal(scale=0.2, size=(n, 3)) + np.array([0.0, 0.0, -3.0])
    d = np.array([0.0, 0.0, 1.0]) + rng.normal(scale=0.1, size=(n, 3))
    return [o, d]


def _bary(rng, n):
    u = rng.uniform(0.1, 0.5, size=n)
    return [u, rng.uniform(0.1, 0.4, size=n)]


@wp.kernel
def k_point(p: wp.array(dtype=V3F), out: wp.array(dtype=V3F)):
    i = wp.tid()
    m = wp.uint64(MESH)
    r = wp.mesh_query_point(m, p[i], 1.0e6)
    out[i] = wp.mesh_eval_position(m, r.face, r.u, r.v)


@wp.kernel
def k_point_no_sign(p: wp.array(dtype=V3F), out: wp.array(dtype=V3F)):
    i = wp.tid()
    m = wp.uint64(MESH)
    r = wp.mesh_query_point_no_sign(m, p[i], 1.0e6)
    out[i] = wp.mesh_eval_position(m, r.face, r.u, r.v)


@wp.kernel
def k_point_normal(p: wp.array(dtype=V3F), out: wp.array(dtype=V3F)):
    i = wp.tid()
    m = wp.uint64(MESH)
    r = wp.mesh_query_point_sign_normal(m, p[i], 1.0e6)
    out[i] = r.sign * (p[i] - wp.mesh_eval_position(m, r.face, r.u, r.v))


@wp.kernel
def k_point_winding(p: wp.array(dtype=V3F), out: wp.array(dtype=V3F)):
    i = wp.tid()
    m = wp.uint64(MESH)
    r = wp.mesh_query_point_sign_winding_number(m, p[i], 1.0e6)
    out[i] = r.sign * (p[i] - wp.mesh_eval_position(m, r.face, r.u, r.v))


@wp.kernel
def k_point_parity(p: wp.array(dtype=V3F), out: wp.array(dtype=V3F)):
    i = wp.tid()
    m = wp.uint64(MESH)
    r = wp.mesh_query_point_sign_parity(m, p[i], 1.0e6, 3)
    out[i] = r.sign * (p[i] - wp.mesh_eval_position(m, r.face, r.u, r.v))


@wp.kernel
def k_furthest(p: wp.array(dtype=V3F), out: wp.array(dtype=V3F)):
    i = wp.tid()
    m = wp.uint64(MESH)
    r = wp.mesh_query_furthest_point_no_sign(m, p[i], 0.0)
    out[i] = wp.mesh_eval_position(m, r.face, r.u, r.v) - p[i]


@wp.kernel
def k_ray(o: wp.array(dtype=V3F), d: wp.array(dtype=V3F), out: wp.array(dtype=V3F)):
    i = wp.tid()
    r = wp.mesh_query_ray(wp.uint64(MESH), o[i], d[i], 1.0e6)
    out[i] = wp.vec3(r.t, r.u, r.v)


@wp.kernel
def k_eval_position(u: wp.array(dtype=float), v: wp.array(dtype=float), out: wp.array(dtype=V3F)):
    i = wp.tid()
    out[i] = wp.mesh_eval_position(wp.uint64(MESH), i * 7, u[i], v[i])


@wp.kernel
def k_eval_velocity(u: wp.array(dtype=float), v: wp.array(dtype=float), out: wp.array(dtype=V3F)):
    i = wp.tid()
    out[i] = wp.mesh_eval_velocity(wp.uint64(MESH), i * 7, u[i], v[i])


@wp.kernel
def k_get_point(s: wp.array(dtype=float), out: wp.array(dtype=V3F)):
    # the points' own gradient (into points.grad) is checked in tests/geometry/test_mesh_grad.py; here the op's
    # adjoint runs with a mesh whose points need no gradient and must leave the other inputs' gradients exact
    i = wp.tid()
    out[i] = s[i] * wp.mesh_get_point(wp.uint64(MESH), i * 5)


@wp.kernel
def k_get_velocity(s: wp.array(dtype=float), out: wp.array(dtype=V3F)):
    # the velocities' own gradient is checked in tests/geometry/test_mesh_grad.py
    i = wp.tid()
    out[i] = s[i] * wp.mesh_get_velocity(wp.uint64(MESH), i * 5)


def _scales(rng, n):
    return [rng.uniform(0.5, 2.0, size=n)]


V3D = wp.vec3d


@wp.func
def g_edge_edge(p1: V3D, q1: V3D, p2: V3D, q2: V3D):
    return wp.closest_point_edge_edge(p1, q1, p2, q2, wp.float64(1.0e-8))


def _edge_pairs(branch: str):
    """Segment pairs whose closest points lie firmly inside one branch of the forward (central differences never
    straddle a clamp): both parameters interior ("interior"), or t clamped below / above with s interior."""
    def sample(rng, n):
        out = []
        while len(out) < n:
            p1, q1, p2, q2 = rng.normal(size=(4, 3))
            d1, d2, r = q1 - p1, q2 - p2, p1 - p2
            a, e, b, c, f = d1 @ d1, d2 @ d2, d1 @ d2, d1 @ r, d2 @ r
            den = a * e - b * b
            if min(a, e) < 0.1 or den < 1e-2 * a * e:
                continue
            s_uc = (b * f - c * e) / den
            t0 = (b * np.clip(s_uc, 0, 1) + f) / e
            m = 0.05
            if branch == "interior":
                ok = m < s_uc < 1 - m and m < t0 < 1 - m
            elif branch == "t below 0":
                ok = t0 < -m and m < -c / a < 1 - m
            else:
                ok = t0 > 1 + m and m < (b - c) / a < 1 - m
            if ok:
                out.append((p1, q1, p2, q2))
        return [np.array([o[k] for o in out]) for k in range(4)]
    return sample


def add_entries(entry, case) -> None:
    entry("geometry", "closest_point_edge_edge",
          *(case(f"segments, {branch}", (V3D, V3D, V3D, V3D), V3D, _edge_pairs(branch), g_edge_edge, n=4)
            for branch in ("interior", "t below 0", "t above 1")))
    f32 = {"eps": 1e-3, "rtol": 2e-2, "atol": 2e-3, "n": 6}
    for name, kernel in (("mesh_query_point", k_point), ("mesh_query_point_no_sign", k_point_no_sign),
                         ("mesh_query_point_sign_normal", k_point_normal),
                         ("mesh_query_point_sign_winding_number", k_point_winding),
                         ("mesh_query_point_sign_parity", k_point_parity),
                         ("mesh_query_furthest_point_no_sign", k_furthest)):
        entry("geometry", name, case("closest point off the surface (sphere mesh)", (V3F,), V3F, [_shell],
                                     kernel=kernel, **f32))
    entry("geometry", "mesh_query_ray", case("t, u, v of rays hitting a sphere", (V3F, V3F), V3F, _rays,
                                             kernel=k_ray, **f32))
    entry("geometry", "mesh_eval_position", case("interior barycentrics", (float, float), V3F, _bary,
                                                 kernel=k_eval_position, **f32))
    entry("geometry", "mesh_get_point", case("a scaled mesh point", (float,), V3F, _scales, kernel=k_get_point,
                                             **f32))
    entry("geometry", "mesh_get_velocity", case("a scaled mesh velocity", (float,), V3F, _scales,
                                                kernel=k_get_velocity, **f32))
    entry("geometry", "mesh_eval_velocity", case("interior barycentrics", (float, float), V3F, _bary,
                                                 kernel=k_eval_velocity, **f32))
