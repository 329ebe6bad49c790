"""Reading and writing NanoVDB data (``.nvdb`` files and raw grid buffers) for ``wp.Volume``.

A ``.nvdb`` file is a 16-byte header (magic ``NanoVDB0``/``NanoVDB2``, version 32.x, grid count, codec), one
176-byte metadata record plus name per grid, then each grid's buffer (raw, or as a 64-bit size followed by a zlib or
blosc stream). A grid buffer holds a 672-byte grid record (name, index-to-world map, type, blind metadata), a 64-byte
tree record (offsets and counts of the leaf, lower, upper and root levels) and the nodes. weft reads the leaves
(8x8x8 voxels: origin, active mask, values or, for index grids, the first voxel index), the map and the blind data
(``Volume.feature_array``) into its own layout (``volume_layout.py``), keeping the grid bytes for ``Volume.array()``
and ``save_to_nvdb``.

Read: value grids of float, double, half, int16, int32, int64, uint8, uint32, Vec3f, Vec3d, Vec4f, Vec4d, Vec3u8,
Vec3u16; index grids (OnIndex: active voxels indexed; Index: every leaf voxel indexed). Not read: constant-value tiles
of the internal and root levels (regions without leaves sample as the background), bit-packed grids (Mask, Boolean),
quantised grids (Fp4/Fp8/Fp16/FpN), IndexMask/OnIndexMask, PointIndex and RGBA8 grids.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

import numpy as np

from ..errors import NanoVDBError
from ..ir import types as T
from .nanovdb_check import FP_LEAF_HEADER, FP_NAMES, FP_TYPES, check_grid
from .volume_layout import LEAF, Layout

MAGIC_FILE = (0x304244566F6E614E, 0x324244566F6E614E)  # "NanoVDB0", "NanoVDB2"
MAGIC_GRID = (0x304244566F6E614E, 0x314244566F6E614E)  # "NanoVDB0", "NanoVDB1"
GRID_SIZE = 672
TREE_SIZE = 64
LEAF_HEADER = 80  # bbox min (12), bbox extent (3), flags (1), active mask (64)
FILE_META = 176
NAME_SIZE = 256
BLIND_META = 288
CODECS = {"none": 0, "zip": 1, "blosc": 2}

_V3F, _V3D = T.VectorType(3, T.FLOAT32), T.VectorType(3, T.FLOAT64)
#: NanoVDB GridType -> (value type, type name)
GRID_TYPES = {1: (T.FLOAT32, "float"), 2: (T.FLOAT64, "double"), 3: (T.INT16, "int16"), 4: (T.INT32, "int32"),
              5: (T.INT64, "int64"), 6: (_V3F, "Vec3f"), 7: (_V3D, "Vec3d"), 9: (T.FLOAT16, "Half"),
              10: (T.UINT32, "uint32"), 17: (T.VectorType(4, T.FLOAT32), "Vec4f"),
              18: (T.VectorType(4, T.FLOAT64), "Vec4d"), 24: (T.VectorType(3, T.UINT8), "Vec3u8"),
              25: (T.VectorType(3, T.UINT16), "Vec3u16"), 26: (T.UINT8, "uint8")}
INDEX_TYPES = {19: "Index", 20: "OnIndex"}
#: GridType values of the value types weft writes (NanoVDB's enumeration)
TYPE_CODES = {v[0]: k for k, v in GRID_TYPES.items()}


def _bad(what: str) -> NanoVDBError:
    return NanoVDBError(f"Invalid NanoVDB grid structure: {what}")


@dataclass
class Feature:
    """One blind-data array of a grid (``Volume.feature_array``)."""

    info: tuple
    data: np.ndarray


@dataclass
class GridSource:
    """Where a Volume's grid came from: the bytes of all grids of its NanoVDB data, and this grid's place in them."""

    blob: bytes
    offset: int
    size: int
    index: int
    count: int
    name: str
    type_str: str
    features: list = field(default_factory=list)

    def next_volume(self, cls):
        nxt = self.offset + self.size
        if self.index + 1 >= self.count or nxt >= len(self.blob):
            return None
        return read_buffer(self.blob, nxt, cls)


def _name(raw: bytes, where: str) -> str:
    end = raw.find(b"\0")
    if end < 0:
        raise _bad(f"the {where} name is not null-terminated")
    return raw[:end].decode("ascii", errors="replace")


def decode_file(data: bytes) -> bytes:
    """The concatenated grid buffers of ``.nvdb`` file data (decompressed)."""
    if len(data) < 16:
        raise NanoVDBError("NanoVDB signature not found (data shorter than a file header)")
    magic, version, count, codec = struct.unpack_from("<QIHH", data, 0)
    if magic not in MAGIC_FILE:
        raise NanoVDBError("NanoVDB signature not found")
    if version >> 21 != 32:
        raise NanoVDBError(f"Unsupported NanoVDB version {version >> 21}.{(version >> 10) & 2047}.{version & 1023} "
                           "(weft reads major version 32)")
    offset, sizes = 16, []
    for _ in range(count):
        if offset + FILE_META > len(data):
            raise NanoVDBError("NanoVDB file truncated in its grid metadata")
        sizes.append(struct.unpack_from("<Q", data, offset + 8)[0])
        offset += FILE_META + struct.unpack_from("<I", data, offset + 136)[0]
    end = offset + sum(sizes)
    if end > len(data):
        raise NanoVDBError("NanoVDB file truncated in its grid data")
    if codec == 0:
        return bytes(data[offset:end])
    if codec not in (1, 2):
        raise NanoVDBError(f"Unsupported codec code: {codec}")
    if codec == 2:
        try:
            import blosc
        except ImportError as exc:
            raise NanoVDBError(f"NanoVDB data is compressed with blosc, but the blosc module is missing: {exc}") \
                from exc
        decompress = blosc.decompress
    else:
        decompress = zlib.decompress
    out = bytearray()
    while offset < end:
        chunk = struct.unpack_from("<Q", data, offset)[0]
        offset += 8
        out += decompress(bytes(data[offset:offset + chunk]))
        offset += chunk
    return bytes(out)


def load(cls, file_or_buffer):
    """``Volume.load_from_nvdb``: the first grid of a file (path, binary stream, bytes or uint8 array). Every grid
    of the file is checked first; then any grid weft does not read is reported."""
    if isinstance(file_or_buffer, (str,)) or hasattr(file_or_buffer, "__fspath__"):
        with open(file_or_buffer, "rb") as f:
            data = f.read()
    elif hasattr(file_or_buffer, "read"):
        data = file_or_buffer.read()
    elif hasattr(file_or_buffer, "numpy"):
        data = file_or_buffer.numpy().tobytes()
    else:
        data = bytes(file_or_buffer)
    blob = decode_file(data)
    if len(blob) < 8 or struct.unpack_from("<Q", blob, 0)[0] not in MAGIC_GRID:
        raise NanoVDBError("NanoVDB signature not found on grid!")
    offset, infos = 0, []
    while True:
        size = _check_grid_header(blob, offset)
        if size % 32:
            raise _bad(f"grid size {size} is not a multiple of 32 (grids in a file are 32-byte aligned)")
        infos.append(check_grid(blob, offset, size, node_sizes))
        count = struct.unpack_from("<I", blob, offset + 28)[0]
        index = struct.unpack_from("<I", blob, offset + 24)[0]
        offset += size
        if index + 1 >= count or offset >= len(blob):
            break
    for info in infos:
        if info.unsupported:
            raise NanoVDBError(f"Unsupported NanoVDB tree layout: {info.unsupported}")
    return read_buffer(blob, 0, cls)


def _check_grid_header(blob: bytes, offset: int) -> int:
    if offset + GRID_SIZE + TREE_SIZE > len(blob):
        raise _bad("buffer smaller than the grid and tree records")
    if struct.unpack_from("<Q", blob, offset)[0] not in MAGIC_GRID:
        raise NanoVDBError("NanoVDB signature not found on grid!")
    size = struct.unpack_from("<Q", blob, offset + 32)[0]
    if size < GRID_SIZE + TREE_SIZE or offset + size > len(blob):
        raise _bad(f"grid size {size} outside the buffer ({len(blob) - offset} bytes)")
    return size


def node_sizes(grid_type: int):
    """Node sizes of a grid type (None for a type whose layout weft does not know)."""
    from .nanovdb_write import NodeSizes

    if grid_type in GRID_TYPES:
        np_dtype, _ = _np_layout(GRID_TYPES[grid_type][0])
        return NodeSizes(_value_nbytes(GRID_TYPES[grid_type][0]), np_dtype.itemsize)
    if grid_type in INDEX_TYPES:
        return NodeSizes(0, 8)
    if grid_type in FP_TYPES:
        sizes = NodeSizes(4, 4)
        sizes.leaf_size = FP_LEAF_HEADER + 64 * FP_TYPES[grid_type]
        return sizes
    return None


def read_buffer(blob: bytes, offset: int, cls=None):
    """The Volume of the grid at ``offset`` of ``blob`` (raw grid buffers, one after another)."""
    if cls is None:
        from .volume import Volume as cls
    size = _check_grid_header(blob, offset)
    info = check_grid(blob, offset, size, node_sizes)
    if info.unsupported:
        raise NanoVDBError(f"Unsupported NanoVDB tree layout: {info.unsupported}")
    layout, source = _parse(blob, offset, size, info)
    vol = cls._from_layout(layout, source.name)
    vol._nvdb = source
    return vol


def _parse(blob: bytes, g: int, size: int, info):
    grid = memoryview(blob)[g:g + size]
    index, count = struct.unpack_from("<II", grid, 24)
    name = _name(bytes(grid[40:40 + NAME_SIZE]), "grid")
    mat = np.array(struct.unpack_from("<9d", grid, 296 + 88), dtype=np.float64).reshape(3, 3)
    vec = np.array(struct.unpack_from("<3d", grid, 296 + 88 + 144), dtype=np.float64)
    if not mat.any():  # grids written with only the float map
        mat = np.array(struct.unpack_from("<9f", grid, 296), dtype=np.float64).reshape(3, 3)
        vec = np.array(struct.unpack_from("<3f", grid, 296 + 72), dtype=np.float64)
    if not np.isfinite(mat).all() or abs(np.linalg.det(mat)) < 1e-300:
        mat = np.eye(3)  # a grid without a usable map (hand-made buffers): index space is world space
    grid_type = info.grid_type
    blind_offset, blind_count = struct.unpack_from("<qI", grid, 640)
    data1 = struct.unpack_from("<Q", grid, 656)[0]
    if grid_type in GRID_TYPES:
        dtype, type_str = GRID_TYPES[grid_type]
    elif grid_type in INDEX_TYPES:
        dtype, type_str = None, INDEX_TYPES[grid_type]
    else:
        dtype, type_str = T.FLOAT32, FP_NAMES[grid_type]
    starts = info.leaf_starts
    n_leaf = len(starts)
    if n_leaf and info.leaf_size:  # fixed-size leaves, one after another
        rows = np.frombuffer(blob, np.uint8, count=n_leaf * info.leaf_size, offset=int(starts[0]))
        rows = rows.reshape(n_leaf, info.leaf_size)
    else:
        rows = [np.frombuffer(blob, np.uint8, count=FP_LEAF_HEADER, offset=int(s)) for s in starts]
        rows = np.stack(rows) if n_leaf else np.zeros((0, FP_LEAF_HEADER), np.uint8)
    heads = rows[:, :80]
    origins = heads[:, :12].copy().view(np.int32).reshape(n_leaf, 3) & ~np.int32(LEAF - 1)
    masks = heads[:, 16:80].copy().view(np.uint64).reshape(n_leaf, 8)
    values, offsets, background = None, None, None
    if dtype is None:
        first = rows[:, 80:88].copy().view(np.uint64).reshape(n_leaf).astype(np.int64)
        offsets = first - 1  # index 0 is the background value
        if grid_type == 19:  # Index grids index every voxel of a leaf
            masks = np.full_like(masks, np.uint64(0xFFFFFFFFFFFFFFFF))
    else:
        np_dtype, shape = _np_layout(dtype)
        if info.fp_bits is not None:
            values = np.stack([_fp_leaf(blob, int(s), int(b)) for s, b in zip(starts, info.fp_bits)]) if n_leaf \
                else np.zeros((0, 512), np.float32)
        else:
            nbytes = _value_nbytes(dtype)
            at = info.leaf_size - 512 * nbytes
            values = rows[:, at:].copy().view(np_dtype)
        values = np.ascontiguousarray(values).reshape(n_leaf, LEAF, LEAF, LEAF, *shape)
        sizes = node_sizes(grid_type)
        background = np.frombuffer(blob, dtype=np_dtype, count=max(1, int(np.prod(shape))),
                                   offset=info.root + sizes.root_bg).reshape(shape).copy()
    voxel_count = int(data1 - 1) if dtype is None and n_leaf else None
    layout = Layout.make(dtype, origins, masks, values, background, mat, vec, offsets=offsets,
                         voxel_count=voxel_count)
    layout.voxel_size = np.array(struct.unpack_from("<3d", grid, 608), dtype=np.float64)
    if dtype is not None:
        layout.tiles = _tiles(blob, g, node_sizes(grid_type), background)
    features = _blind(blob, g, size, blind_offset, blind_count)
    return layout, GridSource(blob, g, size, index, count, name, type_str, features)


def _slot_offsets(slots: np.ndarray, log2: int, child_edge: int) -> np.ndarray:
    """Index-space offsets of internal-node table slots (x major) from the node's origin."""
    dim = 1 << log2
    return np.stack([slots >> (2 * log2), (slots >> log2) & (dim - 1), slots & (dim - 1)], axis=1) * child_edge


