"""DLPack both ways, and ``__cuda_array_interface__`` import.

Producer: ``array.__dlpack__`` builds a ``DLManagedTensor`` (or, when the consumer asks for DLPack >= 1.0, a
``DLManagedTensorVersioned``) with ctypes and hands it out in a PyCapsule. The capsule keeps the weft array
alive until the consumer calls the deleter, so the memory outlives every weft reference.

Consumer: ``from_dlpack(obj_or_capsule, dtype=None)`` views the tensor as a weft array without copying. Vector
and matrix dtypes take the trailing dimensions: a ``(n, 3)`` float32 tensor with ``dtype=wp.vec3`` becomes a 1-D
array of ``vec3``.
"""

from __future__ import annotations

import ctypes
import enum
import functools
import threading

import numpy as np

from ..errors import Error
from ..ir import types as T
from ..runtime import array as _A
from ..runtime import device as _D
from ..runtime.array import array, clone, np_from_ptr
from ..runtime.streams import get_stream
from ..types.composite import class_for
from ..types.dtypes import np_layout, resolve_dtype
from ..types.mapping import scalar_class


class DLPackDtypeError(Error, TypeError, RuntimeError):
    """A DLPack tensor's element type cannot be viewed as the requested dtype (a ``TypeError``, and the
    ``RuntimeError`` Warp raises)."""


class DeviceType(enum.IntEnum):
    """``DLDeviceType`` codes weft understands."""

    CPU = 1
    CUDA = 2
    CUDA_HOST = 3  # pinned host memory: CPU-addressable
    CUDA_MANAGED = 13


class _Code(enum.IntEnum):
    INT = 0
    UINT = 1
    FLOAT = 2
    BFLOAT = 4
    COMPLEX = 5
    BOOL = 6


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


_FLAG_READ_ONLY = 1
_FLAG_IS_COPIED = 2
_NAME = b"dltensor"
_NAME_USED = b"used_dltensor"
_NAME_V = b"dltensor_versioned"
_NAME_V_USED = b"used_dltensor_versioned"

_py = ctypes.pythonapi
# The destructor gets the dying capsule as a raw pointer: wrapping it in py_object would resurrect it.
_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_py.PyCapsule_New.restype = ctypes.py_object
_py.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _CAPSULE_DESTRUCTOR]
_py.PyCapsule_IsValid.restype = ctypes.c_int
_py.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_py.PyCapsule_GetPointer.restype = ctypes.c_void_p
_py.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_py.PyCapsule_SetName.restype = ctypes.c_int
_py.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_py.PyCapsule_GetName.restype = ctypes.c_char_p
_py.PyCapsule_GetName.argtypes = [ctypes.py_object]
_raw_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(("PyCapsule_IsValid", _py))
_raw_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(("PyCapsule_GetPointer", _py))


# ---------------------------------------------------------------------- dtype mapping
def _dl_dtype(scalar: T.ScalarType) -> DLDataType:
    if scalar.name == "bfloat16":  # DLPack's own bfloat code (NumPy sees it as ml_dtypes' or raw uint16)
        return DLDataType(int(_Code.BFLOAT), 16, 1)
    kind = np.dtype(scalar.np_dtype).kind
    bits = np.dtype(scalar.np_dtype).itemsize * 8
    code = {"f": _Code.FLOAT, "i": _Code.INT, "u": _Code.UINT, "b": _Code.BOOL}[kind]
    return DLDataType(int(code), bits, 1)


def _np_dtype_of(dt: DLDataType) -> np.dtype:
    if dt.lanes != 1:
        raise TypeError(f"DLPack tensors with {dt.lanes} lanes are not supported")
    if dt.code == _Code.BFLOAT and dt.bits == 16:
        return np.dtype(_bfloat16_np())
    kinds = {_Code.FLOAT: "f", _Code.INT: "i", _Code.UINT: "u", _Code.BOOL: "b"}
    try:
        kind = kinds[_Code(dt.code)]
    except (ValueError, KeyError):
        raise TypeError(f"DLPack dtype code {dt.code} ({dt.bits} bits) has no weft equivalent "
                        "(complex is not supported)") from None
    out = np.dtype(f"{kind}{dt.bits // 8}") if kind != "b" else np.dtype(np.bool_)
    if out.itemsize * 8 != dt.bits:
        raise TypeError(f"DLPack dtype code {dt.code} with {dt.bits} bits is not supported")
    return out


