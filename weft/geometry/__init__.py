"""Geometry: hash grids, BVHs, triangle meshes and marching cubes, with their kernel-side queries.

The objects own native data built by the geometry library (``weft/native/geometry``); kernels receive their
``.id`` (a ``wp.uint64``) and query them with the builtins registered in ``weft/ops/geometry.py``.
"""

from __future__ import annotations

from .hashgrid import HashGrid
from .mesh import Mesh
from .types import HashGridQuery, MeshQuery, MeshQueryAABB, MeshQueryPoint, MeshQueryRay

__all__ = ["HashGrid", "HashGridQuery", "Mesh", "MeshQuery", "MeshQueryAABB", "MeshQueryPoint", "MeshQueryRay"]
