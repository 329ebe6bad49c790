"""Tile ops (``weft/native/tile.h``, ``weft/native/fft.h``): block-wide values with compile-time shapes.

Every op here is SPECIAL: the tile renderer (``weft.backend.tiles``) emits them, and their reverse-mode rules
live in ``weft.backend.tile_adjoint``. Compile-time arguments (shapes, dtypes, the function of a ``tile_map``) travel in
``attrs``; the frontend forms in ``weft.frontend.tiles`` parse Warp's keyword signatures into these records.
"""

from __future__ import annotations

import enum

from ..ir import types as T
from ..ir.roles import Role
from . import rules as R
from .forms import Form, Syntax
from .registry import STORES_EVERY_ADJOINT, Adjoint, Factor, InPlace, Op, OpKind, register

D = "tile"


def is_tile(t) -> bool:
    return isinstance(t, T.TileType)


def _ints(ts) -> bool:
    return all(isinstance(t, T.ScalarType) and t.is_int for t in ts)


def _array(t) -> bool:
    return isinstance(t, T.ArrayType) and t.kind is T.ArrayKind.ARRAY


def _reg(name, rule, doc, adjoint=Adjoint.SPECIAL, side_effect=False, **facts):
    register(Op(name, rule, native=name, kind=OpKind.SPECIAL, adjoint=adjoint, side_effect=side_effect, domain=D,
                doc=doc, **facts))


def _form(form: Form) -> Syntax:
    return Syntax(form)


#: how the tile builtins are written in kernel code (weft/frontend/tiles.py lowers each form)
_FILLED = Syntax(Form.TILE_FILLED, params=("shape", "dtype", "storage"), defaults=(T.FLOAT32, "register"))
_IN_PLACE = Syntax(Form.TILE_IN_PLACE, updates=(0,))

# facts for the IR passes (see Op): derivative rules that read no primal tile value, cooperative forms that take the
# block's scratch memory, results that may overwrite an operand
_PRIMAL_FREE = {"adjoint_reads_primal": False}


# ---------------------------------------------------------------------------------------------- memory
def _load(args, attrs):
    (shape,) = attrs
    if args and _array(args[0]) and len(args) - 1 == args[0].ndim == len(shape) and _ints(args[1:]):
        return T.TileType(args[0].dtype, tuple(shape))
    return None


def _store(args, attrs):
    if len(args) >= 2 and _array(args[0]) and is_tile(args[1]) and args[1].dtype == args[0].dtype and \
            len(args) - 2 == args[0].ndim == len(args[1].shape) and _ints(args[2:]):
        return T.VOID
    return None


def _atomic_add(args, attrs):
    if _store(args, attrs) is T.VOID:
        return args[1]
    return None


_reg("tile_load", _load, "tile_load(a, shape, offset=(0, ...)): a tile read from an array; elements outside the "
     "array read as zero.", **_PRIMAL_FREE, collective=True, role=Role.TILE_LOAD, adjoint_linear=True, syntax=_form(Form.TILE_LOAD),
     writes_result=True)
_reg("tile_store", _store, "tile_store(a, t, offset=(0, ...)): write a tile into an array; elements outside the "
     "array are skipped.", side_effect=True, **_PRIMAL_FREE, collective=True, role=Role.TILE_STORE,
     adjoint_linear=True, syntax=_form(Form.TILE_STORE), adjoint_store=(1,))
_reg("tile_atomic_add", _atomic_add, "tile_atomic_add(a, t, offset=(0, ...)): atomically add a tile into an array; "
     "returns the previous values (zero outside the array).", side_effect=True, **_PRIMAL_FREE, collective=True,
     role=Role.TILE_ATOMIC, adjoint_linear=True, syntax=_form(Form.TILE_STORE))


def _indices(t, n) -> bool:
    return is_tile(t) and t.dtype == T.INT32 and t.shape == (n,)


def _load_indexed(args, attrs):
    shape, axis = attrs
    if len(args) >= 2 and _array(args[0]) and len(args) - 2 == args[0].ndim == len(shape) and \
            _indices(args[1], shape[axis]) and _ints(args[2:]):
        return T.TileType(args[0].dtype, tuple(shape))
    return None


