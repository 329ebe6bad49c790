// weft native geometry: BVH traversal in kernels, shared by mesh and user-BVH queries. One-shot queries (closest
// point, ray) walk with a local stack and a callback per leaf; iterating queries keep their stack in the query value.
#pragma once
#include "registry.h"
#include "data.h"
#include "../vec.h"
#include "../error.h"
#if !WEFT_CUDA && defined(__SSE4_1__)
#include <immintrin.h>
#define WEFT_GEO_SIMD 1
#else
#define WEFT_GEO_SIMD 0
#endif

namespace weft {
namespace geo {

constexpr int32 WALK_STACK = 128;  // LBVH depth is at most 94 + 1 (group, Morton and id key bits)
constexpr int32 ITER_STACK = 96;

#if WEFT_CUDA
WEFT_FN float inf_f() { return __int_as_float(0x7f800000); }
#else
WEFT_FN float inf_f() { return __builtin_huge_valf(); }
#endif

WEFT_FN float box_dist2(const float* lo, const float* hi, const float* p) {
    float d2 = 0.0f;
    for (int k = 0; k < 3; ++k) {
        const float d = p[k] < lo[k] ? lo[k] - p[k] : (p[k] > hi[k] ? p[k] - hi[k] : 0.0f);
        d2 += d * d;
    }
    return d2;
}

WEFT_FN float box_max_dist2(const float* lo, const float* hi, const float* p) {
    float d2 = 0.0f;
    for (int k = 0; k < 3; ++k) {
        const float a = fabsf(p[k] - lo[k]), b = fabsf(p[k] - hi[k]);
        const float d = a > b ? a : b;
        d2 += d * d;
    }
    return d2;
}

WEFT_FN bool boxes_overlap(const float* alo, const float* ahi, const float* blo, const float* bhi) {
    return alo[0] <= bhi[0] && alo[1] <= bhi[1] && alo[2] <= bhi[2] && blo[0] <= ahi[0] && blo[1] <= ahi[1] &&
           blo[2] <= ahi[2];
}

// Entry distance of a ray into a box (slab test); +inf when it misses or enters beyond tmax.
WEFT_FN float ray_box(const float* lo, const float* hi, const float* o, const float* inv, float tmax) {
    float t0 = 0.0f, t1 = tmax;
    for (int k = 0; k < 3; ++k) {
        float a = (lo[k] - o[k]) * inv[k];
        float b = (hi[k] - o[k]) * inv[k];
        if (a != a) a = -inf_f();  // 0 * inf: the ray lies in the slab plane
        if (b != b) b = inf_f();
        const float near = a < b ? a : b;
        const float far = a < b ? b : a;
        t0 = near > t0 ? near : t0;
        t1 = far < t1 ? far : t1;
    }
    return t0 <= t1 ? t0 : inf_f();
}

// Public root index -> walk start: internal node i (>= 0) or ~sorted leaf position; INT32_MIN for an empty tree.
WEFT_FN int32 walk_start(const BvhData* b, int32 root) {
    if (b == nullptr || !b->has_root) return int32(0x80000000);
    if (root < 0) return b->root;
    if (root < b->num_prims - 1) return root;
    if (root < 2 * b->num_prims - 1) return ~(root - (b->num_prims - 1));
    return int32(0x80000000);
}

constexpr int32 WIDE_EMPTY = int32(0x80000000);
constexpr int32 WIDE_STACK = 192;  // <= 3 pending siblings per level of a tree at most ~48 wide levels deep

// Box keys of the walks: key(lo, hi, limit) is a child's priority (lower is expanded first; >= limit: skipped). On
// x86 hosts, x4 gives the keys of a wide node's four children at once from their boxes as four lanes per axis.
struct PointKey {  // squared distance from p to the box
    float p[3];
    WEFT_FN float operator()(const float* lo, const float* hi, float) const { return box_dist2(lo, hi, p); }
#if WEFT_GEO_SIMD
    __m128 x4(const __m128* lo, const __m128* hi, float) const {
        __m128 d2 = _mm_setzero_ps();
        for (int k = 0; k < 3; ++k) {
            const __m128 pk = _mm_set1_ps(p[k]);
            const __m128 d = _mm_max_ps(_mm_max_ps(_mm_sub_ps(lo[k], pk), _mm_sub_ps(pk, hi[k])), _mm_setzero_ps());
            d2 = _mm_add_ps(d2, _mm_mul_ps(d, d));
        }
        return d2;
    }
#endif
};

struct FarKey {  // minus the largest squared distance from p to a point of the box (the farthest boxes first)
    float p[3];
    WEFT_FN float operator()(const float* lo, const float* hi, float) const { return -box_max_dist2(lo, hi, p); }
#if WEFT_GEO_SIMD
    __m128 x4(const __m128* lo, const __m128* hi, float) const {
        const __m128 sign = _mm_set1_ps(-0.0f);
        __m128 d2 = _mm_setzero_ps();
        for (int k = 0; k < 3; ++k) {
            const __m128 pk = _mm_set1_ps(p[k]);
            const __m128 a = _mm_andnot_ps(sign, _mm_sub_ps(pk, lo[k])), b = _mm_andnot_ps(sign, _mm_sub_ps(pk, hi[k]));
            const __m128 d = _mm_max_ps(a, b);
            d2 = _mm_add_ps(d2, _mm_mul_ps(d, d));
        }
        return _mm_xor_ps(d2, sign);
    }
#endif
};

struct RayKey {  // entry distance of the ray into the box, +inf on a miss or beyond the limit (ray_box)
    float o[3];
    float inv[3];
    WEFT_FN float operator()(const float* lo, const float* hi, float limit) const {
        return ray_box(lo, hi, o, inv, limit);
    }
#if WEFT_GEO_SIMD
    __m128 x4(const __m128* lo, const __m128* hi, float limit) const {
        const __m128 inf = _mm_set1_ps(inf_f());
        __m128 t0 = _mm_setzero_ps(), t1 = _mm_set1_ps(limit);
        for (int k = 0; k < 3; ++k) {
            const __m128 ok = _mm_set1_ps(o[k]), ik = _mm_set1_ps(inv[k]);
            __m128 a = _mm_mul_ps(_mm_sub_ps(lo[k], ok), ik);
            __m128 b = _mm_mul_ps(_mm_sub_ps(hi[k], ok), ik);
            a = _mm_blendv_ps(a, _mm_xor_ps(inf, _mm_set1_ps(-0.0f)), _mm_cmpunord_ps(a, a));  // 0 * inf: in the slab
            b = _mm_blendv_ps(b, inf, _mm_cmpunord_ps(b, b));
            t0 = _mm_max_ps(t0, _mm_min_ps(a, b));
            t1 = _mm_min_ps(t1, _mm_max_ps(a, b));
        }
        return _mm_blendv_ps(inf, t0, _mm_cmple_ps(t0, t1));
    }
#endif
};

// walk() over the 4-wide nodes: children sorted by key (nearest expanded first), leaves handled as they are reached.
template <typename Key, typename Limit, typename Leaf>
WEFT_FN void walk_wide(const BvhData* b, const Key& key, Limit limit, Leaf leaf) {
    int32 stack[WIDE_STACK];
    float keys[WIDE_STACK];
    int32 sp = 0;
    stack[sp] = 0;
    keys[sp++] = -inf_f();
    while (sp > 0) {
        --sp;
        if (!(keys[sp] < limit())) continue;
        const WideNode& nd = b->wide[stack[sp]];
        float k[4];
        int32 c[4];
        int n = 0;
#if WEFT_GEO_SIMD
        float kx[4];
        {
            __m128 lo[3], hi[3];
            // the eight bytes of an axis (qlo then qhi, one per child) widened to two float lanes of four
            for (int a = 0; a < 3; ++a) {
                int32 ql, qh;
                __builtin_memcpy(&ql, nd.qlo[a], 4);
                __builtin_memcpy(&qh, nd.qhi[a], 4);
                const __m128 o = _mm_set1_ps(nd.origin[a]), s = _mm_set1_ps(nd.scale[a]);
                lo[a] = _mm_add_ps(o, _mm_mul_ps(_mm_cvtepi32_ps(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(ql))), s));
                hi[a] = _mm_add_ps(o, _mm_mul_ps(_mm_cvtepi32_ps(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(qh))), s));
            }
            _mm_storeu_ps(kx, key.x4(lo, hi, limit()));
        }
#endif
#if WEFT_GEO_SIMD
        // start the loads of every child that will be visited (leaf records and wide nodes are cache misses on
        // large meshes): the leaves below are tested, and the nodes pushed, while those loads are in flight
        const float lim = limit();
        for (int i = 0; i < 4; ++i) {
            const int32 ch = nd.child[i];
            if (ch == WIDE_EMPTY || !(kx[i] < lim)) continue;
            if (ch >= 0) {
                __builtin_prefetch(b->wide + ch);
            } else if (b->leaf_data != nullptr) {
                const float* rec = b->leaf_data + int64(b->leaf_stride) * int64(~ch);
                __builtin_prefetch(rec);
                __builtin_prefetch(rec + b->leaf_stride - 1);
            }
        }
#endif
        for (int i = 0; i < 4; ++i) {
            const int32 ch = nd.child[i];
            if (ch == WIDE_EMPTY) break;
#if WEFT_GEO_SIMD
            const float ki = kx[i];
#else
            float lo[3], hi[3];
            for (int a = 0; a < 3; ++a) {
                lo[a] = nd.origin[a] + float(nd.qlo[a][i]) * nd.scale[a];
                hi[a] = nd.origin[a] + float(nd.qhi[a][i]) * nd.scale[a];
            }
            const float ki = key(lo, hi, limit());
#endif
            if (!(ki < limit())) continue;
            if (ch < 0) {
                leaf(~ch, ki);
                continue;
            }
            int j = n++;  // keep (k, c) in descending key order: the nearest child is pushed last
            while (j > 0 && k[j - 1] < ki) {
                k[j] = k[j - 1];
                c[j] = c[j - 1];
                --j;
            }
            k[j] = ki;
            c[j] = ch;
        }
        for (int i = 0; i < n && sp < WIDE_STACK; ++i) {
            stack[sp] = c[i];
            keys[sp++] = k[i];
        }
    }
}

