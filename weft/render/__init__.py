"""``weft.render``: Warp's ``warp.render`` renderers. ``UsdRenderer`` writes USD stages (needs ``usd-core``);
``OpenGLRenderer`` is an OpenGL 3.3 viewer through ``pyglet`` (in a window, or headless offscreen with
``get_pixels``). See docs/render.md."""

from __future__ import annotations

from .errors import RenderError
from .opengl import OpenGLRenderer
from .usd import UsdRenderer

__all__ = ["OpenGLRenderer", "RenderError", "UsdRenderer"]
