"""2-D triangulations: triangle-triangle adjacency and Delaunay edge flipping (Warp 1.19's ``warp.geometry`` API),
plus the ``signed_area`` / ``in_circle`` predicates as kernel functions.

The adjacency is built by sorting the half-edges by their undirected edge; the flipping is Lawson's algorithm on the
host in float64: sweep the interior edges, flip every edge whose opposite vertex lies strictly inside the
circumcircle of the other triangle (and whose flip keeps both new triangles above ``area_epsilon``, and above
``ref_area_epsilon`` in ``ref_positions`` when given), until a sweep flips nothing or ``max_passes`` sweeps have run.
For points in general position (no four cocircular) the result is the Delaunay triangulation of the input's edges'
constraints, whatever the order. Warp flips independent edge sets in parallel on the device; the triangles found
can differ in which slot holds which triangle and in the flip count, not in the triangulation. Inside a CPU graph
capture the work is recorded and runs when the graph is replayed (on CUDA devices it needs a host round trip and
cannot be captured).
"""

from __future__ import annotations

import math

import numpy as np

from ..frontend.func import func
from ..runtime.array import array, from_numpy
from ..runtime.capture import active_capture
from ..types.aliases import NAMED_TYPES
from ..types.scalars import int32

vec2 = NAMED_TYPES["vec2"]

__all__ = ["delaunay_edge_flip", "find_triangle_neighbor_edge_index", "in_circle", "signed_area", "tri_tri_adjacency"]


@func
def signed_area(a: vec2, b: vec2, c: vec2) -> float:
    """Signed area of the triangle ``abc``: positive when counterclockwise."""
    return 0.5 * ((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]))


@func
def in_circle(a: vec2, b: vec2, c: vec2, d: vec2) -> bool:
    """Whether ``d`` lies strictly inside the circumcircle of the counterclockwise triangle ``abc`` (the float
    in-circle determinant; not an exact predicate)."""
    ax = a[0] - d[0]
    ay = a[1] - d[1]
    bx = b[0] - d[0]
    by = b[1] - d[1]
    cx = c[0] - d[0]
    cy = c[1] - d[1]
    a2 = ax * ax + ay * ay
    b2 = bx * bx + by * by
    c2 = cx * cx + cy * cy
    return ax * (by * c2 - cy * b2) - ay * (bx * c2 - cx * b2) + a2 * (bx * cy - by * cx) > 0.0


@func
def find_triangle_neighbor_edge_index(triangle_neighbors: array(dtype=int32, ndim=2), triangle: int32,
                                      neighbor: int32) -> int32:
    """The local edge ``j`` of ``triangle`` with ``triangle_neighbors[triangle, j] == neighbor`` (-1 if none)."""
    for j in range(3):
        if triangle_neighbors[triangle, j] == neighbor:
            return j
    return -1


def _check_indices(indices) -> None:
    if not isinstance(indices, array) or indices.ndim != 2 or indices.shape[1] != 3:
        raise ValueError("indices must be a (num_tris, 3) array of triangle vertex indices")


