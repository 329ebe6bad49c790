"""``wp.HashGrid``: a hashed uniform grid for neighbour queries in kernels (``wp.hash_grid_query``)."""

from __future__ import annotations

import numpy as np

from ..errors import GeometryError
from . import native
from ._common import check_finite, host_view


class HashGrid:
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

    def __init__(self, dim_x: int, dim_y: int, dim_z: int, device=None, dtype=None):
        for name, value in (("dim_x", dim_x), ("dim_y", dim_y), ("dim_z", dim_z)):
            if not isinstance(value, (int, np.integer)) or int(value) <= 0:
                raise GeometryError(f"HashGrid: argument '{name}' must be a positive integer, got {value!r}")
        self.dim_x, self.dim_y, self.dim_z = int(dim_x), int(dim_y), int(dim_z)
        self.device = device
        self.dtype = dtype
        self.reserved = False
        self.num_points = 0
        self.cell_width = 0.0
        self._lib = native.lib()
        self.id = int(self._lib.geo_hash_grid_create(self.dim_x, self.dim_y, self.dim_z))
        if self.id == 0:
            raise GeometryError(f"HashGrid: cannot allocate {self.dim_x}x{self.dim_y}x{self.dim_z} cells "
                                "(at most 2**30)")

    def reserve(self, num_points: int) -> None:
        """Allocate room for ``num_points`` points so later builds of up to that many do not allocate."""
        if int(num_points) < 0:
            raise GeometryError(f"HashGrid.reserve: argument 'num_points' must be >= 0, got {num_points}")
        if self._lib.geo_hash_grid_reserve(self._live_id(), int(num_points)) != 0:
            raise GeometryError(f"HashGrid.reserve: out of memory for {num_points} points")
        self.reserved = True

    def build(self, points, radius: float) -> None:
        """Sort ``points`` (an array of vec3, on the CPU) into cells of edge ``radius`` (> 0)."""
        pts = host_view(points, "points", "HashGrid.build", cols=3, kind="f")
        check_finite(pts, "points", "HashGrid.build")
        radius = float(radius)
        if not np.isfinite(radius) or radius <= 0.0:
            raise GeometryError(f"HashGrid.build: argument 'radius' must be a positive finite number, got {radius}")
        if len(pts) >= 2**31 - 1:
            raise GeometryError("HashGrid.build: too many points (at most 2**31 - 2)")
        rc = self._lib.geo_hash_grid_build(self._live_id(), pts.ctypes.data, len(pts), radius)
        if rc != 0:
            raise GeometryError(f"HashGrid.build: out of memory for {len(pts)} points")
        self.num_points = len(pts)
        self.cell_width = radius
        self.reserved = True

    def sorted_ids(self) -> np.ndarray:
        """The original point ids in the grid's cell-sorted order (a copy; for inspection and tests)."""
        out = np.empty(self.num_points, dtype=np.int32)
        self._lib.geo_hash_grid_sorted_ids(self._live_id(), out.ctypes.data, len(out))
        return out

    def _live_id(self) -> int:
        if self.id == 0:
            raise GeometryError("HashGrid: this grid was destroyed")
        return self.id

    def destroy(self) -> None:
        """Free the grid now; kernels given its id afterwards report an invalid-id error instead of reading it."""
        if getattr(self, "id", 0):
            self._lib.geo_hash_grid_destroy(self.id)
            self.id = 0

    def __del__(self):
        try:
            self.destroy()
        except Exception:  # noqa: BLE001, S110 - interpreter shutdown
            pass
