// weft geometry library: the host side of weft.geometry. Builds and owns hash grids, BVHs and meshes, and the
// registry that kernel modules resolve ids through. Compiled once per cache by weft's toolchain (with OpenMP) and
// loaded by weft/geometry/native.py; every entry point is extern "C" and returns a status (0 = ok).
#include "geometry/registry.h"
#include "geometry/data.h"
#include "geometry/volume_data.h"

#include <algorithm>
#include <cmath>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include <omp.h>
#if defined(__AVX2__)
#include <immintrin.h>
#endif
#if defined(__GLIBCXX__)
#include <parallel/algorithm>
#endif

#define GEO_API extern "C" __attribute__((visibility("default")))

namespace weft {
namespace geo {

static Registry g_registry;
static std::mutex g_lock;
static std::vector<uint32> g_free;      // free slot indices
static uint32 g_next_slot = 0;


static Slot* slot_at(uint32 index) {
    const uint32 c = index >> CHUNK_BITS;
    if (g_registry.chunks[c] == nullptr) {
        Slot* chunk = static_cast<Slot*>(std::calloc(CHUNK_SIZE, sizeof(Slot)));
        if (chunk == nullptr) return nullptr;
        g_registry.chunks[c] = chunk;
    }
    return &g_registry.chunks[c][index & (CHUNK_SIZE - 1)];
}

// generation of each slot lives in a side table so a freed slot remembers it
static std::vector<uint32> g_slot_generation;

static uint64 add_object(void* obj, uint32 kind) {
    std::lock_guard<std::mutex> guard(g_lock);
    uint32 index;
    if (!g_free.empty()) {
        index = g_free.back();
        g_free.pop_back();
    } else {
        if (g_next_slot >= MAX_CHUNKS * CHUNK_SIZE) return 0;
        index = g_next_slot++;
        g_slot_generation.push_back(0);
    }
    Slot* s = slot_at(index);
    if (s == nullptr) return 0;
    const uint32 gen = ++g_slot_generation[index];
    s->obj = obj;
    __atomic_store_n(&s->tag, slot_tag(gen, kind), __ATOMIC_RELEASE);
    return (uint64(gen) << 32) | uint64(index + 1);
}

static void* get_object(uint64 id, uint32 kind) { return lookup(&g_registry, id, kind); }

static void remove_object(uint64 id) {
    std::lock_guard<std::mutex> guard(g_lock);
    const uint32 low = uint32(id & 0xffffffffull);
    if (low == 0) return;
    Slot* s = slot_at(low - 1);
    if (s == nullptr || s->tag == 0 || uint32(s->tag >> 8) != uint32(id >> 32)) return;
    __atomic_store_n(&s->tag, uint64(0), __ATOMIC_RELEASE);
    s->obj = nullptr;
    g_free.push_back(low - 1);
}

// Below this many items a loop runs on one thread: a parallel region costs more than it saves, and far more on an
// oversubscribed machine (threads wait at the barrier for cores).
constexpr int32 PARALLEL_MIN = 32768;

template <typename T>
static void parallel_sort(T* first, T* last) {
#if defined(__GLIBCXX__)
    if (last - first > int64(4 * PARALLEL_MIN)) {
        __gnu_parallel::sort(first, last);
        return;
    }
#endif
    std::sort(first, last);
}

template <typename T>
static T* alloc(int64 n) {
    if (n <= 0) return nullptr;
    return static_cast<T*>(std::malloc(sizeof(T) * size_t(n)));
}

// Storage aligned to pairs of cache lines (binary nodes: one 64-byte node per line; wide nodes: two lines, fetched
// together by the adjacent-line prefetcher); freed with std::free.
template <typename T>
static T* alloc_lines(int64 n) {
    if (n <= 0) return nullptr;
    const size_t bytes = (sizeof(T) * size_t(n) + 127) & ~size_t(127);
    return static_cast<T*>(std::aligned_alloc(128, bytes));
}

// A temporary buffer of a build (sort keys, radix tree topology): uninitialized, unlike std::vector (a scratch pool
// kept between builds was tried twice and measured no faster: glibc already hands freed pages back to the next build).
template <typename T>
class Scratch {
  public:
    explicit Scratch(int64 n) : p_(new (std::nothrow) T[size_t(n > 0 ? n : 1)]) {}
    bool ok() const { return p_ != nullptr; }
    T* data() const { return p_.get(); }
    T& operator[](int64 i) const { return p_[i]; }

