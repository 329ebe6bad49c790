"""Helpers shared by the URDF and MJCF importers: the parsed document with errors that name the file and element,
body mass properties and the base joint."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

import numpy as np

import weft as wp

from ..builder.joints import JointAxis
from ..model import SimError

AXES = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}


class XmlDoc:
    """A parsed robot file (``root_tag`` must be its root element) and the error helpers that name it."""

    who = "parse"
    root_tag = ""
    file_arg = "filename"

    def __init__(self, filename, scale: float):
        self.filename = os.fspath(filename)
        self.scale = float(scale)
        try:
            self.root = ET.parse(self.filename).getroot()
        except FileNotFoundError as exc:
            raise SimError(f"{self.who}: '{self.file_arg}' {self.filename!r} does not exist") from exc
        except ET.ParseError as exc:
            raise SimError(f"{self.who}: {self.filename}: not well-formed XML ({exc})") from exc
        if self.root.tag != self.root_tag:
            raise SimError(f"{self.who}: {self.filename}: the root element is <{self.root.tag}>, not <{self.root_tag}>")

    def error(self, element, message: str) -> SimError:
        name = element.get("name")
        where = f"<{element.tag} name={name!r}>" if name is not None else f"<{element.tag}>"
        return SimError(f"{self.who}: {self.filename}: {where}: {message}")


def rotation_matrix(q) -> np.ndarray:
    """The 3x3 float64 rotation matrix of a quaternion."""
    return np.array(wp.quat_to_matrix(q), dtype=np.float64).reshape(3, 3)


def set_body_mass(builder, body: int, mass: float, com, inertia) -> None:
    """Set a body's mass, centre of mass and inertia (about the centre of mass) and their inverses."""
    builder.body_mass[body] = float(mass)
    builder.body_inv_mass[body] = 1.0 / mass if mass > 0.0 else 0.0
    builder.body_com[body] = wp.vec3(*com)
    builder.body_inertia[body] = wp.mat33(*np.asarray(inertia).reshape(-1))
    inv = np.linalg.inv(inertia) if np.any(inertia) else np.zeros((3, 3))
    builder.body_inv_inertia[body] = wp.mat33(*inv.reshape(-1))


def add_base_joint(builder, root: int, xform, floating: bool, base_joint, who: str) -> None:
    """Attach the root body: a D6 joint of the given axes, an ``add_joint`` dict, a free joint or a fixed one."""
    if base_joint is not None:
        # the position applies before the base joint, the rotation after it, so the joint's axes stay unrotated
        parent_xform = wp.transform(xform.p, wp.quat_identity())
        child_xform = wp.transform(wp.vec3(0.0, 0.0, 0.0), wp.quat_inverse(xform.q))
        if isinstance(base_joint, str):
            linear, angular = [], []
            for token in (t.strip().lower() for t in base_joint.split(",")):
                if len(token) < 2 or token[0] not in "lpar" or token[-1] not in AXES:
                    raise SimError(f"{who}: 'base_joint' axis {token!r} is not one of px/py/pz (or lx..) "
                                   f"and rx/ry/rz (or ax..)")
                (linear if token[0] in "lp" else angular).append(JointAxis(AXES[token[-1]]))
            builder.add_joint_d6(parent=-1, child=root, linear_axes=linear, angular_axes=angular,
                                 parent_xform=parent_xform, child_xform=child_xform, name="base_joint")
        elif isinstance(base_joint, dict):
            params = dict(base_joint, parent=-1, child=root, parent_xform=parent_xform, child_xform=child_xform,
                          name="base_joint")
            builder.add_joint(**params)
        else:
            raise SimError(f"{who}: 'base_joint' must be a string of axes such as 'px,py,rz' or a dict of "
                           f"add_joint arguments, got {type(base_joint).__name__}")
    elif floating:
        joint = builder.add_joint_free(root, name="floating_base")
        start = builder.joint_q_start[joint]
        builder.joint_q[start:start + 7] = [*map(float, xform.p), *map(float, xform.q)]
    else:
        builder.add_joint_fixed(-1, root, parent_xform=xform, name="fixed_base")
