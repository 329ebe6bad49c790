"""Gradients through weft.sim: wp.Tape over builder models, the SemiImplicitIntegrator and soft contacts (ground,
a sphere, a tilted box, a mesh), checked against central finite differences; wp.checkpoint gives the full tape's gradients."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp
from weft import sim

STEPS, DT = 40, 2e-3


@wp.kernel
def _weighted_sum(q: wp.array(dtype=wp.vec3), w: wp.array(dtype=wp.vec3), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, wp.dot(q[i], w[i]))


def _build(requires_grad: bool):
    b = sim.ModelBuilder()
    b.add_soft_grid(pos=wp.vec3(0.0, 0.1, 0.0), rot=wp.quat_identity(), vel=wp.vec3(0.3, -1.0, 0.0), dim_x=2,
                    dim_y=2, dim_z=2, cell_x=0.1, cell_y=0.1, cell_z=0.1, density=100.0, k_mu=1e3, k_lambda=1e3,
                    k_damp=0.1)
    b.add_shape_sphere(-1, pos=(0.3, 0.0, 0.0), radius=0.1, ke=1e3, kd=1.0, kf=10.0)
    m = b.finalize("cpu", requires_grad=requires_grad)
    m.soft_contact_ke, m.soft_contact_kd, m.soft_contact_kf = 1e3, 1.0, 10.0
    return m


def _weights(n):
    return wp.array(np.random.default_rng(0).normal(size=(n, 3)).astype(np.float32), dtype=wp.vec3)


def _states(m):
    # made before a Tape records (as warp.sim's examples do): m.state() copies the model's arrays, and a copy
    # recorded on a Tape moves the destination's gradient to its source (Warp 1.19)
    return [m.state() for _ in range(STEPS + 1)]


def _rollout(m, w, states=None):
    states = states or _states(m)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    integ = sim.SemiImplicitIntegrator()
    for k in range(STEPS):
        sim.collide(m, states[k])
        integ.simulate(m, states[k], states[k + 1], DT)
    wp.launch(_weighted_sum, m.particle_count, inputs=[states[-1].particle_q, w], outputs=[loss])
    return loss, states


def _loss(edit):
    m = _build(False)
    edit(m)
    loss, _ = _rollout(m, _weights(m.particle_count))
    return float(loss.numpy()[0])


def _edit(name, index, delta):
    def edit(m):
        a = getattr(m, name).numpy()
        a[index] += delta
        getattr(m, name).assign(a)
    return edit


@pytest.fixture(scope="module")
def taped():
    m = _build(True)
    states = _states(m)
    with wp.Tape() as tape:
        loss, states = _rollout(m, _weights(m.particle_count), states)
    tape.backward(loss)
    # copy before anything zeroes the gradients (CPU arrays are NumPy views)
    return {"qd": states[0].particle_qd.grad.numpy().copy(), "q": states[0].particle_q.grad.numpy().copy(),
            "mat": m.tet_materials.grad.numpy().copy(), "loss": float(loss.numpy()[0])}


@pytest.mark.parametrize("name,index,eps", [("particle_qd", (3, 0), 1e-2), ("particle_qd", (10, 1), 1e-2),
                                            ("particle_q", (5, 1), 1e-3)])
def test_gradient_wrt_initial_state_matches_fd(taped, name, index, eps):
    fd = (_loss(_edit(name, index, eps)) - _loss(_edit(name, index, -eps))) / (2 * eps)
    g = taped["qd" if name == "particle_qd" else "q"][index]
    assert g == pytest.approx(fd, rel=0.05, abs=float(1e-3 * abs(fd) + 1e-5))


def test_gradient_wrt_material_matches_fd(taped):
    eps = 10.0
    fd = (_loss(_edit("tet_materials", (slice(None), 0), eps)) -
          _loss(_edit("tet_materials", (slice(None), 0), -eps))) / (2 * eps)
    assert taped["mat"][:, 0].sum() == pytest.approx(fd, rel=0.05)


@wp.kernel
def _assign_materials(params: wp.array2d(dtype=float), mats: wp.array2d(dtype=float)):
    t = wp.tid()
    mats[t, 0] = params[t, 0]
    mats[t, 1] = params[t, 1]


def _assigned_rollout(shift: float = 0.0):
    m = _build(True)
    params = wp.array(m.tet_materials.numpy()[:, :2].copy(), dtype=float, requires_grad=True)
    if shift:  # edit the columns the assignment overwrites
        _edit("tet_materials", (slice(None), 0), shift)(m)
    with wp.Tape() as tape:
        wp.launch(_assign_materials, m.tet_count, inputs=[params], outputs=[m.tet_materials])
        loss, _ = _rollout(m, _weights(m.particle_count))
    return m, params, tape, loss


def test_materials_assigned_on_the_tape(taped):
    """warp.sim's softbody_properties pattern: a kernel on the tape writes k_mu and k_lambda from parameters. The
    parameters get the materials' gradients; tet_materials.grad keeps only the damping column: the kernel stores
    into the array twice per thread, so its store adjoints consume the gradient they read (docs/autodiff.md), which
    leaves the gradient of the array's contents before the launch (zero: they do not reach the loss). Warp 1.7.2
    leaves the overwritten values' gradient there."""
    m, params, tape, loss = _assigned_rollout()
    tape.backward(loss)
    g = params.grad.numpy()
    np.testing.assert_allclose(g, taped["mat"][:, :2], rtol=1e-4, atol=1e-6 * np.abs(taped["mat"]).max())
    mat = m.tet_materials.grad.numpy()
    assert not mat[:, :2].any() and mat[:, 2].any()
    np.testing.assert_allclose(mat[:, 2], taped["mat"][:, 2], rtol=1e-4, atol=1e-6 * np.abs(taped["mat"]).max())
    # the zero is the finite difference: the loss does not change when the overwritten values do
    _, _, _, moved = _assigned_rollout(shift=10.0)
    assert float(moved.numpy()[0]) == float(loss.numpy()[0])


