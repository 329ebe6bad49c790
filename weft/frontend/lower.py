"""AST -> typed IR. One :class:`Lowerer` per kernel specialisation; funcs are inlined as nested frames.

Modelled on Triton's code generator: ``visit`` turns any failure into a CompileError at the user's line, and
unsupported syntax is rejected by name. Compiler state lives in frames and side tables, never on AST nodes.
"""

from __future__ import annotations

import ast
import builtins
import enum
import math
import operator
import types
from dataclasses import dataclass, field

import numpy as np

from .. import config
from ..errors import (
    CompileError,
    KernelAttributeError,
    KernelIndexError,
    KernelNameError,
    KernelTypeError,
    KernelValueError,
    SourceLoc,
    TypeError_,
)
from ..ir import types as T
from ..ir.builder import Builder
from ..ir.nodes import Break, Call, Const, Continue, For, Function, If, Return, Var, VarKind, While
from ..ir.roles import Role
from ..ops import registry
from ..ops.tile import TileUpdate
from ..types.composite import class_for
from ..types.mapping import to_ir
from ..typing.resolve import Weak, resolve
from . import adjoint_access, components, tile_alias, tile_slices
from .analysis import binding_analysis, loop_has_break_or_continue, may_return
from .deps import DepRecorder
from .grad_call import GradWrapper
from .messages import (
    cast_hint,
    composite_tile_arithmetic,
    composite_tile_message,
    describe_py,
    describe_value,
    overload_hint,
    overload_message,
    struct_tile_message,
)
from .source import FunctionSource

_BINOPS = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.FloorDiv: "floordiv", ast.Mod: "mod",
    ast.Pow: "pow", ast.MatMult: "mul", ast.BitAnd: "bit_and", ast.BitOr: "bit_or", ast.BitXor: "bit_xor",
    ast.LShift: "lshift", ast.RShift: "rshift",
}
_PY_BINOPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow, ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
}
#: a @ b of tiles is their matrix product (of matrices and vectors it is mul)
_TILE_BINOPS = {ast.MatMult: "tile_matmul"}
#: a[i] += x and a[i] -= x on arrays are atomic updates, as in Warp
_ATOMIC_BINOPS = {ast.Add: "atomic_add", ast.Sub: "atomic_sub"}
#: t[i] += x and the other in-place operators on tile elements (every lane's update lands, as in Warp)
_TILE_UPDATES = {ast.Add: TileUpdate.ADD, ast.Sub: TileUpdate.SUB, ast.BitAnd: TileUpdate.AND,
                 ast.BitOr: TileUpdate.OR, ast.BitXor: TileUpdate.XOR}
_CMPOPS = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}
_PY_CMPOPS = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
              ast.Eq: operator.eq, ast.NotEq: operator.ne}
_SWIZZLE = {"x": 0, "y": 1, "z": 2, "w": 3}
#: Warp's message for a kernel that returns a value or declares a result type
_KERNEL_RETURN = ("Warp kernels cannot return values. Write results to output arguments, and omit the return "
                  "annotation or use `-> None`.")


@dataclass
class Frame:
    src: FunctionSource
    env: dict = field(default_factory=dict)
    mutable: set = field(default_factory=set)
    component_only: set = field(default_factory=set)
    is_func: bool = False
    tail_only: bool = True
    ret_vars: list | None = None
    done: Var | None = None
    result: object = None
    loop_depth: int = 0
    #: loops unrolled because wp.static() reads their index: (loop_depth, block depth) at their body, where a
    #: break/continue reached unconditionally ends the unrolled iteration (or the loop) at compile time
    unrolled_jumps: list = field(default_factory=list)
    ref_params: frozenset = frozenset()  # the func's wp.ref[T] parameters
    call_loc: SourceLoc | None = None
    name: str = ""
    adjoint_targets: dict | None = None  # inside a @wp.func_grad: param name -> the call's input operand
    tile_aliases: dict = field(default_factory=dict)  # view name -> its parent's subscript (frontend.tile_alias)


