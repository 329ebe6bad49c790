"""``wp.Bvh``: a bounding volume hierarchy over user boxes, queried in kernels through ``bvh.id``."""

from __future__ import annotations

import ctypes

import numpy as np

from ..errors import GeometryError, GeometryLimitError
from . import native
from ._common import NativeHandle, check_finite, host_view


class Bvh(NativeHandle):
    """A linear BVH over ``lowers[i]``..``uppers[i]`` boxes (built in parallel, deterministic).

    Args:
        lowers, uppers: arrays of vec3 box corners (float32, CPU), same length, ``lowers <= uppers``.
        groups: optional int32 array of non-negative group ids (sparse ids are fine): each group gets its own
            subtree, whose root
            ``wp.bvh_get_group_root(id, group)`` returns for the ``root`` argument of the queries.
        constructor, leaf_size: accepted for Warp compatibility (weft always builds an LBVH with one box per leaf);
            an unknown constructor, or "cubql" with groups (as in Warp), is an error.

    After changing the boxes in place, call :meth:`refit`.

    Raises:
        GeometryError: mismatched lengths, NaN bounds, a lower corner above its upper corner, negative groups.
    """

    _KIND = "Bvh"
    _DESTROY = "geo_bvh_destroy"

    def __init__(self, lowers, uppers, groups=None, constructor=None, leaf_size=None, device=None):
        self.device = device
        self._lib = native.lib()
        self.id = 0
        if constructor not in (None, "sah", "median", "lbvh", "cubql"):
            raise GeometryError(f"Bvh: argument 'constructor' must be 'sah', 'median', 'lbvh' or 'cubql', got "
                                f"{constructor!r}")
        if constructor == "cubql" and groups is not None:
            raise GeometryLimitError("Bvh: Grouped BVHs are not supported by the 'cubql' constructor (argument "
                                     "'constructor')")
        lo = host_view(lowers, "lowers", "Bvh", cols=3, kind="f")
        hi = host_view(uppers, "uppers", "Bvh", cols=3, kind="f")
        if len(lo) != len(hi):
            raise GeometryError(f"Bvh: arguments 'lowers' ({len(lo)}) and 'uppers' ({len(hi)}) differ in length")
        check_finite(lo, "lowers", "Bvh")
        check_finite(hi, "uppers", "Bvh")
        if len(lo) and (lo > hi).any():
            bad = int(np.argmax((lo > hi).any(axis=1)))
            raise GeometryError(f"Bvh: box {bad} has 'lowers' above 'uppers' ({lo[bad].tolist()} > {hi[bad].tolist()})")
        grp = host_view(groups, "groups", "Bvh", cols=None, kind="i", allow_none=True)
        if grp is not None:
            grp = grp.reshape(-1)
            if len(grp) != len(lo):
                raise GeometryError(f"Bvh: argument 'groups' has {len(grp)} entries, lowers has {len(lo)}")
            if len(grp) and grp.min() < 0:
                raise GeometryError("Bvh: argument 'groups' holds a negative group id")
        self.lowers, self.uppers, self.groups = lowers, uppers, groups
        self._lo, self._hi, self._grp = lo, hi, grp
        self.id = int(self._lib.geo_bvh_create(lo.ctypes.data, hi.ctypes.data, len(lo),
                                               grp.ctypes.data if grp is not None else None))
        if self.id == 0:
            raise GeometryError(f"Bvh: out of memory building a BVH of {len(lo)} boxes")

    def refit(self) -> None:
        """Recompute the node boxes after ``lowers``/``uppers`` changed in place (topology kept)."""
        lo = host_view(self.lowers, "lowers", "Bvh.refit", cols=3, kind="f")
        hi = host_view(self.uppers, "uppers", "Bvh.refit", cols=3, kind="f")
        if lo.ctypes.data != self._lo.ctypes.data or hi.ctypes.data != self._hi.ctypes.data:
            # converted copies: refresh the storage the native tree reads in place
            np.copyto(self._lo, lo)
            np.copyto(self._hi, hi)
        check_finite(self._lo, "lowers", "Bvh.refit")
        check_finite(self._hi, "uppers", "Bvh.refit")
        if self._lib.geo_bvh_refit(self._live_id()) != 0:
            raise GeometryError("Bvh.refit: the BVH was destroyed")

    def rebuild(self, constructor=None) -> None:
        """Build the tree again from the current boxes (a new topology and a new ``id``; the old id is freed)."""
        old = self._live_id()
        self.__init__(self.lowers, self.uppers, self.groups, device=self.device)
        self._lib.geo_bvh_destroy(old)

    def get_group_root(self, group: int) -> int:
        """The root of ``group``'s subtree (-1 when the group is absent), as ``wp.bvh_get_group_root``."""
        return int(self._lib.geo_bvh_group_root(self._live_id(), int(group)))

    def info(self) -> dict:
        """Tree statistics: number of boxes, groups and the depth of the deepest leaf."""
        out = (ctypes.c_int32 * 4)()
        self._lib.geo_bvh_info(self._live_id(), out)
        return {"num_prims": out[0], "num_groups": out[2], "depth": out[3]}
