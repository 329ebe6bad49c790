"""C++ rendering of tile kernels: one function per block, lane runs as loops over the lanes (see ``model``).

``TileRenderer`` reuses the base renderer for every statement; it changes only what differs for blocks: the
body signature and entry point, where variables live (per lane or per block), lane loops, ``wp.tid()`` and early
returns of single lanes. The forward rules of tile ops are in ``BlockRendering.forward_rules`` (keyed by op record).
"""

from __future__ import annotations

from ..ir import types as T
from ..ir.aliases import plan_aliases
from ..ir.blocks import LaneRun, Model, analyse
from ..ir.blocks import walk as model_walk
from ..ir.nodes import Assign, Const, For, Function, If, Let, Pop, Push, Repeat, Return, Stmt, Var, VarKind, While
from ..ir.roles import Role
from ..ops.tile import TileUpdate
from . import rules
from .names import Names
from .renderer import Emitter, Renderer, RenderOptions, _defined_vars
from .rules import RuleTable

#: a block body whose locals take more than this many bytes checks, before it runs on a CPU thread, that the thread's
#: stack has room for them (CPU tiles are locals: an oversized one would overflow the stack and crash the process)
STACK_CHECK_BYTES = 256 * 1024


def value_bytes(t) -> int:
    """Bytes a local of IR type ``t`` takes (an upper estimate for types without a known size)."""
    if isinstance(t, T.TileType):
        return t.size * value_bytes(t.dtype)
    if isinstance(t, T.StructType):
        return sum(value_bytes(ft) for _, ft in t.fields)
    size = getattr(t, "size", None)
    return size if isinstance(size, int) else 8


class LaneNames(Names):
    """Names of variables as seen from lane code (``v[_l]``) or block code (``v[0]``) for per-lane storage."""

    def __init__(self, model: Model) -> None:
        super().__init__()
        self.model = model
        self.lane = False
        self.aliases = None  # forward rendering: tile values sharing another variable's storage (alias.py)

    def __call__(self, operand) -> str:
        if self.aliases is not None:
            operand = self.aliases.resolve(operand)
        base = super().__call__(operand)
        if isinstance(operand, Var) and operand.id in self.model.lane_arrays:
            return base + ("[_l]" if self.lane else "[0]")
        return base

    def raw(self, operand) -> str:
        """The storage itself (the whole per-lane array for per-lane variables)."""
        if self.aliases is not None:
            operand = self.aliases.resolve(operand)
        return super().__call__(operand)

    def is_lane_array(self, operand) -> bool:
        return isinstance(operand, Var) and operand.id in self.model.lane_arrays


def whole_written(top: list[Stmt]) -> frozenset[int]:
    """Ids of the tile variables that a statement of ``top`` (a tile body's top level, run once per block: the
    forward body, or the backward's replay) defines with an op whose forward writes every element of the result
    (``Op.writes_result``). SSA values are named by nothing before their definition, so such a tile needs no zero
    fill: the first thing that touches its storage overwrites all of it. Values defined in a loop or a branch, mutable
    locals and tiles that a backward reads without replaying them (pruned) keep theirs."""
    found = set()
    for s in top:
        if isinstance(s, Let) and s.call.op.writes_result and len(s.dsts) == 1:
            d = s.dsts[0]
            if d.kind is VarKind.SSA and isinstance(d.type, T.TileType):
                found.add(d.id)
    return frozenset(found)


