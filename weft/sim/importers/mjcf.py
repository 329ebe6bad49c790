"""``parse_mjcf``: add a MuJoCo (MJCF) model's bodies, geoms and joints to a :class:`~weft.sim.ModelBuilder`.

The arguments and defaults are warp.sim 1.7's. Bodies are added depth-first in file order, each with one joint to
its parent that combines all of the body's ``<joint>`` elements the way warp.sim does (hinges become angular axes,
slides linear axes: one hinge a revolute joint, two a universal, three a compound, one slide a prismatic joint,
any other mix a D6 joint with the linear axes first). Default classes inherit attribute by attribute as in MuJoCo.
Malformed files raise :class:`~weft.sim.SimError` naming the file and the offending element.
"""

from __future__ import annotations

import math
import re
import warnings

import numpy as np

try:
    from scipy.spatial.transform import Rotation
except ImportError:  # SciPy is optional (pip install 'weft-lang[sim]'): only parse_mjcf needs it
    Rotation = None

import weft as wp

from ..builder.joints import JointAxis
from ..model import (
    JOINT_BALL,
    JOINT_COMPOUND,
    JOINT_D6,
    JOINT_FIXED,
    JOINT_FREE,
    JOINT_MODE_FORCE,
    JOINT_MODE_TARGET_POSITION,
    JOINT_PRISMATIC,
    JOINT_REVOLUTE,
    JOINT_UNIVERSAL,
    SimError,
)
from ._common import XmlDoc, add_base_joint, set_body_mass

_JOINT_TYPES = ("hinge", "slide", "ball", "free")
_GEOM_TYPES = ("sphere", "box", "capsule", "cylinder", "plane")
_SQH = math.sqrt(0.5)
_UP_ROTATION = {0: (0.0, 0.0, -_SQH, _SQH), 1: (0.0, 0.0, 0.0, 1.0), 2: (_SQH, 0.0, 0.0, -_SQH)}  # xyzw, to Y-up


