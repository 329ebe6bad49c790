"""``TriMeshCollisionDetector``: proximity queries of a triangle mesh against itself (warp.sim 1.7.2's
``warp.sim.collide.TriMeshCollisionDetector``, the detection behind its cloth self-contact).

Three queries over the model's particles, triangles and bending edges (``model.edge_indices[:, 2:4]`` are an edge's
end points), each through a ``wp.Bvh`` of the primitives' bounding boxes:

- ``vertex_triangle_collision_detection(r)``: for every vertex, the triangles it is not a corner of within distance
  ``r`` (listed under the vertex and under the triangle), with each one's closest distance (``r`` when none);
- ``edge_edge_collision_detection(r)``: for every edge, the edges sharing no end point with it within ``r``;
- ``triangle_triangle_intersection_detection()``: for every triangle, the triangles sharing no vertex with it that
  it intersects.

Results go into fixed per-primitive buffers laid out by an offsets array (CSR: primitive ``i`` owns slots
``offsets[i]:offsets[i + 1]``); a primitive finding more than its buffer holds still counts them all (``*_count``,
so ``count > buffer size`` tells the overflow) and sets its ``resize_flags`` entry (0: vertex buffers, 1: triangle
buffers, 2: edge buffers, 3: triangle-triangle buffers), as warp.sim does; nothing is resized automatically.
``refit(new_pos)`` updates both hierarchies after the vertices moved. The ``get_*`` functions read the lists of a
``TriMeshCollisionInfo`` inside kernels.
"""

import numpy as np

import weft as wp

TRI_CONTACT_FEATURE_VERTEX_A = wp.constant(0)
TRI_CONTACT_FEATURE_VERTEX_B = wp.constant(1)
TRI_CONTACT_FEATURE_VERTEX_C = wp.constant(2)
TRI_CONTACT_FEATURE_EDGE_AB = wp.constant(3)
TRI_CONTACT_FEATURE_EDGE_AC = wp.constant(4)
TRI_CONTACT_FEATURE_EDGE_BC = wp.constant(5)
TRI_CONTACT_FEATURE_FACE_INTERIOR = wp.constant(6)

VERTEX_COLLISION_BUFFER_OVERFLOW_INDEX = wp.constant(0)
TRI_COLLISION_BUFFER_OVERFLOW_INDEX = wp.constant(1)
EDGE_COLLISION_BUFFER_OVERFLOW_INDEX = wp.constant(2)
TRI_TRI_COLLISION_BUFFER_OVERFLOW_INDEX = wp.constant(3)


@wp.func
def triangle_closest_point(a: wp.vec3, b: wp.vec3, c: wp.vec3, p: wp.vec3):
    """The point of triangle (a, b, c) closest to ``p``, its barycentric weights and the feature it lies on
    (``TRI_CONTACT_FEATURE_*``: a corner, an edge or the interior), by the Voronoi regions of the triangle's
    features (Ericson, Real-Time Collision Detection, 5.1.5)."""
    ab = b - a
    ac = c - a
    ap = p - a
    d1 = wp.dot(ab, ap)
    d2 = wp.dot(ac, ap)
    if d1 <= 0.0 and d2 <= 0.0:
        return a, wp.vec3(1.0, 0.0, 0.0), TRI_CONTACT_FEATURE_VERTEX_A
    bp = p - b
    d3 = wp.dot(ab, bp)
    d4 = wp.dot(ac, bp)
    if d3 >= 0.0 and d4 <= d3:
        return b, wp.vec3(0.0, 1.0, 0.0), TRI_CONTACT_FEATURE_VERTEX_B
    cp = p - c
    d5 = wp.dot(ab, cp)
    d6 = wp.dot(ac, cp)
    if d6 >= 0.0 and d5 <= d6:
        return c, wp.vec3(0.0, 0.0, 1.0), TRI_CONTACT_FEATURE_VERTEX_C
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        s = d1 / (d1 - d3)
        return a + ab * s, wp.vec3(1.0 - s, s, 0.0), TRI_CONTACT_FEATURE_EDGE_AB
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        s = d2 / (d2 - d6)
        return a + ac * s, wp.vec3(1.0 - s, 0.0, s), TRI_CONTACT_FEATURE_EDGE_AC
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0:
        s = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        return b + (c - b) * s, wp.vec3(0.0, 1.0 - s, s), TRI_CONTACT_FEATURE_EDGE_BC
    inv = 1.0 / (va + vb + vc)
    v = vb * inv
    w = vc * inv
    return a + ab * v + ac * w, wp.vec3(1.0 - v - w, v, w), TRI_CONTACT_FEATURE_FACE_INTERIOR