class BlockRendering:
    """What a block-structured body needs, shared by the forward and the backward tile renderers (a mixin over
    :class:`Renderer`): variable storage, lane loops, block-level control flow, ``wp.tid()``."""

    block_dim: int
    model: Model
    #: forward rules of tile ops and of the ops that differ for blocks (filled at the end of this module)
    forward_rules = RuleTable("tile forward")

    def setup_blocks(self, blocks: list, locals_: list, block_dim: int) -> list:
        self.block_dim = block_dim
        self.model, plans = analyse(blocks, locals_, block_dim)
        self._whole = whole_written(blocks[0])
        self.names = LaneNames(self.model)
        self._run: LaneRun | None = None
        self._reverse_lanes = False
        return plans

    def declare(self, variables, out=None, adjoints: bool = False) -> None:
        out = out or self.out
        for v, name in self.declared_names(variables, adjoints):
            self.declare_one(v, self.decl_type(v.type), name, out)

    def declared_names(self, variables, adjoints: bool):
        """(variable, C++ name) of every local to declare: each variable once, no parameters or aliased tiles,
        with its adjoint slot after it when ``adjoints``."""
        seen: set[int] = set()
        for v in variables:
            if v.id in seen or v.kind.value == "param":
                continue
            if self.names.aliases is not None and v.id in self.names.aliases.target:
                continue
            seen.add(v.id)
            yield v, self.names.raw(v)
            if adjoints:
                yield v, "adj_" + self.names.raw(v)

    def declare_one(self, v, ct: str, name: str, out) -> None:
        lanes = self.names.is_lane_array(v)
        self.frame_bytes = getattr(self, "frame_bytes", 0) + value_bytes(v.type) * (self.block_dim if lanes else 1)
        if lanes:
            out(f"{ct} {name}[{self.block_dim}] = {{}};")
        elif v.id in getattr(self, "_whole", ()) and name == self.names.raw(v):
            out(f"{ct} {name};")  # its first write fills it (Op.writes_result)
        else:
            out(f"{ct} {name} = {{}};")

    def block_prologue(self, stmts: list) -> None:
        # the lanes that run: block_dim, fewer in a last block that the launch does not fill
        self.out(f"const int32_t nl_ = weft::block_lanes(grid, block, {self.block_dim});")
        if any(isinstance(s, Let) and s.call.op.role is Role.TID for s in walk_all(stmts)):
            self.out(f"const weft::BlockCoords bc_(grid, block, {self.block_dim});")
        if self.model.lane_returns:
            self.out(f"bool _alive[{self.block_dim}];")
            self.out(f"for (int32_t _l = 0; _l < {self.block_dim}; ++_l) _alive[_l] = _l < nl_;")

    def block_entry(self, entry: str, body: str) -> str:
        """The CPU entry of a block module: blocks of ``block_dim`` lanes over the grid (hooks: ``entry_prologue``,
        ``block_runner``)."""
        bd = self.block_dim
        checked = ""
        frame = getattr(self, "frame_bytes", 0)
        if frame > STACK_CHECK_BYTES:  # large tiles live on the thread's stack: check it has room (stack_guard.h)
            checked = ('#include "release_checks.h"\n#include "stack_guard.h"\n'
                       f"template <bool C>\nstatic void {body}_checked(const Args& args, const weft::Grid& grid, "
                       f'int64_t block) {{\n    if (weft::stack_fits({frame}, "{self.opts.kernel_name}")) '
                       f"{body}<C>(args, grid, block);\n}}\n")
            body = f"{body}_checked"
        if getattr(self, "uses_release_checks", False):  # an op reports errors in release mode too
            checked = '#include "release_checks.h"\n' + checked.replace('#include "release_checks.h"\n', "")
        prologue = self.entry_prologue()
        args = "const Args args" if prologue is None else "Args args"
        head = [f"    {args} = *static_cast<const Args*>(argbuf);",
                "    const weft::Grid grid = weft::make_grid(dims, ndim);"]
        head += prologue or []
        contig = self.contiguity_check()
        return (
            checked
            + 'extern "C" WEFT_EXPORT int32_t weft_args_size() { return int32_t(sizeof(Args)); }\n'
            f'extern "C" WEFT_EXPORT int32_t weft_block_dim() {{ return {bd}; }}\n'
            f'extern "C" WEFT_EXPORT int32_t {entry}(const void* argbuf, const int64_t* dims, int32_t ndim, '
            "int32_t nthreads) {\n"
            + "\n".join(head) + "\n"
            "#ifndef WEFT_STRIDED\n"  # the general instantiation is compiled on demand (see Renderer.render_entry)
            + (f"    if (!({contig})) return weft::kEntryNeedsStrided;\n" if contig != "true" else "")
            + f"    {self.block_runner(f'{body}<true>')}\n"
            "#else\n"
            f"    {self.block_runner(f'{body}<false>')}\n"
            "#endif\n"
            "    return weft::kEntryDone;\n"
            "}"
        )

    def block_runner(self, call: str) -> str:
        return f"weft::run_blocks(grid, {self.block_dim}, nthreads, [&](int64_t b) {{ {call}(args, grid, b); }});"

    # ------------------------------------------------------------------ block structure
    def render_plan(self, items: list) -> None:
        for item in items:
            if isinstance(item, LaneRun):
                self.render_run(item)
            elif isinstance(item, tuple):
                self.render_compound(item)
            else:
                self.stmt(item)

    def lane_statements(self, run: LaneRun, label: bool = True) -> None:
        """The statements of a lane run, rendered as one lane's code (then the run's return label, if asked)."""
        saved, self._run = self._run, run
        self.names.lane = True
        try:
            self.block(run.stmts)
        finally:
            self.names.lane = False
            self._run = saved
        if label and run.has_return:
            self.out(f"lane_end_{run.id}: ;")

    def render_run(self, run: LaneRun) -> None:
        bd = self.block_dim
        self.out(self.lanes_loop(self._reverse_lanes))
        self.out.depth += 1
        self._last_line = None
        self.lane_statements(run)
        self.out.depth -= 1
        self.out("}")
        self._last_line = None
        if run.has_return:
            self.out(f"if (!weft::any_lane(_alive, {bd})) return;")

    def lanes_loop(self, reverse: bool = False) -> str:
        """The head of a loop over the block's running lanes (``_l``), last to first when ``reverse`` (the reverse
        sweep's order, so the per-block loop stack stays last-in first-out); lanes that left early are skipped."""
        head = ("for (int32_t _l = nl_ - 1; _l >= 0; --_l) {" if reverse else
                "for (int32_t _l = 0; _l < nl_; ++_l) {")
        return head + (" if (!_alive[_l]) continue;" if self.model.lane_returns else "")

    def owned_lanes(self, s: Let) -> list[str]:
        """The block's running lanes, passed as the last argument (before a cooperative form's scratch) to the native
        functions of an op that leaves out the elements of lanes a last, partial block lacks (``Op.owner_lanes``)."""
        return [f"weft::Lanes{{nl_, {self.block_dim}}}"] if s.call.op.owner_lanes else []

    def lane_value(self, operand, adjoint: bool = False) -> str:
        """Lane ``_l``'s value of an operand read by block-level code (or its adjoint): per-lane storage is indexed,
        a value held once per block is the same in every lane."""
        if self.names.is_lane_array(operand):
            return ("adj_" if adjoint else "") + self.names.raw(operand) + "[_l]"
        return self.adj(operand) if adjoint else self.names(operand)

    def render_compound(self, item: tuple) -> None:
        s = item[0]
        n = self.names
        self.comment(getattr(s, "loc", None))
        if isinstance(s, If):
            self.out(f"if ({n(s.cond)}) {{")
            self._nested_plan(item[1])
            if item[2]:
                self.out("} else {")
                self._nested_plan(item[2])
            self.out("}")
        elif isinstance(s, For):
            i = n(s.var)
            self.out(f"for ({i} = {n(s.start)}; {self.for_condition(s)}; {i} += {n(s.step)}) {{")
            self._nested_plan(item[1])
            self.out("}")
        elif isinstance(s, While):
            self.out("while (true) {")
            self.out.depth += 1
            self.render_plan(item[1])
            self.out(f"if (!{n(s.cond)}) break;")
            self.render_plan(item[2])
            self.out.depth -= 1
            self.out("}")
        elif isinstance(s, Repeat):
            r = f"rep_{self._repeat_depth}"
            self._repeat_depth += 1
            self.out(f"for (int32_t {r} = 0; {r} < {n(s.count)}; ++{r}) {{")
            self._nested_plan(item[1])
            self.out("}")
            self._repeat_depth -= 1
        else:  # pragma: no cover
            raise TypeError(f"cannot render {type(s).__name__} at block level")

    def _nested_plan(self, items: list) -> None:
        self.out.depth += 1
        self._last_line = None
        self.render_plan(items)
        self.out.depth -= 1
        self._last_line = None

    def stmt(self, s: Stmt) -> None:
        if self.names.aliases is not None and self.names.aliases.skipped(s):
            return
        if isinstance(s, Return) and self.names.lane:
            # one lane leaves early: it takes no further part in lane code (tile ops still run for the block)
            self.out(f"{{ _alive[_l] = false; goto lane_end_{self._run.id}; }}")
            return
        if isinstance(s, Assign) and not self.names.lane and isinstance(s.dst.type, T.TileType):
            self.comment(s.loc)
            self.out(self.assign_line(s.dst.type, self.names(s.dst), self.names(s.src)))
            return
        if isinstance(s, (Push, Pop)) and not self.names.lane:
            # block level: save / restore every lane's value
            if isinstance(s, Push):
                self.out(" ".join(f"stack.push({self.names.raw(v)});" for v in s.values))
            else:
                self.out(" ".join(f"stack.pop({self.names.raw(v)});" for v in reversed(s.vars)))
            return
        super().stmt(s)

    # ------------------------------------------------------------------ ops that differ for blocks
    def op_tid(self, s: Let, args) -> None:
        outs = " ".join(f"{self.names(d)} = tc_[{k}];" for k, d in enumerate(s.dsts))
        self.out(f"{{ int32_t tc_[4]; bc_.get(_l, tc_); {outs} }}")

    def lane_index(self) -> str:
        return "_l" if self.names.lane else "0"

    # target hooks of tile rules: the native function a tile call goes to, and the loop over a tile's elements
    def tile_call(self, fn: str, args: str, lane_level: bool = False) -> str:
        """``lane_level``: the op computes per lane (``Op.lane_level``), so no target gives it a cooperative form."""
        return f"weft::{fn}({args})"

    def element_loop(self, size: int) -> str:
        return f"for (int32_t k_ = 0; k_ < {size}; ++k_) {{"

    def nested_body(self, body, inputs: list[str], result_into: str) -> None:
        """Render a ``tile_map`` / ``tile_reduce`` function body on element values (in a C++ scope)."""
        param_ids = {p.id for p in body.params}
        local_ids = {v.id for v in self.fn.locals}
        for p in body.params:
            self.out(f"{p.type.ctype} {self.names.raw(p)} = {{}};")
        for v in _defined_vars(body.block, []):
            if v.id not in param_ids and v.id not in local_ids:
                self.out(f"{v.type.ctype} {self.names.raw(v)} = {{}};")
        for p, src in zip(body.params, inputs):
            self.out(f"{self.names.raw(p)} = {src};")
        saved_lane = self.names.lane
        self.names.lane = False
        try:
            self.block(body.block)
        finally:
            self.names.lane = saved_lane
        self.out(f"{result_into} = {self.names(body.result)};")


