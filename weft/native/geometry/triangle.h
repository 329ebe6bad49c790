// weft native geometry: triangle primitives (closest point, ray intersection, solid angle) with adjoints.
// Barycentrics follow Warp: (u, v) weight the first and second vertex, 1 - u - v the third.
#pragma once
#include "../vec.h"

namespace weft {
namespace geo {

typedef vec_t<3, float32> v3;

// Triangles whose area is tiny relative to their longest edge are skipped by closest-point queries (their
// barycentrics are ill-defined).
WEFT_FN bool degenerate_triangle(const v3& a, const v3& b, const v3& c) {
    const v3 e0 = b - a, e1 = c - a, e2 = c - b;
    const float l = fmaxf(dot(e0, e0), fmaxf(dot(e1, e1), dot(e2, e2)));
    const v3 n = cross(e0, e1);
    return !(dot(n, n) > 1.0e-10f * l * l);
}

// Closest point on triangle abc to p (Ericson, Real-Time Collision Detection 5.1.5): weights (wa, wb, wc), exact
// zeros in the edge and vertex regions.
WEFT_FN void closest_weights(const v3& p, const v3& a, const v3& b, const v3& c, float& wa, float& wb, float& wc) {
    const v3 ab = b - a, ac = c - a, ap = p - a;
    const float d1 = dot(ab, ap), d2 = dot(ac, ap);
    if (d1 <= 0.0f && d2 <= 0.0f) { wa = 1.0f; wb = 0.0f; wc = 0.0f; return; }
    const v3 bp = p - b;
    const float d3 = dot(ab, bp), d4 = dot(ac, bp);
    if (d3 >= 0.0f && d4 <= d3) { wa = 0.0f; wb = 1.0f; wc = 0.0f; return; }
    const float vc = d1 * d4 - d3 * d2;
    if (vc <= 0.0f && d1 >= 0.0f && d3 <= 0.0f) {
        const float v = d1 / (d1 - d3);
        wa = 1.0f - v; wb = v; wc = 0.0f; return;
    }
    const v3 cp = p - c;
    const float d5 = dot(ab, cp), d6 = dot(ac, cp);
    if (d6 >= 0.0f && d5 <= d6) { wa = 0.0f; wb = 0.0f; wc = 1.0f; return; }
    const float vb = d5 * d2 - d1 * d6;
    if (vb <= 0.0f && d2 >= 0.0f && d6 <= 0.0f) {
        const float w = d2 / (d2 - d6);
        wa = 1.0f - w; wb = 0.0f; wc = w; return;
    }
    const float va = d3 * d6 - d5 * d4;
    if (va <= 0.0f && (d4 - d3) >= 0.0f && (d5 - d6) >= 0.0f) {
        const float w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        wa = 0.0f; wb = 1.0f - w; wc = w; return;
    }
    const float denom = 1.0f / (va + vb + vc);
    const float v = vb * denom, w = vc * denom;
    wa = 1.0f - v - w; wb = v; wc = w;
}

// Gradient of the closest point's weights (u = wa, v = wb) w.r.t. p, applied to (adj_u, adj_v): in the interior the
// weights are the in-plane barycentrics of p's projection, on an edge the segment parameter, at a vertex constant.
WEFT_FN v3 adj_closest_weights(const v3& p, const v3& a, const v3& b, const v3& c, float wa, float wb, float wc,
                               float adj_u, float adj_v) {
    // adjoints of the three weights: u = wa, v = wb, and wc = 1 - u - v is implied (not an output)
    const float g[3] = {adj_u, adj_v, 0.0f};
    const v3 verts[3] = {a, b, c};
    const float w[3] = {wa, wb, wc};
    int zero = 0;
    for (int k = 0; k < 3; ++k) zero += w[k] == 0.0f ? 1 : 0;
    if (zero >= 2) return v3();  // vertex region
    if (zero == 1) {
        // edge between vertices i (weight 1 - s) and j (weight s): s = (p - Vi).(Vj - Vi) / |Vj - Vi|^2
        int i = -1, j = -1;
        for (int k = 0; k < 3; ++k)
            if (w[k] != 0.0f) { if (i < 0) i = k; else j = k; }
        const v3 e = verts[j] - verts[i];
        const float l2 = dot(e, e);
        if (!(l2 > 0.0f)) return v3();
        return e * ((g[j] - g[i]) / l2);
    }
    // interior: p's projection h = c + u (a - c) + v (b - c); solve the 2x2 Gram system
    const v3 e1 = a - c, e2 = b - c;
    const float g11 = dot(e1, e1), g12 = dot(e1, e2), g22 = dot(e2, e2);
    const float det = g11 * g22 - g12 * g12;
    if (!(fabsf(det) > 0.0f)) return v3();
    const float i11 = g22 / det, i12 = -g12 / det, i22 = g11 / det;
    // du/dh = i11 e1 + i12 e2 ; dv/dh = i12 e1 + i22 e2
    return (e1 * i11 + e2 * i12) * g[0] + (e1 * i12 + e2 * i22) * g[1];
}

// Gradient of the closest point's weights (u = wa, v = wb) w.r.t. the vertices a, b, c (added to ga, gb, gc); the
// companion of adj_closest_weights (which gives the part w.r.t. p: the four sum to zero, a rigid shift changes nothing).
// Interior: the projection's barycentrics solve G (u, v) = (e1.(p - c), e2.(p - c)), e1 = a - c, e2 = b - c, G the Gram
// matrix; with lambda = G^-1 (adj_u, adj_v), w = lambda1 e1 + lambda2 e2 and d = p - h: ga = lambda1 d - u w,
// gb = lambda2 d - v w, gc = -(ga + gb + w). Edge (i, j): s = (p - Vi).e / |e|^2. Vertex: constant weights.
WEFT_FN void adj_closest_weights_verts(const v3& p, const v3& a, const v3& b, const v3& c, float wa, float wb, float wc,
                                       float adj_u, float adj_v, v3& ga, v3& gb, v3& gc) {
    const float g[3] = {adj_u, adj_v, 0.0f};
    const v3 verts[3] = {a, b, c};
    const float w[3] = {wa, wb, wc};
    int zero = 0;
    for (int k = 0; k < 3; ++k) zero += w[k] == 0.0f ? 1 : 0;
    if (zero >= 2) return;
    if (zero == 1) {
        int i = -1, j = -1;
        for (int k = 0; k < 3; ++k)
            if (w[k] != 0.0f) { if (i < 0) i = k; else j = k; }
        const v3 e = verts[j] - verts[i];
        const float l2 = dot(e, e);
        if (!(l2 > 0.0f)) return;
        const float gs = g[j] - g[i], s = w[j];
        const v3 pi = p - verts[i];
        const v3 gvj = (pi - e * (2.0f * s)) * (gs / l2);
        const v3 gvi = (e * (2.0f * s) - e - pi) * (gs / l2);
        v3* out[3] = {&ga, &gb, &gc};
        *out[i] += gvi;
        *out[j] += gvj;
        return;
    }
    const v3 e1 = a - c, e2 = b - c;
    const float g11 = dot(e1, e1), g12 = dot(e1, e2), g22 = dot(e2, e2);
    const float det = g11 * g22 - g12 * g12;
    if (!(fabsf(det) > 0.0f)) return;
    const float l1 = (g22 * g[0] - g12 * g[1]) / det, l2 = (g11 * g[1] - g12 * g[0]) / det;
    const v3 wv = e1 * l1 + e2 * l2;
    const v3 d = p - (c + e1 * wa + e2 * wb);
    const v3 da = d * l1 - wv * wa, db = d * l2 - wv * wb;
    ga += da;
    gb += db;
    gc -= da + db + wv;
}

// Moller-Trumbore, both sides: t along dir (in units of |dir|) and Warp barycentrics; false when parallel or behind.
WEFT_FN bool ray_triangle(const v3& o, const v3& d, const v3& a, const v3& b, const v3& c, float& t, float& u,
                          float& v) {
    const v3 e1 = b - a, e2 = c - a;
    const v3 pv = cross(d, e2);
    const float det = dot(e1, pv);
    if (det == 0.0f || det != det) return false;
    const float inv = 1.0f / det;
    const v3 tv = o - a;
    const float b1 = dot(tv, pv) * inv;
    if (b1 < 0.0f || b1 > 1.0f) return false;
    const v3 qv = cross(tv, e1);
    const float b2 = dot(d, qv) * inv;
    if (b2 < 0.0f || b1 + b2 > 1.0f) return false;
    t = dot(e2, qv) * inv;
    if (!(t >= 0.0f)) return false;
    u = 1.0f - b1 - b2;
    v = b1;
    return true;
}

// Gradients of a ray hit's (t, u, v) w.r.t. the ray start and direction.
WEFT_FN void adj_ray_triangle(const v3& o, const v3& d, const v3& a, const v3& b, const v3& c, float t, float adj_t,
                              float adj_u, float adj_v, v3& adj_o, v3& adj_d) {
    const v3 n = cross(b - a, c - a);
    const float nd = dot(n, d);
    if (!(fabsf(nd) > 0.0f)) return;
    // t = n.(a - o) / n.d ; hit h = o + t d
    const v3 dt_do = n * (-1.0f / nd);
    const v3 dt_dd = n * (-t / nd);
    // (u, v) = barycentrics of h for vertices a, b (third c): h - c = u (a - c) + v (b - c)
    const v3 e1 = a - c, e2 = b - c;
    const float g11 = dot(e1, e1), g12 = dot(e1, e2), g22 = dot(e2, e2);
    const float det = g11 * g22 - g12 * g12;
    v3 adj_h;
    if (fabsf(det) > 0.0f) {
        const float i11 = g22 / det, i12 = -g12 / det, i22 = g11 / det;
        adj_h = (e1 * i11 + e2 * i12) * adj_u + (e1 * i12 + e2 * i22) * adj_v;
    }
    // h = o + t d: dh/do = I + d dt_do^T ; dh/dd = t I + d dt_dd^T
    const float hd = dot(adj_h, d);
    adj_o += adj_h + dt_do * (hd + adj_t);
    adj_d += adj_h * t + dt_dd * (hd + adj_t);
}

// Solid angle of triangle abc seen from p (Van Oosterom and Strackee), signed by orientation.
WEFT_FN float solid_angle(const v3& p, const v3& a, const v3& b, const v3& c) {
    const v3 x = a - p, y = b - p, z = c - p;
    const float lx = length(x), ly = length(y), lz = length(z);
    const float num = dot(x, cross(y, z));
    const float den = lx * ly * lz + dot(x, y) * lz + dot(x, z) * ly + dot(y, z) * lx;
    return 2.0f * atan2f(num, den);
}

}  // namespace geo
}  // namespace weft
