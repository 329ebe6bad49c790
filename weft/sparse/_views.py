"""Flat scalar views of block arrays: every value kernel of ``weft.sparse`` works on 1-D scalar arrays.

A BSR matrix stores its blocks as a 1-D array of ``mat(r, c)`` (or of scalars for 1x1 blocks); vectors are 1-D
arrays of ``vec(n)`` or scalars. Viewing them as flat scalar arrays (same memory, same gradient memory) lets one
small set of kernels serve every block shape, while tapes record the launches against the user's memory.
"""

from __future__ import annotations

import numpy as np

import weft as wp
from weft.runtime.array import _strided_view, np_from_ptr
from weft.types.dtypes import np_layout, resolve_dtype
from weft.types.mapping import scalar_class


def scalar_type_of(dtype):
    """The scalar type of a scalar, vector or matrix dtype."""
    return wp.types.type_scalar_type(dtype)


def flat(a: wp.array, count: int | None = None) -> wp.array:
    """The first ``count`` elements of the 1-D contiguous array ``a`` as a flat scalar array (shared memory/grad)."""
    n = a.shape[0] if count is None else int(count)
    if not a.is_contiguous:
        raise ValueError("sparse values and vectors must be contiguous arrays")
    base, trailing = np_layout(a._ir)
    inner = int(np.prod(trailing)) if trailing else 1
    for d in a.shape[1:]:
        inner *= d
    size = base.itemsize
    out = _strided_view(a, 0, (n * inner,), (size,))
    out._ir = resolve_dtype(scalar_type_of(a.dtype))
    out.dtype = scalar_class(out._ir.name)
    if a.device.impl.host_memory:
        out._np = np_from_ptr(out._ptr, out.shape, out.strides, base, (), a._np)
    if a.grad is not None:
        out._grad = flat(a.grad, count)
    return out

