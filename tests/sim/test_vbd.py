"""ModelBuilder.color and the VBDIntegrator: valid colourings, the per-vertex forces and Hessians against float64
NumPy derivatives of the energies, warp.sim 1.7.2 (stored numbers), a hanging cloth's static equilibrium, cloth
resting on the ground and on cloth, a fast sheet that must not tunnel through a sheet, bad input."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp
from weft import sim
from weft.sim.coloring import ColoringAlgorithm, color_graph, trimesh_graph_edges, validate_coloring
from weft.sim.forces.vbd import bending_force_hessian, stvk_force_hessian

G = 9.80665


def _cloth(dim_x=6, dim_y=4, color=True, **kw):
    b = sim.ModelBuilder()
    args = {"pos": wp.vec3(0.0, 2.0, 0.0), "rot": wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0), -0.4 * np.pi),
            "vel": wp.vec3(0.0, 0.0, 0.0), "dim_x": dim_x, "dim_y": dim_y, "cell_x": 0.1, "cell_y": 0.1, "mass": 0.1,
            "fix_left": True, "tri_ke": 1e4, "tri_ka": 1e4, "tri_kd": 1e-4, "edge_ke": 0.0}
    args.update(kw)
    b.add_cloth_grid(**args)
    if color:
        b.color(balance_colors=False)
    return b


@pytest.mark.parametrize("algorithm", [ColoringAlgorithm.MCS, ColoringAlgorithm.ORDERED_GREEDY])
@pytest.mark.parametrize("bending", [False, True])
def test_coloring_is_valid_and_balanced(algorithm, bending):
    b = _cloth(9, 7, color=False)
    b.color(include_bending=bending, coloring_algorithm=algorithm, target_max_min_color_ratio=1.5)
    edges = trimesh_graph_edges(np.asarray(b.edge_indices), bending)
    n = len(b.particle_q)
    assert validate_coloring(n, edges, b.particle_coloring)
    # every triangle's corners differ; a triangulated grid needs at least 3 colours (4 with the bending pairs)
    tri = np.asarray(b.tri_indices)
    colour = np.empty(n, dtype=int)
    for c, g in enumerate(b.particle_coloring):
        colour[g] = c
    assert np.all(colour[tri[:, 0]] != colour[tri[:, 1]]) and np.all(colour[tri[:, 1]] != colour[tri[:, 2]])
    sizes = [len(g) for g in b.particle_coloring]
    assert len(sizes) >= (4 if bending else 3) and len(sizes) <= (8 if bending else 6)
    assert max(sizes) / min(sizes) <= 1.5


def test_coloring_of_random_graphs_and_replicated_builders():
    rng = np.random.default_rng(0)
    edges = rng.integers(0, 60, size=(200, 2))
    groups = color_graph(60, edges, balance_colors=False)
    assert validate_coloring(60, edges, groups)
    assert not validate_coloring(60, edges, [np.arange(60)])  # one colour for all is caught
    # add_builder merges the colourings of independent copies
    env = _cloth(3, 3, color=False)
    env.color(balance_colors=False)
    b = sim.ModelBuilder()
    for i in range(3):
        b.add_builder(env, xform=wp.transform((i * 1.0, 0.0, 0.0), wp.quat_identity()))
    assert validate_coloring(len(b.particle_q), trimesh_graph_edges(np.asarray(b.edge_indices), False),
                             b.particle_coloring)
    assert len(b.particle_coloring) == len(env.particle_coloring)


@wp.kernel
def _element_kernel(x: wp.array(dtype=wp.vec3), Dm: wp.array(dtype=wp.mat22), params: wp.array(dtype=float),
                    f_out: wp.array(dtype=wp.vec3), h_out: wp.array(dtype=wp.mat33)):
    c = wp.tid()
    if c < 3:
        f, h = stvk_force_hessian(x[0], x[1], x[2], Dm[0], params[0], params[1], params[2], c)
    else:
        f, h = bending_force_hessian(x[0], x[3], x[1], x[2], params[3], params[4], params[5], c - 3)
    f_out[c] = f
    h_out[c] = h


def _stvk_energy(X, Dm, area, mu, lmbd):
    F = np.stack([X[1] - X[0], X[2] - X[0]], axis=1) @ Dm
    Gs = 0.5 * (F.T @ F - np.eye(2))
    return area * (mu * np.sum(Gs * Gs) + 0.5 * lmbd * np.trace(Gs) ** 2)


def _bend_energy(P, rest, length, ke):
    p, q, a, b = P
    n1, n2 = np.cross(a - p, b - p), np.cross(b - q, a - q)
    n1, n2 = n1 / np.linalg.norm(n1), n2 / np.linalg.norm(n2)
    e = (b - a) / np.linalg.norm(b - a)
    theta = np.arctan2(np.cross(n2, n1) @ e, n1 @ n2)
    return 0.5 * ke * length * (theta - rest) ** 2


def _fd_grad(fun, X, h=1e-6):
    g = np.zeros_like(X)
    for i in range(X.shape[0]):
        for c in range(3):
            Xp, Xm = X.copy(), X.copy()
            Xp[i, c] += h
            Xm[i, c] -= h
            g[i, c] = (fun(Xp) - fun(Xm)) / (2 * h)
    return g


@pytest.mark.parametrize("seed", [0, 1])
def test_membrane_and_bending_forces_and_hessians_match_numpy(seed):
    rng = np.random.default_rng(seed)
    rest = np.array([[0.0, 0.0], [0.1, 0.0], [0.02, 0.09]])
    Dm = np.linalg.inv(np.stack([rest[1] - rest[0], rest[2] - rest[0]], axis=1))
    X = np.concatenate([np.c_[rest, np.zeros(3)] + rng.normal(scale=0.01, size=(3, 3)),
                        [[0.08, 0.07, 0.03]]])  # the 4th point closes a bending element across edge 1-2
    area, mu, lmbd, brest, blen, bke = 0.004, 3e3, 2e3, 0.3, 0.09, 2.0
    xs = wp.array(X.astype(np.float32), dtype=wp.vec3)
    f = wp.zeros(7, dtype=wp.vec3)
    h = wp.zeros(7, dtype=wp.mat33)
    wp.launch(_element_kernel, 7, inputs=[xs, wp.array(Dm[None].astype(np.float32), dtype=wp.mat22),
                                          wp.array(np.array([area, mu, lmbd, brest, blen, bke], np.float32))],
              outputs=[f, h])
    f, h = f.numpy(), h.numpy()
    # membrane: force = -grad E, Hessian block = d(-force)/dx of the same corner
    g = _fd_grad(lambda Y: _stvk_energy(Y, Dm, area, mu, lmbd), X[:3])
    np.testing.assert_allclose(f[:3], -g, rtol=2e-3, atol=2e-3 * np.abs(g).max())
    for c in range(3):
        hc = np.zeros((3, 3))
        for k in range(3):
            Xp, Xm = X[:3].copy(), X[:3].copy()
            Xp[c, k] += 1e-5
            Xm[c, k] -= 1e-5
            gp = _fd_grad(lambda Y: _stvk_energy(Y, Dm, area, mu, lmbd), Xp)[c]
            gm = _fd_grad(lambda Y: _stvk_energy(Y, Dm, area, mu, lmbd), Xm)[c]
            hc[:, k] = (gp - gm) / 2e-5
        np.testing.assert_allclose(h[c], hc, rtol=5e-3, atol=5e-3 * np.abs(hc).max())
    # bending (corner order o0, o1, v0, v1 = X0, X3, X1, X2): force = -grad E; the Hessian is Gauss-Newton
    P = X[[0, 3, 1, 2]]
    gb = _fd_grad(lambda Y: _bend_energy(Y, brest, blen, bke), P)
    np.testing.assert_allclose(f[3:], -gb, rtol=2e-3, atol=2e-3 * np.abs(gb).max())
    for c in range(4):
        ev = np.linalg.eigvalsh(0.5 * (h[3 + c] + h[3 + c].T).astype(np.float64))
        assert ev.min() >= -1e-5 * ev.max()


def test_matches_warp_sim_without_bending():
    """A cloth swinging down from its fixed edge (StVK membrane, damping, 20 sweeps, 60 steps) against warp.sim
    1.7.2's VBDIntegrator on the same scene (stored). Bending is left out: warp.sim clamps cos(theta) at 0.9999."""
    m = _cloth().finalize("cpu")
    m.ground = False
    integ = sim.VBDIntegrator(m, iterations=20)
    s0, s1 = m.state(), m.state()
    for _ in range(60):
        integ.simulate(m, s0, s1, 1.0 / 480.0)
        s0, s1 = s1, s0
    q = s0.particle_q.numpy().astype(np.float64)
    assert float(q[:, 1].min()) == pytest.approx(1.9285279512405396, abs=1e-4)
    assert float(q[:, 1].mean()) == pytest.approx(2.006435765538897, abs=2e-5)
    assert float(q[:, 2].mean()) == pytest.approx(-0.20674670317343302, abs=2e-5)
    assert float(np.abs(q).sum()) == pytest.approx(87.63765335828066, abs=2e-3)


