"""``warp._src.logger``: Warp's warning helper, routed through weft's (``weft.errors.warn``: :mod:`warnings` filters
apply; shown as Warp shows them, ``Warp UserWarning: message`` on stderr).

``once=True`` warns only the first time a ``(category, message)`` pair is seen, and deprecation warnings always are
deduplicated so, as in Warp; ``_warnings_seen`` is that set (Warp's tests clear it). Nothing is issued when
``wp.config.log_level`` is above ``LOG_WARNING``.
"""

from __future__ import annotations

from .. import config
from ..errors import warn

_warnings_seen: set = set()


def log_warning(message: str, category: type[Warning] | None = None, stacklevel: int = 1, once: bool = False) -> None:
    """Warn with ``message`` (``UserWarning`` by default); with ``once`` (always for ``DeprecationWarning``), at most
    once per distinct message."""
    if config.log_level > config.LOG_WARNING:
        return
    category = category or UserWarning
    key = (category, message)
    dedup = once or category is DeprecationWarning
    if dedup and key in _warnings_seen:
        return
    warn(message, category, stacklevel=stacklevel + 1)
    if dedup:
        _warnings_seen.add(key)


def log_debug(message: str) -> None:
    """A debug-level message to the active logger (``wp.set_logger``) when ``wp.config.log_level <= LOG_DEBUG``."""
    if config.log_level <= config.LOG_DEBUG:
        _logger().debug(message)


def log_info(message: str) -> None:
    """An info-level message to the active logger when ``wp.config.log_level <= LOG_INFO``."""
    if config.log_level <= config.LOG_INFO:
        _logger().info(message)


def log_error(message: str) -> None:
    """An error-level message to the active logger, whatever the log level."""
    _logger().error(message)


def _logger():
    from ..logger import get_logger

    return get_logger()
