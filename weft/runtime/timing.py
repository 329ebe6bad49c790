"""``wp.ScopedTimer``: wall-clock timing of a block (optionally synchronising the devices around it)."""

from __future__ import annotations

import cProfile
import pstats
import sys
import time

from .activity import timing_begin, timing_end, timing_print
from .streams import synchronize


class ScopedTimer:
    """Times a block; prints ``name took X ms`` unless ``print=False`` (elapsed in ``.elapsed``, ms). With
    ``detailed=True`` the block also runs under Python's profiler (cProfile), whose report is printed first. With
    ``cuda_filter`` (``wp.TIMING_*`` flags) the block's activities are timed (``wp.timing_begin`` / ``timing_end``,
    CPU and CUDA) into ``.timing_results`` and, when printing, reported by ``report_func`` (``wp.timing_print``)."""

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
        self.cuda_filter = cuda_filter or 0
        self.report_func = report_func or timing_print
        self.timing_results = []

    def __enter__(self):
        if self.synchronize:
            synchronize()
        if self.active and self.cuda_filter:
            timing_begin(self.cuda_filter, synchronize=not self.synchronize)
        if self.active and self.detailed:  # Python's profiler over the block, its report printed on exit
            self._profile = cProfile.Profile()
            self._profile.enable()
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        if self.synchronize:
            synchronize()
        self.elapsed = (time.perf_counter() - self._t0) * 1000.0
        if self.active and self.cuda_filter:
            self.timing_results = timing_end(synchronize=not self.synchronize)
        if self._profile is not None:
            self._profile.disable()
            pstats.Stats(self._profile, stream=sys.stdout).sort_stats(pstats.SortKey.CUMULATIVE).print_stats()
            self._profile = None
        if self.dict is not None:
            self.dict.setdefault(self.name, []).append(self.elapsed)
        if self.active and self.print:
            if self.timing_results:
                self.report_func(self.timing_results, indent="")
            print(f"{self.name} took {self.elapsed:.2f} ms")
        return False
