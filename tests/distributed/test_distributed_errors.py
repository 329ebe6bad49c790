"""Bad input across ranks raises the same DistributedError on every rank; a rank that dies or stalls ends the job
with an error instead of a hang (each run is a subprocess with a timeout)."""

from __future__ import annotations

import time

import pytest
from mpi_harness import HERE, mpirun, requires_mpi

pytestmark = requires_mpi
SCRIPT = HERE / "mpi_errors.py"


@pytest.mark.parametrize("mode, text", [
    ("shapes", "the global grid shapes must be the same on every rank"),
    ("halo", "the halo is wider than the local block (axis 0: halo 3 > 2 points)"),
    ("local-shape", "the local array's shape differs from the block + halo"),
    ("fft", "both grid sides must be divisible by the number of ranks (2), got (5, 8)"),
])
def test_bad_input_raises_on_every_rank(mode, text):
    proc = mpirun(SCRIPT, 2, mode, timeout=120)
    for rank in (0, 1):
        lines = [line for line in proc.stdout.splitlines() if line.startswith(f"rank {rank} ")]
        assert lines and "raised" in lines[0] and text in proc.stdout, proc.stdout


def test_a_rank_that_dies_ends_the_job():
    t0 = time.monotonic()
    proc = mpirun(SCRIPT, 2, "dies", timeout=120, env={"WEFT_MPI_TIMEOUT": "20"}, check=False)
    assert proc.returncode != 0
    assert time.monotonic() - t0 < 100
    assert "finished the exchange" not in proc.stdout
    out = (proc.stdout + proc.stderr).lower()
    assert "exit" in out or "no answer" in out, out[-2000:]


def test_a_rank_that_stalls_times_out_and_aborts():
    t0 = time.monotonic()
    proc = mpirun(SCRIPT, 2, "stalls", timeout=120, env={"WEFT_MPI_TIMEOUT": "4"}, check=False)
    assert proc.returncode != 0
    assert time.monotonic() - t0 < 100
    assert "halo exchange (axis 0): no answer from rank(s) 1 within 4 s on rank 0" in proc.stderr, proc.stderr[-3000:]
