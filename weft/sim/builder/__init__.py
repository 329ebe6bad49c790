"""The model builder, split by element kind (elements, grids, shapes; finalize)."""

from .core import ModelBuilder
from .shapes import compute_shape_mass

__all__ = ["ModelBuilder", "compute_shape_mass"]
