"""weft.distributed on 1 and 2 MPI ranks: halo exchange (dtypes, widths, walls, 1-3-D), gather, reductions and
the slab FFT against NumPy (``mpi_basic.py``, run under mpirun)."""

from __future__ import annotations

import pytest
from mpi_harness import HERE, last_json, mpirun, requires_mpi

pytestmark = requires_mpi


@pytest.mark.parametrize("ranks", [1, 2])
def test_basic_operations_match_numpy(ranks):
    result = last_json(mpirun(HERE / "mpi_basic.py", ranks))
    failed = [k for k, ok in result.items() if not ok]
    assert not failed, f"failed on {ranks} rank(s): {failed}"
    assert len(result) == 9
