"""Build options for one native module; hashed into the cache key."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CpuOptions:
    opt_level: int = 3
    debug: bool = False
    extra: tuple[str, ...] = ()

    def flags(self, is_clang: bool) -> list[str]:
        flags = [
            "-std=c++17", f"-O{self.opt_level}", "-march=native", "-fopenmp", "-fPIC", "-shared",
            "-fvisibility=hidden", "-fno-math-errno", "-fno-trapping-math", "-w",
            "-DWEFT_FFT_RUNTIME=1",  # tile FFT passes from weft's runtime library (fft.h, toolchain/runtime.py)
        ]
        if self.debug:
            flags += ["-g"]
        return flags + list(self.extra)