class Lowerer:
    """Lowers one kernel (with the funcs it calls) to a typed :class:`Function`."""

    def __init__(self, src: FunctionSource, param_types: dict[str, T.Type], name: str, options: dict | None = None):
        self.b = Builder()
        self.frames: list[Frame] = []
        self.param_types = param_types
        self.name = name
        self.options = options or {}
        self.root_src = src
        self.tid_arity = 0
        self.uses_tiles = False
        self.inline_stack: list[object] = []
        self.in_custom_body = 0  # > 0 while lowering a @wp.func_grad / @wp.func_replay body (autodiff.custom)
        self.stmt_stack: list[ast.stmt] = []
        self._pinned = 0  # augmented-assignment index values bound to hidden names (pin_target)
        self.deps = DepRecorder()  # static resolutions, for reusing this lowering in later processes
        self.grad_subs: list = []  # the wp.grad calls lowered so far (frontend/grad_call.py), shared with their subs

    # ------------------------------------------------------------------ entry
    def lower_kernel(self) -> Function:
        src = self.root_src
        from .calls import ref_positions_in

        mutable, component_only = binding_analysis(src.tree, ref_positions_in(src))
        frame = Frame(src, mutable=mutable, component_only=component_only, name=src.func.__name__)
        self.frames.append(frame)
        self.b.loc = src.loc(src.tree)
        ret = getattr(src.func, "__annotations__", {}).get("return", None)
        if ret is not None and ret is not type(None) and ret != "None":
            raise self.error(_KERNEL_RETURN, src.tree.returns or src.tree, kind=TypeError_)
        params = []
        for arg in src.tree.args.args:
            t = self.param_types[arg.arg]
            v = Var(t, arg.arg, VarKind.PARAM)
            params.append(v)
            self._bind_initial(arg.arg, v)
        self.lower_block(src.tree.body)
        return Function(self.name, params, self.b.blocks[0], self.b.locals, src.loc(src.tree))

    @property
    def frame(self) -> Frame:
        return self.frames[-1]

    def _bind_initial(self, name: str, value) -> None:
        if name in self.frame.component_only and isinstance(value, Var) and isinstance(value.type, T.ArrayType):
            self.frame.env[name] = value  # stores into a[i] never rebind the array itself
        elif name in self.frame.mutable and isinstance(value, (Var, Const)):
            local = self.b.new_var(value.type, name, VarKind.MUTABLE)
            self.b.assign(local, value)
            self.frame.env[name] = local
        else:
            self.frame.env[name] = value

    # ------------------------------------------------------------------ errors
    def error(self, message: str, node: ast.AST | None = None, hint: str = "", kind=CompileError) -> CompileError:
        loc = self.frame.src.loc(node) if node is not None else self.b.loc
        chain = tuple(f.call_loc for f in reversed(self.frames) if f.call_loc is not None)
        return kind(message, loc, hint, chain)

    def visit(self, node: ast.AST):
        method = getattr(self, f"visit_{type(node).__name__}", None)
        if method is None:
            raise self.error(f"{_syntax_name(node)} is not supported in kernel code (Construct "
                             f"`ast.{type(node).__name__}` not supported in kernels.)", node,
                             hint=_UNSUPPORTED_HINTS.get(type(node), ""))
        saved = self.b.loc
        if isinstance(node, (ast.stmt, ast.expr)):
            self.b.loc = self.frame.src.loc(node)
        is_stmt = isinstance(node, ast.stmt)
        if is_stmt:
            self.stmt_stack.append(node)
        try:
            return method(node)
        except CompileError:
            raise
        except RecursionError:
            raise self.error("expression nested too deeply", node) from None
        except Exception as exc:  # an internal failure still points at the user's line
            if config.debug_internal:
                raise
            raise self.error(f"internal compiler error: {type(exc).__name__}: {exc}", node,
                             hint="this is a weft bug; set WEFT_DEBUG_INTERNAL=1 for the full traceback") from None
        finally:
            self.b.loc = saved
            if is_stmt:
                self.stmt_stack.pop()

    def current_stmt_target(self, call_node: ast.AST):
        """The target of the assignment whose value is ``call_node`` (None otherwise)."""
        stmt = self.stmt_stack[-1] if self.stmt_stack else None
        if isinstance(stmt, ast.Assign) and stmt.value is call_node and len(stmt.targets) == 1:
            return stmt.targets[0]
        return None

    # ------------------------------------------------------------------ blocks
    def lower_block(self, stmts: list[ast.stmt]) -> None:
        for i, stmt in enumerate(stmts):
            self.visit(stmt)
            rest = stmts[i + 1:]
            if rest and self.frame.is_func and not self.frame.tail_only and may_return(stmt):
                done = self.op("copy", [self.frame.done])  # SSA: the reverse sweep re-reads conditions
                if self.frame.loop_depth > 0:
                    self.b.emit(If(done, [Break(self.b.loc)], [], self.b.loc))
                else:
                    cond = self.op("logical_not", [done])
                    with self.b.nested() as then:
                        self.lower_block(rest)
                    self.b.emit(If(cond, then, [], self.b.loc))
                    return
            if isinstance(stmt, (ast.Return, ast.Break, ast.Continue)):
                return  # the rest is unreachable

    # ------------------------------------------------------------------ values
    def op(self, name: str, args: list, attrs: tuple = (), node: ast.AST | None = None, result_name: str = ""):
        """Emit a registry op on values (operands or weak literals); returns one Var or a tuple of Vars."""
        vals = [self.as_operand_or_weak(a, node) for a in args]
        arg_types = tuple(v if isinstance(v, Weak) else v.type for v in vals)
        found = resolve(name, arg_types, attrs)
        if found is None:
            struct = struct_tile_message(name, arg_types, attrs, node)
            if struct:
                raise self.error(struct, node, kind=KernelTypeError)
            if composite_tile_arithmetic(arg_types):
                raise self.error(composite_tile_message(arg_types, node), node, kind=KernelTypeError,
                                 hint="a tile of vectors or matrices combines with a scalar tile or a scalar")
            raise self.error(overload_message(name, arg_types, attrs, node), node,
                             hint=overload_hint(arg_types, node))
        opr, results, typed = found
        operands = tuple(self._const(v.value, t) if isinstance(v, Weak) else v for v, t in zip(vals, typed))
        dsts = self.b.let(Call(opr, attrs), operands, results, result_name)
        if (opr.in_place is registry.InPlace.FIRST or opr.role is Role.COPY) and len(dsts) == 1:
            self.carry_storage(operands[0], dsts[0])
        if len(dsts) == 1:
            return dsts[0]
        return dsts if dsts else None

    def _const(self, value, t: T.Type) -> Const:
        if isinstance(t, T.ScalarType):
            if t.is_float:
                value = float(value)
            elif t.is_bool:
                value = bool(value)
            else:
                value = int(value)
        return Const(value, t)

    def as_operand_or_weak(self, value, node=None):
        if isinstance(value, (Var, Const, Weak)):
            return value
        if isinstance(value, (bool, int, float)) and not isinstance(value, np.generic):
            return Weak(value)
        if isinstance(value, np.generic):
            return Const(value.item(), to_ir(type(value)))
        host_ir = getattr(type(value), "_ir_", None)
        if isinstance(host_ir, (T.VectorType, T.MatrixType)):
            return self._composite_const(value, host_ir)
        if isinstance(host_ir, T.StructType) and not any(isinstance(f, T.ArrayType) for _, f in host_ir.fields):
            return self._struct_const(value, host_ir, node)  # e.g. the value of a wp.static(...) expression
        raise self.error(f"{describe_py(value)} cannot be used as a value in kernel code", node,
                         hint="only numbers, weft value types, arrays and structs can be used in kernels")

    def _struct_const(self, value, t: T.StructType, node):
        """A host struct instance (without array fields) as a kernel value: built field by field."""
        out = self.op("construct", [], attrs=(t,), node=node)
        for name, ftype in t.fields:
            field = self.operand(getattr(value, name), node, want=ftype)
            out = self.op("setfield", [out, field], attrs=(name,), node=node)
        return out

    def _composite_const(self, value, t: T.Type):
        comps = [Const(float(x) if t.scalar.is_float else int(x), t.scalar) for x in np.asarray(value).reshape(-1)]
        return self.op("construct", comps, attrs=(t,))

    def operand(self, value, node=None, want: T.Type | None = None):
        """A typed operand; weak literals take ``want`` (or their default type)."""
        v = self.as_operand_or_weak(value, node)
        if isinstance(v, Weak):
            if want is not None and isinstance(want, T.ScalarType):
                if not v.fits(want):
                    raise self.error(f"literal {v.value!r} cannot be used as {want}", node)
                return self._const(v.value, want)
            return self._const(v.value, v.default_type)
        return v

    def read_name(self, name: str, node: ast.AST):
        frame = self.frame
        if name in frame.env:
            value = frame.env[name]
            if isinstance(value, Var) and value.kind is VarKind.MUTABLE:
                return self.op("copy", [value], node=node, result_name=name)
            return value
        globals_, closure = frame.src.globals_and_closure()
        if name in closure:
            self.deps.add(frame.src.func, "name", name, closure[name])
            return self.static_value(closure[name], node, name)
        if name in globals_:
            self.deps.add(frame.src.func, "name", name, globals_[name])
            return self.static_value(globals_[name], node, name)
        if hasattr(builtins, name):
            self.deps.add(frame.src.func, "name", name, getattr(builtins, name))
            return getattr(builtins, name)
        if name in frame.mutable:
            raise self.error(f"'{name}' is used before it is assigned", node,
                             hint=f"assign '{name}' before this line (on every path)")
        raise self.error(f"name '{name}' is not defined (Referencing undefined symbol: {name})", node,
                         kind=KernelNameError)

    def operator_func(self, name: str):
        """The @wp.func named ``name`` ("add", "mul" ...) visible from this code, if any: struct operands of the
        operator call it."""
        from .func import Func

        globals_, closure = self.frame.src.globals_and_closure()
        value = closure.get(name, globals_.get(name))
        if isinstance(value, Func):
            self.deps.add(self.frame.src.func, "name", name, value)
            return value
        return None

    def name_bound(self, name: str) -> bool:
        """Whether ``name`` means something in kernel code (a local, a closure or global name, a Python builtin)."""
        frame = self.frame
        if name in frame.env or name in frame.mutable or hasattr(builtins, name):
            return True
        globals_, closure = frame.src.globals_and_closure()
        return name in closure or name in globals_

    def static_value(self, value, node, name=""):
        """A Python object captured from globals or a closure."""
        if isinstance(value, (bool, int, float)):
            return Weak(value)
        if isinstance(value, (list, dict, set, bytearray)):
            kind = type(value).__name__
            raise self.error(f"kernel code reads the Python {kind} '{name}': a {kind} is mutable, so weft does not "
                             "capture it (later changes would be silently ignored)", node,
                             hint="use a tuple of constants, wp.constant(...), or pass the values in a wp.array")
        return value

    def carry_storage(self, src, dst) -> None:
        """The tile ``dst`` keeps the ``storage=`` ``src`` was made with (frontend/tiles.py: what print(t) shows)."""
        storage = self.__dict__.get("_tile_storage")
        if storage and getattr(src, "id", None) in storage:
            storage[dst.id] = storage[src.id]

    def bind(self, name: str, value, node: ast.AST) -> None:
        frame = self.frame
        if name in frame.mutable and (isinstance(value, GradWrapper) or isinstance(frame.env.get(name), GradWrapper)):
            raise self.error(f"Cannot reassign local '{name}' after binding it to wp.grad(...): wp.grad(...) results "
                             "are static function handles", node, hint="use a different local variable")
        if name in frame.component_only and isinstance(value, Var) and isinstance(value.type, T.ArrayType):
            frame.env[name] = value
        elif name in frame.mutable:
            if _is_function_value(frame.env.get(name)):  # f = func_a; f = ... (as Warp: a function local binds once)
                other = "another function" if _is_function_value(value) else "a non-function value"
                raise self.error(f"rebinding function-valued local '{name}' to {other} is not supported", node,
                                 hint="a local bound to a function is an alias resolved when compiling: give each "
                                      "function its own name")
            if _is_function_value(value):
                frame.env[name] = value
                return
            v = self.as_operand_or_weak(value, node) if not isinstance(value, tuple) else None
            if v is None:
                raise self.error(f"cannot assign a tuple to '{name}'", node, hint="unpack it: a, b = ...")
            current = frame.env.get(name)
            if isinstance(current, Var) and current.kind is VarKind.MUTABLE and len(self.b.blocks) == 1 \
                    and self.operand(v, node, want=current.type).type != current.type:
                current = None  # straight-line code may rebind a name to another type (sub = a[::4]; sub = sub[0])
            if isinstance(current, Var) and current.kind is VarKind.MUTABLE:
                src = self.operand(v, node, want=current.type)
                if src.type != current.type:
                    raise self.error(
                        f"cannot assign a {src.type} value to '{name}', which was first assigned a {current.type} "
                        "(a variable keeps one type)", node,
                        hint=f"convert explicitly, e.g. {name} = {cast_hint(current.type)}(...), or use a new name")
                self.b.assign(current, src)
                self.carry_storage(src, current)
            else:
                src = self.operand(v, node)
                local = self.b.new_var(src.type, name, VarKind.MUTABLE)
                self.b.assign(local, src)
                self.carry_storage(src, local)
                frame.env[name] = local
        else:
            frame.env[name] = value

    # ------------------------------------------------------------------ statements
    def visit_Expr(self, node: ast.Expr):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # docstring
        self.visit(node.value)

    def visit_Pass(self, node):
        pass

    def visit_Assign(self, node: ast.Assign):
        if isinstance(node.value, ast.List):  # x = [...]: Warp's error (lists elsewhere are tuples: f(*[a, b]))
            raise self.error("List constructs are not supported in kernels. Use vectors like `wp.vec3()` for small "
                             "fixed-size collections, or `wp.zeros(shape=N, dtype=...)` for stack-allocated arrays.",
                             node.value)
        view = tile_alias.prepare(self, node)  # name = tile[index]: a view writing through to the tile
        value = self.visit(view[1] if view is not None else node.value)
        tile_alias.forget(self, node)
        for target in node.targets:
            self.store(target, value)
        if view is not None:
            tile_alias.remember(self, view, value)

    def visit_AnnAssign(self, node: ast.AnnAssign):
        if node.value is None:
            raise self.error("a declaration without a value is not supported", node, hint="write x: float = 0.0")
        value = self.visit(node.value)
        try:
            want = to_ir(self.eval_static(node.annotation))
        except TypeError:
            want = None
        if want is not None:
            if isinstance(want, T.ScalarType):
                value = self.operand(value, node, want=want)
            got = getattr(value, "type", None)
            if got != want:
                got_text = got if got is not None else (f"the literal {value.value!r}" if isinstance(value, Weak)
                                                        else type(value).__name__)
                raise self.error(f"'{ast.unparse(node.target)}' is annotated as {want} but its value is {got_text}",
                                 node, hint=f"weft never converts types implicitly; convert the value, e.g. "
                                            f"{cast_hint(want)}(...)" if isinstance(want, T.ScalarType) else "")
        self.store(node.target, value)

    def visit_AugAssign(self, node: ast.AugAssign):
        opname = _BINOPS.get(type(node.op))
        if opname is None:
            raise self.error(f"augmented assignment with {type(node.op).__name__} is not supported", node)
        target = node.target
        if adjoint_access.split(self, target) is not None:
            return adjoint_access.accumulate(self, node)
        target = self.pin_target(target)  # its index expressions run once, before the right-hand side (Python)
        if isinstance(target, ast.Subscript):
            base = self.visit(target.value)
            atomic = _ATOMIC_BINOPS.get(type(node.op))
            if isinstance(base, Var) and isinstance(base.type, T.ArrayType) and atomic is not None:
                idx = self.indices(target.slice)
                value = self.operand(self.visit(node.value), node, want=base.type.dtype)
                # Warp semantics: a[i] += x is an atomic add
                self.op(atomic, [base, *idx, value], node=node)
                return
            mode = _TILE_UPDATES.get(type(node.op))
            if isinstance(base, Var) and isinstance(base.type, T.TileType) and \
                    tile_slices.is_tile_selection(base.type, target.slice):
                raise self.error("Compound assignment to a tile view (t[a:b] += x) is not supported", target,
                                 kind=KernelValueError, hint="write t[a:b] = t[a:b] + x")
            if isinstance(base, Var) and isinstance(base.type, T.TileType) and mode is not None:
                # t[i, j] += x: every lane's update lands (as Warp's atomic tile updates)
                self.store(target.value, self.tile_update(base, target, self.visit(node.value), mode))
                return
        current = self.visit(_as_load(target))
        rhs = self.visit(node.value)
        result = self.binop(opname, current, rhs, node, tile_name=_TILE_BINOPS.get(type(node.op)))
        if isinstance(target, ast.Name) and target.id in self.frame.ref_params and isinstance(current, (Var, Const)) \
                and isinstance(result, (Var, Const)) and result.type != current.type:
            raise self.error(f"augmented assignment to ref parameter '{target.id}' gives a {result.type} value; the "
                             f"parameter is a wp.ref[{current.type}]", node, kind=TypeError_)
        self.store(target, result)

    def pin_target(self, target: ast.AST) -> ast.AST:
        """A copy of an augmented-assignment target whose index expressions (and the subscripted or attributed
        values they hang off) are evaluated now, once, and read back by name: ``a[f(i)].x += v`` loads and stores
        through the same ``f(i)``, called once."""
        if isinstance(target, ast.Attribute):
            return ast.copy_location(ast.Attribute(value=self.pin_target(target.value), attr=target.attr,
                                                   ctx=target.ctx), target)
        if isinstance(target, ast.Subscript):
            parts = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
            if any(isinstance(p, ast.Slice) for p in parts):
                return target
            value = self.pin_target(target.value)
            pinned = [self._pin(p) for p in parts]
            sl = ast.copy_location(ast.Tuple(elts=pinned, ctx=ast.Load()), target.slice) \
                if isinstance(target.slice, ast.Tuple) else pinned[0]
            return ast.copy_location(ast.Subscript(value=value, slice=sl, ctx=target.ctx), target)
        return target

    def _pin(self, expr: ast.AST) -> ast.AST:
        if isinstance(expr, (ast.Name, ast.Constant)) or self._is_static_expr(expr):
            return expr
        self._pinned += 1
        name = f"pinned.{self._pinned}"  # no Python name contains '.'
        self.frame.env[name] = self.visit(expr)
        return ast.copy_location(ast.Name(id=name, ctx=ast.Load()), expr)

    def _is_static_expr(self, expr: ast.AST) -> bool:
        """Constant expressions (``-1``, ``wp.static(...)``) stay as written (the frontend folds them)."""
        return isinstance(expr, ast.UnaryOp) and isinstance(expr.operand, ast.Constant)

    def _is_adjoint_marker(self, node) -> bool:
        value = self.eval_static_or_none(node)
        return getattr(value, "_wp_adjoint_marker_", False)

    def store(self, target: ast.AST, value) -> None:
        if isinstance(target, (ast.Subscript, ast.Attribute)) and adjoint_access.split(self, target) is not None:
            adjoint_access.assign(self, target, value)
            return
        if isinstance(target, ast.Name):
            self.bind(target.id, value, target)
            if self.frame.tile_aliases:
                tile_alias.write_back(self, target.id, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = self.unpack(value, len(target.elts), target)
            for t, v in zip(target.elts, values):
                self.store(t, v)
        elif isinstance(target, ast.Subscript):
            base = self.visit(target.value)
            if isinstance(base, Var) and isinstance(base.type, T.ArrayType):
                idx = self.indices(target.slice)
                if len(idx) != base.type.ndim:
                    raise self.error(f"Incorrect number of indices specified for array indexing: storing into a "
                                     f"{base.type.ndim}-D array needs {base.type.ndim}, got {len(idx)}", target)
                val = self.operand(value, target, want=base.type.dtype)
                self.op("store", [base, *idx, val], node=target)
                return
            if isinstance(base, Var) and isinstance(base.type, T.TileType):
                if tile_slices.is_tile_selection(base.type, target.slice):
                    self.store(target.value, tile_slices.write(self, base, target, value))
                    return
                self.store(target.value, self.tile_update(base, target, value, TileUpdate.SET))
                return
            if isinstance(base, (Var, Const)) and isinstance(base.type, (T.VectorType, T.MatrixType)) \
                    and _has_slice(target.slice):
                self.store(target.value, components.store_slice(self, base, target.slice, value, target))
                return
            idx = self.indices(target.slice)
            if isinstance(base, (Var, Const)) and isinstance(base.type, (T.VectorType, T.MatrixType)):
                want = base.type.scalar if len(idx) == 2 or isinstance(base.type, T.VectorType) else None
                if want is not None:
                    value = self.operand(value, target, want=want)
                idx = self.check_components(base.type, idx, target)
            new = self.op("insert", [base, *idx, value], node=target)
            self.store(target.value, new)
        elif isinstance(target, ast.Attribute):
            base = self.visit(target.value)
            if not isinstance(base, Var):
                raise self.error(f"cannot assign to attribute '{target.attr}' of {describe_py(base)}", target)
            if isinstance(base.type, T.StructType):
                ftype = base.type.field_type(target.attr)
                if ftype is None:
                    raise self.error(f"struct {base.type.name} has no field '{target.attr}'", target)
                value = self.operand(value, target, want=ftype)
                new = self.op("setfield", [base, value], attrs=(target.attr,), node=target)
            elif isinstance(base.type, T.VectorType) and base.type.flavor is T.VecFlavor.TRANSFORM \
                    and target.attr in ("p", "q"):
                new = components.set_transform_part(self, base, target.attr, value, target)
            elif isinstance(base.type, T.VectorType) and target.attr in _SWIZZLE:
                value = self.operand(value, target, want=base.type.scalar)
                self.check_slot_value(base.type.scalar, value, target)
                new = self.op("insert", [base, Const(_SWIZZLE[target.attr], T.INT32), value], node=target)
            else:
                raise self.error(f"cannot assign to '.{target.attr}' of a {base.type} value", target)
            self.store(target.value, new)
        else:
            raise self.error(f"cannot assign to {_syntax_name(target)}", target)

    def tile_update(self, tile: Var, target: ast.Subscript, value, mode: TileUpdate) -> Var:
        """``t[i, ...] = value`` (or ``+=`` ...): one index per tile dimension, the value of the tile's element type."""
        idx = self.indices(target.slice)
        shape = tile.type.shape
        if len(idx) != len(shape):
            raise self.error(f"assigning into a {len(shape)}-D tile needs {len(shape)} indices, got {len(idx)}", target,
                             hint="index one element, e.g. t[i, j] = x")
        for k, (i, n) in enumerate(zip(idx, shape)):
            if isinstance(i, Const) and not -n <= i.value < n:
                raise self.error(f"index {i.value} is out of range for dimension {k} of a tile of shape {shape}",
                                 target)
        idx = [Const(i.value % n, i.type) if isinstance(i, Const) and i.value < 0 else i for i, n in zip(idx, shape)]
        dt = tile.type.dtype
        val = self.operand(value, target, want=T.scalar_of(dt) if not isinstance(dt, T.ScalarType) else dt)
        if val.type != dt and isinstance(val.type, T.ScalarType) and isinstance(dt, T.ScalarType):
            val = self.op("cast", [val], attrs=(dt,), node=target)
        if val.type != dt:
            raise self.error(f"cannot assign a {val.type} value to an element of a tile of {dt}", target)
        if mode.bitwise and isinstance(dt, T.StructType):
            raise self.error(struct_tile_message("tile_update", (tile.type,), (mode,)), target, kind=KernelTypeError)
        if mode.bitwise and not (isinstance(dt, (T.ScalarType, T.VectorType, T.MatrixType)) and T.scalar_of(dt).is_int):
            raise self.error(f"bitwise in-place operators need a tile of integers or of integer vectors / matrices, "
                             f"not of {dt}", target)
        return self.op("tile_update", [tile, *idx, val], attrs=(mode,), node=target)

    def unpack(self, value, n: int, node):
        if isinstance(value, tuple):
            if len(value) != n:
                raise self.error(f"cannot unpack {len(value)} values into {n} names", node)
            return value
        if isinstance(value, Var) and isinstance(value.type, T.VectorType) and value.type.length == n:
            return [self.op("extract", [value, Const(i, T.INT32)], node=node) for i in range(n)]
        raise self.error(f"cannot unpack {describe_value(value)} into {n} names", node)

    def visit_If(self, node: ast.If):
        cond = self.visit(node.test)
        static = _static_truth(cond)
        if static is not None:
            self.lower_block(node.body if static else node.orelse)
            return
        c = self.condition(cond, node.test)
        with self.b.nested() as then:
            self.lower_block(node.body)
        with self.b.nested() as orelse:
            self.lower_block(node.orelse)
        self.b.emit(If(c, then, orelse, self.b.loc))

    def condition(self, value, node) -> Var | Const:
        v = self.operand(value, node)
        if v.type == T.BOOL:
            return v
        if isinstance(v.type, T.ScalarType):
            return self.op("to_bool", [v], node=node)
        if isinstance(v.type, T.ArrayType) and v.type.kind is T.ArrayKind.ARRAY:
            return self.op("array_valid", [v], node=node)  # `if a:` is whether the array has data (Warp)
        raise self.error(f"a {v.type} value cannot be used as a condition", node,
                         hint="compare it explicitly, e.g. wp.length(v) > 0.0")

    def visit_For(self, node: ast.For):
        if node.orelse:
            raise self.error("for ... else is not supported", node)
        if not isinstance(node.target, ast.Name):
            raise self.error("the loop variable must be a single name", node.target)
        it = node.iter
        if isinstance(it, ast.Call) and _is_static_call(it):
            seq = self.eval_static(it.args[0])
            return self._unrolled(node, list(seq))
        from .queries import iterator_of, lower_query_for

        query = iterator_of(self, it)
        if query is not None:
            return lower_query_for(self, node, query)
        if isinstance(it, ast.Call) and self.eval_static_or_none(it.func) is builtins.reversed:
            it = node.iter = self._reversed_range(it)
        if not (isinstance(it, ast.Call) and self.eval_static_or_none(it.func) is builtins.range):
            raise self.error("only 'for i in range(...)' loops are supported", it,
                             hint="iterate over indices: for i in range(n)")
        if it.keywords or not 1 <= len(it.args) <= 3:
            raise self.error("range() takes 1 to 3 positional arguments", it)
        args = [self.visit(a) for a in it.args]
        if len(args) == 1:
            args = [Weak(0), args[0], Weak(1)]
        elif len(args) == 2:
            args = [args[0], args[1], Weak(1)]
        statics = [a.value if isinstance(a, Weak) else None for a in args]
        if all(isinstance(s, int) for s in statics):
            trip = len(range(*statics))
            if _static_reads_index(node) and not self._loop_returns(node):
                return self._unrolled(node, list(range(*statics)), jumps=True)  # as Warp: unrolled whatever its length
            if trip <= config.max_unroll and not loop_has_break_or_continue(node) and not self._loop_returns(node):
                return self._unrolled(node, list(range(*statics)))
        ops = [self.operand(a, it) for a in args]
        itype = _common_int(ops)
        if itype is None:
            raise self.error("range() bounds must be integers", it,
                             hint="convert with int(x)")
        ops = [o if o.type == itype else self.op("cast", [o], attrs=(itype,), node=it) for o in ops]
        var = Var(itype, node.target.id, VarKind.SSA)
        name = node.target.id
        self.frame.loop_depth += 1
        saved_binding = self.frame.env.get(name)
        # read after the loop: Python leaves the last iteration's value there (not the loop's end), so each
        # iteration copies the index into an ordinary local that outlives the loop
        last = self._index_after_loop(node, name, itype, saved_binding)
        try:
            with self.b.nested() as body:
                was_mutable = name in self.frame.mutable
                self.frame.mutable.discard(name)
                self.frame.env[name] = var
                if last is not None:
                    self.b.assign(last, var)
                self.lower_block(node.body)
                if was_mutable:
                    self.frame.mutable.add(name)
        finally:
            self.frame.loop_depth -= 1
        if last is not None:
            self.frame.env[name] = last
        elif saved_binding is not None:
            self.frame.env[name] = saved_binding
        self.b.emit(For(var, ops[0], ops[1], ops[2], body, self.b.loc))

    def _index_after_loop(self, node: ast.For, name: str, itype: T.Type, before) -> Var | None:
        """A local for the loop index when the function reads ``name`` after the loop (initialised with its value
        before the loop, if it had one of the index's type), else None."""
        end = (node.end_lineno or node.lineno, node.end_col_offset or 0)
        read_after = any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
                         and (n.lineno, n.col_offset) > end for n in ast.walk(self.frame.src.tree))
        if not read_after:
            return None
        if isinstance(before, Var) and before.kind is VarKind.MUTABLE and before.type == itype:
            return before
        local = self.b.new_var(itype, name, VarKind.MUTABLE)
        init = Const(0, itype)
        if isinstance(before, Weak) and isinstance(before.value, int) and not isinstance(before.value, bool):
            init = Const(int(before.value), itype)
        elif isinstance(before, (Var, Const)) and before.type == itype:
            init = before
        self.b.assign(local, init)
        return local

    def _reversed_range(self, it: ast.Call) -> ast.Call:
        """``reversed(range(a, b, s))`` as the ``range`` of the same values in reverse order:
        ``range(a + (n - 1) * s, a - sign(s), -s)`` with ``n`` the trip count (integer division truncates, so the
        numerator is clamped at 0 first: a negative one only occurs for an empty range)."""
        inner = it.args[0] if len(it.args) == 1 and not it.keywords else None
        if not (isinstance(inner, ast.Call) and self.eval_static_or_none(inner.func) is builtins.range) \
                or inner.keywords or not 1 <= len(inner.args) <= 3:
            raise self.error("only reversed(range(...)) can be iterated in kernel code", it)
        parts = [ast.unparse(a) for a in inner.args]
        a, b = ("0", parts[0]) if len(parts) == 1 else (parts[0], parts[1])
        step = self.visit(inner.args[2]) if len(parts) == 3 else Weak(1)  # a literal (or captured constant)
        step = step.value if isinstance(step, Weak) else None
        if isinstance(step, int) and not isinstance(step, bool) and step != 0:
            sign, mag = (1, step) if step > 0 else (-1, -step)
            lo, hi = ((f"({a})", f"({b})") if step > 0 else (f"({b})", f"({a})"))
            n = f"max(0, ({hi} - {lo} + {mag - 1}) // {mag})"
            text = f"range(({a}) + ({n} - 1) * ({step}), ({a}) - ({sign}), {-step})"
        else:  # a run-time step: its sign picks the trip count's form (a zero step is an empty range here)
            st = f"({parts[2]})"
            n = (f"(max(0, ({b}) - ({a}) + {st} - 1) // {st} if {st} > 0 else "
                 f"(max(0, ({a}) - ({b}) - {st} - 1) // (-{st}) if {st} < 0 else 0))")
            text = f"range(({a}) + ({n} - 1) * {st}, ({a}) - (1 if {st} > 0 else -1), -{st})"
        new = ast.parse(text, mode="eval").body
        for sub in ast.walk(new):  # errors point at the original expression
            ast.copy_location(sub, it)
        return new

    def _loop_returns(self, node) -> bool:
        return self.frame.is_func and not self.frame.tail_only and may_return(node)

    def _unrolled(self, node: ast.For, values: list, jumps: bool = False) -> None:
        name = node.target.id
        was_mutable = name in self.frame.mutable
        self.frame.mutable.discard(name)
        if jumps:
            self.frame.unrolled_jumps.append((self.frame.loop_depth, len(self.b.blocks)))
        try:
            for v in values:
                self.frame.env[name] = Weak(v) if isinstance(v, (bool, int, float)) else v
                try:
                    self.lower_block(node.body)
                except _UnrolledJump as jump:
                    if jump.kind == "break":
                        break
        finally:
            if jumps:
                self.frame.unrolled_jumps.pop()
        if was_mutable:
            self.frame.mutable.add(name)
            # the name is assigned elsewhere too: its last value becomes an ordinary local, so a later dynamic loop
            # that updates it carries the value from iteration to iteration (not the constant folded each time)
            last = self.frame.env.get(name)
            if isinstance(last, (Weak, Const)) or (isinstance(last, Var) and last.kind is not VarKind.MUTABLE
                                                   and not isinstance(last.type, (T.ArrayType, T.TileType))):
                del self.frame.env[name]
                self.bind(name, last, node.target)

    def visit_While(self, node: ast.While):
        if node.orelse:
            raise self.error("while ... else is not supported", node)
        with self.b.nested() as cond_body:
            cond = self.condition(self.visit(node.test), node.test)
        self.frame.loop_depth += 1
        try:
            with self.b.nested() as body:
                self.lower_block(node.body)
        finally:
            self.frame.loop_depth -= 1
        self.b.emit(While(cond_body, cond, body, self.b.loc))

    def visit_Break(self, node):
        self._unrolled_jump("break", node)
        if self.frame.loop_depth == 0:
            raise self.error("'break' outside a dynamic loop", node)
        self.b.emit(Break(self.b.loc))

    def visit_Continue(self, node):
        self._unrolled_jump("continue", node)
        if self.frame.loop_depth == 0:
            raise self.error("'continue' outside a dynamic loop", node)
        self.b.emit(Continue(self.b.loc))

    def _unrolled_jump(self, kind: str, node) -> None:
        """In a loop unrolled for wp.static(): end the iteration (or the loop) at compile time."""
        jumps = self.frame.unrolled_jumps
        if not jumps or jumps[-1][0] != self.frame.loop_depth:
            return  # no such loop, or a dynamic loop inside it is the target
        if len(self.b.blocks) != jumps[-1][1]:
            raise self.error(f"'{kind}' under a run-time condition in a loop unrolled because wp.static() reads its "
                             "index", node, hint="make the condition a compile-time one (wp.static(...)), or move "
                                                 "the wp.static() out of the loop")
        raise _UnrolledJump(kind)

    def visit_Return(self, node: ast.Return):
        frame = self.frame
        if not frame.is_func:
            if node.value is not None:
                raise self.error(_KERNEL_RETURN, node, kind=TypeError_)
            self.b.emit(Return(self.b.loc))
            return
        value = self.visit(node.value) if node.value is not None else None
        if frame.tail_only:
            frame.result = value
            return
        values = value if isinstance(value, tuple) else (() if value is None else (value,))
        ops = [self.operand(v, node) for v in values]
        if frame.ret_vars is None:
            frame.ret_vars = [self.b.new_var(o.type, f"{frame.name}_ret", VarKind.MUTABLE) for o in ops]
        elif len(frame.ret_vars) != len(ops):
            raise self.error("every return of a func must return the same number of values", node)
        for var, o in zip(frame.ret_vars, ops):
            if isinstance(o, Const) and o.type != var.type and isinstance(var.type, T.ScalarType):
                o = self._const(o.value, var.type)
            if o.type != var.type:
                raise self.error(f"this return gives {o.type} but an earlier return gave {var.type}", node,
                                 hint="return the same type on every path")
            self.b.assign(var, o)
        self.b.assign(frame.done, Const(True, T.BOOL))
        if frame.loop_depth > 0:
            self.b.emit(Break(self.b.loc))

    def visit_Assert(self, node: ast.Assert):
        cond = self.condition(self.visit(node.test), node.test)
        text = ast.get_source_segment(self.frame.src.text, node.test) or "assertion"
        if node.msg is not None:  # the message as written (Warp's report shows it too)
            text += ", " + (ast.get_source_segment(self.frame.src.text, node.msg) or ast.unparse(node.msg))
        loc = self.b.loc
        self.op("assert", [cond], attrs=(f"{loc.file}:{loc.line}: assert {text}",), node=node)

    def visit_With(self, node):
        raise self.error("'with' is not supported in kernel code", node)

    # ------------------------------------------------------------------ expressions
    def visit_Constant(self, node: ast.Constant):
        if isinstance(node.value, (bool, int, float)):
            return Weak(node.value)
        if isinstance(node.value, str):
            return node.value
        if node.value is None:
            return None
        raise self.error(f"constant {node.value!r} is not supported", node)

    def visit_Name(self, node: ast.Name):
        return self.read_name(node.id, node)

    def visit_Tuple(self, node: ast.Tuple):
        return tuple(self.visit(e) for e in node.elts)

    visit_List = visit_Tuple

    def visit_Attribute(self, node: ast.Attribute):
        base = self.visit(node.value)
        return self.attribute(base, node.attr, node)

    def attribute(self, base, attr: str, node, call: bool = False):
        if isinstance(base, (Var, Const)):
            t = base.type
            if isinstance(t, T.StructType):
                if t.field_type(attr) is None:
                    cls = t.pyclass
                    where = f"{cls.__module__}.{cls.__qualname__}" if cls is not None else t.name
                    raise self.error(f"struct {t.name} has no field '{attr}': `{attr}` is not an attribute of "
                                     f"'{ast.unparse(node.value)}' ({where})", node, kind=KernelAttributeError,
                                     hint="fields: " + ", ".join(n for n, _ in t.fields))
                return self.op("getfield", [base], attrs=(attr,), node=node)
            if isinstance(t, T.VectorType) and attr in _SWIZZLE and _SWIZZLE[attr] < t.length:
                return self.op("extract", [base, Const(_SWIZZLE[attr], T.INT32)], node=node)
            if isinstance(t, T.VectorType) and t.flavor is T.VecFlavor.TRANSFORM and attr in ("p", "q"):
                return self.op("transform_get_translation" if attr == "p" else "transform_get_rotation", [base],
                               node=node)
            if isinstance(t, T.ArrayType) and attr == "shape":
                return ArrayShape(self.op("array_shape", [base], attrs=(k,), node=node) for k in range(t.ndim))
            if isinstance(t, T.ArrayType) and attr == "size" \
                    and t.kind in (T.ArrayKind.FABRIC, T.ArrayKind.FABRIC_INDEXED):
                # a Fabric array's element count (Warp's uint64 `size` member)
                n = self.op("array_shape", [base], attrs=(0,), node=node)
                return self.op("cast", [n], attrs=(T.UINT64,), node=node)
            if isinstance(t, T.ArrayType) and attr == "ndim":
                return Weak(t.ndim)
            if isinstance(t, T.ArrayType) and attr == "ptr" and t.kind is T.ArrayKind.ARRAY:
                return self.op("array_ptr", [base], node=node)
            if isinstance(t, T.ArrayType) and attr == "dtype":
                return class_for(t.dtype)  # a compile-time type: a.dtype(0.0), tile_zeros(..., dtype=a.dtype)
            raise self.error(f"a {t} value has no attribute '{attr}'", node)
        if isinstance(base, Weak):
            if attr in ("value", "name"):  # MyEnum.B.value: the enum member (a number once resolved) asked again
                member = self.eval_static_or_none(node.value)
                if isinstance(member, enum.Enum):
                    return self.static_value(getattr(member, attr), node, attr)
            raise self.error(f"a number has no attribute '{attr}'", node)
        if attr == "dtype" and isinstance(base, type) and hasattr(base, "_wp_scalar_type_"):
            return base._wp_scalar_type_  # vec3f.dtype / type(a).dtype.dtype: a composite type's scalar, as in Warp
        try:
            value = getattr(base, attr)
            self._record_attribute(node, value)
            return self.static_value(value, node, attr)
        except AttributeError:
            if getattr(base, "__name__", None) == "weft" and attr in ("float", "int", "bool"):
                return getattr(builtins, attr)  # wp.float(x) in kernel code is the float(x) cast, as in Warp
            if isinstance(base, types.ModuleType):  # Warp's AttributeError and wording, weft's too
                path = ast.unparse(node)
                head = f"Could not find function {path}" if call else \
                    f"`{attr}` is not an attribute of {ast.unparse(node.value)}"
                raise self.error(f"{head}: {describe_py(base)} has no attribute '{attr}'", node,
                                 kind=KernelAttributeError) from None
            raise self.error(f"`{attr}` is not an attribute of {ast.unparse(node.value)}: {describe_py(base)} has no "
                             f"attribute '{attr}'", node, kind=KernelAttributeError) from None

    def _record_attribute(self, node, value) -> None:
        """Record ``a.b.c`` resolved statically (only dotted paths rooted at a global or closure name)."""
        parts = []
        cur = node
        while isinstance(cur, ast.Attribute):
            parts.append(cur.attr)
            cur = cur.value
        if not isinstance(cur, ast.Name) or cur.id in self.frame.env:
            self.deps.fail()
            return
        parts.append(cur.id)
        self.deps.add(self.frame.src.func, "attr", ".".join(reversed(parts)), value)

    def visit_Subscript(self, node: ast.Subscript):
        if self.frame.adjoint_targets is not None and self._is_adjoint_marker(node.value):
            return adjoint_access.read(self, node)
        base = self.visit(node.value)
        if isinstance(base, tuple):
            idx = self.eval_static(node.slice)
            if isinstance(base, ArrayShape) and isinstance(idx, int) and len(base) <= idx < 4:
                return Weak(0)  # as in Warp, an array's extents past its ndim read as 0
            return base[idx]
        if not isinstance(base, (Var, Const)):
            # generic annotations such as wp.array[float] evaluated statically
            return self.eval_static(node)
        t = base.type
        if isinstance(t, T.TileType):
            return tile_slices.read(self, base, node.slice, node)
        if isinstance(t, (T.VectorType, T.MatrixType)) and _has_slice(node.slice):
            return components.read_slice(self, base, node.slice, node)
        if isinstance(t, T.ArrayType) and _has_slice(node.slice):
            return self.array_slice(base, node.slice, node)
        idx = self.indices(node.slice)
        if isinstance(t, T.ArrayType):
            if len(idx) > t.ndim:
                raise self.error(f"too many indices for a {t.ndim}-D array ({len(idx)})", node)
            if len(idx) < t.ndim:
                return self.op("view", [base, *idx], node=node)
            return self.op("load", [base, *idx], node=node)
        idx = self.check_components(t, idx, node)
        return self.op("extract", [base, *idx], node=node)

    def array_slice(self, base, slice_node, node):
        """``a[i:j:k, l]``: a strided view of the array (NumPy's rules, bounds evaluated at run time)."""
        t = base.type
        if t.kind is not T.ArrayKind.ARRAY:
            raise self.error(f"slices of a {t} are not supported inside kernels", node,
                             hint="index the elements, or slice a wp.array")
        parts = slice_node.elts if isinstance(slice_node, ast.Tuple) else [slice_node]
        if len(parts) > t.ndim:
            raise self.error(f"too many indices for a {t.ndim}-D array ({len(parts)})", node)
        kinds, args = 0, []
        for d, p in enumerate(parts):
            if isinstance(p, ast.Slice):
                kinds |= 1 << d
                if p.step is not None and isinstance(p.step, ast.Constant) and p.step.value == 0:
                    raise self.error("Slice step cannot be zero", p.step, kind=KernelValueError)
                args += [self.slice_bound(b) for b in (p.lower, p.upper, p.step)]
            else:
                args.append(self.slice_bound(p))
        return self.op("array_slice", [base, *args], attrs=(len(parts), kinds), node=node)

    def slice_bound(self, part):
        """A slice bound or index as an int64 operand; an omitted bound is the native ``kSliceNone``."""
        if part is None:
            return Const(np.iinfo(np.int64).min, T.INT64)
        v = self.operand(self.visit(part), part, want=T.INT64)
        if not (isinstance(v.type, T.ScalarType) and v.type.is_int):
            raise self.error(f"slice bounds and indices must be integers, got {v.type}", part)
        return v if v.type == T.INT64 else self.op("cast", [v], attrs=(T.INT64,), node=part)

    def check_slot_value(self, want: T.Type, value, node) -> None:
        """A value stored into one component (``v.y = x``) must have the component's type (Warp's ``TypeError``)."""
        t = getattr(value, "type", None)
        if t is not None and t != want and not isinstance(t, T.ScalarType):
            raise self.error(f"Composite slot assignment expects value of type {want}, got {t}", node,
                             kind=KernelTypeError)

    def check_components(self, t: T.Type, idx: list, node) -> list:
        """Constant component indices of a vector / matrix are checked here (run-time ones in debug mode); negative
        constants count from the end. Other types (tiles, quaternions...) get their indices back unchanged."""
        if isinstance(t, T.VectorType):
            extents = [t.length]
        elif isinstance(t, T.MatrixType):
            extents = [t.rows, t.cols]
        else:
            return list(idx)
        out = list(idx)
        for k, (i, n) in enumerate(zip(idx, extents)):
            if isinstance(i, Const) and isinstance(i.value, int):
                if not -n <= i.value < n:
                    raise self.error(f"index {i.value} is out of range for a {t} (valid {-n}..{n - 1})", node,
                                     kind=KernelIndexError)
                if i.value < 0:  # Python's negative indices count from the end
                    out[k] = Const(i.value + n, i.type)
        return out

    def indices(self, slice_node) -> list:
        if isinstance(slice_node, ast.Slice):
            raise self.error("slices are not supported inside kernels", slice_node,
                             hint="slice the array on the host and pass the view")
        parts = slice_node.elts if isinstance(slice_node, ast.Tuple) else [slice_node]
        out = []
        for p in parts:
            if isinstance(p, ast.Slice):
                raise self.error("slices are not supported inside kernels", p,
                                 hint="slice the array on the host and pass the view")
            v = self.visit(p)
            if isinstance(v, Weak):
                if not isinstance(v.value, int):
                    raise self.error(f"index must be an integer, got {v.value!r}", p)
                out.append(Const(int(v.value), T.INT32))
                continue
            v = self.operand(v, p)
            if not (isinstance(v.type, T.ScalarType) and v.type.is_int):
                raise self.error(f"index must be an integer, got {v.type}", p, hint="convert with int(x)")
            out.append(v)
        return out

    def visit_BinOp(self, node: ast.BinOp):
        name = _BINOPS.get(type(node.op))
        if name is None:
            raise self.error(f"operator {type(node.op).__name__} is not supported", node)
        return self.binop(name, self.visit(node.left), self.visit(node.right), node, pyop=_PY_BINOPS.get(type(node.op)),
                          tile_name=_TILE_BINOPS.get(type(node.op)))

    def binop(self, name: str, a, b, node, pyop=None, tile_name: str | None = None):
        """``a <op> b`` as the registry op ``name`` (``tile_name`` instead when an operand is a tile)."""
        if isinstance(a, Weak) and isinstance(b, Weak) and pyop is not None:
            try:
                return Weak(_c_semantics(pyop, a.value, b.value))
            except ZeroDivisionError:
                raise self.error("division by zero in a constant expression", node) from None
        overload = self.operator_func(name)
        if overload is not None and (any(isinstance(getattr(v, "type", None), T.StructType) for v in (a, b))
                                     or _operator_overload_matches(overload, (a, b))):
            from .calls import inline  # Warp's operator overloading: a @wp.func named after the operator

            return inline(self, overload, [a, b], {}, node)
        if tile_name is not None and any(isinstance(getattr(v, "type", None), T.TileType) for v in (a, b)):
            name = tile_name
        return self.op(name, [a, b], node=node)

    def visit_UnaryOp(self, node: ast.UnaryOp):
        v = self.visit(node.operand)
        if isinstance(v, Weak):
            if isinstance(node.op, ast.USub):
                return Weak(-v.value)
            if isinstance(node.op, ast.UAdd):
                return v
            if isinstance(node.op, ast.Not):
                return Weak(not v.value)
            if isinstance(node.op, ast.Invert):
                return Weak(~v.value)
        if isinstance(node.op, ast.Not):
            return self.op("logical_not", [self.condition(v, node)], node=node)
        name = {ast.USub: "neg", ast.UAdd: "pos", ast.Invert: "invert"}[type(node.op)]
        return self.op(name, [v], node=node)

    def visit_BoolOp(self, node: ast.BoolOp):
        # short-circuit: later operands are evaluated only when needed (they may guard array accesses)
        is_and = isinstance(node.op, ast.And)
        first = self.visit(node.values[0])
        static = _static_truth(first)
        if static is not None and len(node.values) > 1:
            if static is (not is_and):
                return Weak(static)
            rest = ast.BoolOp(op=node.op, values=node.values[1:]) if len(node.values) > 2 else node.values[1]
            ast.copy_location(rest, node.values[1])
            return self.visit(rest)
        result = self.b.new_var(T.BOOL, "bool", VarKind.MUTABLE)
        self.b.assign(result, self.condition(first, node.values[0]))
        for value_node in node.values[1:]:
            cur = self.op("copy", [result], node=node)
            test = cur if is_and else self.op("logical_not", [cur], node=node)
            with self.b.nested() as then:
                self.b.assign(result, self.condition(self.visit(value_node), value_node))
            self.b.emit(If(test, then, [], self.b.loc))
        return self.op("copy", [result], node=node)

    def visit_Compare(self, node: ast.Compare):
        left = self.visit(node.left)
        results = []
        for opnode, right_node in zip(node.ops, node.comparators):
            right = self.visit(right_node)
            if isinstance(opnode, (ast.Is, ast.IsNot, ast.In, ast.NotIn)):
                raise self.error(f"'{type(opnode).__name__}' comparisons are not supported", node)
            if isinstance(left, Weak) and isinstance(right, Weak):
                results.append(Weak(_PY_CMPOPS[type(opnode)](left.value, right.value)))
            else:
                results.append(self.op(_CMPOPS[type(opnode)], self._comparable(left, right, node), node=node))
            left = right
        out = results[0]
        for r in results[1:]:
            if isinstance(out, Weak) and isinstance(r, Weak):
                out = Weak(out.value and r.value)
            else:
                out = self.op("bit_and_bool", [self.operand(out, node), self.operand(r, node)], node=node)
        return out

    def _comparable(self, left, right, node) -> list:
        """Operands of a comparison. Two scalars of different types are compared by value, as Warp (which emits a
        C++ comparison) does: in the wider float type when either is a float, else in the wider integer type, and
        in int64 when a signed and an unsigned integer of up to 32 bits meet (C++ would compare -1 < 1u as false).
        Nothing is converted anywhere else: a comparison only reads its operands."""
        if not (isinstance(left, (Var, Const)) and isinstance(right, (Var, Const))):
            return [left, right]
        a, b = left, right
        ta, tb = a.type, b.type
        if ta == tb or not (isinstance(ta, T.ScalarType) and isinstance(tb, T.ScalarType)) or T.BOOL in (ta, tb):
            return [left, right]
        floats = [t for t in (ta, tb) if t.is_float]
        if floats:
            want = max(floats, key=lambda t: t.bits)
            if len(floats) == 1 and want.bits < 32:
                want = T.FLOAT32
        elif ta.is_signed == tb.is_signed:
            want = max((ta, tb), key=lambda t: t.bits)
        else:
            want = T.INT64 if max(ta.bits, tb.bits) < 64 else T.UINT64
        return [o if o.type == want else self.op("cast", [o], attrs=(want,), node=node) for o in (a, b)]

    def visit_IfExp(self, node: ast.IfExp):
        cond = self.visit(node.test)
        static = _static_truth(cond)
        if static is not None:
            return self.visit(node.body if static else node.orelse)
        c = self.condition(cond, node.test)
        with self.b.nested() as then:
            a = self.visit(node.body)
        with self.b.nested() as orelse:
            bval = self.visit(node.orelse)
        a_w, b_w = self.as_operand_or_weak(a, node.body), self.as_operand_or_weak(bval, node.orelse)
        # pick the result type from the strong side; literals adopt it
        want = a_w.type if not isinstance(a_w, Weak) else (b_w.type if not isinstance(b_w, Weak) else None)
        if want is None:
            want = self.operand(a_w, node).type
        result = self.b.new_var(want, "select", VarKind.MUTABLE)
        for block, val, sub in ((then, a_w, node.body), (orelse, b_w, node.orelse)):
            self.b.blocks.append(block)
            try:
                o = self.operand(val, sub, want=want)
                if o.type != want:
                    raise self.error(f"the two branches of the conditional expression have different types "
                                     f"({want} and {o.type})", node)
                self.b.assign(result, o)
            finally:
                self.b.blocks.pop()
        self.b.emit(If(c, then, orelse, self.b.loc))
        return self.op("copy", [result], node=node)

    def visit_Call(self, node: ast.Call):
        from .calls import lower_call

        return lower_call(self, node)

    def visit_JoinedStr(self, node):
        raise self.error("f-strings are not supported in kernels", node, hint='use wp.printf("%f\\n", x)')

    # ------------------------------------------------------------------ static evaluation
    def eval_static(self, node: ast.AST):
        """Evaluate an expression in Python, at compile time, in the function's globals and closure."""
        globals_, closure = self.frame.src.globals_and_closure()
        env = dict(globals_)
        env.update(closure)
        for k, v in self.frame.env.items():
            if isinstance(v, Weak):
                env[k] = v.value
            elif isinstance(v, Var) and isinstance(v.type, T.ArrayType):
                env[k] = _StaticArrayFacts(v.type)  # an array's dtype and ndim are known when compiling
            elif isinstance(v, (Var, Const)) and isinstance(v.type, (T.VectorType, T.MatrixType, T.TileType,
                                                                      T.TupleType)):
                env[k] = _StaticLength(v.type)  # so is len() of a vector, matrix, tuple or tile (and a tile's shape)
            elif isinstance(v, tuple):
                env[k] = _StaticLength(len(v))  # a tuple of values: its length
            elif not isinstance(v, (Var, Const)):
                env[k] = v
        expr = ast.Expression(body=node)
        ast.fix_missing_locations(expr)
        try:
            value = eval(compile(expr, self.frame.src.file, "eval"), env)  # the user's own code
            if any(isinstance(n, ast.Name) and n.id in self.frame.env for n in ast.walk(node)):
                self.deps.fail()  # depends on values local to this lowering
            else:
                self.deps.add(self.frame.src.func, "eval", ast.unparse(node), value)
            return value
        except CompileError:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure of the user's expression is reported at its line
            extra = (". Make sure all variables used in the static expression are constant."
                     if isinstance(exc, NameError) else f" ({type(exc).__name__})")
            raise self.error(f"Error evaluating static expression: {exc}{extra}", node,
                             hint="wp.static() and static loops may only use Python values known when compiling"
                             ) from None

    def eval_static_or_none(self, node):
        try:
            if isinstance(node, ast.Name):
                return self.read_name(node.id, node) if node.id not in self.frame.env else None
            if isinstance(node, ast.Attribute):
                base = self.eval_static_or_none(node.value)
                if base is None or not hasattr(base, node.attr):
                    return None
                value = getattr(base, node.attr)
                self._record_attribute(node, value)
                return value
        except CompileError:
            return None
        return None


