"""``parse_urdf``: add a URDF robot (links, shapes, inertials, joints) to a :class:`~weft.sim.ModelBuilder`.

The arguments and defaults are warp.sim 1.7's. Links become bodies in file order; joints are added parents first
(a depth-first topological order of the kinematic tree), so ``eval_fk`` resolves every parent before its child.
Malformed files raise :class:`~weft.sim.SimError` naming the file and the offending element.
"""

from __future__ import annotations

import math
import os

import numpy as np

import weft as wp

from ..builder.joints import JointAxis
from ..model import JOINT_MODE_FORCE, JOINT_MODE_TARGET_POSITION, Mesh, SimError
from ._common import XmlDoc, add_base_joint, rotation_matrix, set_body_mass

_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")


class _Doc(XmlDoc):
    """The parsed URDF and its number helpers."""

    who = "parse_urdf"
    root_tag = "robot"
    file_arg = "urdf_filename"

    def floats(self, element, owner, attr: str, default: str, count: int) -> np.ndarray:
        text = element.get(attr) if element is not None else None
        text = default if text is None else text
        try:
            values = np.array([float(x) for x in text.split()], dtype=np.float64)
        except ValueError as exc:
            raise self.error(owner, f"'{attr}' = {text!r} is not a list of numbers") from exc
        if values.size != count or not np.all(np.isfinite(values)):
            raise self.error(owner, f"'{attr}' = {text!r} must be {count} finite numbers")
        return values

    def origin(self, element):
        """The ``<origin>`` of ``element`` as a transform (translation scaled)."""
        origin = element.find("origin") if element is not None else None
        xyz = self.floats(origin, element, "xyz", "0 0 0", 3) * self.scale
        rpy = self.floats(origin, element, "rpy", "0 0 0", 3)
        return wp.transform(wp.vec3(*xyz), wp.quat_rpy(*rpy))


def _resolve_mesh(doc: _Doc, filename: str, package_dirs, owner) -> str:
    """The path of a ``<mesh filename=...>``: ``package://name/rest`` through ``package_dirs``, then the folder
    holding the URDF and its ancestors; plain paths relative to the URDF's folder."""
    here = os.path.dirname(os.path.abspath(doc.filename))
    candidates = []
    if filename.startswith("package://"):
        rest = filename[len("package://"):]
        package, _, inner = rest.partition("/")
        if isinstance(package_dirs, dict):
            if package in package_dirs:
                candidates.append(os.path.join(package_dirs[package], inner))
        elif package_dirs is not None:
            roots = [package_dirs] if isinstance(package_dirs, (str, os.PathLike)) else list(package_dirs)
            for root in roots:
                candidates += [os.path.join(root, package, inner), os.path.join(root, inner)]
        folder = here
        while True:  # a package folder above the URDF (the usual ROS layout), or the URDF in the package root
            if os.path.basename(folder) == package:
                candidates.append(os.path.join(folder, inner))
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
        candidates.append(os.path.join(here, inner))
    elif filename.startswith(("http://", "https://")):
        raise doc.error(owner, f"mesh {filename!r} is a URL; download it and refer to the local file")
    else:
        path = filename.removeprefix("file://")
        candidates.append(path if os.path.isabs(path) else os.path.join(here, path))
    for path in candidates:
        if os.path.isfile(path):
            return path
    raise doc.error(owner, f"mesh {filename!r} not found (looked at {', '.join(map(repr, candidates))}); "
                           "pass package_dirs= to locate package:// paths")


def _load_meshes(doc: _Doc, path: str, owner) -> list[Mesh]:
    try:
        import trimesh
    except ImportError as exc:
        raise doc.error(owner, f"loading mesh {path!r} needs the 'trimesh' package (pip install trimesh)") from exc
    try:
        loaded = trimesh.load(path, force="mesh")
    except Exception as exc:  # trimesh raises many types for unreadable files
        raise doc.error(owner, f"trimesh cannot read mesh {path!r}: {exc}") from exc
    parts = list(loaded.geometry.values()) if hasattr(loaded, "geometry") else [loaded]
    return [Mesh(np.asarray(m.vertices, dtype=np.float64), np.asarray(m.faces, dtype=np.int32).flatten())
            for m in parts]


