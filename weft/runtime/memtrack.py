"""Allocation tracking (Warp's ``wp.ScopedMemoryTracker``, ``wp.print_memory_report``, ``wp.config.track_memory``).

While tracking is on, every memory allocation of a weft array (CPU or pinned host memory, CUDA device memory) is
recorded with its device, size, what it holds (``array[vec3f, (50, 50)]``), the scope path of the active trackers
(``"simulation/collision"``) and the line of user code that allocated it (the first frame outside weft). Its free is
recorded when the memory itself is released (the last array or view holding it is gone), whether or not tracking is
still on. Per device: allocations made (count, bytes), bytes live, the peak of the live bytes.

The array constructors call :func:`record` after allocating when :data:`on` or ``config.track_memory`` is set: two
attribute tests per allocation while tracking is off.
"""

from __future__ import annotations

import os
import sys
import threading
import weakref

import numpy as np

from .. import config

#: set while a ScopedMemoryTracker (or enable()) has tracking on; config.track_memory turns it on as well
on = False

_WEFT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_lock = threading.Lock()
_local = threading.local()


class _Totals:
    __slots__ = ("count", "current", "peak", "total")

    def __init__(self):
        self.count = 0
        self.total = 0
        self.current = 0
        self.peak = 0


class _Record:
    __slots__ = ("device", "function", "label", "line", "nbytes", "scope", "seq")

    def __init__(self, seq, device, nbytes, label, line, function, scope):
        self.seq = seq
        self.device = device
        self.nbytes = nbytes
        self.label = label
        self.line = line
        self.function = function
        self.scope = scope


_seq = 0
_live: dict[int, _Record] = {}
_totals: dict[str, _Totals] = {}
_scopes: dict[tuple[str, str], list] = {}  # (scope path, device) -> [count, bytes]


def enabled() -> bool:
    """Whether allocations are being recorded now."""
    return on or bool(config.track_memory)


def _scope_stack() -> list:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def push_scope(name: str) -> None:
    _scope_stack().append(str(name))


def pop_scope() -> None:
    stack = _scope_stack()
    if stack:
        stack.pop()


def _caller():
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(_WEFT_DIR):
        frame = frame.f_back
    if frame is None:
        return "<unknown>", "<unknown>"
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}", f"{frame.f_code.co_name}()"


def _label(arr) -> str:
    name = getattr(arr.dtype, "__name__", None) or str(getattr(arr, "_ir", arr.dtype))
    shape = arr.shape[0] if len(arr.shape) == 1 else tuple(arr.shape)
    return f"array[{name}, {shape}]"


def _owner(memory):
    """The object whose lifetime is the allocation's: the base NumPy buffer of host memory, else the device buffer."""
    if isinstance(memory, np.ndarray):
        while isinstance(memory.base, np.ndarray):
            memory = memory.base
    return memory


def record(arr, memory, nbytes: int) -> None:
    """Record the allocation of ``nbytes`` of ``memory`` (a NumPy buffer or a device buffer) for ``arr``."""
    global _seq
    owner = _owner(memory)
    if owner is None or nbytes <= 0:
        return
    line, function = _caller()
    device = str(getattr(arr.device, "alias", arr.device))
    if getattr(arr, "pinned", False) and arr.device.impl.host_memory:
        device += " (pinned)"  # page-locked host memory, counted apart from ordinary CPU memory (as Warp)
    scope = "/".join(_scope_stack())
    with _lock:
        _seq += 1
        key = _seq
        rec = _Record(key, device, int(nbytes), _label(arr), line, function, scope)
        _live[key] = rec
        t = _totals.setdefault(device, _Totals())
        t.count += 1
        t.total += rec.nbytes
        t.current += rec.nbytes
        t.peak = max(t.peak, t.current)
        if scope:
            s = _scopes.setdefault((scope, device), [0, 0])
            s[0] += 1
            s[1] += rec.nbytes
    try:
        weakref.finalize(owner, _freed, key)
    except TypeError:  # an owner without weak references: its free cannot be seen, so it is not tracked
        _forget(key)


def _freed(key: int) -> None:
    with _lock:
        rec = _live.pop(key, None)
        if rec is not None:
            t = _totals.get(rec.device)
            if t is not None:
                t.current -= rec.nbytes


def _forget(key: int) -> None:
    with _lock:
        rec = _live.pop(key, None)
        if rec is not None:
            t = _totals[rec.device]
            t.count -= 1
            t.total -= rec.nbytes
            t.current -= rec.nbytes
            if rec.scope:
                s = _scopes[(rec.scope, rec.device)]
                s[0] -= 1
                s[1] -= rec.nbytes


def reset() -> None:
    """Forget every record (live allocations included: their later frees are ignored)."""
    with _lock:
        _live.clear()
        _totals.clear()
        _scopes.clear()


def current_bytes(device=None) -> int:
    """Live tracked bytes on ``device`` (an alias or Device; all devices when None)."""
    with _lock:
        if device is None:
            return sum(t.current for t in _totals.values())
        t = _totals.get(str(getattr(device, "alias", device)))
        return t.current if t is not None else 0


