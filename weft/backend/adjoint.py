"""Renders an :class:`AdjointProgram` (replay + reverse sweep) as the ``weft_bwd`` entry of a native module.

Derivative rules come from the op registry: ops with ``Adjoint.NATIVE`` call ``weft::adj_<native>`` with the
convention of ``weft/native`` (inputs, adjoints of inputs, adjoint of the result); ops with ``Adjoint.SPECIAL`` have
a rule in the ``adjoint_rules`` table of this renderer or of a subclass (tiles ...), keyed by the op record, with
the signature ``fn(renderer, let, args, adj_args, adj_results)`` where each list holds C++ expressions (see
``weft.backend.rules``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType

from .. import abi
from ..autodiff.decls import DeclPlan, plan_declarations
from ..ir import types as T
from ..ir.access import rewritten_arrays
from ..ir.nodes import (
    AdjAssign,
    AdjLet,
    AdjointProgram,
    Assign,
    Const,
    CustomCall,
    Function,
    If,
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
from ..ir.roles import Role
from ..ops.registry import Adjoint, OpKind
from . import rules
from .guards import RowSlice, plan_guards, row_slice
from .renderer import Emitter, Renderer, RenderOptions, _c_string, _defined_vars, _is_plain_array
from .rules import RuleTable


class AdjointRenderer(Renderer):
    #: the custom-gradient ops (wp.adjoint[x] in a func_grad), which only the backward pass renders
    forward_rules = RuleTable("forward (backward pass only)")
    #: derivative rules of the Adjoint.SPECIAL ops (filled below the class)
    adjoint_rules = RuleTable("adjoint")
    #: how the backward replay re-runs side-effecting ops (ops without a rule are skipped: prints, asserts, ...)
    replay_rules = RuleTable("replay")

    #: target hook: whether an adjoint slot whose first contribution is an op's store form (Op.adjoint_store) is left
    #: unzeroed and passed as ``weft::fresh(slot)`` (autodiff/decls.py); the CPU tile natives have the store forms
    fresh_adjoint_slots = False

    def __init__(self, prog: AdjointProgram, options: RenderOptions):
        super().__init__(prog.fn, options)
        self.prog = prog
        self.dummies: list[tuple[str, T.Type]] = []
        self._repeat_depth = 0
        self.deferred: DeferPlan | None = None  # set by render_module when the kernel takes the deferred form
        self._sites: list[DeferSite] | None = None  # while rendering the deferred body: its gradient add sites
        self._rewritten: frozenset[int] | None = None  # arrays whose store adjoints consume (see rewritten_arrays)
        self._once: set[int] | None = None  # see _run_once
        self._grad_plan: GradPlan | None = None
        self._decl_plan: DeclPlan | None = None
        self._placing = False  # while render_bwd_body renders: declarations at first use (decl_plan)
        #: while rendering the guard-split lane body: site number -> (array, outer index operands, c) of its row-affine
        #: sites (see _row_affine), which record no offset
        self._affine: dict[int, tuple] | None = None
        self._slice: RowSlice | None = None
        self._fresh: dict[int, tuple[int, int]] | None = None

    def render_module(self) -> str:
        self.deferred = plan_deferred(self)
        # the deferred form splits rows like the forward (guards.py): the row interval where the plan's comparisons
        # and index identities hold runs a lane body with them folded (contiguous loads instead of gathers, no wrap
        # divisions), the rim the unchanged one
        # Only plans with index identities (periodic / clamped neighbours) split: a plan of guard comparisons alone
        # measured 2.8x slower split (a 1024^2 guarded stencil, 3.5 -> 9.8 ms: g++'s vector loop for the folded body
        # was versioned away at run time), while rk3_update's wrap identities gain 19%.
        plan = plan_guards(self.fn) if self.deferred is not None else None
        self.guard = plan if plan is not None and plan.identities and plan.flat is None else None
        parts = [self.header(), self.render_structs(self.fn.params), "namespace {", self.render_args_struct(),
                 self.render_bwd_body()]
        if self.deferred is not None:
            parts += self.render_deferred()
        parts += ["}  // namespace", self.render_bwd_entry()]
        return "\n".join(p for p in parts if p) + "\n"

    # ------------------------------------------------------------------ deferred form
    def render_deferred(self) -> list[str]:
        """The deferred-form backward (see run_grid_deferred in launch.h): the body with every gradient add recorded
        in a lane buffer instead of applied, the buffers (struct Defer), and the flush that applies them."""
        self._sites = []
        self.dummies = []  # the second body declares its own scratch slots
        body = self.render_bwd_body(deferred=True)
        sites, self._sites = self._sites, None
        parts = [body]
        affine: dict[int, tuple] = {}
        if self.guard is not None:
            self._sites, self.dummies, self._affine = [], [], affine
            self._slice = row_slice(self.fn, self.guard.inner_tid)
            self._known, self._copies, self._last_line = self.guard.known, self.guard.copies, None
            known = self.render_bwd_body(deferred=True, name="bwd_known_deferred")
            self._known, self._copies, self._last_line = MappingProxyType({}), MappingProxyType({}), None
            self._affine = None
            if self._sites == sites:
                parts += [known, self.render_clip(self.guard, "bwd_clip"), self.render_bases(affine)]
            else:  # pragma: no cover - folding never adds or drops an add site (the plan's atoms guard no stores)
                self.guard = None
                affine = {}
            self._sites = None
        bases = {k: m for m, k in enumerate(sorted(affine))}
        lanes = "weft::kDeferLanes"
        struct = ["struct Defer {"]
        struct += [f"    alignas(64) {st.ctype} v{k}[{lanes}];\n    alignas(64) int32_t o{k}[{lanes}];"
                   for k, st in enumerate(sites)]
        if bases:
            struct.append(f"    int32_t base[{len(bases)}];  // the row-affine sites' offsets at j = 0 (bwd_bases)")
        struct.append("};")
        struct += ["struct Spill {"] + [f"    weft::SpillBuf<{st.ctype}> s{k};" for k, st in enumerate(sites)] + ["};"]
        flush = [("static void bwd_flush(const Args& args, Defer& d, int32_t n, Spill* sp, int64_t b, int64_t e, "
                  "int32_t ka, int32_t kb, int32_t col) {")]
        for k, st in _round_robin(sites):
            tail = (f"sp ? &sp->s{k} : nullptr, b * int64_t(sizeof({st.ctype})), e * int64_t(sizeof({st.ctype}))")
            if k in bases:
                first = f"int32_t(uint32_t(d.base[{bases[k]}]) + uint32_t(col) * uint32_t(sizeof({st.ctype})))"
                flush.append(f"    weft::flush_affine(args.{st.array}, d.o{k}, d.v{k}, n, {tail}, ka, kb, {first});")
            else:
                flush.append(f"    weft::flush_adds<{'true' if st.conditional else 'false'}>(args.{st.array}, d.o{k}, "
                             f"d.v{k}, n, {tail});")
        flush.append("}")
        flush.append("static void bwd_spill(const Args& args, const Spill& sp) {")
        flush += [f"    weft::apply_spill(args.{st.array}, sp.s{k});" for k, st in enumerate(sites)]
        flush.append("}")
        return ["\n".join(struct), *parts, "\n".join(flush)]

    def render_bases(self, affine: dict[int, tuple]) -> str:
        """bwd_bases: for the row with outer indices i0..i3, the offsets at innermost index 0 of the row-affine sites
        of the guard-split lane body (into d.base, in site order), computed by the row-invariant statements of the
        body (guards.row_slice), which give the outer indices the values the lane body gives them."""
        self.out = Emitter()
        n = self.names
        body = list(self._slice.body) if affine else []
        seen: set[int] = set()
        for x in walk(body):
            for d in (x.dsts if isinstance(x, Let) else [x.dst] if isinstance(x, Assign) else []):
                if d.id not in seen and d.kind is not VarKind.PARAM:
                    seen.add(d.id)
                    self.out(f"{d.type.ctype} {n(d)} = {{}};")
        self.block(body)
        self._last_line = None
        for m, k in enumerate(sorted(affine)):
            array, outer, c = affine[k]
            idx = ", ".join([n(x) for x in outer] + [str(c)])
            self.out(f"d.base[{m}] = int32_t(weft::detail::offset32<true>({n(array)}, {idx}));")
        sig = ("template <bool C>\nstatic inline void bwd_bases(const Args& args, Defer& d, int32_t i0, int32_t i1, "
               "int32_t i2, int32_t i3)")
        return sig + " {\n" + "\n".join(self.out.lines) + "\n}"

    def _row_affine(self, s: Let) -> tuple | None:
        """(array, outer indices, c) when the gradient add of load ``s`` in the guard-split lane body is row-affine:
        unconditional, its innermost index the innermost thread index + c under the plan's identities
        (GuardPlan.load_offsets), its other indices constants or row-invariant values (guards.row_slice). Then the
        lanes of a row add into consecutive elements, and the site needs no recorded offsets."""
        c = self.guard.load_offset(s.dsts[0].id)
        if c is None or self.out.depth > 1:
            return None
        outer = s.args[1:-1]
        for x in outer:
            if isinstance(x, Const):
                if not isinstance(x.value, int):
                    return None
            elif x.id not in self._slice.invariant and not (x.kind is VarKind.PARAM and x.id in self._slice.params):
                return None
        return s.args[0], outer, c

    # ------------------------------------------------------------------ body
    def render_bwd_body(self, deferred: bool = False, name: str = "bwd_body_deferred") -> str:
        body = Emitter()
        self.out = body
        for v in self._locals_to_declare():
            self.names(v)  # C++ names in declaration order, wherever the declarations land
        if self.prog.uses_stack:
            self.out("weft::LoopStack stack;")
        replay_at = len(body.lines)
        self.out("// ---- forward replay")
        self._placing = True
        try:
            self.block(self.prog.replay)
            self.out("// ---- reverse sweep")
            self._last_line = None
            self.seed_adjoints()
            self.block(self.prog.reverse)
        finally:
            self._placing = False
        if deferred:
            # a site under a branch (or after an early return) marks its slot empty first, before the replay: every
            # lane writes every slot
            body.lines[replay_at:replay_at] = [f"    d.o{k}[lane] = weft::kNoAdd;" for k, st in enumerate(self._sites)
                                               if st.conditional]
        decls = Emitter()
        plan = self.decl_plan
        placed, adj_placed = plan.placed(), plan.adjoints_placed()
        for v in self._locals_to_declare():
            if v.id not in placed:
                decls(f"{v.type.ctype} {self.names(v)} = {{}};")
            if v.id not in adj_placed:
                decls(f"{v.type.ctype} {self.names.adj(v)} = {{}};")
        self.declare_adjoint_scratch(decls)
        return self.bwd_signature(deferred, name) + " {\n" + "\n".join(decls.lines + body.lines) + "\n}"

    def _locals_to_declare(self) -> list[Var]:
        """Every local of the backward body (each once, no parameters), in declaration order."""
        seen: set[int] = set()
        out = []
        everything = self.prog.replay + self.prog.reverse
        for v in list(_defined_vars(everything, self.prog.locals)) + _popped(everything):
            if v.id not in seen and v.kind is not VarKind.PARAM:
                seen.add(v.id)
                out.append(v)
        return out

    @property
    def decl_plan(self) -> DeclPlan:
        """Where the body declares each local and adjoint slot (autodiff/decls.py)."""
        if self._decl_plan is None:
            self._decl_plan = plan_declarations(self.prog.replay, self.prog.reverse, self.pinned_adjoints(),
                                                self._run_once())
        return self._decl_plan

    def fresh_slots(self) -> dict[int, tuple[int, int]]:
        """Variable id -> (Let id, argument position) of the adjoint slots this body leaves unzeroed: their first
        contribution is that argument's store form (the plan's ``fresh`` slots this renderer accepts)."""
        if self._fresh is None:
            self._fresh = {}
            if self.fresh_adjoint_slots:
                by_id = {v.id: v for v in self._locals_to_declare()}
                self._fresh = {vid: at for vid, at in self.decl_plan.fresh.items()
                               if vid in by_id and self.may_be_fresh(by_id[vid])}
        return self._fresh

    def may_be_fresh(self, v: Var) -> bool:
        """Whether this renderer can leave ``v``'s adjoint slot unzeroed (target hook; see fresh_adjoint_slots)."""
        return False

    def pinned_adjoints(self) -> set[int]:
        """Ids of the variables whose adjoint slots are named before the reverse sweep (see seed_adjoints)."""
        return set()

    def block(self, block: list[Stmt]) -> None:
        if not self._placing:
            super().block(block)
            return
        plan = self.decl_plan
        for k, s in enumerate(block):
            if (id(block), k) in plan.at or (id(block), k) in plan.adjoints_at:
                self.comment(s.let.loc if isinstance(s, (AdjLet, ReplayLet)) else getattr(s, "loc", None))
            for v in plan.at.get((id(block), k), ()):
                self.out(f"{v.type.ctype} {self.names(v)} = {{}};")
            for v in plan.adjoints_at.get((id(block), k), ()):
                self.out(f"{v.type.ctype} {self.names.adj(v)} = {{}};")
            self.stmt(s)

    def bwd_signature(self, deferred: bool, name: str) -> str:
        if deferred:
            return (f"template <bool C>\nstatic inline WEFT_INLINE_BODY void {name}(const Args& args, Defer& d, "
                    "int32_t i0, int32_t i1, int32_t i2, int32_t i3, int64_t flat, int32_t lane)")
        return (f"template <bool C>\n{self.body_qualifiers} void bwd_body(const Args& args, int32_t i0, int32_t i1, "
                "int32_t i2, int32_t i3, int64_t flat)")

    def seed_adjoints(self) -> None:
        """Adjoints set between the replay and the reverse sweep (none for a kernel: its gradients come in through
        its arrays; the wp.grad helper seeds its function's result, see backend/grad_call.py)."""

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
        return self.render_entry("weft_bwd", "bwd_body")

    # ------------------------------------------------------------------ CPU entry from the accumulation plan
    # The CPU backward entry is the forward's, with the hooks of Renderer.render_entry filled from grad_plan: how
    # each gradient argument is accumulated (see GradPlan). The CUDA renderer overrides render_entry.
    @property
    def grad_plan(self) -> GradPlan:
        if self._grad_plan is None:
            self._grad_plan = plan_grad_accumulation(self.fn)
        return self._grad_plan

    def entry_prologue(self) -> list[str] | None:
        plan = self.grad_plan
        if not plan.plain:
            return None
        lines = ["    const int32_t threads = weft::grid_threads(dims, ndim, nthreads);"]
        if plan.private or self.deferred is not None:
            lines += ["    weft::PrivateGrad priv[weft::kMaxPrivateGrads];", "    int npriv = 0;"]
        lines.append("    if (threads <= 1) {")
        lines += [f"        args.{name}.flags |= weft::kGradPlain;" for name in plan.plain]
        if plan.own or plan.private:
            ranges = ", ".join(f"weft::detail::grad_bytes(args.{name})" for name in plan.arrays)
            lines += ["    } else {", f"        const weft::detail::ByteRange grads[] = {{{ranges}}};"]
            for name in plan.own:
                k = plan.arrays.index(name)
                lines.append(f"        if (weft::grad_exclusive(args.{name}, grads, {len(plan.arrays)}, {k})) "
                             f"args.{name}.flags |= weft::kGradPlain;")
            if plan.private:
                lines.append("        const int64_t total = weft::grid_total(dims, ndim);")
            for name, sites in plan.private:
                k = plan.arrays.index(name)
                field_ = f"size_t(reinterpret_cast<char*>(&args.{name}.grad) - reinterpret_cast<char*>(&args))"
                lines.append(f"        weft::private_grad(args.{name}, {field_}, {sites}, total, threads, "
                             f"grads, {len(plan.arrays)}, {k}, priv, npriv);")
        lines.append("    }")
        return lines

    def grid_runner(self, grid: str) -> str:
        plan = self.grad_plan
        if not plan.plain:
            return super().grid_runner(grid)
        if plan.private:  # the runner hands each thread its own gradient copies
            return "weft::run_grid_private(dims, ndim, threads, args, priv, npriv,"
        return f"{grid}(dims, ndim, threads,"

    def grid_lambda_head(self) -> str:
        return "[](const Args& args, " if self.grad_plan.private else "[args]("

    def contiguous_launch(self, launch: str) -> tuple[str | None, str]:
        """Contiguous launches that allow it take the deferred form; the others (launches of 2^31 points or more,
        gradients beyond 32-bit offsets, a stored array's gradient overlapping a read one's) return
        kEntryNeedsStrided and run the general instantiation, so the contiguous module holds one body copy."""
        plan = self.deferred
        if plan is None or not self.grad_plan.plain:
            return None, launch
        conds = [f"weft::deferred_launch_ok(dims, ndim, {self.tid_rank()})"]
        conds += [f"weft::grad_offsets_fit(args.{name})" for name in plan.site_arrays]
        params = {p.name: p for p in self.fn.params}
        composite = [name for name in plan.stored_arrays if _composite(params[name].type.dtype)]
        # the deferred body does not replay stores of vector/matrix elements (no array it stores is read, so none is
        # a snapshot's copy; the replay's masked store would keep the lane loop scalar)
        conds += [f"!(args.{name}.flags & {abi.ARRAY_FLAG_REPLAY_WRITES})" for name in composite]
        if plan.stored_arrays:
            stored = ", ".join(f"weft::detail::grad_bytes(args.{n})" for n in plan.stored_arrays)
            read = ", ".join(f"weft::detail::grad_bytes(args.{n})" for n in plan.site_arrays)
            conds.append(f"weft::detail::ranges_disjoint({{{stored}}}, {{{read}}})")
        owned = " && ".join(f"weft::owned_layout(args.{name}, dims, ndim)" for name in plan.site_arrays)
        if len(plan.site_arrays) > 1:
            same = ", ".join(f"weft::detail::grad_bytes(args.{name})" for name in plan.site_arrays)
            owned += f" && weft::detail::disjoint_or_same({{{same}}})"
        # the body reads and consumes the gradients of stored vector/matrix arrays without testing for them (a test
        # in the lane loop becomes masked accesses, which g++ does not vectorise for vec2/vec3 elements): one
        # without a gradient gets a zeroed scratch gradient for this launch. Scalar elements keep adj_store (g++
        # vectorises their masked accesses; the deferred rk3_update backward measured 15% slower without them)
        scratch = "".join(f"weft::GradScratch gs_{name}; if (!weft::scratch_grad(args.{name}, gs_{name})) "
                          "return weft::kEntryNeedsStrided;\n    " for name in composite)
        lane = ("            [](const Args& args, Defer& d, int32_t i0, int32_t i1, int32_t i2, int32_t i3, int64_t flat,"
                " int32_t lane) WEFT_INLINE_LAMBDA {\n"
                "                {}<true>(args, d, i0, i1, i2, i3, flat, lane);\n"
                "            },\n")
        bodies = lane.replace("{}", "bwd_body_deferred")
        runner = f"run_grid_deferred<{self.tid_rank()}, "
        if self.guard is not None:
            nopre = "true" if _neighbour_loads(self.fn, self.guard) else "false"
            runner = f"run_grid_deferred_split<{self.tid_rank()}, {nopre}, "
            bodies += lane.replace("{}", "bwd_known_deferred")
            bodies += ("            [](const Args& args, int32_t i0, int32_t i1, int32_t i2, int32_t i3, int64_t flat, "
                       "int64_t& lo, int64_t& hi) { bwd_clip<true>(args, i0, i1, i2, i3, flat, lo, hi); },\n"
                       "            [](const Args& args, Defer& d, int32_t i0, int32_t i1, int32_t i2, int32_t i3) "
                       "{ bwd_bases<true>(args, d, i0, i1, i2, i3); },\n")
        run = scratch + (f"weft::{runner}Defer, Spill>(dims, ndim, threads, args, priv, npriv,"
               f"\n            {owned},\n" + bodies +
               "            [](const Args& args, Defer& d, int32_t n, Spill* sp, int64_t b, int64_t e, int32_t ka, "
               "int32_t kb, int32_t col) { bwd_flush(args, d, n, sp, b, e, ka, kb, col); },\n"
               "            [](const Args& args, const Spill& sp) { bwd_spill(args, sp); });")
        return " &&\n        ".join(conds), run

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
                self.out(self.accum_line(a.dst.type, self.adj(a.src), self.adj(a.dst)))
            self.out(self.zero_line(a.dst.type, self.adj(a.dst)))
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
        rule = rules.lookup(type(self), "replay_rules", s.call.op)
        if rule is not None:
            rule(self, s, [self.names(a) for a in s.args])
        elif s.call.op.replay_native:  # a wp.func_native function: its replay snippet (or the snippet again)
            args = [self.names(a) for a in s.args]
            op = s.call.op
            if op.kind is OpKind.OUT_CALL:
                self.out(f"weft::{op.replay_native}({', '.join(args + [self.names(d) for d in s.dsts])});")
            else:
                call = f"weft::{op.replay_native}({', '.join(args)})"
                self.out(f"{self.names(s.dsts[0])} = {call};" if s.dsts else f"{call};")
        # ops without a replay rule (prints, asserts and expects) are not repeated in the backward pass

    def replay_store(self, s: Let, args) -> None:
        arr = s.args[0]
        if isinstance(arr.type, T.ArrayType) and arr.type.kind is T.ArrayKind.FIXED:
            self.let(s)  # kernel-local arrays are plain values: replay them exactly
            return
        if self._sites is not None and _composite(s.args[-1].type):
            return  # deferred form: its entry runs only when the array is not replayed into (contiguous_launch)
        self.out(f"weft::replay_store{self.array_tparam(arr)}({args[0]}, {args[-1]}, {', '.join(args[1:-1])});")

    def replay_atomic(self, s: Let, args, values: int = 1) -> None:
        idx = args[1:len(args) - values]
        call = f"weft::replay_{s.call.op.native}({args[0]}, {', '.join(args[-values:])}, {', '.join(idx)})"
        self.out(f"{self.names(s.dsts[0])} = {call};" if s.dsts else f"{call};")

    def replay_atomic_cas(self, s: Let, args) -> None:
        self.replay_atomic(s, args, values=2)

    # ------------------------------------------------------------------ custom gradient funcs
    def op_adj_value(self, s: Let, args) -> None:
        self.out(self.assign_line(s.dsts[0].type, self.names(s.dsts[0]), self.adj(s.args[0])))

    def op_adj_accum(self, s: Let, args) -> None:
        self.out(self.accum_line(s.args[0].type, self.adj(s.args[0]), args[1]))

    def op_adj_reset(self, s: Let, args) -> None:
        self.out(self.zero_line(s.args[0].type, self.adj(s.args[0])))

    def op_adj_array(self, s: Let, args) -> None:
        self.out(f"{self.names(s.dsts[0])} = weft::grad_view({args[0]});")

    def op_adj_grad_add(self, s: Let, args) -> None:
        self.out(f"weft::grad_add({args[0]}, {args[-1]}, {', '.join(args[1:-1])});")

    # ------------------------------------------------------------------ reverse rules
    def adj_let(self, s: Let) -> None:
        op = s.call.op
        n = self.names
        args = [n(a) for a in s.args]
        adj_args = [self.adj(a) for a in s.args]
        adj_out = [self.adj(d) for d in s.dsts]
        if self.fresh_adjoint_slots:
            fresh = self.fresh_slots()
            for k, a in enumerate(s.args):
                if isinstance(a, Var) and fresh.get(a.id) == (id(s), k):
                    adj_args[k] = f"weft::fresh({adj_args[k]})"  # the first contribution, a store (Op.adjoint_store)
        if op.adjoint is Adjoint.NATIVE and op.kind in (OpKind.CALL, OpKind.INFIX, OpKind.PREFIX):
            self.out(f"weft::adj_{op.native}({', '.join(args + adj_args + adj_out)});")
        elif op.adjoint is Adjoint.NATIVE and op.kind is OpKind.OUT_CALL:
            outs = [n(d) for d in s.dsts]
            self.out(f"weft::adj_{op.native}({', '.join(args + outs + adj_args + adj_out)});")
        else:
            rule = rules.lookup(type(self), "adjoint_rules", op)
            if rule is not None:
                rule(self, s, args, adj_args, adj_out)
            elif not s.args:
                pass  # constants such as identity(): nothing to propagate
            else:  # pragma: no cover - tests/autodiff/test_registry_coverage.py checks every SPECIAL op has a rule
                raise NotImplementedError(f"no adjoint rule for {op.name} ({op.domain})")
        once = self._run_once()
        for d, v in zip(adj_out, s.dsts):
            # a tile's adjoint is read for the last time here unless a loop repeats this statement: resetting it (a
            # block-wide memset) is dead work
            if not (isinstance(v.type, T.TileType) and id(s) in once) \
                    and not (self._placing and id(s) in self.decl_plan.dead_resets):
                self.out(self.zero_line(v.type, d))

    def _run_once(self) -> set[int]:
        """Ids of the Lets whose adjoint statements the reverse sweep runs at most once (outside every loop)."""
        if self._once is None:
            self._once = set()

            def visit(block) -> None:
                for x in block:
                    if isinstance(x, AdjLet):
                        self._once.add(id(x.let))
                    elif isinstance(x, If):
                        visit(x.then)
                        visit(x.orelse)

            visit(self.prog.reverse)
        return self._once

    def adj_copy(self, s, args, adj_args, adj_out):
        self.out(self.accum_line(s.dsts[0].type, adj_args[0], adj_out[0]))

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
        elif isinstance(t, T.MatrixType) and len(srcs) == t.rows and isinstance(srcs[0].type, T.VectorType):
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
        if self._sites is not None:  # deferred form: record the add in this site's lane slots
            k = len(self._sites)
            self._sites.append(DeferSite(arr.name, s.dsts[0].type.ctype, self.out.depth > 1))
            affine = self._row_affine(s) if self._affine is not None else None
            if affine is not None:  # guard-split lane body, row-affine: the value only (see flush_affine)
                self._affine[k] = affine
                self.out(self.assign_line(s.dsts[0].type, f"d.v{k}[lane]", adj_out[0]))
                return
            self.out(f"weft::defer_add<true>(d.v{k}[lane], d.o{k}[lane], {args[0]}, {adj_out[0]}, "
                     f"{', '.join(args[1:])});")
            return
        self.out(f"weft::adj_load{self.array_tparam(arr)}({args[0]}, {adj_out[0]}, {', '.join(args[1:])});")

    def adj_store(self, s, args, adj_args, adj_out):
        arr = s.args[0]
        value = s.args[-1]
        if not T.is_differentiable_type(value.type):
            return
        if arr.type.kind is T.ArrayKind.FIXED:
            self.out(f"weft::adj_store_fixed({args[0]}, {adj_args[0]}, {adj_args[-1]}, {', '.join(args[1:-1])});")
            return
        if self._rewritten is None:
            self._rewritten = rewritten_arrays(self.fn)
        consume = isinstance(arr, Var) and arr.id in self._rewritten
        if self._sites is not None and _composite(value.type):
            # deferred form, vector/matrix elements: the gradient is there (contiguous_launch), owned by the lane
            self.out(f"weft::adj_store_owned<C, {'true' if consume else 'false'}>({args[0]}, {adj_args[-1]}, "
                     f"{', '.join(args[1:-1])});")
            return
        fn = "adj_store_consume" if consume else "adj_store"
        self.out(f"weft::{fn}{self.array_tparam(arr)}({args[0]}, {adj_args[-1]}, {', '.join(args[1:-1])});")

    def adj_atomic_add_sub(self, s, args, adj_args, adj_out):
        if T.is_differentiable_type(s.args[-1].type):
            self.out(f"weft::adj_{s.call.op.native}({args[0]}, {adj_args[-1]}, {', '.join(args[1:-1])});")

    def replay_print(self, s: Let, args) -> None:
        self.let(s)  # Warp's backward pass prints again what the forward printed

    def adj_print(self, s, args, adj_args, adj_out):
        """Warp's reverse-sweep print: "adj: " and the adjoint of each printed value at this point of the sweep
        (zero for values that carry none; structs and arrays say they have no print form)."""
        pieces = ['printf("adj: ");']
        for i, (kind, value) in enumerate(s.call.attrs[0]):
            if i:
                pieces.append('printf(" ");')
            if kind == "str":
                pieces.append(f'printf("%s", {_c_string(value)});')
                continue
            x = s.args[value]
            carried = isinstance(x, Var) and (T.is_differentiable_type(x.type) or (
                x.kind is VarKind.PARAM and not isinstance(x.type, T.ArrayType)))
            pieces.append(f"weft::print_adjoint({adj_args[value] if carried else x.type.ctype + '{}'});")
        pieces.append('printf("\\n");')
        self.out(" ".join(pieces))

    def adj_atomic_minmax(self, s, args, adj_args, adj_out):
        if T.is_differentiable_type(s.args[-1].type):
            self.out(f"weft::adj_atomic_minmax({args[0]}, {args[-1]}, {adj_args[-1]}, {', '.join(args[1:-1])});")


