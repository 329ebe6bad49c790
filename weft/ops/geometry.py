"""Geometry queries in kernels: hash grids, meshes, BVHs (``weft/native/geometry``).

Objects are passed to kernels as ``wp.uint64`` ids and resolved through the geometry registry; an unknown or
destroyed id makes a query report an error and find nothing. Iterating queries (``hash_grid_query`` ...) return an
opaque traversal state; their ``*_next`` ops are functional here (state in, advanced state out) and the frontend
(``weft/frontend/queries.py``) turns ``while wp.hash_grid_query_next(q, i)`` and ``for i in wp.hash_grid_query(...)``
into them.
"""

from __future__ import annotations

from dataclasses import replace

from ..ir import types as T
from .forms import OPERANDS, Form, Syntax
from .registry import Adjoint, Op, OpKind, register

D = "geometry"
HEADER = "geometry/geometry.h"

VEC3 = T.VectorType(3, T.FLOAT32)
HASH_GRID_QUERY = T.OpaqueType("HashGridQuery", "hash_grid_query_t", lanes_equal=True)



def _fixed(want: tuple, result):
    def rule(args, attrs):
        if len(args) == len(want) and all(a == w for a, w in zip(args, want)):
            return result
        return None
    return rule


def _geo(name: str, want: tuple, result, doc: str, *, native: str = "", kind: OpKind = OpKind.CALL,
         adjoint: Adjoint = Adjoint.NONE, syntax: Syntax = OPERANDS) -> Op:
    """A geometry op taking exactly the types ``want``; a ``syntax`` with named parameters declares them as ``want``."""
    if syntax.params or syntax.form is Form.QUERY_NEXT:
        syntax = replace(syntax, types=want)
    return register(Op(name, _fixed(want, result), native=native or name, kind=kind, adjoint=adjoint, domain=D,
                       doc=doc, header=HEADER, syntax=syntax))


#: ``while wp.<query>_next(query, index)``: both arguments advance in place
_NEXT = Syntax(Form.QUERY_NEXT, updates=(0, 1))


# ------------------------------------------------------------------------------------------------ hash grid
for _scalar in (T.FLOAT32, T.FLOAT64, T.FLOAT16):
    for _grouped in ((), (T.INT32,)):
        _geo("hash_grid_query", (T.UINT64, T.VectorType(3, _scalar), _scalar, *_grouped), HASH_GRID_QUERY,
             "hash_grid_query(id, point, max_dist[, group]) -> HashGridQuery: iterate over the points of every hashed "
             "cell the box [point - max_dist, point + max_dist] touches (candidates; test the distance yourself), "
             "only those of `group` when given (grouped builds). point may be vec3, vec3d or vec3h. Use with "
             "hash_grid_query_next or `for index in wp.hash_grid_query(...)`.",
             syntax=Syntax(iterated_by="hash_grid_query_next"))
_geo("hash_grid_query_next", (HASH_GRID_QUERY, T.INT32), (T.BOOL, HASH_GRID_QUERY, T.INT32),
     "hash_grid_query_next(query, index) -> bool: advance the query; writes the next candidate's original point "
     "index into `index` and returns True, or returns False (index unchanged) when no candidates remain.",
     native="hash_grid_query_step", kind=OpKind.OUT_CALL, syntax=_NEXT)
_geo("hash_grid_point_id", (T.UINT64, T.INT32), T.INT32,
     "hash_grid_point_id(id, index) -> int: the original index of the point at position `index` of the grid's "
     "cell-sorted order (-1 if out of range or the grid is not built).")


# ------------------------------------------------------------------------------------------------ meshes
def _struct(name: str, fields: tuple) -> T.StructType:
    return T.StructType(name, f"weft_{name}", fields)


#: wp.MeshQueryPoint / wp.MeshQueryRay: the results of point and ray queries (fields in the native output order)
MESH_QUERY_POINT = _struct("MeshQueryPoint", (("result", T.BOOL), ("sign", T.FLOAT32), ("face", T.INT32),
                                               ("u", T.FLOAT32), ("v", T.FLOAT32)))
