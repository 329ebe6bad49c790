"""Kernel-language forms of the tile builtins: Warp's keyword signatures parsed into registry ops.

Shapes, dtypes and mapped functions are compile-time values (evaluated with ``eval_static``) carried in op
attributes; offsets and scalars are runtime values. In-place builtins (``tile_fft(a)``, ``tile_matmul(a, b,
out)``) rebind their target name to the op's result, so the IR stays in SSA form.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import numpy as np

from ..errors import CompileError, KernelTypeError, KernelValueError
from ..ir import types as T
from ..ir.nodes import Const, Let, Stmt, Var
from ..ops import registry
from ..ops.forms import Form, LanguageForm, Syntax, language_form
from ..types.mapping import to_ir
from ..typing.resolve import Weak
from . import tile_slices, tile_stack
from .calls import _builtin, inline
from .forms import LANGUAGE_RULES, OP_RULES
from .func import Func


@dataclass(frozen=True, eq=False)
class TileBody:
    """A function applied per element by ``tile_map`` / ``tile_reduce``: lowered once on element parameters."""

    params: tuple[Var, ...]
    block: list[Stmt]
    result: object  # Var or Const
    name: str = ""
    #: the identity of a builtin's binary op (``Op.identity``): what a reduction of an empty slice gives; a @wp.func
    #: declares none
    identity: registry.Identity = registry.Identity.NONE


def block_dim(lw) -> int:
    bd = lw.options.get("block_dim")
    return int(bd) if bd else 256


def _mark(lw) -> None:
    lw.uses_tiles = True


def _bind(lw, node: ast.Call, name: str, params: list[str], required: int) -> dict:
    """Map the call's positional and keyword arguments to parameter names (values are AST nodes)."""
    if any(isinstance(a, ast.Starred) for a in node.args):
        raise lw.error(f"star-arguments are not supported in wp.{name}()", node)
    if len(node.args) > len(params):
        raise lw.error(f"wp.{name}() takes at most {len(params)} arguments ({', '.join(params)}), "
                       f"got {len(node.args)}", node)
    out = dict(zip(params, node.args))
    for kw in node.keywords:
        if kw.arg not in params:
            raise lw.error(f"wp.{name}() got an unexpected keyword argument '{kw.arg}'", kw.value,
                           hint="parameters: " + ", ".join(params))
        if kw.arg in out:
            raise lw.error(f"wp.{name}() got multiple values for '{kw.arg}'", kw.value)
        out[kw.arg] = kw.value
    missing = [p for p in params[:required] if p not in out]
    if missing:
        raise lw.error(f"wp.{name}() is missing the argument '{missing[0]}'", node)
    return out


def static_shape(lw, node: ast.AST, what: str = "shape") -> tuple[int, ...]:
    """A tile shape: an int or tuple of ints known at compile time."""
    try:
        value = lw.eval_static(node)
    except CompileError:
        raise lw.error(f"tile {what} must be a compile-time constant", node,
                       hint="use literals, module-level constants (wp.constant) or wp.static(...); tile shapes "
                            "fix the generated code") from None
    if isinstance(value, Weak):
        value = value.value
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        shape = (int(value),)
    elif isinstance(value, (tuple, list)) and all(isinstance(v, (int, np.integer)) for v in value):
        shape = tuple(int(v) for v in value)
    else:
        raise lw.error(f"tile {what} must be an int or a tuple of ints, got {value!r}", node)
    if not 1 <= len(shape) <= 4 or any(s <= 0 for s in shape):
        raise lw.error(f"tile {what} {shape} must have 1 to 4 positive dimensions", node)
    return shape


def _static_dtype(lw, node, default=T.FLOAT32) -> T.Type:
    if node is None:
        return default
    try:
        return to_ir(lw.eval_static(node))
    except CompileError:
        raise
    except TypeError as exc:
        raise lw.error(f"dtype: {exc}", node) from None


def _offsets(lw, node, ndim: int, what: str = "offset") -> list:
    if node is None:
        return [Const(0, T.INT32)] * ndim
    value = lw.visit(node)
    parts = list(value) if isinstance(value, tuple) else [value]
    if len(parts) != ndim:
        raise lw.error(f"{what} has {len(parts)} entries but the tile has {ndim} dimensions", node)
    out = []
    for p in parts:
        v = lw.operand(p, node, want=T.INT32)
        if not (isinstance(v.type, T.ScalarType) and v.type.is_int):
            raise lw.error(f"{what} entries must be integers, got {v.type}", node)
        if v.type != T.INT32:
            v = lw.op("cast", [v], attrs=(T.INT32,), node=node)
        out.append(v)
    return out


def _tile_value(lw, node, fname: str, what: str = "tile"):
    v = lw.operand(lw.visit(node), node)
    if not isinstance(v.type, T.TileType):
        raise lw.error(f"wp.{fname}() expects a tile as '{what}', got {v.type}", node)
    return v


def _array_value(lw, node, fname: str):
    v = lw.operand(lw.visit(node), node)
    if not (isinstance(v.type, T.ArrayType) and v.type.kind is T.ArrayKind.ARRAY):
        raise lw.error(f"wp.{fname}() expects an array, got {v.type}", node)
    return v


def _store_target(lw, target: ast.AST, value, fname: str) -> None:
    if not isinstance(target, (ast.Name, ast.Attribute, ast.Subscript)):
        raise lw.error(f"the tile updated in place by wp.{fname}() must be a variable", target)
    lw.store(target, value)


# ---------------------------------------------------------------------------------------------- storage
# weft keeps every tile in one kind of storage (per lane on the CPU, shared memory for cooperative CUDA ops); the
# ``storage=`` a tile was made with is remembered only for what Warp shows of it: ``print(t)``'s storage field
def _note_storage(lw, a: dict, result):
    if "storage" in a:
        storage = lw.eval_static(a["storage"])
        if storage not in ("register", "shared"):
            raise lw.error(f"storage must be 'register' or 'shared', got {storage!r}", a["storage"],
                           kind=KernelValueError)
        lw.__dict__.setdefault("_tile_storage", {})[result.id] = storage
    return result


def tile_storage(lw, tile) -> str:
    """The storage a tile was made with (``storage=`` of its constructor or load), ``"register"`` otherwise."""
    return lw.__dict__.get("_tile_storage", {}).get(getattr(tile, "id", None), "register")


