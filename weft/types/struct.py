"""``@wp.struct``: plain-data records usable as kernel arguments, array elements and kernel locals."""

from __future__ import annotations

import hashlib
import struct as pystruct
import sys
import typing

import numpy as np

from ..errors import StructDefinitionError, StructFieldError
from ..ir import types as T
from .dtypes import struct_np_dtype
from .mapping import check_not_array_value, to_ir
from .scalars import bf16_bits, check_host_scalar, single_value_promotion

#: host operations on struct values that need the runtime (the layer above this one: arrays, devices); filled by
#: weft/runtime/struct_host.py, which ``import weft`` loads before any struct can hold an array
RUNTIME_HOOKS: dict[str, typing.Callable] = {}


class StructDtypeSpec(dict):
    """A struct's NumPy layout in the dict form ``np.dtype`` accepts (Warp's ``numpy_dtype()`` result), answering the
    attributes of the ``np.dtype`` it describes."""

    def __init__(self, dt: np.dtype):
        names = list(dt.names)
        super().__init__(names=names, formats=[dt.fields[n][0] for n in names],
                         offsets=[dt.fields[n][1] for n in names], itemsize=dt.itemsize)
        object.__setattr__(self, "_dtype", dt)

    def __getattr__(self, name: str):
        return getattr(object.__getattribute__(self, "_dtype"), name)

    def __eq__(self, other):
        try:
            return self._dtype == np.dtype(other)
        except TypeError:
            return NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None


class StructInstance:
    """Base of host-side struct instances (generated per ``@wp.struct``)."""

    _ir_: T.StructType
    __slots__ = ()

    @classmethod
    def numpy_dtype(cls) -> StructDtypeSpec:
        """The NumPy structured dtype of one element of an array of this struct, as Warp's dict (``names``,
        ``formats``, ``offsets``, ``itemsize``: what ``np.dtype`` takes); it also answers ``np.dtype``'s attributes
        (``.names``, ``.itemsize``, ``.fields``)."""
        return StructDtypeSpec(struct_np_dtype(cls._ir_))

    def __init__(self, **kwargs):
        for name, ftype in self._ir_.fields:
            object.__setattr__(self, name, _default(ftype))
        for k, v in kwargs.items():
            setattr(self, k, v)

    def __setattr__(self, name, value):
        ftype = self._ir_.field_type(name)
        if ftype is None:
            raise AttributeError(f"struct {self._ir_.name} has no field '{name}'")
        object.__setattr__(self, name, _convert(ftype, value, name))

    def numpy_value(self) -> np.void:
        """This value as one record of :meth:`numpy_dtype` (what an array of this struct holds per element: array
        fields as their descriptors), for ``np.ndarray.fill`` and comparisons with ``a.numpy()``."""
        return np.frombuffer(self._pack(), dtype=struct_np_dtype(self._ir_), count=1)[0].copy()

    def __ctype__(self) -> bytes:
        """The struct's bytes as kernels receive them (Warp returns its ctypes structure; weft's launch objects take
        these bytes in ``Launch.set_param_at_index_from_ctype``)."""
        return self._pack()

    def _pack(self) -> bytes:
        cls = type(self)
        packer = cls.__dict__.get("_packer_")
        if packer is None:
            from .layout import layout

            packer = pystruct.Struct("<" + layout(self._ir_).fmt)
            type.__setattr__(cls, "_packer_", packer)
        return packer.pack(*self._flat())

    def _flat(self) -> list:
        out = []
        for name, kind, extra in _field_plan(type(self)):
            v = getattr(self, name)
            if kind is _F_SCALAR:
                out.append(bf16_bits(v) if extra else v)
            elif kind is _F_ARRAY:
                if v is None:
                    out.append(extra[0])
                else:
                    if extra[1] and not hasattr(v, "indices"):
                        v = RUNTIME_HOOKS["as_indexed"](v)  # a plain array in an indexed-array field: no index arrays
                    out.append(v.desc)
            elif kind is _F_STRUCT:
                out.extend(v._flat())
            else:
                out.extend(np.asarray(v).reshape(-1).tolist())
        return out

    @classmethod
    def _from_record(cls, rec):
        obj = cls()
        for name, ftype in cls._ir_.fields:
            if isinstance(ftype, T.ArrayType):
                # the record holds only a descriptor: an annotation of the field's array type stands for it (as in
                # Warp), not an array (the memory it pointed at may be gone)
                object.__setattr__(obj, name, _array_stub(ftype))
                continue
            value = rec[name]
            if isinstance(ftype, T.StructType):
                value = ftype.pyclass._from_record(value)
            elif isinstance(ftype, T.ScalarType):
                value = value.item()
            else:
                from .composite import class_for

                value = class_for(ftype)(np.asarray(value))
            object.__setattr__(obj, name, value)
        return obj

    def to(self, device):
        """A copy with every array field on ``device`` (arrays already there are kept as they are). Fabric array
        fields cannot move (weft does not own their memory): they must already be on ``device``."""
        return RUNTIME_HOOKS["struct_to"](self, device)

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n, _ in self._ir_.fields)
        return f"{self._ir_.name}({fields})"


