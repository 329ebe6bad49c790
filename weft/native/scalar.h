// weft native: scalar math (float32/float64/half and integer types) with adjoints.
// Convention: `R f(A a, B b)` has `void adj_f(A a, B b, A& adj_a, B& adj_b, const R& adj_ret)` that
// accumulates into adj_a/adj_b.  Every forward function sits directly above its adjoint.
#pragma once

#include "core.h"
#include "half.h"

namespace weft {
namespace detail {

template <bool B, typename R = void>
struct enable_if_ {};
template <typename R>
struct enable_if_<true, R> {
    typedef R type;
};

template <typename T> struct is_float_ { static const bool value = false; };
template <> struct is_float_<float> { static const bool value = true; };
template <> struct is_float_<double> { static const bool value = true; };
template <> struct is_float_<half> { static const bool value = true; };
template <> struct is_float_<bfloat16> { static const bool value = true; };

template <typename T> struct is_int_ { static const bool value = false; };
template <> struct is_int_<char> { static const bool value = true; };
template <> struct is_int_<signed char> { static const bool value = true; };
template <> struct is_int_<unsigned char> { static const bool value = true; };
template <> struct is_int_<short> { static const bool value = true; };
template <> struct is_int_<unsigned short> { static const bool value = true; };
template <> struct is_int_<int> { static const bool value = true; };
template <> struct is_int_<unsigned int> { static const bool value = true; };
template <> struct is_int_<long> { static const bool value = true; };
template <> struct is_int_<unsigned long> { static const bool value = true; };
template <> struct is_int_<long long> { static const bool value = true; };
template <> struct is_int_<unsigned long long> { static const bool value = true; };

template <typename T, typename R = T> struct en_f : enable_if_<is_float_<T>::value, R> {};
template <typename T, typename R = T> struct en_i : enable_if_<is_int_<T>::value, R> {};
template <typename T, typename R = T> struct en_a : enable_if_<is_float_<T>::value || is_int_<T>::value, R> {};

// Thin overloads over the C math library (host) / CUDA builtins (device).
#define WEFT_MATH1_(name, ffn, dfn)                                    \
    WEFT_FN float name(float x) { return ::ffn(x); }                   \
    WEFT_FN double name(double x) { return ::dfn(x); }                 \
    WEFT_FN half name(half x) { return half(::ffn(float(x))); }                    \
    WEFT_FN bfloat16 name(bfloat16 x) { return bfloat16(::ffn(float(x))); }
#define WEFT_MATH2_(name, ffn, dfn)                                                 \
    WEFT_FN float name(float x, float y) { return ::ffn(x, y); }                    \
    WEFT_FN double name(double x, double y) { return ::dfn(x, y); }                 \
    WEFT_FN half name(half x, half y) { return half(::ffn(float(x), float(y))); } \
    WEFT_FN bfloat16 name(bfloat16 x, bfloat16 y) { return bfloat16(::ffn(float(x), float(y))); }

WEFT_MATH1_(m_sqrt, sqrtf, sqrt)
WEFT_MATH1_(m_cbrt, cbrtf, cbrt)
WEFT_MATH1_(m_exp, expf, exp)
WEFT_MATH1_(m_exp2, exp2f, exp2)
WEFT_MATH1_(m_log, logf, log)
WEFT_MATH1_(m_log2, log2f, log2)
WEFT_MATH1_(m_log10, log10f, log10)
WEFT_MATH1_(m_sin, sinf, sin)
WEFT_MATH1_(m_cos, cosf, cos)
WEFT_MATH1_(m_tan, tanf, tan)
WEFT_MATH1_(m_asin, asinf, asin)
WEFT_MATH1_(m_acos, acosf, acos)
WEFT_MATH1_(m_atan, atanf, atan)
WEFT_MATH1_(m_sinh, sinhf, sinh)
WEFT_MATH1_(m_cosh, coshf, cosh)
WEFT_MATH1_(m_tanh, tanhf, tanh)
WEFT_MATH1_(m_floor, floorf, floor)
WEFT_MATH1_(m_ceil, ceilf, ceil)
WEFT_MATH1_(m_round, roundf, round)
WEFT_MATH1_(m_trunc, truncf, trunc)
WEFT_MATH1_(m_fabs, fabsf, fabs)
WEFT_MATH2_(m_pow, powf, pow)
WEFT_MATH2_(m_atan2, atan2f, atan2)
WEFT_MATH2_(m_fmod, fmodf, fmod)

#undef WEFT_MATH1_
#undef WEFT_MATH2_

// exponent-field tests on the bit pattern (immune to -ffast-math)
WEFT_FN uint32 abs_bits(float x) { return float_as_bits(x) & 0x7fffffffu; }
WEFT_FN uint32 abs_bits(half x) { return float_as_bits(float(x)) & 0x7fffffffu; }
WEFT_FN uint32 abs_bits(bfloat16 x) { return float_as_bits(float(x)) & 0x7fffffffu; }
WEFT_FN uint64 abs_bits(double x) { return double_as_bits(x) & 0x7fffffffffffffffull; }
WEFT_FN uint32 inf_bits(float) { return 0x7f800000u; }
WEFT_FN uint32 inf_bits(half) { return 0x7f800000u; }
WEFT_FN uint32 inf_bits(bfloat16) { return 0x7f800000u; }
WEFT_FN uint64 inf_bits(double) { return 0x7ff0000000000000ull; }
// NaN test for min / max / clamp / atomics: integers are never NaN
template <typename T>
WEFT_FN bool nan_(T) { return false; }
WEFT_FN bool nan_(float x) { return abs_bits(x) > inf_bits(x); }
WEFT_FN bool nan_(half x) { return abs_bits(x) > inf_bits(x); }
WEFT_FN bool nan_(bfloat16 x) { return abs_bits(x) > inf_bits(x); }
WEFT_FN bool nan_(double x) { return abs_bits(x) > inf_bits(x); }
// fmin / fmax choice (C99, NaN as missing): take b when it is smaller (larger) or a is NaN
template <typename T>
WEFT_FN bool takes_min_(T a, T b) { return b < a || nan_(a); }
template <typename T>
WEFT_FN bool takes_max_(T a, T b) { return a < b || nan_(a); }

}  // namespace detail

#define WEFT_F(T) typename detail::en_f<T>::type
#define WEFT_FV(T) typename detail::en_f<T, void>::type
#define WEFT_I(T) typename detail::en_i<T>::type
#define WEFT_IV(T) typename detail::en_i<T, void>::type
#define WEFT_A(T) typename detail::en_a<T>::type
#define WEFT_AV(T) typename detail::en_a<T, void>::type

// ---------------------------------------------------------------------------------------------
// arithmetic (all scalar types; integer adjoints are computed but meaningless)

template <typename T>
WEFT_FN WEFT_A(T) add(T a, T b) { return a + b; }
template <typename T>
WEFT_FN WEFT_AV(T) adj_add(T, T, T& adj_a, T& adj_b, const T& adj_ret) {
    adj_a += adj_ret;
    adj_b += adj_ret;
}

template <typename T>
WEFT_FN WEFT_A(T) sub(T a, T b) { return a - b; }
template <typename T>
WEFT_FN WEFT_AV(T) adj_sub(T, T, T& adj_a, T& adj_b, const T& adj_ret) {
    adj_a += adj_ret;
    adj_b -= adj_ret;
}

template <typename T>
WEFT_FN WEFT_A(T) mul(T a, T b) { return a * b; }
template <typename T>
WEFT_FN WEFT_AV(T) adj_mul(T a, T b, T& adj_a, T& adj_b, const T& adj_ret) {
    adj_a += adj_ret * b;
    adj_b += adj_ret * a;
}

template <typename T>
WEFT_FN WEFT_F(T) div(T a, T b) { return a / b; }
template <typename T>
WEFT_FN WEFT_FV(T) adj_div(T a, T b, T& adj_a, T& adj_b, const T& adj_ret) {
    T g = adj_ret / b;
    adj_a += g;
    adj_b -= g * (a / b);
}

// integer division truncates toward zero (C semantics); division by zero yields 0. Integers of up to 32 bits divide
// in double precision on the CPU (exact, see mod below; the quotient goes through int64 so INT_MIN / -1 wraps
// instead of trapping): the hardware's integer division does not vectorise, so a 1-D launch that recovers its 2-D
// cell with `x = tid % width; y = tid // width`, as Warp programs do, ran scalar.
template <typename T>
WEFT_FN WEFT_I(T) div(T a, T b) {
#if !WEFT_CUDA
    if constexpr (sizeof(T) <= 4) {
        const double q = double(a) / (double(b) + double(b == T(0)));
        return b == T(0) ? T(0) : T(int64_t(q));
    }
#endif
    return b == T(0) ? T(0) : T(a / b);
}
template <typename T>
WEFT_FN WEFT_IV(T) adj_div(T, T, T&, T&, const T&) {}

// float floordiv = floor(a / b) (Python semantics)
template <typename T>
WEFT_FN WEFT_F(T) floordiv(T a, T b) { return detail::m_floor(T(a / b)); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_floordiv(T, T, T&, T&, const T&) {}

// integer floordiv = C truncation (same as div)
template <typename T>
WEFT_FN WEFT_I(T) floordiv(T a, T b) { return div(a, b); }
template <typename T>
WEFT_FN WEFT_IV(T) adj_floordiv(T, T, T&, T&, const T&) {}

// float mod = fmod (C semantics, sign of dividend)
template <typename T>
WEFT_FN WEFT_F(T) mod(T a, T b) { return detail::m_fmod(a, b); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_mod(T a, T b, T& adj_a, T& adj_b, const T& adj_ret) {
    adj_a += adj_ret;
    adj_b -= adj_ret * detail::m_trunc(T(a / b));
}

// integer mod = C % (sign of dividend); mod by zero yields 0. Integers of up to 32 bits go through double
// precision, which is exact: a and b are exact doubles, the rounded quotient truncates to the true one (its error is
// below 1/|b|, the distance from a non-integer quotient to the nearest integer, for |a| < 2^53), and a - b*q is an
// exact integer below |b|. Unlike the hardware's integer division, this vectorises, so periodic indexing
// (cyclic_index(j + 1, n)) in the launch's innermost dimension does not stop a stencil from using SIMD. A zero
// divisor becomes 1, which gives a - trunc(a) = 0. (GPUs keep the integer path.)
template <typename T>
WEFT_FN WEFT_I(T) mod(T a, T b) {
#if !WEFT_CUDA
    if constexpr (sizeof(T) <= 4) {
        const double ad = double(a), bd = double(b) + double(b == T(0));
        return T(ad - bd * detail::m_trunc(ad / bd));
    }
#endif
    return (b > T(0) && a >= T(0) && a < b) ? a : (b == T(0) ? T(0) : T(a % b));
}
template <typename T>
WEFT_FN WEFT_IV(T) adj_mod(T, T, T&, T&, const T&) {}

template <typename T>
WEFT_FN WEFT_A(T) neg(T a) { return T(-a); }
template <typename T>
WEFT_FN WEFT_AV(T) adj_neg(T, T& adj_a, const T& adj_ret) { adj_a -= adj_ret; }

template <typename T>
WEFT_FN WEFT_A(T) pos(T a) { return a; }
template <typename T>
WEFT_FN WEFT_AV(T) adj_pos(T, T& adj_a, const T& adj_ret) { adj_a += adj_ret; }

// ---------------------------------------------------------------------------------------------
// integer bit operations

template <typename T>
WEFT_FN WEFT_I(T) bit_and(T a, T b) { return T(a & b); }
template <typename T>
WEFT_FN WEFT_IV(T) adj_bit_and(T, T, T&, T&, const T&) {}

template <typename T>
WEFT_FN WEFT_I(T) bit_or(T a, T b) { return T(a | b); }
template <typename T>
WEFT_FN WEFT_IV(T) adj_bit_or(T, T, T&, T&, const T&) {}

template <typename T>
WEFT_FN WEFT_I(T) bit_xor(T a, T b) { return T(a ^ b); }
template <typename T>
WEFT_FN WEFT_IV(T) adj_bit_xor(T, T, T&, T&, const T&) {}

template <typename T>
WEFT_FN WEFT_I(T) lshift(T a, T b) { return T(a << b); }
template <typename T>
WEFT_FN WEFT_IV(T) adj_lshift(T, T, T&, T&, const T&) {}

template <typename T>
WEFT_FN WEFT_I(T) rshift(T a, T b) { return T(a >> b); }
template <typename T>
WEFT_FN WEFT_IV(T) adj_rshift(T, T, T&, T&, const T&) {}

template <typename T>
WEFT_FN WEFT_I(T) invert(T a) { return T(~a); }
template <typename T>
WEFT_FN WEFT_IV(T) adj_invert(T, T&, const T&) {}

// ---------------------------------------------------------------------------------------------
// abs / sign / min / max / clamp

template <typename T>
WEFT_FN WEFT_F(T) abs(T x) { return detail::m_fabs(x); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_abs(T x, T& adj_x, const T& adj_ret) {
    if (x > T(0)) adj_x += adj_ret;
    else if (x < T(0)) adj_x -= adj_ret;
}

template <typename T>
WEFT_FN WEFT_I(T) abs(T x) { return x < T(0) ? T(-x) : x; }
template <typename T>
WEFT_FN WEFT_IV(T) adj_abs(T, T&, const T&) {}

// sign(x) = x < 0 ? -1 : 1  (sign(0) == 1)
template <typename T>
WEFT_FN WEFT_A(T) sign(T x) { return x < T(0) ? T(-1) : T(1); }
template <typename T>
WEFT_FN WEFT_AV(T) adj_sign(T, T&, const T&) {}

// min / max / clamp of floats follow C's fmin / fmax (as Warp): a NaN operand counts as missing, so the other one
// is the result (NaN only when both are); the adjoint goes to the operand the result came from
template <typename T>
WEFT_FN WEFT_A(T) min(T a, T b) { return detail::takes_min_(a, b) ? b : a; }
template <typename T>
WEFT_FN WEFT_AV(T) adj_min(T a, T b, T& adj_a, T& adj_b, const T& adj_ret) {
    if (detail::takes_min_(a, b)) adj_b += adj_ret;
    else adj_a += adj_ret;
}

template <typename T>
WEFT_FN WEFT_A(T) max(T a, T b) { return detail::takes_max_(a, b) ? b : a; }
template <typename T>
WEFT_FN WEFT_AV(T) adj_max(T a, T b, T& adj_a, T& adj_b, const T& adj_ret) {
    if (detail::takes_max_(a, b)) adj_b += adj_ret;
    else adj_a += adj_ret;
}

// clamp(x, lo, hi) = min(max(x, lo), hi) (hi wins when lo > hi, as NumPy's clip)
template <typename T>
WEFT_FN WEFT_A(T) clamp(T x, T lo, T hi) { return min(max(x, lo), hi); }
template <typename T>
WEFT_FN WEFT_AV(T) adj_clamp(T x, T lo, T hi, T& adj_x, T& adj_lo, T& adj_hi, const T& adj_ret) {
    T m = max(x, lo);
    if (detail::takes_min_(m, hi)) adj_hi += adj_ret;
    else if (detail::takes_max_(x, lo)) adj_lo += adj_ret;
    else adj_x += adj_ret;
}

// step(x) = x < 0 ? 1 : 0
template <typename T>
WEFT_FN WEFT_A(T) step(T x) { return x < T(0) ? T(1) : T(0); }
template <typename T>
WEFT_FN WEFT_AV(T) adj_step(T, T&, const T&) {}

// ---------------------------------------------------------------------------------------------
// rounding (zero gradient except frac)

template <typename T>
WEFT_FN WEFT_F(T) floor(T x) { return detail::m_floor(x); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_floor(T, T&, const T&) {}

template <typename T>
WEFT_FN WEFT_F(T) ceil(T x) { return detail::m_ceil(x); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_ceil(T, T&, const T&) {}

// round half away from zero
template <typename T>
WEFT_FN WEFT_F(T) round(T x) { return detail::m_round(x); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_round(T, T&, const T&) {}

template <typename T>
WEFT_FN WEFT_F(T) trunc(T x) { return detail::m_trunc(x); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_trunc(T, T&, const T&) {}

// frac(x) = x - trunc(x)
template <typename T>
WEFT_FN WEFT_F(T) frac(T x) { return T(x - detail::m_trunc(x)); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_frac(T, T& adj_x, const T& adj_ret) { adj_x += adj_ret; }

// ---------------------------------------------------------------------------------------------
// transcendental

template <typename T>
WEFT_FN WEFT_F(T) sqrt(T x) { return detail::m_sqrt(x); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_sqrt(T x, T& adj_x, const T& adj_ret) {
    if (x > T(0)) adj_x += adj_ret * T(0.5) / detail::m_sqrt(x);
}

template <typename T>
WEFT_FN WEFT_F(T) cbrt(T x) { return detail::m_cbrt(x); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_cbrt(T x, T& adj_x, const T& adj_ret) {
    T c = detail::m_cbrt(x);
    if (c != T(0)) adj_x += adj_ret / (T(3) * c * c);
}

template <typename T>
WEFT_FN WEFT_F(T) exp(T x) { return detail::m_exp(x); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_exp(T x, T& adj_x, const T& adj_ret) { adj_x += adj_ret * detail::m_exp(x); }

template <typename T>
WEFT_FN WEFT_F(T) exp2(T x) { return detail::m_exp2(x); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_exp2(T x, T& adj_x, const T& adj_ret) {
    adj_x += adj_ret * T(0.69314718055994530942) * detail::m_exp2(x);
}

template <typename T>
WEFT_FN WEFT_F(T) log(T x) { return detail::m_log(x); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_log(T x, T& adj_x, const T& adj_ret) { adj_x += adj_ret / x; }

template <typename T>
WEFT_FN WEFT_F(T) log2(T x) { return detail::m_log2(x); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_log2(T x, T& adj_x, const T& adj_ret) {
    adj_x += adj_ret / (x * T(0.69314718055994530942));
}

template <typename T>
WEFT_FN WEFT_F(T) log10(T x) { return detail::m_log10(x); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_log10(T x, T& adj_x, const T& adj_ret) {
    adj_x += adj_ret / (x * T(2.30258509299404568402));
}

template <typename T>
WEFT_FN WEFT_F(T) pow(T x, T y) { return detail::m_pow(x, y); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_pow(T x, T y, T& adj_x, T& adj_y, const T& adj_ret) {
    adj_x += adj_ret * y * detail::m_pow(x, T(y - T(1)));
    if (x > T(0)) adj_y += adj_ret * detail::m_log(x) * detail::m_pow(x, y);
}

template <typename T>
WEFT_FN WEFT_F(T) sin(T x) { return detail::m_sin(x); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_sin(T x, T& adj_x, const T& adj_ret) { adj_x += adj_ret * detail::m_cos(x); }

template <typename T>
WEFT_FN WEFT_F(T) cos(T x) { return detail::m_cos(x); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_cos(T x, T& adj_x, const T& adj_ret) { adj_x -= adj_ret * detail::m_sin(x); }

template <typename T>
WEFT_FN WEFT_F(T) tan(T x) { return detail::m_tan(x); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_tan(T x, T& adj_x, const T& adj_ret) {
    T t = detail::m_tan(x);
    adj_x += adj_ret * (T(1) + t * t);
}

template <typename T>
WEFT_FN WEFT_F(T) asin(T x) { return detail::m_asin(x < T(-1) ? T(-1) : (x > T(1) ? T(1) : x)); }  // clamped, as Warp
template <typename T>
WEFT_FN WEFT_FV(T) adj_asin(T x, T& adj_x, const T& adj_ret) {
    T d = T(1) - x * x;
    if (d > T(0)) adj_x += adj_ret / detail::m_sqrt(d);
}

template <typename T>
WEFT_FN WEFT_F(T) acos(T x) { return detail::m_acos(x < T(-1) ? T(-1) : (x > T(1) ? T(1) : x)); }  // clamped, as Warp
template <typename T>
WEFT_FN WEFT_FV(T) adj_acos(T x, T& adj_x, const T& adj_ret) {
    T d = T(1) - x * x;
    if (d > T(0)) adj_x -= adj_ret / detail::m_sqrt(d);
}

template <typename T>
WEFT_FN WEFT_F(T) atan(T x) { return detail::m_atan(x); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_atan(T x, T& adj_x, const T& adj_ret) { adj_x += adj_ret / (T(1) + x * x); }

// atan2(y, x)
template <typename T>
WEFT_FN WEFT_F(T) atan2(T y, T x) { return detail::m_atan2(y, x); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_atan2(T y, T x, T& adj_y, T& adj_x, const T& adj_ret) {
    T d = x * x + y * y;
    if (d > T(0)) {
        T g = adj_ret / d;
        adj_y += g * x;
        adj_x -= g * y;
    }
}

template <typename T>
WEFT_FN WEFT_F(T) sinh(T x) { return detail::m_sinh(x); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_sinh(T x, T& adj_x, const T& adj_ret) { adj_x += adj_ret * detail::m_cosh(x); }

template <typename T>
WEFT_FN WEFT_F(T) cosh(T x) { return detail::m_cosh(x); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_cosh(T x, T& adj_x, const T& adj_ret) { adj_x += adj_ret * detail::m_sinh(x); }

template <typename T>
WEFT_FN WEFT_F(T) tanh(T x) { return detail::m_tanh(x); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_tanh(T x, T& adj_x, const T& adj_ret) {
    T t = detail::m_tanh(x);
    adj_x += adj_ret * (T(1) - t * t);
}

template <typename T>
WEFT_FN WEFT_F(T) degrees(T x) { return T(x * T(57.295779513082320877)); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_degrees(T, T& adj_x, const T& adj_ret) { adj_x += adj_ret * T(57.295779513082320877); }

template <typename T>
WEFT_FN WEFT_F(T) radians(T x) { return T(x * T(0.017453292519943295769)); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_radians(T, T& adj_x, const T& adj_ret) { adj_x += adj_ret * T(0.017453292519943295769); }

// ---------------------------------------------------------------------------------------------
// classification

template <typename T>
WEFT_FN typename detail::en_f<T, bool>::type isnan(T x) { return detail::abs_bits(x) > detail::inf_bits(x); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_isnan(T, T&, const bool&) {}

template <typename T>
WEFT_FN typename detail::en_i<T, bool>::type isnan(T) { return false; }
template <typename T>
WEFT_FN WEFT_IV(T) adj_isnan(T, T&, const bool&) {}

template <typename T>
WEFT_FN typename detail::en_f<T, bool>::type isinf(T x) { return detail::abs_bits(x) == detail::inf_bits(x); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_isinf(T, T&, const bool&) {}

template <typename T>
WEFT_FN typename detail::en_i<T, bool>::type isinf(T) { return false; }
template <typename T>
WEFT_FN WEFT_IV(T) adj_isinf(T, T&, const bool&) {}

template <typename T>
WEFT_FN typename detail::en_f<T, bool>::type isfinite(T x) { return detail::abs_bits(x) < detail::inf_bits(x); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_isfinite(T, T&, const bool&) {}

template <typename T>
WEFT_FN typename detail::en_i<T, bool>::type isfinite(T) { return true; }
template <typename T>
WEFT_FN WEFT_IV(T) adj_isfinite(T, T&, const bool&) {}

// ---------------------------------------------------------------------------------------------
// interpolation

// smoothstep(edge0, edge1, x): Hermite 3t^2 - 2t^3 of t = clamp((x - edge0) / (edge1 - edge0), 0, 1)
template <typename T>
WEFT_FN WEFT_F(T) smoothstep(T a, T b, T x) {
    T t = clamp(T((x - a) / (b - a)), T(0), T(1));
    return T(t * t * (T(3) - T(2) * t));
}
template <typename T>
WEFT_FN WEFT_FV(T) adj_smoothstep(T a, T b, T x, T& adj_a, T& adj_b, T& adj_x, const T& adj_ret) {
    T ba = b - a;
    T t = (x - a) / ba;
    if (t > T(0) && t < T(1)) {
        T g = adj_ret * T(6) * t * (T(1) - t) / ba;  // dL/dx
        adj_x += g;
        adj_a += g * ((x - b) / ba);
        adj_b -= g * ((x - a) / ba);
    }
}

// lerp(a, b, t) = a * (1 - t) + b * t
template <typename T>
WEFT_FN WEFT_F(T) lerp(T a, T b, T t) { return T(a * (T(1) - t) + b * t); }
template <typename T>
WEFT_FN WEFT_FV(T) adj_lerp(T a, T b, T t, T& adj_a, T& adj_b, T& adj_t, const T& adj_ret) {
    adj_a += adj_ret * (T(1) - t);
    adj_b += adj_ret * t;
    adj_t += adj_ret * (b - a);
}

}  // namespace weft