# ---------------------------------------------------------------------------------------------- memory
def _tile_load(lw, node, name: str, syntax: Syntax):
    _mark(lw)
    a = _bind(lw, node, "tile_load", ["a", "shape", "offset", "storage", "bounds_check", "aligned"], 2)
    arr = _array_value(lw, a["a"], "tile_load")
    shape = static_shape(lw, a["shape"])
    if len(shape) != arr.type.ndim:
        raise lw.error(f"tile_load of a {arr.type.ndim}-D array needs a {arr.type.ndim}-D shape, got {shape}",
                       a["shape"])
    offs = _offsets(lw, a.get("offset"), len(shape))
    return _note_storage(lw, a, lw.op("tile_load", [arr, *offs], attrs=(shape,), node=node))


def _tile_store(lw, node, name: str, syntax: Syntax):
    _mark(lw)
    a = _bind(lw, node, name, ["a", "t", "offset", "bounds_check", "aligned"], 2)  # hints: every access is checked
    arr = _array_value(lw, a["a"], name)
    t = _tile_value(lw, a["t"], name, "t")
    if len(t.type.shape) != arr.type.ndim:
        raise lw.error(f"wp.{name}() of a {len(t.type.shape)}-D tile into a {arr.type.ndim}-D array", node,
                       hint="the tile must have one dimension per array dimension")
    if t.type.dtype != arr.type.dtype:
        raise lw.error(f"wp.{name}(): the tile holds {t.type.dtype} but the array holds {arr.type.dtype}", node)
    offs = _offsets(lw, a.get("offset"), len(t.type.shape))
    return lw.op(name, [arr, t, *offs], node=node)


def _static_axis(lw, a: dict, ndim: int, name: str) -> int:
    if "axis" not in a:
        return 0
    axis = _static_ints(lw, a["axis"], f"the axis of wp.{name}()")
    if len(axis) != 1 or not -ndim <= axis[0] < ndim:
        raise lw.error(f"wp.{name}(): axis {axis[0] if len(axis) == 1 else axis} is out of range for a {ndim}-D array",
                       a["axis"], kind=KernelValueError)
    return axis[0] % ndim


def _index_tile(lw, node, name: str, n: int):
    idx = _tile_value(lw, node, name, "indices")
    if idx.type.dtype != T.INT32 or idx.type.shape != (n,):
        raise lw.error(f"wp.{name}(): indices must be a 1-D tile of {n} int32 values (the tile's extent along axis), "
                       f"got {idx.type}", node)
    return idx


def _tile_load_indexed(lw, node, name: str, syntax: Syntax):
    _mark(lw)
    a = _bind(lw, node, name, ["a", "indices", "shape", "offset", "axis", "storage"], 3)
    arr = _array_value(lw, a["a"], name)
    shape = static_shape(lw, a["shape"])
    if len(shape) != arr.type.ndim:
        raise lw.error(f"wp.{name}() of a {arr.type.ndim}-D array needs a {arr.type.ndim}-D shape, got {shape}",
                       a["shape"])
    axis = _static_axis(lw, a, len(shape), name)
    idx = _index_tile(lw, a["indices"], name, shape[axis])
    offs = _offsets(lw, a.get("offset"), len(shape))
    return lw.op(name, [arr, idx, *offs], attrs=(shape, axis), node=node)


def _tile_store_indexed(lw, node, name: str, syntax: Syntax):
    _mark(lw)
    a = _bind(lw, node, name, ["a", "indices", "t", "offset", "axis"], 3)
    arr = _array_value(lw, a["a"], name)
    t = _tile_value(lw, a["t"], name, "t")
    if len(t.type.shape) != arr.type.ndim:
        raise lw.error(f"wp.{name}() of a {len(t.type.shape)}-D tile into a {arr.type.ndim}-D array", node)
    if t.type.dtype != arr.type.dtype:
        raise lw.error(f"wp.{name}(): the tile holds {t.type.dtype} but the array holds {arr.type.dtype}", node)
    axis = _static_axis(lw, a, arr.type.ndim, name)
    idx = _index_tile(lw, a["indices"], name, t.type.shape[axis])
    offs = _offsets(lw, a.get("offset"), arr.type.ndim)
    return lw.op(name, [arr, idx, t, *offs], attrs=(axis,), node=node)


# ---------------------------------------------------------------------------------------------- construction
def _filled(lw, node, name: str, syntax: Syntax):
    """tile_zeros / tile_ones / tile_full: ``syntax.params`` name the parameters (a ``value`` for tile_full)."""
    _mark(lw)
    a = _bind(lw, node, name, list(syntax.params), len(syntax.params) - len(syntax.defaults))
    shape = static_shape(lw, a["shape"])
    if "value" in a:
        return _note_storage(lw, a, _full(lw, node, name, a, shape))
    return _note_storage(lw, a, lw.op(name, [], attrs=(T.TileType(_static_dtype(lw, a.get("dtype")), shape),),
                                      node=node))


def _full(lw, node, name: str, a: dict, shape):
    """``tile_full(shape, value, dtype=...)``: without ``dtype`` the tile takes the value's type (as in Warp); with
    it, a scalar value is converted."""
    raw = lw.visit(a["value"])
    if "dtype" in a:
        dtype = _static_dtype(lw, a["dtype"])
        value = lw.operand(raw, a["value"], want=T.scalar_of(dtype))
    else:
        value = lw.operand(raw, a["value"])
        dtype = value.type
    if value.type != dtype:
        if isinstance(value.type, T.ScalarType) and isinstance(dtype, T.ScalarType):
            value = lw.op("cast", [value], attrs=(dtype,), node=node)
        elif isinstance(value.type, T.ScalarType) and not isinstance(dtype, T.ScalarType):
            value = lw.op("construct", [value], attrs=(dtype,), node=node)
        else:
            raise lw.error(f"{name} value is {value.type} but the tile holds {dtype}", a["value"])
    return lw.op(name, [value], attrs=(T.TileType(dtype, shape),), node=node)


