"""examples/distributed/heat_mpi.py: 2-D (2 x 2 ranks) and 3-D (2 x 2 x 1 ranks) decompositions with a wall,
against the one-rank run of the same script and the NumPy float64 reference."""

from __future__ import annotations

import sys

import numpy as np
from mpi_harness import ROOT, mpirun, requires_mpi

pytestmark = requires_mpi
SCRIPT = ROOT / "examples" / "distributed" / "heat_mpi.py"


def test_heat_2d_and_3d_decompositions_match_single_rank_and_numpy(tmp_path):
    sys.path.insert(0, str(SCRIPT.parent))
    import heat_mpi

    n, steps, k = 12, 15, 0.1
    for ranks in (1, 4):
        proc = mpirun(SCRIPT, ranks, "--dim", 2, 3, "--n", n, "--steps", steps, "--k", k, "--walls", 0,
                      "--save", tmp_path / f"r{ranks}")
        assert ("ranks (2, 2)" in proc.stdout and "ranks (2, 2, 1)" in proc.stdout) if ranks == 4 else True
    for dim in (2, 3):
        one = np.load(tmp_path / f"r1_{dim}d.npy")
        four = np.load(tmp_path / f"r4_{dim}d.npy")
        ref = heat_mpi.reference(heat_mpi.initial_field((n,) * dim), steps, k, (False,) + (True,) * (dim - 1))
        assert np.abs(four - one).max() <= 1e-14 * np.abs(one).max()
        assert np.linalg.norm(four - ref) / np.linalg.norm(ref) <= 1e-13
