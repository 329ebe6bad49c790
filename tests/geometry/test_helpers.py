"""closest_point_edge_edge and intersect_tri_tri against independent float64 references."""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog, minimize_scalar

import weft as wp


@wp.kernel
def edge_edge(p: wp.array(dtype=wp.vec3d), out: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    out[i] = wp.closest_point_edge_edge(p[4 * i], p[4 * i + 1], p[4 * i + 2], p[4 * i + 3], wp.float64(1.0e-12))


@wp.kernel
def tri_tri(v: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.int32)):
    i = wp.tid()
    out[i] = wp.intersect_tri_tri(v[6 * i], v[6 * i + 1], v[6 * i + 2], v[6 * i + 3], v[6 * i + 4], v[6 * i + 5])


def _segment_distance(p1, q1, p2, q2):
    """min over s of the distance from p1 + s (q1 - p1) to segment 2 (nested 1-D minimisations, float64)."""
    def to_seg2(x):
        d = q2 - p2
        t = np.clip(np.dot(x - p2, d) / np.dot(d, d), 0, 1) if np.dot(d, d) > 0 else 0.0
        return np.linalg.norm(x - (p2 + t * d))
    res = minimize_scalar(lambda s: to_seg2(p1 + s * (q1 - p1)), bounds=(0, 1), method="bounded",
                          options={"xatol": 1e-12})
    return min(res.fun, to_seg2(p1), to_seg2(q1))


def test_closest_point_edge_edge():
    rng = np.random.default_rng(0)
    n = 200
    p = rng.normal(size=(n, 4, 3))
    p[:10, 1] = p[:10, 0]  # degenerate first segment
    p[10:20, 3] = p[10:20, 2] + 1e-9  # degenerate second segment
    p[20:30, 2:] = p[20:30, :2] + np.array([0.3, 0.0, 0.0])  # parallel
    out = wp.zeros(n, dtype=wp.vec3d)
    wp.launch(edge_edge, dim=n, inputs=[wp.array(p.reshape(-1, 3), dtype=wp.vec3d), out])
    r = out.numpy()
    for i in range(n):
        p1, q1, p2, q2 = p[i]
        s, t, d = r[i]
        assert 0 <= s <= 1 and 0 <= t <= 1
        np.testing.assert_allclose(np.linalg.norm(p1 + s * (q1 - p1) - (p2 + t * (q2 - p2))), d, atol=1e-9)
        np.testing.assert_allclose(d, _segment_distance(p1, q1, p2, q2), atol=1e-6)


def _lp_intersects(v, u):
    """Feasibility of a.V = b.U with barycentric a, b (float64 linear programme): the triangles share a point."""
    a_eq = np.zeros((5, 6))
    a_eq[:3, :3] = v.T
    a_eq[:3, 3:] = -u.T
    a_eq[3, :3] = 1
    a_eq[4, 3:] = 1
    res = linprog(np.zeros(6), A_eq=a_eq, b_eq=[0, 0, 0, 1, 1], bounds=[(0, None)] * 6, method="highs")
    return res.status == 0


def test_intersect_tri_tri_matches_a_linear_programme():
    rng = np.random.default_rng(1)
    n = 400
    tris = rng.random((n, 6, 3)).astype(np.float32)
    tris[:40, 3:, 2] = tris[:40, :1, 2]  # coplanar pairs (plane z = const)
    tris[:40, :3, 2] = tris[:40, :1, 2]
    out = wp.zeros(n, dtype=wp.int32)
    wp.launch(tri_tri, dim=n, inputs=[wp.array(tris.reshape(-1, 3), dtype=wp.vec3), out])
    ref = np.array([_lp_intersects(t[:3].astype(np.float64), t[3:].astype(np.float64)) for t in tris])
    got = out.numpy().astype(bool)
    np.testing.assert_array_equal(got, ref)  # (no near-touching pair in this sample; 21 coplanar overlaps)
    assert ref[:40].sum() > 5 and ref.sum() > 50 and (~ref).sum() > 50
