"""Quaternions and rigid transforms (``weft/native/quat.h``, ``transform.h``)."""

from __future__ import annotations

from ..ir import types as T
from . import rules as R
from .forms import Form, Syntax
from .registry import Op, OpKind, register

D = "quat"
Q = T.VecFlavor.QUAT


def _q(s):
    return T.VectorType(4, s, Q)


def _tf(s):
    return T.VectorType(7, s, T.VecFlavor.TRANSFORM)


def _v3(s):
    return T.VectorType(3, s)


def _rule(check, result):
    def rule(args, attrs):
        try:
            return result(args) if check(args) else None
        except (AttributeError, IndexError):
            return None
    return rule


_float = lambda t: T.scalar_of(t) is not None and T.scalar_of(t).is_float

register(Op("quat_identity", lambda a, at: _q(at[0]) if not a else None, native="quat_identity",
            kind=OpKind.SPECIAL, domain=D, syntax=Syntax(Form.TYPED_CONSTANT), doc="The identity rotation (dtype= keyword)."))
register(Op("quat_from_axis_angle", _rule(lambda a: len(a) == 2 and R.is_vec(a[0], 3) and _float(a[0]) and a[1] ==
                                          a[0].scalar, lambda a: _q(a[1])), native="quat_from_axis_angle", domain=D,
            doc="Rotation of `angle` radians about unit `axis`."))
register(Op("quat_rotate", _rule(lambda a: len(a) == 2 and R.is_quat(a[0]) and a[1] == _v3(a[0].scalar),
                                 lambda a: a[1]), native="quat_rotate", domain=D, doc="Rotate a vec3 by q."))
register(Op("quat_rotate_inv", _rule(lambda a: len(a) == 2 and R.is_quat(a[0]) and a[1] == _v3(a[0].scalar),
                                     lambda a: a[1]), native="quat_rotate_inv", domain=D,
            doc="Rotate a vec3 by the inverse of q."))
register(Op("quat_inverse", _rule(lambda a: len(a) == 1 and R.is_quat(a[0]), lambda a: a[0]), native="quat_inverse",
            domain=D, doc="Inverse (conjugate) of a unit quaternion."))
register(Op("quat_to_matrix", _rule(lambda a: len(a) == 1 and R.is_quat(a[0]),
                                    lambda a: T.MatrixType(3, 3, a[0].scalar)), native="quat_to_matrix", domain=D,
            doc="3x3 rotation matrix of q."))
register(Op("quat_from_matrix", _rule(lambda a: len(a) == 1 and R.is_mat(a[0], 3, 3) and _float(a[0]),
                                      lambda a: _q(a[0].scalar)), native="quat_from_matrix", domain=D,
            doc="Unit quaternion of a 3x3 rotation matrix."))
register(Op("dot", _rule(lambda a: len(a) == 2 and R.is_quat(a[0]) and a[0] == a[1], lambda a: a[0].scalar),
            native="dot", domain=D, doc="Quaternion dot product."))
register(Op("length", _rule(lambda a: len(a) == 1 and R.is_quat(a[0]), lambda a: a[0].scalar), native="length",
            domain=D))
register(Op("normalize", _rule(lambda a: len(a) == 1 and R.is_quat(a[0]), lambda a: a[0]), native="normalize",
            domain=D))
register(Op("quat_slerp", _rule(lambda a: len(a) == 3 and R.is_quat(a[0]) and a[0] == a[1] and a[2] == a[0].scalar,
                                lambda a: a[0]), native="quat_slerp", domain=D, doc="Spherical interpolation."))

register(Op("transform_identity", lambda a, at: _tf(at[0]) if not a else None, native="transform_identity",
            kind=OpKind.SPECIAL, domain=D, syntax=Syntax(Form.TYPED_CONSTANT), doc="The identity transform (dtype= keyword)."))
for _name in ("transform_point", "transform_vector"):
    register(Op(_name, _rule(lambda a: len(a) == 2 and R.is_transform(a[0]) and a[1] == _v3(a[0].scalar),
                             lambda a: a[1]), native=_name, domain=D, doc=f"{_name}(t, v)."))
register(Op("transform_multiply", _rule(lambda a: len(a) == 2 and R.is_transform(a[0]) and a[0] == a[1],
                                        lambda a: a[0]), native="transform_multiply", domain=D,
            doc="Composition a * b."))
register(Op("transform_inverse", _rule(lambda a: len(a) == 1 and R.is_transform(a[0]), lambda a: a[0]),
            native="transform_inverse", domain=D, doc="Inverse transform."))
register(Op("transform_get_translation", _rule(lambda a: len(a) == 1 and R.is_transform(a[0]),
                                               lambda a: _v3(a[0].scalar)), native="transform_get_translation",
            domain=D, doc="Translation part."))
register(Op("transform_get_rotation", _rule(lambda a: len(a) == 1 and R.is_transform(a[0]),
                                            lambda a: _q(a[0].scalar)), native="transform_get_rotation", domain=D,
            doc="Rotation part."))