def _store_indexed(args, attrs):
    (axis,) = attrs
    if len(args) >= 3 and _array(args[0]) and is_tile(args[2]) and args[2].dtype == args[0].dtype and \
            len(args) - 3 == args[0].ndim == len(args[2].shape) and _indices(args[1], args[2].shape[axis]) and \
            _ints(args[3:]):
        return T.VOID
    return None


def _atomic_add_indexed(args, attrs):
    return args[2] if _store_indexed(args, attrs) is T.VOID else None


_reg("tile_load_indexed", _load_indexed, "tile_load_indexed(a, indices, shape, offset=(0, ...), axis=0): a tile "
     "gathered along axis through a 1-D int32 tile of indices (offset[axis] + indices[c]); elements outside the "
     "array read as zero.", collective=True, role=Role.TILE_LOAD, adjoint_linear=True,
     syntax=_form(Form.TILE_LOAD_INDEXED))
_reg("tile_store_indexed", _store_indexed, "tile_store_indexed(a, indices, t, offset=(0, ...), axis=0): t scattered "
     "into a along axis through a 1-D int32 tile of indices; elements outside the array are skipped.",
     side_effect=True, collective=True, role=Role.TILE_STORE, adjoint_linear=True,
     syntax=_form(Form.TILE_STORE_INDEXED))
_reg("tile_atomic_add_indexed", _atomic_add_indexed, "tile_atomic_add_indexed(a, indices, t, offset=(0, ...), "
     "axis=0): t atomically added into a along axis through a 1-D int32 tile of indices; returns the previous "
     "values (zero outside the array).", side_effect=True, collective=True, role=Role.TILE_ATOMIC,
     adjoint_linear=True, syntax=_form(Form.TILE_STORE_INDEXED))


# ---------------------------------------------------------------------------------------------- construction
def _made(nargs, structs: bool = True):
    def rule(args, attrs):
        (t,) = attrs
        if not structs and isinstance(t.dtype, T.StructType):
            return None  # tile_ones: a struct has no value of one (the frontend reports Warp's TypeError)
        if len(args) == nargs and all(isinstance(a, T.ScalarType) for a in args):
            return t
        return None
    return rule


def _fill(args, attrs):
    (t,) = attrs
    if len(args) == 1 and args[0] == t.dtype:
        return t
    return None


_reg("tile_zeros", _made(0), "tile_zeros(shape, dtype=float): a tile of zeros.", adjoint=Adjoint.NONE, collective=True, syntax=_FILLED)
_reg("tile_ones", _made(0, structs=False), "tile_ones(shape, dtype=float): a tile of ones.", adjoint=Adjoint.NONE, collective=True, syntax=_FILLED)
_reg("tile_full", _fill, "tile_full(shape, value, dtype=float): a tile filled with value.", adjoint_scratch=True,
     collective=True, syntax=Syntax(Form.TILE_FILLED, params=("shape", "value", "dtype", "storage"), defaults=(T.FLOAT32, "register")))
_reg("tile_arange", _made(2), "tile_arange(stop) / tile_arange(start, stop, step, dtype): an evenly spaced 1-D tile.",
     adjoint=Adjoint.NONE, collective=True, syntax=_form(Form.TILE_ARANGE))


def _random(dtype):
    def rule(args, attrs):
        (t,) = attrs
        if t.dtype == dtype and len(args) in (1, 3) and args[0] == T.UINT32 and all(a == dtype for a in args[1:]):
            return t
        return None
    return rule


_reg("tile_randi", _random(T.INT32), "tile_randi(shape, rng, min=, max=): a tile of random int32 (each element as "
     "wp.randi draws it; element k from lane k % block_dim's stream, as on a GPU); rng is left unchanged.",
     adjoint=Adjoint.NONE, collective=True, syntax=Syntax(Form.TILE_RANDOM, types=(T.INT32,)))
_reg("tile_randf", _random(T.FLOAT32), "tile_randf(shape, rng, min=, max=): a tile of random float32 in [min, max) "
     "(default [0, 1)), drawn as tile_randi's elements are; rng is left unchanged.", adjoint=Adjoint.NONE,
     collective=True, syntax=Syntax(Form.TILE_RANDOM, types=(T.FLOAT32,)))


def _from_thread(args, attrs):
    (t,) = attrs
    if len(args) == 2 and args[0] == t.dtype and isinstance(args[1], T.ScalarType) and args[1].is_int:
        return t
    return None


