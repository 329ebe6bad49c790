"""The CUDA backend: driver API through ``cuda-bindings`` (devices, memory, streams, graphs, launches).

Optional: everything here is imported lazily by ``weft.runtime`` and only when a CUDA device is asked for or
found; without the ``cuda`` extra, a driver or a GPU, weft runs on the CPU and ``"cuda"`` devices are absent.
One small module per concern: driver (init, devices, contexts, errors), memory (pool allocations, pinned host
memory, copies, fills), streams (streams and events), graphs (stream capture), launch (modules and kernels).
"""
