"""Gradients across ranks: a wp.Tape through 2 heat steps (halo exchanges), a slab FFT forward and inverse
(all-to-alls) and a global sum, on 2 ranks, against the single-process run and central finite differences."""

from __future__ import annotations

from mpi_harness import HERE, last_json, mpirun, requires_mpi

pytestmark = requires_mpi


def test_distributed_gradient_matches_single_process_and_finite_differences():
    result = last_json(mpirun(HERE / "mpi_autodiff.py", 2))
    assert result["ranks"] == 2
    assert result["grad_norm"] > 0.1
    assert result["loss_rel_diff"] <= 1e-12
    assert result["grad_rel_diff"] <= 1e-12
    assert result["fd_rel_err"] <= 1e-6