class TileRenderer(BlockRendering, Renderer):
    """Renders a kernel that uses tiles for CPU blocks of ``block_dim`` lanes."""

    def __init__(self, fn: Function, options: RenderOptions, block_dim: int):
        super().__init__(fn, options)
        (self.plan,) = self.setup_blocks([fn.body], fn.locals, block_dim)
        self._repeat_depth = 0
        self.names.aliases = plan_aliases(fn.body)

    def render_body(self, name: str, block: list[Stmt], extra_params: str = "") -> str:
        self.out = Emitter()
        self.declare(list(_defined_vars(block, self.fn.locals)))
        self.block_prologue(block)
        self.render_plan(self.plan)
        sig = (f"template <bool C>\n{self.body_qualifiers} void {name}(const Args& args{extra_params}, "
               "const weft::Grid& grid, int64_t block)")
        return sig + " {\n" + "\n".join(self.out.lines) + "\n}"

    def render_entry(self) -> str:
        return self.block_entry("weft_fwd", "fwd_body")


def walk_all(stmts: list):
    return model_walk(stmts)


# ---------------------------------------------------------------------------------------------- op rules
def _d(r, s: Let) -> str:
    return r.names(s.dsts[0])


def _call(fn: str, with_dst: bool = True):
    def rule(r, s: Let, args) -> None:
        parts = ([_d(r, s)] if with_dst else []) + list(args) + r.owned_lanes(s)
        r.out(r.tile_call(fn, ", ".join(parts)) + ";")
    return rule


