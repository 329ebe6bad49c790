"""Warp's ``warp.math`` functions (norms, twists, rigid-body helpers) as weft funcs.

In Warp these are ``@wp.func`` functions rather than native builtins, and so they are here: written in the
kernel language, generic over the float precision, differentiated by weft's adjoint transform like any user
function.
"""

from __future__ import annotations

from typing import Any

import weft as wp

from .frontend.func import make_func as _func

__all__ = ["len", "norm_huber", "norm_l1", "norm_l2", "norm_pseudo_huber", "quat_to_rpy", "quat_twist", "quat_twist_angle",
           "quat_twist_angle_signed", "smooth_normalize", "transform_twist", "transform_wrench", "velocity_at_point"]


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
