"""Graph colouring of particles for the VBD integrator's Gauss-Seidel sweeps: particles of one colour share no
element, so a colour is solved in parallel.

Two orderings feed a greedy colouring (each vertex takes the smallest colour none of its coloured neighbours has):
maximum cardinality search (MCS, Pereira and Palsberg 2005: next the vertex with the most coloured neighbours,
optimal on chordal graphs and typically 30-50 % fewer colours than degree order) and decreasing degree
(``ORDERED_GREEDY``). An optional balancing pass then moves vertices from the largest colours to the smallest ones
they may join until the largest/smallest size ratio reaches a target.
"""

from __future__ import annotations

import warnings
from enum import Enum

import numpy as np

from ..coloring import degree_order, mcs_order


class ColoringAlgorithm(Enum):
    """The vertex order of the greedy colouring (warp.sim 1.7's names and values)."""

    MCS = 0
    ORDERED_GREEDY = 1


def _adjacency(num_nodes: int, edges: np.ndarray) -> list:
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    edges = edges[(edges[:, 0] >= 0) & (edges[:, 1] >= 0) & (edges[:, 0] != edges[:, 1])]
    adj = [set() for _ in range(num_nodes)]
    for a, b in edges.tolist():
        adj[a].add(b)
        adj[b].add(a)
    return adj


def _order(adj: list, algorithm: ColoringAlgorithm) -> list:
    """The greedy colouring's vertex order: weft.coloring's (wp.utils.graph_coloring_assign) MCS or degree order."""
    lists = [np.fromiter(sorted(a), dtype=np.int64, count=len(a)) for a in adj]
    if algorithm == ColoringAlgorithm.ORDERED_GREEDY:
        return [int(v) for v in degree_order(lists, len(adj))]
    return mcs_order(lists, len(adj))


def _balance(adj: list, colors: np.ndarray, num_colors: int, target: float) -> float:
    sizes = np.bincount(colors, minlength=num_colors)
    if num_colors < 2:
        return 1.0
    for _ in range(len(colors)):
        big, small = int(np.argmax(sizes)), int(np.argmin(sizes))
        if sizes[small] == 0 or sizes[big] / sizes[small] <= target:
            break
        moved = False
        for v in np.nonzero(colors == big)[0].tolist():
            if all(colors[u] != small for u in adj[v]):
                colors[v] = small
                sizes[big] -= 1
                sizes[small] += 1
                moved = True
                break
        if not moved:
            break
    return float(sizes.max() / max(sizes.min(), 1))


def color_graph(num_nodes: int, graph_edge_indices, balance_colors: bool = True,
                target_max_min_color_ratio: float = 1.1,
                algorithm: ColoringAlgorithm = ColoringAlgorithm.MCS) -> list:
    """Colour a graph given as ``(num_edges, 2)`` vertex pairs; returns one int32 array of vertex indices per
    colour."""
    if not isinstance(algorithm, ColoringAlgorithm):
        raise TypeError(f"color_graph: 'algorithm' must be a ColoringAlgorithm, got {algorithm!r}")
    if num_nodes == 0:
        return []
    edges = np.asarray(graph_edge_indices.numpy() if hasattr(graph_edge_indices, "numpy") else graph_edge_indices)
    if edges.size and edges.ndim != 2:
        raise ValueError(f"color_graph: 'graph_edge_indices' must be 2-D, got {edges.ndim}-D")
    adj = _adjacency(num_nodes, edges)
    colors = np.full(num_nodes, -1, dtype=np.int64)
    for v in _order(adj, algorithm):
        taken = {colors[u] for u in adj[v]}
        c = 0
        while c in taken:
            c += 1
        colors[v] = c
    num_colors = int(colors.max()) + 1
    if balance_colors:
        ratio = _balance(adj, colors, num_colors, target_max_min_color_ratio)
        if ratio > target_max_min_color_ratio:
            warnings.warn(f"color_graph: the colours could not be balanced below a max/min size ratio of "
                          f"{target_max_min_color_ratio} (reached {ratio:.3g})", stacklevel=2)
    return [np.nonzero(colors == c)[0].astype(np.int32) for c in range(num_colors)]


def trimesh_graph_edges(edge_indices, include_bending: bool) -> np.ndarray:
    """The graph of a triangle mesh from its bending-edge table ``(o0, o1, v0, v1)``: the mesh edges (v0, v1), and
    with ``include_bending`` also (o0, o1) where both opposite vertices exist."""
    e = np.asarray(edge_indices, dtype=np.int64).reshape(-1, 4)
    pairs = [e[:, 2:4]]
    if include_bending:
        pairs.append(e[(e[:, 0] >= 0) & (e[:, 1] >= 0)][:, 0:2])
    return np.concatenate(pairs, axis=0)


def color_trimesh(num_nodes: int, trimesh_edge_indices, include_bending_energy: bool, balance_colors: bool = True,
                  target_max_min_color_ratio: float = 1.1,
                  algorithm: ColoringAlgorithm = ColoringAlgorithm.MCS) -> list:
    """Colour the vertices of a triangle mesh (see :func:`trimesh_graph_edges`)."""
    return color_graph(num_nodes, trimesh_graph_edges(trimesh_edge_indices, include_bending_energy), balance_colors,
                       target_max_min_color_ratio, algorithm)


def combine_independent_particle_coloring(color_groups_1: list, color_groups_2: list) -> list:
    """Merge the colourings of two unconnected graphs: the i-th smallest group of the one with more colours joins
    the i-th largest of the other, so the group sizes stay balanced."""
    if not color_groups_1:
        return list(color_groups_2)
    if not color_groups_2:
        return list(color_groups_1)
    if len(color_groups_1) < len(color_groups_2):
        color_groups_1, color_groups_2 = color_groups_2, color_groups_1
    a = sorted(color_groups_1, key=len)
    b = sorted(color_groups_2, key=lambda g: -len(g))
    return [np.concatenate([g, b[i]]).astype(np.int32) if i < len(b) else np.asarray(g, dtype=np.int32)
            for i, g in enumerate(a)]


def validate_coloring(num_nodes: int, graph_edge_indices, color_groups) -> bool:
    """True when every vertex has exactly one colour and no edge joins two vertices of the same colour."""
    colors = np.full(num_nodes, -1, dtype=np.int64)
    for c, g in enumerate(color_groups):
        g = np.asarray(g.numpy() if hasattr(g, "numpy") else g, dtype=np.int64)
        if np.any(colors[g] != -1):
            return False
        colors[g] = c
    if np.any(colors < 0):
        return False
    e = np.asarray(graph_edge_indices, dtype=np.int64).reshape(-1, 2)
    e = e[(e >= 0).all(axis=1) & (e[:, 0] != e[:, 1])]  # (self-loops constrain nothing)
    return bool(np.all(colors[e[:, 0]] != colors[e[:, 1]]))
