// weft native: tile reductions and scans (included at the end of tile.h). Each forward function sits directly above
// its adjoint, with tile.h's conventions.
//
// Partial blocks: element i of a tile belongs to lane i % block_dim (Warp's register layout). In a last block that
// the launch size does not fill, a reduction or a scan leaves out the elements of the lanes the block lacks, as
// Warp's blocks do; their adjoints get nothing. The renderers pass the block's running lanes (Lanes) to every op whose
// record says ``owner_lanes``; a default Lanes is a full block.
#pragma once
#include "tile.h"

namespace weft {

struct Lanes {
    int32 running = 0;
    int32 block_dim = 0;
    WEFT_FN bool full() const { return running >= block_dim; }
    WEFT_FN bool owns(int i) const { return running >= block_dim || i % block_dim < running; }
};

namespace tiles {
// The identity of a reduction operator (ops.registry.Identity): 1 zero, 2 one, 3 the highest value (+inf for
// floating types), 4 the lowest (-inf).
template <typename T>
WEFT_FN T reduce_identity(int kind) {
    if (kind == 2) return T(1);
    if constexpr (detail::is_float_<T>::value) {
        if (kind == 3) return T(INFINITY);
        if (kind == 4) return T(-INFINITY);
    } else if constexpr (detail::is_int_<T>::value) {
        constexpr bool is_signed = T(-1) < T(0);
        constexpr T hi = is_signed ? T(~(T(1) << (sizeof(T) * 8 - 1))) : T(~T(0));
        if (kind == 3) return hi;
        if (kind == 4) return is_signed ? T(-hi - 1) : T(0);
    }
    return T{};
}

// Elements of a sum added in order before the halves of a longer run are summed separately (pairwise summation:
// the rounding error grows with log2(n / kSumRun) instead of n).
constexpr int kSumRun = 32;

// The sum of the owned elements x[base + j * step], j in [lo, hi), with the element type's add, from the first owned
// one on (struct fields that do not add up carry that element's); false when none is owned.
template <typename T>
WEFT_FN bool sum_run(const T* x, int base, int step, int lo, int hi, Lanes ln, T& s) {
    if (hi - lo > kSumRun) {
        const int mid = lo + (hi - lo) / 2;
        T b{};
        const bool ga = sum_run(x, base, step, lo, mid, ln, s);
        const bool gb = sum_run(x, base, step, mid, hi, ln, b);
        if (ga && gb) s = add(s, b);
        else if (gb) s = b;
        return ga || gb;
    }
    if (ln.full()) {  // every element: added in order
        if (hi <= lo) return false;
        s = x[base + lo * step];
        for (int j = lo + 1; j < hi; ++j) s = add(s, x[base + j * step]);
        return true;
    }
    bool got = false;
    for (int j = lo; j < hi; ++j) {
        const int i = base + j * step;
        if (!ln.owns(i)) continue;
        s = got ? add(s, x[i]) : x[i];
        got = true;
    }
    return got;
}
}  // namespace tiles

// ---------------------------------------------------------------------------------------------- reductions
template <typename T, int... D>
WEFT_FN void tile_sum(tile_t<T, 1>& out, const tile_t<T, D...>& t, Lanes ln = {}) {
    T s{};
    tiles::sum_run(t.data, 0, 1, 0, tile_t<T, D...>::size, ln, s);
    out.data[0] = s;
}
template <typename T, int... D>
WEFT_FN void adj_tile_sum(tile_t<T, D...>& adj_t, const tile_t<T, 1>& adj_out, Lanes ln = {}) {
    if (ln.full()) {
        for (int i = 0; i < tile_t<T, D...>::size; ++i) adj_t.data[i] += adj_out.data[0];
        return;
    }
    for (int i = 0; i < tile_t<T, D...>::size; ++i)
        if (ln.owns(i)) adj_t.data[i] += adj_out.data[0];
}

// tile_sum(t, axis=AX): element o of the result sums the slice of t along AX (the other coordinates o's); a slice
// without an owned element sums to zero.
namespace tiles {
template <int AX, int... D>
WEFT_FN constexpr int inner_extent() {
    constexpr int v[sizeof...(D)] = {D...};
    int p = 1;
    for (int d = AX + 1; d < int(sizeof...(D)); ++d) p *= v[d];
    return p;
}
template <int AX, int... D>
struct axis_slices {
    static constexpr int v[sizeof...(D)] = {D...};
    static constexpr int n = v[AX];
    static constexpr int inner = inner_extent<AX, D...>();
    static constexpr int count = (1 * ... * D) / n;
    WEFT_FN static int base(int o) { return (o / inner) * (n * inner) + o % inner; }
};
}  // namespace tiles
template <int AX, typename T, int... DO, int... D>
WEFT_FN void tile_sum_axis(tile_t<T, DO...>& out, const tile_t<T, D...>& t, Lanes ln = {}) {
    typedef tiles::axis_slices<AX, D...> S;
    for (int o = 0; o < S::count; ++o) {
        T s{};
        tiles::sum_run(t.data, S::base(o), S::inner, 0, S::n, ln, s);
        out.data[o] = s;
    }
}
template <int AX, typename T, int... DO, int... D>
WEFT_FN void adj_tile_sum_axis(tile_t<T, D...>& adj_t, const tile_t<T, DO...>& adj_out, Lanes ln = {}) {
    typedef tiles::axis_slices<AX, D...> S;
    for (int o = 0; o < S::count; ++o)
        for (int j = 0; j < S::n; ++j) {
            const int i = S::base(o) + j * S::inner;
            if (ln.owns(i)) adj_t.data[i] += adj_out.data[o];
        }
}

// The first index of the smallest (MAX: largest) owned element (element 0 is always owned: a block runs a lane).
template <bool MAX, typename T, int... D>
WEFT_FN int tile_extreme_index(const tile_t<T, D...>& t, Lanes ln) {
    int k = 0;
    for (int i = 1; i < tile_t<T, D...>::size; ++i)
        if (ln.owns(i) && (MAX ? t.data[k] < t.data[i] : t.data[i] < t.data[k])) k = i;
    return k;
}
template <typename T, int... D>
WEFT_FN int tile_argmin_index(const tile_t<T, D...>& t, Lanes ln = {}) { return tile_extreme_index<false>(t, ln); }
template <typename T, int... D>
WEFT_FN int tile_argmax_index(const tile_t<T, D...>& t, Lanes ln = {}) { return tile_extreme_index<true>(t, ln); }
template <typename T, int... D>
WEFT_FN void tile_min(tile_t<T, 1>& out, const tile_t<T, D...>& t, Lanes ln = {}) {
    out.data[0] = t.data[tile_argmin_index(t, ln)];
}
template <typename T, int... D>
WEFT_FN void adj_tile_min(const tile_t<T, D...>& t, tile_t<T, D...>& adj_t, const tile_t<T, 1>& adj_out,
                          Lanes ln = {}) {
    adj_t.data[tile_argmin_index(t, ln)] += adj_out.data[0];
}
template <typename T, int... D>
WEFT_FN void tile_max(tile_t<T, 1>& out, const tile_t<T, D...>& t, Lanes ln = {}) {
    out.data[0] = t.data[tile_argmax_index(t, ln)];
}
template <typename T, int... D>
WEFT_FN void adj_tile_max(const tile_t<T, D...>& t, tile_t<T, D...>& adj_t, const tile_t<T, 1>& adj_out,
                          Lanes ln = {}) {
    adj_t.data[tile_argmax_index(t, ln)] += adj_out.data[0];
}
template <typename T, int... D>
WEFT_FN void tile_argmin(tile_t<int32, 1>& out, const tile_t<T, D...>& t, Lanes ln = {}) {
    out.data[0] = tile_argmin_index(t, ln);
}
template <typename T, int... D>
WEFT_FN void tile_argmax(tile_t<int32, 1>& out, const tile_t<T, D...>& t, Lanes ln = {}) {
    out.data[0] = tile_argmax_index(t, ln);
}

// A slice of tile_reduce(f, t, axis) without an owned element: the operator's identity (tiles::reduce_identity), or,
// for an operator without one, an error the launch raises (and the type's zero).
template <typename T>
WEFT_FN T empty_reduction(int identity, const char* kernel) {
    if (identity) return tiles::reduce_identity<T>(identity);
    char buf[320];
    MessageText m(buf, int(sizeof(buf)));
    m.put("tile_reduce() in kernel '").put(kernel).put("': a slice along the axis has no element of a running lane ");
    m.put("(a last, partial block) and the reduction operator has no declared identity (wp.add, wp.mul, wp.min and ");
    m.put("wp.max have one)");
    report_error(2, buf);
    return T{};
}

// ---------------------------------------------------------------------------------------------- scans
// Prefix scans over the row-major sequence of a tile. M: 0 inclusive sum, 1 exclusive sum, 2 inclusive maximum,
// 3 inclusive minimum (C fmax / fmin: a NaN element is skipped; NaN only while every element so far is NaN). An element
// a partial block leaves out adds nothing; its output holds the scan of the elements before it.
namespace tiles {
template <int M, typename T>
WEFT_FN bool scan_takes(const T& acc, const T& x) {  // whether the running max / min becomes x
    if (x != x) return false;
    if (acc != acc) return true;
    return M == 2 ? acc < x : x < acc;
}
}  // namespace tiles
template <int M, typename T, int... D>
WEFT_FN void tile_scan(tile_t<T, D...>& out, const tile_t<T, D...>& a, Lanes ln) {
    constexpr int n = tile_t<T, D...>::size;
    if constexpr (M <= 1) {
        T acc = T(0);
        for (int i = 0; i < n; ++i) {
            const T x = ln.owns(i) ? a.data[i] : T(0);
            out.data[i] = M == 0 ? T(acc + x) : acc;
            acc = T(acc + x);
        }
    } else {
        T acc = a.data[0];
        for (int i = 0; i < n; ++i) {
            if (ln.owns(i) && tiles::scan_takes<M>(acc, a.data[i])) acc = a.data[i];
            out.data[i] = acc;
        }
    }
}
// sums: adj_a[i] += the sum of adj_out over the outputs element i enters; max / min: each output's adjoint goes to
// the element it selected
template <int M, typename T, int... D>
WEFT_FN void adj_tile_scan(const tile_t<T, D...>& a, tile_t<T, D...>& adj_a, const tile_t<T, D...>& adj_out, Lanes ln) {
    constexpr int n = tile_t<T, D...>::size;
    if constexpr (M <= 1) {
        T acc = T(0);
        for (int i = n - 1; i >= 0; --i) {
            if (M == 0) acc += adj_out.data[i];
            if (ln.owns(i)) adj_a.data[i] += acc;
            if (M == 1) acc += adj_out.data[i];
        }
    } else {
        int k = 0;
        for (int i = 0; i < n; ++i) {
            if (ln.owns(i) && tiles::scan_takes<M>(a.data[k], a.data[i])) k = i;
            adj_a.data[k] += adj_out.data[i];
        }
    }
}
#define WEFT_TILE_SCAN(NAME, M)                                                                                 \
    template <typename T, int... D>                                                                             \
    WEFT_FN void NAME(tile_t<T, D...>& out, const tile_t<T, D...>& a, Lanes ln = {}) { tile_scan<M>(out, a, ln); } \
    template <typename T, int... D>                                                                             \
    WEFT_FN void adj_##NAME(const tile_t<T, D...>& a, tile_t<T, D...>& adj_a, const tile_t<T, D...>& adj_out,  \
                            Lanes ln = {}) {                                                                    \
        adj_tile_scan<M>(a, adj_a, adj_out, ln);                                                                \
    }
WEFT_TILE_SCAN(tile_scan_inclusive, 0)
WEFT_TILE_SCAN(tile_scan_exclusive, 1)
WEFT_TILE_SCAN(tile_scan_max_inclusive, 2)
WEFT_TILE_SCAN(tile_scan_min_inclusive, 3)
#undef WEFT_TILE_SCAN

}  // namespace weft
