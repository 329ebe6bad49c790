"""THE table of differentiable ops: every op of the registry whose adjoint is not NONE, with its input domain
(a sampler per input) and tolerance. ``test_fd_table.py`` checks each case against float64 central differences;
``test_registry_coverage.py`` fails when a differentiable op is missing here.

A case is either a ``@wp.func`` applied element-wise (``out[i] = func(in0[i], in1[i], ...)``, the harness builds
the kernel) or a ready kernel ``(in0, ..., out)`` for ops that need the whole array (atomics, 2-D access). The
scalar loss is ``L = sum_i w_i . out_i`` with fixed random weights ``w`` (seeded through
``tape.backward(grads={out: w})``); the test compares ``dL/d in`` from the Tape with central differences.

Decompositions are checked through quantities that do not depend on their sign conventions (singular values,
U V^T, Q diag(c) Q^T, ...). Functions with kinks (abs, min, max, clamp, mod, frac ...) are sampled away from
the kinks.
"""

# no `from __future__ import annotations`: kernel, func and struct annotations are evaluated where defined
import numpy as np

import weft as wp

from .op_table_records import (  # noqa: F401 - re-exported for the domain modules and tests
    _S,
    _SS,
    M22,
    M33,
    M44,
    SM,
    SV,
    TABLE,
    TF,
    V2,
    V3,
    V4,
    Case,
    Entry,
    Q,
    Sampler,
    _rotations,
    away_from_integers,
    away_from_zero,
    case,
    clamp_inputs,
    const,
    distinct_singular_values,
    distinct_singular_values_2,
    entry,
    f64,
    mod_inputs,
    normal,
    positive,
    rotation_matrix,
    separated_pair,
    slerp_inputs,
    smoothstep_inputs,
    symmetric_distinct_eigenvalues,
    transform,
    uniform,
    unit_quat,
    well_conditioned,
)


# ================================================================================================ scalar
@wp.func
def s_add(a: f64, b: f64):
    return a + b


@wp.func
def s_sub(a: f64, b: f64):
    return a - b


@wp.func
def s_mul(a: f64, b: f64):
    return a * b


@wp.func
def s_div(a: f64, b: f64):
    return a / b


@wp.func
def s_div_approx(a: f64, b: f64):
    return wp.div_approx(a, b)


@wp.func
def s_floordiv(a: f64, b: f64):
    return a // b + a  # the quotient is piecewise constant: only the "+ a" term has a gradient


@wp.func
def s_mod(a: f64, b: f64):
    return wp.mod(a, b)


@wp.func
def s_mod_op(a: f64, b: f64):
    return a % b


@wp.func
def s_neg(a: f64):
    return -a


@wp.func
def s_pos(a: f64):
    return +a


@wp.func
def s_sqrt(x: f64):
    return wp.sqrt(x)


@wp.func
def s_cbrt(x: f64):
    return wp.cbrt(x)


@wp.func
def s_exp(x: f64):
    return wp.exp(x)


@wp.func
def s_exp2(x: f64):
    return wp.exp2(x)


@wp.func
def s_log(x: f64):
    return wp.log(x)


@wp.func
def s_log2(x: f64):
    return wp.log2(x)


@wp.func
def s_log10(x: f64):
    return wp.log10(x)


@wp.func
def s_sin(x: f64):
    return wp.sin(x)


@wp.func
def s_cos(x: f64):
    return wp.cos(x)


@wp.func
def s_tan(x: f64):
    return wp.tan(x)


@wp.func
def s_asin(x: f64):
    return wp.asin(x)


@wp.func
def s_acos(x: f64):
    return wp.acos(x)


@wp.func
def s_atan(x: f64):
    return wp.atan(x)


@wp.func
def s_sinh(x: f64):
    return wp.sinh(x)


@wp.func
def s_cosh(x: f64):
    return wp.cosh(x)


@wp.func
def s_tanh(x: f64):
    return wp.tanh(x)


@wp.func
def s_degrees(x: f64):
    return wp.degrees(x)


@wp.func
def s_radians(x: f64):
    return wp.radians(x)


@wp.func
def s_frac(x: f64):
    return wp.frac(x)


@wp.func
def s_abs(x: f64):
    return wp.abs(x)


@wp.func
def s_min(a: f64, b: f64):
    return wp.min(a, b)


@wp.func
def s_max(a: f64, b: f64):
    return wp.max(a, b)


@wp.func
def s_clamp(x: f64, lo: f64, hi: f64):
    return wp.clamp(x, lo, hi)


@wp.func
def s_pow(x: f64, y: f64):
    return wp.pow(x, y)


@wp.func
def s_pow_op(x: f64, y: f64):
    return x ** y


@wp.func
def s_atan2(y: f64, x: f64):
    return wp.atan2(y, x)


@wp.func
def s_lerp(a: f64, b: f64, t: f64):
    return wp.lerp(a, b, t)


@wp.func
def s_smoothstep(a: f64, b: f64, x: f64):
    return wp.smoothstep(a, b, x)


