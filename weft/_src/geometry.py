"""``warp._src.geometry``: weft's ``wp.geometry``."""

from __future__ import annotations

from ..geometry import *