def test_hanging_cloth_static_equilibrium():
    """A cloth hanging from its top row: at VBD's rest state the StVK membrane and bending forces (float64 NumPy,
    differentiated energies) carry every free particle's weight."""
    b = _cloth(3, 3, rot=wp.quat_identity(), fix_left=False, fix_top=True, tri_ke=200.0, tri_ka=200.0, tri_kd=1e-2,
               edge_ke=0.5, edge_kd=1e-3, mass=0.02)
    m = b.finalize("cpu")
    m.ground = False
    integ = sim.VBDIntegrator(m, iterations=10)
    s0, s1 = m.state(), m.state()
    for _ in range(400):
        integ.simulate(m, s0, s1, 1.0 / 120.0)
        s0, s1 = s1, s0
    X = s0.particle_q.numpy().astype(np.float64)
    assert np.abs(X - m.particle_q.numpy()).max() > 1e-3  # it does stretch
    tri, poses = m.tri_indices.numpy(), m.tri_poses.numpy().astype(np.float64)
    mat, areas = m.tri_materials.numpy(), m.tri_areas.numpy()
    edges, rest = m.edge_indices.numpy(), m.edge_rest_angle.numpy()
    lengths, bend = m.edge_rest_length.numpy(), m.edge_bending_properties.numpy()

    def energy(Y):
        e = sum(_stvk_energy(Y[t], poses[i], areas[i], mat[i, 0], mat[i, 1]) for i, t in enumerate(tri))
        for i, (o0, o1, v0, v1) in enumerate(edges):
            if o0 >= 0 and o1 >= 0:
                e += _bend_energy(Y[[o0, o1, v0, v1]], rest[i], lengths[i], bend[i, 0])
        return e

    f = -_fd_grad(energy, X)
    w = m.particle_mass.numpy()
    free = w > 0
    weight = w[free, None] * np.array([0.0, -G, 0.0])
    assert np.abs(f[free] + weight).max() < 0.02 * np.abs(weight).max()
    assert np.abs(s0.particle_qd.numpy()).max() < 1e-2


