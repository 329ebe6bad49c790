"""The kernels weft.distributed launches, rendered as CUDA and compiled by NVRTC (no GPU, no MPI needed), and the
transport choice for CUDA arrays (CUDA-aware MPI -> device pointers, otherwise staged through pinned memory)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import weft as wp
from weft.distributed import kernels as K
from weft.toolchain import nvrtc


def _lowered_kernels():
    """(kernel, arguments) of every kernel family, with the dtypes the tests and examples use."""
    cases = []  # one representative per kernel template (the others differ in dimension count or dtype only)
    a, b = wp.zeros((3, 3), dtype=float), wp.zeros((1, 3), dtype=float)
    cases += [(K.PACK[2], [a, 0, 0, b]), (K.UNPACK[2], [b, 0, 0, a]), (K.TAKE[2], [a, 0, 0, b, b]),
              (K.ACCUMULATE[2], [b, 0, 0, a])]
    v, vb = wp.zeros((3, 3, 3), dtype=wp.vec3), wp.zeros((1, 3, 3), dtype=wp.vec3)
    cases += [(K.PACK[3], [v, 0, 0, 0, vb]), (K.UNPACK[3], [vb, 0, 0, 0, v])]
    cases.append((K.SUM[2], [wp.zeros((2, 2), dtype=float), wp.zeros(1, dtype=float)]))
    x, s = wp.zeros((4, 8), dtype=wp.vec2f), wp.zeros((2, 4, 4), dtype=wp.vec2f)
    cases += [(K.transpose_pack, [x, s]), (K.transpose_unpack, [s, x])]
    fwd, inv = K.row_fft_kernels(8, 4, wp.vec2f)
    cases += [(fwd, [x, x]), (inv, [x, x])]
    return cases


@pytest.mark.skipif(not nvrtc.is_available(), reason="NVRTC not installed (pip install -e '.[cuda]')")
def test_distributed_kernels_compile_for_cuda():
    from weft import pipeline
    from weft.pipeline import Direction, Target

    for kernel, args in _lowered_kernels():
        block_dim = 64
        spec = kernel.specialize(kernel.infer_types(args), block_dim)
        source = pipeline.render_module(spec.fn, kernel.__name__, False, Target.CUDA, Direction.FORWARD).source
        image = nvrtc.build_cuda(source, nvrtc.NvrtcOptions(arch=80), kernel.__name__)
        assert image[:4] == b"\x7fELF", kernel.__name__
        if kernel in (K.transpose_pack, K.transpose_unpack) or kernel.__name__.startswith("rows_"):
            adjoint = pipeline.render_module(pipeline.differentiate(spec.fn), kernel.__name__, False,
                                             Target.CUDA, Direction.ADJOINT).source
            assert nvrtc.build_cuda(adjoint, nvrtc.NvrtcOptions(arch=80), kernel.__name__)[:4] == b"\x7fELF"


def test_open_mpi_reports_its_cuda_support():
    """The CUDA-awareness query reaches Open MPI's MPIX_Query_cuda_support (this build: not CUDA-aware)."""
    pytest.importorskip("mpi4py")
    import sys

    from mpi4py import MPI

    from weft.distributed._mpi import mpix_query_cuda_support

    if "Open MPI" not in MPI.Get_library_version() or not sys.platform.startswith("linux"):
        pytest.skip("the query is Open MPI's, found through /proc/self/maps")
    assert mpix_query_cuda_support() in (True, False)


class _FakeCudaDevice:
    """A GPU as transport_for sees it: a device whose backend's memory is not host memory."""

    is_cpu = False
    impl = SimpleNamespace(host_memory=False, synchronous=False)


def test_transport_choice(monkeypatch):
    pytest.importorskip("mpi4py")
    from weft.distributed import Transport, transport_for

    cpu = wp.get_device("cpu")
    monkeypatch.delenv("WEFT_MPI_TRANSPORT", raising=False)
    assert transport_for(cpu) is Transport.HOST
    monkeypatch.setenv("WEFT_MPI_CUDA_AWARE", "1")
    assert transport_for(_FakeCudaDevice()) is Transport.DEVICE
    monkeypatch.setenv("WEFT_MPI_CUDA_AWARE", "0")
    assert transport_for(_FakeCudaDevice()) is Transport.STAGED
    monkeypatch.setenv("WEFT_MPI_TRANSPORT", "staged")
    assert transport_for(cpu) is Transport.STAGED
    monkeypatch.setenv("WEFT_MPI_TRANSPORT", "bogus")
    with pytest.raises(wp.Error, match="WEFT_MPI_TRANSPORT"):
        transport_for(cpu)


def test_staged_channel_round_trip(monkeypatch):
    """The staging path (device array -> pinned host copy -> MPI -> host copy -> device array), on CPU arrays."""
    pytest.importorskip("mpi4py")
    from weft.distributed import Transport
    from weft.distributed.channel import Channel

    a = wp.array(np.arange(6, dtype=np.float32).reshape(2, 3), dtype=float)
    ch = Channel(a, Transport.STAGED)
    ch.before_send()
    view = ch.mpi_buffer()[0]
    assert view.nbytes == 24 and np.shares_memory(view, np.asarray(ch.host))
    np.asarray(ch.host)[...] = 7.0
    ch.after_recv()
    assert (a.numpy() == 7.0).all()
    direct = Channel(a, Transport.HOST)
    assert np.shares_memory(direct.mpi_buffer()[0], a.numpy())  # no copy on the host path
