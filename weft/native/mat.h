// weft native: fixed-size row-major matrices mat_t<R, C, T> with adjoints, plus 3x3 decompositions.
#pragma once

#include "vec.h"

namespace weft {

namespace detail {
template <typename T> struct is_vec1_ { static constexpr bool value = false; };
template <typename T> struct is_vec1_<vec_t<1, T>> { static constexpr bool value = true; };
}  // namespace detail

template <unsigned R, unsigned C, typename T>
struct mat_t {
#if WEFT_CUDA
    vec_t<C, T> row[R > 0 ? R : 1];  // row-major (a 0x0 slice's matrix, a local only, keeps one empty row for NVRTC)
#else
    vec_t<C, T> row[R];  // row-major; default constructors zero-initialise
#endif

    WEFT_FN_SMALL mat_t() {}

    // broadcast a scalar to every element
    template <typename S, typename detail::en_a<S, int>::type = 0>
    WEFT_FN_SMALL explicit mat_t(S s) {
        for (unsigned i = 0; i < R; ++i)
            for (unsigned j = 0; j < C; ++j) row[i].c[j] = T(s);
    }
    template <typename S, typename detail::enable_if_<detail::is_same_<S, bool>::value, int>::type = 0>
    WEFT_FN_SMALL explicit mat_t(S s) {  // a boolean broadcast
        for (unsigned i = 0; i < R; ++i)
            for (unsigned j = 0; j < C; ++j) row[i].c[j] = T(s);
    }

    // R*C scalars, row-major (for one column, R scalars rather than R one-component rows)
    template <typename A0, typename A1, typename... As,
              typename detail::enable_if_<sizeof...(As) + 2 == R * C && (C != 1 || !detail::is_vec1_<A0>::value),
                                          int>::type = 0>
    WEFT_FN_SMALL mat_t(A0 a0, A1 a1, As... as) {
        const T v[R * C] = {T(a0), T(a1), T(as)...};
        for (unsigned i = 0; i < R; ++i)
            for (unsigned j = 0; j < C; ++j) row[i].c[j] = v[i * C + j];
    }

    // R row vectors
    template <typename... As, typename detail::enable_if_<sizeof...(As) + 1 == R, int>::type = 0>
    WEFT_FN_SMALL mat_t(const vec_t<C, T>& r0, const As&... rs) {
        const vec_t<C, T>* p[R] = {&r0, &rs...};
        for (unsigned i = 0; i < R; ++i) row[i] = *p[i];
    }

    // element type conversion
    template <typename U>
    WEFT_FN_SMALL explicit mat_t(const mat_t<R, C, U>& o) {
        for (unsigned i = 0; i < R; ++i) row[i] = vec_t<C, T>(o.row[i]);
    }

    WEFT_FN_SMALL T& operator()(int i, int j) { return row[i].c[j]; }
    WEFT_FN_SMALL const T& operator()(int i, int j) const { return row[i].c[j]; }
    WEFT_FN_SMALL vec_t<C, T>& operator[](int i) { return row[i]; }
    WEFT_FN_SMALL const vec_t<C, T>& operator[](int i) const { return row[i]; }

