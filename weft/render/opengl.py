"""``OpenGLRenderer``: Warp's interactive OpenGL viewer interface.

weft does not ship an OpenGL viewer. Creating an ``OpenGLRenderer`` raises a ``RenderError`` that says what is
missing: ``pyglet`` (the windowing package Warp's viewer needs), a display, or, when both are present, weft's own
viewer; programs that render headless use ``UsdRenderer`` (Warp's examples do when given a stage path).
"""

from __future__ import annotations

import importlib.util
import os

import numpy as np

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

    @staticmethod
    def _create_sphere_mesh(radius=1.0, num_latitudes=32, num_longitudes=32, reverse_winding=False):
        """A UV sphere (Warp's helper of the same name, used by programs and tests that need a sphere mesh):
        ``(vertices, indices)`` with float32 rows (position, outward normal, texture u, v) on a
        ``(num_latitudes + 1) x (num_longitudes + 1)`` grid from the +y pole down, and uint32 triangle indices
        wound counter-clockwise seen from outside (clockwise with ``reverse_winding``)."""
        theta = np.linspace(0.0, np.pi, num_latitudes + 1)[:, None]  # from +y
        phi = np.linspace(0.0, 2.0 * np.pi, num_longitudes + 1)[None, :]
        n = np.stack(np.broadcast_arrays(np.sin(theta) * np.cos(phi), np.cos(theta) + 0.0 * phi,
                                         np.sin(theta) * np.sin(phi)), axis=-1).reshape(-1, 3)
        u = np.broadcast_to(phi / (2.0 * np.pi), (num_latitudes + 1, num_longitudes + 1)).reshape(-1, 1)
        v = np.broadcast_to(theta / np.pi, (num_latitudes + 1, num_longitudes + 1)).reshape(-1, 1)
        vertices = np.hstack([n * radius, n, u, v]).astype(np.float32)
        i, j = np.meshgrid(np.arange(num_latitudes), np.arange(num_longitudes), indexing="ij")
        a = i * (num_longitudes + 1) + j  # (i, j), its neighbour in longitude and the two below
        b, c, d = a + 1, a + num_longitudes + 1, a + num_longitudes + 2
        tris = np.stack([np.stack([a, b, c], -1), np.stack([b, d, c], -1)], axis=2).reshape(-1, 3)
        if reverse_winding:
            tris = tris[:, ::-1]
        return vertices, np.ascontiguousarray(tris).astype(np.uint32).ravel()

