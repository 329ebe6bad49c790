"""Warp's ``warp.math`` functions (norms, twists, rigid-body helpers) as weft funcs.

In Warp these are ``@wp.func`` functions rather than native builtins, and so they are here: written in the
kernel language, generic over the float precision, differentiated by weft's adjoint transform like any user
function.
"""

from __future__ import annotations

from typing import Any

import weft as wp

from .frontend.func import make_func as _func
from .ops.forms import Form, declare

__all__ = [
    "len",
    "norm_huber",
    "norm_l1",
    "norm_l2",
    "norm_pseudo_huber",
    "quat_between_vectors",
    "quat_from_euler",
    "quat_to_euler",
    "quat_to_rpy",
    "quat_twist",
    "quat_twist_angle",
    "quat_twist_angle_signed",
    "smooth_normalize",
    "transform_compose",
    "transform_decompose",
    "transform_from_matrix",
    "transform_to_matrix",
    "transform_twist",
    "transform_wrench",
    "velocity_at_point",
]


@_func
def norm_l1(v: Any):
    """L1 norm of a vector: the sum of the absolute values of its components."""
    n = wp.abs(v[0])
    for i in range(1, len(v)):
        n += wp.abs(v[i])
    return n


@_func
def norm_l2(v: Any):
    """L2 (Euclidean) norm of a vector, ``wp.length(v)``."""
    return wp.length(v)


@_func
def norm_huber(v: Any, delta: Any = 1.0):
    """Huber norm: ``|v|^2 / 2`` where ``|v| <= delta``, else ``delta (|v| - delta / 2)``."""
    a = wp.dot(v, v)
    if a <= delta * delta:
        return 0.5 * a
    return delta * (wp.sqrt(a) - 0.5 * delta)


@_func
def norm_pseudo_huber(v: Any, delta: Any = 1.0):
    """Pseudo-Huber norm (Warp's form): ``delta * sqrt(1 + |v|^2 / delta^2)``."""
    a = wp.dot(v, v)
    return delta * wp.sqrt(1.0 + a / (delta * delta))


@_func
def smooth_normalize(v: Any, delta: Any = 1.0):
    """``v`` divided by its pseudo-Huber norm: a normalization that is smooth at the origin."""
    return v / norm_pseudo_huber(v, delta)


@_func
def velocity_at_point(qd: Any, r: Any):
    """Linear velocity of a point at offset ``r`` on a body with spatial velocity ``qd = (w, v)``: v + w x r."""
    return wp.spatial_bottom(qd) + wp.cross(wp.spatial_top(qd), r)


@_func
def quat_twist(axis: Any, q: Any):
    """The twist of rotation ``q`` about unit ``axis`` (swing-twist decomposition), as a unit quaternion."""
    a = axis * wp.dot(wp.vector(q[0], q[1], q[2]), axis)
    return wp.normalize(type(q)(a[0], a[1], a[2], q[3]))


@_func
def quat_twist_angle(axis: Any, q: Any):
    """Unsigned twist angle (radians) of ``q`` about unit ``axis``."""
    s = wp.abs(wp.dot(axis, wp.vector(q[0], q[1], q[2])))
    return 2.0 * wp.atan2(s, q[3])


@_func
def quat_twist_angle_signed(axis: Any, q: Any):
    """Signed twist angle (radians) of ``q`` about unit ``axis`` (right-hand rule)."""
    s = wp.dot(axis, wp.vector(q[0], q[1], q[2]))
    return 2.0 * wp.atan2(s, q[3])


@_func
def quat_to_rpy(q: Any):
    """Roll, pitch and yaw (extrinsic x-y-z, radians) of rotation ``q``; the inverse of ``wp.quat_rpy``."""
    x, y, z, w = q[0], q[1], q[2], q[3]
    roll = wp.atan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))
    pitch = wp.asin(wp.clamp(2.0 * (w * y - z * x), -1.0, 1.0))
    yaw = wp.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return wp.vector(roll, pitch, yaw)


@_func
def _axis_rotation(e: Any, axis: int):
    """The rotation by ``e[axis]`` about coordinate axis ``axis`` (0, 1, 2: x, y, z)."""
    zero = type(e[0])(0.0)
    a = wp.vector(zero, zero, zero)
    a[axis] = type(e[0])(1.0)
    return wp.quat_from_axis_angle(a, e[axis])


@_func
def quat_from_euler(e: Any, i: int, j: int, k: int):
    """The rotation about the fixed axes i, then j, then k (extrinsic; ``q_k q_j q_i``) by the angles ``e``, which is
    indexed by axis (``e[0]`` about x). A proper Euler sequence (i == k) uses ``e[i]`` for the first and last
    rotation. ``quat_from_euler(e, 0, 1, 2)`` equals ``quat_rpy(e[0], e[1], e[2])``."""
    return _axis_rotation(e, k) * (_axis_rotation(e, j) * _axis_rotation(e, i))