  private:
    std::unique_ptr<T[]> p_;
};

// ------------------------------------------------------------------------------------------------ hash grid
static void hash_grid_free_storage(HashGridData* g) {
    std::free(g->sorted_groups);
    g->sorted_groups = nullptr;
    std::free(g->sorted_ids);
    std::free(g->cell_starts);
    std::free(g->cell_ends);
    std::free(g->occupied);
    g->sorted_ids = g->cell_starts = g->cell_ends = g->occupied = nullptr;
    g->occupied_capacity = g->occupied_count = g->occupied_valid = 0;
}

// Few points in many cells (a particle grid of 128^3 cells holds a few thousand particles): sort (cell, id) keys
// and touch only the cells of this build and of the previous one, instead of a counting sort over every cell. The
// order is the counting sort's (by cell, then by id), so results do not depend on the path taken.
static int hash_grid_build_sparse(HashGridData* g, const std::vector<int32>& hashes, const int32* groups, int32 n,
                                  int32 cells) {
    if (n > g->occupied_capacity) {
        std::free(g->occupied);
        g->occupied = alloc<int32>(n);
        g->occupied_capacity = g->occupied ? n : 0;
        g->occupied_valid = 0;
        if (g->occupied == nullptr) return 2;
    }
    if (g->occupied_valid) {
        for (int32 k = 0; k < g->occupied_count; ++k) {
            g->cell_starts[g->occupied[k]] = 0;
            g->cell_ends[g->occupied[k]] = 0;
        }
    } else {
        std::fill(g->cell_starts, g->cell_starts + cells, 0);
        std::fill(g->cell_ends, g->cell_ends + cells, 0);
    }
    std::vector<int64> keys(static_cast<size_t>(n));
    for (int32 i = 0; i < n; ++i) keys[i] = (int64(hashes[i]) << 32) | int64(uint32(i));
    std::sort(keys.begin(), keys.end());
    int32 count = 0, prev = -1;
    for (int32 j = 0; j < n; ++j) {
        const int32 h = int32(keys[j] >> 32);
        const int32 i = int32(keys[j] & 0xffffffff);
        g->sorted_ids[j] = i;
        if (groups != nullptr) g->sorted_groups[j] = groups[i];
        if (h != prev) {
            g->cell_starts[h] = j;
            g->occupied[count++] = h;
            prev = h;
        }
        g->cell_ends[h] = j + 1;
    }
    g->occupied_count = count;
    g->occupied_valid = 1;
    return 0;
}

static int hash_grid_reserve(HashGridData* g, int32 n) {
    if (n <= g->capacity) return 0;
    std::free(g->sorted_ids);
    g->sorted_ids = alloc<int32>(n);
    if (g->sorted_ids == nullptr) {
        g->capacity = 0;
        return 2;
    }
    g->capacity = n;
    return 0;
}

// Stable counting sort of the points by hashed cell, in parallel: each thread counts its contiguous chunk, a prefix
// sum over (cell, chunk) gives every chunk its output range, and each thread scatters its chunk in order. The result
// is the same for any number of threads (ids are ordered by id within a cell).
static int hash_grid_build(HashGridData* g, const float* points, const int32* hashed, const int32* groups, int32 n,
                           double radius, int precision) {
    if (int rc = hash_grid_reserve(g, n)) return rc;
    if (groups != nullptr && n > g->group_capacity) {
        std::free(g->sorted_groups);
        g->sorted_groups = alloc<int32>(n);
        g->group_capacity = g->sorted_groups ? n : 0;
        if (g->sorted_groups == nullptr) return 2;
    }
    const int32 cells = g->dim[0] * g->dim[1] * g->dim[2];
    g->cell_width = float(radius);
    g->inv_cell_width = float(1.0 / radius);
    g->inv_cell_width_d = 1.0 / radius;
    g->precision = precision;
    g->num_points = n;
    std::vector<int32> hashes(static_cast<size_t>(n > 0 ? n : 1));
    if (hashed != nullptr) {
        for (int32 i = 0; i < n; ++i) hashes[i] = hashed[i];  // cells computed by the caller (float64 grids)
    } else {
#pragma omp parallel for schedule(static) if (n > PARALLEL_MIN)
        for (int32 i = 0; i < n; ++i) {
            const float* p = point3(points, i);
            hashes[i] = hashed_cell(g, cell_coord(p[0], g->inv_cell_width), cell_coord(p[1], g->inv_cell_width),
                                    cell_coord(p[2], g->inv_cell_width));
        }
    }
    if (int64(n) * 16 < int64(cells)) {
        if (int rc = hash_grid_build_sparse(g, hashes, groups, n, cells)) return rc;
        if (groups == nullptr) {
            std::free(g->sorted_groups);
            g->sorted_groups = nullptr;
            g->group_capacity = 0;
        }
        return 0;
    }
    g->occupied_valid = 0;  // the counting sort below writes every cell
    const int chunks = std::max(1, std::min(omp_get_max_threads(), n / PARALLEL_MIN + 1));
    std::vector<int32> counts(size_t(chunks) * size_t(cells), 0);
#pragma omp parallel for schedule(static, 1) num_threads(chunks)
    for (int c = 0; c < chunks; ++c) {
        const int32 lo = int32(int64(n) * c / chunks), hi = int32(int64(n) * (c + 1) / chunks);
        int32* cnt = counts.data() + size_t(c) * cells;
        for (int32 i = lo; i < hi; ++i) cnt[hashes[i]]++;
    }
    int32 running = 0;
    for (int32 h = 0; h < cells; ++h) {
        g->cell_starts[h] = running;
        for (int c = 0; c < chunks; ++c) {
            int32& cnt = counts[size_t(c) * cells + h];
            const int32 k = cnt;
            cnt = running;
            running += k;
        }
        g->cell_ends[h] = running;
    }
#pragma omp parallel for schedule(static, 1) num_threads(chunks)
    for (int c = 0; c < chunks; ++c) {
        const int32 lo = int32(int64(n) * c / chunks), hi = int32(int64(n) * (c + 1) / chunks);
        int32* pos = counts.data() + size_t(c) * cells;
        for (int32 i = lo; i < hi; ++i) {
            const int32 at = pos[hashes[i]]++;
            g->sorted_ids[at] = i;
            if (groups != nullptr) g->sorted_groups[at] = groups[i];
        }
    }
    if (groups == nullptr) {
        std::free(g->sorted_groups);
        g->sorted_groups = nullptr;
        g->group_capacity = 0;
    }
    return 0;
}


// ------------------------------------------------------------------------------------------------ BVH (LBVH)
// Linear BVH (Karras 2012): primitives sorted by (group, Morton code of the box centre, id), a radix tree over the
// sorted keys built one internal node per parallel iteration, boxes filled bottom-up with atomic arrival counters.
// Every step is order-independent, so the tree is the same for any thread count.
struct SortKey {
    uint32 group;
    uint32 morton;
    uint32 id;
    bool operator<(const SortKey& o) const {
        if (group != o.group) return group < o.group;
        if (morton != o.morton) return morton < o.morton;
        return id < o.id;
    }
};

static uint32 expand_bits(uint32 v) {
    v = (v * 0x00010001u) & 0xFF0000FFu;
    v = (v * 0x00000101u) & 0x0F00F00Fu;
    v = (v * 0x00000011u) & 0xC30C30C3u;
    v = (v * 0x00000005u) & 0x49249249u;
    return v;
}

static uint32 morton3(float x, float y, float z) {
    auto q = [](float t) {
        float c = t * 1024.0f;
        c = c < 0.0f ? 0.0f : (c > 1023.0f ? 1023.0f : c);
        return uint32(c);
    };
    return (expand_bits(q(x)) << 2) | (expand_bits(q(y)) << 1) | expand_bits(q(z));
}

// Stable LSD radix sort of the keys by Morton code (three passes of 10 bits), in parallel over contiguous chunks: a
// chunk's histogram gives it its output ranges, so the order is the same for any thread count. The keys come in id
// order and every pass is stable, so the result equals sorting by (morton, id) (the order of an ungrouped tree).
static const SortKey* radix_sort_morton(SortKey* keys, SortKey* tmp, int32 n) {
    const int chunks = std::max(1, std::min(omp_get_max_threads(), n / PARALLEL_MIN + 1));
    constexpr int BITS = 10, BUCKETS = 1 << BITS;
    std::vector<int32> counts(size_t(chunks) * BUCKETS);
    SortKey* src = keys;
    SortKey* dst = tmp;
    for (int pass = 0; pass < 3; ++pass) {
        const int shift = BITS * pass;
        std::fill(counts.begin(), counts.end(), 0);
#pragma omp parallel for schedule(static, 1) num_threads(chunks)
        for (int c = 0; c < chunks; ++c) {
            const int32 lo = int32(int64(n) * c / chunks), hi = int32(int64(n) * (c + 1) / chunks);
            int32* cnt = counts.data() + size_t(c) * BUCKETS;
            for (int32 i = lo; i < hi; ++i) cnt[(src[i].morton >> shift) & (BUCKETS - 1)]++;
        }
        int32 running = 0;
        for (int d = 0; d < BUCKETS; ++d)
            for (int c = 0; c < chunks; ++c) {
                int32& cnt = counts[size_t(c) * BUCKETS + d];
                const int32 k = cnt;
                cnt = running;
                running += k;
            }
#pragma omp parallel for schedule(static, 1) num_threads(chunks)
        for (int c = 0; c < chunks; ++c) {
            const int32 lo = int32(int64(n) * c / chunks), hi = int32(int64(n) * (c + 1) / chunks);
            int32* pos = counts.data() + size_t(c) * BUCKETS;
            for (int32 i = lo; i < hi; ++i) dst[pos[(src[i].morton >> shift) & (BUCKETS - 1)]++] = src[i];
        }
        std::swap(src, dst);
    }
    return src;  // the buffer holding the sorted keys
}

static inline int clz32(uint32 x) { return x == 0 ? 32 : __builtin_clz(x); }

// length of the common prefix of sorted keys i and j (-1 when j is out of range)
static inline int delta(const SortKey* k, int32 n, int32 i, int32 j) {
    if (j < 0 || j >= n) return -1;
    const SortKey& a = k[i];
    const SortKey& b = k[j];
    if (a.group != b.group) return clz32(a.group ^ b.group);
    if (a.morton != b.morton) return 32 + clz32(a.morton ^ b.morton);
    return 64 + clz32(a.id ^ b.id);
}

static void bvh_free(BvhData* b) {
    std::free(b->nodes);
    std::free(b->prim_ids);
    std::free(b->group_roots);
    std::free(b->group_ids);
    std::free(b->wide);
    std::free(b->wide_spans);
    std::free(b->wide_box);
    b->group_ids = nullptr;
    b->wide = nullptr;
    b->wide_spans = nullptr;
    b->num_wide_spans = 0;
    b->wide_box = nullptr;
    b->nodes = nullptr;
    b->prim_ids = b->group_roots = nullptr;
}

static inline void box_union(const float* alo, const float* ahi, const float* blo, const float* bhi, float* lo,
                             float* hi) {
    for (int k = 0; k < 3; ++k) {
        lo[k] = std::min(alo[k], blo[k]);
        hi[k] = std::max(ahi[k], bhi[k]);
    }
}

// Subtrees for parallel passes over a depth-first tree: every internal node x with at most `cut` internal nodes
// below it (itself included) whose parent has more becomes a task (x, its internal node count); the nodes above them
// go to `top`, in depth-first order. In depth-first order a task's nodes are the contiguous range [x, x + count).
// The split depends only on the tree and `cut`, never on the thread count.
struct SubtreeTask {
    int32 root;
    int32 count;
};

// Subtrees of about this many internal nodes are the unit of work of the parallel build passes.
static int32 subtree_cut(int32 m) { return std::max<int32>(2048, m / 256); }

// Internal nodes below each child of a node of `size` internal nodes (itself included) in a depth-first tree: the
// first child's subtree ends where the second child starts.
static inline void child_sizes(const BvhNode& nd, int32 size, int32* out) {
    const int32 l = nd.child[0], r = nd.child[1];
    out[0] = l < 0 ? 0 : (r >= 0 ? r - l : size - 1);
    out[1] = r < 0 ? 0 : size - 1 - out[0];
}

static void bvh_split(const BvhData* b, int32 cut, std::vector<SubtreeTask>& tasks, std::vector<int32>& top) {
    const int32 m = b->num_prims - 1;
    if (m < 1) return;
    std::vector<SubtreeTask> stack;
    stack.push_back({0, m});
    while (!stack.empty()) {
        const SubtreeTask t = stack.back();
        stack.pop_back();
        if (t.count <= cut) {
            tasks.push_back(t);
            continue;
        }
        top.push_back(t.root);
        const BvhNode& nd = b->nodes[t.root];
        int32 sizes[2];
        child_sizes(nd, t.count, sizes);
        if (nd.child[1] >= 0) stack.push_back({nd.child[1], sizes[1]});
        if (nd.child[0] >= 0) stack.push_back({nd.child[0], sizes[0]});
    }
}

// Node i's two child boxes: a leaf's box, or the union of an internal child's own two boxes.
static inline void fill_node(BvhData* b, int32 i) {
    BvhNode& node = b->nodes[i];
    for (int c = 0; c < 2; ++c) {
        const int32 ch = node.child[c];
        if (ch < 0) {
            leaf_box(b, ~ch, node.lo[c], node.hi[c]);
        } else {
            const BvhNode& kid = b->nodes[ch];
            box_union(kid.lo[0], kid.hi[0], kid.lo[1], kid.hi[1], node.lo[c], node.hi[c]);
        }
    }
}

// Fill every node's child boxes from the leaf boxes (leaf_box), bottom-up: depth-first order puts children after
// their parent, so each subtree is one backward sweep over its range (subtrees in parallel), then the nodes above
// them, last to first.
static void bvh_fill_boxes(BvhData* b) {
    const int32 n = b->num_prims;
    if (n <= 0) return;
    if (n == 1) {
        leaf_box(b, 0, b->root_lo, b->root_hi);
        return;
    }
    const int32 m = n - 1;
    std::vector<SubtreeTask> tasks;
    std::vector<int32> top;
    bvh_split(b, subtree_cut(m), tasks, top);
    const int32 count = int32(tasks.size());
#pragma omp parallel for schedule(dynamic, 1) if (m > PARALLEL_MIN)
    for (int32 t = 0; t < count; ++t)
        for (int32 i = tasks[t].root + tasks[t].count - 1; i >= tasks[t].root; --i) fill_node(b, i);
    for (size_t t = top.size(); t-- > 0;) fill_node(b, top[t]);
    const BvhNode& root = b->nodes[0];
    box_union(root.lo[0], root.hi[0], root.lo[1], root.hi[1], b->root_lo, b->root_hi);
}

// Roots of the groups of a grouped tree: public root indices (internal node i -> i, leaf at sorted position s ->
// num_prims - 1 + s). The primitives of a group are contiguous in sorted order and, their keys sharing the group
// prefix, form one subtree; its root is internal node s or e of the range [s, e].
static int bvh_group_roots(BvhData* b, const int32* groups, const int32* kids) {
    const int32 n = b->num_prims;
    int32 distinct = 0;  // groups are contiguous and ascending in sorted order
    for (int32 s = 0; s < n; ++s) distinct += (s == 0 || groups[b->prim_ids[s]] != groups[b->prim_ids[s - 1]]);
    b->num_groups = distinct;
    if (distinct == 0) return 0;
    b->group_ids = alloc<int32>(distinct);
    b->group_roots = alloc<int32>(distinct);
    if (b->group_ids == nullptr || b->group_roots == nullptr) return 2;
    int32 slot = 0;
    int32 s = 0;
    while (s < n) {
        const int32 g = groups[b->prim_ids[s]];
        int32 e = s;
        while (e + 1 < n && groups[b->prim_ids[e + 1]] == g) ++e;
        int32 root;
        if (s == e) {
            root = n - 1 + s;
        } else {
            root = -1;
            for (int32 cand : {s, e}) {
                if (cand >= n - 1) continue;
                // the range of internal node cand: walk to its leftmost and rightmost leaves
                int32 x = cand, lo, hi;
                while (true) { const int32 c = kids[2 * int64(x)]; if (c < 0) { lo = ~c; break; } x = c; }
                x = cand;
                while (true) { const int32 c = kids[2 * int64(x) + 1]; if (c < 0) { hi = ~c; break; } x = c; }
                if (lo == s && hi == e) { root = cand; break; }
            }
        }
        b->group_ids[slot] = g;
        b->group_roots[slot++] = root;
        s = e + 1;
    }
    return 0;
}

// The tree as 8-wide nodes: a wide node starts with its binary node's two children and expands the internal child of
// largest box surface (the likeliest to be entered; ties: the first) into its two children, in place, until it has
// eight or no internal child is left; its child boxes are quantized as it is made. Rebuilt from the binary boxes after
// every build and refit (O(n), deterministic). The nodes above the subtrees of bvh_split are made first, numbered from
// 0 (the root) depth-first; then each subtree, in parallel, depth-first from its own base index: the sum of the
// internal node counts of the subtrees before it (each wide node absorbs at least one binary node, so the ranges never
// overlap; the unused rest of a range is left untouched). The numbering does not depend on the thread count.
static float half_area(const float* lo, const float* hi) {
    const float dx = hi[0] - lo[0], dy = hi[1] - lo[1], dz = hi[2] - lo[2];
    return dx * dy + dy * dz + dz * dx;
}

#if defined(__AVX2__)
static inline __m256 all_min8(__m256 v) {  // the minimum of the eight lanes, in every lane
    v = _mm256_min_ps(v, _mm256_permute2f128_ps(v, v, 1));
    v = _mm256_min_ps(v, _mm256_shuffle_ps(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
    return _mm256_min_ps(v, _mm256_shuffle_ps(v, v, _MM_SHUFFLE(2, 3, 0, 1)));
}

static inline __m256 all_max8(__m256 v) {
    v = _mm256_max_ps(v, _mm256_permute2f128_ps(v, v, 1));
    v = _mm256_max_ps(v, _mm256_shuffle_ps(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
    return _mm256_max_ps(v, _mm256_shuffle_ps(v, v, _MM_SHUFFLE(2, 3, 0, 1)));
}
#endif

// Quantize n child boxes into out (origin, scale, qlo, qhi). Child i's bounds on axis a: l[a][i], h[a][i] (lanes
// of Lv[a], Hv[a]), the unused slots (i >= n) holding copies of a used slot's. Per axis: a step a little over
// extent / 254, and bounds checked with the decoding's own arithmetic plus a slack for rounding differences (fused
// multiply-adds): decoded boxes never shrink below the true ones. The codes of [l - slack, h + slack] are estimated in lanes (truncation is
// floor: the values are >= 0; an estimate is off by a tiny fraction of a step at most); lanes whose decoded bound
// lands within the slack are checked and moved with the scalar decoding's arithmetic one by one.
#if defined(__AVX2__)
// lo_out / hi_out: the union of the children (the node's exact box), per axis in every lane.
static void wide_quantize8(const __m256* Lv, const __m256* Hv, int n, WideNode& out, __m256* lo_out, __m256* hi_out) {
    const uint32 used = (1u << n) - 1u;
    const __m256i live = _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    for (int a = 0; a < 3; ++a) {
        const __m256 L = Lv[a], H = Hv[a];
        const __m256 lo = all_min8(L), hi = all_max8(H);
        lo_out[a] = lo;
        hi_out[a] = hi;
        const __m256 sign = _mm256_set1_ps(-0.0f);
        const __m256 mag = _mm256_add_ps(_mm256_andnot_ps(sign, lo), _mm256_andnot_ps(sign, hi));
        const __m256 vs = _mm256_add_ps(_mm256_mul_ps(_mm256_set1_ps(1e-6f), mag), _mm256_set1_ps(1e-30f));
        const __m256 vstep = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(hi, lo), _mm256_set1_ps(1.0001f / 254.0f)),
                                           _mm256_mul_ps(vs, _mm256_set1_ps(4.0f / 254.0f)));
        // 1 / step to ~23 bits (an estimate and one Newton step): the codes are only estimates, checked below
        const __m256 r0 = _mm256_rcp_ps(vstep);
        const __m256 vi = _mm256_mul_ps(r0, _mm256_sub_ps(_mm256_set1_ps(2.0f), _mm256_mul_ps(vstep, r0)));
        const __m256 vo = _mm256_sub_ps(lo, vs);
        const __m256 zero = _mm256_setzero_ps();
        const __m256 Ls = _mm256_sub_ps(L, vs), Hs = _mm256_add_ps(H, vs);
        const __m256 fl = _mm256_min_ps(_mm256_set1_ps(255.0f),
                                        _mm256_max_ps(zero, _mm256_mul_ps(_mm256_sub_ps(Ls, vo), vi)));
        const __m256 fh = _mm256_min_ps(_mm256_set1_ps(254.0f),
                                        _mm256_max_ps(zero, _mm256_mul_ps(_mm256_sub_ps(Hs, vo), vi)));
        __m256i il = _mm256_and_si256(_mm256_cvttps_epi32(fl), live);
        __m256i ih = _mm256_and_si256(_mm256_add_epi32(_mm256_cvttps_epi32(fh), _mm256_set1_epi32(1)), live);
        const float o = _mm256_cvtss_f32(vo), step = _mm256_cvtss_f32(vstep), slack = _mm256_cvtss_f32(vs);
        out.origin[a] = o;
        out.scale[a] = step;
        // lanes to check in scalar code: an estimate whose decoded bound (in this arithmetic) reaches past half of
        // the slack. The others stay at least slack / 2 (5e-7 of the coordinates' magnitude) outside the true box,
        // more than any rounding difference of another decoding (fused or not, a few ulps) can take back.
        const __m256 dl = _mm256_add_ps(vo, _mm256_mul_ps(_mm256_cvtepi32_ps(il), vstep));
        const __m256 dh = _mm256_add_ps(vo, _mm256_mul_ps(_mm256_cvtepi32_ps(ih), vstep));
        const __m256 margin = _mm256_mul_ps(vs, _mm256_set1_ps(0.5f));
        const uint32 bad = uint32(_mm256_movemask_ps(
                               _mm256_or_ps(_mm256_cmp_ps(_mm256_sub_ps(dl, margin), Ls, _CMP_GT_OQ),
                                            _mm256_cmp_ps(_mm256_add_ps(dh, margin), Hs, _CMP_LT_OQ)))) &
                           used;
        if (__builtin_expect(bad != 0, 0)) {
            int32 ql[WIDE], qh[WIDE];
            float lf[WIDE], hf[WIDE];
            _mm256_storeu_ps(lf, L);
            _mm256_storeu_ps(hf, H);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(ql), il);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(qh), ih);
            for (uint32 m = bad; m != 0; m &= m - 1) {
                const int i = __builtin_ctz(m);
                while (ql[i] > 0 && o + float(ql[i]) * step > lf[i] - slack) --ql[i];
                while (qh[i] < 255 && o + float(qh[i]) * step < hf[i] + slack) ++qh[i];
            }
            il = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql));
            ih = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh));
        }
        // eight codes (0..255) to bytes
        const __m256i packed = _mm256_packus_epi16(_mm256_packus_epi32(il, ih), _mm256_setzero_si256());
        // per 128-bit half: bytes 0-3 ql, 4-7 qh of lanes 0-3 (low half) or 4-7 (high half)
        const __m128i lo128 = _mm256_castsi256_si128(packed), hi128 = _mm256_extracti128_si256(packed, 1);
        const __m128i qlb = _mm_unpacklo_epi32(lo128, hi128);  // ql 0-3, ql 4-7, qh 0-3, qh 4-7
        _mm_storel_epi64(reinterpret_cast<__m128i*>(out.qlo[a]), qlb);
        _mm_storel_epi64(reinterpret_cast<__m128i*>(out.qhi[a]), _mm_srli_si128(qlb, 8));
    }
}
#endif

