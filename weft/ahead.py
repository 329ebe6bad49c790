"""Compile ahead: when a kernel of a Python module has to be compiled, its uncompiled sibling kernels compile with it.

A program's first launches otherwise compile one kernel after another, each waiting for the last and each paying
the compiler's fixed costs. When a kernel compiles cold (its binary is not in the cache), every other non-generic
kernel of the same Python module that has not been compiled yet (defined at its top level, or made inside one of its
functions before this compile, e.g. by a cached factory of tile kernels) is lowered as its own first launch would
lower it (same specialisation, same cache entry), and the cold ones compile together with it:

- with GCC on Linux as batches (weft/toolchain/batch.py): one translation unit per batch, one batch per core, the
  batch holding the launched kernel compiled by the launching thread, the others on background threads; each kernel
  still gets its own library and cache entry, so editing one kernel later recompiles that one alone;
- otherwise each on its own, queued on background threads (one per spare core).

A later launch finds its kernel ready, or waits for the compile in flight. A kernel using tiles is lowered for its
``block_dim`` option, else for the block size of the program's latest tiled launch, else for 1 (a CPU launch's block
size unless ``wp.config.enable_cpu_blocks``, as in Warp 1.19): a launch with another block size compiles it again. Every cold
compile in a module starts a wave with the siblings still uncompiled.

Compiles ahead never report errors: a kernel that fails to lower, or whose batch fails to compile, raises when (if
ever) it is launched, compiled alone. At interpreter exit, queued compiles are dropped and running ones are waited
for (their results go to the cache). ``wp.config.compile_ahead = False`` (or ``WEFT_COMPILE_AHEAD=0``) turns this
off, ``wp.config.batch_compile = False`` keeps compiles ahead but one unit per kernel.
"""

from __future__ import annotations

import atexit
import os
import queue
import sys
import threading
import weakref

from . import config
from .ir.nodes import For, If, Let, While, walk
from .ir.types import TileType, VectorType
from .pipeline import cpu_options
from .toolchain import batch, cache, runtime
from .toolchain.build import compiling_ahead, cpu_key, pch_include_dir

_lock = threading.Lock()
_claimed_modules: set[str] = set()
_failed: weakref.WeakSet = weakref.WeakSet()  # siblings whose lowering failed: not tried again
_queue: queue.Queue = queue.Queue()
_workers: list[threading.Thread] = []
_stopping = threading.Event()


#: Kernels made inside functions (e.g. a cached factory of tile kernels for a grid size), by Python module, in the
#: order made: not attributes of their module, so a wave finds them here (weak references: a dropped kernel goes)
_local_kernels: dict[str, list[weakref.ref]] = {}


def note_local_kernel(kernel) -> None:
    name = getattr(kernel.func, "__module__", None)
    if not name:
        return
    with _lock:
        refs = [r for r in _local_kernels.get(name, ()) if r() is not None]
        refs.append(weakref.ref(kernel))
        _local_kernels[name] = refs


_tile_block_dim = 0  # block_dim of the latest first launch of a kernel (a guess for tile kernels compiled ahead)


def note_tile_block_dim(block_dim: int) -> None:
    global _tile_block_dim
    _tile_block_dim = block_dim


