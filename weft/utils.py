"""``wp.utils``: Warp's array utilities (scan, sort, run-length encoding, sums, inner products, casts).

They run on the host through NumPy: on the CPU they work in place on the arrays' memory (zero-copy), on CUDA
they copy through the host. They are not recorded on a ``wp.Tape`` and not captured in graphs (as in Warp,
where these are plain library calls without adjoints).
"""

from __future__ import annotations

import hashlib

import numpy as np

from .coloring import GraphColoringAlgorithm, graph_coloring_assign, graph_coloring_balance, graph_coloring_get_groups
from .errors import Error
from .frontend.deps import source_text
from .frontend.func import make_func
from .module import get_module
from .runtime.array import array
from .runtime.copy import copy
from .runtime.cuda_api import AllocatorRmm
from .types.aliases import NAMED_TYPES
from .types.scalars import float32, float64, int32, int64, uint32, uint64

transformf = NAMED_TYPES["transformf"]

__all__ = [
    "AllocatorRmm",
    "GraphColoringAlgorithm",
    "array_cast",
    "array_inner",
    "array_scan",
    "array_sum",
    "create_warp_function",
    "graph_coloring_assign",
    "graph_coloring_balance",
    "graph_coloring_get_groups",
    "radix_sort_pairs",
    "runlength_encode",
    "segmented_sort_pairs",
    "transform_expand",
]


def _flat(a) -> np.ndarray:
    """The array's elements as a NumPy array of shape (size, *component shape)."""
    data = a.numpy()
    comp = data.shape[a.ndim:]
    return data.reshape((a.size,) + comp)


def _store(dst, values: np.ndarray, count: int | None = None) -> None:
    """Write ``values`` (leading axis = elements) into the first ``count`` elements of ``dst``."""

    values = np.asarray(values)
    n = values.shape[0] if count is None else count
    if dst.device.impl.host_memory and dst.is_contiguous:
        flat = dst.numpy().reshape((dst.size,) + dst.numpy().shape[dst.ndim:])
        flat[:n] = values[:n].reshape(flat[:n].shape)
        return
    host = array(values[:n].reshape((n,) + dst.numpy().shape[dst.ndim:]) if dst.device.impl.host_memory else values[:n],
                 dtype=dst.dtype, device=dst.device)
    copy(dst, host, count=n)


def _name(dtype) -> str:
    from .types_compat import type_repr

    return type_repr(dtype)


def _scalar(dtype):
    from .types_compat import type_scalar_type

    return type_scalar_type(dtype)


def _same_type(a, b) -> bool:
    from .types_compat import types_equal

    return types_equal(a, b)


def _check_float_reduction(dtype) -> None:
    """Warp's sums and inner products reduce float32 / float64 (scalars or their vectors and matrices)."""
    if _scalar(dtype) not in (float32, float64):
        raise RuntimeError(f"Unsupported data type: {_name(dtype)}")


def _check_same_device(*arrays) -> None:
    devs = {str(a.device) for a in arrays if a is not None}
    if len(devs) > 1:
        raise RuntimeError(f"array storage devices do not match ({', '.join(sorted(devs))})")


def array_scan(in_array, out_array, inclusive: bool = True) -> None:
    """Prefix sum of ``in_array`` into ``out_array`` (inclusive or exclusive); vectors are scanned per component."""
    _check_same_device(in_array, out_array)
    if in_array.size != out_array.size:
        raise RuntimeError(f"In and out array storage sizes do not match ({in_array.size} vs {out_array.size})")
    if not _same_type(in_array.dtype, out_array.dtype):
        raise RuntimeError(f"In and out array data types do not match ({_name(in_array.dtype)} vs "
                           f"{_name(out_array.dtype)})")
    if in_array.size == 0:
        return
    from .types_compat import type_is_vector

    scalar = _scalar(in_array.dtype)
    if not (scalar is in_array.dtype or type_is_vector(in_array.dtype)) or scalar not in (int32, int64, float32,
                                                                                            float64):
        raise RuntimeError(f"Unsupported data type: {_name(in_array.dtype)}")
    x = _flat(in_array)
    s = np.cumsum(x, axis=0, dtype=x.dtype)
    if not inclusive:
        s = np.concatenate([np.zeros_like(s[:1]), s[:-1]], axis=0)
    _store(out_array, s)


