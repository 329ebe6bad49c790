"""wp.geometry.IsoSurfaceNets vs a float64 NumPy reference of the surface nets rules (docs/geometry.md), closed
sphere surfaces, gradients vs central differences of the reference, and bad input."""

from __future__ import annotations

import hashlib
from collections import Counter

import numpy as np
import pytest

import weft as wp
from weft.geometry import surface_nets as sn


def _case(f, cell, threshold):
    return sum(1 << c for c, o in enumerate(sn._SN_CORNER_OFFSETS) if f[tuple(np.add(cell, o))] < threshold)


def _reference(f, threshold=0.0, with_quads=True):
    """(verts float64 (V, 3), quads (Q, 4)) of surface nets on node-index coordinates, cell by cell in NumPy."""
    table, amb = sn._SN_EDGE_GROUP_TABLE, sn._SN_AMBIGUOUS_FACE
    shape = np.array(f.shape)
    ncell = shape - 1
    face_step = {1: (2, -1), 2: (0, 1), 3: (2, 1), 4: (0, -1), 5: (1, -1), 6: (1, 1)}  # face -> (axis, direction)
    cases, verts, slot = {}, [], {}
    for cell in np.ndindex(*ncell):
        case = _case(f, cell, threshold)
        if case in (0, 255):
            continue
        face = amb[case]
        if face:
            axis, step = face_step[face]
            nb = np.array(cell)
            nb[axis] += step
            if (nb >= 0).all() and (nb < ncell).all():
                other = amb[_case(f, tuple(nb), threshold)]
                if other and face_step[other] == (axis, -step):  # the neighbour's ambiguous face is the shared one
                    case ^= 255
        cases[cell] = case
        for g in range(1, table[13 * case] + 1):
            pts, stitched = [], False
            for e, (a, b) in enumerate(sn._SN_EDGE_TO_CORNERS):
                if table[13 * case + 1 + e] != g:
                    continue
                pa, pb = np.array(sn._SN_CORNER_OFFSETS[a]), np.array(sn._SN_CORNER_OFFSETS[b])
                va, vb = float(f[tuple(cell + pa)]), float(f[tuple(cell + pb)])
                pts.append(cell + pa + (threshold - va) / (vb - va) * (pb - pa))
                lo = np.array(cell) + np.minimum(pa, pb)  # the grid edge: four cells around it?
                other = np.abs(pb - pa) == 0
                stitched |= bool(((lo[other] >= 1) & (lo[other] <= shape[other] - 2)).all())
            if stitched:
                slot[(cell, g)] = len(verts)
                verts.append(np.mean(pts, axis=0))
    if not with_quads:
        return np.array(verts, np.float64).reshape(-1, 3), None

    def vertex(cell, node, axis):
        """The vertex of ``cell`` on the grid edge from ``node`` along ``axis``."""
        for e, (a, b) in enumerate(sn._SN_EDGE_TO_CORNERS):
            pa, pb = np.array(sn._SN_CORNER_OFFSETS[a]), np.array(sn._SN_CORNER_OFFSETS[b])
            if tuple(np.array(cell) + np.minimum(pa, pb)) == node and np.argmax(np.abs(pb - pa)) == axis:
                return slot[(cell, table[13 * cases[cell] + 1 + e])]
        raise AssertionError

    quads = []
    rings = {0: ((0, 0, 0), (0, -1, 0), (0, -1, -1), (0, 0, -1)), 1: ((0, 0, 0), (0, 0, -1), (-1, 0, -1), (-1, 0, 0)),
             2: ((0, 0, 0), (0, -1, 0), (-1, -1, 0), (-1, 0, 0))}
    for cell in sorted(cases):
        inside = f[cell] < threshold
        for axis in range(3):
            up = np.array(cell)
            up[axis] += 1
            if (f[tuple(up)] < threshold) == inside or any(cell[a] == 0 for a in range(3) if a != axis):
                continue
            quad = [vertex(tuple(np.add(cell, o)), cell, axis) for o in rings[axis]]
            quads.append(quad[::-1] if inside == (axis == 2) else quad)
    return np.array(verts, np.float64).reshape(-1, 3), np.array(quads, np.int64).reshape(-1, 4)


def _sphere(n, centre, radius):
    g = np.stack(np.meshgrid(*[np.arange(n)] * 3, indexing="ij"), -1).astype(np.float64)
    return (np.linalg.norm(g - centre, axis=-1) - radius).astype(np.float32)


def test_tables():
    table, amb = sn._SN_EDGE_GROUP_TABLE, sn._SN_AMBIGUOUS_FACE
    assert len(table) == 256 * 13 and len(amb) == 256
    for case in range(256):
        row = table[13 * case: 13 * case + 13]
        crossed = [((case >> a) & 1) != ((case >> b) & 1) for a, b in sn._SN_EDGE_TO_CORNERS]
        assert [g != 0 for g in row[1:]] == crossed
        assert {g for g in row[1:] if g} == set(range(1, row[0] + 1)) and row[0] <= 4
    # the ambiguous-face table is generated from its rule and equals OpenVDB's sAmbiguousFace byte for byte
    assert hashlib.sha256(bytes(amb)).hexdigest() == "421d86c3f5ba48d62d136f26a9e02770417a1fa1d8828f027b61609ff3b7cb12"
    assert table[13 * 65] == 2 and table[13 * 5] == 1 and table[13 * 250] == 2  # two sheets / joined / complement