def module_cold(kernel, spec, key: str) -> None:
    """Called (holding ``kernel``'s lock) before ``kernel`` compiles cold (its specialisation ``spec``, cache key
    ``key``): compile the module's other uncompiled kernels with it. Returns when ``kernel``'s batch is compiled
    (or at once when it is not batched: the caller then compiles it alone)."""
    if not config.compile_ahead:
        return
    name = getattr(kernel.func, "__module__", None)
    module = sys.modules.get(name) if name else None
    if module is None:
        return
    with _lock:
        if name in _claimed_modules:
            return
    from .kernel import Kernel

    with _lock:
        local = [k for k in (r() for r in _local_kernels.get(name, ())) if k is not None]
    siblings = []
    for value in [*vars(module).values(), *local]:
        if isinstance(value, Kernel) and value is not kernel and value not in siblings and not value._specs \
                and value not in _failed:
            siblings.append(value)
    prepared = []
    for k in siblings:
        try:
            prep = k.prepare_ahead(_tile_block_dim)
        except Exception:  # noqa: BLE001 - reported when (if ever) the kernel is launched
            _failed.add(k)
            continue
        if prep is not None:
            prepared.append((k, prep))
    options = _options()
    alone = prepared
    if batch.available():  # a batch of the cold ones, with the runtime libraries they need (alone: nothing to do)
        members = [_member(kernel.__name__, spec, key)]
        keys = {}
        for k, s in prepared:
            try:
                keys[k] = k.cpp_key(s)
                members.append(_member(k.__name__, s, keys[k]))
            except Exception:  # noqa: BLE001,S112 - reported at its launch
                continue
        members += _runtime_members([spec, *(s for k, s in prepared if k in keys)], options)
        batches = batch.plan(members, options, os.cpu_count() or 1)
        # from here every batch must run or be released: launches in this process wait for their members
        mine = [b for b in batches if key in {m.key for m in b.members}]
        for b in batches:
            if b not in mine:
                _queue.put(b)
        if len(batches) > len(mine):
            _start_workers()
        for b in mine:
            b.run()
        batched = {m.key for b in batches for m in b.members}
        # the others compile alone, ahead, unless cached (or built by another process: their launch waits for it)
        try:
            alone = [(k, s) for k, s in prepared if keys.get(k) not in batched and not (
                keys.get(k) and cache.lookup("cpu", keys[k], "so"))]
        except Exception:  # noqa: BLE001 - an unusable cache: the launches report it
            return
        for k, s in alone:
            _queue.put(_Alone(k, s, config.mode))
        if alone:
            _start_workers()
        return
    if not prepared:
        return
    try:  # the precompiled header, needed by every compile after the first, starts building now
        pch_include_dir(options)
    except Exception:  # noqa: BLE001 - no compiler etc.: the foreground compile reports it
        return
    for k, s in alone:
        _queue.put(_Alone(k, s, config.mode))
    _start_workers()


def run_batches(batches) -> None:
    """Run batches now, in parallel (the first on this thread), and wait for all."""
    threads = []
    for b in batches[1:]:
        t = threading.Thread(target=b.run, name="weft-compile-batch", daemon=True)
        try:
            t.start()
            threads.append(t)
        except RuntimeError:  # no thread to be had: run it here (it must run or be released)
            b.run()
    if batches:
        batches[0].run()
    for t in threads:
        t.join()


def batch_kernels(kernels) -> None:
    """Compile the cold kernels among ``kernels`` (non-generic, not compiled yet) in batches now, with the runtime
    libraries they need, in parallel (``wp.load_module``, ``wp.compile``, weft.sim's ``prepare``); the caller then
    loads each (compiling alone whatever a batch left out). Silent, like compiles ahead."""
    if not batch.available():
        return
    prepared = []
    for k in kernels:
        try:
            k.annotations()
            prep = k.prepare_ahead(None) if k._fixed_types is not None else None  # tiles: block_dim or 256
        except Exception:  # noqa: BLE001,S112 - the caller's compile reports it
            continue
        if prep is not None:
            prepared.append((k, prep))
    by_debug: dict[bool, list] = {}
    for k, s in prepared:
        try:
            by_debug.setdefault(s.debug, []).append((_member(k.__name__, s, k.cpp_key(s)), s))
        except Exception:  # noqa: BLE001,S112 - the caller's compile reports it
            continue
    for debug, group in by_debug.items():
        options = cpu_options(debug)
        members = [m for m, _ in group] + _runtime_members([s for _, s in group], options)
        run_batches(batch.plan(members, options, os.cpu_count() or 1))


#: ``batch.Member.balance`` of a kernel whose body branches or loops: g++ compiled the seed sphere's such kernels
#: (particle steps and their adjoints, contacts, gathers) at 6-11 us of CPU per character of source, its straight-line
#: ones (elements and their adjoints, whose loop over elements it vectorises) at 21-28 (docs/compile.md)
BRANCHY_BALANCE = 0.4


def _member(name: str, spec, key: str):
    """The batch member of a lowered kernel specialisation, its balance estimated from its IR (``spec._fn``, the
    lowered function with its funcs inlined; 1 when it is not at hand)."""
    fn = getattr(spec, "_fn", None)
    branchy = fn is not None and any(isinstance(s, (If, For, While)) for s in fn.walk())
    return batch.Member(name, spec.source, key, balance=BRANCHY_BALANCE if branchy else 1.0)


