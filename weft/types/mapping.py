"""Map Python annotations, dtypes and values onto IR types."""

from __future__ import annotations

import typing

import numpy as np

from ..ir import types as T
from . import scalars as S


def scalar_class(dtype) -> type:
    """Resolve ``float``, ``np.float32``, ``wp.float32``, ``"float32"`` ... to a weft scalar class."""
    if isinstance(dtype, type) and issubclass(dtype, S.Scalar) and dtype._ir_ is not None:
        return dtype
    if dtype in S.PY_ALIASES:
        return S.PY_ALIASES[dtype]
    if isinstance(dtype, str) and dtype in S.BY_NAME:
        return S.BY_NAME[dtype]
    if isinstance(dtype, np.dtype) and dtype.type in S.PY_ALIASES:
        return S.PY_ALIASES[dtype.type]
    if getattr(dtype, "__name__", None) == "bfloat16" or (isinstance(dtype, np.dtype) and dtype.name == "bfloat16"):
        return S.bfloat16  # ml_dtypes.bfloat16
    raise TypeError(f"{dtype!r} is not a scalar type")


def to_ir(annotation) -> T.Type:
    """The IR type of a kernel/func annotation or array dtype. Raises TypeError if it is not a weft type."""
    if annotation is typing.Any:
        return T.GenericType(T.GenericKind.ANY)
    if isinstance(annotation, T.Type):
        return annotation
    if annotation is S.Scalar:
        return T.GenericType(T.GenericKind.SCALAR)
    if annotation is S.Float:
        return T.GenericType(T.GenericKind.FLOAT)
    if annotation is S.Int:
        return T.GenericType(T.GenericKind.INT)
    ir = getattr(annotation, "_ir_", None)
    if isinstance(ir, T.Type):
        return ir
    if annotation in S.PY_ALIASES:
        return S.PY_ALIASES[annotation]._ir_
    if isinstance(annotation, np.dtype) and annotation.type in S.PY_ALIASES:
        return S.PY_ALIASES[annotation.type]._ir_
    # an array annotation object (wp.array(dtype=float, ndim=2))
    ann_ir = getattr(annotation, "_annotation_ir", None)
    if callable(ann_ir):
        return ann_ir()
    raise TypeError(f"{annotation!r} is not a weft type")


def type_of_value(value) -> T.Type:
    """The IR type a Python value takes when passed to a kernel or captured as a constant."""
    if isinstance(value, (bool, np.bool_, S.bool_value)):
        return T.BOOL
    if isinstance(value, np.generic):  # before float: np.float64 subclasses Python float
        return scalar_class(type(value))._ir_
    if isinstance(value, int):
        return T.INT32
    if isinstance(value, float):
        return T.FLOAT32
    ir = getattr(type(value), "_ir_", None)
    if isinstance(ir, T.Type):
        return ir
    value_ir = getattr(value, "_value_ir", None)
    if callable(value_ir):
        return value_ir()
    raise TypeError(f"a value of type {type(value).__name__} cannot be used in a kernel")


def check_not_array_value(ann, where: str) -> None:
    """An array with data (``a: my_array``) used as a type annotation: a TypeError naming ``where``."""
    if getattr(ann, "_annotation", True) is False and callable(getattr(ann, "_value_ir", None)):
        raise TypeError(f"{where}: the annotation is an array instance ({type(ann).__name__} with data), not a type "
                        f"annotation; use e.g. wp.array[float]")
