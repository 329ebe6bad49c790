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

The CPU rules render each op; the CUDA rules reuse them through target hooks (``tile_call`` sends the call to
``weft::cta`` with the scratch pointer where the op record says the cooperative form takes one, ``element_loop``
splits a tile's elements over the lanes, ``assign_line`` / ``accum_line`` / ``zero_line`` make whole-tile statements
cooperative), so argument order is defined once and no emitted text is edited.
"""

from __future__ import annotations

from ..ir import types as T
from ..ir.nodes import If, Pop, Return, While
from ..ir.roles import Role
from ..ops.tile import TileUpdate
from . import cuda as cuda_backend
from . import rules, tile_adjoint
from . import tiles as tile_render
from .names import Names
from .rules import RuleTable
from .tile_adjoint import TileAdjointRenderer
from .tiles import BlockRendering, LaneNames, walk_all


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
    """The cooperative block model, over :class:`~weft.backend.tiles.BlockRendering` (a mixin placed before it)."""

    def setup_blocks(self, blocks: list, locals_: list, block_dim: int) -> list:
        plans = super().setup_blocks(blocks, locals_, block_dim)
        self.names = CudaLaneNames(self.model)
        self._smem = 0  # bytes of tile slots so far
        self._scratch = 0  # bytes of scratch the ops need
        self._max_value = 8  # largest scalar / vector / matrix value a reduction may combine
        self._element_fn = 0  # inside a tile_map / tile_reduce function body (per-element code, no barriers)
        self._pass_scratch = False  # the tile calls of the rule being rendered take the scratch pointer
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
        # the comment is for readers of the source; the launcher takes the number from pipeline.Program.shared_bytes
        return (f"// weft: dynamic shared memory bytes = {self.shared_total()}\n"
                "extern __shared__ __align__(16) unsigned char weft_smem[];\n"
                f"constexpr int weft_scratch_offset = {_align(self._smem)};")

    def block_prologue(self, stmts: list) -> None:
        self.out("const int32_t _l = int32_t(threadIdx.x);")
        self.out(f"const int32_t nl_ = weft::block_lanes(grid, block, {self.block_dim});")
        self.out("unsigned char* const weft_scratch_ = weft_smem + weft_scratch_offset;")
        if any(s.__class__.__name__ == "Let" and s.call.op.role is Role.TID for s in walk_all(stmts)):
            self.out(f"const weft::BlockCoords bc_(grid, block, {self.block_dim});")
        if self.model.lane_returns:
            self.out("bool _alive = _l < nl_;")

    def lane_active(self) -> str:
        """Whether this thread's lane runs lane code (a lane past the launch size, or one that returned, does not)."""
        return "_alive" if self.model.lane_returns else "_l < nl_"

    def lane_value(self, operand, adjoint: bool = False) -> str:
        """Per-lane values are this thread's own variables."""
        return self.adj(operand) if adjoint else self.names(operand)

    # ------------------------------------------------------------------ structure
    def render_run(self, run) -> None:
        self.out("{")
        self.out.depth += 1
        self._last_line = None
        self.out(f"if ({self.lane_active()}) {{")
        self.out.depth += 1
        self.lane_statements(run, label=False)  # the return label goes after the block of running lanes
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
        super().stmt(s)
        if isinstance(s, Pop) and not self.names.lane and not self._element_fn:
            self.out("__syncthreads();")

    # whole-tile copies, accumulations and resets at block level are cooperative (every thread of the block)
    def _block_tile(self, t: T.Type) -> bool:
        return isinstance(t, T.TileType) and not self.names.lane and not self._element_fn

    def assign_line(self, t: T.Type, dst: str, src: str) -> str:
        return f"weft::cta::copy({dst}, {src});" if self._block_tile(t) else super().assign_line(t, dst, src)

    def accum_line(self, t: T.Type, dst: str, src: str) -> str:
        return f"weft::cta::accum({dst}, {src});" if self._block_tile(t) else super().accum_line(t, dst, src)

    def zero_line(self, t: T.Type, dst: str) -> str:
        return f"weft::cta::zero({dst});" if self._block_tile(t) else super().zero_line(t, dst)

    # tile calls go to the cooperative functions (weft::cta, weft/native/tile_cuda.h), with the block's scratch memory
    # where the op's record says its cooperative form takes it (set by the rule wrappers below)
    def tile_call(self, fn: str, args: str, lane_level: bool = False) -> str:
        if lane_level:  # per-lane ops keep the plain call (Op.lane_level), never retargeted to weft::cta
            return super().tile_call(fn, args)
        scratch = ", weft_scratch_" if self._pass_scratch else ""
        return f"weft::cta::{fn}({args}{scratch})"

    def element_loop(self, size: int) -> str:
        """A tile's elements split over the lanes (the rule adds the barrier after the loop)."""
        return f"for (int32_t k_ = _l; k_ < {size}; k_ += {self.block_dim}) {{"

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


