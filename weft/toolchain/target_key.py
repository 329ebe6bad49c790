"""``wp.get_cpu_kernel_cache_key()``: a name for the CPU target weft's kernel cache compiles for.

For archiving a kernel cache between runs (CI caches, containers): two machines with the same key can share
compiled CPU modules. The key combines weft's version, the OS and CPU architecture with a hash of what every cached
CPU module's key depends on besides its source: the compiler (path and version), weft's native headers, the
compile flags and, because weft compiles with ``-march=native``, the host CPU's instruction-set features.
"""

from __future__ import annotations

import platform
import shlex

from .. import __version__ as WEFT_VERSION
from .. import config
from . import cache
from .compiler import find_compiler, host_target
from .options import CpuOptions


def get_cpu_kernel_cache_key(*, cpu_compiler_flags: str | None = None) -> str:
    """A non-empty string naming the CPU compilation target (``"<weft version>-<OS>-<arch>-<hash>"``).

    ``cpu_compiler_flags``: extra compiler flags of the target to name (a string, as on a command line); ``None``
    takes ``wp.config.cpu_compile_flags`` (``WEFT_CXXFLAGS``) at call time. Nothing is compiled and the compiler
    configuration is not changed. Do not parse the result: its format may change between releases."""
    if cpu_compiler_flags is None:
        extra = tuple(config.cpu_compile_flags)
    elif isinstance(cpu_compiler_flags, str):
        extra = tuple(shlex.split(cpu_compiler_flags))
    else:
        raise TypeError(f"cpu_compiler_flags must be a string or None, got {type(cpu_compiler_flags).__name__}")
    cc = find_compiler()
    options = CpuOptions(opt_level=config.optimization_level, extra=extra)
    digest = cache.make_key("cpu-target", cc.path, cc.version, cache.headers_digest(),
                            options.key_flags(cc.is_clang), host_target())[:8]
    return f"{WEFT_VERSION}-{platform.system()}-{platform.machine()}-{digest}"