static void wide_quantize(const float (*l)[WIDE], const float (*h)[WIDE], int n, WideNode& out) {
#if defined(__AVX2__)
    __m256 L[3], H[3], lo[3], hi[3];
    for (int a = 0; a < 3; ++a) {
        L[a] = _mm256_loadu_ps(l[a]);
        H[a] = _mm256_loadu_ps(h[a]);
    }
    wide_quantize8(L, H, n, out, lo, hi);
#else
    const uint32 used = (1u << n) - 1u;
    for (int a = 0; a < 3; ++a) {
        float lo = l[a][0], hi = h[a][0];
        for (int i = 1; i < WIDE; ++i) {
            lo = std::min(lo, l[a][i]);
            hi = std::max(hi, h[a][i]);
        }
        const float mag = std::fabs(lo) + std::fabs(hi);
        const float slack = 1e-6f * mag + 1e-30f;
        const float step = (hi - lo) * (1.0001f / 254.0f) + slack * (4.0f / 254.0f);
        const float inv = 1.0f / step;
        const float o = lo - slack;
        out.origin[a] = o;
        out.scale[a] = step;
        for (int i = 0; i < WIDE; ++i) {
            int32 ql = int32(std::min(255.0f, std::max(0.0f, (l[a][i] - slack - o) * inv)));
            int32 qh = int32(std::min(254.0f, std::max(0.0f, (h[a][i] + slack - o) * inv))) + 1;
            if (used >> i & 1u) {
                while (ql > 0 && o + float(ql) * step > l[a][i] - slack) --ql;
                while (qh < 255 && o + float(qh) * step < h[a][i] + slack) ++qh;
            } else {
                ql = qh = 0;
            }
            out.qlo[a][i] = uint8(ql);
            out.qhi[a][i] = uint8(qh);
        }
    }
#endif
}

