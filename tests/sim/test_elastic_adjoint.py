"""The hand-written adjoints of the spring, triangle and tetrahedron force kernels (weft/sim/forces/elastic_adjoint.py)
against the generic adjoints of the forward kernels, for every gradient: positions, velocities, materials,
activations, rest poses and spring constants; and a taped Euler rollout against central finite differences."""

from __future__ import annotations

import numpy as np

import weft as wp
from weft.sim.forces import elastic, elastic_adjoint


def _arr(a, dtype, grad=True):
    return wp.array(np.asarray(a, dtype=np.float32), dtype=dtype, requires_grad=grad)


def _case(rng, n_elem, corners, n_particles=9):
    x = rng.normal(size=(n_particles, 3)) * 0.3
    v = rng.normal(size=(n_particles, 3))
    idx = np.stack([rng.choice(n_particles, corners, replace=False) for _ in range(n_elem)]).astype(np.int32)
    adj_p = rng.normal(size=(n_particles, 3)).astype(np.float32)
    return x, v, idx, adj_p


def _generic(kernel, count, corners, arrays, adj_p, idx):
    """Gradients from the generic adjoint of ``kernel`` for the seed adj_p[idx] on its corner forces."""
    f = wp.zeros(count * corners, dtype=wp.vec3, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(kernel, dim=count, inputs=[*arrays, 0], outputs=[f])
    tape.backward(grads={f: wp.array(adj_p[idx.reshape(-1)], dtype=wp.vec3)})
    return [a.grad.numpy().copy() for a in arrays if isinstance(a, wp.array) and a.grad is not None]


def _gathered(slots, idx, n):
    out = np.zeros((n, 3))
    np.add.at(out, idx.reshape(-1), slots)
    return out


def _check(generic, hand):
    for g, h in zip(generic, hand):
        np.testing.assert_allclose(h, g, rtol=2e-3, atol=2e-3 * (np.abs(g).max() + 1e-6))


def _rows_adjoint(kind, a, adj_p, idx):
    """Gradients from the row-layout adjoint of ``kind`` (tape_params.LAYOUTS): element data in rows, the seed split
    over two launches whose parameter sums are applied once; corner gradients are stored corner-major."""
    from weft.sim.forces import tape_params

    lay = tape_params.LAYOUTS[kind]
    n, corners = idx.shape
    ax = wp.zeros(n * corners, dtype=wp.vec3)
    av = wp.zeros(n * corners, dtype=wp.vec3)
    idx_t, pose_t = wp.zeros((corners, n), dtype=int), wp.zeros((lay.pose_rows, n), dtype=float)
    mat_t = wp.zeros((3, n), dtype=float)
    wp.launch(lay.columns, dim=n, inputs=[a[2], a[3], a[5]], outputs=[idx_t, pose_t, mat_t])
    acc = wp.zeros((lay.acc_rows, n), dtype=float)
    half = wp.array(adj_p * 0.5, dtype=wp.vec3)
    kernel = elastic_adjoint.adj_tetrahedra if kind == "tet" else elastic_adjoint.adj_triangles
    for _ in range(2):
        wp.launch(kernel, dim=n, inputs=[a[0], a[1], half, idx_t, pose_t, a[4], mat_t, 0, a[4].grad, acc],
                  outputs=[ax, av])
    wp.launch(lay.apply, dim=n, inputs=[a[3], acc, a[5].grad, a[3].grad])
    corner_major = idx.T.reshape(-1)  # (the last launch's corner gradients: half the seed's)
    return [_gathered(ax.numpy() * 2.0, corner_major, 9), _gathered(av.numpy() * 2.0, corner_major, 9),
            a[3].grad.numpy(), a[4].grad.numpy(), a[5].grad.numpy()]


def test_tetrahedra_adjoint_matches_generic():
    rng = np.random.default_rng(1)
    x, v, idx, adj_p = _case(rng, 6, 4)
    rest = rng.normal(size=(6, 3, 3)) * 0.2 + np.eye(3) * 0.8
    poses = np.linalg.inv(rest)
    mats = np.stack([rng.uniform(1, 3, 6), rng.uniform(2, 4, 6), rng.uniform(0.1, 1, 6)], axis=1)
    act = rng.uniform(-0.1, 0.1, 6)

    def arrays():
        return [_arr(x, wp.vec3), _arr(v, wp.vec3), wp.array(idx, dtype=int), _arr(poses, wp.mat33),
                _arr(act, float), _arr(mats, float)]

    gen = _generic(elastic.eval_tetrahedra, 6, 4, arrays(), adj_p, idx)
    _check(gen, _rows_adjoint("tet", arrays(), adj_p, idx))


def test_triangles_adjoint_matches_generic():
    rng = np.random.default_rng(2)
    x, v, idx, adj_p = _case(rng, 7, 3)
    poses = np.linalg.inv(rng.normal(size=(7, 2, 2)) * 0.2 + np.eye(2))
    mats = np.stack([rng.uniform(1, 3, 7), rng.uniform(2, 4, 7), rng.uniform(0.1, 1, 7), np.zeros(7), np.zeros(7)],
                    axis=1)
    act = rng.uniform(-0.1, 0.1, 7)

    def arrays():
        return [_arr(x, wp.vec3), _arr(v, wp.vec3), wp.array(idx, dtype=int), _arr(poses, wp.mat22),
                _arr(act, float), _arr(mats, float)]

    gen = _generic(elastic.eval_triangles, 7, 3, arrays(), adj_p, idx)
    hand = _rows_adjoint("tri", arrays(), adj_p, idx)
    hand[-1] = hand[-1][:, :3]
    gen[-1] = gen[-1][:, :3]  # lift and drag: not differentiated at zero (see docs/sim.md)
    _check(gen, hand)


def test_springs_adjoint_matches_generic():
    rng = np.random.default_rng(3)
    x, v, idx, adj_p = _case(rng, 8, 2)
    flat = idx.reshape(-1).copy()
    flat[-2:] = -1  # a removed spring contributes nothing

    def arrays():
        return [_arr(x, wp.vec3), _arr(v, wp.vec3), wp.array(flat, dtype=int), _arr(rng_rest, float),
                _arr(rng_ke, float), _arr(rng_kd, float)]

    rng_rest, rng_ke, rng_kd = rng.uniform(0.2, 0.5, 8), rng.uniform(1, 5, 8), rng.uniform(0.1, 1, 8)
    seed_idx = np.where(flat.reshape(-1, 2) < 0, 0, flat.reshape(-1, 2))
    gen = _generic(elastic.eval_springs, 8, 2, arrays(), adj_p, seed_idx)
    a = arrays()
    ax = wp.zeros(16, dtype=wp.vec3)
    av = wp.zeros(16, dtype=wp.vec3)
    wp.launch(elastic_adjoint.adj_springs, dim=8,
              inputs=[a[0], a[1], wp.array(adj_p, dtype=wp.vec3), a[2], a[3], a[4], a[5], 0, a[3].grad, a[4].grad,
                      a[5].grad], outputs=[ax, av])
    hand = [_gathered(ax.numpy(), seed_idx, 9), _gathered(av.numpy(), seed_idx, 9), a[3].grad.numpy(),
            a[4].grad.numpy(), a[5].grad.numpy()]
    _check(gen, hand)


def _bending_f64(x, v, idx, rest, props):
    """The corner forces of ``eval_bending`` in float64 NumPy (the reference for the finite differences)."""
    f = np.zeros((len(idx), 4, 3))
    for e, (i, j, k, l) in enumerate(idx):
        x1, x2, x3, x4 = x[i], x[j], x[k], x[l]
        n1 = np.cross(x3 - x1, x4 - x1)
        n2 = np.cross(x4 - x2, x3 - x2)
        c = np.clip(n1 @ n2 / np.linalg.norm(n1) / np.linalg.norm(n2), -1.0, 1.0)
        m1, m2 = n1 / (n1 @ n1), n2 / (n2 @ n2)
        el = np.linalg.norm(x4 - x3)
        eh = (x4 - x3) / el
        angle = np.arccos(c) * np.sign(np.cross(m2, m1) @ eh)
        d = [m1 * el, m2 * el, m1 * ((x1 - x4) @ eh) + m2 * ((x2 - x4) @ eh),
             m1 * ((x3 - x1) @ eh) + m2 * ((x3 - x2) @ eh)]
        dv = sum(dc @ v[p] for dc, p in zip(d, (i, j, k, l)))
        ft = -el * (props[e, 0] * (angle - rest[e]) + props[e, 1] * dv)
        f[e] = np.array(d) * ft
    return f


def test_bending_adjoint_matches_generic_and_differences():
    """``adj_bending`` on a crumpled random cloth (builder-made edges, one removed edge) against the generic adjoint
    of ``eval_bending`` for every gradient, and against central differences of a float64 NumPy forward."""
    from weft import sim

    b = sim.ModelBuilder()
    b.add_cloth_grid(pos=wp.vec3(0.0, 0.0, 0.0), rot=wp.quat_identity(), vel=wp.vec3(0.0, 0.0, 0.0), dim_x=3,
                     dim_y=2, cell_x=0.1, cell_y=0.1, mass=0.1)
    rng = np.random.default_rng(6)
    idx = np.array(b.edge_indices, dtype=np.int32)
    idx = idx[(idx >= 0).all(axis=1)]
    idx = np.concatenate([idx, [[0, -1, 1, 2]]]).astype(np.int32)
    n, m = len(idx), len(b.particle_q)
    x = np.array(b.particle_q) + rng.normal(size=(m, 3)) * 0.03
    v = rng.normal(size=(m, 3))
    rest = rng.uniform(-0.3, 0.3, n)
    props = np.stack([rng.uniform(1, 3, n), rng.uniform(0.1, 0.5, n)], axis=1)
    adj_p = rng.normal(size=(m, 3)).astype(np.float32)
    seed_idx = np.where(idx < 0, 0, idx)

    def arrays():
        return [_arr(x, wp.vec3), _arr(v, wp.vec3), wp.array(idx, dtype=int), _arr(rest, float), _arr(props, float)]

    gen = _generic(elastic.eval_bending, n, 4, arrays(), adj_p, seed_idx)
    a = arrays()
    ax = wp.zeros(4 * n, dtype=wp.vec3)
    av = wp.zeros(4 * n, dtype=wp.vec3)
    wp.launch(elastic_adjoint.adj_bending, dim=n, inputs=[a[0], a[1], wp.array(adj_p, dtype=wp.vec3), a[2], a[3],
                                                          a[4], 0, a[3].grad, a[4].grad], outputs=[ax, av])
    corner_major = seed_idx.T.reshape(-1)
    hand = [_gathered(ax.numpy(), corner_major, m), _gathered(av.numpy(), corner_major, m), a[3].grad.numpy(),
            a[4].grad.numpy()]
    for g, h in zip(gen, hand):
        assert np.abs(g).max() > 0.0
        np.testing.assert_allclose(h, g, rtol=1e-5, atol=1e-5 * np.abs(g).max())
    # central differences of L = sum_c adj_p[idx_c] . f_c over the valid edges
    ok = (idx >= 0).all(axis=1)

    def loss(x_, v_, rest_, props_):
        return float(np.einsum("ecj,ecj->", _bending_f64(x_, v_, idx[ok], rest_[ok], props_[ok]),
                               adj_p[idx[ok]].astype(np.float64)))

    h = 1e-6
    for which, (ref, base) in enumerate(zip(hand, (x, v, rest, props))):
        fd = np.zeros_like(base)
        for p in np.ndindex(base.shape):
            args = [x, v, rest, props]
            hi, lo = base.copy(), base.copy()
            hi[p] += h
            lo[p] -= h
            args[which] = hi
            up = loss(*args)
            args[which] = lo
            fd[p] = (up - loss(*args)) / (2 * h)
        np.testing.assert_allclose(ref, fd, rtol=2e-3, atol=2e-3 * np.abs(fd).max())


def _cloth_rollout_grads(monkeypatch, hand: bool):
    from weft import sim

    if not hand:
        monkeypatch.setattr(elastic, "_has_hand_adjoint", lambda model, sg: False)
    b = sim.ModelBuilder()
    b.add_cloth_grid(pos=wp.vec3(0.0, 1.0, 0.0), rot=wp.quat_identity(), vel=wp.vec3(0.1, 0.0, 0.2), dim_x=3, dim_y=3,
                     cell_x=0.1, cell_y=0.1, mass=0.05, fix_left=True, tri_ke=1e3, tri_ka=1e3, tri_kd=1.0,
                     edge_ke=1.0, add_springs=True, spring_ke=1e2, spring_kd=0.5)
    m = b.finalize("cpu", requires_grad=True)
    states = [m.state() for _ in range(11)]
    # crumple the cloth: at a flat edge the angle's acos is steep and its float32 gradient is rounding noise
    qd = np.random.default_rng(7).normal(size=(m.particle_count, 3)).astype(np.float32) * 2.0
    states[0].particle_qd.assign(qd)
    integ = sim.SemiImplicitIntegrator()
    w = wp.array(np.random.default_rng(4).normal(size=(m.particle_count, 3)).astype(np.float32), dtype=wp.vec3)
    loss = wp.zeros(1, dtype=float, requires_grad=True)

    @wp.kernel
    def dot_loss(q: wp.array(dtype=wp.vec3), w: wp.array(dtype=wp.vec3), loss: wp.array(dtype=float)):
        i = wp.tid()
        wp.atomic_add(loss, 0, wp.dot(q[i], w[i]))

    with wp.Tape() as tape:
        for k in range(10):
            integ.simulate(m, states[k], states[k + 1], 2e-3)
        wp.launch(dot_loss, m.particle_count, inputs=[states[-1].particle_q, w], outputs=[loss])
    tape.backward(loss)
    return [a.grad.numpy().copy() for a in (states[0].particle_q, states[0].particle_qd, m.tri_materials,
                                            m.tri_poses, m.spring_stiffness, m.spring_rest_length,
                                            m.edge_bending_properties)]


def test_taped_cloth_rollout_matches_generic_adjoints(monkeypatch):
    """Springs, triangles and bending edges (hand-written adjoints) through a taped Euler rollout."""
    hand = _cloth_rollout_grads(monkeypatch, True)
    generic = _cloth_rollout_grads(monkeypatch, False)
    for h, g in zip(hand, generic):
        assert np.abs(g).max() > 0.0
        np.testing.assert_allclose(h, g, rtol=1e-3, atol=1e-4 * np.abs(g).max())


def _soft_ground_grads(monkeypatch, hand: bool, fuse: bool = True):
    from weft import sim
    from weft.sim.integrators import euler

    if not hand:
        monkeypatch.setattr(elastic, "_has_hand_adjoint", lambda model, sg: False)
        monkeypatch.setattr(euler, "hand_step_ok", lambda model, s_in, s_out: False)
    b = sim.ModelBuilder()
    b.add_soft_grid(pos=wp.vec3(0.0, 0.01, 0.0), rot=wp.quat_identity(), vel=wp.vec3(1.0, -1.0, 0.3), dim_x=2,
                    dim_y=1, dim_z=1, cell_x=0.1, cell_y=0.1, cell_z=0.1, density=100.0, k_mu=1e3, k_lambda=1e3,
                    k_damp=0.1)
    m = b.finalize("cpu", requires_grad=True)
    m.ground = True
    m.soft_contact_ke, m.soft_contact_kd, m.soft_contact_kf, m.soft_contact_mu = 1e3, 1.0, 10.0, 0.5
    m.particle_max_velocity = 1.3  # some particles move faster: the speed clamp's adjoint
    states = [m.state() for _ in range(16)]
    integ = sim.SemiImplicitIntegrator()
    w = wp.array(np.random.default_rng(5).normal(size=(m.particle_count, 3)).astype(np.float32), dtype=wp.vec3)
    loss = wp.zeros(1, dtype=float, requires_grad=True)

    @wp.kernel
    def dot_loss2(q: wp.array(dtype=wp.vec3), w: wp.array(dtype=wp.vec3), loss: wp.array(dtype=float)):
        i = wp.tid()
        wp.atomic_add(loss, 0, wp.dot(q[i], w[i]))

    with wp.Tape() as tape:
        for k in range(15):
            integ.simulate(m, states[k], states[k + 1], 2e-3)
            if not fuse:  # a record between the steps: each step's particle adjoint runs in its own launch
                tape.record_func(lambda: None, [])
        wp.launch(dot_loss2, m.particle_count, inputs=[states[-1].particle_q, w], outputs=[loss])
    tape.backward(loss)
    arrays = (states[0].particle_q, states[0].particle_qd, m.tet_materials, m.tet_poses, m.particle_inv_mass,
              m.particle_radius, m.ground_plane, states[7].particle_q, states[7].particle_qd, states[7].particle_f)
    first = [a.grad.numpy().copy() for a in arrays]
    if hand:  # a second backward pass after tape.zero() gives the same gradients (per-tape sums start from zero)
        tape.zero()
        tape.backward(loss)
        for a, g in zip(arrays, first):
            np.testing.assert_allclose(a.grad.numpy(), g, rtol=1e-5, atol=1e-6 * np.abs(g).max())
        # the same rollout on a second Tape (its own plan, sums and registered model arrays: elastic._TapePlan,
        # tape_params.record_on_tape): zeroed by it, the same gradients again
        tape.zero()
        loss.zero_()
        for st in states:  # (simulate adds its forces to state_in's)
            st.clear_forces()
        with wp.Tape() as tape2:
            for k in range(15):
                integ.simulate(m, states[k], states[k + 1], 2e-3)
            wp.launch(dot_loss2, m.particle_count, inputs=[states[-1].particle_q, w], outputs=[loss])
        assert all(any(a is b for b in tape2.gradients) for a in (m.tet_materials, m.particle_inv_mass,
                                                                  m.ground_plane))
        tape2.backward(loss)
        for a, g in zip(arrays, first):
            np.testing.assert_allclose(a.grad.numpy(), g, rtol=1e-5, atol=1e-6 * np.abs(g).max())
    return first


def test_taped_soft_body_on_ground_matches_generic_adjoints(monkeypatch):
    """Tetrahedra and the particle step with ground contacts, friction and the speed clamp (hand-written adjoints)
    against the generic adjoints of the same kernels."""
    hand = _soft_ground_grads(monkeypatch, True)
    # the gather of each step's element gradients runs fused with the previous step's particle adjoint
    # (particle_adjoint.adj_gather_particle_step) unless something is recorded between the steps
    unfused = _soft_ground_grads(monkeypatch, True, fuse=False)
    for h, u in zip(hand, unfused):
        assert np.abs(u).max() > 0.0
        np.testing.assert_allclose(h, u, rtol=1e-5, atol=1e-6 * np.abs(u).max())
    generic = _soft_ground_grads(monkeypatch, False)[:7]  # (not the intermediate state's: the generic adjoints
    for h, g in zip(hand, generic):                          # consume gradients of arrays written on the tape)
        assert np.abs(g).max() > 0.0
        np.testing.assert_allclose(h, g, rtol=1e-3, atol=1e-4 * np.abs(g).max())
