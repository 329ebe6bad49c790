"""Renders an :class:`AdjointProgram` (replay + reverse sweep) as the ``weft_bwd`` entry of a native module.

Derivative rules come from the op registry: ops with ``Adjoint.NATIVE`` call ``weft::adj_<native>`` with the
convention of ``weft/native`` (inputs, adjoints of inputs, adjoint of the result), SPECIAL ops have a method
here or a rule registered in ``ADJOINT_RENDERERS`` by their domain package (tiles ...), with the signature
``fn(renderer, let, args, adj_args, adj_results)`` where each list holds C++ expressions.
"""

from __future__ import annotations

from ..ir import types as T
from ..ir.nodes import (
    AdjAssign,
    AdjLet,
    AdjointProgram,
    Const,
    Let,
    Pop,
    Push,
    Repeat,
    ReplayLet,
    Stmt,
    Var,
    VarKind,
    walk,
)
from ..ops.registry import Adjoint, OpKind
from .renderer import Emitter, Renderer, RenderOptions, _defined_vars

#: Reverse-mode rules of SPECIAL ops defined in domain packages: name -> fn(renderer, let, args, adj_args, adj_out).
ADJOINT_RENDERERS: dict = {}
#: Backward-replay renderers of side-effecting SPECIAL ops from domain packages (default: skipped in replay).
REPLAY_RENDERERS: dict = {}

_BUILTIN_SPECIAL_ADJOINTS = {"copy", "getfield", "setfield", "construct", "cast", "load", "store", "atomic_add",
                             "atomic_sub", "atomic_min", "atomic_max"}


def has_adjoint_rule(name: str) -> bool:
    return name in _BUILTIN_SPECIAL_ADJOINTS or name in ADJOINT_RENDERERS


