"""The native layout of a sparse volume, built in NumPy: leaves of 8x8x8 voxels found through an open-addressing hash
table (``weft/native/geometry/volume_data.h`` reads it). Shared by ``Volume`` and the NanoVDB reader."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

from ..errors import GeometryError
from ..ir import types as T

LEAF = 8
LEAF_VOXELS = 512
COORD_LIMIT = 1 << 23  # voxel coordinates in [-2^23, 2^23)
_HASH_MUL = np.uint64(0x9E3779B97F4A7C15)
_HASH_MUL2 = np.uint64(0xD6E8FEB86659FD93)
_KIND = {"f": 1, "i": 2, "u": 3, "b": 4}


def type_code(t) -> int:
    """The native type code of a value type (0: an index grid): (scalar kind << 16) | (bits << 8) | components."""
    if t is None:
        return 0
    scalar = t if isinstance(t, T.ScalarType) else t.scalar
    n = 1 if isinstance(t, T.ScalarType) else t.length
    return (_KIND[scalar.kind] << 16) | (scalar.bits << 8) | n


def value_layout(t) -> tuple[np.dtype, tuple[int, ...]]:
    """NumPy scalar dtype and trailing shape of a value type."""
    if isinstance(t, T.ScalarType):
        return np.dtype(t.np_dtype), ()
    return np.dtype(t.scalar.np_dtype), (t.length,)


def leaf_keys(origins: np.ndarray, shift: int = 3) -> np.ndarray:
    """The packed 21-bit-per-axis keys of region origins (n, 3) (leaves: shift 3), as the native vol_region_key."""
    o = (origins.astype(np.int64) >> shift) & 0x1FFFFF
    return (o[:, 0] << 42) | (o[:, 1] << 21) | o[:, 2]


def _hash(keys: np.ndarray) -> np.ndarray:
    """The native vol_hash (wrapping 64-bit arithmetic)."""
    with np.errstate(over="ignore"):
        h = keys.astype(np.uint64) * _HASH_MUL
        h ^= h >> np.uint64(32)
        h *= _HASH_MUL2
        return h ^ (h >> np.uint64(32))


def build_hash(origins: np.ndarray, shift: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """An open-addressing (linear probing) table from region key to index: (keys with -1 for empty, indices)."""
    n = len(origins)
    cap = 16
    while cap < 2 * n:
        cap *= 2
    table_keys = np.full(cap, -1, dtype=np.int64)
    table_leaf = np.full(cap, -1, dtype=np.int32)
    if n == 0:
        return table_keys, table_leaf
    keys = leaf_keys(origins, shift)
    start = (_hash(keys) & np.uint64(cap - 1)).astype(np.int64)
    probe = np.zeros(n, dtype=np.int64)
    pending = np.arange(n)
    while pending.size:
        slots = (start[pending] + probe[pending]) & (cap - 1)
        free = table_keys[slots] == -1
        cand, cand_slots = pending[free], slots[free]
        _, first = np.unique(cand_slots, return_index=True)  # one key claims each free slot per round
        won = cand[first]
        table_keys[cand_slots[first]] = keys[won]
        table_leaf[cand_slots[first]] = won
        placed = np.zeros(n, dtype=bool)
        placed[won] = True
        rest = pending[~placed[pending]]
        probe[rest[table_keys[(start[rest] + probe[rest]) & (cap - 1)] != -1]] += 1
        pending = rest
    return table_keys, table_leaf


def leaf_offsets(masks: np.ndarray) -> np.ndarray:
    """Index of each leaf's first active voxel: the exclusive prefix sum of the active counts."""
    counts = np.unpackbits(masks.view(np.uint8), axis=1).sum(axis=1).astype(np.int64) if len(masks) else \
        np.zeros(0, np.int64)
    return np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64) if len(masks) else counts


def check_origins(origins: np.ndarray, owner: str) -> None:
    if len(origins) and (origins.min() < -COORD_LIMIT or origins.max() >= COORD_LIMIT):
        raise GeometryError(f"{owner}: voxel coordinates must lie in [-2**23, 2**23); got a leaf at "
                            f"{origins[np.argmax(np.abs(origins).max(axis=1))].tolist()}")


class _Tiles(ctypes.Structure):
    """ctypes mirror of weft::geo::VolumeTiles."""

    _fields_ = [("hash_keys", ctypes.c_void_p), ("hash_tile", ctypes.c_void_p), ("values", ctypes.c_void_p),
                ("hash_mask", ctypes.c_int32), ("shift", ctypes.c_int32)]


#: log2 of the region edge of the tiles of the lower, upper and root nodes
TILE_SHIFTS = (3, 7, 12)


