"""Op-table cases of the ``mathx`` (Warp 1.19 math extras) and ``noise`` domains, added to ``op_table.TABLE``."""

# no `from __future__ import annotations`: kernel, func and struct annotations are evaluated where defined
import numpy as np

import weft as wp

from .op_table_records import (
    _S,
    _SS,
    M22,
    M44,
    TF,
    V3,
    V4,
    Q,
    away_from_zero,
    case,
    entry,
    f64,
    normal,
    rotation_matrix,
    uniform,
    unit_quat,
)


# ================================================================================================ mathx
@wp.func
def x_erf(x: f64):
    return wp.erf(x)


@wp.func
def x_erfc(x: f64):
    return wp.erfc(x)


@wp.func
def x_erfinv(x: f64):
    return wp.erfinv(x)


@wp.func
def x_erfcinv(x: f64):
    return wp.erfcinv(x)


@wp.func
def x_copysign(x: f64, y: f64):
    return wp.copysign(x, y)


@wp.func
def x_quat_rpy(r: f64, p: f64, y: f64):
    return wp.quat_rpy(r, p, y)


@wp.func
def x_lerp_v(a: V3, b: V3, t: f64):
    return wp.lerp(a, b, t)


@wp.func
def x_lerp_m(a: M22, b: M22, t: f64):
    return wp.lerp(a, b, t)


@wp.func
def x_lerp_q(a: Q, b: Q, t: f64):
    return wp.lerp(a, b, t)


@wp.func
def x_lerp_t(a: TF, b: TF, t: f64):
    return wp.lerp(a, b, t)


entry("mathx", "erf", case("erf", _S, f64, [normal()], x_erf))
entry("mathx", "erfc", case("erfc", _S, f64, [normal()], x_erfc))
entry("mathx", "erfinv", case("erfinv", _S, f64, [uniform(-0.9, 0.9)], x_erfinv))
entry("mathx", "erfcinv", case("erfcinv", _S, f64, [uniform(0.1, 1.9)], x_erfcinv))
entry("mathx", "copysign", case("copysign", _SS, f64, [away_from_zero(), away_from_zero()], x_copysign))
entry("mathx", "quat_rpy", case("quat_rpy", (f64, f64, f64), Q, [normal(), normal(), normal()], x_quat_rpy))
@wp.func
def x_quat_to_axis_angle(q: Q):
    axis, angle = wp.quat_to_axis_angle(q)
    return wp.vec4d(axis[0], axis[1], axis[2], angle)


@wp.func
def x_quat_from_matrix44(m: M44):
    return wp.quat_from_matrix(m)


def _affine_rotation(rng, n):
    m = np.zeros((n, 4, 4))
    m[:, :3, :3] = rotation_matrix()(rng, n)
    m[:, :3, 3] = rng.normal(size=(n, 3))
    m[:, 3, 3] = 1.0
    return m


def _quats_both_signs(rng, n):
    q = unit_quat()(rng, n)
    q[:, 3] = np.where(np.arange(n) % 2 == 0, 1.0, -1.0) * np.maximum(np.abs(q[:, 3]), 0.2)  # away from w = 0
    return q


entry("mathx", "quat_to_axis_angle",
      case("quat_to_axis_angle", (Q,), V4, [_quats_both_signs], x_quat_to_axis_angle, n=4))
entry("mathx", "quat_from_matrix", case("quat_from_matrix(mat44)", (M44,), Q, [_affine_rotation], x_quat_from_matrix44))
@wp.func
def x_vmax(v: V4):
    return wp.max(v)


@wp.func
def x_vmin(v: V4):
    return wp.min(v)


@wp.func
def x_vmod(a: V3, b: V3):
    return wp.mod(a, b)


@wp.func
def x_sdivm(s: f64, m: M22):
    return s / m


@wp.func
def x_sdivm_approx(s: f64, m: M22):
    return wp.div_approx(s, m)


@wp.func
def x_tpoint(m: M44, p: V3):
    return wp.transform_point(m, p)


@wp.func
def x_tvector(m: M44, v: V3):
    return wp.transform_vector(m, v)


def _vmod_inputs(rng, n):
    b = rng.uniform(0.5, 1.5, size=(n, 3)) * rng.choice([-1.0, 1.0], size=(n, 3))
    q = rng.integers(-3, 4, size=(n, 3)) + rng.uniform(0.15, 0.85, size=(n, 3))
    return [q * b, b]


