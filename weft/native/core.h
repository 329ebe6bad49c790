// weft native core: portability macros and the scalar aliases every other header uses.
// Compiled by the host C++ compiler (CPU) and by NVRTC (CUDA); keep it free of host-only headers under CUDA.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define WEFT_CUDA 1
#define WEFT_FN __host__ __device__ inline
#define WEFT_FN_SMALL __host__ __device__ inline
#define WEFT_DEVICE __device__ inline
#else
#define WEFT_CUDA 0
#define WEFT_FN inline
// Small vector and matrix operations (a few arithmetic instructions each): always inlined on the CPU. In a large
// kernel body GCC otherwise stops inlining once the enclosing function passes --param large-function-growth, and
// out-of-line vec3 multiplies keep the loop over threads from vectorising (the hand-written triangle adjoint of
// weft.sim ran 3.5x slower).
#define WEFT_FN_SMALL inline __attribute__((always_inline))
#define WEFT_DEVICE inline
#endif

#if !WEFT_CUDA
#include "clib.h"  // not <cmath>, <cstdio>, <cstring>, <cstdlib>: see clib.h
#include <cstdint>
#else
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
// NVRTC has no <cmath>: the literals the renderer emits for infinite and NaN constants
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
#endif

namespace weft {

typedef int8_t int8;
typedef int16_t int16;
typedef int32_t int32;
typedef int64_t int64;
typedef uint8_t uint8;
typedef uint16_t uint16;
typedef uint32_t uint32;
typedef uint64_t uint64;
typedef float float32;
typedef double float64;

namespace detail {
// type tests for `if constexpr` (not <type_traits>: see clib.h)
template <typename A, typename B> struct is_same_ { static constexpr bool value = false; };
template <typename A> struct is_same_<A, A> { static constexpr bool value = true; };
template <typename T> struct is_void_ { static constexpr bool value = is_same_<T, void>::value; };
}  // namespace detail

// Whether the current CPU thread runs a launch alone (set by the grid runner): adjoint accumulation into
// gradient arrays can then use plain adds instead of atomics.
#if !WEFT_CUDA
namespace detail {
inline bool& serial_flag() {
    static thread_local bool flag = false;
    return flag;
}
}  // namespace detail
struct SerialScope {
    bool saved;
    SerialScope() : saved(detail::serial_flag()) { detail::serial_flag() = true; }
    ~SerialScope() { detail::serial_flag() = saved; }
};
inline bool running_serially() { return detail::serial_flag(); }
#else
WEFT_FN bool running_serially() { return false; }
#endif

}  // namespace weft