class _Desc(ctypes.Structure):
    """ctypes mirror of weft::geo::VolumeData."""

    _fields_ = [
        ("type_code", ctypes.c_int32), ("value_size", ctypes.c_int32), ("num_leaves", ctypes.c_int32),
        ("hash_mask", ctypes.c_int32), ("voxel_count", ctypes.c_int64),
        ("hash_keys", ctypes.c_void_p), ("hash_leaf", ctypes.c_void_p), ("leaf_origin", ctypes.c_void_p),
        ("leaf_mask", ctypes.c_void_p), ("leaf_offset", ctypes.c_void_p), ("values", ctypes.c_void_p),
        ("background", ctypes.c_void_p),
        ("xf", ctypes.c_float * 9), ("inv_xf", ctypes.c_float * 9), ("tf", ctypes.c_float * 3),
        ("xd", ctypes.c_double * 9), ("inv_xd", ctypes.c_double * 9), ("td", ctypes.c_double * 3),
        ("tiles", _Tiles * 3),
    ]


@dataclass
class Layout:
    """Everything a volume's descriptor points into (kept alive by the Volume)."""

    dtype: object  # IR value type, or None for index grids
    origins: np.ndarray  # (L, 3) int32
    masks: np.ndarray  # (L, 8) uint64
    offsets: np.ndarray  # (L,) int64
    values: np.ndarray | None  # (L, 8, 8, 8, *comp)
    background: np.ndarray | None  # one value
    matrix: np.ndarray  # (3, 3) float64 index -> world
    translation: np.ndarray  # (3,) float64
    voxel_count: int = 0
    hash_keys: np.ndarray | None = None
    hash_leaf: np.ndarray | None = None
    voxel_size: np.ndarray | None = None  # as recorded in NanoVDB data (else derived from the matrix)
    #: per level (lower, upper, root): (region origins (n, 3), values (n, *comp)) of tiles unlike the background
    tiles: list | None = None
    _tile_tables: list | None = None

    @classmethod
    def make(cls, dtype, origins, masks, values, background, matrix, translation, offsets=None, voxel_count=None):
        origins = np.ascontiguousarray(origins, dtype=np.int32).reshape(-1, 3)
        masks = np.ascontiguousarray(masks, dtype=np.uint64).reshape(-1, 8)
        if offsets is None:
            offsets = leaf_offsets(masks)
            voxel_count = int(offsets[-1] + _popcount(masks[-1])) if len(masks) else 0
        lay = cls(dtype, origins, masks, np.ascontiguousarray(offsets, dtype=np.int64), values, background,
                  np.asarray(matrix, dtype=np.float64).reshape(3, 3), np.asarray(translation, dtype=np.float64),
                  int(voxel_count))
        lay.hash_keys, lay.hash_leaf = build_hash(origins)
        return lay

    def descriptor(self) -> _Desc:
        d = _Desc()
        d.type_code = type_code(self.dtype)
        d.value_size = 0 if self.values is None else self.background.nbytes
        d.num_leaves = len(self.origins)
        d.hash_mask = len(self.hash_keys) - 1
        d.voxel_count = self.voxel_count
        d.hash_keys, d.hash_leaf = self.hash_keys.ctypes.data, self.hash_leaf.ctypes.data
        d.leaf_origin, d.leaf_mask = self.origins.ctypes.data, self.masks.ctypes.data
        d.leaf_offset = self.offsets.ctypes.data
        d.values = None if self.values is None else self.values.ctypes.data
        d.background = None if self.background is None else self.background.ctypes.data
        inv = np.linalg.inv(self.matrix)
        d.xf[:] = self.matrix.astype(np.float32).ravel().tolist()
        d.inv_xf[:] = inv.astype(np.float32).ravel().tolist()
        d.tf[:] = self.translation.astype(np.float32).tolist()
        d.xd[:] = self.matrix.ravel().tolist()
        d.inv_xd[:] = inv.ravel().tolist()
        d.td[:] = self.translation.tolist()
        self._tile_tables = []
        for level, shift in enumerate(TILE_SHIFTS):
            t = d.tiles[level]
            t.shift, t.hash_mask = shift, -1
            if self.tiles is None or self.tiles[level] is None or not len(self.tiles[level][0]):
                continue
            origins, values = self.tiles[level]
            keys, index = build_hash(np.asarray(origins, np.int64), shift)
            values = np.ascontiguousarray(values, dtype=self.background.dtype)
            self._tile_tables.append((keys, index, values))  # kept alive with the layout
            t.hash_keys, t.hash_tile, t.values = keys.ctypes.data, index.ctypes.data, values.ctypes.data
            t.hash_mask = len(keys) - 1
        return d

    def voxels(self) -> np.ndarray:
        """The active voxels' coordinates (n, 3) int32, in index order."""
        if not len(self.origins):
            return np.zeros((0, 3), np.int32)
        bits = np.unpackbits(self.masks.view(np.uint8).reshape(len(self.origins), 64), axis=1, bitorder="little")
        leaf, n = np.nonzero(bits)
        local = np.stack([(n >> 6) & 7, (n >> 3) & 7, n & 7], axis=1)
        return (self.origins[leaf] + local).astype(np.int32)


def _popcount(words: np.ndarray) -> int:
    return int(np.unpackbits(np.ascontiguousarray(words).view(np.uint8)).sum())
