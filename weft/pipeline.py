"""The one place that knows the stage order: source -> untyped AST -> typed IR -> (adjoint IR) -> C++ -> binary.

Both targets go through here: :func:`compile` renders a kernel specialisation for a :class:`Target` in a
:class:`Direction` and returns a :class:`Program`, the module source with the launch facts the renderer decided
(entry name, dynamic shared memory, block size). The CPU binary is built by :func:`build` (the kernel cache, with
``config.cpu_compile_flags``); CUDA modules are built per GPU architecture by ``weft.cuda.launch`` through NVRTC.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from . import config
from .autodiff.prune import prune_replay
from .autodiff.reverse import build_adjoint
from .backend import grad_call as _grad_call  # noqa: F401 - registers the rendering of wp.grad calls
from .backend.adjoint import AdjointRenderer
from .backend.cuda import CudaAdjointRenderer, CudaRenderer
from .backend.renderer import Renderer, RenderOptions
from .backend.tile_adjoint import TileAdjointRenderer
from .backend.tile_cuda import CudaTileAdjointRenderer, CudaTileRenderer
from .backend.tiles import TileRenderer
from .frontend import tiles as _tile_forms  # noqa: F401 - registers the tile forms of the kernel language
from .frontend.lower import Lowerer
from .frontend.source import FunctionSource
from .ir import types as T
from .ir.blocks import uses_tiles
from .ir.cse import cse
from .ir.nodes import Function
from .ir.verify import verify, verify_adjoint
from .toolchain.build import build_cpu, cpu_key, load_cpu
from .toolchain.options import CpuOptions


@dataclass
class Lowered:
    fn: Function
    tid_arity: int
    deps: object  # frontend.deps.DepRecorder: what the lowering resolved statically


def lower(src: FunctionSource, param_types: dict[str, T.Type], name: str, options: dict) -> Lowered:
    lw = Lowerer(src, param_types, name, options)
    fn = cse(lw.lower_kernel())
    if config.verify_ir or config.debug_internal:
        verify(fn)
    if uses_tiles(fn):
        fn.tile_dim = int(options.get("block_dim") or 256)  # tile kernels: the block size they are compiled for
    return Lowered(fn, lw.tid_arity, lw.deps)


def differentiate(fn: Function):
    """The backward program of a kernel (IR -> IR)."""
    prog = build_adjoint(fn)
    if config.verify_ir or config.debug_internal:
        verify_adjoint(prog)
    return prog


def without_gradients(prog, inactive: frozenset[int]):
    """The backward program for launches in which the array parameters ``inactive`` (indices) have no gradients:
    ``prog`` itself unless its replay can drop more work then (tile kernels, see ``autodiff.prune``)."""
    return prune_replay(prog, inactive)


class Target(enum.Enum):
    CPU = "cpu"
    CUDA = "cuda"


class Direction(enum.Enum):
    FORWARD = "forward"
    ADJOINT = "adjoint"


#: the entry point each direction's module exports (both targets)
ENTRIES = {Direction.FORWARD: "weft_fwd", Direction.ADJOINT: "weft_bwd"}


@dataclass(frozen=True)
class Program:
    """One rendered module of a kernel specialisation and what launching it needs to know."""

    source: str
    target: Target
    direction: Direction
    entry: str  # the exported entry point (weft_fwd / weft_bwd)
    shared_bytes: int = 0  # CUDA: dynamic shared memory per block (cooperative tile modules)
    block_dim: int = 0  # tile modules: the threads per block they are rendered for (0: any)


#: the renderer of each (target, direction, tile kernel?): the target hooks are in the classes' mixins
RENDERERS = {
    (Target.CPU, Direction.FORWARD, False): Renderer,
    (Target.CPU, Direction.ADJOINT, False): AdjointRenderer,
    (Target.CPU, Direction.FORWARD, True): TileRenderer,
    (Target.CPU, Direction.ADJOINT, True): TileAdjointRenderer,
    (Target.CUDA, Direction.FORWARD, False): CudaRenderer,
    (Target.CUDA, Direction.ADJOINT, False): CudaAdjointRenderer,
    (Target.CUDA, Direction.FORWARD, True): CudaTileRenderer,
    (Target.CUDA, Direction.ADJOINT, True): CudaTileAdjointRenderer,
}


def render_module(code, name: str, debug: bool, target: Target, direction: Direction, args_bytes: int = 0) -> Program:
    """Render a kernel specialisation for ``target`` in ``direction``: ``code`` is its typed IR (forward) or its
    adjoint program (see :func:`differentiate`). Tile kernels render as blocks of ``fn.tile_dim`` threads. CUDA
    modules given ``args_bytes`` (the size Python packs the arguments to) check their ``Args`` layout against it."""
    fn = code if direction is Direction.FORWARD else code.fn
    block_dim = int(fn.tile_dim or 0)
    cls = RENDERERS[(target, direction, bool(block_dim))]
    options = RenderOptions(debug=debug, kernel_name=name, args_bytes=args_bytes)
    renderer = cls(code, options, block_dim) if block_dim else cls(code, options)
    source = renderer.render_module()
    shared = renderer.shared_total() if target is Target.CUDA and block_dim else 0
    return Program(source, target, direction, ENTRIES[direction], shared, block_dim)



def cpu_options(debug: bool, strided: bool = False) -> CpuOptions:
    return CpuOptions(opt_level=config.optimization_level, debug=debug, extra=tuple(config.cpu_compile_flags),
                      strided=strided)


def build(source: str, name: str, debug: bool, strided: bool = False):
    """Compile (or load from the cache) a CPU module: its contiguous instantiation, or with ``strided`` its general
    one (for launches with non-contiguous arrays, see Renderer.render_entry)."""
    return build_cpu(source, cpu_options(debug, strided), name)


def built_key(source: str, debug: bool) -> str:
    """The kernel-cache key of a CPU module's source (what a warm start records)."""
    return cpu_key(source, cpu_options(debug))


def load_built(key: str):
    """Load an already-compiled CPU module by its kernel-cache key (None if it is not in the cache)."""
    return load_cpu(key)