def radix_sort_pairs(keys, values, count: int, begin_bit: int = 0, end_bit: int | None = None) -> None:
    """Stable sort of the first ``count`` (key, value) pairs by key (arrays hold at least ``2 * count``)."""
    _check_same_device(keys, values)
    if count == 0:
        return
    if keys.size < 2 * count or values.size < 2 * count:
        raise RuntimeError("Keys and values array storage must be large enough to contain 2*count elements")
    key_bits = 32 if keys.dtype in (int32, uint32, float32) else 64 if keys.dtype in (int64, uint64, float64) else None
    value_bits = {int32: 32, uint32: 32, float32: 32, int64: 64, uint64: 64, float64: 64}.get(values.dtype)
    if key_bits is None or value_bits is None:
        raise RuntimeError(f"Unsupported keys and values data types: {_name(keys.dtype)}, {_name(values.dtype)}")
    for what, a in (("keys", keys), ("values", values)):
        if not a.is_contiguous:
            raise RuntimeError(f"radix_sort_pairs() requires a contiguous {what} array, got non-contiguous {what} "
                               f"with data types: {_name(keys.dtype)}, {_name(values.dtype)}")
    end = key_bits if end_bit is None else end_bit
    if not isinstance(begin_bit, int) or not isinstance(end, int):
        raise RuntimeError("begin_bit and end_bit must be integers")  # noqa: TRY004 - Warp's error type
    if not 0 <= begin_bit <= end <= key_bits:
        raise RuntimeError(f"Invalid radix sort bit range [{begin_bit}, {end}) for {key_bits}-bit keys")
    if begin_bit == end:
        return
    k = _flat(keys)[:count].copy()
    v = _flat(values)[:count].copy()
    sort_key = k
    if (begin_bit, end_bit) != (0, None) and np.issubdtype(k.dtype, np.integer):
        width = k.dtype.itemsize * 8
        end = width if end_bit is None else end_bit
        u = k.view(np.dtype(f"u{k.dtype.itemsize}"))
        mask = (np.uint64(1) << np.uint64(end - begin_bit)) - np.uint64(1) if end - begin_bit < 64 else ~np.uint64(0)
        sort_key = (u.astype(np.uint64) >> np.uint64(begin_bit)) & mask
    order = np.argsort(sort_key, kind="stable")
    _store(keys, k[order], count)
    _store(values, v[order], count)


def segmented_sort_pairs(keys, values, count: int, segment_start_indices, segment_end_indices=None) -> None:
    """Stable sort of (key, value) pairs within each segment ``[start[i], end[i])`` (end defaults to the next start
    or ``count``); elements outside the segments are left alone."""
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)):
        raise TypeError(f"count must be an integer, got {type(count).__name__}")
    if count < 0:
        raise ValueError(f"count must be non-negative, got {count}")
    if count > 2**31 - 1:
        raise ValueError(f"count must not exceed {2**31 - 1}, got {count}")
    _check_same_device(keys, values, segment_start_indices, segment_end_indices)
    if count == 0:
        return
    if keys.size < 2 * count or values.size < 2 * count:
        raise RuntimeError("Array storage must be large enough to contain 2*count elements")
    for what, a in (("keys", keys), ("values", values)):
        if not a.is_contiguous:
            raise RuntimeError(f"segmented_sort_pairs() requires a contiguous {what} array")
    for what, a in (("segment_start_indices", segment_start_indices), ("segment_end_indices", segment_end_indices)):
        if a is None:
            continue
        if a.ndim != 1:
            raise RuntimeError(f"{what} must be one-dimensional")
        if not a.is_contiguous:
            raise RuntimeError(f"segmented_sort_pairs() requires a contiguous {what} array")
    if segment_end_indices is not None and segment_start_indices.size != segment_end_indices.size:
        raise RuntimeError(f"segment_start_indices and segment_end_indices must have the same size "
                           f"({segment_start_indices.size} vs {segment_end_indices.size})")
    if keys.dtype not in (int32, float32) or values.dtype is not int32:
        raise RuntimeError(f"Unsupported data type: {_name(keys.dtype)}")
    starts = segment_start_indices.numpy().astype(np.int64)
    if segment_end_indices is not None:
        ends = segment_end_indices.numpy().astype(np.int64)
    else:
        ends = np.append(starts[1:], count) if starts.size else starts
    k = _flat(keys)[:count].copy()
    v = _flat(values)[:count].copy()
    for i, (s, e) in enumerate(zip(starts.tolist(), ends.tolist())):
        if not 0 <= s <= e <= count:
            raise ValueError(f"Invalid segment range at index {i}: [{s}, {e}) for count {count}")
        order = np.argsort(k[s:e], kind="stable")
        k[s:e] = k[s:e][order]
        v[s:e] = v[s:e][order]
    _store(keys, k, count)
    _store(values, v, count)