def _tile_empty(lw, node, form: LanguageForm):
    """``tile_empty(shape, dtype=float, storage=...)``: a tile whose contents are undefined until written; a zero
    tile here."""
    _mark(lw)
    a = _bind(lw, node, form.name, ["shape", "dtype", "storage"], 1)
    t = T.TileType(_static_dtype(lw, a.get("dtype")), static_shape(lw, a["shape"]))
    return lw.op(form.arg, [], attrs=(t,), node=node)


def _tile_arange(lw, node, name: str, syntax: Syntax):
    """``tile_arange(stop)`` / ``(start, stop[, step], dtype=float32)``: compile-time bounds, represented in the
    output type before the length is counted (Warp's rules: an exact integer ceiling for integer types, the quotient
    rounded to the float type for float types; at least one element)."""
    _mark(lw)
    kw = {k.arg: k.value for k in node.keywords}
    unknown = set(kw) - {"start", "stop", "step", "dtype", "storage"}
    if unknown:
        raise lw.error(f"wp.tile_arange() got an unexpected keyword argument '{min(unknown)}'", node)
    if len(node.args) > 3:
        raise lw.error(f"tile_arange() accepts at most 3 positional arguments, got {len(node.args)}", node,
                       kind=KernelTypeError)
    names = {1: ("stop",), 2: ("start", "stop"), 3: ("start", "stop", "step")}.get(len(node.args), ())
    nodes = dict(zip(names, node.args))
    nodes.update({k: kw[k] for k in ("start", "stop", "step") if k in kw})
    if "stop" not in nodes:
        raise lw.error("tile_arange() requires at least one positional argument specifying the range", node,
                       kind=KernelTypeError)
    dtype = _static_dtype(lw, kw.get("dtype"), T.FLOAT32)
    if not isinstance(dtype, T.ScalarType) or dtype == T.BOOL:
        raise lw.error(f"tile_arange() requires a numeric scalar dtype, but got {dtype}", node, kind=KernelTypeError)
    values = {"start": 0, "step": 1}
    for k, n in nodes.items():
        try:
            v = lw.eval_static(n)
        except CompileError:
            raise lw.error(f"tile_arange() arguments must be compile time constants, but {k} is not", n,
                           kind=KernelTypeError) from None
        values[k] = _arange_value(lw, k, _plain_number(v), dtype, n)
    start, stop, step = values["start"], values["stop"], values["step"]
    if step == 0:
        raise lw.error("tile_arange() step cannot be zero", node, kind=KernelValueError)
    if (step > 0 and start >= stop) or (step < 0 and start <= stop):
        raise lw.error(f"tile_arange() requires a non-empty range, but start={start}, stop={stop}, step={step} "
                       "produces no elements; zero-length tile dimensions are not supported.", node,
                       kind=KernelValueError)
    if dtype.is_float:
        quotient = float(_np_scalar(dtype)((stop - start) / step))
        if not np.isfinite(quotient):
            raise lw.error(f"tile_arange() start={start}, stop={stop}, step={step} spans more elements than can be "
                           "counted; the step is too small for the range.", node, kind=KernelValueError)
        n = int(np.ceil(quotient))
    else:
        n = -((stop - start) // -step)
    t = T.TileType(dtype, (max(1, n),))
    return lw.op("tile_arange", [Const(start, dtype), Const(step, dtype)], attrs=(t,), node=node)


def _np_scalar(dtype):
    """The NumPy scalar type holding values of a weft scalar type (bfloat16 approximated by float32)."""
    try:
        return np.dtype(dtype.name).type
    except TypeError:
        return np.float32


def _plain_number(v):
    """A compile-time bound as a Python number (literals, wp.constant scalars, NumPy scalars)."""
    v = v.value if isinstance(v, Weak) else v
    if isinstance(v, np.generic):
        return v.item()
    if not isinstance(v, (int, float)) and isinstance(getattr(v, "value", None), (int, float, np.generic)):
        v = v.value
        return v.item() if isinstance(v, np.generic) else v
    return v


def _arange_value(lw, name: str, v, dtype, node):
    """A tile_arange bound as the output type represents it (an error when it cannot)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise lw.error(f"tile_arange() {name} must be a number, got {v!r}", node, kind=KernelTypeError)
    out_of_range = f"tile_arange() {name}={v} is out of range for the output type {dtype}"
    np_type = _np_scalar(dtype)
    if not dtype.is_float:
        if isinstance(v, float):
            if not v.is_integer():
                raise lw.error(f"tile_arange() {name}={v} has a fractional part, which the integer output type "
                               f"{dtype} cannot represent", node, kind=KernelValueError)
            v = int(v)
        info = np.iinfo(np_type)
        if not info.min <= v <= info.max:
            raise lw.error(out_of_range, node, kind=KernelValueError)
        return v
    if isinstance(v, int):
        if not -(2**63) <= v < 2**64:
            raise lw.error(f"tile_arange() {name}={v} is too wide to use as an integer bound; write it as a "
                           f"floating-point literal to build a {dtype} range", node, kind=KernelValueError)
        exact = np.int64(v) if v < 0 else np.uint64(v)  # rounded once, straight to the output type
        with np.errstate(over="ignore"):
            represented = float(np_type(exact))
    else:
        with np.errstate(over="ignore"):
            represented = float(np_type(v))
    if np.isfinite(v) and not np.isfinite(represented):
        raise lw.error(out_of_range, node, kind=KernelValueError)
    return represented


def _tile_random(lw, node, name: str, syntax: Syntax):
    """``tile_randi`` / ``tile_randf(shape, rng, min=, max=, storage=)``: the element type is the one the op's syntax
    declares (int32 / float32); ``min`` and ``max`` come together."""
    _mark(lw)
    a = _bind(lw, node, name, ["shape", "rng", "min", "max", "storage"], 2)
    shape = static_shape(lw, a["shape"])
    (dtype,) = syntax.types  # the element type of the op's tiles
    rng = lw.operand(lw.visit(a["rng"]), a["rng"], want=T.UINT32)
    if rng.type != T.UINT32:
        raise lw.error(f"wp.{name}(): rng must be a random state (uint32, from wp.rand_init), got {rng.type}", a["rng"])
    bounds = [k for k in ("min", "max") if k in a]
    if len(bounds) == 1:
        raise lw.error(f"wp.{name}() takes min and max together", a[bounds[0]])
    args = [rng]
    for k in bounds:
        v = lw.operand(lw.visit(a[k]), a[k], want=dtype)
        if v.type != dtype and isinstance(v.type, T.ScalarType):
            v = lw.op("cast", [v], attrs=(dtype,), node=a[k])
        args.append(v)
    return lw.op(name, args, attrs=(T.TileType(dtype, shape),), node=node)


def _tile_from_thread(lw, node, name: str, syntax: Syntax):
    """``tile_from_thread(shape, value, thread_idx, storage=)``: a tile of the value's type filled with lane
    ``thread_idx``'s value."""
    _mark(lw)
    a = _bind(lw, node, name, ["shape", "value", "thread_idx", "storage"], 3)
    shape = static_shape(lw, a["shape"])
    value = lw.operand(lw.visit(a["value"]), a["value"])
    if not isinstance(value.type, (T.ScalarType, T.VectorType, T.MatrixType, T.StructType)):
        raise lw.error(f"wp.{name}() takes a scalar, vector, matrix or struct value, got {value.type}", a["value"])
    idx = lw.operand(lw.visit(a["thread_idx"]), a["thread_idx"], want=T.INT32)
    if not (isinstance(idx.type, T.ScalarType) and idx.type.is_int):
        raise lw.error(f"wp.{name}(): thread_idx must be an integer, got {idx.type}", a["thread_idx"])
    if idx.type != T.INT32:
        idx = lw.op("cast", [idx], attrs=(T.INT32,), node=a["thread_idx"])
    return lw.op(name, [value, idx], attrs=(T.TileType(value.type, shape),), node=node)


def _cast(v, dtype):
    return float(v) if dtype.is_float else int(v)


def _tile(lw, node, name: str, syntax: Syntax):
    _mark(lw)
    a = _bind(lw, node, "tile", ["x", "preserve_type"], 1)
    x = lw.operand(lw.visit(a["x"]), a["x"])
    preserve = bool(lw.eval_static(a["preserve_type"])) if "preserve_type" in a else False
    bd = block_dim(lw)
    t = x.type
    if isinstance(t, T.ScalarType) or preserve:
        out = T.TileType(t, (bd,))
    elif isinstance(t, T.VectorType):
        out = T.TileType(t.scalar, (t.length, bd))
    elif isinstance(t, T.MatrixType):
        out = T.TileType(t.scalar, (t.rows, t.cols, bd))
    else:
        raise lw.error(f"wp.tile() takes a scalar, vector or matrix, got {t}", a["x"])
    return lw.op("tile", [x], attrs=(out,), node=node)


# ---------------------------------------------------------------------------------------------- reshaping
def _tile_view(lw, node, name: str, syntax: Syntax):
    _mark(lw)
    a = _bind(lw, node, "tile_view", ["t", "offset", "shape"], 2)
    t = _tile_value(lw, a["t"], "tile_view", "t")
    src = t.type.shape
    sliced = tile_slices.view_offsets_as_subscript(lw, a["offset"])
    if sliced is not None:  # offset=(slice(a, b, c), i, ...): NumPy-style, as t[a:b:c, i]
        if "shape" in a:
            raise lw.error("wp.tile_view() cannot take 'shape' together with a slice in offset", a["shape"],
                           kind=KernelValueError)
        return tile_slices.read(lw, t, sliced, node)
    value = lw.visit(a["offset"])
    parts = list(value) if isinstance(value, tuple) else [value]
    if len(parts) > len(src):
        raise lw.error(f"tile_view offset has {len(parts)} entries for a {len(src)}-D tile", a["offset"])
    for k, p in enumerate(parts):
        v = p.value if isinstance(p, (Weak, Const)) else p
        if isinstance(v, (Var, Const)):
            if not (isinstance(v.type, T.ScalarType) and v.type.is_int):
                raise lw.error(f"tile_view offsets must be integers or slices, got {v.type}", a["offset"],
                               kind=KernelValueError)
        elif not isinstance(v, int) or isinstance(v, bool):
            raise lw.error(f"tile_view offsets must be integers or slices, got {v!r}", a["offset"],
                           kind=KernelValueError)
        elif "shape" not in a and not 0 <= v < src[k]:
            raise lw.error(f"tile_view offset {v} is out of bounds for dimension {k} of a tile of shape {src}",
                           a["offset"], kind=KernelValueError)
    if "shape" in a:
        shape = static_shape(lw, a["shape"])
        if len(shape) > len(src):
            raise lw.error(f"tile_view shape {shape} has more dimensions than the tile {src}", a["shape"])
    else:
        shape = src[len(parts):]
        if not shape:
            raise lw.error("tile_view with an offset for every dimension selects one element; use t[i, j]",
                           a["offset"])
    for k in range(len(shape)):
        sd = len(src) - len(shape) + k
        if shape[k] > src[sd]:
            raise lw.error(f"tile_view shape {shape} does not fit in the tile {src}", node)
    parts = parts + [0] * (len(src) - len(parts))
    offs = [lw.operand(p, a["offset"], want=T.INT32) for p in parts]
    return lw.op("tile_view", [t, *offs], attrs=(T.TileType(t.type.dtype, tuple(shape)),), node=node)


def _static_ints(lw, node, what: str) -> tuple[int, ...]:
    try:
        value = lw.eval_static(node)
    except CompileError:
        raise lw.error(f"{what} must be a compile-time constant", node) from None
    value = value.value if isinstance(value, Weak) else value
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),)
    if isinstance(value, (tuple, list)) and all(isinstance(v, (int, np.integer)) for v in value):
        return tuple(int(v) for v in value)
    raise lw.error(f"{what} must be an int or a tuple of ints, got {value!r}", node)


