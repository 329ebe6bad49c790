"""XPBDIntegrator against closed-form equilibria, the SemiImplicitIntegrator, warp.sim 1.7.2 (stored numbers) and
finite differences."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp
from weft import sim

G = 9.80665


def _run(model, steps, dt, integ, state=None, collide=False, grid=False):
    s0 = model.state() if state is None else state
    s1 = model.state()
    for _ in range(steps):
        s0.clear_forces()
        if grid:
            model.particle_grid.build(s0.particle_q, 2.0 * model.particle_max_radius)
        if collide:
            sim.collide(model, s0)
        integ.simulate(model, s0, s1, dt)
        s0, s1 = s1, s0
    return s0


def test_unconstrained_particles_move_as_symplectic_euler():
    b = sim.ModelBuilder()
    b.add_particle((0.0, 1.0, 0.0), (1.0, 2.0, 0.0), 1.0)
    m = b.finalize("cpu")
    m.ground = False
    n, dt = 50, 0.01
    s = _run(m, n, dt, sim.XPBDIntegrator())
    # velocities come back from position differences, (x_new - x_old) / dt: float32 rounding of x (~1e-6) / dt
    np.testing.assert_allclose(s.particle_qd.numpy()[0], [1.0, 2.0 - n * G * dt, 0.0], atol=5e-3)
    np.testing.assert_allclose(s.particle_q.numpy()[0], [n * dt, 1.0 + 2.0 * n * dt - G * dt * dt * n * (n + 1) / 2,
                                                         0.0], rtol=1e-5, atol=1e-4)


def _chain(n, m, ke, kd, start=None, rest=0.1):
    b = sim.ModelBuilder()
    b.add_particle((0.0, 2.0, 0.0), (0.0, 0.0, 0.0), 0.0)  # the anchor (kinematic)
    for i in range(n):
        y = 2.0 - 0.1 * (i + 1) if start is None else start[i]
        b.add_particle((0.0, y, 0.0), (0.0, 0.0, 0.0), m)
        b.add_spring(i, i + 1, ke, kd, 0)
        b.spring_rest_length[-1] = rest
    model = b.finalize("cpu")
    model.ground = False
    return model


def test_spring_chain_equilibrium_matches_closed_form():
    """One Jacobi sweep per step: at rest, spring s carries t_s = (N - s + 1) m g dt^2 per step and its stretch is
    t_s ((1 + gamma)(w_i + w_j) + alpha) less what the step's prediction already stretched (the top spring)."""
    n, m, ke, kd, dt = 4, 0.1, 1.0e3, 5.0, 1e-3
    model = _chain(n, m, ke, kd)
    s = _run(model, 3000, dt, sim.XPBDIntegrator(iterations=1))
    y = s.particle_q.numpy()[:, 1].astype(np.float64)
    stretch = -np.diff(y) - 0.1
    gamma, alpha = kd / (ke * dt), 1.0 / (ke * dt * dt)
    t = (n - np.arange(n)) * m * G * dt * dt
    ref = t * (2.0 * (1.0 + gamma) / m + alpha)
    ref[0] = t[0] * ((1.0 + gamma) / m + alpha) - (1.0 + gamma) * G * dt * dt
    np.testing.assert_allclose(stretch, ref, rtol=5e-3)
    assert np.abs(s.particle_qd.numpy()).max() < 1e-3
    # (Hooke's law, stretch = tension / ke, is the limit dt -> 0; here the O(dt^2 / m) terms are 12 %)


@pytest.mark.parametrize("iterations", [1, 2, 3])
def test_stiffness_convergence_of_a_hanging_particle(iterations):
    """A particle on a spring from a fixed anchor (no damping). Each sweep removes the fraction w / (w + alpha) of
    the stretch, so the rest stretch is g dt^2 r^n / (1 - r^n) with r = alpha / (w + alpha): m g / ke for one
    sweep, and it goes to zero as ke grows."""
    m, dt = 0.1, 1e-3
    stretches = []
    for ke in (1e2, 1e3, 1e4, 1e5):
        r = (1.0 / (ke * dt * dt)) / (1.0 / m + 1.0 / (ke * dt * dt))
        c = G * dt * dt * r**iterations / (1.0 - r**iterations)
        model = _chain(1, m, ke, 0.0, start=[1.9 - c])
        s = _run(model, 100, dt, sim.XPBDIntegrator(iterations=iterations))
        got = 1.9 - float(s.particle_q.numpy()[1, 1])
        assert got == pytest.approx(c, rel=2e-3, abs=2e-6)
        stretches.append(got)
        if iterations == 1:
            assert got == pytest.approx(m * G / ke, rel=2e-3, abs=2e-6)
    assert stretches == sorted(stretches, reverse=True) and stretches[-1] < 1e-4


