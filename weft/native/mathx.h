// weft native: special functions and Warp builtins beyond the basic math (erf family, rint, copysign,
// bit_count, quat_rpy, lerp of matrices / quaternions / transforms). Every forward sits directly above its adjoint.
#pragma once

#include "weft.h"

namespace weft {
namespace detail {

WEFT_FN double erfinv_d(double x) {
    // initial guess from a closed-form approximation of the inverse, then Halley steps on erf(y) = x
    const double inf = ::exp(1000.0);  // +inf without <cmath> macros (also under NVRTC)
    if (x <= -1.0) return x == -1.0 ? -inf : inf - inf;
    if (x >= 1.0) return x == 1.0 ? inf : inf - inf;
    const double a = 0.147, two_over_pi_a = 2.0 / (3.14159265358979323846 * a);
    double l = ::log(1.0 - x * x);
    double t = two_over_pi_a + 0.5 * l;
    double y = ::sqrt(::sqrt(t * t - l / a) - t);
    y = x < 0.0 ? -y : y;
    for (int it = 0; it < 3; ++it) {
        double err = ::erf(y) - x;
        double d = 1.1283791670955126 * ::exp(-y * y);  // 2 / sqrt(pi) * exp(-y^2)
        y -= err / (d + y * err);
    }
    return y;
}

}  // namespace detail

template <typename T>
WEFT_FN WEFT_F(T) erf(T x) { return T(::erf(double(x))); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_erf(T x, T& adj_x, const T& adj_ret) {
    double xd = double(x);
    adj_x += T(double(adj_ret) * 1.1283791670955126 * ::exp(-xd * xd));
}

template <typename T>
WEFT_FN WEFT_F(T) erfc(T x) { return T(::erfc(double(x))); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_erfc(T x, T& adj_x, const T& adj_ret) {
    double xd = double(x);
    adj_x -= T(double(adj_ret) * 1.1283791670955126 * ::exp(-xd * xd));
}

template <typename T>
WEFT_FN WEFT_F(T) erfinv(T x) { return T(detail::erfinv_d(double(x))); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_erfinv(T x, T& adj_x, const T& adj_ret) {
    double y = detail::erfinv_d(double(x));
    adj_x += T(double(adj_ret) * 0.88622692545275801 * ::exp(y * y));  // sqrt(pi) / 2 * exp(y^2)
}

template <typename T>
WEFT_FN WEFT_F(T) erfcinv(T x) { return T(detail::erfinv_d(1.0 - double(x))); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_erfcinv(T x, T& adj_x, const T& adj_ret) {
    double y = detail::erfinv_d(1.0 - double(x));
    adj_x -= T(double(adj_ret) * 0.88622692545275801 * ::exp(y * y));
}

// round half to even (the current rounding mode); piecewise constant, so no adjoint
template <typename T>
WEFT_FN WEFT_F(T) rint(T x) { return T(::rint(double(x))); }

template <typename T>
WEFT_FN WEFT_F(T) copysign(T x, T y) { return T(::copysign(double(x), double(y))); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_copysign(T x, T y, T& adj_x, T& adj_y, const T& adj_ret) {
    bool flip = ::copysign(1.0, double(x)) != ::copysign(1.0, double(y));
    adj_x += flip ? T(-adj_ret) : adj_ret;
}

// number of set bits of an integer
template <typename T>
WEFT_FN typename detail::en_i<T, int32>::type bit_count(T x) {
    unsigned long long u = (unsigned long long)x;
    if (sizeof(T) < 8) u &= (1ull << (8 * sizeof(T))) - 1ull;
    int32 n = 0;
    while (u) {
        u &= u - 1ull;
        ++n;
    }
    return n;
}

// rotation from roll (x), pitch (y) and yaw (z), applied about the fixed axes in that order
template <typename T>
WEFT_FN quat_t<T> quat_rpy(T roll, T pitch, T yaw) {
    T cr = cos(T(roll * T(0.5))), sr = sin(T(roll * T(0.5)));
    T cp = cos(T(pitch * T(0.5))), sp = sin(T(pitch * T(0.5)));
    T cy = cos(T(yaw * T(0.5))), sy = sin(T(yaw * T(0.5)));
    return quat_t<T>(cy * sr * cp - sy * cr * sp, cy * cr * sp + sy * sr * cp, sy * cr * cp - cy * sr * sp,
                     cy * cr * cp + sy * sr * sp);
}
template <typename T>
WEFT_FN void adj_quat_rpy(T roll, T pitch, T yaw, T& adj_roll, T& adj_pitch, T& adj_yaw, const quat_t<T>& g) {
    T cr = cos(T(roll * T(0.5))), sr = sin(T(roll * T(0.5)));
    T cp = cos(T(pitch * T(0.5))), sp = sin(T(pitch * T(0.5)));
    T cy = cos(T(yaw * T(0.5))), sy = sin(T(yaw * T(0.5)));
    // derivatives of (x, y, z, w) with respect to the half angles
    T dr = g.x * (cy * cr * cp + sy * sr * sp) + g.y * (-cy * sr * sp + sy * cr * cp) +
           g.z * (-sy * sr * cp - cy * cr * sp) + g.w * (-cy * sr * cp + sy * cr * sp);
    T dp = g.x * (-cy * sr * sp - sy * cr * cp) + g.y * (cy * cr * cp - sy * sr * sp) +
           g.z * (-sy * cr * sp - cy * sr * cp) + g.w * (-cy * cr * sp + sy * sr * cp);
    T dy = g.x * (-sy * sr * cp - cy * cr * sp) + g.y * (-sy * cr * sp + cy * sr * cp) +
           g.z * (cy * cr * cp + sy * sr * sp) + g.w * (-sy * cr * cp + cy * sr * sp);
    adj_roll += T(0.5) * dr;
    adj_pitch += T(0.5) * dp;
    adj_yaw += T(0.5) * dy;
}

// lerp of quaternions and transforms (component-wise, as Warp does) and of matrices
template <typename T>
WEFT_FN quat_t<T> lerp(const quat_t<T>& a, const quat_t<T>& b, typename detail::id_<T>::type t) {
    quat_t<T> r;
    for (int i = 0; i < 4; ++i) r[i] = a[i] * (T(1) - t) + b[i] * t;
    return r;
}
template <typename T>
WEFT_FN void adj_lerp(const quat_t<T>& a, const quat_t<T>& b, typename detail::id_<T>::type t, quat_t<T>& adj_a,
                      quat_t<T>& adj_b, T& adj_t, const quat_t<T>& adj_ret) {
    for (int i = 0; i < 4; ++i) {
        adj_a[i] += adj_ret[i] * (T(1) - t);
        adj_b[i] += adj_ret[i] * t;
        adj_t += adj_ret[i] * (b[i] - a[i]);
    }
}

template <typename T>
WEFT_FN transform_t<T> lerp(const transform_t<T>& a, const transform_t<T>& b, typename detail::id_<T>::type t) {
    transform_t<T> r;
    for (int i = 0; i < 7; ++i) r[i] = a[i] * (T(1) - t) + b[i] * t;
    return r;
}
template <typename T>
WEFT_FN void adj_lerp(const transform_t<T>& a, const transform_t<T>& b, typename detail::id_<T>::type t,
                      transform_t<T>& adj_a, transform_t<T>& adj_b, T& adj_t, const transform_t<T>& adj_ret) {
    for (int i = 0; i < 7; ++i) {
        adj_a[i] += adj_ret[i] * (T(1) - t);
        adj_b[i] += adj_ret[i] * t;
        adj_t += adj_ret[i] * (b[i] - a[i]);
    }
}

template <unsigned R, unsigned C, typename T>
WEFT_FN mat_t<R, C, T> lerp(const mat_t<R, C, T>& a, const mat_t<R, C, T>& b, typename detail::id_<T>::type t) {
    mat_t<R, C, T> r;
    for (unsigned i = 0; i < R; ++i)
        for (unsigned j = 0; j < C; ++j) r.row[i].c[j] = a.row[i].c[j] * (T(1) - t) + b.row[i].c[j] * t;
    return r;
}
template <unsigned R, unsigned C, typename T>
WEFT_FN void adj_lerp(const mat_t<R, C, T>& a, const mat_t<R, C, T>& b, typename detail::id_<T>::type t,
                      mat_t<R, C, T>& adj_a, mat_t<R, C, T>& adj_b, T& adj_t, const mat_t<R, C, T>& adj_ret) {
    for (unsigned i = 0; i < R; ++i)
        for (unsigned j = 0; j < C; ++j) {
            T g = adj_ret.row[i].c[j];
            adj_a.row[i].c[j] += g * (T(1) - t);
            adj_b.row[i].c[j] += g * t;
            adj_t += g * (b.row[i].c[j] - a.row[i].c[j]);
        }
}

// bitwise operators of integer vectors and matrices, component-wise (no adjoints: integers)
#define WEFT_VEC_BITOP_(op)                                                                          \
    template <unsigned N, typename T, typename detail::en_i<T, int>::type = 0>                        \
    WEFT_FN vec_t<N, T> operator op(const vec_t<N, T>& a, const vec_t<N, T>& b) {                     \
        vec_t<N, T> r;                                                                                \
        for (unsigned i = 0; i < N; ++i) r.c[i] = T(a.c[i] op b.c[i]);                               \
        return r;                                                                                     \
    }                                                                                                 \
    template <unsigned R, unsigned C, typename T, typename detail::en_i<T, int>::type = 0>            \
    WEFT_FN mat_t<R, C, T> operator op(const mat_t<R, C, T>& a, const mat_t<R, C, T>& b) {            \
        mat_t<R, C, T> r;                                                                             \
        for (unsigned i = 0; i < R; ++i) r.row[i] = a.row[i] op b.row[i];                           \
        return r;                                                                                     \
    }
WEFT_VEC_BITOP_(&)
WEFT_VEC_BITOP_(|)
WEFT_VEC_BITOP_(^)
WEFT_VEC_BITOP_(<<)
WEFT_VEC_BITOP_(>>)
#undef WEFT_VEC_BITOP_

template <unsigned N, typename T, typename detail::en_i<T, int>::type = 0>
WEFT_FN vec_t<N, T> operator~(const vec_t<N, T>& a) {
    vec_t<N, T> r;
    for (unsigned i = 0; i < N; ++i) r.c[i] = T(~a.c[i]);
    return r;
}
template <unsigned R, unsigned C, typename T, typename detail::en_i<T, int>::type = 0>
WEFT_FN mat_t<R, C, T> operator~(const mat_t<R, C, T>& a) {
    mat_t<R, C, T> r;
    for (unsigned i = 0; i < R; ++i) r.row[i] = ~a.row[i];
    return r;
}

// nonzero(x): 1 where x != 0, else 0 (in x's type)
template <typename T>
WEFT_FN WEFT_A(T) nonzero(T x) { return x != T(0) ? T(1) : T(0); }

// ---- reductions and component-wise forms of vectors (Warp's vector overloads)
// argmax(v) / argmin(v): the index of the largest / smallest component (the first on ties; max(v) / min(v) are in vec.h)
template <unsigned N, typename T>
WEFT_FN unsigned arg_extreme(const vec_t<N, T>& v, bool largest) {
    unsigned k = 0;
    for (unsigned i = 1; i < N; ++i)
        if (largest ? v.c[i] > v.c[k] : v.c[i] < v.c[k]) k = i;
    return k;
}
template <unsigned N, typename T>
WEFT_FN uint32 argmax(const vec_t<N, T>& v) { return arg_extreme(v, true); }
template <unsigned N, typename T>
WEFT_FN uint32 argmin(const vec_t<N, T>& v) { return arg_extreme(v, false); }

template <unsigned N, typename T>
WEFT_FN vec_t<N, T> sign(const vec_t<N, T>& v) {
    vec_t<N, T> r;
    for (unsigned i = 0; i < N; ++i) r.c[i] = v.c[i] < T(0) ? T(-1) : T(1);
    return r;
}
template <unsigned N, typename T>
WEFT_FN vec_t<N, T> mod(const vec_t<N, T>& a, const vec_t<N, T>& b) {
    vec_t<N, T> r;
    for (unsigned i = 0; i < N; ++i) r.c[i] = mod(a.c[i], b.c[i]);
    return r;
}
template <unsigned N, typename T>
WEFT_FN void adj_mod(const vec_t<N, T>& a, const vec_t<N, T>& b, vec_t<N, T>& adj_a, vec_t<N, T>& adj_b,
                     const vec_t<N, T>& adj_ret) {
    for (unsigned i = 0; i < N; ++i) adj_mod(a.c[i], b.c[i], adj_a.c[i], adj_b.c[i], adj_ret.c[i]);
}

// s / m: component-wise
template <unsigned R, unsigned C, typename T>
WEFT_FN mat_t<R, C, T> div(typename detail::id_<T>::type s, const mat_t<R, C, T>& m) {
    mat_t<R, C, T> r;
    for (unsigned i = 0; i < R; ++i)
        for (unsigned j = 0; j < C; ++j) r.row[i].c[j] = s / m.row[i].c[j];
    return r;
}
template <unsigned R, unsigned C, typename T>
WEFT_FN void adj_div(typename detail::id_<T>::type s, const mat_t<R, C, T>& m, T& adj_s, mat_t<R, C, T>& adj_m,
                     const mat_t<R, C, T>& adj_ret) {
    for (unsigned i = 0; i < R; ++i)
        for (unsigned j = 0; j < C; ++j) {
            const T x = m.row[i].c[j];
            adj_s += adj_ret.row[i].c[j] / x;
            adj_m.row[i].c[j] -= adj_ret.row[i].c[j] * s / (x * x);
        }
}

// a 4x4 matrix applied to a point (w = 1, no division) or a direction (w = 0)
template <typename T>
WEFT_FN vec_t<3, T> transform_point(const mat_t<4, 4, T>& m, const vec_t<3, T>& p) {
    vec_t<3, T> r;
    for (int i = 0; i < 3; ++i) r.c[i] = m.row[i].c[0] * p.c[0] + m.row[i].c[1] * p.c[1] + m.row[i].c[2] * p.c[2] + m.row[i].c[3];
    return r;
}
template <typename T>
WEFT_FN void adj_transform_point(const mat_t<4, 4, T>& m, const vec_t<3, T>& p, mat_t<4, 4, T>& adj_m,
                                 vec_t<3, T>& adj_p, const vec_t<3, T>& adj_ret) {
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) {
            adj_m.row[i].c[j] += adj_ret.c[i] * p.c[j];
            adj_p.c[j] += m.row[i].c[j] * adj_ret.c[i];
        }
        adj_m.row[i].c[3] += adj_ret.c[i];
    }
}
template <typename T>
WEFT_FN vec_t<3, T> transform_vector(const mat_t<4, 4, T>& m, const vec_t<3, T>& v) {
    vec_t<3, T> r;
    for (int i = 0; i < 3; ++i) r.c[i] = m.row[i].c[0] * v.c[0] + m.row[i].c[1] * v.c[1] + m.row[i].c[2] * v.c[2];
    return r;
}
template <typename T>
WEFT_FN void adj_transform_vector(const mat_t<4, 4, T>& m, const vec_t<3, T>& v, mat_t<4, 4, T>& adj_m,
                                  vec_t<3, T>& adj_v, const vec_t<3, T>& adj_ret) {
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            adj_m.row[i].c[j] += adj_ret.c[i] * v.c[j];
            adj_v.c[j] += m.row[i].c[j] * adj_ret.c[i];
        }
}

// lower_bound(arr, [begin, end,] value): the first index i in [begin, end) of the sorted 1-D array with
// arr[i] >= value, or end - 1 (the last index of the range) if there is none, as Warp's lower_bound returns the
// closest element at or above the value; a template on the array type, which has data, shape and byte strides
template <typename A, typename T>
WEFT_FN int32 lower_bound(const A& arr, int32 begin, int32 end, T value) {
    int32 last = end - 1;
    while (begin < last) {
        const int32 mid = begin + (last - begin) / 2;
        const T v = *reinterpret_cast<const T*>(reinterpret_cast<const char*>(arr.data) + mid * arr.strides[0]);
        if (v < value) begin = mid + 1; else last = mid;
    }
    return begin;
}
template <typename A, typename T>
WEFT_FN int32 lower_bound(const A& arr, T value) { return lower_bound(arr, 0, arr.shape[0], value); }

// the rotation of a 4x4 (affine) matrix: quat_from_matrix of its upper-left 3x3 block
template <typename T>
WEFT_FN quat_t<T> quat_from_matrix(const mat_t<4, 4, T>& m) {
    mat_t<3, 3, T> r;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) r.row[i].c[j] = m.row[i].c[j];
    return quat_from_matrix(r);
}
template <typename T>
WEFT_FN void adj_quat_from_matrix(const mat_t<4, 4, T>& m, mat_t<4, 4, T>& adj_m, const quat_t<T>& adj_ret) {
    mat_t<3, 3, T> r, adj_r;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) r.row[i].c[j] = m.row[i].c[j];
    adj_quat_from_matrix(r, adj_r, adj_ret);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) adj_m.row[i].c[j] += adj_r.row[i].c[j];
}

}  // namespace weft
