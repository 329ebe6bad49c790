"""Structural checks of a NanoVDB grid buffer before weft reads it: every record, node level, root tile table, child
reference and blind-data range must lie inside the grid, the node levels (root, upper, lower, leaves) must follow
each other without overlapping, and every child reference must point at the start of a node of the next level.
A failed check raises ``NanoVDBError("Invalid NanoVDB grid structure: ...")``; a well-formed grid of a kind weft does
not read is reported separately (``TreeInfo.unsupported``), after every grid of a file has been checked.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from ..errors import NanoVDBError

GRID_SIZE = 672
TREE_SIZE = 64
BLIND_META = 288
FLAG_BREADTH_FIRST = 1 << 5
FP_LEAF_HEADER = 96  # leaf header, minimum and quantum (float32), four uint16 statistics
#: quantised float grids: GridType -> bits per value (0: per leaf, FpN)
FP_TYPES = {13: 4, 14: 8, 15: 16, 16: 0}
FP_NAMES = {13: "Fp4", 14: "Fp8", 15: "Fp16", 16: "FpN"}
NOT_READ = {8: "Mask", 11: "Boolean", 12: "RGBA8", 21: "IndexMask", 22: "OnIndexMask", 23: "PointIndex"}


def bad(what: str) -> NanoVDBError:
    return NanoVDBError(f"Invalid NanoVDB grid structure: {what}")


@dataclass
class TreeInfo:
    grid_type: int
    leaf_starts: np.ndarray  # absolute byte offsets of the leaves in the buffer
    leaf_size: int  # fixed leaf size (0 for FpN, whose leaves vary)
    fp_bits: np.ndarray | None  # bits per value of each leaf of a quantised grid
    root: int  # absolute offset of the root node
    unsupported: str = ""  # why weft does not read this (well-formed) grid, or ""


def check_grid(blob: bytes, g: int, size: int, sizes_for) -> TreeInfo:
    """Check the grid at ``blob[g:g + size]``; ``sizes_for(grid_type)`` gives the node sizes of a grid type (an
    object with root_header, root_tile, upper_size, lower_size, upper_table, lower_table, table_entry, leaf_size)
    or None for a type whose layout weft does not know."""
    grid_type = struct.unpack_from("<I", blob, g + 636)[0]
    flags = struct.unpack_from("<I", blob, g + 20)[0]
    sizes = sizes_for(grid_type)
    if sizes is None:
        if grid_type in NOT_READ:
            return TreeInfo(grid_type, np.zeros(0, np.int64), 0, None, 0,
                            f"{NOT_READ[grid_type]} grids are not read by weft")
        raise bad(f"unknown grid type {grid_type}")
    tree, tree_size = g + GRID_SIZE, size - GRID_SIZE
    blind_offset, blind_count = struct.unpack_from("<qI", blob, g + 640)
    tree_end = tree_size
    if blind_count or blind_offset:
        if not GRID_SIZE + TREE_SIZE <= blind_offset <= size:
            raise bad(f"blind metadata offset {blind_offset} outside the grid")
        if blind_offset + blind_count * BLIND_META > size:
            raise bad(f"{blind_count} blind metadata records do not fit in the grid")
        tree_end = blind_offset - GRID_SIZE
    leaf_off, lower_off, upper_off, root_off = struct.unpack_from("<4Q", blob, tree)
    n_leaf, n_lower, n_upper = struct.unpack_from("<3I", blob, tree + 32)
    if not TREE_SIZE <= root_off < tree_end:
        raise bad("root node outside the tree")
    n_tiles = struct.unpack_from("<I", blob, tree + root_off + 24)[0]
    prev_end = root_off + sizes.root_header + n_tiles * sizes.root_tile
    if prev_end > tree_end:
        raise bad(f"root tile table of {n_tiles} tiles outside the tree")
    starts = {}
    for name, off, n, node_size in (("upper", upper_off, n_upper, sizes.upper_size),
                                    ("lower", lower_off, n_lower, sizes.lower_size)):
        if n:
            if off < prev_end or off + n * node_size > tree_end:
                raise bad(f"{name} node level [{off}, {off + n * node_size}) overlaps another region or leaves "
                          "the tree")
            prev_end = off + n * node_size
        starts[name] = off
    fp = FP_TYPES.get(grid_type)
    leaf_size = 0 if fp == 0 else sizes.leaf_size
    fp_bits = None
    if n_leaf:
        min_size = FP_LEAF_HEADER + 64 if fp == 0 else leaf_size
        if leaf_off < prev_end or leaf_off + n_leaf * min_size > tree_end:
            raise bad("leaf level overlaps another region or leaves the tree")
        if fp == 0:  # FpN: each leaf's bit width is in its flags
            leaf_starts = np.empty(n_leaf, np.int64)
            fp_bits = np.empty(n_leaf, np.int64)
            at = leaf_off
            for n in range(n_leaf):
                if at + FP_LEAF_HEADER > tree_end:
                    raise bad("FpN leaf header outside the tree")
                bits = 1 << (blob[tree + at + 15] >> 5)
                leaf_starts[n], fp_bits[n] = at, bits
                at += FP_LEAF_HEADER + 64 * bits
                if at > tree_end:
                    raise bad(f"FpN leaf {n} ({bits} bits per value) truncated")
        else:
            leaf_starts = leaf_off + np.arange(n_leaf, dtype=np.int64) * leaf_size
            if fp:
                fp_bits = np.full(n_leaf, fp, np.int64)
    else:
        leaf_starts = np.zeros(0, np.int64)
    # child references: root -> upper, upper -> lower, lower -> leaves, each at the start of a node
    root = tree + root_off
    if n_tiles:
        tiles = np.frombuffer(blob, np.uint8, count=n_tiles * sizes.root_tile, offset=root + sizes.root_header)
        children = tiles.reshape(n_tiles, sizes.root_tile)[:, 8:16].copy().view(np.int64).reshape(-1)
        _check_refs(children[children != 0] + root_off, upper_off + np.arange(n_upper) * sizes.upper_size, "root")
    _check_level(blob, tree, upper_off, n_upper, sizes.upper_size, sizes.upper_table, sizes.table_entry, 5,
                 lower_off + np.arange(n_lower) * sizes.lower_size, "upper")
    _check_level(blob, tree, lower_off, n_lower, sizes.lower_size, sizes.lower_table, sizes.table_entry, 4,
                 leaf_starts, "lower")
    unsupported = "" if flags & FLAG_BREADTH_FIRST else "the nodes are not stored breadth-first"
    return TreeInfo(grid_type, tree + leaf_starts, leaf_size, fp_bits, root, unsupported)


def _check_refs(refs: np.ndarray, valid: np.ndarray, level: str) -> None:
    if len(refs) and not np.isin(refs, valid).all():
        raise bad(f"a {level} node's child reference is not the start of a node of the next level")


def _check_level(blob, tree, off, n, node_size, table_at, entry, log2, child_starts, level) -> None:
    slots = 1 << (3 * log2)
    mask_bytes = slots // 8
    for node in range(n):
        at = tree + off + node * node_size
        mask = np.frombuffer(blob, np.uint8, count=mask_bytes, offset=at + 32 + mask_bytes)
        used = np.nonzero(np.unpackbits(mask, bitorder="little"))[0]
        if not len(used):
            continue
        table = np.frombuffer(blob, np.uint8, count=slots * entry, offset=at + table_at).reshape(slots, entry)
        refs = table[used, :8].copy().view(np.int64).reshape(-1) + (off + node * node_size)
        _check_refs(refs, child_starts, level)