def _special(name: str) -> list:
    return [op for op in rules.ops(name) if op.kind is OpKind.SPECIAL]


for _name, _rule in (("adj_value", AdjointRenderer.op_adj_value), ("adj_accum", AdjointRenderer.op_adj_accum),
                     ("adj_reset", AdjointRenderer.op_adj_reset), ("adj_array", AdjointRenderer.op_adj_array),
                     ("adj_grad_add", AdjointRenderer.op_adj_grad_add)):
    AdjointRenderer.forward_rules.add(_special(_name), _rule)
for _name, _rule in (("copy", AdjointRenderer.adj_copy), ("getfield", AdjointRenderer.adj_getfield),
                     ("setfield", AdjointRenderer.adj_setfield), ("cast", AdjointRenderer.adj_cast),
                     ("construct", AdjointRenderer.adj_construct), ("load", AdjointRenderer.adj_load),
                     ("store", AdjointRenderer.adj_store), ("atomic_add", AdjointRenderer.adj_atomic_add_sub),
                     ("atomic_sub", AdjointRenderer.adj_atomic_add_sub),
                     ("atomic_min", AdjointRenderer.adj_atomic_minmax),
                     ("atomic_max", AdjointRenderer.adj_atomic_minmax), ("print", AdjointRenderer.adj_print)):
    AdjointRenderer.adjoint_rules.add(_special(_name), _rule)