    WEFT_FN_SMALL mat_t& operator+=(const mat_t& o) {
        for (unsigned i = 0; i < R; ++i) row[i] += o.row[i];
        return *this;
    }
    WEFT_FN_SMALL mat_t& operator-=(const mat_t& o) {
        for (unsigned i = 0; i < R; ++i) row[i] -= o.row[i];
        return *this;
    }
    WEFT_FN_SMALL mat_t& operator*=(T s) {
        for (unsigned i = 0; i < R; ++i) row[i] *= s;
        return *this;
    }
};

typedef mat_t<2, 2, float> mat22f;
typedef mat_t<3, 3, float> mat33f;
typedef mat_t<4, 4, float> mat44f;
typedef mat_t<2, 2, double> mat22d;
typedef mat_t<3, 3, double> mat33d;
typedef mat_t<4, 4, double> mat44d;
typedef mat_t<2, 2, half> mat22h;
typedef mat_t<3, 3, half> mat33h;
typedef mat_t<4, 4, half> mat44h;
typedef mat22f mat22;
typedef mat33f mat33;
typedef mat44f mat44;

// ---------------------------------------------------------------------------------------------
// operators

template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL mat_t<R, C, T> operator+(const mat_t<R, C, T>& a, const mat_t<R, C, T>& b) {
    mat_t<R, C, T> r;
    for (unsigned i = 0; i < R; ++i) r.row[i] = a.row[i] + b.row[i];
    return r;
}
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL mat_t<R, C, T> operator-(const mat_t<R, C, T>& a, const mat_t<R, C, T>& b) {
    mat_t<R, C, T> r;
    for (unsigned i = 0; i < R; ++i) r.row[i] = a.row[i] - b.row[i];
    return r;
}
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL mat_t<R, C, T> operator-(const mat_t<R, C, T>& a) {
    mat_t<R, C, T> r;
    for (unsigned i = 0; i < R; ++i) r.row[i] = -a.row[i];
    return r;
}
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL mat_t<R, C, T> operator+(const mat_t<R, C, T>& a) { return a; }
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL mat_t<R, C, T> operator*(const mat_t<R, C, T>& a, typename detail::id_<T>::type s) {
    mat_t<R, C, T> r;
    for (unsigned i = 0; i < R; ++i) r.row[i] = a.row[i] * s;
    return r;
}
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL mat_t<R, C, T> operator*(typename detail::id_<T>::type s, const mat_t<R, C, T>& a) {
    return a * s;
}
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL mat_t<R, C, T> operator/(const mat_t<R, C, T>& a, typename detail::id_<T>::type s) {
    mat_t<R, C, T> r;
    for (unsigned i = 0; i < R; ++i) r.row[i] = a.row[i] / s;
    return r;
}
template <unsigned R, unsigned K, unsigned C, typename T>
WEFT_FN_SMALL mat_t<R, C, T> operator*(const mat_t<R, K, T>& a, const mat_t<K, C, T>& b) {
    mat_t<R, C, T> r;
    for (unsigned i = 0; i < R; ++i)
        for (unsigned k = 0; k < K; ++k)
            for (unsigned j = 0; j < C; ++j) r.row[i].c[j] += a.row[i].c[k] * b.row[k].c[j];
    return r;
}
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL vec_t<R, T> operator*(const mat_t<R, C, T>& a, const vec_t<C, T>& v) {
    vec_t<R, T> r;
    for (unsigned i = 0; i < R; ++i) r.c[i] = dot(a.row[i], v);
    return r;
}
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL vec_t<C, T> operator*(const vec_t<R, T>& v, const mat_t<R, C, T>& a) {
    vec_t<C, T> r;
    for (unsigned i = 0; i < R; ++i)
        for (unsigned j = 0; j < C; ++j) r.c[j] += v.c[i] * a.row[i].c[j];
    return r;
}
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL bool operator==(const mat_t<R, C, T>& a, const mat_t<R, C, T>& b) {
    for (unsigned i = 0; i < R; ++i)
        if (a.row[i] != b.row[i]) return false;
    return true;
}
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL bool operator!=(const mat_t<R, C, T>& a, const mat_t<R, C, T>& b) { return !(a == b); }

// ---------------------------------------------------------------------------------------------
// arithmetic

template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL mat_t<R, C, T> add(const mat_t<R, C, T>& a, const mat_t<R, C, T>& b) { return a + b; }
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL void adj_add(const mat_t<R, C, T>&, const mat_t<R, C, T>&, mat_t<R, C, T>& adj_a, mat_t<R, C, T>& adj_b,
                     const mat_t<R, C, T>& adj_ret) {
    adj_a += adj_ret;
    adj_b += adj_ret;
}

template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL mat_t<R, C, T> sub(const mat_t<R, C, T>& a, const mat_t<R, C, T>& b) { return a - b; }
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL void adj_sub(const mat_t<R, C, T>&, const mat_t<R, C, T>&, mat_t<R, C, T>& adj_a, mat_t<R, C, T>& adj_b,
                     const mat_t<R, C, T>& adj_ret) {
    adj_a += adj_ret;
    adj_b -= adj_ret;
}

template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL mat_t<R, C, T> neg(const mat_t<R, C, T>& a) { return -a; }
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL void adj_neg(const mat_t<R, C, T>&, mat_t<R, C, T>& adj_a, const mat_t<R, C, T>& adj_ret) {
    adj_a -= adj_ret;
}

template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL mat_t<R, C, T> pos(const mat_t<R, C, T>& a) { return a; }
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL void adj_pos(const mat_t<R, C, T>&, mat_t<R, C, T>& adj_a, const mat_t<R, C, T>& adj_ret) {
    adj_a += adj_ret;
}

template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL mat_t<R, C, T> mul(const mat_t<R, C, T>& a, typename detail::id_<T>::type s) { return a * s; }
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL void adj_mul(const mat_t<R, C, T>& a, typename detail::id_<T>::type s, mat_t<R, C, T>& adj_a, T& adj_s,
                     const mat_t<R, C, T>& adj_ret) {
    for (unsigned i = 0; i < R; ++i) adj_mul(a.row[i], s, adj_a.row[i], adj_s, adj_ret.row[i]);
}

template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL mat_t<R, C, T> mul(typename detail::id_<T>::type s, const mat_t<R, C, T>& a) { return a * s; }
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL void adj_mul(typename detail::id_<T>::type s, const mat_t<R, C, T>& a, T& adj_s, mat_t<R, C, T>& adj_a,
                     const mat_t<R, C, T>& adj_ret) {
    for (unsigned i = 0; i < R; ++i) adj_mul(a.row[i], s, adj_a.row[i], adj_s, adj_ret.row[i]);
}

template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL mat_t<R, C, T> div(const mat_t<R, C, T>& a, typename detail::id_<T>::type s) { return a / s; }
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL void adj_div(const mat_t<R, C, T>& a, typename detail::id_<T>::type s, mat_t<R, C, T>& adj_a, T& adj_s,
                     const mat_t<R, C, T>& adj_ret) {
    for (unsigned i = 0; i < R; ++i) adj_div(a.row[i], s, adj_a.row[i], adj_s, adj_ret.row[i]);
}

template <unsigned R, unsigned K, unsigned C, typename T>
WEFT_FN_SMALL mat_t<R, C, T> mul(const mat_t<R, K, T>& a, const mat_t<K, C, T>& b) { return a * b; }
template <unsigned R, unsigned K, unsigned C, typename T>
WEFT_FN_SMALL void adj_mul(const mat_t<R, K, T>& a, const mat_t<K, C, T>& b, mat_t<R, K, T>& adj_a, mat_t<K, C, T>& adj_b,
                     const mat_t<R, C, T>& adj_ret) {
    // adj_a += adj_ret * b^T ; adj_b += a^T * adj_ret
    for (unsigned i = 0; i < R; ++i)
        for (unsigned k = 0; k < K; ++k) {
            adj_a.row[i].c[k] += dot(adj_ret.row[i], b.row[k]);
            for (unsigned j = 0; j < C; ++j) adj_b.row[k].c[j] += a.row[i].c[k] * adj_ret.row[i].c[j];
        }
}

template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL vec_t<R, T> mul(const mat_t<R, C, T>& a, const vec_t<C, T>& v) { return a * v; }
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL void adj_mul(const mat_t<R, C, T>& a, const vec_t<C, T>& v, mat_t<R, C, T>& adj_a, vec_t<C, T>& adj_v,
                     const vec_t<R, T>& adj_ret) {
    for (unsigned i = 0; i < R; ++i)
        for (unsigned j = 0; j < C; ++j) {
            adj_a.row[i].c[j] += adj_ret.c[i] * v.c[j];
            adj_v.c[j] += a.row[i].c[j] * adj_ret.c[i];
        }
}

template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL vec_t<C, T> mul(const vec_t<R, T>& v, const mat_t<R, C, T>& a) { return v * a; }
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL void adj_mul(const vec_t<R, T>& v, const mat_t<R, C, T>& a, vec_t<R, T>& adj_v, mat_t<R, C, T>& adj_a,
                     const vec_t<C, T>& adj_ret) {
    for (unsigned i = 0; i < R; ++i)
        for (unsigned j = 0; j < C; ++j) {
            adj_a.row[i].c[j] += v.c[i] * adj_ret.c[j];
            adj_v.c[i] += a.row[i].c[j] * adj_ret.c[j];
        }
}

template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL mat_t<R, C, T> cw_mul(const mat_t<R, C, T>& a, const mat_t<R, C, T>& b) {
    mat_t<R, C, T> r;
    for (unsigned i = 0; i < R; ++i) r.row[i] = cw_mul(a.row[i], b.row[i]);
    return r;
}
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL void adj_cw_mul(const mat_t<R, C, T>& a, const mat_t<R, C, T>& b, mat_t<R, C, T>& adj_a,
                        mat_t<R, C, T>& adj_b, const mat_t<R, C, T>& adj_ret) {
    for (unsigned i = 0; i < R; ++i) adj_cw_mul(a.row[i], b.row[i], adj_a.row[i], adj_b.row[i], adj_ret.row[i]);
}

template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL mat_t<R, C, T> cw_div(const mat_t<R, C, T>& a, const mat_t<R, C, T>& b) {
    mat_t<R, C, T> r;
    for (unsigned i = 0; i < R; ++i) r.row[i] = cw_div(a.row[i], b.row[i]);
    return r;
}
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL void adj_cw_div(const mat_t<R, C, T>& a, const mat_t<R, C, T>& b, mat_t<R, C, T>& adj_a,
                        mat_t<R, C, T>& adj_b, const mat_t<R, C, T>& adj_ret) {
    for (unsigned i = 0; i < R; ++i) adj_cw_div(a.row[i], b.row[i], adj_a.row[i], adj_b.row[i], adj_ret.row[i]);
}

// ---------------------------------------------------------------------------------------------
// structure

template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL mat_t<C, R, T> transpose(const mat_t<R, C, T>& a) {
    mat_t<C, R, T> r;
    for (unsigned i = 0; i < R; ++i)
        for (unsigned j = 0; j < C; ++j) r.row[j].c[i] = a.row[i].c[j];
    return r;
}
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL void adj_transpose(const mat_t<R, C, T>&, mat_t<R, C, T>& adj_a, const mat_t<C, R, T>& adj_ret) {
    for (unsigned i = 0; i < R; ++i)
        for (unsigned j = 0; j < C; ++j) adj_a.row[i].c[j] += adj_ret.row[j].c[i];
}

template <unsigned N, typename T>
WEFT_FN_SMALL mat_t<N, N, T> identity() {
    mat_t<N, N, T> r;
    for (unsigned i = 0; i < N; ++i) r.row[i].c[i] = T(1);
    return r;
}
template <unsigned N, typename T>
WEFT_FN_SMALL void adj_identity(const mat_t<N, N, T>&) {}

template <unsigned N, typename T>
WEFT_FN_SMALL T trace(const mat_t<N, N, T>& a) {
    T r = a.row[0].c[0];
    for (unsigned i = 1; i < N; ++i) r += a.row[i].c[i];
    return r;
}
template <unsigned N, typename T>
WEFT_FN_SMALL void adj_trace(const mat_t<N, N, T>&, mat_t<N, N, T>& adj_a, const T& adj_ret) {
    for (unsigned i = 0; i < N; ++i) adj_a.row[i].c[i] += adj_ret;
}

template <unsigned N, typename T>
WEFT_FN_SMALL mat_t<N, N, T> diag(const vec_t<N, T>& d) {
    mat_t<N, N, T> r;
    for (unsigned i = 0; i < N; ++i) r.row[i].c[i] = d.c[i];
    return r;
}
template <unsigned N, typename T>
WEFT_FN_SMALL void adj_diag(const vec_t<N, T>&, vec_t<N, T>& adj_d, const mat_t<N, N, T>& adj_ret) {
    for (unsigned i = 0; i < N; ++i) adj_d.c[i] += adj_ret.row[i].c[i];
}

template <unsigned N, typename T>
WEFT_FN_SMALL vec_t<N, T> get_diag(const mat_t<N, N, T>& a) {
    vec_t<N, T> r;
    for (unsigned i = 0; i < N; ++i) r.c[i] = a.row[i].c[i];
    return r;
}
template <unsigned N, typename T>
WEFT_FN_SMALL void adj_get_diag(const mat_t<N, N, T>&, mat_t<N, N, T>& adj_a, const vec_t<N, T>& adj_ret) {
    for (unsigned i = 0; i < N; ++i) adj_a.row[i].c[i] += adj_ret.c[i];
}

// skew(v) * x == cross(v, x)
template <typename T>
WEFT_FN_SMALL mat_t<3, 3, T> skew(const vec_t<3, T>& v) {
    return mat_t<3, 3, T>(T(0), -v.c[2], v.c[1], v.c[2], T(0), -v.c[0], -v.c[1], v.c[0], T(0));
}
template <typename T>
WEFT_FN_SMALL void adj_skew(const vec_t<3, T>&, vec_t<3, T>& adj_v, const mat_t<3, 3, T>& adj_ret) {
    adj_v.c[0] += adj_ret.row[2].c[1] - adj_ret.row[1].c[2];
    adj_v.c[1] += adj_ret.row[0].c[2] - adj_ret.row[2].c[0];
    adj_v.c[2] += adj_ret.row[1].c[0] - adj_ret.row[0].c[1];
}

// double contraction sum_ij a_ij b_ij
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL T ddot(const mat_t<R, C, T>& a, const mat_t<R, C, T>& b) {
    T r = dot(a.row[0], b.row[0]);
    for (unsigned i = 1; i < R; ++i) r += dot(a.row[i], b.row[i]);
    return r;
}
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL void adj_ddot(const mat_t<R, C, T>& a, const mat_t<R, C, T>& b, mat_t<R, C, T>& adj_a, mat_t<R, C, T>& adj_b,
                      const T& adj_ret) {
    for (unsigned i = 0; i < R; ++i) adj_dot(a.row[i], b.row[i], adj_a.row[i], adj_b.row[i], adj_ret);
}

// outer(a, b) = a b^T
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL mat_t<R, C, T> outer(const vec_t<R, T>& a, const vec_t<C, T>& b) {
    mat_t<R, C, T> r;
    for (unsigned i = 0; i < R; ++i) r.row[i] = b * a.c[i];
    return r;
}
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL void adj_outer(const vec_t<R, T>& a, const vec_t<C, T>& b, vec_t<R, T>& adj_a, vec_t<C, T>& adj_b,
                       const mat_t<R, C, T>& adj_ret) {
    for (unsigned i = 0; i < R; ++i) {
        adj_a.c[i] += dot(adj_ret.row[i], b);
        for (unsigned j = 0; j < C; ++j) adj_b.c[j] += adj_ret.row[i].c[j] * a.c[i];
    }
}

// ---------------------------------------------------------------------------------------------
// element / row access

template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL T extract(const mat_t<R, C, T>& a, int i, int j) { return a.row[i].c[j]; }
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL void adj_extract(const mat_t<R, C, T>&, int i, int j, mat_t<R, C, T>& adj_a, int&, int&, const T& adj_ret) {
    adj_a.row[i].c[j] += adj_ret;
}

template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL vec_t<C, T> extract(const mat_t<R, C, T>& a, int i) { return a.row[i]; }
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL void adj_extract(const mat_t<R, C, T>&, int i, mat_t<R, C, T>& adj_a, int&, const vec_t<C, T>& adj_ret) {
    adj_a.row[i] += adj_ret;
}

template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL void assign_inplace(mat_t<R, C, T>& a, int i, int j, typename detail::id_<T>::type value) {
    a.row[i].c[j] = value;
}
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL void adj_assign_inplace(mat_t<R, C, T>&, int i, int j, typename detail::id_<T>::type, mat_t<R, C, T>& adj_a,
                                int&, int&, T& adj_value) {
    adj_value += adj_a.row[i].c[j];
    adj_a.row[i].c[j] = T(0);
}

template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL void assign_inplace(mat_t<R, C, T>& a, int i, const vec_t<C, T>& value) { a.row[i] = value; }
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL void adj_assign_inplace(mat_t<R, C, T>&, int i, const vec_t<C, T>&, mat_t<R, C, T>& adj_a, int&,
                                vec_t<C, T>& adj_value) {
    adj_value += adj_a.row[i];
    adj_a.row[i] = vec_t<C, T>();
}

template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL mat_t<R, C, T> assign_copy(const mat_t<R, C, T>& a, int i, int j, typename detail::id_<T>::type value) {
    mat_t<R, C, T> r = a;
    r.row[i].c[j] = value;
    return r;
}
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL void adj_assign_copy(const mat_t<R, C, T>&, int i, int j, typename detail::id_<T>::type,
                             mat_t<R, C, T>& adj_a, int&, int&, T& adj_value, const mat_t<R, C, T>& adj_ret) {
    mat_t<R, C, T> g = adj_ret;
    adj_value += g.row[i].c[j];
    g.row[i].c[j] = T(0);
    adj_a += g;
}

template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL mat_t<R, C, T> assign_copy(const mat_t<R, C, T>& a, int i, const vec_t<C, T>& value) {
    mat_t<R, C, T> r = a;
    r.row[i] = value;
    return r;
}
template <unsigned R, unsigned C, typename T>
WEFT_FN_SMALL void adj_assign_copy(const mat_t<R, C, T>&, int i, const vec_t<C, T>&, mat_t<R, C, T>& adj_a, int&,
                             vec_t<C, T>& adj_value, const mat_t<R, C, T>& adj_ret) {
    for (unsigned k = 0; k < R; ++k)
        if ((int)k != i) adj_a.row[k] += adj_ret.row[k];
    adj_value += adj_ret.row[i];
}

// ---------------------------------------------------------------------------------------------
// determinant / inverse (via the cofactor matrix; d det(A)/dA = cofactor(A))

namespace detail {

template <typename T>
WEFT_FN_SMALL mat_t<2, 2, T> cofactor(const mat_t<2, 2, T>& a) {
    return mat_t<2, 2, T>(a.row[1].c[1], -a.row[1].c[0], -a.row[0].c[1], a.row[0].c[0]);
}

template <typename T>
WEFT_FN_SMALL mat_t<3, 3, T> cofactor(const mat_t<3, 3, T>& a) {
    mat_t<3, 3, T> r;
    r.row[0] = cross(a.row[1], a.row[2]);
    r.row[1] = cross(a.row[2], a.row[0]);
    r.row[2] = cross(a.row[0], a.row[1]);
    return r;
}

template <typename T>
WEFT_FN_SMALL mat_t<4, 4, T> cofactor(const mat_t<4, 4, T>& m) {
    // 2x2 minors of the top two rows (s) and the bottom two rows (c)
    const T* a0 = m.row[0].c;
    const T* a1 = m.row[1].c;
    const T* a2 = m.row[2].c;
    const T* a3 = m.row[3].c;
    T s0 = a0[0] * a1[1] - a1[0] * a0[1];
    T s1 = a0[0] * a1[2] - a1[0] * a0[2];
    T s2 = a0[0] * a1[3] - a1[0] * a0[3];
    T s3 = a0[1] * a1[2] - a1[1] * a0[2];
    T s4 = a0[1] * a1[3] - a1[1] * a0[3];
    T s5 = a0[2] * a1[3] - a1[2] * a0[3];
    T c5 = a2[2] * a3[3] - a3[2] * a2[3];
    T c4 = a2[1] * a3[3] - a3[1] * a2[3];
    T c3 = a2[1] * a3[2] - a3[1] * a2[2];
    T c2 = a2[0] * a3[3] - a3[0] * a2[3];
    T c1 = a2[0] * a3[2] - a3[0] * a2[2];
    T c0 = a2[0] * a3[1] - a3[0] * a2[1];
    mat_t<4, 4, T> r;
    r.row[0].c[0] = a1[1] * c5 - a1[2] * c4 + a1[3] * c3;
    r.row[0].c[1] = -(a1[0] * c5 - a1[2] * c2 + a1[3] * c1);
    r.row[0].c[2] = a1[0] * c4 - a1[1] * c2 + a1[3] * c0;
    r.row[0].c[3] = -(a1[0] * c3 - a1[1] * c1 + a1[2] * c0);
    r.row[1].c[0] = -(a0[1] * c5 - a0[2] * c4 + a0[3] * c3);
    r.row[1].c[1] = a0[0] * c5 - a0[2] * c2 + a0[3] * c1;
    r.row[1].c[2] = -(a0[0] * c4 - a0[1] * c2 + a0[3] * c0);
    r.row[1].c[3] = a0[0] * c3 - a0[1] * c1 + a0[2] * c0;
    r.row[2].c[0] = a3[1] * s5 - a3[2] * s4 + a3[3] * s3;
    r.row[2].c[1] = -(a3[0] * s5 - a3[2] * s2 + a3[3] * s1);
    r.row[2].c[2] = a3[0] * s4 - a3[1] * s2 + a3[3] * s0;
    r.row[2].c[3] = -(a3[0] * s3 - a3[1] * s1 + a3[2] * s0);
    r.row[3].c[0] = -(a2[1] * s5 - a2[2] * s4 + a2[3] * s3);
    r.row[3].c[1] = a2[0] * s5 - a2[2] * s2 + a2[3] * s1;
    r.row[3].c[2] = -(a2[0] * s4 - a2[1] * s2 + a2[3] * s0);
    r.row[3].c[3] = a2[0] * s3 - a2[1] * s1 + a2[2] * s0;
    return r;
}

}  // namespace detail

template <unsigned N, typename T>
WEFT_FN_SMALL T determinant(const mat_t<N, N, T>& a) {
    return dot(a.row[0], detail::cofactor(a).row[0]);
}
template <unsigned N, typename T>
WEFT_FN_SMALL void adj_determinant(const mat_t<N, N, T>& a, mat_t<N, N, T>& adj_a, const T& adj_ret) {
    adj_a += detail::cofactor(a) * adj_ret;
}

template <typename T>
WEFT_FN_SMALL T determinant(const mat_t<3, 3, T>& a) {
    return dot(a.row[0], cross(a.row[1], a.row[2]));
}
template <typename T>
WEFT_FN_SMALL void adj_determinant(const mat_t<3, 3, T>& a, mat_t<3, 3, T>& adj_a, const T& adj_ret) {
    adj_a += detail::cofactor(a) * adj_ret;
}

// inverse = cofactor^T / det; a singular matrix gives the zero matrix
template <unsigned N, typename T>
WEFT_FN mat_t<N, N, T> inverse(const mat_t<N, N, T>& a) {
    mat_t<N, N, T> cof = detail::cofactor(a);
    T det = dot(a.row[0], cof.row[0]);
    if (det == T(0)) return mat_t<N, N, T>();
    return transpose(cof) * (T(1) / det);
}
template <unsigned N, typename T>
WEFT_FN void adj_inverse(const mat_t<N, N, T>& a, mat_t<N, N, T>& adj_a, const mat_t<N, N, T>& adj_ret) {
    // adj_a -= inv^T adj_ret inv^T
    mat_t<N, N, T> invT = transpose(inverse(a));
    adj_a -= invT * adj_ret * invT;
}

// ---------------------------------------------------------------------------------------------
// 3x3 decompositions (Jacobi iterations)

namespace detail {

template <typename T> struct jac_ { static constexpr int sweeps = 12; };
template <> struct jac_<float> { static constexpr int sweeps = 8; };

WEFT_FN float jac_eps(float) { return 1e-7f; }
WEFT_FN double jac_eps(double) { return 1e-15; }
WEFT_FN float denom_eps(float) { return 1e-6f; }
WEFT_FN double denom_eps(double) { return 1e-12; }
// float16: Jacobi sweeps stop at half's own precision (epsilon 2^-10); the adjoints' degeneracy guard is ten times it
WEFT_FN half jac_eps(half) { return half(1e-3f); }
WEFT_FN half denom_eps(half) { return half(1e-2f); }
// added to the scale the guard is relative to, so an all-zero input still gets a non-zero guard; for float16 large
// enough that 1 / guard stays finite (below 65504)
WEFT_FN float denom_floor(float) { return 1e-30f; }
WEFT_FN double denom_floor(double) { return 1e-30; }
WEFT_FN half denom_floor(half) { return half(1e-2f); }

// tangent of the Jacobi rotation angle: root of t^2 + 2 zeta t - 1 = 0 with the smaller magnitude
template <typename T>
WEFT_FN T jacobi_tan(T zeta) {
    T az = abs(zeta);
    T t = az > T(1e8) ? T(0.5) / az : T(1) / (az + sqrt(T(1) + az * az));
    return zeta < T(0) ? -t : t;
}

// clamp a denominator away from zero keeping its sign
template <typename T>
WEFT_FN T safe_denom(T d, T eps) {
    if (d >= T(0)) return d < eps ? eps : d;
    return d > -eps ? -eps : d;
}

template <typename T>
WEFT_FN_SMALL vec_t<3, T> col(const mat_t<3, 3, T>& m, int j) {
    return vec_t<3, T>(m.row[0].c[j], m.row[1].c[j], m.row[2].c[j]);
}

template <typename T>
WEFT_FN_SMALL mat_t<3, 3, T> from_cols(const vec_t<3, T>& a, const vec_t<3, T>& b, const vec_t<3, T>& c) {
    return mat_t<3, 3, T>(a.c[0], b.c[0], c.c[0], a.c[1], b.c[1], c.c[1], a.c[2], b.c[2], c.c[2]);
}

// a unit vector orthogonal to unit vector u
template <typename T>
WEFT_FN vec_t<3, T> any_perp(const vec_t<3, T>& u) {
    vec_t<3, T> e = abs(u.c[0]) < T(0.7) ? vec_t<3, T>(T(1), T(0), T(0)) : vec_t<3, T>(T(0), T(1), T(0));
    return normalize(cross(u, e));
}

template <typename T>
WEFT_FN void swap_(T& a, T& b) {
    T t = a;
    a = b;
    b = t;
}

}  // namespace detail

// A = U diag(sigma) V^T with U, V proper rotations (det = +1), sigma sorted by decreasing magnitude; the
// last singular value carries the sign of det(A).  One-sided (Hestenes) Jacobi.
template <typename T>
WEFT_FN void svd3(const mat_t<3, 3, T>& A, mat_t<3, 3, T>& U, vec_t<3, T>& sigma, mat_t<3, 3, T>& V) {
    vec_t<3, T> b[3] = {detail::col(A, 0), detail::col(A, 1), detail::col(A, 2)};  // columns of A V
    vec_t<3, T> v[3] = {vec_t<3, T>(T(1), T(0), T(0)), vec_t<3, T>(T(0), T(1), T(0)),
                        vec_t<3, T>(T(0), T(0), T(1))};  // columns of V
    const T eps = detail::jac_eps(T(0));
    for (int sweep = 0; sweep < detail::jac_<T>::sweeps; ++sweep) {
        bool rotated = false;
        for (int k = 0; k < 3; ++k) {
            const int p = k == 2 ? 1 : 0;
            const int q = k == 0 ? 1 : 2;
            T alpha = dot(b[p], b[p]);
            T beta = dot(b[q], b[q]);
            T gamma = dot(b[p], b[q]);
            if (gamma == T(0) || gamma * gamma <= eps * eps * alpha * beta) continue;
            rotated = true;
            T t = detail::jacobi_tan(T((beta - alpha) / (T(2) * gamma)));
            T cs = T(1) / sqrt(T(1) + t * t);
            T sn = cs * t;
            vec_t<3, T> bp = b[p], vp = v[p];
            b[p] = bp * cs - b[q] * sn;
            b[q] = bp * sn + b[q] * cs;
            v[p] = vp * cs - v[q] * sn;
            v[q] = vp * sn + v[q] * cs;
        }
        if (!rotated) break;
    }
    // sort by decreasing column norm
    T n[3] = {dot(b[0], b[0]), dot(b[1], b[1]), dot(b[2], b[2])};
    if (n[0] < n[1]) { detail::swap_(n[0], n[1]); detail::swap_(b[0], b[1]); detail::swap_(v[0], v[1]); }
    if (n[1] < n[2]) { detail::swap_(n[1], n[2]); detail::swap_(b[1], b[2]); detail::swap_(v[1], v[2]); }
    if (n[0] < n[1]) { detail::swap_(n[0], n[1]); detail::swap_(b[0], b[1]); detail::swap_(v[0], v[1]); }
    // make V a rotation
    if (dot(v[0], cross(v[1], v[2])) < T(0)) {
        v[2] = -v[2];
        b[2] = -b[2];
    }
    // orthonormal U from the rotated columns; u2 = u0 x u1 keeps det(U) = +1
    T s0 = sqrt(n[0]);
    vec_t<3, T> u0, u1, u2;
    if (s0 > T(0)) {
        u0 = b[0] / s0;
        vec_t<3, T> w = b[1] - u0 * dot(u0, b[1]);
        T lw = length(w);
        u1 = lw > s0 * eps ? w / lw : detail::any_perp(u0);
    } else {
        u0 = vec_t<3, T>(T(1), T(0), T(0));
        u1 = vec_t<3, T>(T(0), T(1), T(0));
    }
    u2 = cross(u0, u1);
    sigma = vec_t<3, T>(s0, dot(u1, b[1]), dot(u2, b[2]));
    U = detail::from_cols(u0, u1, u2);
    V = detail::from_cols(v[0], v[1], v[2]);
}
template <typename T>
WEFT_FN void adj_svd3(const mat_t<3, 3, T>&, const mat_t<3, 3, T>& U, const vec_t<3, T>& sigma,
                      const mat_t<3, 3, T>& V, mat_t<3, 3, T>& adj_A, const mat_t<3, 3, T>& adj_U,
                      const vec_t<3, T>& adj_sigma, const mat_t<3, 3, T>& adj_V) {
    // adj_A = U [diag(adj_sigma) + (F o (U^T adj_U - adj_U^T U)) S + S (F o (V^T adj_V - adj_V^T V))] V^T
    // with F_ij = 1 / (s_j^2 - s_i^2), i != j
    mat_t<3, 3, T> Ut = transpose(U), Vt = transpose(V);
    mat_t<3, 3, T> gu = Ut * adj_U;
    mat_t<3, 3, T> gv = Vt * adj_V;
    const T eps = detail::denom_eps(T(0)) * (sigma.c[0] * sigma.c[0] + detail::denom_floor(T(0)));
    mat_t<3, 3, T> P;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            if (i == j) {
                P.row[i].c[i] = adj_sigma.c[i];
            } else {
                T si = sigma.c[i], sj = sigma.c[j];
                T F = T(1) / detail::safe_denom(T(sj * sj - si * si), eps);
                P.row[i].c[j] = F * ((gu.row[i].c[j] - gu.row[j].c[i]) * sj + si * (gv.row[i].c[j] - gv.row[j].c[i]));
            }
        }
    adj_A += U * P * Vt;
}

