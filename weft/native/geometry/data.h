// weft native geometry: the layouts of the objects the geometry library builds and kernels query. Plain structs of
// pointers into arrays the Python objects own (points, indices, velocities) or the library allocates (tree nodes,
// sorted ids). Shared by the library and the kernel modules; keep both compiled from this one definition.
#pragma once
#include "../core.h"  // on the host, the C math functions through libm.h

namespace weft {
namespace geo {

struct HashGridData {
    int32 dim[3];          // number of hashed cells along x, y, z (space wraps around modulo these)
    float cell_width;      // edge of a cell, set by build(points, radius)
    float inv_cell_width;
    int32 num_points;      // points of the last build
    int32 capacity;        // allocated length of sorted_ids
    int32* sorted_ids;     // original point ids ordered by hashed cell (stable: by id within a cell)
    int32* cell_starts;    // per hashed cell, [start, end) into sorted_ids
    int32* cell_ends;
    int32* sorted_groups;  // group of each sorted point (grouped builds), else null
    int32 group_capacity;
    int32 precision;       // 64: cells computed in double (float64 grids), else in float
    double inv_cell_width_d;
    // host-only bookkeeping of sparse builds (appended last: the fields above keep their offsets)
    int32* occupied;       // the cells the last build filled, when occupied_valid (else any cell may be non-empty)
    int32 occupied_count;
    int32 occupied_capacity;
    int32 occupied_valid;
};

// An internal BVH node holds the boxes of both children, so a traversal step tests two boxes at once.
// child >= 0: internal node index; child < 0: a leaf, ~child = position in the sorted primitive order.
// Nodes are one 64-byte cache line each (64-byte aligned storage) and stored in depth-first order (a node's first
// child follows it), so a traversal reads mostly neighbouring lines.
struct BvhNode {
    float lo[2][3];
    float hi[2][3];
    int32 child[2];
    int32 pad[2];  // to 64 bytes
};

// An 8-wide node collapsed from the binary tree (mesh BVHs: the internal child of largest surface area is expanded
// into its two children until there are eight), in two 64-byte cache lines: the child boxes are stored quantized to 8
// bits per bound relative to the node's own box (rounded outwards, so a decoded box always contains the true one),
// which cuts the depth and the dependent loads of a traversal. Slots are filled in order; count of them are used.
constexpr int WIDE = 8;
struct alignas(128) WideNode {
    float origin[3];        // the node's box lower corner
    float scale[3];         // one quantization step per axis
    uint8 qlo[3][WIDE];     // per axis, per child: lower bound = origin + qlo * scale (<= the true bound)
    uint8 qhi[3][WIDE];     // upper bound = origin + qhi * scale (>= the true bound)
    int32 child[WIDE];      // >= 0: wide node index; < 0: ~sorted leaf position; INT32_MIN: empty slot
    int32 count;            // used slots (the first count)
};

struct BvhData {
    int32 num_prims;
    int32 root;            // internal node 0, or ~0 when there is one primitive, or -1... see has_root
    int32 has_root;        // 0 for an empty tree
    float root_lo[3];
    float root_hi[3];
    BvhNode* nodes;        // num_prims - 1 internal nodes
    int32* prim_ids;       // sorted position -> primitive id
    const float* lowers;   // user BVH: primitive boxes (3 floats each); null for a mesh BVH (a leaf's box is its
    const float* uppers;   // face's, from leaf_data: see leaf_box)
    const int32* groups;   // optional group of each primitive (grouped BVHs)
    int32 num_groups;      // distinct group ids
    int32* group_ids;      // the distinct group ids, ascending (any int32 values: sparse ids cost nothing)
    int32* group_roots;    // public root index of each group's subtree (same order as group_ids)
    WideNode* wide;        // the whole tree as 8-wide nodes (root 0) for walks from the root, or null
    const float* leaf_data;  // per sorted leaf, the record a walk's leaf callback reads (mesh: its vertices), or null
    int32 leaf_stride;       // floats per leaf record (walks prefetch a leaf's record before testing it)
    // host-only bookkeeping of the wide nodes' refit (appended last: the fields above keep their offsets)
    int32* wide_spans;       // (first, count) of each run of wide nodes numbered depth-first: the top, then subtrees
    int32 num_wide_spans;
    float* wide_box;         // refit scratch: 8 floats (exact lo, hi; x, y, z, unused) per wide node
};

// Per-child data of the fast winding number (Barill et al. 2018, first order): the area-weighted normal sum, its
// area-weighted centre and a radius bounding the child's triangles around that centre.
struct WindingNode {
    float n[2][3];
    float c[2][3];
    float r[2];
};

struct MeshData {
    const float* points;      // num_points x 3, owned by the Python Mesh
    const int32* indices;     // num_tris x 3
    const float* velocities;  // num_points x 3 or null
    int32 num_points;
    int32 num_tris;
    BvhData bvh;
    WindingNode* winding;     // num_prims - 1 entries when support_winding_number, else null
    float* leaf_tris;         // 9 floats per sorted position: the vertices of face prim_ids[s], refreshed by refit
    uint64 bvh_id;            // registry id of bvh as a user BVH over the triangles' boxes (wp.mesh_get_bvh)
    float* points_grad;       // gradient of the points (points.grad when points.requires_grad), else null
    float* velocities_grad;
};

// The box of the leaf at sorted position s: a mesh leaf's (a 9-float record of its face's vertices in leaf_data) is
// the min / max of its vertices, any other the primitive box of prim_ids[s].
WEFT_FN void leaf_box(const BvhData* b, int32 s, float* lo, float* hi) {
    if (b->leaf_data != nullptr && b->leaf_stride == 9) {
        const float* v = b->leaf_data + 9 * int64(s);
        for (int k = 0; k < 3; ++k) {
            const float a = v[k], c = v[3 + k], d = v[6 + k];
            const float mn = d < c ? d : c, mx = c < d ? d : c;  // std::min / std::max's choices
            lo[k] = mn < a ? mn : a;
            hi[k] = a < mx ? mx : a;
        }
    } else {
        const int64 p = b->prim_ids[s];
        for (int k = 0; k < 3; ++k) {
            lo[k] = b->lowers[3 * p + k];
            hi[k] = b->uppers[3 * p + k];
        }
    }
}

// The root of group g's subtree (-1 when the tree has no such group): a binary search of the sorted ids.
WEFT_FN int32 group_root(const BvhData* b, int32 g) {
    if (b->group_ids == nullptr) return -1;
    int32 lo = 0, hi = b->num_groups;
    while (lo < hi) {
        const int32 mid = lo + (hi - lo) / 2;
        if (b->group_ids[mid] < g) lo = mid + 1;
        else hi = mid;
    }
    return lo < b->num_groups && b->group_ids[lo] == g ? b->group_roots[lo] : -1;
}

WEFT_FN int32 wrap(int32 i, int32 n) {
    int32 r = i % n;
    return r < 0 ? r + n : r;
}

WEFT_FN int32 hashed_cell(const HashGridData* g, int32 x, int32 y, int32 z) {
    return (wrap(z, g->dim[2]) * g->dim[1] + wrap(y, g->dim[1])) * g->dim[0] + wrap(x, g->dim[0]);
}

WEFT_FN int32 cell_coord_d(double x, double inv_w) {
    const double c = floor(x * inv_w);
    if (c != c) return 0;  // NaN: cell 0 (infinities clamp to the edge cells)
    if (!(c > -1.0e9)) return -1000000000;
    if (c > 1.0e9) return 1000000000;
    return int32(c);
}

WEFT_FN int32 cell_coord(float x, float inv_w) {
    const float c = floorf(x * inv_w);
    if (c != c) return 0;  // NaN: cell 0
    // clamp far-away (or infinite) coordinates into int range; they still hash to a valid cell
    if (!(c > -1.0e9f)) return -1000000000;
    if (c > 1.0e9f) return 1000000000;
    return int32(c);
}

WEFT_FN const float* point3(const float* base, int32 i) { return base + 3 * int64(i); }

}  // namespace geo
}  // namespace weft
