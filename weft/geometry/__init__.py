"""Geometry: hash grids, BVHs, triangle meshes, marching cubes, surface nets and 2-D Delaunay edge flipping, with their kernel-side
queries.

The objects own native data built by the geometry library (``weft/native/geometry``); kernels receive their
``.id`` (a ``wp.uint64``) and query them with the builtins registered in ``weft/ops/geometry.py``.
"""

from __future__ import annotations

from .bvh import Bvh
from .delaunay import delaunay_edge_flip, find_triangle_neighbor_edge_index, in_circle, signed_area, tri_tri_adjacency
from .hashgrid import HashGrid
from .marching import IsoSurfaceBase, IsoSurfaceMarchingCubes, MarchingCubes
from .mesh import Mesh
from .sparse_marching import lipschitz_octree, sparse_marching_cubes, sparse_marching_cubes_from_cells
from .surface_nets import IsoSurfaceNets
from .swept_volume import (
    SweptVolumeSignMode,
    swept_volume_bounds,
    swept_volume_field,
    swept_volume_mesh,
    swept_volume_sdf,
)
from .types import (
    BvhQuery,
    BvhQueryTiled,
    HashGridQuery,
    MeshQuery,
    MeshQueryAABB,
    MeshQueryAABBTiled,
    MeshQueryPoint,
    MeshQueryRay,
)
from .volume import Volume


def is_cubql_available() -> bool:
    """Whether the cuBQL BVH builder is available: never in weft (it builds LBVHs on the CPU)."""
    return False

__all__ = [
    "Bvh",
    "BvhQuery",
    "BvhQueryTiled",
    "HashGrid",
    "HashGridQuery",
    "IsoSurfaceBase",
    "IsoSurfaceMarchingCubes",
    "IsoSurfaceNets",
    "MarchingCubes",
    "Mesh",
    "MeshQuery",
    "MeshQueryAABB",
    "MeshQueryAABBTiled",
    "MeshQueryPoint",
    "MeshQueryRay",
    "SweptVolumeSignMode",
    "Volume",
    "delaunay_edge_flip",
    "find_triangle_neighbor_edge_index",
    "in_circle",
    "is_cubql_available",
    "lipschitz_octree",
    "signed_area",
    "sparse_marching_cubes",
    "sparse_marching_cubes_from_cells",
    "swept_volume_bounds",
    "swept_volume_field",
    "swept_volume_mesh",
    "swept_volume_sdf",
    "tri_tri_adjacency",
]