# ---------------------------------------------------------------------- helpers
class ArrayShape(tuple):
    """``a.shape`` in kernel code: one extent per dimension (``a.shape[k]`` past ``ndim`` reads 0, as in Warp)."""


def _has_slice(slice_node) -> bool:
    parts = slice_node.elts if isinstance(slice_node, ast.Tuple) else [slice_node]
    return any(isinstance(p, ast.Slice) for p in parts)


class _StaticArrayFacts:
    """What compile-time expressions may read of an array argument: its dtype (as a weft type) and ndim."""

    def __init__(self, t: T.ArrayType):
        self.ndim = t.ndim
        try:
            self.dtype = class_for(t.dtype)
        except (KeyError, TypeError):  # struct and generic element types have no host class here
            pass


class _StaticLength:
    """A vector, matrix, tuple or tile value in a compile-time expression: only its length (``wp.static(len(v))``)
    and, of a tile, its shape."""

    def __init__(self, t):
        if isinstance(t, int):
            self.n = t
        elif isinstance(t, T.TupleType):
            self.n = len(t.elems)
        elif isinstance(t, T.TileType):
            self.shape = tuple(t.shape)
            self.n = t.shape[0]
        else:
            self.n = t.length if isinstance(t, T.VectorType) else t.rows

    def __len__(self) -> int:
        return self.n