for _name, _rule in (("store", AdjointRenderer.replay_store), ("atomic_add", AdjointRenderer.replay_atomic),
                     ("atomic_sub", AdjointRenderer.replay_atomic), ("atomic_min", AdjointRenderer.replay_atomic),
                     ("atomic_max", AdjointRenderer.replay_atomic), ("atomic_exch", AdjointRenderer.replay_atomic),
                     ("atomic_and", AdjointRenderer.replay_atomic), ("atomic_or", AdjointRenderer.replay_atomic),
                     ("atomic_xor", AdjointRenderer.replay_atomic),
                     ("atomic_cas", AdjointRenderer.replay_atomic_cas), ("print", AdjointRenderer.replay_print),
                     ("printf", AdjointRenderer.replay_print)):
    AdjointRenderer.replay_rules.add(_special(_name), _rule)


@dataclass
class GradAccess:
    """How a backward kernel's threads add into the gradients of its array parameters (by parameter id)."""

    own: set[int] = field(default_factory=set)  # each thread only at its own launch index
    loads: dict[int, int] = field(default_factory=dict)  # only read (any index): number of load sites


def grad_access(fn: Function) -> GradAccess:
    """Which array parameters' gradients may be accumulated without atomics, and how.

    ``own``: every use is an element load or store whose indices are the thread's ``wp.tid()`` values, each once,
    so two threads never add into the same gradient element (given a layout without overlapping elements, which the
    backward entry checks at run time). ``loads``: arrays only ever read, whose gradients can be privatised per
    thread. Kernels with struct arguments holding arrays, tiles or custom gradient funcs are left out: their
    gradients can be reached in ways this walk does not follow.
    """
    out = GradAccess()
    if any(isinstance(p.type, T.StructType) and _holds_array(p.type) for p in fn.params):
        return out
    tid: dict[int, int] = {}  # var id -> which wp.tid() component it holds
    arity = 0
    for s in walk(fn.body):
        if isinstance(s, CustomCall):
            return out
        if not isinstance(s, Let):
            continue
        if any(isinstance(v.type, T.TileType) for v in list(s.dsts) + [a for a in s.args if isinstance(a, Var)]):
            return out
        if s.call.op.role is Role.TID:
            arity = len(s.dsts)
            tid.update({d.id: k for k, d in enumerate(s.dsts)})
        elif s.call.op.role is Role.COPY and isinstance(s.args[0], Var) and s.args[0].id in tid:
            tid[s.dsts[0].id] = tid[s.args[0].id]
    candidates = {p.id for p in fn.params if _is_plain_array(p.type)}
    not_own: set[int] = set()
    not_read_only: set[int] = set()
    loads: dict[int, int] = {}

    def own_index(idx) -> bool:
        comps = sorted(tid.get(v.id, -1) if isinstance(v, Var) else -1 for v in idx)
        return arity > 0 and comps == list(range(arity))

    for s in walk(fn.body):
        if isinstance(s, Assign):
            if isinstance(s.src, Var) and s.src.id in candidates:
                not_own.add(s.src.id)
                not_read_only.add(s.src.id)
            continue
        if not isinstance(s, Let):
            continue
        name = s.call.op.name
        for k, a in enumerate(s.args):
            if not isinstance(a, Var) or a.id not in candidates:
                continue
            if k == 0 and name == "array_shape":
                continue
            if k == 0 and name == "load":
                loads[a.id] = loads.get(a.id, 0) + 1
                if not own_index(s.args[1:]):
                    not_own.add(a.id)
                continue
            not_read_only.add(a.id)
            if not (k == 0 and name == "store" and own_index(s.args[1:-1])):
                not_own.add(a.id)
    out.own = candidates - not_own
    out.loads = {i: n for i, n in loads.items() if i not in not_read_only and i not in out.own}
    return out


