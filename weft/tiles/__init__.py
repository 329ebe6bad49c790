"""Tiles: block-wide values with compile-time shapes and the collective ops on them (Tier 3 of the API).

Importing this package registers the kernel-language forms (``frontend``), the C++ rules (``render``) and the
reverse-mode rules (``adjoint``) of the tile ops declared in ``weft.ops.tile``.
"""

from __future__ import annotations

from . import adjoint, frontend, render  # noqa: F401  (registration)
from .api import launch_tiled

__all__ = ["launch_tiled"]
