"""Output of simulations: ``SimRenderer`` writes USD (needs ``usd-core``), ``SimRendererOpenGL`` shows the simulation
in weft's OpenGL viewer (needs ``pyglet``; ``headless=True`` draws offscreen), ``ImageRenderer`` draws frames headless
with Matplotlib (no display, no OpenGL) and saves PNGs and an animated GIF.

Both take the model at construction and a state per frame::

    renderer = wp.sim.render.ImageRenderer(model, "out/frames")
    for frame in range(n):
        renderer.begin_frame(time)
        renderer.render(state)
        renderer.end_frame()
    renderer.save()            # PNG of the last frame + GIF of all
"""

from __future__ import annotations

import os

import numpy as np

from ..render.opengl import OpenGLRenderer
from .model import GEO_BOX, GEO_CAPSULE, GEO_CONE, GEO_CYLINDER, GEO_PLANE, GEO_SPHERE, SimError


def _transforms(model, state):
    """World transforms (p, q) of every shape except the ground plane, as NumPy rows."""
    xs = model.shape_transform.numpy()
    bodies = model.shape_body.numpy()
    body_q = state.body_q.numpy() if state is not None and state.body_q is not None else None
    out = []
    for s in range(model.shape_count - 1):
        p, q = xs[s, :3].astype(np.float64), xs[s, 3:].astype(np.float64)
        b = bodies[s]
        if b >= 0 and body_q is not None:
            bp, bq = body_q[b, :3].astype(np.float64), body_q[b, 3:].astype(np.float64)
            p, q = bp + _rot(bq, p), _qmul(bq, q)
        out.append((p, q))
    return out


def _rot(q, v):
    u, w = q[:3], q[3]
    return v * (2.0 * w * w - 1.0) + np.cross(u, v) * 2.0 * w + u * 2.0 * (u @ v)


def _qmul(a, b):
    av, aw, bv, bw = a[:3], a[3], b[:3], b[3]
    return np.concatenate([aw * bv + bw * av + np.cross(av, bv), [aw * bw - av @ bv]])


def _surface(model):
    """Triangles to draw for the deformables: the model's FEM triangles (cloth, soft-body surfaces)."""
    return model.tri_indices.numpy().reshape(-1, 3) if model.tri_count else np.zeros((0, 3), dtype=np.int32)


