"""``wp.array``: a typed, strided view of memory with an optional gradient.

On the CPU the memory is owned by a NumPy array, so ``.numpy()`` is zero-copy and the buffer protocol,
``__array_interface__`` and DLPack come for free. An array created without data or shape is an annotation
(``wp.array(dtype=float, ndim=2)``), as in Warp.
"""

from __future__ import annotations

import ctypes
import math
import typing
import weakref

import numpy as np

from .. import config
from ..errors import LaunchError, ReshapeError, ViewDtypeError
from ..ir import types as T
from ..ops.forms import Form, declare
from ..types import composite as C
from ..types.dtypes import element_size, np_layout, resolve_dtype, struct_np_dtype, to_host_value
from ..types.layout import ARRAY_DESC
from ..types.mapping import scalar_class
from ..types.scalars import bool_value
from ..types.struct import StructInstance
from . import device as D
from . import memkind
from . import memtrack as _memtrack
from .pool import active_pool, grads_off


class _Shared:
    """State shared by an array and all views of it: the write version counter (for Tape overwrite checks) and the
    pending zero of ``Tape.zero`` (see :func:`defer_zero`)."""

    __slots__ = ("__weakref__", "escaped", "is_read", "version", "zero")

    def __init__(self) -> None:
        self.version = 0
        self.is_read = False  # read by a launch recorded on a Tape (wp.config.verify_autograd_array_access)
        self.zero = None  # a pending zero: the whole memory as a NumPy array, zeroed on the first touch
        # the memory's address or a NumPy view of it has left weft's hands (user NumPy views, ptr, DLPack, memory
        # weft did not allocate): it can be read without weft knowing, so it is zeroed at once, never deferred
        self.escaped = True

    def __getstate__(self):
        """copy.deepcopy / pickle of an array: the memory is copied as it reads (a pending zero zeroed first)."""
        _materialize(self)
        return None, {"version": self.version, "is_read": self.is_read, "zero": None, "escaped": True}


# ---------------------------------------------------------------------- pending zeros (Tape.zero)
# Tape.zero marks a gradient pending instead of writing ~N bytes of zeros at memory bandwidth; the memory is zeroed
# on its first touch: a launch that has the array (or, backward, its gradient) as an argument, any host access
# (numpy(), ptr, __array_interface__, copies, fills, views' host access) - the first backward launch then finds the
# zeroed gradient in cache. Only CPU memory weft allocated whose address never left weft is deferred.
# id -> weak reference of each pending _Shared (a dict: every launch tests it for emptiness, ~30 ns; a WeakSet's
# len() cost ~0.6 us of Python per launch)
_PENDING: dict[int, weakref.ref] = {}


def _materialize(sh: _Shared) -> None:
    raw = sh.zero
    if raw is not None:
        sh.zero = None
        _PENDING.pop(id(sh), None)
        ctypes.memset(raw.ctypes.data, 0, raw.nbytes)


def flush_pending_zeros() -> None:
    """Zero every pending gradient now."""
    for ref in list(_PENDING.values()):
        sh = ref()
        if sh is not None:
            _materialize(sh)


def is_pending_zero(a) -> bool:
    """Whether ``a``'s memory is a pending zero of ``Tape.zero`` (all zeros, not written since; nothing touched)."""
    return type(a) is array and a._shared.zero is not None


def _forget(key: int):
    return lambda _ref: _PENDING.pop(key, None)  # the memory died pending: nothing to zero


def defer_zero(g) -> bool:
    """Mark ``g`` (a gradient array) zero without touching its memory, when that is safe: a whole, contiguous CPU
    allocation made by weft whose address never left weft. False: nothing done (zero it eagerly)."""
    if type(g) is not array or getattr(g, "_parent", None) is not None:
        return False
    sh = g._shared
    if sh.escaped or sh.zero is not None:
        return sh.zero is not None
    raw = g._npv
    if raw is None or not raw.flags.c_contiguous or raw.nbytes < _DEFER_MIN_BYTES or not g.device.impl.host_memory:
        return False
    sh.zero = raw
    _PENDING[id(sh)] = weakref.ref(sh, _forget(id(sh)))
    sh.version += 1  # a write, as zero_() is
    return True


_DEFER_MIN_BYTES = 4096  # small gradients are zeroed at once (cheaper than the bookkeeping)


def materialize_launch(types, args, grads: bool) -> None:
    """Before a launch: zero the pending memory it may touch (its array arguments and, for a backward launch, their
    gradients). Arguments that may reach arrays some other way (structs, indexed or Fabric arrays) zero all."""
    for t, a in zip(types, args):
        if isinstance(t, (T.ScalarType, T.VectorType, T.MatrixType)):
            continue
        if isinstance(t, T.ArrayType) and t.kind is T.ArrayKind.ARRAY and type(a) is array:
            if a._shared.zero is not None:
                _materialize(a._shared)
            g = a._grad if grads else None
            if g is not None and g._shared.zero is not None:
                _materialize(g._shared)
            continue
        if a is None:
            continue
        flush_pending_zeros()
        return


def _dtype_class(ir: T.Type):
    if isinstance(ir, T.StructType):
        return ir.pyclass
    return C.class_for(ir)


_DTYPES: dict[int, tuple] = {}  # id of a dtype class -> (the class, its IR type, the array's dtype class)


