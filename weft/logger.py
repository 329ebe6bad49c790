"""Warp's logger hooks: ``wp.Logger``, ``wp.set_logger``, ``wp.get_logger``, ``wp.ScopedLogger``.

By default weft's warnings go through :mod:`warnings` (filters apply; shown as ``Warp UserWarning: ...`` on stderr)
and its debug-level messages (compiles and cache loads, with ``wp.config.verbose`` or ``log_level <= LOG_DEBUG``) to
stdout. A framework that has its own logging installs an object with ``debug``, ``info``, ``warning`` and ``error``
methods; from then on weft's messages go to it (``warning`` receives ``message, category, stacklevel`` with the
stack level already adjusted for a direct ``warnings.warn`` call).
"""

from __future__ import annotations

import sys
from typing import Protocol, runtime_checkable

from . import errors


@runtime_checkable
class Logger(Protocol):
    """What ``wp.set_logger`` accepts: any object with these four methods."""

    def debug(self, message: str) -> None: ...

    def info(self, message: str) -> None: ...

    def warning(self, message: str, category=None, stacklevel: int = 1) -> None: ...

    def error(self, message: str) -> None: ...


class DefaultLogger:
    """weft's own output: debug and info on stdout, warnings through :mod:`warnings`, errors on stderr."""

    def debug(self, message: str) -> None:
        sys.stdout.write(message + "\n")

    def info(self, message: str) -> None:
        sys.stdout.write(message + "\n")

    def warning(self, message: str, category=None, stacklevel: int = 1) -> None:
        saved, errors.active_logger = errors.active_logger, None
        try:
            errors.warn(message, category or UserWarning, stacklevel=stacklevel + 1)
        finally:
            errors.active_logger = saved

    def error(self, message: str) -> None:
        sys.stderr.write(message + "\n")


_default = DefaultLogger()


def _check(logger, where: str) -> None:
    missing = [m for m in ("debug", "info", "warning", "error") if not callable(getattr(logger, m, None))]
    if missing:
        raise TypeError(f"{where}: logger must have callable debug, info, warning and error methods; "
                        f"{type(logger).__name__} lacks {', '.join(missing)}")


def set_logger(logger: Logger | None) -> None:
    """Install ``logger`` for weft's messages (``None``: weft's own output again)."""
    if logger is not None:
        _check(logger, "set_logger")
    errors.active_logger = None if logger is None or logger is _default else logger


def get_logger() -> Logger:
    """The logger weft's messages go to (a :class:`DefaultLogger` when none was installed)."""
    return errors.active_logger if errors.active_logger is not None else _default


class ScopedLogger:
    """``with wp.ScopedLogger(logger):`` installs ``logger`` (``None``: weft's own output) inside the block and
    restores the previous one after."""

    def __init__(self, logger: Logger | None):
        if logger is not None:
            _check(logger, "ScopedLogger")
        self.logger = logger

    def __enter__(self):
        self._saved = errors.active_logger
        set_logger(self.logger)
        return self

    def __exit__(self, *exc) -> bool:
        errors.active_logger = self._saved
        return False


__all__ = ["DefaultLogger", "Logger", "ScopedLogger", "get_logger", "set_logger"]
