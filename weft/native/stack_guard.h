// weft native: a CPU tile block keeps its tiles as locals on the running thread's stack. A block body whose locals
// are large (see STACK_CHECK_BYTES in weft/backend/tiles.py) first checks that the thread has room for them; if not,
// it runs nothing and reports an out-of-memory error the launch raises (instead of overflowing the stack).
#pragma once
#if !WEFT_CUDA
#include <pthread.h>
#include <cstdio>
#include "error.h"

namespace weft {

// the lowest usable address of the calling thread's stack (nullptr when the C library cannot tell)
inline char* stack_low() {
    static thread_local char* low = nullptr;
    static thread_local bool known = false;
    if (!known) {
        pthread_attr_t attr;
        if (pthread_getattr_np(pthread_self(), &attr) == 0) {
            void* addr = nullptr;
            size_t size = 0, guard = 0;
            if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
                pthread_attr_getguardsize(&attr, &guard);
                low = static_cast<char*>(addr) + guard;
            }
            pthread_attr_destroy(&attr);
        }
        known = true;
    }
    return low;
}

// true when `need` bytes of locals (plus a margin for the calls they make) fit below the caller's frame
__attribute__((noinline)) inline bool stack_fits(int64 need, const char* kernel) {
    char* low = stack_low();
    if (low == nullptr) return true;
    char* here = static_cast<char*>(__builtin_frame_address(0));
    const int64 margin = 64 * 1024;
    const int64 left = int64(here - low);
    if (left >= need + margin) return true;
    char text[400];
    snprintf(text, sizeof(text),
             "kernel '%s' keeps %lld KiB of tiles on each CPU thread's stack, more than the %lld KiB this thread has "
             "left: use smaller tiles, or give threads larger stacks (ulimit -s for the calling thread, "
             "OMP_STACKSIZE for weft's worker threads, set before the process starts)",
             kernel, (long long)(need / 1024), (long long)((left > margin ? left - margin : 0) / 1024));
    report_error(4, text);
    return false;
}

}  // namespace weft
#endif
