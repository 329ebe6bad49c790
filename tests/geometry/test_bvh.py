# ruff: noqa: UP018, RUF046  (int(0) declares an int32 kernel variable)
"""wp.Bvh queries (aabb, ray, sphere, capsule, groups) against brute force."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp


@wp.kernel
def all_queries(bvh: wp.uint64, lo: wp.array(dtype=wp.vec3), hi: wp.array(dtype=wp.vec3),
                o: wp.array(dtype=wp.vec3), d: wp.array(dtype=wp.vec3), radius: float, max_t: float,
                box_hits: wp.array2d(dtype=wp.int32), ray_hits: wp.array2d(dtype=wp.int32),
                sphere_hits: wp.array2d(dtype=wp.int32), capsule_hits: wp.array2d(dtype=wp.int32)):
    i = wp.tid()
    q = wp.bvh_query_aabb(bvh, lo[i], hi[i])
    k = int(0)
    while wp.bvh_query_next(q, k):
        box_hits[i, k] += 1
    r = wp.bvh_query_ray(bvh, o[i], d[i])
    while wp.bvh_query_next(r, k, max_t):
        ray_hits[i, k] += 1
    r2 = wp.bvh_query_ray(bvh, o[i], d[i])
    while wp.bvh_query_next(r2, k):  # max_dist = inf
        ray_hits[i, k] += 10
    for j in wp.bvh_query_sphere(bvh, o[i], radius):
        sphere_hits[i, j] += 1
    c = wp.bvh_query_capsule(bvh, o[i], d[i], radius)
    while wp.bvh_query_next(c, k, 1.0):
        capsule_hits[i, k] += 1


def _ray_box_t(o, d, lo, hi):
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = 1.0 / d
        a, b = (lo - o) * inv, (hi - o) * inv
    a = np.where(np.isnan(a), -np.inf, a)
    b = np.where(np.isnan(b), np.inf, b)
    t0 = np.maximum(np.minimum(a, b).max(axis=1), 0.0)
    t1 = np.maximum(a, b).min(axis=1)
    return np.where(t0 <= t1, t0, np.inf)


def _boxes(rng, n):
    c = rng.random((n, 3))
    h = 0.01 + 0.05 * rng.random((n, 3))
    return (c - h).astype(np.float32), (c + h).astype(np.float32)


@pytest.mark.parametrize("n", [1, 2, 500])
def test_queries_match_brute_force(n):
    rng = np.random.default_rng(n)
    blo, bhi = _boxes(rng, n)
    bvh = wp.Bvh(wp.array(blo, dtype=wp.vec3), wp.array(bhi, dtype=wp.vec3))
    m = 64
    qlo, qhi = _boxes(rng, m)
    qhi += 0.1
    o = rng.random((m, 3)).astype(np.float32)
    d = (rng.normal(size=(m, 3)) * 0.5).astype(np.float32)
    d[:8] = [0.3, 0.0, 0.0]  # zero components
    radius, max_t = 0.07, 0.9
    outs = [wp.zeros((m, n), dtype=wp.int32) for _ in range(4)]
    wp.launch(all_queries, dim=m, inputs=[bvh.id, *(wp.array(x, dtype=wp.vec3) for x in (qlo, qhi, o, d)), radius,
                                          max_t, *outs])
    box, ray, sph, cap = (x.numpy() for x in outs)
    for i in range(m):
        ref_box = np.all((blo <= qhi[i]) & (qlo[i] <= bhi), axis=1)
        np.testing.assert_array_equal(box[i], ref_box)
        t = _ray_box_t(o[i].astype(np.float64), d[i].astype(np.float64), blo, bhi)
        clear = np.abs(t - max_t) > 1e-4
        np.testing.assert_array_equal(ray[i][clear] % 10, (t <= max_t)[clear])
        np.testing.assert_array_equal(ray[i] // 10, np.isfinite(t))  # unbounded ray: every box it enters
        gap = np.maximum(np.maximum(blo - o[i], o[i] - bhi), 0.0)
        dist = np.linalg.norm(gap, axis=1)
        clear = np.abs(dist - radius) > 1e-5
        np.testing.assert_array_equal(sph[i][clear], (dist <= radius)[clear])
        tc = _ray_box_t(o[i].astype(np.float64), d[i].astype(np.float64), blo - radius, bhi + radius)
        clear = np.abs(tc - 1.0) > 1e-4
        np.testing.assert_array_equal(cap[i][clear], (tc <= 1.0)[clear])


@wp.kernel
def group_query(bvh: wp.uint64, lo: wp.vec3, hi: wp.vec3, hits: wp.array2d(dtype=wp.int32)):
    g = wp.tid()
    root = wp.bvh_get_group_root(bvh, g)
    for k in wp.bvh_query_aabb(bvh, lo, hi, root):
        hits[g, k] += 1


def test_grouped_bvh_roots_restrict_queries_to_their_group():
    rng = np.random.default_rng(3)
    n, groups = 400, 5
    blo, bhi = _boxes(rng, n)
    grp = rng.integers(0, groups, size=n).astype(np.int32)
    grp[grp == 3] = 4  # an empty group
    grp[7] = 3  # ... with a single member: its root is a leaf
    bvh = wp.Bvh(wp.array(blo, dtype=wp.vec3), wp.array(bhi, dtype=wp.vec3), groups=wp.array(grp, dtype=wp.int32))
    hits = wp.zeros((groups + 1, n), dtype=wp.int32)
    lo, hi = np.array([0.2, 0.2, 0.2], np.float32), np.array([0.7, 0.8, 0.6], np.float32)
    wp.launch(group_query, dim=groups + 1, inputs=[bvh.id, wp.vec3(*lo), wp.vec3(*hi), hits])
    overlap = np.all((blo <= hi) & (lo <= bhi), axis=1)
    for g in range(groups):
        np.testing.assert_array_equal(hits.numpy()[g], overlap & (grp == g), err_msg=f"group {g}")
    assert bvh.get_group_root(groups) == -1
    np.testing.assert_array_equal(hits.numpy()[groups], overlap)  # root -1: whole tree (absent group)


def test_refit_after_moving_boxes():
    rng = np.random.default_rng(8)
    blo, bhi = _boxes(rng, 100)
    lowers, uppers = wp.array(blo, dtype=wp.vec3), wp.array(bhi, dtype=wp.vec3)
    bvh = wp.Bvh(lowers, uppers)
    lowers.numpy()[:] += np.float32(5.0)
    uppers.numpy()[:] += np.float32(5.0)
    bvh.refit()
    hits = wp.zeros((1, 100), dtype=wp.int32)
    wp.launch(group_query, dim=1, inputs=[bvh.id, wp.vec3(4.0, 4.0, 4.0), wp.vec3(7.0, 7.0, 7.0), hits])
    assert hits.numpy().sum() == 100


def test_bad_input_and_destroyed_ids():
    lo = wp.array(np.zeros((3, 3), np.float32), dtype=wp.vec3)
    with pytest.raises(wp.Error, match="differ in length"):
        wp.Bvh(lo, wp.array(np.ones((2, 3), np.float32), dtype=wp.vec3))
    with pytest.raises(wp.Error, match="'lowers' above 'uppers'"):
        wp.Bvh(wp.array(np.ones((3, 3), np.float32), dtype=wp.vec3), lo)
    bad = np.ones((3, 3), np.float32)
    bad[1, 2] = np.inf
    with pytest.raises(wp.Error, match="uppers.*NaN or infinite"):
        wp.Bvh(lo, wp.array(bad, dtype=wp.vec3))
    bvh = wp.Bvh(lo, wp.array(np.ones((3, 3), np.float32), dtype=wp.vec3))
    stale = bvh.id
    bvh.destroy()
    hits = wp.zeros((1, 3), dtype=wp.int32)
    with pytest.raises(wp.Error, match="argument 'id' is not a live Bvh"):
        wp.launch(group_query, dim=1, inputs=[stale, wp.vec3(0.0), wp.vec3(1.0), hits])
    pts = wp.array(np.zeros((3, 3), np.float32), dtype=wp.vec3)
    mesh = wp.Mesh(pts, wp.array(np.array([0, 1, 2], np.int32), dtype=wp.int32))
    with pytest.raises(wp.Error, match="not a live Bvh"):  # a Mesh id is not a Bvh id
        wp.launch(group_query, dim=1, inputs=[mesh.id, wp.vec3(0.0), wp.vec3(1.0), hits])


@wp.kernel
def tile_queries(bvh: wp.uint64, mesh: wp.uint64, lo: wp.vec3, hi: wp.vec3, start: wp.vec3, d: wp.vec3,
                 boxes: wp.array(dtype=int), rays: wp.array(dtype=int), faces: wp.array(dtype=int)):
    q = wp.tile_bvh_query_aabb(bvh, lo, hi)
    while wp.tile_query_valid(q):
        i = wp.untile(wp.tile_bvh_query_next(q))
        if i >= 0:
            wp.atomic_add(boxes, i, 1)
    r = wp.bvh_query_ray_tiled(bvh, start, d)  # Warp's deprecated spelling
    while wp.tile_query_valid(r):
        i = wp.untile(wp.bvh_query_next_tiled(r))
        if i >= 0:
            wp.atomic_add(rays, i, 1)
    m = wp.tile_mesh_query_aabb(mesh, lo, hi)
    while wp.tile_query_valid(m):
        f = wp.untile(wp.tile_mesh_query_aabb_next(m))
        if f >= 0:
            wp.atomic_add(faces, f, 1)


def test_thread_block_queries_yield_each_item_once():
    # a block of 8 lanes walks one query together: every overlapping item reaches exactly one lane, once
    rng = np.random.default_rng(11)
    lo = rng.random((60, 3)).astype(np.float32) * 4.0
    hi = lo + rng.random((60, 3)).astype(np.float32)
    bvh = wp.Bvh(wp.array(lo, dtype=wp.vec3), wp.array(hi, dtype=wp.vec3))
    pts = rng.random((30, 3)).astype(np.float32) * 4.0
    tris = rng.integers(0, 30, size=(40, 3)).astype(np.int32)
    mesh = wp.Mesh(wp.array(pts, dtype=wp.vec3), wp.array(tris.reshape(-1), dtype=wp.int32))
    qlo, qhi = np.array([1.0, 1.0, 1.0], np.float32), np.array([3.0, 3.0, 3.0], np.float32)
    start, d = np.zeros(3, np.float32), (np.ones(3) / np.sqrt(3.0)).astype(np.float32)
    boxes, rays, faces = (wp.zeros(n, dtype=int) for n in (60, 60, 40))
    wp.launch_tiled(tile_queries, dim=1, inputs=[bvh.id, mesh.id, wp.vec3(*qlo), wp.vec3(*qhi), wp.vec3(*start),
                                                 wp.vec3(*d), boxes, rays, faces], block_dim=8)
    np.testing.assert_array_equal(boxes.numpy(), np.all((lo <= qhi) & (hi >= qlo), axis=1))
    with np.errstate(divide="ignore"):
        inv = 1.0 / d.astype(np.float64)
    t0 = np.minimum((lo - start) * inv, (hi - start) * inv).max(axis=1)
    t1 = np.maximum((lo - start) * inv, (hi - start) * inv).min(axis=1)
    np.testing.assert_array_equal(rays.numpy(), (t0 <= t1) & (t1 >= 0))
    tri_lo, tri_hi = pts[tris].min(axis=1), pts[tris].max(axis=1)
    np.testing.assert_array_equal(faces.numpy(), np.all((tri_lo <= qhi) & (tri_hi >= qlo), axis=1))