def batch_adjoints(items) -> None:
    """Compile in batches now the backward modules that ``kernel.adjoint_of(spec, inactive)`` will need for each
    ``(kernel, spec, inactive)`` of ``items`` and that are not compiled yet (a Tape's first backward, weft.sim's
    ``prepare``). Silent: a module left out, or in a batch that fails, compiles alone when needed, which reports."""
    if not batch.available():
        return
    by_debug: dict[bool, list] = {}
    for kernel, spec, inactive in items:
        try:
            for source in kernel.prepare_adjoint(spec, inactive):
                by_debug.setdefault(spec.debug, []).append(
                    batch.Member(kernel.__name__ + "_adj", source, cpu_key(source, cpu_options(spec.debug))))
        except Exception:  # noqa: BLE001,S112 - reported when the backward module is needed
            continue
    for debug, members in by_debug.items():
        run_batches(batch.plan(members, cpu_options(debug), os.cpu_count() or 1))


def _runtime_members(specs, options) -> list:
    """The runtime libraries (toolchain/runtime.py) the cold kernels of a wave will ask for when loaded and that
    this process has not loaded: the FFT passes of their tile_fft / tile_ifft lengths, compiled in the same batch."""
    if options != runtime.options():  # a debug wave: the libraries are built with release options
        return []
    libs = []
    for spec in specs:
        try:
            stmts = list(walk(spec.fn.body))
        except Exception:  # noqa: BLE001,S112 - no IR (a kernel that does not lower): nothing to add
            continue
        for st in stmts:
            if isinstance(st, Let) and st.call.name in ("tile_fft", "tile_ifft") and st.args:
                t = getattr(st.args[0], "type", None)
                if isinstance(t, TileType) and t.shape and isinstance(t.dtype, VectorType):
                    libs += [lib for lib in runtime.fft_libraries(t.dtype.scalar.ctype, t.shape[-1])
                             if lib not in libs and lib.name not in runtime._loaded]
    # cost: a radix-8 library compiles about as long as a 20k-character kernel module (0.36-0.4 s of g++ CPU)
    return [batch.Member(f"weft_runtime_{lib.name}", lib.source, runtime.key(lib, options), cost=20_000,
                         kind=cache.RUNTIME) for lib in libs]


class _Alone:
    """A kernel compiled ahead as its own unit (no batching)."""

    def __init__(self, kernel, spec, mode):
        self.kernel, self.spec, self.mode = kernel, spec, mode

    def run(self) -> None:
        if self.mode != config.mode:  # the program moved on
            return
        try:
            with compiling_ahead():
                self.kernel.load_prepared(self.spec)
        except Exception:  # noqa: BLE001,S110 - reported when (if ever) the kernel is launched
            pass

    def release(self) -> None:
        pass


def claim_modules(names) -> None:
    """Mark Python modules as handled: a caller that compiles exactly the kernels it needs (weft.sim's ``prepare``)
    keeps the other kernels of those modules from compiling ahead for nothing."""
    with _lock:
        _claimed_modules.update(names)


def _options():
    return cpu_options(config.mode == "debug")


def _start_workers() -> None:
    """Called after queueing jobs. A worker leaves only under ``_lock`` with the queue empty, so a job queued
    before this call is always run (a batch's launches wait for it: a job left in the queue would hang them)."""
    with _lock:
        want = max(1, (os.cpu_count() or 1) - 1)
        while len(_workers) < want:
            t = threading.Thread(target=_work, name=f"weft-compile-ahead-{len(_workers)}", daemon=True)
            _workers.append(t)
            t.start()


def _work() -> None:
    me = threading.current_thread()
    try:
        while not _stopping.is_set():
            try:
                job = _queue.get(timeout=0.5)
            except queue.Empty:
                with _lock:
                    if _queue.empty():
                        _workers.remove(me)
                        me = None
                        return
                continue
            if _stopping.is_set():
                job.release()
                return
            job.run()
    finally:
        if me is not None:
            with _lock:
                if me in _workers:
                    _workers.remove(me)


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
            _queue.get_nowait().release()
    except queue.Empty:
        pass
    for t in _workers:
        t.join(timeout=60)