def _tile_reshape(lw, node, name: str, syntax: Syntax):
    """``tile_reshape(t, shape)`` (one entry may be -1) and ``tile_squeeze(t, axis=None)``: the elements of ``t``
    in row-major order with the new shape (a copy here; Warp returns an aliasing view)."""
    _mark(lw)
    squeeze = syntax.params == ("t", "axis")
    a = _bind(lw, node, name, list(syntax.params), 1 if squeeze else 2)
    t = _tile_value(lw, a["t"], name, "t")
    src = t.type.shape
    if squeeze:
        axes = _static_ints(lw, a["axis"], "axis") if "axis" in a else tuple(k for k, d in enumerate(src) if d == 1)
        norm = []
        for ax in axes:
            if not -len(src) <= ax < len(src):
                raise lw.error(f"tile_squeeze() axis {ax} is out of bounds for tile with {len(src)} dimensions", node,
                               kind=KernelValueError)
            if src[ax % len(src)] != 1:
                raise lw.error(f"cannot squeeze axis {ax} of a tile of shape {src}: its extent is not 1", node)
            norm.append(ax % len(src))
        shape = tuple(d for k, d in enumerate(src) if k not in norm) or (1,)
    else:
        shape = list(_static_ints(lw, a["shape"], "the tile_reshape shape"))
        if shape.count(-1) > 1 or any(d == 0 or d < -1 for d in shape):
            raise lw.error(f"tile_reshape shape {tuple(shape)}: positive extents and at most one -1", node)
        known = int(np.prod([d for d in shape if d != -1]))
        if -1 in shape and known and t.type.size % known == 0:
            shape[shape.index(-1)] = t.type.size // known
        shape = tuple(shape)
    if int(np.prod(shape)) != t.type.size or not 1 <= len(shape) <= 4:
        raise lw.error(f"cannot reshape a tile of shape {src} to {shape}", node)
    return lw.op(name, [t], attrs=(T.TileType(t.type.dtype, shape),), node=node)


