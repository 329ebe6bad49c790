"""Errors of ``weft.render``."""

from __future__ import annotations

from ..errors import Error


class RenderError(Error, RuntimeError):
    """A renderer cannot be created or was used wrongly (missing optional package, no display, bad argument)."""