# ---------------------------------------------------------------------------------------------- forward rules
def _with_scratch(r, scratch: bool, render) -> None:
    """Render with the scratch pointer passed to the tile calls (``tile_call``) when ``scratch``."""
    r._pass_scratch = scratch
    try:
        render()
    finally:
        r._pass_scratch = False


def _retargeted(cpu_rule):
    """The CPU rule, its tile calls cooperative (``tile_call``), with scratch memory as the op record says."""
    def rule(r, s, args) -> None:
        if s.call.op.scratch:
            r.reduction_scratch()
        _with_scratch(r, s.call.op.scratch, lambda: cpu_rule(r, s, args))
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


def _update(r, s, args) -> None:
    """t[i, ...] = v: each running lane updates its element (atomically for the read-modify-write forms)."""
    (mode,) = s.call.attrs
    d = r.names(s.dsts[0])
    if d != args[0]:
        r.out(f"weft::cta::copy({d}, {args[0]});")
    idx = ", ".join(args[1:-1])
    active = r.lane_active()
    ok = tile_render.tile_index_checks(r, s, args[1:-1])  # debug mode: run-time indices inside the tile
    if ok:
        active = f"({active} && ({args[1]} < 0 || ({ok})))" if mode is TileUpdate.MASKED else f"({active} && ({ok}))"
    r.out(f"weft::cta::tile_update<{mode.value}>({d}, {args[-1]}, {active}, {idx});")


def _from_thread(r, s, args) -> None:
    """lane thread_idx's value, broadcast through the scratch memory."""
    r.need_scratch(_type_bytes(s.args[0].type))
    r.out(f"weft::cta::tile_from_thread({r.names(s.dsts[0])}, {args[0]}, {args[1]}, weft_scratch_);")


def _map(r, s, args) -> None:
    tile_render._map(r, s, args)  # its element loop is split over the lanes (element_loop)
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
for _rule_name, _rule_fn in (("tile", _tile_of), ("tile_update", _update), ("tile_fft", _fft("tile_fft")),
                             ("tile_ifft", _fft("tile_ifft")), ("tile_from_thread", _from_thread),
                             ("tile_randi", _lane0(tile_render._random("tile_randi"))),
                             ("tile_randf", _lane0(tile_render._random("tile_randf"))),
                             ("tile_map", _map), ("tile_reduce", _lane0(tile_render._reduce))):
    CudaBlockRendering.forward_rules.add(rules.ops(_rule_name, "tile"), _rule_fn)


def _tile_query_next(r, s, args) -> None:
    """Thread-block geometry query on CUDA: every thread advances its own copy of the (uniform) query through the
    block's next block_dim items and keeps the one of its lane, so the copies stay identical without shared state."""
    d, q = r.names(s.dsts[0]), r.names(s.dsts[1])
    r.out(f"{q} = {args[0]};")
    r.out(f"for (int32_t k_ = 0; k_ < {s.dsts[0].type.size}; ++k_) {{ const int32_t i_ = weft::tile_query_take({q}); "
          f"if (k_ == _l) {d}.data[k_] = i_; }}")
    r.out("__syncthreads();")


for _rule_name in ("tile_bvh_query_next", "bvh_query_next_tiled", "tile_mesh_query_aabb_next",
                   "mesh_query_aabb_next_tiled"):
    CudaBlockRendering.forward_rules.add(rules.ops(_rule_name, "tile"), _tile_query_next)


