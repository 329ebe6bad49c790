"""The CUDA implementation of ``runtime.backends.DeviceBackend``, over the driver-level modules of ``weft.cuda``.

Imported only when CUDA devices are probed (``runtime.device``), so a CPU-only start never loads it. ``weft.cuda``
knows nothing of the runtime: this module wraps its contexts in ``Device`` objects, tells it which stream is current
(``cuda.streams.current_stream_source``), passes element byte patterns and sizes down, and owns the gradient
plumbing (accumulation kernels) that needs weft arrays and launches.
"""

from __future__ import annotations

import numpy as np

from ..cuda import graphs, memory, streams
from ..cuda import launch as cuda_launch
from .backends import CopyAdjoint


def _current_stream(device):
    from .streams import get_stream

    return get_stream(device)._native


def wrap_contexts(contexts: list, device_class, kind) -> list:
    """A ``Device`` per GPU context (``cuda.driver.discover_contexts``), each driven by the CudaBackend."""
    streams.current_stream_source = _current_stream
    backend = CudaBackend()
    return [device_class(alias=f"cuda:{c.ordinal}", name=c.name, ordinal=c.ordinal, backend=c, kind=kind,
                         impl=backend) for c in contexts]


def pinned_empty(shape: tuple[int, ...], dtype) -> np.ndarray:
    """Page-locked host memory pinned with the first GPU's context (ordinary memory without a GPU)."""
    from .device import get_cuda_devices

    cudas = get_cuda_devices()
    return memory.pinned_empty(shape, dtype, cudas[0].backend if cudas else None)


class CudaBackend:
    """A CUDA GPU: stream-ordered pool memory, asynchronous launches on streams, native events and graphs."""

    host_memory = False
    synchronous = False
    capture_by_replay = False
    fast_launch = False
    simt = True  # warps: neighbouring threads reading neighbouring elements coalesce
    default_block_dim = 256
    max_block_dim = 0  # the driver rejects what the GPU cannot run
    lanes_opt_in = False
    dlpack_device = 2  # kDLCUDA
    cuda_driver = True

    # ------------------------------------------------------------------ memory
    def alloc(self, device, nbytes: int, pinned: bool):
        return memory.alloc(device, nbytes, pinned)

    def to_host(self, arr, stream=None) -> np.ndarray:
        return memory.copy_to_host(arr, stream)

    def upload(self, arr, host: np.ndarray, stream=None) -> None:
        memory.copy_from_host(arr, host, stream)

    def fill(self, arr, value) -> None:
        memory.fill(arr, arr._element_bytes(value))
        arr._mark_written()

    def copy(self, dest, src, dest_offset: int, src_offset: int, count: int, stream=None) -> None:
        memory.copy(dest, src, dest_offset, src_offset, count or src.size, stream)

    def accumulate(self, dst, src) -> None:
        """``dst += src`` element-wise, on ``dst``'s device (``src`` is brought there first when it lives elsewhere)."""
        if src.device != dst.device:
            src = src.to(dst.device)
        if dst.size == 0:
            return
        if dst.is_contiguous and src.is_contiguous:
            from .grad_kernels import accumulate_1d
            from .launch import launch

            launch(accumulate_1d, dst.size, inputs=[dst.flatten(), src.flatten()], device=dst.device,
                   record_tape=False)
        else:  # strided gradients: through the host (rare; correct, not fast)
            dst.device.impl.upload(dst, dst.numpy() + src.numpy())
        dst._mark_written()

    def copy_adjoint(self, rec) -> None:
        """``src.grad[range] += dest.grad[range]`` (then zero the destination's range when the copy overwrote it)."""
        dest, src = rec.dest, rec.src
        dg, sg = dest.grad, src.grad
        count = rec.count or src.size
        if rec.adjoint is not CopyAdjoint.ACCUMULATE:  # the gradient's bytes copied, nothing consumed
            self.copy(sg, dg, rec.src_offset, rec.dest_offset, count)
            return
        if rec.dest_offset or rec.src_offset or count != src.size or dg.shape != sg.shape:
            dg = dg.flatten()[rec.dest_offset:rec.dest_offset + count]
            sg = sg.flatten()[rec.src_offset:rec.src_offset + count]
        self.accumulate(sg, dg)
        if rec.consume:
            dg.zero_()

    # ------------------------------------------------------------------ launches
    def launch(self, spec, packed: bytes, dims: tuple, device, block_dim: int, stream, max_blocks: int) -> None:
        cuda_launch.run_forward(spec, packed, dims, device, block_dim, stream=stream, max_blocks=max_blocks)

    def launch_backward(self, spec, adj, packed: bytes, dims: tuple, device, block_dim: int, stream,
                        max_blocks: int) -> None:
        cuda_launch.run_backward(spec, adj, packed, dims, device, block_dim, stream, max_blocks)

    # ------------------------------------------------------------------ streams, events, synchronisation
    def create_stream(self, device, priority: int):
        return streams.create_stream(device, priority)

    def record_event(self, event, stream) -> None:
        streams.record_event(event, stream)

    def wait_event(self, stream, event) -> None:
        streams.wait_event(stream, event)

    def synchronize_stream(self, stream) -> None:
        streams.synchronize_stream(stream)

    def synchronize_event(self, event) -> None:
        streams.synchronize_event(event)

    def elapsed_time(self, start, end) -> float:
        if start._native is not None and end._native is not None:
            return streams.elapsed_time(start, end)
        return (end._time - start._time) * 1000.0

    def synchronize(self, device) -> None:
        streams.synchronize_device(device)

    # ------------------------------------------------------------------ graph capture
    def capture_begin(self, graph, stream) -> None:
        graphs.begin(graph, stream)

    def capture_end(self, graph, stream) -> None:
        graphs.end(graph, stream)

    def capture_launch(self, graph, stream) -> None:
        if graph.native is not None:
            graphs.launch(graph, stream)
        else:
            graph.replay()

    # ------------------------------------------------------------------ memory-pool counters
    def pool_used_current(self, device) -> int:
        return memory.pool_used_current(device)

    def pool_used_high(self, device) -> int:
        return memory.pool_used_high(device)

