"""wp.geometry.tri_tri_adjacency / delaunay_edge_flip against brute force and scipy.spatial.Delaunay; the predicates
in a kernel."""

import numpy as np
import pytest
from scipy.spatial import Delaunay

import weft as wp
from weft.geometry import delaunay_edge_flip, in_circle, signed_area, tri_tri_adjacency


def _ellipse_fan(n=14, seed=3):
    angles = np.sort(np.random.default_rng(seed).uniform(0.0, 2.0 * np.pi, n))
    pts = np.stack([2.0 * np.cos(angles), np.sin(angles)], axis=1)
    return pts, np.array([[0, i, i + 1] for i in range(1, n - 1)], dtype=np.int32)


def test_adjacency_matches_brute_force():
    pts, tris = _ellipse_fan()
    nbr, edge = tri_tri_adjacency(wp.array(tris, dtype=wp.int32))
    nbr, edge = nbr.numpy(), edge.numpy()
    for t, tri in enumerate(tris):
        for j in range(3):
            e = {tri[(j + 1) % 3], tri[(j + 2) % 3]}
            others = [u for u in range(len(tris)) if u != t and e <= set(tris[u])]
            assert nbr[t, j] == (others[0] if others else -1)
            if others:
                assert nbr[others[0], edge[t, j]] == t
    only = tri_tri_adjacency(wp.array(tris, dtype=wp.int32), vertex_count=len(pts), return_neighbor_edge_indices=False)
    np.testing.assert_array_equal(only.numpy(), nbr)
    with pytest.raises(ValueError):
        tri_tri_adjacency(wp.zeros(6, dtype=wp.int32))


def test_flip_gives_scipy_delaunay_and_records_in_capture():
    pts, tris = _ellipse_fan()
    expected = {tuple(sorted(t)) for t in Delaunay(pts).simplices.tolist()}
    positions = wp.array(pts.astype(np.float32), dtype=wp.vec2)
    indices = wp.array(tris, dtype=wp.int32)
    with wp.ScopedCapture() as capture:  # CPU capture records the flip; nothing happens until replay
        count = delaunay_edge_flip(positions, indices)
    np.testing.assert_array_equal(indices.numpy(), tris)
    wp.capture_launch(capture.graph)
    out = indices.numpy()
    assert count.numpy()[0] > 0 and {tuple(sorted(t)) for t in out.tolist()} == expected
    area = [(pts[b] - pts[a])[0] * (pts[c] - pts[a])[1] - (pts[b] - pts[a])[1] * (pts[c] - pts[a])[0] for a, b, c in out]
    assert min(area) > 0.0  # still counterclockwise
    assert delaunay_edge_flip(positions, indices).numpy()[0] == 0  # already Delaunay
    with pytest.raises(ValueError):
        delaunay_edge_flip(positions, indices, max_passes=0)
    with pytest.raises(ValueError):
        delaunay_edge_flip(positions, indices, area_epsilon=float("nan"))


@wp.kernel
def _predicates(area: wp.array(dtype=float), inside: wp.array(dtype=wp.int32)):
    a, b, c = wp.vec2(0.0, 0.0), wp.vec2(1.0, 0.0), wp.vec2(0.0, 1.0)
    area[0] = signed_area(a, b, c)
    area[1] = signed_area(a, c, b)
    inside[0] = wp.int32(in_circle(a, b, c, wp.vec2(0.4, 0.4)))
    inside[1] = wp.int32(in_circle(a, b, c, wp.vec2(2.0, 2.0)))


def test_predicates_in_kernel():
    area, inside = wp.zeros(2, dtype=float), wp.zeros(2, dtype=wp.int32)
    wp.launch(_predicates, dim=1, inputs=[area, inside])
    np.testing.assert_allclose(area.numpy(), [0.5, -0.5])
    np.testing.assert_array_equal(inside.numpy(), [1, 0])
