"""``wp.HashGrid``: a hashed uniform grid for neighbour queries in kernels (``wp.hash_grid_query``)."""

from __future__ import annotations

import numpy as np

from ..errors import GeometryError, GeometryLimitError, GeometryTypeError
from ..types.mapping import to_ir
from ..types.scalars import float32
from . import native
from ._common import NativeHandle


def _precision(dtype) -> int:
    """64 for a float64 grid (cells computed in double), else 32 (float32 and float16 grids compute in float)."""
    if dtype is None:
        return 32
    try:
        t = to_ir(dtype)
    except TypeError:
        t = None
    if t is None or getattr(t, "kind", "") != "f" or not hasattr(t, "bits"):
        raise GeometryTypeError(f"HashGrid: argument 'dtype' must be float16, float32 or float64, got {dtype!r}")
    return t.bits


class HashGrid(NativeHandle):
    """A spatial hash grid of ``dim_x * dim_y * dim_z`` cells; space wraps around, so any point fits.

    ``build(points, radius)`` sorts the points by cell (in parallel, deterministically) with cells of edge
    ``radius``. In kernels, ``wp.hash_grid_query(grid.id, p, r)`` iterates over every point of the cells the box
    ``[p - r, p + r]`` touches (candidates: test the distance yourself), and ``wp.hash_grid_point_id(grid.id, i)``
    maps a position in the cell-sorted order to the original point index.

    Args:
        dim_x, dim_y, dim_z: number of hashed cells along each axis (positive).
        device: only the CPU is supported for building.

    Raises:
        GeometryError: a dimension is not a positive integer, or the grid is too large.
    """

    _KIND = "HashGrid"
    _DESTROY = "geo_hash_grid_destroy"

    def __init__(self, dim_x: int, dim_y: int, dim_z: int, device=None, dtype=None):
        for name, value in (("dim_x", dim_x), ("dim_y", dim_y), ("dim_z", dim_z)):
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or int(value) <= 0:
                raise GeometryError(f"HashGrid: argument '{name}' must be a positive integer, got {value!r}")
        self.dim_x, self.dim_y, self.dim_z = int(dim_x), int(dim_y), int(dim_z)
        self.device = device
        self._bits = _precision(dtype)
        self._precision = 64 if self._bits == 64 else 32
        self.dtype = dtype if dtype is not None else float32
        self.reserved = False
        self.num_points = 0
        self.cell_width = 0.0
        self._lib = native.lib()
        if self.dim_x * self.dim_y * self.dim_z > 2**30:
            raise GeometryLimitError(f"HashGrid: cell count exceeds supported limit ({self.dim_x}x{self.dim_y}x"
                                     f"{self.dim_z} cells; at most 2**30)")
        self.id = int(self._lib.geo_hash_grid_create(self.dim_x, self.dim_y, self.dim_z))
        if self.id == 0:
            raise GeometryError(f"HashGrid: cannot allocate {self.dim_x}x{self.dim_y}x{self.dim_z} cells")

    def reserve(self, num_points: int, with_groups: bool = False) -> None:
        """Allocate room for ``num_points`` points so later builds of up to that many do not allocate."""
        from ..runtime.capture import active_capture

        graph = active_capture()
        if graph is not None and graph.device.impl.capture_by_replay:
            raise NotImplementedError("HashGrid.reserve inside a graph capture: reserve before capture")
        if int(num_points) < 0:
            raise GeometryError(f"HashGrid.reserve: argument 'num_points' must be >= 0, got {num_points}")
        if self._lib.geo_hash_grid_reserve(self._live_id(), int(num_points)) != 0:
            raise GeometryError(f"HashGrid.reserve: out of memory for {num_points} points")
        self.reserved = True

    def build(self, points, radius: float, groups=None) -> None:
        """Sort ``points`` (vec3 of the grid's dtype, any array shape, on the CPU) into cells of edge ``radius``.

        ``groups`` (int32, one per point; every int32 value is a group id) makes a grouped grid:
        ``wp.hash_grid_query(id, p, r, group)`` then yields only that group's points. Non-finite coordinates are
        accepted (NaN hashes to cell 0, infinities to the edge cells). Inside ``wp.ScopedCapture`` on the CPU the
        build is recorded and runs, on the points' values at that time, when the graph is replayed.

        Raises:
            GeometryTypeError: ``points`` is a weft array of another precision than the grid's dtype.
        """
        from ..runtime.capture import active_capture

        graph = active_capture()
        if graph is not None and graph.device.impl.capture_by_replay:
            if getattr(graph, "apic", False):
                raise NotImplementedError("HashGrid serialization is not yet supported (HashGrid.build inside an "
                                          "apic capture)")
            self._check_points(points)
            graph.launches.append(lambda: self._build_now(points, radius, groups))
            return
        self._build_now(points, radius, groups)

    def _check_points(self, points) -> None:
        if hasattr(points, "numpy") and hasattr(points, "dtype"):
            item = np.dtype(points.numpy().dtype).itemsize * 8
            if item != self._bits:
                raise GeometryTypeError(f"HashGrid.build: argument 'points' holds float{item} vectors, the grid's "
                                        f"dtype is float{self._bits} (create the grid with dtype=...)")

    def _build_now(self, points, radius, groups) -> None:
        self._check_points(points)
        radius = float(radius)
        if not np.isfinite(radius) or radius <= 0.0:
            raise GeometryError(f"HashGrid.build: argument 'radius' must be a positive finite number, got {radius}")
        data = points.numpy() if hasattr(points, "numpy") else np.asarray(points)
        if data.dtype.kind != "f" or (data.ndim >= 1 and data.shape[-1] != 3 and data.size % 3 != 0):
            raise GeometryError(f"HashGrid.build: argument 'points' must hold vec3 values, got dtype {data.dtype} "
                                f"shape {data.shape}")
        data = data.reshape(-1, 3)
        if len(data) >= 2**31 - 1:
            raise GeometryError("HashGrid.build: too many points (at most 2**31 - 2)")
        grp = None
        if groups is not None:
            grp = np.ascontiguousarray((groups.numpy() if hasattr(groups, "numpy") else np.asarray(groups))
                                       .reshape(-1).astype(np.int32))
            if len(grp) != len(data):
                raise GeometryError(f"HashGrid.build: argument 'groups' has {len(grp)} entries, points has "
                                    f"{len(data)}")
        gptr = grp.ctypes.data if grp is not None else None
        if self._precision == 64:
            pts = np.ascontiguousarray(data, dtype=np.float64)
            inv = 1.0 / radius
            with np.errstate(invalid="ignore", over="ignore"):
                c = np.floor(pts * inv)
            c = np.where(np.isnan(c), 0, np.where(c <= -1e9, -1_000_000_000, np.where(c > 1e9, 1_000_000_000, c)))
            c = c.astype(np.int64)
            dims = np.array([self.dim_x, self.dim_y, self.dim_z])
            w = np.mod(c, dims)
            hashed = np.ascontiguousarray(((w[:, 2] * self.dim_y + w[:, 1]) * self.dim_x + w[:, 0]).astype(np.int32))
            rc = self._lib.geo_hash_grid_build(self._live_id(), None, hashed.ctypes.data, gptr, len(pts), radius, 64)
        else:
            pts = np.ascontiguousarray(data, dtype=np.float32)
            rc = self._lib.geo_hash_grid_build(self._live_id(), pts.ctypes.data, None, gptr, len(pts), radius, 32)
        if rc != 0:
            raise GeometryError(f"HashGrid.build: out of memory for {len(data)} points")
        self.num_points = len(data)
        self.cell_width = radius
        self.reserved = True

    def sorted_ids(self) -> np.ndarray:
        """The original point ids in the grid's cell-sorted order (a copy; for inspection and tests)."""
        out = np.empty(self.num_points, dtype=np.int32)
        self._lib.geo_hash_grid_sorted_ids(self._live_id(), out.ctypes.data, len(out))
        return out
