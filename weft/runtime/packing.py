"""Per-parameter packers: Python launch arguments -> bytes of the C++ ``Args`` struct, with launch-time checks."""

from __future__ import annotations

import struct
from collections.abc import Callable

import numpy as np

from ..errors import LaunchError, LaunchValueError
from ..ir import types as T
from ..types.composite import class_for
from ..types.layout import args_layout, layout
from ..types.scalars import bf16_bits, check_host_scalar, single_value_promotion


def _scalar_packer(t: T.ScalarType, where: Callable[[], str]) -> Callable:
    code = layout(t).fmt
    st = struct.Struct("<" + code)
    pack = st.pack

    def checked(v):
        try:
            return pack(check_host_scalar(t, v))
        except (TypeError, ValueError) as exc:
            raise LaunchError(f"{where()}: {exc}") from None

    if t.name == "bfloat16":

        def pack_bf16(v):
            try:
                return pack(bf16_bits(check_host_scalar(t, v)))
            except (TypeError, ValueError) as exc:
                raise LaunchError(f"{where()}: {exc}") from None
        return pack_bf16
    if t.is_float:
        def pack_float(v):
            if type(v) is float:
                try:
                    return pack(v)
                except OverflowError:
                    pass  # out of range: reported by checked()
            return checked(v)  # strings, None, out-of-range values are errors; other numbers convert
        return pack_float
    if t.is_bool:
        return lambda v: pack(v) if type(v) is bool else checked(v)

    def pack_int(v):
        return pack(v) if type(v) is int and -0x80000000 <= v <= 0x7FFFFFFF and t.bits == 32 and t.kind == "i" \
            else checked(v)
    return pack_int


def _composite_packer(t: T.Type, where) -> Callable:
    lay = layout(t)
    st = struct.Struct("<" + lay.fmt)
    n = t.length if isinstance(t, T.VectorType) else t.rows * t.cols

    def pack(v):
        if v is None:  # nothing to convert (Warp's ValueError)
            w = where()
            param = w.rsplit(" argument ", 1)[-1].strip("'")
            raise LaunchValueError(f"{w}: Failed to convert argument for param {param} to {t}")
        a = getattr(v, "_a", None)
        try:
            flat = (a if a is not None else np.asarray(v)).reshape(-1)
        except (TypeError, ValueError):
            raise LaunchError(f"{where()}: expected {t}, got {type(v).__name__}") from None
        if flat.size != n:
            if np.ndim(v) == 0:  # a single number for a vector or matrix (Warp's RuntimeError)
                w = where()
                param = w.rsplit(" argument ", 1)[-1]  # 'v'
                if flat.size == 1 and single_value_promotion(v, t, f"kernel parameter {param}"):
                    return st.pack(*np.broadcast_to(flat, (n,)).tolist())
                raise LaunchError(f"{w} expects {t} but got a single value")
            raise LaunchError(f"{where()}: expected {t} ({n} components), got {flat.size} components")
        return st.pack(*flat.tolist())
    return pack


def _struct_packer(t: T.StructType, where) -> Callable:
    def pack(v):
        ir = getattr(type(v), "_ir_", None)
        if v is None:
            raise LaunchError(f"{where()} expects {t.name} but got None")
        if ir != t:
            raise LaunchError(f"{where()}: expected struct {t.name}, got {type(v).__name__}")
        return v._pack()
    return pack


def _array_packer(t: T.ArrayType, where, device_of: Callable) -> Callable:
    from .array import array

    dtype, ndim = t.dtype, t.ndim

    def pack(v):
        if type(v) is array and v._ir == dtype and v.ndim == ndim:
            d = v._desc
            return d if d is not None else _desc(v)
        return _slow(v)

    def _desc(v):
        try:
            return v.desc
        except LaunchError as exc:
            raise LaunchError(f"{where()}: {exc}") from None

    def _slow(v):
        if v is None:
            return bytes(layout(t).size)  # a null array: accesses fail (bounds-checked in debug mode)
        if getattr(v, "_annotation", False) is True or isinstance(v, _other_families()):
            raise LaunchError(f"{where()} expects an array of type array(ndim={ndim}, dtype={dtype}), but passed "
                              f"value has type {type(v).__name__}")
        if not issubclass(type(v), array):  # the real class: an object claiming __class__ = array is foreign
            v = wrap_foreign(v, t, where)
        if v._annotation:
            raise LaunchError(f"{where()}: got an array annotation, not an array with data")
        if v._ir != dtype:
            raise LaunchError(f"{where()}: expected an array of dtype {dtype}, got dtype {v._ir}")
        if v.ndim != ndim:
            raise LaunchError(f"{where()}: expected an array with {ndim} dimension(s), got {v.ndim} dimension(s) "
                              f"(shape {v.shape})")
        return _desc(v)
    return pack