def _bfloat16_np():
    """The NumPy type weft stores bfloat16 as (``ml_dtypes.bfloat16`` when installed, else raw uint16 bits)."""
    return T.BFLOAT16.np_dtype


def _scalar_ir(np_dtype: np.dtype) -> T.Type:
    if np_dtype.kind == "V" and np_dtype.itemsize == 2:  # ml_dtypes.bfloat16 (or a raw view of it)
        return T.BFLOAT16
    return scalar_class(np_dtype.type)._ir_


# ---------------------------------------------------------------------- producer
_live: dict[int, tuple] = {}  # address of the managed struct -> everything that must outlive it
_live_lock = threading.Lock()


@_DELETER
def _deleter(address) -> None:
    with _live_lock:
        _live.pop(address, None)


@_CAPSULE_DESTRUCTOR
def _capsule_destructor(capsule) -> None:
    # An unconsumed capsule still owns the tensor; a consumed one was renamed and the consumer calls the deleter.
    for name in (_NAME, _NAME_V):
        if _raw_is_valid(capsule, name):
            _deleter(_raw_get_pointer(capsule, name))
            return


def device_tuple(arr) -> tuple[int, int]:
    """``__dlpack_device__`` of a weft array: ``(kDLCPU, 0)`` or ``(kDLCUDA, ordinal)``."""
    dev = arr.device
    return int(dev.impl.dlpack_device), max(int(dev.ordinal), 0)


def to_capsule(arr, stream=None, max_version=None, dl_device=None, copy=None):
    """The DLPack capsule of a weft array (what ``array.__dlpack__`` returns).

    Args:
        arr: the weft array.
        stream: CUDA consumers pass the stream they will use; the producer makes it wait for weft's work.
        max_version: the highest DLPack version the consumer understands; ``>= (1, 0)`` gets a versioned capsule.
        dl_device: the device the consumer wants; only the array's own device is supported without a copy.
        copy: ``True`` forces a copy, ``False`` forbids one, ``None`` copies only when needed.

    Raises:
        BufferError: the array cannot be exported (struct dtype, annotation, unsupported device request).
        TypeError: a ``stream`` other than None / -1 for a CPU array, or not an integer >= -1 for a CUDA array.
    """
    if getattr(arr, "_annotation", False):
        raise BufferError("an array annotation has no data to export")
    if not arr.device.impl.synchronous:  # a device with streams: the DLPack standard's stream values (as Warp)
        if stream is not None and (not isinstance(stream, int) or isinstance(stream, bool) or stream < -1):
            raise TypeError("DLPack stream must None or an integer >= -1")
    elif stream is not None and stream != -1:
        raise TypeError("DLPack stream must be None or -1 for CPU device")
    if isinstance(arr._ir, T.StructType):
        # the DLPack protocol reports unexportable arrays with BufferError
        raise BufferError(f"arrays of struct {arr._ir} have no DLPack dtype; view them as bytes")  # noqa: TRY004
    copied = False
    if dl_device is not None and tuple(dl_device) != device_tuple(arr):
        if copy is False:
            raise BufferError(f"array is on {arr.device}; exporting to DLPack device {tuple(dl_device)} needs a copy")
        target = "cpu" if int(dl_device[0]) in (DeviceType.CPU, DeviceType.CUDA_HOST) else f"cuda:{int(dl_device[1])}"
        arr = arr.to(target)
        copied = True
    elif copy:
        arr = clone(arr, requires_grad=False)
        copied = True
    if not arr.device.impl.synchronous:
        _producer_sync(arr.device, stream)
    versioned = max_version is not None and int(max_version[0]) >= 1
    return _make_capsule(arr, versioned, copied)


