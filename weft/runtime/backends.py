"""Devices behind one protocol: what the runtime asks of a device, and the CPU's answers.

Every :class:`~weft.runtime.device.Device` carries a backend object (``device.impl``) implementing
:class:`DeviceBackend`: memory (``alloc``, ``to_host``, ``upload``, ``fill``, ``copy``, gradient ``accumulate``),
launches (``launch``, ``launch_backward``), streams and events, synchronisation, graph capture and memory-pool
counters. Arrays, launches, the Tape, streams and capture call these methods instead of asking which device they are
on; :class:`CpuBackend` is below, ``runtime/cuda_backend.py`` holds the CUDA one (over ``weft.cuda``). A new kind of
device is a ``DeviceKind`` member and one more class with these methods (docs/architecture.md, "add a target").

Memory of a backend with ``host_memory`` is ordinary host memory, so its arrays keep a zero-copy NumPy view
(``array._np``); other backends' arrays hold an allocation with a ``ptr``.
"""

from __future__ import annotations

import enum
import functools
import struct
from typing import Protocol

import numpy as np

from .. import abi
from ..errors import Error, LaunchError
from .threads import launch_threads


class DeviceBackend(Protocol):
    """The operations the runtime needs from a kind of device (``stream`` arguments: a weft Stream or None for the
    device's current stream)."""

    host_memory: bool  # arrays are NumPy views of host memory
    synchronous: bool  # a launch has finished when the call returns (its error state can be read at once)
    capture_by_replay: bool  # graph capture records Python closures replayed in order (no native graphs)
    fast_launch: bool  # plain launches of fixed-type kernels may take the cached direct native call
    simt: bool  # threads run in lockstep groups: kernels should give neighbouring threads neighbouring elements
    dlpack_device: int  # the DLPack device type of its memory (kDLCPU = 1, kDLCUDA = 2)
    default_block_dim: int  # block size of a launch that names none (Warp 1.19: 1 on the CPU, 256 on CUDA)
    max_block_dim: int  # the largest block_dim a launch may ask for (0: no limit checked by weft)
    lanes_opt_in: bool  # blocks of more than one lane need wp.config.enable_cpu_blocks (Warp 1.19's CPU rule)
    cuda_driver: bool  # a GPU managed through the CUDA driver: pools, peer access, IPC, profiler (runtime/cuda_api.py)

    # memory
    def alloc(self, device, nbytes: int, pinned: bool): ...
    def to_host(self, arr, stream=None) -> np.ndarray: ...
    def upload(self, arr, host: np.ndarray, stream=None) -> None: ...
    def fill(self, arr, value) -> None: ...
    def copy(self, dest, src, dest_offset: int, src_offset: int, count: int, stream=None) -> None:
        """Copy ``count`` elements (0: all of ``src``, offsets 0) in flattened order, across devices."""
    def accumulate(self, dst, src) -> None: ...
    def copy_adjoint(self, rec) -> None: ...

    # launches
    def launch(self, spec, packed: bytes, dims: tuple, device, block_dim: int, stream, max_blocks: int) -> None: ...
    def launch_backward(self, spec, adj, packed: bytes, dims: tuple, device, block_dim: int, stream,
                        max_blocks: int) -> None: ...

    # streams, events, synchronisation
    def create_stream(self, device, priority: int): ...
    def record_event(self, event, stream) -> None: ...
    def wait_event(self, stream, event) -> None: ...
    def synchronize_stream(self, stream) -> None: ...
    def synchronize_event(self, event) -> None: ...
    def elapsed_time(self, start, end) -> float: ...
    def synchronize(self, device) -> None: ...

    # graph capture
    def capture_begin(self, graph, stream) -> None: ...
    def capture_end(self, graph, stream) -> None: ...
    def capture_launch(self, graph, stream) -> None: ...

    # memory-pool counters
    def pool_used_current(self, device) -> int: ...
    def pool_used_high(self, device) -> int: ...


