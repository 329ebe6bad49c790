"""Sparse marching cubes (Warp 1.19's ``wp.geometry.sparse_marching_cubes``, ``sparse_marching_cubes_from_cells``,
``lipschitz_octree``): marching cubes on an explicit set of cells, and a Lipschitz octree that finds the cells near
the level set of an implicit field without sampling the whole grid.

The topology (which cell edges the surface crosses, the triangles of each cell's case) is found on the host with
NumPy from the corner values, using the case table of the dense extractor (``marching.py``), so a sparse extraction
over the cells the dense grid would visit gives the same triangles with the same winding. The vertex positions are
computed by a weft kernel from the corner values with the dense extractor's interpolation formula, so inside a
``wp.Tape`` gradients flow from the vertices back to the corner values (through a gather kernel for
``corner_values``; directly to ``field``'s output for ``sparse_marching_cubes``). Corners shared by several cells are
merged (the first listed value is used), and so are the vertices on shared edges: the mesh is watertight wherever
the cells are. The octree pruning is discrete and not differentiated.
"""

from __future__ import annotations

import functools

import numpy as np

from ..builtins import Builtin, tid, where
from ..frontend.func import Func
from ..kernel import kernel
from ..runtime.array import array, empty, from_numpy, zeros
from ..runtime.device import get_device
from ..runtime.launch import launch
from ..types.aliases import NAMED_TYPES
from ..types.scalars import float32, int32
from .marching import CASE_TO_TRI_RANGE, CUBE_CORNER_OFFSETS, EDGE_TO_CORNERS, TRI_LOCAL_INDICES

vec3 = NAMED_TYPES["vec3"]
vec3i = NAMED_TYPES["vec3i"]
cw_mul = Builtin("cw_mul")  # the kernel builtin (ops register after this module is imported)

__all__ = ["lipschitz_octree", "sparse_marching_cubes", "sparse_marching_cubes_from_cells"]

_OFFSETS = np.asarray(CUBE_CORNER_OFFSETS, np.int64)
_RANGES = np.asarray(CASE_TO_TRI_RANGE, np.int64)
_TRI_EDGES = np.asarray(TRI_LOCAL_INDICES, np.int64)
# each cell edge: (lower corner index, upper corner index, axis)
_EDGES = np.array([(a, b) if _OFFSETS[a].sum() < _OFFSETS[b].sum() else (b, a) for a, b in EDGE_TO_CORNERS], np.int64)
_EDGE_AXIS = np.argmax(np.abs(_OFFSETS[_EDGES[:, 1]] - _OFFSETS[_EDGES[:, 0]]), axis=1)


@functools.cache
def _kernels():
    @kernel
    def gather(source: array(dtype=int32), values: array(dtype=float32), out: array(dtype=float32)):
        i = tid()
        out[i] = values[source[i]]

    @kernel
    def place(values: array(dtype=float32), lo_corner: array(dtype=int32), hi_corner: array(dtype=int32),
              node: array(dtype=vec3), axis: array(dtype=int32), threshold: float, origin: vec3, spacing: vec3,
              verts: array(dtype=vec3)):
        e = tid()
        f0 = values[lo_corner[e]]
        t = (threshold - f0) / (values[hi_corner[e]] - f0)
        a = axis[e]
        step = vec3(where(a == 0, t, 0.0), where(a == 1, t, 0.0), where(a == 2, t, 0.0))
        verts[e] = origin + cw_mul(node[e] + step, spacing)

    return gather, place


def _empty(device):
    return zeros(0, dtype=vec3, device=device), zeros(0, dtype=int32, device=device)


def _dedupe(cells: np.ndarray):
    """Unique corners of the cells: (corner subscripts (U, 3), per-cell corner ids (N, 8), first flat source (U,))."""
    lo = cells.min(axis=0)
    span = int((cells.max(axis=0) - lo).max()) + 2
    if span ** 3 >= 2 ** 62:
        raise ValueError("sparse_marching_cubes_from_cells: the cell subscripts span too large a range")
    corners = cells[:, None, :] + _OFFSETS[None, :, :] - lo
    codes = (corners[..., 0] * span + corners[..., 1]) * span + corners[..., 2]
    _codes, first, inverse = np.unique(codes.reshape(-1), return_index=True, return_inverse=True)
    subs = (cells[:, None, :] + _OFFSETS[None, :, :]).reshape(-1, 3)[first]
    return subs, inverse.reshape(-1, 8), first