def _add_shapes(doc: _Doc, builder, body: int, groups, density: float, visible: bool, collide: bool,
                contact: dict, package_dirs) -> list[int]:
    """Add the geometry of ``<visual>`` or ``<collision>`` elements to ``body``; returns the shape indices."""
    s = doc.scale
    shapes = []
    for group in groups:
        geometry = group.find("geometry")
        if geometry is None:
            continue
        tf = doc.origin(group)
        common = dict(body=body, pos=wp.vec3(tf.p), rot=wp.quat(tf.q), density=density, is_visible=visible,
                      has_ground_collision=collide, has_shape_collision=collide, **contact)
        for shape in geometry:
            if shape.tag == "box":
                hx, hy, hz = doc.floats(shape, shape, "size", "1 1 1", 3) * 0.5 * s
                shapes.append(builder.add_shape_box(hx=hx, hy=hy, hz=hz, **common))
            elif shape.tag == "sphere":
                radius = doc.floats(shape, shape, "radius", "1", 1)[0] * s
                shapes.append(builder.add_shape_sphere(radius=radius, **common))
            elif shape.tag in ("cylinder", "capsule"):
                # URDF cylinders and capsules run along z; like warp.sim 1.7, both become capsules
                radius = doc.floats(shape, shape, "radius", "1", 1)[0] * s
                length = doc.floats(shape, shape, "length" if shape.tag == "cylinder" else "height", "1", 1)[0]
                shapes.append(builder.add_shape_capsule(radius=radius, half_height=0.5 * length * s, up_axis=2,
                                                        **common))
            elif shape.tag == "mesh":
                filename = shape.get("filename")
                if not filename:
                    raise doc.error(shape, "a mesh needs a 'filename'")
                path = _resolve_mesh(doc, filename, package_dirs, shape)
                scaling = doc.floats(shape, shape, "scale", "1 1 1", 3) * s
                for mesh in _load_meshes(doc, path, shape):
                    shapes.append(builder.add_shape_mesh(mesh=mesh, scale=wp.vec3(*scaling), **common))
            else:
                raise doc.error(shape, f"unknown geometry <{shape.tag}> (box, sphere, cylinder, capsule, mesh)")
    return shapes


def _inertial(doc: _Doc, link):
    """Mass, centre of mass and inertia (about the centre of mass, in the link frame) of ``<inertial>``."""
    inertial = link.find("inertial")
    mass_el = inertial.find("mass")
    mass = doc.floats(mass_el, inertial, "value", "0", 1)[0]
    if mass < 0.0:
        raise doc.error(link, f"<inertial> has a negative mass {mass}")
    frame = doc.origin(inertial)
    inertia_el = inertial.find("inertia")
    names = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
    v = {n: doc.floats(inertia_el, inertial, n, "0", 1)[0] * doc.scale ** 2 for n in names}
    local = np.array([[v["ixx"], v["ixy"], v["ixz"]], [v["ixy"], v["iyy"], v["iyz"]], [v["ixz"], v["iyz"], v["izz"]]])
    if mass > 0.0 and np.min(np.linalg.eigvalsh(local)) <= 0.0:
        raise doc.error(link, f"<inertia> is not positive definite (eigenvalues {np.linalg.eigvalsh(local)})")
    if mass == 0.0 and np.any(local):
        raise doc.error(link, "<inertial> has zero mass but a nonzero inertia")
    rot = rotation_matrix(frame.q)
    return mass, np.array(frame.p, dtype=np.float64), rot @ local @ rot.T


def _read_joints(doc: _Doc, links: dict, damping: float, lower_default: float, upper_default: float) -> list[dict]:
    joints = []
    names = set()
    for el in doc.root.findall("joint"):
        kind = el.get("type")
        if kind not in _JOINT_TYPES:
            raise doc.error(el, f"unknown joint type {kind!r} (supported: {', '.join(_JOINT_TYPES)})")
        if el.get("name") in names:
            raise doc.error(el, "a second joint with this name")
        names.add(el.get("name"))
        ends = {}
        for end in ("parent", "child"):
            node = el.find(end)
            if node is None or not node.get("link"):
                raise doc.error(el, f"has no <{end} link=...>")
            if node.get("link") not in links:
                raise doc.error(el, f"its {end} link {node.get('link')!r} is not a <link> of this robot")
            ends[end] = node.get("link")
        if ends["parent"] == ends["child"]:
            raise doc.error(el, f"joins link {ends['parent']!r} to itself")
        axis = doc.floats(el.find("axis"), el, "xyz", "1 0 0", 3)
        if kind in ("revolute", "continuous", "prismatic", "planar") and not np.any(axis):
            raise doc.error(el, "has a zero <axis>")
        limit = el.find("limit")
        lower = doc.floats(limit, el, "lower", repr(lower_default), 1)[0] if limit is not None else lower_default
        upper = doc.floats(limit, el, "upper", repr(upper_default), 1)[0] if limit is not None else upper_default
        if kind == "continuous":
            lower, upper = -math.inf, math.inf
        if lower > upper:
            raise doc.error(el, f"<limit> lower {lower} exceeds upper {upper}")
        dynamics = el.find("dynamics")
        joint_damping = doc.floats(dynamics, el, "damping", repr(damping), 1)[0] if dynamics is not None else damping
        joints.append({"element": el, "name": el.get("name"), "type": kind, "parent": ends["parent"],
                       "child": ends["child"], "origin": doc.origin(el), "axis": axis, "lower": lower, "upper": upper,
                       "damping": joint_damping})
    return joints


