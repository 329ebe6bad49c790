"""``warp.examples`` for programs written for Warp: where Warp's example assets and sources live.

weft ships no copy of Warp's example assets (meshes, USD stages). Programs that call
``wp.examples.get_asset_directory()`` get the ``examples/assets`` folder of an installed ``warp-lang`` wheel, found on
``sys.path`` (the package is not imported: under weft, ``import warp`` may be an alias of weft), or the folder named by
``$WEFT_WARP_EXAMPLES`` (the ``warp/examples`` folder of a warp-lang installation in another environment).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .errors import Error

__all__ = ["get_asset_directory", "get_source_directory"]

_ENV = "WEFT_WARP_EXAMPLES"


def _examples_dir() -> Path:
    explicit = os.environ.get(_ENV)
    if explicit:
        path = Path(explicit)
        if not (path / "assets").is_dir():
            raise Error(f"${_ENV}={explicit!r} is not a warp-lang 'warp/examples' folder (it has no 'assets' folder)")
        return path
    for entry in sys.path:
        candidate = Path(entry or ".") / "warp" / "examples"
        if (candidate / "assets").is_dir():
            return candidate
    raise Error(
        "Warp's example assets are not installed: weft does not ship them. Install warp-lang (pip install warp-lang) "
        f"in this environment, or set ${_ENV} to the warp/examples folder of an installation elsewhere"
    )


def get_source_directory() -> str:
    """The folder holding Warp's example scripts (``warp/examples`` of an installed warp-lang)."""
    return str(_examples_dir())


def get_asset_directory() -> str:
    """The folder holding Warp's example assets (``warp/examples/assets`` of an installed warp-lang)."""
    return str(_examples_dir() / "assets")
