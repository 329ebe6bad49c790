"""Geometry: hash grids, BVHs, triangle meshes and marching cubes, with their kernel-side queries.

The objects own native data built by the geometry library (``weft/native/geometry``); kernels receive their
``.id`` (a ``wp.uint64``) and query them with the builtins registered in ``weft/ops/geometry.py``.
"""

from __future__ import annotations

from .bvh import Bvh
from .hashgrid import HashGrid
from .marching import IsoSurfaceBase, IsoSurfaceMarchingCubes, MarchingCubes
from .mesh import Mesh
from .types import BvhQuery, HashGridQuery, MeshQuery, MeshQueryAABB, MeshQueryPoint, MeshQueryRay


def is_cubql_available() -> bool:
    """Whether the cuBQL BVH builder is available: never in weft (it builds LBVHs on the CPU)."""
    return False

__all__ = ["Bvh", "BvhQuery", "HashGrid", "HashGridQuery", "IsoSurfaceBase", "IsoSurfaceMarchingCubes",
           "MarchingCubes", "Mesh", "MeshQuery", "MeshQueryAABB", "MeshQueryPoint", "MeshQueryRay", "is_cubql_available"]
