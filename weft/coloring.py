"""Graph coloring for parallel constraint solving (Warp's ``wp.utils.graph_coloring_*``).

Nodes of one color share no edge, so a solver can update all of them at once (Gauss-Seidel by color, as in vertex
block descent). Host code on NumPy: colorings are computed once per mesh topology.

- :func:`graph_coloring_assign`: maximum-cardinality-search order (``MCS``: optimal on chordal graphs) or
  largest-degree-first order (``GREEDY``), each node taking the smallest color none of its colored neighbors has.
- :func:`graph_coloring_balance`: moves single nodes from large color groups into the smallest one while the
  coloring stays valid, until the largest / smallest group ratio reaches the target, no node can move, or
  ``max_iterations`` moves were made; returns the best coloring seen.
- :func:`graph_coloring_get_groups`: the node ids of each color.
"""

from __future__ import annotations

import enum
import heapq
import operator

import numpy as np

from .errors import warn
from .runtime.array import array
from .types.scalars import int32

__all__ = ["GraphColoringAlgorithm", "graph_coloring_assign", "graph_coloring_balance", "graph_coloring_get_groups"]


class GraphColoringAlgorithm(enum.IntEnum):
    """Order in which :func:`graph_coloring_assign` colors the nodes."""

    MCS = 0  # maximum cardinality search: next, the node with the most already-ordered neighbors
    GREEDY = 1  # largest degree first


def _type_name(dtype) -> str:
    return getattr(dtype, "__name__", str(dtype))


def _check_graph(edges, node_colors) -> None:
    for name, arr in (("edges", edges), ("node_colors", node_colors)):
        if not arr.device.impl.host_memory:
            raise RuntimeError(f"{name} array must be on the CPU")
        if arr.dtype is not int32:
            raise RuntimeError(f"{name} array must have dtype int32, got {_type_name(arr.dtype)}")
    if edges.ndim != 2:
        raise RuntimeError(f"edges array must be 2-dimensional, got {edges.ndim} dimensions")
    if edges.shape[1] != 2:
        raise RuntimeError(f"edges array must have shape (edge_count, 2), got shape {edges.shape}")
    if node_colors.ndim != 1:
        raise RuntimeError(f"node_colors array must be 1-dimensional, got {node_colors.ndim} dimensions")


def _edge_list(edges, n: int, what: str) -> np.ndarray:
    e = np.asarray(edges.numpy(), dtype=np.int64).reshape(-1, 2)
    bad = np.flatnonzero(((e < 0) | (e >= n)).any(axis=1))
    if bad.size:
        k = int(bad[0])
        raise RuntimeError(f"{what} failed: Graph edge {k} has endpoints ({int(e[k, 0])}, {int(e[k, 1])}), but valid "
                           f"node indices are in the range [0, {n}).")
    return e[e[:, 0] != e[:, 1]]  # a self-loop constrains nothing


def _adjacency(e: np.ndarray, n: int) -> list[np.ndarray]:
    """Sorted, duplicate-free neighbor lists."""
    both = np.unique(np.concatenate([e, e[:, ::-1]]), axis=0) if e.size else np.zeros((0, 2), np.int64)
    starts = np.searchsorted(both[:, 0], np.arange(n + 1))
    return [both[starts[i]:starts[i + 1], 1] for i in range(n)]


def _smallest_free_color(nbrs: np.ndarray, colors: np.ndarray) -> int:
    used = colors[nbrs]
    used = np.unique(used[used >= 0])
    free = np.flatnonzero(used != np.arange(used.size))
    return int(free[0]) if free.size else int(used.size)


def graph_coloring_assign(edges, node_colors, algorithm: GraphColoringAlgorithm = GraphColoringAlgorithm.MCS) -> int:
    """Color the nodes of an undirected graph so that no edge joins two nodes of one color.

    Args:
        edges: ``(edge_count, 2)`` int32 CPU array of node index pairs.
        node_colors: ``(node_count,)`` int32 CPU array that receives the colors; its length is the node count.
        algorithm: the order in which nodes are colored (:class:`GraphColoringAlgorithm`).

    Returns:
        The number of colors used.
    """
    _check_graph(edges, node_colors)
    n = node_colors.shape[0]
    if n == 0:
        raise RuntimeError("Cannot color an empty graph")
    try:
        algorithm = GraphColoringAlgorithm(int(algorithm))
    except ValueError:
        raise RuntimeError(f"Graph coloring failed: Unrecognized coloring algorithm number: {int(algorithm)}!") from None
    adj = _adjacency(_edge_list(edges, n, "Graph coloring"), n)
    colors = np.full(n, -1, dtype=np.int64)
    for v in (mcs_order(adj, n) if algorithm is GraphColoringAlgorithm.MCS else degree_order(adj, n)):
        colors[v] = _smallest_free_color(adj[v], colors)
    node_colors.numpy()[:] = colors.astype(np.int32)
    return int(colors.max()) + 1


def degree_order(adj: list[np.ndarray], n: int) -> list[int]:
    degree = np.array([a.size for a in adj], dtype=np.int64)
    return list(np.lexsort((np.arange(n), -degree)))  # largest degree first, ties by index