class array:
    """An N-D (1-4) array of a weft dtype on a device."""

    _wp_array_ = True
    #: Warp's callback that frees wrapped memory: weft never frees memory it does not own, so there is none
    deleter = None

    def __init__(self, data=None, dtype: typing.Any = typing.Any, shape=None, strides=None, length=None, ptr=None,
                 capacity=None, device=None, pinned=False, copy=True, owner=False, deleter=None, ndim=None,
                 grad=None, requires_grad=False, retain_grad=False):
        self._grad = None
        self._desc = None
        self._shared = _Shared()
        self._annotation = False
        self._np = None
        self._dev_mem = None  # device allocation (CUDA)
        self._ptr = 0
        self.pinned = pinned
        self.requires_grad = False
        if length is not None and shape is None:
            shape = (int(length),)
        if data is None and shape is None and ptr is None:
            # annotation: wp.array(dtype=float, ndim=2)
            self._annotation = True
            self._ir = resolve_dtype(dtype) if dtype is not typing.Any else T.GenericType()
            self.dtype = dtype if dtype is typing.Any or not isinstance(self._ir, T.ScalarType) \
                else scalar_class(self._ir.name)
            self.ndim = int(ndim) if ndim is not None else 1
            self.shape = (0,) * self.ndim
            self.strides = (0,) * self.ndim
            self.device = None
            return
        self.device = D.get_device(device)
        if ptr is not None:
            self._init_from_ptr(ptr, dtype, shape, strides, capacity, deleter)
        elif data is not None:
            self._init_from_data(data, dtype, shape, copy)
        else:
            self._init_empty(dtype, shape, strides)
        if grad is not None:
            self.grad = grad
        elif requires_grad and not grads_off.get():
            self.requires_grad = True
        if retain_grad:
            self.retain_grad = True

    # ------------------------------------------------------------------ construction
    def _set_dtype(self, dtype) -> None:
        hit = _DTYPES.get(id(dtype))
        if hit is not None and hit[0] is dtype:
            _, self._ir, self.dtype = hit
            return
        self._ir = resolve_dtype(dtype)
        self.dtype = _dtype_class(self._ir) if not isinstance(self._ir, T.ScalarType) else scalar_class(self._ir.name)
        if isinstance(dtype, type):  # classes live as long as their module: cache them by identity
            _DTYPES[id(dtype)] = (dtype, self._ir, self.dtype)

    def _init_empty(self, dtype, shape, strides=None) -> None:
        if dtype is typing.Any:
            dtype = float
        self._set_dtype(dtype)
        shape = _norm_shape(shape)
        if strides is not None:
            self._init_strided(shape, _check_alloc_strides(shape, strides))
            return
        base, trailing = np_layout(self._ir)
        if self.device.impl.host_memory:
            self._np = _pinned_zeros(shape + trailing, base) if self.pinned else aligned_zeros(shape + trailing, base)
            self._finish_np(len(shape))
            self._shared.escaped = False  # weft's own memory
            if _memtrack.on or config.track_memory:
                _memtrack.record(self, self._np, self._np.nbytes)
        else:
            self._alloc_device(shape)

    def _init_strided(self, shape, strides) -> None:
        """An allocation with the caller's byte strides (transposed or gapped layouts): the memory spans the
        farthest element, ``capacity`` bytes."""
        esize = element_size(self._ir)
        capacity = 0 if 0 in shape else esize + sum((n - 1) * s for n, s in zip(shape, strides))
        if strides == _contiguous_strides(shape, esize) or capacity == 0:
            self._init_empty(self.dtype, shape)  # the ordinary dense allocation
            self.strides = strides
            return
        self._capacity = capacity
        if self.device.impl.host_memory:
            raw = _pinned_zeros((capacity,), np.uint8) if self.pinned else aligned_zeros((capacity,), np.uint8)
            base, trailing = np_layout(self._ir)
            self._np = np_from_ptr(raw.ctypes.data, shape, strides, base, trailing, raw)
            self._finish_np(len(shape))
            self._shared.escaped = False
            if _memtrack.on or config.track_memory:
                _memtrack.record(self, raw, capacity)
        else:
            self._alloc_device((capacity,), nbytes=capacity)
            self.shape, self.ndim, self.strides = shape, len(shape), strides

    def _init_from_data(self, data, dtype, shape, copy) -> None:
        source = data
        if isinstance(data, array):
            data = data.numpy()
        elif not isinstance(data, np.ndarray) and hasattr(data, "__array_interface__") is False:
            try:
                data = _from_foreign(data)
            except TypeError:
                pass
        if dtype is typing.Any:
            dtype = _infer_dtype(data)
        self._set_dtype(dtype)
        base, trailing = np_layout(self._ir)
        if isinstance(self._ir, T.StructType):
            arr = _structs_to_np(data, self._ir)
        elif isinstance(data, np.ndarray) and data.dtype == np.uint16 and T.scalar_of(self._ir) == T.BFLOAT16:
            arr = data.view(base)  # raw bfloat16 bit patterns pass through, as in Warp
        else:
            arr = np.asarray(_flatten_host_values(data), dtype=base)
        _check_extents(arr.shape)  # before any copy of a (possibly broadcast) source
        if trailing:
            nt = len(trailing)
            total = int(np.prod(trailing))
            if arr.shape[arr.ndim - nt:] != trailing and not (
                    shape is not None and arr.size == int(np.prod(_norm_shape(shape))) * total):
                if arr.ndim >= 1 and arr.shape[-1] == total and nt > 1:
                    arr = arr.reshape(arr.shape[:-1] + trailing)
                elif arr.size % total == 0 and arr.ndim <= 1:
                    arr = arr.reshape((-1,) + trailing)
                elif arr.ndim >= 1 and arr.shape[-1] % total == 0:
                    # as in Warp: the innermost dimension packs whole elements ((64, 128) floats -> (64, 64) vec2f)
                    arr = arr.reshape(arr.shape[:-1] + (arr.shape[-1] // total,) + trailing)
                else:
                    raise ValueError(f"data of shape {arr.shape} cannot be viewed as an array of {self._ir} "
                                     f"(expected trailing dimensions {trailing})")
        if shape is not None:
            arr = arr.reshape(_norm_shape(shape) + trailing)
        outer = arr.ndim - len(trailing)
        if outer == 0:
            arr = arr.reshape((1,) + arr.shape)
            outer = 1
        if outer > 4:
            raise ValueError(f"arrays have at most 4 dimensions, got {outer}")
        if self.device.impl.host_memory:
            own = copy or not (arr.flags.writeable and _element_contiguous(arr, len(trailing)))
            if own:
                src = arr
                arr = aligned_zeros(src.shape, base)
                arr[...] = src
            self._np = arr
            self._finish_np(outer)
            if own and (_memtrack.on or config.track_memory):
                _memtrack.record(self, arr, arr.nbytes)
            self._shared.escaped = not own  # the caller's memory when not copied
            if not own:
                self._ref = source  # as Warp: the aliased object stays referenced by the array
        else:
            host = np.ascontiguousarray(arr)
            self._alloc_device(host.shape[:outer])
            self.device.impl.upload(self, host)

    def _init_from_ptr(self, ptr, dtype, shape, strides, capacity, deleter) -> None:
        self._set_dtype(dtype)
        if capacity is not None:
            self._capacity = int(capacity)
        if deleter is not None:
            if not callable(deleter):
                raise TypeError(f"deleter must be a callable taking (ptr, size), got {type(deleter).__name__}")
            self.deleter = deleter
        shape = _norm_shape(shape)
        esize = element_size(self._ir)
        if strides is None:
            strides = _contiguous_strides(shape, esize)
        self.shape = shape
        self.strides = tuple(int(s) for s in strides)
        self.ndim = len(shape)
        self._ptr = int(ptr)
        if self.device.impl.host_memory and (self._ptr or not self.size):
            base, trailing = np_layout(self._ir)
            self._np = np_from_ptr(int(ptr), shape, self.strides, base, trailing, None)
        elif self.device.impl.host_memory:  # a null pointer (Warp allows it): the host cannot read it
            self._np = None

    def _finish_np(self, outer: int) -> None:
        raw = self._npv
        self.shape = tuple(int(s) for s in raw.shape[:outer])
        self.strides = tuple(int(s) for s in raw.strides[:outer])
        self.ndim = outer
        self._ptr = int(raw.ctypes.data) if raw.size else 0

    def _alloc_device(self, shape, nbytes=None) -> None:
        self.shape = _norm_shape(shape)
        self.ndim = len(self.shape)
        esize = element_size(self._ir)
        self.strides = _contiguous_strides(self.shape, esize)
        if nbytes is None:
            nbytes = int(np.prod(self.shape, dtype=np.int64)) * esize
        self._dev_mem = self.device.impl.alloc(self.device, nbytes, self.pinned)
        self._ptr = int(self._dev_mem.ptr) if nbytes else 0
        if _memtrack.on or config.track_memory:
            _memtrack.record(self, self._dev_mem, nbytes)

    @classmethod
    def _view_of(cls, parent: array, np_view: np.ndarray | None, ptr: int, shape, strides) -> array:
        out = cls.__new__(cls)
        out._annotation = False
        out._desc = None
        out._grad = None
        out._shared = parent._shared
        out._np = np_view
        out._dev_mem = parent._dev_mem
        out._ir = parent._ir
        out.dtype = parent.dtype
        out.device = parent.device
        out.pinned = parent.pinned
        out.requires_grad = False
        out.shape = tuple(int(s) for s in shape)
        out.strides = tuple(int(s) for s in strides)
        out.ndim = len(out.shape)
        out._ptr = int(ptr)
        out._parent = parent
        return out

    # ------------------------------------------------------------------ host memory
    @property
    def _np(self):
        """The NumPy view of the memory (CPU) for code that may keep it: zeroes a pending zero and marks the memory
        escaped (never deferred again). Transient host access inside weft uses ``_host_np()``."""
        sh = self._shared
        if sh.zero is not None:
            _materialize(sh)
        sh.escaped = True
        return self._npv

    @_np.setter
    def _np(self, value) -> None:
        self._npv = value

    def _host_np(self):
        """The NumPy view of the memory for a transient host access (zeroes a pending zero; the view is not kept)."""
        sh = self._shared
        if sh.zero is not None:
            _materialize(sh)
        return self._npv

    # ------------------------------------------------------------------ annotation protocol
    def _annotation_ir(self) -> T.ArrayType:
        return T.ArrayType(self._ir, self.ndim)

    def _value_ir(self) -> T.ArrayType:
        return T.ArrayType(self._ir, self.ndim)

    def __class_getitem__(cls, params):
        """``wp.array[dtype]`` and ``wp.array[dtype, ndim]`` (``ndim`` an int, ``Literal[n]`` or ``Any``): a
        lightweight annotation (weft/runtime/annotations.py)."""
        from .annotations import _ArrayAnnotation, parse_subscript, reject_subclass_subscript

        reject_subclass_subscript(cls, array)
        return parse_subscript(_ArrayAnnotation, "array", params)

    # ------------------------------------------------------------------ properties
    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 0

    @property
    def ptr(self) -> int:
        sh = self._shared
        if sh.zero is not None:
            _materialize(sh)
        sh.escaped = True
        return self._ptr or None  # as Warp: an array without memory (zero size) has no pointer

    @property
    def memory_kind(self):
        """The ``wp.MemoryKind`` of the memory behind the array (runtime/memkind.py)."""
        return memkind.memory_kind(self)

    def ipc_handle(self) -> bytes:
        """A 64-byte handle of the array's CUDA allocation for ``wp.from_ipc_handle`` in another process."""
        return memkind.ipc_handle(self)

    @property
    def is_contiguous(self) -> bool:
        return self.strides == _contiguous_strides(self.shape, element_size(self._ir))

    #: the object whose memory an array built with ``copy=False`` aliases (kept alive by the array)
    _ref = None

    def __del__(self) -> None:
        """Hands memory wrapped with ``wp.array(ptr=..., deleter=fn)`` back: ``fn(ptr, capacity)``, once, when the
        array goes away (weft frees its own allocations through their owners; nothing to do for them)."""
        deleter = self.__dict__.get("deleter")
        ptr = self.__dict__.get("_ptr")
        if deleter is None or not ptr:
            return
        self.deleter = None
        try:
            deleter(ptr, self.capacity)
        except (TypeError, AttributeError):  # callables torn down at interpreter exit
            pass

    def cptr(self):
        """A ctypes pointer to the elements of a contiguous CPU array (``None`` without memory): the scalar type for
        scalar, vector and matrix dtypes (``uint16`` for half floats), a ``ctypes.Structure`` of the struct's native
        layout for structs. Not bounds checked; the pointer keeps the array alive."""
        ptr = self.ptr
        if not ptr:
            return None
        if not self.device.impl.host_memory or not self.is_contiguous:
            raise RuntimeError("Accessing array memory through a ctypes ptr is only supported for contiguous CPU "
                               "arrays.")
        if isinstance(self._ir, T.StructType):
            ctype = np.ctypeslib.as_ctypes_type(struct_np_dtype(self._ir))
        else:
            base = np_layout(self._ir)[0]
            ctype = ctypes.c_uint16 if base == np.float16 else np.ctypeslib.as_ctypes_type(base)
        p = ctypes.cast(ptr, ctypes.POINTER(ctype))
        p._ref = self
        return p

    #: bytes of a strided allocation (``wp.empty(shape, strides=...)``); other arrays span their elements
    _capacity = None

    @property
    def capacity(self) -> int:
        if self._capacity is not None:
            return self._capacity
        return self.size * element_size(self._ir)

    @property
    def grad(self):
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is None:
            self._grad = None
        else:
            g = value if isinstance(value, array) else array(value, dtype=self.dtype, device=self.device)
            if g.shape != self.shape:
                raise ValueError(f"grad shape {g.shape} does not match array shape {self.shape}")
            if g.strides != self.strides:
                raise ValueError("grad must have the same strides as the array")
            self._grad = g
        self._desc = None
        self._grad_replaced()

    def _watch_grad(self, callback) -> None:
        """Call ``callback()`` (held weakly: a bound method of an object that may go away) whenever this array's
        gradient buffer is replaced (``a.grad = ...``, ``a.requires_grad = ...``): native objects that captured the
        gradient's address (wp.Mesh) re-read it."""
        watchers = self.__dict__.setdefault("_grad_watchers", [])
        watchers[:] = [w for w in watchers if w() is not None]
        watchers.append(weakref.WeakMethod(callback) if hasattr(callback, "__self__") else weakref.ref(callback))

    def _grad_replaced(self) -> None:
        for w in self.__dict__.get("_grad_watchers", ()):
            cb = w()
            if cb is not None:
                cb()

    @property
    def requires_grad(self) -> bool:
        return self._grad is not None

    _retain_grad = False

    @property
    def retain_grad(self) -> bool:
        """Keep this array's gradient through the backward pass where a store's adjoint would consume (zero) it
        because a later launch overwrites the array (Warp's ``retain_grad``; needs ``requires_grad``)."""
        return self._retain_grad

    @retain_grad.setter
    def retain_grad(self, value: bool) -> None:
        if value and not self.requires_grad:
            raise ValueError("retain_grad=True requires requires_grad=True")
        self._retain_grad = bool(value)

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if value and self._grad is None and not self._annotation:
            self._grad = self._new_like_layout()
            self._desc = None
            self._grad_replaced()
        elif not value and self._grad is not None:
            self._grad = None
            self._retain_grad = False
            self._desc = None
            self._grad_replaced()

    def _new_like_layout(self) -> array:
        """A zeroed array with exactly this array's strides (so gradients index like the data)."""
        if self.is_contiguous:
            return array(dtype=self.dtype, shape=self.shape, device=self.device)
        base = self._root()
        g = base._new_like_layout() if base is not self else None
        if g is not None:
            offset = self._ptr - base._ptr
            return _strided_view(g, offset, self.shape, self.strides)
        if self._capacity is not None:  # a strided allocation: the gradient gets the same layout
            return array(dtype=self.dtype, shape=self.shape, device=self.device, strides=self.strides)
        return array(dtype=self.dtype, shape=self.shape, device=self.device)

    def _root(self) -> array:
        node = self
        while getattr(node, "_parent", None) is not None:
            node = node._parent
        return node

    def __ctype__(self) -> bytes:
        """The array's descriptor as kernels receive it (Warp returns its ctypes ``array_t``; weft's launch objects
        take these bytes in ``Launch.set_param_at_index_from_ctype``)."""
        return self.desc

    @property
    def desc(self) -> bytes:
        """The packed ``array_t`` descriptor passed to kernels."""
        d = self._desc
        if d is None:
            if self._annotation:
                raise LaunchError(f"{self!r} is an array annotation (a type), not an array with data")
            _check_kernel_shape(self.shape)
            shape = list(self.shape) + [0] * (4 - self.ndim)
            strides = list(self.strides) + [0] * (4 - self.ndim)
            gptr = self._grad._ptr if self._grad is not None else 0
            d = self._desc = ARRAY_DESC.pack(self._ptr, gptr, *shape, self.ndim, 0, *strides)
        return d

    def desc_with(self, grad_ptr: int | None = None, flags: int = 0, data_ptr: int | None = None) -> bytes:
        """The descriptor with a different gradient pointer, flags or data pointer (used by backward passes)."""
        if self._annotation:
            raise LaunchError(f"{self!r} is an array annotation (a type), not an array with data")
        _check_kernel_shape(self.shape)
        shape = list(self.shape) + [0] * (4 - self.ndim)
        strides = list(self.strides) + [0] * (4 - self.ndim)
        if grad_ptr is None:
            grad_ptr = self._grad._ptr if self._grad is not None else 0
        return ARRAY_DESC.pack(self._ptr if data_ptr is None else data_ptr, grad_ptr, *shape, self.ndim, flags,
                               *strides)

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        if self._annotation:
            return f"array(dtype={getattr(self.dtype, '__name__', self.dtype)}, ndim={self.ndim})"
        return f"array({self.numpy()!r}, dtype={_dtype_name(self._ir)}, device={self.device})"

    def __str__(self) -> str:
        if self._annotation:
            return repr(self)
        return str(self.numpy())

    # ------------------------------------------------------------------ host access
    def numpy(self) -> np.ndarray:
        """A NumPy view (CPU: zero-copy) or copy (CUDA) of the data; vector dtypes add trailing dimensions."""
        return self.device.impl.to_host(self)

    def list(self) -> list:
        flat = self.numpy().reshape((self.size,) + np_layout(self._ir)[1])
        return [to_host_value(self._ir, x) for x in flat]

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a.astype(dtype) if dtype is not None else a

    @property
    def __array_interface__(self):
        if not self.device.impl.host_memory:
            raise AttributeError("__array_interface__ is only available for CPU arrays")
        interface = self._np.__array_interface__
        if self.size == 0:  # as Warp: the strides of a dense layout, a zero extent zeroing the outer ones
            base, trailing = np_layout(self._ir)
            strides, step = [], element_size(self._ir)
            for n in reversed(self.shape):
                strides.append(step)
                step *= int(n)
            interface = dict(interface, strides=tuple(reversed(strides)) + _trailing_strides(base, trailing))
        return interface

    @property
    def __cuda_array_interface__(self):
        if not self.device.is_cuda:
            raise AttributeError("__cuda_array_interface__ is only available for CUDA arrays")
        base, trailing = np_layout(self._ir)
        return {
            "shape": self.shape + trailing, "typestr": base.str, "data": (self._ptr, False),
            "strides": self.strides + _trailing_strides(base, trailing), "version": 3, "stream": None,
        }

    def __dlpack__(self, stream=None, **kwargs):
        from ..interop import dlpack

        return dlpack.to_capsule(self, stream=stream, **kwargs)

    def __dlpack_device__(self):
        from ..interop import dlpack

        return dlpack.device_tuple(self)

    def _mark_written(self) -> None:
        self._shared.version += 1

    # ------------------------------------------------------------------ Warp's autograd access tracking
    @property
    def _is_read(self) -> bool:
        """Whether a launch recorded on a Tape read this array (or a view of its memory) since the Tape's last
        ``backward`` / ``reset`` (tracked with ``wp.config.verify_autograd_array_access``)."""
        return self._shared.is_read

    def mark_init(self) -> None:
        """Clear the read flag."""
        self._shared.is_read = False

    def mark_read(self) -> None:
        """Mark the array (and every view of its memory) as read by a recorded launch."""
        self._shared.is_read = True

    def mark_write(self, **kwargs) -> None:
        """Warn (``AccessWarning``) if a recorded launch read the array before this write."""
        from .access_check import mark_write

        mark_write(self)

    @property
    def _version(self) -> int:
        return self._shared.version

    # ------------------------------------------------------------------ mutation
    def fill_(self, value) -> array:
        self.device.impl.fill(self, value)
        return self

    def _element_bytes(self, value) -> bytes:
        """The bytes of one element equal to ``value`` (a backend fills device memory with this pattern)."""
        base, trailing = np_layout(self._ir)
        if isinstance(self._ir, T.StructType):
            return _structs_to_np([value], self._ir).tobytes()
        raw = np.asarray(getattr(value, "_a", value), dtype=base)
        return np.broadcast_to(raw, trailing).tobytes() if trailing else raw.reshape(()).tobytes()

    def _fill_host(self, value) -> array:
        base, trailing = np_layout(self._ir)
        if isinstance(self._ir, T.StructType):
            self._host_np()[...] = _structs_to_np([value], self._ir)[0]
        else:
            v = np.asarray(value, dtype=base)
            self._host_np()[...] = v.reshape(trailing) if trailing and v.ndim else v  # a scalar fills every component
        self._mark_written()
        return self

    def zero_(self) -> array:
        return self.fill_(0)

    def assign(self, src) -> array:
        from .copy import copy as _copy

        if isinstance(src, array):
            if src.shape != self.shape:
                raise ValueError(f"assign: shape {src.shape} does not match {self.shape}")
            _copy(self, src)
        else:
            tmp = array(src, dtype=self.dtype, device="cpu")
            if tmp.shape != self.shape:
                tmp = array(np.asarray(tmp.numpy()).reshape(self.shape + np_layout(self._ir)[1]), dtype=self.dtype)
            _copy(self, tmp)
        return self

    # ------------------------------------------------------------------ views
    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        if any(isinstance(k, array) for k in key) and len(key) <= self.ndim:
            # index arrays select through an indexed array, as in Warp: a[idx], a[idx, :], a[0:3, idx]; slices and
            # integers of the other dimensions make the view it indexes first
            from .indexed import indexedarray

            whole = tuple(slice(None) if isinstance(k, array) else k for k in key)
            base = self if all(k == slice(None) for k in whole) else self[whole]
            kept = [k for k in key if not isinstance(k, (int, np.integer))]
            return indexedarray(base, [k if isinstance(k, array) else None for k in kept])
        if any(k is Ellipsis for k in key):
            raise IndexError("Ellipsis indexing is not supported")
        if len(key) > self.ndim:
            raise IndexError(f"too many indices for a {self.ndim}-D array")
        offset = 0
        shape, strides = [], []
        dropped = 0
        for d in range(self.ndim):
            k = key[d] if d < len(key) else slice(None)
            n, st = self.shape[d], self.strides[d]
            if isinstance(k, (int, np.integer)):
                i = int(k)
                if i < 0:
                    i += n
                if not 0 <= i < n:
                    raise IndexError(f"index {int(k)} is out of bounds for dimension {d} with size {n}")
                offset += i * st
                dropped += 1
            elif isinstance(k, slice):
                start, stop, step = k.indices(n)
                cnt = len(range(start, stop, step))
                offset += start * st
                shape.append(cnt)
                strides.append(st * step)
            else:
                raise IndexError(f"unsupported index {k!r}; use ints and slices (or wp.indexedarray)")
        if not shape:
            if self.device.impl.host_memory:
                return to_host_value(self._ir, self._host_np()[tuple(int(k) for k in key)])
            host = self.numpy()
            return to_host_value(self._ir, host[tuple(int(k) for k in key)])
        view = _strided_view(self, offset, tuple(shape), tuple(strides))
        if self._grad is not None:
            view._grad = _strided_view(self._grad, offset, tuple(shape), tuple(strides))
        return view

    def __setitem__(self, key, value) -> None:
        if self.device.impl.host_memory:
            target = self[key]
            if isinstance(target, array):
                target.assign(value) if isinstance(value, array) else target.fill_(value) if np.ndim(value) == 0 \
                    else target.assign(value)
            else:
                base, _trailing = np_layout(self._ir)
                self._host_np()[key if isinstance(key, tuple) else (key,)] = np.asarray(value, dtype=base)
                self._mark_written()
        else:
            raise NotImplementedError("item assignment on device arrays: use a kernel, fill_ or assign")

    def reshape(self, shape) -> array:
        shape = _norm_shape(shape, allow_neg=True, total=self.size, orig_shape=self.shape)
        if not self.is_contiguous:
            raise ValueError("reshape needs a contiguous array; call .contiguous() first")
        out = _strided_view(self, 0, shape, _contiguous_strides(shape, element_size(self._ir)))
        if self._grad is not None:
            out._grad = self._grad.reshape(shape)
        return out

    def flatten(self) -> array:
        return self.reshape((self.size,))

    def view(self, dtype) -> array:
        """The same memory seen as ``dtype``: of the same element size, or a vector/matrix dtype seen as its scalar
        (the element's shape becomes trailing dimensions) and back (trailing dimensions matching the element's shape
        become one element), as Warp's ``array.view``."""
        new_ir = resolve_dtype(dtype)
        shape, strides = self.shape, self.strides
        src_size, dst_size = element_size(self._ir), element_size(new_ir)
        if src_size != dst_size:
            src_elem, dst_elem = _elem_shape(self._ir), _elem_shape(new_ir)
            src_scalar, dst_scalar = _scalar_size(self._ir), _scalar_size(new_ir)
            head = f"cannot create an array view with dtype {new_ir} from source dtype {self._ir}: "
            if src_elem and not dst_elem and dst_scalar is not None:  # vec4f -> float32: trailing dimensions
                if src_scalar != dst_size:
                    raise ViewDtypeError(head + f"source scalar dtype {self._ir.scalar} has size {src_scalar} bytes, "
                                         f"but target dtype has size {dst_size} bytes")
                shape = self.shape + src_elem
                strides = self.strides + _contiguous_strides(src_elem, dst_size)
            elif dst_elem and not src_elem and src_scalar is not None:  # float32 -> vec4f: trailing dims fold
                k = len(dst_elem)
                if dst_scalar != src_size:
                    raise ViewDtypeError(head + f"source dtype has size {src_size} bytes, but target scalar dtype "
                                         f"{new_ir.scalar} has size {dst_scalar} bytes")
                if self.ndim < k or self.shape[-k:] != dst_elem or \
                        self.strides[-k:] != _contiguous_strides(dst_elem, src_size):
                    raise ViewDtypeError(head + f"the last dimensions {self.shape[-k:]} (strides {self.strides[-k:]}) "
                                         f"are not one contiguous {new_ir} of shape {dst_elem}")
                # the whole array one element: a 1-D array of one (weft arrays have at least one dimension)
                shape, strides = self.shape[:-k] or (1,), self.strides[:-k] or (dst_size,)
            else:
                raise ViewDtypeError(head + f"source dtype has size {src_size} bytes, but target dtype has size "
                                     f"{dst_size} bytes")
            if len(shape) > 4:
                raise ViewDtypeError(head + f"the view would have {len(shape)} dimensions (at most 4)")
        out = _strided_view(self, 0, shape, strides)
        out._ir = new_ir
        out.dtype = _dtype_class(new_ir) if not isinstance(new_ir, T.ScalarType) else scalar_class(new_ir.name)
        if self.device.impl.host_memory:
            base, trailing = np_layout(new_ir)
            out._np = np_from_ptr(out._ptr, out.shape, out.strides, base, trailing, self._npv)
        return out

    def transpose(self, axes=None) -> array:
        axes = tuple(reversed(range(self.ndim))) if axes is None else tuple(axes)
        out = _strided_view(self, 0, tuple(self.shape[a] for a in axes), tuple(self.strides[a] for a in axes))
        if self._grad is not None:
            out._grad = self._grad.transpose(axes)
        return out

    @property
    def T(self) -> array:
        return self.transpose()

    def contiguous(self) -> array:
        if self.is_contiguous:
            return self
        return clone(self)

    def to(self, device, requires_grad=None) -> array:
        dev = D.get_device(device)
        if dev == self.device:
            return self
        out = clone(self, device=dev)
        return out

    def cpu(self) -> array:
        return self.to("cpu")

    def __iter__(self):
        for i in range(self.shape[0]):
            yield self[i]


def _strided_view(parent: array, byte_offset: int, shape, strides) -> array:
    ptr = parent._ptr + byte_offset
    np_view = None
    if parent.device.impl.host_memory:
        base, trailing = np_layout(parent._ir)
        np_view = np_from_ptr(ptr, tuple(shape), tuple(strides), base, trailing, parent._npv)
    return array._view_of(parent, np_view, ptr, shape, strides)


_ALIGN = 64  # cache-line aligned: SIMD-friendly, and JAX/XLA import DLPack buffers without copying only at 64


def aligned_zeros(shape, dtype) -> np.ndarray:
    """A zeroed C-contiguous NumPy array whose data starts on a 64-byte boundary."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    pool = active_pool.get()  # inside wp.checkpoint: recycle the buffers of arrays that died (runtime/pool.py)
    raw = np.zeros(nbytes + _ALIGN, dtype=np.uint8) if pool is None else pool.zeros(nbytes + _ALIGN)
    start = (-raw.ctypes.data) % _ALIGN
    return raw[start:start + nbytes].view(dtype).reshape(shape)


def _pinned_zeros(shape, dtype) -> np.ndarray:
    """Page-locked host memory when a CUDA driver is present (fast asynchronous copies), else ordinary memory."""
    try:
        from .cuda_backend import pinned_empty
    except ImportError:
        return aligned_zeros(shape, dtype)
    return pinned_empty(shape, dtype)


class _Keep:
    """Carries ``__array_interface__`` for np.asarray and keeps the owner of the memory alive."""

    def __init__(self, interface: dict, owner) -> None:
        self.__array_interface__ = interface
        self._owner = owner


def np_from_ptr(ptr: int, shape, strides, base: np.dtype, trailing, owner) -> np.ndarray:
    """A NumPy view of memory at ``ptr`` with byte ``strides`` (element dims) plus dense trailing dims."""
    full_shape = tuple(shape) + tuple(trailing)
    if int(np.prod(full_shape, dtype=np.int64)) == 0:
        return np.zeros(full_shape, base)
    interface = {"data": (int(ptr), False), "shape": full_shape, "typestr": base.str, "version": 3,
                 "strides": tuple(strides) + _trailing_strides(base, trailing)}
    return np.asarray(_Keep(interface, owner))


def _trailing_strides(base: np.dtype, trailing: tuple[int, ...]) -> tuple[int, ...]:
    out = []
    s = base.itemsize
    for n in reversed(trailing):
        out.append(s)
        s *= n
    return tuple(reversed(out))


def _element_contiguous(arr: np.ndarray, n_trailing: int) -> bool:
    base = arr.dtype
    expected = _trailing_strides(base, arr.shape[arr.ndim - n_trailing:]) if n_trailing else ()
    return arr.strides[arr.ndim - n_trailing:] == expected if n_trailing else True


def _contiguous_strides(shape, esize: int) -> tuple[int, ...]:
    out = []
    s = esize
    for n in reversed(shape):
        out.append(s)
        s *= max(int(n), 1)
    return tuple(reversed(out))


def _elem_shape(ir: T.Type) -> tuple[int, ...]:
    """The component shape of a vector/matrix dtype (``()`` for other dtypes)."""
    if isinstance(ir, T.VectorType):
        return (ir.length,)
    if isinstance(ir, T.MatrixType):
        return (ir.rows, ir.cols)
    return ()


def _scalar_size(ir: T.Type) -> int | None:
    """The byte size of a scalar dtype or of a vector/matrix dtype's scalar (None for structs)."""
    if isinstance(ir, T.ScalarType):
        return element_size(ir)
    if isinstance(ir, (T.VectorType, T.MatrixType)):
        return element_size(ir.scalar)
    return None


def _norm_shape(shape, allow_neg=False, total=None, orig_shape=None) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    shape = tuple(int(s) for s in shape)
    if allow_neg and -1 in shape:
        known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
        shape = tuple(total // known if s == -1 else s for s in shape)
    if total is not None and int(np.prod(shape, dtype=np.int64)) != total:
        raise ReshapeError(f"cannot reshape array of shape {orig_shape} (size {total}) into shape {shape} "
                           f"(size {int(np.prod(shape, dtype=np.int64))})")
    if not 1 <= len(shape) <= 4:
        raise ValueError(f"arrays have 1 to 4 dimensions, got shape {shape}")
    if any(s < 0 for s in shape):
        raise ValueError(f"Array shapes must be non-negative, got {shape}")
    _check_extents(shape)
    return shape


def _check_alloc_strides(shape, strides) -> tuple[int, ...]:
    """The byte strides of an allocation, checked against its shape (Warp's errors)."""
    if isinstance(strides, (int, np.integer)):
        strides = (strides,)
    strides = tuple(int(s) for s in strides)
    if len(strides) != len(shape):
        raise ValueError(f"Invalid number of strides, expected {len(shape)} strides, got {len(strides)}")
    if any(s < 0 for s in strides):
        raise NotImplementedError(f"Negative strides are not supported for allocations, got {strides}")
    return strides


def _check_extents(shape) -> None:
    """Array descriptors hold int32 extents (as Warp's): a longer dimension is an error, not a wrapped size."""
    if any(int(s) > 2**31 - 1 for s in shape):
        raise ValueError(f"Array shapes must not exceed the maximum representable value of a signed 32-bit integer "
                         f"(2**31 - 1), got {tuple(shape)}")


def _infer_dtype(data):
    if isinstance(data, np.ndarray):
        return data.dtype.type if data.dtype.type in (np.float16, np.float32, np.float64, np.int8, np.int16, np.int32,
                                                      np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                                                      np.bool_) else float
    seq = data
    while isinstance(seq, (list, tuple)) and seq:
        seq = seq[0]
    cls = type(seq)
    if isinstance(seq, (C.VectorBase, C.MatrixBase)):
        return cls
    if isinstance(seq, np.generic):
        return cls
    if isinstance(seq, (bool, bool_value)):
        return bool
    if isinstance(seq, int):
        return np.int32 if not isinstance(data, np.ndarray) else data.dtype.type
    return float


def _flatten_host_values(data):
    if isinstance(data, (C.VectorBase, C.MatrixBase)):
        return data._a
    if isinstance(data, (list, tuple)) and data and isinstance(data[0], (C.VectorBase, C.MatrixBase, list, tuple)):
        return [_flatten_host_values(x) for x in data]
    return data


def _structs_to_np(data, ir: T.StructType) -> np.ndarray:
    dt = struct_np_dtype(ir)
    if isinstance(data, np.ndarray) and data.dtype == dt:
        return data
    items = list(data)
    out = np.zeros(len(items), dtype=dt)
    for i, s in enumerate(items):
        if isinstance(s, int) and s == 0:  # zero_() / fill_(0): all-zero bytes, as a default struct
            continue
        out[i] = np.frombuffer(s._pack(), dtype=dt)[0]
    return out


def _check_kernel_shape(shape) -> None:
    """Kernels see an array's shape as int32s (as in Warp; strides and offsets are 64-bit)."""
    for d, n in enumerate(shape):
        if n > 2**31 - 1:
            raise LaunchError(f"an array of shape {tuple(shape)} cannot be passed to a kernel: dimension {d} has {n} "
                              "elements, more than 2^31 - 1 (kernels index arrays with 32-bit extents); reshape it "
                              "into more dimensions")


def _from_foreign(data):
    """Accept objects exposing DLPack or the array interfaces."""
    if hasattr(data, "__array_interface__") or hasattr(data, "__dlpack__"):
        return np.asarray(data) if hasattr(data, "__array_interface__") else np.from_dlpack(data)
    raise TypeError


def _dtype_name(ir: T.Type) -> str:
    return str(ir)


# ---------------------------------------------------------------------- constructors
def _resolve_shape(shape, length=None, n=None):
    """The shape from ``shape``, or from Warp's older ``length=`` / ``n=`` keywords for 1-D arrays."""
    if shape is None and length is None:
        length = n
    if shape is None:
        if length is None:
            raise ValueError("shape is required")
        shape = length
    return shape


def zeros(shape=None, dtype=float, device=None, requires_grad=False, pinned=False, length=None, **kwargs) -> array:
    """A zero-filled array."""
    return array(dtype=dtype, shape=_resolve_shape(shape, length, kwargs.get("n")), device=device,
                 requires_grad=requires_grad, pinned=pinned, retain_grad=kwargs.get("retain_grad", False),
                 strides=kwargs.get("strides"))


zeros._wp_kernel_builtin_ = "fixed_zeros"
declare(array, "array", Form.ARRAY_AT)  # wp.array(ptr=, shape=, dtype=) in kernel code


def empty(shape=None, dtype=float, device=None, requires_grad=False, pinned=False, length=None, **kwargs) -> array:
    """An array whose contents are unspecified (weft zero-fills it anyway on the CPU)."""
    return zeros(shape, dtype, device, requires_grad, pinned, length, **kwargs)


def ones(shape=None, dtype=float, device=None, requires_grad=False, pinned=False, length=None, **kwargs) -> array:
    """An array filled with ones."""
    return full(shape, 1, dtype, device, requires_grad, pinned, length, **kwargs)


def full(shape=None, value=0, dtype=typing.Any, device=None, requires_grad=False, pinned=False, length=None,
         **kwargs) -> array:
    """An array filled with ``value``; without ``dtype`` it follows the value (int -> int32, float -> float32, a
    NumPy scalar keeps its type, a vector/matrix value its type)."""
    if dtype is typing.Any and isinstance(value, (list, tuple)):
        value = np.asarray(value)  # a (nested) list of numbers is a vector (matrix) value, as in Warp
    if dtype is typing.Any and isinstance(value, np.ndarray) and 1 <= value.ndim <= 2 and value.size > 1:
        # a NumPy array value is one vector (1-D) or matrix (2-D) of its own scalar type, as in Warp
        scalar = scalar_class(resolve_dtype(_infer_dtype(value)).name)
        dtype = C.vector(value.shape[0], scalar) if value.ndim == 1 else C.matrix(value.shape, scalar)
    if dtype is typing.Any:
        dtype = type(value) if isinstance(value, (C.VectorBase, C.MatrixBase, StructInstance)) else (
            _infer_dtype(value) if isinstance(value, np.generic) else  # NumPy scalars keep their own type
            np.int32 if isinstance(value, int) and not isinstance(value, bool) else
            (bool if isinstance(value, (bool, bool_value)) else float))
    a = zeros(shape, dtype, device, requires_grad, pinned, length, **kwargs)
    a.fill_(value)
    return a


def zeros_like(src: array, device=None, requires_grad=None, pinned=None) -> array:
    """A zero-filled array with the shape and dtype of ``src``."""
    return zeros(src.shape, src.dtype, device or src.device, src.requires_grad if requires_grad is None else requires_grad)


def empty_like(src: array, device=None, requires_grad=None, pinned=None) -> array:
    """An array with the shape and dtype of ``src`` (zero-filled on the CPU)."""
    return zeros_like(src, device, requires_grad)


def ones_like(src: array, device=None, requires_grad=None, pinned=None) -> array:
    """An array of ones with the shape and dtype of ``src``."""
    return full_like(src, 1, device, requires_grad)


def full_like(src: array, value, device=None, requires_grad=None, pinned=None) -> array:
    """An array with the shape and dtype of ``src`` filled with ``value``."""
    a = zeros_like(src, device, requires_grad)
    a.fill_(value)
    return a


def clone(src: array, device=None, requires_grad=None, pinned=None) -> array:
    """A contiguous copy (with a fresh zero gradient when the source has one)."""
    dev = D.get_device(device) if device is not None else src.device
    out = zeros(src.shape, src.dtype, dev, src.requires_grad if requires_grad is None else requires_grad)
    from .copy import copy as _copy

    _copy(out, src)
    return out


def from_numpy(arr, dtype=None, shape=None, device=None, requires_grad=False) -> array:
    """Copy a NumPy array into a weft array (vector dtypes take the trailing dimensions)."""
    return array(np.asarray(arr), dtype=dtype if dtype is not None else typing.Any, shape=shape, device=device,
                 requires_grad=requires_grad)


class _ArrayNd:
    """``wp.array2d(dtype=float)``, ``wp.array2d[float]`` and ``wp.array2d(data, ...)``."""

    def __init__(self, ndim: int) -> None:
        self.ndim = ndim
        self.__name__ = f"array{ndim}d"

    def __call__(self, *args, **kwargs) -> array:
        kwargs["ndim"] = self.ndim
        return array(*args, **kwargs)

    def __getitem__(self, dtype):
        from .annotations import _ArrayAnnotation

        if isinstance(dtype, tuple):
            raise TypeError(f"wp.{self.__name__}[...] expects a single type parameter (dtype), got {len(dtype)}")
        return _ArrayAnnotation(dtype, self.ndim)

    def __repr__(self) -> str:
        return f"wp.{self.__name__}"


from .annotations import _ArrayAnnotation

_ArrayAnnotation._concrete_cls = array
array1d = _ArrayNd(1)
array2d = _ArrayNd(2)
array3d = _ArrayNd(3)
array4d = _ArrayNd(4)