def _fill(value: str | None):
    def rule(r, s: Let, args) -> None:
        v = value if value is not None else args[0]
        r.out(r.tile_call("tile_fill", f"{_d(r, s)}, {v}") + ";")
    return rule


def _tile_of(r, s: Let, args) -> None:
    x = s.args[0]
    d = _d(r, s)
    if r.names.is_lane_array(x):
        r.out(f"weft::tile_from_lanes({d}, {r.names.raw(x)});")
    else:
        bd = r.block_dim
        r.out(f"{{ {x.type.ctype} lanes_[{bd}]; for (int32_t k_ = 0; k_ < {bd}; ++k_) lanes_[k_] = {args[0]}; "
              f"weft::tile_from_lanes({d}, lanes_); }}")


def _untile(r, s: Let, args) -> None:
    r.out(f"{_d(r, s)} = weft::untile({args[0]}, {r.lane_index()});")


def tile_index_checks(r, s: Let, idx: list, from_end: bool = True) -> str:
    """Debug mode: the C++ condition that every run-time index of a tile element access lies inside the tile (each
    failing one reports an error naming the dimension, index and valid range); "" when there is nothing to check."""
    if not r.opts.debug:
        return ""
    shape = s.args[0].type.shape
    where = f"line {s.loc.line}" if getattr(s, "loc", None) is not None else ""
    conds = []
    for d, (v, name, n) in enumerate(zip(s.args[1:], idx, shape)):
        lo = -n if from_end else 0  # subscripts count negative indices from the end; Warp's tile_extract does not
        if not (isinstance(v, Const) and lo <= v.value < n):
            conds.append(f'weft::check_tile_index({name}, {lo}, {n}, {d}, "{r.opts.kernel_name}", "{where}")')
    return " && ".join(conds)


