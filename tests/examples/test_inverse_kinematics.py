"""examples/sim/inverse_kinematics.py at a small size: the batched IK converges and writes its plot."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sim" / "inverse_kinematics.py"


def _load():
    spec = importlib.util.spec_from_file_location("inverse_kinematics_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_batched_ik_reaches_every_target(tmp_path):
    result = _load().main(["--arms", "8", "--iters", "150", "--out", str(tmp_path)])
    assert result["start"].min() > 0.05  # the arms start far from their targets
    assert result["final"].max() < 5e-3  # and every tip ends within 5 mm
    losses = np.array(result["losses"])
    assert losses[-1] < 1e-4 * losses[0]
    assert (tmp_path / "inverse_kinematics.png").stat().st_size > 10_000
