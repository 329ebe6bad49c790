"""``wp.fabricarray`` / ``wp.indexedfabricarray``: arrays whose elements live in buckets of memory someone else owns.

A Fabric array is built from a Fabric array interface (a dict, or an object's ``__fabric_arrays_interface__``):
``{"version": 1, "device": "cpu", "attribs": {name: {"type": (usable, base, count, depth, role), "access": ...,
"pointers": [...], "counts": [...], "array_lengths": [...]}}}``. Bucket ``b`` holds ``counts[b]`` elements at
``pointers[b]``; element ``i`` of the array is element ``i - start(b)`` of the bucket containing it. With array
depth 1 (``wp.fabricarrayarray``) every element is itself an array: the bucket holds one data pointer per element
and ``array_lengths[b]`` points at one uint64 length per element.

weft never owns that memory: the array holds on to the interface dict (so objects its owner keeps there live as
long as the array), but the storage itself must be kept alive by its owner while the array is used. The bucket table is a
small weft array on the array's device that kernels search by element index (``weft/native/fabric.h``). Host
operations (``numpy``, ``fill_``, ``wp.copy``...) view each bucket as a weft array of the same device. Fabric
arrays carry no gradient (as in Warp).
"""

from __future__ import annotations

import math
import typing

import numpy as np

from ..errors import FabricError, FabricUnsupportedError
from ..ir import types as T
from ..types import scalars as S
from ..types.composite import matrix as _matrix
from ..types.composite import quaternion as _quaternion
from ..types.composite import vector as _vector
from ..types.layout import FABRIC_DESC, INDEXED_FABRIC_DESC
from ..types.mapping import to_ir
from . import device as D
from .annotations import (
    _FabricArrayAnnotation,
    _IndexedFabricArrayAnnotation,
    parse_subscript,
    reject_subclass_subscript,
)
from .array import _Shared, array

DType = typing.TypeVar("DType")
NDim = typing.TypeVar("NDim")


class FabricArray(typing.Generic[DType, NDim]):
    """Typing form of ``wp.fabricarray`` for static checkers (``FabricArray[float]``); kernels take
    ``wp.fabricarray[...]``."""


class IndexedFabricArray(typing.Generic[DType, NDim]):
    """Typing form of ``wp.indexedfabricarray`` for static checkers."""


#: Fabric's base type codes -> weft scalars
_BASES = {"b": S.bool_, "i1": S.int8, "i2": S.int16, "i4": S.int32, "i8": S.int64, "u1": S.uint8, "u2": S.uint16,
          "u4": S.uint32, "u8": S.uint64, "f2": S.float16, "f4": S.float32, "f8": S.float64}


def fabric_dtype(type_info, attrib: str):
    """The weft dtype of a Fabric attribute's ``type`` tuple ``(usable, base, count, array_depth, role)``."""
    if not isinstance(type_info, (tuple, list)) or len(type_info) != 5:
        n = len(type_info) if hasattr(type_info, "__len__") else "no"
        raise FabricError(f"Fabric attribute '{attrib}' type metadata must contain five elements, got {n}: "
                          f"{type_info!r}")
    usable, base, count, _, role = type_info
    if not usable:
        raise FabricUnsupportedError(f"Fabric attribute '{attrib}' cannot be used in weft (not marked usable)")
    scalar = _BASES.get(base)
    if scalar is None:
        raise FabricUnsupportedError(f"Fabric attribute '{attrib}' base data type '{base}' is not supported "
                                     f"(supported: {', '.join(_BASES)})")
    if role in ("text", "path"):
        raise FabricUnsupportedError(f"Fabric attribute '{attrib}' role '{role}' is not supported")
    count = int(count)
    if count <= 1:
        return scalar
    if role == "quat" and count == 4:
        return _quaternion(scalar)
    if role in ("matrix", "transform", "frame"):
        n = math.isqrt(count)
        if n * n != count:
            raise FabricError(f"Fabric attribute '{attrib}' matrix metadata must have a square element count, "
                              f"got {count}")
        return _matrix((n, n), scalar)
    return _vector(count, scalar)