MESH_QUERY_RAY = _struct("MeshQueryRay", (("result", T.BOOL), ("sign", T.FLOAT32), ("face", T.INT32),
                                           ("t", T.FLOAT32), ("u", T.FLOAT32), ("v", T.FLOAT32), ("normal", VEC3)))
MESH_QUERY = T.OpaqueType("MeshQueryAABB", "mesh_query_t")

_POINT_OUT = tuple(t for _, t in MESH_QUERY_POINT.fields)
_RAY_OUT = tuple(t for _, t in MESH_QUERY_RAY.fields)



def _struct_query(struct: T.StructType, params: tuple, defaults: tuple = (), legacy: tuple = ()) -> Syntax:
    """Results packed into ``struct``; ``legacy`` names the fields Warp's older output-variable form writes, in its
    argument order."""
    return Syntax(Form.STRUCT_QUERY, params=params, defaults=defaults, struct=struct, legacy=legacy)


_POINT_DOC = ("{name}(id, point, max_dist{extra}) -> MeshQueryPoint: the closest point on the mesh within max_dist "
              "(result, face, barycentrics u, v weighting the face's first and second vertex){sign}. Degenerate faces "
              "are skipped. Differentiable w.r.t. point (through u, v; the sign is piecewise constant).")


def _point_query(name: str, extra: tuple, defaults: tuple, sign: str, extra_doc: str = "", signed: bool = True):
    legacy = ("sign", "face", "u", "v") if signed else ("face", "u", "v")
    _geo(name, (T.UINT64, VEC3, T.FLOAT32, *(t for _, t in extra)), _POINT_OUT,
         _POINT_DOC.format(name=name, extra=extra_doc, sign=sign), kind=OpKind.OUT_CALL, adjoint=Adjoint.NATIVE,
         syntax=_struct_query(MESH_QUERY_POINT, ("id", "point", "max_dist", *(n for n, _ in extra)), defaults,
                              legacy))


_point_query("mesh_query_point", (), (), "; sign < 0 inside (majority of three axis-aligned rays)")
_point_query("mesh_query_point_no_sign", (), (), "; sign is not computed", signed=False)
_point_query("mesh_query_point_sign_normal", (("epsilon", T.FLOAT32),), (1.0e-3,),
             "; sign < 0 inside, from the angle-weighted pseudo-normal of the faces within epsilon", ", epsilon=1e-3")
_point_query("mesh_query_point_sign_winding_number", (("accuracy", T.FLOAT32), ("threshold", T.FLOAT32)),
             (2.0, 0.5), "; sign < 0 where the (fast) winding number exceeds threshold (needs "
             "support_winding_number=True, else falls back to the three-ray vote)", ", accuracy=2.0, threshold=0.5")
_point_query("mesh_query_point_sign_parity", (("n_sample", T.INT32), ("perturbation_scale", T.FLOAT32)), (1, 0.1),
             "; sign < 0 where at least half of n_sample perturbed rays cross an odd number of faces",
             ", n_sample=1, perturbation_scale=0.1")
_geo("mesh_query_furthest_point_no_sign", (T.UINT64, VEC3, T.FLOAT32), _POINT_OUT,
     "mesh_query_furthest_point_no_sign(id, point, min_dist) -> MeshQueryPoint: the furthest point of the mesh "
     "from point (a vertex), if farther than min_dist.", kind=OpKind.OUT_CALL, adjoint=Adjoint.NATIVE,
     syntax=_struct_query(MESH_QUERY_POINT, ("id", "point", "min_dist"), (), ("face", "u", "v")))

_geo("mesh_query_ray", (T.UINT64, VEC3, VEC3, T.FLOAT32, T.INT32), _RAY_OUT,
     "mesh_query_ray(id, start, dir, max_t, root=-1) -> MeshQueryRay: the closest hit with t < max_t (t in units "
     "of |dir|; both faces count); sign > 0 when the ray hits a face's front. Differentiable w.r.t. start and dir.",
     kind=OpKind.OUT_CALL, adjoint=Adjoint.NATIVE,
     syntax=_struct_query(MESH_QUERY_RAY, ("id", "start", "dir", "max_t", "root"), (-1,),
                          ("t", "u", "v", "sign", "normal", "face")))
