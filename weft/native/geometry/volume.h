// weft native geometry: sparse-volume builtins in kernels (wp.volume_*). Values are resolved per voxel: the stored
// value where the voxel's leaf exists, else the background. Sampling is CLOSEST (round half away from zero) or
// LINEAR (trilinear over the cell whose lower corner is floor(uvw); weights in float32, values in the value type's
// scalar). Every call checks the id (a live Volume) and the requested value type, reporting an error and returning
// zero otherwise. Adjoints: d sample / d uvw for LINEAR (zero for CLOSEST), and for the *_index forms also into the
// voxel_data array's gradient and the background.
#pragma once
#include "registry.h"
#include "volume_data.h"
#include "../vec.h"
#include "../mat.h"
#include "../array.h"
#include "../atomic.h"
#include "../error.h"

namespace weft {

namespace geo {
template <typename S> struct vol_scalar { static constexpr int32 code = 0; static constexpr bool real = false; };
#define WEFT_VOL_SCALAR(S, KIND, BITS, REAL) \
    template <> struct vol_scalar<S> { static constexpr int32 code = ((KIND) << 8) | (BITS); static constexpr bool real = REAL; };
WEFT_VOL_SCALAR(float32, 1, 32, true)
WEFT_VOL_SCALAR(float64, 1, 64, true)
WEFT_VOL_SCALAR(half, 1, 16, true)
WEFT_VOL_SCALAR(int8, 2, 8, false)
WEFT_VOL_SCALAR(int16, 2, 16, false)
WEFT_VOL_SCALAR(int32, 2, 32, false)
WEFT_VOL_SCALAR(int64, 2, 64, false)
WEFT_VOL_SCALAR(uint8, 3, 8, false)
WEFT_VOL_SCALAR(uint16, 3, 16, false)
WEFT_VOL_SCALAR(uint32, 3, 32, false)
WEFT_VOL_SCALAR(uint64, 3, 64, false)
WEFT_VOL_SCALAR(bool, 4, 8, false)
#undef WEFT_VOL_SCALAR

// A value type: its scalar, component count, type code, component access and the type of its gradient (vec3 for a
// scalar, an N x 3 matrix with one row per component for an N-vector).
template <typename T> struct vol_value {
    typedef T scalar;
    typedef vec_t<3, T> grad;
    static constexpr int32 length = 1;
    static constexpr int32 code = (vol_scalar<T>::code << 8) | 1;
    WEFT_FN static T& at(T& x, int32) { return x; }
    WEFT_FN static const T& at(const T& x, int32) { return x; }
    WEFT_FN static T& g(grad& m, int32, int32 d) { return m.c[d]; }
    WEFT_FN static const T& g(const grad& m, int32, int32 d) { return m.c[d]; }
};
template <unsigned N, typename S> struct vol_value<vec_t<N, S>> {
    typedef S scalar;
    typedef mat_t<N, 3, S> grad;
    static constexpr int32 length = int32(N);
    static constexpr int32 code = (vol_scalar<S>::code << 8) | int32(N);
    WEFT_FN static S& at(vec_t<N, S>& x, int32 n) { return x.c[n]; }
    WEFT_FN static const S& at(const vec_t<N, S>& x, int32 n) { return x.c[n]; }
    WEFT_FN static S& g(grad& m, int32 n, int32 d) { return m.row[n].c[d]; }
    WEFT_FN static const S& g(const grad& m, int32 n, int32 d) { return m.row[n].c[d]; }
};

WEFT_FN const VolumeData* volume(uint64 id, const char* what) {
    const VolumeData* v = static_cast<const VolumeData*>(lookup(registry(), id, KIND_VOLUME));
    if (v == nullptr) report_error(4, what);
    return v;
}

// The volume behind id if it holds values of type T (else an error is reported and nullptr returned).
template <typename T>
WEFT_FN const VolumeData* volume_of(uint64 id, const char* what) {
    const VolumeData* v = volume(id, what);
    if (v != nullptr && v->type_code != vol_value<T>::code) {
        report_error(4, "volume: the requested dtype is not the volume's value type");
        return nullptr;
    }
    return v;
}

WEFT_FN bool vol_in_range(int32 i, int32 j, int32 k) {
    return i >= -VOLUME_COORD_LIMIT && i < VOLUME_COORD_LIMIT && j >= -VOLUME_COORD_LIMIT && j < VOLUME_COORD_LIMIT &&
           k >= -VOLUME_COORD_LIMIT && k < VOLUME_COORD_LIMIT;
}

WEFT_FN int32 vol_voxel_bit(int32 i, int32 j, int32 k) { return ((i & 7) << 6) | ((j & 7) << 3) | (k & 7); }

// The leaf holding voxel (i, j, k), or -1.
WEFT_FN int32 vol_find_leaf(const VolumeData* v, int32 i, int32 j, int32 k) {
    if (v->num_leaves == 0 || !vol_in_range(i, j, k)) return -1;
    const int64 key = vol_leaf_key(i, j, k);
    const uint64 mask = uint64(v->hash_mask);
    uint64 slot = vol_hash(key) & mask;
    for (uint64 n = 0; n <= mask; ++n) {
        const int64 at = v->hash_keys[slot];
        if (at == key) return v->hash_leaf[slot];
        if (at == -1) return -1;
        slot = (slot + 1) & mask;
    }
    return -1;
}

WEFT_FN int32 vol_popcount(uint64 x) {
#if WEFT_CUDA
    return __popcll(x);
#else
    return __builtin_popcountll(x);
#endif
}

// The linear index of active voxel (i, j, k) in a leaf, or -1 when the voxel is inactive.
WEFT_FN int64 vol_index_in(const VolumeData* v, int32 leaf, int32 bit) {
    const uint64* m = v->leaf_mask + int64(leaf) * 8;
    const int32 w = bit >> 6;
    const uint64 below = m[w] & ((uint64(1) << (bit & 63)) - 1);
    if (((m[w] >> (bit & 63)) & 1) == 0) return -1;
    int64 n = v->leaf_offset[leaf] + vol_popcount(below);
    for (int32 q = 0; q < w; ++q) n += vol_popcount(m[q]);
    return n;
}

WEFT_FN int64 vol_index(const VolumeData* v, int32 i, int32 j, int32 k) {
    const int32 leaf = vol_find_leaf(v, i, j, k);
    return leaf < 0 ? -1 : vol_index_in(v, leaf, vol_voxel_bit(i, j, k));
}

// The value of a voxel outside every leaf: the tile covering it, else the background.
WEFT_FN const void* vol_outside(const VolumeData* v, int32 i, int32 j, int32 k) {
    for (int32 level = 0; level < 3; ++level) {
        const VolumeTiles& t = v->tiles[level];
        if (t.hash_mask < 0) continue;
        const int64 key = vol_region_key(i, j, k, t.shift);
        const uint64 mask = uint64(t.hash_mask);
        uint64 slot = vol_hash(key) & mask;
        for (uint64 n = 0; n <= mask; ++n) {
            const int64 at = t.hash_keys[slot];
            if (at == key) return static_cast<const char*>(t.values) + int64(t.hash_tile[slot]) * v->value_size;
            if (at == -1) break;
            slot = (slot + 1) & mask;
        }
    }
    return v->background;
}

template <typename T>
WEFT_FN T vol_get(const VolumeData* v, int32 i, int32 j, int32 k) {
    const int32 leaf = vol_find_leaf(v, i, j, k);
    if (leaf < 0) return *static_cast<const T*>(vol_in_range(i, j, k) ? vol_outside(v, i, j, k) : v->background);
    return static_cast<const T*>(v->values)[int64(leaf) * 512 + vol_voxel_bit(i, j, k)];
}

// Corner fetchers: the volume's own values, or a voxel_data array indexed by the active voxels' linear indices.
// operator() reads any voxel; in_leaf reads voxel ``bit`` of a found leaf; outside reads a voxel no leaf holds.
template <typename T>
struct VolFetchStored {
    const VolumeData* v;
    WEFT_FN T operator()(int32 i, int32 j, int32 k) const { return vol_get<T>(v, i, j, k); }
    WEFT_FN T in_leaf(int32 leaf, int32 bit) const { return static_cast<const T*>(v->values)[int64(leaf) * 512 + bit]; }
    WEFT_FN T outside(int32 i, int32 j, int32 k) const {
        return *static_cast<const T*>(vol_in_range(i, j, k) ? vol_outside(v, i, j, k) : v->background);
    }
};
template <typename T>
struct VolFetchIndexed {
    const VolumeData* v;
    const array_t<T>* data;
    const T* background;
    WEFT_FN T at_index(int64 n) const {
        if (n < 0) return *background;
        if (n >= int64(data->shape[0])) {
            report_error(4, "volume_sample_index: argument 'voxel_data' is shorter than the volume's voxel count");
            return *background;
        }
        return load(*data, n);
    }
    WEFT_FN T operator()(int32 i, int32 j, int32 k) const { return at_index(vol_index(v, i, j, k)); }
    WEFT_FN T in_leaf(int32 leaf, int32 bit) const { return at_index(vol_index_in(v, leaf, bit)); }
    WEFT_FN T outside(int32, int32, int32) const { return *background; }
};

WEFT_FN float32 vol_round(float32 x) { return x >= 0.0f ? detail::m_floor(x + 0.5f) : -detail::m_floor(-x + 0.5f); }

// A sampling cell: the lower corner, the fractions, and the weight of each corner c = (bit 2: x, bit 1: y, bit 0: z)
// with its first and mixed second derivatives with respect to uvw.
struct VolCell {
    int32 i, j, k;
    float32 f[3];
    WEFT_FN explicit VolCell(const vec_t<3, float32>& uvw) {
        const float32 fl0 = detail::m_floor(uvw.c[0]), fl1 = detail::m_floor(uvw.c[1]), fl2 = detail::m_floor(uvw.c[2]);
        i = int32(fl0); j = int32(fl1); k = int32(fl2);
        f[0] = uvw.c[0] - fl0; f[1] = uvw.c[1] - fl1; f[2] = uvw.c[2] - fl2;
    }
    WEFT_FN float32 w1(int32 c, int32 axis) const {
        const bool hi = (c >> (2 - axis)) & 1;
        return hi ? f[axis] : 1.0f - f[axis];
    }
    WEFT_FN float32 s1(int32 c, int32 axis) const { return ((c >> (2 - axis)) & 1) ? 1.0f : -1.0f; }
    WEFT_FN float32 weight(int32 c) const { return w1(c, 0) * w1(c, 1) * w1(c, 2); }
    // d weight / d uvw[d]
    WEFT_FN float32 dweight(int32 c, int32 d) const {
        float32 r = s1(c, d);
        for (int32 a = 0; a < 3; ++a)
            if (a != d) r *= w1(c, a);
        return r;
    }
    // d^2 weight / d uvw[d] d uvw[e] (zero for d == e: the interpolant is linear along each axis)
    WEFT_FN float32 ddweight(int32 c, int32 d, int32 e) const {
        if (d == e) return 0.0f;
        const int32 a = 3 - d - e;
        return s1(c, d) * s1(c, e) * w1(c, a);
    }
};

// The 8 corner values of a cell; a cell inside one leaf region (7 of 8 along each axis) costs one leaf lookup.
template <typename T, typename F>
WEFT_FN void vol_corners(const VolCell& cell, const F& fetch, T* out) {
    if ((cell.i & 7) != 7 && (cell.j & 7) != 7 && (cell.k & 7) != 7) {
        const int32 leaf = vol_find_leaf(fetch.v, cell.i, cell.j, cell.k);
        if (leaf < 0) {
            const T value = fetch.outside(cell.i, cell.j, cell.k);
            for (int32 c = 0; c < 8; ++c) out[c] = value;
            return;
        }
        const int32 bit = vol_voxel_bit(cell.i, cell.j, cell.k);
        for (int32 c = 0; c < 8; ++c) out[c] = fetch.in_leaf(leaf, bit + ((c >> 2) & 1) * 64 + ((c >> 1) & 1) * 8 + (c & 1));
        return;
    }
    for (int32 c = 0; c < 8; ++c) out[c] = fetch(cell.i + ((c >> 2) & 1), cell.j + ((c >> 1) & 1), cell.k + (c & 1));
}

// The trilinear value as nested lerps (x, then y, then z) so every path computes bit-identical results.
template <typename T>
WEFT_FN T vol_lerp(const VolCell& cell, const T* cv) {
    typedef typename vol_value<T>::scalar S;
    T out;
    for (int32 n = 0; n < vol_value<T>::length; ++n) {
        S x[4];
        for (int32 q = 0; q < 4; ++q) {
            const S a = vol_value<T>::at(cv[q], n), b = vol_value<T>::at(cv[q + 4], n);
            x[q] = a + (b - a) * S(cell.f[0]);
        }
        const S y0 = x[0] + (x[2] - x[0]) * S(cell.f[1]);
        const S y1 = x[1] + (x[3] - x[1]) * S(cell.f[1]);
        vol_value<T>::at(out, n) = y0 + (y1 - y0) * S(cell.f[2]);
    }
    return out;
}

// d value / d uvw: along each axis, the bilinear blend (over the other two axes) of the differences across the cell.
template <typename T>
WEFT_FN typename vol_value<T>::grad vol_cell_grad(const VolCell& cell, const T* cv) {
    typedef typename vol_value<T>::scalar S;
    typename vol_value<T>::grad g;
    const S fx = S(cell.f[0]), fy = S(cell.f[1]), fz = S(cell.f[2]);
    const S wx[2] = {S(1) - fx, fx}, wy[2] = {S(1) - fy, fy}, wz[2] = {S(1) - fz, fz};
    for (int32 n = 0; n < vol_value<T>::length; ++n) {
        S c[8];
        for (int32 q = 0; q < 8; ++q) c[q] = vol_value<T>::at(cv[q], n);
        S gx = S(0), gy = S(0), gz = S(0);
        for (int32 a = 0; a < 2; ++a)
            for (int32 b = 0; b < 2; ++b) {
                gx += wy[a] * wz[b] * (c[4 + 2 * a + b] - c[2 * a + b]);
                gy += wx[a] * wz[b] * (c[4 * a + 2 + b] - c[4 * a + b]);
                gz += wx[a] * wy[b] * (c[4 * a + 2 * b + 1] - c[4 * a + 2 * b]);
            }
        vol_value<T>::g(g, n, 0) = gx;
        vol_value<T>::g(g, n, 1) = gy;
        vol_value<T>::g(g, n, 2) = gz;
    }
    return g;
}

template <typename T, typename F>
WEFT_FN T vol_sample(const vec_t<3, float32>& uvw, int32 mode, const F& fetch, typename vol_value<T>::grad* grad) {
    typedef typename vol_value<T>::grad G;
    if (mode != 1 || !vol_scalar<typename vol_value<T>::scalar>::real) {
        if (grad) *grad = G();
        return fetch(int32(vol_round(uvw.c[0])), int32(vol_round(uvw.c[1])), int32(vol_round(uvw.c[2])));
    }
    const VolCell cell(uvw);
    T cv[8];
    vol_corners(cell, fetch, cv);
    if (grad) *grad = vol_cell_grad(cell, cv);
    return vol_lerp(cell, cv);
}

// Adjoint of (value, grad) = sample(uvw) over one cell: into uvw, and (when adj_corner is given) into each corner.
template <typename T>
WEFT_FN void vol_sample_adjoint(const VolCell& cell, const T* cv, const T& adj_value,
                                const typename vol_value<T>::grad* adj_grad, vec_t<3, float32>& adj_uvw,
                                T* adj_corner) {
    typedef typename vol_value<T>::scalar S;
    for (int32 e = 0; e < 3; ++e) {
        S acc = S(0);
        for (int32 c = 0; c < 8; ++c)
            for (int32 n = 0; n < vol_value<T>::length; ++n) {
                S coef = vol_value<T>::at(adj_value, n) * S(cell.dweight(c, e));
                if (adj_grad)
                    for (int32 d = 0; d < 3; ++d) coef += vol_value<T>::g(*adj_grad, n, d) * S(cell.ddweight(c, d, e));
                acc += coef * vol_value<T>::at(cv[c], n);
            }
        adj_uvw.c[e] += float32(acc);
    }
    if (adj_corner)
        for (int32 c = 0; c < 8; ++c)
            for (int32 n = 0; n < vol_value<T>::length; ++n) {
                S a = vol_value<T>::at(adj_value, n) * S(cell.weight(c));
                if (adj_grad)
                    for (int32 d = 0; d < 3; ++d) a += vol_value<T>::g(*adj_grad, n, d) * S(cell.dweight(c, d));
                vol_value<T>::at(adj_corner[c], n) = a;
            }
}

template <typename T>
WEFT_FN void vol_scatter_index(const VolumeData* v, const VolCell& cell, const array_t<T>& data, T* adj_corner,
                               T& adj_background) {
    for (int32 c = 0; c < 8; ++c) {
        const int64 n = vol_index(v, cell.i + ((c >> 2) & 1), cell.j + ((c >> 1) & 1), cell.k + (c & 1));
        if (n < 0) {
            adj_background = adj_background + adj_corner[c];
        } else {
            T* g = n < int64(data.shape[0]) ? grad_address(data, n) : nullptr;
            if (g) atom::fetch_add(g, adj_corner[c]);
        }
    }
}

template <typename T>
WEFT_FN void vol_scatter_closest(const VolumeData* v, const vec_t<3, float32>& uvw, const array_t<T>& data,
                                 const T& adj_out, T& adj_background) {
    const int64 n = vol_index(v, int32(vol_round(uvw.c[0])), int32(vol_round(uvw.c[1])), int32(vol_round(uvw.c[2])));
    if (n < 0) {
        adj_background = adj_background + adj_out;
    } else {
        T* g = n < int64(data.shape[0]) ? grad_address(data, n) : nullptr;
        if (g) atom::fetch_add(g, adj_out);
    }
}
}  // namespace geo

// ------------------------------------------------------------------------------------------------ lookups
template <typename T>
WEFT_FN void volume_lookup(uint64 id, int32 i, int32 j, int32 k, T& out) {
    const geo::VolumeData* v = geo::volume_of<T>(id, "volume_lookup: argument 'id' is not a live Volume");
    out = v ? geo::vol_get<T>(v, i, j, k) : T();
}

template <typename T>
WEFT_FN void volume_store(uint64 id, int32 i, int32 j, int32 k, const T& value) {
    const geo::VolumeData* v = geo::volume_of<T>(id, "volume_store: argument 'id' is not a live Volume");
    if (v == nullptr) return;
    const int32 leaf = geo::vol_find_leaf(v, i, j, k);
    if (leaf >= 0) static_cast<T*>(v->values)[int64(leaf) * 512 + geo::vol_voxel_bit(i, j, k)] = value;
}

WEFT_FN int32 volume_lookup_index(uint64 id, int32 i, int32 j, int32 k) {
    const geo::VolumeData* v = geo::volume(id, "volume_lookup_index: argument 'id' is not a live Volume");
    return v ? int32(geo::vol_index(v, i, j, k)) : -1;
}

WEFT_FN int32 volume_voxel_count(uint64 id) {
    const geo::VolumeData* v = geo::volume(id, "volume_voxel_count: argument 'id' is not a live Volume");
    return v ? int32(v->voxel_count) : 0;
}

// ------------------------------------------------------------------------------------------------ sampling
template <typename T>
WEFT_FN void volume_sample(uint64 id, const vec_t<3, float32>& uvw, int32 mode, T& out) {
    const geo::VolumeData* v = geo::volume_of<T>(id, "volume_sample: argument 'id' is not a live Volume");
    out = v ? geo::vol_sample<T>(uvw, mode, geo::VolFetchStored<T>{v}, nullptr) : T();
}

template <typename T>
WEFT_FN void adj_volume_sample(uint64 id, const vec_t<3, float32>& uvw, int32 mode, const T&, uint64&,
                               vec_t<3, float32>& adj_uvw, int32&, const T& adj_out) {
    const geo::VolumeData* v = geo::volume_of<T>(id, "volume_sample: argument 'id' is not a live Volume");
    if (v == nullptr || mode != 1 || !geo::vol_scalar<typename geo::vol_value<T>::scalar>::real) return;
    const geo::VolCell cell(uvw);
    T cv[8];
    geo::vol_corners(cell, geo::VolFetchStored<T>{v}, cv);
    geo::vol_sample_adjoint<T>(cell, cv, adj_out, nullptr, adj_uvw, nullptr);
}

template <typename T, typename G>
WEFT_FN void volume_sample_grad(uint64 id, const vec_t<3, float32>& uvw, int32 mode, const G&, T& out, G& grad) {
    const geo::VolumeData* v = geo::volume_of<T>(id, "volume_sample_grad: argument 'id' is not a live Volume");
    grad = G();
    out = v ? geo::vol_sample<T>(uvw, mode, geo::VolFetchStored<T>{v}, &grad) : T();
}

template <typename T, typename G>
WEFT_FN void adj_volume_sample_grad(uint64 id, const vec_t<3, float32>& uvw, int32 mode, const G&, const T&,
                                    const G&, uint64&, vec_t<3, float32>& adj_uvw, int32&, G&, const T& adj_out,
                                    const G& adj_grad) {
    const geo::VolumeData* v = geo::volume_of<T>(id, "volume_sample_grad: argument 'id' is not a live Volume");
    if (v == nullptr || mode != 1 || !geo::vol_scalar<typename geo::vol_value<T>::scalar>::real) return;
    const geo::VolCell cell(uvw);
    T cv[8];
    geo::vol_corners(cell, geo::VolFetchStored<T>{v}, cv);
    geo::vol_sample_adjoint<T>(cell, cv, adj_out, &adj_grad, adj_uvw, nullptr);
}

WEFT_FN int32 volume_sample_i(uint64 id, const vec_t<3, float32>& uvw) {
    const geo::VolumeData* v = geo::volume_of<int32>(id, "volume_sample_i: argument 'id' is not a live Volume");
    return v ? geo::vol_sample<int32>(uvw, 0, geo::VolFetchStored<int32>{v}, nullptr) : 0;
}

// ------------------------------------------------------------------------------------------------ index sampling
template <typename T>
WEFT_FN T volume_sample_index(uint64 id, const vec_t<3, float32>& uvw, int32 mode, const array_t<T>& data,
                              const T& background) {
    const geo::VolumeData* v = geo::volume(id, "volume_sample_index: argument 'id' is not a live Volume");
    if (v == nullptr) return T();
    return geo::vol_sample<T>(uvw, mode, geo::VolFetchIndexed<T>{v, &data, &background}, nullptr);
}

template <typename T>
WEFT_FN void adj_volume_sample_index(uint64 id, const vec_t<3, float32>& uvw, int32 mode, const array_t<T>& data,
                                     const T& background, uint64&, vec_t<3, float32>& adj_uvw, int32&, array_t<T>&,
                                     T& adj_background, const T& adj_out) {
    const geo::VolumeData* v = geo::volume(id, "volume_sample_index: argument 'id' is not a live Volume");
    if (v == nullptr) return;
    const geo::VolFetchIndexed<T> fetch{v, &data, &background};
    T adj_corner[8];
    if (!geo::vol_scalar<typename geo::vol_value<T>::scalar>::real) return;  // integer data carries no gradient
    if (mode != 1) {  // CLOSEST: piecewise constant in uvw; the value is the closest voxel's (or the background)
        geo::vol_scatter_closest(v, uvw, data, adj_out, adj_background);
        return;
    }
    const geo::VolCell cell(uvw);
    T cv[8];
    geo::vol_corners(cell, fetch, cv);
    geo::vol_sample_adjoint<T>(cell, cv, adj_out, nullptr, adj_uvw, adj_corner);
    geo::vol_scatter_index(v, cell, data, adj_corner, adj_background);
}

template <typename T, typename G>
WEFT_FN void volume_sample_grad_index(uint64 id, const vec_t<3, float32>& uvw, int32 mode, const array_t<T>& data,
                                      const T& background, const G&, T& out, G& grad) {
    const geo::VolumeData* v = geo::volume(id, "volume_sample_grad_index: argument 'id' is not a live Volume");
    grad = G();
    out = v ? geo::vol_sample<T>(uvw, mode, geo::VolFetchIndexed<T>{v, &data, &background}, &grad) : T();
}

template <typename T, typename G>
WEFT_FN void adj_volume_sample_grad_index(uint64 id, const vec_t<3, float32>& uvw, int32 mode,
                                          const array_t<T>& data, const T& background, const G&, const T&, const G&,
                                          uint64&, vec_t<3, float32>& adj_uvw, int32&, array_t<T>&,
                                          T& adj_background, G&, const T& adj_out, const G& adj_grad) {
    const geo::VolumeData* v = geo::volume(id, "volume_sample_grad_index: argument 'id' is not a live Volume");
    if (v == nullptr || !geo::vol_scalar<typename geo::vol_value<T>::scalar>::real) return;
    if (mode != 1) {
        geo::vol_scatter_closest(v, uvw, data, adj_out, adj_background);
        return;
    }
    const geo::VolFetchIndexed<T> fetch{v, &data, &background};
    const geo::VolCell cell(uvw);
    T cv[8], adj_corner[8];
    geo::vol_corners(cell, fetch, cv);
    geo::vol_sample_adjoint<T>(cell, cv, adj_out, &adj_grad, adj_uvw, adj_corner);
    geo::vol_scatter_index(v, cell, data, adj_corner, adj_background);
}

// ------------------------------------------------------------------------------------------------ transforms
namespace geo {
template <typename S> struct vol_xform;
template <> struct vol_xform<float32> {
    WEFT_FN static const float32* m(const VolumeData* v) { return v->xf; }
    WEFT_FN static const float32* inv(const VolumeData* v) { return v->inv_xf; }
    WEFT_FN static const float32* t(const VolumeData* v) { return v->tf; }
};
template <> struct vol_xform<float64> {
    WEFT_FN static const float64* m(const VolumeData* v) { return v->xd; }
    WEFT_FN static const float64* inv(const VolumeData* v) { return v->inv_xd; }
    WEFT_FN static const float64* t(const VolumeData* v) { return v->td; }
};
template <typename S>
WEFT_FN vec_t<3, S> vol_mul(const S* m, const vec_t<3, S>& x) {
    return vec_t<3, S>(m[0] * x.c[0] + m[1] * x.c[1] + m[2] * x.c[2], m[3] * x.c[0] + m[4] * x.c[1] + m[5] * x.c[2],
                       m[6] * x.c[0] + m[7] * x.c[1] + m[8] * x.c[2]);
}
template <typename S>
WEFT_FN void vol_mul_t_add(const S* m, const vec_t<3, S>& a, vec_t<3, S>& out) {
    for (int32 c = 0; c < 3; ++c) out.c[c] += m[c] * a.c[0] + m[3 + c] * a.c[1] + m[6 + c] * a.c[2];
}
}  // namespace geo

namespace geo {
// index -> world (forward = true) or world -> index; points (shift = true) or directions
template <bool Forward, bool Shift, typename S>
WEFT_FN vec_t<3, S> vol_map(uint64 id, const vec_t<3, S>& x, const char* what) {
    const VolumeData* v = volume(id, what);
    if (v == nullptr) return vec_t<3, S>();
    const S* t = vol_xform<S>::t(v);
    const vec_t<3, S> shift(t[0], t[1], t[2]);
    if (Forward) return Shift ? vol_mul(vol_xform<S>::m(v), x) + shift : vol_mul(vol_xform<S>::m(v), x);
    return vol_mul(vol_xform<S>::inv(v), Shift ? x - shift : x);
}
template <bool Forward, typename S>
WEFT_FN void adj_vol_map(uint64 id, vec_t<3, S>& adj_x, const vec_t<3, S>& adj_r, const char* what) {
    const VolumeData* v = volume(id, what);
    if (v != nullptr) vol_mul_t_add(Forward ? vol_xform<S>::m(v) : vol_xform<S>::inv(v), adj_r, adj_x);
}
}  // namespace geo

template <typename S>
WEFT_FN vec_t<3, S> volume_index_to_world(uint64 id, const vec_t<3, S>& x) {
    return geo::vol_map<true, true>(id, x, "volume_index_to_world: argument 'id' is not a live Volume");
}
template <typename S>
WEFT_FN void adj_volume_index_to_world(uint64 id, const vec_t<3, S>&, uint64&, vec_t<3, S>& adj_x, const vec_t<3, S>& adj_r) {
    geo::adj_vol_map<true>(id, adj_x, adj_r, "volume_index_to_world: argument 'id' is not a live Volume");
}
template <typename S>
WEFT_FN vec_t<3, S> volume_world_to_index(uint64 id, const vec_t<3, S>& x) {
    return geo::vol_map<false, true>(id, x, "volume_world_to_index: argument 'id' is not a live Volume");
}
template <typename S>
WEFT_FN void adj_volume_world_to_index(uint64 id, const vec_t<3, S>&, uint64&, vec_t<3, S>& adj_x, const vec_t<3, S>& adj_r) {
    geo::adj_vol_map<false>(id, adj_x, adj_r, "volume_world_to_index: argument 'id' is not a live Volume");
}
template <typename S>
WEFT_FN vec_t<3, S> volume_index_to_world_dir(uint64 id, const vec_t<3, S>& x) {
    return geo::vol_map<true, false>(id, x, "volume_index_to_world_dir: argument 'id' is not a live Volume");
}
template <typename S>
WEFT_FN void adj_volume_index_to_world_dir(uint64 id, const vec_t<3, S>&, uint64&, vec_t<3, S>& adj_x, const vec_t<3, S>& adj_r) {
    geo::adj_vol_map<true>(id, adj_x, adj_r, "volume_index_to_world_dir: argument 'id' is not a live Volume");
}
template <typename S>
WEFT_FN vec_t<3, S> volume_world_to_index_dir(uint64 id, const vec_t<3, S>& x) {
    return geo::vol_map<false, false>(id, x, "volume_world_to_index_dir: argument 'id' is not a live Volume");
}
template <typename S>
WEFT_FN void adj_volume_world_to_index_dir(uint64 id, const vec_t<3, S>&, uint64&, vec_t<3, S>& adj_x, const vec_t<3, S>& adj_r) {
    geo::adj_vol_map<false>(id, adj_x, adj_r, "volume_world_to_index_dir: argument 'id' is not a live Volume");
}

}  // namespace weft
