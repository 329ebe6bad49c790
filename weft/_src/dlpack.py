"""``warp._src.dlpack``: Warp's private DLPack module; ``_from_dlpack(capsule)`` is weft's :func:`weft.from_dlpack`
(which takes a capsule as well as an object with ``__dlpack__``)."""

from __future__ import annotations

from ..interop.dlpack import from_dlpack as _from_dlpack  # noqa: F401