_geo("mesh_query_ray_anyhit", (T.UINT64, VEC3, VEC3, T.FLOAT32, T.INT32), T.BOOL,
     "mesh_query_ray_anyhit(id, start, dir, max_t, root=-1) -> bool: whether the ray hits any face with t < max_t.",
     syntax=Syntax(Form.KEYWORDS, params=("id", "start", "dir", "max_t", "root"), defaults=(-1,)))
_geo("mesh_query_ray_count_intersections", (T.UINT64, VEC3, VEC3, T.INT32), T.INT32,
     "mesh_query_ray_count_intersections(id, start, dir, root=-1) -> int: faces the ray crosses at t >= 0.",
     syntax=Syntax(Form.KEYWORDS, params=("id", "start", "dir", "root"), defaults=(-1,)))

_geo("mesh_query_aabb", (T.UINT64, VEC3, VEC3), MESH_QUERY,
     "mesh_query_aabb(id, low, high) -> MeshQueryAABB: iterate over the faces whose bounding box overlaps "
     "[low, high] (with mesh_query_next or `for face in wp.mesh_query_aabb(...)`).",
     syntax=Syntax(iterated_by="mesh_query_next"))
_geo("mesh_query_sphere", (T.UINT64, VEC3, T.FLOAT32), MESH_QUERY,
     "mesh_query_sphere(id, center, radius) -> MeshQueryAABB: iterate over the faces within radius of center.",
     syntax=Syntax(iterated_by="mesh_query_next"))
for _next in ("mesh_query_next", "mesh_query_aabb_next"):
    _geo(_next, (MESH_QUERY, T.INT32), (T.BOOL, MESH_QUERY, T.INT32),
         f"{_next}(query, index) -> bool: advance a mesh box/sphere query; writes the next face into `index`.",
         native="mesh_query_step", kind=OpKind.OUT_CALL, syntax=_NEXT)

_geo("mesh_eval_position", (T.UINT64, T.INT32, T.FLOAT32, T.FLOAT32), VEC3,
     "mesh_eval_position(id, face, u, v) -> vec3: u * p0 + v * p1 + (1 - u - v) * p2 of the face's vertices; "
     "differentiable w.r.t. u, v.", adjoint=Adjoint.NATIVE)
_geo("mesh_eval_velocity", (T.UINT64, T.INT32, T.FLOAT32, T.FLOAT32), VEC3,
     "mesh_eval_velocity(id, face, u, v) -> vec3: the interpolated vertex velocity (zero without velocities); "
     "differentiable w.r.t. u, v and the mesh velocities when they require grad.", adjoint=Adjoint.NATIVE)
_geo("mesh_eval_face_normal", (T.UINT64, T.INT32), VEC3,
     "mesh_eval_face_normal(id, face) -> vec3: the unit normal of a face (right-handed winding).")
_geo("mesh_get_point", (T.UINT64, T.INT32), VEC3,
     "mesh_get_point(id, index) -> vec3: the point mesh.indices[index] refers to (differentiable w.r.t. the mesh "
     "points when they require grad).", adjoint=Adjoint.NATIVE)
#: wp.mesh_get(id): the mesh's arrays as a struct (points / velocities carry their gradients)
MESH_STRUCT = _struct("Mesh", (("points", T.ArrayType(VEC3, 1)), ("indices", T.ArrayType(T.INT32, 1)),
                               ("velocities", T.ArrayType(VEC3, 1))))
_geo("mesh_get", (T.UINT64,), tuple(t for _, t in MESH_STRUCT.fields),
     "mesh_get(id) -> Mesh: the mesh's arrays (fields points, indices, velocities; velocities is empty when the mesh "
     "has none). Reads of mesh.points are differentiable when the points require grad.", kind=OpKind.OUT_CALL,
     syntax=_struct_query(MESH_STRUCT, ("id",)))