def _tree_order(doc: _Doc, links: dict, joints: list[dict]):
    """The root link and the joints in a parents-first order; rejects links with two parents, several roots and
    cycles."""
    parent_joint = {}
    children = {name: [] for name in links}
    for j in joints:
        if j["child"] in parent_joint:
            raise doc.error(j["element"], f"link {j['child']!r} is already the child of joint "
                                          f"{parent_joint[j['child']]['name']!r} (a link has one parent; cycle?)")
        parent_joint[j["child"]] = j
        children[j["parent"]].append(j)
    roots = [name for name in links if name not in parent_joint]
    if not roots:
        raise doc.error(doc.root, "the joints form a cycle: every link is some joint's child")
    if len(roots) > 1:
        raise doc.error(doc.root, f"has {len(roots)} root links {roots}; a URDF robot is one tree")
    # depth-first; a joint is emitted after the subtrees of the joints after it (warp.sim 1.7's order)
    order, stack = [], [(j, False) for j in reversed(children[roots[0]])]
    while stack:
        joint, expanded = stack.pop()
        if expanded:
            order.append(joint)
            continue
        stack.append((joint, True))
        stack.extend((c, False) for c in reversed(children[joint["child"]]))
    order.reverse()
    if len(order) != len(joints):
        lost = sorted({j["child"] for j in joints} - {j["child"] for j in order})
        raise doc.error(doc.root, f"the joints form a cycle through links {lost} (not reachable from {roots[0]!r})")
    return roots[0], order


