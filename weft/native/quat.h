// weft native: quaternions quat_t<T> = (x, y, z, w) with w the real part; Hamilton product.
#pragma once

#include "mat.h"

namespace weft {

template <typename T>
struct quat_t {
    T x, y, z, w;

    WEFT_FN quat_t() : x(0), y(0), z(0), w(0) {}
    template <typename A, typename B, typename C, typename D>
    WEFT_FN quat_t(A x_, B y_, C z_, D w_) : x(T(x_)), y(T(y_)), z(T(z_)), w(T(w_)) {}
    WEFT_FN quat_t(const vec_t<3, T>& v, T w_) : x(v.c[0]), y(v.c[1]), z(v.c[2]), w(w_) {}
    template <typename U>
    WEFT_FN explicit quat_t(const quat_t<U>& o) : x(T(o.x)), y(T(o.y)), z(T(o.z)), w(T(o.w)) {}
    WEFT_FN explicit quat_t(const vec_t<4, T>& v) : x(v.c[0]), y(v.c[1]), z(v.c[2]), w(v.c[3]) {}

    WEFT_FN T& operator[](int i) { return (&x)[i]; }
    WEFT_FN const T& operator[](int i) const { return (&x)[i]; }

    WEFT_FN vec_t<3, T> v() const { return vec_t<3, T>(x, y, z); }
};

typedef quat_t<float> quatf;
typedef quat_t<double> quatd;
typedef quat_t<half> quath;
typedef quatf quat;

template <typename T>
WEFT_FN quat_t<T> operator+(const quat_t<T>& a, const quat_t<T>& b) {
    return quat_t<T>(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}
template <typename T>
WEFT_FN quat_t<T> operator-(const quat_t<T>& a, const quat_t<T>& b) {
    return quat_t<T>(a.x - b.x, a.y - b.y, a.z - b.z, a.w - b.w);
}
template <typename T>
WEFT_FN quat_t<T> operator-(const quat_t<T>& a) { return quat_t<T>(-a.x, -a.y, -a.z, -a.w); }
template <typename T>
WEFT_FN quat_t<T> operator*(const quat_t<T>& a, const quat_t<T>& b) {
    return quat_t<T>(a.w * b.x + b.w * a.x + a.y * b.z - b.y * a.z, a.w * b.y + b.w * a.y + a.z * b.x - b.z * a.x,
                     a.w * b.z + b.w * a.z + a.x * b.y - b.x * a.y, a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z);
}
template <typename T>
WEFT_FN quat_t<T> operator*(const quat_t<T>& a, typename detail::id_<T>::type s) {
    return quat_t<T>(a.x * s, a.y * s, a.z * s, a.w * s);
}
template <typename T>
WEFT_FN quat_t<T> operator*(typename detail::id_<T>::type s, const quat_t<T>& a) { return a * s; }
template <typename T>
WEFT_FN quat_t<T> operator/(const quat_t<T>& a, typename detail::id_<T>::type s) {
    return quat_t<T>(a.x / s, a.y / s, a.z / s, a.w / s);
}
template <typename T>
WEFT_FN bool operator==(const quat_t<T>& a, const quat_t<T>& b) {
    return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w;
}
template <typename T>
WEFT_FN bool operator!=(const quat_t<T>& a, const quat_t<T>& b) { return !(a == b); }
template <typename T>
WEFT_FN quat_t<T>& operator+=(quat_t<T>& a, const quat_t<T>& b) { return a = a + b; }
template <typename T>
WEFT_FN quat_t<T>& operator-=(quat_t<T>& a, const quat_t<T>& b) { return a = a - b; }

// ---------------------------------------------------------------------------------------------
// arithmetic

template <typename T>
WEFT_FN quat_t<T> add(const quat_t<T>& a, const quat_t<T>& b) { return a + b; }
template <typename T>
WEFT_FN void adj_add(const quat_t<T>&, const quat_t<T>&, quat_t<T>& adj_a, quat_t<T>& adj_b,
                     const quat_t<T>& adj_ret) {
    adj_a += adj_ret;
    adj_b += adj_ret;
}

template <typename T>
WEFT_FN quat_t<T> sub(const quat_t<T>& a, const quat_t<T>& b) { return a - b; }
template <typename T>
WEFT_FN void adj_sub(const quat_t<T>&, const quat_t<T>&, quat_t<T>& adj_a, quat_t<T>& adj_b,
                     const quat_t<T>& adj_ret) {
    adj_a += adj_ret;
    adj_b -= adj_ret;
}

template <typename T>
WEFT_FN quat_t<T> neg(const quat_t<T>& a) { return -a; }
template <typename T>
WEFT_FN void adj_neg(const quat_t<T>&, quat_t<T>& adj_a, const quat_t<T>& adj_ret) { adj_a -= adj_ret; }

// Hamilton product
template <typename T>
WEFT_FN quat_t<T> mul(const quat_t<T>& a, const quat_t<T>& b) { return a * b; }
template <typename T>
WEFT_FN void adj_mul(const quat_t<T>& a, const quat_t<T>& b, quat_t<T>& adj_a, quat_t<T>& adj_b,
                     const quat_t<T>& adj_ret) {
    // right/left multiplication matrices transpose to multiplication by the conjugate
    adj_a += adj_ret * quat_t<T>(-b.x, -b.y, -b.z, b.w);
    adj_b += quat_t<T>(-a.x, -a.y, -a.z, a.w) * adj_ret;
}

template <typename T>
WEFT_FN quat_t<T> mul(const quat_t<T>& a, typename detail::id_<T>::type s) { return a * s; }
template <typename T>
WEFT_FN void adj_mul(const quat_t<T>& a, typename detail::id_<T>::type s, quat_t<T>& adj_a, T& adj_s,
                     const quat_t<T>& adj_ret) {
    adj_a += adj_ret * s;
    adj_s += a.x * adj_ret.x + a.y * adj_ret.y + a.z * adj_ret.z + a.w * adj_ret.w;
}

template <typename T>
WEFT_FN quat_t<T> mul(typename detail::id_<T>::type s, const quat_t<T>& a) { return a * s; }
template <typename T>
WEFT_FN void adj_mul(typename detail::id_<T>::type s, const quat_t<T>& a, T& adj_s, quat_t<T>& adj_a,
                     const quat_t<T>& adj_ret) {
    adj_a += adj_ret * s;
    adj_s += a.x * adj_ret.x + a.y * adj_ret.y + a.z * adj_ret.z + a.w * adj_ret.w;
}

template <typename T>
WEFT_FN quat_t<T> div(const quat_t<T>& a, typename detail::id_<T>::type s) { return a / s; }
template <typename T>
WEFT_FN void adj_div(const quat_t<T>& a, typename detail::id_<T>::type s, quat_t<T>& adj_a, T& adj_s,
                     const quat_t<T>& adj_ret) {
    adj_a += adj_ret / s;
    adj_s -= (a.x * adj_ret.x + a.y * adj_ret.y + a.z * adj_ret.z + a.w * adj_ret.w) / (s * s);
}

// s / q: component-wise, as Warp's div(Scalar, Quaternion)
template <typename T>
WEFT_FN quat_t<T> div(typename detail::id_<T>::type s, const quat_t<T>& a) {
    return quat_t<T>(s / a.x, s / a.y, s / a.z, s / a.w);
}
template <typename T>
WEFT_FN void adj_div(typename detail::id_<T>::type s, const quat_t<T>& a, T& adj_s, quat_t<T>& adj_a,
                     const quat_t<T>& adj_ret) {
    for (int i = 0; i < 4; ++i) {
        adj_s += adj_ret[i] / a[i];
        adj_a[i] -= adj_ret[i] * s / (a[i] * a[i]);
    }
}

template <typename T>
WEFT_FN T dot(const quat_t<T>& a, const quat_t<T>& b) { return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }
template <typename T>
WEFT_FN void adj_dot(const quat_t<T>& a, const quat_t<T>& b, quat_t<T>& adj_a, quat_t<T>& adj_b, const T& adj_ret) {
    adj_a += b * adj_ret;
    adj_b += a * adj_ret;
}

template <typename T>
WEFT_FN T length_sq(const quat_t<T>& a) { return dot(a, a); }
template <typename T>
WEFT_FN void adj_length_sq(const quat_t<T>& a, quat_t<T>& adj_a, const T& adj_ret) { adj_a += a * (T(2) * adj_ret); }

template <typename T>
WEFT_FN T length(const quat_t<T>& a) { return sqrt(dot(a, a)); }
template <typename T>
WEFT_FN void adj_length(const quat_t<T>& a, quat_t<T>& adj_a, const T& adj_ret) {
    T l = sqrt(dot(a, a));
    if (l > T(0)) adj_a += a * (adj_ret / l);
}

// zero quaternion -> zero quaternion
template <typename T>
WEFT_FN quat_t<T> normalize(const quat_t<T>& a) {
    T l = sqrt(dot(a, a));
    if (l > T(0)) return a * (T(1) / l);
    return quat_t<T>();
}
template <typename T>
WEFT_FN void adj_normalize(const quat_t<T>& a, quat_t<T>& adj_a, const quat_t<T>& adj_ret) {
    T l = sqrt(dot(a, a));
    if (l > T(0)) {
        T inv = T(1) / l;
        quat_t<T> n = a * inv;
        adj_a += (adj_ret - n * dot(n, adj_ret)) * inv;
    }
}

template <typename T>
WEFT_FN T extract(const quat_t<T>& a, int i) { return a[i]; }
template <typename T>
WEFT_FN void adj_extract(const quat_t<T>&, int i, quat_t<T>& adj_a, int&, const T& adj_ret) { adj_a[i] += adj_ret; }

template <typename T>
WEFT_FN void assign_inplace(quat_t<T>& a, int i, typename detail::id_<T>::type value) { a[i] = value; }
template <typename T>
WEFT_FN void adj_assign_inplace(quat_t<T>&, int i, typename detail::id_<T>::type, quat_t<T>& adj_a, int&,
                                T& adj_value) {
    adj_value += adj_a[i];
    adj_a[i] = T(0);
}

template <typename T>
WEFT_FN quat_t<T> assign_copy(const quat_t<T>& a, int i, typename detail::id_<T>::type value) {
    quat_t<T> r = a;
    r[i] = value;
    return r;
}
template <typename T>
WEFT_FN void adj_assign_copy(const quat_t<T>&, int i, typename detail::id_<T>::type, quat_t<T>& adj_a, int&,
                             T& adj_value, const quat_t<T>& adj_ret) {
    quat_t<T> g = adj_ret;
    adj_value += g[i];
    g[i] = T(0);
    adj_a += g;
}

// ---------------------------------------------------------------------------------------------
// rotations

template <typename T>
WEFT_FN quat_t<T> quat_identity() { return quat_t<T>(T(0), T(0), T(0), T(1)); }
template <typename T>
WEFT_FN void adj_quat_identity(const quat_t<T>&) {}

// conjugate (the inverse of a unit quaternion)
template <typename T>
WEFT_FN quat_t<T> quat_inverse(const quat_t<T>& q) { return quat_t<T>(-q.x, -q.y, -q.z, q.w); }
template <typename T>
WEFT_FN void adj_quat_inverse(const quat_t<T>&, quat_t<T>& adj_q, const quat_t<T>& adj_ret) {
    adj_q.x -= adj_ret.x;
    adj_q.y -= adj_ret.y;
    adj_q.z -= adj_ret.z;
    adj_q.w += adj_ret.w;
}

template <typename T>
WEFT_FN quat_t<T> quat_from_axis_angle(const vec_t<3, T>& axis, T angle) {
    T h = angle * T(0.5);
    return quat_t<T>(axis * sin(h), cos(h));
}
template <typename T>
WEFT_FN void adj_quat_from_axis_angle(const vec_t<3, T>& axis, T angle, vec_t<3, T>& adj_axis, T& adj_angle,
                                      const quat_t<T>& adj_ret) {
    T h = angle * T(0.5);
    T s = sin(h), c = cos(h);
    vec_t<3, T> g = adj_ret.v();
    adj_axis += g * s;
    adj_angle += T(0.5) * (c * dot(axis, g) - s * adj_ret.w);
}

// axis and angle in [0, pi] of a rotation: angle = 2 atan2(|v|, |w|), axis = sign(w) v / |v| (both invariant to
// the scale of q); axis (1, 0, 0) when v = 0. quat_from_axis_angle(axis, angle) is +-normalize(q).
template <typename T>
WEFT_FN void quat_to_axis_angle(const quat_t<T>& q, vec_t<3, T>& axis, T& angle) {
    vec_t<3, T> v = q.v();
    T s = length(v);
    angle = T(2) * atan2(s, abs(q.w));
    axis = s > T(0) ? v * ((q.w < T(0) ? T(-1) : T(1)) / s) : vec_t<3, T>(T(1), T(0), T(0));
}
template <typename T>
WEFT_FN void adj_quat_to_axis_angle(const quat_t<T>& q, const vec_t<3, T>&, T, quat_t<T>& adj_q,
                                    const vec_t<3, T>& adj_axis, const T& adj_angle) {
    vec_t<3, T> v = q.v();
    T s = length(v);
    if (!(s > T(0))) return;
    const T sign = q.w < T(0) ? T(-1) : T(1);
    vec_t<3, T> av;
    adj_normalize(v, av, adj_axis * sign);
    T w = abs(q.w);
    T d = s * s + w * w;
    // d|w|/dw: 0 at w = 0 (the kink between the two one-sided derivatives), as weft's and Warp's abs adjoint
    const T dabs = q.w > T(0) ? T(1) : (q.w < T(0) ? T(-1) : T(0));
    adj_q.w -= T(2) * adj_angle * s / d * dabs;
    av += v * (T(2) * adj_angle * w / d / s);
    adj_q.x += av.c[0];
    adj_q.y += av.c[1];
    adj_q.z += av.c[2];
}

// rotate v by q: v (2w^2 - 1) + 2 w (u x v) + 2 u (u . v), u = (x, y, z)
template <typename T>
WEFT_FN vec_t<3, T> quat_rotate(const quat_t<T>& q, const vec_t<3, T>& v) {
    vec_t<3, T> u = q.v();
    return v * (T(2) * q.w * q.w - T(1)) + cross(u, v) * (T(2) * q.w) + u * (T(2) * dot(u, v));
}
template <typename T>
WEFT_FN void adj_quat_rotate(const quat_t<T>& q, const vec_t<3, T>& v, quat_t<T>& adj_q, vec_t<3, T>& adj_v,
                             const vec_t<3, T>& adj_ret) {
    vec_t<3, T> u = q.v();
    const vec_t<3, T>& g = adj_ret;
    T uv = dot(u, v), ug = dot(u, g);
    adj_v += g * (T(2) * q.w * q.w - T(1)) + cross(g, u) * (T(2) * q.w) + u * (T(2) * ug);
    vec_t<3, T> au = cross(v, g) * (T(2) * q.w) + g * (T(2) * uv) + v * (T(2) * ug);
    adj_q.x += au.c[0];
    adj_q.y += au.c[1];
    adj_q.z += au.c[2];
    adj_q.w += T(4) * q.w * dot(v, g) + T(2) * dot(g, cross(u, v));
}

// rotate v by the inverse (conjugate) of q
template <typename T>
WEFT_FN vec_t<3, T> quat_rotate_inv(const quat_t<T>& q, const vec_t<3, T>& v) {
    vec_t<3, T> u = q.v();
    return v * (T(2) * q.w * q.w - T(1)) - cross(u, v) * (T(2) * q.w) + u * (T(2) * dot(u, v));
}
template <typename T>
WEFT_FN void adj_quat_rotate_inv(const quat_t<T>& q, const vec_t<3, T>& v, quat_t<T>& adj_q, vec_t<3, T>& adj_v,
                                 const vec_t<3, T>& adj_ret) {
    vec_t<3, T> u = q.v();
    const vec_t<3, T>& g = adj_ret;
    T uv = dot(u, v), ug = dot(u, g);
    adj_v += g * (T(2) * q.w * q.w - T(1)) - cross(g, u) * (T(2) * q.w) + u * (T(2) * ug);
    vec_t<3, T> au = g * (T(2) * uv) + v * (T(2) * ug) - cross(v, g) * (T(2) * q.w);
    adj_q.x += au.c[0];
    adj_q.y += au.c[1];
    adj_q.z += au.c[2];
    adj_q.w += T(4) * q.w * dot(v, g) - T(2) * dot(g, cross(u, v));
}

// rotation matrix of a unit quaternion: (2 w^2 - 1) I + 2 w [u]x + 2 u u^T, whose columns are quat_rotate of the axes
// also for a quaternion that is not exactly unit (as in Warp, so its gradient off the unit sphere agrees with
// quat_rotate's)
template <typename T>
WEFT_FN mat_t<3, 3, T> quat_to_matrix(const quat_t<T>& q) {
    T x = q.x, y = q.y, z = q.z, w = q.w;
    T d = T(2) * w * w - T(1);
    return mat_t<3, 3, T>(d + T(2) * x * x, T(2) * (x * y - z * w), T(2) * (x * z + y * w),
                          T(2) * (x * y + z * w), d + T(2) * y * y, T(2) * (y * z - x * w),
                          T(2) * (x * z - y * w), T(2) * (y * z + x * w), d + T(2) * z * z);
}
template <typename T>
WEFT_FN void adj_quat_to_matrix(const quat_t<T>& q, quat_t<T>& adj_q, const mat_t<3, 3, T>& adj_ret) {
    T x = q.x, y = q.y, z = q.z, w = q.w;
    const mat_t<3, 3, T>& G = adj_ret;
    T g00 = G.row[0].c[0], g01 = G.row[0].c[1], g02 = G.row[0].c[2];
    T g10 = G.row[1].c[0], g11 = G.row[1].c[1], g12 = G.row[1].c[2];
    T g20 = G.row[2].c[0], g21 = G.row[2].c[1], g22 = G.row[2].c[2];
    adj_q.x += T(2) * (T(2) * x * g00 + y * (g01 + g10) + z * (g02 + g20) + w * (g21 - g12));
    adj_q.y += T(2) * (T(2) * y * g11 + x * (g01 + g10) + z * (g12 + g21) + w * (g02 - g20));
    adj_q.z += T(2) * (T(2) * z * g22 + x * (g02 + g20) + y * (g12 + g21) + w * (g10 - g01));
    adj_q.w += T(2) * (T(2) * w * (g00 + g11 + g22) + x * (g21 - g12) + y * (g02 - g20) + z * (g10 - g01));
}

namespace detail {
// Shepperd's method: pick the largest of (trace, m00, m11, m22).  Each branch computes one component as s/4
// (s = 2 sqrt(t), t = 1 + sum_k sgn_k m_kk) and the other three as (m[i1][j1] + sg * m[i2][j2]) / s.
// The branch table is a compile-time constant so all indices resolve statically (no local memory on GPU).
struct qfm_branch {
    int big;        // index (x=0,y=1,z=2,w=3) of the s/4 component
    int sgn[3];     // diagonal signs in t
    int idx[3][5];  // for the other components: comp, i1, j1, i2, j2
    int sg[3];      // sign of the second term
};
template <int B>
WEFT_FN constexpr qfm_branch qfm_table() {
    return B == 0   ? qfm_branch{3, {1, 1, 1}, {{0, 2, 1, 1, 2}, {1, 0, 2, 2, 0}, {2, 1, 0, 0, 1}}, {-1, -1, -1}}
           : B == 1 ? qfm_branch{0, {1, -1, -1}, {{3, 2, 1, 1, 2}, {1, 0, 1, 1, 0}, {2, 0, 2, 2, 0}}, {-1, 1, 1}}
           : B == 2 ? qfm_branch{1, {-1, 1, -1}, {{3, 0, 2, 2, 0}, {0, 0, 1, 1, 0}, {2, 1, 2, 2, 1}}, {-1, 1, 1}}
                    : qfm_branch{2, {-1, -1, 1}, {{3, 1, 0, 0, 1}, {0, 0, 2, 2, 0}, {1, 1, 2, 2, 1}}, {-1, 1, 1}};
}
template <typename T>
WEFT_FN int qfm_case(const mat_t<3, 3, T>& m) {
    // Warp's branch choice (ties included): the w branch for a trace >= 0, else the largest diagonal element, the
    // first one on ties
    T m00 = m.row[0].c[0], m11 = m.row[1].c[1], m22 = m.row[2].c[2];
    if (m00 + m11 + m22 >= T(0)) return 0;
    int d = m11 > m00 ? 1 : 0;
    if (m22 > (d == 0 ? m00 : m11)) d = 2;
    return d + 1;
}
template <int B, typename T>
WEFT_FN quat_t<T> qfm_fwd(const mat_t<3, 3, T>& m) {
    constexpr qfm_branch b = qfm_table<B>();
    T t = T(1) + T(b.sgn[0]) * m.row[0].c[0] + T(b.sgn[1]) * m.row[1].c[1] + T(b.sgn[2]) * m.row[2].c[2];
    T s = T(2) * sqrt(t);
    T inv = T(1) / s;
    quat_t<T> q;
    q[b.big] = T(0.25) * s;
    for (int k = 0; k < 3; ++k)
        q[b.idx[k][0]] = (m.row[b.idx[k][1]].c[b.idx[k][2]] + T(b.sg[k]) * m.row[b.idx[k][3]].c[b.idx[k][4]]) * inv;
    return q;
}
template <int B, typename T>
WEFT_FN void qfm_adj(const mat_t<3, 3, T>& m, mat_t<3, 3, T>& adj_m, const quat_t<T>& adj_ret) {
    constexpr qfm_branch b = qfm_table<B>();
    T t = T(1) + T(b.sgn[0]) * m.row[0].c[0] + T(b.sgn[1]) * m.row[1].c[1] + T(b.sgn[2]) * m.row[2].c[2];
    T s = T(2) * sqrt(t);
    T inv = T(1) / s;
    T adj_s = T(0.25) * adj_ret[b.big];
    for (int k = 0; k < 3; ++k) {
        T g = adj_ret[b.idx[k][0]];
        T num = m.row[b.idx[k][1]].c[b.idx[k][2]] + T(b.sg[k]) * m.row[b.idx[k][3]].c[b.idx[k][4]];
        adj_m.row[b.idx[k][1]].c[b.idx[k][2]] += g * inv;
        adj_m.row[b.idx[k][3]].c[b.idx[k][4]] += T(b.sg[k]) * g * inv;
        adj_s -= g * num * inv * inv;
    }
    T adj_t = adj_s * T(2) * inv;  // ds/dt = 1/sqrt(t) = 2/s
    for (int k = 0; k < 3; ++k) adj_m.row[k].c[k] += T(b.sgn[k]) * adj_t;
}
}  // namespace detail

// the result is normalised, as in Warp: a unit quaternion also for a matrix that is not exactly a rotation
template <typename T>
WEFT_FN quat_t<T> quat_from_matrix(const mat_t<3, 3, T>& m) {
    switch (detail::qfm_case(m)) {
        case 0: return normalize(detail::qfm_fwd<0>(m));
        case 1: return normalize(detail::qfm_fwd<1>(m));
        case 2: return normalize(detail::qfm_fwd<2>(m));
        default: return normalize(detail::qfm_fwd<3>(m));
    }
}
template <typename T>
WEFT_FN void adj_quat_from_matrix(const mat_t<3, 3, T>& m, mat_t<3, 3, T>& adj_m, const quat_t<T>& adj_ret) {
    quat_t<T> adj_q;
    switch (detail::qfm_case(m)) {
        case 0: adj_normalize(detail::qfm_fwd<0>(m), adj_q, adj_ret); detail::qfm_adj<0>(m, adj_m, adj_q); break;
        case 1: adj_normalize(detail::qfm_fwd<1>(m), adj_q, adj_ret); detail::qfm_adj<1>(m, adj_m, adj_q); break;
        case 2: adj_normalize(detail::qfm_fwd<2>(m), adj_q, adj_ret); detail::qfm_adj<2>(m, adj_m, adj_q); break;
        default: adj_normalize(detail::qfm_fwd<3>(m), adj_q, adj_ret); detail::qfm_adj<3>(m, adj_m, adj_q); break;
    }
}

// spherical linear interpolation between unit quaternions along the shortest arc, written as Warp defines it:
// a * quat_from_axis_angle(axis, t angle) with (axis, angle) = quat_to_axis_angle(quat_inverse(a) * b), so the
// gradient also off the unit sphere is that of this composition
template <typename T>
WEFT_FN quat_t<T> quat_slerp(const quat_t<T>& a, const quat_t<T>& b, T t) {
    vec_t<3, T> axis;
    T angle;
    quat_to_axis_angle(mul(quat_inverse(a), b), axis, angle);
    return mul(a, quat_from_axis_angle(axis, t * angle));
}
template <typename T>
WEFT_FN void adj_quat_slerp(const quat_t<T>& a, const quat_t<T>& b, T t, quat_t<T>& adj_a, quat_t<T>& adj_b,
                            T& adj_t, const quat_t<T>& adj_ret) {
    const quat_t<T> inv = quat_inverse(a);
    const quat_t<T> rel = mul(inv, b);
    vec_t<3, T> axis;
    T angle;
    quat_to_axis_angle(rel, axis, angle);
    const quat_t<T> step = quat_from_axis_angle(axis, t * angle);
    quat_t<T> adj_step, adj_rel, adj_inv;
    vec_t<3, T> adj_axis;
    T adj_tangle = T(0);
    adj_mul(a, step, adj_a, adj_step, adj_ret);
    adj_quat_from_axis_angle(axis, t * angle, adj_axis, adj_tangle, adj_step);
    adj_t += adj_tangle * angle;
    const T adj_angle = adj_tangle * t;
    adj_quat_to_axis_angle(rel, axis, angle, adj_rel, adj_axis, adj_angle);
    adj_mul(inv, b, adj_inv, adj_b, adj_rel);
    adj_quat_inverse(a, adj_a, adj_inv);
}

// classification of every component (see vec.h)
template <typename T>
WEFT_FN bool isnan(const quat_t<T>& q) { return isnan(q.x) || isnan(q.y) || isnan(q.z) || isnan(q.w); }
template <typename T>
WEFT_FN bool isinf(const quat_t<T>& q) { return isinf(q.x) || isinf(q.y) || isinf(q.z) || isinf(q.w); }
template <typename T>
WEFT_FN bool isfinite(const quat_t<T>& q) { return isfinite(q.x) && isfinite(q.y) && isfinite(q.z) && isfinite(q.w); }

}  // namespace weft
