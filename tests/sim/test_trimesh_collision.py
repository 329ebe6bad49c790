"""TriMeshCollisionDetector (warp.sim 1.7.2's ``warp.sim.collide`` API) against float64 NumPy brute force on a small
crumpled cloth: vertex-triangle and edge-edge lists, counts, minimum distances, buffer overflow flags, and
triangle-triangle intersections."""

import numpy as np
import pytest

import weft as wp
from weft import sim
from weft.sim.collide import TRI_CONTACT_FEATURE_EDGE_BC, TriMeshCollisionDetector, triangle_closest_point

R = 0.12  # query radius
BAND = 1e-4  # pairs this close to R may go either way in float32


def _seg_dist(p0, p1, q0, q1):
    """Distance between segments (float64, clamped closest parameters, Ericson 5.1.9)."""
    d1, d2, r = p1 - p0, q1 - q0, p0 - q0
    a, e, f = d1 @ d1, d2 @ d2, d2 @ r
    c, b = d1 @ r, d1 @ d2
    den = a * e - b * b
    s = np.clip((b * f - c * e) / den, 0.0, 1.0) if den > 1e-12 else 0.0
    t = (b * s + f) / e
    if t < 0.0:
        t, s = 0.0, np.clip(-c / a, 0.0, 1.0)
    elif t > 1.0:
        t, s = 1.0, np.clip((b - c) / a, 0.0, 1.0)
    return np.linalg.norm((p0 + d1 * s) - (q0 + d2 * t))


def _point_tri_dist(p, a, b, c):
    n = np.cross(b - a, c - a)
    n /= np.linalg.norm(n)
    q = p - n * ((p - a) @ n)
    inside = all(np.cross(v1 - v0, q - v0) @ n >= 0 for v0, v1 in ((a, b), (b, c), (c, a)))
    if inside:
        return abs((p - a) @ n)
    return min(_point_seg_dist(p, v0, v1) for v0, v1 in ((a, b), (b, c), (c, a)))


def _point_seg_dist(p, a, b):
    t = np.clip((p - a) @ (b - a) / ((b - a) @ (b - a)), 0.0, 1.0)
    return np.linalg.norm(p - (a + (b - a) * t))


@pytest.fixture(scope="module")
def cloth():
    b = sim.ModelBuilder()
    b.add_cloth_grid(pos=wp.vec3(0.0, 0.0, 0.0), rot=wp.quat_identity(), vel=wp.vec3(0.0, 0.0, 0.0), dim_x=6,
                     dim_y=6, cell_x=0.1, cell_y=0.1, mass=0.1)
    m = b.finalize("cpu")
    q = m.particle_q.numpy()
    # fold the sheet over itself (a crease along x = 0.3) so distant parts come close, plus noise
    x = q[:, 0].copy()
    fold = x > 0.3
    q[fold, 0] = 0.6 - x[fold]
    q[fold, 2] += 0.07
    q += np.random.default_rng(3).normal(scale=0.01, size=q.shape)
    m.particle_q.assign(q.astype(np.float32))
    return m, q.astype(np.float64)


def test_vertex_triangle_lists_match_brute_force(cloth):
    m, q = cloth
    tris = m.tri_indices.numpy()
    det = TriMeshCollisionDetector(m, vertex_collision_buffer_pre_alloc=64, triangle_collision_buffer_pre_alloc=64)
    det.vertex_triangle_collision_detection(R)
    counts = det.vertex_colliding_triangles_count.numpy()
    lists = det.vertex_colliding_triangles.numpy()
    offsets = det.vertex_colliding_triangles_offsets.numpy()
    vmin = det.vertex_colliding_triangles_min_dist.numpy()
    tcount = det.triangle_colliding_vertices_count.numpy()
    tlists, toff = det.triangle_colliding_vertices.numpy(), det.triangle_colliding_vertices_offsets.numpy()
    tmin = det.triangle_colliding_vertices_min_dist.numpy()
    assert det.resize_flags.numpy()[:2].tolist() == [0, 0]
    dist = np.full((m.particle_count, m.tri_count), np.inf)
    for v in range(m.particle_count):
        for t, (i, j, k) in enumerate(tris):
            if v not in (i, j, k):
                dist[v, t] = _point_tri_dist(q[v], q[i], q[j], q[k])
    assert ((dist < R - BAND) & (dist > 0.02)).sum() > 20  # the fold brings many pairs within the radius
    for v in range(m.particle_count):
        found = set(lists[offsets[v]:offsets[v] + counts[v]].tolist())
        assert set(np.flatnonzero(dist[v] < R - BAND)) <= found <= set(np.flatnonzero(dist[v] < R + BAND))
        np.testing.assert_allclose(vmin[v], min(R, dist[v].min()), atol=2e-5)
    for t in range(m.tri_count):
        found = set(tlists[toff[t]:toff[t] + tcount[t]].tolist())
        assert set(np.flatnonzero(dist[:, t] < R - BAND)) <= found <= set(np.flatnonzero(dist[:, t] < R + BAND))
        np.testing.assert_allclose(tmin[t], min(R, dist[:, t].min()), atol=2e-5)

    # small buffers: every pair still counted, the lists hold the first ones, the overflow flags are set
    small = TriMeshCollisionDetector(m, vertex_collision_buffer_pre_alloc=2, triangle_collision_buffer_pre_alloc=2)
    small.vertex_triangle_collision_detection(R)
    np.testing.assert_array_equal(small.vertex_colliding_triangles_count.numpy(), counts)
    assert small.resize_flags.numpy()[:2].tolist() == [1, 1]
    s_lists, s_off = small.vertex_colliding_triangles.numpy(), small.vertex_colliding_triangles_offsets.numpy()
    for v in range(m.particle_count):
        kept = s_lists[s_off[v]:s_off[v] + min(2, counts[v])].tolist()
        assert set(kept) <= set(lists[offsets[v]:offsets[v] + counts[v]].tolist())


