// weft native: spatial (6D) vectors and matrices in (angular w, linear v) order.
#pragma once

#include "transform.h"

namespace weft {

template <typename T> using spatial_vector_t = vec_t<6, T>;
template <typename T> using spatial_matrix_t = mat_t<6, 6, T>;
typedef vec_t<6, float> spatial_vectorf;
typedef vec_t<6, double> spatial_vectord;
typedef vec_t<6, half> spatial_vectorh;
typedef mat_t<6, 6, float> spatial_matrixf;
typedef mat_t<6, 6, double> spatial_matrixd;
typedef mat_t<6, 6, half> spatial_matrixh;
typedef spatial_vectorf spatial_vector;
typedef spatial_matrixf spatial_matrix;

template <typename T>
WEFT_FN vec_t<3, T> spatial_top(const vec_t<6, T>& a) { return vec_t<3, T>(a.c[0], a.c[1], a.c[2]); }
template <typename T>
WEFT_FN void adj_spatial_top(const vec_t<6, T>&, vec_t<6, T>& adj_a, const vec_t<3, T>& adj_ret) {
    for (int i = 0; i < 3; ++i) adj_a.c[i] += adj_ret.c[i];
}

template <typename T>
WEFT_FN vec_t<3, T> spatial_bottom(const vec_t<6, T>& a) { return vec_t<3, T>(a.c[3], a.c[4], a.c[5]); }
template <typename T>
WEFT_FN void adj_spatial_bottom(const vec_t<6, T>&, vec_t<6, T>& adj_a, const vec_t<3, T>& adj_ret) {
    for (int i = 0; i < 3; ++i) adj_a.c[i + 3] += adj_ret.c[i];
}

template <typename T>
WEFT_FN T spatial_dot(const vec_t<6, T>& a, const vec_t<6, T>& b) { return dot(a, b); }
template <typename T>
WEFT_FN void adj_spatial_dot(const vec_t<6, T>& a, const vec_t<6, T>& b, vec_t<6, T>& adj_a, vec_t<6, T>& adj_b,
                             const T& adj_ret) {
    adj_dot(a, b, adj_a, adj_b, adj_ret);
}

// motion cross product: (wa x wb, wa x vb + va x wb)
template <typename T>
WEFT_FN vec_t<6, T> spatial_cross(const vec_t<6, T>& a, const vec_t<6, T>& b) {
    vec_t<3, T> wa = spatial_top(a), va = spatial_bottom(a), wb = spatial_top(b), vb = spatial_bottom(b);
    return vec_t<6, T>(cross(wa, wb), cross(wa, vb) + cross(va, wb));
}
template <typename T>
WEFT_FN void adj_spatial_cross(const vec_t<6, T>& a, const vec_t<6, T>& b, vec_t<6, T>& adj_a, vec_t<6, T>& adj_b,
                               const vec_t<6, T>& adj_ret) {
    vec_t<3, T> wa = spatial_top(a), va = spatial_bottom(a), wb = spatial_top(b), vb = spatial_bottom(b);
    vec_t<3, T> gw = spatial_top(adj_ret), gv = spatial_bottom(adj_ret);
    vec_t<3, T> awa, ava, awb, avb;
    adj_cross(wa, wb, awa, awb, gw);
    adj_cross(wa, vb, awa, avb, gv);
    adj_cross(va, wb, ava, awb, gv);
    adj_a += vec_t<6, T>(awa, ava);
    adj_b += vec_t<6, T>(awb, avb);
}

// force cross product: (wa x wb + va x vb, wa x vb)
template <typename T>
WEFT_FN vec_t<6, T> spatial_cross_dual(const vec_t<6, T>& a, const vec_t<6, T>& b) {
    vec_t<3, T> wa = spatial_top(a), va = spatial_bottom(a), wb = spatial_top(b), vb = spatial_bottom(b);
    return vec_t<6, T>(cross(wa, wb) + cross(va, vb), cross(wa, vb));
}
template <typename T>
WEFT_FN void adj_spatial_cross_dual(const vec_t<6, T>& a, const vec_t<6, T>& b, vec_t<6, T>& adj_a,
                                    vec_t<6, T>& adj_b, const vec_t<6, T>& adj_ret) {
    vec_t<3, T> wa = spatial_top(a), va = spatial_bottom(a), wb = spatial_top(b), vb = spatial_bottom(b);
    vec_t<3, T> gw = spatial_top(adj_ret), gv = spatial_bottom(adj_ret);
    vec_t<3, T> awa, ava, awb, avb;
    adj_cross(wa, wb, awa, awb, gw);
    adj_cross(va, vb, ava, avb, gw);
    adj_cross(wa, vb, awa, avb, gv);
    adj_a += vec_t<6, T>(awa, ava);
    adj_b += vec_t<6, T>(awb, avb);
}

// [[R, 0], [S, R]]
template <typename T>
WEFT_FN mat_t<6, 6, T> spatial_adjoint(const mat_t<3, 3, T>& R, const mat_t<3, 3, T>& S) {
    mat_t<6, 6, T> m;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            m.row[i].c[j] = R.row[i].c[j];
            m.row[i + 3].c[j + 3] = R.row[i].c[j];
            m.row[i + 3].c[j] = S.row[i].c[j];
        }
    return m;
}
template <typename T>
WEFT_FN void adj_spatial_adjoint(const mat_t<3, 3, T>&, const mat_t<3, 3, T>&, mat_t<3, 3, T>& adj_R,
                                 mat_t<3, 3, T>& adj_S, const mat_t<6, 6, T>& adj_ret) {
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            adj_R.row[i].c[j] += adj_ret.row[i].c[j] + adj_ret.row[i + 3].c[j + 3];
            adj_S.row[i].c[j] += adj_ret.row[i + 3].c[j];
        }
}

}  // namespace weft
