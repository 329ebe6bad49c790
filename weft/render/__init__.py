"""``weft.render``: Warp's ``warp.render`` renderers. ``UsdRenderer`` writes USD stages (needs ``usd-core``);
``OpenGLRenderer`` keeps Warp's name but weft has no OpenGL viewer (it raises a ``RenderError`` saying why). See
docs/render.md."""

from __future__ import annotations

from .errors import RenderError
from .opengl import OpenGLRenderer
from .usd import UsdRenderer

__all__ = ["OpenGLRenderer", "RenderError", "UsdRenderer"]
