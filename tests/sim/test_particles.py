"""Particle-particle contacts through wp.HashGrid against an all-pairs NumPy reference, and a small granular pile."""

from __future__ import annotations

import numpy as np

import weft as wp
from weft import sim
from weft.sim.forces.particles import eval_particle_forces


def _pair_force(n, v, c, kn, kd, kf, mu):
    vn = n @ v
    fn = c * kn + min(vn, 0.0) * kd
    vt = v - n * vn
    vs = np.linalg.norm(vt)
    if vs > 0.0:
        vt = vt / vs
    ft = min(vs * kf, mu * abs(fn))
    return -n * fn - vt * ft


def _brute_force(x, v, r, kn, kd, kf, mu, cohesion):
    f = np.zeros_like(x)
    for i in range(len(x)):
        for j in range(len(x)):
            if i == j:
                continue
            d = x[i] - x[j]
            dist = np.linalg.norm(d)
            err = dist - r[i] - r[j]
            if err <= cohesion:
                f[i] += _pair_force(d / dist, v[i] - v[j], err, kn, kd, kf, mu)
    return f


def test_hash_grid_contacts_match_brute_force():
    b = sim.ModelBuilder()
    b.add_particle_grid(pos=wp.vec3(0.0, 0.3, 0.0), rot=wp.quat_identity(), vel=wp.vec3(0.0, 0.0, 0.0), dim_x=5,
                        dim_y=4, dim_z=3, cell_x=0.045, cell_y=0.045, cell_z=0.045, mass=0.1, jitter=0.01,
                        radius_mean=0.025, radius_std=0.002)
    m = b.finalize("cpu")
    m.particle_cohesion = 0.002
    s = m.state()
    rng = np.random.default_rng(3)
    s.particle_qd.assign(rng.normal(size=(m.particle_count, 3)).astype(np.float32))
    m.particle_grid.build(s.particle_q, 2.0 * m.particle_max_radius + m.particle_cohesion)
    eval_particle_forces(m, s, s.particle_f)
    ref = _brute_force(s.particle_q.numpy().astype(np.float64), s.particle_qd.numpy().astype(np.float64),
                       m.particle_radius.numpy().astype(np.float64), m.particle_ke, m.particle_kd, m.particle_kf,
                       m.particle_mu, m.particle_cohesion)
    assert np.abs(ref).max() > 1.0  # contacts do happen
    np.testing.assert_allclose(s.particle_f.numpy(), ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


def test_granular_pile_settles_on_the_ground():
    b = sim.ModelBuilder()
    r = 0.05
    b.add_particle_grid(pos=wp.vec3(0.0, 0.2, 0.0), rot=wp.quat_identity(), vel=wp.vec3(0.0, 0.0, 0.0), dim_x=3,
                        dim_y=3, dim_z=3, cell_x=2.2 * r, cell_y=2.2 * r, cell_z=2.2 * r, mass=0.1, jitter=0.002,
                        radius_mean=r)
    m = b.finalize("cpu")
    m.particle_kd, m.soft_contact_kd = 10.0, 10.0
    s0, s1 = m.state(), m.state()
    integ = sim.SemiImplicitIntegrator()
    for k in range(1500):
        if k % 10 == 0:
            m.particle_grid.build(s0.particle_q, 2.0 * r)
        s0.clear_forces()
        integ.simulate(m, s0, s1, 1e-3)
        s0, s1 = s1, s0
    q = s0.particle_q.numpy()
    assert np.all(np.isfinite(q))
    assert q[:, 1].min() > r * 0.8  # nothing sinks through the ground
    d = np.linalg.norm(q[:, None] - q[None], axis=-1) + np.eye(len(q)) * 10
    assert d.min() > 2 * r * 0.9  # nor through each other
    assert np.abs(s0.particle_qd.numpy()).max() < 0.5
