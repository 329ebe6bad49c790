"""Warp's OpenGLRenderer helpers that programs and tests use without a window (weft has no OpenGL viewer)."""

from __future__ import annotations

import numpy as np

import weft.render
from weft.render.render_opengl import OpenGLRenderer


def test_sphere_mesh_is_closed_outward_and_has_the_sphere_volume():
    assert OpenGLRenderer is weft.render.OpenGLRenderer
    r = 2.0
    v, idx = OpenGLRenderer._create_sphere_mesh(radius=r, num_latitudes=40, num_longitudes=60)
    assert v.shape == (41 * 61, 8) and v.dtype == np.float32 and idx.dtype == np.uint32
    p, n = v[:, :3].astype(np.float64), v[:, 3:6].astype(np.float64)
    np.testing.assert_allclose(np.linalg.norm(p, axis=1), r, rtol=1e-6)
    np.testing.assert_allclose(p, r * n, atol=1e-6)
    assert v[:, 6:].min() >= 0.0 and v[:, 6:].max() <= 1.0
    t = idx.reshape(-1, 3)
    vol = np.einsum("ij,ij->i", p[t[:, 0]], np.cross(p[t[:, 1]], p[t[:, 2]])).sum() / 6.0
    # a polyhedron inscribed in the sphere: a little under 4/3 pi r^3, positive (faces wound outward)
    assert 0.99 * (4.0 / 3.0 * np.pi * r**3) < vol < 4.0 / 3.0 * np.pi * r**3
    _, back = OpenGLRenderer._create_sphere_mesh(radius=r, num_latitudes=40, num_longitudes=60, reverse_winding=True)
    np.testing.assert_array_equal(back.reshape(-1, 3), t[:, ::-1])
