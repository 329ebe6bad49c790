// weft native: CPU launch grid. Splits the flattened grid into one contiguous range per thread; inside a range
// the innermost launch dimension is a plain counted loop the compiler can vectorise.
#pragma once
#include "core.h"
#include "atomic.h"
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

// What a generated CPU entry (weft_fwd, weft_bwd) returns. A module is first compiled for launches whose arrays are
// contiguous in their innermost dimension (the common layout) and, for a backward entry with a deferred form, that
// meet that form's conditions; such a module returns kEntryNeedsStrided for any other launch, which the caller then
// runs through the same source compiled with WEFT_STRIDED defined (the general instantiation, right for every
// layout and launch; compiled on the first launch that needs it). kEntryGridUnfit: a launch the grid loop cannot index (see
// grid_fits), which weft's launch checks reject before it gets here.
constexpr int32 kEntryDone = 0;
constexpr int32 kEntryNeedsStrided = 1;
constexpr int32 kEntryGridUnfit = 2;

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
// A straight-line kernel body and the generated entry's lambda around it (arguments by value) are forced inline into
// the grid loop: the body is called from one loop (see run_range), and g++'s stack-frame limits would otherwise leave
// a call per point for bodies with many vector / matrix temporaries, which keeps the loop from vectorising (a mat33
// kernel ran 2.3x slower).
#define WEFT_INLINE_LAMBDA __attribute__((always_inline))
#define WEFT_INLINE_BODY __attribute__((always_inline))
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
// The grid row holding flat index ``flat`` (rank nd, innermost extent inner): its outer indices, the flat index of
// its first point, and the part [j0, jend) of its innermost range that lies before ``end``.
struct RowSpan {
    int64 base, j0, jend;
    int32 idx[4];
};
inline RowSpan row_span(const Grid& g, int nd, int64 inner, int64 flat, int64 end) {
    RowSpan rs;
    const int64 row = flat / inner;
    rs.j0 = flat - row * inner;
    rs.jend = inner < rs.j0 + (end - flat) ? inner : rs.j0 + (end - flat);
    rs.base = row * inner;
    for (int d = 0; d < 4; ++d) rs.idx[d] = 0;
    int64 r = row;
    for (int d = nd - 2; d >= 0; --d) {
        rs.idx[d] = int32(r % g.dim[d]);
        r /= g.dim[d];
    }
    return rs;
}