def runlength_encode(values, run_values, run_lengths, run_count=None, value_count: int | None = None):
    """Run-length encode ``values``: unique consecutive values and their counts. Returns the number of runs (or
    ``run_count`` when given, which receives it)."""
    _check_same_device(values, run_values, run_lengths, run_count)
    if value_count is None:
        value_count = values.size
    elif value_count < 0:
        raise RuntimeError(f"value_count must be non-negative, got {value_count}")
    if run_values.size < value_count or run_lengths.size < value_count:
        raise RuntimeError(f"Output array storage sizes must be at least equal to value_count ({value_count})")
    if not _same_type(values.dtype, run_values.dtype):
        raise RuntimeError(f"values and run_values data types do not match ({_name(values.dtype)} vs "
                           f"{_name(run_values.dtype)})")
    if run_lengths.dtype is not int32:
        raise RuntimeError("run_lengths array must be of type int32")
    if run_count is not None and run_count.dtype is not int32:
        raise RuntimeError("run_count array must be of type int32")
    x = _flat(values)[:value_count]
    if value_count == 0:
        n = 0
    else:
        change = np.ones(value_count, dtype=bool)
        change[1:] = np.any((x[1:] != x[:-1]).reshape(value_count - 1, -1), axis=1)
        starts = np.flatnonzero(change)
        lengths = np.diff(np.append(starts, value_count))
        n = int(starts.size)
        _store(run_values, x[starts], n)
        _store(run_lengths, lengths.astype(_flat(run_lengths).dtype), n)
    if run_count is not None:
        _store(run_count, np.array([n], dtype=_flat(run_count).dtype), 1)
        return run_count
    return n


def _reduce(name, a, b, out, count, axis):
    _check_float_reduction(a.dtype)
    if out is not None:
        want = a.dtype if b is None else _scalar(a.dtype)
        if out.dtype is not want:
            raise RuntimeError(f"out array should have type {want.__name__}")
        if axis is None:
            shape = (1,)
        else:
            shape = list(a.shape)
            shape[axis % a.ndim] = 1
            shape = tuple(shape)
        if tuple(out.shape) != shape:
            raise RuntimeError(f"out array should have shape {shape}")
    if axis is not None:
        if not -a.ndim <= axis < a.ndim:
            raise IndexError(f"{name}() axis {axis} is out of bounds for an array with {a.ndim} dimensions")
        axis = axis % a.ndim
    data = a.numpy()
    comp_axes = tuple(range(a.ndim, data.ndim))
    if axis is None:
        x = _flat(a)
        y = _flat(b) if b is not None else None
        n = a.size if count is None else count
        x = x[:n]
        term = x if y is None else x * y[:n]
        if y is not None and comp_axes:
            term = term.sum(axis=tuple(range(1, term.ndim)))  # per element: its components' products (n may be 0)
        result = term.sum(axis=0, dtype=np.float64 if data.dtype == np.float64 else data.dtype)
        if out is None:
            return result.item() if np.ndim(result) == 0 else _as_value(a, result)
        _store(out, np.asarray(result).reshape((1,) + np.shape(result)), 1)
        return out
    x = data if count is None else np.take(data, range(count), axis=axis)
    if b is not None:
        y = b.numpy() if count is None else np.take(b.numpy(), range(count), axis=axis)
        x = x * y
        if comp_axes:
            x = x.sum(axis=comp_axes)
    result = x.sum(axis=axis, keepdims=True)  # the reduced axis stays, with length 1 (as Warp)
    if out is None:

        out_dtype = a.dtype if b is None else _scalar_dtype(a)
        return array(np.ascontiguousarray(result), dtype=out_dtype, device=a.device)
    _store(out, np.asarray(result).reshape((-1,) + np.shape(result)[a.ndim:]))
    return out