def _tiles(blob: bytes, g: int, sizes, background: np.ndarray) -> list:
    """The constant tiles of the root, upper and lower nodes whose value is not the background, as (origins,
    values) per level (lower: 8^3 regions, upper: 128^3, root: 4096^3). Node origins come from the parents (root
    keys, then table slots)."""
    tree = g + GRID_SIZE
    _, lower_off, upper_off, root_off = struct.unpack_from("<4Q", blob, tree)
    _, n_lower, n_upper = struct.unpack_from("<3I", blob, tree + 32)
    root = tree + root_off
    np_dtype = background.dtype
    comps = max(1, background.size)
    vbytes = np_dtype.itemsize * comps
    levels: list = [([], []), ([], []), ([], [])]

    def differs(values: np.ndarray) -> np.ndarray:
        return (values.reshape(len(values), comps) != background.reshape(1, comps)).any(axis=1)

    uppers = []
    for t in range(struct.unpack_from("<I", blob, root + 24)[0]):
        at = root + sizes.root_header + t * sizes.root_tile
        key, child = struct.unpack_from("<Qq", blob, at)
        origin = np.array([(key >> 42) & 0xFFFFF, (key >> 21) & 0xFFFFF, key & 0xFFFFF], np.int64) << 12
        origin = np.where(origin >= 1 << 31, origin - (1 << 32), origin)
        if child:
            uppers.append(((root_off + child - upper_off) // sizes.upper_size, origin))
            continue
        value = np.frombuffer(blob, np_dtype, count=comps, offset=at + sizes.root_tile_value)
        if differs(value[None])[0]:
            levels[2][0].append(origin[None])
            levels[2][1].append(value[None])

    def walk(nodes, off, node_size, table_at, log2, edge, level, child_off, child_size):
        children = []
        slots_n = 1 << (3 * log2)
        for index, origin in nodes:
            at = tree + off + index * node_size
            mask = np.frombuffer(blob, np.uint8, count=slots_n // 8, offset=at + 32 + slots_n // 8)
            child = np.unpackbits(mask, bitorder="little").astype(bool)
            table = np.frombuffer(blob, np.uint8, count=slots_n * sizes.table_entry, offset=at + table_at)
            table = table.reshape(slots_n, sizes.table_entry)
            values = table[:, :vbytes].copy().view(np_dtype).reshape(slots_n, comps)
            keep = ~child & differs(values)
            if keep.any():
                slots = np.nonzero(keep)[0]
                levels[level][0].append(origin + _slot_offsets(slots, log2, edge))
                levels[level][1].append(values[slots])
            if child_off is not None and child.any():
                slots = np.nonzero(child)[0]
                refs = table[slots, :8].copy().view(np.int64).reshape(-1) + off + index * node_size
                for idx, o in zip((refs - child_off) // child_size, origin + _slot_offsets(slots, log2, edge)):
                    children.append((int(idx), o))
        return children

    lowers = walk(uppers, upper_off, sizes.upper_size, sizes.upper_table, 5, 128, 1, lower_off, sizes.lower_size) \
        if n_upper else []
    if n_lower:
        walk(lowers, lower_off, sizes.lower_size, sizes.lower_table, 4, 8, 0, None, 0)
    out = []
    for origins, values in levels:
        if not origins:
            out.append(None)
            continue
        out.append((np.concatenate(origins).astype(np.int64),
                    np.concatenate(values).reshape(-1, *background.shape).astype(np_dtype)))
    return out


def _fp_leaf(blob: bytes, start: int, bits: int) -> np.ndarray:
    """The 512 values of a quantised leaf: minimum + code * quantum, codes packed little-endian, ``bits`` each."""
    minimum, quantum = struct.unpack_from("<ff", blob, start + 80)
    raw = np.frombuffer(blob, np.uint8, count=64 * bits, offset=start + FP_LEAF_HEADER)
    code = np.unpackbits(raw, bitorder="little").reshape(512, bits) @ (1 << np.arange(bits, dtype=np.int64))
    return (np.float32(minimum) + code.astype(np.float32) * np.float32(quantum)).astype(np.float32)


def _blind(blob: bytes, g: int, size: int, offset: int, count: int) -> list:
    from .volume import FeatureArrayInfo

    out = []
    for n in range(count):
        meta = g + offset + n * BLIND_META
        if meta + BLIND_META > g + size:
            raise _bad("blind metadata outside the grid")
        data_offset, value_count, value_size, _semantic, _cls, data_type = struct.unpack_from("<qQIIII", blob, meta)
        name = _name(bytes(blob[meta + 32:meta + 32 + NAME_SIZE]), "feature")
        start, nbytes = meta + data_offset, value_count * value_size
        if start < g or start + nbytes > g + size:
            raise _bad(f"feature array '{name}' outside the grid")
        data = np.frombuffer(blob, dtype=np.uint8, count=nbytes, offset=start)
        type_str = GRID_TYPES.get(data_type, (None, INDEX_TYPES.get(data_type, "unknown")))[1]
        out.append(_feature(FeatureArrayInfo(name, 0, value_size, value_count, type_str), data, data_type))
    return out


def _feature(info, data: np.ndarray, data_type: int):
    from .volume import FeatureArrayInfo

    dtype = GRID_TYPES.get(data_type, (None,))[0]
    if dtype is not None and _value_nbytes(dtype) == info.value_size:
        np_dtype, shape = _np_layout(dtype)
        data = data.view(np_dtype).reshape(-1, *shape) if shape else data.view(np_dtype)
    return Feature(FeatureArrayInfo(info.name, int(data.ctypes.data), info.value_size, info.value_count,
                                    info.type_str), data)


def _np_layout(dtype):
    from .volume_layout import value_layout

    return value_layout(dtype)


def _value_nbytes(dtype) -> int:
    np_dtype, shape = _np_layout(dtype)
    return np_dtype.itemsize * int(np.prod(shape, dtype=np.int64))


# ------------------------------------------------------------------------------------------------ writing
def grid_bytes(volume) -> bytes:
    """The NanoVDB buffer of a volume: its grid (a grid loaded from NanoVDB data returns its own bytes followed by
    the grids after it in that data, as Warp's Volume.array() does)."""
    lay = volume._live()
    src = volume._nvdb
    if src is not None:
        return bytes(src.blob[src.offset:])
    from .nanovdb_write import write_grid

    return write_grid(lay, volume._name)


def save(volume, path, codec: str = "none") -> None:
    """Write ``volume``'s grid, and the grids after it in its NanoVDB data, as a ``.nvdb`` file."""
    if codec not in CODECS:
        raise ValueError(f"Volume.save_to_nvdb: argument 'codec' must be one of {', '.join(CODECS)}, got {codec!r}")
    src = volume._nvdb
    grids = []
    if src is None:
        grids.append(grid_bytes(volume))
    else:
        if src.index != 0:
            raise NanoVDBError("Volume.save_to_nvdb: only the first grid of a NanoVDB buffer can be saved (it saves "
                               "the grids that follow it too)")
        offset = src.offset
        for _ in range(src.count):
            size = struct.unpack_from("<Q", src.blob, offset + 32)[0]
            grids.append(bytes(src.blob[offset:offset + size]))
            offset += size
    if codec == "blosc":
        import blosc

        compress = blosc.compress
    else:
        compress = zlib.compress
    payloads = []
    for grid in grids:
        if codec == "none":
            payloads.append(grid)
        else:
            packed = compress(grid)
            payloads.append(struct.pack("<Q", len(packed)) + packed)
    version = struct.unpack_from("<I", grids[0], 16)[0]
    out = [struct.pack("<QIHH", MAGIC_FILE[0], version, len(grids), CODECS[codec])]
    for grid, payload in zip(grids, payloads):
        out.append(_file_meta(grid, len(payload), CODECS[codec], version))
    out += payloads
    with open(path, "wb") as f:
        f.write(b"".join(out))


def _file_meta(grid: bytes, file_size: int, codec: int, version: int) -> bytes:
    name = _name(grid[40:40 + NAME_SIZE], "grid").encode("ascii") + b"\0"
    grid_class, grid_type = struct.unpack_from("<II", grid, 632)
    world_bbox = grid[560:608]
    voxel_size = grid[608:632]
    node_count = struct.unpack_from("<3I", grid, GRID_SIZE + 32)
    tile_count = struct.unpack_from("<3I", grid, GRID_SIZE + 44)
    voxel_count = struct.unpack_from("<Q", grid, GRID_SIZE + 56)[0]
    root = GRID_SIZE + struct.unpack_from("<Q", grid, GRID_SIZE + 24)[0]
    index_bbox = grid[root:root + 24]
    meta = struct.pack("<QQQQII", len(grid), file_size, 0, voxel_count, grid_type, grid_class) + world_bbox + \
        index_bbox + voxel_size + struct.pack("<I4I3IHHI", len(name), *node_count, 1, *tile_count, codec, 0, version)
    assert len(meta) == FILE_META
    return meta + name
