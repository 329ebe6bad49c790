"""Shared argument checks of the geometry objects: arrays in, validated NumPy views out."""

from __future__ import annotations

import numpy as np

from ..errors import GeometryError


def host_view(arr, name: str, owner: str, *, cols: int | None, kind: str, allow_none: bool = False):
    """A C-contiguous NumPy view of ``arr`` (a weft array or array-like) for the geometry library.

    ``kind`` is "f" (float32) or "i" (int32); ``cols`` the expected trailing width (3 for points). Returns the
    NumPy array (contiguous, owned by ``arr`` when possible) or None when ``arr`` is None and that is allowed.
    """
    if arr is None:
        if allow_none:
            return None
        raise GeometryError(f"{owner}: argument '{name}' is required")
    device = getattr(arr, "device", None)
    impl = getattr(device, "impl", None)
    if impl is not None and not impl.host_memory:
        raise GeometryError(f"{owner}: argument '{name}' is on {device}; weft builds geometry on the CPU only "
                            "(device-side builds need a GPU; none was used here). Pass a CPU array")
    data = arr.numpy() if hasattr(arr, "numpy") else np.asarray(arr)
    want = np.float32 if kind == "f" else np.int32
    if data.dtype.kind not in ("f", "i", "u") or (kind == "i" and data.dtype.kind == "f"):
        raise GeometryError(f"{owner}: argument '{name}' has dtype {data.dtype}; expected {np.dtype(want).name}")
    if cols is not None:
        if data.ndim == 1 and data.size % cols == 0 and data.dtype.itemsize * cols != data.itemsize:
            data = data.reshape(-1, cols)
        if data.ndim != 2 or data.shape[1] != cols:
            raise GeometryError(f"{owner}: argument '{name}' must hold {cols}-vectors (shape (n, {cols})), "
                                f"got shape {data.shape}")
    if data.dtype != want:
        data = data.astype(want)
    return np.ascontiguousarray(data)


def check_finite(data: np.ndarray, name: str, owner: str) -> None:
    if data is not None and data.size and not np.isfinite(data).all():
        bad = int(np.argwhere(~np.isfinite(data.reshape(len(data), -1)))[0][0])
        raise GeometryError(f"{owner}: argument '{name}' holds a NaN or infinite value (at index {bad})")


class NativeHandle:
    """The lifecycle shared by Mesh, Bvh and HashGrid: a library-issued ``id``, checked use, explicit destroy.

    Subclasses set ``_KIND`` (the name used in messages, e.g. "Mesh") and ``_DESTROY`` (the library entry point
    that frees an id). ``id`` is 0 before creation and after :meth:`destroy`; kernels given a freed id report an
    invalid-id error instead of reading freed memory (ids carry a generation).
    """

    _KIND = "object"
    _DESTROY = ""
    id: int = 0

    def _live_id(self) -> int:
        """The id, or a GeometryError when this object was destroyed."""
        if self.id == 0:
            raise GeometryError(f"{self._KIND}: this {self._KIND} was destroyed")
        return self.id

    def destroy(self) -> None:
        """Free the native object now; kernels given its id afterwards report an invalid-id error."""
        ident = getattr(self, "id", 0)
        lib = getattr(self, "_lib", None)
        if ident and lib is not None:
            getattr(lib, self._DESTROY)(ident)
        self.id = 0

    def __del__(self):
        try:
            self.destroy()
        except Exception:  # noqa: BLE001, S110 - interpreter shutdown
            pass
