"""Writing a weft volume as one NanoVDB grid buffer (version 32.3, breadth-first node order), for ``Volume.array()``
and ``save_to_nvdb``.

Layout written: grid record (672 bytes), tree record (64), root (header + one 32-byte-aligned tile per upper node,
sorted by key), upper nodes (32^3 tables), lower nodes (16^3 tables), leaves (80-byte header, then statistics and the
512 values aligned to 32 bytes; index leaves: first index and 9-bit prefix counts). Non-child table entries are
inactive tiles holding the background. Statistics are written as zeros (the grid's flags do not claim them).
``tree_order`` sorts leaves in the order this writes them, so allocated volumes index voxels as a written and re-read
grid does.
"""

from __future__ import annotations

import struct

import numpy as np

from .nanovdb import GRID_SIZE, INDEX_TYPES, LEAF_HEADER, MAGIC_GRID, NAME_SIZE, TREE_SIZE, TYPE_CODES
from .volume_layout import Layout, value_layout

VERSION = (32 << 21) | (3 << 10) | 3
FLAG_HAS_BBOX, FLAG_BREADTH_FIRST = 2, 32
GRID_CLASS_UNKNOWN, GRID_CLASS_INDEX = 0, 8
_ON_INDEX = next(k for k, v in INDEX_TYPES.items() if v == "OnIndex")


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def _u32(v: np.ndarray) -> np.ndarray:
    return v.astype(np.int64) & 0xFFFFFFFF


def root_keys(origins: np.ndarray) -> np.ndarray:
    """NanoVDB's root key of the upper node holding each point (unsigned 20-bit coordinates, x major)."""
    u = _u32(origins) >> 12
    return (u[:, 0] << 42) | (u[:, 1] << 21) | u[:, 2]


def _upper_slot(o: np.ndarray) -> np.ndarray:
    u = (_u32(o) & 4095) >> 7
    return (u[:, 0] << 10) | (u[:, 1] << 5) | u[:, 2]


def _lower_slot(o: np.ndarray) -> np.ndarray:
    u = (_u32(o) & 127) >> 3
    return (u[:, 0] << 8) | (u[:, 1] << 4) | u[:, 2]


def tree_order(origins: np.ndarray) -> np.ndarray:
    """The order of leaves in a breadth-first NanoVDB tree (root key, then upper and lower table slots)."""
    if not len(origins):
        return np.zeros(0, np.int64)
    return np.lexsort((_lower_slot(origins), _upper_slot(origins), root_keys(origins)))


