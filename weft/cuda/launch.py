"""Kernel launches on CUDA devices: render, NVRTC-compile (cached), load per GPU, ``cuLaunchKernel``.

A module's entry takes two by-value parameters, the packed ``Args`` struct (the same bytes the CPU entry reads)
and a ``weft::Grid``; the kernel walks the flattened grid with a grid-stride loop. In debug mode the module's
``weft_error_storage`` (bounds checks, asserts) is read back after the launch, as the CPU path does.
"""

from __future__ import annotations

import ctypes
import dataclasses
import threading
from dataclasses import dataclass

from .. import abi, config, pipeline
from ..backend import cuda as cuda_backend
from ..errors import RuntimeError_
from ..pipeline import Direction, Target
from ..toolchain import nvrtc, preamble
from ..types.layout import args_layout
from . import graphs
from .driver import api, check

_MAX_BLOCKS = 2**31 - 1
_Params = ctypes.c_void_p * 2
_STATIC_SHARED_LIMIT = 48 * 1024  # dynamic shared memory beyond this needs an opt-in per function


@dataclass
class LoadedModule:
    """A loaded module's entry point on one GPU."""

    module: object
    function: object
    errors: int  # device address of weft_error_storage (0 when the module has none)
    errors_size: int
    shared_optin: bool = False  # cuFuncSetAttribute raised its dynamic shared memory limit


_programs: dict[tuple, LoadedModule] = {}
_lock = threading.Lock()


def load_program(source: str, name: str, debug: bool, entry: str, device) -> LoadedModule:
    """Compile ``source`` for ``device``'s architecture (cached on disk) and load it into its context once."""
    ctx = device.backend
    key = (source, ctx.ordinal, entry, debug)
    prog = _programs.get(key)
    if prog is not None:
        return prog
    options = nvrtc_options(ctx.arch, debug, name)
    image = nvrtc.build_cuda(source, options, name)
    return install_image(source, name, debug, entry, device, image)


def install_image(source: str, name: str, debug: bool, entry: str, device, image: bytes) -> LoadedModule:
    """Load a compiled image (CUBIN or PTX) of ``source`` into ``device``'s context as the module later launches of
    that source use (``load_program`` compiles one; ``wp.load_aot_module`` brings one from a file)."""
    ctx = device.backend
    key = (source, ctx.ordinal, entry, debug)
    drv = api()
    with _lock:
        prog = _programs.get(key)
        if prog is not None:
            return prog
        ctx.make_current()
        module = check(drv.cuModuleLoadData(image), f"loading the CUDA module of '{name}' on {device}")
        function = check(drv.cuModuleGetFunction(module, entry.encode()), f"finding {entry} in '{name}'")
        err, ptr, size = drv.cuModuleGetGlobal(module, cuda_backend.ERROR_SYMBOL.encode())
        errors, errors_size = (int(ptr), int(size)) if int(err) == 0 else (0, 0)
        prog = LoadedModule(module, function, errors, errors_size)
        _programs[key] = prog
    return prog


def nvrtc_options(device_arch: int, debug: bool, name: str) -> nvrtc.NvrtcOptions:
    """NVRTC options for a module on a GPU of ``device_arch``, with Warp's CUDA compile options of ``wp.config``:
    ``cuda_output`` (cubin / ptx), ``ptx_target_arch``, ``cuda_arch_suffix``, ``lineinfo``, ``compile_time_trace``."""
    arch = nvrtc.target_arch(device_arch)
    output = config.cuda_output or "cubin"
    if output == "ptx" and config.ptx_target_arch:
        arch = min(arch, nvrtc.target_arch(int(config.ptx_target_arch)))
    extra: list[str] = []
    if config.lineinfo and not debug:
        extra.append("-lineinfo")
    if config.compile_time_trace:
        trace = config.cache_dir() / "trace"
        trace.mkdir(parents=True, exist_ok=True)
        extra.append(f"--fdevice-time-trace={trace / (name + '.json')}")
    return nvrtc.NvrtcOptions(arch=arch, debug=debug, output=output, extra=tuple(extra),
                              arch_suffix=config.cuda_arch_suffix or "")


def args_bytes(spec) -> int:
    """The size Python packs a specialisation's arguments to (its CUDA module checks ``sizeof(Args)`` against it)."""
    return args_layout(spec.types).size


def cuda_program(spec, direction: Direction, adj=None) -> pipeline.Program:
    """The CUDA module of a kernel specialisation in ``direction`` (rendered once per spec; ``adj``: the kernel's
    AdjointSpec, holding the adjoint IR), with its argument layout checked against Python's packing."""
    owner = spec if direction is Direction.FORWARD else adj
    program = owner.programs.get(Target.CUDA)
    if program is None:
        code = spec.fn if direction is Direction.FORWARD else adj.prog
        program = pipeline.render_module(code, spec.kernel.__name__, spec.debug, Target.CUDA, direction,
                                         args_bytes(spec))
        source = preamble.apply(program.source, spec.kernel.options, cuda=True)  # wp.ModuleBuildOptions
        if source is not program.source:
            program = dataclasses.replace(program, source=source)
        owner.programs[Target.CUDA] = program
    return program


def run_forward(spec, packed: bytes, dims: tuple[int, ...], device, block_dim: int = 256, stream=None,
                max_blocks: int = 0) -> None:
    """Launch a kernel specialisation's forward pass over ``dims`` on ``device``."""
    run_program(cuda_program(spec, Direction.FORWARD), spec.kernel.__name__, spec.debug, packed, dims, device,
                block_dim, stream, max_blocks)


