"""``warp._src.deterministic``: the deterministic-mode constants, as weft's :class:`~weft.DeterministicMode`."""

from __future__ import annotations

from ..config import DeterministicMode

DETERMINISTIC_NOT_GUARANTEED = DeterministicMode.NOT_GUARANTEED
DETERMINISTIC_RUN_TO_RUN = DeterministicMode.RUN_TO_RUN
DETERMINISTIC_GPU_TO_GPU = DeterministicMode.GPU_TO_GPU