_F_SCALAR, _F_ARRAY, _F_STRUCT, _F_COMPOSITE = "scalar", "array", "struct", "composite"


def _field_plan(cls) -> tuple:
    """(name, kind, extra) per field of ``cls``, made once per struct class (packing a struct argument at every launch
    looked each field's type up and hashed the struct's IR type for its layout): ``extra`` of an array field is (its
    descriptor's bytes when it holds None, whether it is an indexed array)."""
    plan = cls.__dict__.get("_field_plan_")
    if plan is None:
        from .layout import layout

        rows = []
        for name, ftype in cls._ir_.fields:
            if isinstance(ftype, T.StructType):
                rows.append((name, _F_STRUCT, None))
            elif isinstance(ftype, T.ArrayType):
                rows.append((name, _F_ARRAY, (bytes(layout(ftype).size), ftype.kind is T.ArrayKind.INDEXED)))
            elif isinstance(ftype, (T.VectorType, T.MatrixType)):
                rows.append((name, _F_COMPOSITE, None))
            else:
                rows.append((name, _F_SCALAR, ftype == T.BFLOAT16))  # extra: packed as its bit pattern
        plan = tuple(rows)
        type.__setattr__(cls, "_field_plan_", plan)
    return plan


def _default(ftype: T.Type):
    if isinstance(ftype, T.ScalarType):
        return _scalar_value(ftype, 0)
    if isinstance(ftype, (T.VectorType, T.MatrixType)):
        from .composite import class_for

        return class_for(ftype)()
    if isinstance(ftype, T.StructType):
        return ftype.pyclass()
    return None


def _scalar_value(ftype: T.ScalarType, v):
    """A scalar field's value keeps its weft type (``isinstance(s.u8, wp.uint8)``, as Warp)."""
    from .scalars import BY_NAME

    cls = BY_NAME.get(ftype.name)
    host = getattr(cls, "_host_", None)
    return host(v) if isinstance(host, type) else ftype.np_dtype.type(v).item()


def _convert(ftype: T.Type, value, name: str):
    if isinstance(ftype, T.ScalarType):
        try:
            v = check_host_scalar(ftype, value)
            if type(value) in (int, float, bool):  # a Python number stays one (checked and rounded to the field)
                return ftype.np_dtype.type(v).item()
            return _scalar_value(ftype, v)
        except (TypeError, ValueError) as exc:
            raise StructFieldError(f"field '{name}': {exc}") from None
    if isinstance(ftype, (T.VectorType, T.MatrixType)):
        from .composite import class_for

        if value is None:  # zero, as a new struct's field (Warp)
            return class_for(ftype)()
        if isinstance(value, (str, bytes)):
            raise StructFieldError(f"field '{name}' expects {ftype}, got {type(value).__name__} {value!r}")
        if np.ndim(value) == 0 and not hasattr(value, "_a"):  # one number for a composite field (as Warp 1.19)
            if not single_value_promotion(value, ftype, f"struct field '{name}'"):
                raise StructFieldError(f"Struct field '{name}' expects {ftype} but got a single value")
            value = np.full(ftype.length if isinstance(ftype, T.VectorType) else (ftype.rows, ftype.cols),
                            value, dtype=ftype.scalar.np_dtype)
        try:
            return class_for(ftype)(value)
        except (TypeError, ValueError) as exc:
            raise StructFieldError(f"field '{name}' expects {ftype}: {exc}") from None
    if isinstance(ftype, T.ArrayType):
        if value is None:
            return None
        value_ir = getattr(value, "_value_ir", None)
        vt = value_ir() if callable(value_ir) and not getattr(value, "_annotation", False) else None
        if not isinstance(vt, T.ArrayType) or not _kind_fits(ftype.kind, vt.kind):
            raise StructFieldError(f"Struct field '{name}' expects {_FAMILY[ftype.kind]}, got {type(value).__name__}")
        if vt.dtype != ftype.dtype:
            raise StructFieldError(f"Struct field '{name}' expects dtype {ftype.dtype}, got {vt.dtype}")
        if vt.ndim != ftype.ndim:
            raise StructFieldError(f"Struct field '{name}' expects an array with {ftype.ndim} dimension(s), got "
                                   f"{vt.ndim} dimension(s)")
        return value
    if isinstance(ftype, T.StructType):
        if getattr(type(value), "_ir_", None) != ftype:
            raise StructFieldError(f"field '{name}' expects struct {ftype.name}")
        return value
    return value


