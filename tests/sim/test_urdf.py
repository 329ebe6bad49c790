"""wp.sim.parse_urdf: the shipped 7-DoF arm against a float64 NumPy FK read straight from the XML (and Pinocchio when
installed), inertials, bases, meshes through trimesh, and errors for malformed files."""

from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import weft as wp
from weft.sim import SimError

ARM = os.path.join(os.path.dirname(wp.sim.__file__), "assets", "arm7.urdf")
WARP_ASSETS = "/opt/warp172/lib/python3.11/site-packages/warp/examples/assets"

# -- float64 reference: homogeneous transforms straight from the URDF text -----------------------------------------


def _rpy(r, p, y):
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return rz @ ry @ rx


def _rodrigues(axis, angle):
    k = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(angle) * kx + (1 - math.cos(angle)) * kx @ kx


def _vec(el, attr, default):
    return [float(x) for x in ((el.get(attr) if el is not None else None) or default).split()]


def _homog(rot, pos):
    t = np.eye(4)
    t[:3, :3], t[:3, 3] = rot, pos
    return t


def _ref_fk(path, q_by_joint, base=None):
    """World 4x4 pose of every link for joint angles ``q_by_joint`` (name -> value), the root at ``base``."""
    root = ET.parse(path).getroot()
    poses = {}
    children = {j.find("child").get("link"): j for j in root.findall("joint")}
    roots = [link.get("name") for link in root.findall("link") if link.get("name") not in children]
    poses[roots[0]] = np.eye(4) if base is None else base

    def pose(link):
        if link not in poses:
            j = children[link]
            origin = j.find("origin")
            t = pose(j.find("parent").get("link")) @ _homog(_rpy(*_vec(origin, "rpy", "0 0 0")),
                                                             _vec(origin, "xyz", "0 0 0"))
            axis = _vec(j.find("axis"), "xyz", "1 0 0")
            if j.get("type") in ("revolute", "continuous"):
                t = t @ _homog(_rodrigues(axis, q_by_joint[j.get("name")]), np.zeros(3))
            elif j.get("type") == "prismatic":
                t = t @ _homog(np.eye(3), np.asarray(axis) / np.linalg.norm(axis) * q_by_joint[j.get("name")])
            poses[link] = t
        return poses[link]

    return {link.get("name"): pose(link.get("name")) for link in root.findall("link")}


def _body_poses(model, joint_q):
    state = model.state()
    wp.sim.eval_fk(model, wp.array(np.asarray(joint_q, dtype=np.float32), dtype=float), model.joint_qd, None, state)
    out = []
    for p in state.body_q.numpy().astype(np.float64):
        x, y, z, w = p[3:]
        rot = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
        out.append(_homog(rot, p[:3]))
    return out


def _random_q(builder, rng):
    q = np.zeros(builder.joint_coord_count)
    for j, jt in enumerate(builder.joint_type):
        if jt == int(wp.sim.JOINT_REVOLUTE):
            a = builder.joint_axis_start[j]
            q[builder.joint_q_start[j]] = rng.uniform(builder.joint_limit_lower[a], builder.joint_limit_upper[a])
    return q


# -- the shipped arm ----------------------------------------------------------------------------------------------


def test_arm7_structure():
    b = wp.sim.ModelBuilder()
    wp.sim.parse_urdf(ARM, b)
    assert b.body_name == ["base", "l1", "l2", "l3", "l4", "l5", "l6", "l7", "tool"]
    assert b.joint_name == ["fixed_base", "j1", "j2", "j3", "j4", "j5", "j6", "j7", "tool_joint"]
    assert b.joint_coord_count == b.joint_dof_count == 7
    assert [int(t) for t in b.joint_type].count(int(wp.sim.JOINT_REVOLUTE)) == 7
    assert b.joint_limit_lower[3] == pytest.approx(-3.0) and b.joint_limit_upper[3] == pytest.approx(0.1)
    assert b.joint_target_kd[0] == pytest.approx(1.0) and b.joint_target_kd[2] == pytest.approx(10.0)  # <dynamics>
    assert all(m == int(wp.sim.JOINT_MODE_TARGET_POSITION) for m in b.joint_axis_mode)
    # every parent joint comes before its children
    seen = {-1}
    for parent, child in zip(b.joint_parent, b.joint_child):
        assert parent in seen
        seen.add(child)