# ---------------------------------------------------------------------------------------------------- shared base
class _FabricBase:
    """Host operations shared by Fabric arrays and their indexed views (through per-bucket weft arrays)."""

    is_contiguous = False
    requires_grad = False
    grad = None
    _annotation = False

    def __class_getitem__(cls, params):
        reject_subclass_subscript(cls, fabricarray if issubclass(cls, fabricarray) else indexedfabricarray)
        if issubclass(cls, fabricarray):
            return parse_subscript(_FabricArrayAnnotation, "fabricarray", params)
        return parse_subscript(_IndexedFabricArrayAnnotation, "indexedfabricarray", params)

    def __len__(self) -> int:
        return self.size

    @property
    def _version(self) -> int:
        """Write counter (shared by a Fabric array and its indexed views): the Tape's overwrite check reads it."""
        return self._shared.version

    def _mark_written(self) -> None:
        self._shared.version += 1

    def __str__(self) -> str:
        if self._annotation:
            return f"{type(self).__name__}{self.dtype}"
        return str(self.numpy())

    def _annotation_ir(self) -> T.ArrayType:
        return self._value_ir()

    def _value_ir(self) -> T.ArrayType:
        dtype = T.GenericType(T.GenericKind.ANY) if self.dtype is typing.Any else to_ir(self.dtype)
        return T.ArrayType(dtype, self.ndim, self._kind)

    @property
    def _ir(self) -> T.Type:
        return to_ir(self.dtype)

    def _check_data(self, what: str) -> None:
        if self._annotation:
            raise FabricError(f"{what}: this {type(self).__name__} is an annotation without data")
        if self.ndim != 1:
            raise FabricUnsupportedError(f"{what}: a Fabric array of arrays is jagged (elements of different "
                                         f"lengths); index its elements in a kernel instead")

    def _element_shape(self) -> tuple[int, ...]:
        t = self._ir
        if isinstance(t, T.VectorType):
            return (t.length,)
        if isinstance(t, T.MatrixType):
            return (t.rows, t.cols)
        return ()

    def numpy(self) -> np.ndarray:
        """A contiguous NumPy copy of the elements (shape ``(size, *element shape)``)."""
        self._check_data("numpy()")
        return self._gather()

    def list(self) -> list:
        """The elements as a Python list of host values."""
        return self.contiguous().list()

    def contiguous(self) -> array:
        """A contiguous weft array copy on the same device."""
        self._check_data("contiguous()")
        out = array(self._gather(), dtype=self.dtype, device="cpu")
        return out if self.device.impl.host_memory else out.to(self.device)

    def to(self, device):
        """Itself on its own device, else a contiguous weft array copy on ``device``."""
        device = D.get_device(device)
        if device == self.device:
            return self
        return self.contiguous().to(device)

    def assign(self, src) -> _FabricBase:
        """Copy ``src`` (an array, Fabric array or anything ``wp.array(...)`` takes) into the elements."""
        from .copy import copy

        if isinstance(src, (array, _FabricBase)):
            copy(self, src)
        else:
            copy(self, array(src, dtype=self.dtype, device="cpu"))
        return self

    def zero_(self) -> _FabricBase:
        return self.fill_(0)

    def fill_(self, value) -> _FabricBase:
        """Set every element to ``value`` (a scalar fills every component of vectors and matrices)."""
        if self._annotation:
            raise FabricError(f"fill_: this {type(self).__name__} is an annotation without data")
        if self.ndim != 1:
            raise FabricUnsupportedError(f"Filling {'indexed ' if self._kind is T.ArrayKind.FABRIC_INDEXED else ''}"
                                         f"Fabric arrays of arrays is not supported (their elements are arrays of "
                                         f"different lengths)")
        if self.size == 0:
            return self
        try:
            one = array([_fill_value(self._ir, value)], dtype=self.dtype, device="cpu").numpy()[0]
        except (TypeError, ValueError) as exc:
            raise FabricError(f"fill_: cannot convert {value!r} to {self._ir}: {exc}") from None
        self._scatter(lambda n: np.broadcast_to(one, (n, *one.shape)))
        return self


def _fill_value(t: T.Type, value):
    """A fill value as one element: scalars broadcast over vector / matrix components."""
    if isinstance(t, T.StructType):
        if isinstance(value, (int, float)) and value == 0:
            return t.pyclass()  # zero-initialised struct, as Warp takes fill_(0) / zero_()
        return value
    value = getattr(value, "_a", value)
    if isinstance(t, (T.VectorType, T.MatrixType)):
        v = np.asarray(value)
        shape = (t.length,) if isinstance(t, T.VectorType) else (t.rows, t.cols)
        return np.broadcast_to(v, shape) if v.ndim == 0 else v.reshape(shape)
    return value


