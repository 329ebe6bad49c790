"""Helpers shared by the optimizers and the linear solvers: dtype bookkeeping and flat scalar views.

Everything here either inspects arrays on the host (shapes, dtypes, pointers) or launches kernels, so the
optimizers and solvers that build on it run on any device and can be recorded by graph capture.
"""

from __future__ import annotations

import weft as wp

_FLOAT_SCALARS = (wp.float16, wp.float32, wp.float64)


def scalar_type(dtype):
    """The scalar type of a weft dtype (``vec3`` -> ``float32``, ``float64`` -> ``float64``)."""
    return wp.types.type_scalar_type(dtype)


def compute_type(scalar):
    """The type arithmetic is done in for values stored as ``scalar``: float16 is widened to float32."""
    return wp.float64 if scalar is wp.float64 else wp.float32


def check_gradient(opt: str, k: int, g, param) -> None:
    """A gradient passed to ``opt.step`` must be an array of its parameter's dtype and shape (Warp's errors).

    Raises:
        TypeError: when ``g`` is not an array or its dtype differs from the parameter's.
        ValueError: when its shape differs from the parameter's.
    """
    if not isinstance(g, wp.array):
        raise TypeError(f"{opt} gradient {k}: expected a weft array, got {type(g).__name__}")
    if g.dtype is not param.dtype and not wp.types.types_equal(g.dtype, param.dtype):
        raise TypeError(f"{opt} gradient dtype must match parameter dtype {wp.types.type_repr(param.dtype)}, got "
                        f"{wp.types.type_repr(g.dtype)} (gradient {k})")
    if tuple(g.shape) != tuple(param.shape):
        raise ValueError(f"{opt} gradient shape must match parameter shape {tuple(param.shape)}, got "
                         f"{tuple(g.shape)} (gradient {k})")


def scalar_view(a, what: str = "array"):
    """A 1-D view of ``a``'s memory as its scalar type: ``n`` vec3 values become ``3 n`` floats.

    Raises:
        TypeError: when ``a`` does not hold floating-point values.
        ValueError: when ``a`` is not contiguous (a flat view would not cover its elements).
    """
    if not isinstance(a, wp.array):
        raise TypeError(f"{what}: expected a weft array, got {type(a).__name__}")
    scalar = scalar_type(a.dtype)
    if scalar not in _FLOAT_SCALARS:
        raise TypeError(f"{what}: expected a floating-point dtype (float16/32/64 or a vector/matrix of them), "
                        f"got {a.dtype}")
    if not a.is_contiguous:
        raise ValueError(f"{what}: needs a contiguous array (shape {a.shape}, strides {a.strides}); "
                         "pass a.contiguous() and copy the result back")
    if scalar is a.dtype:
        return a if a.ndim == 1 else a.flatten()
    # A vector/matrix dtype: the same bytes seen as scalars. The caller keeps `a` alive for as long as it uses the
    # view, since a view made from a pointer does not own its memory.
    count = a.size * (wp.types.type_size_in_bytes(a.dtype) // wp.types.type_size_in_bytes(scalar))
    return wp.array(ptr=a.ptr, dtype=scalar, shape=(count,), device=a.device)
