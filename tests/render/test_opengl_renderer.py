"""weft.render.OpenGLRenderer draws real frames: headless (EGL) scenes read back with get_pixels.

The shading model is documented (weft/render/opengl/shaders.py): a face of color c with normal n shows
``c * (ambient + (1 - ambient) * max(n . sun, 0))``; these tests compute the expected pixels from it. They skip, saying
why, without pyglet or an OpenGL context (CI installs both: the ``render`` extra and Mesa's EGL).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import weft as wp
import weft.render

from .xvfb import xvfb_display

ROOT = Path(__file__).resolve().parents[2]

W, H = 96, 72


@pytest.fixture
def make():
    made = []

    def factory(**kwargs):
        args = {"headless": True, "screen_width": W, "screen_height": H, "draw_grid": False, "draw_axis": False,
                "camera_pos": (0.0, 0.0, 5.0), "camera_front": (0.0, 0.0, -1.0), "near_plane": 0.5,
                "far_plane": 50.0, **kwargs}
        try:
            r = weft.render.OpenGLRenderer(**args)
        except weft.render.RenderError as exc:
            pytest.skip(f"no headless OpenGL context here: {exc}")
        made.append(r)
        return r

    yield factory
    for r in made:
        r.close()


def frame(r, mode="rgb", uint8=False):
    ch = 3 if mode == "rgb" else 1
    img = wp.zeros((r.screen_height, r.screen_width, ch), dtype=wp.uint8 if uint8 else wp.float32)
    assert r.get_pixels(img, split_up_tiles=False, mode=mode, use_uint8=uint8)
    return img.numpy()


def lit(r, color, normal):
    return np.asarray(color) * (r.ambient + (1.0 - r.ambient) * max(float(np.dot(normal, r.sun_direction)), 0.0))


def test_box_color_at_centre_background_at_corners_and_depth(make):
    r = make(background_color=(0.1, 0.2, 0.3))
    r.begin_frame(0.0)
    r.render_box("box", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0), (0.5, 0.5, 0.5), color=(0.9, 0.6, 0.1))
    r.end_frame()
    rgb = frame(r)
    np.testing.assert_allclose(rgb[H // 2, W // 2], lit(r, (0.9, 0.6, 0.1), (0, 0, 1)), atol=1.5 / 255)
    for y, x in ((0, 0), (0, W - 1), (H - 1, 0), (H - 1, W - 1)):
        np.testing.assert_allclose(rgb[y, x], (0.1, 0.2, 0.3), atol=1.0 / 255)
    # the box covers a centred square: 1 unit at distance 4.5 with a 45 degree vertical field of view
    half = 0.5 / (4.5 * np.tan(np.radians(45.0) / 2)) * H / 2
    covered = np.all(np.abs(rgb - (0.1, 0.2, 0.3)) > 0.02, axis=-1)
    rows = np.flatnonzero(covered[:, W // 2])
    assert abs((rows[-1] - rows[0] + 1) - 2 * half) <= 2
    depth = frame(r, "depth")
    np.testing.assert_allclose(depth[H // 2, W // 2, 0], 4.5, rtol=1e-3)  # front face z = 0.5, camera at z = 5
    np.testing.assert_allclose(depth[0, 0, 0], 50.0, rtol=1e-3)  # background: the far plane
    u8 = frame(r, uint8=True)
    np.testing.assert_allclose(u8.astype(np.float64) / 255.0, rgb, atol=1e-6)


def test_nearer_shape_hides_farther_one_whatever_the_order(make):
    for order in ((0, 1), (1, 0)):
        r = make()
        shapes = [("far", (0.0, 0.0, -1.0), (1.0, 0.0, 0.0)), ("near", (0.3, 0.0, 1.0), (0.0, 1.0, 0.0))]
        r.begin_frame()
        for k in order:
            name, pos, color = shapes[k]
            r.render_box(name, pos, (0.0, 0.0, 0.0, 1.0), (0.4, 0.4, 0.4), color=color)
        r.end_frame()
        rgb, depth = frame(r), frame(r, "depth")[..., 0]
        near_px = np.argwhere(np.all(np.abs(rgb - lit(r, (0, 1, 0), (0, 0, 1))) < 0.01, axis=-1))
        far_px = np.argwhere(np.all(np.abs(rgb - lit(r, (1, 0, 0), (0, 0, 1))) < 0.01, axis=-1))
        assert len(near_px) > 100 and len(far_px) > 20
        np.testing.assert_allclose(depth[tuple(near_px.T)], 5.0 - 1.4, rtol=2e-3)
        np.testing.assert_allclose(depth[tuple(far_px.T)], 5.0 + 1.0 - 0.4, rtol=2e-3)
        # the green box sits right of centre and in front: the centre column it covers shows green, not red
        y, x = H // 2, W // 2 + 3
        assert rgb[y, x, 1] > 0.2 and rgb[y, x, 0] < 0.01


def test_mesh_with_per_vertex_colors_interpolates_them(make):
    r = make()
    pts = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], dtype=np.float32)
    colors = np.array([[1, 0, 0], [0, 0, 1], [0, 0, 1], [1, 0, 0]], dtype=np.float32)  # red left, blue right
    r.begin_frame()
    shape = r.render_mesh("quad", pts, [0, 1, 2, 0, 2, 3], colors=colors, smooth_shading=False)
    r.end_frame()
    rgb = frame(r)
    shade = lit(r, (1, 1, 1), (0, 0, 1))[0]
    row = rgb[H // 2]
    covered = np.flatnonzero(np.abs(row[:, 1] - 0.8) > 0.05)  # not the background (green 0.8)
    left, right = covered[0], covered[-1]
    # red fades into blue linearly across the quad; green stays 0
    t = (np.arange(left, right + 1) + 0.5 - (left + right + 1) / 2) / (right + 1 - left) + 0.5
    np.testing.assert_allclose(row[left:right + 1, 0], (1 - t) * shade, atol=0.03)
    np.testing.assert_allclose(row[left:right + 1, 2], t * shade, atol=0.03)
    assert np.all(row[left:right + 1, 1] < 1.5 / 255)
    # moving the points (same topology) keeps the shape and its colors
    r.begin_frame()
    assert r.render_mesh("quad", pts + np.float32([0, 2, 0]), [0, 1, 2, 0, 2, 3], colors=colors) == shape
    r.end_frame()
    moved = frame(r)
    assert np.all(np.abs(moved[H // 2, W // 2] - rgb[0, 0]) < 1.5 / 255)  # centre row now shows background


def test_instances_follow_pos_updates_bodies_and_visibility(make):
    r = make()
    r.begin_frame()
    r.render_sphere("ball", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0), 0.5, color=(1.0, 1.0, 0.0))
    r.end_frame()
    bg = frame(r)[0, 0]
    assert frame(r)[H // 2, W // 2, 0] > 0.3
    r.begin_frame()
    r.render_sphere("ball", (1.5, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0), 0.5, color=(1.0, 1.0, 0.0))
    r.end_frame()
    rgb = frame(r)
    np.testing.assert_allclose(rgb[H // 2, W // 2], bg, atol=1e-6)
    x = round(W / 2 + 1.5 / (5.0 * np.tan(np.radians(22.5))) * H / 2)
    assert rgb[H // 2, x, 0] > 0.3 and rgb[H // 2, x, 2] < 0.01
    # an instance on a body moves with update_body_transforms
    body = r.register_body("b0")
    shape = r.render_box("crate", (0, 0, 0), (0, 0, 0, 1), (0.3, 0.3, 0.3), is_template=True)
    r.add_shape_instance("crate", shape, body, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0), color1=(0, 1, 1),
                         color2=(0, 1, 1))
    r.update_shape_instance("ball", visible=False)
    r.update_body_transforms(wp.array(np.array([[0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 1.0]]), dtype=wp.transform))
    r.end_frame()
    rgb = frame(r)
    y = round(H / 2 + 1.0 / (4.7 * np.tan(np.radians(22.5))) * H / 2)
    np.testing.assert_allclose(rgb[y, W // 2], lit(r, (0, 1, 1), (0, 0, 1)), atol=1.5 / 255)
    np.testing.assert_allclose(rgb[H // 2, x], bg, atol=1e-6)  # the hidden ball


def test_up_axis_z_points_up_in_the_image(make):
    r = make(up_axis="Z", camera_pos=(0.0, -5.0, 0.0), camera_front=(0.0, 1.0, 0.0), camera_up=(0.0, 0.0, 1.0))
    r.begin_frame()
    r.render_box("high", (0.0, 0.0, 1.0), (0.0, 0.0, 0.0, 1.0), (0.3, 0.3, 0.3), color=(1.0, 0.0, 0.0))
    r.end_frame()
    rgb = frame(r)
    red = np.argwhere((rgb[..., 0] > 0.2) & (rgb[..., 1] < 0.05))
    assert len(red) and red[:, 0].max() < H // 2  # above the centre row (row 0 is the top)


def test_points_lines_and_tiles(make):
    r = make()
    r.begin_frame()
    r.render_points("pts", wp.array(np.array([[-1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]), dtype=wp.vec3), 0.3,
                    colors=(0.0, 0.0, 1.0))
    r.render_line_strip("line", [[-2.0, -1.5, 0.0], [2.0, -1.5, 0.0]], color=(0.0, 1.0, 0.0), radius=0.1)
    a = r.render_box("a", (0, 0, 0), (0, 0, 0, 1), (0.5, 0.5, 0.5), color=(1.0, 0.0, 0.0))
    r.end_frame()
    rgb = frame(r)
    px = W / 2 + 1.0 / (5.0 * np.tan(np.radians(22.5))) * H / 2
    assert rgb[H // 2, round(px) + 1, 2] > 0.2  # right point: blue
    y = round(H / 2 + 1.5 / (5.0 * np.tan(np.radians(22.5))) * H / 2)
    assert rgb[y, W // 2, 1] > 0.2 and rgb[y, W // 2, 0] < 0.01  # the line: green
    assert a == r._instances["a"][2]
    ids = [r._instances[n][0] for n in ("a",)]
    r.add_shape_instance("b", a, None, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0), color1=(0, 1, 0), color2=(0, 1, 0))
    r.setup_tiled_rendering([ids, [r._instances["b"][0]]], tile_width=48, tile_height=36, tile_ncols=2, tile_nrows=1)
    r.end_frame()
    tiles = wp.zeros((2, 36, 48, 3), dtype=wp.float32)
    r.get_pixels(tiles)
    t = tiles.numpy()
    assert t[0, 18, 24, 0] > 0.3 and t[0, 18, 24, 1] < 0.01  # tile 0: red box only
    assert t[1, 18, 24, 1] > 0.3 and t[1, 18, 24, 0] < 0.01  # tile 1: green box only
    r.update_tile(1, instances=ids)
    # Warp's matrix format (16 column-major floats): tile 0 seen from a camera 1 unit to the right
    r.update_tile(0, view_matrix=r.compute_view_matrix((1.0, 0.0, 5.0), (0.0, 0.0, -1.0), (0.0, 1.0, 0.0)))
    r.end_frame()
    r.get_pixels(tiles)
    t = tiles.numpy()
    assert t[1, 18, 24, 0] > 0.3
    # the box (x in [-0.5, 0.5]) now spans x - 1 in [-1.5, -0.5]: columns 24 - 18 * [1.5, 0.5] / (5 tan 22.5)
    scale = 18.0 / (5.0 * np.tan(np.radians(22.5)))
    assert t[0, 18, int(24 - scale), 0] > 0.3 and t[0, 18, int(24 - scale), 1] < 0.01
    np.testing.assert_allclose(t[0, 18, int(24 + scale)], t[0, 0, 0], atol=1e-6)  # world x = 2: background
    with pytest.raises(ValueError, match=r"target_image shape must be \(2, 36, 48, 1\)"):
        r.get_pixels(wp.zeros((2, 36, 48, 3), dtype=wp.float32), mode="depth")
    with pytest.raises(ValueError, match="mode must be"):
        r.get_pixels(tiles, mode="normals")


def test_a_closed_renderer_refuses_drawing_calls(make):
    r = make()
    r.render_sphere("s", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0), 0.5)
    r.close()
    assert not r.is_running()
    r.end_frame()  # nothing to draw into: a no-op
    with pytest.raises(weft.render.RenderError, match="closed"):
        r.render_box("b", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0), (1.0, 1.0, 1.0))
    with pytest.raises(weft.render.RenderError, match="closed"):
        r.get_pixels(np.zeros((H, W, 3), np.float32), split_up_tiles=False)


def test_render_mesh_index_errors_name_index_and_range(make):
    r = make()
    with pytest.raises(ValueError, match=r"index 3 .*\[0, 3\)"):
        r.render_mesh("m", np.zeros((3, 3)), [0, 1, 3])
    with pytest.raises(ValueError, match="colors must be one RGB color or one per point"):
        r.render_mesh("m", np.zeros((3, 3)), [0, 1, 2], colors=np.ones((2, 3)))


def test_sim_renderer_opengl_draws_bodies(make):
    make()  # skips here without a context
    builder = wp.sim.ModelBuilder()
    b = builder.add_body(origin=wp.transform((0.0, 0.0, 0.0), wp.quat_identity()))
    builder.add_shape_box(b, hx=0.4, hy=0.4, hz=0.4)
    model = builder.finalize()
    model.ground = False
    r = wp.sim.render.SimRendererOpenGL(model, "sim", headless=True, screen_width=W, screen_height=H,
                                        draw_grid=False, draw_axis=False, camera_pos=(0.0, 0.0, 5.0),
                                        camera_front=(0.0, 0.0, -1.0))
    try:
        state = model.state()
        state.body_q.assign(np.array([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]], dtype=np.float32))
        r.begin_frame(0.0)
        r.render(state)
        r.end_frame()
        centre = frame(r)[H // 2, W // 2]
        state.body_q.assign(np.array([[3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]], dtype=np.float32))
        r.begin_frame(0.1)
        r.render(state)
        r.end_frame()
        moved = frame(r)
        assert not np.allclose(centre, moved[0, 0], atol=0.02)  # the box was at the centre
        np.testing.assert_allclose(moved[H // 2, W // 2], moved[0, 0], atol=1e-6)  # and moved away with its body
    finally:
        r.close()


def _child(code: str, env: dict) -> subprocess.CompletedProcess:
    env = {**env, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                          timeout=120)


def test_clear_errors_without_pyglet_or_display():
    """A fresh interpreter: no display and not headless, or no pyglet, raise RenderError saying what to do."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    out = _child("""
        import sys
        import weft.render
        for kwargs in ({}, {"headless": False}):
            try:
                weft.render.OpenGLRenderer(**kwargs)
            except weft.render.RenderError as exc:
                print("ERR", exc)
        sys.modules["pyglet"] = None  # as if pyglet were not installed
        try:
            weft.render.OpenGLRenderer(headless=True)
        except weft.render.RenderError as exc:
            print("ERR", exc)
    """, env)
    assert out.returncode == 0, out.stderr
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("ERR")]
    assert len(lines) == 3, out.stdout + out.stderr
    if "pip install pyglet" not in lines[0]:  # pyglet installed: the first two say there is no display
        assert all("display" in ln and "headless=True" in ln for ln in lines[:2])
    assert "pip install pyglet" in lines[2]


def test_window_under_xvfb_keys_mouse_and_close(tmp_path):
    """A real window on a virtual X display: frames, keyboard (pause, move) and mouse (turn, zoom), Esc closes."""
    pytest.importorskip("pyglet", reason="OpenGLRenderer needs pyglet (pip install pyglet)")
    with xvfb_display(320, 240) as display_env:
        env = {**display_env, "WEFT_CACHE_DIR": str(tmp_path / "cache")}
        out = _child("""
            import numpy as np
            import pyglet
            import weft as wp, weft.render
            key, mouse = pyglet.window.key, pyglet.window.mouse
            try:
                r = weft.render.OpenGLRenderer(screen_width=96, screen_height=72, draw_grid=False, draw_axis=False,
                                               camera_pos=(0.0, 0.0, 5.0), camera_front=(0.0, 0.0, -1.0))
            except weft.render.RenderError as exc:
                print("SKIP", exc)
                raise SystemExit
            assert not r.headless and r.window.visible
            r.render_box("b", (0, 0, 0), (0, 0, 0, 1), (0.5, 0.5, 0.5), color=(1.0, 0.0, 0.0))
            r.begin_frame(0.0)
            r.end_frame()
            img = wp.zeros((r.screen_height, r.screen_width, 3), dtype=wp.float32)
            r.get_pixels(img, split_up_tiles=False)
            c = img.numpy()[r.screen_height // 2, r.screen_width // 2]
            assert c[0] > 0.3 and c[1] < 0.01, c
            # the window shows the frame: read its back buffer before the swap
            import ctypes
            from pyglet import gl
            r.window.flip = lambda: None
            r.update()
            del r.window.flip
            w, h = r.window.get_framebuffer_size()
            gl.glBindFramebuffer(gl.GL_READ_FRAMEBUFFER, 0)
            gl.glReadBuffer(gl.GL_BACK)
            shown = np.empty((h, w, 3), np.uint8)
            gl.glPixelStorei(gl.GL_PACK_ALIGNMENT, 1)
            gl.glReadPixels(0, 0, w, h, gl.GL_RGB, gl.GL_UNSIGNED_BYTE, shown.ctypes.data_as(ctypes.c_void_p))
            assert np.abs(shown[h // 2, w // 2] / 255.0 - c).max() < 1.5 / 255, (shown[h // 2, w // 2], c)
            r.window.dispatch_event("on_key_press", key.SPACE, 0)
            r.update()
            assert r.paused and "paused" in r.window.caption
            r.window.dispatch_event("on_key_press", key.SPACE, 0)
            r.update()
            assert not r.paused
            z0 = float(r.camera_pos[2])
            r._key_handler.on_key_press(key.W, 0)
            r.update()
            r._key_handler.on_key_release(key.W, 0)
            assert float(r.camera_pos[2]) < z0
            r.window.dispatch_event("on_mouse_drag", 10, 10, 200, 0, mouse.LEFT, 0)
            r.window.dispatch_event("on_mouse_scroll", 10, 10, 0, 5)
            r.update()
            assert abs(float(r.camera_front[0])) > 0.2 and r.camera_fov == 40.0
            r.window.dispatch_event("on_key_press", key.ESCAPE, 0)
            r.update()
            assert not r.is_running()
            print("OK")
        """, env)
    if "SKIP" in out.stdout:
        pytest.skip(out.stdout.strip())
    assert out.returncode == 0 and "OK" in out.stdout, out.stdout + out.stderr


def test_sim_renderer_opengl_draws_particles_surface_and_springs(make):
    make()  # skips here without a context
    builder = wp.sim.ModelBuilder()
    for p in ((-1.0, -1.0, 0.0), (1.0, -1.0, 0.0), (1.0, 1.0, 0.0), (-1.0, 1.0, 0.0)):
        builder.add_particle(p, (0.0, 0.0, 0.0), 1.0, radius=0.1)
    builder.add_triangle(0, 1, 2)
    builder.add_spring(0, 3, 1.0, 0.0, 0.0)
    model = builder.finalize()
    model.ground = False
    r = wp.sim.render.SimRendererOpenGL(model, "sim", headless=True, screen_width=W, screen_height=H,
                                        draw_grid=False, draw_axis=False, camera_pos=(0.0, 0.0, 5.0),
                                        camera_front=(0.0, 0.0, -1.0))
    try:
        r.begin_frame(0.0)
        r.render(model.state())
        r.end_frame()
        rgb = frame(r)
        scale = H / 2 / (5.0 * np.tan(np.radians(22.5)))

        def px(x, y):
            return rgb[round(H / 2 - y * scale), round(W / 2 + x * scale)]

        # the surface (0.75, 0.25, 0) lit from +z, inside the triangle (lower right half of the square)
        np.testing.assert_allclose(px(0.5, -0.4), lit(r, (0.75, 0.25, 0.0), (0, 0, 1)), atol=1.5 / 255)
        assert np.allclose(px(-0.5, 0.4), rgb[0, 0], atol=1e-6)  # the other half: background
        assert px(-1.0, 0.0)[1] > px(-1.0, 0.0)[0]  # the spring 0-3 along x = -1: green (0.25, 0.5, 0.25)
    finally:
        r.close()