# ---------------------------------------------------------------------------------------------------- fabricarray
class fabricarray(_FabricBase):
    """``wp.fabricarray(data=interface, attrib="name")``: the attribute ``name`` of a Fabric array interface.

    ``wp.fabricarray(dtype=float)`` without data (or ``wp.fabricarray[float]``) is a kernel annotation. Indexing
    with an int32 index array (``fa[indices]``) gives a ``wp.indexedfabricarray``.
    """

    _kind = T.ArrayKind.FABRIC

    def __init__(self, data=None, attrib=None, dtype=typing.Any, ndim=None):
        self._shared = _Shared()
        self._table = None
        self.buckets = ()
        self.access = None
        self.device = None
        if data is None:
            self._annotation = True
            self.dtype = dtype if dtype is typing.Any else S.PY_ALIASES.get(dtype, dtype)
            self.ndim = ndim or 1
            self.size = 0
            self.shape = (0,)
            return
        if not isinstance(attrib, str):
            raise FabricError(f"fabricarray: invalid attribute name {attrib!r} (a str naming one of the "
                              f"interface's attributes)")
        iface = data if isinstance(data, dict) else getattr(data, "__fabric_arrays_interface__", None)
        if not isinstance(iface, dict):
            raise FabricError("fabricarray: data must be a Fabric array interface dict or an object with "
                              "__fabric_arrays_interface__")
        if iface.get("version") != 1:
            raise FabricError(f"fabricarray: unsupported Fabric interface version {iface.get('version')!r} "
                              f"(weft reads version 1)")
        if not isinstance(iface.get("device"), str):
            raise FabricError(f"fabricarray: invalid Fabric interface device {iface.get('device')!r}")
        self.device = D.get_device(iface["device"])
        self._iface = iface  # whatever the interface's owner keeps in it (its storage) lives as long as the array
        attribs = iface.get("attribs")
        if not isinstance(attribs, dict):
            raise FabricError("fabricarray: the Fabric interface has no 'attribs' dict")
        info = attribs.get(attrib)
        if not isinstance(info, dict):
            raise FabricError(f"fabricarray: the Fabric interface has no attribute '{attrib}' "
                              f"(it has: {', '.join(map(str, attribs))})")
        type_info = info.get("type")
        self.dtype = fabric_dtype(type_info, attrib)
        self.access = info.get("access")
        pointers, counts = info.get("pointers"), info.get("counts")
        if not (hasattr(pointers, "__len__") and hasattr(counts, "__len__") and len(pointers) == len(counts)):
            raise FabricError(f"fabricarray: attribute '{attrib}': 'pointers' and 'counts' must be lists of the "
                              f"same length")
        depth = type_info[3]
        lengths = None
        if depth == 0:
            self.ndim = 1
        elif depth == 1:
            self.ndim = 2
            lengths = info.get("array_lengths")
            if not hasattr(lengths, "__len__") or len(lengths) != len(pointers):
                raise FabricError(f"fabricarray: attribute '{attrib}': 'array_lengths' must be a list as long as "
                                  f"'pointers' and 'counts'")
        else:
            raise FabricError(f"fabricarray: attribute '{attrib}': invalid array depth {depth!r} (0 or 1)")
        if ndim is not None and ndim != self.ndim:
            raise FabricError(f"fabricarray: ndim={ndim} given, but attribute '{attrib}' has "
                              f"{'arrays of arrays (ndim 2)' if self.ndim == 2 else 'one value per element (ndim 1)'}")
        rows = []
        start = 0
        for k, (p, n) in enumerate(zip(pointers, counts)):
            n = int(n)
            if n < 0:
                raise FabricError(f"fabricarray: attribute '{attrib}': bucket {k} has a negative count {n}")
            rows.append((start, start + n, int(p or 0), int(lengths[k] or 0) if lengths is not None else 0))
            start += n
        if start > 2**31 - 1:
            raise FabricError(f"fabricarray: {start} elements: kernels index at most 2**31 - 1")
        self._set_buckets(rows)

    def _set_buckets(self, rows: list) -> None:
        self.buckets = tuple(rows)
        self.size = rows[-1][1] if rows else 0
        self.shape = (self.size,)
        if rows:
            table = np.array(rows, dtype=np.uint64).view(np.int64)
            self._table = array(table, dtype=S.int64, device=self.device)

    def _new_like_layout(self) -> fabricarray | None:
        """A Fabric array over fresh storage with this one's dtype, size and device (the Tape's private copy of an
        array a recorded kernel updates in place, for the backward replay). None for arrays of arrays (not
        copied: their elements have lengths of their own)."""
        if self._annotation or self.ndim != 1:
            return None
        store = array(np.zeros((max(self.size, 1), *self._element_shape()), dtype=_np_base(self._ir)),
                      dtype=self.dtype, device=self.device)
        out = fabricarray.__new__(fabricarray)
        out._shared, out._table, out.access, out.device = _Shared(), None, self.access, self.device
        out.dtype, out.ndim, out._iface = self.dtype, 1, {"_ref": store}
        out._set_buckets([(0, self.size, store.ptr, 0)] if self.size else [])
        return out

    def __del__(self):
        # the bucket table is weft's (device memory on CUDA); the elements belong to the interface's owner
        self.__dict__.pop("_table", None)

    @property
    def desc(self) -> bytes:
        return self._desc_flags(0)

    def _desc_flags(self, flags: int) -> bytes:
        """The kernel descriptor (``flags``: weft/abi.py ARRAY_FLAG_*; the Tape's replay copies set bit 0)."""
        if self._annotation:
            raise FabricError("a wp.fabricarray annotation has no data to pass to a kernel")
        table = (self._table.ptr or 0) if self._table is not None else 0
        return FABRIC_DESC.pack(table, len(self.buckets), self.size, 0, 0, 0, self.ndim, flags)

    def __getitem__(self, key):
        if isinstance(key, array):
            return indexedfabricarray(fa=self, indices=key)
        raise FabricError(f"Fabric arrays only support indexing with an index array (wp.array of int32), got "
                          f"{type(key).__name__}; index elements inside kernels")

    def __repr__(self) -> str:
        if self._annotation:
            return f"wp.fabricarray(dtype={self.dtype!r}, ndim={self.ndim})"
        return f"fabricarray(size={self.size}, dtype={self._ir}, ndim={self.ndim}, device={self.device}, " \
               f"buckets={len(self.buckets)})"

    # --------------------------------------------------------------------- host access through bucket views
    def _bucket_views(self):
        """``(start, weft array)`` for every non-empty bucket (ndim 1)."""
        for start, end, ptr, _ in self.buckets:
            if end > start:
                yield start, array(ptr=ptr, shape=(end - start,), dtype=self.dtype, device=self.device)

    def _gather(self, rows: np.ndarray | None = None) -> np.ndarray:
        """Elements (all, or those at ``rows``) as one NumPy array."""
        base = self._empty(self.size if rows is None else len(rows))
        for start, view in self._bucket_views():
            n = view.shape[0]
            if rows is None:
                base[start:start + n] = view.numpy()
            else:
                sel = np.nonzero((rows >= start) & (rows < start + n))[0]
                if sel.size:
                    base[sel] = view.numpy()[rows[sel] - start]
        return base

    def _scatter(self, values, rows: np.ndarray | None = None) -> None:
        """Write elements (all, or those at ``rows``): ``values(n)`` gives the values for n of them, in order."""
        if rows is None:
            src = values(self.size)
        else:
            src = values(len(rows))
        for start, view in self._bucket_views():
            n = view.shape[0]
            if rows is None:
                part, sel_rows = src[start:start + n], None
            else:
                sel = np.nonzero((rows >= start) & (rows < start + n))[0]
                if not sel.size:
                    continue
                part, sel_rows = src[sel], rows[sel] - start
            if self.device.impl.host_memory:
                host = view.numpy()
                if sel_rows is None:
                    host[...] = part
                else:
                    host[sel_rows] = part
                view._mark_written()
            else:
                host = view.numpy().copy()
                if sel_rows is None:
                    host[...] = part
                else:
                    host[sel_rows] = part
                view.assign(array(host, dtype=self.dtype, device="cpu"))
        self._mark_written()

    def _empty(self, n: int) -> np.ndarray:
        return np.zeros((n, *self._element_shape()), dtype=_np_base(self._ir))


