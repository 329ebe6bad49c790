"""Build options for one native module; hashed into the cache key."""

from __future__ import annotations

from dataclasses import dataclass, replace


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
