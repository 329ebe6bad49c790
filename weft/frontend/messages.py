"""Compile-error texts of the lowering: how values, overloads and constructors are described to the user (Warp's
wording where its tests match it)."""

from __future__ import annotations

import ast

from ..ir import types as T
from ..ir.nodes import Const, Var
from ..ir.roles import Role
from ..ops import registry
from ..typing.resolve import Weak, describe

#: Python's spelling of the arithmetic operators
_SYMBOLS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%"}

def describe_py(value) -> str:
    if getattr(value, "__name__", None) == "weft" and type(value).__name__ == "module":
        return "weft (wp)"
    if isinstance(value, type):
        return f"type {value.__name__}"
    if callable(value):
        return f"function {getattr(value, '__name__', value)!r}"
    return f"a Python {type(value).__name__}"


def describe_value(value) -> str:
    if isinstance(value, (Var, Const)):
        return f"a {value.type} value"
    return describe_py(value)


def _spelling(name: str, node) -> str:
    """How the user wrote the call that failed: an arithmetic operator's symbol, else the op's name."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return "unary -"
    atomic = any(op.role is Role.ATOMIC for op in registry.overloads(name))
    if isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in _SYMBOLS and not atomic:
        return _SYMBOLS[type(node.op)]
    return name


def composite_tile_arithmetic(arg_types) -> bool:
    """Two operands, one a tile of vectors / matrices and the other a composite tile or value (Warp: TypeError)."""
    if len(arg_types) != 2 or not any(isinstance(t, T.TileType) for t in arg_types):
        return False
    elems = [t.dtype if isinstance(t, T.TileType) else t for t in arg_types]
    return all(isinstance(e, (T.VectorType, T.MatrixType)) for e in elems)


def struct_tile_message(name: str, arg_types, attrs: tuple, node=None) -> str:
    """Warp's TypeError texts for tile operations that tiles of structs do not support ('' when no such tile)."""
    tiles = [t for t in (*arg_types, *attrs) if isinstance(t, T.TileType) and isinstance(t.dtype, T.StructType)]
    if not tiles:
        return ""
    dtype = tiles[0].dtype
    bitwise = isinstance(getattr(node, "op", None), (ast.BitAnd, ast.BitOr, ast.BitXor)) or \
        getattr(attrs[0] if attrs else None, "bitwise", False)
    if bitwise:
        return f"bitwise inplace operations are not supported on tiles of a Warp struct ({dtype})"
    return f"{name}() does not support tiles of a Warp struct ({dtype})"


def composite_tile_message(arg_types, node) -> str:
    if all(isinstance(t, T.TileType) for t in arg_types):
        return f"element-wise tile arithmetic on ({describe(arg_types)}): the element type must be scalar on one side"
    verb = {ast.Mult: "multiply", ast.Div: "divide", ast.Add: "add", ast.Sub: "subtract"}.get(
        type(getattr(node, "op", None)), "combine")
    a, b = (f"tile<{t.dtype}>" if isinstance(t, T.TileType) else str(t) for t in arg_types)
    return f"Cannot {verb} {a} by {b}: at least one operand must be a scalar type"


def overload_message(name: str, arg_types, attrs: tuple, node) -> str:
    why = registry.explain(name, tuple(a.default_type if isinstance(a, Weak) else a for a in arg_types), attrs)
    if why:  # an overload's rule said why it refuses these arguments (ops.registry.Rejected)
        return f"{_spelling(name, node)}(): {why}"
    stores = any(op.role is Role.STORE for op in registry.overloads(name))
    if stores and len(arg_types) >= 2 and isinstance(arg_types[0], T.ArrayType):
        return f"cannot store a {describe(arg_types[-1:])} value into an array of {arg_types[0].dtype}"
    if isinstance(node, ast.Call) and attrs and isinstance(attrs[0], T.Type) and arg_types:
        why = _construct_reason(attrs[0], arg_types)  # a constructor or conversion; Warp's reason at the end
        return f"{attrs[0]}() cannot be built from ({describe(arg_types)})" + (f": {why}" if why else "")
    return f"Couldn't find function overload for '{_spelling(name, node)}' that accepts ({describe(arg_types)})"


def _construct_reason(t: T.Type, arg_types) -> str:
    """Why a vector or matrix constructor rejects its arguments, in Warp's words ('' when none applies)."""
    if isinstance(t, T.VectorType) and t.flavor is T.VecFlavor.TRANSFORM and len(arg_types) not in (0, 1, 7) and \
            all(isinstance(a, (Weak, T.ScalarType)) for a in arg_types):
        # scalar components: none, one (fill) or all seven (a pair is (p, q) of a vec3 and a quat)
        return f"incompatible number of values given ({len(arg_types)}) when constructing a transform; expected 0, " \
               f"1, or 7"
    if not isinstance(t, (T.VectorType, T.MatrixType)) or (isinstance(t, T.VectorType) and t.flavor is not
                                                             T.VecFlavor.VECTOR):
        return ""
    kind = "vector" if isinstance(t, T.VectorType) else "matrix"
    size = f"length {t.length}" if kind == "vector" else f"shape ({t.rows}, {t.cols})"
    n = t.length if kind == "vector" else t.rows * t.cols
    types = [a.default_type if isinstance(a, Weak) else a for a in arg_types]
    if len(types) == 1 and kind == "vector" and isinstance(types[0], T.VectorType) and types[0].length != t.length:
        # (Warp's wording names the target's length first)
        return f"incompatible vector of length {t.length} given when copy constructing a vector of length " \
               f"{types[0].length}"
    if len(types) == 1 and kind == "matrix" and isinstance(types[0], T.MatrixType) and \
            (types[0].rows, types[0].cols) != (t.rows, t.cols):
        return f"incompatible matrix of shape ({t.rows}, {t.cols}) given when copy constructing a matrix of shape " \
               f"({types[0].rows}, {types[0].cols})"
    if not all(isinstance(a, T.ScalarType) for a in types):
        return ""
    if len(types) == 1:
        return f"the value used to fill this {kind} is expected to be of the type `{t.scalar}`" \
            if types[0] != t.scalar and not isinstance(arg_types[0], Weak) else ""
    if len(types) != n and not (kind == "matrix" and len(types) == t.rows):
        return f"incompatible number of values given ({len(types)}) when constructing a {kind} of {size}"
    if any(a != t.scalar and not isinstance(w, Weak) for a, w in zip(types, arg_types)):
        return f"all values used to initialize this {kind} are expected to be of the type `{t.scalar}`"
    return ""


def cast_hint(t: T.Type) -> str:
    return f"wp.{t}"


def overload_hint(arg_types, node) -> str:
    scalars = {T.scalar_of(t) for t in arg_types if not isinstance(t, Weak) and T.scalar_of(t) is not None}
    if len(scalars) > 1:
        return "weft never converts types implicitly; cast one side, e.g. wp.float32(x) or float(i)"
    product = isinstance(node, (ast.BinOp, ast.AugAssign)) and isinstance(node.op, ast.Mult)
    if product and all(isinstance(t, T.VectorType) for t in arg_types):
        return "use wp.dot(a, b) or wp.cw_mul(a, b) for vector products"
    return ""