_geo("mesh_get_bvh", (T.UINT64,), T.UINT64,
     "mesh_get_bvh(id) -> uint64: the id of the mesh's face BVH, for the bvh_query_* builtins (item i = face i, its "
     "box the face's bounds); valid while the mesh lives.")
_geo("mesh_get_velocity", (T.UINT64, T.INT32), VEC3,
     "mesh_get_velocity(id, index) -> vec3: the velocity of the point mesh.indices[index] refers to "
     "(differentiable w.r.t. the mesh velocities when they require grad).", adjoint=Adjoint.NATIVE)
_geo("mesh_get_index", (T.UINT64, T.INT32), T.INT32, "mesh_get_index(id, index) -> int: mesh.indices[index].")
_geo("mesh_get_group_root", (T.UINT64, T.INT32), T.INT32,
     "mesh_get_group_root(id, group) -> int: the BVH root of a face group of a grouped Mesh (-1 if absent), for the "
     "root argument of mesh_query_ray.")


# ------------------------------------------------------------------------------------------------ user BVHs
BVH_QUERY = T.OpaqueType("BvhQuery", "bvh_query_t")
_BVH_DOC = ("{name}({params}, root=-1) -> BvhQuery: iterate over the items (indices into the Bvh's lowers/uppers) "
            "whose box {what}; advance with bvh_query_next or `for i in wp.{name}(...)`. root: a subtree root, e.g. "
            "bvh_get_group_root(id, group) of a grouped Bvh.")
for _name, _want, _params, _what in (
        ("bvh_query_aabb", (VEC3, VEC3), ("low", "high"), "overlaps [low, high]"),
        ("bvh_query_ray", (VEC3, VEC3), ("start", "dir"), "the ray start + t dir (t >= 0, t < max_dist of next) hits"),
        ("bvh_query_sphere", (VEC3, T.FLOAT32), ("center", "radius"), "comes within radius of center"),
        ("bvh_query_capsule", (VEC3, VEC3, T.FLOAT32), ("start", "dir", "radius"),
         "inflated by radius is hit by the ray (a conservative capsule sweep)")):
    _geo(_name, (T.UINT64, *_want, T.INT32), BVH_QUERY,
         _BVH_DOC.format(name=_name, params=", ".join(("id", *_params)), what=_what),
         syntax=Syntax(Form.KEYWORDS, params=("id", *_params, "root"), defaults=(-1,), iterated_by="bvh_query_next"))
_geo("bvh_query_next", (BVH_QUERY, T.INT32, T.FLOAT32), (T.BOOL, BVH_QUERY, T.INT32),
     "bvh_query_next(query, index, max_dist=inf) -> bool: advance a BVH query; writes the next item into `index`. "
     "max_dist bounds ray and capsule queries (in units of |dir|).", native="bvh_query_step", kind=OpKind.OUT_CALL,
     syntax=_NEXT)
_geo("bvh_get_group_root", (T.UINT64, T.INT32), T.INT32,
     "bvh_get_group_root(id, group) -> int: the root of a group's subtree in a grouped Bvh (-1 if absent).")


# ------------------------------------------------------------------------------------------------ block queries
# Thread-block queries (tile kernels): every lane holds the same query; tile_*_next hands the next block_dim items
# to the lanes as a tile (-1 where none is left) and advances the query in place.
TILE_BVH_QUERY = T.OpaqueType("BvhQueryTiled", "bvh_query_t")
TILE_MESH_QUERY = T.OpaqueType("MeshQueryAABBTiled", "mesh_query_t")
_TILE_NEXT = Syntax(Form.TILE_QUERY_NEXT, updates=(0,))


def _tile_next(query: T.OpaqueType):
    def rule(args, attrs):
        (tile,) = attrs
        return (tile, query) if len(args) == 1 and args[0] == query else None
    return rule


