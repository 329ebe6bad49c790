"""The OpenGL viewer's geometry and camera math (NumPy only: these run without pyglet or a GL context)."""

from __future__ import annotations

import numpy as np
import pytest

import weft.render
from weft.render.opengl import meshes
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


def _volume(v, idx):
    p, t = v[:, :3].astype(np.float64), idx.reshape(-1, 3)
    return np.einsum("ij,ij->i", p[t[:, 0]], np.cross(p[t[:, 1]], p[t[:, 2]])).sum() / 6.0


def _assert_winding_agrees_with_normals(v, idx):
    """Every non-degenerate triangle's counter-clockwise normal points the way its vertex normals do."""
    tri = idx.reshape(-1, 3)
    face_n = np.cross(v[tri[:, 1], :3] - v[tri[:, 0], :3], v[tri[:, 2], :3] - v[tri[:, 0], :3]).astype(np.float64)
    area = np.linalg.norm(face_n, axis=1)
    vertex_n = v[tri, 3:6].sum(axis=1)
    ok = area > 1e-9 * area.max()
    assert np.all(np.einsum("ij,ij->i", face_n[ok], vertex_n[ok]) > 0)


@pytest.mark.parametrize("up_axis", [0, 1, 2])
def test_primitive_meshes_are_closed_wound_outward_with_their_volumes(up_axis):
    r, h = 0.5, 0.75
    cases = [
        (OpenGLRenderer._create_capsule_mesh(r, h, up_axis, 64), np.pi * r**2 * 2 * h + 4 / 3 * np.pi * r**3),
        (OpenGLRenderer._create_cylinder_mesh(r, h, up_axis, 64), np.pi * r**2 * 2 * h),
        (OpenGLRenderer._create_cone_mesh(r, h, up_axis, 64), np.pi * r**2 * 2 * h / 3),
    ]
    for (v, idx), exact in cases:
        # inscribed polyhedra: a little under the exact volume, positive (faces wound outward)
        assert 0.98 * exact < _volume(v, idx) <= exact * (1 + 1e-6)
        extent = np.abs(v[:, :3]).max(axis=0)
        assert np.argmax(extent) == up_axis  # long along up_axis
        _assert_winding_agrees_with_normals(v, idx)
    v, idx = OpenGLRenderer._create_box_mesh((0.5, 1.0, 1.5))
    assert np.isclose(_volume(v, idx), 1.0 * 2.0 * 3.0)
    _assert_winding_agrees_with_normals(v, idx)


def test_camera_matrices_match_their_definitions():
    view = meshes.look_at((1.0, 2.0, 3.0), (0.0, 0.0, -1.0), (0.0, 1.0, 0.0))
    np.testing.assert_allclose(view @ [1.0, 2.0, 0.0, 1.0], [0.0, 0.0, -3.0, 1.0], atol=1e-12)
    proj = meshes.perspective(90.0, 2.0, 1.0, 10.0)
    for dist in (1.0, 4.0, 10.0):
        clip = proj @ [0.0, dist, -dist, 1.0]  # on the top edge of a 90 degree field of view
        ndc = clip[:3] / clip[3]
        assert np.isclose(ndc[1], 1.0)
        np.testing.assert_allclose(meshes.linear_depth((ndc[2] + 1) / 2, 1.0, 10.0), dist, rtol=1e-12)
    for up in (0, 1, 2):
        rot = meshes.axis_permutation(up)
        assert np.isclose(np.linalg.det(rot), 1.0) and np.allclose(rot @ np.eye(3)[up], [0.0, 1.0, 0.0])
    m = meshes.segment_matrices(np.array([[0.0, 0.0, 0.0]]), np.array([[3.0, 0.0, 4.0]]), 0.1)[0]
    np.testing.assert_allclose(m @ [0.0, 0.5, 0.0, 1.0], [3.0, 0.0, 4.0, 1.0], atol=1e-12)
    np.testing.assert_allclose(m @ [0.0, -0.5, 0.0, 1.0], [0.0, 0.0, 0.0, 1.0], atol=1e-12)