@wp.func
def vertex_adjacent_to_triangle(v: wp.int32, a: wp.int32, b: wp.int32, c: wp.int32):
    """Whether vertex ``v`` is a corner of the triangle (a, b, c)."""
    return v == a or v == b or v == c


@wp.func
def tri_is_neighbor(a_1: wp.int32, a_2: wp.int32, a_3: wp.int32, b_1: wp.int32, b_2: wp.int32, b_3: wp.int32):
    """Whether two triangles share a vertex."""
    return (vertex_adjacent_to_triangle(a_1, b_1, b_2, b_3) or vertex_adjacent_to_triangle(a_2, b_1, b_2, b_3)
            or vertex_adjacent_to_triangle(a_3, b_1, b_2, b_3))


@wp.func
def compute_tri_aabb(v1: wp.vec3, v2: wp.vec3, v3: wp.vec3):
    """The bounding box (lower, upper) of a triangle."""
    return wp.min(wp.min(v1, v2), v3), wp.max(wp.max(v1, v2), v3)


@wp.func
def edge_edge_distance(a0: wp.vec3, a1: wp.vec3, b0: wp.vec3, b1: wp.vec3, parallel_eps: float):
    """Distance between the closest points of segments (a0, a1) and (b0, b1) (``wp.closest_point_edge_edge``)."""
    st = wp.closest_point_edge_edge(a0, a1, b0, b1, parallel_eps)
    return wp.length((a0 + (a1 - a0) * st[0]) - (b0 + (b1 - b0) * st[1]))


@wp.kernel
def compute_tri_aabbs(pos: wp.array(dtype=wp.vec3), tri_indices: wp.array2d(dtype=wp.int32),
                      lower_bounds: wp.array(dtype=wp.vec3), upper_bounds: wp.array(dtype=wp.vec3)):
    t = wp.tid()
    lo, hi = compute_tri_aabb(pos[tri_indices[t, 0]], pos[tri_indices[t, 1]], pos[tri_indices[t, 2]])
    lower_bounds[t] = lo
    upper_bounds[t] = hi


@wp.kernel
def compute_edge_aabbs(pos: wp.array(dtype=wp.vec3), edge_indices: wp.array2d(dtype=wp.int32),
                       lower_bounds: wp.array(dtype=wp.vec3), upper_bounds: wp.array(dtype=wp.vec3)):
    e = wp.tid()
    p = pos[edge_indices[e, 2]]
    q = pos[edge_indices[e, 3]]
    lower_bounds[e] = wp.min(p, q)
    upper_bounds[e] = wp.max(p, q)


@wp.kernel
def init_triangle_collision_data_kernel(query_radius: float, triangle_colliding_vertices_count: wp.array(dtype=wp.int32),
                                        triangle_colliding_vertices_min_dist: wp.array(dtype=float),
                                        resize_flags: wp.array(dtype=wp.int32)):
    """Empty every triangle's vertex list (distance ``query_radius``) and clear the first three overflow flags."""
    t = wp.tid()
    triangle_colliding_vertices_count[t] = 0
    triangle_colliding_vertices_min_dist[t] = query_radius
    if t == 0:
        for k in range(3):
            resize_flags[k] = 0


