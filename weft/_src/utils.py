"""``warp._src.utils``: weft's ``wp.utils`` plus the device-query helpers Warp's tests import privately."""

from __future__ import annotations

from ..elementwise import map_cache  # noqa: F401
from ..sim.utils import MeshAdjacency  # noqa: F401 (Warp keeps it in warp._src.utils; weft in weft.sim.utils)
from ..utils import *


def check_p2p() -> bool:
    """Whether peer-to-peer copies between CUDA devices can be tested: weft copies between devices through the host,
    so never."""
    return False
