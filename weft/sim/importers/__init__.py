"""Importers of robot descriptions into a :class:`~weft.sim.ModelBuilder` (URDF, MJCF)."""

from .mjcf import parse_mjcf
from .urdf import parse_urdf

__all__ = ["parse_mjcf", "parse_urdf"]
