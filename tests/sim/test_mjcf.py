"""wp.sim.parse_mjcf: a small MJCF written here (default classes, every orientation form, hinge/slide/ball/free
joints, several joints on one body) against a float64 NumPy FK written from the MJCF semantics, geoms and masses,
base options, and errors for malformed files."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

import weft as wp
from weft.sim import SimError

WARP_ASSETS = "/opt/warp172/lib/python3.11/site-packages/warp/examples/assets"

MODEL = """<mujoco model="weft-test">
  <compiler angle="degree"/>
  <default>
    <joint damping="0.5" axis="0 1 0"/>
    <geom type="capsule" size="0.05 0.1"/>
    <default class="arm">
      <joint damping="2" range="-90 90"/>
      <geom type="box" size="0.1 0.05 0.04" density="500"/>
      <default class="slider">
        <joint type="slide" axis="1 0 0" range="-0.2 0.3"/>
      </default>
    </default>
  </default>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="base" pos="0.1 0.2 0.3" euler="10 20 30">
      <geom type="sphere" size="0.1"/>
      <body name="link1" pos="0 0 0.4" quat="0.9 0.1 0.2 0.3" childclass="arm">
        <joint name="j1" pos="0.05 0 0" axis="0 0 1"/>
        <geom/>
        <body name="link2" pos="0.3 0 0" axisangle="1 1 0 45">
          <joint name="j2" class="slider" pos="0.02 0.01 0"/>
          <joint name="j3" pos="0.02 0.01 0" axis="1 0 0"/>
          <joint name="j4" pos="0.02 0.01 0" limited="false" armature="0.3"/>
          <geom type="capsule" fromto="0 0 0 0.2 0.1 0" size="0.03"/>
          <body name="link3" pos="0.2 0 0" xyaxes="0 1 0 -1 0 0">
            <joint name="j5" type="ball"/>
            <geom type="cylinder" size="0.04 0.1"/>
            <body name="tip" pos="0 0 0.2" zaxis="1 0 1">
              <geom type="sphere" size="0.02"/>
            </body>
          </body>
        </body>
      </body>
    </body>
    <body name="box" pos="1 0 1" euler="0 0 90">
      <freejoint name="box_free"/>
      <geom type="box" size="0.1 0.2 0.3" density="200"/>
    </body>
  </worldbody>
