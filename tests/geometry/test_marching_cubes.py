"""wp.geometry.IsoSurfaceMarchingCubes (wp.MarchingCubes): closed, consistently oriented surfaces on the isosurface of analytic fields."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp


def _sphere_field(n, centre, radius):
    g = np.stack(np.meshgrid(*[np.arange(n)] * 3, indexing="ij"), -1).astype(np.float64)
    return np.linalg.norm(g - centre, axis=-1) - radius


def _edges_twice(tris):
    """Every edge of a closed, consistently oriented surface appears once in each direction."""
    e = np.concatenate([tris[:, [0, 1]], tris[:, [1, 2]], tris[:, [2, 0]]])
    fwd = {tuple(x) for x in e}
    return len(fwd) == len(e) and all((b, a) in fwd for a, b in fwd)


def test_sphere_surface_is_closed_outward_and_on_the_isosurface():
    n, centre, radius = 24, np.array([11.3, 12.1, 11.7]), 7.2
    mc = wp.geometry.IsoSurfaceMarchingCubes(n, n, n)
    mc.surface(wp.array(_sphere_field(n, centre, radius).astype(np.float32), dtype=float), 0.0)
    verts = mc.verts.numpy().astype(np.float64)
    tris = mc.indices.numpy().reshape(-1, 3)
    assert mc.indices.dtype == wp.int32
    assert (np.unique(tris) == np.arange(len(verts))).all()  # every vertex used
    assert _edges_twice(tris)  # closed and consistently oriented
    np.testing.assert_allclose(np.linalg.norm(verts - centre, axis=1), radius, atol=0.1)  # linear interpolation
    # outward: the enclosed volume (divergence theorem) is positive and close to the ball's
    p0, p1, p2 = verts[tris[:, 0]], verts[tris[:, 1]], verts[tris[:, 2]]
    volume = np.einsum("ij,ij->i", p0, np.cross(p1, p2)).sum() / 6.0
    assert volume == pytest.approx(4 / 3 * np.pi * radius**3, rel=0.03)
    # the extracted mesh is a valid wp.Mesh input
    mesh = wp.Mesh(mc.verts, mc.indices, support_winding_number=True)
    assert mesh.bvh_info()["num_prims"] == len(tris)


def test_bounds_scale_the_vertices_and_empty_fields():
    n = 10
    f = _sphere_field(n, np.array([4.5, 4.5, 4.5]), 3.0).astype(np.float32)
    mc = wp.geometry.IsoSurfaceMarchingCubes(n, n, n, lower=(-1.0, -1.0, -1.0), upper=(1.0, 1.0, 1.0))
    mc.surface(f, 0.0)
    v = mc.verts.numpy()
    assert v.min() >= -1.0 and v.max() <= 1.0
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 3.0 * 2.0 / (n - 1), atol=0.05)
    mc.surface(np.ones((n, n, n), np.float32), 0.0)  # no crossing: an empty mesh
    assert len(mc.verts.numpy()) == 0 and len(mc.indices.numpy()) == 0


def test_bad_input():
    with pytest.raises(wp.Error, match="at least 2 nodes"):
        wp.geometry.IsoSurfaceMarchingCubes(1, 4, 4).surface(np.zeros((1, 4, 4), np.float32), 0.0)
    with pytest.warns(DeprecationWarning, match="wp.MarchingCubes is deprecated"):
        mc = wp.MarchingCubes(4, 4, 4)
    with pytest.raises(wp.Error, match="field.*shape"):
        mc.surface(np.zeros((4, 4, 5), np.float32), 0.0)
    bad = np.zeros((4, 4, 4), np.float32)
    bad[1, 1, 1] = np.nan
    with pytest.raises(wp.Error, match="NaN"):
        mc.surface(bad, 0.0)


@wp.kernel
def _weighted_vertex_sum(verts: wp.array(dtype=wp.vec3), w: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(out, 0, wp.dot(verts[i], w[i]))


def test_vertices_are_differentiable_wrt_the_field():
    # loss = sum_i w_i . vert_i through the tape, against central differences on field values (small steps keep
    # every node on its side of the threshold, so the connectivity does not change)
    n = 6
    f = _sphere_field(n, np.array([2.4, 2.6, 2.5]), 1.7).astype(np.float32)
    field = wp.array(f, dtype=float, requires_grad=True)
    verts, _ = wp.geometry.IsoSurfaceMarchingCubes.extract(field, 0.0)
    w = np.random.default_rng(0).normal(size=(len(verts), 3)).astype(np.float32)
    tape = wp.Tape()
    with tape:
        verts, _ = wp.geometry.IsoSurfaceMarchingCubes.extract(field, 0.0)
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        wp.launch(_weighted_vertex_sum, dim=len(verts), inputs=[verts, wp.array(w, dtype=wp.vec3), loss])
    tape.backward(loss)
    grad = field.grad.numpy()

    def value(x):
        v, _ = wp.geometry.IsoSurfaceMarchingCubes.extract(wp.array(x, dtype=float), 0.0)
        return float((v.numpy().astype(np.float64) * w).sum())

    nodes = np.argwhere(np.abs(f) < 0.8)[:12]  # nodes next to the surface
    assert len(nodes) >= 6
    for node in map(tuple, nodes):
        eps = min(1e-2, 0.5 * abs(float(f[node])))
        xp, xm = f.copy(), f.copy()
        xp[node] += eps
        xm[node] -= eps
        fd = (value(xp) - value(xm)) / (2 * eps)
        assert grad[node] == pytest.approx(fd, rel=2e-2, abs=2e-3)
