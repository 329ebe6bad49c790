"""The Navier-Stokes demo (examples/fluids) against its NumPy float64 reference, and a smoke run of the script."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

FLUIDS = Path(__file__).resolve().parents[2] / "examples" / "fluids"
sys.path.insert(0, str(FLUIDS))

import navier_stokes as ns
import ns_reference as ref
from sizes import size


def _relative_l2(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def _compare(n: int, steps: int, use_graph: bool = True, poisson: str = "fast") -> float:
    sim = ns.NavierStokes2D(n=n, use_graph=use_graph, poisson=poisson)
    truth = ref.ReferenceSolver(ref.initial_vorticity(n, 42), sim.re, sim.dt)
    for _ in range(steps):
        sim.step()
    truth.run(steps)
    return _relative_l2(sim.vorticity(), truth.omega)


def test_initial_streamfunction_matches_spectral_solve():
    sim = ns.NavierStokes2D(n=32, use_graph=False)
    expected = ref.solve_poisson(ref.initial_vorticity(32, 42))
    assert _relative_l2(sim.psi.numpy(), expected) < 1e-5


@pytest.mark.parametrize("poisson", ["fast", "seed"])
def test_matches_float64_reference_small(poisson):
    assert _compare(n=32, steps=20, poisson=poisson) < 1e-4


@pytest.mark.parametrize("n", [2, 8, 48, 64, 256])
def test_spectral_poisson_matches_numpy(n):
    """The real-to-complex tile-FFT solve (row pairs packed into one complex FFT, N/2 + 1 columns) against NumPy's
    float64 solve, for powers of two and other even sizes."""
    import spectral

    import weft as wp

    omega = ref.initial_vorticity(n, 7, k0=max(1.0, n / 8))
    solver = spectral.SpectralPoisson(n)
    psi = wp.zeros((n, n), dtype=float)
    solver.solve(wp.array(omega.astype(np.float32)), psi)
    expected = ref.solve_poisson(omega)
    if n == 2:  # only the mean and Nyquist modes: compare absolutely
        np.testing.assert_allclose(psi.numpy(), expected, atol=1e-6)
    else:
        assert _relative_l2(psi.numpy(), expected) < 3e-6


def test_spectral_poisson_rejects_odd_sizes():
    import spectral

    with pytest.raises(ValueError, match="even"):
        spectral.SpectralPoisson(33)


def test_graph_replay_equals_eager_steps():
    eager = ns.NavierStokes2D(n=32, use_graph=False)
    graph = ns.NavierStokes2D(n=32, use_graph=True)
    for _ in range(3):
        eager.step()
        graph.step()
    np.testing.assert_array_equal(graph.vorticity(), eager.vorticity())


@pytest.mark.slow
def test_matches_float64_reference_100_steps():
    n = size(small=64, full=128)  # WEFT_TEST_SIZE (tests/sizes.py)
    assert _compare(n=n, steps=100) < 1e-4


def test_example_script_smoke(tmp_path):
    pytest.importorskip("matplotlib")
    pytest.importorskip("imageio")
    pytest.importorskip("tqdm")
    ns.main(["--n", "32", "--steps", "4", "--frames", "2", "--snapshots", "1", "--out", str(tmp_path)])
    assert (tmp_path / "vorticity.gif").stat().st_size > 0
    assert list(tmp_path.glob("vorticity_*.png"))
