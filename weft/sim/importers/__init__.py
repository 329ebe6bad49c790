"""Importers of robot descriptions into a :class:`~weft.sim.ModelBuilder` (URDF)."""

from .urdf import parse_urdf

__all__ = ["parse_urdf"]
