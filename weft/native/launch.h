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
template <typename Body>
inline void run_range(const Grid& g, int64 begin, int64 end, Body&& body) {
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
        switch (nd) {
            case 1:
                for (int64 j = j0; j < jend; ++j) body(int32(j), 0, 0, 0, j);
                break;
            case 2:
                for (int64 j = j0; j < jend; ++j) body(idx[0], int32(j), 0, 0, base + j);
                break;
            case 3:
                for (int64 j = j0; j < jend; ++j) body(idx[0], idx[1], int32(j), 0, base + j);
                break;
            default:
                for (int64 j = j0; j < jend; ++j) body(idx[0], idx[1], idx[2], int32(j), base + j);
                break;
        }
        flat += jend - j0;
    }
}

template <typename Body>
inline void run_grid(const int64* dims, int32 ndim, int32 nthreads, Body&& body) {
    const Grid g = make_grid(dims, ndim);
    int64 total = 1;
    for (int d = 0; d < (ndim < 1 ? 1 : ndim); ++d) total *= g.dim[d];
    if (total <= 0) return;
    // below this size a parallel region costs more than it saves
    const int64 min_per_thread = 2048;
    int threads = nthreads > 0 ? nthreads : omp_get_max_threads();
    if (int64(threads) * min_per_thread > total) threads = int(total / min_per_thread);
    if (threads <= 1) {
        run_range(g, 0, total, body);
        return;
    }
#pragma omp parallel num_threads(threads)
    {
        const int t = omp_get_thread_num();
        const int n = omp_get_num_threads();
        const int64 chunk = (total + n - 1) / n;
        const int64 b = int64(t) * chunk;
        const int64 e = b + chunk < total ? b + chunk : total;
        if (b < e) run_range(g, b, e, body);
    }
}
#endif

}  // namespace weft
