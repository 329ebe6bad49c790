"""Type constructors in kernel code: ``wp.vec3(...)``, ``wp.float32(x)``, ``MyStruct()``, ``wp.transform(p, q)``..."""

from __future__ import annotations

from ..ir import types as T
from ..ir.nodes import Const, Var
from ..types.mapping import to_ir
from ..typing.resolve import Weak


def construct(lw, t: T.Type, args, kwargs, node):
    """``wp.vec3(...)``, ``wp.float32(x)``, ``MyStruct()``, ``wp.mat33(...)``..."""
    if isinstance(t, T.VectorType) and t.flavor is T.VecFlavor.TRANSFORM and set(kwargs) <= {"p", "q"} \
            and len(args) + len(kwargs) in (1, 2) and (kwargs or _is_vec3(args[0])):
        return _transform_parts(lw, t, args, kwargs, node)
    if isinstance(t, T.StructType):
        return _construct_struct(lw, t, args, kwargs, node)
    if kwargs and isinstance(t, (T.VectorType, T.MatrixType)):
        kwargs = _check_type_keywords(lw, t, kwargs, node)
    if kwargs:
        raise lw.error(f"{t} constructor takes no keyword arguments", node)
    if isinstance(t, T.ScalarType):
        if len(args) != 1:
            raise lw.error(f"{t}() takes exactly one argument", node)
        value = lw.as_operand_or_weak(args[0], node)
        if isinstance(value, Weak):
            return lw.operand(value, node, want=t) if value.fits(t) else Const(t.np_dtype.type(value.value).item(), t)
        if value.type == t:
            return value
        return lw.op("cast", [value], attrs=(t,), node=node)
    if isinstance(t, T.GenericType):
        raise lw.error(f"{t} is a generic type and cannot be constructed", node)
    scalar = T.scalar_of(t)
    ops = [lw.operand(a, node, want=scalar) if isinstance(lw.as_operand_or_weak(a, node), Weak)
           else lw.as_operand_or_weak(a, node) for a in args]
    if isinstance(t, T.VectorType) and t.flavor is T.VecFlavor.TRANSFORM and len(ops) == 1 and \
            isinstance(ops[0].type, T.VectorType) and ops[0].type.flavor is T.VecFlavor.TRANSFORM and \
            ops[0].type.scalar != t.scalar:  # as Warp: a transform is copied only within one precision
        raise lw.error(f"copy constructing a transform requires matching source and target dtypes, got "
                       f"`{ops[0].type.scalar}` and `{t.scalar}`", node)
    if isinstance(t, T.VectorType) and len(ops) >= 2 and any(isinstance(o.type, T.VectorType) for o in ops):
        if t.flavor is T.VecFlavor.TRANSFORM and len(ops) == 2:
            return lw.op("construct", ops, attrs=(t,), node=node)  # transform(p, q)
        piece_scalars = {o.type.scalar for o in ops if isinstance(o.type, T.VectorType)}
        if t.scalar == T.FLOAT32 and len(piece_scalars) == 1 and next(iter(piece_scalars)).is_float:
            # Warp's generic constructors (spatial_vector(w, v), quaternion(ijk, w)) take the pieces' precision
            t = T.VectorType(t.length, next(iter(piece_scalars)), t.flavor)
            ops = [lw.operand(a, node, want=t.scalar) if isinstance(lw.as_operand_or_weak(a, node), Weak)
                   else lw.as_operand_or_weak(a, node) for a in args]
        ops = _components(lw, t, ops, node)
    return lw.op("construct", ops, attrs=(t,), node=node)


