"""wp.geometry.swept_volume_*: a sphere swept along a segment is a capsule (vs its analytic SDF), bounds, meshes."""

import numpy as np
import pytest

import weft as wp
from weft.geometry import SweptVolumeSignMode, swept_volume_bounds, swept_volume_field, swept_volume_mesh

from .meshes import uv_sphere

R = 0.5


def _mesh():
    p, t = uv_sphere(16, 24, R)
    return wp.Mesh(wp.array(p, dtype=wp.vec3), wp.array(np.asarray(t, np.int32).ravel(), dtype=wp.int32),
                   support_winding_number=True)


def _poses(xs):
    tr = np.zeros((1, len(xs), 7), np.float32)
    tr[0, :, 0] = xs
    tr[0, :, 6] = 1.0
    return tr


def test_swept_sphere_is_a_capsule():
    mesh, tr = _mesh(), _poses(np.linspace(-1.0, 1.0, 21))
    lo, hi = swept_volume_bounds([mesh], tr)
    np.testing.assert_allclose([lo[0], hi[0], hi[1]], [-1.0 - R, 1.0 + R, R], atol=1e-5)
    field, lower, upper = swept_volume_field([mesh], tr, voxel_size=0.1)
    f = field.numpy()
    spacing = (np.array(upper) - np.array(lower)) / (np.array(f.shape) - 1)
    np.testing.assert_allclose(spacing, 0.1, rtol=1e-5)
    idx = np.stack(np.meshgrid(*[np.arange(n) for n in f.shape], indexing="ij"), -1).reshape(-1, 3)
    P = np.array(lower) + idx * spacing
    h = np.clip((P[:, 0] + 1.0) / 2.0, 0.0, 1.0)
    ref = np.linalg.norm(P - np.stack([2.0 * h - 1.0, 0 * h, 0 * h], 1), axis=1) - R
    band = np.abs(ref) < 0.2
    np.testing.assert_allclose(f.reshape(-1)[band], ref[band], atol=0.03)  # faceted sphere, 21 stamps
    for mode in (SweptVolumeSignMode.WINDING_NUMBER, SweptVolumeSignMode.NORMAL):
        v = swept_volume_mesh([mesh], tr, voxel_size=0.1, sign_mode=mode)[0].numpy()
        np.testing.assert_allclose(v.min(axis=0), [-1.0 - R, -R, -R], atol=0.06)
        np.testing.assert_allclose(v.max(axis=0), [1.0 + R, R, R], atol=0.06)
    with pytest.raises(ValueError, match="threshold"):
        swept_volume_mesh([mesh], tr, voxel_size=0.1, sign_mode=SweptVolumeSignMode.NO_SIGN)
    with pytest.raises(ValueError):
        swept_volume_field([mesh], tr)  # neither voxel_size nor resolution
    assert swept_volume_field([mesh], tr, resolution=(8, 9, 10))[0].shape == (8, 9, 10)
