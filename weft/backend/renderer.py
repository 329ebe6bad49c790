"""Typed IR -> C++ source. The base renderer is the CPU target; ``cuda.py`` overrides what differs.

Every IR variable is declared at the top of the body function (as the adjoint's reverse sweep needs values
from every block); straight-line code reads like the user's Python, with a comment per source line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .. import abi, config
from ..errors import SourceLoc
from ..ir import types as T
from ..ir.nodes import (
    Assign,
    Break,
    Const,
    Continue,
    CustomCall,
    For,
    Function,
    If,
    Let,
    Return,
    Stmt,
    Var,
    VarKind,
    While,
    grad_subs,
    walk,
)
from ..ir.roles import Role
from ..ops.random import STATEFUL
from ..ops.registry import OpKind
from . import rules
from .guards import GuardPlan, Side, plan_guards
from .lanes import LanePlan, plan_lanes, render_lanes
from .names import Names
from .rules import RuleTable


@dataclass
class RenderOptions:
    debug: bool = False  # bounds checks, asserts
    kernel_name: str = "kernel"
    args_bytes: int = 0  # CUDA: the size Python packs the Args struct to, checked by a static_assert (0: no check)


@dataclass
class Emitter:
    lines: list[str] = field(default_factory=list)
    depth: int = 1

    def __call__(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)


class CpuTarget:
    """The CPU target's hooks, the defaults every renderer starts from (``backend/cuda.py``'s CudaTarget overrides
    them): qualifiers of kernel bodies and struct operators, the bounds-check function, the 64-bit integer type
    name; the entry template is ``Renderer.render_entry`` (OpenMP grid loop), overridden the same way."""

    body_qualifiers = "static inline"
    struct_fn_qualifiers = "static inline"
    check_fn = "weft::check"
    int64 = "int64_t"


class Renderer(CpuTarget):
    """Renders one kernel specialisation (and, through the adjoint module, its backward function)."""

    #: forward rules of SPECIAL ops (see weft.backend.rules; filled below the class)
    forward_rules = RuleTable("forward")
    #: how a module defines helpers its ops call (the wp.grad functions, keyed by the grad_call record; see
    #: backend/grad_call.py): ``rule(renderer, grad_sub) -> C++ text``
    definition_rules = RuleTable("definition")
    #: the guard-splitting plan of the forward module (see guards.py); set by render_module
    guard: GuardPlan | None = None
    #: the lane-run plan of the forward module (see lanes.py); set by render_module
    lanes: LanePlan | None = None
    #: Var id -> the constant a specialised body renders for it (the guard plan's atoms)
    _known: Mapping[int, bool] = MappingProxyType({})
    #: Var id -> the value a specialised body copies into it (the guard plan's ``(j + c) % n`` identities)
    _copies: Mapping[int, Var] = MappingProxyType({})
    #: Var id -> the C++ value a specialised body gives it (a flat launch's column and row, GuardPlan.exprs)
    _exprs: Mapping[int, str] = MappingProxyType({})

    def __init__(self, fn: Function, options: RenderOptions):
        self.fn = fn
        self.opts = options
        self.names = Names()
        self.contig: set[int] = {p.id for p in fn.params if _is_plain_array(p.type)}
        self.out = Emitter()
        self._last_line: tuple | None = None

    # ------------------------------------------------------------------ module
    def render_module(self) -> str:
        # guard splitting needs the dependence-free vector loop to pay off, and is left out of debug builds
        self.guard = plan_guards(self.fn) if self.threads_independent() and self.straight_line() else None
        parts = [self.header(), self.render_structs(self.fn.params), "namespace {", self.render_args_struct(),
                 self.render_body("fwd_body", self.fn.body)]
        if self.guard is not None:
            self._known, self._copies, self._last_line = self.guard.known, self.guard.copies, None
            self._exprs = self.guard.exprs(self.names(self.guard.flat[0])) if self.guard.flat is not None else {}
            parts.append(self.render_body("fwd_known", self.fn.body))
            self._known, self._copies, self._last_line = MappingProxyType({}), MappingProxyType({}), None
            self._exprs = MappingProxyType({})
            parts.append(self.render_clip(self.guard))
        self.lanes = plan_lanes(self.fn, self.opts.debug) if self.guard is None else None
        if self.lanes is not None:
            parts.append(render_lanes(self, self.lanes))
        parts += ["}  // namespace", self.render_entry()]
        return "\n".join(p for p in parts if p) + "\n"

    def render_clip(self, plan: GuardPlan, name: str = "fwd_clip") -> str:
        """The clip function of a guard plan: for the row with outer indices i0..i3, narrows the row piece [lo, hi)
        it is given to an interval of the innermost index on which every atom has its assumed value (empty when an
        outer atom fails); int64, so ``bound + 1`` cannot overflow."""
        self.out = Emitter()
        n = self.names
        for s in (plan.tid, *plan.prelude):
            for d in s.dsts:
                self.out(f"{d.type.ctype} {n(d)} = {{}};")
        self.stmt(plan.tid)
        for s in plan.prelude:
            self.stmt(s)
        # lo and hi come in as the row piece the caller runs (run_split_row)
        for a in sorted((*plan.inner, *plan.ranges), key=lambda a: a.side is Side.EXCEPT):  # one-point exceptions last
            b = f"{self.int64}({n(a.bound)}) + {a.offset}"
            if a.side is Side.LOWER:
                self.out(f"if ({b} > lo) lo = {b};")
            elif a.side is Side.UPPER:
                self.out(f"if ({b} < hi) hi = {b};")
            else:
                self.out(f"if ({b} >= lo && {b} < hi) {{ if ({b} - lo >= hi - {b} - 1) hi = {b}; else lo = {b} + 1; }}")
        for a in plan.outer:
            self.out(f"if ({n(a.dst)} != {'true' if a.value else 'false'}) hi = lo;")
        self._last_line = None
        sig = (f"template <bool C>\n{self.body_qualifiers} void {name}(const Args& args, int32_t i0, int32_t i1, "
               "int32_t i2, int32_t i3, int64_t flat, int64_t& lo, int64_t& hi)")
        return sig + " {\n" + "\n".join(self.out.lines) + "\n}"

    def header(self) -> str:
        extra = sorted({s.call.op.header for s in _lets(self.fn.body, grad_subs(self.fn.body)) if s.call.op.header})
        includes = "".join(f"#include \"{h}\"\n" for h in extra)
        # no file path here: the kernel cache is keyed on this text, and a copied script or a re-run notebook cell
        # (a new file name) must find its kernels again
        return (f"// generated by weft: kernel '{self.fn.name}'\n"
                f"#include \"weft.h\"\nWEFT_DEFINE_ERROR_STATE\n{includes}")

    def render_structs(self, params) -> str:
        order: list[T.StructType] = []

        def visit(t: T.Type) -> None:
            if isinstance(t, T.StructType):
                for _, ft in t.fields:
                    visit(ft)
                if t not in order:
                    order.append(t)
            elif isinstance(t, (T.ArrayType, T.TileType)):
                visit(t.dtype)

        subs = grad_subs(self.fn.body)
        for p in [*params, *(p for sub in subs for p in sub.fn.params)]:
            visit(p.type)
        for s in _lets(self.fn.body, subs):
            for d in s.dsts:
                visit(d.type)
        out = []
        for st in order:
            fields = "\n".join(f"    {ft.ctype} {fname};" for fname, ft in st.fields)
            out.append(f"struct {st.ctype} {{\n{fields}\n}};")
            out.append(self.render_struct_ops(st))
        # the definitions ops carry (wp.func_native functions), after the structs their signatures may name
        for s in _lets(self.fn.body, subs):
            if s.call.op.definition and s.call.op.definition not in out:
                out.append(s.call.op.definition)
        # the functions of wp.grad calls (innermost first), after the definitions their bodies may call
        for sub in subs:
            out.append(rules.lookup(type(self), "definition_rules", _GRAD_CALL)(self, sub))
        return "\n".join(out)

    def render_struct_ops(self, st: T.StructType) -> str:
        """Accumulation for struct adjoints (only differentiable fields), and the field-wise ``add`` / ``sub`` (with
        adjoints) that tiles of structs use (``t + t``, ``tile_sum``, ``t[i] += v``): fields that accumulate add up,
        the others (bool, 8/16-bit integers, arrays) carry the left operand's value, as Warp's struct tiles do."""
        q, c = self.struct_fn_qualifiers, st.ctype
        diff = [f for f, ft in st.fields if T.is_differentiable_type(ft)]
        body = "".join(f" a.{f} += b.{f};" for f in diff)
        minus = "".join(f" a.{f} -= b.{f};" for f in diff)
        # gradients of struct arrays accumulate field by field with the atomics of each field's type
        atomic = "".join(f" fetch_add(&p->{f}, v.{f});" for f in diff)
        ops = []
        for name in ("add", "sub"):
            fields = "".join(f" r.{f} = {_field_fn(ft, name)}(a.{f}, b.{f});" for f, ft in st.fields
                             if _accumulates(ft))
            ops.append(f"{q} {c} {name}(const {c}& a, const {c}& b) {{ {c} r = a;{fields} return r; }}")
        return (f"{q} {c}& operator+=({c}& a, const {c}& b) {{{body} return a; }}\n"
                f"{q} {c}& operator-=({c}& a, const {c}& b) {{{minus} return a; }}\n"
                + "\n".join(ops) + "\n"
                f"{q} void adj_add(const {c}&, const {c}&, {c}& adj_a, {c}& adj_b, const {c}& adj_r) {{ "
                f"adj_a += adj_r; adj_b += adj_r; }}\n"
                f"{q} void adj_sub(const {c}&, const {c}&, {c}& adj_a, {c}& adj_b, const {c}& adj_r) {{ "
                f"adj_a += adj_r; adj_b -= adj_r; }}\n"
                f"namespace weft {{ namespace atom {{ template <> WEFT_DEVICE {c} fetch_add<{c}>("
                f"{c}* p, {c} v) {{ {c} old = *p;{atomic} return old; }} }} }}")

    def render_args_struct(self) -> str:
        fields = "\n".join(f"    {p.type.ctype} {p.name};" for p in self.fn.params)
        return f"struct Args {{\n{fields}\n    char pad_end_;\n}};" if not self.fn.params else \
            f"struct Args {{\n{fields}\n}};"

    def render_body(self, name: str, block: list[Stmt], extra_params: str = "") -> str:
        self.out = Emitter()
        self.declare_locals(block)
        self.block(block)
        decls = self.out.lines
        qualifiers = self.body_qualifiers
        if qualifiers == "static inline" and self.straight_line():
            qualifiers += " WEFT_INLINE_BODY"  # see render_entry
        sig = (f"template <bool C>\n{qualifiers} void {name}(const Args& args{extra_params}, "
               f"int32_t i0, int32_t i1, int32_t i2, int32_t i3, int64_t flat)")
        return sig + " {\n" + "\n".join(decls) + "\n}"

    def declare_locals(self, block: list[Stmt]) -> None:
        seen: set[int] = set()
        for v in _defined_vars(block, self.fn.locals):
            if v.id in seen or v.kind is VarKind.PARAM:
                continue
            seen.add(v.id)
            self.out(f"{self.decl_type(v.type)} {self.names(v)} = {{}};")

    def decl_type(self, t: T.Type) -> str:
        return t.ctype

    def threads_independent(self) -> bool:
        """True when the kernel's only side effects are plain array stores (no atomics, prints, asserts, custom
        adjoint accumulations) and no bounds checks run: no thread can then observe another's writes within the
        launch without a data race, so the CPU grid loop may be vectorised without dependence checks."""
        if self.opts.debug:
            return False
        for s in self.fn.walk():
            if isinstance(s, CustomCall):
                return False
            if isinstance(s, Let) and s.call.op.side_effect and s.call.op.role is not Role.STORE:
                return False
        return True

    def straight_line(self) -> bool:
        """No loops left in the kernel (constant ranges are unrolled by the frontend)."""
        return not any(isinstance(s, (For, While)) for s in self.fn.walk())

    def tid_rank(self) -> int:
        """How many thread indices the body reads: the wp.tid() unpack count, 1 for ``i = wp.tid()`` (the flat index)
        or no wp.tid() at all. The launch checks that a rank >= 2 matches its dims."""
        ranks = {len(s.dsts) for s in self.fn.walk() if isinstance(s, Let) and s.call.op.role is Role.TID}
        return max(ranks) if ranks and max(ranks) >= 2 else 1

    # whole-value statements (target hook: a cooperative target copies, accumulates and clears block-wide values with
    # every thread of the block)
    def assign_line(self, t: T.Type, dst: str, src: str) -> str:
        return f"{dst} = {src};"

    def accum_line(self, t: T.Type, dst: str, src: str) -> str:
        return f"{dst} += {src};"

    def zero_line(self, t: T.Type, dst: str) -> str:
        return f"{dst} = {{}};"

    def contiguity_check(self) -> str:
        """The launch-time condition under which every plain array argument has a contiguous innermost dimension."""
        checks = [f"(args.{p.name}.shape[{p.type.ndim - 1}] <= 1 || args.{p.name}.strides[{p.type.ndim - 1}] == "
                  f"{self.int64}(sizeof({p.type.dtype.ctype})))" for p in self.fn.params if _is_plain_array(p.type)]
        return " && ".join(checks) if checks else "true"

    def render_entry(self, entry: str = "weft_fwd", body: str = "fwd_body") -> str:
        """The CPU entry: unpack the arguments, then run ``body`` over the grid. Compiled as is, the module runs
        launches whose arrays are all contiguous in their innermost dimension (the contiguous instantiation) and
        returns ``kEntryNeedsStrided`` for the others; compiled with ``WEFT_STRIDED`` defined (on the first launch
        that needs it, toolchain/build.py), the general instantiation, correct for every layout. The adjoint renderer
        fills the hooks (``entry_prologue``, ``grid_runner``, ``grid_lambda_head``, ``contiguous_launch``) from its
        gradient-accumulation plan."""
        # the lambda holds its own copy of the arguments (see run_range in launch.h); a straight-line body (the code
        # that can vectorise) is forced inline into the grid loop for contiguous arrays, the common layout, where
        # g++'s size limits would otherwise leave a call per point
        independent = "true" if self.threads_independent() else "false"
        debug = ", true" if self.opts.debug else ""  # debug: stop soon after the first error (launch.h)
        grid = f"weft::run_grid<{independent}, {self.tid_rank()}{debug}>"
        prologue = self.entry_prologue()
        args = "const Args args" if prologue is None else "Args args"
        head = [f"    if (!weft::grid_fits(dims, ndim, {self.tid_rank()})) return weft::kEntryGridUnfit;",
                f"    {args} = *static_cast<const Args*>(argbuf);"] + (prologue or [])
        fast_launch = self.grid_launch(grid, self.straight_line(), f"{body}<true>")
        general = self.grid_launch(grid, False, f"{body}<false>")
        if self.guard is not None and entry == "weft_fwd":
            fast_launch = self.split_launch(independent)
            general = self.split_launch(independent, "false")  # strided rows are split too
        if self.lanes is not None and entry == "weft_fwd":  # 1-D launches in lane runs (lanes.py)
            fast_launch = (f"if (ndim == 1) weft::run_grid_ranges(dims, ndim, nthreads, [args](int64_t b, int64_t e) "
                           f"{{ fwd_lanes<true>(args, b, e); }}); else {fast_launch}")
        extra, fast = self.contiguous_launch(fast_launch)
        contig = self.contiguity_check()
        lines = [f"    if (!({contig})) return weft::kEntryNeedsStrided;"] if contig != "true" else []
        if extra is None:
            lines.append(f"    {fast}")
        else:  # launches outside the fast form's other conditions (rare) run the general instantiation too
            lines += [f"    if (!({extra})) return weft::kEntryNeedsStrided;", f"    {fast}"]
        return (
            'extern "C" WEFT_EXPORT int32_t weft_args_size() { return int32_t(sizeof(Args)); }\n'
            f'extern "C" WEFT_EXPORT int32_t {entry}(const void* argbuf, const int64_t* dims, int32_t ndim, '
            "int32_t nthreads) {\n"
            + "\n".join(head) + "\n"
            "#ifndef WEFT_STRIDED\n"
            + "\n".join(lines) + "\n"
            "#else\n"
            f"    {general}\n"
            "#endif\n"
            "    return weft::kEntryDone;\n"
            "}"
        )

    def entry_prologue(self) -> list[str] | None:
        """Lines after the arguments are unpacked (None: nothing, and the arguments stay const)."""
        return None

    def grid_runner(self, grid: str) -> str:
        return f"{grid}(dims, ndim, nthreads,"

    def grid_lambda_head(self) -> str:
        return "[args]("

    def grid_launch(self, grid: str, inline: bool, call: str) -> str:
        lam = (f"{self.grid_lambda_head()}int32_t i0, int32_t i1, int32_t i2, int32_t i3, int64_t flat)"
               + (" WEFT_INLINE_LAMBDA" if inline else ""))
        return f"{self.grid_runner(grid)} {lam} {{ {call}(args, i0, i1, i2, i3, flat); }});"

    def split_launch(self, independent: str, contiguous: str = "true") -> str:
        """The launch of a guard-split kernel: per row, the clip function's interval runs ``fwd_known`` (the guard
        folded), the rest of the row ``fwd_body`` (launch.h, run_grid_split). ``contiguous``: the instantiation's
        template argument (``"false"`` in the general one, for arrays with strided rows)."""
        c = contiguous
        params = "int32_t i0, int32_t i1, int32_t i2, int32_t i3, int64_t flat"
        body = f"[args]({params}) WEFT_INLINE_LAMBDA {{ fwd_body<{c}>(args, i0, i1, i2, i3, flat); }}"
        known = f"[args]({params}) WEFT_INLINE_LAMBDA {{ fwd_known<{c}>(args, i0, i1, i2, i3, flat); }}"
        clip = (f"[args]({params}, int64_t& lo, int64_t& hi) {{ fwd_clip<{c}>(args, i0, i1, i2, i3, flat, lo, "
                "hi); }")
        if self.guard.flat is not None:  # rows of a flat launch (guards._flat_rows)
            width = f"int64_t({self.names(self.guard.flat[0])})"
            return (f"weft::run_grid_split_rows<{independent}>(dims, ndim, nthreads, {width}, {body}, {known}, "
                    f"{clip});")
        return (f"weft::run_grid_split<{independent}, {self.tid_rank()}>(dims, ndim, nthreads, {body}, {known}, "
                f"{clip});")

    def contiguous_launch(self, launch: str) -> tuple[str | None, str]:
        """The launch of the contiguous instantiation, with the condition (besides the layout) under which it runs
        (None: always; otherwise the general instantiation runs the other launches)."""
        return None, launch

    # ------------------------------------------------------------------ statements
    def comment(self, loc: SourceLoc | None) -> None:
        if loc is None:
            return
        key = (loc.file, loc.line)
        if key == self._last_line:
            return
        self._last_line = key
        # a trailing backslash would splice the next C++ line into the comment (a Python line continuation)
        text = loc.text.strip().rstrip("\\").rstrip()
        if config.mode == "debug" and config.line_directives:
            self.out(f'#line {loc.line} "{loc.file}"')
        self.out(f"// {loc.line}: {text}" if text else f"// line {loc.line}")

    def block(self, block: list[Stmt]) -> None:
        for s in block:
            self.stmt(s)

    def stmt(self, s: Stmt) -> None:
        n = self.names
        if isinstance(s, Let):
            self.comment(s.loc)
            if s.dsts and s.dsts[0].id in self._known:  # an atom of the guard plan, constant in fwd_known
                self.out(f"{n(s.dsts[0])} = {'true' if self._known[s.dsts[0].id] else 'false'};")
            elif s.dsts and s.dsts[0].id in self._exprs:  # a flat launch's column / row, from the row loop
                self.out(f"{n(s.dsts[0])} = {self._exprs[s.dsts[0].id]};")
            elif s.dsts and s.dsts[0].id in self._copies:  # a guard plan identity: ``(j + c) % n`` is ``j + c`` here
                self.out(self.assign_line(s.dsts[0].type, n(s.dsts[0]), n(self._copies[s.dsts[0].id])))
            else:
                self.let(s)
        elif isinstance(s, Assign):
            self.comment(s.loc)
            self.out(self.assign_line(s.dst.type, n(s.dst), n(s.src)))
        elif isinstance(s, If):
            self.comment(s.loc)
            self.out(f"if ({n(s.cond)}) {{")
            self.nested(s.then)
            if s.orelse:
                self.out("} else {")
                self.nested(s.orelse)
            self.out("}")
        elif isinstance(s, For):
            self.comment(s.loc)
            i = n(s.var)
            cond = self.for_condition(s)
            self.out(f"for ({i} = {n(s.start)}; {cond}; {i} += {n(s.step)}) {{")
            self.nested(s.body)
            self.out("}")
        elif isinstance(s, While):
            self.comment(s.loc)
            self.out("while (true) {")
            self.out.depth += 1
            self.block(s.cond_body)
            self.out(f"if (!{n(s.cond)}) break;")
            self.block(s.body)
            self.out.depth -= 1
            self.out("}")
        elif isinstance(s, Break):
            self.out("break;")
        elif isinstance(s, Continue):
            self.out("continue;")
        elif isinstance(s, Return):
            self.out("return;")
        elif isinstance(s, CustomCall):
            self.block(s.primal)
        else:
            raise TypeError(f"cannot render {type(s).__name__}")

    def nested(self, block: list[Stmt]) -> None:
        self.out.depth += 1
        self._last_line = None
        self.block(block)
        self.out.depth -= 1
        self._last_line = None

    def for_condition(self, s: For) -> str:
        n = self.names
        i = n(s.var)
        if isinstance(s.step, Const):
            return f"{i} < {n(s.stop)}" if s.step.value > 0 else f"{i} > {n(s.stop)}"
        return f"({n(s.step)} > 0 ? {i} < {n(s.stop)} : {i} > {n(s.stop)})"

    # ------------------------------------------------------------------ ops
    def let(self, s: Let) -> None:
        op = s.call.op
        n = self.names
        args = [n(a) for a in s.args]
        if op.kind is OpKind.INFIX:
            self.out(f"{n(s.dsts[0])} = ({args[0]} {op.operator} {args[1]});")
        elif op.kind is OpKind.PREFIX:
            self.out(f"{n(s.dsts[0])} = ({op.operator}{args[0]});")
        elif op.kind is OpKind.CALL:
            call = f"weft::{op.native}({', '.join(args)})"
            stmt = f"{n(s.dsts[0])} = {call};" if s.dsts else f"{call};"
            if self.opts.debug and op.role in (Role.EXTRACT, Role.INSERT):
                self.component_checked(s, args, stmt)
            else:
                self.out(stmt)
        elif op.kind is OpKind.OUT_CALL:
            outs = ", ".join(n(d) for d in s.dsts)
            self.out(f"weft::{op.native}({', '.join(args + [outs])});")
        else:
            rule = rules.lookup(type(self), "forward_rules", op)
            if rule is None:
                raise NotImplementedError(f"no renderer for op '{op.name}' ({op.domain})")
            rule(self, s, args)

    def array_tparam(self, arr) -> str:
        return "<C>" if isinstance(arr, Var) and arr.id in self.contig else "<false>"

    def array_label(self, arr) -> str:
        return arr.name if isinstance(arr, Var) and arr.name else "array"

    def checked(self, s: Let, what: str, arr, idx: list[str], stmt: str, on_fail: str = "") -> None:
        if not self.opts.debug:
            self.out(stmt)
            return
        a = self.names(arr)
        check = (f'{self.check_fn}({a}, "{what}", "{self.opts.kernel_name}", "{self.array_label(arr)}", '
                 f'{", ".join(idx)})')
        self.out(f"if ({check}) {{ {stmt} }}" + (f" else {{ {on_fail} }}" if on_fail else ""))

    def component_checked(self, s: Let, args: list[str], stmt: str) -> None:
        """Debug mode: a vector / matrix component index computed at run time is checked against the type's extent
        (constant indices are checked when the kernel compiles); out of range reports an error and yields zero
        (extract) or the unchanged value (insert)."""
        t = s.args[0].type
        idx = s.args[1:] if s.call.op.role is Role.EXTRACT else s.args[1:-1]
        extents = [t.length] if isinstance(t, T.VectorType) else [t.rows, t.cols][:len(idx)]
        where = f"line {s.loc.line}" if s.loc is not None else ""  # no file name: the code stays content-keyed
        conds = [f'weft::check_component({self.names(i)}, {n}, "{self.opts.kernel_name}", "{t}", {_c_string(where)})'
                 for i, n in zip(idx, extents) if not isinstance(i, Const)]
        if not conds:
            self.out(stmt)
            return
        d = self.names(s.dsts[0])
        fallback = f"{d} = {{}};" if s.call.op.role is Role.EXTRACT else f"{d} = {args[0]};"
        self.out(f"if ({' && '.join(conds)}) {{ {stmt} }} else {{ {fallback} }}")

    def op_copy(self, s: Let, args) -> None:
        self.out(self.assign_line(s.dsts[0].type, self.names(s.dsts[0]), args[0]))

    def op_tid(self, s: Let, args) -> None:
        if len(s.dsts) == 1:
            self.out(f"{self.names(s.dsts[0])} = int32_t(flat);")
        else:
            for k, d in enumerate(s.dsts):
                self.out(f"{self.names(d)} = i{k};")

    def op_to_bool(self, s: Let, args) -> None:
        self.out(f"{self.names(s.dsts[0])} = ({args[0]} != 0);")

    def op_cast(self, s: Let, args) -> None:
        self.out(f"{self.names(s.dsts[0])} = weft::cast<{s.dsts[0].type.ctype}>({args[0]});")

    def op_construct(self, s: Let, args) -> None:
        (t,) = s.call.attrs
        d = self.names(s.dsts[0])
        if isinstance(t, T.StructType) or not args:
            self.out(f"{d} = {t.ctype}{{}};")
        elif len(args) == 1 and s.args[0].type != t and not isinstance(s.args[0].type, T.ScalarType):
            self.out(f"{d} = weft::cast<{t.ctype}>({args[0]});")
        elif len(args) == 1 and isinstance(s.args[0].type, T.ScalarType) and isinstance(t, T.VectorType) \
                and t.flavor is not T.VecFlavor.VECTOR:
            self.out(f"{d} = {t.ctype}({', '.join([args[0]] * t.length)});")
        else:
            self.out(f"{d} = {t.ctype}({', '.join(args)});")

    def op_getfield(self, s: Let, args) -> None:
        self.out(f"{self.names(s.dsts[0])} = {args[0]}.{s.call.attrs[0]};")

    def op_setfield(self, s: Let, args) -> None:
        d = self.names(s.dsts[0])
        self.out(f"{d} = {args[0]}; {d}.{s.call.attrs[0]} = {args[1]};")

    def op_load(self, s: Let, args) -> None:
        arr = s.args[0]
        d = self.names(s.dsts[0])
        stmt = f"{d} = weft::load{self.array_tparam(arr)}({', '.join(args)});"
        self.checked(s, "read", arr, args[1:], stmt, on_fail=f"{d} = {{}};")

    def op_store(self, s: Let, args) -> None:
        arr = s.args[0]
        stmt = f"weft::store{self.array_tparam(arr)}({args[0]}, {args[-1]}, {', '.join(args[1:-1])});"
        self.checked(s, "write", arr, args[1:-1], stmt)

    def op_view(self, s: Let, args) -> None:
        if s.args[0].id in self.contig if isinstance(s.args[0], Var) else False:
            self.contig.add(s.dsts[0].id)
        stmt = f"{self.names(s.dsts[0])} = weft::view({', '.join(args)});"
        self.checked(s, "view", s.args[0], args[1:], stmt)

    def op_array_slice(self, s: Let, args) -> None:
        nd, kinds = s.call.attrs
        self.out(f"{self.names(s.dsts[0])} = weft::slice<{nd}, {kinds}>({', '.join(args)});")

    def op_array_shape(self, s: Let, args) -> None:
        self.out(f"{self.names(s.dsts[0])} = {args[0]}.shape[{s.call.attrs[0]}];")

    def op_fixed_zeros(self, s: Let, args) -> None:
        (t,) = s.call.attrs
        shape = ", ".join(str(x) for x in t.shape)
        # in place: assigning a returned array copies it (NVRTC expands such copies of large local arrays element by
        # element: the articulation kernels' 256-element arrays cost 2.5x the NVRTC time and 3x the CUBIN size)
        self.out(f"weft::init_fixed({self.names(s.dsts[0])}, {shape});")

    def op_atomic(self, s: Let, args, values: int = 1) -> None:
        """``weft::<native>(array, value(s)..., indices...)``; ``values``: 2 for compare-and-swap."""
        arr = s.args[0]
        value_args = args[-values:]
        idx = args[1:len(args) - len(value_args)]
        call = f"weft::{s.call.op.native}({args[0]}, {', '.join(value_args)}, {', '.join(idx)})"
        stmt = f"{self.names(s.dsts[0])} = {call};" if s.dsts else f"{call};"
        self.checked(s, "atomic", arr, idx, stmt)

    def op_atomic_cas(self, s: Let, args) -> None:
        self.op_atomic(s, args, values=2)

    def op_printf(self, s: Let, args) -> None:
        fmt = _c_string(s.call.attrs[0])
        conv = [f"double({a})" if v.type in (T.FLOAT32, T.FLOAT16) else a for a, v in zip(args, s.args)]
        self.out(f"printf({', '.join([fmt] + conv)});")

    def op_print(self, s: Let, args) -> None:
        (parts,) = s.call.attrs
        pieces = []
        for i, (kind, value) in enumerate(parts):
            if i:
                pieces.append('printf(" ");')
            if kind == "str":
                pieces.append(f'printf("%s", {_c_string(value)});')
            else:
                pieces.append(f"weft::print_value({args[value]});")
        pieces.append('printf("\\n");')
        self.out(" ".join(pieces))

    def op_assert(self, s: Let, args) -> None:
        if self.opts.debug:
            self.out(f"if (!({args[0]})) weft::report_error({abi.ERROR_ASSERT}, {_c_string(s.call.attrs[0])});")

    def op_expect_eq(self, s: Let, args) -> None:
        self.out(f"weft::expect_eq({args[0]}, {args[1]}, {_c_string(s.call.attrs[0])});")

    def op_expect_neq(self, s: Let, args) -> None:
        self.out(f"weft::expect_neq({args[0]}, {args[1]}, {_c_string(s.call.attrs[0])});")

    def op_expect_near(self, s: Let, args) -> None:
        tol = args[2] if len(args) == 3 else f"{T.scalar_of(s.args[0].type).ctype}(1e-6)"
        self.out(f"weft::expect_near({args[0]}, {args[1]}, {tol}, {_c_string(s.call.attrs[0])});")

    def op_identity(self, s: Let, args) -> None:
        t = s.call.attrs[0]
        self.out(f"{self.names(s.dsts[0])} = weft::identity<{t.rows}, {t.scalar.ctype}>();")

    def op_quat_identity(self, s: Let, args) -> None:
        self.out(f"{self.names(s.dsts[0])} = weft::quat_identity<{s.call.attrs[0].ctype}>();")

    def op_transform_identity(self, s: Let, args) -> None:
        self.out(f"{self.names(s.dsts[0])} = weft::transform_identity<{s.call.attrs[0].ctype}>();")

    def op_random(self, s: Let, args) -> None:
        """A stateful generator: the new state, then ``weft::<native>(state, ...)``."""
        state, value = (self.names(d) for d in s.dsts)
        self.out(f"{state} = {args[0]}; {value} = weft::{s.call.op.native}({', '.join([state] + args[1:])});")


for _name, _rule in (
    ("copy", Renderer.op_copy), ("tid", Renderer.op_tid), ("to_bool", Renderer.op_to_bool), ("cast", Renderer.op_cast),
    ("construct", Renderer.op_construct), ("getfield", Renderer.op_getfield), ("setfield", Renderer.op_setfield),
    ("load", Renderer.op_load), ("store", Renderer.op_store), ("view", Renderer.op_view),
    ("array_slice", Renderer.op_array_slice),    ("array_shape", Renderer.op_array_shape), ("fixed_zeros", Renderer.op_fixed_zeros),
    ("atomic_add", Renderer.op_atomic), ("atomic_sub", Renderer.op_atomic), ("atomic_min", Renderer.op_atomic),
    ("atomic_max", Renderer.op_atomic), ("atomic_exch", Renderer.op_atomic), ("atomic_cas", Renderer.op_atomic_cas),
    ("atomic_and", Renderer.op_atomic), ("atomic_or", Renderer.op_atomic), ("atomic_xor", Renderer.op_atomic),
    ("printf", Renderer.op_printf), ("print", Renderer.op_print), ("assert", Renderer.op_assert),
    ("expect_eq", Renderer.op_expect_eq), ("expect_neq", Renderer.op_expect_neq),
    ("expect_near", Renderer.op_expect_near), ("identity", Renderer.op_identity),
    ("quat_identity", Renderer.op_quat_identity), ("transform_identity", Renderer.op_transform_identity),
    *((name, Renderer.op_random) for name in STATEFUL),
):
    Renderer.forward_rules.add([op for op in rules.ops(_name) if op.kind is OpKind.SPECIAL], _rule)


def _lets(body: list[Stmt], subs) -> list[Let]:
    """The Lets of a kernel body and of the functions of its wp.grad calls."""
    return [s for block in (body, *(sub.fn.body for sub in subs)) for s in walk(block) if isinstance(s, Let)]


_GRAD_CALL = rules.ops("grad_call")[0]


def _c_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{escaped}"'


def _prod(shape) -> int:
    out = 1
    for s in shape:
        out *= s
    return out


def _is_plain_array(t: T.Type) -> bool:
    return isinstance(t, T.ArrayType) and t.kind is T.ArrayKind.ARRAY


def _defined_vars(block: list[Stmt], mutable_locals: list[Var]):
    yield from mutable_locals
    for s in walk(block):
        if isinstance(s, Let):
            yield from s.dsts
        elif isinstance(s, For):
            yield s.var
        elif isinstance(s, Assign):
            yield s.dst
        elif hasattr(s, "let"):  # ReplayLet / AdjLet of the backward program
            yield from s.let.dsts


def _accumulates(t: T.Type) -> bool:
    """Whether a struct field adds up in field-wise struct arithmetic (Warp: the types with an atomic add)."""
    if isinstance(t, T.StructType):
        return any(_accumulates(ft) for _, ft in t.fields)
    if isinstance(t, (T.ScalarType, T.VectorType, T.MatrixType)):
        s = T.scalar_of(t)
        return s.is_float or (s.is_int and s.bits >= 32)
    return False


def _field_fn(t: T.Type, name: str) -> str:
    """The function adding one field: the struct's own (found by argument lookup) or weft's."""
    return name if isinstance(t, T.StructType) else f"weft::{name}"