_reg("tile_from_thread", _from_thread, "tile_from_thread(shape, value, thread_idx, storage='register'): a tile filled "
     "with the value of lane thread_idx of the block (the same thread_idx in every lane).", collective=True,
     syntax=_form(Form.TILE_FROM_THREAD))


def _tile_of(args, attrs):
    (t,) = attrs
    if len(args) == 1 and isinstance(args[0], (T.ScalarType, T.VectorType, T.MatrixType)):
        return t
    return None


def _untile(args, attrs):
    if len(args) != 1 or not is_tile(args[0]):
        return None
    t = args[0]
    if len(t.shape) == 1:
        return t.dtype
    if not isinstance(t.dtype, T.ScalarType):
        return None
    if len(t.shape) == 2:
        return T.VectorType(t.shape[0], t.dtype)
    if len(t.shape) == 3:
        return T.MatrixType(t.shape[0], t.shape[1], t.dtype)
    return None


def _extract(args, attrs):
    if args and is_tile(args[0]) and len(args) - 1 == len(args[0].shape) and _ints(args[1:]):
        return args[0].dtype
    return None


_reg("tile", _tile_of, "tile(x, preserve_type=False): a tile of the per-lane values x (trailing dimension "
     "block_dim; vectors and matrices spread over leading dimensions unless preserve_type).", collective=True, syntax=_form(Form.TILE))
_reg("untile", _untile, "untile(t): each lane's element of a tile whose trailing dimension is block_dim.",
     lane_level=True)
_reg("tile_extract", _extract, "tile_extract(t, i, ...) or t[i, ...]: one element of a tile.", lane_level=True)
register(Op("extract", _extract, native="tile_extract", kind=OpKind.SPECIAL, adjoint=Adjoint.SPECIAL, domain=D,
            lane_level=True, role=Role.EXTRACT, adjoint_linear=True,
            doc="t[i, ...]: one element of a tile."))


class TileUpdate(enum.Enum):
    """How ``tile_update`` changes the elements the lanes index (``t[i, j] = v``, ``t[i, j] += v``, ...); the value is
    the mode's number in ``weft::tile_update<M>`` (weft/native/tile.h)."""

    SET = 0
    ADD = 1
    SUB = 2
    AND = 3
    OR = 4
    XOR = 5
    MASKED = 6  # a set skipped by lanes whose first index is negative (wp.tile_scatter_masked without a value)

    @property
    def bitwise(self) -> bool:
        return self in (TileUpdate.AND, TileUpdate.OR, TileUpdate.XOR)


def _update(args, attrs):
    (mode,) = attrs
    if len(args) < 3 or not is_tile(args[0]) or len(args) - 2 != len(args[0].shape) or not _ints(args[1:-1]):
        return None
    dt = args[0].dtype
    if args[-1] != dt:
        return None
    if mode.bitwise and not (T.scalar_of(dt) is not None and T.scalar_of(dt).is_int):
        return None
    if mode in (TileUpdate.ADD, TileUpdate.SUB) and not isinstance(dt, (T.ScalarType, T.VectorType, T.MatrixType,
                                                                       T.StructType)):
        return None
    return args[0]


_reg("tile_update", _update, "t[i, ...] = v (and +=, -=, &=, |=, ^=): the tile with the element each lane indexes "
     "updated by that lane's value, lanes in order (several lanes adding to one element accumulate, as Warp's "
     "atomics do).", **_PRIMAL_FREE, collective=True, in_place=InPlace.FIRST)


def _assign(args, attrs):
    if len(args) >= 2 and is_tile(args[0]) and is_tile(args[1]) and len(args) - 2 == len(args[0].shape) == \
            len(args[1].shape) and _ints(args[2:]) and (args[0].dtype == args[1].dtype or (
                isinstance(args[0].dtype, T.ScalarType) and isinstance(args[1].dtype, T.ScalarType))):
        return args[0]
    return None


_reg("tile_assign", _assign, "tile_assign(dst, src, offset=(0, ...)): dst (in place) with src written at offset "
     "(scalar elements converted to dst's type); the region's adjoint goes to src.", **_PRIMAL_FREE, collective=True,
     in_place=InPlace.FIRST, syntax=Syntax(Form.TILE_ASSIGN, updates=(0,)))


# ---------------------------------------------------------------------------------------------- reshaping
def _view(args, attrs):
    (out,) = attrs
    if args and is_tile(args[0]) and len(args) - 1 == len(args[0].shape) and _ints(args[1:]):
        return out
    return None


