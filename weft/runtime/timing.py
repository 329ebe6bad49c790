"""``wp.ScopedTimer``: wall-clock timing of a block (optionally synchronising the devices around it)."""

from __future__ import annotations

import cProfile
import pstats
import sys
import time

from .streams import synchronize


class ScopedTimer:
    """Times a block; prints ``name took X ms`` unless ``print=False`` (elapsed in ``.elapsed``, ms). With
    ``detailed=True`` the block also runs under Python's profiler (cProfile), whose report is printed first."""

    def __init__(self, name: str = "", active: bool = True, print: bool = True, detailed: bool = False,
                 dict=None, use_nvtx=False, color=None, synchronize=False, cuda_filter=None, report_func=None,
                 skip_tape=False):
        self.name = name
        self.active = active
        self.print = print
        self.elapsed = 0.0
        self.dict = dict
        self.synchronize = synchronize
        self.detailed = detailed
        self._profile = None

    def __enter__(self):
        if self.synchronize:
            synchronize()
        if self.active and self.detailed:  # Python's profiler over the block, its report printed on exit
            self._profile = cProfile.Profile()
            self._profile.enable()
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        if self.synchronize:
            synchronize()
        self.elapsed = (time.perf_counter() - self._t0) * 1000.0
        if self._profile is not None:
            self._profile.disable()
            pstats.Stats(self._profile, stream=sys.stdout).sort_stats(pstats.SortKey.CUMULATIVE).print_stats()
            self._profile = None
        if self.dict is not None:
            self.dict.setdefault(self.name, []).append(self.elapsed)
        if self.active and self.print:
            print(f"{self.name} took {self.elapsed:.2f} ms")
        return False