entry("scalar", "add", case("a + b", _SS, f64, [normal(), normal()], s_add))
entry("scalar", "sub", case("a - b", _SS, f64, [normal(), normal()], s_sub))
entry("scalar", "mul", case("a * b", _SS, f64, [normal(), normal()], s_mul))
entry("scalar", "div", case("a / b", _SS, f64, [normal(), away_from_zero()], s_div))
entry("scalar", "div_approx", case("div_approx(a, b)", _SS, f64, [normal(), away_from_zero()], s_div_approx))
entry("scalar", "floordiv", case("a // b (+ a)", _SS, f64, mod_inputs, s_floordiv))
entry("scalar", "mod", case("wp.mod(a, b)", _SS, f64, mod_inputs, s_mod), case("a % b", _SS, f64, mod_inputs, s_mod_op))
entry("scalar", "neg", case("-a", _S, f64, [normal()], s_neg))
entry("scalar", "pos", case("+a", _S, f64, [normal()], s_pos))
entry("scalar", "sqrt", case("sqrt", _S, f64, [positive()], s_sqrt))
entry("scalar", "cbrt", case("cbrt", _S, f64, [away_from_zero()], s_cbrt))
entry("scalar", "exp", case("exp", _S, f64, [normal()], s_exp))
entry("scalar", "exp2", case("exp2", _S, f64, [normal()], s_exp2))
entry("scalar", "log", case("log", _S, f64, [positive()], s_log))
entry("scalar", "log2", case("log2", _S, f64, [positive()], s_log2))
entry("scalar", "log10", case("log10", _S, f64, [positive()], s_log10))
entry("scalar", "sin", case("sin", _S, f64, [normal()], s_sin))
entry("scalar", "cos", case("cos", _S, f64, [normal()], s_cos))
entry("scalar", "tan", case("tan", _S, f64, [uniform(-1.2, 1.2)], s_tan))
entry("scalar", "asin", case("asin", _S, f64, [uniform(-0.9, 0.9)], s_asin))
entry("scalar", "acos", case("acos", _S, f64, [uniform(-0.9, 0.9)], s_acos))
entry("scalar", "atan", case("atan", _S, f64, [normal()], s_atan))
entry("scalar", "sinh", case("sinh", _S, f64, [normal()], s_sinh))
entry("scalar", "cosh", case("cosh", _S, f64, [normal()], s_cosh))
entry("scalar", "tanh", case("tanh", _S, f64, [normal()], s_tanh))
entry("scalar", "degrees", case("degrees", _S, f64, [normal()], s_degrees))
entry("scalar", "radians", case("radians", _S, f64, [normal()], s_radians))
entry("scalar", "frac", case("frac", _S, f64, [away_from_integers(-3, 3)], s_frac))
entry("scalar", "abs", case("abs", _S, f64, [away_from_zero()], s_abs))
entry("scalar", "min", case("min(a, b)", _SS, f64, separated_pair(), s_min))
entry("scalar", "max", case("max(a, b)", _SS, f64, separated_pair(), s_max))
entry("scalar", "clamp", case("clamp(x, lo, hi)", (f64, f64, f64), f64, clamp_inputs, s_clamp, n=6))
entry("scalar", "pow", case("pow(x, y)", _SS, f64, [positive(), normal()], s_pow),
      case("x ** y", _SS, f64, [positive(), normal()], s_pow_op))
entry("scalar", "atan2", case("atan2(y, x)", _SS, f64, [away_from_zero(), away_from_zero()], s_atan2))
entry("scalar", "lerp", case("lerp(a, b, t)", (f64, f64, f64), f64, [normal(), normal(), uniform(0, 1)], s_lerp))
entry("scalar", "smoothstep", case("smoothstep(a, b, x)", (f64, f64, f64), f64, smoothstep_inputs, s_smoothstep))


# ================================================================================================ vector (and the
# element-wise matrix / quaternion / transform overloads registered with them)
@wp.func
def v_add(a: V3, b: V3):
    return a + b


@wp.func
def m_add(a: M33, b: M33):
    return a + b


@wp.func
def v_sub(a: V3, b: V3):
    return a - b


@wp.func
def m_sub(a: M33, b: M33):
    return a - b


@wp.func
def v_neg(a: V3):
    return -a


@wp.func
def m_neg(a: M33):
    return -a


@wp.func
def v_pos(a: V3):
    return +a


@wp.func
def m_pos(a: M33):
    return +a


@wp.func
def v_smul(s: f64, v: V3):
    return s * v


@wp.func
def v_muls(v: V3, s: f64):
    return v * s


@wp.func
def m_smul(s: f64, m: M33):
    return s * m


@wp.func
def m_mulv(m: M33, v: V3):
    return m * v


@wp.func
def v_mulm(v: V3, m: M33):
    return v * m


@wp.func
def m_mulm(a: M33, b: M33):
    return a * b


@wp.func
def m_mulm_rect(a: M22, v: V2):
    # a 2x3 product through outer products: (2x2) * (2x3)
    b = wp.outer(v, wp.vec3d(v[0], v[1], v[0] * v[1]))
    return wp.transpose(a * b)


@wp.func
def q_mulq(a: Q, b: Q):
    return a * b


@wp.func
def t_mult(a: TF, b: TF):
    return a * b


@wp.func
def t_add(a: TF, b: TF):
    return a + b


