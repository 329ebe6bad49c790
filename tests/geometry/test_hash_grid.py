# ruff: noqa: UP018, RUF046  (int(0) declares an int32 kernel variable)
"""wp.HashGrid: neighbour queries against brute force, determinism, bad input."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp


@wp.kernel
def count_while(grid: wp.uint64, pts: wp.array(dtype=wp.vec3), radius: float, out: wp.array(dtype=wp.int32)):
    i = wp.tid()
    p = pts[i]
    query = wp.hash_grid_query(grid, p, radius)
    index = int(0)
    n = int(0)
    while wp.hash_grid_query_next(query, index):
        if wp.length(p - pts[index]) <= radius:
            n += 1
    out[i] = n


@wp.kernel
def neighbour_sum(grid: wp.uint64, pts: wp.array(dtype=wp.vec3), radius: float, out_n: wp.array(dtype=wp.int32),
                  out_sum: wp.array(dtype=wp.int64), out_seen: wp.array(dtype=wp.int32)):
    tid = wp.tid()
    i = wp.hash_grid_point_id(grid, tid)
    p = pts[i]
    n = int(0)
    s = wp.int64(0)
    for j in wp.hash_grid_query(grid, p, radius):
        if wp.length(p - pts[j]) <= radius:
            n += 1
            s += wp.int64(j)
    out_n[i] = n
    out_sum[i] = s
    wp.atomic_add(out_seen, i, 1)


@wp.kernel
def candidates(grid: wp.uint64, pts: wp.array(dtype=wp.vec3), radius: float, out: wp.array(dtype=wp.int32),
               seq: wp.array2d(dtype=wp.int32)):
    i = wp.tid()
    n = int(0)
    neighbours = wp.hash_grid_query(grid, pts[i], radius)  # iterating a query held in a variable, as Warp allows
    for j in neighbours:
        if i < seq.shape[0] and n < seq.shape[1]:
            seq[i, n] = j  # the order of the candidates
        n += 1
    out[i] = n


def _brute(points, queries, radius):
    d = np.linalg.norm(queries[:, None, :].astype(np.float64) - points[None, :, :].astype(np.float64), axis=2)
    within = d <= radius
    return within.sum(1), (within * np.arange(len(points))[None, :]).sum(1)


@pytest.mark.parametrize("dims,radius,n,spread", [((8, 8, 8), 0.1, 400, 1.0), ((2, 3, 1), 0.25, 300, 2.0),
                                                   ((64, 64, 64), 0.05, 800, 1.0), ((16, 16, 16), 0.7, 200, 3.0)])
def test_neighbours_match_brute_force(dims, radius, n, spread):
    rng = np.random.default_rng(n)
    pts = (rng.random((n, 3)) * spread - 0.5 * spread).astype(np.float32)
    pts[:5] = pts[5]  # duplicates
    points = wp.array(pts, dtype=wp.vec3)
    grid = wp.HashGrid(*dims)
    grid.build(points, radius)
    count = wp.zeros(n, dtype=wp.int32)
    ssum = wp.zeros(n, dtype=wp.int64)
    seen = wp.zeros(n, dtype=wp.int32)
    wp.launch(neighbour_sum, dim=n, inputs=[grid.id, points, radius, count, ssum, seen])
    ref_n, ref_s = _brute(pts, pts, radius)
    # float32 distances can differ from float64 right at the radius: compare away from that shell
    d = np.linalg.norm(pts[:, None, :].astype(np.float64) - pts[None, :, :], axis=2)
    clean = ~np.any(np.abs(d - radius) < 1e-5, axis=1)
    np.testing.assert_array_equal(count.numpy()[clean], ref_n[clean])
    np.testing.assert_array_equal(ssum.numpy()[clean], ref_s[clean])
    np.testing.assert_array_equal(seen.numpy(), np.ones(n))  # hash_grid_point_id is a permutation
    c2 = wp.zeros(n, dtype=wp.int32)
    wp.launch(count_while, dim=n, inputs=[grid.id, points, radius, c2])
    np.testing.assert_array_equal(c2.numpy(), count.numpy())


def test_candidates_cover_neighbours_and_visit_each_once():
    rng = np.random.default_rng(3)
    pts = rng.random((500, 3)).astype(np.float32)
    points = wp.array(pts, dtype=wp.vec3)
    grid = wp.HashGrid(4, 4, 4)  # small: many cells hash together
    grid.build(points, 0.1)
    out = wp.zeros(500, dtype=wp.int32)
    seq = wp.full((500, 500), -1, dtype=wp.int32)
    wp.launch(candidates, dim=500, inputs=[grid.id, points, 0.1, out, seq])
    # every point lies in a 4x4x4 domain of cells of 0.1 -> the 3x3x3 block of a query visits each hashed cell once,
    # so candidates are exactly the points of the (wrapped) cells: never more than all points, at least the neighbours
    ref_n, _ = _brute(pts, pts, 0.1)
    assert (out.numpy() >= ref_n).all() and (out.numpy() <= 500).all()
    cells = np.floor(pts / 0.1).astype(int)
    h = (cells % 4) @ np.array([1, 4, 16])
    for i in range(0, 500, 37):
        lo = np.floor((pts[i] - 0.1) / 0.1).astype(int)
        hi = np.floor((pts[i] + 0.1) / 0.1).astype(int)
        hashed = {int((x % 4) + 4 * (y % 4) + 16 * (z % 4)) for x in range(lo[0], hi[0] + 1)
                  for y in range(lo[1], hi[1] + 1) for z in range(lo[2], hi[2] + 1)}
        assert out.numpy()[i] == int(np.isin(h, list(hashed)).sum())
        # the order: cell by cell (x fastest, each hashed cell once, as the box's cells wrap), ids ascending in a cell
        order, visited = [], set()
        for z in range(lo[2], lo[2] + min(hi[2] - lo[2] + 1, 4)):
            for y in range(lo[1], lo[1] + min(hi[1] - lo[1] + 1, 4)):
                for x in range(lo[0], lo[0] + min(hi[0] - lo[0] + 1, 4)):
                    cell = int((x % 4) + 4 * (y % 4) + 16 * (z % 4))
                    if cell not in visited:
                        visited.add(cell)
                        order.extend(np.flatnonzero(h == cell).tolist())
        np.testing.assert_array_equal(seq.numpy()[i, : len(order)], order)


def test_build_is_deterministic_and_stable():
    rng = np.random.default_rng(7)
    pts = rng.random((20000, 3)).astype(np.float32)
    grid = wp.HashGrid(32, 32, 32)
    grid.build(wp.array(pts, dtype=wp.vec3), 0.05)
    first = grid.sorted_ids()
    grid.build(wp.array(pts, dtype=wp.vec3), 0.05)
    np.testing.assert_array_equal(first, grid.sorted_ids())
    cells = np.floor(pts / 0.05).astype(np.int64) % 32
    h = cells[:, 0] + 32 * cells[:, 1] + 1024 * cells[:, 2]
    np.testing.assert_array_equal(first, np.argsort(h, kind="stable"))


def test_sparse_and_dense_rebuilds_clear_old_cells():
    """Builds with few points for the cells (sorted keys, only touched cells reset) alternating with dense builds
    (counting sort over all cells): the order is the stable sort by cell every time and queries see only the
    current points."""
    rng = np.random.default_rng(11)
    grid = wp.HashGrid(16, 16, 16)
    radius = 0.08
    for n in (40, 300, 25, 5000, 60, 60):  # 16^3 = 4096 cells: fewer than 256 points take the sparse path
        pts = (rng.random((n, 3)) * 1.2).astype(np.float32)
        grid.build(wp.array(pts, dtype=wp.vec3), radius)
        cells = np.floor(pts / radius).astype(np.int64) % 16
        h = cells[:, 0] + 16 * cells[:, 1] + 256 * cells[:, 2]
        np.testing.assert_array_equal(grid.sorted_ids(), np.argsort(h, kind="stable"))
        out = wp.zeros(n, dtype=wp.int32)
        wp.launch(count_while, dim=n, inputs=[grid.id, wp.array(pts, dtype=wp.vec3), radius, out])
        np.testing.assert_array_equal(out.numpy(), _brute(pts, pts, radius)[0])


def test_rebuild_and_reserve():
    grid = wp.HashGrid(8, 8, 8)
    grid.reserve(10)
    pts = np.zeros((3, 3), np.float32)
    grid.build(wp.array(pts, dtype=wp.vec3), 1.0)
    out = wp.zeros(3, dtype=wp.int32)
    wp.launch(count_while, dim=3, inputs=[grid.id, wp.array(pts, dtype=wp.vec3), 1.0, out])
    assert out.numpy().tolist() == [3, 3, 3]
    pts2 = np.arange(60, dtype=np.float32).reshape(20, 3) * 10.0
    grid.build(wp.array(pts2, dtype=wp.vec3), 1.0)
    out = wp.zeros(20, dtype=wp.int32)
    wp.launch(count_while, dim=20, inputs=[grid.id, wp.array(pts2, dtype=wp.vec3), 1.0, out])
    assert out.numpy().tolist() == [1] * 20


def test_empty_build():
    grid = wp.HashGrid(4, 4, 4)
    grid.build(wp.zeros(0, dtype=wp.vec3), 1.0)
    pts = wp.array(np.zeros((2, 3), np.float32), dtype=wp.vec3)
    out = wp.zeros(2, dtype=wp.int32)
    wp.launch(candidates, dim=2, inputs=[grid.id, pts, 1.0, out, wp.zeros((0, 0), dtype=wp.int32)])
    assert out.numpy().tolist() == [0, 0]


@pytest.mark.parametrize("dims", [(0, 1, 1), (1, -2, 1), (1, 1, 2.5)])
def test_bad_dims(dims):
    with pytest.raises(wp.Error, match="dim_"):
        wp.HashGrid(*dims)


def test_bad_build_input():
    grid = wp.HashGrid(4, 4, 4)
    pts = np.zeros((4, 3), np.float32)
    with pytest.raises(wp.Error, match="radius"):
        grid.build(wp.array(pts, dtype=wp.vec3), 0.0)
    with pytest.raises(wp.Error, match="points"):
        grid.build(wp.zeros(4, dtype=wp.int32), 1.0)
    with pytest.raises(wp.Error, match="groups.*3 entries"):
        grid.build(wp.array(pts, dtype=wp.vec3), 1.0, groups=wp.array(np.array([0, 1, -1], np.int32)))
    with pytest.raises(TypeError, match="dtype"):
        wp.HashGrid(4, 4, 4, dtype=wp.int32)
    with pytest.raises(TypeError, match="float64 vectors"):
        grid.build(wp.array(pts, dtype=wp.vec3d), 1.0)
    with pytest.raises(RuntimeError, match="cell count exceeds"):
        wp.HashGrid(2048, 1024, 1024)


def test_non_finite_points_are_never_neighbours():
    pts = np.array([[0, 0, 0], [0.1, 0, 0], [np.nan, 0, 0], [np.inf, 0, 0], [-np.inf, 1e30, 0]], np.float32)
    points = wp.array(pts, dtype=wp.vec3)
    grid = wp.HashGrid(8, 8, 8)
    grid.build(points, 0.5)
    out = wp.zeros(5, dtype=wp.int32)
    wp.launch(count_while, dim=5, inputs=[grid.id, points, 0.5, out])
    assert out.numpy().tolist()[:2] == [2, 2] and out.numpy().tolist()[2:] == [0, 0, 0]


@wp.kernel
def grouped_count(grid: wp.uint64, pts: wp.array(dtype=wp.vec3), groups: wp.array(dtype=wp.int32), radius: float,
                  out: wp.array(dtype=wp.int32)):
    i = wp.tid()
    n = int(0)
    for j in wp.hash_grid_query(grid, pts[i], radius, groups[i]):
        if wp.length(pts[i] - pts[j]) <= radius:
            n += 1
    out[i] = n


def test_grouped_grid_queries_one_group():
    rng = np.random.default_rng(11)
    pts = rng.random((400, 3)).astype(np.float32)
    grp = rng.integers(0, 3, size=400).astype(np.int32)
    points, groups = wp.array(pts, dtype=wp.vec3), wp.array(grp, dtype=wp.int32)
    grid = wp.HashGrid(16, 16, 16)
    grid.build(points, 0.15, groups=groups)
    out = wp.zeros(400, dtype=wp.int32)
    wp.launch(grouped_count, dim=400, inputs=[grid.id, points, groups, 0.15, out])
    d = np.linalg.norm(pts[:, None, :].astype(np.float64) - pts[None, :, :], axis=2)
    ref = ((d <= 0.15) & (grp[:, None] == grp[None, :])).sum(1)
    clear = ~np.any(np.abs(d - 0.15) < 1e-5, axis=1)
    np.testing.assert_array_equal(out.numpy()[clear], ref[clear])


@wp.kernel
def count_f64(grid: wp.uint64, pts: wp.array(dtype=wp.vec3d), radius: wp.float64, out: wp.array(dtype=wp.int32)):
    i = wp.tid()
    n = int(0)
    for j in wp.hash_grid_query(grid, pts[i], radius):
        if wp.length(pts[i] - pts[j]) <= radius:
            n += 1
    out[i] = n


def test_float64_grid():
    rng = np.random.default_rng(12)
    pts = rng.random((300, 3)) * 1e3  # float64 positions far from the origin
    points = wp.array(pts, dtype=wp.vec3d)
    grid = wp.HashGrid(16, 16, 16, dtype=wp.float64)
    assert grid.dtype == wp.float64
    grid.build(points, 80.0)
    out = wp.zeros(300, dtype=wp.int32)
    wp.launch(count_f64, dim=300, inputs=[grid.id, points, 80.0, out])
    d = np.linalg.norm(pts[:, None, :] - pts[None, :, :], axis=2)
    np.testing.assert_array_equal(out.numpy(), (d <= 80.0).sum(1))


def test_destroyed_or_forged_id_is_an_error_not_a_crash():
    pts = wp.array(np.zeros((2, 3), np.float32), dtype=wp.vec3)
    grid = wp.HashGrid(4, 4, 4)
    grid.build(pts, 1.0)
    stale = grid.id
    out = wp.zeros(2, dtype=wp.int32)
    # a live launch first: later launches take the CPU fast path, which must read the error state too
    wp.launch(candidates, dim=2, inputs=[stale, pts, 1.0, out, wp.zeros((0, 0), dtype=wp.int32)])
    assert out.numpy().tolist() == [2, 2]
    grid.destroy()
    out.zero_()
    for bad in (stale, 12345, 0, 2**63 + 5):
        with pytest.raises(wp.Error, match="argument 'id' is not a live HashGrid"):
            wp.launch(candidates, dim=2, inputs=[bad, pts, 1.0, out, wp.zeros((0, 0), dtype=wp.int32)])
    assert out.numpy().tolist() == [0, 0]