// A = U diag(sigma) V^T of a 2x2 matrix in closed form: U and V are rotations (det = +1), sigma[0] >= |sigma[1]|,
// and sigma[1] carries the sign of det(A) (the convention of svd3). With e, f, g, h the halved sums and differences
// of A's entries, A = R(phi) diag(q + r, q - r) R(theta) where q = |(e, h)|, r = |(f, g)|, and the two rotation
// angles are the half sum and half difference of atan2(h, e) and atan2(g, f).
template <typename T>
WEFT_FN void svd2(const mat_t<2, 2, T>& A, mat_t<2, 2, T>& U, vec_t<2, T>& sigma, mat_t<2, 2, T>& V) {
    const T a = A.row[0].c[0], b = A.row[0].c[1], c = A.row[1].c[0], d = A.row[1].c[1];
    const T e = T(0.5) * (a + d), f = T(0.5) * (a - d), g = T(0.5) * (c + b), h = T(0.5) * (c - b);
    const T q = sqrt(e * e + h * h), r = sqrt(f * f + g * g);
    sigma = vec_t<2, T>(q + r, q - r);
    const T t1 = atan2(g, f), t2 = atan2(h, e);
    const T phi = T(0.5) * (t2 + t1), theta = T(0.5) * (t2 - t1);
    const T cu = cos(phi), su = sin(phi), cv = cos(theta), sv = sin(theta);
    U = mat_t<2, 2, T>(cu, -su, su, cu);
    V = mat_t<2, 2, T>(cv, sv, -sv, cv);
}
template <typename T>
WEFT_FN void adj_svd2(const mat_t<2, 2, T>&, const mat_t<2, 2, T>& U, const vec_t<2, T>& sigma,
                      const mat_t<2, 2, T>& V, mat_t<2, 2, T>& adj_A, const mat_t<2, 2, T>& adj_U,
                      const vec_t<2, T>& adj_sigma, const mat_t<2, 2, T>& adj_V) {
    // the rule of adj_svd3 for two singular values (valid for signed sigma: U^T dU and V^T dV are skew)
    const mat_t<2, 2, T> gu = transpose(U) * adj_U, gv = transpose(V) * adj_V;
    const T eps = detail::denom_eps(T(0)) * (sigma.c[0] * sigma.c[0] + detail::denom_floor(T(0)));
    mat_t<2, 2, T> P;
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
            if (i == j) {
                P.row[i].c[i] = adj_sigma.c[i];
            } else {
                const T si = sigma.c[i], sj = sigma.c[j];
                const T F = T(1) / detail::safe_denom(T(sj * sj - si * si), eps);
                P.row[i].c[j] = F * ((gu.row[i].c[j] - gu.row[j].c[i]) * sj + si * (gv.row[i].c[j] - gv.row[j].c[i]));
            }
        }
    adj_A += U * P * transpose(V);
}