_FAMILY = {T.ArrayKind.ARRAY: "a Warp array", T.ArrayKind.INDEXED: "a Warp indexed array",
           T.ArrayKind.FABRIC: "a Warp Fabric array", T.ArrayKind.FABRIC_INDEXED: "a Warp indexed Fabric array",
           T.ArrayKind.FIXED: "a fixed-size array"}


def _kind_fits(field: T.ArrayKind, value: T.ArrayKind) -> bool:
    # an indexed-array field also takes a plain array (an indexed array without index arrays)
    return field == value or (field is T.ArrayKind.INDEXED and value is T.ArrayKind.ARRAY)


def _array_stub(ftype: T.ArrayType):
    """An annotation (no data) of an array field's type."""
    return RUNTIME_HOOKS["array_stub"](ftype)


class StructVar:
    """A field of a struct type (``S.vars[name]``, as Warp's): ``label``, ``ir`` (its IR type) and ``type`` (the
    annotation: the value class, or an array annotation for array fields)."""

    __slots__ = ("ir", "label")

    def __init__(self, label: str, ir: T.Type) -> None:
        self.label = label
        self.ir = ir

    @property
    def type(self):
        if isinstance(self.ir, T.ArrayType):
            return _array_stub(self.ir)
        if isinstance(self.ir, T.StructType):
            return self.ir.pyclass
        from .composite import class_for

        return class_for(self.ir)

    def __repr__(self) -> str:
        return f"StructVar({self.label!r}, {self.ir})"


def struct(cls):
    """Decorator: turn an annotated class into a weft struct type."""
    if cls.__bases__ != (object,):
        raise StructDefinitionError(f"struct {cls.__name__} derives from {cls.__bases__[0].__name__}: "
                                    "Warp structs must be defined as base classes")

    hints = typing.get_type_hints(cls) if not any(isinstance(v, str) for v in cls.__annotations__.values()) \
        else {k: eval(v, vars(sys.modules[cls.__module__])) if isinstance(v, str) else v
              for k, v in cls.__annotations__.items()}
    fields = []
    for name, ann in cls.__annotations__.items():
        ann = hints.get(name, ann)
        try:
            check_not_array_value(ann, f"field '{name}'")
            ft = to_ir(ann)
        except TypeError as exc:
            raise TypeError(f"struct {cls.__name__} field '{name}': {exc}") from None
        if isinstance(ft, T.ArrayType) and ft.is_generic:
            raise TypeError(f"struct {cls.__name__} field '{name}': array fields need a concrete dtype")
        if isinstance(ft, T.ArrayType) and ft.kind is T.ArrayKind.FIXED:
            # Warp 1.19 accepts the declaration and crashes (SIGSEGV) at the launch; weft refuses it here
            raise TypeError(f"struct {cls.__name__} field '{name}': a wp.fixedarray is a kernel-local array (made "
                            f"with wp.zeros(shape, dtype) in kernel code) and cannot be a struct field; use a "
                            f"wp.array field, or a vector/matrix type for a few values")
        fields.append((name, ft))
    digest = hashlib.sha256(repr((cls.__module__, cls.__qualname__, fields)).encode()).hexdigest()[:10]
    key = "".join(ch if ch.isalnum() else "_" for ch in cls.__name__) + "_" + digest
    ir = T.StructType(cls.__name__, key, tuple(fields))
    # instances are also instances of the decorated class (as in Warp: isinstance(foo, Foo.cls)), whose methods they
    # keep; fields stay in slots, set through StructInstance.__setattr__'s checks
    new_cls = type(cls.__name__, (StructInstance, cls), {
        "__slots__": tuple(n for n, _ in fields), "_ir_": ir, "__doc__": cls.__doc__, "__module__": cls.__module__,
        "__qualname__": cls.__qualname__,
    })
    object.__setattr__(ir, "pyclass", new_cls)
    new_cls.cls = cls
    new_cls.key = cls.__qualname__
    new_cls.vars = {n: StructVar(n, ft) for n, ft in fields}
    BY_MODULE.setdefault(cls.__module__, {})[cls.__qualname__] = new_cls  # a redefinition replaces the class
    return new_cls


#: Python module name -> {qualified name: struct class} (Warp's ``Module.structs``)
BY_MODULE: dict[str, dict[str, type]] = {}
