"""weft: fast, differentiable simulation kernels in Python, with NVIDIA Warp's API (``import weft as wp``)."""

from __future__ import annotations

__version__ = "0.1.0"

import typing as _typing
from typing import Any  # wp.Any, used in generic annotations

from . import config
from .errors import (CacheError, CompileError, DeviceError, Error, FabricError, FabricUnsupportedError, LaunchError,
                     RuntimeError_, StructFieldError, ToolchainError, TypeError_)

WarpCodegenError = CompileError  # Warp's name for the error a kernel or func that cannot be compiled raises
WarpCodegenTypeError = TypeError_  # Warp's name for a type error in kernel code
from .errors import warn as _warn
from .errors import KernelValueError as WarpCodegenValueError  # Warp's name for a value error in kernel code
from .errors import KernelAttributeError as WarpCodegenAttributeError  # Warp's names for kernel-code errors
from .errors import KernelIndexError as WarpCodegenIndexError
from .errors import KernelNameError as WarpCodegenKeyError
from .errors import DeterminismError as WarpDeterminismError
from .types.scalars import (Float, Int, Scalar, bfloat16, bool_ as bool, float16, float32, float64, int8, int16, int32,
                            int64, uint8, uint16, uint32, uint64)
from .types.composite import matrix, matrix_from_cols, matrix_from_rows, quaternion, transformation, vector
from .types.aliases import NAMED_TYPES as _NAMED
from .types.struct import struct
from .types.reference import Reference, ref
from .frontend.func import Func, func
from .kernel import Kernel, compile_kernels, get_module_options, kernel, overload, set_module_options
from .runtime.array import (array, array1d, array2d, array3d, array4d, clone, empty, empty_like, from_numpy, full,
                            full_like, ones, ones_like, zeros, zeros_like)
from .runtime.fixed import fixedarray
from .runtime.indexed import indexedarray, indexedarray1d, indexedarray2d, indexedarray3d, indexedarray4d
from .runtime.fabric import (FabricArray, IndexedFabricArray, fabricarray, fabricarrayarray, indexedfabricarray,
                             indexedfabricarrayarray)
from .runtime import struct_host as _struct_host  # fills weft.types.struct's runtime hooks
from .runtime.copy import copy
from .runtime.device import (Device, ScopedDevice, get_cuda_device_count, get_cuda_devices, get_cuda_supported_archs,
                             get_device, get_devices, get_preferred_device, is_conditional_graph_supported, is_cuda_available,
                             is_device_available, map_cuda_device, set_device, unmap_cuda_device)
from .runtime.launch import Launch, launch
from .runtime.tiles import launch_tiled
from .runtime.streams import (Event, ScopedStream, Stream, get_stream, record_event, synchronize, synchronize_device,
                              synchronize_event, synchronize_stream, wait_event, wait_stream,
                              get_mempool_used_mem_current, get_mempool_used_mem_high, is_mempool_supported)
# CUDA runtime management (allocators, pools, peer access, IPC, profiler, versions, kernel queries): session 8
from .runtime.memkind import MemoryKind
from .runtime.cuda_api import (Allocator, CudaManagedAllocator, ScopedAllocator, ScopedCudaProfiler, ScopedMempool,
                               ScopedMempoolAccess, ScopedPeerAccess, can_access, clear_lto_cache, cuda_profiler_start,
                               cuda_profiler_stop, event_from_ipc_handle, from_ipc_handle, get_cuda_device,
                               get_cuda_driver_version, get_cuda_kernel_properties, get_cuda_max_cluster_dim,
                               get_cuda_toolkit_version, get_device_allocator, get_event_elapsed_time,
                               get_mempool_release_threshold, get_suggested_block_size, is_mempool_access_enabled,
                               is_mempool_access_supported, is_mempool_enabled, is_peer_access_enabled,
                               is_peer_access_supported, set_cuda_allocator, set_device_allocator,
                               set_mempool_access_enabled, set_mempool_enabled, set_mempool_release_threshold,
                               set_peer_access_enabled, set_stream, capture_debug_dot_print)
from .runtime.capture import CaptureMode, Graph
from .runtime.capture_file import capture_load, capture_load_from_bytes, capture_save
from .runtime.aot import compile_aot_module, load_aot_module
from .toolchain.preamble import ModuleBuildOptions
from . import build_experimental
from .runtime.capture import ScopedCapture, capture_begin, capture_end, capture_if, capture_launch, capture_while
from .runtime.timing import ScopedTimer
from .runtime.activity import (TIMING_ALL, TIMING_GRAPH, TIMING_KERNEL, TIMING_KERNEL_BUILTIN, TIMING_MEMCPY,  # apiobs
                               TIMING_MEMSET, TimingResult, timing_begin, timing_end, timing_print)
