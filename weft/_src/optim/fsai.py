"""``warp._src.optim.fsai``: weft's ``FSAI`` (``weft.optim._fsai``) under Warp's private path; Warp's device kernels
have no weft counterpart (weft builds the factor on the host and applies it with ``weft.sparse.bsr_mv``)."""

from __future__ import annotations

from ...optim._fsai import FSAI  # noqa: F401
from .._unsupported import unsupported

_WHY = "Warp's FSAI device kernels; weft builds the factor on the host and applies it with weft.sparse.bsr_mv"
_matvec_kernel = unsupported("warp._src.optim.fsai._matvec_kernel", _WHY)
_compare_topology = unsupported("warp._src.optim.fsai._compare_topology", _WHY)