@wp.kernel
def vertex_triangle_collision_detection_kernel(
        query_radius: float, bvh_id: wp.uint64, pos: wp.array(dtype=wp.vec3),
        tri_indices: wp.array2d(dtype=wp.int32), vertex_colliding_triangles_offsets: wp.array(dtype=wp.int32),
        vertex_colliding_triangles_buffer_sizes: wp.array(dtype=wp.int32),
        triangle_colliding_vertices_offsets: wp.array(dtype=wp.int32),
        triangle_colliding_vertices_buffer_sizes: wp.array(dtype=wp.int32),
        vertex_colliding_triangles: wp.array(dtype=wp.int32), vertex_colliding_triangles_count: wp.array(dtype=wp.int32),
        vertex_colliding_triangles_min_dist: wp.array(dtype=float), triangle_colliding_vertices: wp.array(dtype=wp.int32),
        triangle_colliding_vertices_count: wp.array(dtype=wp.int32),
        triangle_colliding_vertices_min_dist: wp.array(dtype=float), resize_flags: wp.array(dtype=wp.int32)):
    """One thread per vertex: the triangles within ``query_radius`` that it is not a corner of, listed under the
    vertex (in order) and under each triangle (atomically; the triangles' counts and distances start from
    ``init_triangle_collision_data_kernel``)."""
    v = wp.tid()
    p = pos[v]
    r = wp.vec3(query_radius, query_radius, query_radius)
    query = wp.bvh_query_aabb(bvh_id, p - r, p + r)
    t = wp.int32(0)
    n = wp.int32(0)
    d_min = query_radius
    v_start = vertex_colliding_triangles_offsets[v]
    v_room = vertex_colliding_triangles_offsets[v + 1] - v_start
    while wp.bvh_query_next(query, t):
        i0 = tri_indices[t, 0]
        i1 = tri_indices[t, 1]
        i2 = tri_indices[t, 2]
        if vertex_adjacent_to_triangle(v, i0, i1, i2):
            continue
        closest, _bary, _feature = triangle_closest_point(pos[i0], pos[i1], pos[i2], p)
        d = wp.length(closest - p)
        if d < query_radius:
            if n < v_room:
                vertex_colliding_triangles[v_start + n] = t
            else:
                resize_flags[VERTEX_COLLISION_BUFFER_OVERFLOW_INDEX] = 1
            n = n + 1
            d_min = wp.min(d_min, d)
            wp.atomic_min(triangle_colliding_vertices_min_dist, t, d)
            slot = wp.atomic_add(triangle_colliding_vertices_count, t, 1)
            if slot < triangle_colliding_vertices_buffer_sizes[t]:
                triangle_colliding_vertices[triangle_colliding_vertices_offsets[t] + slot] = v
            else:
                resize_flags[TRI_COLLISION_BUFFER_OVERFLOW_INDEX] = 1
    vertex_colliding_triangles_count[v] = n
    vertex_colliding_triangles_min_dist[v] = d_min


@wp.kernel
def edge_colliding_edges_detection_kernel(
        query_radius: float, bvh_id: wp.uint64, pos: wp.array(dtype=wp.vec3),
        edge_indices: wp.array2d(dtype=wp.int32), edge_colliding_edges_offsets: wp.array(dtype=wp.int32),
        edge_colliding_edges_buffer_sizes: wp.array(dtype=wp.int32), edge_edge_parallel_epsilon: float,
        edge_colliding_edges: wp.array(dtype=wp.int32), edge_colliding_edges_count: wp.array(dtype=wp.int32),
        edge_colliding_edges_min_dist: wp.array(dtype=float), resize_flags: wp.array(dtype=wp.int32)):
    """One thread per edge: the edges sharing no end point with it within ``query_radius`` (each pair is found by
    both of its edges, each listing the other)."""
    e = wp.tid()
    i = edge_indices[e, 2]
    j = edge_indices[e, 3]
    a0 = pos[i]
    a1 = pos[j]
    r = wp.vec3(query_radius, query_radius, query_radius)
    query = wp.bvh_query_aabb(bvh_id, wp.min(a0, a1) - r, wp.max(a0, a1) + r)
    other = wp.int32(0)
    n = wp.int32(0)
    d_min = query_radius
    start = edge_colliding_edges_offsets[e]
    room = edge_colliding_edges_offsets[e + 1] - start
    while wp.bvh_query_next(query, other):
        k = edge_indices[other, 2]
        m = edge_indices[other, 3]
        if k == i or k == j or m == i or m == j:
            continue
        d = edge_edge_distance(a0, a1, pos[k], pos[m], edge_edge_parallel_epsilon)
        if d < query_radius:
            if n < room:
                edge_colliding_edges[start + n] = other
            else:
                resize_flags[EDGE_COLLISION_BUFFER_OVERFLOW_INDEX] = 1
            n = n + 1
            d_min = wp.min(d_min, d)
    edge_colliding_edges_count[e] = n
    edge_colliding_edges_min_dist[e] = d_min


