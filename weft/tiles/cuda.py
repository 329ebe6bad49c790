"""Tile kernels on CUDA: cooperative blocks (overrides of the CPU block renderer, see ``render`` and ``model``).

One CUDA block of ``block_dim`` threads runs one weft block; thread ``threadIdx.x`` is the lane. What changes from
the CPU model:

* per-lane variables are ordinary thread-local variables (no ``v[block_dim]`` arrays), and a lane run is straight
  code executed by every thread (no loop over lanes), followed by ``__syncthreads()``;
* tiles live in the module's dynamic shared memory, one 16-byte aligned slot per tile variable, zeroed on entry;
  after them a scratch area for reductions and FFTs (its size is printed in the module, see :func:`shared_bytes`);
* every tile operation calls its cooperative version in ``weft/native/tile_cuda.h`` (``weft::cta::``), which all
  threads of the block call and which ends with a barrier; whole-tile copies, accumulations and resets that the
  generic renderers emit at block level become ``weft::cta::copy / accum / zero``;
* early returns: a thread-local ``_alive`` flag; the block leaves when no lane is alive (``__syncthreads_or``).

The CPU rules render each op; the CUDA rules reuse them and retarget the emitted call to ``weft::cta``, adding the
scratch pointer where the op needs one, so argument order is defined once.
"""

from __future__ import annotations

import re

from ..backend import rules
from ..backend.names import Names
from ..backend.rules import RuleTable
from ..ir import types as T
from ..ir.nodes import If, Pop, Return, While
from . import adjoint as tile_adjoint
from . import render as tile_render
from .adjoint import TileAdjointRenderer
from .render import BlockRendering, LaneNames, walk_all

#: Prefix of the module line that states the dynamic shared memory one block needs (read by the launcher).
SHARED_MARKER = "// weft: dynamic shared memory bytes = "

_CTA_CALL = re.compile(r"weft::((?:adj_|replay_)?tile_\w+)\(")
#: native helpers that run per lane (their calls are not retargeted to weft::cta)
_LANE_LEVEL_NATIVE = {"tile_extract", "tile_flat_index"}
_ASSIGN = re.compile(r"^(\s*)([A-Za-z_]\w*) (=|\+=) (.+);$")


def shared_bytes(source: str) -> int:
    """The dynamic shared memory a rendered CUDA tile module needs per block (0 for other modules)."""
    start = source.find(SHARED_MARKER)
    if start < 0:
        return 0
    end = source.index("\n", start)
    return int(source[start + len(SHARED_MARKER):end])


def _align(n: int, a: int = 16) -> int:
    return (n + a - 1) // a * a


def _type_bytes(t: T.Type) -> int:
    try:
        return int(t.size) if not isinstance(t, T.TileType) else int(t.dtype.size) * t.size
    except (AttributeError, TypeError):
        return 16


def fft_scratch(length: int, rows: int) -> int:
    """Complex elements ``fft::device_scratch`` needs (weft/native/fft_device.h)."""
    n, best, p = length, 1, 2
    while p * p <= n:
        while n % p == 0:
            best, n = p, n // p
        p += 1
    largest = max(best, n) if n > 1 else best
    if largest > 31:
        m = 1
        while m < 2 * length - 1:
            m *= 2
        return (2 * rows + 1) * m
    return rows * length


class CudaLaneNames(LaneNames):
    """Per-lane variables are thread-local on the GPU: the same name in lane code and block code."""

    def __call__(self, operand) -> str:
        if self.aliases is not None:
            operand = self.aliases.resolve(operand)
        return Names.__call__(self, operand)