def test_edge_edge_lists_match_brute_force(cloth):
    m, q = cloth
    edges = m.edge_indices.numpy()[:, 2:4]
    det = TriMeshCollisionDetector(m, edge_collision_buffer_pre_alloc=64)
    det.edge_edge_collision_detection(R)
    counts = det.edge_colliding_edges_count.numpy()
    lists, offsets = det.edge_colliding_edges.numpy(), det.edge_colliding_edges_offsets.numpy()
    emin = det.edge_colliding_edges_min_dist.numpy()
    assert det.resize_flags.numpy()[2] == 0
    for e, (i, j) in enumerate(edges):
        d = np.array([np.inf if {i, j} & {k, n} else _seg_dist(q[i], q[j], q[k], q[n]) for k, n in edges])
        found = set(lists[offsets[e]:offsets[e] + counts[e]].tolist())
        assert set(np.flatnonzero(d < R - BAND)) <= found <= set(np.flatnonzero(d < R + BAND))
        np.testing.assert_allclose(emin[e], min(R, d.min()), atol=2e-5)
    assert counts.sum() > 20


def test_refit_and_triangle_intersections():
    # two triangles sharing no vertex: the second pierces the first, then moves away
    verts = [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, 1.0), (0.2, -0.5, 0.2), (0.2, 0.5, 0.2), (0.3, 0.0, 0.6)]
    b = sim.ModelBuilder()
    b.add_cloth_mesh(pos=wp.vec3(0.0, 0.0, 0.0), rot=wp.quat_identity(), scale=1.0, vel=wp.vec3(0.0, 0.0, 0.0),
                     vertices=[wp.vec3(*v) for v in verts], indices=[0, 1, 2, 3, 4, 5], density=0.1)
    m = b.finalize("cpu")
    det = TriMeshCollisionDetector(m)
    det.triangle_triangle_intersection_detection()
    assert det.triangle_intersecting_triangles_count.numpy().tolist() == [1, 1]
    assert det.triangle_intersecting_triangles.numpy()[[0, 8]].tolist() == [1, 0]
    moved = np.array(verts, dtype=np.float32)
    moved[3:, 1] += 2.0
    det.refit(wp.array(moved, dtype=wp.vec3))
    det.triangle_triangle_intersection_detection()
    assert det.triangle_intersecting_triangles_count.numpy().tolist() == [0, 0]
    det.vertex_triangle_collision_detection(0.5)
    assert det.vertex_colliding_triangles_count.numpy().sum() == 0


def test_triangle_closest_point_features():
    @wp.kernel
    def closest(p: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3), bary: wp.array(dtype=wp.vec3),
                feature: wp.array(dtype=int)):
        i = wp.tid()
        c, w, f = triangle_closest_point(wp.vec3(0.0, 0.0, 0.0), wp.vec3(1.0, 0.0, 0.0), wp.vec3(0.0, 1.0, 0.0), p[i])
        out[i] = c
        bary[i] = w
        feature[i] = f

    pts = np.array([[-1, -1, 0.3], [2, -0.1, 0], [-0.1, 2, 0], [0.5, -1, 1], [-1, 0.5, 0], [1, 1, -2],
                    [0.2, 0.3, 0.7]], dtype=np.float32)
    out, bary, feat = (wp.zeros(len(pts), dtype=wp.vec3), wp.zeros(len(pts), dtype=wp.vec3),
                       wp.zeros(len(pts), dtype=int))
    wp.launch(closest, len(pts), inputs=[wp.array(pts, dtype=wp.vec3)], outputs=[out, bary, feat])
    assert feat.numpy().tolist() == [0, 1, 2, 3, 4, int(TRI_CONTACT_FEATURE_EDGE_BC), 6]
    expect = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0.5, 0, 0], [0, 0.5, 0], [0.5, 0.5, 0], [0.2, 0.3, 0]])
    np.testing.assert_allclose(out.numpy(), expect, atol=1e-6)
    tri = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], dtype=np.float64)
    np.testing.assert_allclose(bary.numpy() @ tri, expect, atol=1e-6)
