"""``warp._src.optim.linear``: weft's ``wp.optim.linear`` plus the private helpers Warp's tests import (they have
no weft counterpart: weft's solvers reduce with their own kernels)."""

from __future__ import annotations

from ...optim.linear import *
from .._unsupported import unsupported

_WHY = "Warp's tiled dot-product kernels and solver loop; weft's Krylov solvers use their own reductions"
TiledDot = unsupported("warp._src.optim.linear.TiledDot", _WHY)
_create_segmented_tiled_dot_kernels = unsupported("warp._src.optim.linear._create_segmented_tiled_dot_kernels", _WHY)
_run_solver_loop = unsupported("warp._src.optim.linear._run_solver_loop", _WHY)
