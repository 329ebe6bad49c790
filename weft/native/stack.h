// weft native: the per-thread stack the backward pass uses to save dynamic loops' iteration states.
#pragma once
#include "core.h"
#include "error.h"
#if !WEFT_CUDA
#endif

namespace weft {

struct LoopStack {
    char local[512];
    char* buf;
    int64 size;
    int64 cap;

    WEFT_FN LoopStack() : buf(local), size(0), cap(sizeof(local)) {}
    WEFT_FN ~LoopStack() {
        if (buf != local) free(buf);
    }
    LoopStack(const LoopStack&) = delete;
    LoopStack& operator=(const LoopStack&) = delete;

    WEFT_FN void reserve(int64 extra) {
        if (size + extra <= cap) return;
        int64 ncap = cap * 2 > size + extra ? cap * 2 : size + extra;
        char* nbuf = static_cast<char*>(malloc(size_t(ncap)));
        if (!nbuf) {
            report_error(4, "out of memory in the backward pass loop stack");
            return;
        }
        memcpy(nbuf, buf, size_t(size));
        if (buf != local) free(buf);
        buf = nbuf;
        cap = ncap;
    }
    template <typename T>
    WEFT_FN void push(const T& v) {
        reserve(int64(sizeof(T)));
        if (size + int64(sizeof(T)) > cap) return;
        memcpy(buf + size, &v, sizeof(T));
        size += int64(sizeof(T));
    }
    template <typename T>
    WEFT_FN void pop(T& v) {
        size -= int64(sizeof(T));
        memcpy(&v, buf + size, sizeof(T));
    }
};

}  // namespace weft
