"""Lane runs of hash-grid query loops (weft/backend/lanes.py) against float64 NumPy brute force and the scalar body.

Points are dyadic (multiples of 1/16) so every distance comparison is exact in float32: pairs at exactly the radius
count as in the brute force. The lane path runs for eligible kernels (their source has ``fwd_lanes``); debug builds
render only the scalar body, which gives a bit-for-bit reference for float sums.
"""

import numpy as np
import pytest

import weft as wp
from weft import config


@wp.kernel
def lane_stats(grid: wp.uint64, pts: wp.array(dtype=wp.vec3), r: float, mapped: int, count: wp.array(dtype=wp.int32),
               wsum: wp.array(dtype=float), far: wp.array(dtype=float)):
    tid = wp.tid()
    i = tid
    if mapped != 0:
        i = wp.hash_grid_point_id(grid, tid)
    p = pts[i]
    n = int(0)  # noqa: UP018, RUF046
    s = float(0.0)  # noqa: UP018
    near = float(1.0e9)  # noqa: UP018
    q = wp.hash_grid_query(grid, p, r)
    j = int(0)  # noqa: UP018, RUF046
    while wp.hash_grid_query_next(q, j):
        d = wp.length(p - pts[j])
        if d <= r:
            n += 1
            if j != i:
                s += (r - d) * float(j)
        else:
            near = wp.min(near, d)
    count[i] = n
    wsum[i] = s
    far[i] = near


@wp.kernel
def lane_grouped(grid: wp.uint64, pts: wp.array(dtype=wp.vec3), groups: wp.array(dtype=wp.int32), r: float,
                 count: wp.array(dtype=wp.int32)):
    tid = wp.tid()
    i = wp.hash_grid_point_id(grid, tid)
    p = pts[i]
    n = int(0)  # noqa: UP018, RUF046
    for j in wp.hash_grid_query(grid, p, r, groups[i]):
        if wp.length(p - pts[j]) <= r:
            n += 1
    count[i] = n


@wp.kernel
def lane_store(grid: wp.uint64, pts: wp.array(dtype=wp.vec3), r: float, hits: wp.array(dtype=wp.int32)):
    tid = wp.tid()
    i = wp.hash_grid_point_id(grid, tid)
    p = pts[i]
    for j in wp.hash_grid_query(grid, p, r):
        if wp.length(p - pts[j]) <= r:
            wp.atomic_add(hits, j, 1)  # a side effect in the body: not a lane kernel


def _source(kernel, args):
    return kernel._lower(kernel.infer_types(args), False, None).source


def _dyadic(n, seed, extent=16):
    rng = np.random.default_rng(seed)
    return (rng.integers(0, extent, size=(n, 3)) / 16.0).astype(np.float32)


def _brute(pts, r):
    d = np.linalg.norm(pts[:, None, :].astype(np.float64) - pts[None, :, :], axis=-1)
    return d, d <= r


def _run_stats(pts, r, mapped, dim=8):
    n = len(pts)
    p = wp.array(pts, dtype=wp.vec3)
    grid = wp.HashGrid(dim, dim, dim)
    grid.build(p, r)
    count = wp.zeros(n, dtype=wp.int32)
    wsum = wp.zeros(n, dtype=float)
    far = wp.zeros(n, dtype=float)
    args = [grid.id, p, r, mapped, count, wsum, far]
    wp.launch(lane_stats, dim=n, inputs=args)
    return args, count.numpy(), wsum.numpy(), far.numpy()


@pytest.mark.parametrize("mapped", [1, 0])
@pytest.mark.parametrize("n", [1, 15, 16, 17, 1001])
def test_lane_counts_match_brute_force(n, mapped):
    """Lanes in one cell (mapped through hash_grid_point_id) or in different cells (tid order), partial runs."""
    pts = _dyadic(n, seed=n)
    if n > 1:
        pts[-1] = pts[0] + np.float32([0.25, 0.0, 0.0])  # a pair at exactly the radius
    r = 0.25  # dyadic points: axis neighbours at exactly r count (d <= r)
    args, count, wsum, _ = _run_stats(pts, r, mapped)
    assert "fwd_lanes" in _source(lane_stats, args)
    d, within = _brute(pts, r)
    np.testing.assert_array_equal(count, within.sum(1))
    ids = np.arange(n)
    ref = np.where(within & (ids[None, :] != ids[:, None]), (r - d) * ids[None, :], 0.0).sum(1)
    np.testing.assert_allclose(wsum, ref, rtol=1e-5, atol=1e-5)
    if n > 1:
        assert (d == r).any()  # the radius edge case is exercised


