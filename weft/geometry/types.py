"""Host-side classes of the geometry query types (``wp.MeshQueryPoint`` ...), bound to their IR types."""

from __future__ import annotations

from ..ir import types as T
from ..ops import geometry as G
from ..types.struct import StructInstance


def _host_struct(ir: T.StructType, doc: str):
    cls = type(ir.name, (StructInstance,), {"__slots__": tuple(n for n, _ in ir.fields), "_ir_": ir,
                                            "__doc__": doc, "__module__": "weft"})
    object.__setattr__(ir, "pyclass", cls)
    cls.vars = dict(ir.fields)
    return cls


class _Opaque:
    """Base of query-state types: usable in annotations, never constructed on the host."""

    def __init__(self, *args, **kwargs):
        raise TypeError(f"{type(self).__name__} values only exist inside kernels")

    def __class_getitem__(cls, dtype):
        """``wp.HashGridQuery[wp.float32]``: weft's queries are float32; the subscript names the same type."""
        return cls


def _opaque(ir: T.OpaqueType, doc: str):
    return type(ir.name, (_Opaque,), {"_ir_": ir, "__doc__": doc, "__module__": "weft"})


MeshQueryPoint = _host_struct(G.MESH_QUERY_POINT, "Result of the mesh point queries: result (bool), sign (< 0 "
                              "inside), face, u, v (barycentric weights of the face's first two vertices).")
MeshQueryRay = _host_struct(G.MESH_QUERY_RAY, "Result of mesh_query_ray: result, sign (> 0 front face), face, t, "
                            "u, v, normal.")
MeshQueryAABB = _opaque(G.MESH_QUERY, "State of a mesh box or sphere query (iterate with mesh_query_next).")
MeshQuery = MeshQueryAABB
HashGridQuery = _opaque(G.HASH_GRID_QUERY, "State of a hash-grid neighbour query (iterate with hash_grid_query_next).")
BvhQuery = _opaque(G.BVH_QUERY, "State of a BVH query (iterate with bvh_query_next).")
BvhQueryTiled = _opaque(G.TILE_BVH_QUERY, "State of a thread-block BVH query (tile_bvh_query_aabb / _ray; iterate with "
                        "tile_bvh_query_next while tile_query_valid): the type to annotate a wp.func taking one.")
MeshQueryAABBTiled = _opaque(G.TILE_MESH_QUERY, "State of a thread-block mesh box query (tile_mesh_query_aabb; iterate "
                             "with tile_mesh_query_aabb_next while tile_query_valid): the type to annotate a wp.func "
                             "taking one.")