@_func
def quat_to_euler(q: Any, i: int, j: int, k: int):
    """Angles of rotation ``q`` for the fixed-axis sequence i, j, k, placed by axis as ``quat_from_euler`` reads them
    (for a proper sequence, i == k, the last angle goes to the remaining axis' slot). The middle angle is in
    [-pi/2, pi/2] (Tait-Bryan) or [0, pi] (proper); at gimbal lock the first angle is 0. Bernardes and Viollet's
    direct method (PLoS ONE 17(11), 2022): one acos and two atan2 for every sequence."""
    w = q[3]
    zero = w - w
    last = k
    if i == k:
        last = 3 - i - j
    sign = type(w)(((i - j) * (j - last) * (last - i)) // 2)  # the parity of the permutation (i, j, last)
    a = w
    b = q[i]
    c = q[j]
    d = q[last] * sign
    if i != k:  # Tait-Bryan: the same formula after a change of variables
        a = w - q[j]
        b = q[i] + q[last] * sign
        c = q[j] + w
        d = q[last] * sign - q[i]
    ab = a * a + b * b
    middle = wp.acos(wp.clamp(2.0 * ab / (ab + c * c + d * d) - 1.0, -1.0, 1.0))
    plus = wp.atan2(b, a)
    minus = wp.atan2(d, c)
    first = zero
    third = zero
    if wp.abs(middle) < 1.0e-6:
        third = 2.0 * plus
    elif wp.abs(middle - 3.141592653589793) < 1.0e-6:
        third = 2.0 * minus
    else:
        first = plus - minus
        third = plus + minus
    if i != k:
        middle = middle - 1.5707963267948966
        third = third * sign
    e = wp.vector(zero, zero, zero)
    e[i] = first
    e[j] = middle
    e[last] = third
    return e


@_func
def _affine(m3: Any, p: Any):
    """The 4x4 matrix [[m3, p], [0, 0, 0, 1]]."""
    z = p[0] - p[0]
    one = z + 1.0
    return wp.matrix(m3[0, 0], m3[0, 1], m3[0, 2], p[0], m3[1, 0], m3[1, 1], m3[1, 2], p[1],
                     m3[2, 0], m3[2, 1], m3[2, 2], p[2], z, z, z, one, shape=(4, 4))


@_func
def transform_to_matrix(xform: Any):
    """The 4x4 matrix of transform ``xform``: its rotation matrix and translation, last row (0, 0, 0, 1)."""
    return _affine(wp.quat_to_matrix(wp.transform_get_rotation(xform)), wp.transform_get_translation(xform))


@_func
def transform_from_matrix(mat: Any):
    """The transform of a 4x4 rigid matrix: translation from the last column, rotation from the 3x3 block."""
    return wp.transformation(wp.vector(mat[0, 3], mat[1, 3], mat[2, 3]), wp.quat_from_matrix(mat))


@_func
def transform_compose(position: Any, rotation: Any, scale: Any):
    """The 4x4 matrix that scales by ``scale`` (per axis), then rotates by ``rotation``, then translates."""
    return _affine(wp.quat_to_matrix(rotation) * wp.diag(scale), position)


@_func
def transform_decompose(m: Any):
    """``position, rotation, scale`` of a 4x4 matrix made by ``transform_compose`` (scale: the column lengths of
    the 3x3 block; a zero column keeps its zero)."""
    position = wp.vector(m[0, 3], m[1, 3], m[2, 3])
    r = wp.matrix(m[0, 0], m[0, 1], m[0, 2], m[1, 0], m[1, 1], m[1, 2], m[2, 0], m[2, 1], m[2, 2], shape=(3, 3))
    scale = wp.vector(wp.length(wp.vector(r[0, 0], r[1, 0], r[2, 0])), wp.length(wp.vector(r[0, 1], r[1, 1], r[2, 1])),
                      wp.length(wp.vector(r[0, 2], r[1, 2], r[2, 2])))
    for c in range(3):
        if scale[c] != scale[c] - scale[c]:
            for row in range(3):
                r[row, c] = r[row, c] / scale[c]
    return position, wp.quat_from_matrix(r), scale


@_func
def transform_twist(t: Any, x: Any):
    """Spatial twist ``x = (w, v)`` mapped by transform ``t = (R, p)``: ``(R w, R v + p x R w)``."""
    q = wp.transform_get_rotation(t)
    p = wp.transform_get_translation(t)
    w = wp.quat_rotate(q, wp.spatial_top(x))
    v = wp.quat_rotate(q, wp.spatial_bottom(x)) + wp.cross(p, w)
    return type(x)(w[0], w[1], w[2], v[0], v[1], v[2])


@_func
def transform_wrench(t: Any, x: Any):
    """Spatial wrench ``x = (tau, f)`` mapped by transform ``t = (R, p)``: ``(R tau + p x R f, R f)``."""
    q = wp.transform_get_rotation(t)
    p = wp.transform_get_translation(t)
    f = wp.quat_rotate(q, wp.spatial_bottom(x))
    tau = wp.quat_rotate(q, wp.spatial_top(x)) + wp.cross(p, f)
    return type(x)(tau[0], tau[1], tau[2], f[0], f[1], f[2])


def len(x):
    """``wp.len(x)``: the number of components of a vector / rows of a matrix, or the first dimension of an array;
    in kernels a compile-time constant for vectors and matrices."""
    import builtins

    return builtins.len(x)


declare(len, "len", Form.LEN)  # in kernels: Python's len()


@_func
def quat_between_vectors(a: Any, b: Any):
    """The shortest-arc unit rotation taking the direction of ``a`` onto that of ``b`` (any nonzero lengths):
    ``normalize((cross(â, b̂), 1 + dot(â, b̂)))``, the rotation about ``cross(a, b)`` by the angle between them.
    Parallel directions give the identity. Opposite directions are not handled (as Warp): when the quaternion above
    is exactly zero the result is the identity, as Warp's normalize of a zero quaternion."""
    na = wp.normalize(a)
    nb = wp.normalize(b)
    c = wp.cross(na, nb)
    d = wp.dot(na, nb)
    one = type(d)(1.0)
    ident = wp.quat_from_axis_angle(na, d - d)  # (0, 0, 0, 1) in a's precision (host and kernel)
    q = type(ident)(c[0], c[1], c[2], d + one)
    n = wp.length(q)
    r = ident
    if n > d - d:
        r = q * (one / n)
    return r
