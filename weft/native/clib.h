// weft native: the C library functions the host headers and generated kernels call, declared here instead of
// including <cmath>, <cstdio>, <cstring>, <cstdlib> and <limits>. Host only (NVRTC has its own builtins).
// <cmath> alone cost about 0.14 s of g++ CPU time per translation unit (more than the rest of weft.h together); the
// others 0.04 s more, and together they were most of the precompiled header's build time and size. The declarations
// match the C library's (same types and exception specifications), so a unit that also includes the standard
// headers still compiles, and GCC and Clang recognise the names as the same builtins (same code generated).
#pragma once

typedef decltype(sizeof(0)) size_t;

extern "C" {
// <stdio.h>, <string.h>, <stdlib.h>
int printf(const char*, ...);
void* memcpy(void*, const void*, size_t) noexcept;
void* memset(void*, int, size_t) noexcept;
int memcmp(const void*, const void*, size_t) noexcept;
void* malloc(size_t) noexcept;
void* calloc(size_t, size_t) noexcept;
void* realloc(void*, size_t) noexcept;
void free(void*) noexcept;
// <signal.h>: wp.breakpoint() (construct.h)
void (*signal(int, void (*)(int)) noexcept)(int);
int raise(int) noexcept;

// <math.h>
#define WEFT_LIBM1_(name)               \
    double name(double) noexcept;       \
    float name##f(float) noexcept;
#define WEFT_LIBM2_(name)                 \
    double name(double, double) noexcept; \
    float name##f(float, float) noexcept;
WEFT_LIBM1_(sqrt)
WEFT_LIBM1_(cbrt)
WEFT_LIBM1_(exp)
WEFT_LIBM1_(exp2)
WEFT_LIBM1_(expm1)
WEFT_LIBM1_(log)
WEFT_LIBM1_(log2)
WEFT_LIBM1_(log10)
WEFT_LIBM1_(log1p)
WEFT_LIBM1_(sin)
WEFT_LIBM1_(cos)
WEFT_LIBM1_(tan)
WEFT_LIBM1_(asin)
WEFT_LIBM1_(acos)
WEFT_LIBM1_(atan)
WEFT_LIBM1_(sinh)
WEFT_LIBM1_(cosh)
WEFT_LIBM1_(tanh)
WEFT_LIBM1_(asinh)
WEFT_LIBM1_(acosh)
WEFT_LIBM1_(atanh)
WEFT_LIBM1_(floor)
WEFT_LIBM1_(ceil)
WEFT_LIBM1_(round)
WEFT_LIBM1_(trunc)
WEFT_LIBM1_(rint)
WEFT_LIBM1_(nearbyint)
WEFT_LIBM1_(fabs)
WEFT_LIBM1_(erf)
WEFT_LIBM1_(erfc)
WEFT_LIBM1_(lgamma)
WEFT_LIBM1_(tgamma)
WEFT_LIBM2_(pow)
WEFT_LIBM2_(atan2)
WEFT_LIBM2_(fmod)
WEFT_LIBM2_(fmin)
WEFT_LIBM2_(fmax)
WEFT_LIBM2_(copysign)
WEFT_LIBM2_(hypot)
WEFT_LIBM2_(remainder)
double fma(double, double, double) noexcept;
float fmaf(float, float, float) noexcept;
#undef WEFT_LIBM1_
#undef WEFT_LIBM2_
}

// the constants the renderer emits for infinite and NaN literals (backend/names.py)
#ifndef INFINITY
#define INFINITY (__builtin_inff())
#endif
#ifndef NAN
#define NAN (__builtin_nanf(""))
#endif
