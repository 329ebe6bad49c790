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

// A message built in place by appending text and integers (usable in device code: no printf), always terminated.
struct MessageText {
    char* buf;
    int cap;
    int p = 0;
    WEFT_FN MessageText(char* b, int c) : buf(b), cap(c) { buf[0] = 0; }
    WEFT_FN MessageText& put(const char* s) {
        while (*s && p < cap - 1) buf[p++] = *s++;
        buf[p] = 0;
        return *this;
    }
    WEFT_FN MessageText& put_int(int64 v) {
        char tmp[24];
        int n = 0;
        unsigned long long u = v < 0 ? (unsigned long long)(-v) : (unsigned long long)v;
        do { tmp[n++] = char('0' + u % 10); u /= 10; } while (u && n < 22);
        if (v < 0 && p < cap - 1) buf[p++] = '-';
        while (n && p < cap - 1) buf[p++] = tmp[--n];
        buf[p] = 0;
        return *this;
    }
};

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