def _extract(r, s: Let, args, from_end: bool = True) -> None:
    stmt = f"{_d(r, s)} = {r.tile_call('tile_extract', ', '.join(args), s.call.op.lane_level)};"
    ok = tile_index_checks(r, s, args[1:], from_end)
    r.out(f"if ({ok}) {{ {stmt} }} else {{ {_d(r, s)} = {{}}; }}" if ok else stmt)


def _extract_builtin(r, s: Let, args) -> None:
    """wp.tile_extract(t, i, ...): indices must lie in [0, n) (only the subscript form t[i] counts from the end)."""
    _extract(r, s, args, from_end=False)


def _update(r, s: Let, args) -> None:
    """t[i, ...] = v (and the in-place forms): the tile (copied unless it shares the operand's storage) updated by
    every running lane in order, each with its own indices and value."""
    (mode,) = s.call.attrs
    d = _d(r, s)
    if d != args[0]:
        r.out(r.assign_line(s.dsts[0].type, d, args[0]))
    idx = [r.lane_value(a) for a in s.args[1:-1]]
    ok = tile_index_checks(r, s, idx)
    if mode is TileUpdate.MASKED and ok:  # a lane without a value passes -1 as its first index: not an error
        ok = f"({idx[0]} < 0 || ({ok}))"
    update = f"weft::tile_update<{mode.value}>({d}, {r.lane_value(s.args[-1])}, {', '.join(idx)});"
    r.out(f"{r.lanes_loop()} {f'if ({ok}) ' if ok else ''}{update} }}")


def _sort(r, s: Let, args) -> None:
    keys, values = (r.names(d) for d in s.dsts)
    r.out(r.tile_call("tile_sort", f"{keys}, {values}, {args[0]}, {args[1]}") + ";")


def _random(fn: str):
    def rule(r, s: Let, args) -> None:
        r.out(f"weft::{fn}<{r.block_dim}>({_d(r, s)}, {', '.join(args)});")
    return rule


def _indexed(fn: str, with_dst: bool = True):
    """The indexed memory ops: the gather / scatter axis is a template argument."""
    def rule(r, s: Let, args) -> None:
        axis = s.call.attrs[-1]
        parts = ([_d(r, s)] if with_dst else []) + list(args)
        r.out(r.tile_call(f"{fn}<{axis}>", ", ".join(parts)) + ";")
    return rule


def _from_thread(r, s: Let, args) -> None:
    """tile_from_thread: the tile filled with lane ``thread_idx``'s value (an index outside the block reads zero). A
    one-lane block (the CPU without ``enable_cpu_blocks``) takes its lane's value whatever the index, as Warp's CPU."""
    x = s.args[0]
    if r.names.is_lane_array(x) and r.block_dim == 1:
        value = f"{r.names.raw(x)}[0]"
    elif r.names.is_lane_array(x):
        i, bd = args[1], r.block_dim
        value = f"(uint32_t({i}) < {bd}u ? {r.names.raw(x)}[{i}] : {x.type.ctype}{{}})"
    else:
        value = args[0]
    r.out(f"weft::tile_fill({_d(r, s)}, {value});")


def _in_place(fn: str):
    def rule(r, s: Let, args) -> None:
        d = _d(r, s)
        copy = f"{d} = {args[0]}; " if d != args[0] else ""
        r.out(f"{copy}{r.tile_call(fn, d)};")
    return rule


