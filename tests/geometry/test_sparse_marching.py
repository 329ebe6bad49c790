"""wp.geometry.sparse_marching_cubes / _from_cells / lipschitz_octree against the dense extractor, and the vertex
gradient w.r.t. the corner values against central differences."""

import numpy as np

import weft as wp
from weft.geometry import (
    IsoSurfaceMarchingCubes,
    lipschitz_octree,
    sparse_marching_cubes,
    sparse_marching_cubes_from_cells,
)

N = 9  # nodes per axis over [-1, 1]^3
H = 2.0 / (N - 1)
OFF = np.array(IsoSurfaceMarchingCubes.CUBE_CORNER_OFFSETS)


def _sdf(p):
    return np.linalg.norm(p - np.array([0.1, -0.05, 0.0]), axis=-1) - 0.55


def _field(points):  # a batched host field (NumPy), as Warp's API allows
    return wp.array(_sdf(points.numpy().astype(np.float64)).astype(np.float32))


def _tri_set(verts, indices):
    v = np.round(verts.numpy().astype(np.float64), 5)
    return {tuple(sorted(map(tuple, v[t]))) for t in indices.numpy().reshape(-1, 3)}


def test_matches_dense_extraction():
    g = np.arange(N) * H - 1.0
    X = np.stack(np.meshgrid(g, g, g, indexing="ij"), axis=-1)
    dv, di = IsoSurfaceMarchingCubes.extract(wp.array(_sdf(X).astype(np.float32)), 0.0, lower=(-1, -1, -1),
                                             upper=(1, 1, 1))
    dense = _tri_set(dv, di)
    # every cell of the grid, corner values sampled per cell
    c = np.stack(np.meshgrid(*[np.arange(N - 1)] * 3, indexing="ij"), axis=-1).reshape(-1, 3)
    vals = _sdf(-1.0 + H * (c[:, None, :] + OFF[None])).astype(np.float32)
    v, i = sparse_marching_cubes_from_cells(c, vals, origin=(-1.0, -1.0, -1.0), cell_width=H)
    assert _tri_set(v, i) == dense and len(i.numpy()) == len(di.numpy())
    # the octree-driven extraction visits far fewer points and gives the same surface
    v2, i2, stats = sparse_marching_cubes(_field, N, N, N, lower=(-1, -1, -1), upper=(1, 1, 1), return_stats=True)
    assert _tri_set(v2, i2) == dense and stats["field_evaluations"] < N**3
    cells, width = lipschitz_octree(_field, (-1.0, -1.0, -1.0), 2.0, 3)
    assert width == 0.25 and len(cells.numpy()) == stats["leaf_cells"]
    e = np.bincount(np.sort(np.stack([i2.numpy().reshape(-1, 3)[:, k] for k in ((0, 1), (1, 2), (2, 0))],
                                     axis=1).reshape(-1, 2), axis=1) @ np.array([len(v2.numpy()), 1]))
    assert set(np.unique(e[e > 0]).tolist()) == {2}  # watertight: every edge in exactly two triangles


def test_vertex_gradient_fd():
    c = np.array([[0, 0, 0], [1, 0, 0]])
    base = np.array([[-0.3, 0.4, 0.5, 0.2, 0.1, 0.6, 0.7, -0.2], [0.4, -0.5, 0.6, 0.5, 0.6, 0.3, 0.8, 0.7]])
    w = None

    def f(vals, tape=None):
        a = wp.array(vals.astype(np.float32).reshape(-1), requires_grad=tape is not None)
        if tape is None:
            v, _ = sparse_marching_cubes_from_cells(c, a)
            return (v.numpy() * w).sum()
        with tape:
            v, _ = sparse_marching_cubes_from_cells(c, a)
        return a, v

    v0, _ = sparse_marching_cubes_from_cells(c, base.astype(np.float32))
    w = np.random.default_rng(0).uniform(-1.0, 1.0, v0.numpy().shape)
    tape = wp.Tape()
    a, v = f(base, tape)
    tape.backward(grads={v: wp.array(w.astype(np.float32), dtype=wp.vec3)})
    g = a.grad.numpy().reshape(2, 8)
    eps = 1e-3
    for k, j in ((0, 0), (0, 1), (1, 1), (1, 3)):
        p, m = base.copy(), base.copy()
        p[k, j] += eps
        m[k, j] -= eps
        assert abs((f(p) - f(m)) / (2 * eps) - g[k, j]) < 2e-2 * max(1.0, abs(g[k, j]))
