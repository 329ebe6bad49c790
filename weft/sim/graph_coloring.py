"""warp.sim 1.7's module name for the particle colouring functions (``from warp.sim.graph_coloring import ...``)."""

from .coloring import (
    ColoringAlgorithm,
    color_graph,
    color_trimesh,
    combine_independent_particle_coloring,
    validate_coloring,
)
from .coloring import trimesh_graph_edges as construct_trimesh_graph_edges

__all__ = ["ColoringAlgorithm", "color_graph", "color_trimesh", "combine_independent_particle_coloring",
           "construct_trimesh_graph_edges", "validate_coloring"]