class ImageRenderer:
    """Headless Matplotlib renderer of particles, deformable surfaces, shapes and the ground plane.

    Args:
        model: the :class:`~weft.sim.Model` to draw.
        path: output stem: frames go to ``<path>_NNNN.png`` when ``save_frames``, ``save()`` writes ``<path>.png``
            (last frame) and ``<path>.gif``.
        size: image size in pixels (width, height).
        camera: (elevation, azimuth) of the view in degrees.
        bounds: ((xmin, xmax), (ymin, ymax), (zmin, zmax)) of the view (default: from the first frame).
        save_frames: also write every frame as a PNG.
        fps: frame rate of the GIF.
    """

    def __init__(self, model, path: str, size=(480, 360), camera=(20.0, -60.0), bounds=None,
                 save_frames: bool = False, fps: int = 30, scaling: float = 1.0):
        try:
            import matplotlib
        except ImportError as exc:  # pragma: no cover - matplotlib is in the examples extra
            raise SimError("ImageRenderer needs matplotlib (pip install weft[examples])") from exc
        matplotlib.use("Agg", force=False)
        self.model = model
        self.path = str(path)
        self.size = size
        self.camera = camera
        self.bounds = bounds
        self.save_frames = save_frames
        self.fps = fps
        self.frames: list[np.ndarray] = []
        self.time = 0.0
        self._tris = _surface(model)
        self._state = None

    def begin_frame(self, time: float = 0.0) -> None:
        """Start a frame at simulation time ``time``."""
        self.time = time

    def render(self, state) -> None:
        """Draw ``state`` into the current frame."""
        self._state = state

    def end_frame(self) -> None:
        """Rasterise the current frame."""
        if self._state is None:
            raise SimError("ImageRenderer.end_frame: call render(state) first")
        image = self._draw(self._state)
        self.frames.append(image)
        if self.save_frames:
            self._write_png(image, f"{self.path}_{len(self.frames) - 1:04d}.png")

    def _draw(self, state) -> np.ndarray:
        import matplotlib.pyplot as plt
        from mpl_toolkits.mplot3d.art3d import Poly3DCollection

        x = state.particle_q.numpy().astype(np.float64) if state.particle_count else np.zeros((0, 3))
        dpi = 100
        fig = plt.figure(figsize=(self.size[0] / dpi, self.size[1] / dpi), dpi=dpi)
        ax = fig.add_subplot(projection="3d")
        ax.computed_zorder = False  # draw in order: ground, shapes, deformables
        # world +Y up drawn as matplotlib's z
        to_mpl = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
        if self.bounds is None:
            lo = x.min(0) if len(x) else np.full(3, -1.0)
            hi = x.max(0) if len(x) else np.full(3, 1.0)
            c, h = (lo + hi) / 2, max((hi - lo).max() * 0.75, 0.5)
            self.bounds = tuple((c[i] - h, c[i] + h) for i in range(3))
            self.bounds = (self.bounds[0], (min(0.0, self.bounds[1][0]), self.bounds[1][1]), self.bounds[2])
        (x0, x1), (y0, y1), (z0, z1) = self.bounds
        if self.model.ground:
            ground = np.array([[x0, 0.0, z0], [x1, 0.0, z0], [x1, 0.0, z1], [x0, 0.0, z1]]) @ to_mpl.T
            ax.add_collection3d(Poly3DCollection([ground], facecolor=(0.8, 0.8, 0.75, 0.6), edgecolor="none"))
        for (p, q), t, scale in zip(_transforms(self.model, state), self.model.shape_geo.type.numpy()[:-1],
                                    self.model.shape_geo.scale.numpy()[:-1]):
            self._draw_shape(ax, int(t), scale.astype(np.float64), p, q, to_mpl)
        if len(self._tris):
            faces = x[self._tris] @ to_mpl.T
            ax.add_collection3d(Poly3DCollection(faces, facecolor=(0.35, 0.55, 0.85, 0.9), edgecolor=(0, 0, 0, 0.15),
                                                 linewidth=0.2))
        elif len(x):
            xm = x @ to_mpl.T
            ax.scatter(xm[:, 0], xm[:, 1], xm[:, 2], s=4, c=xm[:, 2], cmap="viridis", depthshade=True)
        ax.set_xlim(x0, x1)
        ax.set_ylim(z0, z1)
        ax.set_zlim(y0, y1)
        ax.set_box_aspect((x1 - x0, z1 - z0, y1 - y0))
        ax.view_init(elev=self.camera[0], azim=self.camera[1])
        ax.set_axis_off()
        ax.set_title(f"t = {self.time:.3f} s", fontsize=8)
        fig.tight_layout(pad=0)
        fig.canvas.draw()
        image = np.asarray(fig.canvas.buffer_rgba())[..., :3].copy()
        plt.close(fig)
        return image

    def _draw_shape(self, ax, geo: int, scale, p, q, to_mpl) -> None:
        from mpl_toolkits.mplot3d.art3d import Poly3DCollection

        u, v = np.meshgrid(np.linspace(0, 2 * np.pi, 16), np.linspace(0, np.pi, 9))
        if geo == GEO_SPHERE or geo == GEO_CAPSULE:
            r = scale[0]
            pts = np.stack([np.cos(u) * np.sin(v), np.cos(v), np.sin(u) * np.sin(v)], -1) * r
            if geo == GEO_CAPSULE:
                pts[..., 1] += np.sign(pts[..., 1]) * scale[1]
        elif geo in (GEO_CYLINDER, GEO_CONE):
            r, h = scale[0], scale[1]
            yy = np.linspace(-h, h, 9)[:, None] * np.ones_like(u[:1])
            rr = r if geo == GEO_CYLINDER else r * (yy + h) / (2 * h)
            pts = np.stack([np.cos(u[:1]) * rr, yy, np.sin(u[:1]) * rr], -1)
        elif geo == GEO_BOX:
            c = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * scale
            quads = [[0, 1, 3, 2], [4, 5, 7, 6], [0, 1, 5, 4], [2, 3, 7, 6], [0, 2, 6, 4], [1, 3, 7, 5]]
            world = np.array([p + _rot(q, c_) for c_ in c]) @ to_mpl.T
            ax.add_collection3d(Poly3DCollection([world[f] for f in quads], facecolor=(0.8, 0.5, 0.3, 0.5),
                                                 edgecolor=(0, 0, 0, 0.3), linewidth=0.3))
            return
        elif geo == GEO_PLANE:
            w, length = (scale[0] or 5.0), (scale[1] or 5.0)
            c = np.array([[-w, 0, -length], [w, 0, -length], [w, 0, length], [-w, 0, length]], dtype=np.float64)
            world = np.array([p + _rot(q, c_) for c_ in c]) @ to_mpl.T
            ax.add_collection3d(Poly3DCollection([world], facecolor=(0.6, 0.6, 0.6, 0.4), edgecolor="none"))
            return
        else:
            return
        world = (p + np.einsum("ij,...j->...i", _quat_matrix(q), pts)) @ to_mpl.T
        ax.plot_surface(world[..., 0], world[..., 1], world[..., 2], color=(0.8, 0.5, 0.3), alpha=0.5, linewidth=0)

    @staticmethod
    def _write_png(image: np.ndarray, path: str) -> None:
        import imageio.v2 as imageio

        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        imageio.imwrite(path, image)

    def save(self) -> list[str]:
        """Write ``<path>.png`` (last frame) and ``<path>.gif`` (all frames); returns the paths written."""
        import imageio.v2 as imageio

        if not self.frames:
            raise SimError("ImageRenderer.save: no frames rendered")
        png, gif = self.path + ".png", self.path + ".gif"
        self._write_png(self.frames[-1], png)
        imageio.mimsave(gif, self.frames, duration=1.0 / self.fps, loop=0)
        return [png, gif]