@wp.func
def t_sub(a: TF, b: TF):
    return a - b


@wp.func
def t_smul(s: f64, a: TF):
    return s * a


@wp.func
def s_divq(s: f64, q: Q):
    return s / q


@wp.func
def v_divs(v: V3, s: f64):
    return v / s


@wp.func
def m_divs(m: M33, s: f64):
    return m / s


@wp.func
def s_divv(s: f64, v: V3):
    return s / v


@wp.func
def v_div_approx(v: V3, s: f64):
    return wp.div_approx(v, s)


@wp.func
def v_dot(a: V3, b: V3):
    return wp.dot(a, b)


@wp.func
def v_cross(a: V3, b: V3):
    return wp.cross(a, b)


@wp.func
def v_cross2(a: V2, b: V2):
    return wp.cross(a, b)


@wp.func
def v_length(a: V3):
    return wp.length(a)


@wp.func
def v_length_sq(a: V3):
    return wp.length_sq(a)


@wp.func
def v_normalize(a: V3):
    return wp.normalize(a)


@wp.func
def v_cw_mul(a: V3, b: V3):
    return wp.cw_mul(a, b)


@wp.func
def m_cw_mul(a: M33, b: M33):
    return wp.cw_mul(a, b)


@wp.func
def v_cw_div(a: V3, b: V3):
    return wp.cw_div(a, b)


@wp.func
def m_cw_div(a: M33, b: M33):
    return wp.cw_div(a, b)


@wp.func
def v_min(a: V3, b: V3):
    return wp.min(a, b)


@wp.func
def v_max(a: V3, b: V3):
    return wp.max(a, b)


@wp.func
def v_abs(a: V3):
    return wp.abs(a)


@wp.func
def v_outer(a: V3, b: V3):
    return wp.outer(a, b)


@wp.func
def v_extract(v: V3):
    return v[1]


@wp.func
def m_extract_row(m: M33):
    return m[2]


@wp.func
def m_extract(m: M33):
    return m[1, 2]


@wp.func
def v_insert(v: V3, s: f64):
    r = v
    r[1] = s * v[0]
    return r


@wp.func
def m_insert(m: M33, s: f64):
    r = m
    r[0, 2] = s
    return r


@wp.func
def m_insert_row(m: M33, v: V3):
    r = m
    r[1] = v
    return r


_VV = (V3, V3)
_MM = (M33, M33)
entry("vector", "add", case("vec3 + vec3", _VV, V3, [normal(3), normal(3)], v_add),
      case("mat33 + mat33", _MM, M33, [normal(3, 3), normal(3, 3)], m_add),
      case("transform + transform", (TF, TF), TF, [normal(7), normal(7)], t_add))
entry("vector", "sub", case("vec3 - vec3", _VV, V3, [normal(3), normal(3)], v_sub),
      case("mat33 - mat33", _MM, M33, [normal(3, 3), normal(3, 3)], m_sub),
      case("transform - transform", (TF, TF), TF, [normal(7), normal(7)], t_sub))
entry("vector", "neg", case("-vec3", (V3,), V3, [normal(3)], v_neg), case("-mat33", (M33,), M33, [normal(3, 3)], m_neg))
entry("vector", "pos", case("+vec3", (V3,), V3, [normal(3)], v_pos), case("+mat33", (M33,), M33, [normal(3, 3)], m_pos))
entry("vector", "mul",
      case("scalar * vec3", (f64, V3), V3, [normal(), normal(3)], v_smul),
      case("vec3 * scalar", (V3, f64), V3, [normal(3), normal()], v_muls),
      case("scalar * mat33", (f64, M33), M33, [normal(), normal(3, 3)], m_smul),
      case("mat33 * vec3", (M33, V3), V3, [normal(3, 3), normal(3)], m_mulv),
      case("vec3 * mat33", (V3, M33), V3, [normal(3), normal(3, 3)], v_mulm),
      case("mat33 * mat33", _MM, M33, [normal(3, 3), normal(3, 3)], m_mulm),
      case("mat22 * mat23", (M22, V2), wp.types.matrix(shape=(3, 2), dtype=f64), [normal(2, 2), normal(2)],
           m_mulm_rect),
      case("quat * quat", (Q, Q), Q, [normal(4), normal(4)], q_mulq),
      case("transform * transform", (TF, TF), TF, [transform(), transform()], t_mult),
      case("scalar * transform", (f64, TF), TF, [normal(), normal(7)], t_smul))
entry("vector", "div", case("vec3 / scalar", (V3, f64), V3, [normal(3), away_from_zero()], v_divs),
      case("mat33 / scalar", (M33, f64), M33, [normal(3, 3), away_from_zero()], m_divs),
      case("scalar / vec3", (f64, V3), V3, [normal(), away_from_zero(3)], s_divv),
      case("scalar / quat", (f64, Q), Q, [normal(), away_from_zero(4)], s_divq))
entry("vector", "div_approx", case("div_approx(vec3, scalar)", (V3, f64), V3, [normal(3), away_from_zero()],
                                  v_div_approx))
