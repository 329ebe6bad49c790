// weft native geometry: stand-alone geometric helpers (no mesh or id): closest points between segments and
// triangle-triangle intersection. Templated on the scalar (float32 and float64 overloads).
#pragma once
#include "../vec.h"

namespace weft {

namespace geo {
template <typename T>
WEFT_FN T clamp01(T x) {
    return x < T(0) ? T(0) : (x > T(1) ? T(1) : x);
}
}  // namespace geo

// Closest points of segments [p1, q1] and [p2, q2] (Ericson, Real-Time Collision Detection 5.1.9): (s, t, distance)
// with the points p1 + s (q1 - p1) and p2 + t (q2 - p2); a segment of squared length <= eps counts as a point.
template <typename T>
WEFT_FN vec_t<3, T> closest_point_edge_edge(const vec_t<3, T>& p1, const vec_t<3, T>& q1, const vec_t<3, T>& p2,
                                            const vec_t<3, T>& q2, T eps) {
    const vec_t<3, T> d1 = q1 - p1, d2 = q2 - p2, r = p1 - p2;
    const T a = dot(d1, d1), e = dot(d2, d2), f = dot(d2, r);
    T s = T(0), t = T(0);
    if (a <= eps && e <= eps) {
        s = t = T(0);
    } else if (a <= eps) {
        t = geo::clamp01(f / e);
    } else {
        const T c = dot(d1, r);
        if (e <= eps) {
            s = geo::clamp01(-c / a);
        } else {
            const T b = dot(d1, d2);
            const T denom = a * e - b * b;
            s = denom != T(0) ? geo::clamp01((b * f - c * e) / denom) : T(0);
            t = (b * s + f) / e;
            if (t < T(0)) {
                t = T(0);
                s = geo::clamp01(-c / a);
            } else if (t > T(1)) {
                t = T(1);
                s = geo::clamp01((b - c) / a);
            }
        }
    }
    const vec_t<3, T> c1 = p1 + d1 * s, c2 = p2 + d2 * t;
    return vec_t<3, T>(s, t, length(c1 - c2));
}

// Adjoint: the branch the forward took is recomputed and differentiated; a clamped parameter (s or t at 0 or 1, or a
// degenerate segment) is a constant there, the distance's gradient is zero where the closest points coincide.
template <typename T>
WEFT_FN void adj_closest_point_edge_edge(const vec_t<3, T>& p1, const vec_t<3, T>& q1, const vec_t<3, T>& p2,
                                         const vec_t<3, T>& q2, T eps, vec_t<3, T>& adj_p1, vec_t<3, T>& adj_q1,
                                         vec_t<3, T>& adj_p2, vec_t<3, T>& adj_q2, T& /*adj_eps*/,
                                         const vec_t<3, T>& adj_ret) {
    const vec_t<3, T> d1 = q1 - p1, d2 = q2 - p2, r = p1 - p2;
    const T a = dot(d1, d1), e = dot(d2, d2), f = dot(d2, r), c = dot(d1, r), b = dot(d1, d2);
    const vec_t<3, T> st = closest_point_edge_edge(p1, q1, p2, q2, eps);
    const T s = st[0], t = st[1];
    vec_t<3, T> adj_d1, adj_d2, adj_r;
    // dist = |c1 - c2| with c1 = p1 + d1 s, c2 = p2 + d2 t
    const vec_t<3, T> u = (p1 + d1 * s) - (p2 + d2 * t);
    const T len = length(u);
    const vec_t<3, T> adj_u = len > T(0) ? u * (adj_ret[2] / len) : vec_t<3, T>();
    adj_p1 += adj_u;
    adj_p2 -= adj_u;
    adj_d1 += adj_u * s;
    adj_d2 -= adj_u * t;
    T adj_s = adj_ret[0] + dot(adj_u, d1), adj_t = adj_ret[1] - dot(adj_u, d2);
    T adj_a = T(0), adj_b = T(0), adj_c = T(0), adj_e = T(0), adj_f = T(0);
    auto interior = [](T x) { return x > T(0) && x < T(1); };
    auto s_from = [&](T num) {  // s = clamp01(num / a): d/dnum and d/da when not clamped
        const T q = num / a;
        if (!interior(q)) return T(0);
        adj_a -= adj_s * q / a;
        return adj_s / a;
    };
    if (a <= eps && e <= eps) {
    } else if (a <= eps) {
        const T q = f / e;
        if (interior(q)) {
            adj_f += adj_t / e;
            adj_e -= adj_t * q / e;
        }
    } else if (e <= eps) {
        adj_c -= s_from(-c);
    } else {
        const T denom = a * e - b * b;
        const T s0 = denom != T(0) ? geo::clamp01((b * f - c * e) / denom) : T(0);
        const T t0 = (b * s0 + f) / e;
        if (t0 < T(0)) {
            adj_c -= s_from(-c);
        } else if (t0 > T(1)) {
            const T g = s_from(b - c);
            adj_b += g;
            adj_c -= g;
        } else {
            // t = (b s0 + f) / e, s = s0 = clamp01((b f - c e) / denom)
            adj_b += adj_t * s0 / e;
            adj_f += adj_t / e;
            adj_e -= adj_t * t0 / e;
            const T adj_s0 = adj_s + adj_t * b / e;
            const T q = denom != T(0) ? (b * f - c * e) / denom : T(0);
            if (denom != T(0) && interior(q)) {
                const T adj_num = adj_s0 / denom, adj_den = -adj_s0 * q / denom;
                adj_b += adj_num * f - T(2) * adj_den * b;
                adj_f += adj_num * b;
                adj_c -= adj_num * e;
                adj_e += adj_den * a - adj_num * c;
                adj_a += adj_den * e;
            }
        }
    }
    adj_d1 += d1 * (T(2) * adj_a) + d2 * adj_b + r * adj_c;
    adj_d2 += d2 * (T(2) * adj_e) + d1 * adj_b + r * adj_f;
    adj_r += d2 * adj_f + d1 * adj_c;
    adj_q1 += adj_d1;
    adj_p1 -= adj_d1;
    adj_q2 += adj_d2;
    adj_p2 -= adj_d2;
    adj_p1 += adj_r;
    adj_p2 -= adj_r;
}

namespace geo {
// Whether segment [a, b] meets triangle (v0, v1, v2) (non-coplanar case; boundaries count).
template <typename T>
WEFT_FN bool segment_hits_triangle(const vec_t<3, T>& a, const vec_t<3, T>& b, const vec_t<3, T>& v0,
                                   const vec_t<3, T>& v1, const vec_t<3, T>& v2) {
    const vec_t<3, T> d = b - a, e1 = v1 - v0, e2 = v2 - v0;
    const vec_t<3, T> p = cross(d, e2);
    const T det = dot(e1, p);
    if (det == T(0)) return false;
    const T inv = T(1) / det;
    const vec_t<3, T> s = a - v0;
    const T u = dot(s, p) * inv;
    if (u < T(0) || u > T(1)) return false;
    const vec_t<3, T> q = cross(s, e1);
    const T v = dot(d, q) * inv;
    if (v < T(0) || u + v > T(1)) return false;
    const T t = dot(e2, q) * inv;
    return t >= T(0) && t <= T(1);
}

template <typename T>
WEFT_FN T orient2(const T* a, const T* b, const T* c) {
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
}

template <typename T>
WEFT_FN bool segments_cross2(const T* a, const T* b, const T* c, const T* d) {
    const T o1 = orient2(a, b, c), o2 = orient2(a, b, d), o3 = orient2(c, d, a), o4 = orient2(c, d, b);
    if (((o1 > 0 && o2 < 0) || (o1 < 0 && o2 > 0)) && ((o3 > 0 && o4 < 0) || (o3 < 0 && o4 > 0))) return true;
    auto on = [](const T* p, const T* q, const T* r) {  // r on segment pq (collinear)
        return fmin(p[0], q[0]) <= r[0] && r[0] <= fmax(p[0], q[0]) && fmin(p[1], q[1]) <= r[1] &&
               r[1] <= fmax(p[1], q[1]);
    };
    return (o1 == 0 && on(a, b, c)) || (o2 == 0 && on(a, b, d)) || (o3 == 0 && on(c, d, a)) ||
           (o4 == 0 && on(c, d, b));
}

template <typename T>
WEFT_FN bool point_in_triangle2(const T* p, const T* a, const T* b, const T* c) {
    const T d1 = orient2(a, b, p), d2 = orient2(b, c, p), d3 = orient2(c, a, p);
    const bool neg = d1 < 0 || d2 < 0 || d3 < 0, pos = d1 > 0 || d2 > 0 || d3 > 0;
    return !(neg && pos);
}
}  // namespace geo

// 1 when triangles (v0, v1, v2) and (u0, u1, u2) intersect (touching counts), else 0. Non-coplanar triangles meet
// exactly when an edge of one crosses the other; coplanar ones are tested in the plane of projection.
template <typename T>
WEFT_FN int32 intersect_tri_tri(const vec_t<3, T>& v0, const vec_t<3, T>& v1, const vec_t<3, T>& v2,
                                const vec_t<3, T>& u0, const vec_t<3, T>& u1, const vec_t<3, T>& u2) {
    const vec_t<3, T> n = cross(v1 - v0, v2 - v0);
    const T du0 = dot(n, u0 - v0), du1 = dot(n, u1 - v0), du2 = dot(n, u2 - v0);
    const T scale = length(n) * (length(u0 - v0) + length(u1 - v0) + length(u2 - v0) + T(1e-30));
    const T tol = (sizeof(T) == 4 ? T(1e-6) : T(1e-12)) * scale;
    const bool coplanar = fabs(du0) <= tol && fabs(du1) <= tol && fabs(du2) <= tol;
    if (!coplanar) {
        const vec_t<3, T> V[3] = {v0, v1, v2}, U[3] = {u0, u1, u2};
        for (int k = 0; k < 3; ++k) {
            if (geo::segment_hits_triangle(U[k], U[(k + 1) % 3], v0, v1, v2)) return 1;
            if (geo::segment_hits_triangle(V[k], V[(k + 1) % 3], u0, u1, u2)) return 1;
        }
        return 0;
    }
    // project onto the plane's dominant axes
    int drop = 0;
    if (fabs(n.c[1]) > fabs(n.c[drop])) drop = 1;
    if (fabs(n.c[2]) > fabs(n.c[drop])) drop = 2;
    const int i0 = drop == 0 ? 1 : 0, i1 = drop == 2 ? 1 : 2;
    T A[3][2], B[3][2];
    const vec_t<3, T> V[3] = {v0, v1, v2}, U[3] = {u0, u1, u2};
    for (int k = 0; k < 3; ++k) {
        A[k][0] = V[k].c[i0]; A[k][1] = V[k].c[i1];
        B[k][0] = U[k].c[i0]; B[k][1] = U[k].c[i1];
    }
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b)
            if (geo::segments_cross2(A[a], A[(a + 1) % 3], B[b], B[(b + 1) % 3])) return 1;
    if (geo::point_in_triangle2(A[0], B[0], B[1], B[2]) || geo::point_in_triangle2(B[0], A[0], A[1], A[2])) return 1;
    return 0;
}

}  // namespace weft