# ---------------------------------------------------------------------------------------------- adjoint rules
def _adj_retargeted(cpu_rule, scratch_bytes=None):
    """The CPU derivative rule retargeted to weft::cta, with the scratch pointer where the record says the cooperative
    form takes one; ``scratch_bytes(let)`` sizes the scratch (default: a reduction's)."""
    def rule(r, s, args, adj_args, adj_out) -> None:
        scratch = s.call.op.adjoint_scratch
        if scratch and scratch_bytes is not None:
            r.need_scratch(scratch_bytes(s))
        elif scratch:
            r.reduction_scratch()
        _with_scratch(r, scratch, lambda: cpu_rule(r, s, args, adj_args, adj_out))
    return rule


def _adj_matmul(r, s, args, adj_args, adj_out) -> None:
    """tile_matmul's adjoint takes the scratch pointer only in the accumulating form (a, b, out, alpha, beta)."""
    scratch = len(args) > 2
    if scratch:
        r.reduction_scratch()
    _with_scratch(r, scratch, lambda: TileAdjointRenderer.adjoint_rules.get(s.call.op)(r, s, args, adj_args, adj_out))


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


def _adj_update(r, s, args, adj_args, adj_out) -> None:
    (mode,) = s.call.attrs
    v = s.args[-1]
    if not T.is_differentiable_type(v.type):
        return
    r.out(f"weft::cta::adj_tile_update<{mode.value}>({adj_out[0]}, {adj_args[-1]}, {r.lane_active()}, "
          f"{', '.join(args[1:-1])});")
    r.out(r.accum_line(s.args[0].type, adj_args[0], adj_out[0]))


def _adj_from_thread(r, s, args, adj_args, adj_out) -> None:
    if T.is_differentiable_type(s.args[0].type):
        r.out(f"weft::cta::adj_tile_from_thread({adj_args[0]}, {adj_out[0]}, {args[1]});")


def _adj_map(r, s, args, adj_args, adj_out) -> None:
    tile_adjoint._map(r, s, args, adj_args, adj_out)  # its element loop is split over the lanes (element_loop)
    r.out("__syncthreads();")


for _op in TileAdjointRenderer.adjoint_rules.ops():
    if _op.domain == "tile" and not _op.lane_level:
        CudaBlockRendering.adjoint_rules.add(_op, _adj_retargeted(TileAdjointRenderer.adjoint_rules.get(_op)))
for _rule_name, _rule_fn in (
    ("tile", _adj_tile_of), ("tile_update", _adj_update), ("tile_from_thread", _adj_from_thread), ("tile_extract", _adj_extract), ("extract", _adj_extract), ("tile_map", _adj_map),
    ("tile_reduce", _lane0(tile_adjoint._reduce)), ("tile_matmul", _adj_matmul),
    ("tile_fft", _adj_retargeted(TileAdjointRenderer.adjoint_rules.get(rules.ops("tile_fft", "tile")[0]),
                                 _fft_adjoint_scratch)),
    ("tile_ifft", _adj_retargeted(TileAdjointRenderer.adjoint_rules.get(rules.ops("tile_ifft", "tile")[0]),
                                  _fft_adjoint_scratch)),
):
    CudaBlockRendering.adjoint_rules.add(rules.ops(_rule_name, "tile"), _rule_fn)


def _cuda_tile_module(r, body: str, entry: str, name: str) -> str:
    parts = [r.header(), '#include "tile_cuda.h"', r.render_structs(r.fn.params), r.shared_preamble(),
             "namespace {", r.render_args_struct(), cuda_backend._GRID_HELPERS, body, "}  // namespace",
             r.entry_source(entry, name), r.layout_check()]
    return "\n".join(p for p in parts if p) + "\n"


class CudaTileRenderer(CudaBlockRendering, cuda_backend.CudaTarget, tile_render.TileRenderer):
    """A tile kernel's forward pass as one cooperative CUDA block of ``block_dim`` threads per weft block."""

    def render_module(self) -> str:
        return _cuda_tile_module(self, self.render_body("fwd_body", self.fn.body), cuda_backend.FWD_ENTRY, "fwd_body")


class CudaTileAdjointRenderer(CudaBlockRendering, cuda_backend.CudaTarget, TileAdjointRenderer):
    """A tile kernel's backward pass as one cooperative CUDA block per weft block."""

    def render_module(self) -> str:
        return _cuda_tile_module(self, self.render_bwd_body(), cuda_backend.BWD_ENTRY, "bwd_body")
