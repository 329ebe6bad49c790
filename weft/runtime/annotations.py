"""Subscript array annotations: ``wp.array[float]``, ``wp.array2d[wp.vec3]``, ``wp.indexedarray[float, Literal[2]]``,
``wp.fabricarray[Any]``, ``wp.indexedfabricarray[float]``.

As in Warp, a subscript gives a lightweight annotation object (not an array): its family (``_concrete_cls``),
``dtype`` (``float`` -> ``wp.float32``; other classes are kept as given and checked when a kernel compiles) and
``ndim`` (1-4, or ``typing.Any``). Annotations compare equal by value, hash, print as the subscript that makes them
(``eval(repr(a)) == a``) and combine into ``typing.Union`` with ``|`` (host-side only: kernels reject unions).
The factory form (``wp.array(dtype=float, ndim=2)``) still makes an array instance without data, as in Warp.
"""

from __future__ import annotations

import typing

from ..ir import types as T
from ..types import scalars as S
from ..types.aliases import NAMED_TYPES
from ..types.layout import layout
from ..types.mapping import to_ir
from ..types.tiles import literal_value


class _ArrayAnnotationBase:
    """An array annotation: family, dtype, ndim (no data, no device)."""

    __slots__ = ("dtype", "ndim")
    _concrete_cls: type = None  # the array family (set by the subclasses)
    _kind: T.ArrayKind = T.ArrayKind.ARRAY
    _annotation = True  # the protocol weft's annotation handling reads (as for data-less array instances)
    device = None

    def __init__(self, dtype=typing.Any, ndim=1):
        self.dtype = dtype if dtype is typing.Any else _canonical_dtype(dtype)
        self.ndim = ndim

    @property
    def _ir(self) -> T.Type:
        return T.GenericType(T.GenericKind.ANY) if self.dtype is typing.Any else to_ir(self.dtype)

    def _annotation_ir(self) -> T.ArrayType:
        if self.ndim is typing.Any:
            raise TypeError(f"{self!r}: a kernel parameter needs a fixed number of dimensions")
        return T.ArrayType(self._ir, self.ndim, self._kind)

    @property
    def vars(self) -> dict:
        """The members kernels read (``a.shape``), with their IR types."""
        return {"shape": T.INT32}

    def __ctype__(self) -> bytes:
        """A null descriptor of this array type (what a kernel receives for ``None``)."""
        return bytes(layout(T.ArrayType(T.FLOAT32, 1, self._kind)).size)

    def __repr__(self) -> str:
        d = _dtype_repr(self.dtype)
        name = self._concrete_cls.__name__
        if self.ndim is typing.Any:
            return f"wp.{name}[{d}, Any]"
        if name == "array" and self.ndim >= 2:
            return f"wp.array{self.ndim}d[{d}]"
        return f"wp.{name}[{d}]" if self.ndim == 1 else f"wp.{name}[{d}, Literal[{self.ndim}]]"

    def __eq__(self, other):
        if isinstance(other, _ArrayAnnotationBase):
            return self._concrete_cls is other._concrete_cls and self.dtype == other.dtype and self.ndim == other.ndim
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self._concrete_cls, self.dtype, self.ndim))

    def __or__(self, other):
        return typing.Union[self, other]  # noqa: UP007

    def __ror__(self, other):
        return typing.Union[other, self]  # noqa: UP007


class _ArrayAnnotation(_ArrayAnnotationBase):
    """``wp.array[dtype]`` / ``wp.array2d[dtype]`` / ``wp.array[dtype, Literal[n]]``."""

    __slots__ = ("_vars_cache",)

    def __init__(self, dtype=typing.Any, ndim=1):
        super().__init__(dtype, ndim)
        self._vars_cache = None

    @property
    def vars(self) -> dict:
        if self._vars_cache is None:
            self._vars_cache = {"shape": T.INT32, "ptr": T.UINT64}
        return self._vars_cache


class _IndexedArrayAnnotation(_ArrayAnnotationBase):
    """``wp.indexedarray[dtype]`` / ``wp.indexedarray[dtype, Literal[n]]``."""

    __slots__ = ()
    _kind = T.ArrayKind.INDEXED


