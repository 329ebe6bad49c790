// weft native: stateless-hash random numbers.  The state is a uint32 advanced by a PCG-style permutation.
// None of these are differentiable; the adj_ stubs exist so generated code can call them uniformly.
#pragma once

#include "vec.h"

namespace weft {

// PCG output permutation (RXS-M-XS) of one LCG step
WEFT_FN uint32 rand_pcg(uint32 state) {
    uint32 s = state * 747796405u + 2891336453u;
    uint32 w = ((s >> ((s >> 28u) + 4u)) ^ s) * 277803737u;
    return (w >> 22u) ^ w;
}
WEFT_FN void adj_rand_pcg(uint32, uint32&, const uint32&) {}

WEFT_FN uint32 rand_init(int32 seed) { return rand_pcg((uint32)seed); }
WEFT_FN void adj_rand_init(int32, int32&, const uint32&) {}

WEFT_FN uint32 rand_init(int32 seed, int32 offset) { return rand_pcg((uint32)seed + rand_pcg((uint32)offset)); }
WEFT_FN void adj_rand_init(int32, int32, int32&, int32&, const uint32&) {}

// next 32 random bits as int32
WEFT_FN int32 randi(uint32& state) {
    state = rand_pcg(state);
    return (int32)state;
}
WEFT_FN void adj_randi(uint32&, uint32&, const int32&) {}

// uniform integer in [lo, hi)
WEFT_FN int32 randi(uint32& state, int32 lo, int32 hi) {
    state = rand_pcg(state);
    uint32 range = (uint32)hi - (uint32)lo;
    return range == 0u ? lo : (int32)((uint32)lo + state % range);
}
WEFT_FN void adj_randi(uint32&, int32, int32, uint32&, int32&, int32&, const int32&) {}

// uniform float in [0, 1)
WEFT_FN float randf(uint32& state) {
    state = rand_pcg(state);
    return (float)(state >> 8) * (1.0f / 16777216.0f);
}
WEFT_FN void adj_randf(uint32&, uint32&, const float&) {}

// uniform float in [lo, hi)
WEFT_FN float randf(uint32& state, float lo, float hi) { return lo + (hi - lo) * randf(state); }
WEFT_FN void adj_randf(uint32&, float, float, uint32&, float&, float&, const float&) {}

// unsigned variants: the raw 32 bits, or uniform in [lo, hi) (lo when the range is empty)
WEFT_FN uint32 randu(uint32& state) {
    state = rand_pcg(state);
    return state;
}
WEFT_FN void adj_randu(uint32&, uint32&, const uint32&) {}

WEFT_FN uint32 randu(uint32& state, uint32 lo, uint32 hi) {
    state = rand_pcg(state);
    uint32 range = hi - lo;
    return range == 0u ? lo : lo + state % range;
}
WEFT_FN void adj_randu(uint32&, uint32, uint32, uint32&, uint32&, uint32&, const uint32&) {}

// standard normal (Box-Muller); the first draw feeds the radius, the second the angle, and the radius draw is
// shifted by 2^-24 so the logarithm never sees 0 (the same stream as Warp's randn for the same state)
WEFT_FN float randn(uint32& state) {
    const float u_radius = randf(state) + 5.96e-8f;
    const float u_angle = randf(state);
    return ::sqrtf(-2.0f * ::logf(u_radius)) * ::cosf(6.28318530717958647692f * u_angle);
}
WEFT_FN void adj_randn(uint32&, uint32&, const float&) {}

// the first index i of the non-decreasing cdf with cdf[i] >= u, u uniform in [0, 1) (cdf.shape[0] if none);
// a template on the array type so this header needs no array.h (instantiated where kernels use it)
template <typename A>
WEFT_FN int32 sample_cdf(uint32& state, const A& cdf) {
    const float u = randf(state);
    int32 lo = 0, hi = cdf.shape[0];
    while (lo < hi) {
        const int32 mid = lo + (hi - lo) / 2;
        const float v = *reinterpret_cast<const float*>(reinterpret_cast<const char*>(cdf.data) + mid * cdf.strides[0]);
        if (v < u) lo = mid + 1; else hi = mid;
    }
    return lo;
}
template <typename A>
WEFT_FN void adj_sample_cdf(uint32&, const A&, uint32&, A&, const int32&) {}

namespace detail {
constexpr float two_pi_f = 6.28318530717958647692f;
// a direction from cos(polar angle) and a uniform azimuth draw (sin from the identity sin^2 + cos^2 = 1)
WEFT_FN vec_t<3, float> direction_from(float cos_polar, uint32& state) {
    const float azimuth = randf(state, 0.0f, two_pi_f);
    const float sin_polar = ::sqrtf(::fmaxf(0.0f, 1.0f - cos_polar * cos_polar));
    return vec_t<3, float>(::cosf(azimuth) * sin_polar, ::sinf(azimuth) * sin_polar, cos_polar);
}
}  // namespace detail

// barycentric (u, v) uniform over the triangle u, v >= 0, u + v <= 1
WEFT_FN vec_t<2, float> sample_triangle(uint32& state) {
    const float s = ::sqrtf(randf(state));
    const float v = randf(state) * s;
    return vec_t<2, float>(1.0f - s, v);
}
WEFT_FN void adj_sample_triangle(uint32&, uint32&, const vec_t<2, float>&) {}

// uniform on the unit circle
WEFT_FN vec_t<2, float> sample_unit_ring(uint32& state) {
    const float a = randf(state, 0.0f, detail::two_pi_f);
    return vec_t<2, float>(::cosf(a), ::sinf(a));
}
WEFT_FN void adj_sample_unit_ring(uint32&, uint32&, const vec_t<2, float>&) {}

WEFT_FN vec_t<2, float> sample_unit_square(uint32& state) {
    float x = randf(state) - 0.5f;
    float y = randf(state) - 0.5f;
    return vec_t<2, float>(x, y);
}
WEFT_FN void adj_sample_unit_square(uint32&, uint32&, const vec_t<2, float>&) {}

WEFT_FN vec_t<3, float> sample_unit_cube(uint32& state) {
    float x = randf(state) - 0.5f;
    float y = randf(state) - 0.5f;
    float z = randf(state) - 0.5f;
    return vec_t<3, float>(x, y, z);
}
WEFT_FN void adj_sample_unit_cube(uint32&, uint32&, const vec_t<3, float>&) {}

WEFT_FN vec_t<4, float> sample_unit_hypercube(uint32& state) {
    float a = randf(state) - 0.5f;
    float b = randf(state) - 0.5f;
    float c = randf(state) - 0.5f;
    float d = randf(state) - 0.5f;
    return vec_t<4, float>(a, b, c, d);
}

// uniform in the unit disk
WEFT_FN vec_t<2, float> sample_unit_disk(uint32& state) {
    const float r = ::sqrtf(randf(state));
    const float a = randf(state, 0.0f, detail::two_pi_f);
    return vec_t<2, float>(r * ::cosf(a), r * ::sinf(a));
}
WEFT_FN void adj_sample_unit_disk(uint32&, uint32&, const vec_t<2, float>&) {}

// uniform on the unit sphere (z = cos(polar angle) is uniform in (-1, 1])
WEFT_FN vec_t<3, float> sample_unit_sphere_surface(uint32& state) {
    const float z = 1.0f - 2.0f * randf(state);
    return detail::direction_from(z, state);
}
WEFT_FN void adj_sample_unit_sphere_surface(uint32&, uint32&, const vec_t<3, float>&) {}

// uniform in the unit ball (radius = cube root of a uniform draw, drawn after the direction)
WEFT_FN vec_t<3, float> sample_unit_sphere(uint32& state) {
    const vec_t<3, float> d = sample_unit_sphere_surface(state);
    return d * ::cbrtf(randf(state));
}
WEFT_FN void adj_sample_unit_sphere(uint32&, uint32&, const vec_t<3, float>&) {}

// uniform on the upper (z > 0) unit hemisphere
WEFT_FN vec_t<3, float> sample_unit_hemisphere_surface(uint32& state) {
    const float z = 1.0f - randf(state);
    return detail::direction_from(z, state);
}
WEFT_FN void adj_sample_unit_hemisphere_surface(uint32&, uint32&, const vec_t<3, float>&) {}

// uniform in the upper half of the unit ball
WEFT_FN vec_t<3, float> sample_unit_hemisphere(uint32& state) {
    const vec_t<3, float> d = sample_unit_hemisphere_surface(state);
    return d * ::cbrtf(randf(state));
}
WEFT_FN void adj_sample_unit_hemisphere(uint32&, uint32&, const vec_t<3, float>&) {}

namespace detail {
// log(k!) for a whole number k >= 0: a sum of logs below 16, Stirling's series (error < 1e-9) from there
WEFT_FN float log_factorial(float k) {
    if (k < 16.0f) {
        float s = 0.0f;
        for (float i = 2.0f; i <= k; i += 1.0f) s += ::logf(i);
        return s;
    }
    const double n = double(k) + 1.0, r = 1.0 / n, r2 = r * r;
    return float((n - 0.5) * ::log(n) - n + 0.91893853320467274178 + r * (1.0 / 12.0 - r2 * (1.0 / 360.0 - r2 / 1260.0)));
}
}  // namespace detail

// Poisson(lam) counts. Small rates multiply uniform draws until the product falls below exp(-lam) (Knuth);
// from lam = 10 on, Hoermann's transformed rejection with squeeze (PTRS, 1993), whose candidates are
// checked for k >= 0 before any conversion to unsigned.
WEFT_FN uint32 poisson(uint32& state, float lam) {
    if (!(lam > 0.0f)) return 0u;
    if (lam < 10.0f) {
        const float limit = ::expf(-lam);
        uint32 k = 0u;
        float product = randf(state);
        while (product > limit) {
            ++k;
            product *= randf(state);
        }
        return k;
    }
    const float sq = ::sqrtf(lam);
    const float log_lam = ::logf(lam);
    const float b = 0.931f + 2.53f * sq;
    const float a = -0.059f + 0.02483f * b;
    const float inv_alpha = 1.1239f + 1.1328f / (b - 3.4f);
    const float v_r = 0.9277f - 3.6224f / (b - 2.0f);
    for (;;) {
        const float u = randf(state) - 0.5f;
        const float v = randf(state);
        const float us = 0.5f - ::fabsf(u);
        const float k = ::floorf((2.0f * a / us + b) * u + lam + 0.43f);
        if (k < 0.0f) continue;  // never a count: reject before any conversion
        if (us >= 0.07f && v <= v_r) return (uint32)k;
        if (us < 0.013f && v > us) continue;
        const float lhs = ::logf(v) + ::logf(inv_alpha) - ::logf(a / (us * us) + b);
        if (lhs <= -lam + k * log_lam - detail::log_factorial(k)) return (uint32)k;
    }
}
WEFT_FN void adj_poisson(uint32&, float, uint32&, float&, const uint32&) {}

}  // namespace weft