@dataclass(frozen=True)
class GradPlan:
    """How a CPU backward entry accumulates the gradients of its array parameters (a decision made on the IR).

    One thread: plain adds into every differentiable plain array's gradient (``plain``). Several: plain adds into
    the gradient of an array each thread reads only at its own launch index (``own``, checked at run time against the
    arguments' layouts: no gradient may share memory with another's); a per-thread copy, summed after the grid, of the
    gradient of an array only read (``private``: name and number of load sites), where that is cheaper than atomics;
    CAS atomics for the rest.
    """

    arrays: tuple[str, ...]  # every non-fixed array parameter (their gradients' byte ranges are compared)
    plain: tuple[str, ...]
    own: tuple[str, ...]
    private: tuple[tuple[str, int], ...]


def plan_grad_accumulation(fn: Function) -> GradPlan:
    arrays = [p for p in fn.params if isinstance(p.type, T.ArrayType) and p.type.kind is not T.ArrayKind.FIXED]
    plain = [p for p in arrays if p.type.kind is T.ArrayKind.ARRAY and T.is_differentiable_type(p.type.dtype)]
    if not plain:
        return GradPlan(tuple(p.name for p in arrays), (), (), ())
    access = grad_access(fn)
    return GradPlan(tuple(p.name for p in arrays), tuple(p.name for p in plain),
                    tuple(p.name for p in plain if p.id in access.own),
                    tuple((p.name, access.loads[p.id]) for p in plain if p.id in access.loads))