def _print(r, s: Let, args) -> None:
    r.out(r.tile_call("tile_print", f'{args[0]}, "{s.call.attrs[0]}"') + ";")


def _matmul(r, s: Let, args) -> None:
    if len(args) == 2:
        r.out(r.tile_call("tile_matmul", f"{_d(r, s)}, {args[0]}, {args[1]}") + ";")
    else:
        r.out(r.tile_call("tile_matmul_acc", f"{_d(r, s)}, {', '.join(args)}") + ";")


def _map(r, s: Let, args) -> None:
    (body,) = s.call.attrs
    d = _d(r, s)
    r.out(r.element_loop(s.dsts[0].type.size))
    r.out.depth += 1
    r.nested_body(body, [f"{a}.data[k_]" for a in args], f"{d}.data[k_]")
    r.out.depth -= 1
    r.out("}")


def axis_slices(t: T.TileType, axis: int) -> tuple[int, int, int]:
    """(slices, slice length, stride) of a reduction of ``t`` along ``axis``; slice o starts at
    (o / stride) * (length * stride) + o % stride."""
    n = t.shape[axis]
    inner = 1
    for d in t.shape[axis + 1:]:
        inner *= d
    return t.size // n, n, inner


def reduce_identity(r, s: Let) -> str:
    """The C++ value of an axis slice of ``tile_reduce`` that has no owned element (a last, partial block): the
    operator's identity, or an error the launch raises."""
    body = s.call.attrs[0]
    ct = s.args[0].type.dtype.ctype
    return f'weft::empty_reduction<{ct}>({body.identity.value}, "{r.opts.kernel_name}")'


def _reduce(r, s: Let, args) -> None:
    """tile_reduce(f, t[, axis]): f folded over the elements in order, leaving out those of lanes a last, partial
    block lacks (element 0 always has its lane; a slice along an axis may have none: see ``reduce_identity``)."""
    body = s.call.attrs[0]
    d = _d(r, s)
    size = s.args[0].type.size
    t = s.args[0].type.dtype.ctype
    (lanes,) = r.owned_lanes(s)
    if len(s.call.attrs) > 1:  # along an axis: one fold per slice
        if not body.identity.value:  # an empty slice may report an error: the launch reads the error state
            r.uses_release_checks = True
        count, n, inner = axis_slices(s.args[0].type, s.call.attrs[1])
        r.out(f"{{ const weft::Lanes ln_ = {lanes};")
        r.out(f"for (int32_t o_ = 0; o_ < {count}; ++o_) {{ const int32_t b_ = (o_ / {inner}) * {n * inner} + "
              f"o_ % {inner}; {t} acc_ = {{}}; bool got_ = false;")
        r.out(f"for (int32_t k_ = 0; k_ < {n}; ++k_) {{")
        r.out.depth += 1
        r.out(f"const int32_t i_ = b_ + k_ * {inner}; if (!ln_.owns(i_)) continue;")
        r.out(f"if (!got_) {{ acc_ = {args[0]}.data[i_]; got_ = true; continue; }}")
        r.nested_body(body, ["acc_", f"{args[0]}.data[i_]"], "acc_")
        r.out.depth -= 1
        r.out(f"}} {d}.data[o_] = got_ ? acc_ : {reduce_identity(r, s)}; }} }}")
        return
    r.out(f"{{ const weft::Lanes ln_ = {lanes}; {t} acc_ = {args[0]}.data[0];")
    r.out(f"for (int32_t k_ = 1; k_ < {size}; ++k_) {{")
    r.out.depth += 1
    r.out("if (!ln_.owns(k_)) continue;")
    r.nested_body(body, ["acc_", f"{args[0]}.data[k_]"], "acc_")
    r.out.depth -= 1
    r.out(f"}} {d}.data[0] = acc_; }}")


def _sum(r, s: Let, args) -> None:
    fn = f"tile_sum_axis<{s.call.attrs[0]}>" if s.call.attrs else "tile_sum"
    r.out(r.tile_call(fn, ", ".join([_d(r, s), args[0], *r.owned_lanes(s)])) + ";")


def _block_dim(r, s: Let, args) -> None:
    r.out(f"{_d(r, s)} = {getattr(r, 'block_dim', 1)};")


