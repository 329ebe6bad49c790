// weft native geometry: triangle-mesh queries in kernels (closest point with the sign methods of Warp, rays, box and
// sphere iteration, evaluation helpers), each forward function directly above its adjoint.
#pragma once
#include "bvh.h"
#include "triangle.h"
#include "../atomic.h"

namespace weft {

namespace geo {
WEFT_FN const MeshData* mesh(uint64 id, const char* what) {
    const MeshData* m = static_cast<const MeshData*>(lookup(registry(), id, KIND_MESH));
    if (m == nullptr) report_error(4, what);
    return m;
}

#define WEFT_MESH_ID_ERROR(fn) fn ": argument 'id' is not a live Mesh (never created, destroyed, or another object)"

WEFT_FN void tri(const MeshData* m, int32 f, v3& a, v3& b, v3& c) {
    const int32* t = m->indices + 3 * int64(f);
    a = load3(m->points, t[0]);
    b = load3(m->points, t[1]);
    c = load3(m->points, t[2]);
}

// The vertices of the face at sorted (leaf) position s, from the leaf-ordered copy.
WEFT_FN void leaf_tri(const MeshData* m, int32 s, v3& a, v3& b, v3& c) {
    const float* t = m->leaf_tris + 9 * int64(s);
    a = v3(t[0], t[1], t[2]);
    b = v3(t[3], t[4], t[5]);
    c = v3(t[6], t[7], t[8]);
}

// Accumulate g into the gradient of point i (atomically: backward threads share vertices); no-op without a gradient.
WEFT_FN void add_point_grad(const MeshData* m, int32 i, const v3& g) {
    if (m->points_grad == nullptr) return;
    float* at = m->points_grad + 3 * int64(i);
    for (int k = 0; k < 3; ++k)
        if (g.c[k] != 0.0f) atom::fetch_add(at + k, g.c[k]);
}

WEFT_FN void add_face_grads(const MeshData* m, int32 face, const v3& ga, const v3& gb, const v3& gc) {
    if (m->points_grad == nullptr) return;
    const int32* t = m->indices + 3 * int64(face);
    add_point_grad(m, t[0], ga);
    add_point_grad(m, t[1], gb);
    add_point_grad(m, t[2], gc);
}

// The same for the velocities' gradient (velocities.grad when the velocities require grad).
WEFT_FN void add_velocity_grad(const MeshData* m, int32 i, const v3& g) {
    if (m->velocities_grad == nullptr) return;
    float* at = m->velocities_grad + 3 * int64(i);
    for (int k = 0; k < 3; ++k)
        if (g.c[k] != 0.0f) atom::fetch_add(at + k, g.c[k]);
}

struct Closest {
    float d2;
    int32 face;
    float u, v;
};

// Closest non-degenerate face strictly within sqrt(limit2) (face -1 if none).
WEFT_FN Closest closest_face(const MeshData* m, const v3& p, float limit2) {
    Closest best = {limit2, -1, 0.0f, 0.0f};
    const PointKey key = {{p.c[0], p.c[1], p.c[2]}};
    walk(&m->bvh, -1, key, [&]() { return best.d2; },
         [&](int32 s, float) {
             v3 a, b, c;
             leaf_tri(m, s, a, b, c);
             float wa, wb, wc;
             closest_weights(p, a, b, c, wa, wb, wc);
             const v3 q = a * wa + b * wb + c * wc;
             const float d2 = length_sq(p - q);
             // degenerate faces are skipped; tested only for a face that would become the closest (most are not)
             if (d2 < best.d2 && !degenerate_triangle(a, b, c)) best = Closest{d2, m->bvh.prim_ids[s], wa, wb};
         });
    return best;
}

WEFT_FN Closest furthest_face(const MeshData* m, const v3& p, float min2) {
    Closest best = {min2, -1, 0.0f, 0.0f};
    // priority: minus the largest distance a box can hold, so the farthest boxes come first
    const FarKey key = {{p.c[0], p.c[1], p.c[2]}};
    walk(&m->bvh, -1, key, [&]() { return -best.d2; },
         [&](int32 s, float) {
             v3 a, b, c;
             leaf_tri(m, s, a, b, c);
             if (degenerate_triangle(a, b, c)) return;
             // the farthest point of a triangle is a vertex
             const v3 vs[3] = {a, b, c};
             for (int k = 0; k < 3; ++k) {
                 const float d2 = length_sq(p - vs[k]);
                 if (d2 > best.d2)
                     best = Closest{d2, m->bvh.prim_ids[s], k == 0 ? 1.0f : 0.0f, k == 1 ? 1.0f : 0.0f};
             }
         });
    return best;
}

struct Hit {
    float t;
    int32 face;
    float u, v;
};

WEFT_FN Hit closest_hit(const MeshData* m, const v3& o, const v3& d, float max_t, int32 root) {
    Hit best = {max_t, -1, 0.0f, 0.0f};
    const RayKey key = {{o.c[0], o.c[1], o.c[2]}, {1.0f / d.c[0], 1.0f / d.c[1], 1.0f / d.c[2]}};
    walk(&m->bvh, root, key, [&]() { return best.t; },
         [&](int32 s, float) {
             v3 a, b, c;
             leaf_tri(m, s, a, b, c);
             float t, u, v;
             if (ray_triangle(o, d, a, b, c, t, u, v) && t < best.t) best = Hit{t, m->bvh.prim_ids[s], u, v};
         });
    return best;
}

WEFT_FN int32 count_hits(const MeshData* m, const v3& o, const v3& d, int32 root) {
    int32 n = 0;
    const RayKey key = {{o.c[0], o.c[1], o.c[2]}, {1.0f / d.c[0], 1.0f / d.c[1], 1.0f / d.c[2]}};
    walk(&m->bvh, root, key, [&]() { return inf_f(); },
         [&](int32 s, float) {
             v3 a, b, c;
             leaf_tri(m, s, a, b, c);
             float t, u, v;
             if (ray_triangle(o, d, a, b, c, t, u, v)) ++n;
         });
    return n;
}

WEFT_FN v3 face_normal(const MeshData* m, int32 f) {
    v3 a, b, c;
    tri(m, f, a, b, c);
    const v3 n = cross(b - a, c - a);
    const float l = length(n);
    return l > 0.0f ? n / l : v3();
}

// Sign by three axis-aligned rays: a ray whose closest hit leaves through a face (hit from behind) votes inside.
WEFT_FN float sign_three_rays(const MeshData* m, const v3& p) {
    int inside = 0;
    for (int k = 0; k < 3; ++k) {
        v3 d;
        d.c[k] = 1.0f;
        const Hit h = closest_hit(m, p, d, inf_f(), -1);
        if (h.face >= 0 && dot(face_normal(m, h.face), d) > 0.0f) ++inside;
    }
    return inside >= 2 ? -1.0f : 1.0f;
}

// Sign by ray parity: n_sample rays along (1, 1, 1) perturbed per axis in [-s, s) (a fixed-seed sequence).
WEFT_FN float sign_parity(const MeshData* m, const v3& p, int32 n_sample, float s) {
    if (n_sample <= 0) return -1.0f;
    uint32 state = 0x9e3779b9u;
    int32 odd = 0;
    for (int32 i = 0; i < n_sample; ++i) {
        v3 d(1.0f, 1.0f, 1.0f);
        for (int k = 0; k < 3; ++k) {
            state = state * 1664525u + 1013904223u;
            const float r = float(state >> 8) * (1.0f / 16777216.0f);
            d.c[k] += s * (2.0f * r - 1.0f);
        }
        if (count_hits(m, p, d, -1) % 2 == 1) ++odd;
    }
    return 2 * odd >= n_sample ? -1.0f : 1.0f;
}

// Fast winding number (Barill et al. 2018, first-order dipoles) with exact solid angles near p.
WEFT_FN float winding_number(const MeshData* m, const v3& p, float accuracy) {
    const BvhData* b = &m->bvh;
    if (!b->has_root) return 0.0f;
    float w = 0.0f;
    if (b->root < 0 || m->winding == nullptr) {
        for (int32 f = 0; f < m->num_tris; ++f) {
            v3 a, bb, c;
            tri(m, f, a, bb, c);
            w += solid_angle(p, a, bb, c);
        }
        return w * (0.25f / 3.14159265358979f);
    }
    int32 stack[WALK_STACK];
    int32 sp = 0;
    stack[sp++] = 0;
    while (sp > 0) {
        const int32 i = stack[--sp];
        const BvhNode& nd = b->nodes[i];
        const WindingNode& wn = m->winding[i];
        for (int c = 0; c < 2; ++c) {
            const int32 ch = nd.child[c];
            const v3 centre(wn.c[c][0], wn.c[c][1], wn.c[c][2]);
            const v3 r = centre - p;
            const float dist = length(r);
            if (ch >= 0 && dist > accuracy * wn.r[c]) {
                const v3 n(wn.n[c][0], wn.n[c][1], wn.n[c][2]);
                w += dot(r, n) / (dist * dist * dist);  // solid angle of a far dipole
            } else if (ch >= 0) {
                if (sp < WALK_STACK) stack[sp++] = ch;
            } else {
                v3 a, bb, cc;
                leaf_tri(m, ~ch, a, bb, cc);
                w += solid_angle(p, a, bb, cc);
            }
        }
    }
    return w * (0.25f / 3.14159265358979f);
}

// Angle-weighted pseudo-normal sign at the closest point q (Baerentzen and Aanaes 2005): sums the normals of the
// faces whose closest point to p is within eps of q, each weighted by its angle at q (pi on edges and inside).
WEFT_FN float sign_pseudo_normal(const MeshData* m, const v3& p, const Closest& c, float eps) {
    v3 a, b, cc;
    tri(m, c.face, a, b, cc);
    const v3 q = a * c.u + b * c.v + cc * (1.0f - c.u - c.v);
    const float reach = sqrtf(c.d2) + eps;
    v3 n_sum;
    const PointKey key = {{p.c[0], p.c[1], p.c[2]}};
    walk(&m->bvh, -1, key, [&]() { return reach * reach; },
         [&](int32 s, float) {
             const int32 f = m->bvh.prim_ids[s];
             v3 x, y, z;
             leaf_tri(m, s, x, y, z);
             if (degenerate_triangle(x, y, z)) return;
             float wa, wb, wc;
             closest_weights(p, x, y, z, wa, wb, wc);
             const v3 qf = x * wa + y * wb + z * wc;
             if (length(qf - q) > eps) return;
             const v3 vs[3] = {x, y, z};
             const float ws[3] = {wa, wb, wc};
             float angle = 3.14159265358979f;
             for (int k = 0; k < 3; ++k) {
                 if (ws[k] == 1.0f) {  // q is this face's vertex k: weight by the face's angle there
                     const v3 e1 = normalize(vs[(k + 1) % 3] - vs[k]), e2 = normalize(vs[(k + 2) % 3] - vs[k]);
                     angle = acosf(fminf(1.0f, fmaxf(-1.0f, dot(e1, e2))));
                 }
             }
             n_sum += face_normal(m, f) * angle;
         });
    return dot(p - q, n_sum) < 0.0f ? -1.0f : 1.0f;
}
}  // namespace geo

// ---------------------------------------------------------------------------------------------- point queries
// Results through references: (result, sign, face, u, v), the fields of wp.MeshQueryPoint.
WEFT_FN void mesh_query_point_no_sign(uint64 id, const geo::v3& p, float32 max_dist, bool& result, float32& sign,
                                      int32& face, float32& u, float32& v) {
    result = false; sign = 0.0f; face = -1; u = 0.0f; v = 0.0f;
    const geo::MeshData* m = geo::mesh(id, WEFT_MESH_ID_ERROR("mesh_query_point"));
    if (m == nullptr || !(max_dist > 0.0f)) return;
    const geo::Closest c = geo::closest_face(m, p, max_dist * max_dist);
    if (c.face < 0) return;
    result = true; sign = 1.0f; face = c.face; u = c.u; v = c.v;
}

// The closest point's barycentrics move with p (the sign is piecewise constant: zero gradient away from surfaces).
WEFT_FN void adj_closest_point(uint64 id, const geo::v3& p, bool result, int32 face, float32 u, float32 v,
                               geo::v3& adj_p, float32 adj_u, float32 adj_v) {
    if (!result) return;
    const geo::MeshData* m = geo::mesh(id, WEFT_MESH_ID_ERROR("mesh_query_point (backward)"));
    if (m == nullptr || face < 0 || face >= m->num_tris) return;
    geo::v3 a, b, c;
    geo::tri(m, face, a, b, c);
    // the region (vertex / edge / interior) from the forward computation itself: its zero weights are exact, while
    // 1 - u - v of the outputs can be off by rounding and pick the interior formula on an edge
    float wa, wb, wc;
    geo::closest_weights(p, a, b, c, wa, wb, wc);
    adj_p += geo::adj_closest_weights(p, a, b, c, wa, wb, wc, adj_u, adj_v);
    if (m->points_grad != nullptr) {
        geo::v3 ga, gb, gc;
        geo::adj_closest_weights_verts(p, a, b, c, wa, wb, wc, adj_u, adj_v, ga, gb, gc);
        geo::add_face_grads(m, face, ga, gb, gc);
    }
}

WEFT_FN void adj_mesh_query_point_no_sign(uint64 id, const geo::v3& p, float32, bool result, float32, int32 face,
                                          float32 u, float32 v, uint64&, geo::v3& adj_p, float32&, bool&, float32&,
                                          int32&, float32& adj_u, float32& adj_v) {
    adj_closest_point(id, p, result, face, u, v, adj_p, adj_u, adj_v);
}

WEFT_FN void mesh_query_point(uint64 id, const geo::v3& p, float32 max_dist, bool& result, float32& sign, int32& face,
                              float32& u, float32& v) {
    mesh_query_point_no_sign(id, p, max_dist, result, sign, face, u, v);
    if (result) sign = geo::sign_three_rays(geo::mesh(id, ""), p);
}

WEFT_FN void adj_mesh_query_point(uint64 id, const geo::v3& p, float32, bool result, float32, int32 face, float32 u,
                                  float32 v, uint64&, geo::v3& adj_p, float32&, bool&, float32&, int32&, float32& adj_u,
                                  float32& adj_v) {
    adj_closest_point(id, p, result, face, u, v, adj_p, adj_u, adj_v);
}

WEFT_FN void mesh_query_point_sign_normal(uint64 id, const geo::v3& p, float32 max_dist, float32 eps, bool& result,
                                          float32& sign, int32& face, float32& u, float32& v) {
    result = false; sign = 0.0f; face = -1; u = 0.0f; v = 0.0f;
    const geo::MeshData* m = geo::mesh(id, WEFT_MESH_ID_ERROR("mesh_query_point_sign_normal"));
    if (m == nullptr || !(max_dist > 0.0f)) return;
    const geo::Closest c = geo::closest_face(m, p, max_dist * max_dist);
    if (c.face < 0) return;
    result = true; face = c.face; u = c.u; v = c.v;
    sign = geo::sign_pseudo_normal(m, p, c, eps);
}

WEFT_FN void adj_mesh_query_point_sign_normal(uint64 id, const geo::v3& p, float32, float32, bool result, float32,
                                              int32 face, float32 u, float32 v, uint64&, geo::v3& adj_p, float32&,
                                              float32&, bool&, float32&, int32&, float32& adj_u, float32& adj_v) {
    adj_closest_point(id, p, result, face, u, v, adj_p, adj_u, adj_v);
}

WEFT_FN void mesh_query_point_sign_winding_number(uint64 id, const geo::v3& p, float32 max_dist, float32 accuracy,
                                                  float32 threshold, bool& result, float32& sign, int32& face,
                                                  float32& u, float32& v) {
    mesh_query_point_no_sign(id, p, max_dist, result, sign, face, u, v);
    if (!result) return;
    const geo::MeshData* m = geo::mesh(id, "");
    if (m->winding == nullptr) {
        sign = geo::sign_three_rays(m, p);  // no winding data: Warp's documented fallback
    } else {
        sign = geo::winding_number(m, p, accuracy) > threshold ? -1.0f : 1.0f;
    }
}

WEFT_FN void adj_mesh_query_point_sign_winding_number(uint64 id, const geo::v3& p, float32, float32, float32,
                                                      bool result, float32, int32 face, float32 u, float32 v, uint64&,
                                                      geo::v3& adj_p, float32&, float32&, float32&, bool&, float32&,
                                                      int32&, float32& adj_u, float32& adj_v) {
    adj_closest_point(id, p, result, face, u, v, adj_p, adj_u, adj_v);
}

WEFT_FN void mesh_query_point_sign_parity(uint64 id, const geo::v3& p, float32 max_dist, int32 n_sample,
                                          float32 perturbation, bool& result, float32& sign, int32& face, float32& u,
                                          float32& v) {
    mesh_query_point_no_sign(id, p, max_dist, result, sign, face, u, v);
    if (result) sign = geo::sign_parity(geo::mesh(id, ""), p, n_sample, perturbation);
}

WEFT_FN void adj_mesh_query_point_sign_parity(uint64 id, const geo::v3& p, float32, int32, float32, bool result,
                                              float32, int32 face, float32 u, float32 v, uint64&, geo::v3& adj_p,
                                              float32&, int32&, float32&, bool&, float32&, int32&, float32& adj_u,
                                              float32& adj_v) {
    adj_closest_point(id, p, result, face, u, v, adj_p, adj_u, adj_v);
}

WEFT_FN void mesh_query_furthest_point_no_sign(uint64 id, const geo::v3& p, float32 min_dist, bool& result,
                                               float32& sign, int32& face, float32& u, float32& v) {
    result = false; sign = 0.0f; face = -1; u = 0.0f; v = 0.0f;
    const geo::MeshData* m = geo::mesh(id, WEFT_MESH_ID_ERROR("mesh_query_furthest_point_no_sign"));
    if (m == nullptr) return;
    const float lim = min_dist > 0.0f ? min_dist * min_dist : 0.0f;
    const geo::Closest c = geo::furthest_face(m, p, lim);
    if (c.face < 0) return;
    result = true; sign = 1.0f; face = c.face; u = c.u; v = c.v;
}

// the furthest point is a vertex: its barycentrics do not move with p
WEFT_FN void adj_mesh_query_furthest_point_no_sign(uint64, const geo::v3&, float32, bool, float32, int32, float32,
                                                   float32, uint64&, geo::v3&, float32&, bool&, float32&, int32&,
                                                   float32&, float32&) {}

// ---------------------------------------------------------------------------------------------- rays
// Results: (result, sign, face, t, u, v, normal), the fields of wp.MeshQueryRay.
WEFT_FN void mesh_query_ray(uint64 id, const geo::v3& start, const geo::v3& dir, float32 max_t, int32 root,
                            bool& result, float32& sign, int32& face, float32& t, float32& u, float32& v,
                            geo::v3& normal) {
    result = false; sign = 0.0f; face = -1; t = 0.0f; u = 0.0f; v = 0.0f; normal = geo::v3();
    const geo::MeshData* m = geo::mesh(id, WEFT_MESH_ID_ERROR("mesh_query_ray"));
    if (m == nullptr) return;
    const geo::Hit h = geo::closest_hit(m, start, dir, max_t, root);
    if (h.face < 0) return;
    result = true; face = h.face; t = h.t; u = h.u; v = h.v;
    normal = geo::face_normal(m, h.face);
    sign = dot(normal, dir) < 0.0f ? 1.0f : -1.0f;
}

WEFT_FN void adj_mesh_query_ray(uint64 id, const geo::v3& start, const geo::v3& dir, float32, int32, bool result,
                                float32, int32 face, float32 t, float32 u, float32 v, const geo::v3&, uint64&,
                                geo::v3& adj_start, geo::v3& adj_dir, float32&, int32&, bool&, float32&, int32&,
                                float32& adj_t, float32& adj_u, float32& adj_v, geo::v3&) {
    if (!result) return;
    const geo::MeshData* m = geo::mesh(id, WEFT_MESH_ID_ERROR("mesh_query_ray (backward)"));
    if (m == nullptr || face < 0 || face >= m->num_tris) return;
    geo::v3 a, b, c;
    geo::tri(m, face, a, b, c);
    geo::v3 g_start, g_dir;
    geo::adj_ray_triangle(start, dir, a, b, c, t, adj_t, adj_u, adj_v, g_start, g_dir);
    adj_start += g_start;
    adj_dir += g_dir;
    if (m->points_grad != nullptr) {
        // (t, u, v) solve t dir - u (a - c) - v (b - c) = c - start: with lambda = -d/dstart, each vertex gets its
        // barycentric weight times lambda
        const geo::v3 lam = -g_start;
        geo::add_face_grads(m, face, lam * u, lam * v, lam * (1.0f - u - v));
    }
}

WEFT_FN bool mesh_query_ray_anyhit(uint64 id, const geo::v3& start, const geo::v3& dir, float32 max_t, int32 root) {
    const geo::MeshData* m = geo::mesh(id, WEFT_MESH_ID_ERROR("mesh_query_ray_anyhit"));
    if (m == nullptr) return false;
    return geo::closest_hit(m, start, dir, max_t, root).face >= 0;
}

WEFT_FN int32 mesh_query_ray_count_intersections(uint64 id, const geo::v3& start, const geo::v3& dir, int32 root) {
    const geo::MeshData* m = geo::mesh(id, WEFT_MESH_ID_ERROR("mesh_query_ray_count_intersections"));
    if (m == nullptr) return 0;
    return geo::count_hits(m, start, dir, root);
}

// ---------------------------------------------------------------------------------------------- evaluation
namespace geo {
WEFT_FN bool face_ok(const MeshData* m, int32 face, const char* what) {
    if (m == nullptr) return false;
    if (face < 0 || face >= m->num_tris) {
        report_error(4, what);
        return false;
    }
    return true;
}
}  // namespace geo

WEFT_FN geo::v3 mesh_eval_position(uint64 id, int32 face, float32 u, float32 v) {
    const geo::MeshData* m = geo::mesh(id, WEFT_MESH_ID_ERROR("mesh_eval_position"));
    if (!geo::face_ok(m, face, "mesh_eval_position: argument 'face' is out of range")) return geo::v3();
    geo::v3 a, b, c;
    geo::tri(m, face, a, b, c);
    return a * u + b * v + c * (1.0f - u - v);
}

WEFT_FN void adj_mesh_eval_position(uint64 id, int32 face, float32 u, float32 v, uint64&, int32&, float32& adj_u,
                                    float32& adj_v, const geo::v3& adj_ret) {
    const geo::MeshData* m = geo::mesh(id, "");
    if (m == nullptr || face < 0 || face >= m->num_tris) return;
    geo::v3 a, b, c;
    geo::tri(m, face, a, b, c);
    adj_u += dot(adj_ret, a - c);
    adj_v += dot(adj_ret, b - c);
    geo::add_face_grads(m, face, adj_ret * u, adj_ret * v, adj_ret * (1.0f - u - v));
}

WEFT_FN geo::v3 mesh_eval_velocity(uint64 id, int32 face, float32 u, float32 v) {
    const geo::MeshData* m = geo::mesh(id, WEFT_MESH_ID_ERROR("mesh_eval_velocity"));
    if (!geo::face_ok(m, face, "mesh_eval_velocity: argument 'face' is out of range") || m->velocities == nullptr)
        return geo::v3();
    const int32* t = m->indices + 3 * int64(face);
    return geo::load3(m->velocities, t[0]) * u + geo::load3(m->velocities, t[1]) * v +
           geo::load3(m->velocities, t[2]) * (1.0f - u - v);
}

WEFT_FN void adj_mesh_eval_velocity(uint64 id, int32 face, float32 u, float32 v, uint64&, int32&, float32& adj_u,
                                    float32& adj_v, const geo::v3& adj_ret) {
    const geo::MeshData* m = geo::mesh(id, "");
    if (m == nullptr || face < 0 || face >= m->num_tris || m->velocities == nullptr) return;
    const int32* t = m->indices + 3 * int64(face);
    const geo::v3 a = geo::load3(m->velocities, t[0]), b = geo::load3(m->velocities, t[1]),
                  c = geo::load3(m->velocities, t[2]);
    adj_u += dot(adj_ret, a - c);
    adj_v += dot(adj_ret, b - c);
    geo::add_velocity_grad(m, t[0], adj_ret * u);
    geo::add_velocity_grad(m, t[1], adj_ret * v);
    geo::add_velocity_grad(m, t[2], adj_ret * (1.0f - u - v));
}

WEFT_FN geo::v3 mesh_eval_face_normal(uint64 id, int32 face) {
    const geo::MeshData* m = geo::mesh(id, WEFT_MESH_ID_ERROR("mesh_eval_face_normal"));
    if (!geo::face_ok(m, face, "mesh_eval_face_normal: argument 'face' is out of range")) return geo::v3();
    return geo::face_normal(m, face);
}

WEFT_FN geo::v3 mesh_get_point(uint64 id, int32 index) {
    const geo::MeshData* m = geo::mesh(id, WEFT_MESH_ID_ERROR("mesh_get_point"));
    if (m == nullptr) return geo::v3();
    if (index < 0 || index >= 3 * m->num_tris) {
        report_error(4, "mesh_get_point: argument 'index' is out of range (an index into mesh.indices)");
        return geo::v3();
    }
    return geo::load3(m->points, m->indices[index]);
}

WEFT_FN void adj_mesh_get_point(uint64 id, int32 index, uint64&, int32&, const geo::v3& adj_ret) {
    const geo::MeshData* m = geo::mesh(id, "");
    if (m == nullptr || index < 0 || index >= 3 * m->num_tris) return;
    geo::add_point_grad(m, m->indices[index], adj_ret);
}

// The mesh's arrays (wp.mesh_get(id).points / .indices / .velocities); the points carry their gradient.
WEFT_FN void mesh_get(uint64 id, array_t<geo::v3>& points, array_t<int32>& indices, array_t<geo::v3>& velocities) {
    points = array_t<geo::v3>{};
    indices = array_t<int32>{};
    velocities = array_t<geo::v3>{};
    const geo::MeshData* m = geo::mesh(id, WEFT_MESH_ID_ERROR("mesh_get"));
    if (m == nullptr) return;
    points.data = reinterpret_cast<geo::v3*>(const_cast<float*>(m->points));
    points.grad = reinterpret_cast<geo::v3*>(m->points_grad);
    points.shape[0] = m->num_points;
    points.ndim = 1;
    points.strides[0] = int64(sizeof(geo::v3));
    indices.data = const_cast<int32*>(m->indices);
    indices.shape[0] = 3 * m->num_tris;
    indices.ndim = 1;
    indices.strides[0] = int64(sizeof(int32));
    if (m->velocities != nullptr) {
        velocities.data = reinterpret_cast<geo::v3*>(const_cast<float*>(m->velocities));
        velocities.grad = reinterpret_cast<geo::v3*>(m->velocities_grad);
        velocities.shape[0] = m->num_points;
    }
    velocities.ndim = 1;
    velocities.strides[0] = int64(sizeof(geo::v3));
}

// The id of the mesh's face BVH as a user BVH (item i = face i, boxes = the faces' bounds; valid until destroy).
WEFT_FN uint64 mesh_get_bvh(uint64 id) {
    const geo::MeshData* m = geo::mesh(id, WEFT_MESH_ID_ERROR("mesh_get_bvh"));
    return m == nullptr ? uint64(0) : m->bvh_id;
}

WEFT_FN geo::v3 mesh_get_velocity(uint64 id, int32 index) {
    const geo::MeshData* m = geo::mesh(id, WEFT_MESH_ID_ERROR("mesh_get_velocity"));
    if (m == nullptr || m->velocities == nullptr) return geo::v3();
    if (index < 0 || index >= 3 * m->num_tris) {
        report_error(4, "mesh_get_velocity: argument 'index' is out of range (an index into mesh.indices)");
        return geo::v3();
    }
    return geo::load3(m->velocities, m->indices[index]);
}

WEFT_FN void adj_mesh_get_velocity(uint64 id, int32 index, uint64&, int32&, const geo::v3& adj_ret) {
    const geo::MeshData* m = geo::mesh(id, "");
    if (m == nullptr || m->velocities == nullptr || index < 0 || index >= 3 * m->num_tris) return;
    geo::add_velocity_grad(m, m->indices[index], adj_ret);
}

WEFT_FN int32 mesh_get_group_root(uint64 id, int32 group) {
    const geo::MeshData* m = geo::mesh(id, WEFT_MESH_ID_ERROR("mesh_get_group_root"));
    return m == nullptr ? -1 : geo::group_root(&m->bvh, group);
}

WEFT_FN int32 mesh_get_index(uint64 id, int32 index) {
    const geo::MeshData* m = geo::mesh(id, WEFT_MESH_ID_ERROR("mesh_get_index"));
    if (m == nullptr) return -1;
    if (index < 0 || index >= 3 * m->num_tris) {
        report_error(4, "mesh_get_index: argument 'index' is out of range");
        return -1;
    }
    return m->indices[index];
}

// ---------------------------------------------------------------------------------------------- box / sphere iteration
// Iterates over faces whose box overlaps the query box (kind 0), or that come within radius of a centre (kind 1).
struct mesh_query_t {
    const geo::MeshData* mesh;
    int32 kind;
    float lo[3], hi[3];  // query box (for a sphere: its bounding box)
    float centre[3];
    float radius;
    int32 sp;
    int32 stack[geo::ITER_STACK];
};

WEFT_FN mesh_query_t mesh_query_aabb(uint64 id, const geo::v3& lo, const geo::v3& hi) {
    mesh_query_t q;
    q.mesh = geo::mesh(id, WEFT_MESH_ID_ERROR("mesh_query_aabb"));
    q.kind = 0;
    q.radius = 0.0f;
    for (int k = 0; k < 3; ++k) {
        q.lo[k] = lo.c[k];
        q.hi[k] = hi.c[k];
        q.centre[k] = 0.0f;
    }
    q.sp = 0;
    if (q.mesh != nullptr && q.mesh->bvh.has_root) q.stack[q.sp++] = q.mesh->bvh.root;
    return q;
}

WEFT_FN mesh_query_t mesh_query_sphere(uint64 id, const geo::v3& centre, float32 radius) {
    mesh_query_t q = mesh_query_aabb(id, centre - geo::v3(radius), centre + geo::v3(radius));
    q.kind = 1;
    q.radius = radius;
    for (int k = 0; k < 3; ++k) q.centre[k] = centre.c[k];
    return q;
}

WEFT_FN bool mesh_query_next(mesh_query_t& q, int32& index) {
    const geo::MeshData* m = q.mesh;
    if (m == nullptr) return false;
    const geo::BvhData* b = &m->bvh;
    while (q.sp > 0) {
        const int32 x = q.stack[--q.sp];
        if (x < 0) {
            const int32 f = b->prim_ids[~x];
            geo::v3 a, bb, c;
            geo::leaf_tri(m, ~x, a, bb, c);
            if (q.kind == 1) {
                const geo::v3 p(q.centre[0], q.centre[1], q.centre[2]);
                float wa, wb, wc;
                geo::closest_weights(p, a, bb, c, wa, wb, wc);
                if (length_sq(p - (a * wa + bb * wb + c * wc)) > q.radius * q.radius) continue;
            } else {
                float lo[3], hi[3];
                for (int k = 0; k < 3; ++k) {
                    lo[k] = fminf(a.c[k], fminf(bb.c[k], c.c[k]));
                    hi[k] = fmaxf(a.c[k], fmaxf(bb.c[k], c.c[k]));
                }
                if (!geo::boxes_overlap(lo, hi, q.lo, q.hi)) continue;
            }
            index = f;
            return true;
        }
        const geo::BvhNode& nd = b->nodes[x];
        for (int c = 1; c >= 0; --c) {
            const bool hit = q.kind == 1 ? geo::box_dist2(nd.lo[c], nd.hi[c], q.centre) <= q.radius * q.radius
                                         : geo::boxes_overlap(nd.lo[c], nd.hi[c], q.lo, q.hi);
            if (!hit) continue;
            if (q.sp >= geo::ITER_STACK) {
                report_error(4, "mesh_query_next: BVH deeper than the query stack");
                return false;
            }
            q.stack[q.sp++] = nd.child[c];
        }
    }
    return false;
}

// Thread-block box query (tile kernels): see tile_query_take in bvh_query.h.
WEFT_FN mesh_query_t tile_mesh_query_aabb(uint64 id, const geo::v3& lo, const geo::v3& hi) {
    return mesh_query_aabb(id, lo, hi);
}

WEFT_FN bool tile_query_valid(const mesh_query_t& q) { return q.mesh != nullptr && q.sp > 0; }

WEFT_FN int32 tile_query_take(mesh_query_t& q) {
    int32 index = -1;
    return mesh_query_next(q, index) ? index : -1;
}

WEFT_FN void mesh_query_step(const mesh_query_t& q, int32 index_in, bool& ok, mesh_query_t& q_next, int32& index) {
    q_next = q;
    index = index_in;
    ok = mesh_query_next(q_next, index);
}

}  // namespace weft