class _Doc(XmlDoc):
    """The parsed MJCF, its compiler settings and resolved default classes."""

    who = "parse_mjcf"
    root_tag = "mujoco"
    file_arg = "mjcf_filename"

    def __init__(self, filename, scale: float):
        super().__init__(filename, scale)
        compiler = self.root.find("compiler")
        compiler = {} if compiler is None else compiler.attrib
        angle = compiler.get("angle", "degree")
        if angle not in ("degree", "radian"):
            raise self.error(self.root.find("compiler"), f"'angle' = {angle!r} is neither 'degree' nor 'radian'")
        self.degrees = angle == "degree"
        self.eulerseq = compiler.get("eulerseq", "xyz")
        if len(self.eulerseq) != 3 or any(c not in "xyzXYZ" for c in self.eulerseq):
            raise self.error(self.root.find("compiler"), f"'eulerseq' = {self.eulerseq!r} is not 3 of x, y, z, X, Y, Z")
        self.classes = {"main": {}}
        for default in self.root.findall("default"):
            self._read_default(default, {})

    def _read_default(self, node, inherited: dict) -> None:
        name = node.get("class", "main")
        resolved = {tag: dict(attrib) for tag, attrib in inherited.items()}
        for child in node:
            if child.tag != "default":
                resolved.setdefault(child.tag, {}).update(child.attrib)
        self.classes[name] = resolved
        for child in node.findall("default"):
            self._read_default(child, resolved)

    def attrib(self, element, childclass: str) -> dict:
        """``element``'s attributes over those of its default class (its ``class``, else the ``childclass``)."""
        cls = element.get("class", childclass)
        if cls not in self.classes:
            raise self.error(element, f"class {cls!r} is not defined by a <default>")
        merged = dict(self.classes[cls].get(element.tag, {}))
        merged.update(element.attrib)
        return merged

    def floats(self, attrib: dict, owner, key: str, default, count: int | tuple) -> np.ndarray:
        """``attrib[key]`` as float64 numbers; ``count`` is the allowed count (or counts); one number given for
        three is broadcast."""
        counts = (count,) if isinstance(count, int) else count
        if key not in attrib:
            return np.array(default, dtype=np.float64)
        text = attrib[key]
        try:
            values = np.array([float(x) for x in text.split()], dtype=np.float64)
        except ValueError as exc:
            raise self.error(owner, f"'{key}' = {text!r} is not a list of numbers") from exc
        if values.size == 1 and 3 in counts and 1 not in counts:
            values = np.repeat(values, 3)
        if values.size not in counts or not np.all(np.isfinite(values)):
            raise self.error(owner, f"'{key}' = {text!r} must be {' or '.join(map(str, counts))} finite numbers")
        return values

    def angle(self, value: float) -> float:
        return math.radians(value) if self.degrees else float(value)

    def rotation(self, attrib: dict, owner) -> Rotation:
        """The orientation given by ``quat`` (w x y z), ``euler``, ``axisangle``, ``xyaxes`` or ``zaxis``."""
        given = [k for k in ("quat", "euler", "axisangle", "xyaxes", "zaxis") if k in owner.attrib]
        if len(given) > 1:
            raise self.error(owner, f"gives the orientation twice ({', '.join(given)})")
        key = given[0] if given else next((k for k in ("quat", "euler", "axisangle", "xyaxes", "zaxis")
                                           if k in attrib), None)
        if key is None:
            return Rotation.identity()
        if key == "quat":
            w, x, y, z = self.floats(attrib, owner, "quat", None, 4)
            if w == x == y == z == 0.0:
                raise self.error(owner, "'quat' is zero")
            return Rotation.from_quat([x, y, z, w])
        if key == "euler":
            angles = self.floats(attrib, owner, "euler", None, 3)
            result = Rotation.identity()
            for axis, value in zip(self.eulerseq, angles):
                r = Rotation.from_rotvec(np.eye(3)["xyz".index(axis.lower())] * self.angle(value))
                result = result * r if axis.islower() else r * result  # lower case: axes move with the frame
            return result
        if key == "axisangle":
            v = self.floats(attrib, owner, "axisangle", None, 4)
            if not np.any(v[:3]):
                raise self.error(owner, "'axisangle' has a zero axis")
            return Rotation.from_rotvec(v[:3] / np.linalg.norm(v[:3]) * self.angle(v[3]))
        if key == "xyaxes":
            v = self.floats(attrib, owner, "xyaxes", None, 6)
            x = v[:3] / np.linalg.norm(v[:3])
            y = v[3:] - x * np.dot(x, v[3:])
            if np.linalg.norm(y) < 1e-12:
                raise self.error(owner, "'xyaxes' are parallel")
            y /= np.linalg.norm(y)
            return Rotation.from_matrix(np.column_stack([x, y, np.cross(x, y)]))
        z = self.floats(attrib, owner, "zaxis", None, 3)
        if not np.any(z):
            raise self.error(owner, "'zaxis' is zero")
        return _align_z(z)


def _align_z(direction) -> Rotation:
    """The smallest rotation taking +z to ``direction``."""
    d = np.asarray(direction, dtype=np.float64) / np.linalg.norm(direction)
    axis = np.cross([0.0, 0.0, 1.0], d)
    s, c = np.linalg.norm(axis), d[2]
    if s < 1e-12:
        return Rotation.identity() if c > 0.0 else Rotation.from_rotvec([math.pi, 0.0, 0.0])
    return Rotation.from_rotvec(axis / s * math.atan2(s, c))


def _quat(r: Rotation):
    return wp.quat(*map(float, r.as_quat()))


def _matches(patterns, text) -> bool:
    return text is not None and any(re.match(p, text) for p in patterns)


