"""Swept volumes of rigidly moving meshes by dense time stamping (Warp 1.19's ``wp.geometry.swept_volume_*`` API).

The swept field at a point is the minimum, over every mesh and every sampled pose, of the mesh's signed distance at
the point pulled back into the mesh's rest frame (the motion is rigid, so distances are preserved): one closest-point
query per (mesh, pose), with the inside/outside sign from the query ``sign_mode`` names. It is sampled on a regular
grid by a weft kernel (forward only: no adjoint) and its isosurface is extracted by ``IsoSurfaceMarchingCubes``.
Only the given poses are stamped: motion between samples is not bounded.

Domain: explicit ``lower``/``upper`` are used as given (with ``resolution`` node counts); otherwise the posed meshes'
bounds (rest-pose boxes transformed by every pose) are grown by the extraction threshold plus two cells per side,
and with ``voxel_size`` the extent is rounded up to whole cells so the spacing is exactly ``voxel_size``.
"""

from __future__ import annotations

import enum
import math

import numpy as np

from ..builtins import Builtin, tid
from ..frontend.func import func
from ..kernel import kernel
from ..runtime.array import array, empty, from_numpy
from ..runtime.device import get_device
from ..runtime.launch import launch
from ..types.aliases import NAMED_TYPES
from ..types.scalars import float32, int32, uint64
from .marching import IsoSurfaceMarchingCubes

vec3 = NAMED_TYPES["vec3"]
transform = NAMED_TYPES["transform"]

# kernel builtins (ops register after this module is imported, so they are named, not looked up)
_q_normal = Builtin("mesh_query_point_sign_normal")
_q_winding = Builtin("mesh_query_point_sign_winding_number")
_q_parity = Builtin("mesh_query_point_sign_parity")
_q_unsigned = Builtin("mesh_query_point_no_sign")
_eval_position = Builtin("mesh_eval_position")
_transform_point = Builtin("transform_point")
_transform_inverse = Builtin("transform_inverse")
_length = Builtin("length")
_cw_mul = Builtin("cw_mul")
_min = Builtin("min")

__all__ = ["SweptVolumeSignMode", "swept_volume_bounds", "swept_volume_field", "swept_volume_mesh",
           "swept_volume_sdf"]


class SweptVolumeSignMode(enum.IntEnum):
    """How the per-mesh distance gets its inside/outside sign (an ``IntEnum``: kernels compare the value)."""

    NORMAL = 0  #: ``mesh_query_point_sign_normal``
    WINDING_NUMBER = 1  #: ``mesh_query_point_sign_winding_number`` (meshes built with ``support_winding_number``)
    PARITY = 2  #: ``mesh_query_point_sign_parity``
    NO_SIGN = 3  #: unsigned distance (``mesh_query_point_no_sign``): only a ``threshold > 0`` level is a surface


@func
def swept_volume_sdf(point: vec3, mesh_ids: array(dtype=uint64), transforms: array(dtype=transform, ndim=2),
                     max_dist: float32, sign_mode: int32) -> float32:
    """The swept pseudo signed distance at ``point``: the minimum over meshes ``m`` and poses ``s`` of
    ``sdf_m(transforms[m, s]^-1 point)``, ``max_dist`` where no query finds a face within ``max_dist``."""
    best = max_dist
    for m in range(mesh_ids.shape[0]):
        mid = mesh_ids[m]
        for s in range(transforms.shape[1]):
            p = _transform_point(_transform_inverse(transforms[m, s]), point)
            if sign_mode == 3:
                q = _q_unsigned(mid, p, best)
                if q.result:
                    best = _min(best, _length(p - _eval_position(mid, q.face, q.u, q.v)))
            else:
                sign = 1.0
                found = False
                face = 0
                u = 0.0
                v = 0.0
                if sign_mode == 1:
                    qw = _q_winding(mid, p, max_dist)
                    found = qw.result
                    sign = qw.sign
                    face = qw.face
                    u = qw.u
                    v = qw.v
                elif sign_mode == 2:
                    qp = _q_parity(mid, p, max_dist)
                    found = qp.result
                    sign = qp.sign
                    face = qp.face
                    u = qp.u
                    v = qp.v
                else:
                    qn = _q_normal(mid, p, max_dist)
                    found = qn.result
                    sign = qn.sign
                    face = qn.face
                    u = qn.u
                    v = qn.v
                if found:
                    best = _min(best, sign * _length(p - _eval_position(mid, face, u, v)))
    return best