@pytest.mark.parametrize("seed", [0, 1])
def test_arm7_fk_matches_float64_reference(seed):
    rng = np.random.default_rng(seed)
    b = wp.sim.ModelBuilder()
    xform = wp.transform((0.3, -0.2, 0.1), wp.quat_rpy(0.2, -0.1, 0.7))
    wp.sim.parse_urdf(ARM, b, xform=xform)
    model = b.finalize("cpu")
    base = _homog(_rpy(0.2, -0.1, 0.7), [0.3, -0.2, 0.1])
    for _ in range(3):
        q = _random_q(b, rng)
        ref = _ref_fk(ARM, {b.joint_name[j]: q[b.joint_q_start[j]] for j in range(b.joint_count)
                            if b.joint_type[j] == int(wp.sim.JOINT_REVOLUTE)}, base)
        got = _body_poses(model, q)
        for i, name in enumerate(b.body_name):
            np.testing.assert_allclose(got[i], ref[name], atol=2e-5, err_msg=name)


def test_arm7_fk_matches_pinocchio():
    pin = pytest.importorskip("pinocchio")
    pmodel = pin.buildModelFromUrdf(ARM)
    pdata = pmodel.createData()
    b = wp.sim.ModelBuilder()
    wp.sim.parse_urdf(ARM, b)
    model = b.finalize("cpu")
    rng = np.random.default_rng(7)
    for _ in range(3):
        q = _random_q(b, rng)
        pq = np.zeros(pmodel.nq)
        for j in range(b.joint_count):
            if b.joint_type[j] == int(wp.sim.JOINT_REVOLUTE):
                pq[pmodel.joints[pmodel.getJointId(b.joint_name[j])].idx_q] = q[b.joint_q_start[j]]
        pin.forwardKinematics(pmodel, pdata, pq)
        pin.updateFramePlacements(pmodel, pdata)
        got = _body_poses(model, q)
        for i, name in enumerate(b.body_name):
            ref = pdata.oMf[pmodel.getFrameId(name)].homogeneous
            np.testing.assert_allclose(got[i], ref, atol=1e-5, err_msg=name)


def test_arm7_inertials_and_shape_masses():
    b = wp.sim.ModelBuilder()
    wp.sim.parse_urdf(ARM, b, ignore_inertial_definitions=False)
    assert b.body_mass[0] == pytest.approx(9.0) and b.body_inv_mass[0] == pytest.approx(1 / 9.0)
    np.testing.assert_allclose(np.array(b.body_com[4]), [0.01, 0.0, 0.125], atol=1e-7)
    # l2's inertia is given in a frame turned 0.3 rad about z: the body gets R I R^T
    local = np.array([[0.0208, 0.001, 0], [0.001, 0.0208, 0], [0, 0, 0.0042]])
    rot = _rpy(0, 0, 0.3)
    np.testing.assert_allclose(np.array(b.body_inertia[2]).reshape(3, 3), rot @ local @ rot.T, atol=1e-8)
    np.testing.assert_allclose(np.array(b.body_inv_inertia[2]).reshape(3, 3),
                               np.linalg.inv(rot @ local @ rot.T), rtol=1e-5)
    # default: mass from the collision shapes at the given density (the base is a 0.3 x 0.3 x 0.1 box)
    b2 = wp.sim.ModelBuilder()
    wp.sim.parse_urdf(ARM, b2, density=500.0)
    assert b2.body_mass[0] == pytest.approx(500.0 * 0.3 * 0.3 * 0.1, rel=1e-6)
    assert b2.shape_geo_type.count(wp.sim.GEO_CAPSULE) == 4  # three cylinders and the tool's capsule
    # the visual box is not a collider and has no mass
    assert not b2.shape_shape_collision[0] and b2.shape_shape_collision[1]


