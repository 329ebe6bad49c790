// weft native: texture_sample over wp.Texture1D / 2D / 3D. A texture is a struct of plain values (the address of its
// float32 texels, stored depth x height x width x channels, row-major, its sizes, filter and address modes), so the
// same code samples host memory on the CPU and device memory under CUDA. Texel i of an axis of n texels is centred
// at (i + 0.5) / n in normalised coordinates (i + 0.5 in texel coordinates). Address modes apply to texel indices:
// WRAP (0) repeats, CLAMP (1) repeats the edge texel, MIRROR (2) reflects, BORDER (3) reads zeros outside; with
// texel coordinates WRAP and MIRROR act as CLAMP, as CUDA's samplers do. LINEAR (1) filtering interpolates the
// 2^D texels around the point (weights from the point's offset to the texel centres), CLOSEST (0) reads the texel
// containing it. Outputs with more components than the texture has channels get zeros in the extra components.
#pragma once

namespace weft {
namespace tex {

template <typename O>
struct out_traits;
template <>
struct out_traits<float32> {
    static constexpr int n = 1;
    WEFT_FN static float32& at(float32& o, int) { return o; }
    WEFT_FN static float32 get(const float32& o, int) { return o; }
};
template <unsigned N>
struct out_traits<vec_t<N, float32>> {
    static constexpr int n = int(N);
    WEFT_FN static float32& at(vec_t<N, float32>& o, int k) { return o.c[k]; }
    WEFT_FN static float32 get(const vec_t<N, float32>& o, int k) { return o.c[k]; }
};

// the texel index an address mode makes of index i on an axis of n texels; -1: outside (BORDER)
WEFT_FN int address(int i, int n, int mode) {
    if (i >= 0 && i < n) return i;
    switch (mode) {
        case 0: {  // WRAP
            const int m = i % n;
            return m < 0 ? m + n : m;
        }
        case 2: {  // MIRROR
            int m = i % (2 * n);
            if (m < 0) m += 2 * n;
            return m < n ? m : 2 * n - 1 - m;
        }
        case 3:  // BORDER
            return -1;
        default:  // CLAMP
            return i < 0 ? 0 : n - 1;
    }
}

template <typename Tex>
WEFT_FN int mode_of(const Tex& t, int axis) {
    const int m = axis == 0 ? t.address_mode_u : (axis == 1 ? t.address_mode_v : t.address_mode_w);
    return (!t.normalized_coords && (m == 0 || m == 2)) ? 1 : m;
}

template <typename Tex>
WEFT_FN int size_of(const Tex& t, int axis) { return axis == 0 ? t.width : (axis == 1 ? t.height : t.depth); }

// D coordinates -> the value of output type O (and, when grad != nullptr, d value / d coordinate per axis)
template <int D, typename Tex, typename O>
WEFT_FN void sample(const Tex& t, const float32* coord, O& out, O* grad) {
    using tr = out_traits<O>;
    out = O();
    if (grad) for (int a = 0; a < D; ++a) grad[a] = O();
    const float32* texels = reinterpret_cast<const float32*>(t.data);
    if (texels == nullptr || t.width <= 0) return;
    const int nch = tr::n < t.num_channels ? tr::n : t.num_channels;
    int base[3] = {0, 0, 0};
    float32 frac[3] = {0.0f, 0.0f, 0.0f};
    float32 scale[3] = {1.0f, 1.0f, 1.0f};
    const bool linear = t.filter_mode == 1;
    for (int a = 0; a < D; ++a) {
        const int n = size_of(t, a);
        scale[a] = t.normalized_coords ? float32(n) : 1.0f;
        const float32 x = coord[a] * scale[a] - (linear ? 0.5f : 0.0f);
        const float32 f = detail::m_floor(x);
        base[a] = int(f);
        frac[a] = x - f;
    }
    const int corners = linear ? (1 << D) : 1;
    for (int c = 0; c < corners; ++c) {
        int idx[3] = {0, 0, 0};
        float32 w = 1.0f;
        float32 dw[3] = {1.0f, 1.0f, 1.0f};  // d w / d (texel coordinate of axis a)
        bool outside = false;
        for (int a = 0; a < D; ++a) {
            const int hi = (c >> a) & 1;
            const int i = address(base[a] + hi, size_of(t, a), mode_of(t, a));
            outside = outside || i < 0;
            idx[a] = i;
            if (linear) {
                const float32 wa = hi ? frac[a] : 1.0f - frac[a];
                for (int b = 0; b < D; ++b) dw[b] *= (b == a) ? (hi ? 1.0f : -1.0f) : wa;
                w *= wa;
            }
        }
        if (outside) continue;
        const long long at = ((long long)(idx[2]) * t.height + idx[1]) * t.width + idx[0];
        for (int k = 0; k < nch; ++k) {
            const float32 v = texels[at * t.num_channels + k];
            tr::at(out, k) += w * v;
            if (grad && linear)
                for (int a = 0; a < D; ++a) tr::at(grad[a], k) += dw[a] * scale[a] * v;
        }
    }
}

}  // namespace tex

template <typename Tex, typename O>
WEFT_FN void texture_sample(const Tex& t, float32 u, float32 lod, O& out) {
    const float32 c[1] = {u};
    tex::sample<1>(t, c, out, static_cast<O*>(nullptr));
}
template <typename Tex, typename O>
WEFT_FN void texture_sample(const Tex& t, const vec_t<2, float32>& uv, float32 lod, O& out) {
    tex::sample<2>(t, uv.c, out, static_cast<O*>(nullptr));
}
template <typename Tex, typename O>
WEFT_FN void texture_sample(const Tex& t, const vec_t<3, float32>& uvw, float32 lod, O& out) {
    tex::sample<3>(t, uvw.c, out, static_cast<O*>(nullptr));
}

// adjoints: d/d coordinate for LINEAR filtering (piecewise constant, so zero, for CLOSEST); the level of detail and
// the texels get none (single-level textures ignore lod; texture data is not differentiable, as in Warp)
template <typename O>
WEFT_FN float32 tex_dot(const O& g, const O& adj) {
    float32 s = 0.0f;
    for (int k = 0; k < tex::out_traits<O>::n; ++k) s += tex::out_traits<O>::get(g, k) * tex::out_traits<O>::get(adj, k);
    return s;
}
template <typename Tex, typename O>
WEFT_FN void adj_texture_sample(const Tex& t, float32 u, float32, const O&, Tex&, float32& adj_u, float32&,
                                const O& adj_out) {
    const float32 c[1] = {u};
    O v, g[1];
    tex::sample<1>(t, c, v, g);
    adj_u += tex_dot(g[0], adj_out);
}
template <typename Tex, typename O, unsigned N>
WEFT_FN void adj_texture_sample(const Tex& t, const vec_t<N, float32>& uv, float32, const O&, Tex&,
                                vec_t<N, float32>& adj_uv, float32&, const O& adj_out) {
    O v, g[N];
    tex::sample<N>(t, uv.c, v, g);
    for (int a = 0; a < N; ++a) adj_uv.c[a] += tex_dot(g[a], adj_out);
}

}  // namespace weft