// symmetric eigen-decomposition A = Q diag(d) Q^T (A is symmetrised first); eigenvalues ascending, eigenvectors
// in the columns of Q.  Cyclic Jacobi.
template <typename T>
WEFT_FN void eig3(const mat_t<3, 3, T>& A, mat_t<3, 3, T>& Q, vec_t<3, T>& d) {
    T a[3][3];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) a[i][j] = T(0.5) * (A.row[i].c[j] + A.row[j].c[i]);
    mat_t<3, 3, T> q = identity<3, T>();
    T fro = T(0);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) fro += a[i][j] * a[i][j];
    const T tol = detail::jac_eps(T(0)) * sqrt(fro);
    for (int sweep = 0; sweep < detail::jac_<T>::sweeps; ++sweep) {
        bool rotated = false;
        for (int k = 0; k < 3; ++k) {
            const int p = k == 2 ? 1 : 0;
            const int r = k == 0 ? 1 : 2;
            const int o = 3 - p - r;
            T apq = a[p][r];
            if (apq == T(0) || abs(apq) <= tol) continue;
            rotated = true;
            T t = detail::jacobi_tan(T((a[r][r] - a[p][p]) / (T(2) * apq)));
            T cs = T(1) / sqrt(T(1) + t * t);
            T sn = t * cs;
            a[p][p] -= t * apq;
            a[r][r] += t * apq;
            a[p][r] = a[r][p] = T(0);
            T aop = a[o][p], aor = a[o][r];
            a[o][p] = a[p][o] = cs * aop - sn * aor;
            a[o][r] = a[r][o] = sn * aop + cs * aor;
            for (int m = 0; m < 3; ++m) {
                T qp = q.row[m].c[p], qr = q.row[m].c[r];
                q.row[m].c[p] = cs * qp - sn * qr;
                q.row[m].c[r] = sn * qp + cs * qr;
            }
        }
        if (!rotated) break;
    }
    // sort ascending (column swaps of q)
    vec_t<3, T> c0 = detail::col(q, 0), c1 = detail::col(q, 1), c2 = detail::col(q, 2);
    T e0 = a[0][0], e1 = a[1][1], e2 = a[2][2];
    if (e1 < e0) { detail::swap_(e0, e1); detail::swap_(c0, c1); }
    if (e2 < e1) { detail::swap_(e1, e2); detail::swap_(c1, c2); }
    if (e1 < e0) { detail::swap_(e0, e1); detail::swap_(c0, c1); }
    Q = detail::from_cols(c0, c1, c2);
    d = vec_t<3, T>(e0, e1, e2);
}
template <typename T>
WEFT_FN void adj_eig3(const mat_t<3, 3, T>&, const mat_t<3, 3, T>& Q, const vec_t<3, T>& d, mat_t<3, 3, T>& adj_A,
                      const mat_t<3, 3, T>& adj_Q, const vec_t<3, T>& adj_d) {
    // adj_S = Q [diag(adj_d) + F o (Q^T adj_Q)] Q^T, F_ij = 1 / (d_j - d_i); adj_A = sym(adj_S)
    mat_t<3, 3, T> g = transpose(Q) * adj_Q;
    T scale = max(abs(d.c[0]), abs(d.c[2]));
    const T eps = detail::denom_eps(T(0)) * (scale + detail::denom_floor(T(0)));
    mat_t<3, 3, T> P;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            P.row[i].c[j] = i == j ? adj_d.c[i] : g.row[i].c[j] / detail::safe_denom(T(d.c[j] - d.c[i]), eps);
    mat_t<3, 3, T> S = Q * P * transpose(Q);
    adj_A += (S + transpose(S)) * T(0.5);
}