@wp.kernel
def triangle_triangle_collision_detection_kernel(
        bvh_id: wp.uint64, pos: wp.array(dtype=wp.vec3), tri_indices: wp.array2d(dtype=wp.int32),
        triangle_intersecting_triangles_offsets: wp.array(dtype=wp.int32),
        triangle_intersecting_triangles: wp.array(dtype=wp.int32),
        triangle_intersecting_triangles_count: wp.array(dtype=wp.int32), resize_flags: wp.array(dtype=wp.int32)):
    """One thread per triangle: the triangles sharing no vertex with it that intersect it."""
    t = wp.tid()
    a = tri_indices[t, 0]
    b = tri_indices[t, 1]
    c = tri_indices[t, 2]
    p0 = pos[a]
    p1 = pos[b]
    p2 = pos[c]
    lo, hi = compute_tri_aabb(p0, p1, p2)
    start = triangle_intersecting_triangles_offsets[t]
    room = triangle_intersecting_triangles_offsets[t + 1] - start
    query = wp.bvh_query_aabb(bvh_id, lo, hi)
    other = wp.int32(0)
    n = wp.int32(0)
    while wp.bvh_query_next(query, other):
        u = tri_indices[other, 0]
        v = tri_indices[other, 1]
        w = tri_indices[other, 2]
        if tri_is_neighbor(a, b, c, u, v, w):
            continue
        if wp.intersect_tri_tri(p0, p1, p2, pos[u], pos[v], pos[w]):
            if n < room:
                triangle_intersecting_triangles[start + n] = other
            else:
                resize_flags[TRI_TRI_COLLISION_BUFFER_OVERFLOW_INDEX] = 1
            n = n + 1
    triangle_intersecting_triangles_count[t] = n


@wp.struct
class TriMeshCollisionInfo:
    """The detector's vertex-triangle, triangle-vertex and edge-edge lists, for kernels (``get_*`` below)."""

    vertex_colliding_triangles: wp.array(dtype=wp.int32)
    vertex_colliding_triangles_offsets: wp.array(dtype=wp.int32)
    vertex_colliding_triangles_buffer_sizes: wp.array(dtype=wp.int32)
    vertex_colliding_triangles_count: wp.array(dtype=wp.int32)
    vertex_colliding_triangles_min_dist: wp.array(dtype=float)

    triangle_colliding_vertices: wp.array(dtype=wp.int32)
    triangle_colliding_vertices_offsets: wp.array(dtype=wp.int32)
    triangle_colliding_vertices_buffer_sizes: wp.array(dtype=wp.int32)
    triangle_colliding_vertices_count: wp.array(dtype=wp.int32)
    triangle_colliding_vertices_min_dist: wp.array(dtype=float)

    edge_colliding_edges: wp.array(dtype=wp.int32)
    edge_colliding_edges_offsets: wp.array(dtype=wp.int32)
    edge_colliding_edges_buffer_sizes: wp.array(dtype=wp.int32)
    edge_colliding_edges_count: wp.array(dtype=wp.int32)
    edge_colliding_edges_min_dist: wp.array(dtype=float)


