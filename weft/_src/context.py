"""``warp._src.context``: the runtime facts, builtin table and helpers Warp's tests read from Warp's private
context module, as far as weft has them.

``runtime`` answers the queries with weft's real state (no MathDx, the CUDA driver version when one is present);
Warp's module builder, hasher and native entry points raise :class:`~weft._src._unsupported.PrivateAPIError`.
"""

from __future__ import annotations

import typing

from .. import init  # noqa: F401
from ..builtins import public_builtins
from ..cuda import driver
from ..module import _MODULES as _module_registry
from ..runtime.device import is_cuda_available
from ..types_compat import type_repr
from ._unsupported import unsupported
from .logger import log_warning  # noqa: F401


class _Core:
    """The subset of Warp's native-library entry points that are facts about the build weft can answer."""

    @staticmethod
    def wp_is_mathdx_enabled() -> bool:
        """weft's tile linear algebra is its own (no MathDx), so never."""
        return False

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


runtime = _Runtime()

#: Warp's registry of the Python modules that define kernels, by module name: weft's own registry (weft.module), so
#: deleting an entry forgets the module as Warp's tests do after loading a deliberately broken one
user_modules = _module_registry

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


_WHY = "Warp's module builder/hasher and native loader; weft compiles each kernel as its own unit (weft.kernel)"
ModuleBuilder = unsupported("warp._src.context.ModuleBuilder", _WHY)
ModuleHasher = unsupported("warp._src.context.ModuleHasher", _WHY)
_smem_shortfall_clause = unsupported("warp._src.context._smem_shortfall_clause",
                                     "Warp's CUDA shared-memory diagnostics text")
