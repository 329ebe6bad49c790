"""Distributed 2-D FFT on a slab decomposition: row tile FFTs, an all-to-all transpose, row tile FFTs.

Rank p owns rows [p m0, (p + 1) m0) of the n0 x n1 spatial grid (m0 = n0 / P). The forward transform
1. transforms its m0 rows along axis 1 (weft tile FFTs, ``rows`` rows per tile),
2. packs, for every rank q, the m0 x m1 block of columns q m1 ... (q + 1) m1 - 1 transposed (a weft kernel),
3. exchanges the blocks with one all-to-all,
4. unpacks them into an m1 x n0 slab (rank p now owns columns [p m1, (p + 1) m1), transposed), and
5. transforms those rows along the old axis 0.
The spectrum therefore comes out transposed: ``out[c, k0]`` is the coefficient (k0, p m1 + c). The inverse runs
the same steps backwards. Both are unnormalised (the inverse of the forward is n0 n1 times the input), like
``wp.tile_fft`` / ``wp.tile_ifft``. Every step writes a fresh buffer, so the transform records on a ``wp.Tape``
(the all-to-all's adjoint is the reverse all-to-all).
"""

from __future__ import annotations

import math

import weft as wp

from ..runtime import array as _array
from ._mpi import DistributedError, check_all, check_same, install_excepthook, mpi
from .channel import alltoall
from .kernels import row_fft_kernels, transpose_pack, transpose_unpack

#: rows per tile of the row FFTs (a divisor of the local row count is used)
TILE_ROWS = 16


class FFTBuffers:
    """The intermediate arrays of one forward and one inverse transform (give each differentiable call its own)."""

    def __init__(self, fft: SlabFFT2D, requires_grad: bool = False):
        p, (m0, n1), (m1, n0) = fft.size, fft.local_shape, fft.spectral_shape

        def make(shape):
            return _array.zeros(shape, dtype=fft.dtype, device=fft.device, requires_grad=requires_grad)

        self.rows, self.send, self.recv, self.cols = make((m0, n1)), make((p, m1, m0)), make((p, m1, m0)), \
            make((m1, n0))
        self.irows, self.isend, self.irecv, self.icols = make((m1, n0)), make((p, m0, m1)), make((p, m0, m1)), \
            make((m0, n1))


class SlabFFT2D:
    """A 2-D complex FFT of an ``shape = (n0, n1)`` grid split in row slabs over the ranks of ``comm``.

    Args:
        shape: global grid (n0, n1), both divisible by the number of ranks.
        comm: an mpi4py communicator, or a :class:`Decomposition` (its communicator; a slab decomposition
            ``dims=(P, 1)`` has exactly this layout).
        dtype: ``wp.vec2f`` (complex64) or ``wp.vec2d`` (complex128).
        device: weft device.
        timeout: seconds a wait may take (``WEFT_MPI_TIMEOUT`` by default).

    ``local_shape`` (m0, n1) is the spatial slab a rank passes to :meth:`forward`; ``spectral_shape`` (m1, n0)
    the transposed spectral slab it gets back. Collective (every rank builds it with the same arguments).
    """

    def __init__(self, shape, comm, dtype=wp.vec2f, device=None, timeout: float | None = None):
        MPI = mpi()
        install_excepthook()
        comm = getattr(comm, "comm", comm) if comm is not None else MPI.COMM_WORLD
        n0, n1 = (int(n) for n in shape)
        self.comm, self.size, self.rank = comm, comm.Get_size(), comm.Get_rank()
        self.shape, self.dtype, self.device, self.timeout = (n0, n1), dtype, wp.get_device(device), timeout
        check_same(comm, (n0, n1, 1 if dtype is wp.vec2d else 0), "SlabFFT2D", "shapes and dtypes", timeout)
        check_all(comm, n0 % self.size == 0 and n1 % self.size == 0, "SlabFFT2D",
                  f"both grid sides must be divisible by the number of ranks ({self.size}), got {shape}", timeout)
        if dtype not in (wp.vec2f, wp.vec2d):
            raise DistributedError(f"SlabFFT2D: dtype must be wp.vec2f or wp.vec2d, got {dtype}")
        m0, m1 = n0 // self.size, n1 // self.size
        self.local_shape, self.spectral_shape = (m0, n1), (m1, n0)
        self.row_offset, self.col_offset = self.rank * m0, self.rank * m1
        self._r0, self._r1 = math.gcd(TILE_ROWS, m0), math.gcd(TILE_ROWS, m1)
        self._fft0 = row_fft_kernels(n1, self._r0, dtype)  # rows of the spatial slab
        self._fft1 = row_fft_kernels(n0, self._r1, dtype)  # rows of the transposed slab
        self.buffers = FFTBuffers(self)

    def _rows(self, kernel, rows, per_tile, x, y) -> None:
        wp.launch_tiled(kernel, dim=[rows // per_tile, 1], inputs=[x], outputs=[y], block_dim=64,
                        device=self.device)

    def _transpose(self, x, send, recv, out) -> None:
        wp.launch(transpose_pack, dim=send.shape, inputs=[x], outputs=[send], device=self.device)
        alltoall(self.comm, send, recv, self.timeout)
        wp.launch(transpose_unpack, dim=recv.shape, inputs=[recv], outputs=[out], device=self.device)

    def _check(self, what, x, shape, y, yshape) -> None:
        for name, a, s in (("input", x, shape), ("output", y, yshape)):
            if tuple(a.shape) != s or a.dtype != self.dtype:
                raise DistributedError(f"SlabFFT2D.{what}: {name} must be a {s} array of {self.dtype.__name__}, "
                                       f"got {tuple(a.shape)} of {getattr(a.dtype, '__name__', a.dtype)}")

    def forward(self, x, out, buffers: FFTBuffers | None = None) -> None:
        """``out`` (m1, n0) = this rank's transposed slab of the 2-D FFT of the distributed ``x`` (m0, n1)."""
        self._check("forward", x, self.local_shape, out, self.spectral_shape)
        b = buffers if buffers is not None else self.buffers
        self._rows(self._fft0[0], self.local_shape[0], self._r0, x, b.rows)
        self._transpose(b.rows, b.send, b.recv, b.cols)
        self._rows(self._fft1[0], self.spectral_shape[0], self._r1, b.cols, out)

    def inverse(self, y, out, buffers: FFTBuffers | None = None) -> None:
        """``out`` (m0, n1) = this rank's slab of the unnormalised inverse 2-D FFT of the transposed ``y``."""
        self._check("inverse", y, self.spectral_shape, out, self.local_shape)
        b = buffers if buffers is not None else self.buffers
        self._rows(self._fft1[1], self.spectral_shape[0], self._r1, y, b.irows)
        self._transpose(b.irows, b.isend, b.irecv, b.icols)
        self._rows(self._fft0[1], self.local_shape[0], self._r0, b.icols, out)