class AdjointRenderer(Renderer):
    def __init__(self, prog: AdjointProgram, options: RenderOptions):
        super().__init__(prog.fn, options)
        self.prog = prog
        self.dummies: list[tuple[str, T.Type]] = []
        self._repeat_depth = 0

    def render_module(self) -> str:
        parts = [self.header(), self.render_structs(self.fn.params), "namespace {", self.render_args_struct(),
                 self.render_bwd_body(), "}  // namespace", self.render_bwd_entry()]
        return "\n".join(p for p in parts if p) + "\n"

    # ------------------------------------------------------------------ body
    def render_bwd_body(self) -> str:
        body = Emitter()
        self.out = body
        if self.prog.uses_stack:
            self.out("weft::LoopStack stack;")
        self.out("// ---- forward replay")
        self.block(self.prog.replay)
        self.out("// ---- reverse sweep")
        self._last_line = None
        self.block(self.prog.reverse)
        decls = Emitter()
        seen: set[int] = set()
        everything = self.prog.replay + self.prog.reverse
        for v in list(_defined_vars(everything, self.prog.locals)) + _popped(everything):
            if v.id in seen or v.kind is VarKind.PARAM:
                continue
            seen.add(v.id)
            decls(f"{v.type.ctype} {self.names(v)} = {{}};")
            decls(f"{v.type.ctype} {self.names.adj(v)} = {{}};")
        self.declare_adjoint_scratch(decls)
        sig = ("template <bool C>\nstatic inline void bwd_body(const Args& args, int32_t i0, int32_t i1, int32_t i2, "
               "int32_t i3, int64_t flat)")
        return sig + " {\n" + "\n".join(decls.lines + body.lines) + "\n}"

    def declare_adjoint_scratch(self, decls: Emitter) -> None:
        """Adjoint slots of scalar parameters and of constants (their gradients are discarded)."""
        for p in self.fn.params:
            if not isinstance(p.type, T.ArrayType):
                decls(f"{p.type.ctype} adj_arg_{p.name} = {{}};")
        for name, t in self.dummies:
            decls(f"{t.ctype} {name} = {{}};")

    def threads_independent(self) -> bool:
        return False  # the reverse sweep accumulates gradients into slots that threads share

    def render_bwd_entry(self) -> str:
        return self.render_entry().replace("weft_fwd", "weft_bwd").replace("fwd_body", "bwd_body")

    def adj(self, x) -> str:
        """The adjoint variable of an operand (a scratch dummy for constants and non-array parameters)."""
        if isinstance(x, Const):
            name = f"adj_const_{len(self.dummies)}"
            self.dummies.append((name, x.type))
            return name
        if x.kind is VarKind.PARAM:
            if isinstance(x.type, T.ArrayType):
                name = f"adj_const_{len(self.dummies)}"
                self.dummies.append((name, x.type))
                return name
            return f"adj_arg_{x.name}"
        return self.names.adj(x)

    # ------------------------------------------------------------------ statements
    def stmt(self, s: Stmt) -> None:
        if isinstance(s, AdjLet):
            self.comment(s.let.loc)
            self.adj_let(s.let)
        elif isinstance(s, AdjAssign):
            a = s.assign
            if not isinstance(a.src, Const):
                self.out(f"{self.adj(a.src)} += {self.adj(a.dst)};")
            self.out(f"{self.adj(a.dst)} = {{}};")
        elif isinstance(s, ReplayLet):
            self.comment(s.let.loc)
            self.replay_let(s.let)
        elif isinstance(s, Push):
            self.out(" ".join(f"stack.push({self.names(v)});" for v in s.values))
        elif isinstance(s, Pop):
            self.out(" ".join(f"stack.pop({self.names(v)});" for v in reversed(s.vars)))
        elif isinstance(s, Repeat):
            r = f"rep_{self._repeat_depth}"
            self._repeat_depth += 1
            self.out(f"for (int32_t {r} = 0; {r} < {self.names(s.count)}; ++{r}) {{")
            self.nested(s.body)
            self.out("}")
            self._repeat_depth -= 1
        else:
            super().stmt(s)

    def replay_let(self, s: Let) -> None:
        name = s.call.op.name
        args = [self.names(a) for a in s.args]
        if name == "store":
            arr = s.args[0]
            if isinstance(arr.type, T.ArrayType) and arr.type.kind is T.ArrayKind.FIXED:
                self.let(s)  # kernel-local arrays are plain values: replay them exactly
                return
            self.out(f"weft::replay_store{self.array_tparam(arr)}({args[0]}, {args[-1]}, {', '.join(args[1:-1])});")
        elif name.startswith("atomic_"):
            n_val = 2 if name == "atomic_cas" else 1
            idx = args[1:len(args) - n_val]
            call = f"weft::replay_{name}({args[0]}, {', '.join(args[-n_val:])}, {', '.join(idx)})"
            self.out(f"{self.names(s.dsts[0])} = {call};" if s.dsts else f"{call};")
        elif name in REPLAY_RENDERERS:
            REPLAY_RENDERERS[name](self, s, args)
        # prints, asserts and expects are not repeated in the backward pass

    # ------------------------------------------------------------------ custom gradient funcs
    def op_adj_value(self, s: Let, args) -> None:
        self.out(f"{self.names(s.dsts[0])} = {self.adj(s.args[0])};")

    def op_adj_accum(self, s: Let, args) -> None:
        self.out(f"{self.adj(s.args[0])} += {args[1]};")

    def op_adj_reset(self, s: Let, args) -> None:
        self.out(f"{self.adj(s.args[0])} = {{}};")

    # ------------------------------------------------------------------ reverse rules
    def adj_let(self, s: Let) -> None:
        op = s.call.op
        n = self.names
        args = [n(a) for a in s.args]
        adj_args = [self.adj(a) for a in s.args]
        adj_out = [self.adj(d) for d in s.dsts]
        if op.adjoint is Adjoint.NATIVE and op.kind in (OpKind.CALL, OpKind.INFIX, OpKind.PREFIX):
            self.out(f"weft::adj_{op.native}({', '.join(args + adj_args + adj_out)});")
        elif op.adjoint is Adjoint.NATIVE and op.kind is OpKind.OUT_CALL:
            outs = [n(d) for d in s.dsts]
            self.out(f"weft::adj_{op.native}({', '.join(args + outs + adj_args + adj_out)});")
        else:
            method = getattr(self, f"adj_{op.name}", None)
            if method is not None:
                method(s, args, adj_args, adj_out)
            elif op.name in ADJOINT_RENDERERS:
                ADJOINT_RENDERERS[op.name](self, s, args, adj_args, adj_out)
            elif not s.args:
                pass  # constants such as identity(): nothing to propagate
            else:  # pragma: no cover - AdjointBuilder checks rules exist first
                raise NotImplementedError(f"no adjoint rule for {op.name}")
        for d in adj_out:
            self.out(f"{d} = {{}};")

    def adj_copy(self, s, args, adj_args, adj_out):
        self.out(f"{adj_args[0]} += {adj_out[0]};")

    def adj_getfield(self, s, args, adj_args, adj_out):
        if T.is_differentiable_type(s.dsts[0].type):
            self.out(f"{adj_args[0]}.{s.call.attrs[0]} += {adj_out[0]};")

    def adj_setfield(self, s, args, adj_args, adj_out):
        field = s.call.attrs[0]
        if T.is_differentiable_type(s.args[1].type):
            self.out(f"{adj_args[1]} += {adj_out[0]}.{field};")
        self.out(f"{{ auto g_ = {adj_out[0]}; g_.{field} = {{}}; {adj_args[0]} += g_; }}")

    def adj_cast(self, s, args, adj_args, adj_out):
        if T.is_differentiable_type(s.args[0].type):
            self.out(f"weft::adj_cast({args[0]}, {adj_args[0]}, {adj_out[0]});")

    def adj_construct(self, s, args, adj_args, adj_out):
        (t,) = s.call.attrs
        g = adj_out[0]
        if isinstance(t, T.StructType) or not args:
            return
        srcs = s.args
        if len(srcs) == 1 and not isinstance(srcs[0].type, T.ScalarType):
            self.out(f"weft::adj_cast({args[0]}, {adj_args[0]}, {g});")
        elif len(srcs) == 1:
            self.out(f"weft::adj_broadcast({adj_args[0]}, {g});")
        elif isinstance(t, T.VectorType) and t.flavor is T.VecFlavor.TRANSFORM and len(srcs) == 2:
            self.out(f"{adj_args[0]} += {g}.p; {adj_args[1]} += {g}.q;")
        elif isinstance(t, T.MatrixType) and len(srcs) == t.rows:
            for i, a in enumerate(adj_args):
                self.out(f"{a} += {g}[{i}];")
        else:
            for k, a in enumerate(adj_args):
                self.out(f"{a} += weft::component({g}, {k});")

    def adj_load(self, s, args, adj_args, adj_out):
        arr = s.args[0]
        if not T.is_differentiable_type(s.dsts[0].type):
            return
        if arr.type.kind is T.ArrayKind.FIXED:
            self.out(f"weft::adj_load_fixed({args[0]}, {adj_args[0]}, {adj_out[0]}, {', '.join(args[1:])});")
            return
        self.out(f"weft::adj_load({args[0]}, {adj_out[0]}, {', '.join(args[1:])});")

    def adj_store(self, s, args, adj_args, adj_out):
        arr = s.args[0]
        value = s.args[-1]
        if not T.is_differentiable_type(value.type):
            return
        if arr.type.kind is T.ArrayKind.FIXED:
            self.out(f"weft::adj_store_fixed({args[0]}, {adj_args[0]}, {adj_args[-1]}, {', '.join(args[1:-1])});")
            return
        self.out(f"weft::adj_store({args[0]}, {adj_args[-1]}, {', '.join(args[1:-1])});")

    def adj_atomic_add(self, s, args, adj_args, adj_out):
        if T.is_differentiable_type(s.args[-1].type):
            self.out(f"weft::adj_atomic_add({args[0]}, {adj_args[-1]}, {', '.join(args[1:-1])});")

    def adj_atomic_sub(self, s, args, adj_args, adj_out):
        if T.is_differentiable_type(s.args[-1].type):
            self.out(f"weft::adj_atomic_sub({args[0]}, {adj_args[-1]}, {', '.join(args[1:-1])});")

    def adj_atomic_min(self, s, args, adj_args, adj_out):
        if T.is_differentiable_type(s.args[-1].type):
            self.out(f"weft::adj_atomic_minmax({args[0]}, {args[-1]}, {adj_args[-1]}, {', '.join(args[1:-1])});")

    adj_atomic_max = adj_atomic_min


def _popped(block: list[Stmt]) -> list[Var]:
    out = []
    for s in walk(block):
        if isinstance(s, Pop):
            out += s.vars
        elif isinstance(s, Repeat):
            out.append(s.count)
    return out


def render_adjoint(prog: AdjointProgram, name: str, debug: bool) -> str:
    return AdjointRenderer(prog, RenderOptions(debug=debug, kernel_name=name)).render_module()