entry("vector", "dot", case("dot(vec3, vec3)", _VV, f64, [normal(3), normal(3)], v_dot))
entry("vector", "cross", case("cross(vec3, vec3)", _VV, V3, [normal(3), normal(3)], v_cross),
      case("cross(vec2, vec2)", (V2, V2), f64, [normal(2), normal(2)], v_cross2))
entry("vector", "length", case("length(vec3)", (V3,), f64, [normal(3)], v_length))
entry("vector", "length_sq", case("length_sq(vec3)", (V3,), f64, [normal(3)], v_length_sq))
entry("vector", "normalize", case("normalize(vec3)", (V3,), V3, [normal(3)], v_normalize))
entry("vector", "cw_mul", case("cw_mul(vec3)", _VV, V3, [normal(3), normal(3)], v_cw_mul),
      case("cw_mul(mat33)", _MM, M33, [normal(3, 3), normal(3, 3)], m_cw_mul))
entry("vector", "cw_div", case("cw_div(vec3)", _VV, V3, [normal(3), away_from_zero(3)], v_cw_div),
      case("cw_div(mat33)", _MM, M33, [normal(3, 3), away_from_zero(3, 3)], m_cw_div))
entry("vector", "min", case("min(vec3, vec3)", _VV, V3, separated_pair(3), v_min))
entry("vector", "max", case("max(vec3, vec3)", _VV, V3, separated_pair(3), v_max))
entry("vector", "abs", case("abs(vec3)", (V3,), V3, [away_from_zero(3)], v_abs))
entry("vector", "outer", case("outer(vec3, vec3)", _VV, M33, [normal(3), normal(3)], v_outer))
entry("vector", "extract", case("v[1]", (V3,), f64, [normal(3)], v_extract),
      case("m[2] (row)", (M33,), V3, [normal(3, 3)], m_extract_row),
      case("m[1, 2]", (M33,), f64, [normal(3, 3)], m_extract))
entry("vector", "insert", case("v[1] = s * v[0]", (V3, f64), V3, [normal(3), normal()], v_insert),
      case("m[0, 2] = s", (M33, f64), M33, [normal(3, 3), normal()], m_insert),
      case("m[1] = v", (M33, V3), M33, [normal(3, 3), normal(3)], m_insert_row))


# ================================================================================================ matrix
@wp.func
def m_transpose(m: M33):
    return wp.transpose(m)


@wp.func
def m_det2(m: M22):
    return wp.determinant(m)


@wp.func
def m_det3(m: M33):
    return wp.determinant(m)


@wp.func
def m_det4(m: M44):
    return wp.determinant(m)


@wp.func
def m_inv2(m: M22):
    return wp.inverse(m)


@wp.func
def m_inv3(m: M33):
    return wp.inverse(m)


@wp.func
def m_inv4(m: M44):
    return wp.inverse(m)


@wp.func
def m_inv_approx(m: M33):
    return wp.inverse_approx(m)


@wp.func
def m_trace(m: M33):
    return wp.trace(m)


@wp.func
def m_diag(v: V3):
    return wp.diag(v)


@wp.func
def m_get_diag(m: M33):
    return wp.get_diag(m)


@wp.func
def m_skew(v: V3):
    return wp.skew(v)


@wp.func
def m_ddot(a: M33, b: M33):
    return wp.ddot(a, b)


@wp.func
def m_identity(m: M33):
    return wp.identity(n=3, dtype=wp.float64) * wp.trace(m) + m


@wp.func
def svd_sigma(A: M33):
    U = wp.mat33d()
    sigma = wp.vec3d()
    V = wp.mat33d()
    wp.svd3(A, U, sigma, V)
    return sigma


@wp.func
def svd_uvt(A: M33):
    U = wp.mat33d()
    sigma = wp.vec3d()
    V = wp.mat33d()
    wp.svd3(A, U, sigma, V)
    return U * wp.transpose(V)


@wp.func
def svd_uscaled(A: M33):
    U = wp.mat33d()
    sigma = wp.vec3d()
    V = wp.mat33d()
    wp.svd3(A, U, sigma, V)
    # U diag(c) U^T + V diag(c) V^T with fixed c: invariant under the sign of each singular pair
    c = wp.vec3d(wp.float64(0.3), wp.float64(-1.1), wp.float64(2.0))
    return U * wp.diag(c) * wp.transpose(U) + V * wp.diag(c) * wp.transpose(V)


@wp.func
def svd2_sigma(A: M22):
    _u, sigma, _v = wp.svd2(A)
    return sigma


@wp.func
def svd2_vectors(A: M22):
    U, _sigma, V = wp.svd2(A)
    c = wp.mat22d(wp.float64(0.3), wp.float64(-1.1), wp.float64(2.0), wp.float64(0.7))
    return wp.cw_mul(U, c) + wp.cw_mul(V, wp.transpose(c))


@wp.func
def svd_recon(A: M33):
    U = wp.mat33d()
    sigma = wp.vec3d()
    V = wp.mat33d()
    wp.svd3(A, U, sigma, V)
    return U * wp.diag(wp.cw_mul(sigma, sigma)) * wp.transpose(V)


@wp.func
def qr_product(A: M33):
    Qm = wp.mat33d()
    R = wp.mat33d()
    wp.qr3(A, Qm, R)
    return Qm * R


