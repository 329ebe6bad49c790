"""``OpenGLRenderer``: Warp's interactive OpenGL viewer, through pyglet (optional: ``pip install pyglet``).

Every frame is drawn with OpenGL 3.3 core shaders into an offscreen framebuffer (RGBA8 color, float depth), then
shown in the window (``glBlitFramebuffer``) or, headless, kept for :meth:`OpenGLRenderer.get_pixels`. Shapes are
registered geometries drawn instanced; instance transforms, colors and body transforms are composed with NumPy on
the host and uploaded once per frame (no CUDA-OpenGL interop). See docs/render.md.
"""

from __future__ import annotations

import importlib
import os
import sys
import time
import warnings
from collections import defaultdict

import numpy as np

from ..errors import RenderError
from . import meshes
from .meshes import DEFAULT_SEGMENTS


def _has_display() -> bool:
    if sys.platform in ("win32", "darwin"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _wp():
    return importlib.import_module("weft")


def _to_numpy(a, dtype=np.float32) -> np.ndarray:
    if hasattr(a, "numpy") and not isinstance(a, np.ndarray):
        a = a.numpy()
    return np.array(a, dtype=dtype)


class OpenGLRenderer:
    """An OpenGL viewer with Warp's ``OpenGLRenderer`` methods and constructor arguments.

    ``headless=True`` draws offscreen (pyglet's EGL headless mode when no window system was loaded yet, else a hidden
    window); ``headless=None`` follows ``pyglet.options["headless"]``. Without pyglet, or without a display when
    not headless, construction raises :class:`~weft.render.RenderError` saying so.
    """

    default_num_segments = DEFAULT_SEGMENTS
    #: fraction of a face's color lit by ambient light; the rest by the directional light ``sun_direction``
    ambient = 0.3

    def __init__(self, title: str = "Warp", scaling: float = 1.0, fps: int = 60, up_axis="Y",
                 screen_width: int = 1024, screen_height: int = 768, near_plane: float = 1.0,
                 far_plane: float = 100.0, camera_fov: float = 45.0, camera_pos=(0.0, 2.0, 10.0),
                 camera_front=(0.0, 0.0, -1.0), camera_up=(0.0, 1.0, 0.0),
                 background_color=(0.53, 0.8, 0.92), draw_grid: bool = True, draw_sky: bool = True,
                 draw_axis: bool = True, show_info: bool = True, render_wireframe: bool = False,
                 render_depth: bool = False, axis_scale: float = 1.0, vsync: bool = False, headless=None,
                 enable_backface_culling: bool = True, enable_mouse_interaction: bool = True,
                 enable_keyboard_interaction: bool = True, device=None, use_legacy_opengl=None):
        self.window = None
        self._closed = self._close_requested = False
        pyglet = self._import_pyglet(headless)
        self.headless = bool(pyglet.options.get("headless", False)) if headless is None else bool(headless)
        if not self.headless and pyglet.options.get("headless", False):
            raise RenderError("OpenGLRenderer(headless=False) needs a display, but pyglet runs headless in this process "
                              "(pyglet.options['headless'] is set): pass headless=True and read frames with "
                              "get_pixels, or write a USD stage with weft.render.UsdRenderer")
        if not self.headless and not _has_display():
            raise RenderError("OpenGLRenderer needs a display for its window (no DISPLAY or WAYLAND_DISPLAY is set): "
                              "pass headless=True to render offscreen (read frames with get_pixels), or write a USD "
                              "stage with weft.render.UsdRenderer")
        wp = _wp()
        self._device = wp.get_device(device) if device is not None else wp.get_device("cpu")
        self._title = title
        self._create_window(pyglet, screen_width, screen_height, title, vsync)
        from . import glcore
        from .shaders import LINE_FRAGMENT, LINE_VERTEX, SHAPE_FRAGMENT, SHAPE_VERTEX

        self._glc = glcore
        self.screen_width, self.screen_height = self.window.get_framebuffer_size()
        self.camera_near_plane, self.camera_far_plane, self.camera_fov = near_plane, far_plane, camera_fov
        self.background_color = tuple(background_color)
        self.draw_grid, self.draw_sky, self.draw_axis, self.show_info = draw_grid, draw_sky, draw_axis, show_info
        self.render_wireframe, self.render_depth = render_wireframe, render_depth
        self.enable_backface_culling = enable_backface_culling
        self.enable_mouse_interaction = enable_mouse_interaction
        self.enable_keyboard_interaction = enable_keyboard_interaction
        self.use_legacy_opengl = False
        self._camera_axis = up_axis if isinstance(up_axis, int) else "XYZ".index(str(up_axis).upper())
        self._axis_rot = meshes.axis_permutation(self._camera_axis)
        self._scaling = float(scaling)
        self.sun_direction = np.array([0.2, 0.8, 0.5]) / np.linalg.norm([0.2, 0.8, 0.5])
        self._camera_pos = np.asarray(camera_pos, dtype=np.float64)
        self._camera_front = np.asarray(camera_front, dtype=np.float64)
        self._camera_up = np.asarray(camera_up, dtype=np.float64)
        self._camera_speed = 0.04
        self._frame_dt = 1.0 / fps
        self.time = 0.0
        self._start_time = time.time()
        self.clock_time = 0.0
        self._last_time = 0.0
        self._frame_speed = 1.0
        self._paused = False
        self.skip_rendering = False
        self.render_2d_callbacks, self.render_3d_callbacks = [], []
        self._input_processors, self._key_callbacks = [], []
        self._reset_scene()
        self._tiled_rendering = False
        self._tile_instances = self._tile_viewports = None
        self._tile_projection_matrices = self._tile_view_matrices = None
        self._tile_ncols = self._tile_nrows = self._tile_width = self._tile_height = 0

        self._switch_context()
        self._shape_program = glcore.Program(SHAPE_VERTEX, SHAPE_FRAGMENT)
        self._line_program = glcore.Program(LINE_VERTEX, LINE_FRAGMENT)
        self._frame = glcore.Frame(self.screen_width, self.screen_height)
        ticks = np.linspace(-10.0, 10.0, 21)
        grid = [((-10.0, 0.0, t), (10.0, 0.0, t)) for t in ticks] + [((t, 0.0, -10.0), (t, 0.0, 10.0)) for t in ticks]
        self._grid = glcore.Lines(np.array(grid))
        av, ai = meshes.arrow_mesh(0.02 * axis_scale, 0.85 * axis_scale, cap_height=0.15 * axis_scale)
        self._axis = glcore.Drawable(av, ai)
        sqh = np.sqrt(0.5)
        axis_tf = np.array([[0, 0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, -sqh, sqh], [0, 0, 0, sqh, 0, 0, sqh]], float)
        axis_colors = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
        self._axis.set_instances(glcore.instance_rows(meshes.instance_matrices(axis_tf, np.ones((3, 3))),
                                                      axis_colors, axis_colors))
        self._info_label = None
        if not self.headless:
            self._setup_window_events(pyglet)

    # --- construction ----------------------------------------------------------------------------------------

    @staticmethod
    def _import_pyglet(headless):
        try:
            pyglet = importlib.import_module("pyglet")
        except ImportError as exc:
            raise RenderError("OpenGLRenderer needs pyglet >= 2 (pip install pyglet, or pip install weft[render]); "
                              "to render without it, write a USD stage with weft.render.UsdRenderer") from exc
        if int(pyglet.version.split(".")[0]) < 2:
            raise RenderError(f"OpenGLRenderer needs pyglet >= 2, found {pyglet.version} (pip install -U pyglet)")
        if headless and "pyglet.window" not in sys.modules and not _has_display():
            pyglet.options["headless"] = True  # EGL offscreen context; must be set before pyglet.window loads
        pyglet.options["debug_gl"] = False
        return pyglet

    def _create_window(self, pyglet, width, height, title, vsync):
        try:
            gl = importlib.import_module("pyglet.gl")
            importlib.import_module("pyglet.window")
            configs = [gl.Config(major_version=3, minor_version=3, forward_compatible=True, depth_size=24,
                                 double_buffer=True), None]
            last = None
            for config in configs:
                try:
                    self.window = pyglet.window.Window(width=width, height=height, caption=title,
                                                       resizable=not self.headless, vsync=vsync,
                                                       visible=not self.headless, config=config)
                    break
                except pyglet.window.NoSuchConfigException as exc:
                    last = exc
            if self.window is None:
                raise last
            version = gl.gl_info.get_version()
        except RenderError:
            raise
        except Exception as exc:  # no EGL / GLX / display: say what failed instead of a pyglet traceback
            raise RenderError(f"OpenGLRenderer could not create an OpenGL context ({type(exc).__name__}: {exc}); "
                              "headless rendering needs EGL (Debian: libegl1 libegl-mesa0 libgl1-mesa-dri), a window "
                              "needs a display; weft.render.UsdRenderer writes USD without either") from exc
        if tuple(version[:2]) < (3, 3):
            self.window.close()
            raise RenderError(f"OpenGLRenderer needs OpenGL 3.3, the context has {version[0]}.{version[1]}")

    def _setup_window_events(self, pyglet):
        self._key_handler = pyglet.window.key.KeyStateHandler()
        self.window.push_handlers(self._key_handler)
        self.window.push_handlers(on_key_press=self._key_press_callback, on_close=self._close_callback,
                                  on_resize=self._window_resize_callback, on_mouse_drag=self._mouse_drag_callback,
                                  on_mouse_scroll=self._scroll_callback, on_draw=lambda: None)
        try:
            self._info_label = pyglet.text.Label("", x=10, y=self.screen_height - 10, anchor_x="left",
                                                 anchor_y="top", multiline=True, width=400, font_size=12)
        except Exception as exc:  # noqa: BLE001 - no font: the window works without the overlay
            warnings.warn(f"OpenGLRenderer: no info overlay ({exc})", stacklevel=3)
            self._info_label = None
        self.window.dispatch_events()

    def _reset_scene(self):
        self._body_name = {}
        self._body_q = None
        self._shapes = []
        self._shape_geo_hash = {}
        self._shape_gl_buffers = {}
        self._shape_topology = {}
        self._shape_instances = defaultdict(list)
        self._instances = {}
        self._instance_names = {}
        self._instance_custom_ids = {}
        self._next_instance = 0
        self._shape_instancers = {}
        self._instances_dirty = True

    def _switch_context(self):
        window = getattr(self, "window", None)
        if window is None:
            return
        if self._closed:  # no OpenGL call may run without the context: it would be undefined behaviour
            raise RenderError("OpenGLRenderer: the renderer was closed (close() or its window's close button)")
        window.switch_to()

    # --- state properties --------------------------------------------------------------------------------------

    @property
    def paused(self):
        """Whether the frame loop is paused (space toggles it in a window): ``end_frame`` waits while paused."""
        return self._paused

    @paused.setter
    def paused(self, value):
        self._paused = bool(value)
        if self.window is not None and not self._closed:
            self.window.set_caption(f"{self._title} (paused)" if value else self._title)

    @property
    def has_exit(self):
        """Whether the window was closed (or Esc pressed)."""
        return not self.is_running()

    def is_running(self):
        """Whether the viewer is still open (the window was not closed, ``close`` was not called)."""
        return not (self._closed or self._close_requested)

    @property
    def scaling(self):
        """Scale of the scene in the viewer."""
        return self._scaling

    @scaling.setter
    def scaling(self, value):
        self._scaling = float(value)

    @property
    def num_shapes(self):
        return sum(s is not None for s in self._shapes)

    @property
    def num_instances(self):
        return len(self._instances)

    @property
    def tiled_rendering(self):
        return self._tiled_rendering

    @tiled_rendering.setter
    def tiled_rendering(self, value):
        if value and self._tile_instances is None:
            raise RuntimeError("tiled_rendering needs setup_tiled_rendering() first, got no tile instances")
        self._tiled_rendering = bool(value)

    @property
    def num_tiles(self):
        return len(self._tile_instances)

    @property
    def tile_width(self):
        return self._tile_width

    @property
    def tile_height(self):
        return self._tile_height

    # --- camera ------------------------------------------------------------------------------------------------

    @property
    def camera_pos(self):
        """Camera position (world axes; the up axis maps to the viewer's y)."""
        return self._camera_pos

    @camera_pos.setter
    def camera_pos(self, value):
        self._camera_pos = np.asarray(value, dtype=np.float64)

    @property
    def camera_front(self):
        """Direction the camera looks along."""
        return self._camera_front

    @camera_front.setter
    def camera_front(self, value):
        self._camera_front = np.asarray(value, dtype=np.float64)

    @property
    def camera_up(self):
        return self._camera_up

    @camera_up.setter
    def camera_up(self, value):
        self._camera_up = np.asarray(value, dtype=np.float64)

    def update_view_matrix(self, cam_pos=None, cam_front=None, cam_up=None, stiffness=1.0):
        """Move the camera, blending each given vector with the current one by ``stiffness`` (1: replace)."""
        for attr, new in (("_camera_pos", cam_pos), ("_camera_front", cam_front), ("_camera_up", cam_up)):
            if new is not None:
                old = getattr(self, attr)
                setattr(self, attr, old * (1.0 - stiffness) + np.asarray(new, dtype=np.float64) * stiffness)

    def compute_view_matrix(self, cam_pos, cam_front, cam_up):
        """View matrix of a camera given in world axes, as Warp returns it: 16 floats in OpenGL's column-major
        order (what ``setup_tiled_rendering`` / ``update_tile`` take)."""
        return _to_gl(self._look(cam_pos, cam_front, cam_up))

    def _look(self, cam_pos, cam_front, cam_up):
        r = self._axis_rot
        return meshes.look_at(r @ np.asarray(cam_pos, float), r @ np.asarray(cam_front, float),
                              r @ np.asarray(cam_up, float))

    @property
    def _view_matrix(self):
        return self._look(self._camera_pos, self._camera_front, self._camera_up)

    @staticmethod
    def compute_projection_matrix(fov, aspect_ratio, near_plane, far_plane):
        """Perspective projection with a vertical field of view ``fov`` in degrees: 16 floats in OpenGL's
        column-major order, as Warp returns it."""
        return _to_gl(meshes.perspective(fov, aspect_ratio, near_plane, far_plane))

    @property
    def _projection_matrix(self):
        return meshes.perspective(self.camera_fov, self.screen_width / max(self.screen_height, 1),
                                  self.camera_near_plane, self.camera_far_plane)

    def update_projection_matrix(self):
        """Kept for Warp programs: the projection follows ``camera_fov`` and the window size at every frame."""

    @property
    def _model_matrix(self):
        m = np.eye(4)
        m[:3, :3] = self._axis_rot * self._scaling
        return m

    # --- frames ------------------------------------------------------------------------------------------------

    def begin_frame(self, t: float | None = None):
        """Start a frame at simulation time ``t`` (the wall clock since construction when None)."""
        self.clock_time = time.time() - self._start_time
        self.time = self.clock_time if t is None else t

    def end_frame(self):
        """Draw the frame (and show it in the window); waits here while paused."""
        self.update()
        while self._paused and self.is_running():
            time.sleep(self._frame_dt)
            self.update()

    def update(self):
        """Process window events and draw one frame."""
        if self._closed:
            return
        now = time.time() - self._start_time
        self.clock_time = now
        self._frame_speed = max(now - self._last_time, 1e-3) * 100.0
        self._last_time = now
        self._switch_context()
        if not self.headless:
            self.window.dispatch_events()
            if self._close_requested:  # Esc or the window's close button, acted on after pyglet's event loop
                self.close()
                return
            self._process_inputs()
        if self.skip_rendering:
            return
        self._draw()
        if not self.headless:
            self._present()

    def _draw(self):
        gl = self._glc.gl
        self._switch_context()
        self._frame.bind()
        gl.glViewport(0, 0, self._frame.width, self._frame.height)
        gl.glClearColor(*self.background_color, 1.0)
        gl.glClear(gl.GL_COLOR_BUFFER_BIT | gl.GL_DEPTH_BUFFER_BIT)
        gl.glEnable(gl.GL_DEPTH_TEST)
        gl.glDepthFunc(gl.GL_LESS)
        (gl.glEnable if self.enable_backface_culling else gl.glDisable)(gl.GL_CULL_FACE)
        gl.glPolygonMode(gl.GL_FRONT_AND_BACK, gl.GL_LINE if self.render_wireframe else gl.GL_FILL)
        self._upload_instances()
        if self._tiled_rendering:
            for i, viewport in enumerate(self._tile_viewports):
                gl.glViewport(*(int(x) for x in viewport))
                view = self._tile_view_matrices[i]
                view = self._view_matrix if view is None else _from_gl(view)
                proj = _from_gl(self._tile_projection_matrices[i])
                self._draw_scene(view, proj, set(self._tile_instances[i]))
            gl.glViewport(0, 0, self._frame.width, self._frame.height)
            self._upload_instances(force=True)
        else:
            self._draw_scene(self._view_matrix, self._projection_matrix, None)
        gl.glPolygonMode(gl.GL_FRONT_AND_BACK, gl.GL_FILL)
        for cb in self.render_3d_callbacks:
            cb()
        gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, 0)

    def _draw_scene(self, view, proj, only):
        gl = self._glc.gl
        model = self._model_matrix
        if self.draw_grid:
            self._line_program.use()
            self._line_program.mat4("mvp", proj @ view @ model)
            self._line_program.vec3("color", (0.5, 0.5, 0.5))
            self._grid.draw()
        p = self._shape_program
        p.use()
        p.mat4("model", model)
        p.mat4("view", view)
        p.mat4("projection", proj)
        p.vec3("sunDirection", self.sun_direction)
        p.float("ambient", self.ambient)
        if only is not None:
            self._upload_instances(only=only)
        for drawable in self._shape_gl_buffers.values():
            drawable.draw()
        for inst in self._shape_instancers.values():
            if inst["visible"]:
                inst["drawable"].draw()
        if self.draw_axis:
            p.mat4("model", np.eye(4))
            self._axis.draw()
        gl.glUseProgram(0)

    def _present(self):
        gl = self._glc.gl
        self._frame.blit_to_window(*self.window.get_framebuffer_size())
        if self.show_info and self._info_label is not None:
            text = (f"Sim Time: {self.time:.1f}\nShapes: {self.num_shapes}\nInstances: {len(self._instances)}"
                    + ("\nPaused (press space to resume)" if self._paused else ""))
            self._info_label.text = text
            self._info_label.y = self.window.height - 10
            gl.glDisable(gl.GL_DEPTH_TEST)
            gl.glEnable(gl.GL_BLEND)
            gl.glBlendFunc(gl.GL_SRC_ALPHA, gl.GL_ONE_MINUS_SRC_ALPHA)
            self._info_label.draw()
            gl.glEnable(gl.GL_DEPTH_TEST)
        for cb in self.render_2d_callbacks:
            cb()
        self.window.flip()

    def save(self):
        """In a window: keep showing it until it is closed. Headless: nothing to do."""
        while not self.headless and self.is_running():
            self.update()
            time.sleep(self._frame_dt)
        return True

    def clear(self):
        """Delete every shape, instance, point set and line set."""
        if self.window is not None and not self._closed:
            self._switch_context()
            for d in self._shape_gl_buffers.values():
                d.delete()
            for inst in self._shape_instancers.values():
                inst["drawable"].delete()
        self._reset_scene()

    def close(self):
        """Release the OpenGL objects and close the window."""
        if self._closed:
            return
        self.clear()
        self._closed = True
        if self.window is not None:
            self.window.close()

    def _close_callback(self):
        self._close_requested = True
        return True

    # --- input -------------------------------------------------------------------------------------------------

    def register_input_processor(self, callback):
        """``callback(key_state_handler)`` runs every frame before the camera keys; EVENT_HANDLED skips them."""
        self._input_processors.append(callback)

    def register_key_press_callback(self, callback):
        """``callback(symbol, modifiers)`` runs on every key press before the viewer's own keys."""
        self._key_callbacks.append(callback)

    def _camera_side(self):
        side = np.cross(self._camera_front, self._camera_up)
        return side / max(np.linalg.norm(side), 1e-12)

    def _process_inputs(self):
        import pyglet

        key = pyglet.window.key
        for cb in self._input_processors:
            if cb(self._key_handler) == pyglet.event.EVENT_HANDLED:
                return
        if not self.enable_keyboard_interaction:
            return
        step = self._camera_speed * self._frame_speed
        held = self._key_handler
        if held[key.W] or held[key.UP]:
            self._camera_pos = self._camera_pos + self._camera_front * step
        if held[key.S] or held[key.DOWN]:
            self._camera_pos = self._camera_pos - self._camera_front * step
        if held[key.A] or held[key.LEFT]:
            self._camera_pos = self._camera_pos - self._camera_side() * step
        if held[key.D] or held[key.RIGHT]:
            self._camera_pos = self._camera_pos + self._camera_side() * step

    def _key_press_callback(self, symbol, modifiers):
        import pyglet

        key = pyglet.window.key
        for cb in self._key_callbacks:
            if cb(symbol, modifiers) == pyglet.event.EVENT_HANDLED:
                return pyglet.event.EVENT_HANDLED
        if not self.enable_keyboard_interaction:
            return None
        toggles = {key.C: "draw_axis", key.G: "draw_grid", key.I: "show_info", key.X: "render_wireframe",
                   key.T: "render_depth", key.B: "enable_backface_culling", key.TAB: "skip_rendering"}
        if symbol == key.ESCAPE:
            self._close_requested = True
        elif symbol == key.SPACE:
            self.paused = not self.paused
        elif symbol in toggles:
            setattr(self, toggles[symbol], not getattr(self, toggles[symbol]))
        return pyglet.event.EVENT_HANDLED

    def _mouse_drag_callback(self, x, y, dx, dy, buttons, modifiers):
        """Left-drag turns the camera: yaw about its up vector, pitch about its side (kept within +-89 degrees)."""
        import pyglet

        if not self.enable_mouse_interaction or not buttons & pyglet.window.mouse.LEFT:
            return
        r = self._axis_rot
        front = r @ self._camera_front
        front = front / np.linalg.norm(front)
        pitch = np.clip(np.degrees(np.arcsin(np.clip(front[1], -1, 1))) + 0.1 * dy, -89.0, 89.0)
        yaw = np.degrees(np.arctan2(front[2], front[0])) + 0.1 * dx
        p, w = np.radians(pitch), np.radians(yaw)
        self._camera_front = r.T @ np.array([np.cos(w) * np.cos(p), np.sin(p), np.sin(w) * np.cos(p)])

    def _scroll_callback(self, x, y, scroll_x, scroll_y):
        if self.enable_mouse_interaction:
            self.camera_fov = float(np.clip(self.camera_fov - scroll_y, 15.0, 90.0))

    def _window_resize_callback(self, width, height):
        self.screen_width, self.screen_height = self.window.get_framebuffer_size()
        self._switch_context()
        self._frame.resize(self.screen_width, self.screen_height)

    # --- shapes and instances ------------------------------------------------------------------------------------

    def register_shape(self, geo_hash, vertices, indices, color1=None, color2=None):
        """Register a geometry (rows of position, normal, uv and optionally an RGB color; triangle indices) and
        return its shape id. ``color1`` defaults to the next "tab10" color, ``color2`` (the checkerboard's other
        color) to ``color1`` brightened by 0.25."""
        self._switch_context()
        shape = len(self._shapes)
        if color1 is None:
            color1 = meshes.tab10(len(self._shape_geo_hash))
        if color2 is None:
            color2 = np.clip(np.asarray(color1, dtype=np.float64) + 0.25, 0.0, 1.0)
        vertices = np.asarray(vertices, dtype=np.float32)
        if vertices.ndim != 2 or vertices.shape[1] not in (8, 11):
            raise ValueError(f"register_shape: vertices must have 8 or 11 columns (position, normal, uv[, color]), "
                             f"got shape {vertices.shape}")
        indices = np.asarray(indices, dtype=np.uint32).ravel()
        self._shapes.append((vertices, indices, tuple(np.asarray(color1, float)), tuple(np.asarray(color2, float)),
                             geo_hash))
        self._shape_geo_hash[geo_hash] = shape
        self._shape_gl_buffers[shape] = self._glc.Drawable(vertices, indices)
        self._instances_dirty = True
        return shape

    def deregister_shape(self, shape):
        """Delete a registered geometry (its instances stop drawing)."""
        if shape not in self._shape_gl_buffers:
            return
        self._switch_context()
        self._shape_gl_buffers.pop(shape).delete()
        geo_hash = self._shapes[shape][4]
        if self._shape_geo_hash.get(geo_hash) == shape:
            del self._shape_geo_hash[geo_hash]
        self._shapes[shape] = None
        self._shape_topology.pop(shape, None)

    def _resolve_body_id(self, body):
        if body is None:
            return -1
        if isinstance(body, (int, np.integer)):
            return int(body)
        return self._body_name[body]

    def register_body(self, name):
        """Register a body name; instances added with it (or its id) follow :meth:`update_body_transforms`."""
        return self._body_name.setdefault(name, len(self._body_name))

    def add_shape_instance(self, name, shape, body, pos, rot, scale=(1.0, 1.0, 1.0), color1=None, color2=None,
                           custom_index=-1, visible=True):
        """Add an instance of a registered shape at ``pos`` / ``rot`` (relative to ``body`` if given) and return
        its id."""
        if color2 is None:
            color2 = self._shapes[shape][3] if color1 is None else color1
        if color1 is None:
            color1 = self._shapes[shape][2]
        instance = self._next_instance
        self._next_instance += 1
        self._shape_instances[shape].append(instance)
        self._instances[name] = (instance, self._resolve_body_id(body), shape,
                                 np.concatenate([np.asarray(pos, float).reshape(3), np.asarray(rot, float).reshape(4)]),
                                 np.asarray(scale if scale is not None else (1, 1, 1), float).reshape(3),
                                 np.asarray(color1, float).reshape(3), np.asarray(color2, float).reshape(3),
                                 bool(visible))
        self._instance_names[instance] = name
        self._instance_custom_ids[instance] = custom_index
        self._instances_dirty = True
        return instance

    def remove_shape_instance(self, name):
        """Remove an instance by name."""
        if name not in self._instances:
            return
        instance, _, shape = self._instances.pop(name)[:3]
        self._shape_instances[shape].remove(instance)
        self._instance_names.pop(instance, None)
        self._instance_custom_ids.pop(instance, None)
        self._instances_dirty = True

    def update_shape_instance(self, name, pos=None, rot=None, color1=None, color2=None, scale=None, visible=None):
        """Change an instance's transform, colors, scale or visibility; False when there is no such instance."""
        if name not in self._instances:
            return False
        instance, body, shape, tf, old_scale, c1, c2, vis = self._instances[name]
        tf = np.array(tf, dtype=float)
        if pos is not None:
            tf[:3] = np.asarray(pos, float).reshape(3)
        if rot is not None:
            tf[3:] = np.asarray(rot, float).reshape(4)
        self._instances[name] = (
            instance, body, shape, tf,
            old_scale if scale is None else np.asarray(scale, float).reshape(3),
            c1 if color1 is None else np.asarray(color1, float).reshape(3),
            c2 if color2 is None else np.asarray(color2, float).reshape(3),
            vis if visible is None else bool(visible))
        self._instances_dirty = True
        return True

    def update_shape_instances(self):
        """Upload the instances' transforms now (``end_frame`` does it when something changed)."""
        self._instances_dirty = True

    def allocate_shape_instances(self):
        """Kept for Warp programs: instance buffers are sized when a frame is drawn."""
        self._instances_dirty = True

    def update_body_transforms(self, body_tf):
        """Set the body transforms (an array of ``wp.transform``, or None) that instances with a body follow."""
        self._body_q = None if body_tf is None else _to_numpy(body_tf, np.float64).reshape(-1, 7)
        self._instances_dirty = True

    def update_shape_vertices(self, shape, points):
        """Move a registered mesh's vertices to ``points`` (one per source point; normals are recomputed)."""
        p = _to_numpy(points, np.float64).reshape(-1, 3)
        vertices, indices, c1, c2, geo_hash = self._shapes[shape]
        topology = self._shape_topology.get(shape)
        if topology is not None:
            tris, smooth, colors = topology
            vertices, _ = meshes.mesh_vertices(p, tris, smooth, colors)
        else:
            if len(p) != len(vertices):
                raise ValueError(f"update_shape_vertices: shape {shape} has {len(vertices)} vertices, got "
                                 f"{len(p)} points")
            vertices = vertices.copy()
            vertices[:, :3] = p
        self._shapes[shape] = (vertices, indices, c1, c2, geo_hash)
        self._switch_context()
        self._shape_gl_buffers[shape].set_vertices(vertices)

    def _instance_table(self, only=None):
        """Per shape: rows of the visible instances (all, or those with an id in ``only``)."""
        per_shape = defaultdict(list)
        for inst in self._instances.values():
            if inst[7] and (only is None or inst[0] in only):
                per_shape[inst[2]].append(inst)
        tables = {}
        for shape, insts in per_shape.items():
            tf = np.array([i[3] for i in insts], dtype=np.float64)
            body = np.array([i[1] for i in insts])
            if self._body_q is not None:
                has = (body >= 0) & (body < len(self._body_q))
                if has.any():
                    tf[has] = meshes.transform_multiply(self._body_q[body[has]], tf[has])
            m = meshes.instance_matrices(tf, np.array([i[4] for i in insts], dtype=np.float64))
            tables[shape] = self._glc.instance_rows(m, np.array([i[5] for i in insts]), np.array([i[6] for i in insts]))
        return tables

    def _upload_instances(self, only=None, force=False):
        if not (self._instances_dirty or force or only is not None):
            return
        tables = self._instance_table(only)
        empty = np.zeros((0, self._glc.INSTANCE_FLOATS), dtype=np.float32)
        for shape, drawable in self._shape_gl_buffers.items():
            drawable.set_instances(tables.get(shape, empty))
        self._instances_dirty = False

    # --- Warp's render_* methods ---------------------------------------------------------------------------------

    def _primitive(self, name, geo_hash, make, pos, rot, parent_body, is_template, color, visible, scale=None):
        if geo_hash in self._shape_geo_hash:
            shape = self._shape_geo_hash[geo_hash]
            if self.update_shape_instance(name, pos, rot, color1=color, color2=color, visible=visible):
                return shape
        else:
            vertices, indices = make()
            color2 = color if color is not None else None
            shape = self.register_shape(geo_hash, vertices, indices, color1=color, color2=color2)
        if not is_template:
            self.add_shape_instance(name, shape, parent_body, pos, rot, (1.0, 1.0, 1.0) if scale is None else scale,
                                    color1=color, color2=color, visible=visible)
        return shape

    def render_plane(self, name, pos, rot, width, length, color=(1.0, 1.0, 1.0), color2=None, parent_body=None,
                     is_template=False, u_scaling=1.0, v_scaling=1.0, visible=True):
        """A ``2 width x 2 length`` quad (normal +y before ``rot``), a checkerboard of ``color`` and ``color2``."""
        width = width if width > 0 else 100.0
        length = length if length > 0 else 100.0
        geo_hash = hash(("plane", width, length, u_scaling, v_scaling))
        if geo_hash in self._shape_geo_hash:
            shape = self._shape_geo_hash[geo_hash]
            if self.update_shape_instance(name, pos, rot, visible=visible):
                return shape
        else:
            vertices, indices = meshes.plane_mesh(width, length, u_scaling, v_scaling)
            shape = self.register_shape(geo_hash, vertices, indices, color1=color,
                                        color2=color if color2 is None else color2)
        if not is_template:
            self.add_shape_instance(name, shape, parent_body, pos, rot, visible=visible)
        return shape

    def render_ground(self, size: float = 1000.0, plane=None):
        """A gray checkerboard ground normal to the up axis, or on ``plane = (nx, ny, nz, d)``."""
        normal = np.zeros(3)
        normal[self._camera_axis] = 1.0
        pos = np.zeros(3)
        if plane is not None:
            normal = np.asarray(plane[:3], dtype=np.float64)
            normal = normal / np.linalg.norm(normal)
            pos = float(plane[3]) * normal
        q = _quat_between((0.0, 1.0, 0.0), normal)
        return self.render_plane("ground", pos, q, size, size, (200 / 255,) * 3, color2=(150 / 255,) * 3)

    def render_sphere(self, name, pos, rot, radius, parent_body=None, is_template=False, color=None, visible=True):
        """A sphere of ``radius``."""
        return self._primitive(name, hash(("sphere", radius)), lambda: meshes.sphere_mesh(radius), pos, rot,
                               parent_body, is_template, color, visible)

    def render_capsule(self, name, pos, rot, radius, half_height, parent_body=None, is_template=False, up_axis=1,
                       color=None, visible=True):
        """A capsule along ``up_axis`` (0, 1, 2)."""
        return self._primitive(name, hash(("capsule", radius, half_height, up_axis)),
                               lambda: meshes.capsule_mesh(radius, half_height, up_axis), pos, rot, parent_body,
                               is_template, color, visible)

    def render_cylinder(self, name, pos, rot, radius, half_height, parent_body=None, is_template=False, up_axis=1,
                        color=None, visible=True):
        """A closed cylinder along ``up_axis``."""
        return self._primitive(name, hash(("cylinder", radius, half_height, up_axis)),
                               lambda: meshes.cylinder_mesh(radius, half_height, up_axis), pos, rot, parent_body,
                               is_template, color, visible)

    def render_cone(self, name, pos, rot, radius, half_height, parent_body=None, is_template=False, up_axis=1,
                    color=None, visible=True):
        """A cone along ``up_axis``, tip at ``+half_height``."""
        return self._primitive(name, hash(("cone", radius, half_height, up_axis)),
                               lambda: meshes.cone_mesh(radius, half_height, up_axis), pos, rot, parent_body,
                               is_template, color, visible)

    def render_box(self, name, pos, rot, extents, parent_body=None, is_template=False, color=None, visible=True):
        """A box with half ``extents``."""
        ext = tuple(float(e) for e in np.asarray(extents, dtype=np.float64).reshape(3))
        return self._primitive(name, hash(("box", ext)), lambda: meshes.box_mesh(ext), pos, rot, parent_body,
                               is_template, color, visible)

    def render_arrow(self, name, pos, rot, base_radius, base_height, cap_radius=None, cap_height=None,
                     parent_body=None, is_template=False, up_axis=1, color=None, visible=True):
        """An arrow from ``pos`` along ``up_axis`` (rotated by ``rot``): a shaft and a conical tip."""
        return self._primitive(name, hash(("arrow", base_radius, base_height, cap_radius, cap_height, up_axis)),
                               lambda: meshes.arrow_mesh(base_radius, base_height, cap_radius, cap_height, up_axis),
                               pos, rot, parent_body, is_template, color, visible)

    def render_ref(self, name, path, pos, rot, scale, color=None):
        """Another instance, ``name``, of the shape of the instance ``path``."""
        if path not in self._instances:
            raise RenderError(f"render_ref: no instance named {path!r} to reference")
        _, body, shape, _, old_scale, c1, c2 = self._instances[path][:7]
        if color is not None:
            c1 = c2 = color
        self.add_shape_instance(name, shape, body, pos, rot, old_scale if scale is None else scale, c1, c2)

    def render_mesh(self, name, points, indices, colors=None, pos=(0.0, 0.0, 0.0), rot=(0.0, 0.0, 0.0, 1.0),
                    scale=(1.0, 1.0, 1.0), update_topology=False, parent_body=None, is_template=False,
                    smooth_shading=True, visible=True):
        """A triangle mesh: ``points`` (n, 3), ``indices`` (flat or (m, 3), each in ``[0, n)``), ``colors`` one
        RGB or one per point. A mesh already drawn under ``name`` only moves its points unless
        ``update_topology``; indices are then ignored (and not validated). Returns the shape id."""
        points = _to_numpy(points, np.float32).reshape(-1, 3)
        point_count = len(points)
        per_vertex = None
        if colors is not None:
            colors = _to_numpy(colors, np.float32)
            if colors.ndim == 2 and colors.shape[0] > 1:
                if colors.shape != (point_count, 3):
                    raise ValueError(f"render_mesh: colors must be one RGB color or one per point ({point_count}, 3), "
                                     f"got shape {colors.shape}")
                per_vertex, colors = colors, np.ones(3, dtype=np.float32)
            else:
                colors = colors.reshape(3)
        if not update_topology and name in self._instances:
            shape = self._instances[name][2]
            topology = getattr(self, "_shape_topology", {}).get(shape)
            if per_vertex is not None and topology is not None:
                self._shape_topology[shape] = (topology[0], topology[1], per_vertex)
            self.update_shape_instance(name, pos, rot, color1=colors, color2=colors, scale=scale, visible=visible)
            self.update_shape_vertices(shape, points)
            return shape
        source = np.array(indices.numpy() if hasattr(indices, "numpy") else indices, copy=True)
        limit = min(point_count, 2**31)
        if source.size:
            flat = source.ravel()
            bad = (flat < 0) | (flat >= limit)
            if bad.any():
                first = int(np.flatnonzero(bad)[0])
                raise ValueError(f"render_mesh: index {int(flat[first])} at position {first} of {name!r} is outside "
                                 f"[0, {limit}) (the number of points, at most 2**31)")
            if flat.size % 3:
                raise ValueError(f"render_mesh: the number of indices must be a multiple of 3, got {flat.size}")
        tris = np.asarray(source, dtype=np.int32).reshape(-1, 3)
        geo_hash = hash((points.tobytes(), tris.tobytes(), bool(smooth_shading),
                         None if per_vertex is None else per_vertex.tobytes()))
        if name in self._instances:
            shape = self._instances[name][2]
        else:
            shape = self._shape_geo_hash.get(geo_hash)
        if not update_topology and shape is not None:
            self.update_shape_vertices(shape, points)
            if not is_template:
                self.add_shape_instance(name, shape, parent_body, pos, rot, scale, color1=colors, color2=colors,
                                        visible=visible)
            return shape
        vertices, gfx_indices = meshes.mesh_vertices(points, tris, smooth_shading, per_vertex)
        if shape is not None:
            self.deregister_shape(shape)
        if name in self._instances:
            self.remove_shape_instance(name)
        shape = self.register_shape(geo_hash, vertices, gfx_indices, color1=colors, color2=colors)
        topology = getattr(self, "_shape_topology", None)
        if topology is not None:
            topology[shape] = (tris, bool(smooth_shading), per_vertex)
        if not is_template:
            self.add_shape_instance(name, shape, parent_body, pos, rot, scale, color1=colors, color2=colors,
                                    visible=visible)
        return shape

    def _instancer(self, name, vertices, indices, rows, visible=True):
        inst = self._shape_instancers.get(name)
        self._switch_context()
        if inst is None:
            inst = {"drawable": self._glc.Drawable(vertices, indices), "key": None}
            self._shape_instancers[name] = inst
        inst["visible"] = visible
        inst["drawable"].set_instances(rows)

    def render_points(self, name, points, radius, colors=None, as_spheres=True, visible=True):
        """Points as spheres of ``radius`` (one, or one per point), colored by ``colors`` (one RGB or one per
        point; the next "tab10" color when None)."""
        p = _to_numpy(points, np.float64).reshape(-1, 3)
        if len(p) == 0:
            return
        r = np.broadcast_to(np.asarray(_to_numpy(radius, np.float64)), (len(p),))
        c = self._colors(colors, len(p))
        m = np.zeros((len(p), 4, 4))
        m[:, [0, 1, 2], [0, 1, 2]] = r[:, None]
        m[:, :3, 3] = p
        m[:, 3, 3] = 1.0
        v, i = meshes.sphere_mesh(1.0, 12, 16)
        self._instancer(name, v, i, self._glc.instance_rows(m, c, c), visible)

    def _colors(self, colors, n):
        if colors is None:
            return np.tile(meshes.tab10(len(self._shape_geo_hash) + len(self._shape_instancers)), (n, 1))
        c = _to_numpy(colors, np.float64)
        if c.ndim == 1:
            return np.tile(c.reshape(3), (n, 1))
        if c.shape != (n, 3):
            raise ValueError(f"colors must be one RGB color or one per element ({n}, 3), got shape {c.shape}")
        return c

    def _render_lines(self, name, p0, p1, color, radius, visible):
        if len(p0) == 0:
            return
        c = self._colors(color, len(p0))
        v, i = meshes.cylinder_mesh(1.0, 0.5, 1, 12)
        rows = self._glc.instance_rows(meshes.segment_matrices(p0, p1, radius), c, c)
        self._instancer(name, v, i, rows, visible)

    def render_line_list(self, name, vertices, indices, color=None, radius=0.01, visible=True):
        """Segments ``vertices[indices[2k]] -> vertices[indices[2k + 1]]`` as cylinders of ``radius``."""
        v = _to_numpy(vertices, np.float64).reshape(-1, 3)
        idx = _to_numpy(indices, np.int64).ravel()
        pairs = idx[: len(idx) // 2 * 2].reshape(-1, 2)
        self._render_lines(name, v[pairs[:, 0]], v[pairs[:, 1]], color, radius, visible)

    def render_line_strip(self, name, vertices, color=None, radius=0.01, visible=True):
        """The polyline through ``vertices`` as cylinders of ``radius``."""
        v = _to_numpy(vertices, np.float64).reshape(-1, 3)
        self._render_lines(name, v[:-1], v[1:], color, radius, visible)

    # --- tiled rendering and pixels ------------------------------------------------------------------------------

    def setup_tiled_rendering(self, instances, rescale_window=False, tile_width=None, tile_height=None,
                              tile_ncols=None, tile_nrows=None, tile_positions=None, tile_sizes=None,
                              projection_matrices=None, view_matrices=None):
        """Split the frame into tiles, tile ``k`` drawing only the instance ids ``instances[k]`` with its own
        projection / view matrix (the current camera when None); :meth:`get_pixels` returns them stacked."""
        if not isinstance(instances, list):
            raise TypeError(f"instances must be a list of lists, got {type(instances).__name__}")
        if not instances:
            raise ValueError(f"instances must be non-empty, got {instances!r}")
        for index, item in enumerate(instances):
            if not isinstance(item, list):
                raise TypeError(f"instances elements must be lists, got {type(item).__name__} at index {index}")
        n = len(instances)
        if tile_positions is None or tile_sizes is None:
            if tile_ncols is None or tile_nrows is None:
                tile_ncols = int(np.ceil(np.sqrt(n)))
                tile_nrows = int(np.ceil(n / tile_ncols))
            w = tile_width or max(32, self.screen_width // tile_ncols)
            h = tile_height or max(32, self.screen_height // tile_nrows)
            viewports = [(i * w, j * h, w, h) for i in range(tile_ncols) for j in range(tile_nrows)][:n]
            if rescale_window and self.window is not None:
                self.window.set_size(w * tile_ncols, h * tile_nrows)
                self._window_resize_callback(w * tile_ncols, h * tile_nrows)
        else:
            if len(tile_positions) != n or len(tile_sizes) != n:
                raise ValueError(f"tile_positions and tile_sizes must each contain {n} entries to match instances, "
                                 f"got {len(tile_positions)} positions and {len(tile_sizes)} sizes")
            tile_ncols = tile_nrows = None
            w = tile_sizes[0][0] if all(s[0] == tile_sizes[0][0] for s in tile_sizes) else None
            h = tile_sizes[0][1] if all(s[1] == tile_sizes[0][1] for s in tile_sizes) else None
            viewports = [(x, y, sw, sh) for (x, y), (sw, sh) in zip(tile_positions, tile_sizes)]
        self._tile_instances = [list(t) for t in instances]
        self._tile_ncols, self._tile_nrows, self._tile_width, self._tile_height = tile_ncols, tile_nrows, w, h
        self._tile_viewports = viewports
        projection_matrices = projection_matrices or [None] * n
        self._tile_projection_matrices = [
            self.compute_projection_matrix(self.camera_fov, vp[2] / vp[3], self.camera_near_plane,
                                           self.camera_far_plane) if m is None else _gl_flat(m)
            for vp, m in zip(viewports, projection_matrices)]
        self._tile_view_matrices = [None if m is None else _gl_flat(m)
                                    for m in (view_matrices or [None] * n)]
        self._tiled_rendering = True

    def update_tile(self, tile_id, instances=None, projection_matrix=None, view_matrix=None, tile_size=None,
                    tile_position=None):
        """Change one tile's instances, matrices, size or position."""
        if self._tile_instances is None:
            raise RuntimeError("update_tile() requires setup_tiled_rendering() to be called first, got no tiles")
        count = len(self._tile_instances)
        if not 0 <= tile_id < count:
            raise IndexError(f"tile_id {tile_id} is out of bounds for {count} {'tile' if count == 1 else 'tiles'}")
        if instances is not None:
            self._tile_instances[tile_id] = list(instances)
        if projection_matrix is not None:
            self._tile_projection_matrices[tile_id] = _gl_flat(projection_matrix)
        if view_matrix is not None:
            self._tile_view_matrices[tile_id] = _gl_flat(view_matrix)
        x, y, w, h = self._tile_viewports[tile_id]
        if tile_size is not None:
            w, h = tile_size
        if tile_position is not None:
            x, y = tile_position
        self._tile_viewports[tile_id] = (x, y, w, h)

    def get_pixels(self, target_image, split_up_tiles=True, mode="rgb", use_uint8=False):
        """Copy the last frame into ``target_image`` (a ``wp.array`` or NumPy array), top row first: RGB in [0, 1]
        (float32; uint8 in [0, 255] with ``use_uint8``) or the depth (distance along the view direction, float32).
        Shape ``(height, width, 3 or 1)``, or ``(num_tiles, tile_height, tile_width, 3 or 1)`` with
        ``split_up_tiles`` (which needs :meth:`setup_tiled_rendering`). Returns True."""
        if mode not in ("rgb", "depth"):
            raise ValueError(f"get_pixels: mode must be 'rgb' or 'depth', got {mode!r}")
        channels = 3 if mode == "rgb" else 1
        if split_up_tiles:
            if self._tile_viewports is None:
                raise RuntimeError("get_pixels() requires setup_tiled_rendering() when split_up_tiles=True, "
                                   "got no tile viewports")
            if not self._tile_width or not self._tile_height:
                raise RuntimeError("get_pixels() with split_up_tiles=True needs tiles of one size, got "
                                   f"tile_width={self._tile_width} and tile_height={self._tile_height}")
            sizes = {(vp[2], vp[3]) for vp in self._tile_viewports}
            if sizes != {(self._tile_width, self._tile_height)}:
                raise RuntimeError(f"get_pixels() with split_up_tiles=True needs every tile to be "
                                   f"{self._tile_width} x {self._tile_height}, got sizes {sorted(sizes)}")
            expected = (len(self._tile_viewports), self._tile_height, self._tile_width, channels)
        else:
            expected = (self.screen_height, self.screen_width, channels)
        if tuple(target_image.shape) != expected:
            raise ValueError(f"target_image shape must be {expected}, got {tuple(target_image.shape)}")
        self._switch_context()
        frame = self._frame.read(depth=mode == "depth")  # bottom row first
        if mode == "depth":
            frame = meshes.linear_depth(frame, self.camera_near_plane, self.camera_far_plane)[..., None]
            fill = self.camera_far_plane
        else:
            frame = frame if use_uint8 else frame.astype(np.float32) / 255.0
            fill = 0
        if split_up_tiles:
            out = np.full(expected, fill, dtype=frame.dtype)
            for k, (x, y, w, h) in enumerate(self._tile_viewports):
                part = frame[y:y + h, x:x + w]
                out[k, :part.shape[0], :part.shape[1]] = part
            out = out[:, ::-1]
        else:
            out = frame[::-1]
        dtype = np.uint8 if (mode == "rgb" and use_uint8) else np.float32
        out = np.ascontiguousarray(out, dtype=dtype)
        if isinstance(target_image, np.ndarray):
            target_image[...] = out
        else:
            target_image.assign(out)
        return True

    # --- mesh helpers (Warp's static methods) ----------------------------------------------------------------------

    @staticmethod
    def _create_sphere_mesh(radius=1.0, num_latitudes=DEFAULT_SEGMENTS, num_longitudes=DEFAULT_SEGMENTS,
                            reverse_winding=False):
        """A UV sphere ``(vertices, indices)``: float32 rows (position, outward normal, u, v) on a
        ``(num_latitudes + 1) x (num_longitudes + 1)`` grid from the +y pole down, uint32 triangle indices wound
        counter-clockwise seen from outside (clockwise with ``reverse_winding``)."""
        return meshes.sphere_mesh(radius, num_latitudes, num_longitudes, reverse_winding)

    @staticmethod
    def _create_capsule_mesh(radius, half_height, up_axis=1, segments=DEFAULT_SEGMENTS):
        return meshes.capsule_mesh(radius, half_height, up_axis, segments)

    @staticmethod
    def _create_cylinder_mesh(radius, half_height, up_axis=1, segments=DEFAULT_SEGMENTS, top_radius=None):
        return meshes.cylinder_mesh(radius, half_height, up_axis, segments, top_radius)

    @staticmethod
    def _create_cone_mesh(radius, half_height, up_axis=1, segments=DEFAULT_SEGMENTS):
        return meshes.cone_mesh(radius, half_height, up_axis, segments)

    @staticmethod
    def _create_arrow_mesh(base_radius, base_height, cap_radius=None, cap_height=None, up_axis=1,
                           segments=DEFAULT_SEGMENTS):
        return meshes.arrow_mesh(base_radius, base_height, cap_radius, cap_height, up_axis, segments)

    @staticmethod
    def _create_box_mesh(extents):
        return meshes.box_mesh(extents)


def _to_gl(m: np.ndarray) -> np.ndarray:
    """A row-major 4x4 matrix as OpenGL's 16 column-major floats (Warp's matrix format)."""
    return np.ascontiguousarray(np.asarray(m, dtype=np.float64).T).ravel()


def _gl_flat(m) -> np.ndarray:
    """A matrix given to Warp's API (16 floats, or 4x4 flattened row by row) as 16 column-major floats: Warp reads
    both forms as OpenGL's column-major order."""
    flat = np.asarray(m, dtype=np.float64).ravel()
    if flat.size != 16:
        raise ValueError(f"a 4x4 matrix (16 values) is needed, got {flat.size} values")
    return flat


def _from_gl(flat) -> np.ndarray:
    return np.asarray(flat, dtype=np.float64).reshape(4, 4).T


def _quat_between(a, b):
    """The shortest rotation (x, y, z, w) taking direction ``a`` to ``b``."""
    a = np.asarray(a, float) / np.linalg.norm(a)
    b = np.asarray(b, float) / np.linalg.norm(b)
    c, d = np.cross(a, b), float(np.dot(a, b))
    if d < -1.0 + 1e-9:
        axis = np.cross(a, [1.0, 0.0, 0.0] if abs(a[0]) < 0.9 else [0.0, 0.0, 1.0])
        return (*(axis / np.linalg.norm(axis)), 0.0)
    q = np.array([*c, 1.0 + d])
    return tuple(q / np.linalg.norm(q))

