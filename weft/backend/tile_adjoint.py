"""Reverse mode of tile kernels: the backward program rendered for CPU blocks, and the adjoint rules of tile ops.

The backward program (``weft.autodiff``: replay, then reverse sweep) is segmented like the forward body
(``model``); reverse lane runs visit the lanes last to first. The rules call the ``adj_*`` functions that sit
below each forward function in ``weft/native/tile.h`` and ``fft.h``. ``tile_map`` / ``tile_reduce`` functions
are differentiated by the same IR transform as kernels, applied to the function body once per element.
"""

from __future__ import annotations

from ..autodiff.reverse import build_adjoint
from ..ir import types as T
from ..ir.blocks import stmt_vars, walk
from ..ir.nodes import AdjointProgram, Assign, For, Function, Let, Var, VarKind
from ..ir.roles import Role
from . import rules
from .adjoint import AdjointRenderer, _popped
from .renderer import Emitter, RenderOptions
from .rules import RuleTable
from .tiles import BlockRendering, axis_slices, value_bytes


class TileAdjointRenderer(BlockRendering, AdjointRenderer):
    #: derivative and replay rules of tile ops (filled at the end of this module)
    adjoint_rules = RuleTable("tile adjoint")
    replay_rules = RuleTable("tile replay")

    fresh_adjoint_slots = True  # tile.h / fft.h have the store forms of the Op.adjoint_store ops

    def __init__(self, prog: AdjointProgram, options: RenderOptions, block_dim: int):
        super().__init__(prog, options)
        self.replay_plan, self.reverse_plan = self.setup_blocks([prog.replay, prog.reverse], prog.locals, block_dim)
        self._nested: dict[int, AdjointProgram] = {}

    def render_bwd_body(self) -> str:
        body = Emitter()
        self.out = body
        if self.prog.uses_stack:
            self.out("weft::LoopStack stack;")
        everything = self.prog.replay + self.prog.reverse
        self.block_prologue(everything)
        self.out("// ---- forward replay")
        self.render_plan(self.replay_plan)
        self.out("// ---- reverse sweep")
        self._last_line = None
        self._reverse_lanes = True
        try:
            self.render_plan(self.reverse_plan)
        finally:
            self._reverse_lanes = False
        decls = Emitter()
        self.declare(_all_vars(everything, self.prog.locals), out=decls, adjoints=True)
        self.declare_adjoint_scratch(decls)
        sig = (f"template <bool C>\n{self.body_qualifiers} void bwd_body(const Args& args, const weft::Grid& grid, "
               "int64_t block)")
        return sig + " {\n" + "\n".join(decls.lines + body.lines) + "\n}"

    def may_be_fresh(self, v: Var) -> bool:
        aliases = self.names.aliases
        if aliases is not None and (v.id in aliases.target or any(t.id == v.id for t in aliases.target.values())):
            return False  # a slot shared with another value's
        return isinstance(v.type, T.TileType) and T.is_differentiable_type(v.type) and not self.names.is_lane_array(v)

    def declare_one(self, v, ct: str, name: str, out) -> None:
        if name != self.names.raw(v) and v.id in self.fresh_slots():
            # written in full by its first contribution (autodiff/decls.py): no zero fill
            self.frame_bytes = getattr(self, "frame_bytes", 0) + value_bytes(v.type)
            out(f"{ct} {name};")
            return
        super().declare_one(v, ct, name, out)

    def render_bwd_entry(self) -> str:
        """The CPU backward entry: the forward's block walk, after choosing how the gradients of arrays the kernel
        only reads through ``tile_load`` are accumulated: plain adds on one thread; on several, a per-thread copy
        (summed after the blocks) where that costs less than atomics (``private_grad``), atomics otherwise."""
        return self.block_entry("weft_bwd", "bwd_body")

    def _tile_private(self) -> tuple[list, dict]:
        arrays = [p for p in self.fn.params if isinstance(p.type, T.ArrayType) and p.type.kind is not T.ArrayKind.FIXED]
        loads = tile_loaded_only(self.fn)
        return arrays, loads

    def entry_prologue(self) -> list[str] | None:
        arrays, loads = self._tile_private()
        private = [p for p in arrays if p.id in loads]
        if not private:
            return None
        bd = self.block_dim
        ranges = ", ".join(f"weft::detail::grad_bytes(args.{p.name})" for p in arrays)
        lines = [f"    const int32_t threads = weft::block_threads(grid, {bd}, nthreads);",
                 "    weft::PrivateGrad priv[weft::kMaxPrivateGrads];", "    int npriv = 0;",
                 "    if (threads <= 1) {"]
        lines += [f"        args.{p.name}.flags |= weft::kGradPlain;" for p in private]
        lines += ["    } else {", f"        const weft::detail::ByteRange grads[] = {{{ranges}}};",
                  f"        const int64_t blocks = weft::block_count(grid, {bd});"]
        for p in private:
            field_ = f"size_t(reinterpret_cast<char*>(&args.{p.name}.grad) - reinterpret_cast<char*>(&args))"
            lines.append(f"        weft::private_grad(args.{p.name}, {field_}, {loads[p.id]}, blocks, threads, grads, "
                         f"{len(arrays)}, {arrays.index(p)}, priv, npriv);")
        lines.append("    }")
        return lines

    def block_runner(self, call: str) -> str:
        arrays, loads = self._tile_private()
        if not any(p.id in loads for p in arrays):
            return super().block_runner(call)
        return (f"weft::run_blocks_private(grid, {self.block_dim}, threads, args, priv, npriv, "
                f"[&](const Args& a, int64_t b) {{ {call}(a, grid, b); }});")

    # ------------------------------------------------------------------ element functions
    def nested_program(self, body) -> AdjointProgram:
        prog = self._nested.get(id(body))
        if prog is None:

            used = {v.id for s in walk(body.block) for v in _vars_of(s)}
            locals_ = [v for v in self.fn.locals if v.id in used]
            prog = build_adjoint(Function(f"{body.name or 'tile_fn'}", [], body.block, locals_, None))
            self._nested[id(body)] = prog
        return prog

    def nested_adjoint(self, body, inputs: list[str], adj_result: str, adj_inputs: list[str | None]) -> None:
        """One element's reverse pass of a map / reduce function: replay it on ``inputs``, seed the adjoint of
        its result with ``adj_result``, sweep back, and add the parameters' adjoints to ``adj_inputs``."""
        prog = self.nested_program(body)
        if prog.uses_stack:
            self.out("weft::LoopStack stack;")
        top = {v.id for v in self.fn.locals}
        params = {p.id for p in body.params}
        for p in body.params:
            self.out(f"{p.type.ctype} {self.names.raw(p)} = {{}}; {p.type.ctype} adj_{self.names.raw(p)} = {{}};")
        everything = prog.replay + prog.reverse
        for v in _all_vars(everything, [v for v in prog.locals if v.id not in top]):
            if v.id not in params and v.id not in top and v.kind is not VarKind.PARAM:
                self.out(f"{v.type.ctype} {self.names.raw(v)} = {{}}; {v.type.ctype} adj_{self.names.raw(v)} = {{}};")
        for p, src in zip(body.params, inputs):
            self.out(f"{self.names.raw(p)} = {src};")
        saved = self.names.lane, self._reverse_lanes
        self.names.lane = False
        try:
            self.block(prog.replay)
            if isinstance(body.result, Var):
                self.out(f"{self.adj(body.result)} += {adj_result};")
            self.block(prog.reverse)
        finally:
            self.names.lane, self._reverse_lanes = saved
        for p, dst in zip(body.params, adj_inputs):
            if dst is not None and T.is_differentiable_type(p.type):
                self.out(f"{dst} += adj_{self.names.raw(p)};")


