"""``weft.distributed``: weft arrays on MPI (through mpi4py) - domain decomposition, halo exchange, reductions,
gathering and a slab-decomposed 2-D FFT, all differentiable where they move data that gradients flow through.

Install with ``pip install 'weft-lang[mpi]'`` and run with ``mpirun -n 4 python script.py``. Every operation is
collective over the decomposition's communicator; arguments are checked across ranks (every rank raises the same
:class:`DistributedError`), and every wait has a deadline (``WEFT_MPI_TIMEOUT``, default 120 s), so a rank that
dies or stops answering ends the job with an error instead of a hang. See ``docs/distributed.md``.
"""

from ._mpi import CommStats, DistributedError, Transport, comm_stats, cuda_aware, reset_comm_stats, transport_for
from .channel import alltoall
from .collectives import ReduceOp, allreduce, gather, global_reduce, global_sum
from .decomp import Decomposition, decompose
from .fft import FFTBuffers, SlabFFT2D
from .halo import HaloExchange, halo_exchange

__all__ = [
    "CommStats", "Decomposition", "DistributedError", "FFTBuffers", "HaloExchange", "ReduceOp", "SlabFFT2D",
    "Transport", "allreduce", "alltoall", "comm_stats", "cuda_aware", "decompose", "gather", "global_reduce",
    "global_sum", "halo_exchange", "reset_comm_stats", "transport_for",
]
