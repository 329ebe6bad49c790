"""weft's runtime libraries: native code shared by kernel modules instead of compiled into each of them.

A runtime library is compiled once per machine: its entry lives in the runtime library directory
(``wp.config.runtime_cache_dir``, by default ``~/.cache/weft-runtime``), outside the kernel cache and shared by every
kernel cache, under a key of its source, the native headers, the compiler (path and version), the flags and the CPU
(not weft's version: a release that leaves the native code alone reuses it). Same layout, locks, atomic publication
and trust checks as the kernel cache (cache.RUNTIME). It is loaded with global symbol visibility, so kernel modules that declare its entry point resolve it
when they are loaded. Today: the passes of tile FFTs (see fft.h), one library per scalar type and radix (2, 3, 4, 5,
8 and the generic odd radix), which were most of the compile time of every kernel using ``tile_fft`` /
``tile_ifft``. A kernel module refers only to the passes of its transform lengths, so a program builds only those
(a length-512 transform: the radix-8 library, about 0.4 s of g++ CPU time instead of 1.1 s for all passes).

A kernel module needs a library when the loader reports its entry point as an undefined symbol: the library is then
built or fetched from the cache, loaded, and the module loaded again (build.py).
"""

from __future__ import annotations

import ctypes
import re
import threading
from dataclasses import dataclass

from .. import config

_FFT_TYPES = (("f32", "float"), ("f64", "double"))
_FFT_RADICES = ("2", "3", "4", "5", "8", "g")  # g: the generic odd radix (primes 7..31)
_FFT_ARGS = "int m, int s, const {T}* xr, const {T}* xi, {T}* yr, {T}* yi, const {T}* wr, const {T}* wi"


@dataclass(frozen=True, slots=True)
class RuntimeLibrary:
    name: str
    symbol: str  # its one entry point
    scalar: str  # C++ scalar type of the FFT data
    radix: str

    @property
    def source(self) -> str:
        """The library's C++ source: the entry point running one forward pass of its radix."""
        params = _FFT_ARGS.format(T=self.scalar)
        if self.radix == "g":
            params = "int r, " + params + f", const {self.scalar}* tr, const {self.scalar}* ti"
            call = f"weft::fft::pass_generic<false, {self.scalar}>(r, m, s, xr, xi, yr, yi, wr, wi, tr, ti);"
        else:
            call = f"weft::fft::pass<{self.radix}, false, {self.scalar}>(m, s, xr, xi, yr, yi, wr, wi);"
        return (f"// weft's FFT runtime library ({self.scalar}, radix {self.radix}): one forward pass of tile_fft / "
                "tile_ifft (weft/toolchain/runtime.py, fft.h)\n"
                '#include "weft.h"\n\n'
                f'extern "C" WEFT_EXPORT void {self.symbol}({params}) {{\n    {call}\n}}\n')


LIBRARIES = tuple(RuntimeLibrary(f"fft_{s}_r{r}", f"weft_rt_fft_{s}_r{r}", t, r)
                  for s, t in _FFT_TYPES for r in _FFT_RADICES)
_BY_SYMBOL = {lib.symbol: lib for lib in LIBRARIES}


def fft_libraries(scalar: str, n: int) -> list[RuntimeLibrary]:
    """The libraries a length-``n`` transform of C++ scalar type ``scalar`` calls: the pass kinds of its plan, as
    ``plan_radices`` / ``radix_bits`` in fft.h choose them (radix 8 where possible, 4 to finish, a lone 2 only when
    2 divides n once; 3 and 5 their own passes, other odd primes the generic one). Used to build them with a batch
    of kernels before the first load (weft/ahead.py); a library missed here is still built when the loader asks."""
    if n < 2:
        return []
    rem, e = n, 0
    while rem % 2 == 0:
        e, rem = e + 1, rem // 2
    r8, r4, r2 = e // 3, (e % 3) // 2, (e % 3) % 2
    if r2 and r8 > 0:
        r8, r4, r2 = r8 - 1, r4 + 2, 0
    kinds = {k for k, used in (("8", r8), ("4", r4), ("2", r2)) if used}
    p = 3
    while rem > 1:
        while rem % p == 0:
            kinds.add(str(p) if p in (3, 5) else "g")
            rem //= p
        p += 2
    return [lib for lib in LIBRARIES if lib.scalar == scalar and lib.radix in kinds]

_lock = threading.Lock()
_loaded: dict[str, ctypes.CDLL] = {}


def key(lib: RuntimeLibrary, opts=None) -> str:
    """The library's cache key (kind cache.RUNTIME) for build options ``opts`` (default: ``options()``)."""
    return source_key(lib.source, opts or options())


def source_key(source: str, opts) -> str:
    """The runtime-directory key of a native library built from ``source`` with ``opts``: the source, the native
    headers, the compiler (path and version), the flags and the CPU; not weft's version (also used for the geometry
    library, weft/geometry/native.py)."""
    from . import cache
    from .compiler import find_compiler, host_target

    cc = find_compiler()
    return cache.make_key("runtime", source, cache.headers_digest(), cc.path, cc.version, opts.key_flags(cc.is_clang),
                          host_target())


def options():
    """The build options of every runtime library (those of a release kernel module)."""
    from .options import CpuOptions

    return CpuOptions(opt_level=config.optimization_level, extra=tuple(config.cpu_compile_flags))


def ensure(lib: RuntimeLibrary) -> ctypes.CDLL:
    """The library, loaded globally (compiled first when the cache does not hold it)."""
    loaded = _loaded.get(lib.name)
    if loaded is not None:
        return loaded
    with _lock:
        loaded = _loaded.get(lib.name)
        if loaded is None:
            from . import cache
            from .build import build_cpu

            loaded = build_cpu(lib.source, options(), f"weft_runtime_{lib.name}", mode=ctypes.RTLD_GLOBAL,
                               kind=cache.RUNTIME, key=key(lib))
            _loaded[lib.name] = loaded
    return loaded


def build_all() -> list[str]:
    """Build every runtime library missing from the runtime directory now (batched and split over the cores where
    the toolchain batches, else one by one) and return the names of all of them: what an install step or an image
    build can run ahead so that no program pays for them (``python -m weft --build-runtime``)."""
    import os

    from . import batch, cache

    opts = options()
    members = [batch.Member(f"weft_runtime_{lib.name}", lib.source, key(lib, opts), cost=20_000, kind=cache.RUNTIME)
               for lib in LIBRARIES]
    batches = batch.plan(members, opts, os.cpu_count() or 1)
    threads = [threading.Thread(target=b.run, name="weft-runtime-build", daemon=True) for b in batches[1:]]
    for t in threads:
        t.start()
    if batches:
        batches[0].run()
    for t in threads:
        t.join()
    for lib in LIBRARIES:  # whatever no batch built (none batched, a failed batch, one left alone), and a load check
        ensure(lib)
    return [lib.name for lib in LIBRARIES]


def for_missing_symbol(message: str) -> RuntimeLibrary | None:
    """The library whose entry point a loader error ("undefined symbol: ...") names, if any."""
    found = re.search(r"undefined symbol: (\w+)", message)
    return _BY_SYMBOL.get(found.group(1)) if found else None