@pytest.mark.parametrize("kind", ["uniform", "quantized"])
def test_matches_numpy_reference(kind):
    rng = np.random.default_rng(11 if kind == "uniform" else 12)
    for trial in range(3):
        f = rng.uniform(-1.0, 1.0, size=(7, 6, 8)).astype(np.float32)
        if kind == "quantized":  # multi-sheet and ambiguous cells
            f = (np.sign(f) + 0.25 * (trial - 1)).astype(np.float32)
        ref_v, ref_q = _reference(f, 0.1)
        v, q = wp.geometry.IsoSurfaceNets.extract(wp.array(f, dtype=float), threshold=0.1, topology="quad")
        np.testing.assert_allclose(v.numpy(), ref_v, atol=2e-6)
        np.testing.assert_array_equal(q.numpy().reshape(-1, 4), ref_q)
        _, t = wp.geometry.IsoSurfaceNets.extract(wp.array(f, dtype=float), threshold=0.1)
        np.testing.assert_array_equal(t.numpy().reshape(-1, 6), ref_q[:, [0, 1, 2, 0, 2, 3]])
    # a two-sheet cell (corners 0 and 6 inside) gives two vertices, kept apart
    f = np.ones((4, 4, 4), np.float32)
    f[1, 1, 1] = f[2, 2, 2] = -1.0
    v, q = wp.geometry.IsoSurfaceNets.extract(f, topology="quad")
    assert v.shape[0] == 16 and (np.unique(q.numpy()) == np.arange(16)).all()


def test_sphere_is_closed_outward_and_on_the_surface():
    n, centre, radius = 20, np.array([9.3, 9.6, 10.1]), 6.2
    iso = wp.geometry.IsoSurfaceNets(n, n, n, lower=(-1.0, 0.0, 2.0), upper=(1.0, 4.0, 3.0), topology="quad")
    assert iso.verts is None and iso.topology == "quad"
    iso.surface(wp.array(_sphere(n, centre, radius), dtype=float), 0.0)
    quads = iso.indices.numpy().reshape(-1, 4)
    v = (iso.verts.numpy() - np.array([-1.0, 0.0, 2.0])) / (np.array([2.0, 4.0, 1.0]) / (n - 1))
    assert (np.unique(quads) == np.arange(len(v))).all()
    edges = Counter(tuple(sorted((int(a), int(b)))) for qd in quads for a, b in zip(qd, np.roll(qd, -1)))
    assert set(edges.values()) == {2} and len(v) - len(edges) + len(quads) == 2  # closed, genus 0
    np.testing.assert_allclose(np.linalg.norm(v - centre, axis=1), radius, atol=0.5)
    tris = quads[:, [0, 1, 2, 0, 2, 3]].reshape(-1, 3)
    p0, p1, p2 = v[tris[:, 0]], v[tris[:, 1]], v[tris[:, 2]]
    volume = np.einsum("ij,ij->i", p0, np.cross(p1, p2)).sum() / 6.0
    assert volume == pytest.approx(4 / 3 * np.pi * radius**3, rel=0.04)  # wound outwards


def test_gradient_matches_central_differences():
    rng = np.random.default_rng(5)
    f = rng.uniform(-1.0, 1.0, size=(4, 4, 5)).astype(np.float32)
    field = wp.array(f, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        verts, _ = wp.geometry.IsoSurfaceNets.extract(field, threshold=0.0)
    assert verts.requires_grad
    w = rng.uniform(-1.0, 1.0, size=(verts.shape[0], 3))
    tape.backward(grads={verts: wp.array(w.astype(np.float32), dtype=wp.vec3)})
    fd = np.zeros(f.shape)
    f64 = f.astype(np.float64)
    for node in np.ndindex(*f.shape):
        plus, minus = f64.copy(), f64.copy()
        plus[node] += 1e-6
        minus[node] -= 1e-6
        fd[node] = (np.sum(_reference(plus, 0.0, False)[0] * w) - np.sum(_reference(minus, 0.0, False)[0] * w)) / 2e-6
    np.testing.assert_allclose(field.grad.numpy(), fd, rtol=1e-3, atol=1e-3)


def test_empty_boundary_only_and_bad_input():
    f = np.ones((2, 2, 2), np.float32)
    f[0, 0, 0] = -1.0  # crosses only boundary edges: no quad, no vertex
    for topology in ("triangle", "quad"):
        v, i = wp.geometry.IsoSurfaceNets.extract(f, topology=topology)
        assert v.shape == (0,) and i.shape == (0,) and i.dtype == wp.int32
    with pytest.raises(ValueError, match="at least 2 nodes on each axis"):
        wp.geometry.IsoSurfaceNets.extract(wp.zeros((1, 8, 8), dtype=float))
    with pytest.raises(ValueError):
        wp.geometry.IsoSurfaceNets.extract(wp.zeros(8, dtype=float))
    with pytest.raises(TypeError):
        wp.geometry.IsoSurfaceNets.extract(wp.zeros((4, 4, 4), dtype=wp.float64))
    with pytest.raises(wp.Error, match="topology"):
        wp.geometry.IsoSurfaceNets(4, 4, 4, topology="quads")
    with pytest.raises(wp.Error, match="field.*shape"):
        wp.geometry.IsoSurfaceNets(4, 4, 4).surface(np.zeros((4, 4, 5), np.float32), 0.0)
