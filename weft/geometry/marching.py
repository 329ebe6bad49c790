"""``wp.geometry.IsoSurfaceMarchingCubes`` (and the deprecated ``wp.MarchingCubes``): isosurfaces of dense fields.

Marching cubes in weft kernels (multi-threaded on the CPU, recorded on the tape): one kernel flags the grid edges the
surface crosses, a scan numbers them, a second kernel places one vertex per crossed edge by linear interpolation
(differentiable w.r.t. the field), a third counts each cell's triangles and, after a scan, a fourth writes them.
Vertices are shared between the cells around an edge; triangles point towards increasing field values (outwards
for a signed distance that is negative inside).

The case table is generated here, not copied: for each of the 256 inside/outside corner patterns, every cube face
contributes the segments that cut its inside corners off (on a face with two diagonal inside corners, each is cut off
on its own - the same choice from both cells sharing the face, so the surface has no cracks); the segments chain
into closed polygons, fanned into triangles.
"""

# no `from __future__ import annotations`: the kernels' annotations are evaluated where they are defined
import abc
import functools

import numpy as np

from ..errors import GeometryError, GeometryTypeError, warn

#: corner (x, y, z) offsets of a cell; the corner index bit pattern of a case follows this order
CUBE_CORNER_OFFSETS = ((0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1))
#: the 12 cell edges as pairs of corners
EDGE_TO_CORNERS = ((0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4), (0, 4), (1, 5), (2, 6), (3, 7))
# the six faces, corners counter-clockwise seen from outside the cell
_FACES = ((0, 3, 2, 1), (4, 5, 6, 7), (0, 1, 5, 4), (2, 3, 7, 6), (0, 4, 7, 3), (1, 2, 6, 5))


def _edge(a: int, b: int) -> int:
    return EDGE_TO_CORNERS.index((a, b)) if (a, b) in EDGE_TO_CORNERS else EDGE_TO_CORNERS.index((b, a))


def _case_loops(case: int) -> list[list[int]]:
    """The closed polygons (lists of cell edges) of the surface in a cell whose inside corners are the bits of case."""
    inside = [(case >> c) & 1 for c in range(8)]
    nxt: dict[int, int] = {}
    for face in _FACES:
        for k in range(4):
            a, b = face[k], face[(k + 1) % 4]
            if inside[a] and not inside[b]:
                # the boundary leaves an inside arc on edge (a, b): the segment closes the arc at its entry edge
                j = k
                while inside[face[(j - 1) % 4]]:
                    j -= 1
                nxt[_edge(a, b)] = _edge(face[(j - 1) % 4], face[j % 4])
    loops, seen = [], set()
    for start in sorted(nxt):
        loop, e = [], start
        while e not in seen:
            seen.add(e)
            loop.append(e)
            e = nxt[e]
        if loop:
            loops.append(loop)
    return loops