def _other_families() -> tuple:
    """Array families a plain-array parameter does not take."""
    from .fabric import _FabricBase
    from .indexed import indexedarray

    return (indexedarray, _FabricBase)


def _indexed_packer(t: T.ArrayType, where) -> Callable:
    from .array import array
    from .indexed import indexedarray

    def pack(v):
        if isinstance(v, array) and not v._annotation:
            v = indexedarray(v)  # a plain array is an indexed array with no index arrays
        if not isinstance(v, indexedarray) or v._annotation:
            raise LaunchError(f"{where()} expects an array of type indexedarray(ndim={t.ndim}, dtype={t.dtype}), but "
                              f"passed value has type {type(v).__name__}")
        if v._ir != t.dtype:
            raise LaunchError(f"{where()}: expected an indexed array of dtype {t.dtype}, got dtype {v._ir}")
        if v.ndim != t.ndim:
            raise LaunchError(f"{where()}: expected an indexed array with {t.ndim} dimension(s), got {v.ndim} "
                              f"dimension(s)")
        return v.desc
    return pack


def _fabric_packer(t: T.ArrayType, where) -> Callable:
    from .fabric import fabricarray, indexedfabricarray

    indexed = t.kind is T.ArrayKind.FABRIC_INDEXED
    cls = indexedfabricarray if indexed else fabricarray
    what = "an indexed Fabric array (wp.indexedfabricarray)" if indexed else "a Fabric array (wp.fabricarray)"

    def pack(v):
        if not isinstance(v, cls) or v._annotation:
            raise LaunchError(f"{where()} expects an array of type {cls.__name__}(ndim={t.ndim}, dtype={t.dtype}) "
                              f"({what}), but passed value has type {type(v).__name__}")
        if v._ir != t.dtype:
            raise LaunchError(f"{where()}: expected {what} of dtype {t.dtype}, got dtype {v._ir}")
        if v.ndim != t.ndim:
            raise LaunchError(f"{where()}: expected {what} with {t.ndim} dimension(s), got {v.ndim} dimension(s)")
        return v.desc
    return pack


def wrap_foreign(v, t: T.ArrayType, where):
    """Zero-copy view of a NumPy / torch / DLPack / array-interface object as a weft array."""
    from ..interop.foreign import as_weft_array

    try:
        return as_weft_array(v, t)
    except (TypeError, ValueError) as exc:
        raise LaunchError(f"{where()} expects an array of type array(ndim={t.ndim}, dtype={t.dtype}), but passed "
                          f"value has type {type(v).__name__} ({exc})") from None


def make_packer(t: T.Type, where: Callable[[], str], device_of: Callable | None = None) -> Callable:
    if isinstance(t, T.ScalarType):
        return _scalar_packer(t, where)
    if isinstance(t, (T.VectorType, T.MatrixType)):
        return _composite_packer(t, where)
    if isinstance(t, T.StructType):
        return _struct_packer(t, where)
    if isinstance(t, T.ArrayType) and t.kind is T.ArrayKind.INDEXED:
        return _indexed_packer(t, where)
    if isinstance(t, T.ArrayType) and t.kind in (T.ArrayKind.FABRIC, T.ArrayKind.FABRIC_INDEXED):
        return _fabric_packer(t, where)
    if isinstance(t, T.ArrayType):
        return _array_packer(t, where, device_of)
    raise LaunchError(f"{where()}: parameters of type {t} are not supported")