def _scalar_dtype(a):
    from .types_compat import type_scalar_type

    return type_scalar_type(a.dtype)


def _as_value(a, result):
    return a.dtype(*np.asarray(result).reshape(-1)) if hasattr(a.dtype, "_length_") else result


def array_sum(values, out=None, value_count: int | None = None, axis: int | None = None):
    """Sum of the array's elements (a Python number or composite value), or along ``axis`` into an array."""
    return _reduce("array_sum", values, None, out, value_count, axis)


def array_inner(a, b, out=None, count: int | None = None, axis: int | None = None):
    """Inner product of two arrays of the same shape (vectors contribute their dot products)."""
    if a.shape != b.shape:
        raise ValueError(f"array_inner() arguments must have the same shape, got {a.shape} and {b.shape}")
    if not _same_type(a.dtype, b.dtype):
        raise RuntimeError(f"A and b array data types do not match ({_name(a.dtype)} vs {_name(b.dtype)})")
    return _reduce("array_inner", a, b, out, count, axis)


def array_cast(in_array, out_array, count: int | None = None) -> None:
    """Element-wise conversion of ``in_array`` into ``out_array`` (of another dtype), as Warp's ``array_cast``:
    arrays of the same number of dimensions and element shape convert element by element (multi-dimensional ones
    whole and of equal shape); otherwise both are taken as flat runs of scalars and ``count`` (elements of
    ``in_array``) converts that many elements' scalars."""
    _check_same_device(in_array, out_array)
    x = in_array.numpy()
    in_comp, out_comp = x.shape[in_array.ndim:], out_array.numpy().shape[out_array.ndim:]
    flat = in_array.ndim != out_array.ndim or in_comp != out_comp
    if flat:
        x = x.reshape(-1)
        n_in, n_out = x.size, int(np.prod(out_array.numpy().shape, dtype=np.int64))
        if count is not None:
            count *= int(np.prod(in_comp, dtype=np.int64))
    else:
        n_in, n_out = in_array.size, out_array.size
    n_cast = n_in if count is None else count
    if flat or in_array.ndim == 1:
        if n_cast > n_in or n_cast > n_out:
            raise RuntimeError(f"Cast count ({n_cast}) exceeds the input size ({n_in}) or output size ({n_out})")
    elif n_cast < n_in:
        raise RuntimeError("Partial cast is not supported for arrays with more than one dimension")
    elif in_array.shape != out_array.shape:
        raise RuntimeError(f"Array shapes do not match ({in_array.shape} vs {out_array.shape})")
    if not out_array.device.impl.host_memory or not out_array.is_contiguous:
        raise Error("array_cast into a non-contiguous or CUDA array is not supported by weft")
    dst = out_array.numpy().reshape(-1) if flat else out_array.numpy().reshape(out_array.size, -1)
    src = x if flat else x.reshape(in_array.size, -1)
    dst[:n_cast] = src[:n_cast].astype(dst.dtype)


def create_warp_function(func):
    """Turn a Python function (a lambda too) into a ``wp.func``, returned with its module as Warp does. Its key is
    ``func_<16 hex digits>``, a hash of its source text (of its byte code when the source cannot be read), so the
    same function gets the same key in every process."""
    text = source_text(func)
    digest = hashlib.sha256(text.encode() if text is not None else func.__code__.co_code).hexdigest()
    f = make_func(func, key=f"func_{digest[:16]}")
    return f, get_module(func.__module__)


def transform_expand(t):
    """A transform from 7 numbers (position x, y, z, then quaternion x, y, z, w), as Warp's ``transform_expand``."""
    values = [float(v) for v in t]
    if len(values) != 7:
        raise ValueError(f"transform_expand expects 7 values (p then q), got {len(values)}")
    return transformf(p=values[:3], q=values[3:])
