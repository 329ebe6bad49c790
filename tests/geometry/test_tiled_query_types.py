"""wp.BvhQueryTiled / wp.MeshQueryAABBTiled: the types of the thread-block query builtins, usable to annotate a
wp.func that takes a query (Warp 1.19's names)."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp


@wp.func
def drain_bvh(q: wp.BvhQueryTiled, hits: wp.array(dtype=int)):
    while wp.tile_query_valid(q):
        i = wp.untile(wp.tile_bvh_query_next(q))
        if i >= 0:
            wp.atomic_add(hits, i, 1)


@wp.func
def drain_mesh(q: wp.MeshQueryAABBTiled, hits: wp.array(dtype=int)):
    while wp.tile_query_valid(q):
        f = wp.untile(wp.tile_mesh_query_aabb_next(q))
        if f >= 0:
            wp.atomic_add(hits, f, 1)


@wp.kernel
def both(bvh: wp.uint64, mesh: wp.uint64, lo: wp.vec3, hi: wp.vec3, boxes: wp.array(dtype=int),
         faces: wp.array(dtype=int)):
    drain_bvh(wp.tile_bvh_query_aabb(bvh, lo, hi), boxes)
    drain_mesh(wp.tile_mesh_query_aabb(mesh, lo, hi), faces)


def test_tiled_query_types_annotate_funcs():
    rng = np.random.default_rng(3)
    lo = rng.random((50, 3)).astype(np.float32) * 4.0
    hi = lo + rng.random((50, 3)).astype(np.float32)
    bvh = wp.Bvh(wp.array(lo, dtype=wp.vec3), wp.array(hi, dtype=wp.vec3))
    pts = rng.random((20, 3)).astype(np.float32) * 4.0
    tris = rng.integers(0, 20, size=(30, 3)).astype(np.int32)
    mesh = wp.Mesh(wp.array(pts, dtype=wp.vec3), wp.array(tris.reshape(-1), dtype=wp.int32))
    qlo, qhi = np.full(3, 1.0, np.float32), np.full(3, 3.0, np.float32)
    boxes, faces = wp.zeros(50, dtype=int), wp.zeros(30, dtype=int)
    wp.launch_tiled(both, dim=1, inputs=[bvh.id, mesh.id, wp.vec3(*qlo), wp.vec3(*qhi), boxes, faces], block_dim=4)
    np.testing.assert_array_equal(boxes.numpy(), np.all((lo <= qhi) & (hi >= qlo), axis=1))
    tri_lo, tri_hi = pts[tris].min(axis=1), pts[tris].max(axis=1)
    np.testing.assert_array_equal(faces.numpy(), np.all((tri_lo <= qhi) & (tri_hi >= qlo), axis=1))


def test_tiled_query_values_exist_only_in_kernels():
    for cls in (wp.BvhQueryTiled, wp.MeshQueryAABBTiled):
        with pytest.raises(TypeError, match="inside kernels"):
            cls()