// Make wide node `out` from binary internal node x (with xsize internal nodes in its subtree): its children (binary
// node indices for internal ones) in ch, their subtree sizes in sz.
static int wide_make(const BvhData* b, int32 x, int32 xsize, WideNode& out, int32* ch, int32* sz) {
    float area[WIDE], clo[WIDE][3], chi[WIDE][3];
    int n = 0;
    const BvhNode& nd = b->nodes[x];
    child_sizes(nd, xsize, sz);
    // the loads of the nodes expanded below are the pass's cost (a dependent miss each): start them early
    for (int c = 0; c < 2; ++c)
        if (nd.child[c] >= 0) __builtin_prefetch(b->nodes + nd.child[c]);
    for (int c = 0; c < 2; ++c) {
        ch[n] = nd.child[c];
        std::copy(nd.lo[c], nd.lo[c] + 3, clo[n]);
        std::copy(nd.hi[c], nd.hi[c] + 3, chi[n]);
        area[n++] = half_area(nd.lo[c], nd.hi[c]);
    }
    while (n < WIDE) {
        int best = -1;
        for (int i = 0; i < n; ++i)
            if (ch[i] >= 0 && (best < 0 || area[i] > area[best])) best = i;
        if (best < 0) break;
        const BvhNode& sub = b->nodes[ch[best]];
        for (int c = 0; c < 2; ++c)
            if (sub.child[c] >= 0) __builtin_prefetch(b->nodes + sub.child[c]);
        int32 ssz[2];
        child_sizes(sub, sz[best], ssz);
        for (int i = n; i > best + 1; --i) {  // make room after best: its children replace it in order
            ch[i] = ch[i - 1];
            sz[i] = sz[i - 1];
            area[i] = area[i - 1];
            std::copy(clo[i - 1], clo[i - 1] + 3, clo[i]);
            std::copy(chi[i - 1], chi[i - 1] + 3, chi[i]);
        }
        for (int c = 0; c < 2; ++c) {
            ch[best + c] = sub.child[c];
            sz[best + c] = ssz[c];
            std::copy(sub.lo[c], sub.lo[c] + 3, clo[best + c]);
            std::copy(sub.hi[c], sub.hi[c] + 3, chi[best + c]);
            area[best + c] = half_area(sub.lo[c], sub.hi[c]);
        }
        ++n;
    }
    out.count = n;
    for (int i = 0; i < WIDE; ++i) out.child[i] = i < n && ch[i] < 0 ? ch[i] : int32(0x80000000);
    float l[3][WIDE], h[3][WIDE];
    for (int a = 0; a < 3; ++a)
        for (int i = 0; i < WIDE; ++i) {
            l[a][i] = clo[i < n ? i : 0][a];
            h[a][i] = chi[i < n ? i : 0][a];
        }
    wide_quantize(l, h, n, out);
    return n;
}

struct WideItem {
    int32 x;     // binary internal node
    int32 size;  // internal nodes in its subtree
    int32 slot;  // where the parent wide node refers to it: w * WIDE + i (-1 for the root)
};

