"""Activity timing (Warp's ``wp.timing_begin`` / ``timing_end`` / ``timing_print``): every kernel launch, copy, fill
and graph replay between the two calls, with the device it ran on and its elapsed milliseconds.

Warp times CUDA work only (CPU work gives no results). weft times both: work on a synchronous device (the CPU) is
timed around the call, which returns when the work is done; work on a CUDA device between two timing events recorded
on its stream, read when timing ends. Nothing is timed inside a graph capture (the work runs at replay) or inside a
graph replay (the replay is one activity, ``TIMING_GRAPH``, as a CUDA graph launch is in Warp).

The hooks cost nothing while timing is off: ``timing_begin`` puts timed versions of the device backends' methods
(``launch``, ``launch_backward``, ``copy``, ``upload``, ``to_host``, ``fill``, ``accumulate``, ``capture_launch``)
on the backend objects and ``timing_end`` removes them. The CPU launch fast paths, which call the compiled entry
without the backend, check :data:`active` (one flag test per launch) and take the backend's path while it is set.
"""

from __future__ import annotations

import time

from . import device as D
from .capture import active_capture
from .streams import Event, get_stream
from .streams import synchronize as sync_all

TIMING_KERNEL = 1
"""User kernel launches (forward and backward)."""
TIMING_KERNEL_BUILTIN = 2
"""weft's own kernels and array operations that run as kernels in Warp (gradient accumulation)."""
TIMING_MEMCPY = 4
"""Copies: ``wp.copy``, arrays made from host data, reads of device memory to the host."""
TIMING_MEMSET = 8
"""Fills: ``array.zero_()``, ``array.fill_()``."""
TIMING_GRAPH = 16
"""Graph replays (``wp.capture_launch``)."""
TIMING_ALL = 0xFFFFFFFF
"""Every kind of activity."""

#: True between timing_begin and timing_end (the launch fast paths step aside while it is set)
active = False

_BUILTIN_MODULES = ("weft.runtime", "weft.utils", "weft.geometry")
_HOOKED = ("launch", "launch_backward", "copy", "upload", "to_host", "fill", "accumulate", "capture_launch")


class TimingResult:
    """One timed activity: ``device``, ``name`` (``"forward kernel saxpy"``, ``"memcpy HtoD"``, ``"memset"``,
    ``"graph"``...), ``filter`` (its ``TIMING_*`` flag) and ``elapsed`` (milliseconds)."""

    __slots__ = ("device", "elapsed", "filter", "name")

    def __init__(self, device, name: str, filter: int, elapsed: float):
        self.device = device
        self.name = name
        self.filter = filter
        self.elapsed = elapsed

    def __repr__(self) -> str:
        return f"TimingResult({self.device}, {self.name!r}, filter={self.filter}, elapsed={self.elapsed:.6f} ms)"


class _Session:
    def __init__(self, flags: int):
        self.flags = flags
        self.records: list = []  # [device, name, flag, elapsed ms or (start event, end event)]
        self.replaying = 0  # inside a graph replay: its parts are not separate activities
        self.hooked: list = []  # backend objects carrying timed methods


_session: _Session | None = None


def _kernel_label(spec, direction: str) -> tuple[int, str]:
    kernel = spec.kernel
    name = kernel.__name__ if kernel is not None else spec.fn.name
    module = getattr(getattr(kernel, "func", None), "__module__", "") or ""
    if module.startswith(_BUILTIN_MODULES):
        suffix = "" if direction == "forward" else f" ({direction})"
        return TIMING_KERNEL_BUILTIN, f"builtin kernel {name}{suffix}"
    return TIMING_KERNEL, f"{direction} kernel {name}"


def _copy_label(dest_device, src_device) -> tuple[object, str]:
    src = "H" if src_device.impl.host_memory else "D"
    dst = "H" if dest_device.impl.host_memory else "D"
    device = dest_device if dst == "D" or src == "H" else src_device
    return device, f"memcpy {src}to{dst}"


def _timed(device, flag: int, name: str, stream, run):
    """Run ``run()`` and record it as an activity when timing wants ``flag`` and no capture or replay holds it."""
    s = _session
    if s is None or not (s.flags & flag) or s.replaying:
        return run()
    graph = active_capture()
    if graph is not None and graph.device == device:
        return run()  # captured: the work runs when the graph is replayed
    if device.impl.synchronous:
        t0 = time.perf_counter()
        out = run()
        s.records.append([device, name, flag, (time.perf_counter() - t0) * 1000.0])
        return out
    st = stream if stream is not None else get_stream(device)
    start, end = Event(device, enable_timing=True), Event(device, enable_timing=True)
    st.record_event(start)
    out = run()
    st.record_event(end)
    s.records.append([device, name, flag, (start, end)])
    return out