#: the launch grid as the native entry points read it: 1-4 int64 extents
_DIMS = {n: struct.Struct(f"<{n}q") for n in range(1, 5)}


def finish_entry(status: int, strided, name: str, packed: bytes, dims: bytes, ndim: int, nthreads: int) -> None:
    """Act on the status a CPU entry returned (launch.h, kEntry*): a launch with non-contiguous arrays runs on the
    general instantiation (``strided()`` gives its entry, compiled on first need); a grid the entry cannot index is
    an internal error (check_grid rejects such launches first)."""
    if status == abi.ENTRY_NEEDS_STRIDED:
        status = strided()(packed, dims, ndim, nthreads)
    if status != abi.ENTRY_DONE:
        raise LaunchError(f"internal error: the compiled module of '{name}' cannot run this launch grid "
                          f"(status {status}); please report it")


class CopyAdjoint(enum.Enum):
    """How the backward pass of a recorded ``wp.copy`` moves the destination's gradient (Warp 1.19's rules)."""

    ACCUMULATE = "accumulate"  # src.grad[window] += dest.grad[window], then dest.grad[window] = 0 (consume)
    #: the gradient's values are copied (src.grad[window] = dest.grad[window], nothing consumed): copies between
    #: dtypes (reinterpreted bytes), of structs and of booleans (no addition)
    OVERWRITE = "overwrite"
    #: as OVERWRITE, with a warning: the source and destination overlap in memory, so the copy's gradient cannot be
    #: followed element by element
    OVERLAP = "overlap"


def _window(shape: tuple, offset: int, count: int) -> tuple:
    """Index arrays of the ``count`` elements from flat position ``offset`` (row-major) of an array of ``shape``."""
    return np.unravel_index(np.arange(offset, offset + count), shape)


def backend_for(a, b):
    """The backend that does work between two devices: the one that is not host memory (it can reach both), else
    the first's."""
    ia, ib = a.impl, b.impl
    return ib if ia.host_memory and not ib.host_memory else ia


