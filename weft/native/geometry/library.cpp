// weft geometry library: the host side of weft.geometry. Builds and owns hash grids, BVHs and meshes, and the
// registry that kernel modules resolve ids through. Compiled once per cache by weft's toolchain (with OpenMP) and
// loaded by weft/geometry/native.py; every entry point is extern "C" and returns a status (0 = ok).
#define WEFT_GEOMETRY_LIBRARY 1
#include "geometry/geometry.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

#include <omp.h>

#define GEO_API extern "C" __attribute__((visibility("default")))

namespace weft {
namespace geo {

static Registry g_registry;
static std::mutex g_lock;
static std::vector<uint32> g_free;      // free slot indices
static uint32 g_next_slot = 0;

const Registry* registry() { return &g_registry; }

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

template <typename T>
static T* alloc(int64 n) {
    if (n <= 0) return nullptr;
    return static_cast<T*>(std::malloc(sizeof(T) * size_t(n)));
}

// ------------------------------------------------------------------------------------------------ hash grid
static void hash_grid_free_storage(HashGridData* g) {
    std::free(g->sorted_ids);
    std::free(g->cell_starts);
    std::free(g->cell_ends);
    g->sorted_ids = g->cell_starts = g->cell_ends = nullptr;
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
static int hash_grid_build(HashGridData* g, const float* points, int32 n, float radius) {
    if (int rc = hash_grid_reserve(g, n)) return rc;
    const int32 cells = g->dim[0] * g->dim[1] * g->dim[2];
    g->cell_width = radius;
    g->inv_cell_width = 1.0f / radius;
    g->num_points = n;
    std::vector<int32> hashes(size_t(n > 0 ? n : 1));
#pragma omp parallel for schedule(static)
    for (int32 i = 0; i < n; ++i) {
        const float* p = point3(points, i);
        hashes[i] = hashed_cell(g, cell_coord(p[0], g->inv_cell_width), cell_coord(p[1], g->inv_cell_width),
                                cell_coord(p[2], g->inv_cell_width));
    }
    const int chunks = std::max(1, std::min(omp_get_max_threads(), n / 4096 + 1));
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
        for (int32 i = lo; i < hi; ++i) g->sorted_ids[pos[hashes[i]]++] = i;
    }
    return 0;
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

GEO_API int geo_hash_grid_build(uint64 id, const float* points, int32 n, float radius) {
    HashGridData* g = static_cast<HashGridData*>(get_object(id, KIND_HASHGRID));
    if (g == nullptr) return 1;
    return hash_grid_build(g, points, n, radius);
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