class _Importer:
    def __init__(self, doc: _Doc, builder, options: dict):
        self.doc, self.builder, self.o = doc, builder, options
        self.visual_shapes = []

    # -- geoms -------------------------------------------------------------------------------------------------

    def shapes(self, geoms, body: int, density: float, visible: bool, collide: bool, frame=None) -> list[int]:
        """Add ``geoms`` (element, attributes) to ``body``; ``frame`` (position, Rotation) maps world geoms."""
        doc, s, o, out = self.doc, self.doc.scale, self.o, []
        for el, a in geoms:
            kind = "mesh" if "mesh" in a else a.get("type", "sphere")
            if kind not in _GEOM_TYPES:
                warnings.warn(f"parse_mjcf: {doc.filename}: geom type {kind!r} is not supported; skipped",
                              stacklevel=4)
                continue
            size = doc.floats(a, el, "size", [1.0, 1.0, 1.0], (1, 2, 3))
            pos = doc.floats(a, el, "pos", [0.0, 0.0, 0.0], 3) * s
            rot = doc.rotation(a, el)
            geom_density = doc.floats(a, el, "density", [density], 1)[0] if density > 0.0 else 0.0
            if kind == "box" and size.size != 3:
                raise doc.error(el, f"a box needs 'size' = 3 half-sizes, got {a.get('size')!r}")
            if np.any(size[:{"sphere": 1, "box": 3, "capsule": 1, "cylinder": 1, "plane": 0}[kind]] <= 0.0):
                raise doc.error(el, f"'size' = {a.get('size')!r} must be positive for a {kind}")
            half_height = None
            if kind in ("capsule", "cylinder"):
                if "fromto" in a:
                    ft = doc.floats(a, el, "fromto", None, 6) * s
                    if np.allclose(ft[:3], ft[3:]):
                        raise doc.error(el, "'fromto' has equal end points")
                    pos, rot = 0.5 * (ft[:3] + ft[3:]), _align_z(ft[3:] - ft[:3])
                    half_height = 0.5 * np.linalg.norm(ft[3:] - ft[:3])
                else:
                    if size.size < 2:
                        raise doc.error(el, f"a {kind} without 'fromto' needs 'size' = radius half-length")
                    half_height = size[1] * s
            if frame is not None:
                pos, rot = frame[0] + frame[1].apply(pos), frame[1] * rot
            common = dict(body=body, pos=wp.vec3(*pos), rot=_quat(rot), is_visible=visible,
                          has_shape_collision=collide, **o["contact"])
            if kind == "plane":
                normal = rot.apply([0.0, 0.0, 1.0])
                extent = size if size.size >= 2 else np.repeat(size, 2)
                del common["pos"], common["rot"]
                out.append(self.builder.add_shape_plane(plane=(*map(float, normal), float(np.dot(pos, normal))),
                                                        width=float(extent[0] * s), length=float(extent[1] * s),
                                                        has_ground_collision=False, **common))
                continue
            common.update(density=geom_density, has_ground_collision=collide)
            if kind == "sphere":
                out.append(self.builder.add_shape_sphere(radius=size[0] * s, **common))
            elif kind == "box":
                hx, hy, hz = size * s
                out.append(self.builder.add_shape_box(hx=hx, hy=hy, hz=hz, **common))
            elif kind == "capsule":
                out.append(self.builder.add_shape_capsule(radius=size[0] * s, half_height=half_height, up_axis=2,
                                                          **common))
            else:
                out.append(self.builder.add_shape_cylinder(radius=size[0] * s, half_height=half_height, up_axis=2,
                                                           **common))
        return out

    def body_geoms(self, body_el, body: int, body_name: str, childclass: str) -> None:
        o, visuals, colliders = self.o, [], []
        for el in body_el.findall("geom"):
            cls = el.get("class")
            if _matches(o["ignore_classes"], cls):
                continue
            a = self.doc.attrib(el, childclass)
            if _matches(o["ignore_names"], a.get("name")):
                continue
            if cls is None:
                (colliders if o["no_class_as_colliders"] else visuals).append((el, a))
            else:
                if _matches(o["visual_classes"], cls):
                    visuals.append((el, a))
                if _matches(o["collider_classes"], cls):
                    colliders.append((el, a))
        if o["parse_visuals_as_colliders"]:
            colliders = visuals
        else:
            self.visual_shapes += self.shapes(visuals, body, 0.0, not o["hide_visuals"], False)
        show = o["force_show_colliders"] or o["parse_visuals_as_colliders"] or not visuals
        self.shapes(colliders, body, o["density"], show, True)

    # -- joints ------------------------------------------------------------------------------------------------

    def joint_axes(self, body_el, childclass: str):
        """The body's joint elements combined: (type or None, linear axes, angular axes, names, first pos,
        armatures)."""
        doc, o, s = self.doc, self.o, self.doc.scale
        kind, linear, angular, names, positions, armatures, elements = None, [], [], [], [], [], []
        for el in body_el:
            if el.tag not in ("joint", "freejoint"):
                continue
            a = {"type": "free", **el.attrib} if el.tag == "freejoint" else doc.attrib(el, childclass)
            jtype = a.get("type", "hinge")
            if jtype not in _JOINT_TYPES:
                raise doc.error(el, f"unknown joint type {jtype!r} (supported: {', '.join(_JOINT_TYPES)})")
            elements.append((el, jtype))
            names.append(a.get("name") or f"joint{len(names)}")
            positions.append(doc.floats(a, el, "pos", [0.0, 0.0, 0.0], 3) * s)
            armatures.append(doc.floats(a, el, "armature", [o["armature"]], 1)[0] * o["armature_scale"])
            if jtype in ("free", "ball"):
                kind = JOINT_FREE if jtype == "free" else JOINT_BALL
                continue
            axis = doc.floats(a, el, "axis", [0.0, 0.0, 1.0], 3)
            if not np.any(axis):
                raise doc.error(el, "has a zero 'axis'")
            lower, upper = o["joint_limit_lower"], o["joint_limit_upper"]
            limited = a.get("limited", "auto")
            if limited not in ("true", "false", "auto"):
                raise doc.error(el, f"'limited' = {limited!r} is not true, false or auto")
            if "range" in a and limited != "false":
                lower, upper = doc.floats(a, el, "range", None, 2)
                if jtype == "hinge":
                    lower, upper = doc.angle(lower), doc.angle(upper)
                else:
                    lower, upper = lower * s, upper * s
                if lower > upper:
                    raise doc.error(el, f"'range' lower {lower} exceeds upper {upper}")
            elif limited == "true":
                raise doc.error(el, "is limited but has no 'range'")
            gains = (o["stiffness"] > 0.0 or "stiffness" in a)
            ax = JointAxis(axis / np.linalg.norm(axis), limit_lower=lower, limit_upper=upper,
                           target_ke=doc.floats(a, el, "stiffness", [o["stiffness"]], 1)[0],
                           target_kd=doc.floats(a, el, "damping", [o["damping"]], 1)[0], limit_ke=o["limit_ke"],
                           limit_kd=o["limit_kd"], mode=JOINT_MODE_TARGET_POSITION if gains else JOINT_MODE_FORCE)
            (angular if jtype == "hinge" else linear).append(ax)
        if kind is not None and len(elements) > 1:
            el, jtype = next(e for e in elements if e[1] in ("free", "ball"))
            raise doc.error(el, f"a {jtype} joint must be the only joint of its body")
        if len(linear) > 3 or len(angular) > 3:
            raise doc.error(body_el, "has more than 3 hinges or more than 3 slides")
        if kind is None:
            if not linear:
                kind = (JOINT_FIXED, JOINT_REVOLUTE, JOINT_UNIVERSAL, JOINT_COMPOUND)[len(angular)]
            else:
                kind = JOINT_PRISMATIC if len(linear) == 1 and not angular else JOINT_D6
        is_free_tag = any(el.tag == "freejoint" for el, _ in elements)
        return kind, linear, angular, names, positions, armatures, is_free_tag

    # -- bodies ------------------------------------------------------------------------------------------------

    def body(self, el, parent: int, childclass: str, xform_p, xform_r: Rotation) -> None:
        doc, o, b = self.doc, self.o, self.builder
        if _matches(o["ignore_classes"], el.get("class")):
            return
        a = doc.attrib(el, el.get("class", childclass))
        name = a.get("name") or f"body{b.body_count}"
        pos = doc.floats(a, el, "pos", [0.0, 0.0, 0.0], 3) * doc.scale
        rot = doc.rotation(a, el)
        if parent == -1:
            pos, rot = xform_p + xform_r.apply(pos), xform_r * rot
        inner = el.get("childclass", childclass)  # MuJoCo: a body's childclass covers its own joints and geoms
        kind, linear, angular, names, positions, armatures, free_tag = self.joint_axes(el, inner)
        armature = armatures[0] if armatures else o["armature"]
        joint_pos = positions[0] if positions else np.zeros(3)
        anchor = wp.transform(wp.vec3(*(pos + rot.apply(joint_pos))), _quat(rot))
        link = b.add_body(origin=wp.transform(wp.vec3(*pos), _quat(rot)), armature=armature, name=name)
        if free_tag and parent == -1 and (o["base_joint"] is not None or o["floating"] is not None):
            add_base_joint(b, link, wp.transform(wp.vec3(*pos), _quat(rot)), bool(o["floating"]), o["base_joint"],
                        "parse_mjcf")
        else:
            b.add_joint(kind, parent, link, linear, angular, name="_".join(names) or f"{name}_joint",
                        parent_xform=anchor, child_xform=wp.transform(wp.vec3(*joint_pos), wp.quat_identity()),
                        armature=armature)
        self.body_geoms(el, link, name, inner)
        self.inertial(el, link, inner)
        for child in el.findall("body"):
            self.body(child, link, inner, xform_p, xform_r)

    def inertial(self, el, link: int, childclass: str) -> None:
        doc, o, b = self.doc, self.o, self.builder
        inertial_el = el.find("inertial")
        if inertial_el is not None and not o["ignore_inertial_definitions"]:
            a = doc.attrib(inertial_el, childclass)
            if "mass" not in a:
                raise doc.error(inertial_el, "needs a 'mass'")
            mass = doc.floats(a, inertial_el, "mass", None, 1)[0]
            if mass < 0.0:
                raise doc.error(el, f"<inertial> has a negative mass {mass}")
            s2 = doc.scale ** 2
            if "diaginertia" in a:
                local = np.diag(doc.floats(a, inertial_el, "diaginertia", None, 3)) * s2
            elif "fullinertia" in a:
                xx, yy, zz, xy, xz, yz = doc.floats(a, inertial_el, "fullinertia", None, 6) * s2
                local = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
            else:
                raise doc.error(inertial_el, "needs 'diaginertia' or 'fullinertia'")
            if mass > 0.0 and np.min(np.linalg.eigvalsh(local)) <= 0.0:
                raise doc.error(el, f"<inertial> is not positive definite (eigenvalues {np.linalg.eigvalsh(local)})")
            r = doc.rotation(a, inertial_el).as_matrix()
            com = doc.floats(a, inertial_el, "pos", [0.0, 0.0, 0.0], 3) * doc.scale
            set_body_mass(b, link, mass, com, r @ local @ r.T)
        if b.body_mass[link] == 0.0 and o["ensure_nonstatic_links"]:
            m = float(o["static_link_mass"])
            side = 0.5 * doc.scale
            set_body_mass(b, link, m, b.body_com[link], np.eye(3) * (m * side * side / 6.0 + o["armature"]))