def test_arm7_floating_base_and_scale():
    b = wp.sim.ModelBuilder()
    xform = wp.transform((1.0, 2.0, 3.0), wp.quat_rpy(0.0, 0.0, 0.5))
    wp.sim.parse_urdf(ARM, b, xform=xform, floating=True, scale=2.0)
    assert b.joint_type[0] == int(wp.sim.JOINT_FREE) and b.joint_coord_count == 14
    np.testing.assert_allclose(b.joint_q[:7], [*xform.p, *xform.q], atol=1e-7)
    model = b.finalize("cpu")
    q = np.array(b.joint_q)
    got = _body_poses(model, q)
    ref = _ref_fk(ARM, dict.fromkeys((f"j{i}" for i in range(1, 8)), 0.0))
    base = _homog(_rpy(0, 0, 0.5), [1.0, 2.0, 3.0])
    tool = base @ _homog(ref["tool"][:3, :3], 2.0 * ref["tool"][:3, 3])  # scale doubles every length
    np.testing.assert_allclose(got[-1], tool, atol=2e-5)


def test_base_joint_axes():
    b = wp.sim.ModelBuilder()
    wp.sim.parse_urdf(ARM, b, base_joint="px, py, rz")
    assert b.joint_type[0] == int(wp.sim.JOINT_D6) and b.joint_axis_dim[0] == (2, 1)
    assert b.joint_coord_count == 10
    with pytest.raises(SimError, match="base_joint"):
        wp.sim.parse_urdf(ARM, wp.sim.ModelBuilder(), base_joint="qx")


# -- small files written by the tests ----------------------------------------------------------------------------

_LINK = '<link name="{0}"><collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision></link>'


def _robot(tmp_path, body, name="robot.urdf"):
    path = tmp_path / name
    path.write_text(f'<?xml version="1.0"?>\n<robot name="t">{body}</robot>')
    return str(path)


def _joint(name, kind, parent, child, extra=""):
    return f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>{extra}</joint>'


def test_prismatic_planar_continuous_floating(tmp_path):
    body = "".join(_LINK.format(n) for n in "abcde") + \
        _joint("slide", "prismatic", "a", "b", '<axis xyz="0 0 2"/><limit lower="-0.5" upper="0.5"/>') + \
        _joint("spin", "continuous", "b", "c", '<axis xyz="0 1 0"/>') + \
        _joint("plane", "planar", "c", "d", '<axis xyz="0 0 1"/>') + _joint("float", "floating", "d", "e")
    b = wp.sim.ModelBuilder()
    wp.sim.parse_urdf(_robot(tmp_path, body), b, scale=3.0, stiffness=0.0)
    assert [int(t) for t in b.joint_type] == [int(wp.sim.JOINT_FIXED), int(wp.sim.JOINT_PRISMATIC),
                                              int(wp.sim.JOINT_REVOLUTE), int(wp.sim.JOINT_D6),
                                              int(wp.sim.JOINT_FREE)]
    assert b.joint_limit_lower[0] == pytest.approx(-1.5) and b.joint_limit_upper[0] == pytest.approx(1.5)
    assert b.joint_limit_lower[1] <= -1e6 and b.joint_limit_upper[1] >= 1e6  # continuous: unlimited
    u, v = (np.array(b.joint_axis[i]) for i in (2, 3))
    assert b.joint_axis_dim[3] == (2, 0)
    np.testing.assert_allclose([u @ [0, 0, 1], v @ [0, 0, 1], u @ v], 0.0, atol=1e-7)
    assert all(m == int(wp.sim.JOINT_MODE_FORCE) for m in b.joint_axis_mode)
    assert b.shape_geo_scale[0] == pytest.approx((0.15, 0.15, 0.15))


