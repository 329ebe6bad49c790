// weft native: rigid transforms transform_t<T> = (p, q): x -> rotate(q, x) + p.  7 components: p (0..2), q (3..6).
#pragma once

#include "quat.h"

namespace weft {

template <typename T>
struct transform_t {
    vec_t<3, T> p;
    quat_t<T> q;

    WEFT_FN transform_t() {}
    WEFT_FN transform_t(const vec_t<3, T>& p_, const quat_t<T>& q_) : p(p_), q(q_) {}
    template <typename A0, typename A1, typename A2, typename A3, typename A4, typename A5, typename A6>
    WEFT_FN transform_t(A0 px, A1 py, A2 pz, A3 qx, A4 qy, A5 qz, A6 qw) : p(px, py, pz), q(qx, qy, qz, qw) {}
    template <typename U>
    WEFT_FN explicit transform_t(const transform_t<U>& o) : p(o.p), q(o.q) {}

    WEFT_FN T& operator[](int i) { return i < 3 ? p.c[i] : q[i - 3]; }
    WEFT_FN const T& operator[](int i) const { return i < 3 ? p.c[i] : q[i - 3]; }
};

typedef transform_t<float> transformf;
typedef transform_t<double> transformd;
typedef transform_t<half> transformh;
typedef transformf transform;

template <typename T>
WEFT_FN bool operator==(const transform_t<T>& a, const transform_t<T>& b) { return a.p == b.p && a.q == b.q; }
template <typename T>
WEFT_FN bool operator!=(const transform_t<T>& a, const transform_t<T>& b) { return !(a == b); }
template <typename T>
WEFT_FN transform_t<T>& operator+=(transform_t<T>& a, const transform_t<T>& b) {
    a.p += b.p;
    a.q += b.q;
    return a;
}
template <typename T>
WEFT_FN transform_t<T>& operator-=(transform_t<T>& a, const transform_t<T>& b) {
    a.p -= b.p;
    a.q -= b.q;
    return a;
}

template <typename T>
WEFT_FN transform_t<T> make_transform(const vec_t<3, T>& p, const quat_t<T>& q) { return transform_t<T>(p, q); }
template <typename T>
WEFT_FN void adj_make_transform(const vec_t<3, T>&, const quat_t<T>&, vec_t<3, T>& adj_p, quat_t<T>& adj_q,
                                const transform_t<T>& adj_ret) {
    adj_p += adj_ret.p;
    adj_q += adj_ret.q;
}

template <typename T>
WEFT_FN transform_t<T> transform_identity() { return transform_t<T>(vec_t<3, T>(), quat_identity<T>()); }
template <typename T>
WEFT_FN void adj_transform_identity(const transform_t<T>&) {}

template <typename T>
WEFT_FN vec_t<3, T> transform_get_translation(const transform_t<T>& t) { return t.p; }
template <typename T>
WEFT_FN void adj_transform_get_translation(const transform_t<T>&, transform_t<T>& adj_t, const vec_t<3, T>& adj_ret) {
    adj_t.p += adj_ret;
}

template <typename T>
WEFT_FN quat_t<T> transform_get_rotation(const transform_t<T>& t) { return t.q; }
template <typename T>
WEFT_FN void adj_transform_get_rotation(const transform_t<T>&, transform_t<T>& adj_t, const quat_t<T>& adj_ret) {
    adj_t.q += adj_ret;
}

template <typename T>
WEFT_FN vec_t<3, T> transform_point(const transform_t<T>& t, const vec_t<3, T>& x) { return quat_rotate(t.q, x) + t.p; }
template <typename T>
WEFT_FN void adj_transform_point(const transform_t<T>& t, const vec_t<3, T>& x, transform_t<T>& adj_t,
                                 vec_t<3, T>& adj_x, const vec_t<3, T>& adj_ret) {
    adj_quat_rotate(t.q, x, adj_t.q, adj_x, adj_ret);
    adj_t.p += adj_ret;
}

template <typename T>
WEFT_FN vec_t<3, T> transform_vector(const transform_t<T>& t, const vec_t<3, T>& v) { return quat_rotate(t.q, v); }
template <typename T>
WEFT_FN void adj_transform_vector(const transform_t<T>& t, const vec_t<3, T>& v, transform_t<T>& adj_t,
                                  vec_t<3, T>& adj_v, const vec_t<3, T>& adj_ret) {
    adj_quat_rotate(t.q, v, adj_t.q, adj_v, adj_ret);
}

template <typename T>
WEFT_FN transform_t<T> transform_multiply(const transform_t<T>& a, const transform_t<T>& b) {
    return transform_t<T>(quat_rotate(a.q, b.p) + a.p, a.q * b.q);
}
template <typename T>
WEFT_FN void adj_transform_multiply(const transform_t<T>& a, const transform_t<T>& b, transform_t<T>& adj_a,
                                   transform_t<T>& adj_b, const transform_t<T>& adj_ret) {
    adj_quat_rotate(a.q, b.p, adj_a.q, adj_b.p, adj_ret.p);
    adj_a.p += adj_ret.p;
    adj_mul(a.q, b.q, adj_a.q, adj_b.q, adj_ret.q);
}

template <typename T>
WEFT_FN transform_t<T> operator*(const transform_t<T>& a, const transform_t<T>& b) { return transform_multiply(a, b); }

template <typename T>
WEFT_FN transform_t<T> mul(const transform_t<T>& a, const transform_t<T>& b) { return transform_multiply(a, b); }
template <typename T>
WEFT_FN void adj_mul(const transform_t<T>& a, const transform_t<T>& b, transform_t<T>& adj_a, transform_t<T>& adj_b,
                     const transform_t<T>& adj_ret) {
    adj_transform_multiply(a, b, adj_a, adj_b, adj_ret);
}

template <typename T>
WEFT_FN transform_t<T> transform_inverse(const transform_t<T>& t) {
    return transform_t<T>(-quat_rotate_inv(t.q, t.p), quat_inverse(t.q));
}
template <typename T>
WEFT_FN void adj_transform_inverse(const transform_t<T>& t, transform_t<T>& adj_t, const transform_t<T>& adj_ret) {
    adj_quat_rotate_inv(t.q, t.p, adj_t.q, adj_t.p, -adj_ret.p);
    adj_quat_inverse(t.q, adj_t.q, adj_ret.q);
}

template <typename T>
WEFT_FN T extract(const transform_t<T>& t, int i) { return t[i]; }
template <typename T>
WEFT_FN void adj_extract(const transform_t<T>&, int i, transform_t<T>& adj_t, int&, const T& adj_ret) {
    adj_t[i] += adj_ret;
}

// component-wise arithmetic (Warp treats a transform as 7 numbers here): t + u, t - u, s * t, t * s
template <typename T>
WEFT_FN transform_t<T> operator+(const transform_t<T>& a, const transform_t<T>& b) {
    return transform_t<T>(a.p + b.p, a.q + b.q);
}
template <typename T>
WEFT_FN transform_t<T> operator-(const transform_t<T>& a, const transform_t<T>& b) {
    return transform_t<T>(a.p - b.p, a.q - b.q);
}
template <typename T>
WEFT_FN transform_t<T> add(const transform_t<T>& a, const transform_t<T>& b) { return a + b; }
template <typename T>
WEFT_FN void adj_add(const transform_t<T>&, const transform_t<T>&, transform_t<T>& adj_a, transform_t<T>& adj_b,
                     const transform_t<T>& adj_ret) {
    for (int i = 0; i < 7; ++i) adj_a[i] += adj_ret[i], adj_b[i] += adj_ret[i];
}
template <typename T>
WEFT_FN transform_t<T> sub(const transform_t<T>& a, const transform_t<T>& b) { return a - b; }
template <typename T>
WEFT_FN void adj_sub(const transform_t<T>&, const transform_t<T>&, transform_t<T>& adj_a, transform_t<T>& adj_b,
                     const transform_t<T>& adj_ret) {
    for (int i = 0; i < 7; ++i) adj_a[i] += adj_ret[i], adj_b[i] -= adj_ret[i];
}
template <typename T>
WEFT_FN transform_t<T> mul(typename detail::id_<T>::type s, const transform_t<T>& a) {
    return transform_t<T>(a.p * s, a.q * s);
}
template <typename T>
WEFT_FN void adj_mul(typename detail::id_<T>::type s, const transform_t<T>& a, T& adj_s, transform_t<T>& adj_a,
                     const transform_t<T>& adj_ret) {
    for (int i = 0; i < 7; ++i) adj_a[i] += adj_ret[i] * s, adj_s += a[i] * adj_ret[i];
}
template <typename T>
WEFT_FN transform_t<T> mul(const transform_t<T>& a, typename detail::id_<T>::type s) { return mul(s, a); }
template <typename T>
WEFT_FN void adj_mul(const transform_t<T>& a, typename detail::id_<T>::type s, transform_t<T>& adj_a, T& adj_s,
                     const transform_t<T>& adj_ret) {
    adj_mul(s, a, adj_s, adj_a, adj_ret);
}

// classification of every component (see vec.h)
template <typename T>
WEFT_FN bool isnan(const transform_t<T>& t) { return isnan(t.p) || isnan(t.q); }
template <typename T>
WEFT_FN bool isinf(const transform_t<T>& t) { return isinf(t.p) || isinf(t.q); }
template <typename T>
WEFT_FN bool isfinite(const transform_t<T>& t) { return isfinite(t.p) && isfinite(t.q); }

}  // namespace weft