def _transpose(args, attrs):
    if len(args) == 1 and is_tile(args[0]) and len(args[0].shape) == 2:
        m, n = args[0].shape
        return T.TileType(args[0].dtype, (n, m))
    return None


def _broadcast(args, attrs):
    (out,) = attrs
    if len(args) == 1 and is_tile(args[0]):
        return out
    return None


_reg("tile_view", _view, "tile_view(t, offset, shape=None): a copy of the sub-tile at offset (integer offsets "
     "without shape drop the leading dimensions they index).", **_PRIMAL_FREE, collective=True, syntax=_form(Form.TILE_VIEW))
def _slice(args, attrs):
    (out,) = attrs
    if args and is_tile(args[0]) and len(args) - 1 == 3 * len(args[0].shape) and _ints(args[1:]):
        return out
    return None


def _slice_assign(args, attrs):
    if len(args) >= 2 and is_tile(args[0]) and is_tile(args[1]) and len(args) - 2 == 3 * len(args[0].shape) and \
            _ints(args[2:]) and (args[0].dtype == args[1].dtype or (
                isinstance(args[0].dtype, T.ScalarType) and isinstance(args[1].dtype, T.ScalarType))):
        return args[0]
    return None


_reg("tile_slice", _slice, "t[a:b:c, i, ...]: a copy of the selected elements (NumPy's basic indexing with "
     "compile-time slice bounds; integer indices, also run-time ones, drop their dimension and count from the end "
     "when negative).", **_PRIMAL_FREE, collective=True)
_reg("tile_slice_assign", _slice_assign, "t[a:b:c, i, ...] = src: t (in place) with the selected elements replaced "
     "by src's (a tile of the selection's shape); the selection's adjoint goes to src.", **_PRIMAL_FREE,
     collective=True, in_place=InPlace.FIRST)
def _slice_indexed(args, attrs):
    (out,) = attrs
    if len(args) != 3 or not is_tile(args[0]) or args[2] != T.INT32 or out.dtype != args[0].dtype or \
            len(out.shape) != len(args[0].shape):
        return None
    diff = [d for d, (a, b) in enumerate(zip(out.shape, args[0].shape)) if a != b]
    if len(diff) <= 1 and is_tile(args[1]) and args[1].dtype == T.INT32 and len(args[1].shape) == 1 and \
            all(a == b for d, (a, b) in enumerate(zip(out.shape, args[0].shape)) if d not in diff):
        return out
    return None


_reg("tile_slice_indexed", _slice_indexed, "t[idx, :], t[:, idx], ...: gather along one axis through a 1-D int32 "
     "index tile idx, every other subscript a full ':' (Warp's advanced tile indexing; the result is a copy whose "
     "extent along that axis is idx's length; negative entries count from the end; duplicates allowed, their "
     "gradients add up). Written as the subscript, not called directly.", collective=True)
_reg("tile_transpose", _transpose, "tile_transpose(t): the transpose of a 2-D tile.", **_PRIMAL_FREE, collective=True,
     adjoint_store=(0,), writes_result=True)
def _reshape(args, attrs):
    (out,) = attrs
    if len(args) == 1 and is_tile(args[0]) and out.size == args[0].size and out.dtype == args[0].dtype:
        return out
    return None


for _name, _params, _doc in (
        ("tile_reshape", ("t", "shape"), ("tile_reshape(t, shape): the elements of t in row-major order with a new "
         "shape (one entry may be -1).")),
        ("tile_squeeze", ("t", "axis"), ("tile_squeeze(t, axis=None): t without its extent-1 dimensions (all, or "
         "those in axis)."))):
    register(Op(_name, _reshape, native="tile_reshape", kind=OpKind.SPECIAL, adjoint=Adjoint.SPECIAL, domain=D,
                doc=_doc, collective=True, syntax=Syntax(Form.TILE_RESHAPE, params=_params), **_PRIMAL_FREE))
_reg("tile_broadcast", _broadcast, "tile_broadcast(t, shape): t broadcast to shape (NumPy rules).",
     **_PRIMAL_FREE, collective=True, syntax=_form(Form.TILE_BROADCAST))


