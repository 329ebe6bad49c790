"""VBD cloth self-contact: the vertex-triangle and edge-edge contact forces and Hessians against float64 NumPy
derivatives of the contact energy, their IPC friction against the closed form, crossing edges pushed apart (with
momentum conserved), a cloth folded onto itself without interpenetration, and a sheet on a tilted sheet that sticks
or slides as tan(theta) < mu says."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

import weft as wp
from weft import sim
from weft.sim.forces.vbd_contact import edge_edge_force_hessian, vertex_triangle_force_hessian

from .cloth_checks import closest_vertex_triangle, cloth_edges, edge_triangle_crossings

G = 9.80665


@wp.kernel
def _pair_kernel(x: wp.array(dtype=wp.vec3), x_prev: wp.array(dtype=wp.vec3), tris: wp.array2d(dtype=int),
                 edges: wp.array2d(dtype=int), params: wp.array(dtype=float), f_out: wp.array(dtype=wp.vec3),
                 h_out: wp.array(dtype=wp.mat33)):
    # threads 0-3: vertex 3 against triangle 0 (corners 0-2, then the vertex); 4-5: end points of edge 0 against
    # edge 1; 6-7: end points of edge 1 against edge 0
    c = wp.tid()
    if c < 4:
        f, h = vertex_triangle_force_hessian(3, 0, c, x, x_prev, tris, params[0], params[1], params[2], params[3])
    elif c < 6:
        f, h = edge_edge_force_hessian(0, 1, c - 4, x, x_prev, edges, params[0], params[1], params[2], params[3],
                                       1e-5)
    else:
        f, h = edge_edge_force_hessian(1, 0, c - 6, x, x_prev, edges, params[0], params[1], params[2], params[3],
                                       1e-5)
    f_out[c] = f
    h_out[c] = h


def _contact_energy(d, r, k):
    """The contact energy of a pair at distance d: quadratic above r/2, log barrier below (C1 at r/2)."""
    tau = 0.5 * r
    if d >= r:
        return 0.0
    if d >= tau:
        return 0.5 * k * (r - d) ** 2
    return -k * tau * tau * np.log(d) + k * tau * tau * (0.5 + np.log(tau))


def _vt_distance(X):
    a, b, c, p = X
    n = np.cross(b - a, c - a)
    return abs((p - a) @ n) / np.linalg.norm(n)  # the closest point is inside the triangle in these tests


def _ee_distance(X):
    a0, a1, b0, b1 = X
    n = np.cross(a1 - a0, b1 - b0)
    return abs((a0 - b0) @ n) / np.linalg.norm(n)  # both closest points are inside their segments here


def _fd_grad(fun, X, h=1e-7):
    g = np.zeros_like(X)
    for i in range(X.shape[0]):
        for c in range(3):
            Xp, Xm = X.copy(), X.copy()
            Xp[i, c] += h
            Xm[i, c] -= h
            g[i, c] = (fun(Xp) - fun(Xm)) / (2 * h)
    return g


def _pair_points(rng, gap):
    """A triangle in the xz plane with a vertex ``gap`` above its inside, and two crossing edges ``gap`` apart."""
    tri = np.array([[0.0, 0.0, 0.0], [0.1, 0.0, 0.0], [0.0, 0.0, 0.1]]) + rng.normal(scale=0.003, size=(3, 3))
    p = tri.mean(axis=0) + np.array([0.0, gap, 0.0])
    e1 = np.array([[-0.05, 0.0, 0.0], [0.06, 0.0, 0.0]]) + rng.normal(scale=0.002, size=(2, 3))
    e2 = np.array([[0.0, gap, -0.04], [0.0, gap, 0.07]]) + rng.normal(scale=0.002, size=(2, 3))
    e2[:, 1] = gap + e1[:, 1].mean()
    return np.concatenate([tri, [p], e1, e2]).astype(np.float32).astype(np.float64)


def _launch(X, X_prev, params):
    f = wp.zeros(8, dtype=wp.vec3)
    h = wp.zeros(8, dtype=wp.mat33)
    wp.launch(_pair_kernel, 8, inputs=[wp.array(X.astype(np.float32), dtype=wp.vec3),
                                       wp.array(X_prev.astype(np.float32), dtype=wp.vec3),
                                       wp.array(np.array([[0, 1, 2]]), dtype=int),
                                       wp.array(np.array([[4, 5], [6, 7]]), dtype=int),
                                       wp.array(np.asarray(params, np.float32))], outputs=[f, h])
    return f.numpy().astype(np.float64), h.numpy().astype(np.float64)


@pytest.mark.parametrize("gap", [0.007, 0.003])  # quadratic range (r/2 < d < r) and barrier range (d < r/2)
def test_pair_forces_are_minus_the_energy_gradient(gap):
    """Without friction the force on each of the 4 points of a vertex-triangle and of an edge-edge pair is -dE/dx of
    E(d) (d the pair's distance, float64 NumPy), and the Hessian block is E''(d) w^2 n n^T (n the contact normal),
    which is exact along n for the vertex of a vertex-triangle pair."""
    r, ke = 0.01, 1e4
    X = _pair_points(np.random.default_rng(0), gap)
    f, h = _launch(X, X, [r, ke, 0.0, 1e-4])
    g_vt = _fd_grad(lambda Y: _contact_energy(_vt_distance(Y), r, ke), X[:4])
    g_ee = _fd_grad(lambda Y: _contact_energy(_ee_distance(Y), r, ke), X[4:])
    scale = np.abs(g_vt).max()
    np.testing.assert_allclose(f[:4], -g_vt, atol=2e-3 * scale)
    np.testing.assert_allclose(f[4:], -g_ee, atol=2e-3 * np.abs(g_ee).max())
    # the vertex's force points away from the triangle, with the magnitude of E'(d)
    assert f[3, 1] > 0 and f[4:6, 1].sum() < 0 and f[6:, 1].sum() > 0
    # Hessian of the vertex along the normal vs a finite difference of its force
    n = np.cross(X[1] - X[0], X[2] - X[0])
    n /= np.linalg.norm(n)
    d = _vt_distance(X[:4])
    dd = 1e-6
    hnn = (_contact_energy(d + dd, r, ke) - 2 * _contact_energy(d, r, ke) + _contact_energy(d - dd, r, ke)) / dd**2
    np.testing.assert_allclose(h[3], hnn * np.outer(n, n), atol=2e-3 * hnn)
    for c in range(8):
        ev = np.linalg.eigvalsh(0.5 * (h[c] + h[c].T))
        assert ev.min() >= -1e-6 * max(ev.max(), 1.0)


@pytest.mark.parametrize("speed", [0.3, 0.003])  # sliding (above friction_epsilon) and in the smoothed range
def test_pair_friction_matches_the_ipc_law(speed):
    """With the vertex moved by u over the step (tangentially, relative to the triangle / the other edge), friction
    adds -mu f_n f1(|u|) u / |u| to the pair (f1 = 1 above eps_u = friction_epsilon dt, 2 x/eps - x^2/eps^2 below),
    on each point times its weight w, and mu f_n f1(|u|)/|u| w^2 times the tangent projector to its Hessian."""
    r, ke, mu, dt, eps = 0.01, 1e4, 0.4, 1e-2, 1e-2
    eps_u = eps * dt
    X = _pair_points(np.random.default_rng(1), 0.006)
    u = np.array([0.6, 0.0, 0.8]) * speed * dt
    X_prev = X.copy()
    X_prev[3] -= u  # the vertex slid by u relative to the static triangle
    X_prev[4:6] -= u  # edge 0 slid by u relative to edge 1
    f0, h0 = _launch(X, X_prev, [r, ke, 0.0, eps_u])
    f, h = _launch(X, X_prev, [r, ke, mu, eps_u])
    def unit(v):
        return v / np.linalg.norm(v)

    n_vt = unit(np.cross(X[1] - X[0], X[2] - X[0]))
    n_ee = unit(np.cross(X[5] - X[4], X[7] - X[6]))
    fn_vt = ke * (r - _vt_distance(X[:4]))
    fn_ee = ke * (r - _ee_distance(X[4:]))
    for sl, n, fn, sign in ((slice(3, 4), n_vt, fn_vt, 1.0), (slice(0, 3), n_vt, fn_vt, -1.0),
                            (slice(4, 6), n_ee, fn_ee, 1.0), (slice(6, 8), n_ee, fn_ee, -1.0)):
        ut = u - n * (n @ u)
        un = np.linalg.norm(ut)
        f1 = 1.0 if un > eps_u else 2 * un / eps_u - un * un / eps_u**2
        # the friction on the group (vertex, triangle corners, edge 0, edge 1): the pair's friction times the
        # group's total weight (+1 or -1)
        np.testing.assert_allclose((f - f0)[sl].sum(axis=0), -sign * mu * fn * f1 * ut / un, rtol=2e-3,
                                   atol=2e-4 * mu * fn)
    ut = u - n_vt * (n_vt @ u)
    un = np.linalg.norm(ut)
    f1 = 1.0 if un > eps_u else 2 * un / eps_u - un * un / eps_u**2
    np.testing.assert_allclose(h[3] - h0[3], mu * fn_vt * f1 / un * (np.eye(3) - np.outer(n_vt, n_vt)), rtol=2e-3,
                               atol=2e-4 * mu * fn_vt * f1 / un)


def _ribbons(gap, fixed_lower, ke=1e4):
    """Two crossing ribbons (x-aligned below, z-aligned above, ``gap`` apart where they cross, no vertex of one over
    the other): only their edges meet."""
    b = sim.ModelBuilder()
    rot = wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0), -0.5 * np.pi)
    kw = {"mass": 0.01, "tri_ke": 1e3, "tri_ka": 1e3, "tri_kd": 1e-3, "edge_ke": 0.1, "rot": rot,
          "vel": wp.vec3(0.0, 0.0, 0.0)}
    b.add_cloth_grid(pos=wp.vec3(0.05, 0.5, 0.0), dim_x=8, dim_y=1, cell_x=0.1, cell_y=0.02, **kw)
    lower = len(b.particle_q)
    if fixed_lower:
        for i in range(lower):
            b.particle_flags[i] = 0
    b.add_cloth_grid(pos=wp.vec3(0.39, 0.5 + gap, 0.44), dim_x=1, dim_y=8, cell_x=0.02, cell_y=0.1, **kw)
    b.color(balance_colors=False)
    m = b.finalize("cpu")
    m.ground = False
    m.gravity = (0.0, 0.0, 0.0)
    m.soft_contact_radius, m.soft_contact_margin, m.soft_contact_ke = 0.01, 0.02, ke
    return m, lower


def _mesh_edges(m):
    return cloth_edges(m.tri_indices.numpy())


def _segment_distance(p1, q1, p2, q2):
    """min over s of the distance from p1 + s (q1 - p1) to segment 2 (nested 1-D minimisations, float64)."""
    def to_seg2(x):
        d = q2 - p2
        t = np.clip(np.dot(x - p2, d) / np.dot(d, d), 0, 1)
        return np.linalg.norm(x - (p2 + t * d))
    res = minimize_scalar(lambda s: to_seg2(p1 + s * (q1 - p1)), bounds=(0, 1), method="bounded",
                          options={"xatol": 1e-12})
    return min(res.fun, to_seg2(p1), to_seg2(q1))


def _crossing_gap(q, edges, lower):
    """The smallest distance between an edge of the lower ribbon and one of the upper ribbon (float64)."""
    lo = edges[edges[:, 0] < lower]
    up = edges[edges[:, 0] >= lower]

    def near(i, j, k, m):  # boxes within 5 cm (the gaps measured are below 2 cm)
        return (np.maximum(q[i], q[j]) + 0.05 >= np.minimum(q[k], q[m])).all() and \
            (np.maximum(q[k], q[m]) + 0.05 >= np.minimum(q[i], q[j])).all()
    return min(_segment_distance(q[i], q[j], q[k], q[m]) for i, j in lo for k, m in up if near(i, j, k, m))


def test_crossing_edges_are_pushed_apart():
    """Two free ribbons whose edges cross 4 mm apart (contact radius 10 mm), no gravity: the edge-edge contact pushes
    them apart until the gap reaches the radius, with equal and opposite momenta."""
    m, lower = _ribbons(0.004, fixed_lower=False)
    integ = sim.VBDIntegrator(m, iterations=10, handle_self_contact=True)
    s0, s1 = m.state(), m.state()
    q0 = s0.particle_q.numpy().astype(np.float64)
    edges = _mesh_edges(m)
    # no vertex of one ribbon lies over the other ribbon
    assert not ((q0[lower:, 2] > q0[:lower, 2].min()) & (q0[lower:, 2] < q0[:lower, 2].max())).any()
    assert not ((q0[:lower, 0] > q0[lower:, 0].min()) & (q0[:lower, 0] < q0[lower:, 0].max())).any()
    gap0 = _crossing_gap(q0, edges, lower)
    assert 0.003 < gap0 < 0.005
    for _ in range(60):
        integ.simulate(m, s0, s1, 1.0 / 240.0)
        s0, s1 = s1, s0
    q = s0.particle_q.numpy().astype(np.float64)
    v = s0.particle_qd.numpy().astype(np.float64)
    assert _crossing_gap(q, edges, lower) > 0.0095
    # the upper ribbon went up, the lower down, with opposite momenta (equal masses per particle)
    p_low, p_up = v[:lower].sum(axis=0) * 0.01, v[lower:].sum(axis=0) * 0.01
    assert p_up[1] > 0 and p_low[1] < 0
    np.testing.assert_allclose(p_up[1], -p_low[1], rtol=0.05)
    assert abs(q[:, 1].mean() - q0[:, 1].mean()) < 1e-4


def _patch_on_slope(mu, theta, steps, dt, ke=1e3):
    """A free 3 x 3 patch resting on a fixed sheet tilted by ``theta`` (patch turned 0.3 rad in the plane so no edges
    are parallel), no ground; returns the patch's mean downhill speed after each step."""
    b = sim.ModelBuilder()
    flat = wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0), -0.5 * np.pi)
    tilt = wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), float(theta))
    kw = {"mass": 0.01, "tri_ke": 1e3, "tri_ka": 1e3, "tri_kd": 0.0, "edge_ke": 0.1, "edge_kd": 0.0,
          "vel": wp.vec3(0.0, 0.0, 0.0)}
    b.add_cloth_grid(pos=wp.vec3(0.0, 0.0, 0.0), rot=wp.mul(tilt, flat), dim_x=10, dim_y=6, cell_x=0.06, cell_y=0.06,
                     **kw)
    lower = len(b.particle_q)
    for i in range(lower):
        b.particle_flags[i] = 0
    t = np.array([np.cos(theta), np.sin(theta), 0.0])
    n = np.array([-np.sin(theta), np.cos(theta), 0.0])
    start = t * 0.42 + np.array([0.0, 0.0, -0.12]) + n * 0.0099
    turn = wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), 0.3)
    b.add_cloth_grid(pos=wp.vec3(*start), rot=wp.mul(tilt, wp.mul(flat, turn)), dim_x=3, dim_y=3, cell_x=0.04,
                     cell_y=0.04, **kw)
    b.color(balance_colors=False)
    m = b.finalize("cpu")
    m.ground = False
    m.soft_contact_radius, m.soft_contact_margin, m.soft_contact_ke, m.soft_contact_mu = 0.01, 0.02, ke, mu
    integ = sim.VBDIntegrator(m, iterations=10, handle_self_contact=True)
    s0, s1 = m.state(), m.state()
    speed = []
    for _ in range(steps):
        integ.simulate(m, s0, s1, dt)
        s0, s1 = s1, s0
        speed.append(s0.particle_qd.numpy()[lower:].mean(axis=0) @ -t)
    return np.array(speed)


