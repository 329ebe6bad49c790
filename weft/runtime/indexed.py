"""``wp.indexedarray``: an array viewed through per-dimension index arrays (gather/scatter without copies)."""

from __future__ import annotations

import struct
import typing

import numpy as np

from ..ir import types as T
from ..types import scalars as S
from ..types.mapping import to_ir
from .annotations import _IndexedArrayAnnotation, parse_subscript, reject_subclass_subscript
from .array import array
from .capture import active_capture


class indexedarray:
    """``indexedarray(data, indices)``: element ``[i, j]`` is ``data[indices[0][i], indices[1][j]]``.

    ``indices`` holds one int32 array (or None for "all") per dimension of ``data``.
    """

    requires_grad = False  # an indexed view carries no gradient of its own

    def __class_getitem__(cls, key):
        """``wp.indexedarray[float]`` (one dimension) or ``wp.indexedarray[float, 2]`` / ``[float, Literal[2]]``:
        a lightweight annotation (weft/runtime/annotations.py)."""
        reject_subclass_subscript(cls, indexedarray)
        return parse_subscript(_IndexedArrayAnnotation, "indexedarray", key)

    def __init__(self, data: array | None = None, indices=None, dtype=None, ndim=None):
        if data is None:

            self._annotation = True
            self.dtype = typing.Any if dtype is None else S.PY_ALIASES.get(dtype, dtype)
            self._ir = to_ir(self.dtype)
            self.ndim = ndim or 1
            self.device = None
            self.shape = (0,) * self.ndim
            return
        self._annotation = False
        self.data = data
        if indices is None:
            indices = [None] * data.ndim
        if not isinstance(indices, (list, tuple)):
            indices = [indices]
        indices = list(indices) + [None] * (data.ndim - len(indices))
        self.indices = []
        shape = []
        for d, idx in enumerate(indices):
            if idx is None:
                self.indices.append(None)
                shape.append(data.shape[d])
            else:
                if not isinstance(idx, array):
                    idx = array(np.asarray(idx, dtype=np.int32), dtype=np.int32, device=data.device)
                if idx._ir != T.INT32 or idx.ndim != 1:
                    raise TypeError("indexedarray indices must be 1-D int32 arrays")
                self.indices.append(idx)
                shape.append(idx.shape[0])
        self.shape = tuple(shape)
        self.ndim = data.ndim
        self.dtype = data.dtype
        self._ir = data._ir
        self.device = data.device

    def _annotation_ir(self) -> T.ArrayType:
        return T.ArrayType(self._ir, self.ndim, T.ArrayKind.INDEXED)

    def _value_ir(self) -> T.ArrayType:
        return T.ArrayType(self._ir, self.ndim, T.ArrayKind.INDEXED)

    @property
    def desc(self) -> bytes:
        ptrs = [(i.ptr or 0) if i is not None else 0 for i in self.indices] + [0] * (4 - self.ndim)
        shape = list(self.shape) + [0] * (4 - self.ndim)
        return self.data.desc + struct.pack("<4Q4i", *ptrs, *shape)

    _desc = None

    @property
    def is_contiguous(self) -> bool:
        """Never: an indexed array's elements are gathered through its index arrays (as in Warp)."""
        return False

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    def numpy(self) -> np.ndarray:
        src = self.data.numpy()
        idx = tuple(i.numpy() if i is not None else slice(None) for i in self.indices)
        return src[np.ix_(*[i if not isinstance(i, slice) else np.arange(src.shape[d]) for d, i in enumerate(idx)])]

    def _selection(self, src: np.ndarray):
        idx = [i.numpy() if i is not None else np.arange(src.shape[d]) for d, i in enumerate(self.indices)]
        return np.ix_(*idx)

    def fill_(self, value) -> indexedarray:
        """Set every selected element of the underlying array to ``value`` (through the host: in place on the CPU,
        a round trip for device memory). ``value``: a scalar (every component of vector / matrix elements), an
        element as a list, nested list, NumPy array or value type, or a struct instance."""
        from .fabric import _fill_value

        try:
            one = array([_fill_value(self._ir, value)], dtype=self.dtype, device="cpu").numpy()[0]
        except (TypeError, ValueError) as exc:
            raise ValueError(f"fill_: cannot convert {value!r} to {self._ir}: {exc}") from None
        return self._set(one)

    def _set(self, values: np.ndarray) -> indexedarray:
        """Write ``values`` (broadcast to the selection) into the selected elements of the underlying array (inside a
        CPU graph capture: at every replay of the graph, as launches are)."""
        graph = active_capture()
        if graph is not None and graph.device == self.data.device and graph.device.impl.capture_by_replay:
            graph.launches.append(lambda: self._set(values))
            return self
        host = self.data.device.impl.host_memory and self.data.is_contiguous
        src = self.data.numpy() if host else self.data.numpy().copy()
        src[self._selection(src)] = values
        if not host:
            self.data.assign(src)
        self._mark_written()
        return self

    def assign(self, src) -> indexedarray:
        """Copy ``src`` (an array of any family, or anything ``wp.array(...)`` takes) into the selected elements."""
        from .copy import copy

        copy(self, src if hasattr(src, "numpy") else array(src, dtype=self.dtype, device="cpu"))
        return self

    def contiguous(self) -> array:
        """A contiguous copy of the selected elements (a weft array on the same device)."""
        return array(self.numpy(), dtype=self.dtype, device=self.device)

    def list(self) -> list:
        return self.contiguous().list()

    def zero_(self) -> indexedarray:
        return self.fill_(0)

    def _mark_written(self) -> None:
        self.data._mark_written()


class _IndexedNd:
    """``wp.indexedarray2d(...)`` and the annotation ``wp.indexedarray2d[float]``."""

    def __init__(self, ndim: int) -> None:
        self.ndim = ndim
        self.__name__ = f"indexedarray{ndim}d"

    def __call__(self, *args, **kwargs) -> indexedarray:
        kwargs.setdefault("ndim", self.ndim)
        return indexedarray(*args, **kwargs)

    def __getitem__(self, dtype):
        if isinstance(dtype, tuple):
            raise TypeError(f"wp.{self.__name__}[...] expects a single type parameter (dtype), got {len(dtype)}")
        return _IndexedArrayAnnotation(dtype, self.ndim)

    def __repr__(self) -> str:
        return f"wp.{self.__name__}"


def _nd(n):
    return _IndexedNd(n)


indexedarray1d = _nd(1)
indexedarray2d = _nd(2)
indexedarray3d = _nd(3)
indexedarray4d = _nd(4)


_IndexedArrayAnnotation._concrete_cls = indexedarray