class CudaBlockRendering:
    """The cooperative block model, over :class:`~weft.tiles.render.BlockRendering` (a mixin placed before it)."""

    def setup_blocks(self, blocks: list, locals_: list, block_dim: int) -> list:
        plans = super().setup_blocks(blocks, locals_, block_dim)
        self.names = CudaLaneNames(self.model)
        self._smem = 0  # bytes of tile slots so far
        self._scratch = 0  # bytes of scratch the ops need
        self._tile_names: set[str] = set()
        self._max_value = 8  # largest scalar / vector / matrix value a reduction may combine
        self._all_tile_names = None
        self._element_fn = 0  # inside a tile_map / tile_reduce function body (per-element code, no barriers)
        return plans

    def nested_body(self, *args, **kwargs) -> None:
        self._element_fn += 1
        try:
            super().nested_body(*args, **kwargs)
        finally:
            self._element_fn -= 1

    def nested_adjoint(self, *args, **kwargs) -> None:
        self._element_fn += 1
        try:
            super().nested_adjoint(*args, **kwargs)
        finally:
            self._element_fn -= 1

    # ------------------------------------------------------------------ storage
    def declare(self, variables, out=None, adjoints: bool = False) -> None:
        out = out or self.out
        self._zeros = []
        super().declare(variables, out, adjoints)
        for z in self._zeros:
            out(z)

    def declare_one(self, v, ct: str, name: str, out) -> None:
        if isinstance(v.type, T.TileType):  # a slot in the block's shared memory, zeroed by the whole block
            out(f"{ct}& {name} = *reinterpret_cast<{ct}*>(weft_smem + {self._smem});")
            self._smem += _align(_type_bytes(v.type))
            self._tile_names.add(name)
            self._zeros.append(f"weft::cta::zero({name});")
        else:
            self._max_value = max(self._max_value, _type_bytes(v.type))
            out(f"{ct} {name} = {{}};")

    def need_scratch(self, nbytes: int) -> None:
        self._scratch = max(self._scratch, nbytes)

    def reduction_scratch(self) -> None:
        self.need_scratch(self.block_dim * max(self._max_value, 8))

    def shared_total(self) -> int:
        return _align(self._smem) + _align(self._scratch)

    def shared_preamble(self) -> str:
        return (f"{SHARED_MARKER}{self.shared_total()}\n"
                "extern __shared__ __align__(16) unsigned char weft_smem[];\n"
                f"constexpr int weft_scratch_offset = {_align(self._smem)};")

    def block_prologue(self, stmts: list) -> None:
        self.out("const int32_t _l = int32_t(threadIdx.x);")
        self.out("unsigned char* const weft_scratch_ = weft_smem + weft_scratch_offset;")
        if any(s.__class__.__name__ == "Let" and s.call.op.name == "tid" for s in walk_all(stmts)):
            self.out(f"const weft::BlockCoords bc_(grid, block, {self.block_dim});")
        if self.model.lane_returns:
            self.out("bool _alive = true;")

    # ------------------------------------------------------------------ structure
    def render_run(self, run) -> None:
        self.out("{")
        self.out.depth += 1
        self._last_line = None
        if self.model.lane_returns:
            self.out("if (_alive) {")
            self.out.depth += 1
        self.lane_statements(run, label=False)  # the return label goes after the _alive block
        if self.model.lane_returns:
            self.out.depth -= 1
            self.out("}")
        if run.has_return:
            self.out(f"lane_end_{run.id}: ;")
        self.out.depth -= 1
        self.out("}")
        self._last_line = None
        if self.model.lane_returns:
            self.out("if (!__syncthreads_or(_alive)) return;")
        else:
            self.out("__syncthreads();")

    def stmt(self, s) -> None:
        if isinstance(s, Return) and self.names.lane:
            self.out(f"{{ _alive = false; goto lane_end_{self._run.id}; }}")
            return
        if self.names.lane or self._element_fn:
            super().stmt(s)
            return
        mark = len(self.out.lines)
        super().stmt(s)
        self.cooperative_lines(mark)
        if isinstance(s, Pop):
            self.out("__syncthreads();")

    def cooperative_lines(self, mark: int) -> None:
        """Whole-tile assignments emitted at block level by the generic renderers, made cooperative."""
        lines = self.out.lines
        names = self.tile_names()
        for k in range(mark, len(lines)):
            m = _ASSIGN.match(lines[k])
            if m is None or m.group(2) not in names:
                continue
            indent, dst, op, src = m.groups()
            if op == "=" and src == "{}":
                lines[k] = f"{indent}weft::cta::zero({dst});"
            elif op == "=":
                lines[k] = f"{indent}weft::cta::copy({dst}, {src});"
            else:
                lines[k] = f"{indent}weft::cta::accum({dst}, {src});"

    def tile_names(self) -> set[str]:
        """Names of every tile variable and its adjoint (known before the declarations are rendered)."""
        if self._all_tile_names is None:
            stmts = list(walk_all(self.fn.body)) if not hasattr(self, "prog") else []
            if hasattr(self, "prog"):
                stmts = self.prog.replay + self.prog.reverse
            found = set()
            for v in tile_adjoint._all_vars(stmts, list(self.fn.locals)):
                if isinstance(v.type, T.TileType):
                    found |= {self.names.raw(v), "adj_" + self.names.raw(v)}
            self._all_tile_names = found
        return self._all_tile_names | self._tile_names

    def render_compound(self, item: tuple) -> None:
        """Block-level branches follow lane 0's condition (as on the CPU), broadcast so every thread agrees."""
        s = item[0]
        if isinstance(s, If):
            self.comment(getattr(s, "loc", None))
            self.out(f"if (weft::cta::from_lane0({self.names(s.cond)})) {{")
            self._nested_plan(item[1])
            if item[2]:
                self.out("} else {")
                self._nested_plan(item[2])
            self.out("}")
            return
        if isinstance(s, While):
            self.comment(getattr(s, "loc", None))
            self.out("while (true) {")
            self.out.depth += 1
            self.render_plan(item[1])
            self.out(f"if (!weft::cta::from_lane0({self.names(s.cond)})) break;")
            self.render_plan(item[2])
            self.out.depth -= 1
            self.out("}")
            return
        super().render_compound(item)

    def retarget(self, mark: int, scratch: bool) -> None:
        """Point the tile calls emitted since ``mark`` at their cooperative versions (``weft::cta``)."""
        lines = self.out.lines
        for k in range(mark, len(lines)):
            line = _CTA_CALL.sub(lambda m: m.group(0) if m.group(1) in _LANE_LEVEL_NATIVE else f"weft::cta::{m.group(1)}(",
                                 lines[k])
            if scratch and line.rstrip().endswith(");"):
                line = line.rstrip()[:-2] + ", weft_scratch_);"
            lines[k] = line

    def lane_index(self) -> str:
        return "_l"

    def entry_source(self, entry: str, body: str) -> str:
        bd = self.block_dim
        call = "(args, grid, b);"
        return (
            f'extern "C" __global__ void __launch_bounds__({bd}) {entry}(const Args args, const weft::Grid grid) {{\n'
            f"    const bool contig = {self.contiguity_check()};\n"
            f"    const weft::int64 nblocks = (grid_total(grid) + {bd} - 1) / {bd};\n"
            "    if (blockDim.x != " + str(bd) + ") return;  // launched with block_dim threads per block\n"
            "    for (weft::int64 b = blockIdx.x; b < nblocks; b += gridDim.x) {\n"
            f"        if (contig) {body}<true>{call}\n"
            f"        else {body}<false>{call}\n"
            "        __syncthreads();  // the next block reuses the shared memory\n"
            "    }\n"
            "}"
        )

    # ------------------------------------------------------------------ op rules (filled at the end of this module)
    forward_rules = RuleTable("cooperative tile forward")
    adjoint_rules = RuleTable("cooperative tile adjoint")
    replay_rules = RuleTable("cooperative tile replay")