def test_lane_results_equal_scalar_body():
    """Bit for bit the scalar loop's results (the same candidates in the same order per lane): the debug build,
    which has no lane function, is the reference. The far value tests the else branch (candidates beyond r)."""
    pts = _dyadic(2000, seed=3)
    r = 0.1875
    _, count, wsum, far = _run_stats(pts, r, 1)
    saved = config.mode
    try:
        config.mode = "debug"
        _, count_s, wsum_s, far_s = _run_stats(pts, r, 1)
    finally:
        config.mode = saved
    np.testing.assert_array_equal(count, count_s)
    np.testing.assert_array_equal(wsum, wsum_s)
    np.testing.assert_array_equal(far, far_s)
    assert np.isfinite(far).all() and (far > r).all()


def test_lane_grouped_query():
    n = 777
    pts = _dyadic(n, seed=5)
    groups_np = np.random.default_rng(6).integers(0, 3, n).astype(np.int32)
    p = wp.array(pts, dtype=wp.vec3)
    groups = wp.array(groups_np, dtype=wp.int32)
    r = 0.25
    grid = wp.HashGrid(8, 8, 8)
    grid.build(p, r, groups=groups)
    count = wp.zeros(n, dtype=wp.int32)
    args = [grid.id, p, groups, r, count]
    assert "fwd_lanes" in _source(lane_grouped, args)
    wp.launch(lane_grouped, dim=n, inputs=args)
    _, within = _brute(pts, r)
    same = groups_np[:, None] == groups_np[None, :]
    np.testing.assert_array_equal(count.numpy(), (within & same).sum(1))


def test_side_effects_keep_the_scalar_loop():
    n = 300
    pts = _dyadic(n, seed=7)
    p = wp.array(pts, dtype=wp.vec3)
    grid = wp.HashGrid(8, 8, 8)
    grid.build(p, 0.25)
    hits = wp.zeros(n, dtype=wp.int32)
    args = [grid.id, p, 0.25, hits]
    assert "fwd_lanes" not in _source(lane_store, args)
    wp.launch(lane_store, dim=n, inputs=args)
    _, within = _brute(pts, 0.25)
    np.testing.assert_array_equal(hits.numpy(), within.sum(0))


@wp.kernel
def lane_energy(grid: wp.uint64, pts: wp.array(dtype=wp.vec3d), r: wp.float64, e: wp.array(dtype=wp.float64)):
    tid = wp.tid()
    i = wp.hash_grid_point_id(grid, tid)
    p = pts[i]
    s = wp.float64(0.0)
    q = wp.hash_grid_query(grid, p, r)
    j = int(0)  # noqa: UP018, RUF046
    while wp.hash_grid_query_next(q, j):
        d = wp.length(p - pts[j])
        if d < r and j != i:
            s += (r - d) * (r - d) * (r - d)
    e[i] = s


@wp.kernel
def lane_energy_for(grid: wp.uint64, pts: wp.array(dtype=wp.vec3d), r: wp.float64, e: wp.array(dtype=wp.float64)):
    tid = wp.tid()
    i = wp.hash_grid_point_id(grid, tid)
    p = pts[i]
    s = wp.float64(0.0)
    for j in wp.hash_grid_query(grid, p, r):
        d = wp.length(p - pts[j])
        if d < r and j != i:
            s += (r - d) * (r - d) * (r - d)
    e[i] = s