// A = Q R, Q orthogonal, R upper triangular with non-negative diagonal (modified Gram-Schmidt)
template <typename T>
WEFT_FN void qr3(const mat_t<3, 3, T>& A, mat_t<3, 3, T>& Q, mat_t<3, 3, T>& R) {
    vec_t<3, T> a0 = detail::col(A, 0), a1 = detail::col(A, 1), a2 = detail::col(A, 2);
    R = mat_t<3, 3, T>();
    T r00 = length(a0);
    vec_t<3, T> q0 = r00 > T(0) ? a0 / r00 : vec_t<3, T>(T(1), T(0), T(0));
    T r01 = dot(q0, a1);
    vec_t<3, T> w1 = a1 - q0 * r01;
    T r11 = length(w1);
    vec_t<3, T> q1 = r11 > T(0) ? w1 / r11 : detail::any_perp(q0);
    T r02 = dot(q0, a2);
    vec_t<3, T> w2 = a2 - q0 * r02;
    T r12 = dot(q1, w2);
    w2 -= q1 * r12;
    T r22 = length(w2);
    vec_t<3, T> q2 = r22 > T(0) ? w2 / r22 : cross(q0, q1);
    Q = detail::from_cols(q0, q1, q2);
    R.row[0] = vec_t<3, T>(r00, r01, r02);
    R.row[1] = vec_t<3, T>(T(0), r11, r12);
    R.row[2] = vec_t<3, T>(T(0), T(0), r22);
}
template <typename T>
WEFT_FN void adj_qr3(const mat_t<3, 3, T>&, const mat_t<3, 3, T>& Q, const mat_t<3, 3, T>& R, mat_t<3, 3, T>& adj_A,
                     const mat_t<3, 3, T>& adj_Q, const mat_t<3, 3, T>& adj_R) {
    // M = R adj_R^T - adj_Q^T Q ; adj_A = (adj_Q + Q copyltu(M)) R^{-T}
    mat_t<3, 3, T> M = R * transpose(adj_R) - transpose(adj_Q) * Q;
    for (int i = 0; i < 3; ++i)
        for (int j = i + 1; j < 3; ++j) M.row[i].c[j] = M.row[j].c[i];
    adj_A += (adj_Q + Q * M) * transpose(inverse(R));
}

