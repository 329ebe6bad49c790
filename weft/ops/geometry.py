"""Geometry queries in kernels: hash grids, meshes, BVHs (``weft/native/geometry``).

Objects are passed to kernels as ``wp.uint64`` ids and resolved through the geometry registry; an unknown or
destroyed id makes a query report an error and find nothing. Iterating queries (``hash_grid_query`` ...) return an
opaque traversal state; their ``*_next`` ops are functional here (state in, advanced state out) and the frontend
(``weft/frontend/queries.py``) turns ``while wp.hash_grid_query_next(q, i)`` and ``for i in wp.hash_grid_query(...)``
into them.
"""

from __future__ import annotations

from ..ir import types as T
from .registry import Adjoint, Op, OpKind, register

D = "geometry"
HEADER = "geometry/geometry.h"

VEC3 = T.VectorType(3, T.FLOAT32)
HASH_GRID_QUERY = T.OpaqueType("HashGridQuery", "hash_grid_query_t")

#: iterator op -> the op that advances it (used by ``for x in wp.<iterator>(...)``)
ITERATORS: dict[str, str] = {}




def _fixed(want: tuple, result):
    def rule(args, attrs):
        if len(args) == len(want) and all(a == w for a, w in zip(args, want)):
            return result
        return None
    return rule


def _geo(name: str, want: tuple, result, doc: str, *, native: str = "", kind: OpKind = OpKind.CALL,
         adjoint: Adjoint = Adjoint.NONE) -> Op:
    return register(Op(name, _fixed(want, result), native=native or name, kind=kind, adjoint=adjoint, domain=D,
                       doc=doc, header=HEADER))


# ------------------------------------------------------------------------------------------------ hash grid
_geo("hash_grid_query", (T.UINT64, VEC3, T.FLOAT32), HASH_GRID_QUERY,
     "hash_grid_query(id, point, max_dist) -> HashGridQuery: iterate over the points of every hashed cell the box "
     "[point - max_dist, point + max_dist] touches (candidates; test the distance yourself). Use with "
     "hash_grid_query_next or `for index in wp.hash_grid_query(...)`.")
_geo("hash_grid_query_next", (HASH_GRID_QUERY, T.INT32), (T.BOOL, HASH_GRID_QUERY, T.INT32),
     "hash_grid_query_next(query, index) -> bool: advance the query; writes the next candidate's original point "
     "index into `index` and returns True, or returns False (index unchanged) when no candidates remain.",
     native="hash_grid_query_step", kind=OpKind.OUT_CALL)
_geo("hash_grid_point_id", (T.UINT64, T.INT32), T.INT32,
     "hash_grid_point_id(id, index) -> int: the original index of the point at position `index` of the grid's "
     "cell-sorted order (-1 if out of range or the grid is not built).")
ITERATORS["hash_grid_query"] = "hash_grid_query_next"
