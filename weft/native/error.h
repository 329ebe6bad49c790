// weft native: errors raised by kernels (debug-mode bounds checks, asserts, expect_*), read back by Python.
#pragma once
#include "core.h"

namespace weft {

struct ErrorState {
    int32 code;  // 0: none, 1: out of bounds, 2: assert, 3: expect failed
    int32 count;
    char message[480];
};

// One per compiled module (each module defines weft_errors() through WEFT_DEFINE_ERROR_STATE).
WEFT_FN ErrorState* error_state();

WEFT_FN void copy_text(char* dst, const char* src, int cap) {
    int i = 0;
    for (; i < cap - 1 && src[i]; ++i) dst[i] = src[i];
    dst[i] = 0;
}

WEFT_FN void report_error(int32 code, const char* text) {
    ErrorState* s = error_state();
#if WEFT_CUDA
    if (atomicCAS(&s->code, 0, code) == 0) copy_text(s->message, text, sizeof(s->message));
    atomicAdd(&s->count, 1);
#else
    int32 expected = 0;
    if (__atomic_compare_exchange_n(&s->code, &expected, code, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        copy_text(s->message, text, sizeof(s->message));
    __atomic_fetch_add(&s->count, 1, __ATOMIC_RELAXED);
#endif
}

}  // namespace weft

#if WEFT_CUDA
#define WEFT_DEFINE_ERROR_STATE                                                    \
    __device__ weft::ErrorState weft_error_storage;                               \
    WEFT_FN weft::ErrorState* weft::error_state() { return &weft_error_storage; }
#else
#define WEFT_DEFINE_ERROR_STATE                                                        \
    static weft::ErrorState weft_error_storage;                                       \
    WEFT_FN weft::ErrorState* weft::error_state() { return &weft_error_storage; }     \
    extern "C" WEFT_EXPORT weft::ErrorState* weft_errors() { return &weft_error_storage; }
#endif