def tile_loaded_only(fn: Function) -> dict[int, int]:
    """Differentiable array parameters used only as the source of ``tile_load`` (and for their shape): parameter id
    -> elements their loads read per block (the atomic adds a per-thread gradient copy would replace)."""
    counts: dict[int, int] = {}
    excluded: set[int] = set()
    candidates = {p.id for p in fn.params if isinstance(p.type, T.ArrayType) and p.type.kind is T.ArrayKind.ARRAY
                  and T.is_differentiable_type(p.type.dtype)}
    for s in walk(fn.body):
        for k, a in enumerate(getattr(s, "args", ()) or ()):
            if not isinstance(a, Var) or a.id not in candidates:
                continue
            if isinstance(s, Let) and k == 0 and s.call.op.role is Role.TILE_LOAD:
                counts[a.id] = counts.get(a.id, 0) + s.dsts[0].type.size
            elif not (isinstance(s, Let) and k == 0 and s.call.op.role is Role.SHAPE):
                excluded.add(a.id)
        if isinstance(s, Assign) and isinstance(s.src, Var) and s.src.id in candidates:
            excluded.add(s.src.id)
    return {i: n for i, n in counts.items() if i not in excluded}


def _vars_of(s) -> list:
    return [v for v in stmt_vars(s) if isinstance(v, Var)]


