"""The optimal-perturbation demo (examples/fluids/optimal_perturbation.py): the optimisation increases the divergence
and respects the RMS bound, its gradient matches finite differences, checkpointed gradients equal the full Tape's,
and the script runs at a tiny size."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import weft as wp

ROOT = Path(__file__).resolve().parents[2]
FLUIDS = ROOT / "examples" / "fluids"
sys.path.insert(0, str(FLUIDS))

import optimal_perturbation as op

N, STEPS = 32, 4  # tiny: the N=32 tile FFT kernels are shared with test_navier_stokes


@pytest.fixture
def deterministic():
    old = wp.config.deterministic
    wp.config.deterministic = True
    yield
    wp.config.deterministic = old


def test_unperturbed_rollout_reproduces_forward_solver():
    """delta_omega = 0: the differentiable solver (per-stage arrays) lands exactly on Y* of NavierStokes2D."""
    problem = op.OptimalPerturbation(n=N, steps=STEPS)
    problem.delta.zero_()
    assert problem.mse() == 0.0


def test_iterations_increase_mse_and_respect_rms_bound():
    problem = op.OptimalPerturbation(n=N, steps=STEPS, lr=0.5, init_fraction=0.15)
    mse_start = problem.mse()
    losses = [problem.iterate() for _ in range(3)]
    mse_end = problem.mse()
    assert mse_start > 0.0
    assert -losses[0] == pytest.approx(mse_start, rel=1e-5)
    assert mse_end > 2.0 * mse_start, (mse_start, losses, mse_end)
    # lr=0.5 pushes delta past the bound: the projection must bring it back onto the RMS ball
    assert problem.delta_rms() <= problem.bound * (1.0 + 1e-5)
    assert problem.delta_rms() == pytest.approx(problem.bound, rel=1e-4)


def test_gradient_matches_finite_differences(deterministic):
    problem = op.OptimalPerturbation(n=N, steps=STEPS, init_fraction=0.2)
    grad = problem.gradient()
    d0 = problem.delta.numpy().copy()

    def loss(d: np.ndarray) -> float:
        problem.delta.assign(d.astype(np.float32))
        return -problem.mse()

    largest = tuple(int(k) for k in np.unravel_index(np.argmax(np.abs(grad)), grad.shape))
    eps = 1e-2
    for ij in (largest, (3, 7)):
        dp, dm = d0.copy(), d0.copy()
        dp[ij] += eps
        dm[ij] -= eps
        fd = (loss(dp) - loss(dm)) / (2.0 * eps)
        assert fd == pytest.approx(float(grad[ij]), rel=2e-2, abs=2e-3 * float(np.abs(grad).max())), ij
    # directional derivative along a random direction: every entry of the gradient at once
    direction = np.random.default_rng(0).standard_normal(d0.shape).astype(np.float32)
    eps = 3e-3
    fd = (loss(d0 + eps * direction) - loss(d0 - eps * direction)) / (2.0 * eps)
    assert fd == pytest.approx(float(np.sum(grad.astype(np.float64) * direction)), rel=1e-2)


def test_checkpointed_gradient_equals_full_tape(deterministic):
    full = op.OptimalPerturbation(n=N, steps=STEPS, init_fraction=0.2)
    ckpt = op.OptimalPerturbation(n=N, steps=STEPS, init_fraction=0.2, checkpoint=True, segment=2)
    assert ckpt.solver.stages is None  # the checkpointed rollout preallocates no per-stage arrays
    np.testing.assert_array_equal(ckpt.gradient(), full.gradient())
    # and one optimiser iteration gives the same perturbation
    full.iterate()
    ckpt.iterate()
    np.testing.assert_array_equal(ckpt.delta.numpy(), full.delta.numpy())


def test_shared_fft_scratch_gradient_equals_per_stage_arrays(deterministic):
    """One set of FFT arrays for every Poisson solve (overwritten stage after stage; the Tape's overwrite check sees
    that no derivative reads them, with no allow_overwrite): the Tape's write-after-write rule routes each gradient
    to the right writer, so the gradient is bitwise the same."""
    full = op.OptimalPerturbation(n=N, steps=STEPS, init_fraction=0.2)
    shared = op.OptimalPerturbation(n=N, steps=STEPS, init_fraction=0.2, share_fft_scratch=True)
    assert shared.solver.stages[0][0][1].spectra is shared.solver.stages[-1][-1][1].spectra
    assert not shared.tape()._allowed
    np.testing.assert_array_equal(shared.gradient(), full.gradient())


def _run_script(name: str, args: list[str], cwd: Path) -> str:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, str(FLUIDS / name), *args], check=False, cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_optimal_perturbation_script_smoke(tmp_path):
    pytest.importorskip("matplotlib")
    pytest.importorskip("tqdm")
    out = tmp_path / "out"
    stdout = _run_script("optimal_perturbation.py", ["--n", str(N), "--steps", "3", "--iters", "2", "--checkpoint",
                                                     "--out", str(out)], tmp_path)
    assert "MSE(Y*, Y~)" in stdout
    assert (out / "loss.png").stat().st_size > 0
    assert (out / "perturbation.png").stat().st_size > 0
