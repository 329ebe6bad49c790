"""``OpenGLRenderer``: Warp's interactive OpenGL viewer interface.

weft does not ship an OpenGL viewer. Creating an ``OpenGLRenderer`` raises a ``RenderError`` that says what is
missing: ``pyglet`` (the windowing package Warp's viewer needs), a display, or, when both are present, weft's own
viewer; programs that render headless use ``UsdRenderer`` (Warp's examples do when given a stage path).
"""

from __future__ import annotations

import importlib.util
import os

from .errors import RenderError


def _has_display() -> bool:
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")) or os.name == "nt"


class OpenGLRenderer:
    """Warp's ``OpenGLRenderer`` signature; raises ``RenderError`` (see the module docstring)."""

    def __init__(self, title: str = "Warp", *args, headless: bool | None = None, **kwargs):
        if importlib.util.find_spec("pyglet") is None:
            raise RenderError("OpenGLRenderer needs pyglet (pip install pyglet) and a display; to render without "
                              "one, write a USD stage with weft.render.UsdRenderer")
        if not headless and not _has_display():
            raise RenderError("OpenGLRenderer needs a display (no DISPLAY or WAYLAND_DISPLAY is set); to render "
                              "without one, write a USD stage with weft.render.UsdRenderer")
        raise RenderError("weft has no OpenGL viewer (OpenGLRenderer): write a USD stage with "
                          "weft.render.UsdRenderer and view it in any USD viewer (usdview, Omniverse, Blender)")