def _static_truth(value):
    if isinstance(value, Weak):
        return bool(value.value)
    if isinstance(value, Const):
        return bool(value.value)
    return None


def _c_semantics(pyop, a, b):
    """Constant folding with C semantics for integer // and % (as the generated code computes them)."""
    if isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool):
        if pyop is operator.floordiv:
            q = abs(a) // abs(b)
            return q if (a >= 0) == (b >= 0) else -q
        if pyop is operator.mod:
            r = abs(a) % abs(b)
            return r if a >= 0 else -r
        if pyop is operator.truediv:
            return _c_semantics(operator.floordiv, a, b)
    if isinstance(a, float) or isinstance(b, float):
        if b == 0 and pyop in (operator.truediv, operator.floordiv, operator.mod):
            return _ieee_by_zero(pyop, float(a), float(b))  # IEEE results, as the generated code computes them
        if pyop is operator.mod:
            return math.fmod(a, b)
    return pyop(a, b)


def _ieee_by_zero(pyop, a: float, b: float) -> float:
    """``a / 0.0``, ``a // 0.0`` and ``a % 0.0`` of floats: +-inf or NaN (IEEE 754), not a Python exception."""
    if pyop is operator.mod or a == 0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _common_int(ops):
    types = {o.type for o in ops}
    if not all(isinstance(t, T.ScalarType) and t.is_int for t in types):
        return None
    if len(types) == 1:
        return next(iter(types))
    return max(types, key=lambda t: t.bits)