def _add_joint(doc: _Doc, builder, j: dict, parent: int, child: int, stiffness, armature, limit_ke, limit_kd) -> None:
    mode = JOINT_MODE_TARGET_POSITION if stiffness > 0.0 else JOINT_MODE_FORCE
    common = {"parent": parent, "child": child, "parent_xform": j["origin"],
              "child_xform": wp.transform_identity(), "name": j["name"], "armature": armature}
    s = doc.scale
    drive = {"target_ke": stiffness, "target_kd": j["damping"], "mode": mode, "limit_ke": limit_ke,
             "limit_kd": limit_kd}
    if j["type"] in ("revolute", "continuous"):
        builder.add_joint_revolute(axis=j["axis"], limit_lower=j["lower"], limit_upper=j["upper"], **drive, **common)
    elif j["type"] == "prismatic":
        builder.add_joint_prismatic(axis=j["axis"], limit_lower=j["lower"] * s, limit_upper=j["upper"] * s, **drive,
                                    **common)
    elif j["type"] == "fixed":
        builder.add_joint_fixed(**common)
    elif j["type"] == "floating":
        builder.add_joint_free(**common)
    else:  # planar: two translations in the plane normal to the axis
        normal = j["axis"] / np.linalg.norm(j["axis"])
        helper = np.array([1.0, 0.0, 0.0]) if abs(normal[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
        u = np.cross(normal, helper)
        u /= np.linalg.norm(u)
        v = np.cross(normal, u)
        axes = [JointAxis(a, limit_lower=j["lower"] * s, limit_upper=j["upper"] * s, **drive) for a in (u, v)]
        builder.add_joint_d6(linear_axes=axes, **common)


def parse_urdf(urdf_filename, builder, xform=None, floating=False, base_joint=None, density=1000.0,
               stiffness=100.0, damping=10.0, armature=0.0, contact_ke=1.0e4, contact_kd=1.0e3, contact_kf=1.0e2,
               contact_ka=0.0, contact_mu=0.25, contact_restitution=0.5, contact_thickness=0.0, limit_ke=100.0,
               limit_kd=10.0, joint_limit_lower=-1e6, joint_limit_upper=1e6, scale=1.0, hide_visuals=False,
               parse_visuals_as_colliders=False, force_show_colliders=False, enable_self_collisions=True,
               ignore_inertial_definitions=True, ensure_nonstatic_links=True, static_link_mass=1e-2,
               collapse_fixed_joints=False, package_dirs=None):
    """Add the links (bodies with shapes), inertials and joints of a URDF file to ``builder`` as one articulation.

    Bodies are added in the file's link order at the identity pose; call :func:`~weft.sim.eval_fk` to place them
    from ``builder.joint_q``.

    Args:
        urdf_filename: path of the ``.urdf`` file.
        builder: the :class:`~weft.sim.ModelBuilder` to add to.
        xform: pose of the root link (a transform; default identity).
        floating: attach the root with a free joint (its coordinates set to ``xform``) instead of a fixed one.
        base_joint: instead, attach the root with a D6 joint given as axes (``"px,py,rz"``: ``p``/``l`` linear,
            ``r``/``a`` angular) or a dict of :meth:`~weft.sim.ModelBuilder.add_joint` arguments.
        density: density of the collision shapes (kg/m^3), which give the bodies' mass and inertia.
        stiffness, damping: target-position drive gains of the joints (``<dynamics damping>`` overrides
            ``damping``); ``stiffness`` 0 makes the joints force-driven.
        armature: armature of the joints and added to the bodies' inertia diagonals.
        contact_ke, contact_kd, contact_kf, contact_ka, contact_mu, contact_restitution, contact_thickness: the
            shapes' contact material.
        limit_ke, limit_kd: stiffness and damping of the joint limits.
        joint_limit_lower, joint_limit_upper: limits of joints without ``<limit lower/upper>``.
        scale: length scale applied to positions, shapes, meshes, prismatic limits and inertias.
        hide_visuals: make ``<visual>`` shapes invisible.
        parse_visuals_as_colliders: collide with the ``<visual>`` geometry instead of ``<collision>``.
        force_show_colliders: show collision shapes even when a link has visuals.
        enable_self_collisions: let the robot's collision shapes collide with each other.
        ignore_inertial_definitions: take mass and inertia from the shapes (warp.sim's default) rather than
            from ``<inertial>``.
        ensure_nonstatic_links: give massless links ``static_link_mass`` (and a small inertia).
        static_link_mass: the mass given to massless links.
        collapse_fixed_joints: merge bodies joined by fixed joints (``ModelBuilder.collapse_fixed_joints``).
        package_dirs: where ``package://name/...`` meshes live: a dict ``{name: folder}``, or folders holding
            package folders. Without it, folders named ``name`` above the URDF and the URDF's folder are tried.

    Raises:
        SimError: naming the file and element, for unreadable XML, unknown joint or geometry types, joints whose
            parent or child link is missing, links with two parents, cycles, several root links, negative masses,
            inertias that are not positive definite, and meshes that cannot be found or read.
    """
    from ..builder import ModelBuilder

    if not isinstance(builder, ModelBuilder):
        raise SimError(f"parse_urdf: 'builder' must be a ModelBuilder, got {type(builder).__name__}")
    xform = wp.transform_identity() if xform is None else \
        xform if isinstance(xform, type(wp.transform())) else wp.transform(*xform)
    doc = _Doc(urdf_filename, scale)
    contact = {"ke": contact_ke, "kd": contact_kd, "kf": contact_kf, "ka": contact_ka, "mu": contact_mu,
                   "restitution": contact_restitution, "thickness": contact_thickness}
    link_elements = doc.root.findall("link")
    if not link_elements:
        raise doc.error(doc.root, "has no <link>")
    links, visual_shapes = {}, []
    builder.add_articulation()
    first_shape = builder.shape_count
    for el in link_elements:
        name = el.get("name")
        if not name:
            raise doc.error(el, "a <link> needs a 'name'")
        if name in links:
            raise doc.error(el, "a second link with this name")
        inertial = _inertial(doc, el) if el.find("inertial") is not None else None
        body = builder.add_body(origin=wp.transform_identity(), armature=armature, name=name)
        links[name] = body
        visuals, colliders = el.findall("visual"), el.findall("collision")
        if parse_visuals_as_colliders:
            colliders = visuals
        else:
            visual_shapes += _add_shapes(doc, builder, body, visuals, 0.0, not hide_visuals, False, contact,
                                         package_dirs)
        show = force_show_colliders or parse_visuals_as_colliders or not visuals
        _add_shapes(doc, builder, body, colliders, density, show, True, contact, package_dirs)
        if inertial is not None and not ignore_inertial_definitions:
            set_body_mass(builder, body, *inertial)
        if builder.body_mass[body] == 0.0 and ensure_nonstatic_links:
            m = float(static_link_mass)
            side = 0.5 * doc.scale  # the inertia of a cube of this side, plus the armature
            set_body_mass(builder, body, m, builder.body_com[body], np.eye(3) * (m * side * side / 6.0 + armature))
    last_shape = builder.shape_count
    joints = _read_joints(doc, links, damping, joint_limit_lower, joint_limit_upper)
    root, order = _tree_order(doc, links, joints)
    add_base_joint(builder, links[root], xform, floating, base_joint, "parse_urdf")
    for j in order:
        _add_joint(doc, builder, j, links[j["parent"]], links[j["child"]], stiffness, armature, limit_ke, limit_kd)
    for i in range(first_shape, last_shape):
        for v in visual_shapes:
            builder.shape_collision_filter_pairs.add((i, v))
        if not enable_self_collisions:
            for k in range(i + 1, last_shape):
                builder.shape_collision_filter_pairs.add((i, k))
    if collapse_fixed_joints:
        builder.collapse_fixed_joints()
