"""``UsdRenderer``: Warp's USD renderer interface, writing time-sampled primitives to a USD stage (``usd-core``).

Every ``render_*`` call creates the prim on first use (``/root/<name>``, or under a body registered with
``register_body``) and writes its time-varying attributes (transform, points, colors) at the current frame's time
code (``time * fps``). ``save()`` writes the stage's root layer.
"""

from __future__ import annotations

import numpy as np

from .errors import RenderError

_AXES = ("X", "Y", "Z")


def _host(a) -> np.ndarray:
    """A weft array, NumPy array or sequence as a float64 NumPy array."""
    if hasattr(a, "numpy"):
        a = a.numpy()
    return np.asarray(a, dtype=np.float64)


def _import_pxr():
    try:
        from pxr import Gf, Sdf, Usd, UsdGeom, Vt  # noqa: F401
    except ImportError as exc:
        raise RenderError("UsdRenderer writes USD stages and needs usd-core (pip install usd-core)") from exc
    import pxr

    return pxr


class UsdRenderer:
    """Write scenes to a USD stage, frame by frame, with Warp's ``warp.render.UsdRenderer`` methods.

    Args:
        stage: path of the ``.usd`` / ``.usda`` file to create, or an open ``pxr.Usd.Stage``.
        up_axis: ``"X"``, ``"Y"`` (default) or ``"Z"``.
        fps: time codes per second.
        scaling: uniform scale of the ``/root`` prim.
    """

    def __init__(self, stage, up_axis: str = "Y", fps: int = 60, scaling: float = 1.0):
        pxr = _import_pxr()
        self._pxr = pxr
        Usd, UsdGeom = pxr.Usd, pxr.UsdGeom
        if isinstance(stage, str):
            self.stage = Usd.Stage.CreateNew(stage)
        elif isinstance(stage, Usd.Stage):
            self.stage = stage
        else:
            raise RenderError(f"UsdRenderer: stage must be a file path or a pxr.Usd.Stage, got {type(stage).__name__}")
        if str(up_axis).upper() not in _AXES:
            raise RenderError(f"UsdRenderer: up_axis must be 'X', 'Y' or 'Z', got {up_axis!r}")
        self.up_axis = str(up_axis).upper()
        self.fps = fps
        self.scaling = scaling
        self.time = 0.0
        self.time_code = 0.0
        UsdGeom.SetStageUpAxis(self.stage, UsdGeom.Tokens.z if self.up_axis == "Z" else UsdGeom.Tokens.y)
        self.stage.SetTimeCodesPerSecond(fps)
        self.stage.SetStartTimeCode(0.0)
        self.stage.SetEndTimeCode(0.0)
        self.root = UsdGeom.Xform.Define(self.stage, "/root")
        self.root.AddScaleOp().Set((scaling, scaling, scaling))
        self.stage.SetDefaultPrim(self.root.GetPrim())
        self._bodies: dict[str, str] = {}
        self._xforms: dict[str, tuple] = {}
        self._topology: dict[str, int] = {}

    # -------------------------------------------------------------- frames
    def begin_frame(self, time: float) -> None:
        """Start the frame at simulation time ``time`` (seconds)."""
        self.time = float(time)
        self.time_code = self.time * self.fps

    def end_frame(self) -> None:
        """Finish the frame (extends the stage's time range)."""
        self.stage.SetEndTimeCode(max(self.stage.GetEndTimeCode(), self.time_code))

    def save(self) -> bool:
        """Write the stage's root layer to disk."""
        self.stage.GetRootLayer().Save()
        return True

    # -------------------------------------------------------------- helpers
    def register_body(self, body_name: str) -> str:
        """An Xform prim ``/root/<body_name>`` that shapes can be attached to with ``parent_body=body_name``."""
        path = f"/root/{body_name}"
        self._pxr.UsdGeom.Xform.Define(self.stage, path)
        self._bodies[body_name] = path
        return path

    def _path(self, name: str, parent_body: str | None, is_template: bool) -> str:
        if is_template:
            scope = "/root/_template_shapes"
            if not self.stage.GetPrimAtPath(scope):
                self._pxr.UsdGeom.Scope.Define(self.stage, scope)
                self._pxr.UsdGeom.Imageable(self.stage.GetPrimAtPath(scope)).MakeInvisible()
            return f"{scope}/{name}"
        if parent_body is not None:
            base = self._bodies.get(parent_body) or self.register_body(parent_body)
            return f"{base}/{name}"
        return f"/root/{name}"

    def _set_transform(self, path: str, prim, pos, rot, scale=None) -> None:
        Gf, UsdGeom = self._pxr.Gf, self._pxr.UsdGeom
        ops = self._xforms.get(path)
        if ops is None:
            xf = UsdGeom.Xformable(prim)
            xf.ClearXformOpOrder()
            ops = (xf.AddTranslateOp(), xf.AddOrientOp(), xf.AddScaleOp())
            self._xforms[path] = ops
        p = _host(pos).reshape(3)
        q = _host(rot).reshape(4)  # (x, y, z, w), Warp's order
        ops[0].Set(Gf.Vec3d(*p), self.time_code)
        ops[1].Set(Gf.Quatf(float(q[3]), float(q[0]), float(q[1]), float(q[2])), self.time_code)
        ops[2].Set(Gf.Vec3f(*(_host(scale).reshape(3) if scale is not None else (1.0, 1.0, 1.0))), self.time_code)

    def _set_color(self, gprim, color, count: int | None = None) -> None:
        if color is None:
            return
        Gf, UsdGeom = self._pxr.Gf, self._pxr.UsdGeom
        c = _host(color)
        attr = gprim.GetDisplayColorAttr() or gprim.CreateDisplayColorAttr()
        if c.ndim == 2 and count is not None and c.shape[0] == count:
            attr.Set([Gf.Vec3f(*row[:3]) for row in c], self.time_code)
            UsdGeom.Primvar(attr).SetInterpolation(UsdGeom.Tokens.vertex)
        else:
            attr.Set([Gf.Vec3f(*c.reshape(-1)[:3])], self.time_code)

    def _visibility(self, prim, visible: bool) -> None:
        img = self._pxr.UsdGeom.Imageable(prim)
        img.GetVisibilityAttr().Set(self._pxr.UsdGeom.Tokens.inherited if visible else
                                    self._pxr.UsdGeom.Tokens.invisible, self.time_code)

    def _shape(self, cls, name, pos, rot, parent_body, is_template, color, visible, setup, scale=None):
        path = self._path(name, parent_body, is_template)
        prim = cls.Get(self.stage, path)
        if not prim:
            prim = cls.Define(self.stage, path)
        setup(prim)
        self._set_transform(path, prim, pos, rot, scale)
        self._set_color(prim, color)
        self._visibility(prim, visible)
        return path

    # -------------------------------------------------------------- analytic shapes
    def render_sphere(self, name: str, pos, rot, radius: float, parent_body: str | None = None,
                      is_template: bool = False, color=None, visible: bool = True) -> str:
        """A sphere of ``radius`` at ``pos`` (rotation ``rot``, a quaternion ``(x, y, z, w)``)."""
        return self._shape(self._pxr.UsdGeom.Sphere, name, pos, rot, parent_body, is_template, color, visible,
                           lambda p: p.GetRadiusAttr().Set(float(radius), self.time_code))

    def render_box(self, name: str, pos, rot, extents, parent_body: str | None = None, is_template: bool = False,
                   color=None, visible: bool = True) -> str:
        """A box with half-extents ``extents``."""
        return self._shape(self._pxr.UsdGeom.Cube, name, pos, rot, parent_body, is_template, color, visible,
                           lambda p: p.GetSizeAttr().Set(2.0), scale=_host(extents).reshape(3))

    def _axial(self, cls, name, pos, rot, radius, half_height, parent_body, is_template, up_axis, color, visible):
        def setup(p):
            p.GetRadiusAttr().Set(float(radius), self.time_code)
            p.GetHeightAttr().Set(2.0 * float(half_height), self.time_code)
            p.GetAxisAttr().Set(_AXES[int(up_axis)])

        return self._shape(cls, name, pos, rot, parent_body, is_template, color, visible, setup)

    def render_capsule(self, name: str, pos, rot, radius: float, half_height: float, parent_body: str | None = None,
                       is_template: bool = False, up_axis: int = 1, color=None, visible: bool = True) -> str:
        """A capsule along axis ``up_axis`` (0, 1, 2): cylinder of half height ``half_height`` plus end caps."""
        return self._axial(self._pxr.UsdGeom.Capsule, name, pos, rot, radius, half_height, parent_body, is_template,
                           up_axis, color, visible)

    def render_cylinder(self, name: str, pos, rot, radius: float, half_height: float, parent_body: str | None = None,
                        is_template: bool = False, up_axis: int = 1, color=None, visible: bool = True) -> str:
        """A cylinder along axis ``up_axis``."""
        return self._axial(self._pxr.UsdGeom.Cylinder, name, pos, rot, radius, half_height, parent_body,
                           is_template, up_axis, color, visible)

    def render_cone(self, name: str, pos, rot, radius: float, half_height: float, parent_body: str | None = None,
                    is_template: bool = False, up_axis: int = 1, color=None, visible: bool = True) -> str:
        """A cone along axis ``up_axis``."""
        return self._axial(self._pxr.UsdGeom.Cone, name, pos, rot, radius, half_height, parent_body, is_template,
                           up_axis, color, visible)

    def render_arrow(self, name: str, pos, rot, base_radius: float, base_height: float,
                     cap_radius: float | None = None, cap_height: float | None = None, parent_body: str | None = None,
                     is_template: bool = False, up_axis: int = 1, color=None, visible: bool = True) -> str:
        """An arrow along ``up_axis``: a cylinder (``base_*``) and a cone tip (``cap_*``) under one Xform."""
        UsdGeom = self._pxr.UsdGeom
        path = self._path(name, parent_body, is_template)
        xf = UsdGeom.Xform.Get(self.stage, path) or UsdGeom.Xform.Define(self.stage, path)
        self._set_transform(path, xf, pos, rot)
        cap_radius = base_radius * 1.8 if cap_radius is None else cap_radius
        cap_height = base_height * 0.18 if cap_height is None else cap_height
        offset = np.zeros(3)
        offset[int(up_axis)] = 0.5 * base_height
        ident = (0.0, 0.0, 0.0, 1.0)
        self._relative(f"{path}/base", UsdGeom.Cylinder, offset, ident, base_radius, 0.5 * base_height, up_axis,
                       color)
        offset[int(up_axis)] = base_height + 0.5 * cap_height
        self._relative(f"{path}/cap", UsdGeom.Cone, offset, ident, cap_radius, 0.5 * cap_height, up_axis, color)
        self._visibility(xf.GetPrim(), visible)
        return path

    def _relative(self, path, cls, pos, rot, radius, half_height, up_axis, color) -> None:
        prim = cls.Get(self.stage, path) or cls.Define(self.stage, path)
        prim.GetRadiusAttr().Set(float(radius), self.time_code)
        prim.GetHeightAttr().Set(2.0 * float(half_height), self.time_code)
        prim.GetAxisAttr().Set(_AXES[int(up_axis)])
        self._set_transform(path, prim, pos, rot)
        self._set_color(prim, color)

    def render_plane(self, name: str, pos, rot, width: float, length: float, color=(1.0, 1.0, 1.0), color2=None,
                     parent_body: str | None = None, is_template: bool = False, u_scaling: float = 1.0,
                     v_scaling: float = 1.0, visible: bool = True) -> str:
        """A ``2 width x 2 length`` rectangle in the plane normal to the up axis (``color2`` is not used: USD
        has no checkerboard without a material)."""
        up = _AXES.index(self.up_axis)
        u, v = [a for a in range(3) if a != up]
        pts = np.zeros((4, 3))
        pts[:, u] = [-width, width, width, -width]
        pts[:, v] = [-length, -length, length, length]
        return self.render_mesh(name, pts, [0, 3, 2, 0, 2, 1] if up == 1 else [0, 1, 2, 0, 2, 3], colors=color,
                                pos=pos, rot=rot, parent_body=parent_body, is_template=is_template, visible=visible)

    def render_ground(self, size: float = 100.0, plane=None) -> str:
        """The ground: a ``2 size`` square through the origin normal to the up axis (``plane`` ``(a, b, c, d)``
        with ``a x + b y + c z + d = 0`` orients and offsets it)."""
        normal = np.zeros(3)
        normal[_AXES.index(self.up_axis)] = 1.0
        offset = 0.0
        if plane is not None:
            pl = _host(plane).reshape(4)
            n = np.linalg.norm(pl[:3])
            normal, offset = pl[:3] / n, -pl[3] / n
        up = np.zeros(3)
        up[_AXES.index(self.up_axis)] = 1.0
        return self.render_plane("ground", normal * offset, _quat_between(up, normal), size, size,
                                 color=(0.7, 0.7, 0.7))

    # -------------------------------------------------------------- meshes, points, lines
    def render_mesh(self, name: str, points, indices, colors=None, pos=(0.0, 0.0, 0.0), rot=(0.0, 0.0, 0.0, 1.0),
                    scale=(1.0, 1.0, 1.0), update_topology: bool = False, parent_body: str | None = None,
                    is_template: bool = False, smooth_shading: bool = True, visible: bool = True) -> str:
        """A triangle mesh: ``points`` (n, 3) and triangle ``indices`` (3 m, or (m, 3)); the points are written
        every frame, the topology on the first call and when ``update_topology``. ``colors`` is one RGB color or
        one per point."""
        UsdGeom, Vt = self._pxr.UsdGeom, self._pxr.Vt
        path = self._path(name, parent_body, is_template)
        mesh = UsdGeom.Mesh.Get(self.stage, path)
        pts = _host(points).reshape(-1, 3)
        if not mesh:
            mesh = UsdGeom.Mesh.Define(self.stage, path)
            update_topology = True
        if update_topology or path not in self._topology:
            idx = np.asarray(_host(indices), dtype=np.int64).reshape(-1)
            if idx.size % 3:
                raise RenderError(f"render_mesh('{name}'): indices must hold whole triangles, got {idx.size}")
            mesh.GetFaceVertexCountsAttr().Set(Vt.IntArray([3] * (idx.size // 3)))
            mesh.GetFaceVertexIndicesAttr().Set(Vt.IntArray(idx.tolist()))
            mesh.GetSubdivisionSchemeAttr().Set(UsdGeom.Tokens.none)
            self._topology[path] = idx.size
        mesh.GetPointsAttr().Set(Vt.Vec3fArray.FromNumpy(pts.astype(np.float32)), self.time_code)
        self._set_transform(path, mesh, pos, rot, scale)
        self._set_color(mesh, colors, pts.shape[0])
        self._visibility(mesh, visible)
        return path

    def render_points(self, name: str, points, radius, colors=None, as_spheres: bool = True,
                      visible: bool = True) -> str:
        """Points (``UsdGeom.Points``) with width ``2 radius`` (one radius, or one per point)."""
        UsdGeom, Vt = self._pxr.UsdGeom, self._pxr.Vt
        path = self._path(name, None, False)
        prim = UsdGeom.Points.Get(self.stage, path) or UsdGeom.Points.Define(self.stage, path)
        pts = _host(points).reshape(-1, 3)
        prim.GetPointsAttr().Set(Vt.Vec3fArray.FromNumpy(pts.astype(np.float32)), self.time_code)
        r = _host(radius).reshape(-1)
        widths = np.broadcast_to(2.0 * r, (pts.shape[0],)) if r.size == 1 else 2.0 * r
        prim.GetWidthsAttr().Set(Vt.FloatArray.FromNumpy(np.ascontiguousarray(widths, dtype=np.float32)),
                                 self.time_code)
        self._set_color(prim, colors, pts.shape[0])
        self._visibility(prim, visible)
        return path

    def _curves(self, name, vertices, counts, color, radius, visible) -> str:
        UsdGeom, Vt = self._pxr.UsdGeom, self._pxr.Vt
        path = self._path(name, None, False)
        prim = UsdGeom.BasisCurves.Get(self.stage, path) or UsdGeom.BasisCurves.Define(self.stage, path)
        prim.GetTypeAttr().Set(UsdGeom.Tokens.linear)
        prim.GetCurveVertexCountsAttr().Set(Vt.IntArray([int(c) for c in counts]), self.time_code)
        prim.GetPointsAttr().Set(Vt.Vec3fArray.FromNumpy(vertices.astype(np.float32)), self.time_code)
        prim.GetWidthsAttr().Set(Vt.FloatArray([2.0 * float(radius)]), self.time_code)
        prim.SetWidthsInterpolation(UsdGeom.Tokens.constant)
        self._set_color(prim, color)
        self._visibility(prim, visible)
        return path

    def render_line_strip(self, name: str, vertices, color=None, radius: float = 0.01, visible: bool = True) -> str:
        """A polyline through ``vertices`` (``UsdGeom.BasisCurves``, linear)."""
        v = _host(vertices).reshape(-1, 3)
        return self._curves(name, v, [v.shape[0]], color, radius, visible)

    def render_line_list(self, name: str, vertices, indices, color=None, radius: float = 0.01,
                         visible: bool = True) -> str:
        """Line segments ``vertices[indices[2 k]] - vertices[indices[2 k + 1]]``."""
        v = _host(vertices).reshape(-1, 3)
        idx = np.asarray(_host(indices), dtype=np.int64).reshape(-1, 2)
        return self._curves(name, v[idx.reshape(-1)], [2] * idx.shape[0], color, radius, visible)

    def render_ref(self, name: str, path: str, pos, rot, scale, color=None) -> str:
        """An Xform prim ``/root/<name>`` referencing the USD file ``path``."""
        UsdGeom = self._pxr.UsdGeom
        prim_path = self._path(name, None, False)
        xf = UsdGeom.Xform.Get(self.stage, prim_path)
        if not xf:
            xf = UsdGeom.Xform.Define(self.stage, prim_path)
            xf.GetPrim().GetReferences().AddReference(path)
        self._set_transform(prim_path, xf, pos, rot, scale)
        return prim_path


def _quat_between(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float, float]:
    """The shortest rotation (x, y, z, w) taking unit vector ``a`` to ``b``."""
    c = np.cross(a, b)
    d = float(np.dot(a, b))
    if d < -1.0 + 1e-12:  # opposite: half turn about any axis normal to a
        axis = np.cross(a, [1.0, 0.0, 0.0])
        if np.linalg.norm(axis) < 1e-6:
            axis = np.cross(a, [0.0, 1.0, 0.0])
        axis /= np.linalg.norm(axis)
        return (*axis, 0.0)
    q = np.array([*c, 1.0 + d])
    q /= np.linalg.norm(q)
    return tuple(float(x) for x in q)
