"""``warp._src.types``: weft's type tables (``wp.types``) plus the scalar base classes and shape check Warp's tests
import from the private path."""

from __future__ import annotations

from ..runtime.annotations import (  # noqa: F401
    _ArrayAnnotation,
    _ArrayAnnotationBase,
    _FabricArrayAnnotation,
    _IndexedArrayAnnotation,
    _IndexedFabricArrayAnnotation,
)
from ..runtime.array import _check_extents
from ..types.generics import Matrix, Quaternion, Transformation, Vector  # noqa: F401
from ..types.reference import Reference  # noqa: F401
from ..types.scalars import Float, Int, Scalar
from ..types_compat import *
from ..types_compat import _np_bfloat16_bits_to_float32, _np_float32_to_bfloat16_bits  # noqa: F401

#: Warp's names for the abstract scalar bases (``float16`` ... ``float64`` derive from ``float_base`` and so on).
scalar_base = Scalar
float_base = Float
int_base = Int



def check_array_shape(shape) -> None:
    """Warp's array-shape validator (private in Warp; some programs call it): the checks ``wp.array`` makes before
    allocating or wrapping memory: non-negative extents that fit the int32 of an array descriptor."""
    shape = tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"Array shapes must be non-negative, got {shape}")
    _check_extents(shape)