class _UnrolledJump(BaseException):  # control flow, not an error: passes the lowering's handlers
    """A break/continue reached at compile time in an unrolled loop."""

    def __init__(self, kind: str):
        self.kind = kind


def _static_reads_index(loop: ast.For) -> bool:
    """Whether a wp.static() in the loop's body reads its index (Warp unrolls such a loop whatever its length)."""
    name = loop.target.id
    return any(isinstance(call, ast.Call) and _is_static_call(call) and any(
        isinstance(n, ast.Name) and n.id == name for n in ast.walk(call)) for stmt in loop.body for call in ast.walk(stmt))


def _is_static_call(node: ast.Call) -> bool:
    f = node.func
    return (isinstance(f, ast.Attribute) and f.attr == "static") or (isinstance(f, ast.Name) and f.id == "static")


def _as_load(target: ast.AST) -> ast.AST:
    """A copy of an assignment target usable as a load expression."""
    import copy

    node = copy.deepcopy(target)
    for n in ast.walk(node):
        if hasattr(n, "ctx"):
            n.ctx = ast.Load()
    return node


def _syntax_name(node: ast.AST) -> str:
    names = {
        ast.ListComp: "a list comprehension", ast.DictComp: "a dict comprehension", ast.SetComp: "a set comprehension",
        ast.GeneratorExp: "a generator expression", ast.Lambda: "a lambda", ast.Try: "try/except",
        ast.Raise: "raise", ast.Global: "'global'", ast.Nonlocal: "'nonlocal'", ast.Import: "import",
        ast.ImportFrom: "import", ast.ClassDef: "a class definition", ast.FunctionDef: "a nested function definition",
        ast.Dict: "a dict", ast.Set: "a set", ast.Yield: "yield", ast.Await: "await", ast.Delete: "del",
        ast.Starred: "star-unpacking", ast.NamedExpr: "the walrus operator", ast.Slice: "a slice",
        ast.AsyncFor: "async for", ast.Match: "match", ast.With: "with",
    }
    return names.get(type(node), f"'{type(node).__name__}'")


