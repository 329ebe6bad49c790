"""Warp's OpenGL viewer through pyglet (optional): :class:`OpenGLRenderer`. See docs/render.md."""

from .renderer import OpenGLRenderer

__all__ = ["OpenGLRenderer"]