@pytest.mark.parametrize("kernel", [lane_energy, lane_energy_for], ids=["while", "for"])
def test_lane_kernel_gradient_matches_central_differences(kernel):
    """The forward runs in lanes, the backward (adjoint module) as before: d(sum e)/d(points) vs central
    differences of the float64 brute-force energy. The `for` form's reverse sweep restores each iteration's index
    (it replayed the body with the failed last step's index, -1, before: an out-of-bounds read)."""
    rng = np.random.default_rng(11)
    n = 120
    pts = rng.random((n, 3)) * 0.6
    r = 0.2
    grid = wp.HashGrid(8, 8, 8, dtype=wp.float64)
    p = wp.array(pts, dtype=wp.vec3d, requires_grad=True)
    grid.build(p, r)
    e = wp.zeros(n, dtype=wp.float64, requires_grad=True)
    assert "fwd_lanes" in _source(kernel, [grid.id, p, r, e])
    tape = wp.Tape()
    with tape:
        wp.launch(kernel, dim=n, inputs=[grid.id, p, r, e])
    tape.backward(grads={e: wp.ones(n, dtype=wp.float64)})
    grad = p.grad.numpy()

    def energy(x):
        d = np.linalg.norm(x[:, None, :] - x[None, :, :], axis=-1)
        m = (d < r) & ~np.eye(n, dtype=bool)
        return np.where(m, (r - d) ** 3, 0.0).sum()

    np.testing.assert_allclose(e.numpy().sum(), energy(pts), rtol=1e-12)
    h = 1e-6
    fd = np.zeros_like(pts)
    for k in range(n):
        for c in range(3):
            a, b = pts.copy(), pts.copy()
            a[k, c] += h
            b[k, c] -= h
            fd[k, c] = (energy(a) - energy(b)) / (2 * h)
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-7)


@wp.kernel
def lane_heavy_branch(grid: wp.uint64, pts: wp.array(dtype=wp.vec3), r: float, out: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    i = wp.hash_grid_point_id(grid, tid)
    p = pts[i]
    f = wp.vec3()
    for j in wp.hash_grid_query(grid, p, r):
        d = p - pts[j]
        dist = wp.length(d)
        if dist < r and dist > 0.0:
            n = d / dist
            t = wp.cross(n, wp.vec3(0.0, 1.0, 0.0))
            w = (r - dist) * (r - dist)
            g = wp.normalize(t + n * w)
            f += n * w + g * 0.5 + t * (w * w) - n * wp.dot(g, t)
    out[i] = f


def test_heavy_branches_keep_the_scalar_loop():
    """A body with many statements under a rarely taken branch stays scalar (selects would run them for every
    candidate; lanes.MAX_GUARDED), and gives the brute-force result."""
    n = 400
    pts = _dyadic(n, seed=9)
    p = wp.array(pts, dtype=wp.vec3)
    grid = wp.HashGrid(8, 8, 8)
    grid.build(p, 0.25)
    out = wp.zeros(n, dtype=wp.vec3)
    args = [grid.id, p, 0.25, out]
    assert "fwd_lanes" not in _source(lane_heavy_branch, args)
    wp.launch(lane_heavy_branch, dim=n, inputs=args)
    x = pts.astype(np.float64)
    ref = np.zeros((n, 3))
    for a in range(n):
        d = x[a] - x
        dist = np.linalg.norm(d, axis=1)
        for b in np.nonzero((dist < 0.25) & (dist > 0))[0]:
            nn = d[b] / dist[b]
            t = np.cross(nn, [0.0, 1.0, 0.0])
            w = (0.25 - dist[b]) ** 2
            g = t + nn * w
            g = g / np.linalg.norm(g)
            ref[a] += nn * w + g * 0.5 + t * w * w - nn * np.dot(g, t)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-4, atol=1e-5)


@wp.kernel
def lane_fresh_slots(grid: wp.uint64, pts: wp.array(dtype=wp.vec3), r: float, out: wp.array(dtype=float)):
    tid = wp.tid()
    i = wp.hash_grid_point_id(grid, tid)
    p = pts[i]
    s = float(0.0)  # noqa: UP018
    if i % 2 == 0:
        s = float(i)  # a branch in the prefix: each slot keeps its own lane's value
    for j in wp.hash_grid_query(grid, p, r):
        if wp.length(p - pts[j]) <= r:
            s += 1.0
    out[i] = s


def test_lane_slots_start_fresh():
    n = 500
    pts = _dyadic(n, seed=13)
    p = wp.array(pts, dtype=wp.vec3)
    grid = wp.HashGrid(8, 8, 8)
    grid.build(p, 0.25)
    out = wp.zeros(n, dtype=float)
    args = [grid.id, p, 0.25, out]
    assert "fwd_lanes" in _source(lane_fresh_slots, args)
    wp.launch(lane_fresh_slots, dim=n, inputs=args)
    _, within = _brute(pts, 0.25)
    ids = np.arange(n)
    np.testing.assert_array_equal(out.numpy(), np.where(ids % 2 == 0, ids, 0) + within.sum(1))