def test_cloth_rests_on_the_ground():
    b = sim.ModelBuilder()
    b.add_cloth_grid(pos=wp.vec3(0.0, 0.3, 0.0), rot=wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0), -0.5 * np.pi),
                     vel=wp.vec3(0.0, 0.0, 0.0), dim_x=4, dim_y=4, cell_x=0.1, cell_y=0.1, mass=0.01,
                     tri_ke=1e3, tri_ka=1e3, tri_kd=1e-3, edge_ke=0.1, particle_radius=0.02)
    b.color(balance_colors=False)
    m = b.finalize("cpu")
    m.soft_contact_ke = 1e4
    integ = sim.VBDIntegrator(m, iterations=5)
    s0, s1 = m.state(), m.state()
    for _ in range(120):
        integ.simulate(m, s0, s1, 1.0 / 120.0)
        s0, s1 = s1, s0
    y = s0.particle_q.numpy()[:, 1]
    # each particle: contact force ke * depth carries m g
    np.testing.assert_allclose(y, 0.02 - 0.01 * G / 1e4, atol=2e-4)
    assert np.abs(s0.particle_qd.numpy()).max() < 1e-2


@pytest.mark.parametrize("self_contact", [True, False])
def test_self_contact_cloth_rests_on_cloth(self_contact):
    """A free sheet dropped onto a fixed sheet of the same model (no ground): with self-contact it comes to rest one
    contact radius above it (ke (r - d) carries m g: d = r - m g / ke); without, it falls through."""
    b = sim.ModelBuilder()
    rot = wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0), -0.5 * np.pi)
    kw = {"vel": wp.vec3(0.0, 0.0, 0.0), "cell_x": 0.1, "cell_y": 0.1, "mass": 0.01, "tri_ke": 1e3, "tri_ka": 1e3,
          "tri_kd": 1e-3, "edge_ke": 0.1, "rot": rot}
    b.add_cloth_grid(pos=wp.vec3(0.0, 0.5, 0.0), dim_x=6, dim_y=6, **kw)
    lower = len(b.particle_q)
    for i in range(lower):
        b.particle_flags[i] = 0  # fixed
    b.add_cloth_grid(pos=wp.vec3(0.1, 0.6, -0.1), dim_x=4, dim_y=4, **kw)
    b.color(balance_colors=False)
    m = b.finalize("cpu")
    m.ground = False
    m.soft_contact_radius, m.soft_contact_margin, m.soft_contact_ke = 0.02, 0.04, 1e4
    integ = sim.VBDIntegrator(m, iterations=10, handle_self_contact=self_contact)
    s0, s1 = m.state(), m.state()
    for _ in range(120):
        integ.simulate(m, s0, s1, 1.0 / 240.0)
        s0, s1 = s1, s0
    y = s0.particle_q.numpy()[lower:, 1]
    if self_contact:
        np.testing.assert_allclose(y, 0.52 - 0.01 * G / 1e4, atol=5e-4)
        assert np.abs(s0.particle_qd.numpy()).max() < 1e-2
    else:
        assert y.max() < 0.4