def _tile_query_next(r, s: Let, args) -> None:
    """Thread-block geometry query: lane 0's query hands out one item per tile element; every lane's copy of the
    query is then the advanced one (they stay identical, as on a GPU)."""
    d, q = _d(r, s), s.dsts[1]
    r.out(f"{r.names(q)} = {args[0]};")
    r.out(f"for (int32_t k_ = 0; k_ < {s.dsts[0].type.size}; ++k_) {d}.data[k_] = weft::tile_query_take({r.names(q)});")
    if r.names.is_lane_array(q):
        raw = r.names.raw(q)
        r.out(f"for (int32_t k_ = 1; k_ < {r.block_dim}; ++k_) {raw}[k_] = {raw}[0];")


_FORWARD = (
    ("block_dim", _block_dim),
    ("tile_load", _call("tile_load")),
    ("tile_store", _call("tile_store", with_dst=False)),
    ("tile_atomic_add", _call("tile_atomic_add")),
    ("tile_zeros", lambda r, s, args: r.out(r.tile_call("tile_zero", _d(r, s)) + ";")),
    ("tile_ones", _fill("1")),
    ("tile_full", _fill(None)),
    ("tile_arange", _call("tile_arange")),
    ("tile", _tile_of),
    ("untile", _untile),
    ("tile_extract", _extract_builtin),
    ("extract", _extract),
    ("tile_view", _call("tile_view")),
    ("tile_slice", _call("tile_slice")),
    ("tile_slice_indexed", _call("tile_slice_indexed")),
    ("tile_transpose", _call("tile_transpose")),
    ("tile_broadcast", _call("tile_broadcast")),
    ("tile_reshape", _call("tile_reshape")),
    ("tile_squeeze", _call("tile_reshape")),
    ("add", _call("tile_add")),
    ("sub", _call("tile_sub")),
    ("mul", _call("tile_mul")),
    ("div", _call("tile_div")),
    ("neg", _call("tile_neg")),
    ("bit_and", _call("tile_bit_and")),
    ("bit_or", _call("tile_bit_or")),
    ("bit_xor", _call("tile_bit_xor")),
    ("tile_update", _update),
    ("tile_load_indexed", _indexed("tile_load_indexed")),
    ("tile_store_indexed", _indexed("tile_store_indexed", with_dst=False)),
    ("tile_atomic_add_indexed", _indexed("tile_atomic_add_indexed")),
    ("tile_randi", _random("tile_randi")),
    ("tile_randf", _random("tile_randf")),
    ("tile_from_thread", _from_thread),
    ("tile_map", _map),
    ("tile_reduce", _reduce),
    ("tile_sum", _sum),
    ("tile_min", _call("tile_min")),
    ("tile_max", _call("tile_max")),
    ("tile_argmin", _call("tile_argmin")),
    ("tile_argmax", _call("tile_argmax")),
    ("tile_matmul", _matmul),
    ("tile_cholesky", _call("tile_cholesky")),
    ("tile_cholesky_solve", _call("tile_cholesky_solve")),
    ("tile_lower_solve", _call("tile_lower_solve")),
    ("tile_upper_solve", _call("tile_upper_solve")),
    ("tile_diag_add", _call("tile_diag_add")),
    ("tile_scan_inclusive", _call("tile_scan_inclusive")),
    ("tile_scan_exclusive", _call("tile_scan_exclusive")),
    ("tile_scan_max_inclusive", _call("tile_scan_max_inclusive")),
    ("tile_scan_min_inclusive", _call("tile_scan_min_inclusive")),
    ("tile_sort", _sort),
    ("tile_print", _print),
    ("tile_assign", _call("tile_assign")),
    ("tile_slice_assign", _call("tile_slice_assign")),
    ("tile_fft", _in_place("tile_fft")),
    ("tile_ifft", _in_place("tile_ifft")),
)
for _rule_name, _rule_fn in _FORWARD:
    BlockRendering.forward_rules.add(rules.ops(_rule_name, "tile"), _rule_fn)
BlockRendering.forward_rules.add(rules.ops("tid"), BlockRendering.op_tid)
for _rule_name in ("tile_bvh_query_next", "bvh_query_next_tiled", "tile_mesh_query_aabb_next",
                   "mesh_query_aabb_next_tiled"):
    BlockRendering.forward_rules.add(rules.ops(_rule_name, "tile"), _tile_query_next)


__all__ = ["TileRenderer"]
