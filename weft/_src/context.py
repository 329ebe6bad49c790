"""``warp._src.context``: the runtime facts, builtin table and helpers Warp's tests read from Warp's private
context module, as far as weft has them.

``runtime`` answers the queries with weft's real state (no MathDx, the CUDA driver version when one is present);
Warp's module builder, hasher and native entry points raise :class:`~weft._src._unsupported.PrivateAPIError`.
"""

from __future__ import annotations

import ctypes
import sys
import typing

from .. import (
    config,
    init,  # noqa: F401
)
from ..builtins import public_builtins
from ..cuda import driver
from ..ir import types as T
from ..module import _MODULES as _module_registry
from ..module import get_module as _get_module
from ..runtime import memtrack as _memtrack
from ..runtime.device import get_device, is_cuda_available
from ..runtime.launch import resolve_block_dim as _resolve_launch_block_dim  # noqa: F401 (Warp's private name)
from ..runtime.packing import make_packer
from ..types.mapping import to_ir
from ..types_compat import type_repr
from ._unsupported import unsupported
from .logger import log_warning  # noqa: F401


class _Core:
    """The subset of Warp's native-library entry points that are facts about the build weft can answer."""

    @staticmethod
    def wp_is_mathdx_enabled() -> bool:
        """weft's tile linear algebra is its own (no MathDx), so never."""
        return False

    def __init__(self):
        self._error_output = True

    def wp_is_error_output_enabled(self) -> bool:
        """Warp's switch for its native library printing errors. weft's native code prints no errors (they come
        back as exceptions), so the switch is only stored."""
        return self._error_output

    def wp_set_error_output_enabled(self, enabled) -> None:
        self._error_output = bool(enabled)

    # Warp's allocation tracker entry points, answered by weft's (weft/runtime/memtrack.py)
    @staticmethod
    def wp_alloc_tracker_is_enabled() -> int:
        return int(_memtrack.enabled())

    @staticmethod
    def wp_alloc_tracker_enable(enable) -> None:
        _memtrack.on = bool(enable)

    wp_alloc_tracker_reset = staticmethod(_memtrack.reset)
    wp_alloc_tracker_push_scope = staticmethod(lambda name: _memtrack.push_scope(
        name.decode() if isinstance(name, bytes) else name))
    wp_alloc_tracker_pop_scope = staticmethod(_memtrack.pop_scope)
    wp_alloc_tracker_get_live_count = staticmethod(_memtrack.live_count)
    wp_alloc_tracker_get_total_alloc_count = staticmethod(_memtrack.total_count)
    wp_alloc_tracker_get_total_alloc_bytes = staticmethod(_memtrack.total_bytes)
    wp_alloc_tracker_get_current_bytes = staticmethod(lambda: _memtrack.current_bytes())
    wp_alloc_tracker_get_peak_bytes = staticmethod(lambda: _memtrack.peak_bytes())

    def __getattr__(self, name):
        raise AttributeError(f"warp._src.context.runtime.core.{name}: Warp's native library entry point, which "
                             "weft does not have")