@pytest.mark.parametrize("relaxation", [0.42, 1e6])
def test_fast_sheet_does_not_tunnel_through_a_sheet(relaxation):
    """A sheet shot at 15 m/s onto a fixed sheet 0.1 m below (a step moves it 6 cm, more than the contact margin):
    the conservative step bound keeps every vertex above the lower sheet in every step; with the bound switched off
    (relaxation 1e6) the sheet passes through in one step, as the penalty force never sees the contact."""
    b = sim.ModelBuilder()
    rot = wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0), -0.5 * np.pi)
    kw = {"cell_x": 0.1, "cell_y": 0.1, "mass": 0.01, "tri_ke": 1e3, "tri_ka": 1e3, "tri_kd": 1e-3, "edge_ke": 0.1,
          "rot": rot}
    b.add_cloth_grid(pos=wp.vec3(0.0, 0.5, 0.0), vel=wp.vec3(0.0, 0.0, 0.0), dim_x=6, dim_y=6, **kw)
    lower = len(b.particle_q)
    for i in range(lower):
        b.particle_flags[i] = 0  # fixed
    b.add_cloth_grid(pos=wp.vec3(0.1, 0.6, -0.1), vel=wp.vec3(0.0, -15.0, 0.0), dim_x=4, dim_y=4, **kw)
    b.color(balance_colors=False)
    m = b.finalize("cpu")
    m.ground = False
    m.soft_contact_radius, m.soft_contact_margin, m.soft_contact_ke = 0.02, 0.04, 1e4
    integ = sim.VBDIntegrator(m, iterations=5, handle_self_contact=True,
                              penetration_free_conservative_bound_relaxation=relaxation)
    s0, s1 = m.state(), m.state()
    lowest = []
    for _ in range(40):
        integ.simulate(m, s0, s1, 1.0 / 240.0)
        s0, s1 = s1, s0
        lowest.append(s0.particle_q.numpy()[lower:, 1].min())
    if relaxation < 0.5:
        assert min(lowest) > 0.5
        assert np.isfinite(s0.particle_q.numpy()).all()
    else:
        assert lowest[-1] < 0.5


