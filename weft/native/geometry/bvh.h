// weft native geometry: BVH traversal in kernels, shared by mesh and user-BVH queries. One-shot queries (closest
// point, ray) walk with a local stack and a callback per leaf; iterating queries keep their stack in the query value.
#pragma once
#include "registry.h"
#include "data.h"
#include "../vec.h"
#include "../error.h"
#if !WEFT_CUDA && defined(__AVX2__)
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
constexpr int32 WIDE_STACK = 672;  // <= 7 pending siblings per wide level, at most one wide level per binary level (95)

// Box keys of the walks: key(lo, hi, limit) is a child's priority (lower is expanded first; >= limit: skipped). On
// x86 hosts with AVX2, x8 gives the keys of a wide node's eight children at once from their boxes as lanes per axis.
struct PointKey {  // squared distance from p to the box
    float p[3];
    WEFT_FN float operator()(const float* lo, const float* hi, float) const { return box_dist2(lo, hi, p); }
#if WEFT_GEO_SIMD
    __m256 x8(const __m256* lo, const __m256* hi, float) const {
        __m256 d2 = _mm256_setzero_ps();
        for (int k = 0; k < 3; ++k) {
            const __m256 pk = _mm256_set1_ps(p[k]);
            const __m256 d =
                _mm256_max_ps(_mm256_max_ps(_mm256_sub_ps(lo[k], pk), _mm256_sub_ps(pk, hi[k])), _mm256_setzero_ps());
            d2 = _mm256_add_ps(d2, _mm256_mul_ps(d, d));
        }
        return d2;
    }
#endif
};

struct FarKey {  // minus the largest squared distance from p to a point of the box (the farthest boxes first)
    float p[3];
    WEFT_FN float operator()(const float* lo, const float* hi, float) const { return -box_max_dist2(lo, hi, p); }
#if WEFT_GEO_SIMD
    __m256 x8(const __m256* lo, const __m256* hi, float) const {
        const __m256 sign = _mm256_set1_ps(-0.0f);
        __m256 d2 = _mm256_setzero_ps();
        for (int k = 0; k < 3; ++k) {
            const __m256 pk = _mm256_set1_ps(p[k]);
            const __m256 a = _mm256_andnot_ps(sign, _mm256_sub_ps(pk, lo[k]));
            const __m256 b = _mm256_andnot_ps(sign, _mm256_sub_ps(pk, hi[k]));
            const __m256 d = _mm256_max_ps(a, b);
            d2 = _mm256_add_ps(d2, _mm256_mul_ps(d, d));
        }
        return _mm256_xor_ps(d2, sign);
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
    __m256 x8(const __m256* lo, const __m256* hi, float limit) const {
        const __m256 inf = _mm256_set1_ps(inf_f());
        __m256 t0 = _mm256_setzero_ps(), t1 = _mm256_set1_ps(limit);
        for (int k = 0; k < 3; ++k) {
            const __m256 ok = _mm256_set1_ps(o[k]), ik = _mm256_set1_ps(inv[k]);
            __m256 a = _mm256_mul_ps(_mm256_sub_ps(lo[k], ok), ik);
            __m256 b = _mm256_mul_ps(_mm256_sub_ps(hi[k], ok), ik);
            // 0 * inf: the ray lies in the slab plane
            a = _mm256_blendv_ps(a, _mm256_xor_ps(inf, _mm256_set1_ps(-0.0f)), _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
            b = _mm256_blendv_ps(b, inf, _mm256_cmp_ps(b, b, _CMP_UNORD_Q));
            t0 = _mm256_max_ps(t0, _mm256_min_ps(a, b));
            t1 = _mm256_min_ps(t1, _mm256_max_ps(a, b));
        }
        return _mm256_blendv_ps(inf, t0, _mm256_cmp_ps(t0, t1, _CMP_LE_OQ));
    }
#endif
};

WEFT_FN int low_bit(uint32 m) {  // index of the lowest set bit of a non-zero mask
#if WEFT_CUDA
    return __ffs(int(m)) - 1;
#else
    return __builtin_ctz(m);
#endif
}

// walk() over the 8-wide nodes: children sorted by key (nearest expanded first), leaves handled as they are reached.
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
        float kx[WIDE];
        uint32 live;  // bit i: slot i is used and its key is below the limit
#if WEFT_GEO_SIMD
        {
            __m256 lo[3], hi[3];
            // the bytes of an axis (qlo, qhi: one per child) widened to eight float lanes
            for (int a = 0; a < 3; ++a) {
                const __m256 o = _mm256_set1_ps(nd.origin[a]), s = _mm256_set1_ps(nd.scale[a]);
                const __m256i ql = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(nd.qlo[a])));
                const __m256i qh = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(nd.qhi[a])));
                lo[a] = _mm256_add_ps(o, _mm256_mul_ps(_mm256_cvtepi32_ps(ql), s));
                hi[a] = _mm256_add_ps(o, _mm256_mul_ps(_mm256_cvtepi32_ps(qh), s));
            }
            const float lim = limit();
            const __m256 k8 = key.x8(lo, hi, lim);
            _mm256_storeu_ps(kx, k8);
            live = uint32(_mm256_movemask_ps(_mm256_cmp_ps(k8, _mm256_set1_ps(lim), _CMP_LT_OQ))) &
                   ((1u << nd.count) - 1u);
        }
        // start the loads of every child that will be visited (leaf records and wide nodes are cache misses on
        // large meshes): the leaves below are tested, and the nodes pushed, while those loads are in flight
        for (uint32 m = live; m != 0; m &= m - 1) {
            const int32 ch = nd.child[low_bit(m)];
            if (ch >= 0) {
                __builtin_prefetch(b->wide + ch);
                __builtin_prefetch(reinterpret_cast<const char*>(b->wide + ch) + 64);
            } else if (b->leaf_data != nullptr) {
                const float* rec = b->leaf_data + int64(b->leaf_stride) * int64(~ch);
                __builtin_prefetch(rec);
                __builtin_prefetch(rec + b->leaf_stride - 1);
            }
        }
#else
        live = 0;
        for (int i = 0; i < nd.count; ++i) {
            float lo[3], hi[3];
            for (int a = 0; a < 3; ++a) {
                lo[a] = nd.origin[a] + float(nd.qlo[a][i]) * nd.scale[a];
                hi[a] = nd.origin[a] + float(nd.qhi[a][i]) * nd.scale[a];
            }
            kx[i] = key(lo, hi, limit());
            if (kx[i] < limit()) live |= 1u << i;
        }
#endif
        float k[WIDE];
        int32 c[WIDE];
        int n = 0;
        for (uint32 m = live; m != 0; m &= m - 1) {
            const int i = low_bit(m);
            const int32 ch = nd.child[i];
            const float ki = kx[i];
            if (ch < 0) {
                if (ki < limit()) leaf(~ch, ki);  // an earlier leaf may have lowered the limit
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