class _Runtime:
    """Warp's runtime object: ``core`` and the CUDA driver version (``None`` without a CUDA driver)."""

    def __init__(self):
        self.core = _Core()

    @property
    def driver_version(self):
        v = driver.driver_version()
        return (v // 1000, (v % 1000) // 10) if v else None

    @property
    def is_cuda_enabled(self) -> bool:
        return is_cuda_available()

    def verify_cuda_device(self, device=None) -> None:
        """With ``wp.config.verify_cuda``, wait for a CUDA device's work and raise the CUDA error it hit, if any
        (nothing to wait for on the CPU)."""
        dev = get_device(device)
        if config.verify_cuda and not dev.impl.synchronous:  # (a GPU's queued work may have failed)
            dev.impl.synchronize(dev)


runtime = _Runtime()


def alloc_tracker_report_text(sort_order: int = 0, max_items: int = 10) -> str:
    """Warp's report text of the allocation tracker: ``sort_order`` 0 by size, 1 chronological."""
    return _memtrack.report_text("chronological" if sort_order == 1 else "size", max_items)


#: Warp's registry of the Python modules that define kernels, by module name (deleting an entry forgets the module,
#: as Warp's tests do after loading a deliberately broken one)
class _UserModules(dict):
    """A view of weft's module registry (weft.module) as Warp's ``user_modules``: every Python module that defines
    kernels is in it (weft registers a module when it first compiles one, Warp when it defines one), and deleting an
    entry forgets the module."""

    def __contains__(self, name) -> bool:
        return name in _module_registry or name in sys.modules

    def __getitem__(self, name):
        if name not in self:
            raise KeyError(name)
        return _get_module(name)

    def __delitem__(self, name) -> None:
        if name not in self:
            raise KeyError(name)
        _module_registry.pop(name, None)

    def keys(self):
        return _module_registry.keys()

    def __iter__(self):
        return iter(_module_registry)

    def __len__(self) -> int:
        return len(_module_registry)


user_modules = _UserModules()

#: Every public kernel builtin by name (Warp's table maps names to its Function records; weft's to its builtins).
builtin_functions = public_builtins()


def type_str(t) -> str:
    """A readable name of a type annotation: ``list[int]``, ``tuple[int, ...]``, ``vec3f``, ``float32`` ..."""
    if t is Ellipsis:
        return "..."
    origin = typing.get_origin(t)
    if origin is not None:
        args = typing.get_args(t)
        return f"{getattr(origin, '__name__', str(origin))}[{', '.join(type_str(a) for a in args)}]"
    if t in (int, float, bool, str):
        return t.__name__
    return type_repr(t)


class PackedArray(ctypes.Structure):
    """A packed plain-array launch argument: weft's array descriptor (weft/types/layout.py ARRAY_DESC) with Warp's
    field names."""

    _fields_ = [("data", ctypes.c_uint64), ("grad", ctypes.c_uint64), ("shape", ctypes.c_int32 * 4),
                ("ndim", ctypes.c_int32), ("flags", ctypes.c_int32), ("strides", ctypes.c_int64 * 4)]


def pack_arg(kernel, arg_type, arg_name: str, value, device=None, adjoint: bool = False):
    """Warp's launch-argument packer: ``value`` checked against the parameter annotation ``arg_type`` exactly as a
    launch of ``kernel`` checks it (the same errors: a ``RuntimeError`` naming the kernel and argument), packed into
    weft's descriptor. A plain array comes back as a :class:`PackedArray` (``data``, ``grad``, ``shape``, ``ndim``,
    ``flags``, ``strides``), other types as the raw bytes in a ctypes char array. With ``adjoint`` an indexed-array
    parameter takes the plain array of its adjoint; ``device`` is accepted for Warp's signature."""
    t = to_ir(arg_type)
    if adjoint and isinstance(t, T.ArrayType) and t.kind is T.ArrayKind.INDEXED:
        t = T.ArrayType(t.dtype, t.ndim)  # an indexed array's adjoint is a plain array (Warp's rule)
    name = getattr(kernel, "__name__", getattr(kernel, "key", "kernel"))
    packer = make_packer(t, lambda: f"kernel '{name}' argument '{arg_name}'")
    raw = packer(value)
    if isinstance(t, T.ArrayType) and t.kind is T.ArrayKind.ARRAY and len(raw) == ctypes.sizeof(PackedArray):
        return PackedArray.from_buffer_copy(raw)
    return (ctypes.c_char * len(raw)).from_buffer_copy(raw)


_WHY = "Warp's module builder/hasher and native loader; weft compiles each kernel as its own unit (weft.kernel)"
ModuleBuilder = unsupported("warp._src.context.ModuleBuilder", _WHY)
ModuleHasher = unsupported("warp._src.context.ModuleHasher", _WHY)
_smem_shortfall_clause = unsupported("warp._src.context._smem_shortfall_clause",
                                     "Warp's CUDA shared-memory diagnostics text")