from .runtime.memtrack import ScopedMemoryTracker, print_memory_report  # apiobs
from .toolchain.target_key import get_cpu_kernel_cache_key
from .logger import Logger, ScopedLogger, get_logger, set_logger
from .runtime.stub_names import (Array, Capacity, Cols, DeviceLike, DType, DTypeFloat, DTypeScalar, Length, NDim, Rows,
                                  Shape, Tile, TileStack)
from .types.generics import Matrix, Quaternion, Transformation, Vector
from .geometry import IsoSurfaceMarchingCubes as _IsoSurfaceMarchingCubes
from .geometry import (Bvh, BvhQuery, HashGrid, HashGridQuery, Mesh, MeshQuery, MeshQueryAABB,
                       MeshQueryPoint, MeshQueryRay, Volume, is_cubql_available)
from .builtins import expect_eq, expect_near, expect_neq, grad, print, printf, public_builtins as _public_builtins, static, tid, where
from .builtins import cast, tile_astype, tile_axpy, tile_dot, tile_empty, transform_set_rotation, transform_set_translation, unot
from .builtins import tile_stack, tile_stack_clear, tile_stack_count, tile_stack_pop, tile_stack_push, tile_scatter_add
from .builtins import tile_scatter_masked
from .builtins import select  # Warp's deprecated where (apiobs)
from .builtins import tile_cholesky_inplace, tile_cholesky_solve_inplace, tile_lower_solve_inplace, tile_upper_solve_inplace

globals().update(_NAMED)
globals().update({k: v for k, v in _public_builtins().items() if k not in globals()})

float16 = float16
half = float16
#: Warp's type for object handles (Mesh, Bvh, HashGrid ids) in kernel parameters, struct fields and arrays: a
#: 64-bit unsigned integer, the same type as ``uint64`` here.
handle = uint64
vec_t = vector
mat_t = matrix
spatial_vector = _NAMED["spatial_vector"]
spatial_matrix = _NAMED["spatial_matrix"]
types = None  # replaced below by the module for `wp.types.<name>` access


import math as _math

pi = _math.pi
tau = 2.0 * _math.pi
e = _math.e
inf = _math.inf
nan = _math.nan
half_pi = 0.5 * _math.pi
log2e = _math.log2(_math.e)
log10e = _math.log10(_math.e)
ln2 = _math.log(2.0)
ln10 = _math.log(10.0)
phi = (1.0 + _math.sqrt(5.0)) / 2.0
E, PI, TAU, HALF_PI, INF, NAN = e, pi, tau, half_pi, inf, nan
LOG2E, LOG10E, LN2, LN10, PHI = log2e, log10e, ln2, ln10, phi

#: What each numeric constant is (the API reference and the docstring test read this).
_CONSTANT_DOCS = {
    "pi": "π", "tau": "2π", "e": "Euler's number", "inf": "positive infinity", "nan": "a quiet NaN",
    "half_pi": "π / 2", "log2e": "log2(e)", "log10e": "log10(e)", "ln2": "ln(2)", "ln10": "ln(10)",
}


def constant(x):
    """Mark a module-level value as a compile-time constant (kernels capture globals anyway): a number, a weft scalar,
    vector, matrix, quaternion or transform, as Warp's; anything else raises ``TypeError``."""
    from .types_compat import is_value

    if not is_value(x):
        raise TypeError(f"Invalid constant type: {type(x)}")
    return x


def init() -> None:
    """Initialise weft. Devices and the toolchain are set up lazily, so this does nothing unless
    ``wp.config.verbose`` is set; then it prints the diagnostics report (see :func:`print_diagnostics`)."""
    if config.verbose:
        print_diagnostics()


def print_diagnostics() -> None:
    """Print weft's version, the C++ compiler and its version, OpenMP, the SIMD level of ``-march=native``, the
    kernel cache directory and its size, and the CUDA driver / NVRTC status (why not, when unavailable). Also
    ``python -m weft``."""
    from .diagnostics import print_diagnostics as _print

    _print()


def clear_kernel_cache() -> None:
    """Delete every compiled kernel from the on-disk cache."""
    from .toolchain import cache

    cache.clear()