def _quat_matrix(q):
    x, y, z, w = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


class SimRendererUsd:
    """Write a simulation to a USD stage (``usd-core``) through ``weft.render.UsdRenderer``: particles as points,
    deformable surfaces as a mesh, shapes as USD geometry prims with time-sampled transforms, the ground as a plane.

    Args:
        model: the :class:`~weft.sim.Model`.
        path: the .usd / .usda file to write.
        scaling: scale of the scene in the stage.
        fps: time codes per second.
        up_axis: "Y" (default) or "Z".
    """

    def __init__(self, model, path: str, scaling: float = 1.0, fps: int = 60, up_axis: str = "Y", **_ignored):
        from ..render import RenderError, UsdRenderer

        try:
            self.usd = UsdRenderer(str(path), up_axis=up_axis, fps=fps, scaling=scaling)
        except RenderError as exc:
            raise SimError("SimRenderer writes USD and needs usd-core (pip install usd-core)") from exc
        self.model = model
        self.path = str(path)
        self.fps = fps
        self.stage = self.usd.stage
        self.time = 0.0
        self._tris = _surface(model)
        self._radii = model.particle_radius.numpy().astype(float) if model.particle_count else None
        if model.ground:
            self.usd.render_ground(size=10.0)
        self._shapes = [(s, int(t), sc) for s, (t, sc) in enumerate(zip(model.shape_geo.type.numpy()[:-1],
                                                                       model.shape_geo.scale.numpy()[:-1]))
                        if int(t) in (GEO_SPHERE, GEO_BOX, GEO_CAPSULE, GEO_CYLINDER, GEO_CONE)]

    def begin_frame(self, time: float) -> None:
        """Start the frame at simulation time ``time``."""
        self.time = time
        self.usd.begin_frame(time)

    def render(self, state) -> None:
        """Write ``state`` at the current time."""
        r = self.usd
        if state.particle_count:
            x = state.particle_q.numpy()
            if len(self._tris):
                r.render_mesh("surface", x, self._tris)
            else:
                r.render_points("particles", x, self._radii)
        transforms = _transforms(self.model, state) if self._shapes else []
        for s, t, sc in self._shapes:
            p, q = transforms[s]
            name = f"shape_{s}"
            if t == GEO_SPHERE:
                r.render_sphere(name, p, q, float(sc[0]))
            elif t == GEO_BOX:
                r.render_box(name, p, q, sc[:3])
            elif t == GEO_CAPSULE:
                r.render_capsule(name, p, q, float(sc[0]), float(sc[1]))
            elif t == GEO_CYLINDER:
                r.render_cylinder(name, p, q, float(sc[0]), float(sc[1]))
            else:
                r.render_cone(name, p, q, float(sc[0]), float(sc[1]))

    def end_frame(self) -> None:
        """Finish the frame."""
        self.usd.end_frame()

    def save(self) -> bool:
        """Write the stage to disk."""
        return self.usd.save()