@wp.func
def get_vertex_colliding_triangles_count(col_info: TriMeshCollisionInfo, v: int):
    """How many of vertex ``v``'s triangles are listed (at most its buffer size)."""
    return wp.min(col_info.vertex_colliding_triangles_count[v], col_info.vertex_colliding_triangles_buffer_sizes[v])


@wp.func
def get_vertex_colliding_triangles(col_info: TriMeshCollisionInfo, v: int, i_collision: int):
    return col_info.vertex_colliding_triangles[col_info.vertex_colliding_triangles_offsets[v] + i_collision]


@wp.func
def get_triangle_colliding_vertices_count(col_info: TriMeshCollisionInfo, tri: int):
    """How many of triangle ``tri``'s vertices are listed (at most its buffer size)."""
    return wp.min(col_info.triangle_colliding_vertices_count[tri],
                  col_info.triangle_colliding_vertices_buffer_sizes[tri])


@wp.func
def get_triangle_colliding_vertices(col_info: TriMeshCollisionInfo, tri: int, i_collision: int):
    return col_info.triangle_colliding_vertices[col_info.triangle_colliding_vertices_offsets[tri] + i_collision]


@wp.func
def get_edge_colliding_edges_count(col_info: TriMeshCollisionInfo, e: int):
    """How many of edge ``e``'s edges are listed (at most its buffer size)."""
    return wp.min(col_info.edge_colliding_edges_count[e], col_info.edge_colliding_edges_buffer_sizes[e])


@wp.func
def get_edge_colliding_edges(col_info: TriMeshCollisionInfo, e: int, i_collision: int):
    return col_info.edge_colliding_edges[col_info.edge_colliding_edges_offsets[e] + i_collision]


def _offsets(sizes: np.ndarray, device) -> wp.array:
    out = np.zeros(len(sizes) + 1, dtype=np.int32)
    out[1:] = np.cumsum(sizes)
    return wp.array(out, dtype=wp.int32, device=device)