def _hook(impl) -> None:
    cls = type(impl)

    def launch(spec, packed, dims, device, block_dim, stream, max_blocks):
        flag, name = _kernel_label(spec, "forward")
        return _timed(device, flag, name, stream,
                      lambda: cls.launch(impl, spec, packed, dims, device, block_dim, stream, max_blocks))

    def launch_backward(spec, adj, packed, dims, device, block_dim, stream, max_blocks):
        flag, name = _kernel_label(spec, "backward")
        return _timed(device, flag, name, stream,
                      lambda: cls.launch_backward(impl, spec, adj, packed, dims, device, block_dim, stream,
                                                  max_blocks))

    def copy(dest, src, dest_offset, src_offset, count, stream=None):
        device, name = _copy_label(dest.device, src.device)
        return _timed(device, TIMING_MEMCPY, name, stream,
                      lambda: cls.copy(impl, dest, src, dest_offset, src_offset, count, stream))

    def upload(arr, host, stream=None):
        name = "memcpy HtoH" if arr.device.impl.host_memory else "memcpy HtoD"
        return _timed(arr.device, TIMING_MEMCPY, name, stream, lambda: cls.upload(impl, arr, host, stream))

    def to_host(arr, stream=None):
        if arr.device.impl.host_memory:  # a view of the array's own memory: nothing is copied
            return cls.to_host(impl, arr, stream)
        return _timed(arr.device, TIMING_MEMCPY, "memcpy DtoH", stream, lambda: cls.to_host(impl, arr, stream))

    def fill(arr, value):
        return _timed(arr.device, TIMING_MEMSET, "memset", None, lambda: cls.fill(impl, arr, value))

    def accumulate(dst, src):
        return _timed(dst.device, TIMING_KERNEL_BUILTIN, "builtin kernel accumulate", None,
                      lambda: cls.accumulate(impl, dst, src))

    def capture_launch(graph, stream):
        s = _session

        def replay():
            if s is not None:
                s.replaying += 1
            try:
                return cls.capture_launch(impl, graph, stream)
            finally:
                if s is not None:
                    s.replaying -= 1

        return _timed(graph.device, TIMING_GRAPH, "graph", stream, replay)

    for fn in (launch, launch_backward, copy, upload, to_host, fill, accumulate, capture_launch):
        setattr(impl, fn.__name__, fn)


def _unhook(impl) -> None:
    for name in _HOOKED:
        impl.__dict__.pop(name, None)


def timing_begin(cuda_filter: int = TIMING_ALL, synchronize: bool = True) -> None:
    """Start recording activities of the kinds in ``cuda_filter`` (``TIMING_*`` flags, or-ed) on every device, the
    CPU included; ``synchronize`` first waits for work already queued. A second ``timing_begin`` restarts."""
    global _session, active
    if not isinstance(cuda_filter, int) or isinstance(cuda_filter, bool):
        raise TypeError(f"timing_begin: cuda_filter must be an int of TIMING_* flags, got {cuda_filter!r}")
    if synchronize:
        sync_all()
    if _session is not None:
        _end_session()
    s = _Session(int(cuda_filter))
    seen = set()
    for dev in D.get_devices():
        impl = dev.impl
        if id(impl) not in seen:
            seen.add(id(impl))
            _hook(impl)
            s.hooked.append(impl)
    _session = s
    active = True


def _end_session() -> _Session | None:
    global _session, active
    s = _session
    _session = None
    active = False
    if s is not None:
        for impl in s.hooked:
            _unhook(impl)
    return s


def timing_end(synchronize: bool = True) -> list[TimingResult]:
    """Stop recording and return the activities since :func:`timing_begin`, in the order they were issued
    (``[]`` when timing was not started). ``synchronize`` waits for queued work first, so every CUDA activity has
    finished; if that raises, timing still ends and its results are discarded."""
    if synchronize:
        try:
            sync_all()
        except Exception:
            _end_session()
            raise
    s = _end_session()
    if s is None:
        return []
    out = []
    for device, name, flag, elapsed in s.records:
        if isinstance(elapsed, tuple):
            start, end = elapsed
            end.synchronize()
            elapsed = start.elapsed_time(end)
        out.append(TimingResult(device, name, flag, float(elapsed)))
    return out


def timing_print(results: list[TimingResult], indent: str = "") -> None:
    """Print ``results`` as Warp does: the timeline, then totals per activity name and per device."""
    if not results:
        print("No activity")
        return
    width = max(len("Activity"), *(len(r.name) for r in results)) + 1
    rule = f"{indent}----------------+---------+{'-' * width}"
    per_name: dict[str, list] = {}
    per_device: dict[str, list] = {}
    print(f"{indent}Activity timeline:")
    print(rule)
    print(f"{indent}Time            | Device  | Activity")
    print(rule)
    for r in results:
        alias = getattr(r.device, "alias", str(r.device))
        for table, key in ((per_name, r.name), (per_device, alias)):
            agg = table.setdefault(key, [0, 0.0])
            agg[0] += 1
            agg[1] += r.elapsed
        print(f"{indent}{r.elapsed:12.6f} ms | {alias:7s} | {r.name}")
    for title, column, table in (("Activity summary", "Activity", per_name), ("Device summary", "Device", per_device)):
        print()
        print(f"{indent}{title}:")
        print(rule)
        print(f"{indent}Total time      | Count   | {column}")
        print(rule)
        for key, (count, total) in table.items():
            print(f"{indent}{total:12.6f} ms | {count:7d} | {key}")
