"""Compile ahead: when a kernel of a Python module has to be compiled, its sibling kernels start compiling too.

A program's first launches otherwise compile one kernel after another, each waiting for the last. The first cold
compile in a module (a kernel whose binary is not in the cache) queues every other non-generic kernel defined in that
module, in definition order, on background threads (one per spare core). Each is compiled exactly as its own first
launch would compile it (same specialisation, same cache entry), so a later launch finds it ready, or waits for the
compile in flight, or, when no thread has reached it yet, compiles it itself. A kernel using tiles is compiled for its
``block_dim`` option, else for the block size of the program's latest tiled launch, else left to its own launch
(the block size is a launch argument: a guess could only waste a compile). Each kernel stays its own compilation unit, so editing one kernel recompiles only that one.

Background compiles never report errors: a kernel that fails to compile raises when (if ever) it is launched.
At interpreter exit, queued compiles are dropped and running ones are waited for (their results go to the cache).
``wp.config.compile_ahead = False`` (or ``WEFT_COMPILE_AHEAD=0``) turns this off.
"""

from __future__ import annotations

import atexit
import os
import queue
import sys
import threading

from . import config
from .pipeline import cpu_options
from .toolchain.build import compiling_ahead, pch_include_dir

_lock = threading.Lock()
_started_modules: set[str] = set()
_queue: queue.Queue = queue.Queue()
_workers: list[threading.Thread] = []
_stopping = threading.Event()


_tile_block_dim = 0  # block_dim of the latest first launch of a kernel (a guess for tile kernels compiled ahead)


def note_tile_block_dim(block_dim: int) -> None:
    global _tile_block_dim
    _tile_block_dim = block_dim


def module_cold(kernel) -> None:
    """Called before ``kernel`` compiles cold: queue the other kernels of its module (once per module)."""
    if not config.compile_ahead:
        return
    name = getattr(kernel.func, "__module__", None)
    module = sys.modules.get(name) if name else None
    if module is None:
        return
    with _lock:
        if name in _started_modules:
            return
        _started_modules.add(name)
    from .kernel import Kernel

    todo = []
    for value in list(vars(module).values()):
        if isinstance(value, Kernel) and value is not kernel and value not in todo and not value._specs:
            todo.append(value)
    if not todo:
        return

    try:  # the precompiled header, needed by every compile after the first, starts building now
        pch_include_dir(_options())
    except Exception:  # noqa: BLE001 - no compiler etc.: the foreground compile reports it
        return
    for k in todo:
        _queue.put((k, config.mode))
    _start_workers()


def claim_modules(names) -> None:
    """Mark Python modules as handled: a caller that compiles exactly the kernels it needs (weft.sim's ``prepare``)
    keeps the other kernels of those modules from compiling ahead for nothing."""
    with _lock:
        _started_modules.update(names)


def _options():
    return cpu_options(config.mode == "debug")


def _start_workers() -> None:
    with _lock:
        alive = [t for t in _workers if t.is_alive()]
        _workers[:] = alive
        want = max(1, (os.cpu_count() or 1) - 1)
        while len(_workers) < want:
            t = threading.Thread(target=_work, name=f"weft-compile-ahead-{len(_workers)}", daemon=True)
            _workers.append(t)
            t.start()


def _work() -> None:
    while not _stopping.is_set():
        try:
            k, mode = _queue.get(timeout=0.5)
        except queue.Empty:
            return
        if _stopping.is_set():
            return
        if mode != config.mode or k._specs:  # the program moved on, or the kernel was already compiled
            continue
        try:
            k.annotations()
            if k._fixed_types is None:  # generic: compiled per argument types at launch
                continue
            with compiling_ahead():
                k.compile_ahead(_tile_block_dim)
        except Exception:  # noqa: BLE001,S112 - reported when (if ever) the kernel is launched
            continue


def wait(timeout: float | None = None) -> None:
    """Block until every queued compile has finished (benchmarks and tests)."""
    with _lock:
        workers = list(_workers)
    for t in workers:
        t.join(timeout)


@atexit.register
def _shutdown() -> None:
    _stopping.set()
    try:
        while True:
            _queue.get_nowait()
    except queue.Empty:
        pass
    for t in _workers:
        t.join(timeout=60)