def _tile_broadcast(lw, node, name: str, syntax: Syntax):
    _mark(lw)
    a = _bind(lw, node, "tile_broadcast", ["a", "shape"], 2)
    t = _tile_value(lw, a["a"], "tile_broadcast", "a")
    rank = len(_static_ints(lw, a["shape"], "the tile_broadcast shape"))
    if not 1 <= rank <= 4:
        raise lw.error(f"tile_broadcast() output must have between one and four dimensions, got {rank}", a["shape"],
                       kind=KernelValueError)
    shape = static_shape(lw, a["shape"])
    src = t.type.shape
    ok = len(shape) >= len(src) and all(s in (1, d) for s, d in zip(reversed(src), reversed(shape)))
    if not ok:
        raise lw.error(f"cannot broadcast a tile of shape {src} to {shape}", node,
                       hint="NumPy rules: shapes align from the right; each source dimension is 1 or equal")
    return lw.op("tile_broadcast", [t], attrs=(T.TileType(t.type.dtype, shape),), node=node)


# ---------------------------------------------------------------------------------------------- map / reduce
def lower_body(lw, fn_node: ast.AST, elem_types: list[T.Type], node, what: str) -> TileBody:
    """Lower the mapped function once on element-typed parameters (inlined, in a separate block)."""
    f = lw.eval_static(fn_node) if not isinstance(fn_node, ast.Name) else lw.read_name(fn_node.id, fn_node)
    params = tuple(Var(t, f"elem{i}") for i, t in enumerate(elem_types))
    identity = registry.Identity.NONE
    with lw.b.nested() as block:
        if isinstance(f, Func):
            result = inline(lw, f, list(params), {}, node)
        elif getattr(f, "_wp_kernel_builtin_", None) is not None:
            name = f._wp_kernel_builtin_
            if language_form(f) is not None or registry.syntax(name).form is not Form.OPERANDS:
                raise lw.error(f"wp.{name} cannot be used in {what}", fn_node)
            result = _builtin(lw, name, list(params), {}, node)
            calls = [st for st in block if isinstance(st, Let)]
            if len(calls) == 1:
                identity = calls[0].call.op.identity
        else:
            raise lw.error(f"{what} needs a weft builtin or a @wp.func, got {f!r}", fn_node)
        if isinstance(result, tuple) or result is None:
            raise lw.error(f"the function of {what} must return one value", fn_node)
        result = lw.operand(result, node)
    return TileBody(params, block, result, getattr(f, "__name__", ""), identity)


def _tile_map(lw, node, name: str, syntax: Syntax):
    _mark(lw)
    if node.keywords or len(node.args) < 2:
        raise lw.error("wp.tile_map(f, a, ...) takes a function and one or more tiles", node)
    tiles = [_tile_value(lw, node.args[1], "tile_map", "argument 1")]
    shape = tiles[0].type.shape
    for a in node.args[2:]:  # a non-tile value (scalar, vector, matrix, struct) is broadcast to every element
        v = lw.operand(lw.visit(a), a)
        tiles.append(v if isinstance(v.type, T.TileType) else
                     lw.op("tile_full", [v], attrs=(T.TileType(v.type, shape),), node=a))
    for t, a in zip(tiles[1:], node.args[2:]):
        if t.type.shape != shape:
            raise lw.error(f"tile_map arguments have different shapes: {shape} and {t.type.shape}", a)
    body = lower_body(lw, node.args[0], [t.type.dtype for t in tiles], node, "tile_map")
    return lw.op("tile_map", tiles, attrs=(body,), node=node)


def _reduction_axis(lw, a: dict, t, name: str) -> tuple:
    """The attrs of an axis reduction: () for the whole tile, (axis,) for one axis (a compile-time int)."""
    if "axis" not in a:
        return ()
    axis = _static_ints(lw, a["axis"], f"the axis of wp.{name}()")
    nd = len(t.type.shape)
    if len(axis) != 1 or not 0 <= axis[0] < nd:
        raise lw.error(f"wp.{name}(): axis {axis[0] if len(axis) == 1 else axis} is out of range for a {nd}-D tile",
                       a["axis"], kind=KernelValueError)
    return (axis[0],)


def _tile_reduce(lw, node, name: str, syntax: Syntax):
    _mark(lw)
    a = _bind(lw, node, "tile_reduce", ["op", "a", "axis"], 2)
    t = _tile_value(lw, a["a"], "tile_reduce", "a")
    dt = t.type.dtype
    try:
        body = lower_body(lw, a["op"], [dt, dt], node, "tile_reduce")
    except CompileError as exc:
        if not isinstance(dt, T.StructType):
            raise
        raise lw.error(f"tile_reduce(): no overload of the function accepts two elements of the Warp struct {dt}",
                       a["op"], kind=KernelTypeError) from exc
    if body.result.type != dt:
        raise lw.error(f"tile_reduce(): the function must return the tile element type {dt}, it returns "
                       f"{body.result.type}", a["op"], kind=KernelTypeError)
    return lw.op("tile_reduce", [t], attrs=(body, *_reduction_axis(lw, a, t, name)), node=node)