# ---------------------------------------------------------------------------------------------- element-wise
def _elementwise(name):
    def rule(args, attrs):
        if len(args) != 2 or not (is_tile(args[0]) or is_tile(args[1])):
            return None
        a, b = args
        if is_tile(a) and is_tile(b):
            if a.shape != b.shape:
                return None
            if a.dtype == b.dtype:
                if isinstance(a.dtype, T.StructType):  # field-wise (the renderer's struct add / sub)
                    return a if name in ("add", "sub") else None
                return a if _element_rule(name, a.dtype, b.dtype) == a.dtype else None
            # a tile of vectors / matrices with a tile of their scalar (either order), as in Warp
            scalars = [t.dtype for t in (a, b) if isinstance(t.dtype, T.ScalarType)]
            if len(scalars) != 1 or T.scalar_of(a.dtype) != T.scalar_of(b.dtype):
                return None
            result = _element_rule(name, a.dtype, b.dtype)
            return T.TileType(result, a.shape) if result is not None else None
        tile, other = (a, b) if is_tile(a) else (b, a)
        ea, eb = (tile.dtype, other) if is_tile(a) else (other, tile.dtype)
        result = _element_rule(name, ea, eb)
        if result is None:
            return None
        return T.TileType(result, tile.shape)
    return rule


def _element_rule(name, a, b):
    from . import registry

    found = registry.resolve(name, (a, b))
    if found is None:
        return None
    _op, results = found
    return results[0] if len(results) == 1 else None


for _name in ("add", "sub", "mul", "div"):
    register(Op(_name, _elementwise(_name), native="tile_" + _name, kind=OpKind.SPECIAL, adjoint=Adjoint.SPECIAL,
                in_place=InPlace.ALL, adjoint_scratch=True, adjoint_linear=_name in ("add", "sub"),
                constant_factor={"mul": Factor.EITHER, "div": Factor.DIVISOR}.get(_name, Factor.NONE),
                domain=D, doc=f"Element-wise {_name} of tiles (or a tile and a value broadcast to every element)."))
for _name in ("bit_and", "bit_or", "bit_xor"):
    register(Op(_name, _elementwise(_name), native="tile_" + _name, kind=OpKind.SPECIAL, adjoint=Adjoint.NONE,
                in_place=InPlace.ALL, domain=D, doc=f"Element-wise {_name} of integer tiles (or a tile and a value)."))
register(Op("neg", lambda a, at: a[0] if len(a) == 1 and is_tile(a[0]) else None, native="tile_neg",
            kind=OpKind.SPECIAL, adjoint=Adjoint.SPECIAL, in_place=InPlace.ALL, adjoint_reads_primal=False, domain=D,
            adjoint_linear=True, doc="-t element-wise."))


def _map(args, attrs):
    (body,) = attrs
    if args and all(is_tile(a) and a.shape == args[0].shape for a in args) and len(args) == len(body.params):
        return T.TileType(body.result.type, args[0].shape)
    return None


def reduced_shape(shape: tuple[int, ...], axis: int | None) -> tuple[int, ...]:
    """The shape of a reduction's result: (1,) for a whole tile (or a 1-D one), else ``shape`` without ``axis``."""
    if axis is None or len(shape) == 1:
        return (1,)
    return shape[:axis] + shape[axis + 1:]


def _reduce(args, attrs):
    body, axis = attrs[0], (attrs[1] if len(attrs) > 1 else None)
    if len(args) == 1 and is_tile(args[0]) and body.result.type == args[0].dtype:
        return T.TileType(args[0].dtype, reduced_shape(args[0].shape, axis))
    return None


_reg("tile_map", _map, "tile_map(f, a, b, ...): f applied to every element (f a builtin or @wp.func).",
     in_place=InPlace.ALL, collective=True, role=Role.TILE_MAP, syntax=_form(Form.TILE_MAP),
     adjoint_store=STORES_EVERY_ADJOINT, writes_result=True)
_reg("tile_reduce", _reduce, "tile_reduce(f, t, axis=None): t reduced with the binary function f to a one-element "
     "tile, or along axis (that dimension removed).", collective=True, owner_lanes=True, syntax=_form(Form.TILE_REDUCE))