def _holds_array(t: T.Type) -> bool:
    if isinstance(t, T.ArrayType):
        return True
    if isinstance(t, T.StructType):
        return any(_holds_array(ft) for _, ft in t.fields)
    return False


def _popped(block: list[Stmt]) -> list[Var]:
    out = []
    for s in walk(block):
        if isinstance(s, Pop):
            out += s.vars
        elif isinstance(s, Repeat):
            out.append(s.count)
    return out


@dataclass(frozen=True)
class DeferSite:
    """One gradient add of the deferred form: the array parameter it adds into and the element's C++ type."""

    array: str
    ctype: str
    conditional: bool  # under a branch: the lane may not reach it


@dataclass(frozen=True)
class DeferPlan:
    """Why a backward kernel may take the deferred form, and what its entry must check at launch."""

    site_arrays: tuple[str, ...]  # array parameters the reverse sweep adds into
    stored_arrays: tuple[str, ...]  # array parameters the kernel stores into (their gradients are read)


#: Lane buffers of a deferred form larger than this stay out of L1/L2: the general body is used instead.
_MAX_DEFER_BYTES = 96 * 1024


def plan_deferred(r: AdjointRenderer) -> DeferPlan | None:
    """Whether a CPU backward kernel gets a deferred form (gradient adds recorded per lane, applied after each chunk
    of grid points; see run_grid_deferred in launch.h), which vectorises where the general body cannot.

    It must be a straight-line kernel (branches and early returns are fine: a gradient add the lane does not reach
    leaves its slot marked empty) whose only side effects are plain stores (the forward's dependence-free condition),
    whose every array access is an element load or store of an array parameter, and whose stores are at the
    thread's own index into arrays it does not also read: their gradients are read and consumed during the sweep, so
    they must not receive any deferred add (checked again at launch for aliasing arguments).
    """
    fn, prog = r.fn, r.prog
    if fn.tile_dim or r.opts.debug or prog.uses_stack or not Renderer.threads_independent(r) or not r.straight_line():
        return None
    sizes = 0
    stored: set[int] = set()
    loaded: set[int] = set()
    params = {p.id: p for p in fn.params}
    for s in walk(fn.body):
        if not isinstance(s, Let):
            continue
        arrays = [a for a in s.args if isinstance(a, Var) and isinstance(a.type, T.ArrayType)]
        name = s.call.op.name
        for a in arrays:
            if a.type.kind is T.ArrayKind.FIXED:
                continue
            if a.id not in params or a.type.kind is not T.ArrayKind.ARRAY:
                return None  # views, indexed or fabric arrays, arrays held in structs
            if name == "array_shape":
                continue
            if name == "load" and s.args[0] is a:
                if T.is_differentiable_type(s.dsts[0].type):
                    if not _float32_or_64(s.dsts[0].type):
                        return None
                    loaded.add(a.id)
                    sizes += abi.DEFER_LANES * (s.dsts[0].type.size + 4)
            elif name == "store" and s.args[0] is a:
                stored.add(a.id)
            else:
                return None  # an array passed to anything else
    if not loaded or sizes > _MAX_DEFER_BYTES or stored & loaded:
        return None
    own = grad_access(fn).own
    if any(i not in own for i in stored if T.is_differentiable_type(params[i].type.dtype)):
        return None
    names = lambda ids: tuple(params[i].name for i in sorted(ids))
    return DeferPlan(names(loaded), names(i for i in stored if T.is_differentiable_type(params[i].type.dtype)))


