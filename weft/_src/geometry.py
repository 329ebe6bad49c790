"""``warp._src.geometry``: weft's ``wp.geometry``."""

from __future__ import annotations

from ..geometry import *
from ..geometry import surface_nets  # noqa: F401 - Warp's tests read its tables
