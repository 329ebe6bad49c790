# ruff: noqa: UP018, RUF046  (int(0) declares an int32 kernel variable)
"""wp.Mesh queries against brute-force float64 NumPy references (random soups with degenerate faces, spheres)."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp

from .meshes import closest_on_triangles, degenerate_mask, random_soup, ray_hits, uv_sphere


@wp.kernel
def closest(mesh: wp.uint64, qs: wp.array(dtype=wp.vec3), max_dist: float, face: wp.array(dtype=wp.int32),
            pos: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    r = wp.mesh_query_point_no_sign(mesh, qs[i], max_dist)
    face[i] = -1
    if r.result:
        face[i] = r.face
        pos[i] = wp.mesh_eval_position(mesh, r.face, r.u, r.v)


@wp.kernel
def signs(mesh: wp.uint64, qs: wp.array(dtype=wp.vec3), out: wp.array2d(dtype=float)):
    i = wp.tid()
    p = qs[i]
    out[i, 0] = wp.mesh_query_point(mesh, p, 1.0e6).sign
    out[i, 1] = wp.mesh_query_point_sign_normal(mesh, p, 1.0e6).sign
    out[i, 2] = wp.mesh_query_point_sign_winding_number(mesh, p, 1.0e6).sign
    out[i, 3] = wp.mesh_query_point_sign_parity(mesh, p, 1.0e6, 3).sign


@wp.kernel
def rays(mesh: wp.uint64, o: wp.array(dtype=wp.vec3), d: wp.array(dtype=wp.vec3), max_t: float,
         t: wp.array(dtype=float), face: wp.array(dtype=wp.int32), count: wp.array(dtype=wp.int32),
         anyhit: wp.array(dtype=wp.int32), err: wp.array(dtype=float)):
    i = wp.tid()
    r = wp.mesh_query_ray(mesh, o[i], d[i], max_t)
    face[i] = -1
    t[i] = -1.0
    if r.result:
        face[i] = r.face
        t[i] = r.t
        hit = wp.mesh_eval_position(mesh, r.face, r.u, r.v)
        err[i] = wp.length(hit - (o[i] + r.t * d[i]))  # the barycentrics reproduce the hit point
    count[i] = wp.mesh_query_ray_count_intersections(mesh, o[i], d[i])
    anyhit[i] = wp.where(wp.mesh_query_ray_anyhit(mesh, o[i], d[i], max_t), 1, 0)


@wp.kernel
def overlaps(mesh: wp.uint64, lo: wp.array(dtype=wp.vec3), hi: wp.array(dtype=wp.vec3), n_faces: int,
             hits: wp.array2d(dtype=wp.int32), sphere_hits: wp.array2d(dtype=wp.int32), radius: float):
    i = wp.tid()
    query = wp.mesh_query_aabb(mesh, lo[i], hi[i])
    f = int(0)
    while wp.mesh_query_next(query, f):
        hits[i, f] += 1
    c = 0.5 * (lo[i] + hi[i])
    for g in wp.mesh_query_sphere(mesh, c, radius):
        sphere_hits[i, g] += 1


def _mesh(pts, tris, **kw):
    return wp.Mesh(wp.array(pts, dtype=wp.vec3), wp.array(tris.reshape(-1), dtype=wp.int32), **kw)


@pytest.mark.parametrize("n_tris,degenerate,max_dist", [(1, 0, 10.0), (2, 0, 10.0), (200, 20, 10.0),
                                                         (500, 50, 0.05)])
def test_closest_point_matches_brute_force(n_tris, degenerate, max_dist):
    rng = np.random.default_rng(n_tris)
    pts, tris = random_soup(n_tris, rng, degenerate)
    mesh = _mesh(pts, tris)
    q = (rng.random((300, 3)) * 1.4 - 0.2).astype(np.float32)
    face = wp.zeros(300, dtype=wp.int32)
    pos = wp.zeros(300, dtype=wp.vec3)
    wp.launch(closest, dim=300, inputs=[mesh.id, wp.array(q, dtype=wp.vec3), max_dist, face, pos])
    a, b, c = pts[tris[:, 0]], pts[tris[:, 1]], pts[tris[:, 2]]
    keep = ~degenerate_mask(a, b, c)
    for i in range(300):
        _, d = closest_on_triangles(q[i], a[keep], b[keep], c[keep])
        ref = d.min() if d.size else np.inf
        got = face.numpy()[i]
        if ref >= max_dist * (1 + 1e-5):
            assert got == -1
            continue
        if ref < max_dist * (1 - 1e-5):
            assert got >= 0 and keep[got]
            np.testing.assert_allclose(np.linalg.norm(pos.numpy()[i] - q[i]), ref, rtol=1e-4, atol=2e-6)


def test_signs_on_a_closed_sphere():
    pts, tris = uv_sphere(10, 14, radius=0.8, centre=(0.1, -0.2, 0.05))
    mesh = _mesh(pts, tris, support_winding_number=True)
    rng = np.random.default_rng(1)
    q = (rng.random((400, 3)) * 2.4 - 1.2).astype(np.float32)
    # keep away from the faceted surface, where inside/outside of the polyhedron and of the sphere differ
    r = np.linalg.norm(q - np.array([0.1, -0.2, 0.05]), axis=1)
    q = q[(r < 0.6) | (r > 0.85)]
    out = wp.zeros((len(q), 4), dtype=float)
    wp.launch(signs, dim=len(q), inputs=[mesh.id, wp.array(q, dtype=wp.vec3), out])
    inside = np.linalg.norm(q - np.array([0.1, -0.2, 0.05]), axis=1) < 0.7
    for k, name in enumerate(["three rays", "pseudo-normal", "winding number", "parity"]):
        np.testing.assert_array_equal(out.numpy()[:, k] < 0, inside, err_msg=name)


def test_winding_number_without_support_falls_back_to_rays():
    pts, tris = uv_sphere(8, 10)
    mesh = _mesh(pts, tris)
    q = np.array([[0, 0, 0], [2, 0, 0], [0.1, 0.2, -0.3]], np.float32)
    out = wp.zeros((3, 4), dtype=float)
    wp.launch(signs, dim=3, inputs=[mesh.id, wp.array(q, dtype=wp.vec3), out])
    assert (out.numpy()[:, 2] < 0).tolist() == [True, False, True]


@pytest.mark.parametrize("n_tris,flat,offset", [(1, False, 0.0), (300, False, 0.0), (300, True, 50.0)])
def test_rays_match_brute_force(n_tris, flat, offset):
    # flat: half the triangles lie in z = const planes (zero-extent boxes, which the quantized wide nodes must still
    # contain); offset: the scene far from the origin (relative rounding of the node boxes)
    rng = np.random.default_rng(10 + n_tris)
    pts, tris = random_soup(n_tris, rng, 5 if n_tris > 10 else 0)
    if flat:
        p3 = pts.reshape(-1, 3, 3)
        p3[::2, :, 2] = p3[::2, :1, 2]
    pts = (pts + np.float32(offset)).astype(np.float32)
    mesh = _mesh(pts, tris)
    n = 400
    o = (rng.random((n, 3)) * 1.6 - 0.3 + offset).astype(np.float32)
    target = (rng.random((n, 3)) + offset).astype(np.float32)
    d = (target - o).astype(np.float32)
    d[:50] = np.array([1, 0, 0], np.float32)  # axis-aligned directions (zero components)
    t = wp.zeros(n, dtype=float)
    face = wp.zeros(n, dtype=wp.int32)
    count = wp.zeros(n, dtype=wp.int32)
    anyhit = wp.zeros(n, dtype=wp.int32)
    err = wp.zeros(n, dtype=float)
    max_t = 0.8
    wp.launch(rays, dim=n, inputs=[mesh.id, wp.array(o, dtype=wp.vec3), wp.array(d, dtype=wp.vec3), max_t, t, face,
                                   count, anyhit, err])
    assert err.numpy().max() < 1e-5
    a, b, c = pts[tris[:, 0]], pts[tris[:, 1]], pts[tris[:, 2]]
    for i in range(n):
        ts = ray_hits(o[i], d[i], a, b, c)
        finite = np.isfinite(ts)
        ref = ts.min()
        # grazing hits (on an edge) may go either way in float32: skip rays whose hits come close to a boundary
        if abs(ref - max_t) < 1e-4:
            continue
        if ref < max_t:
            assert face.numpy()[i] >= 0, i
            np.testing.assert_allclose(t.numpy()[i], ref, rtol=1e-4, atol=1e-5)
            assert anyhit.numpy()[i] == 1
        else:
            assert face.numpy()[i] == -1 and anyhit.numpy()[i] == 0
        assert abs(count.numpy()[i] - finite.sum()) <= 1  # edge-grazing crossings may count once or twice


def test_skewed_tree_matches_brute_force():
    # triangle sizes and positions spread over 2^-20..1 towards a corner: the Morton codes pile up there, so the tree
    # has long chains (wide nodes of seven leaves and one internal child) and runs deep, exercising the 8-wide collapse
    rng = np.random.default_rng(7)
    n = 240
    scale = 0.5 ** rng.integers(0, 21, n).astype(np.float64)
    centres = rng.random((n, 1, 3)) * scale[:, None, None]
    pts = (centres + 0.3 * scale[:, None, None] * (rng.random((n, 3, 3)) - 0.5)).reshape(-1, 3).astype(np.float32)
    tris = np.arange(3 * n, dtype=np.int32).reshape(-1, 3)
    mesh = _mesh(pts, tris)
    a, b, c = pts[tris[:, 0]], pts[tris[:, 1]], pts[tris[:, 2]]
    keep = ~degenerate_mask(a, b, c)
    m = 200
    q = (rng.random((m, 3)) * 0.5 ** rng.integers(0, 16, (m, 1)) * 1.2 - 0.05).astype(np.float32)
    face = wp.zeros(m, dtype=wp.int32)
    pos = wp.zeros(m, dtype=wp.vec3)
    wp.launch(closest, dim=m, inputs=[mesh.id, wp.array(q, dtype=wp.vec3), 10.0, face, pos])
    for i in range(m):
        _, d = closest_on_triangles(q[i], a[keep], b[keep], c[keep])
        assert face.numpy()[i] >= 0 and keep[face.numpy()[i]]
        np.testing.assert_allclose(np.linalg.norm(pos.numpy()[i] - q[i]), d.min(), rtol=1e-4, atol=1e-9)
    o = (q + 2.0).astype(np.float32)
    d = (rng.random((m, 3)) * 0.5 ** rng.integers(0, 16, (m, 1)) - o).astype(np.float32)
    t = wp.zeros(m, dtype=float)
    count = wp.zeros(m, dtype=wp.int32)
    anyhit = wp.zeros(m, dtype=wp.int32)
    err = wp.zeros(m, dtype=float)
    wp.launch(rays, dim=m, inputs=[mesh.id, wp.array(o, dtype=wp.vec3), wp.array(d, dtype=wp.vec3), 10.0, t, face,
                                   count, anyhit, err])
    for i in range(m):
        ts = ray_hits(o[i], d[i], a, b, c)
        if np.isfinite(ts.min()):
            np.testing.assert_allclose(t.numpy()[i], ts.min(), rtol=1e-4, atol=1e-9)
        else:
            assert face.numpy()[i] == -1


def test_box_and_sphere_overlaps_match_brute_force():
    rng = np.random.default_rng(5)
    pts, tris = random_soup(150, rng, 6)
    mesh = _mesh(pts, tris)
    n = 60
    c = rng.random((n, 3)).astype(np.float32)
    half = (0.02 + 0.2 * rng.random((n, 3))).astype(np.float32)
    lo, hi = c - half, c + half
    hits = wp.zeros((n, 150), dtype=wp.int32)
    sph = wp.zeros((n, 150), dtype=wp.int32)
    radius = 0.1
    wp.launch(overlaps, dim=n, inputs=[mesh.id, wp.array(lo, dtype=wp.vec3), wp.array(hi, dtype=wp.vec3), 150, hits,
                                       sph, radius])
    a, b, cc = pts[tris[:, 0]], pts[tris[:, 1]], pts[tris[:, 2]]
    tlo, thi = np.minimum(np.minimum(a, b), cc), np.maximum(np.maximum(a, b), cc)
    for i in range(n):
        ref = np.all((tlo <= hi[i]) & (lo[i] <= thi), axis=1)
        np.testing.assert_array_equal(hits.numpy()[i], ref.astype(np.int32))  # each face exactly once
        centre = 0.5 * (lo[i] + hi[i])
        _, d = closest_on_triangles(centre, a, b, cc)
        clear = np.abs(d - radius) > 1e-5
        np.testing.assert_array_equal(sph.numpy()[i][clear], (d <= radius)[clear].astype(np.int32))


@wp.kernel
def get_helpers(mesh: wp.uint64, out_p: wp.array(dtype=wp.vec3), out_i: wp.array(dtype=wp.int32),
                out_v: wp.array(dtype=wp.vec3), out_n: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out_p[i] = wp.mesh_get_point(mesh, i)
    out_i[i] = wp.mesh_get_index(mesh, i)
    out_v[i] = wp.mesh_get_velocity(mesh, i)
    if i % 3 == 0:
        out_n[i / 3] = wp.mesh_eval_face_normal(mesh, i / 3)
        out_v[i] = wp.mesh_eval_velocity(mesh, i / 3, 1.0, 0.0)


def test_get_and_eval_helpers():
    pts, tris = uv_sphere(4, 5)
    vel = np.random.default_rng(0).random(pts.shape).astype(np.float32)
    mesh = _mesh(pts, tris, velocities=wp.array(vel, dtype=wp.vec3))
    n = tris.size
    out_p, out_v = wp.zeros(n, dtype=wp.vec3), wp.zeros(n, dtype=wp.vec3)
    out_i, out_n = wp.zeros(n, dtype=wp.int32), wp.zeros(len(tris), dtype=wp.vec3)
    wp.launch(get_helpers, dim=n, inputs=[mesh.id, out_p, out_i, out_v, out_n])
    flat = tris.reshape(-1)
    np.testing.assert_array_equal(out_i.numpy(), flat)
    np.testing.assert_allclose(out_p.numpy(), pts[flat])
    np.testing.assert_allclose(out_v.numpy(), vel[flat], rtol=1e-6)  # vertex 0 of each face: eval with u=1 agrees
    nrm = np.cross(pts[tris[:, 1]] - pts[tris[:, 0]], pts[tris[:, 2]] - pts[tris[:, 0]])
    np.testing.assert_allclose(out_n.numpy(), nrm / np.linalg.norm(nrm, axis=1, keepdims=True), atol=1e-5)


def test_refit_follows_moved_points():
    pts, tris = random_soup(100, np.random.default_rng(2))
    points = wp.array(pts, dtype=wp.vec3)
    mesh = wp.Mesh(points, wp.array(tris.reshape(-1), dtype=wp.int32))
    points.numpy()[:] += np.float32(3.0)  # move in place
    mesh.refit()
    q = (pts[:50] + 3.0).astype(np.float32)
    face = wp.zeros(50, dtype=wp.int32)
    pos = wp.zeros(50, dtype=wp.vec3)
    wp.launch(closest, dim=50, inputs=[mesh.id, wp.array(q, dtype=wp.vec3), 1e-3, face, pos])
    np.testing.assert_allclose(pos.numpy(), q, atol=1e-5)  # every query point is a vertex of the moved mesh


def test_refit_after_large_moves_matches_a_fresh_build_and_brute_force():
    # > 2048 internal nodes: the wide nodes come in several depth-first spans (the top, then subtrees), each refit on
    # its own; points jitter, a block of faces moves far away and another collapses, then the refit tree (same layout,
    # requantized boxes) must answer like a tree built from scratch on the moved points, and like brute force
    rng = np.random.default_rng(21)
    n_tris = 2600
    pts, tris = random_soup(n_tris, rng, 40)
    points = wp.array(pts, dtype=wp.vec3)
    mesh = wp.Mesh(points, wp.array(tris.reshape(-1), dtype=wp.int32))
    moved = pts + (0.02 * (rng.random(pts.shape) - 0.5)).astype(np.float32)
    moved[: 3 * 400] += np.float32(5.0)  # 400 faces far out along every axis
    moved[3 * 1000: 3 * 1300] = moved[3 * 1000]  # 300 faces collapse to one point
    moved = moved.astype(np.float32)
    points.numpy()[:] = moved
    mesh.refit()
    fresh = _mesh(moved, tris)
    m = 160
    q = (rng.random((m, 3)) * 6.5 - 0.5).astype(np.float32)
    q[:40] = moved[rng.integers(0, 3 * 400, 40)] + (0.05 * rng.random((40, 3))).astype(np.float32)
    a, b, c = moved[tris[:, 0]], moved[tris[:, 1]], moved[tris[:, 2]]
    keep = ~degenerate_mask(a, b, c)
    dist = {}
    for name, msh in (("refit", mesh), ("fresh", fresh)):
        face = wp.zeros(m, dtype=wp.int32)
        pos = wp.zeros(m, dtype=wp.vec3)
        wp.launch(closest, dim=m, inputs=[msh.id, wp.array(q, dtype=wp.vec3), 100.0, face, pos])
        assert (face.numpy() >= 0).all() and keep[face.numpy()].all(), name
        dist[name] = np.linalg.norm(pos.numpy() - q, axis=1)
    np.testing.assert_allclose(dist["refit"], dist["fresh"], rtol=1e-6, atol=1e-7)
    for i in range(0, m, 4):
        _, d = closest_on_triangles(q[i], a[keep], b[keep], c[keep])
        np.testing.assert_allclose(dist["refit"][i], d.min(), rtol=1e-4, atol=1e-6)
    o = (rng.random((m, 3)) * 7.0 - 0.5).astype(np.float32)
    d = (rng.random((m, 3)) * 6.0 - o).astype(np.float32)
    hit_t = {}
    for name, msh in (("refit", mesh), ("fresh", fresh)):
        t, face, count, anyhit, err = (wp.zeros(m, dtype=float), wp.zeros(m, dtype=wp.int32),
                                       wp.zeros(m, dtype=wp.int32), wp.zeros(m, dtype=wp.int32), wp.zeros(m, dtype=float))
        wp.launch(rays, dim=m, inputs=[msh.id, wp.array(o, dtype=wp.vec3), wp.array(d, dtype=wp.vec3), 10.0, t, face,
                                       count, anyhit, err])
        hit_t[name] = t.numpy()
    np.testing.assert_array_equal(hit_t["refit"], hit_t["fresh"])
    for i in range(0, m, 4):
        ts = ray_hits(o[i], d[i], a, b, c)
        if np.isfinite(ts.min()) and ts.min() < 10.0:
            np.testing.assert_allclose(hit_t["refit"][i], ts.min(), rtol=1e-4, atol=1e-6)
        else:
            assert hit_t["refit"][i] == -1.0
    n = 24
    centre = q[:n]
    half = (0.05 + 0.3 * rng.random((n, 3))).astype(np.float32)
    hits = wp.zeros((n, n_tris), dtype=wp.int32)
    sph = wp.zeros((n, n_tris), dtype=wp.int32)
    wp.launch(overlaps, dim=n, inputs=[mesh.id, wp.array(centre - half, dtype=wp.vec3),
                                       wp.array(centre + half, dtype=wp.vec3), n_tris, hits, sph, 0.01])
    tlo, thi = np.minimum(np.minimum(a, b), c), np.maximum(np.maximum(a, b), c)
    ref = np.all((tlo[None] <= (centre + half)[:, None]) & ((centre - half)[:, None] <= thi[None]), axis=2)
    np.testing.assert_array_equal(hits.numpy(), ref.astype(np.int32))


def test_build_is_deterministic():
    pts, tris = random_soup(3000, np.random.default_rng(9))
    infos = {tuple(sorted(_mesh(pts, tris).bvh_info().items())) for _ in range(3)}
    assert len(infos) == 1
    assert dict(infos.pop())["depth"] < 64


@pytest.mark.parametrize("kwargs,match", [
    ({"indices": np.array([0, 1], np.int32)}, "multiple of 3"),
    ({"indices": np.array([0, 1, 7], np.int32)}, "indices.*outside"),
    ({"indices": np.array([0, -1, 2], np.int32)}, "indices.*outside"),
    ({"indices": np.zeros(0, np.int32)}, "indices.*empty"),
    ({"points": np.zeros((0, 3), np.float32)}, "points.*empty"),
    ({"points": np.array([[0, 0, 0], [1, np.nan, 0], [0, 1, 0]], np.float32)}, "points.*NaN"),
    ({"velocities": np.zeros((2, 3), np.float32)}, "velocities"),
])
def test_bad_input(kwargs, match):
    args = {"points": np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32), "indices": np.array([0, 1, 2], np.int32)}
    args.update(kwargs)
    args = {k: wp.array(v, dtype=wp.vec3 if v.ndim == 2 else wp.int32) if v.size else
            wp.zeros(0, dtype=wp.vec3 if k != "indices" else wp.int32) for k, v in args.items()}
    with pytest.raises(wp.Error, match=match):
        wp.Mesh(**args)


def test_query_on_destroyed_mesh_is_an_error():
    pts, tris = uv_sphere(4, 5)
    mesh = _mesh(pts, tris)
    stale = mesh.id
    mesh.destroy()
    face = wp.zeros(2, dtype=wp.int32)
    pos = wp.zeros(2, dtype=wp.vec3)
    q = wp.zeros(2, dtype=wp.vec3)
    with pytest.raises(wp.Error, match="argument 'id' is not a live Mesh"):
        wp.launch(closest, dim=2, inputs=[stale, q, 1.0, face, pos])
    assert face.numpy().tolist() == [-1, -1]


@wp.kernel
def furthest(mesh: wp.uint64, qs: wp.array(dtype=wp.vec3), min_dist: float, dist: wp.array(dtype=float)):
    i = wp.tid()
    r = wp.mesh_query_furthest_point_no_sign(mesh, qs[i], min_dist)
    dist[i] = -1.0
    if r.result:
        dist[i] = wp.length(qs[i] - wp.mesh_eval_position(mesh, r.face, r.u, r.v))


def test_furthest_point_matches_brute_force():
    rng = np.random.default_rng(4)
    pts, tris = random_soup(200, rng)
    mesh = _mesh(pts, tris)
    q = (rng.random((100, 3)) * 2 - 0.5).astype(np.float32)
    dist = wp.zeros(100, dtype=float)
    wp.launch(furthest, dim=100, inputs=[mesh.id, wp.array(q, dtype=wp.vec3), 0.0, dist])
    ref = np.linalg.norm(q[:, None, :].astype(np.float64) - pts[None, :, :], axis=2).max(1)
    np.testing.assert_allclose(dist.numpy(), ref, rtol=1e-5)
    wp.launch(furthest, dim=100, inputs=[mesh.id, wp.array(q, dtype=wp.vec3), 10.0, dist])
    assert (dist.numpy() == -1.0).all()  # nothing farther than min_dist


@wp.kernel
def legacy_forms(mesh: wp.uint64, p: wp.vec3, d: wp.vec3, out: wp.array(dtype=float)):
    sign = float(0.0)
    face = int(0)
    u = float(0.0)
    v = float(0.0)
    found = wp.mesh_query_point(mesh, p, 10.0, sign, face, u, v)
    r = wp.mesh_query_point(mesh, p, 10.0)
    out[0] = wp.where(found == r.result and face == r.face and u == r.u and v == r.v and sign == r.sign, 1.0, 0.0)
    t = float(0.0)
    normal = wp.vec3()
    root = -1
    hit = wp.mesh_query_ray(mesh, p, d, 10.0, t, u, v, sign, normal, face, root)
    h = wp.mesh_query_ray(mesh, p, d, 10.0)
    out[1] = wp.where(hit == h.result and face == h.face and t == h.t and u == h.u and sign == h.sign, 1.0, 0.0)
    out[2] = t


def test_warp_legacy_out_parameter_forms():
    pts, tris = uv_sphere(6, 8)
    mesh = _mesh(pts, tris)
    out = wp.zeros(3, dtype=float)
    wp.launch(legacy_forms, dim=1, inputs=[mesh.id, wp.vec3(0.1, 0.2, 0.0), wp.vec3(1.0, 0.0, 0.0), out])
    assert out.numpy()[:2].tolist() == [1.0, 1.0] and 0.8 < out.numpy()[2] < 1.0


@wp.kernel
def grouped_rays(mesh: wp.uint64, o: wp.vec3, d: wp.vec3, faces: wp.array(dtype=wp.int32)):
    g = wp.tid()
    r = wp.mesh_query_ray(mesh, o, d, 100.0, wp.mesh_get_group_root(mesh, g))
    faces[g] = r.face


def test_grouped_mesh_ray_roots():
    # three parallel unit squares at x = 1, 2, 3, one group each: a ray along +x hits group g's square only
    quads = []
    for x in (1.0, 2.0, 3.0):
        quads.append([[x, -1, -1], [x, 1, -1], [x, 1, 1], [x, -1, 1]])
    pts = np.array(quads, np.float32).reshape(-1, 3)
    tris = np.array([[4 * q, 4 * q + 1, 4 * q + 2] for q in range(3)] + [[4 * q, 4 * q + 2, 4 * q + 3]
                                                                          for q in range(3)], np.int32)
    groups = np.array([2, 0, 1, 2, 0, 1], np.int32)  # square q is group (q + 2) % 3
    mesh = wp.Mesh(wp.array(pts, dtype=wp.vec3), wp.array(tris.reshape(-1), dtype=wp.int32),
                   groups=wp.array(groups, dtype=wp.int32))
    faces = wp.zeros(4, dtype=wp.int32)
    wp.launch(grouped_rays, dim=4, inputs=[mesh.id, wp.vec3(0.0, 0.1, 0.2), wp.vec3(1.0, 0.0, 0.0), faces])
    got = faces.numpy()
    assert got[3] in (0, 3)  # group 3 is absent: root -1 searches the whole mesh (the nearest square, x = 1)
    for g in range(3):
        assert groups[got[g]] == g  # the hit face belongs to the group


@wp.kernel
def _mesh_get_and_bvh(mesh: wp.uint64, out_pts: wp.array(dtype=wp.vec3), out_idx: wp.array(dtype=wp.int32),
                      centre: wp.vec3, radius: float, hits: wp.array(dtype=wp.int32)):
    i = wp.tid()
    m = wp.mesh_get(mesh)
    if i < m.points.shape[0]:
        out_pts[i] = m.points[i]
    if i < m.indices.shape[0]:
        out_idx[i] = m.indices[i]
    if i == 0:
        q = wp.bvh_query_sphere(wp.mesh_get_bvh(mesh), centre, radius)
        f = int(0)
        while wp.bvh_query_next(q, f):
            hits[f] = 1


def test_mesh_get_and_mesh_get_bvh():
    pts, tris = uv_sphere(5, 6)
    mesh = wp.Mesh(wp.array(pts, dtype=wp.vec3), wp.array(tris.reshape(-1), dtype=wp.int32))
    n = max(len(pts), tris.size)
    out_pts, out_idx = wp.zeros(n, dtype=wp.vec3), wp.zeros(n, dtype=wp.int32)
    hits = wp.zeros(len(tris), dtype=wp.int32)
    centre, radius = np.array([0.3, 0.2, 0.9], np.float32), 0.4
    wp.launch(_mesh_get_and_bvh, dim=n, inputs=[mesh.id, out_pts, out_idx, wp.vec3(*centre), radius, hits])
    np.testing.assert_array_equal(out_pts.numpy()[:len(pts)], pts)
    np.testing.assert_array_equal(out_idx.numpy()[:tris.size], tris.reshape(-1))
    lo, hi = pts[tris].min(axis=1), pts[tris].max(axis=1)
    expected = ((centre - np.clip(centre, lo, hi)) ** 2).sum(axis=1) <= radius * radius
    np.testing.assert_array_equal(hits.numpy().astype(bool), expected)
    assert expected.any() and not expected.all()


_THREADS_SCRIPT = """
import hashlib, sys
import numpy as np
import weft as wp