@wp.func
def qr_q_scaled(A: M33):
    Qm = wp.mat33d()
    R = wp.mat33d()
    wp.qr3(A, Qm, R)
    c = wp.vec3d(wp.float64(0.3), wp.float64(-1.1), wp.float64(2.0))
    return Qm * wp.diag(c) * wp.transpose(Qm)


@wp.func
def qr_r_scaled(A: M33):
    Qm = wp.mat33d()
    R = wp.mat33d()
    wp.qr3(A, Qm, R)
    # row i of R times R_ii, and column i of Q times R_ii: both invariant under flipping the sign of pair i
    return wp.diag(wp.get_diag(R)) * R + Qm * wp.diag(wp.get_diag(R))


@wp.func
def eig_values(A: M33):
    S = (A + wp.transpose(A)) * wp.float64(0.5)
    Qm = wp.mat33d()
    d = wp.vec3d()
    wp.eig3(S, Qm, d)
    return d


@wp.func
def eig_vectors(A: M33):
    S = (A + wp.transpose(A)) * wp.float64(0.5)
    Qm = wp.mat33d()
    d = wp.vec3d()
    wp.eig3(S, Qm, d)
    c = wp.vec3d(wp.float64(0.3), wp.float64(-1.1), wp.float64(2.0))
    return Qm * wp.diag(c) * wp.transpose(Qm) + Qm * wp.diag(wp.cw_mul(d, d)) * wp.transpose(Qm)


@wp.func
def polar_q(A: M33):
    Qm = wp.mat33d()
    P = wp.mat33d()
    wp.polar_decomposition(A, Qm, P)
    return Qm


@wp.func
def polar_p(A: M33):
    Qm = wp.mat33d()
    P = wp.mat33d()
    wp.polar_decomposition(A, Qm, P)
    return P


entry("matrix", "transpose", case("transpose(mat33)", (M33,), M33, [normal(3, 3)], m_transpose))
entry("matrix", "determinant", case("determinant(mat22)", (M22,), f64, [normal(2, 2)], m_det2),
      case("determinant(mat33)", (M33,), f64, [normal(3, 3)], m_det3),
      case("determinant(mat44)", (M44,), f64, [normal(4, 4)], m_det4))
entry("matrix", "inverse", case("inverse(mat22)", (M22,), M22, [well_conditioned(2)], m_inv2),
      case("inverse(mat33)", (M33,), M33, [well_conditioned(3)], m_inv3),
      case("inverse(mat44)", (M44,), M44, [well_conditioned(4)], m_inv4))
entry("matrix", "inverse_approx", case("inverse_approx(mat33)", (M33,), M33, [well_conditioned(3)], m_inv_approx))
entry("matrix", "trace", case("trace(mat33)", (M33,), f64, [normal(3, 3)], m_trace))
entry("matrix", "diag", case("diag(vec3)", (V3,), M33, [normal(3)], m_diag))
entry("matrix", "get_diag", case("get_diag(mat33)", (M33,), V3, [normal(3, 3)], m_get_diag))
entry("matrix", "skew", case("skew(vec3)", (V3,), M33, [normal(3)], m_skew))
entry("matrix", "ddot", case("ddot(mat33, mat33)", _MM, f64, [normal(3, 3), normal(3, 3)], m_ddot))
entry("matrix", "identity", case("identity(3) * trace(m) + m", (M33,), M33, [normal(3, 3)], m_identity))
entry("matrix", "svd3", case("sigma", (M33,), V3, [distinct_singular_values()], svd_sigma, rtol=1e-5, atol=1e-6),
      case("U V^T", (M33,), M33, [distinct_singular_values()], svd_uvt, rtol=1e-5, atol=1e-6),
      case("U diag(c) U^T + V diag(c) V^T", (M33,), M33, [distinct_singular_values()], svd_uscaled, rtol=1e-5,
           atol=1e-6),
      case("U diag(sigma^2) V^T", (M33,), M33, [distinct_singular_values()], svd_recon, rtol=1e-5, atol=1e-6))
entry("matrix", "svd2", case("sigma", (M22,), V2, [distinct_singular_values_2()], svd2_sigma, rtol=1e-5, atol=1e-6),
      case("U o c + V o c^T", (M22,), M22, [distinct_singular_values_2()], svd2_vectors, rtol=1e-5, atol=1e-6))
entry("matrix", "qr3", case("Q R", (M33,), M33, [well_conditioned(3)], qr_product, rtol=1e-5, atol=1e-6),
      case("Q diag(c) Q^T", (M33,), M33, [well_conditioned(3)], qr_q_scaled, rtol=1e-5, atol=1e-6),
      case("diag(R) R + Q diag(R)", (M33,), M33, [well_conditioned(3)], qr_r_scaled, rtol=1e-5, atol=1e-6))
entry("matrix", "eig3", case("eigenvalues", (M33,), V3, [symmetric_distinct_eigenvalues()], eig_values, rtol=1e-5,
                             atol=1e-6),
      case("Q diag(c + d^2) Q^T", (M33,), M33, [symmetric_distinct_eigenvalues()], eig_vectors, rtol=1e-5, atol=1e-6))