// polar decomposition A = Q P with Q a rotation and P symmetric (P = V S V^T, Q = U V^T from svd3)
template <typename T>
WEFT_FN void polar_decomposition(const mat_t<3, 3, T>& A, mat_t<3, 3, T>& Q, mat_t<3, 3, T>& P) {
    mat_t<3, 3, T> U, V;
    vec_t<3, T> s;
    svd3(A, U, s, V);
    mat_t<3, 3, T> Vt = transpose(V);
    Q = U * Vt;
    P = V * diag(s) * Vt;
}
template <typename T>
WEFT_FN void adj_polar_decomposition(const mat_t<3, 3, T>& A, const mat_t<3, 3, T>& Q, const mat_t<3, 3, T>&,
                                     mat_t<3, 3, T>& adj_A, const mat_t<3, 3, T>& adj_Q,
                                     const mat_t<3, 3, T>& adj_P) {
    mat_t<3, 3, T> U, V;
    vec_t<3, T> s;
    svd3(A, U, s, V);
    // P = Q^T A: adj_A += Q adj_P, adj_Q_total = adj_Q + A adj_P^T
    adj_A += Q * adj_P;
    mat_t<3, 3, T> G = adj_Q + A * transpose(adj_P);
    // Q = U V^T: with M = U^T G V, adj_X_ij = (M_ij - M_ji) / (s_i + s_j), adj_A += U adj_X V^T
    mat_t<3, 3, T> M = transpose(U) * G * V;
    const T eps = detail::denom_eps(T(0)) * (abs(s.c[0]) + detail::denom_floor(T(0)));
    mat_t<3, 3, T> X;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            if (i != j) X.row[i].c[j] = (M.row[i].c[j] - M.row[j].c[i]) / detail::safe_denom(T(s.c[i] + s.c[j]), eps);
    adj_A += U * X * transpose(V);
}

// classification of every element (see vec.h)
template <unsigned R, unsigned C, typename T>
WEFT_FN bool isnan(const mat_t<R, C, T>& a) {
    for (unsigned i = 0; i < R; ++i) if (isnan(a.row[i])) return true;
    return false;
}
template <unsigned R, unsigned C, typename T>
WEFT_FN bool isinf(const mat_t<R, C, T>& a) {
    for (unsigned i = 0; i < R; ++i) if (isinf(a.row[i])) return true;
    return false;
}
template <unsigned R, unsigned C, typename T>
WEFT_FN bool isfinite(const mat_t<R, C, T>& a) {
    for (unsigned i = 0; i < R; ++i) if (!isfinite(a.row[i])) return false;
    return true;
}

}  // namespace weft
