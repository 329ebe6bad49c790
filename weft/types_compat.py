"""``wp.types``: the type classes and helpers under the module path Warp programs use."""

from __future__ import annotations

from .runtime.array import array, array1d, array2d, array3d, array4d
from .types.aliases import NAMED_TYPES as _NAMED
from .types.composite import MatrixBase, QuatBase, TransformBase, VectorBase, matrix, quaternion, transformation, vector
from .types.scalars import (
    Float,
    Int,
    Scalar,
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

globals().update(_NAMED)
float_types = (float16, float32, float64)
int_types = (int8, uint8, int16, uint16, int32, uint32, int64, uint64)
scalar_types = int_types + float_types
vector_types = tuple(_NAMED.values())


def type_is_vector(t) -> bool:
    return isinstance(t, type) and issubclass(t, VectorBase)


def type_is_matrix(t) -> bool:
    return isinstance(t, type) and issubclass(t, MatrixBase)


def types_equal(a, b, match_generic=False) -> bool:
    from .types.mapping import to_ir

    return to_ir(a) == to_ir(b)


def type_size_in_bytes(t) -> int:
    from .runtime.dtypes import element_size
    from .types.mapping import to_ir

    return element_size(to_ir(t))


def type_scalar_type(t):
    return getattr(t, "_wp_scalar_type_", t)


def type_length(t) -> int:
    return getattr(t, "_length_", 1)
