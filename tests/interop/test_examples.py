"""The example under examples/interop: its weft simulation against a float64 reference (values and the gradient torch
sees through it), and its training loop lowering the loss, asserted on the values the functions return."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "interop"
sys.path.insert(0, str(EXAMPLES))

import torch_training as ex


def _reference(v0: torch.Tensor, steps: int, drag: float = 0.05, dt: float = 1.0 / 60.0) -> torch.Tensor:
    """The example's integrator in float64 torch: semi-implicit Euler with gravity and quadratic drag."""
    x = torch.zeros_like(v0)
    v = v0
    g = torch.tensor([0.0, -9.81, 0.0], dtype=v0.dtype)
    for _ in range(steps):
        v = v + (g - drag * torch.linalg.norm(v, dim=1, keepdim=True) * v) * dt
        x = x + v * dt
    return x


def test_simulation_and_gradient_match_float64_reference():
    rng = np.random.default_rng(0)
    v64 = torch.tensor(rng.uniform(-1.0, 1.0, (5, 3)) + [1.0, 5.0, 1.0], dtype=torch.float64, requires_grad=True)
    v32 = v64.detach().float().requires_grad_(True)
    steps = 20
    x = ex.simulate(v32, steps=steps)
    ref = _reference(v64, steps)
    np.testing.assert_allclose(x.detach().numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-5)
    w = torch.tensor(rng.standard_normal((5, 3)))
    (x * w.float()).sum().backward()
    (ref * w).sum().backward()
    assert float(v64.grad.abs().max()) > 0.1
    np.testing.assert_allclose(v32.grad.numpy(), v64.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_training_lowers_the_loss():
    # the example's --small run (40 iterations of 32 random targets): the loss it returns must fall well below the
    # first iteration's (it does by ~10x; random targets make single iterations noisy, so the bound is loose)
    first, last = ex.train(iterations=40, batch=32, steps=60)
    assert np.isfinite(first) and np.isfinite(last)
    assert last < 0.5 * first, (first, last)