def test_hanging_cloth_matches_warp_sim():
    """A cloth of springs and bending edges swinging down from its fixed left edge (2 sweeps): the shape after
    0.5 s against warp.sim 1.7.2's XPBDIntegrator on the same scene (stored)."""
    b = sim.ModelBuilder()
    b.add_cloth_grid(pos=wp.vec3(0.0, 2.0, 0.0), rot=wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0), -0.4 * np.pi),
                     vel=wp.vec3(0.0, 0.0, 0.0), dim_x=8, dim_y=6, cell_x=0.1, cell_y=0.1, mass=0.1, fix_left=True,
                     add_springs=True, spring_ke=1e3, spring_kd=1.0, edge_ke=10.0, edge_kd=0.1)
    m = b.finalize("cpu")
    q = _run(m, 240, 1.0 / 480.0, sim.XPBDIntegrator(iterations=2)).particle_q.numpy().astype(np.float64)
    assert float(q[:, 1].min()) == pytest.approx(1.3820734024047852, abs=1e-4)
    assert float(q[:, 1].mean()) == pytest.approx(1.7237015716613284, abs=1e-5)
    assert float(q[:, 2].mean()) == pytest.approx(-0.4182687035746991, abs=1e-5)
    assert float(np.abs(q).sum()) == pytest.approx(140.33216503285803, abs=5e-3)


def test_soft_body_on_a_sphere_matches_warp_sim():
    """A soft grid dropped on a sphere and the ground (tets, shape and ground contacts, 2 sweeps): final heights
    against warp.sim 1.7.2's XPBDIntegrator on the same scene (stored)."""
    b = sim.ModelBuilder()
    b.add_soft_grid(pos=wp.vec3(0.0, 0.5, 0.0), rot=wp.quat_identity(), vel=wp.vec3(0.5, 0.0, 0.0), dim_x=3,
                    dim_y=3, dim_z=3, cell_x=0.1, cell_y=0.1, cell_z=0.1, density=100.0, k_mu=1e3, k_lambda=1e3,
                    k_damp=0.0)
    b.add_shape_sphere(-1, pos=wp.vec3(0.15, 0.2, 0.15), radius=0.15)
    m = b.finalize("cpu")
    s = _run(m, 200, 1.0 / 480.0, sim.XPBDIntegrator(iterations=2), collide=True)
    q = s.particle_q.numpy()
    assert np.all(np.isfinite(q))
    assert float(q[:, 1].min()) == pytest.approx(WARP_SOFT_MIN_Y, abs=1e-4)
    assert float(q[:, 1].mean()) == pytest.approx(WARP_SOFT_MEAN_Y, abs=1e-4)
    assert float(q[:, 0].mean()) == pytest.approx(WARP_SOFT_MEAN_X, abs=1e-4)


# warp.sim 1.7.2, CPU, the scene of test_soft_body_on_a_sphere_matches_warp_sim
WARP_SOFT_MIN_Y = 0.0999993085861206
WARP_SOFT_MEAN_Y = 0.20777450501918793
WARP_SOFT_MEAN_X = 0.3103710412979126


def test_ground_restitution():
    """A ball hitting the ground with restitution e leaves it at e times its approach speed."""
    b = sim.ModelBuilder()
    b.add_particle((0.0, 0.2, 0.0), (0.0, -2.0, 0.0), 1.0, radius=0.1)
    m = b.finalize("cpu")
    m.soft_contact_restitution = 0.5
    integ = sim.XPBDIntegrator(iterations=2, enable_restitution=True)
    dt = 1e-3
    s0, s1 = m.state(), m.state()
    v_in = v_out = None
    for _ in range(200):
        integ.simulate(m, s0, s1, dt)
        v0, v1 = float(s0.particle_qd.numpy()[0, 1]), float(s1.particle_qd.numpy()[0, 1])
        if v_in is None and v0 < 0.0 <= v1:
            v_in, v_out = v0, v1
        s0, s1 = s1, s0
    assert v_in is not None
    assert v_out == pytest.approx(-0.5 * v_in, rel=0.02)