entry("matrix", "polar_decomposition",
      case("Q", (M33,), M33, [well_conditioned(3)], polar_q, rtol=1e-5, atol=1e-6),
      case("P", (M33,), M33, [well_conditioned(3)], polar_p, rtol=1e-5, atol=1e-6))


# ================================================================================================ quaternion,
# transform
@wp.func
def q_dot(a: Q, b: Q):
    return wp.dot(a, b)


@wp.func
def q_length(a: Q):
    return wp.length(a)


@wp.func
def q_normalize(a: Q):
    return wp.normalize(a)


@wp.func
def q_from_axis_angle(axis: V3, angle: f64):
    return wp.quat_from_axis_angle(axis, angle)


@wp.func
def q_from_matrix(m: M33):
    return wp.quat_from_matrix(m)


@wp.func
def q_identity(a: Q):
    return wp.quat_identity(dtype=wp.float64) * a + a


@wp.func
def q_inverse(a: Q):
    return wp.quat_inverse(a)


@wp.func
def q_rotate(q: Q, v: V3):
    return wp.quat_rotate(q, v)


@wp.func
def q_rotate_inv(q: Q, v: V3):
    return wp.quat_rotate_inv(q, v)


@wp.func
def q_slerp(a: Q, b: Q, t: f64):
    return wp.quat_slerp(a, b, t)


@wp.func
def q_to_matrix(q: Q):
    return wp.quat_to_matrix(q)


@wp.func
def t_get_rotation(t: TF):
    return wp.transform_get_rotation(t)


@wp.func
def t_get_translation(t: TF):
    return wp.transform_get_translation(t)


@wp.func
def t_identity(t: TF):
    return wp.transform_multiply(wp.transform_identity(dtype=wp.float64), t)


@wp.func
def t_inverse(t: TF):
    return wp.transform_inverse(t)


@wp.func
def t_multiply(a: TF, b: TF):
    return wp.transform_multiply(a, b)


@wp.func
def t_point(t: TF, v: V3):
    return wp.transform_point(t, v)


@wp.func
def t_vector(t: TF, v: V3):
    return wp.transform_vector(t, v)


entry("quat", "dot", case("dot(quat, quat)", (Q, Q), f64, [normal(4), normal(4)], q_dot))
entry("quat", "length", case("length(quat)", (Q,), f64, [normal(4)], q_length))
entry("quat", "normalize", case("normalize(quat)", (Q,), Q, [normal(4)], q_normalize))
entry("quat", "quat_from_axis_angle", case("quat_from_axis_angle", (V3, f64), Q, [normal(3), normal()],
                                           q_from_axis_angle))
entry("quat", "quat_from_matrix", case("quat_from_matrix", (M33,), Q, [rotation_matrix()], q_from_matrix))
entry("quat", "quat_identity", case("quat_identity() * q + q", (Q,), Q, [normal(4)], q_identity))
entry("quat", "quat_inverse", case("quat_inverse", (Q,), Q, [normal(4)], q_inverse))
entry("quat", "quat_rotate", case("quat_rotate", (Q, V3), V3, [normal(4), normal(3)], q_rotate))
entry("quat", "quat_rotate_inv", case("quat_rotate_inv", (Q, V3), V3, [normal(4), normal(3)], q_rotate_inv))
entry("quat", "quat_slerp", case("quat_slerp", (Q, Q, f64), Q, slerp_inputs, q_slerp, rtol=1e-5, atol=1e-6))
entry("quat", "quat_to_matrix", case("quat_to_matrix", (Q,), M33, [normal(4)], q_to_matrix))
entry("quat", "transform_get_rotation", case("transform_get_rotation", (TF,), Q, [transform()], t_get_rotation))
entry("quat", "transform_get_translation", case("transform_get_translation", (TF,), V3, [transform()],
                                                t_get_translation))
entry("quat", "transform_identity", case("transform_identity() * t", (TF,), TF, [transform()], t_identity))
entry("quat", "transform_inverse", case("transform_inverse", (TF,), TF, [transform()], t_inverse))
entry("quat", "transform_multiply", case("transform_multiply", (TF, TF), TF, [transform(), transform()],
                                         t_multiply))
entry("quat", "transform_point", case("transform_point", (TF, V3), V3, [transform(), normal(3)], t_point))
entry("quat", "transform_vector", case("transform_vector", (TF, V3), V3, [transform(), normal(3)], t_vector))


# ================================================================================================ spatial
@wp.func
def sp_top(a: SV):
    return wp.spatial_top(a)


@wp.func
def sp_bottom(a: SV):
    return wp.spatial_bottom(a)


@wp.func
def sp_dot(a: SV, b: SV):
    return wp.spatial_dot(a, b)


@wp.func
def sp_cross(a: SV, b: SV):
    return wp.spatial_cross(a, b)


@wp.func
def sp_cross_dual(a: SV, b: SV):
    return wp.spatial_cross_dual(a, b)


@wp.func
def sp_adjoint(r: M33, s: M33):
    return wp.spatial_adjoint(r, s)