@pytest.mark.parametrize("body, match", [
    (_LINK.format("a") + _LINK.format("b") + _joint("j", "gimbal", "a", "b"), r"<joint name='j'>.*gimbal"),
    (_LINK.format("a") + _joint("j", "fixed", "a", "ghost"), r"<joint name='j'>.*'ghost'"),
    (_LINK.format("a") + _LINK.format("b") + '<joint name="j" type="fixed"><parent link="a"/></joint>',
     r"<joint name='j'>.*child"),
    (_LINK.format("a") + _LINK.format("b") + _joint("j1", "fixed", "a", "b") + _joint("j2", "fixed", "b", "a"),
     "cycle"),
    (_LINK.format("r") + _LINK.format("a") + _LINK.format("b") + _joint("j0", "fixed", "r", "a") +
     _joint("j1", "fixed", "a", "b") + _joint("j2", "fixed", "b", "a"), r"<joint name='j2'>.*already the child"),
    (_LINK.format("a") + _LINK.format("b"), "2 root links"),
    ('<link name="a"><inertial><mass value="-1"/><inertia ixx="1" iyy="1" izz="1"/></inertial></link>',
     r"<link name='a'>.*negative mass"),
    ('<link name="a"><inertial><mass value="1"/><inertia ixx="1" ixy="2" iyy="1" izz="1"/></inertial></link>',
     r"<link name='a'>.*not positive definite"),
    ('<link name="a"><visual><geometry><mesh filename="package://nopkg/missing.obj"/></geometry></visual></link>',
     r"<mesh>.*missing.obj.*not found"),
    ('<link name="a"><collision><geometry><torus/></geometry></collision></link>', "unknown geometry"),
    (_LINK.format("a") + _LINK.format("b") + _joint("j", "revolute", "a", "b", '<axis xyz="0 0 0"/>'), "zero"),
    ('<link name="a"><collision><geometry><box size="1 x 1"/></geometry></collision></link>', "size"),
])
def test_bad_files_name_file_and_element(tmp_path, body, match):
    path = _robot(tmp_path, body, "bad.urdf")
    with pytest.raises(SimError, match=match) as info:
        wp.sim.parse_urdf(path, wp.sim.ModelBuilder())
    assert "bad.urdf" in str(info.value)


def test_unreadable_files(tmp_path):
    with pytest.raises(SimError, match="does not exist"):
        wp.sim.parse_urdf(str(tmp_path / "nope.urdf"), wp.sim.ModelBuilder())
    broken = tmp_path / "broken.urdf"
    broken.write_text("<robot><link name='a'></robot>")
    with pytest.raises(SimError, match="broken.urdf.*XML"):
        wp.sim.parse_urdf(str(broken), wp.sim.ModelBuilder())
    with pytest.raises(SimError, match="builder"):
        wp.sim.parse_urdf(ARM, object())