def _extract(cells: np.ndarray, corner_ids: np.ndarray, subs: np.ndarray, values, threshold: float, origin,
             spacing, device, base=None):
    """(verts, indices) of the surface over ``cells`` with unique-corner ``values`` (a weft float32 array). Vertex
    positions are decoded from subscripts relative to ``base``, folded into the origin in float64 (exact in float32
    for subscripts past 2^24)."""
    base = np.zeros(3, np.int64) if base is None else np.asarray(base, np.int64)
    origin = np.asarray(tuple(origin), np.float64) + base * np.asarray(spacing, np.float64)
    vals = values.numpy().astype(np.float32)
    below = vals[corner_ids] < np.float32(threshold)  # (N, 8)
    case = (below * (1 << np.arange(8))).sum(axis=1)
    ntri = _RANGES[case + 1] - _RANGES[case]
    if not ntri.any():
        return _empty(device)
    # every cell edge of every cell: its lower / upper unique corner, crossing or not
    lo_c = corner_ids[:, _EDGES[:, 0]]
    hi_c = corner_ids[:, _EDGES[:, 1]]
    crossing = below[:, _EDGES[:, 0]] != below[:, _EDGES[:, 1]]
    span = int(corner_ids.max()) + 1
    keys = lo_c.astype(np.int64) * (3 * span) + hi_c  # an edge is its corner pair (lower, upper)
    ukeys, first = np.unique(keys[crossing], return_index=True)
    e_lo, e_hi = lo_c[crossing][first], hi_c[crossing][first]
    e_axis = np.broadcast_to(_EDGE_AXIS, lo_c.shape)[crossing][first]
    # triangles: per case, its table triangles' cell edges mapped to the unique edge vertices
    tris = []
    order = np.argsort(case, kind="stable")
    for c in np.unique(case[ntri > 0]):
        sel = order[np.searchsorted(case[order], c, "left"):np.searchsorted(case[order], c, "right")]
        local = _TRI_EDGES[3 * _RANGES[c]:3 * _RANGES[c + 1]]
        k = keys[sel][:, local]  # (cells, 3 * tris)
        tris.append((sel, np.searchsorted(ukeys, k)))
    indices = np.empty(int(3 * ntri.sum()), np.int32)
    start = np.zeros(len(cells) + 1, np.int64)
    np.cumsum(3 * ntri, out=start[1:])
    for sel, v in tris:
        idx = start[sel][:, None] + np.arange(v.shape[1])[None, :]
        indices[idx.reshape(-1)] = v.reshape(-1)
    _gather, place = _kernels()
    n = len(ukeys)
    verts = zeros(n, dtype=vec3, device=device, requires_grad=bool(getattr(values, "requires_grad", False)))
    launch(place, dim=n, device=device,
           inputs=[values, from_numpy(e_lo.astype(np.int32), dtype=int32, device=device),
                   from_numpy(e_hi.astype(np.int32), dtype=int32, device=device),
                   from_numpy((subs[e_lo] - base).astype(np.float32), dtype=vec3, device=device),
                   from_numpy(e_axis.astype(np.int32), dtype=int32, device=device), float(threshold),
                   vec3(*[float(o) for o in origin]), vec3(*[float(s) for s in spacing])],
           outputs=[verts])
    return verts, from_numpy(indices, dtype=int32, device=device)


def _cells_numpy(cells) -> np.ndarray:
    c = cells.numpy() if isinstance(cells, array) else np.asarray(cells)
    c = np.asarray(c, dtype=np.int64).reshape(-1, 3) if np.size(c) else np.zeros((0, 3), np.int64)
    return c