for _name, _alias, _native, _params, _what in (
        ("tile_bvh_query_aabb", "bvh_query_aabb_tiled", "bvh_query_aabb", ("low", "high"), "overlaps [low, high]"),
        ("tile_bvh_query_ray", "bvh_query_ray_tiled", "bvh_query_ray", ("start", "dir"), ("the ray start + t dir "
          "(t >= 0) hits"))):
    for _n in (_name, _alias):
        register(Op(_n, _fixed((T.UINT64, VEC3, VEC3), TILE_BVH_QUERY), native="tile_" + _native, domain=D,
                    adjoint=Adjoint.NONE,
                    header=HEADER, doc=f"{_n}(id, {', '.join(_params)}) -> BvhQueryTiled: a thread-block query of the "
                    f"Bvh items whose box {_what}; advance with tile_bvh_query_next while tile_query_valid."
                    + (f" Deprecated alias of {_name}." if _n == _alias else "")))
for _n in ("tile_mesh_query_aabb", "mesh_query_aabb_tiled"):
    register(Op(_n, _fixed((T.UINT64, VEC3, VEC3), TILE_MESH_QUERY), native="tile_mesh_query_aabb", domain=D,
                adjoint=Adjoint.NONE,
                header=HEADER, doc=f"{_n}(id, low, high) -> MeshQueryAABBTiled: a thread-block query of the faces whose "
                "box overlaps [low, high]; advance with tile_mesh_query_aabb_next while tile_query_valid."))
for _n, _query in (("tile_bvh_query_next", TILE_BVH_QUERY), ("bvh_query_next_tiled", TILE_BVH_QUERY),
                   ("tile_mesh_query_aabb_next", TILE_MESH_QUERY), ("mesh_query_aabb_next_tiled", TILE_MESH_QUERY)):
    # a tile op (domain "tile": rendered by the block renderers, weft/backend/tiles.py and tile_cuda.py)
    register(Op(_n, _tile_next(_query), native="tile_query_take", kind=OpKind.SPECIAL, adjoint=Adjoint.NONE,
                collective=True, domain="tile", header=HEADER, syntax=_TILE_NEXT,
                doc=f"{_n}(query) -> tile: the query's next items, one per lane (a tile of block_dim ints, -1 where "
                "none is left); advances the query in place. Every lane must run the same loop."))
for _query in (TILE_BVH_QUERY, TILE_MESH_QUERY):
    register(Op("tile_query_valid", _fixed((_query,), T.BOOL), native="tile_query_valid", domain=D, header=HEADER,
                adjoint=Adjoint.NONE,
                doc="tile_query_valid(query) -> bool: whether a thread-block query may yield more items (guard the "
                "loop of tile_bvh_query_next / tile_mesh_query_aabb_next with it)."))


# ------------------------------------------------------------------------------------------------ helpers
def _vec3s(n: int, result):
    def rule(args, attrs):
        if len(args) == n and isinstance(args[0], T.VectorType) and args[0].length == 3 \
                and args[0].flavor is T.VecFlavor.VECTOR and args[0].scalar.is_float and all(a == args[0] for a in args):
            return result(args[0])
        return None
    return rule


def _edge_edge(args, attrs):
    head = _vec3s(4, lambda v: v)(args[:4], attrs)
    if head is not None and len(args) == 5 and args[4] == head.scalar:
        return head
    return None


register(Op("closest_point_edge_edge", _edge_edge, native="closest_point_edge_edge", adjoint=Adjoint.NATIVE, domain=D,
            header=HEADER, doc="closest_point_edge_edge(p1, q1, p2, q2, epsilon) -> vec3 (s, t, d): the closest points "
            "p1 + s (q1 - p1) and p2 + t (q2 - p2) of two segments and their distance; a segment with squared length "
            "<= epsilon is a point. Differentiable w.r.t. the end points (s or t clamped to 0 or 1 is a constant; "
            "not differentiable where the closest points coincide or the branch changes)."))
register(Op("intersect_tri_tri", _vec3s(6, lambda v: T.INT32), native="intersect_tri_tri", adjoint=Adjoint.NONE,
            domain=D, header=HEADER, doc="intersect_tri_tri(v0, v1, v2, u0, u1, u2) -> int: 1 when the two triangles "
            "intersect (touching counts, coplanar overlaps included), else 0."))
