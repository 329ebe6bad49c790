"""``warp._src.autograd``: weft's ``wp.autograd`` plus ``FunctionMetadata`` (what ``jacobian_plot`` needs to know
about a kernel or function; Warp's tests import it from the private path)."""

from __future__ import annotations

from ..autograd import *
from ..runtime.jacobian_plot import FunctionMetadata  # noqa: F401