# ---------------------------------------------------------------------------------------------- forward rules
def _retargeted(cpu_rule):
    def rule(r, s, args) -> None:
        mark = len(r.out.lines)
        cpu_rule(r, s, args)
        if s.call.op.scratch:
            r.reduction_scratch()
        r.retarget(mark, s.call.op.scratch)
    return rule


def _replay_retargeted(cpu_rule):
    def rule(r, s, args) -> None:
        mark = len(r.out.lines)
        cpu_rule(r, s, args)
        r.retarget(mark, False)
    return rule


def _tile_of(r, s, args) -> None:
    r.out(f"weft::cta::tile_from_lane({r.names(s.dsts[0])}, {args[0]});")


def _fft(fn: str):
    def rule(r, s, args) -> None:
        d = r.names(s.dsts[0])
        t = s.dsts[0].type
        r.need_scratch(fft_scratch(t.shape[-1], t.size // t.shape[-1]) * t.dtype.size)
        if d != args[0]:
            r.out(f"weft::cta::copy({d}, {args[0]});")
        r.out(f"weft::cta::{fn}({d}, weft_scratch_);")
    return rule


def _map(r, s, args) -> None:
    mark = len(r.out.lines)
    tile_render._map(r, s, args)
    _stride_loop(r, mark)


def _stride_loop(r, mark: int) -> None:
    """The element loop a CPU rule emitted at ``mark``, split over the lanes, then a barrier."""
    line = r.out.lines[mark]
    r.out.lines[mark] = re.sub(r"k_ = 0; k_ < (\w+); \+\+k_", rf"k_ = _l; k_ < \1; k_ += {r.block_dim}", line, count=1)
    r.out("__syncthreads();")


def _lane0(cpu_rule):
    """A rule run by lane 0 alone (order-dependent work such as tile_reduce), then a barrier."""
    def rule(r, s, *rest) -> None:
        r.out("if (_l == 0) {")
        r.out.depth += 1
        cpu_rule(r, s, *rest)
        r.out.depth -= 1
        r.out("}")
        r.out("__syncthreads();")
    return rule


for _op in BlockRendering.forward_rules.ops():
    if _op.domain == "tile" and not _op.lane_level:
        CudaBlockRendering.forward_rules.add(_op, _retargeted(BlockRendering.forward_rules.get(_op)))
for _rule_name, _rule_fn in (("tile", _tile_of), ("tile_fft", _fft("tile_fft")), ("tile_ifft", _fft("tile_ifft")),
                             ("tile_map", _map), ("tile_reduce", _lane0(tile_render._reduce))):
    CudaBlockRendering.forward_rules.add(rules.ops(_rule_name, "tile"), _rule_fn)


# ---------------------------------------------------------------------------------------------- adjoint rules
def _adj_retargeted(cpu_rule, scratch_bytes=None):
    """The CPU derivative rule retargeted to weft::cta, with the scratch pointer where the record says the cooperative
    form takes one; ``scratch_bytes(let)`` sizes the scratch (default: a reduction's)."""
    def rule(r, s, args, adj_args, adj_out) -> None:
        mark = len(r.out.lines)
        cpu_rule(r, s, args, adj_args, adj_out)
        scratch = s.call.op.adjoint_scratch
        if scratch and scratch_bytes is not None:
            r.need_scratch(scratch_bytes(s))
        elif scratch:
            r.reduction_scratch()
        r.retarget(mark, scratch)
    return rule


def _adj_matmul(r, s, args, adj_args, adj_out) -> None:
    """tile_matmul's adjoint takes the scratch pointer only in the accumulating form (a, b, out, alpha, beta)."""
    mark = len(r.out.lines)
    TileAdjointRenderer.adjoint_rules.get(s.call.op)(r, s, args, adj_args, adj_out)
    scratch = len(args) > 2
    if scratch:
        r.reduction_scratch()
    r.retarget(mark, scratch)


def _fft_adjoint_scratch(s) -> int:
    t = s.args[0].type
    return (fft_scratch(t.shape[-1], t.size // t.shape[-1]) + t.size) * t.dtype.size


def _adj_tile_of(r, s, args, adj_args, adj_out) -> None:
    x = s.args[0]
    if not T.is_differentiable_type(x.type):
        return
    if r.names.is_lane_array(x):
        r.out(f"weft::cta::adj_tile_from_lane({adj_args[0]}, {adj_out[0]});")
    else:
        r.reduction_scratch()
        r.out(f"weft::cta::adj_tile_from_uniform({adj_args[0]}, {adj_out[0]}, weft_scratch_);")


def _adj_extract(r, s, args, adj_args, adj_out) -> None:
    # lane code: several lanes may read one element
    r.out(f"weft::cta::adj_tile_extract({args[0]}, {adj_args[0]}, {adj_out[0]}{tile_adjoint._offsets(args, 1)});")


def _adj_map(r, s, args, adj_args, adj_out) -> None:
    mark = len(r.out.lines)
    tile_adjoint._map(r, s, args, adj_args, adj_out)
    _stride_loop(r, mark)


for _op in TileAdjointRenderer.adjoint_rules.ops():
    if _op.domain == "tile" and not _op.lane_level:
        CudaBlockRendering.adjoint_rules.add(_op, _adj_retargeted(TileAdjointRenderer.adjoint_rules.get(_op)))
for _rule_name, _rule_fn in (
    ("tile", _adj_tile_of), ("tile_extract", _adj_extract), ("extract", _adj_extract), ("tile_map", _adj_map),
    ("tile_reduce", _lane0(tile_adjoint._reduce)), ("tile_matmul", _adj_matmul),
    ("tile_fft", _adj_retargeted(TileAdjointRenderer.adjoint_rules.get(rules.ops("tile_fft", "tile")[0]),
                                 _fft_adjoint_scratch)),
    ("tile_ifft", _adj_retargeted(TileAdjointRenderer.adjoint_rules.get(rules.ops("tile_ifft", "tile")[0]),
                                  _fft_adjoint_scratch)),
):
    CudaBlockRendering.adjoint_rules.add(rules.ops(_rule_name, "tile"), _rule_fn)
for _op in TileAdjointRenderer.replay_rules.ops():
    CudaBlockRendering.replay_rules.add(_op, _replay_retargeted(TileAdjointRenderer.replay_rules.get(_op)))
