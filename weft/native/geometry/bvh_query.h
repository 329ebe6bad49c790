// weft native geometry: queries of user BVHs (wp.Bvh over lowers/uppers boxes) in kernels. Items are yielded one at
// a time by bvh_query_next; each candidate's own box (lowers/uppers) is tested exactly before it is yielded.
#pragma once
#include "bvh.h"

namespace weft {

namespace geo {
enum BvhQueryKind : int32 { BVH_AABB = 0, BVH_RAY = 1, BVH_SPHERE = 2, BVH_CAPSULE = 3 };

WEFT_FN const BvhData* user_bvh(uint64 id, const char* what) {
    const BvhData* b = static_cast<const BvhData*>(lookup(registry(), id, KIND_BVH));
    if (b == nullptr) report_error(4, what);
    return b;
}
#define WEFT_BVH_ID_ERROR(fn) fn ": argument 'id' is not a live Bvh (never created, destroyed, or another object)"
}  // namespace geo

struct bvh_query_t {
    const geo::BvhData* bvh;
    int32 kind;
    float a[3];    // aabb: low; ray / capsule: start; sphere: centre
    float b[3];    // aabb: high; ray / capsule: direction
    float inv[3];  // 1 / direction
    float radius;  // sphere / capsule
    int32 sp;
    int32 stack[geo::ITER_STACK];
};

namespace geo {
WEFT_FN bvh_query_t bvh_query_begin(uint64 id, int32 kind, const v3& a, const v3& b, float radius, int32 root,
                                    const char* what) {
    bvh_query_t q;
    q.bvh = user_bvh(id, what);
    q.kind = kind;
    q.radius = radius > 0.0f ? radius : 0.0f;
    for (int k = 0; k < 3; ++k) {
        q.a[k] = a.c[k];
        q.b[k] = b.c[k];
        q.inv[k] = 1.0f / b.c[k];
    }
    q.sp = 0;
    const int32 start = walk_start(q.bvh, root);
    if (start != int32(0x80000000)) q.stack[q.sp++] = start;
    return q;
}

// Whether box [lo, hi] passes the query (ray and capsule: entered before max_t).
WEFT_FN bool bvh_query_box(const bvh_query_t& q, const float* lo, const float* hi, float max_t) {
    switch (q.kind) {
        case BVH_AABB: return boxes_overlap(lo, hi, q.a, q.b);
        case BVH_SPHERE: return box_dist2(lo, hi, q.a) <= q.radius * q.radius;
        case BVH_CAPSULE: {
            float l[3], h[3];
            for (int k = 0; k < 3; ++k) {
                l[k] = lo[k] - q.radius;
                h[k] = hi[k] + q.radius;
            }
            const float t = ray_box(l, h, q.a, q.inv, max_t);
            return t <= max_t && t < inf_f();  // a miss is +inf, which max_dist = inf would accept
        }
        default: {
            const float t = ray_box(lo, hi, q.a, q.inv, max_t);
            return t <= max_t && t < inf_f();
        }
    }
}
}  // namespace geo

WEFT_FN bvh_query_t bvh_query_aabb(uint64 id, const geo::v3& low, const geo::v3& high, int32 root) {
    return geo::bvh_query_begin(id, geo::BVH_AABB, low, high, 0.0f, root, WEFT_BVH_ID_ERROR("bvh_query_aabb"));
}

WEFT_FN bvh_query_t bvh_query_ray(uint64 id, const geo::v3& start, const geo::v3& dir, int32 root) {
    return geo::bvh_query_begin(id, geo::BVH_RAY, start, dir, 0.0f, root, WEFT_BVH_ID_ERROR("bvh_query_ray"));
}

WEFT_FN bvh_query_t bvh_query_sphere(uint64 id, const geo::v3& centre, float32 radius, int32 root) {
    return geo::bvh_query_begin(id, geo::BVH_SPHERE, centre, centre, radius, root,
                                WEFT_BVH_ID_ERROR("bvh_query_sphere"));
}

WEFT_FN bvh_query_t bvh_query_capsule(uint64 id, const geo::v3& start, const geo::v3& dir, float32 radius,
                                      int32 root) {
    return geo::bvh_query_begin(id, geo::BVH_CAPSULE, start, dir, radius, root,
                                WEFT_BVH_ID_ERROR("bvh_query_capsule"));
}

WEFT_FN bool bvh_query_next(bvh_query_t& q, int32& index, float32 max_dist) {
    const geo::BvhData* b = q.bvh;
    if (b == nullptr) return false;
    while (q.sp > 0) {
        const int32 x = q.stack[--q.sp];
        if (x < 0) {
            const int32 prim = b->prim_ids[~x];
            float lo[3], hi[3];
            geo::leaf_box(b, ~x, lo, hi);
            if (!geo::bvh_query_box(q, lo, hi, max_dist)) continue;
            index = prim;
            return true;
        }
        const geo::BvhNode& nd = b->nodes[x];
        for (int c = 1; c >= 0; --c) {
            if (!geo::bvh_query_box(q, nd.lo[c], nd.hi[c], max_dist)) continue;
            if (q.sp >= geo::ITER_STACK) {
                report_error(4, "bvh_query_next: BVH deeper than the query stack");
                return false;
            }
            q.stack[q.sp++] = nd.child[c];
        }
    }
    return false;
}

WEFT_FN void bvh_query_step(const bvh_query_t& q, int32 index_in, float32 max_dist, bool& ok, bvh_query_t& q_next,
                            int32& index) {
    q_next = q;
    index = index_in;
    ok = bvh_query_next(q_next, index, max_dist);
}

// Thread-block queries (tile kernels): the same traversal state in every lane; tile_query_take hands out the next
// item (-1 when none is left), the tile renderers call it once per lane of the result tile.
WEFT_FN bvh_query_t tile_bvh_query_aabb(uint64 id, const geo::v3& low, const geo::v3& high) {
    return geo::bvh_query_begin(id, geo::BVH_AABB, low, high, 0.0f, -1, WEFT_BVH_ID_ERROR("tile_bvh_query_aabb"));
}

WEFT_FN bvh_query_t tile_bvh_query_ray(uint64 id, const geo::v3& start, const geo::v3& dir) {
    return geo::bvh_query_begin(id, geo::BVH_RAY, start, dir, 0.0f, -1, WEFT_BVH_ID_ERROR("tile_bvh_query_ray"));
}

WEFT_FN bool tile_query_valid(const bvh_query_t& q) { return q.bvh != nullptr && q.sp > 0; }

WEFT_FN int32 tile_query_take(bvh_query_t& q) {
    int32 index = -1;
    return bvh_query_next(q, index, geo::inf_f()) ? index : -1;
}

WEFT_FN int32 bvh_get_group_root(uint64 id, int32 group) {
    const geo::BvhData* b = geo::user_bvh(id, WEFT_BVH_ID_ERROR("bvh_get_group_root"));
    return b == nullptr ? -1 : geo::group_root(b, group);
}

}  // namespace weft
