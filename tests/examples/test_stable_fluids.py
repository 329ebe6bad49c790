"""The checkpointed stable-fluids demo (examples/fluids/stable_fluids_checkpoint.py): wp.checkpoint gives the full
Tape's gradient with less memory, the optimisation lowers the density loss, and the script's --small run returns
consistent results."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import weft as wp

ROOT = Path(__file__).resolve().parents[2]
FLUIDS = ROOT / "examples" / "fluids"
sys.path.insert(0, str(FLUIDS))

import stable_fluids_checkpoint as sf


def _u0(n: int, value: float = 0.1):
    u0 = wp.zeros((n, n), dtype=wp.vec2, requires_grad=True)
    rng = np.random.default_rng(0)
    u0.assign((value + 0.05 * rng.standard_normal((n, n, 2))).astype(np.float32))
    return u0


def test_checkpointed_gradient_equals_full_tape():
    sim = sf.StableFluids(n=16, steps=12, jacobi_iters=3)
    u0 = _u0(16)
    loss_full, g_full, rho_full = sim.gradient(u0, checkpoint=False)
    loss_ckpt, g_ckpt, rho_ckpt = sim.gradient(u0, checkpoint=True, segment=4)
    assert np.abs(g_full).max() > 0.0
    np.testing.assert_array_equal(rho_ckpt, rho_full)
    np.testing.assert_array_equal(g_ckpt, g_full)
    assert loss_ckpt == loss_full


def test_checkpoint_uses_less_memory():
    sim = sf.StableFluids(n=16, steps=36, jacobi_iters=3)
    mem_ckpt, g_ckpt = sf.peak_memory(sim, checkpoint=True)
    mem_full, g_full = sf.peak_memory(sim, checkpoint=False)
    np.testing.assert_array_equal(g_ckpt, g_full)
    assert mem_ckpt < 0.5 * mem_full, (mem_ckpt, mem_full)


def test_gradient_matches_finite_differences():
    sim = sf.StableFluids(n=16, steps=8, jacobi_iters=3)
    u0 = _u0(16)
    _, grad, _ = sim.gradient(u0)
    base = u0.numpy().copy()
    direction = np.random.default_rng(1).standard_normal(base.shape).astype(np.float32)

    def loss(u: np.ndarray) -> float:
        u0.assign(u.astype(np.float32))
        sim.forward(u0)
        return float(sim.loss.numpy()[0])

    eps = 1e-3
    fd = (loss(base + eps * direction) - loss(base - eps * direction)) / (2.0 * eps)
    assert fd == pytest.approx(float(np.sum(grad.astype(np.float64) * direction)), rel=2e-2)


def test_stable_fluids_script_small(tmp_path):
    """The script's --small run, asserted on the results main() returns (not on its printout)."""
    pytest.importorskip("matplotlib")
    pytest.importorskip("tqdm")
    out = tmp_path / "out"
    result = sf.main(["--small", "--out", str(out)])
    assert result["same_gradient"] is True
    assert 0.0 < result["mem_checkpoint_mib"] < result["mem_full_mib"]
    losses = result["losses"]
    assert len(losses) == 4 and np.all(np.isfinite(losses))  # 3 iterations + the final forward
    assert result["loss_initial"] == losses[0] and result["loss_final"] == losses[-1]
    assert losses[-1] < losses[0]
    assert (out / "stable_fluids.png").stat().st_size > 0
    assert (out / "stable_fluids_loss.png").stat().st_size > 0