// Wide nodes of the subtree at binary node x, numbered depth-first from `base`; `stop(size)` true: leave an internal
// child of that subtree size to the caller (pushed on `rest` instead). Returns the number of wide nodes made.
template <typename Stop>
static int32 wide_subtree(BvhData* b, WideItem root, int32 base, Stop stop, std::vector<WideItem>* rest) {
    WideItem stack[1024];  // at most 7 pending siblings per level of a tree at most 95 levels deep
    int32 sp = 0, next = base;
    stack[sp++] = root;
    while (sp > 0) {
        const WideItem it = stack[--sp];
        const int32 w = next++;
        if (it.slot >= 0) b->wide[it.slot / WIDE].child[it.slot % WIDE] = w;
        int32 ch[WIDE], sz[WIDE];
        const int n = wide_make(b, it.x, it.size, b->wide[w], ch, sz);
        // internal children become wide nodes: push in reverse so the first is numbered next
        for (int i = n - 1; i >= 0; --i) {
            if (ch[i] < 0) continue;
            const WideItem c{ch[i], sz[i], w * WIDE + i};
            if (stop(sz[i])) {
                rest->push_back(c);
            } else {
                __builtin_prefetch(b->nodes + ch[i]);  // its wide node starts from this binary node
                stack[sp++] = c;
            }
        }
    }
    return next - base;
}

static int bvh_build_wide(BvhData* b) {
    const int32 m = b->num_prims - 1;
    if (m < 1) return 0;
    if (b->wide == nullptr) {
        b->wide = alloc_lines<WideNode>(m);  // the bound; only the pages of the nodes made are touched
        if (b->wide == nullptr) return 2;
    }
    const int32 cut = subtree_cut(m);
    std::vector<WideItem> roots;  // subtrees left to the parallel pass, in the order the top walk set them aside
    std::vector<int32> base;
    int32 made = 0;
    if (m <= cut) {
        roots.push_back({0, m, -1});
    } else {
        made = wide_subtree(b, {0, m, -1}, 0, [cut](int32 size) { return size <= cut; }, &roots);
    }
    base.resize(roots.size());
    for (size_t k = 0; k < roots.size(); ++k) {  // each wide node absorbs at least one binary node
        base[k] = made;
        made += roots[k].size;
    }
    const int32 count = int32(roots.size());
    std::free(b->wide_spans);
    b->wide_spans = alloc<int32>(2 * (int64(count) + 1));
    if (b->wide_spans == nullptr) return 2;
    b->num_wide_spans = count + 1;
    b->wide_spans[0] = 0;  // the top (empty when the tree is one subtree)
    b->wide_spans[1] = base.empty() ? made : base[0];
#pragma omp parallel for schedule(dynamic, 1) if (m > PARALLEL_MIN)
    for (int32 k = 0; k < count; ++k) {
        // the subtree's binary nodes are the contiguous range [x, x + size) (at most `cut` 64-byte nodes): read them
        // in order first, which the hardware prefetcher streams into L2, so the collapse's dependent loads of the
        // nodes it expands hit the cache (one thread, CPU per build: 1M 303 -> 282 ms, 300k 81 -> 71 ms, medians of
        // alternating builds)
        {
            const int32* p = &b->nodes[roots[k].x].child[0];
            int32 sink = 0;
            for (int32 i = 0; i < roots[k].size; ++i) sink += p[int64(i) * int64(sizeof(BvhNode) / sizeof(int32))];
            __asm__ volatile("" : : "r"(sink));
        }
        const int32 made_k = wide_subtree(b, roots[k], base[k], [](int32) { return false; },
                                          static_cast<std::vector<WideItem>*>(nullptr));
        b->wide_spans[2 * (k + 1)] = base[k];
        b->wide_spans[2 * (k + 1) + 1] = made_k;
    }
    return 0;
}

// Refit of the wide nodes, keeping their layout: wide node w's exact box (the union of its children's) goes to
// wide_box[w] and its child boxes are requantized. A leaf child's box comes from leaf_box, an internal child's from
// wide_box (children follow their parent in a depth-first span, so each span is one backward sweep; the spans of the
// subtrees in parallel, then the top's). The child boxes are the ones a fresh collapse of the refit binary tree would
// copy (min / max are exact), so the quantized boxes are those of a rebuild with the same topology.
static int bvh_refit_wide(BvhData* b) {
    const int32 m = b->num_prims - 1;
    if (m < 1 || b->wide == nullptr || b->num_wide_spans == 0) return 0;
    if (b->wide_box == nullptr) {
        b->wide_box = alloc_lines<float>(8 * int64(m));  // the bound; only the entries of the nodes made are touched
        if (b->wide_box == nullptr) return 2;
    }
    // wide_box[w]: lo (x, y, z, -), hi (x, y, z, -) of wide node w
#if defined(__AVX2__)
    const bool records = b->leaf_data != nullptr && b->leaf_stride == 9;  // (padded by 3 floats: 4-float loads)
    auto refit_node = [b, records](int32 w) {
        WideNode& nd = b->wide[w];
        const int n = nd.count;
        __m128 rl[WIDE], rh[WIDE];  // child i's lo / hi corner (x, y, z, -)
        for (int i = 0; i < n; ++i) {
            const int32 ch = nd.child[i];
            if (ch >= 0) {
                const float* cb = b->wide_box + 8 * int64(ch);
                rl[i] = _mm_load_ps(cb);
                rh[i] = _mm_load_ps(cb + 4);
            } else if (records) {
                const float* v = b->leaf_data + 9 * int64(~ch);
                const __m128 p0 = _mm_loadu_ps(v), p1 = _mm_loadu_ps(v + 3), p2 = _mm_loadu_ps(v + 6);
                rl[i] = _mm_min_ps(p0, _mm_min_ps(p1, p2));
                rh[i] = _mm_max_ps(p0, _mm_max_ps(p1, p2));
            } else {
                float lo[3], hi[3];
                leaf_box(b, ~ch, lo, hi);
                rl[i] = _mm_setr_ps(lo[0], lo[1], lo[2], 0.0f);
                rh[i] = _mm_setr_ps(hi[0], hi[1], hi[2], 0.0f);
            }
        }
        for (int i = n; i < WIDE; ++i) {
            rl[i] = rl[0];
            rh[i] = rh[0];
        }
        // rows (one child's x, y, z) to lanes (one axis's eight children)
        __m256 L[3], H[3], lo[3], hi[3];
        for (int side = 0; side < 2; ++side) {
            __m128* r = side == 0 ? rl : rh;
            __m128 a0 = r[0], a1 = r[1], a2 = r[2], a3 = r[3], b0 = r[4], b1 = r[5], b2 = r[6], b3 = r[7];
            _MM_TRANSPOSE4_PS(a0, a1, a2, a3);
            _MM_TRANSPOSE4_PS(b0, b1, b2, b3);
            __m256* out = side == 0 ? L : H;
            out[0] = _mm256_set_m128(b0, a0);
            out[1] = _mm256_set_m128(b1, a1);
            out[2] = _mm256_set_m128(b2, a2);
        }
        wide_quantize8(L, H, n, nd, lo, hi);
        float* box = b->wide_box + 8 * int64(w);
        const __m128 bl = _mm_blend_ps(_mm_blend_ps(_mm256_castps256_ps128(lo[0]), _mm256_castps256_ps128(lo[1]), 2),
                                       _mm256_castps256_ps128(lo[2]), 4);
        const __m128 bh = _mm_blend_ps(_mm_blend_ps(_mm256_castps256_ps128(hi[0]), _mm256_castps256_ps128(hi[1]), 2),
                                       _mm256_castps256_ps128(hi[2]), 4);
        _mm_store_ps(box, bl);
        _mm_store_ps(box + 4, bh);
    };
#else
    auto refit_node = [b](int32 w) {
        WideNode& nd = b->wide[w];
        float l[3][WIDE], h[3][WIDE];
        const int n = nd.count;
        for (int i = 0; i < n; ++i) {
            const int32 ch = nd.child[i];
            float lo[3], hi[3];
            if (ch >= 0) {
                const float* cb = b->wide_box + 8 * int64(ch);
                for (int k = 0; k < 3; ++k) {
                    lo[k] = cb[k];
                    hi[k] = cb[4 + k];
                }
            } else {
                leaf_box(b, ~ch, lo, hi);
            }
            for (int k = 0; k < 3; ++k) {
                l[k][i] = lo[k];
                h[k][i] = hi[k];
            }
        }
        float* box = b->wide_box + 8 * int64(w);
        for (int k = 0; k < 3; ++k) {
            for (int i = n; i < WIDE; ++i) {
                l[k][i] = l[k][0];
                h[k][i] = h[k][0];
            }
            float lo = l[k][0], hi = h[k][0];
            for (int i = 1; i < WIDE; ++i) {
                lo = std::min(lo, l[k][i]);
                hi = std::max(hi, h[k][i]);
            }
            box[k] = lo;
            box[4 + k] = hi;
        }
        wide_quantize(l, h, n, nd);
    };
#endif
    const int32 spans = b->num_wide_spans;
#pragma omp parallel for schedule(dynamic, 1) if (m > PARALLEL_MIN)
    for (int32 k = 1; k < spans; ++k)
        for (int32 w = b->wide_spans[2 * k] + b->wide_spans[2 * k + 1] - 1; w >= b->wide_spans[2 * k]; --w)
            refit_node(w);
    for (int32 w = b->wide_spans[1] - 1; w >= 0; --w) refit_node(w);
    return 0;
}