def _tile_axis_reduction(lw, node, name: str, syntax: Syntax):
    """``tile_sum(a)`` (a one-element tile) or ``tile_sum(a, axis=k)`` (dimension k removed)."""
    _mark(lw)
    a = _bind(lw, node, name, list(syntax.params), 1)
    t = _tile_value(lw, a["a"], name, "a")
    attrs = _reduction_axis(lw, a, t, name)
    if registry.resolve(name, (t.type,), attrs) is None:
        if isinstance(t.type.dtype, T.StructType):
            raise lw.error(f"{name}() does not support tiles of a Warp struct ({t.type.dtype})", node,
                           kind=KernelTypeError)
        raise lw.error(f"no overload of '{name}' accepts ({t.type})", node)
    return lw.op(name, [t], attrs=attrs, node=node)


# ---------------------------------------------------------------------------------------------- linear algebra, FFT
def _tile_matmul(lw, node, name: str, syntax: Syntax):
    """``tile_matmul(a, b)`` / ``a @ b`` and ``tile_matmul(a, b, out, alpha=1.0, beta=1.0, precision="default")``.
    Operands of another float type than ``out`` are converted to it first (mixed precision, differentiable);
    ``precision`` is accepted as Warp spells it (weft's CPU product is exact float32 either way)."""
    _mark(lw)
    a = _bind(lw, node, "tile_matmul", ["a", "b", "out", "alpha", "beta", "precision"], 2)
    x = _tile_value(lw, a["a"], "tile_matmul", "a")
    y = _tile_value(lw, a["b"], "tile_matmul", "b")
    out_node = a.get("out")
    c = None
    if out_node is not None:
        probe = lw.visit(out_node)
        if isinstance(probe, (Var, Const)) and isinstance(probe.type, T.TileType):
            c = probe
        else:
            out_node, a["alpha"] = None, out_node  # tile_matmul(a, b, alpha): the two-tile form with a scale
    _check_matmul(lw, x, y, c, a, node)
    dt = c.type.dtype if c is not None else x.type.dtype
    x, y = (_as_dtype(lw, t, dt, node) for t in (x, y))
    alpha = lw.operand(lw.visit(a["alpha"]), a["alpha"], want=dt) if "alpha" in a else Const(1.0, dt)
    if out_node is None:
        prod = lw.op("tile_matmul", [x, y], node=node)
        if "alpha" in a:
            prod = lw.op("mul", [prod, alpha], node=node)
        return prod
    want = (x.type.shape[0], y.type.shape[1])
    if c.type.shape != want:
        raise lw.error(f"tile_matmul out must be a {want} tile of {dt}, got {c.type}", out_node)
    beta = lw.operand(lw.visit(a["beta"]), a["beta"], want=dt) if "beta" in a else Const(1.0, dt)
    result = lw.op("tile_matmul", [x, y, c, alpha, beta], node=node)
    _store_target(lw, out_node, result, "tile_matmul")
    return None


def _as_dtype(lw, t, dtype, node):
    """A float tile converted element-wise to ``dtype`` (itself when it already is)."""
    if t.type.dtype == dtype:
        return t
    body = map_body(lw, [t.type.dtype], node, lambda lw_, p: lw_.op("cast", p, attrs=(dtype,), node=node),
                    "tile_astype")
    return lw.op("tile_map", [t], attrs=(body,), node=node)


def _check_matmul(lw, x, y, c, a: dict, node) -> None:
    """Shapes, then Warp's TypeErrors: complex tiles, precision='tf32' off float32, a bfloat16 result."""
    xs, ys = x.type.shape, y.type.shape
    if len(xs) != 2 or len(ys) != 2:
        raise lw.error(f"tile_matmul needs 2-D tiles, got shapes {xs} and {ys}", node)
    if xs[1] != ys[0]:
        raise lw.error(f"tile_matmul shape mismatch: {xs} @ {ys} (inner dimensions {xs[1]} != {ys[0]})", node)
    tiles = [t for t in (x, y, c) if t is not None]
    if any(isinstance(t.type.dtype, T.VectorType) and t.type.dtype.length == 2 for t in tiles):
        raise lw.error("tile_matmul() does not support complex tiles (vec2 elements); multiply the real and "
                       "imaginary parts as separate real tiles", node, kind=KernelTypeError)
    if any(not (isinstance(t.type.dtype, T.ScalarType) and t.type.dtype.is_float) for t in tiles):
        raise lw.error(f"tile_matmul needs float tiles, got {', '.join(str(t.type.dtype) for t in tiles)}", node,
                       kind=KernelTypeError)
    if "precision" in a:
        node_p = a["precision"]
        if not (isinstance(node_p, ast.Constant) or (isinstance(node_p, (ast.Name, ast.Attribute)) and
                                                    lw.eval_static_or_none(node_p) is not None)):
            raise lw.error("tile_matmul(): precision got a non-literal argument; write 'default' or 'tf32'", node_p,
                           kind=KernelValueError)
        precision = lw.eval_static(node_p)
        if precision not in ("default", "tf32"):
            raise lw.error(f"tile_matmul(): precision must be the string literal 'default' or 'tf32', got "
                           f"{precision!r}", node_p, kind=KernelValueError)
        if precision == "tf32" and any(t.type.dtype != T.FLOAT32 for t in tiles):
            raise lw.error("tile_matmul(): precision='tf32' requires float32 tiles", node_p, kind=KernelTypeError)
    out_dtype = c.type.dtype if c is not None else x.type.dtype
    if out_dtype == T.BFLOAT16:
        raise lw.error("tile_matmul() does not support a bfloat16 'out' tile (accumulate in float16, float32 or "
                       "float64)", node, kind=KernelTypeError)
    if c is None and x.type.dtype != y.type.dtype:
        raise lw.error(f"tile_matmul of {x.type.dtype} and {y.type.dtype} tiles (pass an out tile to choose the "
                       "result's type)", node)


