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

// standard normal (Box-Muller)
WEFT_FN float randn(uint32& state) {
    float u1 = 1.0f - randf(state);  // (0, 1]
    float u2 = randf(state);
    return ::sqrtf(-2.0f * ::logf(u1)) * ::cosf(6.28318530717958647692f * u2);
}
WEFT_FN void adj_randn(uint32&, uint32&, const float&) {}

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

// uniform in the unit disk
WEFT_FN vec_t<2, float> sample_unit_disk(uint32& state) {
    float r = ::sqrtf(randf(state));
    float a = 6.28318530717958647692f * randf(state);
    return vec_t<2, float>(r * ::cosf(a), r * ::sinf(a));
}
WEFT_FN void adj_sample_unit_disk(uint32&, uint32&, const vec_t<2, float>&) {}

// uniform on the unit sphere
WEFT_FN vec_t<3, float> sample_unit_sphere_surface(uint32& state) {
    float z = 1.0f - 2.0f * randf(state);
    float a = 6.28318530717958647692f * randf(state);
    float r = ::sqrtf(::fmaxf(0.0f, 1.0f - z * z));
    return vec_t<3, float>(r * ::cosf(a), r * ::sinf(a), z);
}
WEFT_FN void adj_sample_unit_sphere_surface(uint32&, uint32&, const vec_t<3, float>&) {}

// uniform in the unit ball
WEFT_FN vec_t<3, float> sample_unit_sphere(uint32& state) {
    vec_t<3, float> d = sample_unit_sphere_surface(state);
    return d * ::cbrtf(randf(state));
}
WEFT_FN void adj_sample_unit_sphere(uint32&, uint32&, const vec_t<3, float>&) {}

// uniform on the upper (z >= 0) unit hemisphere
WEFT_FN vec_t<3, float> sample_unit_hemisphere_surface(uint32& state) {
    vec_t<3, float> d = sample_unit_sphere_surface(state);
    d.c[2] = ::fabsf(d.c[2]);
    return d;
}
WEFT_FN void adj_sample_unit_hemisphere_surface(uint32&, uint32&, const vec_t<3, float>&) {}

}  // namespace weft