// Write the internal nodes of the Karras topology (kids: its numbering, which the group-root search relies on; span:
// leaves below each node) numbered in depth-first order: the first child of node p is p + 1, the second p + (leaves
// below the first). The index of every node follows from its parent's alone, so the nodes above subtrees of at most
// `cut` internal nodes are written first, then the subtrees in parallel; the result does not depend on the order.
static int bvh_depth_first(BvhData* b, const int32* kids, const int32* span) {
    const int32 m = b->num_prims - 1;
    if (m < 1) return 0;
    b->nodes = alloc_lines<BvhNode>(m);
    if (b->nodes == nullptr) return 2;
    std::vector<int32> remap(b->num_groups > 0 ? size_t(m) : size_t(0));  // Karras index -> new (group roots)
    int32* const rm = remap.empty() ? nullptr : remap.data();
    struct Item {
        int32 x;  // Karras index
        int32 p;  // depth-first index
    };
    // writes node p from Karras node x; its internal children go to push(child), or to aside when they are small
    auto visit = [b, kids, span, rm](Item it, auto&& push) {
        BvhNode& nd = b->nodes[it.p];  // boxes are filled by bvh_fill_boxes
        const int32 l = kids[2 * int64(it.x)], r = kids[2 * int64(it.x) + 1];
        if (rm != nullptr) rm[it.x] = it.p;
        nd.child[0] = l < 0 ? l : it.p + 1;
        nd.child[1] = r < 0 ? r : it.p + (l < 0 ? 1 : span[l]);
        nd.pad[0] = nd.pad[1] = 0;
        if (r >= 0) push(Item{r, nd.child[1]});
        if (l >= 0) push(Item{l, nd.child[0]});
    };
    const int32 cut = subtree_cut(m);
    std::vector<Item> tasks, stack;
    std::vector<int32> top;  // the nodes above the subtrees, in depth-first order
    stack.push_back({0, 0});
    while (!stack.empty()) {
        const Item it = stack.back();
        stack.pop_back();
        if (span[it.x] - 1 <= cut) {
            tasks.push_back(it);
        } else {
            top.push_back(it.p);
            visit(it, [&stack](Item c) { stack.push_back(c); });
        }
    }
    const int32 count = int32(tasks.size());
    // each subtree is written, then its boxes filled by one backward sweep while its nodes are still in cache (a
    // subtree of at most `cut` 64-byte nodes fits in L2): one pass over the nodes instead of two
#pragma omp parallel for schedule(dynamic, 1) if (m > PARALLEL_MIN)
    for (int32 t = 0; t < count; ++t) {
        Item local[256];  // a depth-first walk holds at most one pending sibling per level (depth <= 95)
        int32 sp = 0;
        local[sp++] = tasks[t];
        while (sp > 0) visit(local[--sp], [&local, &sp](Item c) { local[sp++] = c; });
        const int32 first = tasks[t].p, last = tasks[t].p + span[tasks[t].x] - 2;
        for (int32 i = last; i >= first; --i) fill_node(b, i);
    }
    for (size_t t = top.size(); t-- > 0;) fill_node(b, top[t]);
    const BvhNode& root = b->nodes[0];
    box_union(root.lo[0], root.hi[0], root.lo[1], root.hi[1], b->root_lo, b->root_hi);
    for (int32 g = 0; g < b->num_groups; ++g) {
        const int32 r = b->group_roots[g];
        if (r >= 0 && r < m) b->group_roots[g] = remap[r];
    }
    return 0;
}

// The internal nodes of the radix tree over the sorted keys (Karras 2012), one per parallel iteration; delta(i, j) is
// the length of the common prefix of keys i and j (-1 when j is out of range; keys are distinct).
template <typename Delta>
static void karras_nodes(int32* kids, int32* span, int32 n, Delta delta) {
#pragma omp parallel for schedule(static) if (n > PARALLEL_MIN)
    for (int32 i = 0; i < n - 1; ++i) {
        const int d = (delta(i, i + 1) - delta(i, i - 1)) >= 0 ? 1 : -1;
        const int dmin = delta(i, i - d);
        int32 lmax = 2;
        while (delta(i, i + lmax * d) > dmin) lmax *= 2;
        int32 l = 0;
        for (int32 t = lmax / 2; t >= 1; t /= 2)
            if (delta(i, i + (l + t) * d) > dmin) l += t;
        const int32 j = i + l * d;
        const int dnode = delta(i, j);
        int32 s = 0;
        int32 t = l;
        do {
            t = (t + 1) / 2;
            if (delta(i, i + (s + t) * d) > dnode) s += t;
        } while (t > 1);
        const int32 gamma = i + s * d + std::min(d, 0);
        const int32 lo = std::min(i, j), hi = std::max(i, j);
        int32* child = kids + 2 * int64(i);
        child[0] = lo == gamma ? ~gamma : gamma;
        child[1] = hi == gamma + 1 ? ~(gamma + 1) : gamma + 1;
        span[i] = hi - lo + 1;
    }
}

// Build the tree over n primitive boxes (groups optional); returns 0, or 2 when out of memory.
// after_sort(ctx), when given, runs once the sorted primitive order (prim_ids) is known, before the boxes are filled
// (meshes write their leaf records there, which the box fill then reads).
static int bvh_build(BvhData* b, const float* prim_lo, const float* prim_hi, int32 n, const int32* groups,
                     void (*after_sort)(void*) = nullptr, void* ctx = nullptr) {
    b->num_prims = n;
    b->has_root = n > 0;
    b->root = n > 1 ? 0 : ~0;
    if (n <= 0) return 0;
    b->prim_ids = alloc<int32>(n);
    if (b->prim_ids == nullptr) return 2;
    // centroid bounds
    float clo[3] = {1e30f, 1e30f, 1e30f}, chi[3] = {-1e30f, -1e30f, -1e30f};
#pragma omp parallel if (n > PARALLEL_MIN)
    {
        float tlo[3] = {1e30f, 1e30f, 1e30f}, thi[3] = {-1e30f, -1e30f, -1e30f};
#pragma omp for schedule(static) nowait
        for (int32 i = 0; i < n; ++i)
            for (int k = 0; k < 3; ++k) {
                const float c = 0.5f * (prim_lo[3 * int64(i) + k] + prim_hi[3 * int64(i) + k]);
                tlo[k] = std::min(tlo[k], c);
                thi[k] = std::max(thi[k], c);
            }
#pragma omp critical
        for (int k = 0; k < 3; ++k) {
            clo[k] = std::min(clo[k], tlo[k]);
            chi[k] = std::max(chi[k], thi[k]);
        }
    }
    float inv[3];
    for (int k = 0; k < 3; ++k) inv[k] = chi[k] > clo[k] ? 1.0f / (chi[k] - clo[k]) : 0.0f;
    Scratch<SortKey> key_buf(n), tmp_buf(groups == nullptr ? n : 0);
    if (!key_buf.ok() || !tmp_buf.ok()) return 2;
#pragma omp parallel for schedule(static) if (n > PARALLEL_MIN)
    for (int32 i = 0; i < n; ++i) {
        float c[3];
        for (int k = 0; k < 3; ++k) c[k] = (0.5f * (prim_lo[3 * int64(i) + k] + prim_hi[3 * int64(i) + k]) - clo[k]) * inv[k];
        key_buf[i] = SortKey{groups ? uint32(groups[i]) ^ 0x80000000u : 0u, morton3(c[0], c[1], c[2]), uint32(i)};
    }
    const SortKey* keys = key_buf.data();
    if (groups == nullptr) keys = radix_sort_morton(key_buf.data(), tmp_buf.data(), n);  // Morton codes have 30 bits
    else parallel_sort(key_buf.data(), key_buf.data() + n);
#pragma omp parallel for schedule(static) if (n > PARALLEL_MIN)
    for (int32 i = 0; i < n; ++i) b->prim_ids[i] = int32(keys[i].id);
    if (after_sort != nullptr) after_sort(ctx);
    // the radix tree's topology in its own numbering (children and leaf counts only: the 64-byte nodes are written once,
    // in depth-first order, by bvh_depth_first)
    Scratch<int32> kids(2 * int64(n)), span(n);
    if (!kids.ok() || !span.ok()) return 2;
    if (n > 1) {
        if (groups == nullptr) {
            // ungrouped: (morton, id) packed in 64 bits, so a common prefix is one clz (the same tree: every prefix
            // length is the 96-bit key's minus the constant 32 of the equal group word)
            Scratch<uint64> packed(n);
            if (!packed.ok()) return 2;
            uint64* const k = packed.data();
#pragma omp parallel for schedule(static) if (n > PARALLEL_MIN)
            for (int32 i = 0; i < n; ++i) k[i] = (uint64(keys[i].morton) << 32) | uint64(keys[i].id);
            karras_nodes(kids.data(), span.data(), n, [k, n](int32 i, int32 j) {
                if (j < 0 || j >= n) return -1;
                const uint64 x = k[i] ^ k[j];
                return x == 0 ? 64 : __builtin_clzll(x);
            });
        } else {
            karras_nodes(kids.data(), span.data(), n,
                         [keys, n](int32 i, int32 j) { return delta(keys, n, i, j); });
        }
    }
    if (groups != nullptr)
        if (int rc = bvh_group_roots(b, groups, kids.data())) return rc;
    if (int rc = bvh_depth_first(b, kids.data(), span.data())) return rc;  // boxes filled too
    if (n == 1) bvh_fill_boxes(b);  // no internal node: the root box is the primitive's
    return 0;
}


