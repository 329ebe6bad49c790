"""The error every Warp-internal name without a weft counterpart raises when used."""

from __future__ import annotations

from ..errors import Error


class PrivateAPIError(Error, NotImplementedError):
    """A ``warp._src`` internal that weft has no equivalent of (Warp's C++ codegen, module builder, LTO cache...)."""


def unsupported(qualname: str, why: str):
    """A callable standing in for Warp's private ``qualname``: calling it (or instantiating it) raises."""

    def _raise(*args, **kwargs):
        raise PrivateAPIError(f"{qualname} is a Warp implementation detail with no weft equivalent: {why}")

    _raise.__name__ = qualname.rsplit(".", 1)[-1]
    _raise.__qualname__ = qualname
    _raise.__doc__ = f"Not available in weft: {why}"
    return _raise
