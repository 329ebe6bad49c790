// weft native: CPU launch grid. Splits the flattened grid into one contiguous range per thread; inside a range
// the innermost launch dimension is a plain counted loop the compiler can vectorise.
#pragma once
#include "core.h"
#if !WEFT_CUDA
#include <omp.h>
#endif

#if !WEFT_CUDA
#define WEFT_EXPORT __attribute__((visibility("default")))
#endif

namespace weft {

struct Grid {
    int64 dim[4];  // launch dims padded on the right with 1
    int32 ndim;
};

WEFT_FN Grid make_grid(const int64* dims, int32 ndim) {
    Grid g;
    for (int d = 0; d < 4; ++d) g.dim[d] = d < ndim ? dims[d] : 1;
    g.ndim = ndim;
    return g;
}

#if !WEFT_CUDA
// Calls body(i0, i1, i2, i3, flat) for every grid point; i_{ndim-1} varies fastest.
// Not inlined: the serial path and the parallel pieces share one copy of the loops (each inlines the kernel body
// once per launch rank), which keeps compile time down.
// The body (a lambda holding the kernel's arguments by value) is taken by value: a local copy whose address never
// escapes cannot be written through the kernel's array pointers, so the compiler keeps scalar arguments and array
// shapes in registers instead of reloading them after every store.
// Independent: the kernel has no atomics and no other side effects besides plain stores, so, as on a GPU, no thread
// may depend on another thread's writes within the launch; the innermost loop is then marked free of loop-carried
// dependencies (a data race the programming model already excludes), which lets it vectorise even when it
// gathers (computed indices) or when inputs and outputs might alias.
#if defined(__clang__)
#define WEFT_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#else
#define WEFT_IVDEP _Pragma("GCC ivdep")
#endif
#define WEFT_GRID_LOOP(IND, CALL)                                   \
    if constexpr (IND) {                                            \
        WEFT_IVDEP for (int32 j = jb; j < je; ++j) CALL;            \
    } else {                                                        \
        for (int32 j = jb; j < je; ++j) CALL;                       \
    }
template <bool Independent = false, typename Body>
__attribute__((noinline)) void run_range(const Grid& g, int64 begin, int64 end, Body body) {
    const int nd = g.ndim < 1 ? 1 : g.ndim;
    const int64 inner = g.dim[nd - 1];
    int64 flat = begin;
    while (flat < end) {
        int64 row = flat / inner;
        int64 j0 = flat - row * inner;
        int64 jend = inner < j0 + (end - flat) ? inner : j0 + (end - flat);
        int32 idx[4] = {0, 0, 0, 0};
        int64 r = row;
        for (int d = nd - 2; d >= 0; --d) {
            idx[d] = int32(r % g.dim[d]);
            r /= g.dim[d];
        }
        const int64 base = row * inner;
        // A 32-bit counter: kernels see thread indices as int32, and a counter truncated from int64 would not be an
        // affine induction variable, so loads and stores would become gathers and scatters instead of vector moves.
        if (jend > int64(INT32_MAX)) {  // thread indices are int32 (as in Warp); keep the flat index exact anyway
            for (int64 j = j0; j < jend; ++j) {
                int32 ids[4] = {idx[0], idx[1], idx[2], 0};
                ids[nd - 1] = int32(j);
                body(ids[0], ids[1], ids[2], ids[3], base + j);
            }
            flat += jend - j0;
            continue;
        }
        const int32 jb = int32(j0), je = int32(jend);
        switch (nd) {
            case 1:
                WEFT_GRID_LOOP(Independent, body(j, 0, 0, 0, int64(j)))
                break;
            case 2:
                WEFT_GRID_LOOP(Independent, body(idx[0], j, 0, 0, base + j))
                break;
            case 3:
                WEFT_GRID_LOOP(Independent, body(idx[0], idx[1], j, 0, base + j))
                break;
            default:
                WEFT_GRID_LOOP(Independent, body(idx[0], idx[1], idx[2], j, base + j))
                break;
        }
        flat += jend - j0;
    }
}

// Work split: thread t owns the t-th contiguous slice of the flattened grid, cut into a few pieces. A thread runs
// its own pieces in order, then takes the pieces other threads have not started. With every core free this is a
// static partition (each thread touches the same memory launch after launch, so caches stay warm); when a core is
// busy with something else (a shared CI runner, another process), its pieces move to the threads that are free
// instead of the whole launch waiting for the slowest thread.
struct alignas(64) GridSlice {
    int32 next;   // pieces claimed so far (atomic)
    int32 count;  // pieces in this slice
    int64 begin, end, piece;
};
constexpr int kMaxGridThreads = 256;
// below this many grid points per thread a parallel region costs more than it saves: a fork-join is a few
// microseconds on idle cores, but milliseconds when the cores are shared and a worker waits to be scheduled
constexpr int64 kMinPerThread = 16384;
constexpr int64 kMinPiece = 16384;
constexpr int32 kMaxPieces = 8;

template <bool Independent, typename Body>
inline bool run_piece(const Grid& g, GridSlice& s, Body& body) {
    const int32 k = __atomic_fetch_add(&s.next, 1, __ATOMIC_RELAXED);
    if (k >= s.count) return false;
    const int64 b = s.begin + int64(k) * s.piece;
    const int64 e = b + s.piece < s.end ? b + s.piece : s.end;
    run_range<Independent>(g, b, e, body);
    return true;
}

template <bool Independent = false, typename Body>
inline void run_grid(const int64* dims, int32 ndim, int32 nthreads, Body&& body) {
    const Grid g = make_grid(dims, ndim);
    int64 total = 1;
    for (int d = 0; d < (ndim < 1 ? 1 : ndim); ++d) total *= g.dim[d];
    if (total <= 0) return;
    int threads = nthreads > 0 ? nthreads : omp_get_max_threads();
    if (threads > kMaxGridThreads) threads = kMaxGridThreads;
    if (int64(threads) * kMinPerThread > total) threads = int(total / kMinPerThread);
    if (threads <= 1) {
        SerialScope serial;  // one thread: gradient accumulation needs no atomics
        run_range<Independent>(g, 0, total, body);
        return;
    }
    GridSlice slices[kMaxGridThreads];
    const int64 per = (total + threads - 1) / threads;
    for (int t = 0; t < threads; ++t) {
        GridSlice& s = slices[t];
        s.begin = int64(t) * per < total ? int64(t) * per : total;
        s.end = s.begin + per < total ? s.begin + per : total;
        const int64 len = s.end - s.begin;
        int64 pieces = len / kMinPiece;
        pieces = pieces < 1 ? 1 : (pieces > kMaxPieces ? kMaxPieces : pieces);
        s.piece = (len + pieces - 1) / pieces;
        s.count = s.piece > 0 ? int32((len + s.piece - 1) / s.piece) : 0;
        s.next = 0;
    }
#pragma omp parallel num_threads(threads)
    {
        const int t = omp_get_thread_num();
        while (run_piece<Independent>(g, slices[t], body)) {
        }
        for (int k = 1; k < threads; ++k) {
            GridSlice& other = slices[(t + k) % threads];
            while (run_piece<Independent>(g, other, body)) {
            }
        }
    }
}
#endif

}  // namespace weft