// ------------------------------------------------------------------------------------------------ meshes
static void triangle_boxes(const MeshData* m, float* lo, float* hi) {
#pragma omp parallel for schedule(static) if (m->num_tris > PARALLEL_MIN)
    for (int32 t = 0; t < m->num_tris; ++t) {
        const int32* tri = m->indices + 3 * int64(t);
        for (int k = 0; k < 3; ++k) {
            const float a = m->points[3 * int64(tri[0]) + k], bb = m->points[3 * int64(tri[1]) + k],
                        c = m->points[3 * int64(tri[2]) + k];
            lo[3 * int64(t) + k] = std::min(a, std::min(bb, c));
            hi[3 * int64(t) + k] = std::max(a, std::max(bb, c));
        }
    }
}

struct WindingAcc {
    float n[3];
    float c[3];  // area-weighted centre (divided at the end)
    float area;
    float r;
};

static WindingAcc triangle_winding(const MeshData* m, int32 t) {
    const int32* tri = m->indices + 3 * int64(t);
    const float* a = m->points + 3 * int64(tri[0]);
    const float* b = m->points + 3 * int64(tri[1]);
    const float* c = m->points + 3 * int64(tri[2]);
    float e1[3], e2[3];
    for (int k = 0; k < 3; ++k) {
        e1[k] = b[k] - a[k];
        e2[k] = c[k] - a[k];
    }
    WindingAcc w;
    w.n[0] = 0.5f * (e1[1] * e2[2] - e1[2] * e2[1]);
    w.n[1] = 0.5f * (e1[2] * e2[0] - e1[0] * e2[2]);
    w.n[2] = 0.5f * (e1[0] * e2[1] - e1[1] * e2[0]);
    w.area = std::sqrt(w.n[0] * w.n[0] + w.n[1] * w.n[1] + w.n[2] * w.n[2]);
    for (int k = 0; k < 3; ++k) w.c[k] = (a[k] + b[k] + c[k]) / 3.0f;
    w.r = 0.0f;
    for (const float* v : {a, b, c}) {
        float d2 = 0.0f;
        for (int k = 0; k < 3; ++k) d2 += (v[k] - w.c[k]) * (v[k] - w.c[k]);
        w.r = std::max(w.r, std::sqrt(d2));
    }
    return w;
}

// Dipole data per node child, bottom-up (children before parents: reverse of a breadth-first order).
static void mesh_winding(MeshData* m) {
    BvhData* b = &m->bvh;
    const int32 nodes = b->num_prims - 1;
    if (m->winding == nullptr || nodes <= 0) return;
    std::vector<int32> order;
    order.reserve(size_t(nodes));
    order.push_back(0);
    for (size_t i = 0; i < order.size(); ++i)
        for (int c = 0; c < 2; ++c)
            if (b->nodes[order[i]].child[c] >= 0) order.push_back(b->nodes[order[i]].child[c]);
    std::vector<WindingAcc> acc(static_cast<size_t>(nodes));
    for (size_t r = order.size(); r-- > 0;) {
        const int32 i = order[r];
        WindingAcc kids[2];
        for (int c = 0; c < 2; ++c) {
            const int32 ch = b->nodes[i].child[c];
            kids[c] = ch < 0 ? triangle_winding(m, b->prim_ids[~ch]) : acc[ch];
            WindingNode& wn = m->winding[i];
            for (int k = 0; k < 3; ++k) {
                wn.n[c][k] = kids[c].n[k];
                wn.c[c][k] = kids[c].c[k];
            }
            wn.r[c] = kids[c].r;
        }
        WindingAcc& w = acc[i];
        const float area = kids[0].area + kids[1].area;
        w.area = area;
        for (int k = 0; k < 3; ++k) {
            w.n[k] = kids[0].n[k] + kids[1].n[k];
            w.c[k] = area > 0.0f ? (kids[0].area * kids[0].c[k] + kids[1].area * kids[1].c[k]) / area
                                 : 0.5f * (kids[0].c[k] + kids[1].c[k]);
        }
        w.r = 0.0f;
        for (int c = 0; c < 2; ++c) {
            float d2 = 0.0f;
            for (int k = 0; k < 3; ++k) d2 += (kids[c].c[k] - w.c[k]) * (kids[c].c[k] - w.c[k]);
            w.r = std::max(w.r, std::sqrt(d2) + kids[c].r);
        }
    }
}

static void mesh_free(MeshData* m) {
    bvh_free(&m->bvh);
    std::free(m->winding);
    std::free(m->leaf_tris);
    m->winding = nullptr;
    m->leaf_tris = nullptr;
}

// The vertices of each leaf's face in leaf order: a traversal reads one contiguous 36-byte record per leaf instead
// of following prim_ids -> indices -> points.
static void mesh_leaf_tris(MeshData* m) {
    const int32 n = m->bvh.num_prims;
#pragma omp parallel for schedule(static) if (n > PARALLEL_MIN)
    for (int32 s = 0; s < n; ++s) {
        const int32* t = m->indices + 3 * int64(m->bvh.prim_ids[s]);
        float* out = m->leaf_tris + 9 * int64(s);
        for (int v = 0; v < 3; ++v)
            for (int k = 0; k < 3; ++k) out[3 * v + k] = m->points[3 * int64(t[v]) + k];
    }
}

}  // namespace geo
}  // namespace weft

using namespace weft;
using namespace weft::geo;

GEO_API const void* geo_registry() { return &g_registry; }

GEO_API uint64 geo_hash_grid_create(int32 dx, int32 dy, int32 dz) {
    if (dx <= 0 || dy <= 0 || dz <= 0) return 0;
    const int64 cells = int64(dx) * dy * dz;
    if (cells > (int64(1) << 30)) return 0;
    HashGridData* g = new (std::nothrow) HashGridData();
    if (g == nullptr) return 0;
    g->dim[0] = dx;
    g->dim[1] = dy;
    g->dim[2] = dz;
    g->cell_width = 1.0f;
    g->inv_cell_width = 1.0f;
    g->cell_starts = alloc<int32>(cells);
    g->cell_ends = alloc<int32>(cells);
    if (g->cell_starts == nullptr || g->cell_ends == nullptr) {
        hash_grid_free_storage(g);
        delete g;
        return 0;
    }
    std::fill(g->cell_starts, g->cell_starts + cells, 0);
    std::fill(g->cell_ends, g->cell_ends + cells, 0);
    g->occupied_valid = 1;  // no cell is filled yet
    const uint64 id = add_object(g, KIND_HASHGRID);
    if (id == 0) {
        hash_grid_free_storage(g);
        delete g;
    }
    return id;
}

GEO_API int geo_hash_grid_reserve(uint64 id, int32 n) {
    HashGridData* g = static_cast<HashGridData*>(get_object(id, KIND_HASHGRID));
    if (g == nullptr) return 1;
    return hash_grid_reserve(g, n);
}

// points: float32 xyz (null when hashed is given); hashed: the points' hashed cells (float64 grids compute them in
// double on the host); groups: optional group id per point.
GEO_API int geo_hash_grid_build(uint64 id, const float* points, const int32* hashed, const int32* groups, int32 n,
                                double radius, int precision) {
    HashGridData* g = static_cast<HashGridData*>(get_object(id, KIND_HASHGRID));
    if (g == nullptr) return 1;
    return hash_grid_build(g, points, hashed, groups, n, radius, precision);
}