entry("spatial", "spatial_top", case("spatial_top", (SV,), V3, [normal(6)], sp_top))
entry("spatial", "spatial_bottom", case("spatial_bottom", (SV,), V3, [normal(6)], sp_bottom))
entry("spatial", "spatial_dot", case("spatial_dot", (SV, SV), f64, [normal(6), normal(6)], sp_dot))
entry("spatial", "spatial_cross", case("spatial_cross", (SV, SV), SV, [normal(6), normal(6)], sp_cross))
entry("spatial", "spatial_cross_dual", case("spatial_cross_dual", (SV, SV), SV, [normal(6), normal(6)],
                                         sp_cross_dual))
entry("spatial", "spatial_adjoint", case("spatial_adjoint", (M33, M33), SM, [normal(3, 3), normal(3, 3)],
                                      sp_adjoint))


# ================================================================================================ construct / cast
@wp.func
def c_vec3(a: f64, b: f64, c: f64):
    return wp.vec3d(a, b * c, c)


@wp.func
def c_vec3_broadcast(s: f64):
    return wp.vec3d(s)


@wp.func
def c_vec3_from_vec(v: V3):
    return wp.vec3d(v) * v[0]


@wp.func
def c_mat22_scalars(v: V4):
    return wp.mat22d(v[0], v[1] * v[2], v[2], v[3])


@wp.func
def c_mat33_rows(a: V3, b: V3, c: V3):
    return wp.mat33d(a, b, c)


@wp.func
def c_mat33_broadcast(s: f64):
    return wp.mat33d(s)


@wp.func
def c_quat(v: V4):
    return wp.quatd(v[0], v[1], v[2] * v[0], v[3])


@wp.func
def c_transform(p: V3, q: Q):
    return wp.transformd(p, q)


@wp.func
def c_cast_roundtrip(x: f64):
    return wp.float64(wp.float32(x)) * x


@wp.func
def c_cast_from_f32(x: wp.float32):
    y = wp.float64(x)
    return y * y


@wp.func
def c_cast_vec(v: V3):
    return wp.vec3d(wp.vec3f(v)) * v[1]


entry("construct", "construct",
      case("vec3d(a, b*c, c)", (f64, f64, f64), V3, [normal(), normal(), normal()], c_vec3),
      case("vec3d(s)", (f64,), V3, [normal()], c_vec3_broadcast),
      case("vec3d(v) * v[0]", (V3,), V3, [normal(3)], c_vec3_from_vec),
      case("mat22d(4 scalars)", (V4,), M22, [normal(4)], c_mat22_scalars),
      case("mat33d(3 rows)", (V3, V3, V3), M33, [normal(3), normal(3), normal(3)], c_mat33_rows),
      case("mat33d(s)", (f64,), M33, [normal()], c_mat33_broadcast),
      case("quatd(x, y, z, w)", (V4,), Q, [normal(4)], c_quat),
      case("transformd(p, q)", (V3, Q), TF, [normal(3), normal(4)], c_transform))
entry("construct", "cast",
      case("float64(float32(x)) * x", (f64,), f64, [normal()], c_cast_roundtrip, eps=1e-3, rtol=1e-3, atol=1e-4),
      case("float64(x: float32)^2", (wp.float32,), f64, [normal()], c_cast_from_f32, eps=2.0 ** -10, rtol=1e-3,
           atol=1e-4),
      case("vec3d(vec3f(v)) * v[1]", (V3,), V3, [normal(3)], c_cast_vec, eps=1e-3, rtol=1e-3, atol=1e-4))


# ================================================================================================ misc: locals,
# struct fields
@wp.struct
class Body:
    mass: wp.float64
    pos: wp.vec3d
    flag: wp.int32


@wp.struct
class Outer:
    body: Body
    scale: wp.float64


@wp.func
def m_copy(x: f64):
    y = x  # a mutable local: every read of y is a copy
    for _k in range(3):
        y = y * x + wp.float64(0.5)
    return y


@wp.func
def m_fields(m: f64, p: V3):
    b = Body()
    b.mass = m  # setfield
    b.pos = p * m
    b.flag = 3
    return b.pos * b.mass  # getfield


@wp.func
def m_nested_fields(m: f64, p: V3):
    o = Outer()
    o.body.mass = m
    o.body.pos = p
    o.scale = m * m
    return o.body.pos * (o.body.mass + o.scale)


@wp.func
def m_print(x: f64, p: V3):
    y = x * p
    print("y", y)  # the reverse sweep prints y's adjoint; the gradient passes the print unchanged
    return y * x


entry("misc", "print", case("printed value", (f64, V3), V3, [normal(), normal(3)], m_print))
entry("misc", "copy", case("mutable local read in a loop", (f64,), f64, [uniform(0.2, 1.2)], m_copy))
entry("misc", "getfield", case("struct fields", (f64, V3), V3, [normal(), normal(3)], m_fields),
      case("nested struct fields", (f64, V3), V3, [normal(), normal(3)], m_nested_fields))
entry("misc", "setfield", case("struct fields", (f64, V3), V3, [normal(), normal(3)], m_fields),
      case("nested struct fields", (f64, V3), V3, [normal(), normal(3)], m_nested_fields))