def test_checkpointed_rollout_gives_the_tape_gradient():
    m = _build(True)
    w = _weights(m.particle_count)
    integ = sim.SemiImplicitIntegrator()

    def step(arrays, t):
        s_in = m.state(requires_grad=False)
        s_in.particle_q, s_in.particle_qd = arrays
        s_in.particle_f = wp.zeros_like(arrays[0])
        s_out = m.state()
        sim.collide(m, s_in)
        integ.simulate(m, s_in, s_out, DT)
        return [s_out.particle_q, s_out.particle_qd]

    s0 = m.state()
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        q, _ = wp.checkpoint(step, [s0.particle_q, s0.particle_qd], steps=STEPS)
        wp.launch(_weighted_sum, m.particle_count, inputs=[q, w], outputs=[loss])
    tape.backward(loss)
    g_ckpt = s0.particle_qd.grad.numpy().copy()

    m2 = _build(True)
    states = _states(m2)
    with wp.Tape() as tape2:
        loss2, states = _rollout(m2, w, states)
    tape2.backward(loss2)
    assert float(loss.numpy()[0]) == pytest.approx(float(loss2.numpy()[0]), rel=1e-5)
    np.testing.assert_allclose(g_ckpt, states[0].particle_qd.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_gradient_through_triangle_lift_and_drag_matches_fd():
    # triangles with lift and drag take the generic adjoints of the membrane and the aerodynamic kernels
    def build(requires_grad):
        b = sim.ModelBuilder()
        for p in [(0.0, 1.0, 0.0), (0.1, 1.0, 0.0), (0.0, 1.0, 0.1), (0.1, 1.02, 0.1)]:
            b.add_particle(p, (0.5, -1.0, 0.2), 0.01)
        b.add_triangle(0, 1, 2, tri_ke=100.0, tri_ka=100.0, tri_kd=0.5, tri_drag=0.5, tri_lift=0.8)
        b.add_triangle(1, 3, 2, tri_ke=100.0, tri_ka=100.0, tri_kd=0.5, tri_drag=0.5, tri_lift=0.8)
        m = b.finalize("cpu", requires_grad=requires_grad)
        m.ground = False
        return m

    def rollout(m, qd0, states=None):
        states = states or [m.state() for _ in range(21)]  # the taped call makes them before the Tape records
        states[0].particle_qd.assign(qd0)
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        integ = sim.SemiImplicitIntegrator()
        for k in range(20):
            integ.simulate(m, states[k], states[k + 1], 2e-3)
        wp.launch(_weighted_sum, m.particle_count, inputs=[states[-1].particle_q, _weights(m.particle_count)],
                  outputs=[loss])
        return loss, states

    m = build(True)
    qd0 = m.particle_qd.numpy().astype(np.float64)
    states = [m.state() for _ in range(21)]
    with wp.Tape() as tape:
        loss, states = rollout(m, qd0.astype(np.float32), states)
    tape.backward(loss)
    g = states[0].particle_qd.grad.numpy().copy()
    eps = 1e-2
    for index in [(1, 0), (3, 1)]:
        lp, lm = qd0.copy(), qd0.copy()
        lp[index] += eps
        lm[index] -= eps
        fd = (float(rollout(build(False), lp.astype(np.float32))[0].numpy()[0]) -
              float(rollout(build(False), lm.astype(np.float32))[0].numpy()[0])) / (2 * eps)
        assert g[index] == pytest.approx(fd, rel=0.02, abs=1e-4)


def _build_shape(kind: str, requires_grad: bool):
    """The soft grid of _build dropped onto a tilted box or a triangle-mesh box (static shapes)."""
    b = sim.ModelBuilder()
    b.add_soft_grid(pos=wp.vec3(0.0, 0.1, 0.0), rot=wp.quat_identity(), vel=wp.vec3(0.3, -1.0, 0.0), dim_x=2,
                    dim_y=2, dim_z=2, cell_x=0.1, cell_y=0.1, cell_z=0.1, density=100.0, k_mu=1e3, k_lambda=1e3,
                    k_damp=0.1)
    rot = wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), 0.3)
    if kind == "box":
        b.add_shape_box(-1, pos=(0.1, 0.02, 0.1), rot=rot, hx=0.3, hy=0.05, hz=0.3, ke=1e3, kd=1.0, kf=10.0)
    else:
        v = np.array([[x, y, z] for x in (-0.3, 0.3) for y in (-0.05, 0.05) for z in (-0.3, 0.3)])
        faces = [0, 1, 3, 0, 3, 2, 4, 6, 7, 4, 7, 5, 0, 4, 5, 0, 5, 1, 2, 3, 7, 2, 7, 6, 0, 2, 6, 0, 6, 4,
                 1, 5, 7, 1, 7, 3]
        b.add_shape_mesh(-1, pos=(0.1, 0.02, 0.1), rot=rot, mesh=sim.Mesh(v.tolist(), faces), ke=1e3, kd=1.0,
                         kf=10.0)
    m = b.finalize("cpu", requires_grad=requires_grad)
    m.ground = False
    m.soft_contact_ke, m.soft_contact_kd, m.soft_contact_kf = 1e3, 1.0, 10.0
    return m


