// weft native: fixed-size vectors vec_t<N, T> with adjoints.
#pragma once

#include "scalar.h"

namespace weft {
namespace detail {
template <typename T>
struct id_ {
    typedef T type;
};
}  // namespace detail

template <unsigned N, typename T>
struct vec_t {
#if WEFT_CUDA
    T c[N > 0 ? N : 1];  // an empty slice's zero-length vector (a local only): NVRTC rejects zero-size arrays
#else
    T c[N];
#endif

    WEFT_FN_SMALL vec_t() : c() {}

    // broadcast
    template <typename S, typename detail::en_a<S, int>::type = 0>
    WEFT_FN_SMALL explicit vec_t(S s) {
        for (unsigned i = 0; i < N; ++i) c[i] = T(s);
    }
    template <typename S, typename detail::enable_if_<detail::is_same_<S, bool>::value, int>::type = 0>
    WEFT_FN_SMALL explicit vec_t(S s) {  // a boolean broadcast (vec3b(true))
        for (unsigned i = 0; i < N; ++i) c[i] = T(s);
    }

    // exactly N components
    template <typename A0, typename A1, typename... As,
              typename detail::enable_if_<sizeof...(As) + 2 == N, int>::type = 0>
    WEFT_FN_SMALL vec_t(A0 a0, A1 a1, As... as) : c{T(a0), T(a1), T(as)...} {}

    // element type conversion
    template <typename U>
    WEFT_FN_SMALL explicit vec_t(const vec_t<N, U>& o) {
        for (unsigned i = 0; i < N; ++i) c[i] = T(o.c[i]);
    }

    // spatial vector from (top, bottom)
    template <unsigned M = N, typename detail::enable_if_<M == 6, int>::type = 0>
    WEFT_FN_SMALL vec_t(const vec_t<3, T>& top, const vec_t<3, T>& bottom) {
        for (unsigned i = 0; i < 3; ++i) {
            c[i] = top.c[i];
            c[i + 3] = bottom.c[i];
        }
    }

    WEFT_FN_SMALL T& operator[](int i) { return c[i]; }
    WEFT_FN_SMALL const T& operator[](int i) const { return c[i]; }