def _all_vars(stmts: list, locals_: list) -> list:
    out = list(locals_)
    for s in walk(stmts):
        let = s if isinstance(s, Let) else getattr(s, "let", None)
        if let is not None:
            # operands too: a value whose replay was pruned (weft.autodiff.prune) still has an adjoint slot
            out += list(let.dsts) + [a for a in let.args if isinstance(a, Var) and a.kind is not VarKind.PARAM]
        elif isinstance(s, For):
            out.append(s.var)
        elif isinstance(s, Assign):
            out.append(s.dst)
    unique: dict[int, Var] = {}
    for v in out + _popped(stmts):
        unique.setdefault(v.id, v)
    return list(unique.values())


# ---------------------------------------------------------------------------------------------- rules
def _rule(fn: str, fmt):
    """A rule calling the native ``fn`` with the arguments ``fmt`` forms from the args, adj_args, adj_out lists."""
    def rule(r, s, args, adj_args, adj_out):
        r.out(r.tile_call(fn, ", ".join([fmt(args, adj_args, adj_out), *r.owned_lanes(s)])) + ";")
    return rule


def _offsets(args, k):
    return "".join(f", {a}" for a in args[k:])


def _tile_of(r, s, args, adj_args, adj_out):
    x = s.args[0]
    if not T.is_differentiable_type(x.type):
        return
    if r.names.is_lane_array(x):
        r.out(f"weft::adj_tile_from_lanes(adj_{r.names.raw(x)}, {adj_out[0]});")
    else:
        bd = r.block_dim
        r.out(f"{{ {x.type.ctype} g_[{bd}] = {{}}; weft::adj_tile_from_lanes(g_, {adj_out[0]}); "
              f"for (int32_t k_ = 0; k_ < {bd}; ++k_) {adj_args[0]} += g_[k_]; }}")


def _update(r, s, args, adj_args, adj_out):
    """Reverse of t[i, ...] = v (and += / -=): lanes last to first read the element's adjoint into their value's
    adjoint (a set then clears it), and what remains flows to the tile operand. The result's adjoint is not read
    after this rule, so it is consumed in place."""
    (mode,) = s.call.attrs
    v = s.args[-1]
    if not T.is_differentiable_type(v.type):
        return
    idx = ", ".join(r.lane_value(a) for a in s.args[1:-1])
    r.out(f"{r.lanes_loop(reverse=True)} weft::adj_tile_update<{mode.value}>({adj_out[0]}, "
          f"{r.lane_value(v, adjoint=True)}, {idx}); }}")
    r.out(r.accum_line(s.args[0].type, adj_args[0], adj_out[0]))


def _indexed_rule(fn: str, fmt):
    """A derivative (or replay) rule of an indexed memory op: the axis is a template argument."""
    def rule(r, s, args, *rest):
        r.out(r.tile_call(f"{fn}<{s.call.attrs[-1]}>", fmt(r, s, args, *rest)) + ";")
    return rule


