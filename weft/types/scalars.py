"""Host-side scalar type classes (``wp.float32`` ...). Calling one on the host returns a NumPy scalar."""

from __future__ import annotations

import ctypes
import sys

import numpy as np

from ..errors import warn
from ..ir import types as T


class _ScalarMeta(type):
    def __call__(cls, value=0):
        if cls is Scalar or cls._ir_ is None:
            raise TypeError(f"{cls.__name__} is a generic type and cannot be instantiated")
        if hasattr(value, "_wp_scalar_value_"):
            value = value._wp_scalar_value_()
        if type(value) is int and cls._ir_.is_int and cls._ir_.name != "bool":
            # a Python int wraps around into the type's width, as a C (and Warp) integer conversion does:
            # wp.uint8(-1) is 255, wp.int8(200) is -56
            bits = 8 * np.dtype(cls._np_).itemsize
            value &= (1 << bits) - 1
            if not issubclass(cls._np_, np.unsignedinteger) and value >> (bits - 1):
                value -= 1 << bits
        return cls._host_(value)

    def __instancecheck__(cls, obj) -> bool:
        # isinstance(x, wp.float32): any float32 value (weft's host scalars are NumPy scalars), as Warp's check
        np_type = cls.__dict__.get("_np_")
        if isinstance(np_type, type) and issubclass(np_type, np.generic):
            return isinstance(obj, (np_type, cls.__dict__["_host_"]))
        return type.__instancecheck__(cls, obj)

    def __repr__(cls) -> str:
        return f"<weft type {cls.__name__}>"


class Scalar(metaclass=_ScalarMeta):
    """Base of the scalar type classes; also usable as the generic ``wp.Scalar`` annotation."""

    _ir_: T.ScalarType | None = None
    _np_ = None
    _type_ = None  # the ctypes type of a concrete scalar (None for the generic bases)


class Float(Scalar):
    """Generic annotation: any floating-point scalar."""


class Int(Scalar):
    """Generic annotation: any integer scalar."""


#: the ctypes type of each scalar (``wp.int16._type_(x).value``, as Warp's scalar classes have; float16 as its bits)
_CTYPES = {"bool": ctypes.c_bool, "int8": ctypes.c_int8, "int16": ctypes.c_int16, "int32": ctypes.c_int32,
           "int64": ctypes.c_int64, "uint8": ctypes.c_uint8, "uint16": ctypes.c_uint16, "uint32": ctypes.c_uint32,
           "uint64": ctypes.c_uint64, "float16": ctypes.c_uint16, "float32": ctypes.c_float,
           "float64": ctypes.c_double}


def _value(self):
    """The Python number (``wp.float32(1.5).value == 1.5``), as Warp's scalar instances have."""
    return self.item()


class bool_value:
    """A host ``wp.bool(x)`` value. NumPy's bool cannot be subclassed (its instances are two singletons), so this
    small class stands in for it: truth, ``.value``, comparisons, hashing as the Python bool, ``int()``/``float()``,
    and NumPy interop through ``__array__`` (``np.asarray(wp.bool(1)).dtype`` is bool)."""

    __slots__ = ("_v",)
    _ir_ = T.BOOL
    __numpy_dtype__ = np.dtype(np.bool_)  # np.dtype(wp.bool(1)) is bool, as for the other scalar values

    def __init__(self, v=False):
        object.__setattr__(self, "_v", bool(v))

    @property
    def value(self) -> bool:
        return self._v

    def _wp_scalar_value_(self) -> bool:
        return self._v

    def __bool__(self) -> bool:
        return self._v

    def __index__(self) -> int:
        return int(self._v)

    __int__ = __index__

    def __float__(self) -> float:
        return float(self._v)

    def __eq__(self, other):
        return self._v == (other._v if isinstance(other, bool_value) else other)

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(self._v)

    def __invert__(self):
        return bool_value(not self._v)

    def __and__(self, other):
        return bool_value(self._v and bool(other))

    def __or__(self, other):
        return bool_value(self._v or bool(other))

    def __xor__(self, other):
        return bool_value(self._v != bool(other))

    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__

    def __array__(self, dtype=None, copy=None):
        return np.array(self._v, dtype=dtype if dtype is not None else np.bool_)

    def __repr__(self) -> str:
        return f"bool({self._v})"

    def __str__(self) -> str:
        return str(self._v)

    def __reduce__(self):
        return (bool_value, (self._v,))


def _repr(self) -> str:
    """Warp's form, ``int8(-1)`` / ``float32(1.5)``: the type's name and the value as NumPy prints it."""
    return f"{self._ir_.name}({self.dtype.type(self)!s})"


def _host_class(name: str, np_type: type) -> type:
    """The class of ``wp.<name>(x)`` values on the host: a NumPy scalar (same dtype, arithmetic, NumPy interop;
    results of arithmetic are plain NumPy scalars) that also has Warp's ``.value`` (bool: :class:`bool_value`)."""
    if np_type is np.bool_:
        return bool_value
    cls = type(f"{name}_value", (np_type,), {"__slots__": (), "value": property(_value), "__repr__": _repr,
                                              "__module__": __name__, "__doc__": f"A host {name} value."})
    globals()[cls.__name__] = cls  # picklable by name
    return cls


def _make(name: str, ir: T.ScalarType, base: type) -> type:
    # __numpy_dtype__: NumPy's dtype protocol (NumPy >= 2.4), so np.dtype(wp.float32) is float32 as in Warp
    np_type = ir.np_dtype.type
    cls = _ScalarMeta(name, (base,), {"_ir_": ir, "_np_": np_type, "_host_": _host_class(name, np_type),
                                      "_type_": _CTYPES[name], "_length_": 1,
                                      "__numpy_dtype__": np.dtype(ir.np_dtype),
                                      "__doc__": f"The {name} scalar type."})
    if cls._host_ is not np_type and cls._host_ is not bool_value:
        cls._host_._ir_ = ir
    return cls