    WEFT_FN_SMALL vec_t& operator+=(const vec_t& o) {
        for (unsigned i = 0; i < N; ++i) c[i] += o.c[i];
        return *this;
    }
    WEFT_FN_SMALL vec_t& operator-=(const vec_t& o) {
        for (unsigned i = 0; i < N; ++i) c[i] -= o.c[i];
        return *this;
    }
    WEFT_FN_SMALL vec_t& operator*=(T s) {
        for (unsigned i = 0; i < N; ++i) c[i] *= s;
        return *this;
    }
    WEFT_FN_SMALL vec_t& operator/=(T s) {
        for (unsigned i = 0; i < N; ++i) c[i] /= s;
        return *this;
    }
};

typedef vec_t<2, float> vec2f;
typedef vec_t<3, float> vec3f;
typedef vec_t<4, float> vec4f;
typedef vec_t<2, double> vec2d;
typedef vec_t<3, double> vec3d;
typedef vec_t<4, double> vec4d;
typedef vec_t<2, half> vec2h;
typedef vec_t<3, half> vec3h;
typedef vec_t<4, half> vec4h;
typedef vec_t<2, int32> vec2i;
typedef vec_t<3, int32> vec3i;
typedef vec_t<4, int32> vec4i;
typedef vec_t<2, uint32> vec2ui;
typedef vec_t<3, uint32> vec3ui;
typedef vec_t<4, uint32> vec4ui;
typedef vec2f vec2;
typedef vec3f vec3;
typedef vec4f vec4;

// ---------------------------------------------------------------------------------------------
// operators

template <unsigned N, typename T>
WEFT_FN_SMALL vec_t<N, T> operator+(const vec_t<N, T>& a, const vec_t<N, T>& b) {
    vec_t<N, T> r;
    for (unsigned i = 0; i < N; ++i) r.c[i] = a.c[i] + b.c[i];
    return r;
}
template <unsigned N, typename T>
WEFT_FN_SMALL vec_t<N, T> operator-(const vec_t<N, T>& a, const vec_t<N, T>& b) {
    vec_t<N, T> r;
    for (unsigned i = 0; i < N; ++i) r.c[i] = a.c[i] - b.c[i];
    return r;
}
template <unsigned N, typename T>
WEFT_FN_SMALL vec_t<N, T> operator-(const vec_t<N, T>& a) {
    vec_t<N, T> r;
    for (unsigned i = 0; i < N; ++i) r.c[i] = -a.c[i];
    return r;
}
template <unsigned N, typename T>
WEFT_FN_SMALL vec_t<N, T> operator+(const vec_t<N, T>& a) { return a; }
template <unsigned N, typename T>
WEFT_FN_SMALL vec_t<N, T> operator*(const vec_t<N, T>& a, typename detail::id_<T>::type s) {
    vec_t<N, T> r;
    for (unsigned i = 0; i < N; ++i) r.c[i] = a.c[i] * s;
    return r;
}
template <unsigned N, typename T>
WEFT_FN_SMALL vec_t<N, T> operator*(typename detail::id_<T>::type s, const vec_t<N, T>& a) {
    vec_t<N, T> r;
    for (unsigned i = 0; i < N; ++i) r.c[i] = s * a.c[i];
    return r;
}
template <unsigned N, typename T>
WEFT_FN_SMALL vec_t<N, T> operator/(const vec_t<N, T>& a, typename detail::id_<T>::type s) {
    vec_t<N, T> r;
    for (unsigned i = 0; i < N; ++i) r.c[i] = a.c[i] / s;
    return r;
}
template <unsigned N, typename T>
WEFT_FN_SMALL vec_t<N, T> operator/(typename detail::id_<T>::type s, const vec_t<N, T>& a) {
    vec_t<N, T> r;
    for (unsigned i = 0; i < N; ++i) r.c[i] = s / a.c[i];
    return r;
}
template <unsigned N, typename T>
WEFT_FN_SMALL bool operator==(const vec_t<N, T>& a, const vec_t<N, T>& b) {
    for (unsigned i = 0; i < N; ++i)
        if (!(a.c[i] == b.c[i])) return false;
    return true;
}
template <unsigned N, typename T>
WEFT_FN_SMALL bool operator!=(const vec_t<N, T>& a, const vec_t<N, T>& b) { return !(a == b); }

// ---------------------------------------------------------------------------------------------
// arithmetic

template <unsigned N, typename T>
WEFT_FN_SMALL vec_t<N, T> add(const vec_t<N, T>& a, const vec_t<N, T>& b) { return a + b; }
template <unsigned N, typename T>
WEFT_FN_SMALL void adj_add(const vec_t<N, T>&, const vec_t<N, T>&, vec_t<N, T>& adj_a, vec_t<N, T>& adj_b,
                     const vec_t<N, T>& adj_ret) {
    adj_a += adj_ret;
    adj_b += adj_ret;
}

template <unsigned N, typename T>
WEFT_FN_SMALL vec_t<N, T> sub(const vec_t<N, T>& a, const vec_t<N, T>& b) { return a - b; }
template <unsigned N, typename T>
WEFT_FN_SMALL void adj_sub(const vec_t<N, T>&, const vec_t<N, T>&, vec_t<N, T>& adj_a, vec_t<N, T>& adj_b,
                     const vec_t<N, T>& adj_ret) {
    adj_a += adj_ret;
    adj_b -= adj_ret;
}

template <unsigned N, typename T>
WEFT_FN_SMALL vec_t<N, T> neg(const vec_t<N, T>& a) { return -a; }
template <unsigned N, typename T>
WEFT_FN_SMALL void adj_neg(const vec_t<N, T>&, vec_t<N, T>& adj_a, const vec_t<N, T>& adj_ret) { adj_a -= adj_ret; }

template <unsigned N, typename T>
WEFT_FN_SMALL vec_t<N, T> pos(const vec_t<N, T>& a) { return a; }
template <unsigned N, typename T>
WEFT_FN_SMALL void adj_pos(const vec_t<N, T>&, vec_t<N, T>& adj_a, const vec_t<N, T>& adj_ret) { adj_a += adj_ret; }

template <unsigned N, typename T>
WEFT_FN_SMALL vec_t<N, T> mul(const vec_t<N, T>& a, typename detail::id_<T>::type s) { return a * s; }
template <unsigned N, typename T>
WEFT_FN_SMALL void adj_mul(const vec_t<N, T>& a, typename detail::id_<T>::type s, vec_t<N, T>& adj_a, T& adj_s,
                     const vec_t<N, T>& adj_ret) {
    for (unsigned i = 0; i < N; ++i) {
        adj_a.c[i] += adj_ret.c[i] * s;
        adj_s += adj_ret.c[i] * a.c[i];
    }
}

template <unsigned N, typename T>
WEFT_FN_SMALL vec_t<N, T> mul(typename detail::id_<T>::type s, const vec_t<N, T>& a) { return s * a; }
template <unsigned N, typename T>
WEFT_FN_SMALL void adj_mul(typename detail::id_<T>::type s, const vec_t<N, T>& a, T& adj_s, vec_t<N, T>& adj_a,
                     const vec_t<N, T>& adj_ret) {
    for (unsigned i = 0; i < N; ++i) {
        adj_a.c[i] += adj_ret.c[i] * s;
        adj_s += adj_ret.c[i] * a.c[i];
    }
}

template <unsigned N, typename T>
WEFT_FN_SMALL vec_t<N, T> div(const vec_t<N, T>& a, typename detail::id_<T>::type s) { return a / s; }
template <unsigned N, typename T>
WEFT_FN_SMALL void adj_div(const vec_t<N, T>& a, typename detail::id_<T>::type s, vec_t<N, T>& adj_a, T& adj_s,
                     const vec_t<N, T>& adj_ret) {
    for (unsigned i = 0; i < N; ++i) {
        T g = adj_ret.c[i] / s;
        adj_a.c[i] += g;
        adj_s -= g * a.c[i] / s;
    }
}

// scalar / vector, componentwise
template <unsigned N, typename T>
WEFT_FN_SMALL vec_t<N, T> div(typename detail::id_<T>::type s, const vec_t<N, T>& a) { return s / a; }
template <unsigned N, typename T>
WEFT_FN_SMALL void adj_div(typename detail::id_<T>::type s, const vec_t<N, T>& a, T& adj_s, vec_t<N, T>& adj_a,
                     const vec_t<N, T>& adj_ret) {
    for (unsigned i = 0; i < N; ++i) {
        T g = adj_ret.c[i] / a.c[i];
        adj_s += g;
        adj_a.c[i] -= g * s / a.c[i];
    }
}

template <unsigned N, typename T>
WEFT_FN_SMALL vec_t<N, T> cw_mul(const vec_t<N, T>& a, const vec_t<N, T>& b) {
    vec_t<N, T> r;
    for (unsigned i = 0; i < N; ++i) r.c[i] = a.c[i] * b.c[i];
    return r;
}
template <unsigned N, typename T>
WEFT_FN_SMALL void adj_cw_mul(const vec_t<N, T>& a, const vec_t<N, T>& b, vec_t<N, T>& adj_a, vec_t<N, T>& adj_b,
                        const vec_t<N, T>& adj_ret) {
    for (unsigned i = 0; i < N; ++i) {
        adj_a.c[i] += adj_ret.c[i] * b.c[i];
        adj_b.c[i] += adj_ret.c[i] * a.c[i];
    }
}

template <unsigned N, typename T>
WEFT_FN_SMALL vec_t<N, T> cw_div(const vec_t<N, T>& a, const vec_t<N, T>& b) {
    vec_t<N, T> r;
    for (unsigned i = 0; i < N; ++i) r.c[i] = a.c[i] / b.c[i];
    return r;
}
template <unsigned N, typename T>
WEFT_FN_SMALL void adj_cw_div(const vec_t<N, T>& a, const vec_t<N, T>& b, vec_t<N, T>& adj_a, vec_t<N, T>& adj_b,
                        const vec_t<N, T>& adj_ret) {
    for (unsigned i = 0; i < N; ++i) {
        T g = adj_ret.c[i] / b.c[i];
        adj_a.c[i] += g;
        adj_b.c[i] -= g * a.c[i] / b.c[i];
    }
}

// ---------------------------------------------------------------------------------------------
// products and norms

template <unsigned N, typename T>
WEFT_FN_SMALL T dot(const vec_t<N, T>& a, const vec_t<N, T>& b) {
    T r = a.c[0] * b.c[0];
    for (unsigned i = 1; i < N; ++i) r += a.c[i] * b.c[i];
    return r;
}
template <unsigned N, typename T>
WEFT_FN_SMALL void adj_dot(const vec_t<N, T>& a, const vec_t<N, T>& b, vec_t<N, T>& adj_a, vec_t<N, T>& adj_b,
                     const T& adj_ret) {
    for (unsigned i = 0; i < N; ++i) {
        adj_a.c[i] += b.c[i] * adj_ret;
        adj_b.c[i] += a.c[i] * adj_ret;
    }
}

template <typename T>
WEFT_FN_SMALL vec_t<3, T> cross(const vec_t<3, T>& a, const vec_t<3, T>& b) {
    return vec_t<3, T>(a.c[1] * b.c[2] - a.c[2] * b.c[1], a.c[2] * b.c[0] - a.c[0] * b.c[2],
                       a.c[0] * b.c[1] - a.c[1] * b.c[0]);
}
template <typename T>
WEFT_FN_SMALL void adj_cross(const vec_t<3, T>& a, const vec_t<3, T>& b, vec_t<3, T>& adj_a, vec_t<3, T>& adj_b,
                       const vec_t<3, T>& adj_ret) {
    adj_a += cross(b, adj_ret);
    adj_b += cross(adj_ret, a);
}

// 2D cross product (z component of the 3D cross product)
template <typename T>
WEFT_FN_SMALL T cross(const vec_t<2, T>& a, const vec_t<2, T>& b) { return a.c[0] * b.c[1] - a.c[1] * b.c[0]; }
template <typename T>
WEFT_FN_SMALL void adj_cross(const vec_t<2, T>& a, const vec_t<2, T>& b, vec_t<2, T>& adj_a, vec_t<2, T>& adj_b,
                       const T& adj_ret) {
    adj_a.c[0] += b.c[1] * adj_ret;
    adj_a.c[1] -= b.c[0] * adj_ret;
    adj_b.c[0] -= a.c[1] * adj_ret;
    adj_b.c[1] += a.c[0] * adj_ret;
}

template <unsigned N, typename T>
WEFT_FN_SMALL T length_sq(const vec_t<N, T>& a) { return dot(a, a); }
template <unsigned N, typename T>
WEFT_FN_SMALL void adj_length_sq(const vec_t<N, T>& a, vec_t<N, T>& adj_a, const T& adj_ret) {
    T g = T(2) * adj_ret;
    for (unsigned i = 0; i < N; ++i) adj_a.c[i] += g * a.c[i];
}

template <unsigned N, typename T>
WEFT_FN_SMALL T length(const vec_t<N, T>& a) { return sqrt(dot(a, a)); }
template <unsigned N, typename T>
WEFT_FN_SMALL void adj_length(const vec_t<N, T>& a, vec_t<N, T>& adj_a, const T& adj_ret) {
    T l = sqrt(dot(a, a));
    if (l > T(0)) {
        T g = adj_ret / l;
        for (unsigned i = 0; i < N; ++i) adj_a.c[i] += g * a.c[i];
    }
}

// zero vector -> zero vector
template <unsigned N, typename T>
WEFT_FN_SMALL vec_t<N, T> normalize(const vec_t<N, T>& a) {
    T l = sqrt(dot(a, a));
    if (l > T(0)) return a * (T(1) / l);
    return vec_t<N, T>();
}
template <unsigned N, typename T>
WEFT_FN_SMALL void adj_normalize(const vec_t<N, T>& a, vec_t<N, T>& adj_a, const vec_t<N, T>& adj_ret) {
    T l = sqrt(dot(a, a));
    if (l > T(0)) {
        T inv = T(1) / l;
        vec_t<N, T> n = a * inv;
        T d = dot(n, adj_ret);
        for (unsigned i = 0; i < N; ++i) adj_a.c[i] += (adj_ret.c[i] - n.c[i] * d) * inv;
    }
}

// ---------------------------------------------------------------------------------------------
// componentwise min / max / abs, reductions

template <unsigned N, typename T>
WEFT_FN_SMALL vec_t<N, T> min(const vec_t<N, T>& a, const vec_t<N, T>& b) {
    vec_t<N, T> r;
    for (unsigned i = 0; i < N; ++i) r.c[i] = detail::takes_min_(a.c[i], b.c[i]) ? b.c[i] : a.c[i];
    return r;
}
template <unsigned N, typename T>
WEFT_FN_SMALL void adj_min(const vec_t<N, T>& a, const vec_t<N, T>& b, vec_t<N, T>& adj_a, vec_t<N, T>& adj_b,
                     const vec_t<N, T>& adj_ret) {
    for (unsigned i = 0; i < N; ++i) {
        if (detail::takes_min_(a.c[i], b.c[i])) adj_b.c[i] += adj_ret.c[i];
        else adj_a.c[i] += adj_ret.c[i];
    }
}

template <unsigned N, typename T>
WEFT_FN_SMALL vec_t<N, T> max(const vec_t<N, T>& a, const vec_t<N, T>& b) {
    vec_t<N, T> r;
    for (unsigned i = 0; i < N; ++i) r.c[i] = detail::takes_max_(a.c[i], b.c[i]) ? b.c[i] : a.c[i];
    return r;
}
template <unsigned N, typename T>
WEFT_FN_SMALL void adj_max(const vec_t<N, T>& a, const vec_t<N, T>& b, vec_t<N, T>& adj_a, vec_t<N, T>& adj_b,
                     const vec_t<N, T>& adj_ret) {
    for (unsigned i = 0; i < N; ++i) {
        if (detail::takes_max_(a.c[i], b.c[i])) adj_b.c[i] += adj_ret.c[i];
        else adj_a.c[i] += adj_ret.c[i];
    }
}

// smallest element (an fmin fold: NaN components count as missing)
template <unsigned N, typename T>
WEFT_FN_SMALL T min(const vec_t<N, T>& a) {
    T r = a.c[0];
    for (unsigned i = 1; i < N; ++i) r = detail::takes_min_(r, a.c[i]) ? a.c[i] : r;
    return r;
}
template <unsigned N, typename T>
WEFT_FN_SMALL void adj_min(const vec_t<N, T>& a, vec_t<N, T>& adj_a, const T& adj_ret) {
    unsigned k = 0;
    for (unsigned i = 1; i < N; ++i)
        if (detail::takes_min_(a.c[k], a.c[i])) k = i;
    adj_a.c[k] += adj_ret;
}

// largest element (an fmax fold)
template <unsigned N, typename T>
WEFT_FN_SMALL T max(const vec_t<N, T>& a) {
    T r = a.c[0];
    for (unsigned i = 1; i < N; ++i) r = detail::takes_max_(r, a.c[i]) ? a.c[i] : r;
    return r;
}
template <unsigned N, typename T>
WEFT_FN_SMALL void adj_max(const vec_t<N, T>& a, vec_t<N, T>& adj_a, const T& adj_ret) {
    unsigned k = 0;
    for (unsigned i = 1; i < N; ++i)
        if (detail::takes_max_(a.c[k], a.c[i])) k = i;
    adj_a.c[k] += adj_ret;
}

template <unsigned N, typename T>
WEFT_FN_SMALL vec_t<N, T> abs(const vec_t<N, T>& a) {
    vec_t<N, T> r;
    for (unsigned i = 0; i < N; ++i) r.c[i] = abs(a.c[i]);
    return r;
}
template <unsigned N, typename T>
WEFT_FN_SMALL void adj_abs(const vec_t<N, T>& a, vec_t<N, T>& adj_a, const vec_t<N, T>& adj_ret) {
    for (unsigned i = 0; i < N; ++i) adj_abs(a.c[i], adj_a.c[i], adj_ret.c[i]);
}

template <unsigned N, typename T>
WEFT_FN_SMALL vec_t<N, T> lerp(const vec_t<N, T>& a, const vec_t<N, T>& b, typename detail::id_<T>::type t) {
    return a * (T(1) - t) + b * t;
}
template <unsigned N, typename T>
WEFT_FN_SMALL void adj_lerp(const vec_t<N, T>& a, const vec_t<N, T>& b, typename detail::id_<T>::type t,
                      vec_t<N, T>& adj_a, vec_t<N, T>& adj_b, T& adj_t, const vec_t<N, T>& adj_ret) {
    for (unsigned i = 0; i < N; ++i) {
        adj_a.c[i] += adj_ret.c[i] * (T(1) - t);
        adj_b.c[i] += adj_ret.c[i] * t;
        adj_t += adj_ret.c[i] * (b.c[i] - a.c[i]);
    }
}

// ---------------------------------------------------------------------------------------------
// component access

template <unsigned N, typename T>
WEFT_FN_SMALL T extract(const vec_t<N, T>& a, int i) { return a.c[i]; }
template <unsigned N, typename T>
WEFT_FN_SMALL void adj_extract(const vec_t<N, T>&, int i, vec_t<N, T>& adj_a, int&, const T& adj_ret) {
    adj_a.c[i] += adj_ret;
}

// a[i] = value (in place). The adjoint moves the gradient of the overwritten slot to `value` and clears it.
template <unsigned N, typename T>
WEFT_FN_SMALL void assign_inplace(vec_t<N, T>& a, int i, typename detail::id_<T>::type value) { a.c[i] = value; }
template <unsigned N, typename T>
WEFT_FN_SMALL void adj_assign_inplace(vec_t<N, T>&, int i, typename detail::id_<T>::type, vec_t<N, T>& adj_a, int&,
                                T& adj_value) {
    adj_value += adj_a.c[i];
    adj_a.c[i] = T(0);
}

// functional form: returns a copy of a with a[i] = value
template <unsigned N, typename T>
WEFT_FN_SMALL vec_t<N, T> assign_copy(const vec_t<N, T>& a, int i, typename detail::id_<T>::type value) {
    vec_t<N, T> r = a;
    r.c[i] = value;
    return r;
}
template <unsigned N, typename T>
WEFT_FN_SMALL void adj_assign_copy(const vec_t<N, T>&, int i, typename detail::id_<T>::type, vec_t<N, T>& adj_a, int&,
                             T& adj_value, const vec_t<N, T>& adj_ret) {
    for (unsigned k = 0; k < N; ++k)
        if ((int)k != i) adj_a.c[k] += adj_ret.c[k];
    adj_value += adj_ret.c[i];
}

// a[i] += value (in place)
template <unsigned N, typename T>
WEFT_FN_SMALL void add_inplace(vec_t<N, T>& a, int i, typename detail::id_<T>::type value) { a.c[i] += value; }
template <unsigned N, typename T>
WEFT_FN_SMALL void adj_add_inplace(vec_t<N, T>&, int i, typename detail::id_<T>::type, vec_t<N, T>& adj_a, int&,
                             T& adj_value) {
    adj_value += adj_a.c[i];
}

// a[i] -= value (in place)
template <unsigned N, typename T>
WEFT_FN_SMALL void sub_inplace(vec_t<N, T>& a, int i, typename detail::id_<T>::type value) { a.c[i] -= value; }
template <unsigned N, typename T>
WEFT_FN_SMALL void adj_sub_inplace(vec_t<N, T>&, int i, typename detail::id_<T>::type, vec_t<N, T>& adj_a, int&,
                             T& adj_value) {
    adj_value -= adj_a.c[i];
}

// classification of every component: isnan / isinf true if any component is, isfinite if all are
template <unsigned N, typename T>
WEFT_FN bool isnan(const vec_t<N, T>& a) {
    for (unsigned i = 0; i < N; ++i) if (isnan(a.c[i])) return true;
    return false;
}
template <unsigned N, typename T>
WEFT_FN bool isinf(const vec_t<N, T>& a) {
    for (unsigned i = 0; i < N; ++i) if (isinf(a.c[i])) return true;
    return false;
}
template <unsigned N, typename T>
WEFT_FN bool isfinite(const vec_t<N, T>& a) {
    for (unsigned i = 0; i < N; ++i) if (!isfinite(a.c[i])) return false;
    return true;
}

}  // namespace weft