def _adjacency(tris: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(neighbors, neighbor_edges)`` of an int array of triangles: across the edge opposite local vertex j."""
    n = tris.shape[0]
    nbr = np.full((n, 3), -1, dtype=np.int32)
    nbr_edge = np.full((n, 3), -1, dtype=np.int32)
    if n == 0:
        return nbr, nbr_edge
    j = np.tile(np.arange(3), n)
    t = np.repeat(np.arange(n), 3)
    v1 = tris[t, (j + 1) % 3].astype(np.int64)
    v2 = tris[t, (j + 2) % 3].astype(np.int64)
    lo, hi = np.minimum(v1, v2), np.maximum(v1, v2)
    order = np.lexsort((hi, lo))
    lo, hi, t, j = lo[order], hi[order], t[order], j[order]
    same = (lo[1:] == lo[:-1]) & (hi[1:] == hi[:-1])
    if np.any(same[1:] & same[:-1]):
        raise ValueError("tri_tri_adjacency: an edge is shared by more than two triangles (non-manifold mesh)")
    k = np.nonzero(same)[0]
    nbr[t[k], j[k]] = t[k + 1]
    nbr[t[k + 1], j[k + 1]] = t[k]
    nbr_edge[t[k], j[k]] = j[k + 1]
    nbr_edge[t[k + 1], j[k + 1]] = j[k]
    return nbr, nbr_edge


def tri_tri_adjacency(indices, vertex_count: int | None = None, return_neighbor_edge_indices: bool = True):
    """Triangle-triangle adjacency of an edge-manifold triangle mesh (boundaries allowed, any orientation).

    Args:
        indices: ``(num_tris, 3)`` int32 array of vertex indices.
        vertex_count: number of vertices (inferred from ``indices`` when None; must be given inside a graph
            capture, where it cannot be read back).
        return_neighbor_edge_indices: also return, per entry, the shared edge's local index in the neighbour.

    Returns:
        ``triangle_neighbors`` (``[t, j]``: the triangle across the edge opposite local vertex ``j``, -1 on a
        boundary), and with ``return_neighbor_edge_indices`` the tuple ``(triangle_neighbors,
        neighbor_edge_indices)``; ``(num_tris, 3)`` int32 arrays on ``indices.device``.
    """
    _check_indices(indices)
    graph = active_capture()
    if graph is not None and vertex_count is None:
        raise RuntimeError("tri_tri_adjacency inside a graph capture needs vertex_count (inferring it reads the "
                           "indices back to the host)")
    n = indices.shape[0]
    nbr = from_numpy(np.full((n, 3), -1, dtype=np.int32), dtype=int32, device=indices.device)
    nbr_edge = from_numpy(np.full((n, 3), -1, dtype=np.int32), dtype=int32, device=indices.device)

    def run() -> None:
        tris = indices.numpy()
        if n and vertex_count is not None and (tris.min() < 0 or tris.max() >= vertex_count):
            raise ValueError(f"tri_tri_adjacency: vertex indices must lie in [0, {vertex_count})")
        a, b = _adjacency(tris)
        nbr.assign(a)
        nbr_edge.assign(b)

    _run_or_record(graph, indices.device, run)
    return (nbr, nbr_edge) if return_neighbor_edge_indices else nbr


def _run_or_record(graph, device, run) -> None:
    if graph is None:
        run()
    elif device.impl.capture_by_replay:  # the capture replays recorded closures: record the host work
        graph.launches.append(run)
    else:
        raise RuntimeError("weft's triangulation routines run on the host: they cannot be captured on a CUDA device")


def _area2(p: np.ndarray, a: int, b: int, c: int) -> float:
    return float((p[b, 0] - p[a, 0]) * (p[c, 1] - p[a, 1]) - (p[b, 1] - p[a, 1]) * (p[c, 0] - p[a, 0]))


def _incircle(p: np.ndarray, a: int, b: int, c: int, d: int) -> float:
    ad, bd, cd = p[a] - p[d], p[b] - p[d], p[c] - p[d]
    a2, b2, c2 = ad @ ad, bd @ bd, cd @ cd
    return float(ad[0] * (bd[1] * c2 - cd[1] * b2) - ad[1] * (bd[0] * c2 - cd[0] * b2) + a2 * (bd[0] * cd[1] - bd[1] * cd[0]))


def _flip_all(p: np.ndarray, ref: np.ndarray | None, tris: np.ndarray, max_passes: int, area_eps: float,
              ref_eps: float) -> int:
    """Lawson flips in place on ``tris``; returns the number of flips."""
    flips = 0
    for _ in range(max_passes):
        nbr, _edge = _adjacency(tris)
        changed = 0
        done = np.zeros(len(tris), dtype=bool)  # a triangle flipped in this sweep has stale adjacency
        for t in range(len(tris)):
            if done[t]:
                continue
            for j in range(3):
                u = int(nbr[t, j])
                if u < 0 or done[u] or u < t:
                    continue
                c = int(tris[t, j])
                a, b = int(tris[t, (j + 1) % 3]), int(tris[t, (j + 2) % 3])
                k = [m for m in range(3) if int(tris[u, m]) not in (a, b)]
                if len(k) != 1:
                    continue
                d = int(tris[u, k[0]])
                if _incircle(p, a, b, c, d) <= 0.0:
                    continue
                # the quad a-d-b-c (counterclockwise) gets the diagonal c-d: triangles (a, d, c) and (d, b, c)
                if 0.5 * _area2(p, a, d, c) <= area_eps or 0.5 * _area2(p, d, b, c) <= area_eps:
                    continue
                if ref is not None and (abs(0.5 * _area2(ref, a, d, c)) <= ref_eps
                                        or abs(0.5 * _area2(ref, d, b, c)) <= ref_eps):
                    continue
                tris[t] = (a, d, c)
                tris[u] = (d, b, c)
                done[t] = done[u] = True
                changed += 1
                break
        flips += changed
        if changed == 0:
            break
    return flips


def delaunay_edge_flip(positions, indices, ref_positions=None, max_passes: int = 1000, area_epsilon: float = 0.0,
                       ref_area_epsilon: float = 1.0e-10):
    """Flip non-Delaunay interior edges of a counterclockwise manifold triangulation in place (``indices``; the
    positions are not changed) until every interior edge is Delaunay or ``max_passes`` sweeps have run.

    Args:
        positions: ``(vertex_count,)`` array of ``vec2``.
        indices: ``(num_tris, 3)`` int32 array, counterclockwise triangles; modified in place.
        ref_positions: optional reference positions: a flip that would make a triangle of the reference
            configuration degenerate (area at most ``ref_area_epsilon``) is not made.
        max_passes: most sweeps (at least 1).
        area_epsilon: smallest signed area a flip may produce (finite, >= 0).
        ref_area_epsilon: degeneracy threshold in ``ref_positions`` (finite, >= 0).

    Returns:
        A 1-element int32 array on ``indices.device`` holding the number of flips.
    """
    _check_indices(indices)
    if positions.device != indices.device:
        raise ValueError("positions and indices must be on the same device")
    if ref_positions is not None and ref_positions.device != indices.device:
        raise ValueError("ref_positions and indices must be on the same device")
    if max_passes < 1:
        raise ValueError("max_passes must be at least 1")
    for name, eps in (("area_epsilon", area_epsilon), ("ref_area_epsilon", ref_area_epsilon)):
        if not math.isfinite(eps) or eps < 0.0:
            raise ValueError(f"{name} must be a finite, non-negative number")
    total = from_numpy(np.zeros(1, dtype=np.int32), dtype=int32, device=indices.device)

    def run() -> None:
        if indices.shape[0] == 0:
            total.assign(np.zeros(1, dtype=np.int32))
            return
        p = positions.numpy().astype(np.float64).reshape(-1, 2)
        ref = None if ref_positions is None else ref_positions.numpy().astype(np.float64).reshape(-1, 2)
        tris = indices.numpy().astype(np.int64)
        count = _flip_all(p, ref, tris, int(max_passes), float(area_epsilon), float(ref_area_epsilon))
        indices.assign(tris.astype(np.int32))
        total.assign(np.array([count], dtype=np.int32))

    _run_or_record(active_capture(), indices.device, run)
    return total
