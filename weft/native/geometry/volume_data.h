// weft native geometry: the layout of a sparse volume (wp.Volume). Voxels live in leaves of 8x8x8 (as NanoVDB's
// leaves); a leaf is found from its coordinates through an open-addressing hash table, so a voxel lookup is one
// hash probe sequence plus one load. The Python object (weft/geometry/volume.py) owns every array; the library
// keeps a copy of this descriptor in its registry.
#pragma once
#include "../core.h"

namespace weft {
namespace geo {

constexpr int32 VOLUME_COORD_LIMIT = 1 << 23;  // voxel coordinates in [-2^23, 2^23) (21-bit leaf keys)

// Constant regions above the leaf level (NanoVDB tiles of the lower, upper and root nodes: 8^3, 128^3 and 4096^3
// voxels) whose value differs from the background: a hash table from region key to tile index, and the values.
struct VolumeTiles {
    const int64* hash_keys;  // region keys (vol_region_key with this level's shift), -1 for an empty slot
    const int32* hash_tile;  // tile index of each slot
    const void* values;      // one value per tile
    int32 hash_mask;         // capacity - 1; -1 when the level has no tiles
    int32 shift;             // log2 of the region edge: 3, 7 or 12
};

struct VolumeData {
    int32 type_code;     // (scalar kind << 16) | (scalar bits << 8) | components; 0: an index grid (no values)
    int32 value_size;    // bytes per value
    int32 num_leaves;
    int32 hash_mask;     // hash table capacity - 1 (a power of two)
    int64 voxel_count;   // active (indexable) voxels
    const int64* hash_keys;    // packed leaf keys (vol_leaf_key), -1 for an empty slot
    const int32* hash_leaf;    // leaf index of each slot
    const int32* leaf_origin;  // 3 per leaf: the leaf's first voxel (multiples of 8)
    const uint64* leaf_mask;   // 8 words per leaf: bit (x & 7) << 6 | (y & 7) << 3 | (z & 7) set for active voxels
    const int64* leaf_offset;  // per leaf: the linear index of its first active voxel
    void* values;              // num_leaves * 512 values, leaf-major (null for index grids)
    const void* background;    // one value (null for index grids)
    float32 xf[9], inv_xf[9], tf[3];  // index -> world: world = xf * ijk + tf (row-major); float and double copies
    float64 xd[9], inv_xd[9], td[3];
    VolumeTiles tiles[3];  // lower, upper, root level tiles (read from NanoVDB data; empty for allocated volumes)
};

WEFT_FN int64 vol_region_key(int32 i, int32 j, int32 k, int32 shift) {
    return ((int64(i >> shift) & 0x1fffff) << 42) | ((int64(j >> shift) & 0x1fffff) << 21) |
           (int64(k >> shift) & 0x1fffff);
}

WEFT_FN int64 vol_leaf_key(int32 i, int32 j, int32 k) { return vol_region_key(i, j, k, 3); }

// Mixes every bit of the key into the low bits the table uses (the three coordinates sit in separate bit ranges).
WEFT_FN uint64 vol_hash(int64 key) {
    uint64 h = uint64(key) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 32;
    h *= 0xD6E8FEB86659FD93ull;
    return h ^ (h >> 32);
}

}  // namespace geo
}  // namespace weft