def _neighbour_loads(fn: Function, plan) -> bool:
    """Whether the guard-split lane body loads some array at two points of the row (``u[i, j]`` and ``u[i, j + 1]``,
    the innermost index offset by constants, through the plan's identities too): its lane loop is compiled without
    GCC's PRE, which would carry one point's load to the next (see run_deferred_piece_split in launch.h)."""
    offsets = {plan.inner_tid.id: 0}
    copies = plan.copies
    seen: dict[int, set[int]] = {}
    for s in walk(fn.body):
        if isinstance(s, Assign) and isinstance(s.src, Var) and s.src.id in offsets:
            offsets[s.dst.id] = offsets[s.src.id]
        if not isinstance(s, Let) or not s.dsts:
            continue
        name, args, dst = s.call.op.name, s.args, s.dsts[0]
        if dst.id in copies and copies[dst.id].id in offsets:
            offsets[dst.id] = offsets[copies[dst.id].id]
        elif name == "copy" and isinstance(args[0], Var) and args[0].id in offsets:
            offsets[dst.id] = offsets[args[0].id]
        elif name in ("add", "sub") and len(args) == 2:
            a, b = args
            if isinstance(a, Var) and a.id in offsets and isinstance(b, Const) and isinstance(b.value, int):
                offsets[dst.id] = offsets[a.id] + (b.value if name == "add" else -b.value)
            elif name == "add" and isinstance(b, Var) and b.id in offsets and isinstance(a, Const) \
                    and isinstance(a.value, int):
                offsets[dst.id] = offsets[b.id] + a.value
        elif name == "load" and isinstance(args[-1], Var) and args[-1].id in offsets:
            points = seen.setdefault(args[0].id, set())
            points.add(offsets[args[-1].id])
            if len(points) > 1:
                return True
    return False


def _round_robin(sites: list[DeferSite]) -> list[tuple[int, DeferSite]]:
    """The order of a chunk's flushes: one site of each array in turn, so that two flushes of the same gradient
    (a stencil's neighbours: the same elements shifted by one) are apart and the second does not load vectors the
    first has just stored (a store-forwarding stall)."""
    per_array: dict[str, list[tuple[int, DeferSite]]] = {}
    for k, st in enumerate(sites):
        per_array.setdefault(st.array, []).append((k, st))
    queues = list(per_array.values())
    out = []
    while any(queues):
        for q in queues:
            if q:
                out.append(q.pop(0))
    return out


def _composite(t: T.Type) -> bool:
    """A vector, matrix, quaternion or transform element (not a scalar)."""
    return not isinstance(t, T.ScalarType)


def _float32_or_64(t: T.Type) -> bool:
    s = T.scalar_of(t)
    return s is not None and s.is_float and s.bits in (32, 64)