# ================================================================================================ array access
# and atomics: ready kernels (in..., out)
@wp.kernel
def k_load_store_2d(a: wp.array2d(dtype=f64), out: wp.array2d(dtype=f64)):
    i, j = wp.tid()
    out[i, j] = a[i, j] * a[i, (j + 1) % 3]


@wp.kernel
def k_store_vec(a: wp.array(dtype=V3), out: wp.array(dtype=V3)):
    i = wp.tid()
    v = a[i]
    out[i] = wp.vec3d(v[2], v[0] * v[1], v[1])


@wp.kernel
def k_atomic_add(a: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    wp.atomic_add(out, i % 2, a[i] * a[i])


@wp.kernel
def k_atomic_add_vec(a: wp.array(dtype=V3), out: wp.array(dtype=V3)):
    i = wp.tid()
    wp.atomic_add(out, i % 2, a[i] * wp.length(a[i]))


@wp.kernel
def k_atomic_add_op(a: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    out[i % 2] += wp.sin(a[i])


@wp.kernel
def k_atomic_sub(a: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    wp.atomic_sub(out, i % 2, a[i] * a[i])


@wp.kernel
def k_atomic_sub_op(a: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    out[i % 2] -= wp.exp(a[i])


@wp.kernel
def k_atomic_min(a: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    wp.atomic_min(out, i % 2, a[i] * wp.float64(2.0))


@wp.kernel
def k_atomic_max(a: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    wp.atomic_max(out, i % 2, a[i] * a[i])


@wp.kernel
def k_atomic_min_vec(a: wp.array(dtype=V3), out: wp.array(dtype=V3)):
    i = wp.tid()
    wp.atomic_min(out, 0, a[i] * wp.float64(2.0))


@wp.kernel
def k_atomic_max_vec(a: wp.array(dtype=V3), out: wp.array(dtype=V3)):
    i = wp.tid()
    wp.atomic_max(out, 0, a[i])


def distinct(*trailing: int) -> Sampler:
    """Values at least 0.1 apart across threads (atomic min/max pick one winner per component)."""
    def s(rng, n):
        size = int(np.prod(trailing, dtype=np.int64))
        cols = [rng.permutation(n) * 0.3 + rng.uniform(-0.1, 0.1, size=n) + 0.5 for _ in range(size)]
        return np.stack(cols, axis=1).reshape((n, *trailing))
    return s


entry("array", "load",
      case("a[i, j] (2-D)", (f64,), f64, [normal(3)], kernel=k_load_store_2d, n=4, dim=(4, 3)),
      case("a[i] (vec3)", (V3,), V3, [normal(3)], kernel=k_store_vec))
entry("array", "store",
      case("out[i, j] = ... (2-D)", (f64,), f64, [normal(3)], kernel=k_load_store_2d, n=4, dim=(4, 3)),
      case("out[i] = vec3(...)", (V3,), V3, [normal(3)], kernel=k_store_vec))
entry("atomic", "atomic_add",
      case("wp.atomic_add(out, i % 2, a * a)", (f64,), f64, [normal()], kernel=k_atomic_add, n=5, out_len=2),
      case("wp.atomic_add(vec3)", (V3,), V3, [normal(3)], kernel=k_atomic_add_vec, n=5, out_len=2),
      case("out[i % 2] += sin(a)", (f64,), f64, [normal()], kernel=k_atomic_add_op, n=5, out_len=2))
entry("atomic", "atomic_sub",
      case("wp.atomic_sub(out, i % 2, a * a)", (f64,), f64, [normal()], kernel=k_atomic_sub, n=5, out_len=2),
      case("out[i % 2] -= exp(a)", (f64,), f64, [normal()], kernel=k_atomic_sub_op, n=5, out_len=2))
entry("atomic", "atomic_min",
      case("wp.atomic_min(out, i % 2, 2a)", (f64,), f64, [distinct()], kernel=k_atomic_min, n=5, out_len=2,
           out_init=1e3),
      case("wp.atomic_min(vec3) component-wise", (V3,), V3, [distinct(3)], kernel=k_atomic_min_vec, n=5, out_len=1,
           out_init=1e3))
entry("atomic", "atomic_max",
      case("wp.atomic_max(out, i % 2, a * a)", (f64,), f64, [distinct()], kernel=k_atomic_max, n=5, out_len=2,
           out_init=-1e3),
      case("wp.atomic_max(vec3) component-wise", (V3,), V3, [distinct(3)], kernel=k_atomic_max_vec, n=5, out_len=1,
           out_init=-1e3))

from .op_table_geometry import add_entries as _add_geometry_entries  # after entry/case exist

_add_geometry_entries(entry, case)

from .op_table_volume import add_entries as _add_volume_entries

_add_volume_entries(entry, case)

from . import op_table_mathx  # noqa: F401 - its entries join TABLE (mathx and noise domains)
from .op_table_texture import add_entries as _add_texture_entries

_add_texture_entries(entry, case)

#: (domain, name) of every op covered, for the registry coverage test.
COVERED = {(e.domain, e.name) for e in TABLE}

#: Ops deliberately not in this table. Tile ops are owned by the tiles engineer's own table
#: (``weft/ops/tile.py``, tests/tiles); nothing else may be listed here.
EXCLUDED_DOMAINS = frozenset({"tile"})