def _distinct4(rng, n):
    return rng.permutation(np.arange(4.0))[None, :] + rng.uniform(0.0, 0.5, size=(n, 4))  # components 0.5 apart


entry("mathx", "max", case("max(vec4)", (V4,), f64, [_distinct4], x_vmax))
entry("mathx", "min", case("min(vec4)", (V4,), f64, [_distinct4], x_vmin))
entry("mathx", "mod", case("mod(vec3, vec3)", (V3, V3), V3, _vmod_inputs, x_vmod))
entry("mathx", "div", case("scalar / mat22", (f64, M22), M22, [normal(), away_from_zero(2, 2)], x_sdivm))
entry("mathx", "div_approx", case("div_approx(scalar, mat22)", (f64, M22), M22, [normal(), away_from_zero(2, 2)],
                                 x_sdivm_approx))
entry("mathx", "transform_point", case("transform_point(mat44, vec3)", (M44, V3), V3, [normal(4, 4), normal(3)],
                                       x_tpoint))
entry("mathx", "transform_vector", case("transform_vector(mat44, vec3)", (M44, V3), V3, [normal(4, 4), normal(3)],
                                        x_tvector))
entry("mathx", "lerp",
      case("lerp(vec3)", (V3, V3, f64), V3, [normal(3), normal(3), uniform(0.0, 1.0)], x_lerp_v),
      case("lerp(mat22)", (M22, M22, f64), M22, [normal(2, 2), normal(2, 2), uniform(0.0, 1.0)], x_lerp_m),
      case("lerp(quat)", (Q, Q, f64), Q, [normal(4), normal(4), uniform(0.0, 1.0)], x_lerp_q),
      case("lerp(transform)", (TF, TF, f64), TF, [normal(7), normal(7), uniform(0.0, 1.0)], x_lerp_t))



# ================================================================================================ noise
# float32 only (as Warp): steps of 2^-10 and percent tolerances; the points span several lattice cells, negative
# coordinates and the periodic wrap included (the noise is C2 across cells)
_F32_FD = {"eps": 2.0 ** -10, "rtol": 2e-2, "atol": 3e-3, "n": 4}


@wp.func
def n_noise1(x: float):
    return wp.noise(wp.rand_init(3), x)


@wp.func
def n_noise4(p: wp.vec4):
    return wp.noise(wp.rand_init(3), p)


@wp.func
def n_pnoise2(p: wp.vec2):
    return wp.pnoise(wp.rand_init(5), p, 2, 3)


@wp.func
def n_pnoise3(p: wp.vec3):
    return wp.pnoise(wp.rand_init(5), p, 2, 3, 2)


@wp.func
def n_curl2(p: wp.vec2, lac: float, gain: float):
    return wp.curlnoise(wp.rand_init(7), p, wp.uint32(3), lac, gain)


@wp.func
def n_curl3(p: wp.vec3, lac: float, gain: float):
    return wp.curlnoise(wp.rand_init(7), p, wp.uint32(2), lac, gain)


@wp.func
def n_curl4(p: wp.vec4, lac: float, gain: float):
    return wp.curlnoise(wp.rand_init(7), p, wp.uint32(2), lac, gain)


_LAC, _GAIN = uniform(1.7, 2.3), uniform(0.3, 0.7)
entry("noise", "noise",
      case("noise(float)", (wp.float32,), wp.float32, [normal(scale=2.0)], n_noise1, **_F32_FD),
      case("noise(vec4)", (wp.vec4,), wp.float32, [normal(4, scale=2.0)], n_noise4, **_F32_FD))
entry("noise", "pnoise",
      case("pnoise(vec2)", (wp.vec2,), wp.float32, [normal(2, scale=3.0)], n_pnoise2, **_F32_FD),
      case("pnoise(vec3)", (wp.vec3,), wp.float32, [normal(3, scale=3.0)], n_pnoise3, **_F32_FD))
entry("noise", "curlnoise",
      case("curlnoise(vec2)", (wp.vec2, wp.float32, wp.float32), wp.vec2, [normal(2), _LAC, _GAIN], n_curl2,
           **_F32_FD),
      case("curlnoise(vec3)", (wp.vec3, wp.float32, wp.float32), wp.vec3, [normal(3), _LAC, _GAIN], n_curl3,
           **_F32_FD),
      case("curlnoise(vec4)", (wp.vec4, wp.float32, wp.float32), wp.vec3, [normal(4), _LAC, _GAIN], n_curl4,
           **_F32_FD))