def _from_thread(r, s, args, adj_args, adj_out):
    """The adjoint of tile_from_thread: the sum of the tile's adjoint, to lane ``thread_idx``'s value."""
    x = s.args[0]
    if not T.is_differentiable_type(x.type):
        return
    ct = x.type.ctype
    if r.names.is_lane_array(x) and r.block_dim == 1:  # one lane: its value filled the tile (see tiles._from_thread)
        dst = f"adj_{r.names.raw(x)}[0] += g_;"
    elif r.names.is_lane_array(x):
        i = args[1]
        dst = f"if (uint32_t({i}) < {r.block_dim}u) adj_{r.names.raw(x)}[{i}] += g_;"
    else:
        dst = f"{adj_args[0]} += g_;"
    r.out(f"{{ {ct} g_ = {{}}; weft::adj_tile_fill(g_, g_, {adj_out[0]}); {dst} }}")


def _binary(name):
    def rule(r, s, args, adj_args, adj_out):
        r.out(r.tile_call(f"adj_tile_{name}", f"{args[0]}, {args[1]}, {adj_args[0]}, {adj_args[1]}, {adj_out[0]}") + ";")
    return rule


def _matmul(r, s, args, adj_args, adj_out):
    if len(args) == 2:
        r.out(r.tile_call("adj_tile_matmul", f"{args[0]}, {args[1]}, {adj_args[0]}, {adj_args[1]}, {adj_out[0]}") + ";")
    else:
        r.out(r.tile_call("adj_tile_matmul_acc", f"{', '.join(args)}, {', '.join(adj_args)}, {adj_out[0]}") + ";")


def _map(r, s, args, adj_args, adj_out):
    (body,) = s.call.attrs
    r.out(r.element_loop(s.dsts[0].type.size))
    r.out.depth += 1
    r.nested_adjoint(body, [f"{a}.data[k_]" for a in args], f"{adj_out[0]}.data[k_]",
                     [f"{g}.data[k_]" if T.is_differentiable_type(a.type) else None for a, g in zip(s.args, adj_args)])
    r.out.depth -= 1
    r.out("}")


def _reduce_axis(r, s, args, adj_args, adj_out):
    """tile_reduce along an axis: each slice's fold over its owned elements replayed and swept back, as the whole-tile
    fold below (a slice without one took the identity: no adjoint)."""
    body, axis = s.call.attrs
    t = s.args[0].type
    ct = t.dtype.ctype
    count, n, inner = axis_slices(t, axis)
    a, g = args[0], adj_args[0]
    (lanes,) = r.owned_lanes(s)
    r.out(f"{{ const weft::Lanes ln_ = {lanes};")
    r.out(f"for (int32_t o_ = 0; o_ < {count}; ++o_) {{ const int32_t b_ = (o_ / {inner}) * {n * inner} + "
          f"o_ % {inner}; {ct} accs_[{n}]; int32_t at_[{n}]; int32_t m_ = 0;")
    r.out(f"for (int32_t k_ = 0; k_ < {n}; ++k_) {{")
    r.out.depth += 1
    r.out(f"const int32_t i_ = b_ + k_ * {inner}; if (!ln_.owns(i_)) continue;")
    r.out(f"at_[m_] = i_; if (m_ == 0) {{ accs_[m_++] = {a}.data[i_]; continue; }}")
    r.nested_body(body, ["accs_[m_ - 1]", f"{a}.data[i_]"], "accs_[m_]")
    r.out("++m_;")
    r.out.depth -= 1
    r.out("}")
    r.out(f"if (m_ == 0) continue; {ct} adj_acc_ = {adj_out[0]}.data[o_];")
    r.out("for (int32_t k_ = m_ - 1; k_ >= 1; --k_) {")
    r.out.depth += 1
    r.out(f"{ct} g_acc_ = {{}};")
    r.nested_adjoint(body, ["accs_[k_ - 1]", f"{a}.data[at_[k_]]"], "adj_acc_", ["g_acc_", f"{g}.data[at_[k_]]"])
    r.out("adj_acc_ = g_acc_;")
    r.out.depth -= 1
    r.out("}")
    r.out(f"{g}.data[at_[0]] += adj_acc_; }} }}")