def _reduction(result_dtype=None, ordered=False):
    def rule(args, attrs):
        if len(args) != 1 or not is_tile(args[0]):
            return None
        if attrs:  # tile_sum(a, axis): that dimension removed
            (axis,) = attrs
            return T.TileType(args[0].dtype, reduced_shape(args[0].shape, axis))
        dt = args[0].dtype
        if ordered and not isinstance(dt, T.ScalarType):
            return None
        if not ordered and not isinstance(dt, (T.ScalarType, T.VectorType, T.MatrixType, T.StructType)):
            return None
        return T.TileType(result_dtype or dt, (1,))
    return rule


_reg("tile_sum", _reduction(), "tile_sum(t, axis=None): the sum of all elements, as a one-element tile, or along "
     "axis (that dimension removed).", **_PRIMAL_FREE, scratch=True, collective=True, owner_lanes=True,
     syntax=Syntax(Form.TILE_AXIS_REDUCTION, params=("a", "axis")))
_reg("tile_min", _reduction(ordered=True), "tile_min(t): the smallest element, as a one-element tile.", scratch=True,
     adjoint_scratch=True, collective=True, owner_lanes=True)
_reg("tile_max", _reduction(ordered=True), "tile_max(t): the largest element, as a one-element tile.", scratch=True,
     adjoint_scratch=True, collective=True, owner_lanes=True)
_reg("tile_argmin", _reduction(T.INT32, ordered=True), "tile_argmin(t): flat index of the smallest element.",
     adjoint=Adjoint.NONE, scratch=True, collective=True, owner_lanes=True)
_reg("tile_argmax", _reduction(T.INT32, ordered=True), "tile_argmax(t): flat index of the largest element.",
     adjoint=Adjoint.NONE, scratch=True, collective=True, owner_lanes=True)


def _scan(args, attrs):
    if len(args) == 1 and is_tile(args[0]) and isinstance(args[0].dtype, T.ScalarType) and args[0].dtype != T.BOOL:
        return args[0]
    return None


for _name, _doc in (("tile_scan_inclusive", "the inclusive prefix sums (element i: elements 0..i)"),
                    ("tile_scan_exclusive", "the exclusive prefix sums (element i: elements 0..i-1; element 0 is 0)"),
                    ("tile_scan_max_inclusive", "the inclusive prefix maxima (C fmax: NaN elements are skipped)"),
                    ("tile_scan_min_inclusive", "the inclusive prefix minima (C fmin: NaN elements are skipped)")):
    _reg(_name, _scan, f"{_name}(a): {_doc}, over the tile's row-major sequence, in a tile of a's shape.",
         collective=True, owner_lanes=True, adjoint_linear=_name in ("tile_scan_inclusive", "tile_scan_exclusive"),
         adjoint_reads_primal=_name not in ("tile_scan_inclusive", "tile_scan_exclusive"))

def _print(args, attrs):
    (storage,) = attrs
    return T.VOID if len(args) == 1 and is_tile(args[0]) and storage in ("register", "shared") else None


_reg("tile_print", _print, "print(t) of a tile in a kernel: once per block, NumPy's nested-bracket layout followed by "
     "'= tile(shape=(...), storage=...)' as Warp prints it (attrs: the storage the tile was made with).",
     adjoint=Adjoint.NONE, side_effect=True, collective=True, public=False)

_SORT_KEYS = (T.FLOAT32, T.INT32, T.UINT32, T.INT64, T.UINT64, T.FLOAT64)


def _sort(args, attrs):
    if len(args) == 2 and is_tile(args[0]) and is_tile(args[1]) and args[0].dtype in _SORT_KEYS and \
            args[0].size == args[1].size:
        return args[0], args[1]
    return None


_reg("tile_sort", _sort, "tile_sort(keys, values): both tiles permuted in place into ascending key order (flattened "
     "row-major; not stable, as in Warp); keys float32, int32, uint32, int64, uint64 (and float64).",
     adjoint=Adjoint.NONE, collective=True, syntax=Syntax(Form.TILE_SORT, updates=(0, 1)))


# ---------------------------------------------------------------------------------------------- linear algebra
def _matmul(args, attrs):
    if len(args) == 2:
        a, b = args
        if is_tile(a) and is_tile(b) and len(a.shape) == 2 and len(b.shape) == 2 and a.shape[1] == b.shape[0] and \
                a.dtype == b.dtype and R.is_scalar(a.dtype, floats=True):
            return T.TileType(a.dtype, (a.shape[0], b.shape[1]))
        return None
    if len(args) == 5:
        a, b, c, alpha, beta = args
        prod = _matmul((a, b), attrs)
        if prod is not None and c == prod and alpha == beta == a.dtype:
            return prod
    return None