def _fill_mode(lw, a: dict, name: str) -> bool:
    """Whether ``fill_mode="upper"`` (a compile-time string, "lower" by default)."""
    if "fill_mode" not in a:
        return False
    mode = lw.eval_static(a["fill_mode"])
    if mode not in ("lower", "upper"):
        raise lw.error(f"wp.{name}(): fill_mode must be 'lower' or 'upper', got {mode!r}", a["fill_mode"],
                       kind=KernelValueError)
    return mode == "upper"


def _square(lw, t, node, name: str, what: str) -> None:
    shape = t.type.shape
    if len(shape) != 2 or shape[0] != shape[1]:
        raise lw.error(f"wp.{name}(): {what} must be a square 2-D tile, got shape {shape}", node)


def _tile_factor(lw, node, name: str, syntax: Syntax):
    """``tile_cholesky(A, fill_mode="lower")``; ``"upper"`` factors A^T (A's upper triangle) and transposes the
    factor back (U = L^T with A = U^T U)."""
    _mark(lw)
    a = _bind(lw, node, name, list(syntax.params), 1)
    first = syntax.params[0]
    x = _tile_value(lw, a[first], name, first)
    _square(lw, x, a[first], name, first)
    if _fill_mode(lw, a, name):
        return lw.op("tile_transpose", [lw.op(name, [lw.op("tile_transpose", [x], node=node)], node=node)], node=node)
    return lw.op(name, [x], node=node)


def _tile_solve(lw, node, name: str, syntax: Syntax):
    """Tile operands named by ``Syntax.params`` (``tile_lower_solve(L, y)``, ``tile_diag_add(a, d)`` ...); with
    ``fill_mode="upper"`` the factor given is U = L^T and the op reads its transpose."""
    _mark(lw)
    params = [p for p in syntax.params if p != "fill_mode"]
    a = _bind(lw, node, name, list(syntax.params), len(params))
    tiles = [_tile_value(lw, a[p], name, p) for p in params]
    _square(lw, tiles[0], a[params[0]], name, params[0])
    if _fill_mode(lw, a, name):
        tiles[0] = lw.op("tile_transpose", [tiles[0]], node=node)
    found = registry.resolve(name, tuple(t.type for t in tiles))
    if found is None:
        n = tiles[0].type.shape[0]
        raise lw.error(f"wp.{name}(): {', '.join(f'{p}: {t.type}' for p, t in zip(params, tiles))} do not fit "
                       f"(an ({n}, {n}) tile, then a tile of shape ({n},) or ({n}, M) of the same float dtype)", node)
    return lw.op(name, tiles, node=node)


def _tile_in_place_of(lw, node, form: LanguageForm):
    """``tile_cholesky_inplace(A)``, ``tile_lower_solve_inplace(L, y)`` ...: the op ``form.arg`` (lowered by its own
    form's rule) with its result written over the tile variable at ``form.updates``."""
    syntax = registry.syntax(form.arg)
    result = OP_RULES[syntax.form](lw, node, form.arg, syntax)
    (pos,) = form.updates
    target = node.args[pos] if pos < len(node.args) else next(
        (k.value for k in node.keywords if k.arg == syntax.params[pos]), None)
    if target is None:
        raise lw.error(f"wp.{form.name}() is missing the argument '{syntax.params[pos]}'", node)
    _store_target(lw, target, result, form.name)


def _tile_assign(lw, node, name: str, syntax: Syntax):
    """``tile_assign(dst, src, offset=(0, ...))``: the tile variable dst rebound to dst with src written at offset."""
    _mark(lw)
    a = _bind(lw, node, name, ["dst", "src", "offset"], 2)
    dst = _tile_value(lw, a["dst"], name, "dst")
    src = _tile_value(lw, a["src"], name, "src")
    nd = len(dst.type.shape)
    if len(src.type.shape) != nd:
        raise lw.error(f"wp.{name}(): src has {len(src.type.shape)} dimensions but dst has {nd}", node)
    offs = _offsets(lw, a.get("offset"), nd)
    statics = [o.value if isinstance(o, Const) else 0 for o in offs]
    if any(o + s > d for o, s, d in zip(statics, src.type.shape, dst.type.shape)):
        raise lw.error(f"wp.{name}(): a {src.type.shape} tile at offset {tuple(statics)} does not fit in "
                       f"{dst.type.shape}", node, kind=KernelValueError)
    if registry.resolve(name, (dst.type, src.type, *(o.type for o in offs))) is None:
        raise lw.error(f"wp.{name}(): cannot assign a tile of {src.type.dtype} into one of {dst.type.dtype}", node)
    _store_target(lw, a["dst"], lw.op(name, [dst, src, *offs], node=node), name)


def _tile_sort(lw, node, name: str, syntax: Syntax):
    """``tile_sort(keys, values)``: both tile variables rebound to their sorted versions."""
    _mark(lw)
    a = _bind(lw, node, name, ["keys", "values"], 2)
    keys = _tile_value(lw, a["keys"], name, "keys")
    values = _tile_value(lw, a["values"], name, "values")
    if keys.type.size != values.type.size:
        raise lw.error(f"wp.{name}(): keys {keys.type.shape} and values {values.type.shape} differ in size", node)
    if registry.resolve(name, (keys.type, values.type)) is None:
        raise lw.error(f"wp.{name}(): keys of {keys.type.dtype} cannot be sorted (float32, int32, uint32, int64, "
                       "uint64)", a["keys"])
    new_keys, new_values = lw.op(name, [keys, values], node=node)
    _store_target(lw, a["values"], new_values, name)
    _store_target(lw, a["keys"], new_keys, name)


def _in_place(lw, node, name: str, syntax: Syntax):
    _mark(lw)
    if len(node.args) != 1 or node.keywords:
        raise lw.error(f"wp.{name}(t) takes one tile, transformed in place", node)
    t = _tile_value(lw, node.args[0], name, "t")
    dt = t.type.dtype
    if not (isinstance(dt, T.VectorType) and dt.length == 2 and dt.scalar in (T.FLOAT32, T.FLOAT64)):
        raise lw.error(f"wp.{name}() transforms complex tiles (vec2f or vec2d elements), got {dt}", node.args[0])
    result = lw.op(name, [t], node=node)
    _store_target(lw, node.args[0], result, name)