def test_meshes_through_trimesh(tmp_path):
    trimesh = pytest.importorskip("trimesh")
    mesh_dir = tmp_path / "my_robot" / "meshes"
    mesh_dir.mkdir(parents=True)
    trimesh.creation.box(extents=(0.2, 0.4, 0.5)).export(mesh_dir / "block.obj")
    body = ('<link name="a"><collision><geometry><mesh filename="package://my_robot/meshes/block.obj" '
            'scale="2 1 1"/></geometry></collision></link>'
            '<link name="b"><collision><geometry><mesh filename="meshes/block.obj"/></geometry></collision></link>'
            + _joint("j", "fixed", "a", "b"))
    urdf_dir = tmp_path / "my_robot"
    b = wp.sim.ModelBuilder()
    wp.sim.parse_urdf(_robot(urdf_dir, body), b, density=100.0)  # the package folder holds the URDF
    assert b.shape_geo_type == [wp.sim.GEO_MESH, wp.sim.GEO_MESH]
    assert b.body_mass[0] == pytest.approx(100.0 * 0.4 * 0.4 * 0.5, rel=1e-5)
    assert b.body_mass[1] == pytest.approx(100.0 * 0.2 * 0.4 * 0.5, rel=1e-5)
    # a URDF elsewhere finds the package through package_dirs (a folder of packages, or a name -> folder dict)
    other = tmp_path / "elsewhere"
    other.mkdir()
    path = _robot(other, body.replace('"meshes/block.obj"', '"package://my_robot/meshes/block.obj"'))
    for dirs in (str(tmp_path), {"my_robot": str(urdf_dir)}):
        b = wp.sim.ModelBuilder()
        wp.sim.parse_urdf(path, b, package_dirs=dirs)
        assert b.shape_count == 2
    with pytest.raises(SimError, match="<mesh>.*not found"):
        wp.sim.parse_urdf(path, wp.sim.ModelBuilder())


@pytest.mark.skipif(not os.path.isdir(WARP_ASSETS), reason="warp-lang 1.7.2's example assets are not installed")
def test_warp_cartpole_asset():
    b = wp.sim.ModelBuilder()
    wp.sim.parse_urdf(os.path.join(WARP_ASSETS, "cartpole.urdf"), b, xform=wp.transform_identity())
    assert b.body_name == ["slider", "cart", "pole1", "pole2"]
    assert [int(t) for t in b.joint_type] == [int(wp.sim.JOINT_FIXED), int(wp.sim.JOINT_PRISMATIC),
                                              int(wp.sim.JOINT_REVOLUTE), int(wp.sim.JOINT_REVOLUTE)]
    assert b.joint_limit_lower[0] == pytest.approx(-4.0) and b.joint_limit_upper[0] == pytest.approx(4.0)
    model = b.finalize("cpu")
    q = np.array([0.5, 0.3, -0.2])
    ref = _ref_fk(os.path.join(WARP_ASSETS, "cartpole.urdf"),
                  {"slider_to_cart": 0.5, "cart_to_pole1": 0.3, "pole1_to_pole2": -0.2})
    got = _body_poses(model, q)
    for i, name in enumerate(b.body_name):
        np.testing.assert_allclose(got[i], ref[name], atol=2e-5, err_msg=name)


# -- collapse_fixed_joints ---------------------------------------------------------------------------------------


def _tf_h(tf):
    return _body_poses_from_array(np.array([[*tf.p, *tf.q]], dtype=np.float64))[0]


def _body_poses_from_array(rows):
    out = []
    for p in rows:
        x, y, z, w = p[3:]
        rot = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
        out.append(_homog(rot, p[:3]))
    return out


def _shape_world(builder, poses):
    return [(poses[b] if b > -1 else np.eye(4)) @ _tf_h(builder.shape_transform[s])
            for s, b in enumerate(builder.shape_body)]


_TREE = ("".join(_LINK.format(n) for n in "abcdef") +
         _joint("ja", "revolute", "a", "b", '<origin xyz="0 0 0.2" rpy="0.1 0 0"/><axis xyz="0 0 1"/>') +
         _joint("weld1", "fixed", "b", "c", '<origin xyz="0.1 0 0.3" rpy="0 0.4 0.2"/>') +
         _joint("jc", "prismatic", "c", "d", '<origin xyz="0 0.1 0" rpy="0.3 0 0"/><axis xyz="1 0 0"/>') +
         _joint("weld2", "fixed", "c", "e", '<origin xyz="0 0 0.2" rpy="0 0 -0.5"/>') +
         _joint("je", "continuous", "e", "f", '<origin xyz="0.05 0 0.1"/><axis xyz="0 1 0"/>'))


