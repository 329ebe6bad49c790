"""Build options for one native module; hashed into the cache key."""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace

#: Linked after the source (GCC on Linux, see CpuOptions.libs): the OpenMP runtime and GCC's static helper library.
#: The C, math and C++ runtime libraries are left out of the link: scanning them (libstdc++'s symbol table above
#: all) was about half of a small kernel's link time, 0.03-0.04 s of CPU per module. Their symbols resolve when the
#: module is loaded, against the interpreter's C and math libraries and the C++ runtime that build.py makes global
#: before the first module loads: the libraries the dynamic loader would pick by the same sonames.
_LEAN_LIBS = ("-nodefaultlibs", "-lgomp", "-lgcc")


def lean_link(is_clang: bool) -> bool:
    """Whether modules link only ``_LEAN_LIBS`` (GCC on Linux; other toolchains link their default libraries)."""
    return not is_clang and sys.platform.startswith("linux")


@dataclass(frozen=True, slots=True)
class CpuOptions:
    opt_level: int = 3
    debug: bool = False
    extra: tuple[str, ...] = ()
    #: compile a kernel module's general (any array layout) instantiation instead of its contiguous one (the
    #: generated entry, backend/renderer.py); weft.h does not read the macro, so both share one precompiled header
    strided: bool = False

    @property
    def header_options(self) -> CpuOptions:
        """The options the precompiled weft.h is built with (the same for both instantiations)."""
        return replace(self, strided=False)

    def flags(self, is_clang: bool) -> list[str]:
        flags = [
            "-std=c++17", f"-O{self.opt_level}", "-march=native", "-fopenmp", "-fPIC", "-shared",
            "-fvisibility=hidden", "-fno-math-errno", "-fno-trapping-math", "-w",
            "-DWEFT_FFT_RUNTIME=1",  # tile FFT passes from weft's runtime library (fft.h, toolchain/runtime.py)
        ]
        if self.debug:
            flags += ["-g"]
        if self.strided:
            flags += ["-DWEFT_STRIDED=1"]
        return flags + list(self.extra)

    def libs(self, is_clang: bool) -> list[str]:
        """Link arguments placed after the source (so static archives resolve its references)."""
        return list(_LEAN_LIBS) if lean_link(is_clang) else []

    def key_flags(self, is_clang: bool) -> str:
        """Everything on the command line that shapes the binary, for cache keys."""
        return " ".join(self.flags(is_clang) + self.libs(is_clang))