@kernel(enable_backward=False)
def _field_kernel(mesh_ids: array(dtype=uint64), transforms: array(dtype=transform, ndim=2), origin: vec3,
                  spacing: vec3, max_dist: float32, sign_mode: int32, out: array(dtype=float32, ndim=3)):
    i, j, k = tid()
    point = origin + _cw_mul(spacing, vec3(float32(i), float32(j), float32(k)))
    out[i, j, k] = swept_volume_sdf(point, mesh_ids, transforms, max_dist, sign_mode)


def _mesh_device(mesh):
    return get_device(mesh.points.device)


def _transforms(transforms, device) -> array:
    if isinstance(transforms, array):
        if transforms.ndim != 2:
            raise ValueError(f"'transforms' must be a 2-D array (num_meshes, num_samples), got ndim {transforms.ndim}.")
        if transforms.dtype is not transform:
            raise TypeError(f"'transforms' must have dtype wp.transform, got {transforms.dtype}.")
        return transforms
    a = np.asarray(transforms, dtype=np.float32)
    if a.ndim != 3 or a.shape[2] != 7:
        raise ValueError("'transforms' must be a wp.array2d(dtype=wp.transform) or an array of shape "
                         f"(num_meshes, num_samples, 7), got shape {a.shape}.")
    return from_numpy(a, dtype=transform, device=device)


def _check(meshes, transforms) -> None:
    if len(meshes) == 0:
        raise ValueError("'meshes' must contain at least one mesh.")
    if transforms.shape[0] != len(meshes):
        raise ValueError(f"'transforms' has {transforms.shape[0]} rows but there are {len(meshes)} meshes.")
    if transforms.shape[1] == 0:
        raise ValueError("'transforms' must contain at least one pose sample.")