def sparse_marching_cubes_from_cells(cells, corner_values, origin=(0.0, 0.0, 0.0), cell_width: float = 1.0,
                                     threshold: float = 0.0, device=None):
    """Marching cubes on an explicit list of cells.

    Args:
        cells: ``(N, 3)`` integer minimum-corner subscripts (``wp.array`` of ``vec3i``, ``(N, 3)`` int32, or any
            array-like); cell ``(i, j, k)`` covers ``origin + cell_width * [(i, j, k), (i + 1, j + 1, k + 1)]``.
            Subscripts may be negative; cells should be unique.
        corner_values: ``(N, 8)`` float32 field values at each cell's corners, in
            ``IsoSurfaceMarchingCubes.CUBE_CORNER_OFFSETS`` order (a weft array is differentiable on a Tape).
        origin: world position of subscript ``(0, 0, 0)``.
        cell_width: side length of a cell (> 0).
        threshold: the isovalue.

    Returns:
        ``(vertices, indices)``: a ``vec3`` array and a flat int32 array, three entries per triangle.
    """
    device = get_device(device)
    if not cell_width > 0.0:
        raise ValueError(f"cell_width must be positive, got {cell_width}.")
    c = _cells_numpy(cells)
    if isinstance(corner_values, array):
        values = corner_values
        if values.dtype is not float32:
            raise ValueError(f"corner_values must be float32, got {values.dtype}.")
    else:
        values = from_numpy(np.ascontiguousarray(corner_values, dtype=np.float32).reshape(-1), dtype=float32,
                            device=device)
    if values.size != 8 * len(c):
        raise ValueError(f"corner_values must have {8 * len(c)} entries for {len(c)} cells, got {values.size}.")
    if len(c) == 0:
        return _empty(device)
    flat = values if values.ndim == 1 and values.is_contiguous else values.flatten() if values.is_contiguous \
        else values.contiguous().flatten()
    subs, corner_ids, first = _dedupe(c)
    gather, _place = _kernels()
    unique_values = empty(len(subs), dtype=float32, device=device, requires_grad=bool(values.requires_grad))
    launch(gather, dim=len(subs), device=device,
           inputs=[from_numpy(first.astype(np.int32), dtype=int32, device=device), flat], outputs=[unique_values])
    return _extract(c, corner_ids, subs, unique_values, threshold, origin, (cell_width,) * 3, device, c.min(axis=0))


def _evaluate(field, points: np.ndarray, device):
    out = field(from_numpy(points.astype(np.float32), dtype=vec3, device=device))
    if not isinstance(out, array):
        out = from_numpy(np.asarray(out, dtype=np.float32).reshape(-1), dtype=float32, device=device)
    if out.shape[0] != len(points):
        raise ValueError(f"field returned {out.shape[0]} values for {len(points)} points")
    return out


def _check_field(field) -> None:
    if isinstance(field, Func) or not callable(field):
        raise TypeError("field must be a batched callable evaluate(points: wp.array[wp.vec3]) -> wp.array[wp.float32] "
                        "(wrap a single-point @wp.func in a kernel over the points)")


def _octree(field, lower, spacing, max_depth: int, threshold: float, bound: float, limit, device, stats=None):
    """Leaf cells (subscripts in units of the finest cell) whose subtree may reach the level set."""
    cells = np.zeros((1, 3), np.int64)
    spacing = np.asarray(spacing, np.float64)
    for depth in range(max_depth + 1):
        width = 1 << (max_depth - depth)  # in finest cells
        if limit is not None:  # cells entirely past the requested grid are never visited
            keep = np.all(cells * width < np.asarray(limit), axis=1)
            if stats is not None:
                stats["culled_cells"] += int((~keep).sum())
            cells = cells[keep]
        if len(cells) == 0:
            break
        centers = np.asarray(lower) + (cells * width + 0.5 * width) * spacing
        f = _evaluate(field, centers, device).numpy().astype(np.float64)
        if stats is not None:
            stats["field_evaluations"] += len(cells)
        radius = 0.5 * width * float(np.linalg.norm(spacing))
        cells = cells[np.abs(f - threshold) <= bound * radius]
        if depth < max_depth:
            cells = (2 * cells[:, None, :] + _OFFSETS[None, :, :]).reshape(-1, 3)
    return cells


