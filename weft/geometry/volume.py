"""``wp.Volume``: a sparse grid of voxels stored in 8x8x8 leaves (NanoVDB's leaf size), sampled in kernels through
the ``wp.volume_*`` builtins (``weft/ops/volume.py``).

A volume is created from tiles (``allocate``, ``allocate_by_tiles``), from voxels (``allocate_by_voxels``: an index
grid), from a dense NumPy array (``load_from_numpy``) or from NanoVDB data (``load_from_nvdb``, see ``nanovdb.py``).
Its values live in NumPy arrays the object owns; kernels write them with ``volume_store``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..errors import GeometryError, GeometryTypeError
from ..ir import types as T
from ..types.composite import class_for
from ..types.mapping import to_ir
from . import native
from ._common import NativeHandle
from .nanovdb_write import tree_order
from .volume_layout import LEAF, Layout, check_origins, value_layout

#: NanoVDB's names of the value types (GridInfo.type_str)
NVDB_NAMES = {T.FLOAT32: "float", T.FLOAT64: "double", T.FLOAT16: "Half", T.INT16: "int16", T.INT32: "int32",
              T.INT64: "int64", T.UINT32: "uint32", T.UINT8: "uint8", T.BOOL: "bool",
              T.VectorType(3, T.FLOAT32): "Vec3f", T.VectorType(3, T.FLOAT64): "Vec3d",
              T.VectorType(4, T.FLOAT32): "Vec4f", T.VectorType(4, T.FLOAT64): "Vec4d",
              T.VectorType(3, T.UINT8): "Vec3u8", T.VectorType(3, T.UINT16): "Vec3u16"}
#: value types Volume.allocate* accepts (as Warp)
ALLOCATION_TYPES = (T.INT32, T.UINT32, T.INT64, T.FLOAT32, T.FLOAT64, T.VectorType(3, T.FLOAT32),
                    T.VectorType(3, T.FLOAT64), T.VectorType(4, T.FLOAT32), T.VectorType(4, T.FLOAT64))


class GridInfo(NamedTuple):
    """Grid metadata (as Warp's ``Volume.GridInfo``)."""

    name: str
    size_in_bytes: int
    grid_index: int
    grid_count: int
    type_str: str
    translation: object
    transform_matrix: object


class RebuildInfo(NamedTuple):
    kind: str | None
    max_voxel_count: int
    max_leaf_node_count: int
    max_lower_node_count: int
    max_upper_node_count: int


class ActiveStats(NamedTuple):
    voxel_count: int
    leaf_node_count: int
    lower_node_count: int
    upper_node_count: int


class FeatureArrayInfo(NamedTuple):
    name: str
    ptr: int
    value_size: int
    value_count: int
    type_str: str


def normalize_voxel_size(voxel_size) -> tuple[float, float, float]:
    """A positive finite (sx, sy, sz) from a scalar or a 3-sequence."""
    if isinstance(voxel_size, (bool, np.bool_)):
        raise TypeError(f"Volume: argument 'voxel_size' must be a number or 3 numbers, got {voxel_size!r}")
    if isinstance(voxel_size, (int, float, np.integer, np.floating)):
        s = float(voxel_size)
        sizes = (s, s, s)
    elif isinstance(voxel_size, (list, tuple, np.ndarray)) or (hasattr(voxel_size, "__len__")
                                                                and not isinstance(voxel_size, (str, bytes))):
        sizes = tuple(float(v) for v in voxel_size)
        if len(sizes) != 3:
            raise ValueError(f"Volume: argument 'voxel_size' must be a scalar or a 3-element sequence, got length "
                             f"{len(sizes)}")
    else:
        raise TypeError(f"Volume: argument 'voxel_size' must be a number or 3 numbers, got "
                        f"{type(voxel_size).__name__}")
    if not all(math.isfinite(v) and v > 0.0 for v in sizes):
        raise ValueError(f"Volume: all voxel_size components must be finite and positive, got {sizes}")
    return sizes


def _bg_type(bg_value):
    """The value type a background value makes (Warp's rules: plain sequences are float32 vectors, Python ints
    int32, Python floats float32, weft values their own type)."""
    ir = getattr(type(bg_value), "_ir_", None)
    if ir is None and isinstance(bg_value, np.generic):  # NumPy scalars (wp.float64(3.0)): their own type
        ir = next((s for s in T.SCALARS if s.kind == bg_value.dtype.kind and s.bits == bg_value.dtype.itemsize * 8
                   and s is not T.BFLOAT16), None)
    if ir is None:
        if isinstance(bg_value, bool):
            ir = T.BOOL
        elif isinstance(bg_value, int):
            ir = T.INT32
        elif isinstance(bg_value, float):
            ir = T.FLOAT32
        elif hasattr(bg_value, "__len__") and len(bg_value) in (3, 4):
            ir = T.VectorType(len(bg_value), T.FLOAT32)
        else:
            raise GeometryTypeError(f"Volume: unsupported bg_value {bg_value!r}")
    if ir not in ALLOCATION_TYPES:
        names = ", ".join(NVDB_NAMES[t] for t in ALLOCATION_TYPES)
        raise GeometryTypeError(f"Volume: unsupported bg_value type {ir} for volume allocation; supported volume "
                                f"types are {names}")
    return ir


def _value_array(ir, value) -> np.ndarray:
    dtype, shape = value_layout(ir)
    if hasattr(value, "_ir_") and hasattr(value, "__len__"):
        value = list(value)
    return np.array(np.broadcast_to(np.asarray(value, dtype=dtype), shape), dtype=dtype, order="C")


def _transform(voxel_size, transform) -> np.ndarray:
    if transform is None:
        if voxel_size is None:
            raise ValueError("Volume: either 'voxel_size' or 'transform' must be provided")
        return np.diag(normalize_voxel_size(voxel_size)).astype(np.float64)
    if voxel_size is not None:
        raise ValueError("Volume: only one of 'voxel_size' or 'transform' may be provided")
    m = np.asarray(transform if not hasattr(transform, "_ir_") else list(transform), dtype=np.float64)
    m = m.reshape(3, 3)
    if not np.isfinite(m).all() or abs(np.linalg.det(m)) < 1e-30:
        raise ValueError(f"Volume: argument 'transform' must be an invertible 3x3 matrix, got {m.tolist()}")
    return m


def _points(points, owner: str, name: str) -> tuple[np.ndarray, bool]:
    """(n, 3) coordinates and whether they are world-space floats."""
    data = points.numpy() if hasattr(points, "numpy") else np.asarray(points)
    if data.dtype.kind not in "iuf" or data.size % 3 or (data.ndim >= 2 and data.shape[-1] != 3):
        raise GeometryError(f"{owner}: argument '{name}' must hold 3-vectors of int32 or float32 (shape (n, 3) or "
                            f"an array of vec3i / vec3f), got dtype {data.dtype} shape {data.shape}")
    return data.reshape(-1, 3), data.dtype.kind == "f"


def _capacity(value, default: int, name: str) -> int:
    v = default if value is None else value
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 < int(v) < 2**32:
        raise ValueError(f"Volume: argument '{name}' must be a positive integer below 2**32, got {value!r}")
    return int(v)


class _BuildSpec:
    """How a volume's topology is built from points (kept for ``rebuild``): tiles or voxels, the index-to-world map,
    the value type and background (None: an index grid), and the capacity (voxels, leaves, lower, upper) or None."""

    def __init__(self, kind, matrix, translation, ir, background, caps):
        self.kind, self.matrix, self.translation, self.ir, self.background, self.caps = \
            kind, matrix, translation, ir, background, caps

    def build(self, points, point_mask, status) -> Layout:
        owner = f"Volume.allocate_by_{self.kind}"
        ijk = Volume._index_points(points, point_mask, self.matrix, self.translation, owner, f"{self.kind[:-1]}_points")
        if self.kind == "tiles":
            origins = np.unique(np.floor_divide(ijk, LEAF) * LEAF, axis=0).reshape(-1, 3)
            origins = origins[tree_order(origins)]
            voxels = None
        else:
            voxels = np.unique(ijk, axis=0).reshape(-1, 3)
            origins = np.floor_divide(voxels, LEAF) * LEAF
            order = np.lexsort((_bits(voxels - origins), tree_rank(origins)))
            voxels, origins = voxels[order], origins[order]
        flags = 0
        if self.caps is not None:
            max_voxels, max_leaves, max_lower, max_upper = self.caps
            if voxels is not None and len(voxels) > max_voxels:
                flags |= Volume.REBUILD_VOXEL_CAPACITY_EXCEEDED
                voxels, origins = voxels[:max_voxels], origins[:max_voxels]
            keep = np.ones(len(origins), bool)
            for bit, size, cap in ((Volume.REBUILD_LEAF_CAPACITY_EXCEEDED, LEAF, max_leaves),
                                   (Volume.REBUILD_LOWER_CAPACITY_EXCEEDED, 128, max_lower),
                                   (Volume.REBUILD_UPPER_CAPACITY_EXCEEDED, 4096, max_upper)):
                node = np.floor_divide(origins, size)
                _, first, rank = np.unique(node, axis=0, return_index=True, return_inverse=True)
                order_of = np.argsort(np.argsort(first))  # nodes numbered in order of first appearance
                number = order_of[rank.reshape(-1)]
                if len(first) > cap:
                    flags |= bit
                    keep &= number < cap
            if voxels is not None:
                voxels = voxels[keep]
            origins = origins[keep]
        if status is not None:
            status.numpy().reshape(-1)[0] = flags
        check_origins(origins, owner)
        if voxels is None:
            masks = np.full((len(origins), 8), np.uint64(0xFFFFFFFFFFFFFFFF), dtype=np.uint64)
        else:
            leaves, leaf = np.unique(origins, axis=0, return_inverse=True)
            rank = np.empty(len(leaves), np.int64)
            rank[tree_order(leaves)] = np.arange(len(leaves))
            origins, leaf = leaves[tree_order(leaves)], rank[leaf.reshape(-1)]
            bit = _bits(voxels - np.floor_divide(voxels, LEAF) * LEAF)
            masks = np.zeros((len(origins), 8), dtype=np.uint64)
            np.bitwise_or.at(masks, (leaf, bit >> 6), np.left_shift(np.uint64(1), (bit & 63).astype(np.uint64)))
        if self.ir is None:
            return Layout.make(None, origins, masks, None, None, self.matrix, self.translation)
        values = np.empty((len(origins), LEAF, LEAF, LEAF, *self.background.shape), dtype=self.background.dtype)
        values[...] = self.background
        return Layout.make(self.ir, origins, masks, values, self.background.copy(), self.matrix, self.translation)


def _bits(local: np.ndarray) -> np.ndarray:
    local = local.astype(np.int64)
    return (local[:, 0] << 6) | (local[:, 1] << 3) | local[:, 2]


def tree_rank(origins: np.ndarray) -> np.ndarray:
    """Each leaf origin's position in tree order (equal origins share one)."""
    if not len(origins):
        return np.zeros(0, np.int64)
    leaves, inv = np.unique(origins, axis=0, return_inverse=True)
    rank = np.empty(len(leaves), np.int64)
    rank[tree_order(leaves)] = np.arange(len(leaves))
    return rank[inv.reshape(-1)]


class Volume(NativeHandle):
    """A sparse volume: leaves of 8x8x8 voxels, a background value elsewhere, and an affine index-to-world map.

    Pass ``volume.id`` to kernels and read it with ``wp.volume_lookup`` / ``wp.volume_sample`` /
    ``wp.volume_sample_grad`` (``dtype`` = the volume's value type), write it with ``wp.volume_store``, or sample a
    separate per-voxel array through its voxel indices with ``wp.volume_sample_index``. Only the CPU is supported.
    """

    CLOSEST = 0
    """Nearest-voxel sampling (halfway cases round away from zero)."""
    LINEAR = 1
    """Trilinear sampling."""
    GridInfo = GridInfo
    ActiveStats = ActiveStats
    RebuildInfo = RebuildInfo
    REBUILD_SUCCESS = 0
    REBUILD_LEAF_CAPACITY_EXCEEDED = 1 << 0
    REBUILD_LOWER_CAPACITY_EXCEEDED = 1 << 1
    REBUILD_UPPER_CAPACITY_EXCEEDED = 1 << 2
    REBUILD_VOXEL_CAPACITY_EXCEEDED = 1 << 3
    REBUILD_INVALID_INPUT = 1 << 4
    FeatureArrayInfo = FeatureArrayInfo

    _KIND = "Volume"
    _DESTROY = "geo_volume_destroy"

    def __new__(cls, *args, **kwargs):
        obj = super().__new__(cls)
        obj.id = 0
        return obj

    def __init__(self, data=None, copy: bool = True):
        """``Volume(data)``: a volume from NanoVDB grid data (a uint8 array or bytes); see ``load_from_nvdb``."""
        self.device = None
        self._layout: Layout | None = None
        self._nvdb = None  # nanovdb.GridSource when loaded from NanoVDB data
        self._name = ""
        if data is not None:
            from .nanovdb import read_buffer

            raw = data.numpy().tobytes() if hasattr(data, "numpy") else bytes(data)
            other = read_buffer(raw, 0)
            self._adopt(other)

    # ------------------------------------------------------------------ construction
    @classmethod
    def _from_layout(cls, layout: Layout, name: str = "", device=None) -> Volume:
        vol = cls.__new__(cls)
        vol.device = device
        vol._layout = layout
        vol._nvdb = None
        vol._name = name
        vol._register()
        return vol

    def _adopt(self, other: Volume) -> None:
        self._layout, self._nvdb, self._name = other._layout, other._nvdb, other._name
        other.id, other._layout = 0, None
        self._register()

    def _register(self) -> None:
        self._lib = native.lib()
        self._desc = self._layout.descriptor()
        import ctypes

        self.id = int(self._lib.geo_volume_create(ctypes.addressof(self._desc)))
        if self.id == 0:
            raise GeometryError("Volume: out of memory registering the volume")

    @staticmethod
    def _check_device(device, owner: str):
        from ..runtime.device import get_device

        dev = get_device(device)
        if not dev.impl.host_memory:
            raise GeometryError(f"{owner}: weft builds volumes on the CPU only (device {dev} requested; no GPU was "
                                "used here). Pass device='cpu'")
        return dev

    @classmethod
    def allocate(cls, min, max, voxel_size, bg_value=0.0, translation=(0.0, 0.0, 0.0),
                 points_in_world_space: bool = False, device=None) -> Volume:
        """A volume with every tile of 8x8x8 voxels that overlaps the index-space box [min, max] (inclusive);
        with ``points_in_world_space`` the corners are world positions (divided by the voxel size after removing
        ``translation``, then rounded)."""
        sizes = normalize_voxel_size(voxel_size)
        lo, hi = np.asarray(min, dtype=np.float64), np.asarray(max, dtype=np.float64)
        if points_in_world_space:
            t = np.asarray(translation, dtype=np.float64)
            lo, hi = np.around((lo - t) / sizes), np.around((hi - t) / sizes)
        tlo, thi = np.floor_divide(lo.astype(np.int64), LEAF), np.floor_divide(hi.astype(np.int64), LEAF)
        axes = [np.arange(a, b + 1) for a, b in zip(tlo, thi)]
        grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3) * LEAF
        return cls.allocate_by_tiles(grid.astype(np.int32), sizes, bg_value, translation, device)

    @classmethod
    def allocate_by_tiles(cls, tile_points, voxel_size=None, bg_value=0.0, translation=(0.0, 0.0, 0.0),
                          device=None, transform=None, rebuildable: bool = False, max_tiles=None,
                          max_lower_nodes=None, max_upper_nodes=None, status=None, point_mask=None) -> Volume:
        """A volume with the 8x8x8 tiles containing ``tile_points`` (int32: index space; float32: world space,
        rounded to the nearest voxel), every voxel of them active and set to ``bg_value``. ``bg_value=None`` makes
        an index grid (no values; sample separate arrays with ``wp.volume_sample_index``). ``point_mask`` (int32 per
        point) skips points with 0. ``rebuildable`` (or any ``max_*``) reserves capacity for ``rebuild``; ``status``
        (one uint32) receives the ``REBUILD_*`` flags of the build."""
        dev = cls._check_device(device, "Volume.allocate_by_tiles")
        n = len(_points(tile_points, "Volume.allocate_by_tiles", "tile_points")[0])
        rebuildable = rebuildable or any(v is not None for v in (max_tiles, max_lower_nodes, max_upper_nodes))
        caps = None
        if rebuildable:
            leaves = _capacity(max_tiles, n, "max_tiles")
            lower = _capacity(max_lower_nodes, leaves, "max_lower_nodes")
            caps = (leaves * 512, leaves, lower, _capacity(max_upper_nodes, lower, "max_upper_nodes"))
        spec = _BuildSpec("tiles", _transform(voxel_size, transform),
                          np.asarray(translation, dtype=np.float64).reshape(3), None if bg_value is None else
                          _bg_type(bg_value), None if bg_value is None else _value_array(_bg_type(bg_value), bg_value),
                          caps)
        vol = cls._from_layout(spec.build(tile_points, point_mask, status), device=dev)
        vol._spec = spec
        return vol

    @classmethod
    def allocate_by_voxels(cls, voxel_points, voxel_size=None, translation=(0.0, 0.0, 0.0), device=None,
                           transform=None, rebuildable: bool = False, max_active_voxels=None, max_leaf_nodes=None,
                           max_lower_nodes=None, max_upper_nodes=None, status=None, point_mask=None) -> Volume:
        """An index grid whose active voxels are those containing ``voxel_points`` (int32: index space; float32:
        world space, rounded to the nearest voxel). Rebuild capacity as ``allocate_by_tiles``."""
        dev = cls._check_device(device, "Volume.allocate_by_voxels")
        n = len(_points(voxel_points, "Volume.allocate_by_voxels", "voxel_points")[0])
        rebuildable = rebuildable or any(v is not None for v in (max_active_voxels, max_leaf_nodes, max_lower_nodes,
                                                                 max_upper_nodes))
        caps = None
        if rebuildable:
            voxels = _capacity(max_active_voxels, n, "max_active_voxels")
            leaves = _capacity(max_leaf_nodes, voxels, "max_leaf_nodes")
            lower = _capacity(max_lower_nodes, leaves, "max_lower_nodes")
            caps = (voxels, leaves, lower, _capacity(max_upper_nodes, lower, "max_upper_nodes"))
        spec = _BuildSpec("voxels", _transform(voxel_size, transform),
                          np.asarray(translation, dtype=np.float64).reshape(3), None, None, caps)
        vol = cls._from_layout(spec.build(voxel_points, point_mask, status), device=dev)
        vol._spec = spec
        return vol

    def rebuild(self, points, status=None, point_mask=None):
        """Replace the topology in place (same id, value type, background and transform) from ``points`` (tiles or
        voxels, as the volume was allocated), within the reserved capacity: what does not fit is dropped and
        ``status`` gets the ``REBUILD_*`` flags. Values are reset to the background. Returns ``status``."""
        self._live_id()
        spec = getattr(self, "_spec", None)
        if spec is None or spec.caps is None:
            raise GeometryError("Volume.rebuild: this volume was not allocated with rebuild capacity (pass "
                                "rebuildable=True to allocate_by_tiles / allocate_by_voxels)")
        import ctypes

        self._layout = spec.build(points, point_mask, status)
        self._desc = self._layout.descriptor()
        if self._lib.geo_volume_update(self.id, ctypes.addressof(self._desc)) != 0:
            raise GeometryError("Volume.rebuild: the volume was destroyed")
        return status

    @property
    def is_rebuildable(self) -> bool:
        spec = getattr(self, "_spec", None)
        return spec is not None and spec.caps is not None

    def get_rebuild_info(self) -> RebuildInfo:
        """The reserved capacity: (kind, max voxels, max leaves, max lower nodes, max upper nodes)."""
        if not self.is_rebuildable:
            return RebuildInfo(None, 0, 0, 0, 0)
        return RebuildInfo(self._spec.kind, *self._spec.caps)

    @staticmethod
    def _index_points(points, point_mask, matrix, translation, owner: str, name: str) -> np.ndarray:
        data, world = _points(points, owner, name)
        if point_mask is not None:
            mask = (point_mask.numpy() if hasattr(point_mask, "numpy") else np.asarray(point_mask)).reshape(-1)
            if len(mask) != len(data):
                raise GeometryError(f"{owner}: argument 'point_mask' has {len(mask)} entries, {name} has {len(data)}")
            data = data[mask != 0]
        if world:
            index = (np.asarray(data, np.float64) - translation) @ np.linalg.inv(matrix).T
            if not np.isfinite(index).all():
                raise GeometryError(f"{owner}: argument '{name}' holds a NaN or infinite coordinate")
            return np.floor(index + 0.5).astype(np.int64)
        return np.asarray(data, dtype=np.int64)

    @classmethod
    def load_from_numpy(cls, ndarray, min_world=(0.0, 0.0, 0.0), voxel_size=1.0, bg_value=0.0,
                        device=None) -> Volume:
        """A volume holding a dense array: voxel (i, j, k) = ndarray[i, j, k] at world position
        min_world + (i, j, k) * voxel_size. A 4-D array with a last axis of 3 makes a vec3f volume; with a Python
        int bg_value an int32 volume; otherwise float32."""
        sizes = normalize_voxel_size(voxel_size)
        arr = np.asarray(ndarray)
        vector = hasattr(bg_value, "__len__")
        if arr.ndim != (4 if vector else 3) or (vector and arr.shape[3] != 3):
            raise GeometryError(f"Volume.load_from_numpy: argument 'ndarray' must be 3-D (or 4-D with a last axis of "
                                f"3 for a vec3f bg_value), got shape {arr.shape}")
        ir = T.VectorType(3, T.FLOAT32) if vector else (T.INT32 if isinstance(bg_value, int) and
                                                          not isinstance(bg_value, bool) else T.FLOAT32)
        dims = np.array(arr.shape[:3])
        padded = ((dims + LEAF - 1) // LEAF) * LEAF
        tiles = np.stack(np.meshgrid(*[np.arange(0, p, LEAF) for p in padded], indexing="ij"), -1).reshape(-1, 3)
        vol = cls.allocate_by_tiles(tiles.astype(np.int32), sizes, _value_array(ir, bg_value).tolist()
                                    if vector else (int(bg_value) if ir is T.INT32 else float(bg_value)),
                                    tuple(float(x) for x in min_world), device)
        vol._layout.dtype = ir
        lay = vol._layout
        dense = np.empty((*padded, *lay.background.shape), dtype=lay.values.dtype)
        dense[...] = lay.background
        dense[: dims[0], : dims[1], : dims[2]] = arr
        nx, ny, nz = (padded // LEAF).tolist()
        comp = lay.background.shape
        blocks = dense.reshape(nx, LEAF, ny, LEAF, nz, LEAF, *comp).transpose(0, 2, 4, 1, 3, 5,
                                                                               *range(6, 6 + len(comp)))
        o = lay.origins // LEAF
        lay.values[...] = blocks[o[:, 0], o[:, 1], o[:, 2]]
        return vol

    @classmethod
    def load_from_nvdb(cls, file_or_buffer, device=None) -> Volume:
        """The first grid of NanoVDB data: a path, a binary file, ``bytes``, or a uint8 array (a ``.nvdb`` file with
        its header, or a raw grid buffer). The other grids: ``load_next_grid()``. See ``weft/geometry/nanovdb.py``
        for the grid types read."""
        from .nanovdb import load

        cls._check_device(device, "Volume.load_from_nvdb")
        return load(cls, file_or_buffer)

    def load_next_grid(self) -> Volume | None:
        """The next grid of the NanoVDB data this volume was loaded from (None after the last)."""
        if self._nvdb is None:
            return None
        return self._nvdb.next_volume(type(self))

    def save_to_nvdb(self, path, codec: str = "none") -> None:
        """Write this grid as a ``.nvdb`` file (codec "none" or "zip"; "blosc" when the blosc package is present)."""
        from .nanovdb import save

        save(self, path, codec)

    # ------------------------------------------------------------------ queries
    def _live(self) -> Layout:
        self._live_id()
        return self._layout

    def array(self):
        """The volume as a NanoVDB grid buffer (a uint8 array; a grid loaded from NanoVDB data returns its own bytes
        and those of the grids after it)."""
        from ..runtime.array import array
        from .nanovdb import grid_bytes

        return array(np.frombuffer(grid_bytes(self), dtype=np.uint8).copy(), device="cpu")

    @property
    def dtype(self):
        """The value type (None for index grids)."""
        t = self._live().dtype
        return None if t is None else class_for(t)

    @property
    def is_index(self) -> bool:
        return self._live().dtype is None

    def get_tile_count(self) -> int:
        return len(self._live().origins)

    def get_tiles(self, out=None):
        """The tiles' first voxels, (n, 3) int32 (multiples of 8)."""
        return self._out(self._live().origins, out)

    def get_voxel_count(self) -> int:
        """Active voxels (for rebuildable volumes: the reserved voxel capacity, the size per-voxel arrays need)."""
        lay = self._live()
        return self._spec.caps[0] if self.is_rebuildable else lay.voxel_count

    def get_voxels(self, out=None):
        """The active voxels' index-space coordinates, (n, 3) int32, in the order of their linear indices."""
        return self._out(self._live().voxels(), out)

    def get_active_stats(self) -> ActiveStats:
        lay = self._live()
        lower = len(np.unique(np.floor_divide(lay.origins, 128), axis=0)) if len(lay.origins) else 0
        upper = len(np.unique(np.floor_divide(lay.origins, 4096), axis=0)) if len(lay.origins) else 0
        return ActiveStats(lay.voxel_count, len(lay.origins), lower, upper)

    @staticmethod
    def _out(data: np.ndarray, out):
        from ..runtime.array import array

        if out is None:
            return array(np.ascontiguousarray(data, dtype=np.int32), device="cpu")
        view = out.numpy().reshape(-1, 3)
        if len(view) < len(data):
            raise GeometryError(f"Volume: argument 'out' holds {len(view)} points, {len(data)} are needed")
        view[: len(data)] = data
        return out

    def get_voxel_size(self) -> tuple[float, float, float]:
        """The voxel's diagonal in world space (the index-to-world matrix applied to (1, 1, 1); grids read from
        NanoVDB report their recorded voxel size), as float32 values."""
        lay = self._live()
        sizes = lay.voxel_size if lay.voxel_size is not None else lay.matrix @ np.ones(3)
        return tuple(float(np.float32(v)) for v in sizes)

    def get_grid_info(self) -> GridInfo:
        lay = self._live()
        src = self._nvdb
        name = src.name if src is not None else self._name
        size = src.size if src is not None else 0
        index, count = (src.index, src.count) if src is not None else (0, 1)
        type_str = src.type_str if src is not None else (NVDB_NAMES.get(lay.dtype, "?") if lay.dtype is not None
                                                         else "OnIndex")
        vec3, mat33 = class_for(T.VectorType(3, T.FLOAT32)), class_for(T.MatrixType(3, 3, T.FLOAT32))
        return GridInfo(name, size, index, count, type_str, vec3(*lay.translation.astype(np.float32).tolist()),
                        mat33(*lay.matrix.astype(np.float32).ravel().tolist()))

    # ------------------------------------------------------------------ feature arrays (NanoVDB blind data)
    def get_feature_array_count(self) -> int:
        return 0 if self._nvdb is None else len(self._nvdb.features)

    def get_feature_array_info(self, feature_index: int) -> FeatureArrayInfo:
        return self._feature(feature_index).info

    def feature_array(self, feature_index: int, dtype=None):
        """Blind data ``feature_index`` of the grid as an array (of ``dtype``, default its own type)."""
        from ..runtime.array import array

        feat = self._feature(feature_index)
        data = feat.data
        if dtype is not None:
            np_dtype, shape = value_layout(to_ir(dtype))
            item = np_dtype.itemsize * int(np.prod(shape, dtype=np.int64))
            data = np.frombuffer(data.tobytes()[: len(data.tobytes()) // item * item], dtype=np_dtype)
            if shape:
                data = data.reshape(-1, *shape)
            return array(data.copy(), dtype=dtype, device="cpu")
        return array(data.copy(), device="cpu")

    def _feature(self, index: int):
        feats = [] if self._nvdb is None else self._nvdb.features
        if not 0 <= int(index) < len(feats):
            raise IndexError(f"Volume: feature array index {index} out of range ({len(feats)} feature arrays)")
        return feats[int(index)]

    def __del__(self):
        try:
            self.destroy()
        except Exception:  # noqa: BLE001, S110 - interpreter shutdown
            pass