class TriMeshCollisionDetector:
    """Vertex-triangle, edge-edge and triangle-triangle proximity of ``model``'s cloth (see the module docstring).

    Args:
        model: a finalized model with triangles (and bending edges for the edge-edge query).
        vertex_positions: the positions to query (default ``model.particle_q``); ``refit(new_pos)`` changes them.
        *_buffer_pre_alloc: list slots per vertex, triangle, edge and triangle (intersections).
        *_buffer_max_alloc: accepted for warp.sim's signature (its buffers are not resized either).
        edge_edge_parallel_epsilon: ``wp.closest_point_edge_edge``'s threshold for parallel edges.
    """

    def __init__(self, model, vertex_positions=None, vertex_collision_buffer_pre_alloc=8,
                 vertex_collision_buffer_max_alloc=256, triangle_collision_buffer_pre_alloc=16,
                 triangle_collision_buffer_max_alloc=256, edge_collision_buffer_pre_alloc=8,
                 edge_collision_buffer_max_alloc=256, triangle_triangle_collision_buffer_pre_alloc=8,
                 triangle_triangle_collision_buffer_max_alloc=256, edge_edge_parallel_epsilon=1e-5):
        from .model import SimError

        if model.tri_count == 0:
            raise SimError("TriMeshCollisionDetector(model): the model has no triangles")
        self.model = model
        self.device = model.device
        self.vertex_positions = model.particle_q if vertex_positions is None else vertex_positions
        self.vertex_collision_buffer_pre_alloc = vertex_collision_buffer_pre_alloc
        self.vertex_collision_buffer_max_alloc = vertex_collision_buffer_max_alloc
        self.triangle_collision_buffer_pre_alloc = triangle_collision_buffer_pre_alloc
        self.triangle_collision_buffer_max_alloc = triangle_collision_buffer_max_alloc
        self.edge_collision_buffer_pre_alloc = edge_collision_buffer_pre_alloc
        self.edge_collision_buffer_max_alloc = edge_collision_buffer_max_alloc
        self.triangle_triangle_collision_buffer_pre_alloc = triangle_triangle_collision_buffer_pre_alloc
        self.triangle_triangle_collision_buffer_max_alloc = triangle_triangle_collision_buffer_max_alloc
        self.edge_edge_parallel_epsilon = edge_edge_parallel_epsilon
        dev, nv, nt, ne = self.device, model.particle_count, model.tri_count, model.edge_count

        def lists(count, per):
            sizes = wp.full(count, per, dtype=wp.int32, device=dev)
            return (wp.zeros(count * per, dtype=wp.int32, device=dev), wp.zeros(count, dtype=wp.int32, device=dev),
                    wp.full(count, 0.0, dtype=float, device=dev), sizes,
                    _offsets(np.full(count, per, dtype=np.int64), dev))

        (self.vertex_colliding_triangles, self.vertex_colliding_triangles_count,
         self.vertex_colliding_triangles_min_dist, self.vertex_colliding_triangles_buffer_sizes,
         self.vertex_colliding_triangles_offsets) = lists(nv, vertex_collision_buffer_pre_alloc)
        (self.triangle_colliding_vertices, self.triangle_colliding_vertices_count,
         self.triangle_colliding_vertices_min_dist, self.triangle_colliding_vertices_buffer_sizes,
         self.triangle_colliding_vertices_offsets) = lists(nt, triangle_collision_buffer_pre_alloc)
        (self.edge_colliding_edges, self.edge_colliding_edges_count, self.edge_colliding_edges_min_dist,
         self.edge_colliding_edges_buffer_sizes, self.edge_colliding_edges_offsets) = lists(
            ne, edge_collision_buffer_pre_alloc)
        self.resize_flags = wp.zeros(4, dtype=wp.int32, device=dev)

        self.lower_bounds_tris = wp.zeros(nt, dtype=wp.vec3, device=dev)
        self.upper_bounds_tris = wp.zeros(nt, dtype=wp.vec3, device=dev)
        self._bounds_tris()
        self.bvh_tris = wp.Bvh(self.lower_bounds_tris, self.upper_bounds_tris)
        self.lower_bounds_edges = wp.zeros(ne, dtype=wp.vec3, device=dev)
        self.upper_bounds_edges = wp.zeros(ne, dtype=wp.vec3, device=dev)
        self.bvh_edges = None
        if ne:
            self._bounds_edges()
            self.bvh_edges = wp.Bvh(self.lower_bounds_edges, self.upper_bounds_edges)
        self.collision_info = self.get_collision_data()
        # triangle-triangle intersections: made on first use (the simulation does not need them)
        self.triangle_intersecting_triangles = None
        self.triangle_intersecting_triangles_count = None
        self.triangle_intersecting_triangles_offsets = None

    def get_collision_data(self) -> TriMeshCollisionInfo:
        """A ``TriMeshCollisionInfo`` holding this detector's arrays."""
        info = TriMeshCollisionInfo()
        for prefix in ("vertex_colliding_triangles", "triangle_colliding_vertices", "edge_colliding_edges"):
            for suffix in ("", "_offsets", "_buffer_sizes", "_count", "_min_dist"):
                setattr(info, prefix + suffix, getattr(self, prefix + suffix))
        return info

    def compute_collision_buffer_offsets(self, buffer_sizes: wp.array, offsets: wp.array) -> None:
        """Write the exclusive prefix sum of ``buffer_sizes`` into ``offsets`` (one longer)."""
        if offsets.size != buffer_sizes.size + 1:
            raise ValueError(f"offsets has {offsets.size} entries, buffer_sizes {buffer_sizes.size}: offsets needs one "
                             "more")
        out = np.zeros(offsets.size, dtype=np.int32)
        out[1:] = np.cumsum(buffer_sizes.numpy())
        offsets.assign(out)

    def _bounds_tris(self) -> None:
        wp.launch(compute_tri_aabbs, dim=self.model.tri_count,
                  inputs=[self.vertex_positions, self.model.tri_indices, self.lower_bounds_tris,
                          self.upper_bounds_tris], device=self.device)

    def _bounds_edges(self) -> None:
        wp.launch(compute_edge_aabbs, dim=self.model.edge_count,
                  inputs=[self.vertex_positions, self.model.edge_indices, self.lower_bounds_edges,
                          self.upper_bounds_edges], device=self.device)

    def refit(self, new_pos=None) -> None:
        """Update both hierarchies to ``new_pos`` (default: the positions last given)."""
        if new_pos is not None:
            self.vertex_positions = new_pos
        self.refit_triangles()
        self.refit_edges()

    def refit_triangles(self) -> None:
        self._bounds_tris()
        self.bvh_tris.refit()

    def refit_edges(self) -> None:
        if self.bvh_edges is not None:
            self._bounds_edges()
            self.bvh_edges.refit()

    def vertex_triangle_collision_detection(self, query_radius: float) -> None:
        """Fill the vertex-triangle and triangle-vertex lists for pairs closer than ``query_radius``."""
        m = self.model
        wp.launch(init_triangle_collision_data_kernel, dim=m.tri_count, inputs=[float(query_radius)],
                  outputs=[self.triangle_colliding_vertices_count, self.triangle_colliding_vertices_min_dist,
                           self.resize_flags], device=self.device)
        if m.particle_count == 0:
            return
        wp.launch(vertex_triangle_collision_detection_kernel, dim=m.particle_count,
                  inputs=[float(query_radius), self.bvh_tris.id, self.vertex_positions, m.tri_indices,
                          self.vertex_colliding_triangles_offsets, self.vertex_colliding_triangles_buffer_sizes,
                          self.triangle_colliding_vertices_offsets, self.triangle_colliding_vertices_buffer_sizes],
                  outputs=[self.vertex_colliding_triangles, self.vertex_colliding_triangles_count,
                           self.vertex_colliding_triangles_min_dist, self.triangle_colliding_vertices,
                           self.triangle_colliding_vertices_count, self.triangle_colliding_vertices_min_dist,
                           self.resize_flags], device=self.device)

    def edge_edge_collision_detection(self, query_radius: float) -> None:
        """Fill the edge-edge lists for pairs of edges closer than ``query_radius``."""
        if self.bvh_edges is None:
            return
        wp.launch(edge_colliding_edges_detection_kernel, dim=self.model.edge_count,
                  inputs=[float(query_radius), self.bvh_edges.id, self.vertex_positions, self.model.edge_indices,
                          self.edge_colliding_edges_offsets, self.edge_colliding_edges_buffer_sizes,
                          float(self.edge_edge_parallel_epsilon)],
                  outputs=[self.edge_colliding_edges, self.edge_colliding_edges_count,
                           self.edge_colliding_edges_min_dist, self.resize_flags], device=self.device)

    def triangle_triangle_intersection_detection(self) -> None:
        """Fill ``triangle_intersecting_triangles`` (per triangle, the non-neighbouring triangles it intersects)."""
        nt, per = self.model.tri_count, self.triangle_triangle_collision_buffer_pre_alloc
        if self.triangle_intersecting_triangles is None:
            self.triangle_intersecting_triangles = wp.zeros(nt * per, dtype=wp.int32, device=self.device)
            self.triangle_intersecting_triangles_count = wp.zeros(nt, dtype=wp.int32, device=self.device)
            self.triangle_intersecting_triangles_offsets = _offsets(np.full(nt, per, dtype=np.int64), self.device)
        wp.launch(triangle_triangle_collision_detection_kernel, dim=nt,
                  inputs=[self.bvh_tris.id, self.vertex_positions, self.model.tri_indices,
                          self.triangle_intersecting_triangles_offsets],
                  outputs=[self.triangle_intersecting_triangles, self.triangle_intersecting_triangles_count,
                           self.resize_flags], device=self.device)
