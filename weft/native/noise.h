// weft native: gradient (Perlin) noise in 1-4 dimensions, its periodic variant and curl noise.
//
// A lattice corner gets a pseudo-random gradient from a hash of its integer coordinates and the field's state
// (the same hash and gradient draw as Warp, so a seed gives the same field). The value at a point is the
// smootherstep interpolation, axis by axis (x first), of the corners' dot(gradient, offset). One routine computes
// the value and, on request, its gradient and Hessian with respect to the point (the noise adjoints use the
// gradient, the curl-noise adjoints the Hessian), so every derivative comes from the same formula as the value.
#pragma once

#include "random.h"

namespace weft {
namespace noise_detail {

WEFT_FN float fade(float t) { return t * t * t * (t * (t * 6.0f - 15.0f) + 10.0f); }
WEFT_FN float fade_d1(float t) { return 30.0f * t * t * (t * (t - 2.0f) + 1.0f); }
WEFT_FN float fade_d2(float t) { return 60.0f * t * (t * (t * 2.0f - 3.0f) + 1.0f); }

// the state of the corner's gradient draw: per-axis products with large primes, XOR-ed, the field's state added to
// the last axis' product
template <unsigned N>
WEFT_FN uint32 corner_hash(uint32 state, const int32* corner) {
    const uint32 primes[4] = {73856093u, 19349663u, 53471161u, 10000019u};
    uint32 h = uint32(corner[N - 1]) * primes[N - 1] + state;
    for (unsigned a = 0; a + 1 < N; ++a) h ^= uint32(corner[a]) * primes[a];
    return h;
}

// the corner's gradient: a uniform slope in [-1, 1) in 1-D, a unit vector (normalised cube sample) above
template <unsigned N>
WEFT_FN void corner_gradient(uint32 state, const int32* corner, float* g) {
    uint32 h = corner_hash<N>(state, corner);
    if (N == 1) {
        g[0] = randf(h, -1.0f, 1.0f);
        return;
    }
    float len2 = 0.0f;
    for (unsigned a = 0; a < N; ++a) {
        g[a] = randf(h) - 0.5f;
        len2 += g[a] * g[a];
    }
    const float inv = len2 > 0.0f ? 1.0f / ::sqrtf(len2) : 0.0f;
    for (unsigned a = 0; a < N; ++a) g[a] *= inv;
}

// value, gradient and Hessian (row-major) of the interpolant over one subset of corners
template <unsigned N>
struct Jet {
    float v;
    float g[N];
    float h[N * N];
};

// Noise at offset d in the cell whose lower/upper corners are lo/hi (hi = lo + 1, or wrapped for periodic noise).
// ORDER 0: value only, 1: and gradient, 2: and Hessian (derivatives w.r.t. d, which equal those w.r.t. the point).
template <unsigned N, int ORDER>
WEFT_FN Jet<N> evaluate(uint32 state, const int32* lo, const int32* hi, const float* d) {
    constexpr unsigned M = 1u << N;
    Jet<N> jets[M];
    for (unsigned c = 0; c < M; ++c) {
        int32 corner[N];
        float grad[N];
        for (unsigned a = 0; a < N; ++a) corner[a] = (c >> a) & 1u ? hi[a] : lo[a];
        corner_gradient<N>(state, corner, grad);
        Jet<N>& j = jets[c];
        j.v = 0.0f;
        for (unsigned a = 0; a < N; ++a) {
            j.v += (d[a] - float((c >> a) & 1u)) * grad[a];
            j.g[a] = grad[a];
        }
        for (unsigned e = 0; e < N * N; ++e) j.h[e] = 0.0f;
    }
    // fold axis k: pairs (c, c + 2^k) for the corners with bit k clear, into the low slot
    for (unsigned k = 0; k < N; ++k) {
        const float s = fade(d[k]), s1 = fade_d1(d[k]), s2 = fade_d2(d[k]);
        const unsigned step = 1u << k;
        for (unsigned c = 0; c < M; c += 2u * step) {
            Jet<N>& a = jets[c];
            const Jet<N>& b = jets[c + step];
            const float dv = b.v - a.v;
            if (ORDER >= 2) {
                for (unsigned r = 0; r < N; ++r)
                    for (unsigned q = 0; q < N; ++q) a.h[r * N + q] += (b.h[r * N + q] - a.h[r * N + q]) * s;
                for (unsigned q = 0; q < N; ++q) {
                    const float dg = (b.g[q] - a.g[q]) * s1;
                    a.h[k * N + q] += dg;
                    a.h[q * N + k] += dg;
                }
                a.h[k * N + k] += dv * s2;
            }
            if (ORDER >= 1) {
                for (unsigned q = 0; q < N; ++q) a.g[q] += (b.g[q] - a.g[q]) * s;
                a.g[k] += dv * s1;
            }
            a.v = dv * s + a.v;
        }
    }
    return jets[0];
}

// cell and offset of a point (periodic: corner coordinates wrapped into [0, period))
template <unsigned N>
WEFT_FN void locate(const float* p, const int32* period, int32* lo, int32* hi, float* d) {
    for (unsigned a = 0; a < N; ++a) {
        const float f = ::floorf(p[a]);
        d[a] = p[a] - f;
        lo[a] = int32(f);
        hi[a] = lo[a] + 1;
        if (period) {  // floored remainder: the same corner ids as Warp for p >= 0, and periodic below 0 too
            lo[a] = ((lo[a] % period[a]) + period[a]) % period[a];
            hi[a] = ((hi[a] % period[a]) + period[a]) % period[a];
        }
    }
}

template <unsigned N, int ORDER>
WEFT_FN Jet<N> at(uint32 state, const float* p, const int32* period) {
    int32 lo[N], hi[N];
    float d[N];
    locate<N>(p, period, lo, hi, d);
    return evaluate<N, ORDER>(state, lo, hi, d);
}

}  // namespace noise_detail

// ---------------------------------------------------------------------------------------------- noise / pnoise
WEFT_FN float noise(uint32 state, float x) { return noise_detail::at<1, 0>(state, &x, nullptr).v; }
WEFT_FN void adj_noise(uint32 state, float x, uint32&, float& adj_x, const float& adj_ret) {
    adj_x += noise_detail::at<1, 1>(state, &x, nullptr).g[0] * adj_ret;
}

template <unsigned N>
WEFT_FN float noise(uint32 state, const vec_t<N, float>& p) {
    return noise_detail::at<N, 0>(state, p.c, nullptr).v;
}
template <unsigned N>
WEFT_FN void adj_noise(uint32 state, const vec_t<N, float>& p, uint32&, vec_t<N, float>& adj_p, const float& adj_ret) {
    const noise_detail::Jet<N> j = noise_detail::at<N, 1>(state, p.c, nullptr);
    for (unsigned a = 0; a < N; ++a) adj_p.c[a] += j.g[a] * adj_ret;
}

WEFT_FN float pnoise(uint32 state, float x, int32 px) { return noise_detail::at<1, 0>(state, &x, &px).v; }
WEFT_FN void adj_pnoise(uint32 state, float x, int32 px, uint32&, float& adj_x, int32&, const float& adj_ret) {
    adj_x += noise_detail::at<1, 1>(state, &x, &px).g[0] * adj_ret;
}

WEFT_FN float pnoise(uint32 state, const vec_t<2, float>& p, int32 px, int32 py) {
    const int32 period[2] = {px, py};
    return noise_detail::at<2, 0>(state, p.c, period).v;
}
WEFT_FN void adj_pnoise(uint32 state, const vec_t<2, float>& p, int32 px, int32 py, uint32&, vec_t<2, float>& adj_p,
                        int32&, int32&, const float& adj_ret) {
    const int32 period[2] = {px, py};
    const noise_detail::Jet<2> j = noise_detail::at<2, 1>(state, p.c, period);
    for (unsigned a = 0; a < 2; ++a) adj_p.c[a] += j.g[a] * adj_ret;
}

WEFT_FN float pnoise(uint32 state, const vec_t<3, float>& p, int32 px, int32 py, int32 pz) {
    const int32 period[3] = {px, py, pz};
    return noise_detail::at<3, 0>(state, p.c, period).v;
}
WEFT_FN void adj_pnoise(uint32 state, const vec_t<3, float>& p, int32 px, int32 py, int32 pz, uint32&,
                        vec_t<3, float>& adj_p, int32&, int32&, int32&, const float& adj_ret) {
    const int32 period[3] = {px, py, pz};
    const noise_detail::Jet<3> j = noise_detail::at<3, 1>(state, p.c, period);
    for (unsigned a = 0; a < 3; ++a) adj_p.c[a] += j.g[a] * adj_ret;
}

WEFT_FN float pnoise(uint32 state, const vec_t<4, float>& p, int32 px, int32 py, int32 pz, int32 pt) {
    const int32 period[4] = {px, py, pz, pt};
    return noise_detail::at<4, 0>(state, p.c, period).v;
}
WEFT_FN void adj_pnoise(uint32 state, const vec_t<4, float>& p, int32 px, int32 py, int32 pz, int32 pt, uint32&,
                        vec_t<4, float>& adj_p, int32&, int32&, int32&, int32&, const float& adj_ret) {
    const int32 period[4] = {px, py, pz, pt};
    const noise_detail::Jet<4> j = noise_detail::at<4, 1>(state, p.c, period);
    for (unsigned a = 0; a < 4; ++a) adj_p.c[a] += j.g[a] * adj_ret;
}

// ---------------------------------------------------------------------------------------------- curl noise
// Octave i samples the field(s) at p * lacunarity^i with weight gain^i and sums their gradients (taken with respect
// to the scaled point, as Warp does). 2-D: the curl of one scalar field, (-dN/dy, dN/dx). 3-D/4-D: the curl of a
// vector potential of three fields; the second and third field's states derive from the first by rand_init with
// fixed offsets, and the derivation carries on from octave to octave (Warp's stream).
namespace noise_detail {
constexpr int32 curl_offset_2 = 10019689;
constexpr int32 curl_offset_3 = 13112221;

// component r of the curl output as weights of the potential fields' gradient components: out_r = sum w * g_f[q]
template <unsigned N>
struct Curl {
    static constexpr unsigned fields = N == 2 ? 1 : 3;
    static constexpr unsigned outs = N == 2 ? 2 : 3;
    // (field, component, sign) of the two terms of output r
    WEFT_FN static void terms(unsigned r, unsigned* f, unsigned* q, float* sign) {
        if (N == 2) {
            f[0] = f[1] = 0;
            q[0] = q[1] = r == 0 ? 1u : 0u;
            sign[0] = r == 0 ? -1.0f : 1.0f;
            sign[1] = 0.0f;
            return;
        }
        // (g3.y - g2.z, g1.z - g3.x, g2.x - g1.y)
        const unsigned tf[3][2] = {{2, 1}, {0, 2}, {1, 0}};
        const unsigned tq[3][2] = {{1, 2}, {2, 0}, {0, 1}};
        f[0] = tf[r][0], f[1] = tf[r][1];
        q[0] = tq[r][0], q[1] = tq[r][1];
        sign[0] = 1.0f, sign[1] = -1.0f;
    }
};

// forward (ORDER 1) or the adjoint (ORDER 2) of curl noise; the adjoint accumulates into adj_p/adj_lac/adj_gain
template <unsigned N, int ORDER>
WEFT_FN void curl(uint32 state, const float* p, uint32 octaves, float lacunarity, float gain, float* out,
                  const float* adj_out, float* adj_p, float& adj_lac, float& adj_gain) {
    using C = Curl<N>;
    float freq = 1.0f, amp = 1.0f;
    float dfreq = 0.0f, damp = 0.0f;  // d freq / d lacunarity, d amp / d gain
    for (unsigned o = 0; o < C::outs; ++o) out[o] = 0.0f;
    for (uint32 i = 0; i < octaves; ++i) {
        float pt[N];
        for (unsigned a = 0; a < N; ++a) pt[a] = freq * p[a];
        Jet<N> fields[C::fields];
        uint32 s = state;
        for (unsigned f = 0; f < C::fields; ++f) {
            if (f == 1) s = rand_init(int32(s), curl_offset_2);
            if (f == 2) s = rand_init(int32(s), curl_offset_3);
            fields[f] = at<N, ORDER>(s, pt, nullptr);
        }
        if (C::fields == 3) state = s;
        for (unsigned r = 0; r < C::outs; ++r) {
            unsigned f[2], q[2];
            float sign[2];
            C::terms(r, f, q, sign);
            for (unsigned t = 0; t < 2; ++t) {
                if (sign[t] == 0.0f) continue;
                const Jet<N>& J = fields[f[t]];
                out[r] += amp * sign[t] * J.g[q[t]];
                if (ORDER >= 2) {
                    // d out_r / d p_c = amp * sign * H[q][c] * freq ; / d lacunarity via pt = freq * p
                    float h_dot_p = 0.0f;
                    for (unsigned c = 0; c < N; ++c) {
                        adj_p[c] += adj_out[r] * amp * sign[t] * J.h[q[t] * N + c] * freq;
                        h_dot_p += J.h[q[t] * N + c] * p[c];
                    }
                    adj_lac += adj_out[r] * amp * sign[t] * h_dot_p * dfreq;
                    adj_gain += adj_out[r] * damp * sign[t] * J.g[q[t]];
                }
            }
        }
        damp = damp * gain + amp;
        dfreq = dfreq * lacunarity + freq;
        amp *= gain;
        freq *= lacunarity;
    }
}
}  // namespace noise_detail

template <unsigned N>
WEFT_FN vec_t<N == 2 ? 2 : 3, float> curlnoise(uint32 state, const vec_t<N, float>& p, uint32 octaves,
                                              float lacunarity, float gain) {
    vec_t<N == 2 ? 2 : 3, float> out;
    float unused = 0.0f;
    noise_detail::curl<N, 1>(state, p.c, octaves, lacunarity, gain, out.c, nullptr, nullptr, unused, unused);
    return out;
}
template <unsigned N>
WEFT_FN void adj_curlnoise(uint32 state, const vec_t<N, float>& p, uint32 octaves, float lacunarity, float gain,
                           uint32&, vec_t<N, float>& adj_p, uint32&, float& adj_lacunarity, float& adj_gain,
                           const vec_t<N == 2 ? 2 : 3, float>& adj_ret) {
    float out[3];
    noise_detail::curl<N, 2>(state, p.c, octaves, lacunarity, gain, out, adj_ret.c, adj_p.c, adj_lacunarity,
                             adj_gain);
}

}  // namespace weft