@pytest.mark.parametrize("mu", [0.1, 0.5])
def test_cloth_on_a_tilted_cloth_slides_or_sticks_by_tan_theta_vs_mu(mu):
    """tan(theta) = 0.3. With mu = 0.1 the patch slides with the acceleration g (sin theta - mu cos theta); with
    mu = 0.5 it sticks, up to the creep of IPC's smoothed friction: the steady slip where mu f1(v dt) = tan(theta),
    v = friction_epsilon (1 - sqrt(1 - tan(theta) / mu)) = 3.7 mm/s (warp.sim 1.7.2 gives the same on this scene:
    a = 1.876 m/s^2 at dt = 1/960, creep 3.7 mm/s)."""
    theta, dt, steps = np.arctan(0.3), 1.0 / 480.0, 240
    v = _patch_on_slope(mu, theta, steps, dt)
    if mu < 0.3:
        a = (v[steps // 2] - v[steps // 8]) / (dt * (steps // 2 - steps // 8))
        np.testing.assert_allclose(a, G * (np.sin(theta) - mu * np.cos(theta)), rtol=0.02)
    else:
        np.testing.assert_allclose(v[steps // 4:], 1e-2 * (1.0 - np.sqrt(1.0 - np.tan(theta) / mu)), rtol=0.05)


@pytest.mark.parametrize("self_contact", [True, False])
def test_cloth_folded_onto_itself_does_not_interpenetrate(self_contact):
    """A 0.4 m x 0.1 m strip on the ground whose left half is swung up about its middle (10 rad/s) so it folds back
    onto itself and crumples: with self-contact no edge passes through a triangle and no vertex comes closer than
    half the contact radius (1 cm) to a triangle in any sampled frame; without it the layers pass through each other
    (the check can fail)."""
    r = 0.01
    b = sim.ModelBuilder()
    rot = wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0), -0.5 * np.pi)
    b.add_cloth_grid(pos=wp.vec3(0.0, 0.006, 0.0), rot=rot, vel=wp.vec3(0.0, 0.0, 0.0), dim_x=8, dim_y=2,
                     cell_x=0.05, cell_y=0.05, mass=0.005, tri_ke=1e3, tri_ka=1e3, tri_kd=1e-5, edge_ke=1e-4,
                     edge_kd=0.0, particle_radius=0.005)
    b.color(balance_colors=False)
    m = b.finalize("cpu")
    # the margin bounds each step's motion (0.42 x 3 cm per 1/240 s step: 3 m/s), so it exceeds the swing's speed
    m.soft_contact_radius, m.soft_contact_margin, m.soft_contact_ke, m.soft_contact_mu = r, 0.03, 1e3, 0.2
    integ = sim.VBDIntegrator(m, iterations=10, handle_self_contact=self_contact)
    s0, s1 = m.state(), m.state()
    q = s0.particle_q.numpy()
    qd = np.zeros_like(q)
    left = q[:, 0] < 0.2 - 1e-6
    qd[left, 1] = 10.0 * (0.2 - q[left, 0])
    s0.particle_qd.assign(qd)
    tri = m.tri_indices.numpy()
    crossings, closest = 0, np.inf
    for k in range(180):
        integ.simulate(m, s0, s1, 1.0 / 240.0)
        s0, s1 = s1, s0
        if k % 10 == 9:
            q = s0.particle_q.numpy().astype(np.float64)
            crossings = max(crossings, edge_triangle_crossings(q, tri))
            closest = min(closest, closest_vertex_triangle(q, tri, r))
    q = s0.particle_q.numpy()
    if self_contact:
        assert crossings == 0 and closest > 0.5 * r
        assert q[left, 1].max() > 0.015  # the left half lies folded on the cloth, not flat on the ground
        assert np.isfinite(q).all()
    else:
        assert crossings > 0 and closest < 0.1 * r


def test_full_collision_buffers_keep_the_first_pairs_and_the_bound():
    """With one slot per vertex, triangle corner and edge (the buffers overflow: a sheet on a sheet has several pairs
    per primitive), the solve uses the pairs that fit and the step bound still counts every pair: a sheet dropped
    onto a fixed sheet stays above it and finite."""
    b = sim.ModelBuilder()
    rot = wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0), -0.5 * np.pi)
    kw = {"vel": wp.vec3(0.0, 0.0, 0.0), "cell_x": 0.1, "cell_y": 0.1, "mass": 0.01, "tri_ke": 1e3, "tri_ka": 1e3,
          "tri_kd": 1e-3, "edge_ke": 0.1, "rot": rot}
    b.add_cloth_grid(pos=wp.vec3(0.0, 0.5, 0.0), dim_x=4, dim_y=4, **kw)
    lower = len(b.particle_q)
    for i in range(lower):
        b.particle_flags[i] = 0
    b.add_cloth_grid(pos=wp.vec3(0.05, 0.53, -0.05), dim_x=3, dim_y=3, **kw)
    b.color(balance_colors=False)
    m = b.finalize("cpu")
    m.ground = False
    m.soft_contact_radius, m.soft_contact_margin, m.soft_contact_ke = 0.02, 0.04, 1e4
    integ = sim.VBDIntegrator(m, iterations=5, handle_self_contact=True, vertex_collision_buffer_pre_alloc=1,
                              triangle_collision_buffer_pre_alloc=1, edge_collision_buffer_pre_alloc=1)
    s0, s1 = m.state(), m.state()
    for _ in range(60):
        integ.simulate(m, s0, s1, 1.0 / 240.0)
        s0, s1 = s1, s0
    assert (integ._vt_count.numpy()[lower:] <= 1).all() and (integ._corner_count.numpy() > 1).any()
    y = s0.particle_q.numpy()[lower:, 1]
    assert np.isfinite(y).all() and y.min() > 0.5 and y.max() < 0.53
