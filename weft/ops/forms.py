"""How calls are written in kernel code: the frontend's lowering rule of every callable, as a fact on a record.

A registry builtin carries a ``Syntax`` on its ``Op`` record: the ``Form`` of its call (plain operands, named
parameters with defaults, output variables, a state it advances, a tile builtin's keyword signature...) and the data
that form needs. Callables that are not ops (Python's ``range``/``len``/``float``..., ``print``, ``wp.static``,
``wp.where``, the vector and matrix factories) are declared here as ``LanguageForm`` records, keyed by the Python
object a kernel calls. The frontend lowers each ``Form`` with one rule (``weft/frontend/calls.py``); it never
dispatches on a builtin's name.
"""

from __future__ import annotations

import builtins
import enum
from dataclasses import dataclass

from ..ir import types as T


class Form(enum.Enum):
    # ---- registry builtins (Op.syntax.form)
    OPERANDS = "operands"  # wp.f(a, b, ...): the arguments are the operands
    KEYWORDS = "keywords"  # named parameters (Syntax.params) with declared types and trailing defaults
    TID = "tid"  # i, j = wp.tid(): as many indices as names unpacked
    PRINTF = "printf"  # a format string literal, then scalars
    EXPECT = "expect"  # two values (and a tolerance= when Syntax.params names one), reported with the source line
    FIXED_ZEROS = "fixed_zeros"  # wp.zeros(shape=, dtype=) in kernel code: a fixed-size local array
    RANDOM_STATE = "random_state"  # wp.f(state, ...): returns a value and rebinds the state variable to the next one
    RESULTS_OR_OUTPUTS = "results_or_outputs"  # a, b = wp.f(x) or wp.f(x, a, b) (Syntax.outputs output variables)
    SIZED_IDENTITY = "sized_identity"  # wp.identity(n, dtype): compile-time size and scalar type
    TYPED_CONSTANT = "typed_constant"  # wp.quat_identity(dtype=float32): a constant of a compile-time scalar type
    QUERY_NEXT = "query_next"  # while wp.<query>_next(query, index): both variables advance in place
    STRUCT_QUERY = "struct_query"  # results packed into Syntax.struct (or Warp's older output-variable form)
    #: named parameters (Syntax.params, declared Syntax.types); a parameter named ``dtype`` is a compile-time type
    #: handed to the op as its attribute; the variables at Syntax.updates (positions among the other parameters) are
    #: output variables, rebound to the op's results after the first (wp.volume_sample_grad(id, p, mode, grad, dtype))
    TYPED_OUTPUTS = "typed_outputs"
    TILE_LOAD = "tile_load"
    TILE_STORE = "tile_store"  # tile_store / tile_atomic_add(a, t, offset)
    TILE_LOAD_INDEXED = "tile_load_indexed"  # tile_load_indexed(a, indices, shape, offset, axis)
    TILE_STORE_INDEXED = "tile_store_indexed"  # tile_store_indexed / tile_atomic_add_indexed(a, indices, t, offset, axis)
    TILE_FILLED = "tile_filled"  # tile_zeros / tile_ones / tile_full(shape[, value], dtype)
    TILE_ARANGE = "tile_arange"
    TILE = "tile"  # wp.tile(x): per-lane values gathered into a tile
    TILE_VIEW = "tile_view"
    TILE_BROADCAST = "tile_broadcast"
    TILE_RESHAPE = "tile_reshape"  # tile_reshape(t, shape) / tile_squeeze(t, axis): the elements in a new shape
    TILE_MAP = "tile_map"
    TILE_REDUCE = "tile_reduce"
    TILE_AXIS_REDUCTION = "tile_axis_reduction"  # tile_sum(a, axis=None): the whole tile or one axis (attrs: (axis,))
    TILE_MATMUL = "tile_matmul"
    TILE_FACTOR = "tile_factor"  # tile_cholesky(A, fill_mode=): "upper" factors the transpose, transposed back
    TILE_SOLVE = "tile_solve"  # tiles as named operands (Syntax.params) and fill_mode="upper" reading the factor's transpose
    TILE_IN_PLACE = "tile_in_place"  # tile_fft(t): transforms the tile variable in place
    TILE_RANDOM = "tile_random"  # tile_randi / tile_randf(shape, rng, min=, max=): compile-time shape
    TILE_FROM_THREAD = "tile_from_thread"  # tile_from_thread(shape, value, thread_idx): one lane's value, filled
    TILE_ASSIGN = "tile_assign"  # tile_assign(dst, src, offset): src written into the tile variable dst
    TILE_SORT = "tile_sort"  # tile_sort(keys, values): both tile variables permuted in place
    TILE_QUERY_NEXT = "tile_query_next"  # tile_bvh_query_next(q): a tile of the next items, q advanced in place
    # ---- language forms (LanguageForm.form): calls that are not registry ops
    STATIC = "static"  # wp.static(expr): evaluated at compile time
    WHERE = "where"  # wp.where(cond, a, b)
    UNOT = "unot"  # wp.unot(a): logical not
    PRINT = "print"  # Python's print(...)
    TRANSFORM_SET = "transform_set"  # wp.transform_set_translation/rotation(t, v): updates the variable t
    CAST = "cast"  # float(x), int(x), bool(x): a conversion to LanguageForm.arg
    PY_OP = "py_op"  # abs(x), round(x), pow(x, y): the registry op LanguageForm.arg
    FOLD = "fold"  # min(a, b, c, ...), max(...): the binary op LanguageForm.arg folded left to right
    LEN = "len"  # len(a): an array's first extent, a vector's or matrix's (compile-time) length
    RANGE = "range"  # range(...) outside a for statement (an error)
    ARRAY_AT = "array_at"  # wp.array(ptr=, shape=, dtype=): a contiguous array over memory at an address
    TYPE = "type"  # type(x): x's type as a constructor
    BIT_CAST = "bit_cast"  # wp.cast(a, dtype): a's bytes as another value type of the same size
    VECTOR = "vector"  # wp.vector(..., length=, dtype=)
    MATRIX = "matrix"  # wp.matrix(..., shape=, dtype=)
    FLAVORED_VECTOR = "flavored_vector"  # wp.quaternion(...) / wp.transformation(...): LanguageForm.arg = (n, flavor)
    MATRIX_FROM_VECTORS = "matrix_from_vectors"  # matrix_from_rows / _cols (LanguageForm.arg: True for columns)
    TILE_EMPTY = "tile_empty"  # wp.tile_empty(shape, dtype): LanguageForm.arg names the op it lowers to
    TILE_ASTYPE = "tile_astype"  # wp.tile_astype(t, dtype): a tile_map of the conversion
    TILE_DOT = "tile_dot"  # wp.tile_dot(a, b): tile_sum of the element-wise products
    TILE_IN_PLACE_OF = "tile_in_place_of"  # tile_cholesky_inplace(A) ...: the op LanguageForm.arg, result into .updates
    TILE_AXPY = "tile_axpy"  # wp.tile_axpy(alpha, src, dest): dest += alpha * src (LanguageForm.updates: dest)
    GRAD = "grad"  # wp.grad(f): a static handle to f's gradient (frontend/grad_call.py)
    TILE_STACK = "tile_stack"  # wp.tile_stack / _push / _pop / _clear / _count, tile_scatter_add (LanguageForm.arg: which)