@wp.kernel
def closest(mesh: wp.uint64, qs: wp.array(dtype=wp.vec3), face: wp.array(dtype=wp.int32)):
    i = wp.tid()
    face[i] = wp.mesh_query_point_no_sign(mesh, qs[i], 1.0e6).face

k = 131  # a flat grid of 2 * 130^2 = 33800 triangles: more than a parallel pass's threshold, many subtrees
x, y = np.meshgrid(np.arange(k, dtype=np.float32), np.arange(k, dtype=np.float32), indexing="ij")
pts = np.stack([x.ravel(), y.ravel(), np.zeros(k * k, np.float32)], 1)
v = (np.arange(k - 1)[:, None] * k + np.arange(k - 1)[None, :]).ravel()
tris = np.concatenate([np.stack([v, v + k, v + 1], 1), np.stack([v + 1, v + k, v + k + 1], 1)]).astype(np.int32)
points = wp.array(pts, dtype=wp.vec3)
mesh = wp.Mesh(points, wp.array(tris.reshape(-1), dtype=wp.int32))
# grid vertices and edge midpoints: each is equally close to several faces, so the face reported follows the tree
q = np.concatenate([pts, pts + np.float32(0.5) * np.array([1, 0, 0], np.float32)]) + np.float32([0, 0, 0.25])
face = wp.zeros(len(q), dtype=wp.int32)
wp.launch(closest, dim=len(q), inputs=[mesh.id, wp.array(q, dtype=wp.vec3), face])
print(hashlib.sha256(face.numpy().tobytes()).hexdigest(), sorted(mesh.bvh_info().items()))
# the refit (wide nodes requantized per span, spans in parallel) after the sheet is raised: the same ties again
points.numpy()[:, 2] = np.float32(0.25) * np.floor(pts[:, 0] / 8.0)
mesh.refit()
q[:, 2] += np.float32(0.25) * np.floor(q[:, 0] / 8.0)
wp.launch(closest, dim=len(q), inputs=[mesh.id, wp.array(q, dtype=wp.vec3), face])
print(hashlib.sha256(face.numpy().tobytes()).hexdigest())
"""


def test_build_does_not_depend_on_thread_count(tmp_path):
    """The parallel build passes (subtrees, depth-first numbering, box fill, 8-wide collapse) make the same tree with
    1 and 2 threads, and so does a refit: closest-point queries that tie between faces report the same faces."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    script = tmp_path / "threads.py"
    script.write_text(_THREADS_SCRIPT)
    outs = []
    for threads in ("1", "2"):
        env = dict(os.environ, WEFT_NUM_THREADS=threads, OMP_NUM_THREADS=threads, PYTHONPATH=str(root))
        res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600)
        assert res.returncode == 0, res.stderr[-2000:]
        outs.append(res.stdout.strip())
    assert outs[0] == outs[1]
