"""Op-table cases of the differentiable volume ops (float32 sampling), added by ``op_table.py``.

Two volumes are built at import from dense random arrays (a float32 and a vec3f one, with a translated, anisotropic
index-to-world map) and an index volume of one 2x2x2 cell; their ids are captured constants. Sample points sit inside
cells (fractions in [0.2, 0.8]) where the trilinear interpolant is smooth.
"""

# no `from __future__ import annotations`: kernel annotations are evaluated where defined
import numpy as np

import weft as wp

_RNG = np.random.default_rng(7)
FLOAT_VOL = wp.Volume.load_from_numpy(_RNG.normal(size=(10, 9, 11)), min_world=(0.5, -1.0, 2.0),
                                      voxel_size=(0.5, 0.25, 2.0), bg_value=0.0)
VEC_VOL = wp.Volume.load_from_numpy(_RNG.normal(size=(10, 9, 11, 3)), voxel_size=0.5, bg_value=(0.0, 0.0, 0.0))
CELL_VOL = wp.Volume.allocate_by_voxels(np.array([[i, j, k] for i in (3, 4) for j in (5, 6) for k in (-1, 0)],
                                                 np.int32), voxel_size=1.0)
FV, VV, CV = FLOAT_VOL.id, VEC_VOL.id, CELL_VOL.id
V3F = wp.vec3


def _inside(rng, n):
    """Index-space points inside the dense block, away from integer planes."""
    return [rng.integers(1, 7, size=(n, 3)) + rng.uniform(0.2, 0.8, size=(n, 3))]


def _cell(rng, n):
    """Points inside the index volume's single cell [3, 4] x [5, 6] x [-1, 0], and its 8 voxel values."""
    return [np.array([3.0, 5.0, -1.0]) + rng.uniform(0.2, 0.8, size=(n, 3)), rng.normal(size=8)]


@wp.kernel
def k_sample(p: wp.array(dtype=V3F), out: wp.array(dtype=V3F)):
    i = wp.tid()
    a = wp.volume_sample_f(wp.uint64(FV), p[i], wp.Volume.LINEAR)
    b = wp.volume_sample(wp.uint64(FV), p[i] * 0.5 + wp.vec3(1.0), wp.Volume.LINEAR, dtype=float)
    v = wp.volume_sample_v(wp.uint64(VV), p[i], wp.Volume.LINEAR)
    w = wp.volume_sample(wp.uint64(VV), p[i] * 0.7, wp.Volume.LINEAR, dtype=wp.vec3)
    out[i] = wp.vec3(a * b, v[1] + w[2], v[0] * w[1])


@wp.kernel
def k_sample_grad(p: wp.array(dtype=V3F), out: wp.array(dtype=V3F)):
    i = wp.tid()
    g = wp.vec3()
    a = wp.volume_sample_grad_f(wp.uint64(FV), p[i], wp.Volume.LINEAR, g)
    m = wp.mat33()
    v = wp.volume_sample_grad(wp.uint64(VV), p[i], wp.Volume.LINEAR, m, dtype=wp.vec3)
    h = wp.vec3()
    b = wp.volume_sample_grad(wp.uint64(FV), p[i] + wp.vec3(0.5), wp.Volume.LINEAR, h, dtype=wp.float32)
    out[i] = wp.vec3(a + g[0] * g[1], v[2] + m[1, 0] + m[2, 2] * m[0, 1], b * h[2])


@wp.kernel
def k_index(p: wp.array(dtype=V3F), data: wp.array(dtype=float), out: wp.array(dtype=V3F)):
    i = wp.tid()
    a = wp.volume_sample_index(wp.uint64(CV), p[i], wp.Volume.LINEAR, data, 0.5)
    g = wp.vec3()
    b = wp.volume_sample_grad_index(wp.uint64(CV), p[i], wp.Volume.LINEAR, data, 0.25, g)
    out[i] = wp.vec3(a * a, b + g[0], g[1] * g[2])


@wp.kernel
def k_transform(p: wp.array(dtype=V3F), out: wp.array(dtype=V3F)):
    i = wp.tid()
    w = wp.volume_index_to_world(wp.uint64(FV), p[i])
    d = wp.volume_index_to_world_dir(wp.uint64(FV), p[i])
    q = wp.volume_world_to_index(wp.uint64(FV), wp.cw_mul(w, w))
    e = wp.volume_world_to_index_dir(wp.uint64(FV), d * 2.0)
    out[i] = q + wp.cw_mul(e, w)


def add_entries(entry, case) -> None:
    f32 = {"eps": 1e-3, "rtol": 2e-2, "atol": 2e-3, "n": 4}
    sample = case("trilinear samples inside cells (float and vec3 volumes)", (V3F,), V3F, _inside,
                  kernel=k_sample, **f32)
    grads = case("samples and their gradients inside cells", (V3F,), V3F, _inside, kernel=k_sample_grad, **f32)
    index = case("index-volume samples: w.r.t. points and voxel data", (V3F, float), V3F, _cell, kernel=k_index,
                 **f32)
    xform = case("index <-> world maps of points and directions", (V3F,), V3F, _inside, kernel=k_transform, **f32)
    for name, c in (("volume_sample", sample), ("volume_sample_f", sample), ("volume_sample_v", sample),
                    ("volume_sample_grad", grads), ("volume_sample_grad_f", grads),
                    ("volume_sample_index", index), ("volume_sample_grad_index", index),
                    ("volume_index_to_world", xform), ("volume_index_to_world_dir", xform),
                    ("volume_world_to_index", xform), ("volume_world_to_index_dir", xform)):
        entry("geometry", name, c)
