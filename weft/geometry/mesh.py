"""``wp.Mesh``: a triangle mesh with a BVH, queried in kernels through ``mesh.id``."""

from __future__ import annotations

import weakref

import numpy as np

from ..errors import GeometryError
from . import native
from ._common import NativeHandle, check_finite, host_view


class Mesh(NativeHandle):
    """A triangle mesh for closest-point, sign, ray and overlap queries in kernels.

    The BVH is a linear BVH (Morton-ordered radix tree, built in parallel and deterministically). The mesh keeps
    the arrays it was given: after moving the points in place, call :meth:`refit`.

    Args:
        points: array of vec3 (float32) vertex positions, on the CPU. With ``requires_grad=True`` the backward
            pass adds the gradients of the queries' outputs (closest point u, v; ray t, u, v), of
            ``mesh_eval_position``, ``mesh_get_point`` and ``mesh_get(id).points`` w.r.t. the points to
            ``points.grad``.
        indices: int32 array of 3 * num_faces vertex indices (flat, or shape (num_faces, 3)).
        velocities: optional array of vec3 per-vertex velocities (``mesh_eval_velocity``); with
            ``requires_grad=True`` the gradients of ``mesh_eval_velocity`` and ``mesh_get_velocity`` w.r.t. the
            velocities go to ``velocities.grad``. Replacing ``points.grad`` / ``velocities.grad`` later is seen at
            once (the mesh re-reads the buffers).
        support_winding_number: precompute the dipole data of ``mesh_query_point_sign_winding_number``.
        bvh_constructor, bvh_leaf_size: accepted for Warp compatibility; weft always builds an LBVH.
        groups: optional int32 group id (>= 0) per face: each group gets its own subtree, whose root
            ``wp.mesh_get_group_root(id, group)`` gives for the ``root`` argument of the ray queries.

    Raises:
        GeometryError: empty mesh, an index array whose length is not a multiple of 3, an index out of range,
            NaN/inf points, or velocities of the wrong length (each naming the argument).
    """

    _KIND = "Mesh"
    _DESTROY = "geo_mesh_destroy"

    def __init__(self, points=None, indices=None, velocities=None, support_winding_number: bool = False,
                 bvh_constructor=None, bvh_leaf_size=None, device=None, groups=None):
        self.device = device
        self.support_winding_number = bool(support_winding_number)
        self._lib = native.lib()
        self.id = 0
        self._watched: list = []  # weak references to the arrays whose gradient replacement we watch
        pts = host_view(points, "points", "Mesh", cols=3, kind="f")
        idx = host_view(indices, "indices", "Mesh", cols=None, kind="i").reshape(-1)
        if len(pts) == 0:
            raise GeometryError("Mesh: argument 'points' is empty (a mesh needs at least one triangle)")
        if idx.size == 0:
            raise GeometryError("Mesh: argument 'indices' is empty (a mesh needs at least one triangle)")
        if idx.size % 3 != 0:
            raise GeometryError(f"Mesh: argument 'indices' has {idx.size} entries, not a multiple of 3 "
                                "(three vertex indices per triangle)")
        lo, hi = int(idx.min()), int(idx.max())
        if lo < 0 or hi >= len(pts):
            bad = int(np.argmax((idx < 0) | (idx >= len(pts))))
            raise GeometryError(f"Mesh: argument 'indices' holds {int(idx[bad])} at position {bad}, outside "
                                f"[0, {len(pts)}) (the number of points)")
        check_finite(pts, "points", "Mesh")
        vel = host_view(velocities, "velocities", "Mesh", cols=3, kind="f", allow_none=True)
        if vel is not None and len(vel) != len(pts):
            raise GeometryError(f"Mesh: argument 'velocities' has {len(vel)} entries, points has {len(pts)}")
        grp = host_view(groups, "groups", "Mesh", cols=None, kind="i", allow_none=True)
        if grp is not None:
            grp = grp.reshape(-1)
            if len(grp) != idx.size // 3:
                raise GeometryError(f"Mesh: argument 'groups' has {len(grp)} entries, the mesh {idx.size // 3} faces")
            if len(grp) and grp.min() < 0:
                raise GeometryError("Mesh: argument 'groups' holds a negative group id")
        self._groups_np = grp
        self._points, self._indices, self._velocities = points, indices, velocities
        self._pts_np, self._idx_np, self._vel_np = pts, idx, vel
        self.id = int(self._lib.geo_mesh_create(pts.ctypes.data, idx.ctypes.data,
                                                vel.ctypes.data if vel is not None else None, len(pts),
                                                idx.size // 3, int(self.support_winding_number),
                                                grp.ctypes.data if grp is not None else None))
        if self.id == 0:
            raise GeometryError(f"Mesh: out of memory building the BVH of {idx.size // 3} triangles")
        self._set_grads()

    # ------------------------------------------------------------------ arrays
    @property
    def points(self):
        """The vertex positions (the array given; assign an array of the same length to replace it)."""
        return self._points

    @points.setter
    def points(self, value) -> None:
        pts = host_view(value, "points", "Mesh.points", cols=3, kind="f")
        if len(pts) != len(self._pts_np):
            raise GeometryError(f"Mesh.points: the new array has {len(pts)} points, the mesh {len(self._pts_np)}")
        check_finite(pts, "points", "Mesh.points")
        self._points, self._pts_np = value, pts
        self._lib.geo_mesh_set_points(self._live_id(), pts.ctypes.data, self._vel_ptr())
        self._set_grads()

    @property
    def indices(self):
        """The triangle vertex indices (the array given)."""
        return self._indices

    @property
    def velocities(self):
        """The per-vertex velocities (the array given, or None)."""
        return self._velocities

    @velocities.setter
    def velocities(self, value) -> None:
        vel = host_view(value, "velocities", "Mesh.velocities", cols=3, kind="f", allow_none=True)
        if vel is not None and len(vel) != len(self._pts_np):
            raise GeometryError(f"Mesh.velocities: {len(vel)} entries, the mesh has {len(self._pts_np)} points")
        self._velocities, self._vel_np = value, vel
        self._lib.geo_mesh_set_points(self._live_id(), None, self._vel_ptr())
        self._set_grads()

    def _set_grads(self) -> None:
        """Point the backward pass at points.grad / velocities.grad (queries' adjoints add vertex gradients there).

        Called again whenever either array's gradient buffer is replaced (``points.grad = ...``, ``requires_grad``
        toggled): the arrays notify the mesh, so the backward pass never adds into a stale buffer."""
        if not self.id:
            return
        views = []

        def grad_ptr(arr, data):
            grad = getattr(arr, "grad", None) if getattr(arr, "requires_grad", False) else None
            if grad is None or data is None:
                return None
            g = grad.numpy()
            # the gradient is addressed like the points the mesh reads: a contiguous float32 (n, 3) buffer
            if g.dtype != np.float32 or not g.flags.c_contiguous or g.size != data.size:
                raise GeometryError("Mesh: the gradient of 'points'/'velocities' must be a contiguous vec3 (float32) "
                                    "array to receive the queries' gradients")
            views.append(g)
            return g.ctypes.data

        bufs = (grad_ptr(self._points, self._pts_np), grad_ptr(self._velocities, self._vel_np))
        self._lib.geo_mesh_set_grads(self.id, *bufs)
        self._grad_views = views  # alive while the library holds their addresses
        for arr in (self._points, self._velocities):
            watch = getattr(arr, "_watch_grad", None)
            if watch is not None and not any(r() is arr for r in self._watched):
                self._watched.append(weakref.ref(arr))
                watch(self._set_grads)

    def _vel_ptr(self):
        return self._vel_np.ctypes.data if self._vel_np is not None else None

    # ------------------------------------------------------------------ maintenance
    def refit(self) -> None:
        """Recompute the BVH boxes (and winding data) after the points moved; the tree topology is kept."""
        pts = host_view(self._points, "points", "Mesh.refit", cols=3, kind="f")
        check_finite(pts, "points", "Mesh.refit")
        if pts.ctypes.data != self._pts_np.ctypes.data:  # a converted copy: refresh it
            self._pts_np = pts
        # setting the points refits the tree (boxes, wide nodes, leaf vertices, winding data) in the same call
        if self._lib.geo_mesh_set_points(self._live_id(), self._pts_np.ctypes.data, self._vel_ptr()) != 0:
            raise GeometryError("Mesh.refit: out of memory refitting the BVH")
        self._set_grads()

    def bvh_info(self) -> dict:
        """Tree statistics: number of primitives and the depth of the deepest leaf."""
        import ctypes

        out = (ctypes.c_int32 * 4)()
        self._lib.geo_bvh_info(self._live_id(), out)
        return {"num_prims": out[0], "depth": out[3]}
