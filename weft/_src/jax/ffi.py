"""``warp._src.jax.ffi``: the public wrappers are weft's (``jax_kernel``, ``jax_callable``, the mode enums);
``register_ffi_callback`` registers a Python function as an XLA FFI target that receives raw FFI buffers, which
weft's host-callback wrappers have no counterpart of."""

from __future__ import annotations

from ...interop.jax_ffi import (  # noqa: F401
                                JaxCallableGraphMode,
                                JaxModulePreloadMode,
                                clear_jax_callable_graph_cache,
                                jax_callable,
                                jax_kernel,
)
from .._unsupported import unsupported

GraphMode = JaxCallableGraphMode
ModulePreloadMode = JaxModulePreloadMode

register_ffi_callback = unsupported(
    "warp._src.jax.ffi.register_ffi_callback", "weft runs JAX interop through host callbacks (jax.pure_callback), "
    "not XLA FFI targets; use wp.jax_callable for a Python function of weft launches")