def test_fast_ribbon_does_not_cross_a_ribbon_edge_on_edge():
    """Two crossing ribbons, no vertex of either over the other: only edges meet. Shot at 15 m/s, the upper ribbon's
    edges stay above the lower ribbon's (the edge-edge distances bound the step; vertex-triangle distances alone
    would let it through in two steps)."""
    b = sim.ModelBuilder()
    rot = wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0), -0.5 * np.pi)
    kw = {"mass": 0.01, "tri_ke": 1e3, "tri_ka": 1e3, "tri_kd": 1e-3, "edge_ke": 0.1, "rot": rot}
    b.add_cloth_grid(pos=wp.vec3(0.05, 0.5, 0.0), vel=wp.vec3(0.0, 0.0, 0.0), dim_x=8, dim_y=1, cell_x=0.1,
                     cell_y=0.02, **kw)
    lower = len(b.particle_q)
    for i in range(lower):
        b.particle_flags[i] = 0  # fixed
    b.add_cloth_grid(pos=wp.vec3(0.39, 0.52, 0.44), vel=wp.vec3(0.0, -15.0, 0.0), dim_x=1, dim_y=8, cell_x=0.02,
                     cell_y=0.1, **kw)
    b.color(balance_colors=False)
    m = b.finalize("cpu")
    m.ground = False
    m.soft_contact_radius, m.soft_contact_margin, m.soft_contact_ke = 0.01, 0.03, 1e4
    q = m.particle_q.numpy()
    # no vertex of one ribbon lies over the other ribbon
    assert not ((q[lower:, 2] > q[:lower, 2].min()) & (q[lower:, 2] < q[:lower, 2].max())).any()
    assert not ((q[:lower, 0] > q[lower:, 0].min()) & (q[:lower, 0] < q[lower:, 0].max())).any()
    integ = sim.VBDIntegrator(m, iterations=5, handle_self_contact=True)
    s0, s1 = m.state(), m.state()
    lowest = []
    for _ in range(30):
        integ.simulate(m, s0, s1, 1.0 / 240.0)
        s0, s1 = s1, s0
        y = s0.particle_q.numpy()[lower:]
        # the upper ribbon's height where it crosses the lower one (its points with z inside the lower strip's span)
        lowest.append(np.interp(-0.01, y[::-1, 2] if y[0, 2] > y[-1, 2] else y[:, 2],
                                y[::-1, 1] if y[0, 2] > y[-1, 2] else y[:, 1]))
    assert min(lowest) > 0.5
    assert lowest[0] < 0.52  # it did move towards the lower ribbon


def test_bad_input():
    b = _cloth(2, 2, color=False)
    m = b.finalize("cpu")
    with pytest.raises(sim.SimError, match="particle_coloring"):
        sim.VBDIntegrator(m)
    b.color(balance_colors=False)
    m = b.finalize("cpu")
    m.soft_contact_margin = 0.5 * m.soft_contact_radius
    with pytest.raises(sim.SimError, match="soft_contact_margin"):
        sim.VBDIntegrator(m, handle_self_contact=True)
    integ = sim.VBDIntegrator(m)
    other = b.finalize("cpu")
    with pytest.raises(sim.SimError, match="model"):
        integ.simulate(other, other.state(), other.state(), 1e-3)
    with pytest.raises(sim.SimError, match="coloring_algorithm"):
        b.color(coloring_algorithm="mcs")


@pytest.mark.parametrize("self_contact", [False, True])
def test_taped_step_raises_instead_of_wrong_gradients(self_contact):
    """VBD is not differentiable: a Tape recording a step of states with gradients raises (also with the Tape's
    overwrite check off, which would otherwise replay the in-place sweeps into wrong gradients); a step of states
    without gradients inside a Tape still runs (nothing is differentiated)."""
    b = _cloth(2, 2, color=True)
    m = b.finalize("cpu", requires_grad=True)
    m.soft_contact_margin = 2.0 * m.soft_contact_radius
    integ = sim.VBDIntegrator(m, iterations=1, handle_self_contact=self_contact)
    for tape in (wp.Tape(), wp.Tape(check_overwrites=False)):
        with tape, pytest.raises(sim.SimError, match="not differentiable"):
            integ.simulate(m, m.state(), m.state(), 1e-3)
    s0, s1 = m.state(requires_grad=False), m.state(requires_grad=False)
    with wp.Tape():
        integ.simulate(m, s0, s1, 1e-3)
    assert np.isfinite(s1.particle_q.numpy()).all()