def _cholesky(args, attrs):
    if len(args) == 1 and is_tile(args[0]) and len(args[0].shape) == 2 and args[0].shape[0] == args[0].shape[1] and \
            R.is_scalar(args[0].dtype, floats=True):
        return args[0]
    return None


def _cholesky_solve(args, attrs):
    if len(args) != 2 or not (is_tile(args[0]) and is_tile(args[1])):
        return None
    L, b = args
    if _cholesky((L,), attrs) is None or b.dtype != L.dtype or len(b.shape) not in (1, 2) or b.shape[0] != L.shape[0]:
        return None
    return b


_reg("tile_matmul", _matmul, "tile_matmul(a, b) or a @ b: the matrix product; tile_matmul(a, b, out, alpha=1.0, "
     "beta=1.0) updates out = alpha * a @ b + beta * out.", in_place=InPlace.ACCUMULATOR, collective=True, syntax=Syntax(Form.TILE_MATMUL, updates=(2,)))
def _diag_add(args, attrs):
    if len(args) == 2 and is_tile(args[0]) and is_tile(args[1]) and len(args[0].shape) == 2 and \
            args[0].shape[0] == args[0].shape[1] and args[1].shape == args[0].shape[:1] and \
            args[0].dtype == args[1].dtype and isinstance(args[0].dtype, (T.ScalarType, T.VectorType, T.MatrixType)):
        return args[0]
    return None


_reg("tile_cholesky", _cholesky, "tile_cholesky(A, fill_mode='lower'): lower-triangular L with A = L L^T (reads A's "
     "lower triangle); fill_mode='upper': upper-triangular U with A = U^T U (reads the upper triangle).",
     collective=True, syntax=Syntax(Form.TILE_FACTOR, params=("A", "fill_mode")))
_reg("tile_cholesky_solve", _cholesky_solve, "tile_cholesky_solve(L, y, fill_mode='lower'): x with (L L^T) x = y "
     "(fill_mode='upper': L holds U, A = U^T U).", collective=True,
     syntax=Syntax(Form.TILE_SOLVE, params=("L", "y", "fill_mode")))
_reg("tile_lower_solve", _cholesky_solve, "tile_lower_solve(L, y): z with L z = y (the lower triangle of L read; y "
     "of shape (N,) or (N, M)).", collective=True, syntax=Syntax(Form.TILE_SOLVE, params=("L", "y")))
_reg("tile_upper_solve", _cholesky_solve, "tile_upper_solve(U, z): x with U x = z (the upper triangle of U read).",
     collective=True, syntax=Syntax(Form.TILE_SOLVE, params=("U", "z")))
_reg("tile_diag_add", _diag_add, "tile_diag_add(a, d): the square tile a with the 1-D tile d added to its diagonal.",
     collective=True, **_PRIMAL_FREE, syntax=Syntax(Form.TILE_SOLVE, params=("a", "d")))


def _fft(args, attrs):
    if len(args) == 1 and is_tile(args[0]) and isinstance(args[0].dtype, T.VectorType) and \
            args[0].dtype.length == 2 and args[0].dtype.scalar in (T.FLOAT32, T.FLOAT64):
        return args[0]
    return None


_reg("tile_fft", _fft, "tile_fft(t): in-place forward FFT along the last dimension of a vec2f / vec2d tile "
     "(x = real, y = imaginary); leading dimensions are batched; not normalised.", **_PRIMAL_FREE,
     in_place=InPlace.FIRST, adjoint_scratch=True, collective=True, syntax=_IN_PLACE, adjoint_store=(0,))
_reg("tile_ifft", _fft, "tile_ifft(t): in-place inverse FFT along the last dimension; not normalised (a forward "
     "and inverse round trip scales by the length).", **_PRIMAL_FREE, in_place=InPlace.FIRST,
     adjoint_scratch=True, collective=True, syntax=_IN_PLACE, adjoint_store=(0,))

register(Op("block_dim", lambda a, at: T.INT32 if not a else None, native="block_dim", kind=OpKind.SPECIAL,
            adjoint=Adjoint.NONE, lane_level=True, domain=D,
            doc="block_dim(): the number of lanes in a block of the launch."))