def mcs_order(adj: list[np.ndarray], n: int) -> list[int]:
    """Maximum cardinality search: repeatedly take the unvisited node with the most visited neighbors (ties: the
    lowest index), restarting in each connected component at its lowest-indexed node."""
    weight = np.zeros(n, dtype=np.int64)
    visited = np.zeros(n, dtype=bool)
    heap = [(0, v) for v in range(n)]  # (-weight, node); stale entries are skipped
    order = []
    while heap:
        w, v = heapq.heappop(heap)
        if visited[v] or -w != weight[v]:
            continue
        visited[v] = True
        order.append(v)
        for u in adj[v]:
            if not visited[u]:
                weight[u] += 1
                heapq.heappush(heap, (-int(weight[u]), int(u)))
    return order


def graph_coloring_balance(edges, node_colors, color_count: int, target_max_min_ratio: float, *,
                           max_iterations: int | None = None) -> float:
    """Even out the sizes of the color groups of a valid coloring, in place, keeping it valid.

    Each step recolors one node into the smallest group (the lowest color among equally small ones): from the
    largest group that has a node with no neighbor of that color (the lowest-indexed such node), or else from the
    next largest group at least one node bigger than the smallest. It stops when the ratio of the largest to the
    smallest group is at most ``target_max_min_ratio``, when no node can move, or after ``max_iterations`` moves
    (default: the node count; a warning says so if a move was still possible). ``node_colors`` receives the best
    coloring seen.

    Returns:
        The largest / smallest group ratio of that coloring.
    """
    _check_graph(edges, node_colors)
    n = node_colors.shape[0]
    if max_iterations is None:
        max_iterations = n
    elif isinstance(max_iterations, (bool, np.bool_)):
        raise TypeError(f"max_iterations must be an integer or None, got {type(max_iterations).__name__}")
    else:
        try:
            max_iterations = operator.index(max_iterations)
        except TypeError:
            raise TypeError(f"max_iterations must be an integer or None, got {type(max_iterations).__name__}") from None
        if max_iterations < 0:
            raise ValueError(f"max_iterations must be non-negative, got {max_iterations}")
        if max_iterations > np.iinfo(np.int32).max:
            raise ValueError(f"max_iterations must not exceed {np.iinfo(np.int32).max}, got {max_iterations}")
    e = _edge_list(edges, n, "Graph coloring balance")
    colors = node_colors.numpy().astype(np.int64)
    bad = np.flatnonzero((colors < 0) | (colors >= color_count))
    if bad.size:
        k = int(bad[0])
        raise RuntimeError(f"Graph coloring balance failed: Node {k} has color {int(colors[k])}, but valid colors are "
                           f"in the range [0, {color_count}).")
    if n == 0 or color_count <= 0:
        return 1.0
    adj = _adjacency(e, n)
    # nbr[v, c]: how many neighbors of v have color c (a node may move to c when it is 0)
    nbr = np.zeros((n, color_count), dtype=np.int64)
    if e.size:
        np.add.at(nbr, (e[:, 0], colors[e[:, 1]]), 1)
        np.add.at(nbr, (e[:, 1], colors[e[:, 0]]), 1)
    sizes = np.bincount(colors, minlength=color_count)

    def ratio() -> float:
        lo = sizes.min()
        return float(sizes.max()) / float(lo) if lo > 0 else float("inf")

    def find_move():
        target = int(np.argmin(sizes))
        for source in np.lexsort((np.arange(color_count), -sizes)):
            if source == target or sizes[source] < sizes[target] + 1:
                continue
            members = np.flatnonzero(colors == source)
            free = members[nbr[members, target] == 0]
            if free.size:
                return int(free[0]), int(source), target
        return None

    best, best_ratio = colors.copy(), ratio()
    moves = 0
    while ratio() > target_max_min_ratio:
        move = find_move()
        if move is None:
            break
        if moves == max_iterations:
            warn(f"Graph coloring stopped because it reached the {max_iterations}-iteration limit (achieved "
                 f"ratio {best_ratio:g}, target {target_max_min_ratio:g}).", stacklevel=2)
            break
        v, source, target = move
        colors[v] = target
        sizes[source] -= 1
        sizes[target] += 1
        nbr[adj[v], source] -= 1
        nbr[adj[v], target] += 1
        moves += 1
        if ratio() < best_ratio:
            best, best_ratio = colors.copy(), ratio()
    node_colors.numpy()[:] = best.astype(np.int32)
    return best_ratio


def graph_coloring_get_groups(node_colors, color_count: int, return_wp_array: bool = True, device="cpu"):
    """The node ids of each color, as a tuple of ``color_count`` int32 arrays (weft arrays on ``device``, or NumPy
    arrays with ``return_wp_array=False``)."""
    if color_count < 0:
        raise RuntimeError("color_count must be non-negative")
    if color_count == 0:
        return ()
    if not node_colors.device.impl.host_memory:
        raise RuntimeError("node_colors array must be on the CPU")
    if node_colors.dtype is not int32:
        raise RuntimeError(f"node_colors array must have dtype int32, got {_type_name(node_colors.dtype)}")
    if node_colors.ndim != 1:
        raise RuntimeError(f"node_colors array must be 1-dimensional, got {node_colors.ndim} dimensions")
    colors = node_colors.numpy()
    groups = tuple(np.flatnonzero(colors == c).astype(np.int32) for c in range(color_count))
    if return_wp_array:
        return tuple(array(g, dtype=int32, device=device) for g in groups)
    return groups
