// weft native geometry: the handle registry shared by the geometry library (which builds meshes, BVHs and hash
// grids) and the kernel modules (which query them). An id is (generation << 32) | (slot + 1); a kernel resolves it
// through the registry and gets nullptr for an id that is unknown, destroyed, or of another kind, so a stale or forged
// id never reads freed memory.
#pragma once
#include "../core.h"

namespace weft {
namespace geo {

enum Kind : uint32 { KIND_NONE = 0, KIND_MESH = 1, KIND_BVH = 2, KIND_HASHGRID = 3, KIND_VOLUME = 4 };

constexpr uint32 CHUNK_BITS = 12;
constexpr uint32 CHUNK_SIZE = 1u << CHUNK_BITS;
constexpr uint32 MAX_CHUNKS = 1024;  // about four million live objects

struct Slot {
    uint64 tag;  // (generation << 8) | kind; 0 when free
    void* obj;
};

struct Registry {
    Slot* chunks[MAX_CHUNKS];  // allocated on demand, never freed or moved while the library is loaded
};

WEFT_FN uint64 slot_tag(uint32 generation, uint32 kind) { return (uint64(generation) << 8) | uint64(kind); }

// The object behind ``id`` if it is a live object of ``kind``, else nullptr.
WEFT_FN void* lookup(const Registry* reg, uint64 id, uint32 kind) {
    if (reg == nullptr) return nullptr;
    const uint32 low = uint32(id & 0xffffffffull);
    if (low == 0) return nullptr;
    const uint32 index = low - 1;
    const uint32 chunk = index >> CHUNK_BITS;
    if (chunk >= MAX_CHUNKS) return nullptr;
    const Slot* slots = reg->chunks[chunk];
    if (slots == nullptr) return nullptr;
    const Slot& s = slots[index & (CHUNK_SIZE - 1)];
    if (s.tag == 0 || s.tag != slot_tag(uint32(id >> 32), kind)) return nullptr;
    return s.obj;
}

}  // namespace geo
}  // namespace weft