def _np_base(t: T.Type):
    return T.scalar_of(t).np_dtype if not isinstance(t, T.ScalarType) else t.np_dtype


def fabricarrayarray(**kwargs) -> fabricarray:
    """A Fabric array of arrays: ``wp.fabricarray(..., ndim=2)`` (also an annotation: ``fabricarrayarray(dtype=float)``)."""
    kwargs["ndim"] = 2
    return fabricarray(**kwargs)


# ---------------------------------------------------------------------------------------------- indexedfabricarray
class indexedfabricarray(_FabricBase):
    """``wp.indexedfabricarray(fa, indices)`` (or ``fa[indices]``): element ``i`` is ``fa[indices[i]]``."""

    _kind = T.ArrayKind.FABRIC_INDEXED

    def __init__(self, fa=None, indices=None, dtype=None, ndim=None):
        if fa is None:
            self._annotation = True
            self._shared = _Shared()
            self.fa = None
            self.indices = None
            self.device = None
            self.dtype = typing.Any if dtype is None else S.PY_ALIASES.get(dtype, dtype)
            self.ndim = ndim or 1
            self.size = 0
            self.shape = (0,)
            return
        if not isinstance(fa, fabricarray) or fa._annotation:
            raise FabricError(f"indexedfabricarray: fa must be a wp.fabricarray with data, got {type(fa).__name__}")
        if not isinstance(indices, array):
            raise FabricError(f"indexedfabricarray: indices must be a weft array, got {type(indices).__name__}")
        if indices.ndim != 1:
            raise FabricError(f"indexedfabricarray: the index array must be one-dimensional, got {indices.ndim}")
        if indices._ir != T.INT32:
            raise FabricError(f"indexedfabricarray: the index array must hold int32, got {indices._ir}")
        if indices.device != fa.device:
            raise FabricError(f"indexedfabricarray: the index array is on {indices.device}, the Fabric array on "
                              f"{fa.device}")
        self.fa = fa
        self._shared = fa._shared  # writes through the view are writes of the Fabric array
        self.indices = indices
        self.dtype = fa.dtype
        self.ndim = fa.ndim
        self.device = fa.device
        self.size = indices.shape[0]
        self.shape = (self.size,)

    @property
    def desc(self) -> bytes:
        return self._desc_flags(0)

    def _desc_flags(self, flags: int) -> bytes:
        if self._annotation:
            raise FabricError("a wp.indexedfabricarray annotation has no data to pass to a kernel")
        return self.fa._desc_flags(flags) + INDEXED_FABRIC_DESC.pack(self.indices.ptr or 0, self.size, 0, 0, 0, self.ndim,
                                                                     0)

    def __repr__(self) -> str:
        if self._annotation:
            return f"wp.indexedfabricarray(dtype={self.dtype!r}, ndim={self.ndim})"
        return f"indexedfabricarray(size={self.size}, dtype={self._ir}, ndim={self.ndim}, device={self.device})"

    def _new_like_layout(self) -> indexedfabricarray | None:
        """The same view of a private copy of the Fabric array (see ``fabricarray._new_like_layout``)."""
        fa = self.fa._new_like_layout()
        return None if fa is None else indexedfabricarray(fa, self.indices)

    def _rows(self) -> np.ndarray:
        rows = self.indices.numpy().astype(np.int64)
        bad = (rows < 0) | (rows >= self.fa.size)
        if bad.any():
            raise FabricError(f"indexedfabricarray: index {int(rows[bad][0])} is out of range for a Fabric array "
                              f"of {self.fa.size} elements")
        return rows

    def _gather(self) -> np.ndarray:
        return self.fa._gather(self._rows())

    def _scatter(self, values) -> None:
        self.fa._scatter(values, self._rows())


def indexedfabricarrayarray(**kwargs) -> indexedfabricarray:
    """An indexed Fabric array of arrays: ``wp.indexedfabricarray(..., ndim=2)``."""
    kwargs["ndim"] = 2
    return indexedfabricarray(**kwargs)


_FabricArrayAnnotation._concrete_cls = fabricarray
_IndexedFabricArrayAnnotation._concrete_cls = indexedfabricarray