// Depth-first walk visiting nearer children first. key(lo, hi, limit) gives a child's priority (lower first); a child is
// skipped when its key is not below limit() at the time it is reached; leaf(s, key) handles the primitive at sorted
// position s (its id is b->prim_ids[s]).
template <typename Key, typename Limit, typename Leaf>
WEFT_FN void walk(const BvhData* b, int32 root, const Key& key, Limit limit, Leaf leaf) {
    const int32 start = walk_start(b, root);
    if (start == int32(0x80000000)) return;
    if (start < 0) {
        leaf(~start, 0.0f);
        return;
    }
    if (root < 0 && b->wide != nullptr) {
        walk_wide(b, key, limit, leaf);
        return;
    }
    int32 stack[WALK_STACK];
    float keys[WALK_STACK];
    int32 sp = 0;
    stack[sp] = start;
    keys[sp++] = -inf_f();  // the root is always expanded
    while (sp > 0) {
        --sp;
        if (!(keys[sp] < limit())) continue;
        const BvhNode& nd = b->nodes[stack[sp]];

        const float k0 = key(nd.lo[0], nd.hi[0], limit());
        const float k1 = key(nd.lo[1], nd.hi[1], limit());
        const int first = k1 < k0 ? 1 : 0;
        const float kf = first ? k1 : k0, ks = first ? k0 : k1;
        const int32 cf = nd.child[first], cs = nd.child[1 - first];
        // push the farther child first so the nearer one is expanded next; leaves are handled at once
        if (cf < 0) {
            if (kf < limit()) leaf(~cf, kf);
        }
        if (cs < 0) {
            if (ks < limit()) leaf(~cs, ks);
        } else if (ks < limit() && sp < WALK_STACK) {
            stack[sp] = cs;
            keys[sp++] = ks;
        }
        if (cf >= 0 && kf < limit() && sp < WALK_STACK) {
            stack[sp] = cf;
            keys[sp++] = kf;
        }
    }
}

WEFT_FN vec_t<3, float32> load3(const float* base, int32 i) {
    const float* p = base + 3 * int64(i);
    return vec_t<3, float32>(p[0], p[1], p[2]);
}

}  // namespace geo
}  // namespace weft