def _tile_query_next(lw, node, name: str, syntax: Syntax):
    """``t = wp.tile_bvh_query_next(query)``: a tile of the next block_dim items; ``query`` is advanced in place."""
    _mark(lw)
    if len(node.args) != 1 or node.keywords:
        raise lw.error(f"wp.{name}(query) takes one thread-block query, advanced in place", node)
    query = lw.operand(lw.visit(node.args[0]), node.args[0])
    items, advanced = lw.op(name, [query], attrs=(T.TileType(T.INT32, (block_dim(lw),)),), node=node)
    if not isinstance(node.args[0], ast.Name):
        raise lw.error(f"the query advanced by wp.{name}() must be a variable", node.args[0])
    lw.store(node.args[0], advanced)
    return items


# ---------------------------------------------------------------------------------------------- composite forms
def map_body(lw, elem_types: list[T.Type], node, make, name: str) -> TileBody:
    """A ``tile_map`` body built in code: ``make(lw, params)`` returns the element result."""
    params = tuple(Var(t, f"elem{i}") for i, t in enumerate(elem_types))
    with lw.b.nested() as block:
        result = lw.operand(make(lw, list(params)), node)
    return TileBody(params, block, result, name)


def _tile_astype(lw, node, form: LanguageForm):
    """``tile_astype(t, dtype)``: a tile_map of the scalar conversion (differentiable between float types)."""
    _mark(lw)
    a = _bind(lw, node, form.name, ["t", "dtype"], 2)
    t = _tile_value(lw, a["t"], form.name, "t")
    dtype = _static_dtype(lw, a["dtype"])
    if not (isinstance(t.type.dtype, T.ScalarType) and isinstance(dtype, T.ScalarType)):
        raise lw.error(f"wp.{form.name}() converts scalar tiles to a scalar type, got {t.type.dtype} -> {dtype}",
                       node)
    if dtype == t.type.dtype:
        return lw.op("copy", [t], node=node)
    body = map_body(lw, [t.type.dtype], node, lambda lw_, p: lw_.op("cast", p, attrs=(dtype,), node=node),
                    form.name)
    return lw.op("tile_map", [t], attrs=(body,), node=node)


def _same_tiles(lw, node, fname: str, x, y) -> None:
    if x.type.shape != y.type.shape or x.type.dtype != y.type.dtype:
        raise lw.error(f"wp.{fname}() needs two tiles of one shape and dtype, got {x.type} and {y.type}", node)
    if not isinstance(x.type.dtype, (T.ScalarType, T.VectorType, T.MatrixType)):
        raise lw.error(f"wp.{fname}(): the element type must be a scalar, vector or matrix, got {x.type.dtype}", node)


def _tile_dot(lw, node, form: LanguageForm):
    """``tile_dot(a, b)``: the sum over the tile of each element pair's product (scalars), ``dot`` (vectors) or
    ``ddot`` (matrices), as a one-element tile."""
    _mark(lw)
    a = _bind(lw, node, form.name, ["a", "b"], 2)
    x = _tile_value(lw, a["a"], form.name, "a")
    y = _tile_value(lw, a["b"], form.name, "b")
    _same_tiles(lw, node, form.name, x, y)
    dt = x.type.dtype
    if isinstance(dt, T.ScalarType):
        prod = lw.op("mul", [x, y], node=node)
    else:
        contract = "dot" if isinstance(dt, T.VectorType) else "ddot"
        body = map_body(lw, [dt, dt], node, lambda lw_, p: _builtin(lw_, contract, p, {}, node), contract)
        prod = lw.op("tile_map", [x, y], attrs=(body,), node=node)
    return lw.op("tile_sum", [prod], node=node)


def _tile_axpy(lw, node, form: LanguageForm):
    """``tile_axpy(alpha, src, dest)``: ``dest += alpha * src``, rebinding ``dest``."""
    _mark(lw)
    a = _bind(lw, node, form.name, ["alpha", "src", "dest"], 3)
    src = _tile_value(lw, a["src"], form.name, "src")
    dest = _tile_value(lw, a["dest"], form.name, "dest")
    _same_tiles(lw, node, form.name, src, dest)
    alpha = lw.operand(lw.visit(a["alpha"]), a["alpha"], want=T.scalar_of(dest.type.dtype))
    if alpha.type != T.scalar_of(dest.type.dtype):
        raise lw.error(f"wp.{form.name}(): alpha is {alpha.type} but the tiles hold {dest.type.dtype}", a["alpha"])
    result = lw.op("add", [dest, lw.op("mul", [src, alpha], node=node)], node=node)
    _store_target(lw, a["dest"], result, form.name)


LANGUAGE_RULES.update({
    Form.TILE_EMPTY: _tile_empty,
    Form.TILE_ASTYPE: _tile_astype,
    Form.TILE_DOT: _tile_dot,
    Form.TILE_AXPY: _tile_axpy,
    Form.TILE_IN_PLACE_OF: _tile_in_place_of,
    Form.TILE_STACK: lambda lw, node, form: getattr(tile_stack, form.arg)(lw, node, form),
})
OP_RULES.update({
    Form.TILE_LOAD: _tile_load,
    Form.TILE_STORE: _tile_store,
    Form.TILE_FILLED: _filled,
    Form.TILE_ARANGE: _tile_arange,
    Form.TILE: _tile,
    Form.TILE_VIEW: _tile_view,
    Form.TILE_BROADCAST: _tile_broadcast,
    Form.TILE_RESHAPE: _tile_reshape,
    Form.TILE_MAP: _tile_map,
    Form.TILE_REDUCE: _tile_reduce,
    Form.TILE_AXIS_REDUCTION: _tile_axis_reduction,
    Form.TILE_MATMUL: _tile_matmul,
    Form.TILE_FACTOR: _tile_factor,
    Form.TILE_SOLVE: _tile_solve,
    Form.TILE_IN_PLACE: _in_place,
    Form.TILE_QUERY_NEXT: _tile_query_next,
    Form.TILE_RANDOM: _tile_random,
    Form.TILE_SORT: _tile_sort,
    Form.TILE_ASSIGN: _tile_assign,
    Form.TILE_LOAD_INDEXED: _tile_load_indexed,
    Form.TILE_STORE_INDEXED: _tile_store_indexed,
    Form.TILE_FROM_THREAD: _tile_from_thread,
})