SimRenderer = SimRendererUsd


class SimRendererOpenGL(OpenGLRenderer):
    """warp.sim's ``SimRendererOpenGL``: an :class:`~weft.render.OpenGLRenderer` that draws a model's shapes (as
    instances following their bodies), particles (spheres of their radii), deformable surfaces (a mesh), springs
    (lines) and the ground; :meth:`render` takes a state per frame. ``path`` is the window title; the other keyword
    arguments go to ``OpenGLRenderer`` (``headless=True``, ``screen_width``, ``camera_pos``...)."""

    def __init__(self, model, path="weft.sim", scaling: float = 1.0, fps: int = 60, up_axis=None,
                 show_rigid_contact_points=False, contact_points_radius=1e-3, show_joints=False, **render_kwargs):
        if up_axis is None:
            up_axis = "XYZ"[int(model.up_axis)]
        super().__init__(str(path), scaling=scaling, fps=fps, up_axis=up_axis, **render_kwargs)
        self.show_rigid_contact_points = show_rigid_contact_points
        self.contact_points_radius = contact_points_radius
        self.show_joints = show_joints
        self.populate(model)

    def populate(self, model) -> None:
        """Register the model's bodies and add one instance per primitive shape (meshes and SDFs are not drawn)."""
        self.model = model
        self.skip_rendering = False
        self.body_names = [f"body_{b}" for b in range(model.body_count)]
        for name in self.body_names:
            self.register_body(name)
        self._tris = _surface(model)
        self._radii = model.particle_radius.numpy().astype(float) if model.particle_count else None
        if model.shape_count > 1:
            xs = model.shape_transform.numpy().astype(np.float64)
            bodies = model.shape_body.numpy()
            kinds = model.shape_geo.type.numpy()[:-1]
            scales = model.shape_geo.scale.numpy()[:-1].astype(np.float64)
            for s, (t, sc) in enumerate(zip(kinds, scales)):
                name, p, q = f"shape_{s}", xs[s, :3], xs[s, 3:]
                args = {GEO_SPHERE: ("render_sphere", (sc[0],)), GEO_BOX: ("render_box", (sc[:3],)),
                        GEO_CAPSULE: ("render_capsule", (sc[0], sc[1])),
                        GEO_CYLINDER: ("render_cylinder", (sc[0], sc[1])),
                        GEO_CONE: ("render_cone", (sc[0], sc[1]))}.get(int(t))
                if args is None:
                    continue
                shape = getattr(self, args[0])(name, p, q, *args[1], is_template=True)
                self.add_shape_instance(name, shape, int(bodies[s]), p, q)
        if model.ground:
            self.render_ground()

    def render(self, state) -> None:
        """Draw ``state``: particles, surfaces, springs and the bodies' shapes."""
        if self.skip_rendering:
            return
        model = self.model
        if model.particle_count:
            x = state.particle_q.numpy()
            self.render_points("particles", x, radius=self._radii, colors=(0.8, 0.3, 0.2))
            if len(self._tris):
                self.render_mesh("surface", x, self._tris, colors=(0.75, 0.25, 0.0))
            if model.spring_count:
                self.render_line_list("springs", x, model.spring_indices.numpy().ravel(), (0.25, 0.5, 0.25), 0.02)
        if model.body_count and state.body_q is not None:
            self.update_body_transforms(state.body_q)