def _quat_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate the vectors ``v`` (..., 3) by the unit quaternions ``q`` (..., 4, xyzw)."""
    w, u = q[..., 3:4], q[..., :3]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def _bounds(meshes, transforms: array, padding: float) -> tuple[np.ndarray, np.ndarray]:
    tr = transforms.numpy().astype(np.float64).reshape(len(meshes), -1, 7)
    lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
    corners = np.array([[a, b, c] for a in (0, 1) for b in (0, 1) for c in (0, 1)], np.float64)
    for m, mesh in enumerate(meshes):
        pts = mesh.points.numpy().reshape(-1, 3).astype(np.float64)
        if len(pts) == 0:
            continue
        box = pts.min(axis=0) + corners * (pts.max(axis=0) - pts.min(axis=0))  # (8, 3)
        world = _quat_rotate(tr[m, :, None, 3:7], box[None]) + tr[m, :, None, 0:3]
        lo, hi = np.minimum(lo, world.reshape(-1, 3).min(axis=0)), np.maximum(hi, world.reshape(-1, 3).max(axis=0))
    if not np.all(np.isfinite(lo)):
        raise ValueError("Could not compute swept-volume bounds: all input meshes are empty.")
    return lo - padding, hi + padding


def swept_volume_bounds(meshes, transforms, padding: float = 0.0, device=None):
    """World-space bounds ``(lower, upper)`` (``vec3``) of every mesh over every pose, grown by ``padding``."""
    device = get_device(device) if device is not None else _mesh_device(meshes[0]) if meshes else None
    tr = _transforms(transforms, device)
    _check(meshes, tr)
    lo, hi = _bounds(meshes, tr, float(padding))
    return vec3(*lo.tolist()), vec3(*hi.tolist())


def _grid(meshes, tr, voxel_size, resolution, lower, upper, extra: float):
    if (lower is None) != (upper is None):
        raise ValueError("Pass both 'lower' and 'upper', or neither.")
    if voxel_size is not None and resolution is not None:
        raise ValueError("Pass either 'voxel_size' or 'resolution', not both.")
    if voxel_size is None and resolution is None:
        raise ValueError("Provide either 'voxel_size' or 'resolution'.")
    if voxel_size is not None and not voxel_size > 0.0:
        raise ValueError(f"'voxel_size' must be positive, got {voxel_size}.")
    dims = None
    if resolution is not None:
        dims = tuple(int(n) for n in resolution)
        if len(dims) != 3 or min(dims) < 2:
            raise ValueError(f"'resolution' must be 3 node counts of at least 2, got {tuple(resolution)}.")
    tight_lo, tight_hi = _bounds(meshes, tr, 0.0)
    if lower is not None:
        if voxel_size is not None:
            raise ValueError("'voxel_size' cannot be combined with explicit domain bounds (the extent would have to "
                             "grow to whole cells); pass 'resolution'.")
        lo, hi = np.asarray(tuple(lower), np.float64), np.asarray(tuple(upper), np.float64)
        if np.any(hi <= lo):
            raise ValueError(f"'upper' {tuple(hi)} must exceed 'lower' {tuple(lo)}.")
        return lo, hi, dims, tight_lo, tight_hi
    extent = tight_hi - tight_lo
    if voxel_size is not None:
        want = extent + 2.0 * (extra + 2.0 * voxel_size)
        dims = tuple(max(2, math.ceil(w / voxel_size) + 1) for w in want)
        grow = 0.5 * ((np.asarray(dims) - 1) * voxel_size - extent)
    else:
        grow = extra + 2.0 * extent / (np.asarray(dims, np.float64) - 1)
    return tight_lo - grow, tight_hi + grow, dims, tight_lo, tight_hi


def _field(meshes, transforms, voxel_size, resolution, lower, upper, sign_mode, device, extra: float):
    device = get_device(device) if device is not None else _mesh_device(meshes[0]) if meshes else get_device(None)
    sign_mode = SweptVolumeSignMode(sign_mode)
    for i, mesh in enumerate(meshes):
        if _mesh_device(mesh) != device:
            raise ValueError(f"'meshes[{i}]' is on device '{_mesh_device(mesh)}' but the launch device is '{device}'.")
        if sign_mode == SweptVolumeSignMode.WINDING_NUMBER and not mesh.support_winding_number:
            raise ValueError(f"'meshes[{i}]' was not built with support_winding_number=True, which "
                             "SweptVolumeSignMode.WINDING_NUMBER (the default) needs; rebuild it or pass another "
                             "sign_mode.")
    tr = _transforms(transforms, device)
    _check(meshes, tr)
    lo, hi, dims, tight_lo, tight_hi = _grid(meshes, tr, voxel_size, resolution, lower, upper, extra)
    spacing = (hi - lo) / (np.asarray(dims, np.float64) - 1)
    span = np.maximum(hi, tight_hi) - np.minimum(lo, tight_lo)
    max_dist = float(np.linalg.norm(span))
    ids = from_numpy(np.array([m.id for m in meshes], dtype=np.uint64), dtype=uint64, device=device)
    field = empty(dims, dtype=float32, device=device)
    launch(_field_kernel, dim=dims, device=device,
           inputs=[ids, tr, vec3(*lo.tolist()), vec3(*spacing.tolist()), max_dist, int(sign_mode)], outputs=[field])
    return field, vec3(*lo.tolist()), vec3(*hi.tolist())


def swept_volume_field(meshes, transforms, voxel_size: float | None = None, *, resolution=None, lower=None,
                       upper=None, sign_mode: SweptVolumeSignMode = SweptVolumeSignMode.WINDING_NUMBER, device=None):
    """The swept pseudo signed distance on a regular grid: ``(field, lower, upper)``.

    Args:
        meshes: rest-pose ``wp.Mesh`` objects.
        transforms: per-mesh, per-sample rigid poses (rest to world): a 2-D ``transform`` array
            ``(num_meshes, num_samples)`` or an array of shape ``(num_meshes, num_samples, 7)`` (xyz, quaternion xyzw).
        voxel_size: cell edge (the extent is rounded up to whole cells); or ``resolution``: node counts.
        lower, upper: the world positions of nodes (0, 0, 0) and (nx-1, ny-1, nz-1), used as given (with
            ``resolution``); by default the posed bounds grown by two cells per side.
        sign_mode: a ``SweptVolumeSignMode``.
    """
    return _field(meshes, transforms, voxel_size, resolution, lower, upper, sign_mode, device, 0.0)


def swept_volume_mesh(meshes, transforms, voxel_size: float | None = None, *, resolution=None, lower=None,
                      upper=None, threshold: float = 0.0,
                      sign_mode: SweptVolumeSignMode = SweptVolumeSignMode.WINDING_NUMBER, device=None):
    """The ``threshold`` isosurface of ``swept_volume_field`` as ``(vertices, indices)`` (marching cubes); the
    default domain also grows by a positive ``threshold``. ``NO_SIGN`` needs ``threshold > 0``."""
    if SweptVolumeSignMode(sign_mode) == SweptVolumeSignMode.NO_SIGN and not threshold > 0.0:
        raise ValueError("SweptVolumeSignMode.NO_SIGN gives an unsigned field: pass a threshold > 0.")
    field, lo, hi = _field(meshes, transforms, voxel_size, resolution, lower, upper, sign_mode, device,
                           max(float(threshold), 0.0))
    return IsoSurfaceMarchingCubes.extract(field, threshold=float(threshold), lower=lo, upper=hi)