def _reduce(r, s, args, adj_args, adj_out):
    if len(s.call.attrs) > 1:
        _reduce_axis(r, s, args, adj_args, adj_out)
        return
    body = s.call.attrs[0]
    t = s.args[0].type
    size = t.size
    ct = t.dtype.ctype
    (lanes,) = r.owned_lanes(s)
    # an element a partial block leaves out carries the fold (accs_[k] = accs_[k - 1]) and gets no adjoint
    r.out(f"{{ const weft::Lanes ln_ = {lanes}; {ct} accs_[{size}]; accs_[0] = {args[0]}.data[0];")
    r.out(f"for (int32_t k_ = 1; k_ < {size}; ++k_) {{")
    r.out.depth += 1
    r.out("if (!ln_.owns(k_)) { accs_[k_] = accs_[k_ - 1]; continue; }")
    r.nested_body(body, ["accs_[k_ - 1]", f"{args[0]}.data[k_]"], "accs_[k_]")
    r.out.depth -= 1
    r.out("}")
    r.out(f"{ct} adj_acc_ = {adj_out[0]}.data[0];")
    r.out(f"for (int32_t k_ = {size - 1}; k_ >= 1; --k_) {{")
    r.out.depth += 1
    r.out("if (!ln_.owns(k_)) continue;")
    r.out(f"{ct} g_acc_ = {{}};")
    r.nested_adjoint(body, ["accs_[k_ - 1]", f"{args[0]}.data[k_]"], "adj_acc_", ["g_acc_", f"{adj_args[0]}.data[k_]"])
    r.out("adj_acc_ = g_acc_;")
    r.out.depth -= 1
    r.out("}")
    r.out(f"{adj_args[0]}.data[0] += adj_acc_; }}")


