"""``warp._src.utils``: weft's ``wp.utils`` plus the device-query helpers Warp's tests import privately."""

from __future__ import annotations

from ..elementwise import map_cache  # noqa: F401
from ..utils import *


def __getattr__(name: str):
    # Warp keeps MeshAdjacency in warp._src.utils, weft in weft.sim.utils: looked up on first use, because importing
    # weft.sim (and SciPy, for its MJCF importer) here made `import weft` ~0.4 s slower
    if name == "MeshAdjacency":
        from ..sim.utils import MeshAdjacency

        return MeshAdjacency
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def check_p2p() -> bool:
    """Whether peer-to-peer copies between CUDA devices can be tested: weft copies between devices through the host,
    so never."""
    return False