def _make_capsule(arr, versioned: bool, copied: bool):
    base, trailing = np_layout(arr._ir)
    esize = base.itemsize
    shape = tuple(arr.shape) + tuple(trailing)
    ndim = len(shape)
    shape_buf = (ctypes.c_int64 * max(ndim, 1))(*shape)
    elem_strides = [s // esize for s in arr.strides]
    inner = []
    acc = 1
    for n in reversed(trailing):
        inner.append(acc)
        acc *= n
    strides_buf = (ctypes.c_int64 * max(ndim, 1))(*(elem_strides + list(reversed(inner))))
    if any(s % esize for s in arr.strides):
        raise BufferError("array strides are not a multiple of the element size; DLPack cannot describe it")
    managed = DLManagedTensorVersioned() if versioned else DLManagedTensor()
    t = managed.dl_tensor
    t.data = arr.ptr or None
    t.device = DLDevice(*device_tuple(arr))
    t.ndim = ndim
    t.dtype = _dl_dtype(arr._ir.scalar if hasattr(arr._ir, "scalar") else arr._ir)
    t.shape = ctypes.cast(shape_buf, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.cast(strides_buf, ctypes.POINTER(ctypes.c_int64))
    t.byte_offset = 0
    managed.deleter = _deleter
    address = ctypes.addressof(managed)
    if versioned:
        managed.version = DLPackVersion(1, 0)
        managed.flags = _FLAG_IS_COPIED if copied else 0
    with _live_lock:
        _live[address] = (managed, shape_buf, strides_buf, arr)
    return _py.PyCapsule_New(address, _NAME_V if versioned else _NAME, _capsule_destructor)


def _producer_sync(device, stream) -> None:
    """Make the consumer's CUDA ``stream`` wait for the work queued on weft's current stream (best effort)."""
    if stream == -1:
        return
    try:
        from ..cuda import streams as cuda_streams
        producer = get_stream(device)
        if stream is not None and stream not in (1, 2) and stream == producer.cuda_stream:
            return
        if hasattr(cuda_streams, "wait_foreign_stream"):
            cuda_streams.wait_foreign_stream(producer, int(stream or 0))
        else:
            producer.synchronize()
    except ImportError:
        return


def to_dlpack(a):
    """A DLPack capsule (legacy, unversioned) of the weft array ``a``, for consumers that take capsules."""
    return to_capsule(a)


# ---------------------------------------------------------------------- consumer
class _Imported:
    """Owns a consumed DLPack tensor and calls its deleter when the last view of it goes away."""

    __slots__ = ("__weakref__", "address", "deleter")

    def __init__(self, address: int, deleter) -> None:
        self.address = address
        self.deleter = deleter

    def __del__(self) -> None:
        if self.deleter:
            self.deleter(self.address)
            self.deleter = None


def _capsule_of(obj, device_hint=None):
    if type(obj).__name__ == "PyCapsule":
        return obj
    kwargs = {}
    dev = obj.__dlpack_device__() if hasattr(obj, "__dlpack_device__") else (DeviceType.CPU, 0)
    if int(dev[0]) not in (DeviceType.CPU, DeviceType.CUDA_HOST, DeviceType.CUDA, DeviceType.CUDA_MANAGED):
        raise TypeError(f"Unsupported source device for DLPack: device_type={int(dev[0])}, device_id={int(dev[1])}")
    if int(dev[0]) == DeviceType.CUDA:
        kwargs["stream"] = _consumer_stream(int(dev[1]))
    try:
        capsule = obj.__dlpack__(max_version=(1, 0), **kwargs)
    except TypeError:
        capsule = obj.__dlpack__(**kwargs)
    if type(capsule).__name__ != "PyCapsule":
        raise TypeError(f"Expected a valid DLPack capsule, got {type(capsule).__name__}")
    return capsule


def _consumer_stream(ordinal: int) -> int:
    try:
        handle = get_stream(f"cuda:{ordinal}").cuda_stream
        return handle if handle else 1  # 1: the legacy default stream
    except Exception:  # noqa: BLE001 - no CUDA backend: let the producer assume the default stream
        return 1


def _read_capsule(capsule):
    """(DLTensor, owner, read_only) of a capsule, which is marked consumed."""
    if _py.PyCapsule_IsValid(capsule, _NAME_V):
        address = _py.PyCapsule_GetPointer(capsule, _NAME_V)
        managed = DLManagedTensorVersioned.from_address(address)
        if managed.version.major > 1:
            raise BufferError(f"DLPack version {managed.version.major}.{managed.version.minor} is not supported")
        read_only = bool(managed.flags & _FLAG_READ_ONLY)
        _py.PyCapsule_SetName(capsule, _NAME_V_USED)
    elif _py.PyCapsule_IsValid(capsule, _NAME):
        address = _py.PyCapsule_GetPointer(capsule, _NAME)
        managed = DLManagedTensor.from_address(address)
        read_only = False
        _py.PyCapsule_SetName(capsule, _NAME_USED)
    else:
        raise BufferError(f"not a DLPack capsule, or one already consumed (name {_py.PyCapsule_GetName(capsule)!r})")
    deleter = managed.deleter
    owner = _Imported(address, deleter if ctypes.cast(deleter, ctypes.c_void_p).value else None)
    return managed.dl_tensor, owner, read_only


def from_dlpack(obj, dtype=None):
    """A zero-copy weft array viewing a DLPack tensor (any object with ``__dlpack__``, or a capsule).

    Args:
        obj: a tensor of another framework (NumPy, torch, JAX, CuPy, ...) or a DLPack capsule.
        dtype: the weft dtype; vector/matrix dtypes consume the trailing dimensions. Default: the scalar dtype.

    Returns:
        A weft array on the matching device sharing memory with ``obj``.

    Raises:
        TypeError: unsupported element type, or a dtype that does not match the tensor.
        BufferError: an unsupported device, or a capsule already consumed.
    """
    if isinstance(obj, array):
        return obj if dtype is None or resolve_dtype(dtype) == obj._ir else obj.view(dtype)
    capsule = _capsule_of(obj)
    t, owner, read_only = _read_capsule(capsule)
    base = _np_dtype_of(t.dtype)
    if t.dtype.code == _Code.BFLOAT and dtype is None:  # its NumPy storage type alone may read as uint16
        dtype = scalar_class("bfloat16")
    full_shape = tuple(int(t.shape[i]) for i in range(t.ndim))
    if t.strides:
        elem_strides = tuple(int(t.strides[i]) for i in range(t.ndim))
    else:
        elem_strides = _c_strides(full_shape)
    ptr = (t.data or 0) + int(t.byte_offset)
    return _wrap(ptr, base, full_shape, tuple(s * base.itemsize for s in elem_strides),
                 (int(t.device.device_type), int(t.device.device_id)), dtype, owner, read_only)


def _c_strides(shape) -> tuple[int, ...]:
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= max(int(n), 1)
    return tuple(reversed(out))


@functools.lru_cache(maxsize=256)
def _resolve(base: np.dtype, dtype) -> tuple:
    """(ir, host class, trailing dims, their dense byte strides) of ``dtype`` over ``base`` scalars; cached."""
    scalar_ir = _scalar_ir(base)
    ir = scalar_ir if dtype is None else resolve_dtype(dtype)
    if isinstance(ir, T.GenericType):
        ir = scalar_ir
    elem_base, trailing = np_layout(ir)
    elem = np.dtype(elem_base)
    # Warp's aliases: bool as int8/uint8, and signed/unsigned integers of the same width
    alias = (base == np.bool_ and elem in (np.dtype(np.int8), np.dtype(np.uint8))) or (
        base.kind in "iu" and elem.kind in "iu" and base.itemsize == elem.itemsize)
    if elem != base and not alias and not (ir == T.BFLOAT16 and base.itemsize == 2):
        name = "bool8" if base == np.bool_ else "bfloat16" if base.kind == "V" else base.name
        raise DLPackDtypeError(f"Incompatible data types: DLPack {name} and Warp {ir}: a tensor of {base} cannot be "
                               f"viewed as an array of {ir} (needs {elem})")
    dense, acc = [], base.itemsize
    for n in reversed(trailing):
        dense.append(acc)
        acc *= n
    cls = scalar_class(ir.name) if isinstance(ir, T.ScalarType) else class_for(ir)
    return ir, cls, tuple(trailing), tuple(reversed(dense))


def split_dtype(base: np.dtype, full_shape, full_strides, dtype):
    """Resolve ``dtype`` against a tensor of ``base`` elements: (ir, element shape, element byte strides).

    The trailing dimensions a vector/matrix dtype takes must be dense and row-major.
    """
    try:
        ir, _, trailing, dense = _resolve(base, dtype)
    except TypeError as exc:
        if "unhashable" not in str(exc):
            raise
        ir, _, trailing, dense = _resolve.__wrapped__(base, dtype)
    nt = len(trailing)
    if nt:
        if len(full_shape) < nt or tuple(full_shape[len(full_shape) - nt:]) != trailing:
            raise TypeError(f"a tensor of shape {tuple(full_shape)} cannot be viewed as an array of {ir}: "
                            f"its trailing dimensions must be {trailing}")
        got = tuple(full_strides[len(full_strides) - nt:])
        if any(n > 1 and g != d for n, g, d in zip(trailing, got, dense)):
            raise TypeError(f"the trailing dimensions {trailing} of a {ir} view must be contiguous; "
                            "make the tensor contiguous first")
        shape = tuple(full_shape[:len(full_shape) - nt])
        strides = tuple(full_strides[:len(full_strides) - nt])
    else:
        shape, strides = tuple(full_shape), tuple(full_strides)
    if not shape:  # a single element: a 1-D array of length 1
        shape, strides = (1,), (element_bytes(base, trailing),)
    if len(shape) > 4:
        raise TypeError(f"weft arrays have at most 4 dimensions; got shape {shape} (+ {trailing} for {ir})")
    return ir, shape, strides


def element_bytes(base: np.dtype, trailing) -> int:
    return int(base.itemsize * int(np.prod(trailing, dtype=np.int64)))


def _wrap(ptr, base, full_shape, full_strides, dl_device, dtype, owner, read_only=False):
    """A weft array over foreign memory; ``owner`` is kept alive as long as any view of it."""
    ir, shape, strides = split_dtype(base, full_shape, full_strides, dtype)
    kind = dl_device[0]
    if kind in (DeviceType.CPU, DeviceType.CUDA_HOST):
        _, trailing = np_layout(ir)
        view = np_from_ptr(ptr, shape, strides, base, trailing, owner)
        elem = np.dtype(np_layout(ir)[0])
        if view.dtype != elem and view.dtype.itemsize == elem.itemsize:
            view = view.view(elem)  # an alias (bool as int8, int32 as uint32, raw bfloat16 bits): read it as ir
        if read_only:
            view.flags.writeable = False
        return wrap_host(view, ir, shape, strides, owner, ptr)
    if kind in (DeviceType.CUDA, DeviceType.CUDA_MANAGED):
        out = array(ptr=ptr, dtype=class_for(ir), shape=shape, strides=strides, device=f"cuda:{int(dl_device[1])}")
        out._owner = owner
        return out
    raise BufferError(f"DLPack device type {kind} is not supported (weft has CPU and CUDA devices)")


def wrap_host(view: np.ndarray, ir: T.Type, shape, strides, owner=None, ptr=None):
    """A CPU weft array whose memory is the NumPy array ``view`` (element dims ``shape``/``strides`` plus the
    dtype's dense trailing dims), built without the checks and copies of the general constructor: this is the
    per-call path of every foreign argument and of the torch wrappers."""
    out = _A.array.__new__(_A.array)
    out._annotation = False
    out._desc = None
    out._grad = None
    out._shared = _A._Shared()
    out._np = view
    out._dev_mem = None
    out._ir = ir
    out.dtype = _resolve(view.dtype, ir)[1]
    out.device = _D.CPU
    out.pinned = False
    out.shape = shape
    out.strides = strides
    out.ndim = len(shape)
    out._ptr = (int(view.ctypes.data) if ptr is None else ptr) if view.size else 0
    out._owner = owner
    return out


def from_cuda_interface(obj, t=None, dtype=None):
    """A zero-copy weft array over an object exposing ``__cuda_array_interface__`` (CuPy, Numba, torch.cuda, ...).

    Args:
        obj: the foreign array.
        t: the kernel parameter's ``ArrayType`` when called by a launch (its dtype is used unless generic).
        dtype: the weft dtype (vector/matrix dtypes consume trailing dimensions).
    """
    cai = obj.__cuda_array_interface__
    if dtype is None and t is not None and not t.is_generic:
        dtype = t.dtype
    base = np.dtype(cai["typestr"])
    full_shape = tuple(int(n) for n in cai["shape"])
    full_strides = cai.get("strides")
    if full_strides is None:
        full_strides = tuple(s * base.itemsize for s in _c_strides(full_shape))
    ptr, read_only = cai["data"]
    stream = cai.get("stream")
    if stream not in (None, -1):
        _wait_on_foreign_stream(int(stream))
    ordinal = _device_of_pointer(ptr)
    return _wrap(ptr or 0, base, full_shape, tuple(int(s) for s in full_strides), (DeviceType.CUDA, ordinal), dtype,
                 obj, read_only)


def _device_of_pointer(ptr) -> int:
    try:
        from ..cuda import memory

        if hasattr(memory, "device_ordinal_of"):
            return int(memory.device_ordinal_of(ptr))
    except ImportError:
        pass
    dev = _D.get_device(None)
    return max(dev.ordinal, 0)  # the CPU's ordinal is -1


def _wait_on_foreign_stream(handle: int) -> None:
    """Order weft's current stream after ``handle`` (CAI v3 ``stream``); synchronise when no hook exists."""
    try:
        from ..cuda import streams as cuda_streams
    except ImportError:
        return
    if hasattr(cuda_streams, "wait_on_handle"):
        cuda_streams.wait_on_handle(handle)
