// weft native: IEEE 754 binary16 storage type with float arithmetic.
// Conversions are done with integer bit manipulation (round-to-nearest-even, inf/nan/subnormals handled),
// so the same code runs on the host and under NVRTC without cuda_fp16.h.
#pragma once

#include "core.h"

namespace weft {
namespace detail {

WEFT_FN uint32 float_as_bits(float f) {
#if WEFT_CUDA
    return __float_as_uint(f);
#else
    uint32 u;
    memcpy(&u, &f, sizeof(u));
    return u;
#endif
}

WEFT_FN float bits_as_float(uint32 u) {
#if WEFT_CUDA
    return __uint_as_float(u);
#else
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
#endif
}

WEFT_FN uint64 double_as_bits(double d) {
#if WEFT_CUDA
    return (uint64)__double_as_longlong(d);
#else
    uint64 u;
    memcpy(&u, &d, sizeof(u));
    return u;
#endif
}

// float32 -> float16 bits, round to nearest even.
WEFT_FN uint16 float_to_half_bits(float f) {
    uint32 x = float_as_bits(f);
    uint32 sign = (x >> 16) & 0x8000u;
    x &= 0x7fffffffu;
    if (x >= 0x7f800000u) {  // inf or nan (keep nan quiet and non-zero payload)
        return (uint16)(sign | 0x7c00u | (x > 0x7f800000u ? (0x200u | ((x >> 13) & 0x3ffu)) : 0u));
    }
    if (x >= 0x477ff000u) return (uint16)(sign | 0x7c00u);  // rounds to inf
    if (x < 0x38800000u) {                                   // half subnormal or zero
        if (x <= 0x33000000u) return (uint16)sign;           // <= 2^-25 rounds to zero (tie -> even)
        uint32 e = x >> 23;
        uint32 m = (x & 0x7fffffu) | 0x800000u;
        uint32 shift = 126u - e;  // 14..24
        uint32 h = m >> shift;
        uint32 rem = m & ((1u << shift) - 1u);
        uint32 halfway = 1u << (shift - 1u);
        if (rem > halfway || (rem == halfway && (h & 1u))) ++h;
        return (uint16)(sign | h);
    }
    uint32 h = (x - 0x38000000u) >> 13;
    uint32 rem = x & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // carry may roll into the exponent: correct
    return (uint16)(sign | h);
}

WEFT_FN float half_bits_to_float(uint16 h) {
    uint32 sign = ((uint32)h & 0x8000u) << 16;
    uint32 e = ((uint32)h >> 10) & 0x1fu;
    uint32 m = (uint32)h & 0x3ffu;
    if (e == 0) {
        float v = (float)m * 5.9604644775390625e-8f;  // m * 2^-24, exact
        return sign ? -v : v;
    }
    if (e == 31) return bits_as_float(sign | 0x7f800000u | (m << 13));
    return bits_as_float(sign | ((e + 112u) << 23) | (m << 13));
}

}  // namespace detail

struct half {
    uint16 bits;

    half() = default;
    template <typename U>
    WEFT_FN explicit half(U v) : bits(detail::float_to_half_bits((float)v)) {}

    WEFT_FN operator float() const { return detail::half_bits_to_float(bits); }

    WEFT_FN static half from_bits(uint16 b) {
        half h;
        h.bits = b;
        return h;
    }

    WEFT_FN half& operator+=(half o) { return *this = half(float(*this) + float(o)); }
    WEFT_FN half& operator-=(half o) { return *this = half(float(*this) - float(o)); }
    WEFT_FN half& operator*=(half o) { return *this = half(float(*this) * float(o)); }
    WEFT_FN half& operator/=(half o) { return *this = half(float(*this) / float(o)); }
};

typedef half float16;

WEFT_FN half operator+(half a, half b) { return half(float(a) + float(b)); }
WEFT_FN half operator-(half a, half b) { return half(float(a) - float(b)); }
WEFT_FN half operator*(half a, half b) { return half(float(a) * float(b)); }
WEFT_FN half operator/(half a, half b) { return half(float(a) / float(b)); }
WEFT_FN half operator-(half a) { return half::from_bits((uint16)(a.bits ^ 0x8000u)); }
WEFT_FN half operator+(half a) { return a; }
WEFT_FN bool operator==(half a, half b) { return float(a) == float(b); }
WEFT_FN bool operator!=(half a, half b) { return float(a) != float(b); }
WEFT_FN bool operator<(half a, half b) { return float(a) < float(b); }
WEFT_FN bool operator<=(half a, half b) { return float(a) <= float(b); }
WEFT_FN bool operator>(half a, half b) { return float(a) > float(b); }
WEFT_FN bool operator>=(half a, half b) { return float(a) >= float(b); }

// ---- bfloat16: the upper 16 bits of a float32 (8 exponent bits, 7 mantissa bits), float arithmetic
namespace detail {

WEFT_FN uint16 float_to_bf16_bits(float f) {
    uint32 x = float_as_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16)((x >> 16) | 0x40u);  // nan stays a quiet nan
    x += 0x7fffu + ((x >> 16) & 1u);                                        // round to nearest even
    return (uint16)(x >> 16);
}

WEFT_FN float bf16_bits_to_float(uint16 b) { return bits_as_float((uint32)b << 16); }

}  // namespace detail

struct bfloat16 {
    uint16 bits;

    bfloat16() = default;
    template <typename U>
    WEFT_FN explicit bfloat16(U v) : bits(detail::float_to_bf16_bits((float)v)) {}

    WEFT_FN operator float() const { return detail::bf16_bits_to_float(bits); }

    WEFT_FN static bfloat16 from_bits(uint16 b) {
        bfloat16 h;
        h.bits = b;
        return h;
    }

    WEFT_FN bfloat16& operator+=(bfloat16 o) { return *this = bfloat16(float(*this) + float(o)); }
    WEFT_FN bfloat16& operator-=(bfloat16 o) { return *this = bfloat16(float(*this) - float(o)); }
    WEFT_FN bfloat16& operator*=(bfloat16 o) { return *this = bfloat16(float(*this) * float(o)); }
    WEFT_FN bfloat16& operator/=(bfloat16 o) { return *this = bfloat16(float(*this) / float(o)); }
};

WEFT_FN bfloat16 operator+(bfloat16 a, bfloat16 b) { return bfloat16(float(a) + float(b)); }
WEFT_FN bfloat16 operator-(bfloat16 a, bfloat16 b) { return bfloat16(float(a) - float(b)); }
WEFT_FN bfloat16 operator*(bfloat16 a, bfloat16 b) { return bfloat16(float(a) * float(b)); }
WEFT_FN bfloat16 operator/(bfloat16 a, bfloat16 b) { return bfloat16(float(a) / float(b)); }
WEFT_FN bfloat16 operator-(bfloat16 a) { return bfloat16::from_bits((uint16)(a.bits ^ 0x8000u)); }
WEFT_FN bfloat16 operator+(bfloat16 a) { return a; }
WEFT_FN bool operator==(bfloat16 a, bfloat16 b) { return float(a) == float(b); }
WEFT_FN bool operator!=(bfloat16 a, bfloat16 b) { return float(a) != float(b); }
WEFT_FN bool operator<(bfloat16 a, bfloat16 b) { return float(a) < float(b); }
WEFT_FN bool operator<=(bfloat16 a, bfloat16 b) { return float(a) <= float(b); }
WEFT_FN bool operator>(bfloat16 a, bfloat16 b) { return float(a) > float(b); }
WEFT_FN bool operator>=(bfloat16 a, bfloat16 b) { return float(a) >= float(b); }

}  // namespace weft