_UNSUPPORTED_HINTS = {
    ast.ListComp: "write an explicit for loop",
    ast.GeneratorExp: "write an explicit for loop",
    ast.Lambda: "define a @wp.func instead",
    ast.FunctionDef: "define it at module level with @wp.func",
    ast.Try: "kernels cannot raise; check conditions with if/else",
    ast.Raise: "kernels cannot raise; use assert in debug mode or wp.printf",
    ast.Dict: "use a @wp.struct",
    ast.Global: "read globals directly; kernels cannot write Python globals",
}


def _operator_overload_matches(func, operands) -> bool:
    """Whether an overload of the user's operator func (``add``, ``mul``...) is annotated with exactly the operands'
    types: then it replaces the builtin operator for them, as in Warp (other types keep the builtin)."""
    types_ = [getattr(v, "type", None) for v in operands]
    if any(t is None for t in types_):  # a Python literal: the builtin operator
        return False
    for ov in func.overloads:
        try:
            anns = list(ov.annotations.values())
            if len(anns) == len(types_) and all(to_ir(a) == t for a, t in zip(anns, types_)):
                return True
        except (TypeError, CompileError):
            continue
    return False


def _is_function_value(value) -> bool:
    """A function (a @wp.func or a builtin) held by a local name: a compile-time alias, not a value."""
    from .func import Func

    if value is None or isinstance(value, (Var, Const, Weak, tuple, type)):
        return False
    return isinstance(value, Func) or hasattr(value, "_wp_kernel_builtin_") or (
        callable(value) and getattr(value, "__module__", "") in ("weft", "weft.builtins", "weft.mathfuncs"))
