"""weft.distributed on 1, 2 and 4 MPI ranks (4: 2 x 2 and 2 x 2 x 1 rank grids, so corner ghosts come from
diagonal neighbours): halo exchange (dtypes, widths, walls, 1-3-D, corners or faces only), gather, reductions and
the slab FFT against NumPy (``mpi_basic.py``, run under mpirun)."""

from __future__ import annotations

from mpi_harness import HERE, last_json, mpirun, requires_mpi

pytestmark = requires_mpi


def test_basic_operations_match_numpy():
    for ranks in (1, 2, 4):  # in this order: the one-rank run compiles the kernels the others then share
        result = last_json(mpirun(HERE / "mpi_basic.py", ranks))
        failed = [k for k, ok in result.items() if not ok]
        assert not failed, f"failed on {ranks} rank(s): {failed}"
        assert len(result) == 11
