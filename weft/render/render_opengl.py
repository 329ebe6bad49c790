"""``warp.render.render_opengl`` under its Warp module name: weft's :class:`~weft.render.OpenGLRenderer`."""

from .opengl import OpenGLRenderer

__all__ = ["OpenGLRenderer"]