template <bool Independent, typename Body>
inline void run_range_any(const Grid& g, int64 begin, int64 end, Body& body) {
    const int nd = g.ndim < 1 ? 1 : g.ndim;
    const int64 inner = g.dim[nd - 1];
    int64 flat = begin;
    while (flat < end) {
        const RowSpan rs = row_span(g, nd, inner, flat, end);
        const int64 base = rs.base, j0 = rs.j0, jend = rs.jend;
        const int32 idx[4] = {rs.idx[0], rs.idx[1], rs.idx[2], rs.idx[3]};
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

// The rows of a launch whose rank is ND >= 2 (the kernel unpacks wp.tid() into ND indices, which the launch checks)
// and whose innermost extent fits int32: one loop, one copy of the kernel body.
template <bool Independent, int ND, typename Body>
inline void run_rows(const Grid& g, int64 begin, int64 end, Body& body) {
    const int64 inner = g.dim[ND - 1];
    int64 flat = begin;
    while (flat < end) {
        const RowSpan rs = row_span(g, ND, inner, flat, end);
        const int64 base = rs.base, j0 = rs.j0, jend = rs.jend;
        const int32 idx[4] = {rs.idx[0], rs.idx[1], rs.idx[2], rs.idx[3]};
        const int32 jb = int32(j0), je = int32(jend);
        if constexpr (ND == 2) {
            WEFT_GRID_LOOP(Independent, body(idx[0], j, 0, 0, base + j))
        } else if constexpr (ND == 3) {
            WEFT_GRID_LOOP(Independent, body(idx[0], idx[1], j, 0, base + j))
        } else {
            WEFT_GRID_LOOP(Independent, body(idx[0], idx[1], idx[2], j, base + j))
        }
        flat += jend - j0;
    }
}

// Whether a launch fits the grid loop of a kernel whose thread-index rank is ND (see run_range): rank 1 (the flat
// index) needs fewer than 2^31 points, rank ND >= 2 a grid of that rank whose innermost extent fits an int32. weft's
// launches are checked for this before they reach native code (runtime/launch.py, check_grid); the generated entry
// checks again and returns kGridUnfit instead of running a launch the loop cannot index.
inline bool grid_fits(const int64* dims, int32 ndim, int ND) {
    if (ND <= 1) {
        int64 total = 1;
        for (int d = 0; d < ndim; ++d) total *= dims[d];
        return total <= int64(INT32_MAX);
    }
    return ndim == ND && dims[ND - 1] <= int64(INT32_MAX);
}

// ND: what the kernel reads of its thread index, known when its module is rendered: 1 = only the flat index (``i =
// wp.tid()``, or no wp.tid() at all), 2..4 = that many indices, 0 = unknown. With ND known, the launch's points run
// through one loop holding the only copy of the kernel body (a large body copied into a loop per launch rank was not
// inlined at all: a call per point, nothing vectorised); the launch must pass grid_fits (checked by the entry), so no
// second, out-of-line copy of the body is compiled for launches outside the loop's assumptions.
template <bool Independent = false, int ND = 0, typename Body>
__attribute__((noinline)) void run_range(const Grid& g, int64 begin, int64 end, Body body) {
    if constexpr (ND == 0) {
        run_range_any<Independent>(g, begin, end, body);
    } else if constexpr (ND == 1) {
        const int32 jb = int32(begin), je = int32(end);
        WEFT_GRID_LOOP(Independent, body(j, 0, 0, 0, int64(j)))
    } else {
        run_rows<Independent, ND>(g, begin, end, body);
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

// Claims the next piece of slice s and runs range(begin, end) over it; false when the slice has no pieces left.
template <typename Range>
inline bool run_piece(GridSlice& s, Range& range) {
    const int32 k = __atomic_fetch_add(&s.next, 1, __ATOMIC_RELAXED);
    if (k >= s.count) return false;
    const int64 b = s.begin + int64(k) * s.piece;
    const int64 e = b + s.piece < s.end ? b + s.piece : s.end;
    range(b, e);
    return true;
}

// Cuts the flattened grid into one slice per thread (see GridSlice).
// min_piece: the smallest piece worth claiming on its own (grid points, or tile blocks for run_blocks)
inline void make_slices(int64 total, int threads, GridSlice* slices, int64 min_piece = kMinPiece) {
    const int64 per = (total + threads - 1) / threads;
    for (int t = 0; t < threads; ++t) {
        GridSlice& s = slices[t];
        s.begin = int64(t) * per < total ? int64(t) * per : total;
        s.end = s.begin + per < total ? s.begin + per : total;
        const int64 len = s.end - s.begin;
        int64 pieces = len / min_piece;
        pieces = pieces < 1 ? 1 : (pieces > kMaxPieces ? kMaxPieces : pieces);
        s.piece = (len + pieces - 1) / pieces;
        s.count = s.piece > 0 ? int32((len + s.piece - 1) / s.piece) : 0;
        s.next = 0;
    }
}

// Thread t of a team runs its own slice's pieces, then those the others have not started. A team smaller than the
// slices (OpenMP may give fewer threads than asked for) still runs every piece. range(begin, end) runs one piece.
template <typename Range>
inline void run_slices(GridSlice* slices, int nslices, int t, Range&& range) {
    while (run_piece(slices[t], range)) {
    }
    for (int k = 1; k < nslices; ++k) {
        GridSlice& other = slices[(t + k) % nslices];
        while (run_piece(other, range)) {
        }
    }
}

inline int64 grid_total(const int64* dims, int32 ndim) {
    int64 total = 1;
    for (int d = 0; d < ndim; ++d) total *= dims[d];
    return total;
}

// The number of threads run_grid uses for a launch (a backward entry asks first, to choose how each gradient is
// accumulated); passing the result back as nthreads gives the same number.
inline int32 grid_threads(const int64* dims, int32 ndim, int32 nthreads) {
    const int64 total = grid_total(dims, ndim);
    int threads = nthreads > 0 ? nthreads : omp_get_max_threads();
    if (threads > kMaxGridThreads) threads = kMaxGridThreads;
    if (int64(threads) * kMinPerThread > total) threads = int(total / kMinPerThread);
    return threads < 1 ? 1 : threads;
}

// Debug launches stop soon after the first out-of-bounds access or failed assert (expect_* failures only print):
// the grid runs in pieces of at most kDebugPiece points and no piece starts once an error was reported.
constexpr int64 kDebugPiece = int64(1) << 20;
inline bool debug_stopped() {
    const int32 code = __atomic_load_n(&error_state()->code, __ATOMIC_RELAXED);
    return code == 1 || code == 2;
}

template <bool Independent = false, int ND = 0, bool Debug = false, typename Body>
inline void run_grid(const int64* dims, int32 ndim, int32 nthreads, Body&& body) {
    const Grid g = make_grid(dims, ndim);
    const int64 total = grid_total(dims, ndim);
    if (total <= 0) return;
    const int threads = grid_threads(dims, ndim, nthreads);
    if constexpr (Debug) {
        if (threads <= 1) {
            SerialScope serial;
            for (int64 b = 0; b < total && !debug_stopped(); b += kDebugPiece)
                run_range<Independent, ND>(g, b, total - b < kDebugPiece ? total : b + kDebugPiece, body);
            return;
        }
        int64 next = 0;  // the next unclaimed piece's first point
#pragma omp parallel num_threads(threads)
        for (;;) {
            if (debug_stopped()) break;
            const int64 b = __atomic_fetch_add(&next, kDebugPiece, __ATOMIC_RELAXED);
            if (b >= total) break;
            run_range<Independent, ND>(g, b, total - b < kDebugPiece ? total : b + kDebugPiece, body);
        }
        return;
    }
    if (threads <= 1) {
        SerialScope serial;  // one thread: gradient accumulation needs no atomics
        run_range<Independent, ND>(g, 0, total, body);
        return;
    }
    GridSlice slices[kMaxGridThreads];
    make_slices(total, threads, slices);
#pragma omp parallel num_threads(threads)
    run_slices(slices, threads, omp_get_thread_num(), [&](int64 b, int64 e) { run_range<Independent, ND>(g, b, e, body); });
}

// Runs range(b, e) over contiguous pieces of the flat grid (the slices of run_grid): for bodies that carry work from
// one point to the next, the lane runs of query loops (weft/backend/lanes.py).
template <typename Range>
inline void run_grid_ranges(const int64* dims, int32 ndim, int32 nthreads, Range&& range) {
    const int64 total = grid_total(dims, ndim);
    if (total <= 0) return;
    const int threads = grid_threads(dims, ndim, nthreads);
    if (threads <= 1) {
        SerialScope serial;
        range(int64(0), total);
        return;
    }
    GridSlice slices[kMaxGridThreads];
    make_slices(total, threads, slices);
#pragma omp parallel num_threads(threads)
    run_slices(slices, threads, omp_get_thread_num(), [&](int64 b, int64 e) { range(b, e); });
}

// ---- guard splitting (weft/backend/guards.py)
// A kernel whose work sits under comparisons of its thread indices against row-invariant values runs each row in
// three parts: clip(i0, i1, i2, i3, base, lo, hi) narrows the row piece [lo, hi) to an interval of the innermost
// index on which the comparisons have the values the plan assumed; there `known` (the body with those comparisons as constants, so the
// guard folds and the loop vectorises) runs, and on the rest of the row (a few points at the rim) the unchanged
// body, called out of line. The launch must pass grid_fits.
#define WEFT_SPLIT_CALL(F, ND)                                                       \
    ((ND) == 1   ? F(j, 0, 0, 0, int64(j))                                           \
     : (ND) == 2 ? F(idx[0], j, 0, 0, base + j)                                      \
     : (ND) == 3 ? F(idx[0], idx[1], j, 0, base + j)                                 \
                 : F(idx[0], idx[1], idx[2], j, base + j))

template <bool Independent, int ND, typename Body, typename Known, typename Clip>
inline void run_split_row(const int32* idx, int64 base, int32 rb, int32 re, Body& body, Known& known, Clip& clip) {
    auto rim = [&](int32 i0, int32 i1, int32 i2, int32 i3, int64 flat) __attribute__((noinline)) {
        body(i0, i1, i2, i3, flat);
    };
    int64 lo = rb, hi = re;  // clip narrows the row piece to where the guard's comparisons hold as assumed
    clip(idx[0], idx[1], idx[2], idx[3], base, lo, hi);
    const int32 a = lo <= int64(rb) ? rb : (lo >= int64(re) ? re : int32(lo));
    const int32 b = hi <= int64(a) ? a : (hi >= int64(re) ? re : int32(hi));
    for (int32 j = rb; j < a; ++j) WEFT_SPLIT_CALL(rim, ND);
    {
        const int32 jb = a, je = b;
        WEFT_GRID_LOOP(Independent, WEFT_SPLIT_CALL(known, ND))
    }
    for (int32 j = b; j < re; ++j) WEFT_SPLIT_CALL(rim, ND);
}

// The launch must pass grid_fits (as for run_range).
template <bool Independent, int ND, typename Body, typename Known, typename Clip>
__attribute__((noinline)) void run_range_split(const Grid& g, int64 begin, int64 end, Body body, Known known,
                                               Clip clip) {
    static_assert(ND >= 1 && ND <= 4, "guard splitting needs the launch rank");
    if constexpr (ND == 1) {
        const int32 idx[4] = {0, 0, 0, 0};
        run_split_row<Independent, ND>(idx, 0, int32(begin), int32(end), body, known, clip);
    } else {
        const int64 inner = g.dim[ND - 1];
        int64 flat = begin;
        while (flat < end) {
            const RowSpan rs = row_span(g, ND, inner, flat, end);
            run_split_row<Independent, ND>(rs.idx, rs.base, int32(rs.j0), int32(rs.jend), body, known, clip);
            flat += rs.jend - rs.j0;
        }
    }
}

template <bool Independent, int ND, typename Body, typename Known, typename Clip>
inline void run_grid_split(const int64* dims, int32 ndim, int32 nthreads, Body&& body, Known&& known, Clip&& clip) {
    const Grid g = make_grid(dims, ndim);
    const int64 total = grid_total(dims, ndim);
    if (total <= 0) return;
    const int threads = grid_threads(dims, ndim, nthreads);
    if (threads <= 1) {
        SerialScope serial;
        run_range_split<Independent, ND>(g, 0, total, body, known, clip);
        return;
    }
    GridSlice slices[kMaxGridThreads];
    make_slices(total, threads, slices);
#pragma omp parallel num_threads(threads)
    run_slices(slices, threads, omp_get_thread_num(),
               [&](int64 b, int64 e) { run_range_split<Independent, ND>(g, b, e, body, known, clip); });
}

// run_grid_split for a flat launch (ND 1) whose kernel computes its cell as x = tid % width, y = tid // width
// (guards._flat_rows): the points run in rows of `width`; on each row's clip interval `known` gets the row as i0, the
// column as i1 and the flat index as flat (no divisions; y * width + x + c is contiguous), the rim the flat body.
template <bool Independent, typename Body, typename Known, typename Clip>
__attribute__((noinline)) void run_range_split_rows(int64 width, int64 begin, int64 end, Body body, Known known,
                                                    Clip clip) {
    int64 flat = begin;
    while (flat < end) {
        const int64 row = flat / width, base = row * width;
        const int64 row_end = base + width < end ? base + width : end;
        const int32 idx[4] = {int32(row), 0, 0, 0};
        run_split_row<Independent, 2>(idx, base, int32(flat - base), int32(row_end - base), body, known, clip);
        flat = row_end;
    }
}

template <bool Independent, typename Body, typename Known, typename Clip>
inline void run_grid_split_rows(const int64* dims, int32 ndim, int32 nthreads, int64 width, Body&& body,
                                Known&& known, Clip&& clip) {
    if (width <= 0) {  // no rows: the flat body everywhere
        run_grid<Independent, 1>(dims, ndim, nthreads, body);
        return;
    }
    const int64 total = grid_total(dims, ndim);
    if (total <= 0) return;
    const int threads = grid_threads(dims, ndim, nthreads);
    if (threads <= 1) {
        SerialScope serial;
        run_range_split_rows<Independent>(width, 0, total, body, known, clip);
        return;
    }
    GridSlice slices[kMaxGridThreads];
    make_slices(total, threads, slices);
#pragma omp parallel num_threads(threads)
    run_slices(slices, threads, omp_get_thread_num(),
               [&](int64 b, int64 e) { run_range_split_rows<Independent>(width, b, e, body, known, clip); });
}

// ---- privatised gradient accumulation
// A gradient that several threads add into at the same elements (a stencil's neighbours, a gather's sources) would
// need an atomic read-modify-write per add. Instead, thread t > 0 of a backward launch adds with plain adds into its
// own zeroed copy of the gradient's bytes (thread 0 into the gradient itself); after the grid, the threads sum the
// copies into the gradient, each a contiguous chunk of it, copies in thread order.
// (PrivateGrad and private_grad, which chooses the gradients, are in atomic.h)

template <typename S>
inline void sum_private(S* dst, char* const* copies, int ncopies, int64 begin, int64 end) {
    for (int c = 0; c < ncopies; ++c) {
        const S* src = reinterpret_cast<const S*>(copies[c]);
        for (int64 i = begin; i < end; ++i) dst[i] += src[i];
    }
}

// Runs a backward launch on `threads` threads (from grid_threads) with the gradients in priv[0..npriv) privatised:
// each thread t calls run(mine, t), where mine is a copy of args whose privatised gradient pointers lead to thread
// t's copies (thread 0 keeps the gradients themselves); after every thread is done, the copies are summed in.
template <typename A, typename Run>
inline void with_private_grads(int32 threads, const A& args, const PrivateGrad* priv, int npriv, Run&& run) {
    // one block per thread t > 0, each slot's copy 64-byte aligned relative to the gradient's own alignment
    int64 offsets[kMaxPrivateGrads + 1];
    offsets[0] = 0;
    for (int k = 0; k < npriv; ++k) offsets[k + 1] = offsets[k] + ((priv[k].bytes + 64 + 63) / 64) * 64;
    const int64 block = offsets[npriv];
    char* pool = npriv > 0 ? static_cast<char*>(malloc(size_t(block * (threads - 1) + 64))) : nullptr;
    if (npriv > 0 && pool == nullptr) {  // no memory for the copies: one thread (the gradients are already plain)
        SerialScope serial;
        run(args, 0);
        return;
    }
    char* base = pool + (64 - reinterpret_cast<uintptr_t>(pool) % 64) % 64;
    auto copy_of = [&](int t, int k) {  // thread t's copy of slot k: same address modulo 64 as the gradient
        return base + int64(t - 1) * block + offsets[k] + int64(reinterpret_cast<uintptr_t>(priv[k].lo) % 64);
    };
#pragma omp parallel num_threads(threads)
    {
        const int t = omp_get_thread_num();
        const int team = omp_get_num_threads();
        A mine = args;
        if (t > 0) {
            for (int k = 0; k < npriv; ++k) {
                char* copy = copy_of(t, k);
                memset(copy, 0, size_t(priv[k].bytes));
                char* grad;
                memcpy(&grad, reinterpret_cast<char*>(&mine) + priv[k].field, sizeof(char*));
                grad = copy + (grad - priv[k].lo);
                memcpy(reinterpret_cast<char*>(&mine) + priv[k].field, &grad, sizeof(char*));
            }
        }
        run(static_cast<const A&>(mine), t);
        if (npriv > 0) {
#pragma omp barrier
            char* copies[kMaxGridThreads];
            for (int k = 0; k < npriv; ++k) {
                for (int c = 1; c < team; ++c) copies[c - 1] = copy_of(c, k);
                const int64 n = priv[k].bytes / (priv[k].is_double ? 8 : 4);
                const int64 chunk = (n + team - 1) / team;
                const int64 b = int64(t) * chunk < n ? int64(t) * chunk : n;
                const int64 e = b + chunk < n ? b + chunk : n;
                if (priv[k].is_double)
                    sum_private(reinterpret_cast<double*>(priv[k].lo), copies, team - 1, b, e);
                else
                    sum_private(reinterpret_cast<float*>(priv[k].lo), copies, team - 1, b, e);
            }
        }
    }
    free(pool);
}

// run_grid for a backward body taking the arguments explicitly (body(args, i0, i1, i2, i3, flat)), with the
// gradients in priv[0..npriv) privatised per thread. threads must come from grid_threads.
template <typename A, typename Body>
inline void run_grid_private(const int64* dims, int32 ndim, int32 threads, const A& args, const PrivateGrad* priv,
                             int npriv, Body&& body) {
    const Grid g = make_grid(dims, ndim);
    const int64 total = grid_total(dims, ndim);
    if (total <= 0) return;
    if (threads <= 1 || npriv == 0) {
        run_grid(dims, ndim, threads, [&](int32 i0, int32 i1, int32 i2, int32 i3, int64 flat) {
            body(args, i0, i1, i2, i3, flat);
        });
        return;
    }
    GridSlice slices[kMaxGridThreads];
    make_slices(total, threads, slices);
    with_private_grads(threads, args, priv, npriv, [&](const A& mine, int t) {
        auto point = [&](int32 i0, int32 i1, int32 i2, int32 i3, int64 flat) { body(mine, i0, i1, i2, i3, flat); };
        run_slices(slices, threads, t, [&](int64 b, int64 e) { run_range<false>(g, b, e, point); });
    });
}

// ---- deferred-scatter backward
// The reverse sweep of a stencil or gather adds into neighbouring gradient elements: a real dependence between
// grid points, which keeps the loop scalar. A backward body in deferred form (body(i0, i1, i2, i3, flat, lane))
// instead writes each such add into a per-site lane buffer (value and element offset, see defer_add in atomic.h);
// the grid points of a chunk of at most kDeferLanes points of the innermost dimension then run as one
// dependence-free loop (each lane writes only its own buffer slots and reads only what the forward reads), and
// flush(n, ...) applies the chunk's adds site by site afterwards (flush_adds: vector adds over contiguous runs). The sum
// each gradient element receives is the same; only the order of its floating-point additions changes.
constexpr int32 kDeferLanes = 128;  // 64 measured 10% slower on rk3_update's split backward

// Runs the points [begin, end) of a launch of rank ND (1: flat index) in chunks; the launch must have passed
// deferred_launch_ok (rank ND, fewer than 2^31 points).
template <int ND, typename Body, typename Flush>
inline void run_range_chunked(const Grid& g, int64 begin, int64 end, Body body, Flush flush) {
    if constexpr (ND <= 1) {
        for (int32 c = int32(begin); c < int32(end); c += kDeferLanes) {
            const int32 ce = int32(end) - c < kDeferLanes ? int32(end) : c + kDeferLanes;
            WEFT_IVDEP for (int32 j = c; j < ce; ++j) body(j, 0, 0, 0, int64(j), j - c);
            flush(ce - c, 0, 0, c);
        }
    } else {
        const int64 inner = g.dim[ND - 1];
        int64 flat = begin;
        while (flat < end) {
            const RowSpan rs = row_span(g, ND, inner, flat, end);
            const int64 base = rs.base;
            const int32 idx[4] = {rs.idx[0], rs.idx[1], rs.idx[2], rs.idx[3]};
            for (int32 c = int32(rs.j0); c < int32(rs.jend); c += kDeferLanes) {
                const int32 ce = int32(rs.jend) - c < kDeferLanes ? int32(rs.jend) : c + kDeferLanes;
                if constexpr (ND == 2) {
                    WEFT_IVDEP for (int32 j = c; j < ce; ++j) body(idx[0], j, 0, 0, base + j, j - c);
                } else if constexpr (ND == 3) {
                    WEFT_IVDEP for (int32 j = c; j < ce; ++j) body(idx[0], idx[1], j, 0, base + j, j - c);
                } else {
                    WEFT_IVDEP for (int32 j = c; j < ce; ++j) body(idx[0], idx[1], idx[2], j, base + j, j - c);
                }
                flush(ce - c, 0, 0, c);
            }
            flat += rs.jend - rs.j0;
        }
    }
}

// Whether a launch can take the chunked walk of a kernel whose thread-index rank is ND.
inline bool deferred_launch_ok(const int64* dims, int32 ndim, int ND) {
    if (grid_total(dims, ndim) > int64(INT32_MAX)) return false;
    return ND <= 1 || ndim == ND;
}

// run_range_chunked for a guard-split backward (see run_split_row): per row, clip narrows the row to the interval
// where the guard plan's comparisons and index identities hold as assumed; there `known` (the body with them folded:
// contiguous loads, no wrap divisions) runs as the chunk's vector loop, the rest of the row (the rim) runs `body` out
// of line. Both record into the same lane slots, so one flush serves the chunk: flush(n, ka, kb, col), where lanes
// [ka, kb) ran `known` and lane l is column col + l. `known` records no offset for a row-affine site (an element at
// the innermost index j + c and row-invariant outer indices: see row_slice in backend/guards.py): bases(i0..i3),
// run once per row that has known lanes, computes those sites' offsets at j = 0 (the generated bwd_bases), and
// the flush derives the lanes' offsets from them (flush_affine in atomic.h).
#define WEFT_DEFER_CALL(F, ND, LANE)                                                 \
    ((ND) <= 1   ? F(j, 0, 0, 0, int64(j), LANE)                                     \
     : (ND) == 2 ? F(idx[0], j, 0, 0, base + j, LANE)                                \
     : (ND) == 3 ? F(idx[0], idx[1], j, 0, base + j, LANE)                           \
                 : F(idx[0], idx[1], idx[2], j, base + j, LANE))

template <int ND, typename Body, typename Known, typename Clip, typename Bases, typename Flush, typename RimFlush>
inline void run_chunked_split_row(const int32* idx, int64 base, int32 rb, int32 re, Body& body, Known& known,
                                  Clip& clip, Bases& bases, Flush& flush, RimFlush& rim_flush, int32& rim_lanes) {
    auto rim = [&](int32 i0, int32 i1, int32 i2, int32 i3, int64 flat, int32 lane) __attribute__((noinline)) {
        body(i0, i1, i2, i3, flat, lane);
    };
    int64 lo = rb, hi = re;
    clip(idx[0], idx[1], idx[2], idx[3], base, lo, hi);
    const int32 a = lo <= int64(rb) ? rb : (lo >= int64(re) ? re : int32(lo));
    const int32 b = hi <= int64(a) ? a : (hi >= int64(re) ? re : int32(hi));
    // every chunk of the interval runs `known` on all its lanes; the rims (a stencil's first and last points of
    // each row) fill lane buffers of their own across rows, flushed when full and at the end of the piece
    // (rim_flush): a flush per row rim measured 14% of rk3_update's split backward
    auto rims = [&](int32 from, int32 to) {
        for (int32 j = from; j < to; ++j) {
            WEFT_DEFER_CALL(rim, ND, rim_lanes);
            if (++rim_lanes == kDeferLanes) {
                rim_flush(rim_lanes);
                rim_lanes = 0;
            }
        }
    };
    rims(rb, a);
    if (a < b) bases(idx[0], idx[1], idx[2], idx[3]);
    for (int32 c = a; c < b; c += kDeferLanes) {
        const int32 ce = b - c < kDeferLanes ? b : c + kDeferLanes;
        WEFT_IVDEP for (int32 j = c; j < ce; ++j) WEFT_DEFER_CALL(known, ND, j - c);
        flush(ce - c, 0, ce - c, c);
    }
    rims(b, re);
}

template <int ND, typename Body, typename Known, typename Clip, typename Bases, typename Flush, typename RimFlush>
inline void run_range_chunked_split(const Grid& g, int64 begin, int64 end, Body body, Known known, Clip clip,
                                    Bases bases, Flush flush, RimFlush rim_flush) {
    int32 rim_lanes = 0;
    if constexpr (ND <= 1) {
        const int32 idx[4] = {0, 0, 0, 0};
        run_chunked_split_row<ND>(idx, 0, int32(begin), int32(end), body, known, clip, bases, flush, rim_flush,
                                  rim_lanes);
    } else {
        const int64 inner = g.dim[ND - 1];
        int64 flat = begin;
        while (flat < end) {
            const RowSpan rs = row_span(g, ND, inner, flat, end);
            const int32 idx[4] = {rs.idx[0], rs.idx[1], rs.idx[2], rs.idx[3]};
            run_chunked_split_row<ND>(idx, rs.base, int32(rs.j0), int32(rs.jend), body, known, clip, bases, flush,
                                      rim_flush, rim_lanes);
            flat += rs.jend - rs.j0;
        }
    }
    if (rim_lanes > 0) rim_flush(rim_lanes);
}

// One piece [b, e) of a deferred-form backward launch (see run_grid_deferred); sp: the thread's spill buffers in
// ownership mode (null otherwise). Not inlined: the serial path and the threads share this one copy of the body.
template <int ND, typename Defer, typename Spill, typename A, typename Body, typename Flush>
__attribute__((noinline)) void run_deferred_piece(const Grid& g, const A& args, int64 b, int64 e, Spill* sp,
                                                  Body& body, Flush& flush) {
    const A a = args;  // a copy whose address never escapes: scalars and shapes stay in registers across stores
    Defer d;
    run_range_chunked<ND>(
        g, b, e,
        [&a, &d, &body](int32 i0, int32 i1, int32 i2, int32 i3, int64 flat, int32 lane) WEFT_INLINE_LAMBDA {
            body(a, d, i0, i1, i2, i3, flat, lane);
        },
        [&a, &d, &flush, sp, b, e](int32 n, int32 ka, int32 kb, int32 col) { flush(a, d, n, sp, b, e, ka, kb, col); });
}

// run_deferred_piece for a guard-split backward (run_range_chunked_split). NoPre: the piece is compiled without
// GCC's partial redundancy elimination, for lane bodies that load an array at neighbouring points of the row
// (u[i, j] and u[i, j + 1]): PRE carries the one point's load over to the next as a loop-carried value, which keeps
// the lane loop scalar. Other bodies keep PRE (without it, the masked gradient store of a vec2 element kept
// split_spectra's loop scalar).
template <int ND, typename Defer, typename Spill, typename A, typename Body, typename Known, typename Clip,
          typename Bases, typename Flush>
__attribute__((always_inline)) inline void deferred_piece_split(const Grid& g, const A& args, int64 b, int64 e,
                                                               Spill* sp, Body& body, Known& known, Clip& clip,
                                                               Bases& bases, Flush& flush) {
    const A a = args;  // a copy whose address never escapes: scalars and shapes stay in registers across stores
    Defer d, rims;  // the interval's chunks, the rims' (run_chunked_split_row)
    run_range_chunked_split<ND>(
        g, b, e,
        [&a, &rims, &body](int32 i0, int32 i1, int32 i2, int32 i3, int64 flat, int32 lane) WEFT_INLINE_LAMBDA {
            body(a, rims, i0, i1, i2, i3, flat, lane);
        },
        [&a, &d, &known](int32 i0, int32 i1, int32 i2, int32 i3, int64 flat, int32 lane) WEFT_INLINE_LAMBDA {
            known(a, d, i0, i1, i2, i3, flat, lane);
        },
        [&a, &clip](int32 i0, int32 i1, int32 i2, int32 i3, int64 flat, int64& lo, int64& hi) {
            clip(a, i0, i1, i2, i3, flat, lo, hi);
        },
        [&a, &d, &bases](int32 i0, int32 i1, int32 i2, int32 i3) { bases(a, d, i0, i1, i2, i3); },
        [&a, &d, &flush, sp, b, e](int32 n, int32 ka, int32 kb, int32 col) { flush(a, d, n, sp, b, e, ka, kb, col); },
        [&a, &rims, &flush, sp, b, e](int32 n) { flush(a, rims, n, sp, b, e, 0, 0, 0); });
}
template <int ND, typename Defer, typename Spill, typename A, typename Body, typename Known, typename Clip,
          typename Bases, typename Flush>
__attribute__((noinline)) void run_deferred_piece_split(const Grid& g, const A& args, int64 b, int64 e, Spill* sp,
                                                        Body& body, Known& known, Clip& clip, Bases& bases,
                                                        Flush& flush) {
    deferred_piece_split<ND, Defer>(g, args, b, e, sp, body, known, clip, bases, flush);
}
template <int ND, typename Defer, typename Spill, typename A, typename Body, typename Known, typename Clip,
          typename Bases, typename Flush>
__attribute__((noinline, optimize("no-tree-pre"))) void run_deferred_piece_split_nopre(
    const Grid& g, const A& args, int64 b, int64 e, Spill* sp, Body& body, Known& known, Clip& clip, Bases& bases,
    Flush& flush) {
    deferred_piece_split<ND, Defer>(g, args, b, e, sp, body, known, clip, bases, flush);
}

// run_grid_private for a backward body in deferred form: body(args, defer, i0, i1, i2, i3, flat, lane) and
// flush(args, defer, n, spill, begin, end), with one Defer (the kernel's lane buffers) per thread. The launch must
// have passed deferred_launch_ok.
// Several threads, owned (every gradient the sweep adds into passed owned_layout, and gradients that share memory
// are the same range): a thread adds in place into the gradient elements of the grid points of the piece it is
// running (no other thread adds there meanwhile) and keeps its other adds (a stencil's neighbours across a piece
// boundary, a gather's far sources) in its Spill buffers, applied by apply(args, spill) once every
// thread is done (on one thread, in thread order). No per-thread gradient copies to zero and sum. Otherwise the gradients in priv[0..npriv) are
// privatised per thread as in run_grid_private and the rest use atomics.
template <int ND, typename Spill, typename A, typename Piece, typename Apply>
inline void run_grid_deferred_with(const int64* dims, int32 ndim, int32 threads, const A& args, const PrivateGrad* priv,
                                   int npriv, bool owned, Piece&& piece, Apply&& apply) {
    const Grid g = make_grid(dims, ndim);
    const int64 total = grid_total(dims, ndim);
    if (total <= 0) return;
    if (threads <= 1) {
        SerialScope serial;
        piece(g, args, 0, total, static_cast<Spill*>(nullptr));
        return;
    }
    GridSlice slices[kMaxGridThreads];
    if (owned) {
        // two pieces per thread: every piece boundary spills a stencil's neighbour rows
        make_slices(total, threads, slices, (total + 2 * threads - 1) / (2 * threads));
        Spill* spills[kMaxGridThreads] = {};
#pragma omp parallel num_threads(threads)
        {
            const int t = omp_get_thread_num();
            Spill sp;
            spills[t] = &sp;
            run_slices(slices, threads, t,
                       [&](int64 b, int64 e) { piece(g, args, b, e, &sp); });
#pragma omp barrier
            // the spills of every thread, in thread order, on one thread with plain adds (few: piece boundaries)
            if (t == 0) {
                for (int k = 0; k < threads; ++k)
                    if (spills[k]) apply(args, *spills[k]);
            }
#pragma omp barrier
        }
        return;
    }
    make_slices(total, threads, slices);
    with_private_grads(threads, args, priv, npriv, [&](const A& mine, int t) {
        run_slices(slices, threads, t,
                   [&](int64 b, int64 e) { piece(g, mine, b, e, static_cast<Spill*>(nullptr)); });
    });
}

template <int ND, typename Defer, typename Spill, typename A, typename Body, typename Flush, typename Apply>
inline void run_grid_deferred(const int64* dims, int32 ndim, int32 threads, const A& args, const PrivateGrad* priv,
                              int npriv, bool owned, Body&& body, Flush&& flush, Apply&& apply) {
    run_grid_deferred_with<ND, Spill>(
        dims, ndim, threads, args, priv, npriv, owned,
        [&](const Grid& g, const A& a, int64 b, int64 e, Spill* sp) {
            run_deferred_piece<ND, Defer, Spill>(g, a, b, e, sp, body, flush);
        },
        apply);
}

// run_grid_deferred for a guard-split backward: known(args, defer, i0, i1, i2, i3, flat, lane) is the body with the
// guard plan folded, clip(args, i0, i1, i2, i3, flat, lo, hi) the plan's row interval, bases(args, defer, i0, i1, i2,
// i3) the row-affine sites' offsets (see run_chunked_split_row); NoPre: see run_deferred_piece_split.
template <int ND, bool NoPre, typename Defer, typename Spill, typename A, typename Body, typename Known,
          typename Clip, typename Bases, typename Flush, typename Apply>
inline void run_grid_deferred_split(const int64* dims, int32 ndim, int32 threads, const A& args,
                                    const PrivateGrad* priv, int npriv, bool owned, Body&& body, Known&& known,
                                    Clip&& clip, Bases&& bases, Flush&& flush, Apply&& apply) {
    run_grid_deferred_with<ND, Spill>(
        dims, ndim, threads, args, priv, npriv, owned,
        [&](const Grid& g, const A& a, int64 b, int64 e, Spill* sp) {
            if constexpr (NoPre)
                run_deferred_piece_split_nopre<ND, Defer, Spill>(g, a, b, e, sp, body, known, clip, bases, flush);
            else
                run_deferred_piece_split<ND, Defer, Spill>(g, a, b, e, sp, body, known, clip, bases, flush);
        },
        apply);
}
#endif

}  // namespace weft