class NodeSizes:
    """Byte sizes and offsets of one value type's nodes (alignment of the scalar, 4- or 8-byte statistics)."""

    def __init__(self, value_size: int, scalar_size: int):
        a = max(scalar_size, 4) if value_size else 8
        vs = value_size if value_size else 8  # index grids hold uint64 "values"
        s = 8 if (scalar_size == 8 or not value_size) else 4
        self.vs, self.value_size = vs, value_size
        off = _align(28, a)
        self.root_bg = off
        off = _align(off + 3 * vs, s) + 2 * s
        self.root_header = _align(off, 32)
        self.root_tile = _align(_align(20, a) + vs, 32)
        self.root_tile_value = _align(20, a)
        self.table_entry = _align(max(vs, 8), 8)

        def internal(log2: int) -> tuple[int, int]:
            n = 1 << (3 * log2)
            head = 32 + 2 * (n // 8)
            head = _align(_align(head, a) + 2 * vs, s) + 2 * s
            head = _align(head, 32)
            return head, head + n * self.table_entry

        self.upper_table, self.upper_size = internal(5)
        self.lower_table, self.lower_size = internal(4)
        if value_size:
            head = _align(_align(LEAF_HEADER, a) + 2 * vs, s) + 2 * s
            self.leaf_values = _align(head, 32)
            self.leaf_size = self.leaf_values + 512 * vs
        else:
            self.leaf_values = 0
            self.leaf_size = LEAF_HEADER + 16


def _bboxes(lay: Layout) -> np.ndarray:
    """Per leaf, the min and max of its active voxels (the leaf's extent when none is active), (L, 2, 3)."""
    n = len(lay.origins)
    bits = np.unpackbits(lay.masks.view(np.uint8).reshape(n, 64), axis=1, bitorder="little").reshape(n, 8, 8, 8)
    out = np.empty((n, 2, 3), np.int64)
    for axis in range(3):
        other = tuple(a for a in (1, 2, 3) if a != axis + 1)
        present = bits.any(axis=other)  # (n, 8)
        idx = np.arange(8)
        lo = np.where(present, idx, 8).min(axis=1)
        hi = np.where(present, idx, -1).max(axis=1)
        empty = hi < 0
        lo[empty], hi[empty] = 0, 7
        out[:, 0, axis] = lay.origins[:, axis] + lo
        out[:, 1, axis] = lay.origins[:, axis] + hi
    return out


def _group(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the first element of each run of equal keys (keys sorted), and each element's run number."""
    starts = np.concatenate([[0], np.nonzero(np.diff(keys))[0] + 1]) if len(keys) else np.zeros(0, np.int64)
    run = np.zeros(len(keys), np.int64)
    if len(keys):
        run[starts[1:]] = 1
        run = np.cumsum(run)
    return starts, run


def write_grid(lay: Layout, name: str = "") -> bytes:
    """One NanoVDB grid buffer holding ``lay``'s leaves, background, transform (and for index grids, indices)."""
    index_grid = lay.dtype is None
    if index_grid:
        np_dtype, shape, grid_type = np.dtype(np.uint64), (), _ON_INDEX
    else:
        if lay.dtype not in TYPE_CODES:
            raise NotImplementedError(f"Volume.array: no NanoVDB grid type for values of type {lay.dtype}")
        np_dtype, shape = value_layout(lay.dtype)
        grid_type = TYPE_CODES[lay.dtype]
    value_size = 0 if index_grid else np_dtype.itemsize * int(np.prod(shape, dtype=np.int64))
    sz = NodeSizes(value_size, np_dtype.itemsize)
    order = tree_order(lay.origins)
    origins = lay.origins[order].astype(np.int64)
    masks = lay.masks[order]
    n_leaf = len(origins)
    boxes = _bboxes(Layout(lay.dtype, origins.astype(np.int32), masks, lay.offsets[order], None, None,
                           lay.matrix, lay.translation))
    lower_key = np.floor_divide(origins, 128)
    upper_key = np.floor_divide(origins, 4096)
    lower_start, lower_of_leaf = _group(_pack(lower_key))
    upper_start, upper_of_lower = _group(_pack(upper_key[lower_start]))
    n_lower, n_upper = len(lower_start), len(upper_start)

    root_off = TREE_SIZE
    upper_off = root_off + sz.root_header + n_upper * sz.root_tile
    lower_off = upper_off + n_upper * sz.upper_size
    leaf_off = lower_off + n_lower * sz.lower_size
    tree_size = leaf_off + n_leaf * sz.leaf_size
    grid_size = GRID_SIZE + tree_size
    buf = bytearray(grid_size)
    tree = GRID_SIZE

    bg = np.zeros((), np.uint64) if index_grid else np.asarray(lay.background, dtype=np_dtype).reshape(shape)
    bg_bytes = bg.tobytes()
    voxel_count = lay.voxel_count

    def bbox_of(rows: np.ndarray) -> tuple:
        if not len(rows):
            return (0, 0, 0, -1, -1, -1)
        return (*rows[:, 0].min(axis=0).tolist(), *rows[:, 1].max(axis=0).tolist())

    # ---- grid record
    struct.pack_into("<QQIIIIQ", buf, 0, MAGIC_GRID[0], 0xFFFFFFFFFFFFFFFF, VERSION, FLAG_HAS_BBOX |
                     FLAG_BREADTH_FIRST, 0, 1, grid_size)
    raw_name = name.encode("ascii", errors="replace")[: NAME_SIZE - 1]
    buf[40:40 + len(raw_name)] = raw_name
    m = lay.matrix
    inv = np.linalg.inv(m)
    struct.pack_into("<9f9f3ff", buf, 296, *m.ravel(), *inv.ravel(), *lay.translation, 1.0)
    struct.pack_into("<9d9d3dd", buf, 296 + 88, *m.ravel(), *inv.ravel(), *lay.translation, 1.0)
    box = bbox_of(boxes)
    corners = np.array([[x, y, z] for x in (box[0], box[3] + 1) for y in (box[1], box[4] + 1)
                        for z in (box[2], box[5] + 1)], np.float64)
    world = corners @ m.T + lay.translation
    struct.pack_into("<6d", buf, 560, *world.min(axis=0), *world.max(axis=0))
    voxel_size = lay.voxel_size if lay.voxel_size is not None else m @ np.ones(3)
    struct.pack_into("<3d", buf, 608, *voxel_size)
    struct.pack_into("<IIqIIQQ", buf, 632, GRID_CLASS_INDEX if index_grid else GRID_CLASS_UNKNOWN, grid_type, 0, 0,
                     0, voxel_count + 1 if index_grid else 0, 0)

    # ---- tree record
    struct.pack_into("<4Q3I3IQ", buf, tree, leaf_off, lower_off, upper_off, root_off, n_leaf, n_lower, n_upper,
                     0, 0, 0, voxel_count)

    # ---- root: header and one tile per upper node (keys ascending = upper nodes in order)
    root = tree + root_off
    struct.pack_into("<6iI", buf, root, *box, n_upper)
    buf[root + sz.root_bg:root + sz.root_bg + len(bg_bytes)] = bg_bytes
    upper_origins = np.floor_divide(origins[lower_start][upper_start], 4096) * 4096
    keys = root_keys(upper_origins)
    for u in range(n_upper):
        tile = root + sz.root_header + u * sz.root_tile
        child = (upper_off + u * sz.upper_size) - root_off
        struct.pack_into("<QqI", buf, tile, int(keys[u]), child, 0)
        buf[tile + sz.root_tile_value:tile + sz.root_tile_value + len(bg_bytes)] = bg_bytes

    # ---- internal nodes
    lower_origins = np.floor_divide(origins[lower_start], 128) * 128
    lower_boxes = [boxes[lower_of_leaf == n] for n in range(n_lower)]
    _internal(buf, tree + upper_off, sz.upper_size, sz.upper_table, sz.table_entry, 5, upper_origins,
              [np.concatenate([lower_boxes[n] for n in np.nonzero(upper_of_lower == u)[0]]) for u in range(n_upper)],
              upper_of_lower, _upper_slot(lower_origins), tree + lower_off, sz.lower_size, bg_bytes, bbox_of)
    _internal(buf, tree + lower_off, sz.lower_size, sz.lower_table, sz.table_entry, 4, lower_origins, lower_boxes,
              lower_of_leaf, _lower_slot(origins), tree + leaf_off, sz.leaf_size, bg_bytes, bbox_of)

    # ---- leaves
    leaves = np.frombuffer(buf, dtype=np.uint8, count=n_leaf * sz.leaf_size, offset=tree + leaf_off)
    leaves = leaves.reshape(n_leaf, sz.leaf_size)
    head = np.zeros((n_leaf, 16), np.uint8)
    head[:, :12] = boxes[:, 0].astype(np.int32).view(np.uint8).reshape(n_leaf, 12)
    head[:, 12:15] = (boxes[:, 1] - boxes[:, 0]).astype(np.uint8)
    head[:, 15] = FLAG_HAS_BBOX
    leaves[:, :16] = head
    leaves[:, 16:80] = masks.view(np.uint8).reshape(n_leaf, 64)
    if index_grid:
        counts = np.unpackbits(masks.view(np.uint8).reshape(n_leaf, 8, 8), axis=2).sum(axis=2).astype(np.uint64)
        cum = np.cumsum(counts, axis=1)
        prefix = np.zeros(n_leaf, np.uint64)
        for k in range(1, 8):
            prefix |= cum[:, k - 1] << np.uint64(9 * (k - 1))
        first = (lay.offsets[order] + 1).astype(np.uint64)
        leaves[:, 80:96] = np.stack([first, prefix], axis=1).view(np.uint8).reshape(n_leaf, 16)
    else:
        vals = np.ascontiguousarray(lay.values[order], dtype=np_dtype).view(np.uint8).reshape(n_leaf, -1)
        leaves[:, sz.leaf_values:] = vals
    return bytes(buf)


def _pack(keys: np.ndarray) -> np.ndarray:
    k = keys.astype(np.int64) & 0x1FFFFF
    return (k[:, 0] << 42) | (k[:, 1] << 21) | k[:, 2]


def _internal(buf, start, size, table_at, entry, log2, node_origins, node_boxes, parent_of_child, child_slot,
              child_start, child_size, bg_bytes, bbox_of) -> None:
    """Write internal nodes: bbox, flags, value mask (empty), child mask, and the table (child offsets, background
    tiles)."""
    n_slots = 1 << (3 * log2)
    mask_bytes = n_slots // 8
    for node in range(len(node_origins)):
        at = start + node * size
        struct.pack_into("<6iQ", buf, at, *bbox_of(node_boxes[node]), FLAG_HAS_BBOX)
        table = np.frombuffer(buf, dtype=np.uint8, count=n_slots * entry, offset=at + table_at)
        table = table.reshape(n_slots, entry)
        table[:, :len(bg_bytes)] = np.frombuffer(bg_bytes, np.uint8)
        children = np.nonzero(parent_of_child == node)[0]
        slots = child_slot[children]
        child_mask = np.zeros(n_slots, np.uint8)
        child_mask[slots] = 1
        packed = np.packbits(child_mask, bitorder="little")
        buf[at + 32 + mask_bytes:at + 32 + 2 * mask_bytes] = packed.tobytes()
        offsets = (child_start + children.astype(np.int64) * child_size) - at
        table[slots, :8] = offsets.astype(np.int64).view(np.uint8).reshape(-1, 8)
        if entry > 8:
            table[slots, 8:] = 0