GEO_API int geo_hash_grid_destroy(uint64 id) {
    HashGridData* g = static_cast<HashGridData*>(get_object(id, KIND_HASHGRID));
    if (g == nullptr) return 1;
    remove_object(id);
    hash_grid_free_storage(g);
    delete g;
    return 0;
}

GEO_API int32 geo_hash_grid_sorted_ids(uint64 id, int32* out, int32 n) {
    HashGridData* g = static_cast<HashGridData*>(get_object(id, KIND_HASHGRID));
    if (g == nullptr) return -1;
    const int32 m = std::min(n, g->num_points);
    for (int32 i = 0; i < m; ++i) out[i] = g->sorted_ids[i];
    return m;
}

// ------------------------------------------------------------------------------------------------ BVH API
GEO_API uint64 geo_bvh_create(const float* lowers, const float* uppers, int32 n, const int32* groups) {
    BvhData* b = new (std::nothrow) BvhData();
    if (b == nullptr) return 0;
    b->lowers = lowers;
    b->uppers = uppers;
    b->groups = groups;
    if (bvh_build(b, lowers, uppers, n, groups) != 0) {
        bvh_free(b);
        delete b;
        return 0;
    }
    const uint64 id = add_object(b, KIND_BVH);
    if (id == 0) {
        bvh_free(b);
        delete b;
    }
    return id;
}

GEO_API int geo_bvh_refit(uint64 id) {
    BvhData* b = static_cast<BvhData*>(get_object(id, KIND_BVH));
    if (b == nullptr) return 1;
    bvh_fill_boxes(b);
    return 0;
}

GEO_API int geo_bvh_destroy(uint64 id) {
    BvhData* b = static_cast<BvhData*>(get_object(id, KIND_BVH));
    if (b == nullptr) return 1;
    remove_object(id);
    bvh_free(b);
    delete b;
    return 0;
}

// out: [num_prims, root, num_groups, depth]
GEO_API int geo_bvh_info(uint64 id, int32* out) {
    BvhData* b = static_cast<BvhData*>(get_object(id, KIND_BVH));
    if (b == nullptr) {
        MeshData* m = static_cast<MeshData*>(get_object(id, KIND_MESH));
        if (m == nullptr) return 1;
        b = &m->bvh;
    }
    out[0] = b->num_prims;
    out[1] = b->root;
    out[2] = b->num_groups;
    int32 depth = b->num_prims > 0 ? 1 : 0;  // levels down to the deepest leaf
    std::vector<std::pair<int32, int32>> stack;  // (internal node, its level)
    if (b->num_prims > 1) stack.push_back({0, 1});
    while (!stack.empty()) {
        const auto [x, d] = stack.back();
        stack.pop_back();
        for (int c = 0; c < 2; ++c) {
            const int32 ch = b->nodes[x].child[c];
            if (ch >= 0) stack.push_back({ch, d + 1});
            else depth = std::max(depth, d + 1);
        }
    }
    out[3] = depth;
    return 0;
}

GEO_API int32 geo_bvh_group_root(uint64 id, int32 group) {
    BvhData* b = static_cast<BvhData*>(get_object(id, KIND_BVH));
    return b == nullptr ? -1 : group_root(b, group);
}

// ------------------------------------------------------------------------------------------------ mesh API
// A new mesh's tree (build) or a refit after the points moved: the leaf records (each leaf's vertices) are written
// first, and every box is then taken from them (leaf_box); the triangle boxes are needed only by the build's sort.
static int mesh_rebuild_boxes(MeshData* m, bool build, const int32* groups = nullptr) {
    if (build) {
        m->leaf_tris = alloc<float>(9 * int64(m->num_tris) + 3);  // + 3: a record may be read as 4-float groups
        if (m->leaf_tris == nullptr) return 2;
    }
    m->bvh.leaf_data = m->leaf_tris;
    m->bvh.leaf_stride = 9;
    if (build) {
        Scratch<float> lo(3 * int64(m->num_tris)), hi(3 * int64(m->num_tris));
        if (!lo.ok() || !hi.ok()) return 2;
        triangle_boxes(m, lo.data(), hi.data());
        if (int rc = bvh_build(&m->bvh, lo.data(), hi.data(), m->num_tris, groups,
                               [](void* mesh) { mesh_leaf_tris(static_cast<MeshData*>(mesh)); }, m))
            return rc;
        m->bvh.lowers = m->bvh.uppers = nullptr;  // the tree doubles as a user BVH (mesh_get_bvh) over leaf_box
        if (int rc = bvh_build_wide(&m->bvh)) return rc;
    } else {
        mesh_leaf_tris(m);
        bvh_fill_boxes(&m->bvh);
        if (int rc = bvh_refit_wide(&m->bvh)) return rc;
    }
    mesh_winding(m);
    return 0;
}

GEO_API uint64 geo_mesh_create(const float* points, const int32* indices, const float* velocities, int32 num_points,
                               int32 num_tris, int winding, const int32* groups) {
    MeshData* m = new (std::nothrow) MeshData();
    if (m == nullptr) return 0;
    m->points = points;
    m->indices = indices;
    m->velocities = velocities;
    m->num_points = num_points;
    m->num_tris = num_tris;
    if (winding && num_tris > 1) {
        m->winding = alloc<WindingNode>(num_tris - 1);
        if (m->winding == nullptr) {
            delete m;
            return 0;
        }
    }
    if (mesh_rebuild_boxes(m, true, groups) != 0) {
        mesh_free(m);
        delete m;
        return 0;
    }
    const uint64 id = add_object(m, KIND_MESH);
    if (id == 0) {
        mesh_free(m);
        delete m;
        return 0;
    }
    m->bvh_id = add_object(&m->bvh, KIND_BVH);
    return id;
}

GEO_API int geo_mesh_refit(uint64 id) {
    MeshData* m = static_cast<MeshData*>(get_object(id, KIND_MESH));
    if (m == nullptr) return 1;
    return mesh_rebuild_boxes(m, false);
}

// points / velocities replaced by arrays of the same length (mesh.points = new_array)
GEO_API int geo_mesh_set_points(uint64 id, const float* points, const float* velocities) {
    MeshData* m = static_cast<MeshData*>(get_object(id, KIND_MESH));
    if (m == nullptr) return 1;
    m->velocities = velocities;
    if (points != nullptr) {
        m->points = points;
        return mesh_rebuild_boxes(m, false);  // new positions: refit, as Warp does
    }
    return 0;
}

// Where the backward pass adds the gradients of the points / velocities (null: none).
GEO_API int geo_mesh_set_grads(uint64 id, float* points_grad, float* velocities_grad) {
    MeshData* m = static_cast<MeshData*>(get_object(id, KIND_MESH));
    if (m == nullptr) return 1;
    m->points_grad = points_grad;
    m->velocities_grad = velocities_grad;
    return 0;
}

GEO_API int geo_mesh_destroy(uint64 id) {
    MeshData* m = static_cast<MeshData*>(get_object(id, KIND_MESH));
    if (m == nullptr) return 1;
    remove_object(id);
    if (m->bvh_id != 0) remove_object(m->bvh_id);
    mesh_free(m);
    delete m;
    return 0;
}

// ------------------------------------------------------------------------------------------------ volumes
// The descriptor's arrays belong to the Python Volume; the library keeps a copy of the descriptor under an id.
GEO_API uint64 geo_volume_create(const VolumeData* desc) {
    if (desc == nullptr) return 0;
    VolumeData* v = new (std::nothrow) VolumeData(*desc);
    if (v == nullptr) return 0;
    const uint64 id = add_object(v, KIND_VOLUME);
    if (id == 0) delete v;
    return id;
}

GEO_API int geo_volume_destroy(uint64 id) {
    VolumeData* v = static_cast<VolumeData*>(get_object(id, KIND_VOLUME));
    if (v == nullptr) return 1;
    remove_object(id);
    delete v;
    return 0;
}

GEO_API uint64 geo_volume_descriptor_size() { return sizeof(VolumeData); }

// rebuild: the same id takes a new descriptor (the Python object keeps the new arrays alive)
GEO_API int geo_volume_update(uint64 id, const VolumeData* desc) {
    VolumeData* v = static_cast<VolumeData*>(get_object(id, KIND_VOLUME));
    if (v == nullptr || desc == nullptr) return 1;
    *v = *desc;
    return 0;
}