def _shape_loss(kind, v_edit=None, tape=None):
    m = _build_shape(kind, tape is not None)
    states = [m.state() for _ in range(STEPS + 1)]
    if v_edit is not None:
        v = states[0].particle_qd.numpy()
        v[v_edit[0]] += v_edit[1]
        states[0].particle_qd.assign(v)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    integ = sim.SemiImplicitIntegrator()
    contacts = 0
    if tape is not None:
        tape.__enter__()
    for k in range(STEPS):
        sim.collide(m, states[k])
        contacts = max(contacts, int(m.soft_contact_count.numpy()[0]))
        integ.simulate(m, states[k], states[k + 1], DT)
    wp.launch(_weighted_sum, m.particle_count, inputs=[states[-1].particle_q, _weights(m.particle_count)],
              outputs=[loss])
    if tape is not None:
        tape.__exit__(None, None, None)
    return loss, states, contacts


@pytest.mark.parametrize("kind", ["box", "mesh"])
def test_gradient_through_box_and_mesh_contacts_matches_fd(kind):
    """The taped collide differentiates soft_contact_geometry over the found contacts (not the search): initial
    velocity gradients through a tilted box's and a mesh's contacts against central differences."""
    tape = wp.Tape()
    loss, states, contacts = _shape_loss(kind, tape=tape)
    assert contacts > 0
    tape.backward(loss)
    g = states[0].particle_qd.grad.numpy()
    eps = 1e-2
    index = (3, 0) if kind == "box" else (0, 1)
    fd = (float(_shape_loss(kind, (index, eps))[0].numpy()[0])
          - float(_shape_loss(kind, (index, -eps))[0].numpy()[0])) / (2 * eps)
    assert g[index] == pytest.approx(fd, rel=0.05, abs=float(1e-3 * abs(fd) + 1e-5))