def run_backward(spec, adj, packed: bytes, dims: tuple[int, ...], device, block_dim: int = 256, stream=None,
                 max_blocks: int = 0) -> None:
    """Launch a kernel specialisation's backward pass (``adj``: the kernel's AdjointSpec, holding the adjoint IR)."""
    run_program(cuda_program(spec, Direction.ADJOINT, adj), spec.kernel.__name__ + "_adj", spec.debug, packed, dims,
                device, block_dim, stream, max_blocks)


def run_program(program: pipeline.Program, name: str, debug: bool, packed: bytes, dims: tuple[int, ...], device,
                block_dim: int, stream, max_blocks: int = 0) -> None:
    prog = load_program(program.source, name, debug, program.entry, device)
    if program.block_dim:
        launch_blocks(prog, program, packed, dims, device, stream, debug, name, max_blocks)
        return
    launch(prog, packed, dims, device, block_dim, stream, debug, name, max_blocks=max_blocks)


def launch_blocks(prog: LoadedModule, program: pipeline.Program, packed: bytes, dims: tuple[int, ...], device, stream,
                  debug: bool, name: str, max_blocks: int = 0) -> None:
    """Launch a tile module (``weft.backend.tile_cuda``): CUDA blocks of exactly ``program.block_dim`` threads, one per weft
    block (the entry strides over blocks when there are more than the grid limit), with the module's dynamic shared
    memory (``program.shared_bytes``, decided by the renderer)."""
    tile_dim = program.block_dim
    total = 1
    for d in dims:
        total *= d
    nblocks = (total + tile_dim - 1) // tile_dim
    shared = program.shared_bytes
    if shared > _STATIC_SHARED_LIMIT and not prog.shared_optin:
        drv = api()
        limit = device.backend._attr(drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
        if shared > limit:
            raise RuntimeError_(f"kernel '{name}': its tiles need {shared} bytes of shared memory per block, more "
                                f"than {device} allows ({limit}); use smaller tiles")
        attr = drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        check(drv.cuFuncSetAttribute(prog.function, attr, shared),
              f"allowing {shared} bytes of shared memory for '{name}'")
        prog.shared_optin = True
    launch(prog, packed, dims, device, tile_dim, stream, debug, name, work=nblocks * tile_dim, shared=shared,
           max_blocks=max_blocks)


def launch(prog: LoadedModule, packed: bytes, dims: tuple[int, ...], device, block_dim: int = 256, stream=None,
           debug: bool = False, name: str = "kernel", work: int | None = None, shared: int = 0,
           max_blocks: int = 0) -> None:
    """Launch ``prog`` over ``dims``; ``work`` (default: every grid point) is how many GPU threads to start.

    ``max_blocks`` > 0 caps the CUDA blocks (as Warp's ``wp.launch(max_blocks=)``): the entries stride over the grid,
    so every point still runs."""
    total = 1
    for d in dims:
        total *= d
    if work is not None:
        total = work
    if total == 0:
        return
    padded = tuple(dims) + (1,) * (4 - len(dims))
    grid = abi.GRID.pack(*padded, len(dims))
    block_dim = max(1, min(int(block_dim) or 256, 1024))
    blocks = min((total + block_dim - 1) // block_dim, _MAX_BLOCKS)
    if max_blocks and max_blocks > 0:
        blocks = min(blocks, int(max_blocks))
    # kernelParams: an array of pointers to each parameter's bytes (the driver copies them at launch)
    arg_ptr = ctypes.c_char_p(packed)
    grid_ptr = ctypes.c_char_p(grid)
    params = _Params(ctypes.cast(arg_ptr, ctypes.c_void_p).value, ctypes.cast(grid_ptr, ctypes.c_void_p).value)
    ctx = device.backend
    ctx.make_current()
    if stream is None:
        from .streams import current_stream

        handle = current_stream(device)
    else:
        handle = getattr(stream, "_native", stream)
    check(api().cuLaunchKernel(prog.function, blocks, 1, 1, block_dim, 1, 1, shared, handle, ctypes.addressof(params), 0),
          f"launching kernel '{name}' on {device}")
    if debug and prog.errors and not graphs.is_capturing(device):
        check_errors(prog, device, handle, name)


def check_errors(prog: LoadedModule, device, handle, name: str) -> None:
    """Read the module's error state after a debug launch; raise (and reset it) when a check failed."""
    drv = api()
    check(drv.cuStreamSynchronize(handle), f"kernel '{name}' on {device}")
    buf = ctypes.create_string_buffer(prog.errors_size)
    check(drv.cuMemcpyDtoH(ctypes.addressof(buf), prog.errors, prog.errors_size), "reading the kernel error state")
    code, count = abi.ERROR_HEAD.unpack_from(buf.raw)
    if not code:
        return
    check(drv.cuMemsetD8(prog.errors, 0, prog.errors_size), "resetting the kernel error state")
    message = buf.raw[abi.ERROR_HEAD.size:].split(b"\0", 1)[0].decode(errors="replace")
    report = abi.error_report(code, count, message)
    if report is not None:
        raise RuntimeError_(report)


def forward_function(spec, device) -> tuple[LoadedModule, pipeline.Program]:
    """The loaded forward entry of a kernel specialisation on ``device`` and its program (for attribute and occupancy
    queries: ``wp.get_cuda_kernel_properties``, ``wp.get_suggested_block_size``), compiling it when needed."""
    program = cuda_program(spec, Direction.FORWARD)
    return load_program(program.source, spec.kernel.__name__, spec.debug, program.entry, device), program
