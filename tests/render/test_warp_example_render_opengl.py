"""Warp 1.19's own example_render_opengl.py runs unchanged under weft (``warp`` aliased to weft) in a window on a
virtual X display: tiled rendering of its capsules, cylinder and cone, and the per-tile depth read back.

The example rotates its cylinder by ``wp.quat_from_axis_angle(vec3f, wp.sin(time))``: a host call on a Python float
must return a Python float (Warp's result type) for that call to resolve. The example is read from an installed
warp-lang wheel (never copied here); the test skips without it, pyglet or Xvfb.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .xvfb import xvfb_display

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = Path("/opt/warp119/lib/python3.11/site-packages/warp/examples/core/example_render_opengl.py")


@pytest.mark.skipif(not EXAMPLE.exists(), reason="Warp 1.19's examples are not installed")
def test_example_render_opengl_tiles(tmp_path):
    pytest.importorskip("pyglet", reason="OpenGLRenderer needs pyglet (pip install pyglet)")
    with xvfb_display(640, 480) as display_env:
        env = {**display_env, "WEFT_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
        code = textwrap.dedent(f"""
            import importlib.util, sys
            import numpy as np
            import weft as wp, weft.render
            sys.modules["warp"], sys.modules["warp.render"] = wp, weft.render
            spec = importlib.util.spec_from_file_location("example_render_opengl", {str(EXAMPLE)!r})
            m = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(m)
            try:
                ex = m.Example(num_tiles=2, use_imgui=False)
            except weft.render.RenderError as exc:
                print("SKIP", exc)
                raise SystemExit
            r = ex.renderer
            for _ in range(2):
                ex.render()
            depth = wp.zeros((2, r.tile_height, r.tile_width, 1), dtype=float)
            assert r.get_pixels(depth, split_up_tiles=True, mode="depth")
            d = depth.numpy()
            near, far = r.camera_near_plane, r.camera_far_plane
            for t in range(2):
                hit = d[t] < far * 0.999
                # every tile sees some of the scene (ground, shapes) in front of the far plane, and some sky
                assert 0.0 < hit.mean() < 1.0, hit.mean()
                assert (d[t][hit] >= near).all()
            ex.clear()
            print("DONE")
        """)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
        if out.stdout.startswith("SKIP"):
            pytest.skip(out.stdout.strip())
        assert out.returncode == 0, out.stdout + out.stderr
        assert "DONE" in out.stdout, out.stdout + out.stderr
