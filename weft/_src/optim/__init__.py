"""``warp._src.optim``: weft's optimisers and linear solvers under Warp's private path."""

from __future__ import annotations

from . import fsai, linear  # noqa: F401