def load_module(module=None, device=None, recursive=False, block_dim=None) -> None:
    """Compile every non-generic kernel of a Python module now, several in parallel. ``module`` may also be a kernel
    module object (``kernel.module``), loaded for ``device``; with ``block_dim`` the variants for launches of that
    block size are loaded, as ``wp.force_load`` loads them."""
    import inspect
    import sys
    from concurrent.futures import ThreadPoolExecutor

    if isinstance(module, Module):  # Module / force_load: imported below (module level)
        force_load(device, [module], block_dim)
        return
    if module is None:
        module = sys.modules[inspect.currentframe().f_back.f_globals["__name__"]]
    elif isinstance(module, str):
        module = sys.modules[module]
    kernels = [v for v in vars(module).values() if isinstance(v, Kernel)]
    compile_kernels(kernels)
    if block_dim is not None and kernels:
        force_load(device, [module], block_dim)


from .runtime.tape import Tape
from .autodiff.custom import adjoint, func_grad, func_replay
from .frontend.native import address_of, func_native
from .runtime.checkpoint import checkpoint
from . import autograd
from . import optim
from .interop.api import (device_from_torch, device_to_torch, dtype_from_jax, dtype_from_torch,
                          dtype_to_jax, dtype_to_torch, from_dlpack, from_jax, from_torch, stream_from_torch,
                          stream_to_torch, to_dlpack, to_jax, to_torch)
# Warp 1.19 interop names added in session 8 (paddle, JAX FFI-style wrappers, from_ptr)
from .interop.api import (device_from_jax, device_from_paddle, device_to_jax, device_to_paddle, dtype_from_paddle,
                          dtype_to_paddle, from_paddle, from_ptr, stream_from_paddle, to_paddle)
from .interop.jax_ffi import (JaxCallableGraphMode, JaxModulePreloadMode, clear_jax_callable_graph_cache,
                              jax_callable, jax_kernel)
from .geometry import BvhQueryTiled, MeshQueryAABBTiled
from .textures import (Texture, Texture1D, Texture2D, Texture3D, TextureAddressMode, TextureFilterMode,
                       TextureResourceFlags)
from .interop.gl import GLTextureResource, RegisteredGLBuffer
from . import types_compat as types  # noqa: F811
from .types_compat import dtype_from_numpy, dtype_to_numpy
from .config import DeterministicMode
from .config import LOG_DEBUG, LOG_ERROR, LOG_INFO, LOG_WARNING, ScopedLogLevel
from .module import Module, force_load, get_module, is_cpu_available
from . import utils
from .utils import transform_expand
from .elementwise import map
from . import _src

Function = Func
from .mathfuncs import len
from .mathfuncs import (transform_compose, transform_decompose, transform_from_matrix, transform_to_matrix,
                        norm_huber, norm_l1, norm_l2, norm_pseudo_huber, quat_between_vectors, quat_from_euler, quat_to_euler, quat_to_rpy, quat_twist,
                        quat_twist_angle, quat_twist_angle_signed, smooth_normalize, transform_twist, transform_wrench,
                        velocity_at_point)


def _prefetch_identity() -> None:
    """Stamp weft's own files and read the host CPU identity off the critical path of the first launch (both
    only read files; failures are left for the launch to report)."""
    try:
        from .speccache import _weft_stamp
        from .toolchain.compiler import host_target

        _weft_stamp()
        host_target()
    except Exception:  # noqa: BLE001, S110 - best effort; the launch path recomputes and reports
        pass


if config.spec_cache:
    import threading as _threading

    _threading.Thread(target=_prefetch_identity, name="weft-prefetch", daemon=True).start()


def __getattr__(name: str):
    # weft.sim, weft.examples, weft.sparse and weft.render are imported on first use (``wp.sim``): most programs never need them
    if name in ("sim", "examples", "sparse", "render"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    if name == "MarchingCubes":  # Warp 1.19 deprecates the top-level name (the class itself, not a subclass)
        _warn("wp.MarchingCubes is deprecated; use wp.geometry.IsoSurfaceMarchingCubes", DeprecationWarning,
              stacklevel=2)
        return _IsoSurfaceMarchingCubes
    raise AttributeError(f"module 'weft' has no attribute '{name}'")


# Every public name: what ``from weft import *`` gives and what the API reference documents. Computed here, after
# the last import, from the module's public non-module attributes plus the public submodules; a name added to this
# file after this point would be missing (tests/docs/test_api_docs.py checks).
_PUBLIC_MODULES = ("autograd", "config", "optim", "types")
__all__ = sorted({n for n, v in globals().items() if not n.startswith("_") and n != "annotations"  # noqa: PLE0605
                  and not isinstance(v, type(_math))} | set(_PUBLIC_MODULES))