def parse_mjcf(mjcf_filename, builder, xform=None, floating=False, base_joint=None, density=1000.0, stiffness=100.0,
               damping=10.0, armature=0.0, armature_scale=1.0, contact_ke=1.0e4, contact_kd=1.0e3, contact_kf=1.0e2,
               contact_ka=0.0, contact_mu=0.25, contact_restitution=0.5, contact_thickness=0.0, limit_ke=100.0,
               limit_kd=10.0, joint_limit_lower=-1e6, joint_limit_upper=1e6, scale=1.0, hide_visuals=False,
               parse_visuals_as_colliders=False, parse_meshes=True, up_axis="Z", ignore_names=(), ignore_classes=None,
               visual_classes=("visual",), collider_classes=("collision",), no_class_as_colliders=True,
               force_show_colliders=False, enable_self_collisions=False, ignore_inertial_definitions=True,
               ensure_nonstatic_links=True, static_link_mass=1e-2, collapse_fixed_joints=False, verbose=False):
    """Add the bodies, geoms and joints of a MuJoCo XML (MJCF) file's ``<worldbody>`` to ``builder`` as one
    articulation.

    Every body gets one joint to its parent combining its ``<joint>`` elements (see the module docstring); a body
    without joints is fixed to its parent. Bodies are added at their rest poses; ``eval_fk`` places them from
    ``builder.joint_q``. Geoms: sphere, box, capsule, cylinder (``size`` or ``fromto``) and plane; other types
    (mesh, ellipsoid, hfield, sdf) are skipped with a warning. Joint ``pos``, ``axis`` (default ``0 0 1``),
    ``range`` (degrees for hinges unless ``<compiler angle="radian">``; ignored when ``limited="false"``),
    ``damping``, ``stiffness`` and ``armature`` are read; orientations from ``quat`` (w x y z), ``euler`` (with
    ``<compiler eulerseq>``), ``axisangle``, ``xyaxes`` or ``zaxis``.

    Args:
        mjcf_filename: path of the MJCF file.
        builder: the :class:`~weft.sim.ModelBuilder` to add to.
        xform: transform applied to the root bodies (its translation is not scaled).
        floating: for root bodies with a ``<freejoint>``: ``True`` keeps a free joint (``floating_base``, its
            coordinates set to the body's pose), ``False`` (the default, as in warp.sim) fixes the body to the world,
            ``None`` keeps the file's free joint as it is.
        base_joint: instead, attach such a root with a D6 joint given as axes (``"px,py,rz"``) or a dict of
            :meth:`~weft.sim.ModelBuilder.add_joint` arguments.
        density: density of the collision geoms without a ``density`` attribute (kg/m^3).
        stiffness, damping, armature: joint drive gains and armature where the file gives none; ``stiffness`` 0
            (and no ``stiffness`` attribute) makes a joint force-driven.
        armature_scale: factor on every joint armature.
        contact_ke, contact_kd, contact_kf, contact_ka, contact_mu, contact_restitution, contact_thickness: the
            shapes' contact material.
        limit_ke, limit_kd: stiffness and damping of the joint limits.
        joint_limit_lower, joint_limit_upper: limits of joints without a ``range``.
        scale: length scale applied to positions, sizes, slide ranges and inertias.
        hide_visuals: make visual geoms invisible.
        parse_visuals_as_colliders: collide with the visual geoms instead of the collision geoms.
        parse_meshes: accepted for compatibility; mesh geoms are not imported yet (skipped with a warning).
        up_axis: ``"X"``, ``"Y"`` or ``"Z"``: the file's up axis, rotated onto weft's +Y as warp.sim does.
        ignore_names: regular expressions; geoms whose name matches one are skipped.
        ignore_classes: regular expressions; bodies (with their subtrees) and geoms of a matching class are skipped.
        visual_classes, collider_classes: regular expressions selecting visual and collision geoms by class.
        no_class_as_colliders: geoms without a class collide (else they are visual only).
        force_show_colliders: show collision geoms even when a body has visual geoms.
        enable_self_collisions: let the model's shapes collide with each other.
        ignore_inertial_definitions: take mass and inertia from the geoms (the default) rather than ``<inertial>``.
        ensure_nonstatic_links: give massless bodies ``static_link_mass`` (and a small inertia).
        static_link_mass: the mass given to massless bodies.
        collapse_fixed_joints: merge bodies joined by fixed joints (``ModelBuilder.collapse_fixed_joints``).
        verbose: accepted for compatibility (weft reports skipped elements through ``warnings``).

    Raises:
        SimError: naming the file and element, for unreadable XML, a missing ``<worldbody>``, unknown joint types,
            undefined default classes, malformed numbers, zero axes, ranges with lower above upper, free or ball
            joints combined with other joints, nonpositive geom sizes, negative masses and inertias that are not
            positive definite.
    """
    from ..builder import ModelBuilder

    if Rotation is None:
        raise SimError("parse_mjcf needs SciPy for the MJCF orientations: pip install scipy (or 'weft-lang[sim]')")
    if not isinstance(builder, ModelBuilder):
        raise SimError(f"parse_mjcf: 'builder' must be a ModelBuilder, got {type(builder).__name__}")
    xform = wp.transform_identity() if xform is None else \
        xform if isinstance(xform, type(wp.transform())) else wp.transform(*xform)
    axis = {"X": 0, "Y": 1, "Z": 2}.get(str(up_axis).upper(), up_axis)
    if axis not in (0, 1, 2):
        raise SimError(f"parse_mjcf: 'up_axis' must be 'X', 'Y' or 'Z', got {up_axis!r}")
    doc = _Doc(mjcf_filename, scale)
    world = doc.root.find("worldbody")
    if world is None:
        raise doc.error(doc.root, "has no <worldbody>")
    options = {"floating": floating, "base_joint": base_joint, "density": density, "stiffness": stiffness,
               "damping": damping, "armature": armature, "armature_scale": armature_scale, "limit_ke": limit_ke,
               "limit_kd": limit_kd, "joint_limit_lower": joint_limit_lower, "joint_limit_upper": joint_limit_upper,
               "hide_visuals": hide_visuals, "parse_visuals_as_colliders": parse_visuals_as_colliders,
               "ignore_names": tuple(ignore_names), "ignore_classes": tuple(ignore_classes or ()),
               "visual_classes": tuple(visual_classes), "collider_classes": tuple(collider_classes),
               "no_class_as_colliders": no_class_as_colliders, "force_show_colliders": force_show_colliders,
               "ignore_inertial_definitions": ignore_inertial_definitions,
               "ensure_nonstatic_links": ensure_nonstatic_links, "static_link_mass": static_link_mass,
               "contact": {"ke": contact_ke, "kd": contact_kd, "kf": contact_kf, "ka": contact_ka, "mu": contact_mu,
                           "restitution": contact_restitution, "thickness": contact_thickness}}
    xform_r = Rotation.from_quat(_UP_ROTATION[axis]) * Rotation.from_quat(np.array(xform.q, dtype=np.float64))
    xform_p = np.array(xform.p, dtype=np.float64)
    importer = _Importer(doc, builder, options)
    first_shape = builder.shape_count
    builder.add_articulation()
    world_class = world.get("childclass", "main")
    for el in world.findall("body"):
        importer.body(el, -1, world_class, xform_p, xform_r)
    statics = [(el, doc.attrib(el, world_class)) for el in world.findall("geom")
               if not _matches(options["ignore_classes"], el.get("class"))]
    importer.shapes(statics, -1, density, True, True, frame=(xform_p, xform_r))
    last_shape = builder.shape_count
    for i in range(first_shape, last_shape):
        for v in importer.visual_shapes:
            builder.shape_collision_filter_pairs.add((i, v))
        if not enable_self_collisions:
            for k in range(i + 1, last_shape):
                builder.shape_collision_filter_pairs.add((i, k))
    if collapse_fixed_joints:
        builder.collapse_fixed_joints()