def lipschitz_octree(field, origin, root_width: float, max_depth: int, threshold: float = 0.0,
                     lipschitz_bound: float = 1.0, device=None):
    """The finest cells of a top-down octree over the cube ``[origin, origin + root_width]`` that may intersect the
    ``threshold`` level set of ``field`` (a batched callable, see ``sparse_marching_cubes``) whose Lipschitz
    constant is at most ``lipschitz_bound``: a cell of width ``h`` centred at ``c`` is kept while
    ``|field(c) - threshold| <= lipschitz_bound * sqrt(3) / 2 * h``.

    Returns:
        ``(cells, cell_width)``: a ``vec3i`` array of minimum-corner subscripts in the convention of
        ``sparse_marching_cubes_from_cells`` and the leaf width ``root_width / 2**max_depth``.
    """
    if max_depth < 0:
        raise ValueError(f"max_depth must be non-negative, got {max_depth}.")
    if not root_width > 0.0:
        raise ValueError(f"root_width must be positive, got {root_width}.")
    if lipschitz_bound < 0.0:
        raise ValueError(f"lipschitz_bound must be non-negative, got {lipschitz_bound}.")
    _check_field(field)
    device = get_device(device)
    width = float(root_width) / (1 << max_depth)
    cells = _octree(field, tuple(origin), (width,) * 3, max_depth, float(threshold), float(lipschitz_bound), None,
                    device)
    return from_numpy(cells.astype(np.int32).reshape(-1, 3), dtype=vec3i, device=device), width


def sparse_marching_cubes(field, nx: int, ny: int, nz: int, *, lower=None, upper=None, threshold: float = 0.0,
                          lipschitz_bound: float = 1.0, device=None, return_stats: bool = False):
    """The ``threshold`` isosurface of an implicit function over the grid of ``nx x ny x nz`` nodes spanning
    ``[lower, upper]`` (as ``IsoSurfaceMarchingCubes.extract``: the same triangles), evaluating ``field`` only near
    the surface: a Lipschitz octree (``lipschitz_octree``) selects the cells, then their corners are evaluated once
    each and the cells are extracted (``sparse_marching_cubes_from_cells``).

    Args:
        field: batched callable ``evaluate(points: wp.array[wp.vec3]) -> wp.array[wp.float32]`` of a field whose
            Lipschitz constant is at most ``lipschitz_bound`` (1 for a signed distance). Gradients flow from the
            vertices to its output on a Tape.
        nx, ny, nz: grid nodes per axis (>= 2).
        lower, upper: world positions of nodes (0, 0, 0) and (nx-1, ny-1, nz-1) (defaults as for the dense
            extractor: the origin and the node index units).
        return_stats: also return a dict: ``leaf_cells``, ``unique_corners``, ``field_evaluations``,
            ``resolution``, ``requested_ncells``, ``culled_cells``.

    Returns:
        ``(vertices, indices)`` (and ``stats``).
    """
    if nx < 2 or ny < 2 or nz < 2:
        raise ValueError(f"nx, ny, nz must each be at least 2, got ({nx}, {ny}, {nz}).")
    if lipschitz_bound < 0.0:
        raise ValueError(f"lipschitz_bound must be non-negative, got {lipschitz_bound}.")
    _check_field(field)
    device = get_device(device)
    lo = np.zeros(3) if lower is None else np.asarray(tuple(lower), np.float64)
    hi = np.array([nx - 1, ny - 1, nz - 1], np.float64) if upper is None else np.asarray(tuple(upper), np.float64)
    ncells = (nx - 1, ny - 1, nz - 1)
    spacing = (hi - lo) / np.asarray(ncells, np.float64)
    max_depth = max(0, (max(ncells) - 1).bit_length())
    stats = {"leaf_cells": 0, "unique_corners": 0, "field_evaluations": 0, "resolution": 1 << max_depth,
             "requested_ncells": ncells, "culled_cells": 0}
    cells = _octree(field, lo, spacing, max_depth, float(threshold), float(lipschitz_bound), ncells, device, stats)
    stats["leaf_cells"] = len(cells)
    if len(cells) == 0:
        result = _empty(device)
    else:
        subs, corner_ids, _first = _dedupe(cells)
        stats["unique_corners"] = len(subs)
        stats["field_evaluations"] += len(subs)
        values = _evaluate(field, lo + subs * spacing, device)
        result = _extract(cells, corner_ids, subs, values, float(threshold), lo, spacing, device)
    return (*result, stats) if return_stats else result


