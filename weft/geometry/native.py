"""The geometry library (``weft/native/geometry/library.cpp``): compiled once per machine into the runtime library
directory (``wp.config.runtime_cache_dir``, shared by every kernel cache, like the FFT runtime libraries; see
toolchain/runtime.py), loaded on first use.

Kernel modules that use geometry ops export ``weft_geometry_attach``; a toolchain load hook hands them the
library's object registry, through which they resolve Mesh / Bvh / HashGrid ids.
"""

from __future__ import annotations

import ctypes
import threading

from ..toolchain import build as _build
from ..toolchain import runtime as _runtime
from ..toolchain.cache import RUNTIME, native_dir
from ..toolchain.options import CpuOptions

_lib: ctypes.CDLL | None = None
_lock = threading.Lock()

u64, i32, f32, vp = ctypes.c_uint64, ctypes.c_int32, ctypes.c_float, ctypes.c_void_p

#: name -> (restype, argtypes) of every entry point the Python side calls.
_SIGNATURES = {
    "geo_registry": (vp, []),
    "geo_hash_grid_create": (u64, [i32, i32, i32]),
    "geo_hash_grid_reserve": (ctypes.c_int, [u64, i32]),
    "geo_hash_grid_build": (ctypes.c_int, [u64, vp, vp, vp, i32, ctypes.c_double, ctypes.c_int]),
    "geo_hash_grid_destroy": (ctypes.c_int, [u64]),
    "geo_hash_grid_sorted_ids": (i32, [u64, vp, i32]),
    "geo_bvh_create": (u64, [vp, vp, i32, vp]),
    "geo_bvh_group_root": (i32, [u64, i32]),
    "geo_bvh_refit": (ctypes.c_int, [u64]),
    "geo_bvh_destroy": (ctypes.c_int, [u64]),
    "geo_bvh_info": (ctypes.c_int, [u64, vp]),
    "geo_mesh_create": (u64, [vp, vp, vp, i32, i32, ctypes.c_int, vp]),
    "geo_mesh_refit": (ctypes.c_int, [u64]),
    "geo_mesh_set_points": (ctypes.c_int, [u64, vp, vp]),
    "geo_mesh_destroy": (ctypes.c_int, [u64]),
    "geo_mesh_set_grads": (ctypes.c_int, [u64, vp, vp]),
    "geo_volume_create": (u64, [vp]),
    "geo_volume_destroy": (ctypes.c_int, [u64]),
    "geo_volume_update": (ctypes.c_int, [u64, vp]),
    "geo_volume_descriptor_size": (u64, []),
}


def lib() -> ctypes.CDLL:
    """The loaded geometry library (compiled on first call, then served from the runtime library directory)."""
    global _lib
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is None:
            source = (native_dir() / "geometry" / "library.cpp").read_text()
            options = CpuOptions()
            loaded = _build.build_cpu(source, options, "weft_geometry", kind=RUNTIME,
                                      key=_runtime.source_key(source, options))
            for name, (restype, argtypes) in _SIGNATURES.items():
                fn = getattr(loaded, name, None)
                if fn is None:
                    continue
                fn.restype = restype
                fn.argtypes = argtypes
            _lib = loaded
    return _lib


def _attach(module: ctypes.CDLL) -> None:
    attach = getattr(module, "weft_geometry_attach", None)
    if attach is None:
        return
    attach.restype = None
    attach.argtypes = [vp]
    attach(lib().geo_registry())


_build.LOAD_HOOKS.append(_attach)