def peak_bytes(device=None) -> int:
    """Peak of the live tracked bytes on ``device`` (the largest per-device peak when None)."""
    with _lock:
        if device is None:
            return max((t.peak for t in _totals.values()), default=0)
        t = _totals.get(str(getattr(device, "alias", device)))
        return t.peak if t is not None else 0


def live_count() -> int:
    """Tracked allocations not yet freed (all devices)."""
    with _lock:
        return len(_live)


def total_count() -> int:
    """Allocations recorded since the last reset (all devices)."""
    with _lock:
        return sum(t.count for t in _totals.values())


def total_bytes() -> int:
    """Bytes allocated since the last reset (all devices)."""
    with _lock:
        return sum(t.total for t in _totals.values())


def _size(n: int) -> str:
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n} B"


def report_text(sort: str = "size", max_items: int = 10) -> str:
    """The report: totals, peaks and live allocations per device, the scope breakdown, then each device's live
    allocations largest first (``sort="size"``) or oldest first (``"chronological"``), at most ``max_items`` each."""
    if sort not in ("size", "chronological"):
        raise ValueError(f"Invalid sort order {sort!r}; expected 'size' or 'chronological'")
    if not isinstance(max_items, int) or max_items < 0:
        raise ValueError(f"max_items must be a non-negative integer, got {max_items!r}")
    with _lock:
        totals = {d: (t.count, t.total, t.current, t.peak) for d, t in _totals.items()}
        live = list(_live.values())
        scopes = {k: tuple(v) for k, v in _scopes.items() if v[0]}
    if not totals:
        return "Allocation Tracking Report\n  No allocations recorded\n"
    lines = ["Allocation Tracking Report", "  Total allocations:"]
    lines += [f"    {d:16s} {c} ({_size(b)})" for d, (c, b, _, _) in totals.items()]
    lines.append("  Peak usage:")
    lines += [f"    {d:16s} {_size(p)}" for d, (_, _, _, p) in totals.items()]
    lines.append("  Live allocations:")
    for d in totals:
        recs = [r for r in live if r.device == d]
        lines.append(f"    {d:16s} {len(recs)} ({_size(sum(r.nbytes for r in recs))})")
    if scopes:
        lines += ["", "  Scope breakdown:"]
        for path in dict.fromkeys(p for p, _ in scopes):
            lines.append(f"    {path}:")
            lines += [f"      {d}: {c} allocs, {_size(b)}" for (p, d), (c, b) in scopes.items() if p == path]
    order = "by size (largest first)" if sort == "size" else "in allocation order (oldest first)"
    for d in totals:
        recs = [r for r in live if r.device == d]
        if not recs:
            continue
        recs.sort(key=(lambda r: (-r.nbytes, r.seq)) if sort == "size" else (lambda r: r.seq))
        lines += ["", f"  Live {d} allocations {order} (up to {max_items}):"]
        lines += [f"    {_size(r.nbytes)} : {d} : {r.label} : {r.line} : {r.function}"
                  + (f" [{r.scope}]" if r.scope else "") for r in recs[:max_items]]
    return "\n".join(lines) + "\n"


def print_memory_report(file=None, sort: str = "size", max_items: int = 10) -> None:
    """Print the allocation report (see :class:`ScopedMemoryTracker`); tracking must be on
    (``wp.config.track_memory = True`` or inside a ``ScopedMemoryTracker``), else ``RuntimeError``."""
    if sort not in ("size", "chronological"):
        raise ValueError(f"Invalid sort order {sort!r}; expected 'size' or 'chronological'")
    if not enabled():
        raise RuntimeError("Allocation tracking is not active. Set wp.config.track_memory = True, or use "
                           "wp.ScopedMemoryTracker as a context manager.")
    print(report_text(sort, max_items), file=file or sys.stdout, end="")


class ScopedMemoryTracker:
    """Track weft's array allocations inside a block: ``with wp.ScopedMemoryTracker("step") as t:``. Nested trackers
    form scope paths (``"step/collision"``). On exit the report is printed (``print=False``: not; ``report_func``:
    called with its text instead). ``t.report(file, sort, max_items)`` prints it at any time, ``t.clear()`` forgets
    what was recorded so far. ``active=False`` makes the tracker do nothing. Tracking stays on after the block when it
    was on before (``config.track_memory`` or an enclosing tracker)."""

    def __init__(self, name: str = "root", active: bool = True, print: bool = True, report_func=None):
        self.name = name
        self.active = active
        self.print = print
        self.report_func = report_func
        self._did_enable = False

    def __enter__(self):
        global on
        if self.active:
            push_scope(self.name)
            if not on:
                on = True
                self._did_enable = True
        return self

    def __exit__(self, *exc):
        global on
        if not self.active:
            return False
        pop_scope()
        try:
            if self.print:
                self.report()
        finally:
            if self._did_enable:
                on = False
                self._did_enable = False
        return False

    def report(self, file=None, sort: str = "size", max_items: int = 10) -> None:
        """Print (or pass to ``report_func``) the current report."""
        text = report_text(sort, max_items)
        if self.report_func is not None:
            self.report_func(text)
        else:
            print(text, file=file or sys.stdout, end="")

    def clear(self) -> None:
        """Forget every record so far; tracking continues."""
        reset()
