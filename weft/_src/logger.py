"""``warp._src.logger``: Warp's warning helper, routed through :mod:`warnings` (weft's one warning channel).

``once=True`` warns only the first time a message is seen; ``_warnings_seen`` is that set (Warp's tests clear it).
"""

from __future__ import annotations

import warnings

_warnings_seen: set = set()


def log_warning(message: str, category: type[Warning] | None = None, stacklevel: int = 1, once: bool = False) -> None:
    """Warn with ``message`` (``UserWarning`` by default); with ``once``, at most once per distinct message."""
    category = category or UserWarning
    if once:
        key = (message, category)
        if key in _warnings_seen:
            return
        _warnings_seen.add(key)
    warnings.warn(message, category, stacklevel=stacklevel + 1)