@functools.cache
def _tables() -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(CASE_TO_TRI_RANGE, TRI_LOCAL_INDICES), generated on first use (not at ``import weft``)."""
    ranges, tris = [0], []
    for case in range(256):
        for loop in _case_loops(case):
            for k in range(1, len(loop) - 1):  # fan, wound so the normal points away from the inside corners
                tris.extend((loop[0], loop[k + 1], loop[k]))
        ranges.append(len(tris) // 3)
    return tuple(ranges), tuple(tris)


class _LazyTable:
    """A class attribute holding one of the two tables, built on first access."""

    def __init__(self, index: int):
        self.index = index

    def __get__(self, obj, owner=None):
        return _tables()[self.index]


def __getattr__(name: str):
    # triangles of case c: TRI_LOCAL_INDICES[3 * CASE_TO_TRI_RANGE[c] : 3 * CASE_TO_TRI_RANGE[c + 1]] (cell edges);
    # built on first access: generating the table was about half of this module's import time
    if name == "CASE_TO_TRI_RANGE":
        return _tables()[0]
    if name == "TRI_LOCAL_INDICES":
        return _tables()[1]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# each cell edge as (lower corner offset x, y, z, axis) - the grid edge it is
_EDGE_GRID = tuple((*CUBE_CORNER_OFFSETS[min(a, b, key=lambda c: sum(CUBE_CORNER_OFFSETS[c]))],
                    int(np.argmax(np.abs(np.subtract(CUBE_CORNER_OFFSETS[a], CUBE_CORNER_OFFSETS[b])))))
                   for a, b in EDGE_TO_CORNERS)


@functools.cache
def _kernels():
    import weft as wp

    @wp.func
    def _cell_case(field: wp.array3d(dtype=float), threshold: float, i: int, j: int, k: int):
        case = int(0)  # noqa: UP018, RUF046 - a dynamic kernel variable
        for c in range(8):
            dx = wp.where(c == 1 or c == 2 or c == 5 or c == 6, 1, 0)
            dy = wp.where(c == 2 or c == 3 or c == 6 or c == 7, 1, 0)
            dz = wp.where(c >= 4, 1, 0)
            if field[i + dx, j + dy, k + dz] < threshold:
                case = case | (1 << c)
        return case

    @wp.kernel
    def flag_edges(field: wp.array3d(dtype=float), threshold: float, flags: wp.array(dtype=wp.int32)):
        i, j, k = wp.tid()
        nx, ny, nz = field.shape[0], field.shape[1], field.shape[2]
        base = ((i * ny + j) * nz + k) * 3
        below = field[i, j, k] < threshold
        flags[base + 0] = wp.where(i + 1 < nx and (field[wp.min(i + 1, nx - 1), j, k] < threshold) != below, 1, 0)
        flags[base + 1] = wp.where(j + 1 < ny and (field[i, wp.min(j + 1, ny - 1), k] < threshold) != below, 1, 0)
        flags[base + 2] = wp.where(k + 1 < nz and (field[i, j, wp.min(k + 1, nz - 1)] < threshold) != below, 1, 0)

    @wp.kernel
    def place_vertices(field: wp.array3d(dtype=float), threshold: float, flags: wp.array(dtype=wp.int32),
                       vid: wp.array(dtype=wp.int32), lower: wp.vec3, spacing: wp.vec3,
                       verts: wp.array(dtype=wp.vec3)):
        i, j, k = wp.tid()
        ny, nz = field.shape[1], field.shape[2]
        base = ((i * ny + j) * nz + k) * 3
        f0 = field[i, j, k]
        node = wp.vec3(float(i), float(j), float(k))
        for a in range(3):
            if flags[base + a] != 0:
                ii = i + wp.where(a == 0, 1, 0)
                jj = j + wp.where(a == 1, 1, 0)
                kk = k + wp.where(a == 2, 1, 0)
                t = (threshold - f0) / (field[ii, jj, kk] - f0)
                step = wp.vec3(wp.where(a == 0, t, 0.0), wp.where(a == 1, t, 0.0), wp.where(a == 2, t, 0.0))
                verts[vid[base + a]] = lower + wp.cw_mul(node + step, spacing)

    @wp.kernel
    def count_triangles(field: wp.array3d(dtype=float), threshold: float, ranges: wp.array(dtype=wp.int32),
                        counts: wp.array(dtype=wp.int32)):
        i, j, k = wp.tid()
        case = _cell_case(field, threshold, i, j, k)
        counts[(i * (field.shape[1] - 1) + j) * (field.shape[2] - 1) + k] = ranges[case + 1] - ranges[case]

    @wp.kernel
    def write_triangles(field: wp.array3d(dtype=float), threshold: float, ranges: wp.array(dtype=wp.int32),
                        tri_edges: wp.array(dtype=wp.int32), edge_grid: wp.array(dtype=wp.vec4i),
                        offsets: wp.array(dtype=wp.int32), vid: wp.array(dtype=wp.int32),
                        indices: wp.array(dtype=wp.int32)):
        i, j, k = wp.tid()
        ny, nz = field.shape[1], field.shape[2]
        case = _cell_case(field, threshold, i, j, k)
        out = offsets[(i * (ny - 1) + j) * (nz - 1) + k]
        for t in range(ranges[case], ranges[case + 1]):
            for c in range(3):
                g = edge_grid[tri_edges[3 * t + c]]
                node = ((i + g[0]) * ny + j + g[1]) * nz + k + g[2]
                indices[3 * (out + t - ranges[case]) + c] = vid[node * 3 + g[3]]


    return flag_edges, place_vertices, count_triangles, write_triangles


@functools.cache
def _table_arrays():
    import weft as wp

    ranges, tris = _tables()
    return (wp.array(np.asarray(ranges, np.int32), dtype=wp.int32),
            wp.array(np.asarray(tris, np.int32), dtype=wp.int32),
            wp.array(np.asarray(_EDGE_GRID, np.int32), dtype=wp.vec4i))


def _check_dims(shape, owner: str) -> None:
    if len(shape) != 3 or min(shape) < 2:
        raise GeometryError(f"{owner}: the field must have at least 2 nodes on each axis, got shape {tuple(shape)}")


def _extract(field, threshold: float, lower, upper):
    """(verts, indices) weft arrays of the isosurface of a float32 3-D weft array ``field``."""
    import weft as wp

    flag_edges, place_vertices, count_triangles, write_triangles = _kernels()
    ranges, tri_edges, edge_grid = _table_arrays()
    nx, ny, nz = field.shape
    lo = np.zeros(3) if lower is None else np.asarray(tuple(lower), np.float64)
    hi = np.array([nx - 1, ny - 1, nz - 1], np.float64) if upper is None else np.asarray(tuple(upper), np.float64)
    spacing = (hi - lo) / (np.array([nx, ny, nz], np.float64) - 1.0)
    thr = float(threshold)
    flags = wp.zeros(nx * ny * nz * 3, dtype=wp.int32)
    wp.launch(flag_edges, dim=(nx, ny, nz), inputs=[field, thr, flags], record_tape=False)
    f = flags.numpy()
    vid = wp.array((np.cumsum(f, dtype=np.int64) - 1).astype(np.int32), dtype=wp.int32)
    n_verts = int(f.sum())
    grad = bool(getattr(field, "requires_grad", False))
    verts = wp.zeros(n_verts, dtype=wp.vec3, requires_grad=grad)
    if n_verts:
        wp.launch(place_vertices, dim=(nx, ny, nz), inputs=[field, thr, flags, vid, wp.vec3(*lo), wp.vec3(*spacing)],
                  outputs=[verts])
    counts = wp.zeros((nx - 1) * (ny - 1) * (nz - 1), dtype=wp.int32)
    wp.launch(count_triangles, dim=(nx - 1, ny - 1, nz - 1), inputs=[field, thr, ranges, counts], record_tape=False)
    c = counts.numpy()
    offsets = np.zeros_like(c)
    np.cumsum(c[:-1], out=offsets[1:])
    n_tris = int(c.sum())
    indices = wp.zeros(3 * n_tris, dtype=wp.int32)
    if n_tris:
        wp.launch(write_triangles, dim=(nx - 1, ny - 1, nz - 1),
                  inputs=[field, thr, ranges, tri_edges, edge_grid, wp.array(offsets, dtype=wp.int32), vid, indices],
                  record_tape=False)
    return verts, indices


def _as_field(field, owner: str):
    import weft as wp

    if not hasattr(field, "numpy"):
        field = wp.array(np.ascontiguousarray(field, np.float32), dtype=float)
    _check_dims(field.shape, owner)
    data = field.numpy()
    if data.dtype != np.float32:
        raise GeometryTypeError(f"{owner}: argument 'field' must be a float32 3-D array, got dtype {data.dtype}")
    if not np.isfinite(data).all():
        raise GeometryError(f"{owner}: argument 'field' holds NaN or infinite values")
    return field


_UNSET = object()  # a legacy argument not passed (None passed explicitly still warns)


def _warn(message: str, stacklevel: int = 3) -> None:
    warn(message, DeprecationWarning, stacklevel=stacklevel)


class IsoSurfaceBase(abc.ABC):
    """An isosurface extractor on an ``nx x ny x nz`` node grid spanning ``lower``..``upper``.

    After :meth:`surface`, ``verts`` (array of vec3) and ``indices`` (flat int32 array, 3 per triangle) hold the mesh.
    """

    def __init__(self, nx: int, ny: int, nz: int, max_verts: int = 0, max_tris: int = 0, device=None, lower=None,
                 upper=None, domain_bounds_lower_corner=_UNSET, domain_bounds_upper_corner=_UNSET):
        for canonical, legacy, value, old in (("lower", "domain_bounds_lower_corner", lower,
                                               domain_bounds_lower_corner),
                                              ("upper", "domain_bounds_upper_corner", upper,
                                               domain_bounds_upper_corner)):
            if value is not None and old is not _UNSET and old is not None:
                raise TypeError(f"Cannot specify both `{canonical}` and `{legacy}`")
            if old is not _UNSET:  # passed at all, even as None: Warp warns too
                _warn(f"The argument `{legacy}` is deprecated. Use `{canonical}` instead.")
        domain_bounds_lower_corner = None if domain_bounds_lower_corner is _UNSET else domain_bounds_lower_corner
        domain_bounds_upper_corner = None if domain_bounds_upper_corner is _UNSET else domain_bounds_upper_corner
        self.device = device
        self.max_verts, self.max_tris = max_verts, max_tris
        self.nx, self.ny, self.nz = int(nx), int(ny), int(nz)
        self.lower = lower if lower is not None else domain_bounds_lower_corner
        self.upper = upper if upper is not None else domain_bounds_upper_corner
        self.verts = None
        self.indices = None

    def resize(self, nx: int, ny: int, nz: int, max_verts: int = 0, max_tris: int = 0) -> None:
        """Change the grid size (the outputs are sized to each surface, so the maxima are not needed)."""
        self.nx, self.ny, self.nz = int(nx), int(ny), int(nz)
        self.max_verts, self.max_tris = max_verts, max_tris

    @abc.abstractmethod
    def surface(self, field, threshold: float) -> None:
        """Extract the isosurface ``field == threshold`` into ``verts`` and ``indices``."""

    @property
    def domain_bounds_lower_corner(self):
        _warn(f"{type(self).__name__}.domain_bounds_lower_corner is deprecated. Use `lower` instead.")
        return self.lower

    @domain_bounds_lower_corner.setter
    def domain_bounds_lower_corner(self, value) -> None:
        _warn(f"{type(self).__name__}.domain_bounds_lower_corner is deprecated. Use `lower` instead.")
        self.lower = value

    @property
    def domain_bounds_upper_corner(self):
        _warn(f"{type(self).__name__}.domain_bounds_upper_corner is deprecated. Use `upper` instead.")
        return self.upper

    @domain_bounds_upper_corner.setter
    def domain_bounds_upper_corner(self, value) -> None:
        _warn(f"{type(self).__name__}.domain_bounds_upper_corner is deprecated. Use `upper` instead.")
        self.upper = value


class IsoSurfaceMarchingCubes(IsoSurfaceBase):
    """Marching cubes on a node-sampled field (see the module description).

    Args:
        nx, ny, nz: number of grid nodes along each axis (a field needs >= 2 on each to hold a cell).
        max_verts, max_tris: accepted for Warp compatibility (weft sizes its outputs to the surface).
        lower, upper: world positions of node (0, 0, 0) and node (nx-1, ny-1, nz-1); default: node index units.

    The vertices are differentiable w.r.t. the field: inside a ``wp.Tape`` the vertex kernel is recorded, so
    gradients of anything computed from ``verts`` flow back to ``field.grad`` (the connectivity is piecewise constant).
    """

    CUBE_CORNER_OFFSETS = CUBE_CORNER_OFFSETS
    EDGE_TO_CORNERS = EDGE_TO_CORNERS
    CASE_TO_TRI_RANGE = _LazyTable(0)
    TRI_LOCAL_INDICES = _LazyTable(1)

    def surface(self, field, threshold: float) -> None:
        """Extract the isosurface ``field == threshold`` into ``verts`` and ``indices``."""
        field = _as_field(field, "MarchingCubes.surface")
        if tuple(field.shape) != (self.nx, self.ny, self.nz):
            raise GeometryError(f"MarchingCubes.surface: argument 'field' has shape {tuple(field.shape)}, the grid is "
                                f"{(self.nx, self.ny, self.nz)}")
        self.verts, self.indices = _extract(field, threshold, self.lower, self.upper)

    @staticmethod
    def extract(field, threshold: float = 0.0, lower=None, upper=None):
        """The isosurface of ``field`` as ``(verts, indices)`` arrays (the functional form of :meth:`surface`)."""
        return _extract(_as_field(field, "IsoSurfaceMarchingCubes.extract"), threshold, lower, upper)

    @staticmethod
    def extract_surface_marching_cubes(field, threshold: float = 0.0, lower=None, upper=None):
        """Deprecated name of :meth:`extract`."""
        _warn("MarchingCubes.extract_surface_marching_cubes() is deprecated. Use "
              "IsoSurfaceMarchingCubes.extract() instead.")
        return IsoSurfaceMarchingCubes.extract(field, threshold, lower, upper)


#: the older name (``wp.MarchingCubes`` warns on access; this module name does not)
MarchingCubes = IsoSurfaceMarchingCubes
