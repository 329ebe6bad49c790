"""weft.render.UsdRenderer writes a stage that pxr reads back (OpenGLRenderer: test_opengl_renderer.py)."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp
import weft.render

pxr = pytest.importorskip("pxr")


def test_stage_round_trip(tmp_path):
    from pxr import Usd, UsdGeom

    path = str(tmp_path / "scene.usda")
    r = weft.render.UsdRenderer(path, fps=30, scaling=2.0)
    r.render_ground(size=5.0)
    pts = wp.array(np.arange(12, dtype=np.float32).reshape(4, 3), dtype=wp.vec3)
    for frame in range(2):
        r.begin_frame(frame / 30.0)
        r.render_sphere("ball", (0.0, 1.0 + frame, 0.0), (0.0, 0.0, 0.0, 1.0), 0.5, color=(1.0, 0.0, 0.0))
        r.render_box("crate", (1.0, 0.0, 0.0), (0.0, 0.0, 0.7071068, 0.7071068), (0.5, 1.0, 1.5))
        r.render_capsule("cap", (0.0, 0.0, 2.0), (0.0, 0.0, 0.0, 1.0), 0.25, 1.0, up_axis=2)
        r.render_mesh("tri", np.array([[0, 0, 0], [1, 0, 0], [0, 1, frame]], dtype=np.float32), [0, 1, 2],
                      colors=np.eye(3))
        r.render_points("particles", pts, 0.1)
        r.render_line_strip("path", [[0, 0, 0], [1, 1, 1], [2, 0, 2]], color=(0.0, 1.0, 0.0), radius=0.05)
        r.render_line_list("segs", np.zeros((4, 3)), [0, 1, 2, 3])
        r.end_frame()
    assert r.save()

    stage = Usd.Stage.Open(path)
    assert UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.y
    assert stage.GetTimeCodesPerSecond() == 30 and stage.GetEndTimeCode() == 1.0
    ball = UsdGeom.Sphere(stage.GetPrimAtPath("/root/ball"))
    assert ball.GetRadiusAttr().Get(0) == 0.5
    m1 = UsdGeom.Xformable(ball).ComputeLocalToWorldTransform(1)
    assert np.allclose(np.array(m1.ExtractTranslation()), [0.0, 4.0, 0.0])  # root scaling 2 * (0, 2, 0)
    assert np.allclose(ball.GetDisplayColorAttr().Get(0)[0], (1.0, 0.0, 0.0))
    crate = UsdGeom.Cube(stage.GetPrimAtPath("/root/crate"))
    corner = UsdGeom.Xformable(crate).ComputeLocalToWorldTransform(0).Transform((1.0, 1.0, 1.0))
    # size-2 cube scaled by the half extents (0.5, 1, 1.5), turned 90 degrees about z, moved to x = 1, scaled 2
    assert np.allclose(np.array(corner), 2.0 * np.array([1.0 - 1.0, 0.5, 1.5]), atol=1e-5)
    cap = UsdGeom.Capsule(stage.GetPrimAtPath("/root/cap"))
    assert cap.GetAxisAttr().Get() == "Z" and cap.GetHeightAttr().Get(0) == 2.0
    tri = UsdGeom.Mesh(stage.GetPrimAtPath("/root/tri"))
    assert list(tri.GetFaceVertexIndicesAttr().Get()) == [0, 1, 2]
    assert np.allclose(np.array(tri.GetPointsAttr().Get(1))[2], [0.0, 1.0, 1.0])
    assert np.allclose(np.array(tri.GetPointsAttr().Get(0))[2], [0.0, 1.0, 0.0])
    points = UsdGeom.Points(stage.GetPrimAtPath("/root/particles"))
    assert np.allclose(np.array(points.GetPointsAttr().Get(0)), np.arange(12).reshape(4, 3))
    assert np.allclose(np.array(points.GetWidthsAttr().Get(0)), 0.2)
    strip = UsdGeom.BasisCurves(stage.GetPrimAtPath("/root/path"))
    assert list(strip.GetCurveVertexCountsAttr().Get(0)) == [3]
    assert list(UsdGeom.BasisCurves(stage.GetPrimAtPath("/root/segs")).GetCurveVertexCountsAttr().Get(0)) == [2, 2]
    ground = UsdGeom.Mesh(stage.GetPrimAtPath("/root/ground"))
    gpts = np.array(ground.GetPointsAttr().Get(0))
    assert np.allclose(gpts[:, 1], 0.0) and np.isclose(np.abs(gpts[:, 0]).max(), 5.0)


def test_bodies_templates_and_bad_arguments(tmp_path):
    from pxr import Usd

    stage = Usd.Stage.CreateInMemory()
    r = weft.render.UsdRenderer(stage, up_axis="Z")
    r.register_body("arm")
    r.render_cylinder("link", (0, 0, 0), (0, 0, 0, 1), 0.1, 0.5, parent_body="arm")
    r.render_sphere("proto", (0, 0, 0), (0, 0, 0, 1), 1.0, is_template=True)
    assert stage.GetPrimAtPath("/root/arm/link")
    assert stage.GetPrimAtPath("/root/_template_shapes/proto")
    with pytest.raises(weft.render.RenderError, match="up_axis"):
        weft.render.UsdRenderer(stage, up_axis="W")
    with pytest.raises(weft.render.RenderError, match="whole triangles"):
        r.render_mesh("bad", np.zeros((3, 3)), [0, 1])


def test_warp_names():
    assert wp.render.UsdRenderer is weft.render.UsdRenderer


def test_sim_renderer_writes_through_usd_renderer(tmp_path):
    """weft.sim's SimRenderer shares this writer: particles, static shapes and the ground land in the stage."""
    from pxr import Usd, UsdGeom

    builder = wp.sim.ModelBuilder()
    builder.add_particle((0.0, 1.0, 0.0), (0.0, 0.0, 0.0), 1.0, radius=0.1)
    builder.add_particle((0.5, 1.0, 0.0), (0.0, 0.0, 0.0), 1.0, radius=0.2)
    builder.add_shape_sphere(-1, pos=(0.0, 0.5, 1.0), radius=0.3)
    builder.add_shape_box(-1, pos=(1.0, 0.5, 0.0), hx=0.5, hy=0.25, hz=0.5)
    model = builder.finalize()
    path = str(tmp_path / "sim.usda")
    r = wp.sim.render.SimRenderer(model, path, fps=10)
    state = model.state()
    r.begin_frame(0.0)
    r.render(state)
    r.end_frame()
    r.save()
    stage = Usd.Stage.Open(path)
    pts = UsdGeom.Points(stage.GetPrimAtPath("/root/particles"))
    assert np.allclose(np.array(pts.GetPointsAttr().Get(0)), [[0.0, 1.0, 0.0], [0.5, 1.0, 0.0]])
    assert np.allclose(np.array(pts.GetWidthsAttr().Get(0)), [0.2, 0.4])
    assert UsdGeom.Sphere(stage.GetPrimAtPath("/root/shape_0")).GetRadiusAttr().Get(0) == pytest.approx(0.3)
    box = UsdGeom.Xformable(stage.GetPrimAtPath("/root/shape_1")).ComputeLocalToWorldTransform(0)
    assert np.allclose(np.array(box.Transform((1.0, 1.0, 1.0))), [1.5, 0.75, 0.5])
    assert stage.GetPrimAtPath("/root/ground")