@dataclass(frozen=True, slots=True)
class Syntax:
    """How a registry builtin is called in kernel code (one per op name: every overload carries the same)."""

    form: Form = Form.OPERANDS
    #: parameter names (keyword forms; EXPECT: whether a tolerance is accepted; RESULTS_OR_OUTPUTS: the inputs)
    params: tuple[str, ...] = ()
    #: the declared type of each parameter (literal arguments take it; None: any type)
    types: tuple = ()
    #: defaults of the trailing parameters
    defaults: tuple = ()
    #: RESULTS_OR_OUTPUTS: how many results the output-variable form writes
    outputs: int = 0
    #: positions of the arguments the call updates in place: the binding analysis makes those variables mutable
    updates: tuple[int, ...] = ()
    #: STRUCT_QUERY: the struct the results are packed into, in field order
    struct: T.StructType | None = None
    #: STRUCT_QUERY: the fields Warp's older form writes into output variables, in its argument order
    legacy: tuple[str, ...] = ()
    #: an iterating query (``for i in wp.hash_grid_query(...)``): the builtin that advances it
    iterated_by: str = ""


OPERANDS = Syntax()


@dataclass(frozen=True, slots=True)
class LanguageForm:
    """A callable of kernel code that is not a registry op."""

    name: str  # as the user writes it (error messages)
    form: Form
    arg: object = None  # the form's datum: CAST's type, PY_OP's / FOLD's op, TRANSFORM_SET's part ...
    #: positions of the arguments the call updates in place (as Syntax.updates)
    updates: tuple[int, ...] = ()


_LANGUAGE: dict[object, LanguageForm] = {}


def declare(obj, name: str, form: Form, arg: object = None, updates: tuple[int, ...] = ()):
    """Declare ``obj`` (the Python object a kernel calls) as a language form; returns ``obj``."""
    _LANGUAGE[obj] = LanguageForm(name, form, arg, updates)
    return obj


def language_form(obj) -> LanguageForm | None:
    """The language form a kernel's callee is declared as, or None (ops, funcs, types, anything else)."""
    try:
        return _LANGUAGE.get(obj)
    except TypeError:  # unhashable callee
        return None


def declared(name: str):
    """The object declared as the language form ``name`` (kernel code calling ``where(...)`` without ``wp.``), or
    None."""
    return next((obj for obj, form in _LANGUAGE.items() if form.name == name), None)


def language_forms() -> dict[object, LanguageForm]:
    return dict(_LANGUAGE)


declare(builtins.print, "print", Form.PRINT)
declare(builtins.float, "float", Form.CAST, T.FLOAT32)
declare(builtins.int, "int", Form.CAST, T.INT32)
declare(builtins.bool, "bool", Form.CAST, T.BOOL)
declare(builtins.abs, "abs", Form.PY_OP, "abs")
declare(builtins.round, "round", Form.PY_OP, "round")
declare(builtins.pow, "pow", Form.PY_OP, "pow")
declare(builtins.min, "min", Form.FOLD, "min")
declare(builtins.max, "max", Form.FOLD, "max")
declare(builtins.len, "len", Form.LEN)
declare(builtins.range, "range", Form.RANGE)
declare(builtins.type, "type", Form.TYPE)
