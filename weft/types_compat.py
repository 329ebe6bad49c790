"""``wp.types``: the type classes and helpers under the module path Warp programs use."""

from __future__ import annotations

import numbers

import numpy as np

from .builtins import TileBuiltin
from .ir import types as T
from .runtime.annotations import _ArrayAnnotationBase
from .runtime.array import array, array1d, array2d, array3d, array4d
from .runtime.fabric import fabricarray, indexedfabricarray
from .runtime.fixed import fixedarray
from .runtime.indexed import indexedarray
from .types import generics as _generics
from .types.aliases import NAMED_TYPES as _NAMED
from .types.composite import (
    MatrixBase,
    QuatBase,
    TransformBase,
    VectorBase,
    class_for,
    matrix,
    quaternion,
    transformation,
    vector,
)
from .types.dtypes import element_size
from .types.mapping import to_ir
from .types.scalars import (
    Float,
    Int,
    Scalar,
    bfloat16,
    bool_,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from .types.struct import struct
from .types.tiles import HostTile, TileAnnotation

globals().update(_NAMED)
handle = uint64  # Warp's object-handle type: a uint64
float_types = (float16, bfloat16, float32, float64)
int_types = (int8, uint8, int16, uint16, int32, uint32, int64, uint64)
scalar_types = int_types + float_types
vector_types = tuple(_NAMED.values())


def types_equal(a, b, match_generic=False) -> bool:
    """True when two annotations or dtypes denote the same weft type."""
    return to_ir(a) == to_ir(b)


def type_size_in_bytes(t) -> int:
    """Size in bytes of one value of the type."""
    return element_size(to_ir(t))


def type_scalar_type(t):
    """The scalar type of a composite type (the type itself for scalars)."""
    return getattr(t, "_wp_scalar_type_", t)


def type_length(t) -> int:
    """Number of components of a composite type (1 for scalars)."""
    return getattr(t, "_length_", 1)


# ---------------------------------------------------------------------------------------------------------------
# Warp's ``warp.types`` introspection helpers and dtype tables.

non_atomic_types = (int8, uint8, int16, uint16, int64)
np_dtype_to_warp_type = {c._ir_.np_dtype: c for c in (bool_, *scalar_types) if c is not bfloat16}
warp_type_to_np_dtype = {c: c._ir_.np_dtype for c in (bool_, *scalar_types) if c is not bfloat16}


def _ir(t):
    try:
        return to_ir(t)
    except TypeError:
        return None


def _type_ir(t):
    """The IR type of a type or annotation; None for values (``wp.vec3(...)``, ``wp.int32(1)``, a struct instance),
    which the ``type_is_*`` predicates reject as Warp's do."""
    if isinstance(t, (numbers.Number, np.generic)) or (not isinstance(t, type) and hasattr(type(t), "_ir_")):
        return None
    return _ir(t)


def dtype_from_numpy(numpy_dtype):
    """The weft scalar type of a NumPy dtype (``np.float32`` -> ``wp.float32``)."""
    try:
        if np.dtype(numpy_dtype).name == "bfloat16":
            return bfloat16
        return np_dtype_to_warp_type[np.dtype(numpy_dtype)]
    except (KeyError, TypeError):
        raise TypeError(f"Cannot convert {numpy_dtype} to a Warp type") from None


def dtype_to_numpy(warp_dtype):
    """The NumPy dtype of a weft scalar type (``wp.float32`` -> ``np.float32``)."""
    cls = type_scalar_type(warp_dtype) if not isinstance(warp_dtype, type) or not issubclass(warp_dtype, Scalar) \
        else warp_dtype
    if cls is float:
        cls = float32
    if cls is bfloat16:
        return T.BFLOAT16.np_dtype
    try:
        return warp_type_to_np_dtype[cls]
    except (KeyError, TypeError):
        raise TypeError(f"Cannot convert {warp_dtype} to a NumPy type") from None


def type_is_scalar(t) -> bool:
    """True for scalar types (``wp.float32``, ``float``, ``int`` ...)."""
    return isinstance(_type_ir(t), T.ScalarType)


def type_is_int(t) -> bool:
    """True for integer scalar types."""
    ir = _type_ir(t)
    return isinstance(ir, T.ScalarType) and ir.is_int


def type_is_float(t) -> bool:
    """True for floating-point scalar types."""
    ir = _type_ir(t)
    return isinstance(ir, T.ScalarType) and ir.is_float


def type_is_vector(t) -> bool:
    """True for vector types (not quaternions or transforms)."""
    ir = _type_ir(t)
    return isinstance(ir, T.VectorType) and ir.flavor is T.VecFlavor.VECTOR


def type_is_quaternion(t) -> bool:
    """True for quaternion types."""
    ir = _type_ir(t)
    return isinstance(ir, T.VectorType) and ir.flavor is T.VecFlavor.QUAT


def type_is_transformation(t) -> bool:
    """True for transform types."""
    ir = _type_ir(t)
    return isinstance(ir, T.VectorType) and ir.flavor is T.VecFlavor.TRANSFORM


def type_is_matrix(t) -> bool:
    """True for matrix types."""
    return isinstance(_type_ir(t), T.MatrixType)


def type_is_composite(t) -> bool:
    """True for vector, quaternion, transform and matrix types."""
    return isinstance(_type_ir(t), (T.VectorType, T.MatrixType))


def type_is_value(t) -> bool:
    """True for scalar and composite value types."""
    return t in (float, int, bool) or isinstance(_type_ir(t), (T.ScalarType, T.VectorType, T.MatrixType))


def type_is_struct(t) -> bool:
    """True for ``@wp.struct`` classes."""
    return isinstance(_type_ir(t), T.StructType)


def type_is_array(t) -> bool:
    """True for the array classes (``wp.array``, ``wp.indexedarray``, ``wp.fabricarray``, ...), as in Warp."""
    return any(t is f for f in _FAMILIES)


def type_is_tile(t) -> bool:
    """True for tile types and annotations (``wp.tile[float, 8]``) and for ``wp.tile`` itself (Warp's tile type)."""
    if isinstance(t, HostTile):  # wp.tile(dtype=, shape=) on the host is a tile, not a tile type
        return False
    return isinstance(t, (TileAnnotation, TileBuiltin)) or type(_ir(t)).__name__ == "TileType"


def _value_type(v):
    return v if isinstance(v, type) else type(v)


def is_scalar(v) -> bool:
    """True for scalar values (Python numbers, NumPy scalars)."""
    return isinstance(v, (int, float, bool, np.number, np.bool_))


def is_int(v) -> bool:
    """True for integer values."""
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def is_float(v) -> bool:
    """True for floating-point values."""
    return isinstance(v, (float, np.floating))


def is_vector(v) -> bool:
    """True for vector values."""
    return type_is_vector(type(v))


def is_quaternion(v) -> bool:
    """True for quaternion values."""
    return type_is_quaternion(type(v))


def is_transformation(v) -> bool:
    """True for transform values."""
    return type_is_transformation(type(v))


def is_matrix(v) -> bool:
    """True for matrix values."""
    return type_is_matrix(type(v))


def is_composite(v) -> bool:
    """True for vector/quaternion/transform/matrix values."""
    return type_is_composite(type(v))


def is_value(v) -> bool:
    """True for scalar and composite values."""
    return is_scalar(v) or is_composite(v)


def is_struct(v) -> bool:
    """True for struct instances."""
    return type_is_struct(type(v))


def is_array(v) -> bool:
    """True for arrays of every family (``wp.array``, ``wp.indexedarray``, ``wp.fabricarray``,
    ``wp.indexedfabricarray``, ``wp.fixedarray``) and their annotations (``wp.array[float]``), as in Warp."""
    return isinstance(v, _FAMILIES + (_ArrayAnnotationBase,))


#: Warp's array family ids (``array_type_id``)
ARRAY_TYPE_REGULAR = 0
ARRAY_TYPE_INDEXED = 1
ARRAY_TYPE_FABRIC = 2
ARRAY_TYPE_FABRIC_INDEXED = 3
_FAMILIES = (array, indexedarray, fabricarray, indexedfabricarray, fixedarray)
_FAMILY_IDS = {array: ARRAY_TYPE_REGULAR, fixedarray: ARRAY_TYPE_REGULAR, indexedarray: ARRAY_TYPE_INDEXED,
               fabricarray: ARRAY_TYPE_FABRIC, indexedfabricarray: ARRAY_TYPE_FABRIC_INDEXED}
_TYPE_PREFIX = {ARRAY_TYPE_REGULAR: "a", ARRAY_TYPE_INDEXED: "ia", ARRAY_TYPE_FABRIC: "fa",
                ARRAY_TYPE_FABRIC_INDEXED: "ifa"}


def concrete_array_type(t) -> type:
    """The array family of an array or array annotation (``wp.fabricarray`` for ``wp.fabricarray[float]`` and for
    instances of subclasses); ``type(t)`` for anything else."""
    if isinstance(t, _ArrayAnnotationBase):
        return t._concrete_cls
    for family in (indexedarray, fabricarray, indexedfabricarray, fixedarray, array):
        if isinstance(t, family):
            return family
    return type(t)


def matches_array_class(t, cls) -> bool:
    """True if ``t`` is an array of family ``cls`` or an annotation of one."""
    if isinstance(t, _ArrayAnnotationBase):
        return t._concrete_cls is cls
    return isinstance(t, cls)


def array_type_id(a) -> int:
    """Warp's id of an array's family: ``ARRAY_TYPE_REGULAR`` / ``_INDEXED`` / ``_FABRIC`` / ``_FABRIC_INDEXED``."""
    family = concrete_array_type(a)
    if family not in _FAMILY_IDS:
        raise ValueError(f"Invalid array type: {type(a).__name__}")
    return _FAMILY_IDS[family]


def get_type_code(t) -> str:
    """A short string naming a type for overload keys (Warp's ``get_type_code``): equal for equal types, ``?`` for
    generic parts (``Any`` dtypes or shapes)."""
    import typing

    if t is typing.Any:
        return "?"
    if is_array(t):
        ndim = "?" if t.ndim is typing.Any else str(t.ndim)
        dtype = getattr(t, "dtype", typing.Any)
        return f"{_TYPE_PREFIX[array_type_id(t)]}{ndim}{'?' if dtype is typing.Any else get_type_code(dtype)}"
    if typing.get_origin(t) is tuple:  # tuple[float, vec3f] -> tpl2f4v3f4; tuple[vec3f, ...] -> tpl2v3f4?
        args = typing.get_args(t)
        return f"tpl{len(args)}" + "".join("?" if a is Ellipsis else get_type_code(a) for a in args)
    if isinstance(t, TileAnnotation):
        shape = "?" if t.shape is typing.Any else "x".join(str(n) for n in t.shape)
        return f"t{'s' if t.storage == 'shared' else 'r'}{shape}{get_type_code(t.dtype)}"
    ir = _ir(t)
    if ir is None:
        raise TypeError(f"Unrecognized type '{t}'")
    return _ir_code(ir)


_SCALAR_CODES = {"bool": "b", "int8": "i1", "int16": "i2", "int32": "i4", "int64": "i8", "uint8": "u1", "uint16": "u2",
                 "uint32": "u4", "uint64": "u8", "float16": "f2", "bfloat16": "bf2", "float32": "f4", "float64": "f8"}


def _ir_code(ir) -> str:
    """Warp's type codes: ``f4``, ``v3f4``, ``m33f8``, ``qf4``, ``tf4``; structs by their key."""
    if isinstance(ir, T.ScalarType):
        return _SCALAR_CODES[ir.name]
    if isinstance(ir, T.VectorType):
        s = _SCALAR_CODES[ir.scalar.name]
        if ir.flavor is T.VecFlavor.QUAT:
            return f"q{s}"
        if ir.flavor is T.VecFlavor.TRANSFORM:
            return f"t{s}"
        return f"v{ir.length}{s}"
    if isinstance(ir, T.MatrixType):
        return f"m{ir.rows}{ir.cols}{_SCALAR_CODES[ir.scalar.name]}"
    if isinstance(ir, T.StructType):
        return ir.key
    if isinstance(ir, T.GenericType):
        return "?"
    return str(ir)


def is_tile(v) -> bool:
    """True for tile types (``wp.tile[float, 8]``); tile values exist only inside kernels, so never on the host."""
    return isinstance(v, TileAnnotation)


def type_size(t) -> int:
    """Number of scalar components of a type (1 for scalars)."""
    ir = _ir(t)
    if isinstance(ir, T.VectorType):
        return ir.length
    if isinstance(ir, T.MatrixType):
        return ir.rows * ir.cols
    return 1


def type_ctype(t):
    """The ctypes type of a scalar type (the scalar's for composites)."""
    import ctypes

    ir = _ir(type_scalar_type(t)) or _ir(t)
    table = {"bool": ctypes.c_bool, "int8": ctypes.c_int8, "uint8": ctypes.c_uint8, "int16": ctypes.c_int16,
             "uint16": ctypes.c_uint16, "int32": ctypes.c_int32, "uint32": ctypes.c_uint32,
             "int64": ctypes.c_int64, "uint64": ctypes.c_uint64, "float16": ctypes.c_uint16,
             "float32": ctypes.c_float, "float64": ctypes.c_double}
    return table[ir.name]


def type_repr(t) -> str:
    """Warp's readable name of a type (``vec3f``, ``float32``, ``array(ndim=1, dtype=float32)`` ...)."""
    if t is float:
        return "float32"
    if t is int:
        return "int32"
    if t is bool:
        return "bool"
    ir = _ir(t)
    if isinstance(ir, T.ArrayType):
        return f"array(ndim={ir.ndim}, dtype={type_repr(_host_class(ir.dtype))})"
    if isinstance(ir, (T.ScalarType, T.VectorType, T.MatrixType)):
        return str(ir)
    return getattr(t, "__name__", str(t))


def _host_class(ir):
    try:
        return class_for(ir)
    except TypeError:
        return ir


def strides_from_shape(shape, dtype) -> tuple:
    """Contiguous (row-major) byte strides of an array of ``shape`` and ``dtype``."""
    size = type_size_in_bytes(dtype)
    strides = []
    for n in reversed(tuple(shape)):
        strides.append(size)
        size *= int(n)
    return tuple(reversed(strides))




def _np_float32_to_bfloat16_bits(a) -> np.ndarray:
    """float32 values -> bfloat16 bit patterns (uint16), rounding to nearest even."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    return np.where(nan, ((u >> 16) | 0x40).astype(np.uint16), bits)


def _np_bfloat16_bits_to_float32(b) -> np.ndarray:
    """bfloat16 bit patterns (uint16) -> float32 values."""
    return (np.asarray(b, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)