class CpuBackend:
    """The CPU: host memory (NumPy), synchronous launches on the calling thread plus OpenMP workers, one implicit
    stream, graph capture as a list of recorded launches replayed in order."""

    host_memory = True
    synchronous = True
    capture_by_replay = True
    fast_launch = True
    simt = False  # a thread works through a contiguous chunk (cache lines), not interleaved with its neighbours
    dlpack_device = 1  # kDLCPU
    default_block_dim = 1
    max_block_dim = 1024
    lanes_opt_in = True
    cuda_driver = False

    # ------------------------------------------------------------------ memory
    def alloc(self, device, nbytes: int, pinned: bool):
        raise NotImplementedError("CPU arrays allocate NumPy memory (runtime/array.py aligned_zeros)")

    def to_host(self, arr, stream=None) -> np.ndarray:
        out = arr._np
        if out is None:
            raise ValueError(f"the array of shape {arr.shape} wraps a null pointer (wp.array(ptr=0, ...)): it has no "
                             "memory to read")
        return out

    def upload(self, arr, host: np.ndarray, stream=None) -> None:
        arr._host_np()[...] = host

    def fill(self, arr, value) -> None:
        from .capture import active_capture

        graph = active_capture()
        if graph is not None and graph.device == arr.device:
            # inside wp.ScopedCapture the fill is part of the graph: it runs at every replay, in order
            graph.launches.append(functools.partial(arr._fill_host, value))
            return
        arr._fill_host(value)

    def copy(self, dest, src, dest_offset: int, src_offset: int, count: int, stream=None) -> None:
        d, s = dest._host_np(), src._host_np()
        if count == 0 and d.shape == s.shape:
            np.copyto(d, s)
            return
        count = count or src.size
        trailing = d.shape[dest.ndim:]
        # a 1-D (possibly strided) array is its own flat order; a contiguous one is reshaped without a copy
        dflat = d if dest.ndim == 1 else (d.reshape((-1,) + trailing) if dest.is_contiguous else None)
        sflat = s if src.ndim == 1 else s.reshape((-1,) + trailing)
        if dflat is None:
            raise Error("wp.copy with offsets needs a contiguous destination")
        dflat[dest_offset:dest_offset + count] = sflat[src_offset:src_offset + count]

    def accumulate(self, dst, src) -> None:
        d = dst._host_np()
        d += src._host_np()
        dst._mark_written()

    def copy_adjoint(self, rec) -> None:
        """The gradient of a recorded copy (``tape.CopyAdjoint``): accumulated into the source's window (the
        destination's window consumed), or, for copies between dtypes, of structs or booleans and overlapping copies,
        the destination's gradient values copied there."""
        dest, src = rec.dest, rec.src
        dg, sg = dest.grad._host_np(), src.grad._host_np()
        count = rec.count or src.size
        whole = rec.dest_offset == 0 and rec.src_offset == 0 and count == src.size and dg.shape == sg.shape
        # logical (row-major) element windows of possibly strided views, as index tuples that write through
        dwin = slice(None) if whole else _window(dest.shape, rec.dest_offset, count)
        swin = slice(None) if whole else _window(src.shape, rec.src_offset, count)
        if rec.adjoint is CopyAdjoint.ACCUMULATE:
            sg[swin] += dg[dwin]
            if rec.consume:
                dg[dwin] = 0
            return
        values = np.array(dg[dwin])  # a copy first: the windows may overlap
        if values.dtype != sg.dtype:  # reinterpreted bytes (copies between dtypes of one size)
            values = values.view(sg.dtype).reshape(sg[swin].shape)
        sg[swin] = values

    # ------------------------------------------------------------------ launches
    def launch(self, spec, packed: bytes, dims: tuple, device, block_dim: int, stream, max_blocks: int) -> None:
        # max_blocks limits CUDA blocks only (as in Warp); the CPU grid is split over threads
        dims_b, nthreads = _DIMS[len(dims)].pack(*dims), launch_threads()
        status = spec.fwd(packed, dims_b, len(dims), nthreads)
        if status:  # the entry asks for its strided variant (finish_entry)
            name = spec.kernel.__name__ if spec.kernel is not None else spec.fn.name
            finish_entry(status, spec.strided_fwd, name, packed, dims_b, len(dims), nthreads)

    def launch_backward(self, spec, adj, packed: bytes, dims: tuple, device, block_dim: int, stream,
                        max_blocks: int) -> None:
        dims_b, nthreads = _DIMS[len(dims)].pack(*dims), launch_threads()
        status = adj.bwd(packed, dims_b, len(dims), nthreads)
        if status:
            finish_entry(status, adj.strided_bwd, adj.name, packed, dims_b, len(dims), nthreads)

    # ------------------------------------------------------------------ streams, events, synchronisation
    def create_stream(self, device, priority: int):
        return None  # one implicit synchronous stream

    def record_event(self, event, stream) -> None:
        pass  # launches are synchronous: an event is complete when recorded

    def wait_event(self, stream, event) -> None:
        pass

    def synchronize_stream(self, stream) -> None:
        pass

    def synchronize_event(self, event) -> None:
        pass

    def elapsed_time(self, start, end) -> float:
        return (end._time - start._time) * 1000.0

    def synchronize(self, device) -> None:
        pass

    # ------------------------------------------------------------------ graph capture
    def capture_begin(self, graph, stream) -> None:
        pass  # launches, fills and copies append themselves to graph.launches while the capture is active

    def capture_end(self, graph, stream) -> None:
        pass

    def capture_launch(self, graph, stream) -> None:
        graph.replay()

    # ------------------------------------------------------------------ memory-pool counters
    def pool_used_current(self, device) -> int:
        return 0

    def pool_used_high(self, device) -> int:
        return 0