</mujoco>
"""

# -- float64 reference written from the MJCF semantics (degrees, w-first quaternions, intrinsic xyz Euler) -------


def _axis_rot(axis, angle):
    k = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(angle) * kx + (1 - math.cos(angle)) * kx @ kx


def _quat_rot(w, x, y, z):
    n = math.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w / n, x / n, y / n, z / n
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def _homog(rot, pos):
    t = np.eye(4)
    t[:3, :3], t[:3, 3] = rot, pos
    return t


def _trans(p):
    return _homog(np.eye(3), p)


D = math.radians
X, Y, Z = np.eye(3)


def _ref_fk(q: dict, world):
    """World pose of every body of MODEL for joint values ``q`` (name -> value; j5 a w-first quaternion,
    box_free a position and a w-first quaternion), the file frame at ``world``."""
    base = world @ _homog(_axis_rot(X, D(10)) @ _axis_rot(Y, D(20)) @ _axis_rot(Z, D(30)), [0.1, 0.2, 0.3])
    p1 = np.array([0.05, 0, 0])
    link1 = base @ _homog(_quat_rot(0.9, 0.1, 0.2, 0.3), [0, 0, 0.4]) @ _trans(p1) \
        @ _homog(_axis_rot(Z, q["j1"]), np.zeros(3)) @ _trans(-p1)
    p2 = np.array([0.02, 0.01, 0])
    link2 = link1 @ _homog(_axis_rot([1, 1, 0], D(45)), [0.3, 0, 0]) @ _trans(X * q["j2"]) @ _trans(p2) \
        @ _homog(_axis_rot(X, q["j3"]) @ _axis_rot(Y, q["j4"]), np.zeros(3)) @ _trans(-p2)
    link3 = link2 @ _homog(np.column_stack([Y, -X, Z]), [0.2, 0, 0]) @ _homog(_quat_rot(*q["j5"]), np.zeros(3))
    zaxis = np.array([1, 0, 1]) / math.sqrt(2)
    tip = link3 @ _homog(_axis_rot(np.cross(Z, zaxis), math.acos(zaxis[2])), [0, 0, 0.2])
    box = world @ _homog(_axis_rot(Z, D(90)), [1, 0, 1])
    if "box_free" in q:
        box = box @ _homog(_quat_rot(*q["box_free"][3:]), q["box_free"][:3])
    return {"base": base, "link1": link1, "link2": link2, "link3": link3, "tip": tip, "box": box}


def _write(tmp_path, text, name="model.xml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _body_poses(model, joint_q):
    state = model.state()
    wp.sim.eval_fk(model, wp.array(np.asarray(joint_q, dtype=np.float32), dtype=float), model.joint_qd, None, state)
    out = []
    for p in state.body_q.numpy().astype(np.float64):
        x, y, z, w = p[3:]
        out.append(_homog(_quat_rot(w, x, y, z), p[:3]))
    return out


def _set(b, q, name, values):
    j = b.joint_name.index(name)
    q[b.joint_q_start[j]:b.joint_q_start[j] + len(values)] = values


# -- structure --------------------------------------------------------------------------------------------------


def test_structure_classes_and_joint_combination(tmp_path):
    b = wp.sim.ModelBuilder()
    wp.sim.parse_mjcf(_write(tmp_path, MODEL), b, up_axis="Y")
    assert b.body_name == ["base", "link1", "link2", "link3", "tip", "box"]
    assert b.joint_name == ["base_joint", "j1", "j2_j3_j4", "j5", "tip_joint", "fixed_base"]
    types = [int(t) for t in b.joint_type]
    assert types == [int(t) for t in (wp.sim.JOINT_FIXED, wp.sim.JOINT_REVOLUTE, wp.sim.JOINT_D6, wp.sim.JOINT_BALL,
                                      wp.sim.JOINT_FIXED, wp.sim.JOINT_FIXED)]
    assert b.joint_axis_dim[2] == (1, 2)
    # axes: j1 given, j2 from class "slider", j3 given, j4 from the main default
    np.testing.assert_allclose(np.array(b.joint_axis[:4], dtype=np.float64), [Z, X, X, Y], atol=1e-7)
    lower, upper = np.array(b.joint_limit_lower[:4]), np.array(b.joint_limit_upper[:4])
    np.testing.assert_allclose(lower, [-math.pi / 2, -0.2, -math.pi / 2, -1e6], rtol=1e-6)
    np.testing.assert_allclose(upper, [math.pi / 2, 0.3, math.pi / 2, 1e6], rtol=1e-6)
    # damping: "arm" overrides the main default, "slider" inherits "arm"'s
    np.testing.assert_allclose(b.joint_target_kd[:4], [2.0, 2.0, 2.0, 2.0])
    assert b.joint_armature[b.joint_qd_start[2]] == pytest.approx(0.0)  # warp.sim: the first joint's armature
    assert all(m == int(wp.sim.JOINT_MODE_TARGET_POSITION) for m in b.joint_axis_mode[:4])


@pytest.mark.parametrize("seed", [0, 1])
def test_fk_matches_float64_reference(tmp_path, seed):
    rng = np.random.default_rng(seed)
    b = wp.sim.ModelBuilder()
    xform = wp.transform((0.3, -0.2, 0.1), wp.quat_rpy(0.2, -0.1, 0.7))
    wp.sim.parse_mjcf(_write(tmp_path, MODEL), b, xform=xform, floating=None)
    model = b.finalize("cpu")
    # warp.sim's convention: the Z-up file is turned Y-up, after xform's rotation (q = up * xform.q)
    x, y, z, w = (float(c) for c in xform.q)
    world = _homog(_axis_rot(X, -math.pi / 2) @ _quat_rot(w, x, y, z), [0.3, -0.2, 0.1])
    for _ in range(3):
        values = {"j1": rng.uniform(-1.5, 1.5), "j2": rng.uniform(-0.2, 0.3), "j3": rng.uniform(-1.5, 1.5),
                  "j4": rng.uniform(-3, 3)}
        ball = rng.normal(size=4)
        ball /= np.linalg.norm(ball)
        free_q = rng.normal(size=4)
        free_q /= np.linalg.norm(free_q)
        free = np.concatenate([rng.normal(size=3), free_q])
        q = np.array(b.joint_q, dtype=np.float64)
        _set(b, q, "j1", [values["j1"]])
        _set(b, q, "j2_j3_j4", [values["j2"], values["j3"], values["j4"]])
        _set(b, q, "j5", [*ball[1:], ball[0]])
        _set(b, q, "box_free", [*free[:3], *free[4:], free[3]])
        ref = _ref_fk({**values, "j5": ball, "box_free": free}, world)
        got = _body_poses(model, q)
        for i, name in enumerate(b.body_name):
            np.testing.assert_allclose(got[i], ref[name], atol=2e-5, err_msg=name)


def test_geoms_sizes_fromto_and_masses(tmp_path):
    b = wp.sim.ModelBuilder()
    wp.sim.parse_mjcf(_write(tmp_path, MODEL), b, up_axis="Y", density=1000.0)
    # shapes in file order: floor comes last (world geoms after the bodies)
    geo = [int(t) for t in b.shape_geo_type]
    assert geo == [int(t) for t in (wp.sim.GEO_SPHERE, wp.sim.GEO_BOX, wp.sim.GEO_CAPSULE, wp.sim.GEO_CYLINDER,
                                    wp.sim.GEO_SPHERE, wp.sim.GEO_BOX, wp.sim.GEO_PLANE)]
    assert b.shape_body == [0, 1, 2, 3, 4, 5, -1]
    np.testing.assert_allclose(b.shape_geo_scale[1], [0.1, 0.05, 0.04], rtol=1e-6)
    length = math.hypot(0.2, 0.1)
    np.testing.assert_allclose(b.shape_geo_scale[2][:2], [0.03, 0.5 * length], rtol=1e-6)
    # the fromto capsule's axis runs from (0,0,0) to (0.2,0.1,0), centred between them
    tf = b.shape_transform[2]
    np.testing.assert_allclose(np.array(tf.p, dtype=np.float64), [0.1, 0.05, 0.0], atol=1e-7)
    # masses from the geoms and their densities ("arm", the childclass of link1 and everything below: 500; the
    # box 200; the base the default 1000)
    assert b.body_mass[0] == pytest.approx(1000.0 * 4 / 3 * math.pi * 0.1 ** 3, rel=1e-5)
    assert b.body_mass[1] == pytest.approx(500.0 * 8 * 0.1 * 0.05 * 0.04, rel=1e-5)
    r, h = 0.03, length
    assert b.body_mass[2] == pytest.approx(500.0 * (math.pi * r * r * h + 4 / 3 * math.pi * r ** 3), rel=1e-5)
    assert b.body_mass[3] == pytest.approx(500.0 * math.pi * 0.04 ** 2 * 0.2, rel=1e-5)
    assert b.body_mass[5] == pytest.approx(200.0 * 8 * 0.1 * 0.2 * 0.3, rel=1e-5)
    # self-collisions are off by default: every pair of the model's shapes is filtered
    assert (0, 6) in b.shape_collision_filter_pairs and (1, 2) in b.shape_collision_filter_pairs


def test_radian_euler_sequence_inertial_and_scale(tmp_path):
    text = """<mujoco><compiler angle="radian" eulerseq="ZYX"/>
      <worldbody><body name="a" pos="1 2 3" euler="0.3 0.2 0.1">
        <joint name="h" type="hinge" axis="1 0 0" range="-0.5 0.5"/>
        <geom type="sphere" size="0.1"/>
        <inertial pos="0.1 0 0" mass="2" diaginertia="0.1 0.2 0.3"/>
        <body name="b" pos="0 1 0"><joint name="s" type="slide" range="-1 2"/><geom size="0.1"/></body>
      </body></worldbody></mujoco>"""
    b = wp.sim.ModelBuilder()
    wp.sim.parse_mjcf(_write(tmp_path, text), b, up_axis="Y", scale=2.0, ignore_inertial_definitions=False)
    assert b.joint_limit_lower[0] == pytest.approx(-0.5) and b.joint_limit_upper[0] == pytest.approx(0.5)
    assert b.joint_limit_lower[1] == pytest.approx(-2.0) and b.joint_limit_upper[1] == pytest.approx(4.0)
    np.testing.assert_allclose(b.joint_axis[1], Z)  # MuJoCo's default axis
    assert b.body_mass[0] == pytest.approx(2.0)
    np.testing.assert_allclose(np.array(b.body_inertia[0], dtype=np.float64).reshape(3, 3),
                               np.diag([0.4, 0.8, 1.2]), rtol=1e-6)
    np.testing.assert_allclose(np.array(b.body_com[0], dtype=np.float64), [0.2, 0, 0], atol=1e-7)
    model = b.finalize("cpu")
    got = _body_poses(model, [0.4, 0.5])
    # upper case: fixed axes, so the rotations apply in sequence Z, Y, X about the parent's axes
    rot = _axis_rot(X, 0.1) @ _axis_rot(Y, 0.2) @ _axis_rot(Z, 0.3)
    a = _homog(rot, [2, 4, 6]) @ _homog(_axis_rot(X, 0.4), np.zeros(3))
    np.testing.assert_allclose(got[0], a, atol=2e-5)
    np.testing.assert_allclose(got[1], a @ _trans([0, 2, 0]) @ _trans(Z * 0.5), atol=2e-5)


def test_root_free_joint_options(tmp_path):
    path = _write(tmp_path, MODEL)
    b = wp.sim.ModelBuilder()
    wp.sim.parse_mjcf(path, b, up_axis="Y", floating=True)
    j = b.joint_name.index("floating_base")
    assert b.joint_type[j] == int(wp.sim.JOINT_FREE)
    q = b.joint_q[b.joint_q_start[j]:b.joint_q_start[j] + 7]
    np.testing.assert_allclose(q, [1, 0, 1, 0, 0, math.sqrt(0.5), math.sqrt(0.5)], atol=1e-6)
    b = wp.sim.ModelBuilder()
    wp.sim.parse_mjcf(path, b, up_axis="Y", base_joint="px,pz,ry")
    j = b.joint_name.index("base_joint", 1)
    assert b.joint_type[j] == int(wp.sim.JOINT_D6) and b.joint_axis_dim[j] == (2, 1)
    with pytest.raises(SimError, match="parse_mjcf: 'base_joint'"):
        wp.sim.parse_mjcf(path, wp.sim.ModelBuilder(), base_joint="qx")


def test_collapse_fixed_joints_keeps_tip(tmp_path):
    b = wp.sim.ModelBuilder()
    wp.sim.parse_mjcf(_write(tmp_path, MODEL), b, up_axis="Y", collapse_fixed_joints=True)
    # the base and the box are fixed to the world and the tip to link3: they merge away
    assert b.body_name == ["link1", "link2", "link3"]
    assert b.joint_name == ["j1", "j2_j3_j4", "j5"]


def test_unsupported_geoms_warn(tmp_path):
    text = """<mujoco><worldbody><body name="a"><joint/><geom type="ellipsoid" size="1 2 3"/>
      <geom size="0.1"/></body></worldbody></mujoco>"""
    b = wp.sim.ModelBuilder()
    with pytest.warns(UserWarning, match="ellipsoid"):
        wp.sim.parse_mjcf(_write(tmp_path, text), b)
    assert b.shape_count == 1


# -- bad input ----------------------------------------------------------------------------------------------------

BAD = [
    ('<body name="a"><joint name="j" type="twist"/></body>', r"<joint name='j'>: unknown joint type 'twist'"),
    ('<body name="a"><joint name="j" axis="0 0 0"/></body>', r"<joint name='j'>: has a zero 'axis'"),
    ('<body name="a"><joint name="j" range="1 -1"/></body>', r"<joint name='j'>: 'range' lower .* exceeds"),
    ('<body name="a"><joint name="j" range="1"/></body>', r"<joint name='j'>: 'range' = '1' must be 2"),
    ('<body name="a"><joint name="j" limited="true"/></body>', r"<joint name='j'>: is limited but has no 'range'"),
    ('<body name="a"><joint name="j" class="nope"/></body>', r"<joint name='j'>: class 'nope' is not defined"),
    ('<body name="a" pos="1 x 2"/>', r"<body name='a'>: 'pos' = '1 x 2' is not a list of numbers"),
    ('<body name="a" quat="1 0 0 0" euler="0 0 1"/>', r"<body name='a'>: gives the orientation twice"),
    ('<body name="a"><freejoint name="f"/><joint name="h"/></body>', r"<freejoint name='f'>: a free joint must"),
    ('<body name="a"><geom name="g" type="box" size="1 2"/></body>', r"<geom name='g'>: a box needs"),
    ('<body name="a"><geom name="g" type="sphere" size="-1"/></body>', r"<geom name='g'>: 'size' .* positive"),
    ('<body name="a"><geom name="g" type="capsule" fromto="0 0 0 0 0 0" size="1"/></body>',
     r"<geom name='g'>: 'fromto' has equal end points"),
]


@pytest.mark.parametrize("body,match", BAD)
def test_bad_files_name_file_and_element(tmp_path, body, match):
    path = _write(tmp_path, f"<mujoco><worldbody>{body}</worldbody></mujoco>", "bad.xml")
    with pytest.raises(SimError, match=match) as info:
        wp.sim.parse_mjcf(path, wp.sim.ModelBuilder())
    assert path in str(info.value)


def test_bad_inertial_and_unreadable_files(tmp_path):
    path = _write(tmp_path, '<mujoco><worldbody><body name="a"><inertial mass="1" diaginertia="1 -1 1"/>'
                            '</body></worldbody></mujoco>', "inertia.xml")
    with pytest.raises(SimError, match=r"inertia.xml: <body name='a'>: <inertial> is not positive definite"):
        wp.sim.parse_mjcf(path, wp.sim.ModelBuilder(), ignore_inertial_definitions=False)
    with pytest.raises(SimError, match="does not exist"):
        wp.sim.parse_mjcf(str(tmp_path / "missing.xml"), wp.sim.ModelBuilder())
    with pytest.raises(SimError, match="broken.xml.*XML"):
        wp.sim.parse_mjcf(_write(tmp_path, "<mujoco><worldbody>", "broken.xml"), wp.sim.ModelBuilder())
    with pytest.raises(SimError, match=r"robot.xml.*not <mujoco>"):
        wp.sim.parse_mjcf(_write(tmp_path, "<robot/>", "robot.xml"), wp.sim.ModelBuilder())
    with pytest.raises(SimError, match=r"empty.xml: <mujoco>: has no <worldbody>"):
        wp.sim.parse_mjcf(_write(tmp_path, "<mujoco/>", "empty.xml"), wp.sim.ModelBuilder())
    with pytest.raises(SimError, match=r"angle.xml: <compiler>: 'angle'"):
        wp.sim.parse_mjcf(_write(tmp_path, '<mujoco><compiler angle="grad"/><worldbody/></mujoco>', "angle.xml"),
                          wp.sim.ModelBuilder())
    with pytest.raises(SimError, match="builder"):
        wp.sim.parse_mjcf(path, object())


@pytest.mark.skipif(not os.path.isdir(WARP_ASSETS), reason="warp-lang 1.7.2's assets are not installed")
def test_warp_nv_ant_asset():
    b = wp.sim.ModelBuilder()
    wp.sim.parse_mjcf(os.path.join(WARP_ASSETS, "nv_ant.xml"), b, up_axis="Y")
    # as in warp.sim 1.7.2: 'floating' only concerns <freejoint>; the ant's <joint type="free"> stays free
    assert b.body_count == 9 and b.joint_dof_count == 14 and b.shape_count == 14
    assert [int(t) for t in b.joint_type] == [int(wp.sim.JOINT_FREE)] + [int(wp.sim.JOINT_REVOLUTE)] * 8
    np.testing.assert_allclose(b.joint_limit_lower[0:2], [-math.radians(40), math.radians(30)], rtol=1e-6)
    # the torso: a sphere and four capsules (fromto) at the default class's density 5
    r, length = 0.08, math.hypot(0.2, 0.2)
    torso = 5.0 * (4 / 3 * math.pi * 0.25 ** 3 + 4 * (math.pi * r * r * length + 4 / 3 * math.pi * r ** 3))
    assert b.body_mass[0] == pytest.approx(torso, rel=1e-5)
