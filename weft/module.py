"""Warp's module objects (``wp.get_module(name)``): a name, its options dict and ``load``.

weft compiles every kernel as its own unit, so a "module" is only the set of options shared by the kernels
defined in one Python module (or declared with ``@wp.kernel(module=name)``) plus a way to compile them now.
"""

from __future__ import annotations

import sys


class Module:
    """The kernels of one Python module (or one ``module=`` name) and their shared options."""

    def __init__(self, name: str):
        from .kernel import _module_options, get_module_options

        self.name = name
        self.options = _module_options.setdefault(name, {})
        for key, value in get_module_options(name).items():  # Warp's module options always hold every key
            self.options.setdefault(key, value)

    def kernels(self) -> list:
        """The kernels defined in this module that are still alive."""
        from .kernel import Kernel

        mod = sys.modules.get(self.name)
        return [v for v in vars(mod).values() if isinstance(v, Kernel)] if mod is not None else []

    def load(self, device=None, block_dim=None) -> Module:
        """Compile the module's non-generic kernels now (several in parallel)."""
        from .kernel import compile_kernels

        compile_kernels(self.kernels())
        return self

    def mark_modified(self) -> None:
        """Nothing to do: weft notices source changes per kernel by itself."""

    def __repr__(self) -> str:
        return f"Module({self.name!r})"


_MODULES: dict[str, Module] = {}


def get_module(name: str) -> Module:
    """The module object for ``name`` (created on first use)."""
    mod = _MODULES.get(name)
    if mod is None:
        mod = _MODULES[name] = Module(name)
    return mod


def is_cpu_available() -> bool:
    """The CPU device is always available (it needs only a C++ compiler, checked on first compile)."""
    return True