bool_ = _make("bool", T.BOOL, Scalar)
int8 = _make("int8", T.INT8, Int)
int16 = _make("int16", T.INT16, Int)
int32 = _make("int32", T.INT32, Int)
int64 = _make("int64", T.INT64, Int)
uint8 = _make("uint8", T.UINT8, Int)
uint16 = _make("uint16", T.UINT16, Int)
uint32 = _make("uint32", T.UINT32, Int)
uint64 = _make("uint64", T.UINT64, Int)
float16 = _make("float16", T.FLOAT16, Float)
float32 = _make("float32", T.FLOAT32, Float)
float64 = _make("float64", T.FLOAT64, Float)
def _bf16_host(v):
    """A host bfloat16 value: ml_dtypes.bfloat16 when available, else float32 rounded to bfloat16 precision
    (resolved on first use, so ``import weft`` does not import ml_dtypes)."""
    np_type = T.BFLOAT16.np_dtype.type
    if np_type is np.uint16:
        return np.float32(bf16_bits_to_float(bf16_bits(v)))
    return np_type(v)


bfloat16 = _ScalarMeta("bfloat16", (Float,), {"_ir_": T.BFLOAT16, "_np_": staticmethod(_bf16_host),
                                                "_host_": staticmethod(_bf16_host),
                                                "__doc__": "The bfloat16 scalar type."})


def bf16_bits(x) -> int:
    """The bfloat16 bit pattern of a number (round to nearest even; nan stays nan)."""
    u = int(np.array(x, dtype=np.float32).view(np.uint32))
    if (u & 0x7FFFFFFF) > 0x7F800000:
        return ((u >> 16) | 0x40) & 0xFFFF
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF


def bf16_bits_to_float(b: int) -> float:
    """The float value of a bfloat16 bit pattern."""
    return float(np.array(int(b) << 16, dtype=np.uint32).view(np.float32))

SCALAR_CLASSES = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, float64,
                  bfloat16)
BY_IR = {cls._ir_: cls for cls in SCALAR_CLASSES}
BY_NAME = {cls._ir_.name: cls for cls in SCALAR_CLASSES}

# Python builtins and NumPy scalar types used as annotations or dtypes.
PY_ALIASES: dict[object, type] = {
    float: float32,
    int: int32,
    bool: bool_,
    np.float16: float16,
    np.float32: float32,
    np.float64: float64,
    np.int8: int8,
    np.int16: int16,
    np.int32: int32,
    np.int64: int64,
    np.uint8: uint8,
    np.uint16: uint16,
    np.uint32: uint32,
    np.uint64: uint64,
    np.bool_: bool_,
}
PY_ALIASES.update({cls._host_: cls for cls in SCALAR_CLASSES[:-1]})
if "ml_dtypes" in sys.modules:  # already imported by someone else: its bfloat16 maps to ours (see scalar_class)
    PY_ALIASES[sys.modules["ml_dtypes"].bfloat16] = bfloat16


def check_host_scalar(t: T.ScalarType, v):
    """``v`` as a Python value of scalar type ``t`` (a launch argument or a struct field), or TypeError / ValueError.

    Numbers only (no strings, no None); no float for an integer type (5.7 is not silently 5); integers within the
    type's range; finite floats within the type's range (inf and nan pass: they are values of every float type).
    """
    if v is None or isinstance(v, (str, bytes)):
        raise TypeError(f"expected {t}, got {type(v).__name__} {v!r}")
    if hasattr(v, "_wp_scalar_value_"):
        v = v._wp_scalar_value_()
    if t.is_bool:
        if not isinstance(v, (bool, np.bool_, int, np.integer)):
            raise TypeError(f"expected {t}, got {type(v).__name__} {v!r}")
        return bool(v)
    if t.is_int:
        if isinstance(v, (float, np.floating)):
            raise TypeError(f"expected {t}, got the float {v!r} (convert explicitly with int())")
        try:
            n = int(v.__index__()) if hasattr(v, "__index__") else None
        except TypeError:
            n = None
        if n is None:
            raise TypeError(f"expected {t}, got {type(v).__name__} {v!r}")
        info = np.iinfo(t.np_dtype)
        if not info.min <= n <= info.max:
            raise ValueError(f"{n} is out of range for {t} ({info.min}..{info.max})")
        return n
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise TypeError(f"expected {t}, got {type(v).__name__} {v!r}") from None
    limit = 3.3895313892515355e38 if t.name == "bfloat16" else float(np.finfo(t.np_dtype).max)
    if abs(x) > limit and abs(x) != float("inf"):
        raise ValueError(f"{v!r} is out of range for {t} (largest finite value {limit:.7g})")
    return x


def single_value_promotion(v, target, where: str) -> bool:
    """Whether a single number ``v`` given for a vector / matrix / quaternion / transform ``target`` is broadcast,
    as Warp 1.19: NumPy scalars and booleans (Python, NumPy, ``wp.bool``) still are, with a DeprecationWarning;
    Python numbers and weft's own scalar values (``wp.float32(1.5)``) are refused (False: the caller raises).
    ``where`` names the receiver in the warning ("kernel parameter 'v'", "struct field 'v'")."""
    if isinstance(v, (bool, np.bool_, bool_value)) or (isinstance(v, np.generic) and not hasattr(type(v), "_ir_")):
        warn(f"Promoting a single value of type `{type(v).__name__}` to `{target}` for {where} is "
             f"deprecated; pass a `{target}` value", DeprecationWarning, stacklevel=4)
        return True
    return False