def _check_type_keywords(lw, t, kwargs, node) -> dict:
    """``mat32d(m, shape=(3, 2))`` / ``vec3(x, length=3, dtype=float)``: Warp's concrete constructors accept the
    type's own ``shape`` / ``length`` / ``dtype`` as keywords; they must agree with the type (they select nothing)."""
    rest = dict(kwargs)
    expect = {"shape": (t.rows, t.cols) if isinstance(t, T.MatrixType) else (t.length,)}
    if isinstance(t, T.VectorType):
        expect["length"] = t.length
    for key, want in expect.items():
        if key not in rest:
            continue
        given = _literal(rest.pop(key))
        given = tuple(given) if isinstance(given, (tuple, list)) else given
        if key == "shape" and isinstance(given, int):
            given = (given,)
        if given != want:
            raise lw.error(f"{t}() got {key}={given!r}, but its {key} is {want!r}", node)
    if "dtype" in rest:
        dtype = _literal(rest.pop("dtype"))
        try:
            ok = to_ir(dtype) == T.scalar_of(t)
        except (TypeError, ValueError, KeyError):
            ok = False
        if not ok:
            raise lw.error(f"{t}() got dtype={dtype!r}, but its scalar type is {T.scalar_of(t)}", node)
    return rest


def _literal(x):
    if isinstance(x, (tuple, list)):
        return tuple(_literal(e) for e in x)
    return x.value if isinstance(x, (Weak, Const)) else x


def _construct_struct(lw, t: T.StructType, args, kwargs, node):
    """``MyStruct()`` (every field zero) or ``MyStruct(a, b, ...)`` / ``MyStruct(x=a, ...)`` giving every field."""
    value = lw.op("construct", [], attrs=(t,), node=node)
    if not args and not kwargs:
        return value
    names = [f for f, _ in t.fields]
    if len(args) > len(names):
        raise lw.error(f"{t.name}() takes {len(names)} field values ({', '.join(names)}), got {len(args)}", node)
    given = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names:
            raise lw.error(f"{t.name}() has no field '{k}'", node, hint="fields: " + ", ".join(names))
        if k in given:
            raise lw.error(f"{t.name}() got multiple values for field '{k}'", node)
        given[k] = v
    missing = [f for f in names if f not in given]
    if missing:
        raise lw.error(f"{t.name}() is missing the field value '{missing[0]}'", node,
                       hint="give every field, or none (then assign fields afterwards)")
    for fname, ftype in t.fields:
        v = lw.operand(given[fname], node, want=ftype)
        if v.type != ftype:
            raise lw.error(f"{t.name}() field '{fname}' is {ftype}, got {v.type}", node)
        value = lw.op("setfield", [value, v], attrs=(fname,), node=node)
    return value


def _is_vec3(value) -> bool:
    return isinstance(value, (Var, Const)) and isinstance(value.type, T.VectorType) and value.type.length == 3 \
        and value.type.flavor is T.VecFlavor.VECTOR


def _transform_parts(lw, t: T.VectorType, args, kwargs, node):
    """``wp.transform(p, q)`` with keywords or a default rotation: ``transform(p=v)`` is ``transform(v, identity)``."""
    parts = dict(zip(("p", "q"), args))
    for k, v in kwargs.items():
        if k in parts:
            raise lw.error(f"transform() got '{k}' twice", node)
        parts[k] = v
    p = parts.get("p")
    if p is None:
        p = lw.op("construct", [], attrs=(T.VectorType(3, t.scalar),), node=node)
    q = parts.get("q")
    if q is None:
        q = lw.op("quat_identity", [], attrs=(t.scalar,), node=node)
    return lw.op("construct", [lw.operand(p, node), lw.operand(q, node)], attrs=(t,), node=node)


def _components(lw, t: T.VectorType, ops, node):
    """The scalars of a vector built from pieces: ``spatial_vector(w, v)`` from two vec3, ``quaternion(ijk, w)``,
    ``vec4(v3, 1.0)``: vectors contribute their components in order (the same scalar type everywhere)."""
    flat = []
    for o in ops:
        if isinstance(o.type, T.VectorType) and o.type.scalar == t.scalar:
            flat += [lw.op("extract", [o, Const(i, T.INT32)], node=node) for i in range(o.type.length)]
        elif o.type == t.scalar:
            flat.append(o)
        else:
            raise lw.error(f"{t} cannot be built from a {o.type} (pieces must be {t.scalar} scalars or vectors)",
                           node)
    if len(flat) != t.length:
        raise lw.error(f"{t} has {t.length} components, the pieces given have {len(flat)}", node)
    return flat