def padding_plan(types: tuple[T.Type, ...]) -> tuple[list[bytes], bytes, int]:
    """Padding to put before each parameter, trailing padding, and the total size of the Args struct."""
    offset = 0
    pads = []
    align = 1
    for t in types:
        lay = layout(t)
        pad = (-offset) % lay.align
        pads.append(bytes(pad))
        offset += pad + lay.size
        align = max(align, lay.align)
    tail = (-offset) % align
    total = offset + tail
    if total == 0:
        return pads, b"\0", 1
    return pads, bytes(tail), args_layout(types).size


def make_fast_packer(types: tuple[T.Type, ...]) -> Callable | None:
    """A packer for the common launch: scalars and plain weft arrays on the CPU, checked and packed in one pass.

    Returns ``fast(args) -> bytes | None``: the whole ``Args`` struct from one ``struct.pack`` call, or None as soon
    as anything is unusual (another device, a foreign array, a wrong dtype, a value struct cannot pack), in which
    case the launch takes the general path, which gives the detailed error. None (no fast packer) when the kernel
    has parameters of other types (indexed arrays, generic arrays).
    """
    from . import device as D
    from .array import array

    fmt = ["<"]
    offset = 0
    align = 1
    lines = []
    names = []
    env = {"array": array, "CPU": D.CPU, "error": struct.error}
    for k, t in enumerate(types):
        if isinstance(t, T.ScalarType):
            if t.is_bool:  # struct's '?' takes any object (by truth value): only real bools on this path
                lines += [f"    if type(a{k}) is not bool:", "        return None"]
            names.append(f"a{k}")
        elif isinstance(t, T.ArrayType) and t.kind is T.ArrayKind.ARRAY and not t.is_generic:
            env[f"D{k}"] = t.dtype
            lines += [
                (f"    if type(a{k}) is not array or a{k}.device is not CPU or a{k}.ndim != {t.ndim} or "
                 f"a{k}._annotation or not (a{k}._ir is D{k} or a{k}._ir == D{k}):"),
                "        return None",
                f"    d{k} = a{k}._desc",
                f"    if d{k} is None:",
                f"        d{k} = a{k}.desc",
            ]
            names.append(f"d{k}")
        elif isinstance(t, (T.VectorType, T.MatrixType, T.StructType)):
            # host vectors/matrices of exactly the parameter's class, structs of exactly its type: their bytes
            # (anything else, e.g. a tuple for a vec3, takes the general path)
            lay = layout(t)
            if isinstance(t, T.StructType):
                env[f"C{k}"] = t.pyclass
                get = f"a{k}._pack()"
            else:

                env[f"C{k}"] = class_for(t)
                get = f"a{k}._a.tobytes()"
            lines += [f"    if type(a{k}) is not C{k}:", "        return None", f"    d{k} = {get}",
                      f"    if len(d{k}) != {lay.size}:", "        return None"]
            names.append(f"d{k}")
            pad = (-offset) % lay.align
            if pad:
                fmt.append(f"{pad}x")
            fmt.append(f"{lay.size}s")
            offset += pad + lay.size
            align = max(align, lay.align)
            continue
        else:
            return None
        lay = layout(t)
        pad = (-offset) % lay.align
        if pad:
            fmt.append(f"{pad}x")
        fmt.append(lay.fmt)
        offset += pad + lay.size
        align = max(align, lay.align)
    tail = (-offset) % align
    if tail:
        fmt.append(f"{tail}x")
    if offset == 0:
        fmt.append("x")  # the C++ struct of no parameters still has one byte
    st = struct.Struct("".join(fmt))
    if st.size != args_layout(types).size:
        return None
    env["pack"] = st.pack
    params = ", ".join(f"a{k}" for k in range(len(types)))
    src = ["def fast(args):"]
    if types:
        src.append(f"    {params}{',' if len(types) == 1 else ''} = args")
    src += lines
    src += ["    try:", f"        return pack({', '.join(names)})", "    except (error, TypeError, OverflowError):",
            "        return None"]  # fmt: skip
    exec("\n".join(src), env)  # noqa: S102 - generated from the kernel's parameter types only
    return env["fast"]