class _FabricAnnotationBase(_ArrayAnnotationBase):
    """Fabric array annotations: 1 dimension, or 2 for arrays of arrays; kernels read ``a.shape[0]`` (the size)."""

    __slots__ = ()

    @property
    def vars(self) -> dict:
        return {"size": T.UINT64}

    def _annotation_ir(self) -> T.ArrayType:
        if self.ndim not in (1, 2):
            raise TypeError(f"{self!r}: Fabric arrays have 1 dimension, or 2 for arrays of arrays")
        return super()._annotation_ir()


class _FabricArrayAnnotation(_FabricAnnotationBase):
    """``wp.fabricarray[dtype]`` / ``wp.fabricarray[dtype, Literal[2]]``."""

    __slots__ = ()
    _kind = T.ArrayKind.FABRIC


class _IndexedFabricArrayAnnotation(_FabricAnnotationBase):
    """``wp.indexedfabricarray[dtype]`` / ``wp.indexedfabricarray[dtype, Literal[2]]``."""

    __slots__ = ()
    _kind = T.ArrayKind.FABRIC_INDEXED


def parse_subscript(annotation_cls: type, name: str, params) -> _ArrayAnnotationBase:
    """``X[dtype]`` or ``X[dtype, ndim]`` with ``ndim`` an int, ``Literal[n]`` or ``Any`` (Warp's rules)."""
    if not isinstance(params, tuple):
        return annotation_cls(params, 1)
    if len(params) != 2:
        raise TypeError(f"wp.{name}[...] expects 1 or 2 type parameters (dtype, ndim), got {len(params)}")
    dtype, ndim = params
    if ndim is not typing.Any:
        if typing.get_origin(ndim) is typing.Literal and len(typing.get_args(ndim)) != 1:
            raise TypeError(f"wp.{name}[...]: Expected a single Literal value for ndim, got {ndim!r}")
        ndim = literal_value(ndim)
        if isinstance(ndim, bool) or not isinstance(ndim, int):
            raise TypeError(f"wp.{name}[...]: ndim must be an integer, Literal[n] or Any, got {ndim!r}")
        if not 1 <= ndim <= 4:
            raise ValueError(f"wp.{name}[...]: ndim must be between 1 and 4, got {ndim}")
    return annotation_cls(dtype, ndim)


def reject_subclass_subscript(cls: type, family: type) -> None:
    """``MyArray[float]`` for a user subclass of an array family: an error (kernels see only the families)."""
    if cls is not family:
        raise TypeError(f"Subscript syntax not supported on {cls.__name__} (a subclass of wp.{family.__name__}); "
                        f"annotate with wp.{family.__name__}[...] and pass {cls.__name__} instances")


def _canonical_dtype(dtype):
    """``float`` / ``int`` / ``bool`` / NumPy scalar types -> weft scalars; anything else as given."""
    try:
        return S.PY_ALIASES.get(dtype, dtype)
    except TypeError:  # unhashable
        return dtype


def _dtype_repr(dtype) -> str:
    """A dtype as it is spelled in a subscript: ``wp.vec3f`` where weft has that name, else a readable form."""
    if dtype is typing.Any:
        return "Any"
    ir = getattr(dtype, "_ir_", None)
    if isinstance(ir, T.StructType):
        return getattr(dtype, "key", dtype.__name__)
    name = getattr(dtype, "__name__", None)
    if name and (NAMED_TYPES.get(name) is dtype or S.BY_NAME.get(name) is dtype):  # weft's public name for it
        return f"wp.{name}"
    if isinstance(ir, T.VectorType):
        s = ir.scalar.name
        if ir.flavor is T.VecFlavor.QUAT:
            return f"quaternion(dtype={s})"
        if ir.flavor is T.VecFlavor.TRANSFORM:
            return f"transformation(dtype={s})"
        return f"vector(length={ir.length}, dtype={s})"
    if isinstance(ir, T.MatrixType):
        return f"matrix(shape=({ir.rows}, {ir.cols}), dtype={ir.scalar.name})"
    return name or repr(dtype)
