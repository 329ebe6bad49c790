"""Typed-IR type records. Frozen, hashable, printable; the host-side classes (``wp.vec3`` ...) map onto these."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import numpy as np


class Type:
    """Base of all IR types."""

    __slots__ = ()

    @property
    def is_generic(self) -> bool:
        return False

    def short(self) -> str:
        return str(self)


@dataclass(frozen=True, slots=True)
class ScalarType(Type):
    name: str  # 'float32', 'int32', 'bool', ...
    kind: str  # 'f' float, 'i' signed int, 'u' unsigned int, 'b' bool
    bits: int

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_int(self) -> bool:
        return self.kind in ("i", "u")

    @property
    def is_signed(self) -> bool:
        return self.kind in ("i", "f")

    @property
    def is_bool(self) -> bool:
        return self.kind == "b"

    @property
    def ctype(self) -> str:
        if self.kind == "b":
            return "bool"
        if self.kind == "f":
            if self.name == "bfloat16":
                return "weft::bfloat16"
            return {16: "weft::half", 32: "float", 64: "double"}[self.bits]
        return f"{'u' if self.kind == 'u' else ''}int{self.bits}_t"

    @property
    def np_dtype(self) -> np.dtype:
        if self.kind == "b":
            return np.dtype(np.bool_)
        if self.name == "bfloat16":
            return bfloat16_np_dtype()
        return np.dtype(f"{self.kind}{self.bits // 8}")

    @property
    def size(self) -> int:
        return max(self.bits // 8, 1)

    def __str__(self) -> str:
        return self.name


BOOL = ScalarType("bool", "b", 8)
INT8 = ScalarType("int8", "i", 8)
INT16 = ScalarType("int16", "i", 16)
INT32 = ScalarType("int32", "i", 32)
INT64 = ScalarType("int64", "i", 64)
UINT8 = ScalarType("uint8", "u", 8)
UINT16 = ScalarType("uint16", "u", 16)
UINT32 = ScalarType("uint32", "u", 32)
UINT64 = ScalarType("uint64", "u", 64)
FLOAT16 = ScalarType("float16", "f", 16)
FLOAT32 = ScalarType("float32", "f", 32)
FLOAT64 = ScalarType("float64", "f", 64)
BFLOAT16 = ScalarType("bfloat16", "f", 16)


def bfloat16_np_dtype() -> np.dtype:
    """NumPy's view of bfloat16 storage: ``ml_dtypes.bfloat16`` when installed, else the raw bits as uint16
    (as Warp does)."""
    try:
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    except ImportError:
        return np.dtype(np.uint16)

SCALARS: tuple[ScalarType, ...] = (
    BOOL, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64, FLOAT16, FLOAT32, FLOAT64, BFLOAT16,
)
FLOATS = (FLOAT16, FLOAT32, FLOAT64, BFLOAT16)
INTS = (INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64)


class VecFlavor(enum.Enum):
    VECTOR = "vec"
    QUAT = "quat"
    TRANSFORM = "transform"


@dataclass(frozen=True, slots=True)
class VectorType(Type):
    length: int
    scalar: ScalarType
    flavor: VecFlavor = VecFlavor.VECTOR

    @property
    def ctype(self) -> str:
        if self.flavor is VecFlavor.QUAT:
            return f"weft::quat_t<{self.scalar.ctype}>"
        if self.flavor is VecFlavor.TRANSFORM:
            return f"weft::transform_t<{self.scalar.ctype}>"
        return f"weft::vec_t<{self.length},{self.scalar.ctype}>"

    @property
    def size(self) -> int:
        return self.length * self.scalar.size

    def __str__(self) -> str:
        if self.flavor is VecFlavor.QUAT:
            return f"quat{_suffix(self.scalar)}"
        if self.flavor is VecFlavor.TRANSFORM:
            return f"transform{_suffix(self.scalar)}"
        return f"vec{self.length}{_suffix(self.scalar)}"


@dataclass(frozen=True, slots=True)
class MatrixType(Type):
    rows: int
    cols: int
    scalar: ScalarType

    @property
    def ctype(self) -> str:
        return f"weft::mat_t<{self.rows},{self.cols},{self.scalar.ctype}>"

    @property
    def size(self) -> int:
        return self.rows * self.cols * self.scalar.size

    def __str__(self) -> str:
        return f"mat{self.rows}{self.cols}{_suffix(self.scalar)}"


def _suffix(s: ScalarType) -> str:
    return {
        "float16": "h", "float32": "f", "float64": "d", "int32": "i", "uint32": "ui", "int64": "l",
        "uint64": "ul", "int8": "b", "uint8": "ub", "int16": "s", "uint16": "us", "bool": "bool", "bfloat16": "bf",
    }[s.name]


class ArrayKind(enum.Enum):
    ARRAY = "array"
    INDEXED = "indexedarray"
    FIXED = "fixedarray"  # kernel-local wp.zeros(shape, dtype)
    FABRIC = "fabricarray"  # wp.fabricarray: elements in buckets of memory (ndim 2: a jagged array of arrays)
    FABRIC_INDEXED = "indexedfabricarray"  # wp.indexedfabricarray: a Fabric array through an index array


@dataclass(frozen=True, slots=True)
class ArrayType(Type):
    dtype: Type
    ndim: int
    kind: ArrayKind = ArrayKind.ARRAY
    shape: tuple[int, ...] = ()  # only for FIXED

    @property
    def is_generic(self) -> bool:
        return isinstance(self.dtype, GenericType)

    @property
    def ctype(self) -> str:
        if self.kind is ArrayKind.FIXED:
            return f"weft::fixedarray_t<{self.dtype.ctype},{_prod(self.shape)},{self.ndim}>"
        if self.kind is ArrayKind.INDEXED:
            return f"weft::indexedarray_t<{self.dtype.ctype}>"
        if self.kind is ArrayKind.FABRIC:
            return f"weft::fabricarray_t<{self.dtype.ctype}>"
        if self.kind is ArrayKind.FABRIC_INDEXED:
            return f"weft::indexedfabricarray_t<{self.dtype.ctype}>"
        return f"weft::array_t<{self.dtype.ctype}>"

    def __str__(self) -> str:
        return f"{self.kind.value}{self.ndim}d({self.dtype})"


def _prod(shape: tuple[int, ...]) -> int:
    out = 1
    for s in shape:
        out *= s
    return out


@dataclass(frozen=True, slots=True)
class StructType(Type):
    name: str
    key: str  # unique: qualified name + hash of field types
    fields: tuple[tuple[str, Type], ...]
    pyclass: object = field(default=None, compare=False, hash=False, repr=False)

    @property
    def ctype(self) -> str:
        return f"S_{self.key}"

    def field_type(self, name: str) -> Type | None:
        for fname, ftype in self.fields:
            if fname == name:
                return ftype
        return None

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class OpaqueType(Type):
    """A native value kernels hold but never look inside (a geometry query's traversal state)."""

    name: str
    native: str  # the C++ type, in namespace weft
    lanes_equal: bool = False  # weft::lanes_equal(a, b) compares two values (lane runs, backend/lanes.py)

    @property
    def ctype(self) -> str:
        return f"weft::{self.native}"

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class TupleType(Type):
    elems: tuple[Type, ...]

    def __str__(self) -> str:
        return "tuple(" + ", ".join(str(e) for e in self.elems) + ")"


class TileStorage(enum.Enum):
    REGISTER = "register"
    SHARED = "shared"


@dataclass(frozen=True, slots=True)
class TileType(Type):
    dtype: Type
    shape: tuple[int, ...]

    @property
    def ctype(self) -> str:
        dims = ",".join(str(s) for s in self.shape)
        return f"weft::tile_t<{self.dtype.ctype},{dims}>"

    @property
    def size(self) -> int:
        return _prod(self.shape)

    def __str__(self) -> str:
        return f"tile({self.dtype}, {self.shape})"


@dataclass(frozen=True, slots=True)
class VoidType(Type):
    @property
    def ctype(self) -> str:
        return "void"

    def __str__(self) -> str:
        return "void"


VOID = VoidType()


class GenericKind(enum.Enum):
    ANY = "Any"
    SCALAR = "Scalar"
    FLOAT = "Float"
    INT = "Int"


@dataclass(frozen=True, slots=True)
class GenericType(Type):
    """A placeholder in a generic signature: ``typing.Any``, ``wp.Float``, ``wp.vector(length=Any, ...)``."""

    kind: GenericKind = GenericKind.ANY
    template: Type | None = None  # e.g. a VectorType with length 0 meaning "any length"

    @property
    def is_generic(self) -> bool:
        return True

    def accepts(self, t: Type) -> bool:
        if self.template is not None:
            return _template_accepts(self.template, t)
        if self.kind is GenericKind.ANY:
            return True
        if not isinstance(t, ScalarType):
            return False
        if self.kind is GenericKind.FLOAT:
            return t.is_float
        if self.kind is GenericKind.INT:
            return t.is_int
        return not t.is_bool

    def __str__(self) -> str:
        return str(self.template) if self.template is not None else self.kind.value


def _template_accepts(template: Type, t: Type) -> bool:
    if isinstance(template, VectorType) and isinstance(t, VectorType):
        return (template.length in (0, t.length)) and (template.scalar is None or template.scalar == t.scalar)
    if isinstance(template, MatrixType) and isinstance(t, MatrixType):
        return template.rows in (0, t.rows) and template.cols in (0, t.cols) and (
            template.scalar is None or template.scalar == t.scalar
        )
    if isinstance(template, TileType) and isinstance(t, TileType):  # shape () means any shape
        return template.shape in ((), t.shape) and template.dtype == t.dtype
    return False


def scalar_of(t: Type) -> ScalarType | None:
    """The element scalar of a scalar, vector or matrix type (None otherwise)."""
    if isinstance(t, ScalarType):
        return t
    if isinstance(t, (VectorType, MatrixType)):
        return t.scalar
    return None


def is_float_type(t: Type) -> bool:
    s = scalar_of(t)
    return s is not None and s.is_float


def is_differentiable_type(t: Type) -> bool:
    """Whether values of this type carry adjoints."""
    if isinstance(t, (ScalarType, VectorType, MatrixType)):
        return scalar_of(t).is_float
    if isinstance(t, StructType):
        return any(is_differentiable_type(ft) for _, ft in t.fields)
    if isinstance(t, TileType):
        return is_differentiable_type(t.dtype)
    if isinstance(t, ArrayType):
        return t.kind is ArrayKind.FIXED and is_differentiable_type(t.dtype)
    return False


def with_scalar(t: Type, s: ScalarType) -> Type:
    if isinstance(t, ScalarType):
        return s
    if isinstance(t, VectorType):
        return VectorType(t.length, s, t.flavor)
    if isinstance(t, MatrixType):
        return MatrixType(t.rows, t.cols, s)
    raise ValueError(f"{t} has no scalar to replace")