@pytest.mark.parametrize("which", ["arm7", "tree"])
def test_collapse_fixed_joints_keeps_kinematics_and_mass(tmp_path, which):
    path = ARM if which == "arm7" else _robot(tmp_path, _TREE)
    full, merged = wp.sim.ModelBuilder(), wp.sim.ModelBuilder()
    kw = {"xform": wp.transform((0.2, 0.0, 0.1), wp.quat_rpy(0.0, 0.3, 0.0)), "ignore_inertial_definitions": False}
    wp.sim.parse_urdf(path, full, **kw)
    wp.sim.parse_urdf(path, merged, collapse_fixed_joints=True, **kw)
    fixed = [int(t) == int(wp.sim.JOINT_FIXED) for t in full.joint_type]
    assert merged.joint_count == full.joint_count - sum(fixed)
    assert int(wp.sim.JOINT_FIXED) not in [int(t) for t in merged.joint_type]
    assert merged.joint_coord_count == full.joint_coord_count and merged.shape_count == full.shape_count
    assert merged.articulation_start == [0]
    rng = np.random.default_rng(3)
    q = _random_q(full, rng)
    if which == "tree":
        q = rng.uniform(-1.0, 1.0, full.joint_coord_count)
    poses_full = _body_poses(full.finalize("cpu"), q)
    poses_merged = _body_poses(merged.finalize("cpu"), q)
    # every retained body is where it was; every shape (welded ones included) is where it was
    for i, name in enumerate(merged.body_name):
        np.testing.assert_allclose(poses_merged[i], poses_full[full.body_name.index(name)], atol=2e-5)
    for a, b in zip(_shape_world(full, poses_full), _shape_world(merged, poses_merged)):
        np.testing.assert_allclose(a, b, atol=2e-5)
    # each merged body carries the mass, world centre of mass and world inertia of the bodies welded into it
    groups = {i: [full.body_name.index(name)] for i, name in enumerate(merged.body_name)}
    for j, is_fixed in enumerate(fixed):
        if is_fixed and full.joint_parent[j] > -1:
            parent_name = full.body_name[full.joint_parent[j]]
            for i, members in groups.items():
                if full.joint_parent[j] in members:
                    members.append(full.joint_child[j])
                    break
            else:
                pytest.fail(f"{parent_name} not found")
    for i, members in groups.items():
        masses = np.array([full.body_mass[b] for b in members])
        coms = [poses_full[b][:3, :3] @ np.array(full.body_com[b]) + poses_full[b][:3, 3] for b in members]
        com = sum(m * c for m, c in zip(masses, coms)) / masses.sum()
        inertia = sum(poses_full[b][:3, :3] @ np.array(full.body_inertia[b]).reshape(3, 3) @ poses_full[b][:3, :3].T
                      + full.body_mass[b] * ((c - com) @ (c - com) * np.eye(3) - np.outer(c - com, c - com))
                      for b, c in zip(members, coms))
        rot, pos = poses_merged[i][:3, :3], poses_merged[i][:3, 3]
        assert merged.body_mass[i] == pytest.approx(masses.sum(), rel=1e-12)
        np.testing.assert_allclose(rot @ np.array(merged.body_com[i]) + pos, com, atol=2e-5)
        np.testing.assert_allclose(rot @ np.array(merged.body_inertia[i]).reshape(3, 3) @ rot.T, inertia,
                                   rtol=1e-4, atol=1e-8)
        np.testing.assert_allclose(np.array(merged.body_inv_inertia[i]).reshape(3, 3),
                                   np.linalg.inv(np.array(merged.body_inertia[i]).reshape(3, 3)), rtol=1e-4)


def test_collapse_without_fixed_joints_changes_nothing():
    b = wp.sim.ModelBuilder()
    b.add_body()
    b.add_body()
    b.add_joint_revolute(-1, 0)
    b.add_joint_ball(0, 1)
    before = (list(b.joint_type), list(b.joint_q), list(b.body_mass))
    b.collapse_fixed_joints()
    assert (list(b.joint_type), list(b.joint_q), list(b.body_mass)) == before
