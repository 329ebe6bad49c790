"""weft.sim model layer: builder counts and arrays (reference numbers from warp.sim 1.7.2), inertia, bad input."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import weft as wp
from weft import sim


def _mixed_builder():
    b = sim.ModelBuilder()
    b.add_soft_grid(pos=wp.vec3(0.0, 1.0, 0.0), rot=wp.quat_identity(), vel=wp.vec3(0.0, 0.0, 0.0), dim_x=2, dim_y=2,
                    dim_z=2, cell_x=0.1, cell_y=0.1, cell_z=0.1, density=100.0, k_mu=1e3, k_lambda=1e3, k_damp=0.0)
    b.add_cloth_grid(pos=wp.vec3(0.0, 2.0, 0.0), rot=wp.quat_identity(), vel=wp.vec3(0.0, 0.0, 0.0), dim_x=3,
                     dim_y=3, cell_x=0.1, cell_y=0.1, mass=0.1, add_springs=True)
    b.add_shape_sphere(-1, radius=0.3)
    body = b.add_body()
    b.add_shape_box(body, hx=0.2)
    return b


def test_builder_counts_match_warp_sim():
    # warp.sim 1.7.2 on the same calls: 43 particles, 40 tets, 66 tris, 33 edges, 54 springs, 3 shapes, mass 400,
    # inertia diag(66.667, 38.667, 38.667)
    m = _mixed_builder().finalize("cpu")
    assert (m.particle_count, m.tet_count, m.tri_count, m.edge_count, m.spring_count, m.shape_count) == \
        (43, 40, 66, 33, 54, 3)
    np.testing.assert_allclose(m.body_mass.numpy(), [400.0])
    np.testing.assert_allclose(np.diag(m.body_inertia.numpy()[0]), [66.666664, 38.666668, 38.666668], rtol=1e-6)
    assert m.tri_indices.shape == (66, 3) and m.tet_materials.shape == (40, 3) and m.edge_indices.shape == (33, 4)
    assert m.particle_mass.numpy()[:27].tolist() == pytest.approx([0.1] * 27, rel=1e-6)  # 0.1^3 * 100
    # the ground plane is the last shape
    assert m.shape_geo.type.numpy()[-1] == sim.GEO_PLANE
    np.testing.assert_allclose(m.ground_plane.numpy(), [0.0, 1.0, 0.0, 0.0])
    np.testing.assert_allclose(m.gravity, [0.0, -9.80665, 0.0], rtol=1e-6)


def test_tet_rest_pose_and_volume():
    b = sim.ModelBuilder()
    for p in ((0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)):
        b.add_particle(p, (0, 0, 0), 1.0)
    vol = b.add_tetrahedron(0, 1, 2, 3, k_mu=1.0, k_lambda=2.0, k_damp=0.5)
    assert vol == pytest.approx(1.0 / 6.0)
    m = b.finalize("cpu")
    np.testing.assert_allclose(m.tet_poses.numpy()[0], np.eye(3), atol=1e-7)
    np.testing.assert_allclose(m.tet_materials.numpy()[0], [1.0, 2.0, 0.5])


def test_inverted_and_degenerate_tets_warn_and_are_skipped():
    b = sim.ModelBuilder()
    for p in ((0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0)):
        b.add_particle(p, (0, 0, 0), 1.0)
    with pytest.warns(UserWarning, match="inverted or degenerate"):
        assert b.add_tetrahedron(0, 2, 1, 3) < 0.0  # inverted
    with pytest.warns(UserWarning, match="inverted or degenerate"):
        assert b.add_tetrahedron(0, 1, 2, 4) == 0.0  # flat
    assert b.tet_count == 0


def test_bad_input_errors():
    with pytest.raises(sim.SimError, match="empty"):
        sim.ModelBuilder().finalize("cpu")
    b = sim.ModelBuilder()
    b.add_particle((0, 0, 0), (0, 0, 0), 1.0)
    with pytest.raises(sim.SimError, match="'j'"):
        b.add_spring(0, 5, 1.0, 0.0, 0.0)
    with pytest.raises(sim.SimError, match="mass"):
        b.add_particle((0, 0, 0), (0, 0, 0), -1.0)
    with pytest.raises(sim.SimError, match="body"):
        b.add_shape_sphere(3, radius=0.1)
    m1 = b.finalize("cpu")
    b2 = sim.ModelBuilder()
    b2.add_particle((0, 0, 0), (0, 0, 0), 1.0)
    b2.add_particle((1, 0, 0), (0, 0, 0), 1.0)
    m2 = b2.finalize("cpu")
    integ = sim.SemiImplicitIntegrator()
    with pytest.raises(sim.SimError, match="state_in"):
        integ.simulate(m1, m2.state(), m1.state(), 1e-3)
    with pytest.raises(sim.SimError, match="dt"):
        integ.simulate(m1, m1.state(), m1.state(), 0.0)


def test_add_builder_replicates_environments():
    env = sim.ModelBuilder()
    env.add_cloth_grid(pos=wp.vec3(0.0, 1.0, 0.0), rot=wp.quat_identity(), vel=wp.vec3(0.0, 0.0, 0.0), dim_x=2,
                       dim_y=2, cell_x=0.1, cell_y=0.1, mass=0.1)
    env.add_shape_sphere(-1, pos=(0.0, 0.5, 0.0), radius=0.1)
    world = sim.ModelBuilder()
    for k in range(3):
        world.add_builder(env, xform=wp.transform(wp.vec3(k * 2.0, 0.0, 0.0), wp.quat_identity()))
    m = world.finalize("cpu")
    assert m.num_envs == 3
    assert m.particle_count == 27 and m.tri_count == 24 and m.shape_count == 4
    q = m.particle_q.numpy().reshape(3, 9, 3)
    np.testing.assert_allclose(q[2] - q[0], np.tile([4.0, 0.0, 0.0], (9, 1)), atol=1e-6)
    tri = m.tri_indices.numpy().reshape(3, 8, 3)
    np.testing.assert_array_equal(tri[1] - tri[0], 9)
    np.testing.assert_allclose(m.shape_transform.numpy()[2][:3], [4.0, 0.5, 0.0], atol=1e-6)


def test_shape_inertia_matches_closed_forms():
    from weft.sim.inertia import compute_mesh_inertia

    b = sim.ModelBuilder()
    body = b.add_body()
    b.add_shape_sphere(body, radius=0.5, density=2.0)
    m = b.finalize("cpu")
    mass = 2.0 * 4.0 / 3.0 * math.pi * 0.125
    assert m.body_mass.numpy()[0] == pytest.approx(mass, rel=1e-6)
    np.testing.assert_allclose(np.diag(m.body_inertia.numpy()[0]), [0.4 * mass * 0.25] * 3, rtol=1e-6)
    # a unit cube mesh: mass 1, inertia 1/6
    v = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)])
    faces = [[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1], [2, 3, 7], [2, 7, 6], [0, 2, 6],
             [0, 6, 4], [1, 5, 7], [1, 7, 3]]
    mass, com, inertia, vol = compute_mesh_inertia(1.0, v, np.array(faces).reshape(-1))
    assert vol == pytest.approx(1.0) and mass == pytest.approx(1.0)
    np.testing.assert_allclose(np.array(inertia), np.eye(3) / 6.0, atol=1e-12)
    np.testing.assert_allclose(np.array(com), 0.0, atol=1e-12)


def test_utils_quat_euler_round_trip():
    q = sim.quat_from_euler(wp.vec3(0.3, -0.2, 0.5), 0, 1, 2)
    e = sim.quat_to_euler(q, 0, 1, 2)
    np.testing.assert_allclose(np.array(e), [0.3, -0.2, 0.5], atol=1e-5)
    v = sim.velocity_at_point(wp.spatial_vector(0.0, 0.0, 1.0, 1.0, 0.0, 0.0), wp.vec3(1.0, 0.0, 0.0))
    np.testing.assert_allclose(np.array(v), [1.0, 1.0, 0.0], atol=1e-7)


def test_cloth_grid_fixed_edge_is_inactive_and_massless():
    b = sim.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b.add_cloth_grid(pos=wp.vec3(0.0, 1.0, 0.0), rot=wp.quat_identity(), vel=wp.vec3(0.0, 0.0, 0.0), dim_x=2,
                         dim_y=1, cell_x=0.1, cell_y=0.1, mass=0.2, fix_left=True)
    m = b.finalize("cpu")
    assert m.particle_mass.numpy().tolist() == pytest.approx([0.0, 0.2, 0.2, 0.0, 0.2, 0.2])
    assert m.particle_flags.numpy().tolist() == [0, 1, 1, 0, 1, 1]
