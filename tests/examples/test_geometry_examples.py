"""The geometry examples (examples/geometry/) run at a small size and produce sensible results and images."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import weft as wp

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "geometry"))

import dem
import raycast
import sdf_inside


def test_sdf_inside(tmp_path):
    r = sdf_inside.run(res=48, out=str(tmp_path))
    assert r["agreement"] > 0.99
    assert (r["sdf"] < 0).any() and (r["sdf"] > 0).any()
    assert (tmp_path / "sdf_slice.png").stat().st_size > 0


def test_raycast_render(tmp_path):
    r = raycast.run(width=64, height=48, out=str(tmp_path))
    hit = r["depth"] > 0
    assert 0.3 < hit.mean() < 0.95  # the scene fills part of the frame, the sky the rest
    assert r["image"][hit].mean() > r["image"][~hit].mean()  # lit surfaces are brighter than the background
    assert (tmp_path / "raycast.png").stat().st_size > 0


def test_dem_contacts_match_brute_force(tmp_path):
    sim = dem.run(particles=300, frames=8, out=str(tmp_path))
    x = sim.x.numpy()
    assert np.isfinite(x).all()
    assert (x[:, 2] > -sim.radius).all() and (np.abs(x[:, :2]) < sim.box + sim.radius).all()  # stayed in the box
    # one more force pass at the final positions: its contact counts are the pairs closer than a diameter
    sim.grid.build(sim.x, 2.0 * sim.radius)
    p = sim.params
    wp.launch(dem.forces, dim=len(x), inputs=[sim.grid.id, sim.x, sim.v, sim.f, sim.radius, p["k_n"], p["k_d"],
                                              p["k_f"], p["k_mu"], sim.box, sim.contacts])
    d = np.linalg.norm(x[:, None, :].astype(np.float64) - x[None, :, :], axis=2)
    np.fill_diagonal(d, np.inf)
    clear = ~np.any(np.abs(d - 2 * sim.radius) < 1e-5, axis=1)
    assert clear.mean() > 0.9
    np.testing.assert_array_equal(sim.contacts.numpy()[clear], (d < 2 * sim.radius).sum(1)[clear])
    assert len(list(tmp_path.glob("dem_*.png"))) >= 1