def test_granular_pile_does_not_interpenetrate():
    r = 0.05
    b = sim.ModelBuilder()
    b.add_particle_grid(pos=wp.vec3(0.0, 0.1, 0.0), rot=wp.quat_identity(), vel=wp.vec3(0.0, 0.0, 0.0), dim_x=3,
                        dim_y=3, dim_z=3, cell_x=2.05 * r, cell_y=2.05 * r, cell_z=2.05 * r, mass=0.1, jitter=0.01,
                        radius_mean=r)
    m = b.finalize("cpu")
    m.particle_mu = 0.3
    s = _run(m, 300, 1.0 / 600.0, sim.XPBDIntegrator(iterations=4), grid=True)
    x = s.particle_q.numpy().astype(np.float64)
    d = np.linalg.norm(x[:, None] - x[None], axis=-1) + np.eye(len(x))
    assert d.min() > 2 * r - 0.01
    assert x[:, 1].min() > r - 0.01
    assert np.abs(s.particle_qd.numpy()).mean() < 0.05


@wp.kernel
def _weighted_sum(q: wp.array(dtype=wp.vec3), w: wp.array(dtype=wp.vec3), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, wp.dot(q[i], w[i]))


def _grad_scene(requires_grad):
    b = sim.ModelBuilder()
    b.add_soft_grid(pos=wp.vec3(0.0, 0.12, 0.0), rot=wp.quat_identity(), vel=wp.vec3(0.3, -1.0, 0.0), dim_x=1,
                    dim_y=1, dim_z=1, cell_x=0.1, cell_y=0.1, cell_z=0.1, density=100.0, k_mu=1e3, k_lambda=1e3,
                    k_damp=0.0)
    b.add_spring(0, 7, 1e3, 1.0, 0)
    return b.finalize("cpu", requires_grad=requires_grad)


def _grad_states(m, v0, steps=20):
    # made before a Tape records (as warp.sim's examples do): m.state() copies the model's arrays, and a copy
    # recorded on a Tape moves the destination's gradient to its source (Warp 1.19)
    states = [m.state() for _ in range(steps + 1)]
    states[0].particle_qd.assign(v0)
    return states


def _grad_loss(m, v0, steps=20, dt=2e-3, states=None):
    states = states or _grad_states(m, v0, steps)
    w = wp.array(np.random.default_rng(1).normal(size=(m.particle_count, 3)).astype(np.float32), dtype=wp.vec3)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    integ = sim.XPBDIntegrator(iterations=2)
    for k in range(steps):
        integ.simulate(m, states[k], states[k + 1], dt)
    wp.launch(_weighted_sum, m.particle_count, inputs=[states[-1].particle_q, w], outputs=[loss])
    return loss, states


def test_gradient_wrt_initial_velocity_matches_fd():
    """Tets, a spring and ground contacts on a tape: d loss / d v0 against central differences (float64 loss)."""
    m = _grad_scene(True)
    v0 = m.particle_qd.numpy().copy()
    states = _grad_states(m, v0)
    with wp.Tape() as tape:
        loss, states = _grad_loss(m, v0, states=states)
    tape.backward(loss)
    grad = states[0].particle_qd.grad.numpy().copy()
    mf = _grad_scene(False)
    eps = 1e-2
    for i, c in [(0, 1), (3, 0), (6, 2)]:
        vp, vm = v0.copy(), v0.copy()
        vp[i, c] += eps
        vm[i, c] -= eps
        fd = (float(_grad_loss(mf, vp)[0].numpy()[0]) - float(_grad_loss(mf, vm)[0].numpy()[0])) / (2 * eps)
        assert grad[i, c] == pytest.approx(fd, rel=0.03, abs=2e-3)


def test_state_in_is_not_modified_and_bad_dt_is_an_error():
    model = _chain(2, 0.1, 1e3, 0.0)
    s0, s1 = model.state(), model.state()
    before = s0.particle_q.numpy().copy()
    sim.XPBDIntegrator(iterations=3).simulate(model, s0, s1, 1e-3)
    np.testing.assert_array_equal(s0.particle_q.numpy(), before)
    with pytest.raises(sim.SimError, match="dt"):
        sim.XPBDIntegrator().simulate(model, s0, s1, 0.0)
