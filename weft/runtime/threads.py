"""How many CPU threads a launch asks for: ``wp.config.num_threads``, or on a busy machine only the free cores.

An OpenMP launch ends at a barrier that waits for its slowest thread; when another process holds a core, the thread
there runs only when the scheduler gives it a turn, and the whole launch waits (measured on 2 shared cores: a saxpy
launch 10-20x slower on 2 threads than on 1). So with ``num_threads == 0`` and ``load_aware_threads`` on, a launch
runs on the cores the machine's other runnable tasks leave free, counted from ``/proc/loadavg`` (its fourth field,
runnable tasks now) less this process's own runnable threads (``/proc/self/task``: OpenMP workers still spinning
after the previous launch are no competition), re-read at most every ``load_check_interval`` seconds.

The chosen count is kept in ``state`` with the time it is good until (forever for a fixed count; setting one of
config's thread options resets it), so a launch reads it inline: ``n if monotonic() < until else launch_threads()``.
"""

from __future__ import annotations

import os
from math import inf
from time import monotonic

from .. import config

#: (until, count): the thread count chosen last and the monotonic time it is good until (the launch paths read it)
state: tuple[float, int] = (0.0, 0)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _machine_cores() -> int:
    return os.cpu_count() or 1


def runnable_tasks() -> int | None:
    """Tasks runnable on the machine now (running or waiting for a core), or None where it cannot be read."""
    try:
        with open("/proc/loadavg", "rb") as f:
            return int(f.read().split()[3].split(b"/")[0])
    except (OSError, IndexError, ValueError):
        return None


def own_runnable_tasks() -> int:
    """This process's threads that are runnable now (the caller among them): right after a launch the OpenMP
    workers still spin for a moment (``GOMP_SPINCOUNT``) and count as runnable, but they are no competition."""
    count = 0
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return 1
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        state = stat[stat.rfind(b")") + 2:stat.rfind(b")") + 3]
        count += state == b"R"
    return max(1, count)


def free_core_threads(cores: int, runnable: int | None, own: int = 1, machine_cores: int | None = None) -> int:
    """The thread count for ``cores`` cores with ``runnable`` tasks runnable, ``own`` of them this process's (the
    caller among them): 0 (all cores, as OpenMP chooses) when no other task competes for them, else the cores left
    free, at least 1. ``machine_cores``: the machine's cores when this process may use only ``cores`` of them (a
    cpuset); the runnable count is machine-wide, so only the share of the other tasks that falls on our cores counts
    (assuming the scheduler spreads them evenly)."""
    if runnable is None:
        return 0
    others = runnable - own
    if machine_cores and machine_cores > cores:
        others = (others * cores) // machine_cores
    if others <= 0:
        return 0
    return max(1, cores - others)


def launch_threads() -> int:
    """The ``nthreads`` a CPU launch passes to native code (0: OpenMP's default). The launch paths call it only when
    ``state`` has run out (see the module's docstring)."""
    global state
    if monotonic() < state[0]:
        return state[1]
    if config.deterministic:
        state = (inf, 1)
    elif config.num_threads or not config.load_aware_threads:
        state = (inf, config.num_threads)
    else:
        state = (monotonic() + config.load_check_interval, _read_load())
    return state[1]


def _read_load() -> int:
    runnable = runnable_tasks()
    # this process's own runnable threads are counted only when something else might be running (a cheap test first)
    own = own_runnable_tasks() if runnable is not None and runnable > 1 else 1
    return free_core_threads(_cores(), runnable, own, _machine_cores())


def reset() -> None:
    """Forget the chosen thread count (the next launch chooses again): called when a thread option of config
    changes."""
    global state
    state = (0.0, 0)


config.on_thread_option_change.append(reset)
