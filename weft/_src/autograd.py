"""``warp._src.autograd``: weft's ``wp.autograd`` (Warp's tests import it from the private path)."""

from __future__ import annotations

from ..autograd import *
from ._unsupported import unsupported

FunctionMetadata = unsupported("warp._src.autograd.FunctionMetadata",
                               "weft's gradient tools take kernels and Tapes, not Warp's function-metadata records")