_RULES = (
    ("tile_load", _rule("adj_tile_load", lambda a, g, o: f"{a[0]}, {o[0]}{_offsets(a, 1)}")),
    ("tile_store", _rule("adj_tile_store", lambda a, g, o: f"{a[0]}, {g[1]}{_offsets(a, 2)}")),
    ("tile_atomic_add", _rule("adj_tile_atomic_add", lambda a, g, o: f"{a[0]}, {g[1]}{_offsets(a, 2)}")),
    ("tile_full", _rule("adj_tile_fill", lambda a, g, o: f"{a[0]}, {g[0]}, {o[0]}")),
    ("tile", _tile_of),
    ("untile", lambda r, s, a, g, o: r.out(f"weft::adj_untile({a[0]}, {r.lane_index()}, {g[0]}, {o[0]});")),
    ("tile_extract", _rule("adj_tile_extract", lambda a, g, o: f"{a[0]}, {g[0]}, {o[0]}{_offsets(a, 1)}")),
    ("extract", _rule("adj_tile_extract", lambda a, g, o: f"{a[0]}, {g[0]}, {o[0]}{_offsets(a, 1)}")),
    ("tile_view", _rule("adj_tile_view", lambda a, g, o: f"{g[0]}, {o[0]}{_offsets(a, 1)}")),
    ("tile_slice", _rule("adj_tile_slice", lambda a, g, o: f"{g[0]}, {o[0]}{_offsets(a, 1)}")),
    ("tile_slice_indexed", _rule("adj_tile_slice_indexed", lambda a, g, o: f"{a[1]}, {a[2]}, {g[0]}, {o[0]}")),
    ("tile_transpose", _rule("adj_tile_transpose", lambda a, g, o: f"{g[0]}, {o[0]}")),
    ("tile_broadcast", _rule("adj_tile_broadcast", lambda a, g, o: f"{g[0]}, {o[0]}")),
    ("tile_reshape", _rule("adj_tile_reshape", lambda a, g, o: f"{g[0]}, {o[0]}")),
    ("tile_squeeze", _rule("adj_tile_reshape", lambda a, g, o: f"{g[0]}, {o[0]}")),
    ("add", _binary("add")),
    ("sub", _binary("sub")),
    ("mul", _binary("mul")),
    ("div", _binary("div")),
    ("neg", _rule("adj_tile_neg", lambda a, g, o: f"{g[0]}, {o[0]}")),
    ("tile_update", _update),
    ("tile_from_thread", _from_thread),
    ("tile_load_indexed", _indexed_rule("adj_tile_load_indexed",
                                        lambda r, s, a, g, o: f"{a[0]}, {a[1]}, {o[0]}{_offsets(a, 2)}")),
    ("tile_store_indexed", _indexed_rule("adj_tile_store_indexed",
                                         lambda r, s, a, g, o: f"{a[0]}, {a[1]}, {g[2]}{_offsets(a, 3)}")),
    ("tile_atomic_add_indexed", _indexed_rule("adj_tile_atomic_add_indexed",
                                              lambda r, s, a, g, o: f"{a[0]}, {a[1]}, {g[2]}{_offsets(a, 3)}")),
    ("tile_map", _map),
    ("tile_reduce", _reduce),
    ("tile_sum", lambda r, s, a, g, o: r.out(r.tile_call(
        f"adj_tile_sum_axis<{s.call.attrs[0]}>" if s.call.attrs else "adj_tile_sum",
        ", ".join([g[0], o[0], *r.owned_lanes(s)])) + ";")),
    ("tile_min", _rule("adj_tile_min", lambda a, g, o: f"{a[0]}, {g[0]}, {o[0]}")),
    ("tile_max", _rule("adj_tile_max", lambda a, g, o: f"{a[0]}, {g[0]}, {o[0]}")),
    ("tile_matmul", _matmul),
    ("tile_cholesky", _rule("adj_tile_cholesky", lambda a, g, o: f"{a[0]}, {g[0]}, {o[0]}")),
    ("tile_cholesky_solve", _rule("adj_tile_cholesky_solve",
                                  lambda a, g, o: f"{a[0]}, {a[1]}, {g[0]}, {g[1]}, {o[0]}")),
    ("tile_lower_solve", _rule("adj_tile_lower_solve", lambda a, g, o: f"{a[0]}, {a[1]}, {g[0]}, {g[1]}, {o[0]}")),
    ("tile_upper_solve", _rule("adj_tile_upper_solve", lambda a, g, o: f"{a[0]}, {a[1]}, {g[0]}, {g[1]}, {o[0]}")),
    ("tile_assign", _rule("adj_tile_assign", lambda a, g, o: f"{g[0]}, {g[1]}, {o[0]}{_offsets(a, 2)}")),
    ("tile_slice_assign", _rule("adj_tile_slice_assign", lambda a, g, o: f"{g[0]}, {g[1]}, {o[0]}{_offsets(a, 2)}")),
    ("tile_diag_add", _rule("adj_tile_diag_add", lambda a, g, o: f"{g[0]}, {g[1]}, {o[0]}")),
    *((_n, _rule("adj_" + _n, lambda a, g, o: f"{a[0]}, {g[0]}, {o[0]}")) for _n in (
        "tile_scan_inclusive", "tile_scan_exclusive", "tile_scan_max_inclusive", "tile_scan_min_inclusive")),
    ("tile_fft", _rule("adj_tile_fft", lambda a, g, o: f"{g[0]}, {o[0]}")),
    ("tile_ifft", _rule("adj_tile_ifft", lambda a, g, o: f"{g[0]}, {o[0]}")),
)
for _rule_name, _rule_fn in _RULES:
    TileAdjointRenderer.adjoint_rules.add(rules.ops(_rule_name, "tile"), _rule_fn)


def _replay_store(r, s, args):
    r.out(r.tile_call("replay_tile_store", ", ".join(args)) + ";")


def _replay_atomic(r, s, args):
    r.out(r.tile_call("replay_tile_atomic_add", f"{r.names(s.dsts[0])}, {', '.join(args)}") + ";")


TileAdjointRenderer.replay_rules.add(rules.ops("tile_store_indexed", "tile"), _indexed_rule(
    "replay_tile_store_indexed", lambda r, s, a: ", ".join(a)))
TileAdjointRenderer.replay_rules.add(rules.ops("tile_atomic_add_indexed", "tile"), _indexed_rule(
    "replay_tile_atomic_add_indexed", lambda r, s, a: f"{r.names(s.dsts[0])}, {', '.join(a)}"))
TileAdjointRenderer.replay_rules.add(rules.ops("tile_store", "tile"), _replay_store)
TileAdjointRenderer.replay_rules.add(rules.ops("tile_atomic_add", "tile"), _replay_atomic)

