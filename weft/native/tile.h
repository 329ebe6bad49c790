// weft native: tiles. A tile is a block-wide value with a compile-time shape, stored row-major.
//
// Execution model (CPU): one block runs on one CPU thread; every function here acts on whole tiles (a
// collective operation done by one thread). Per-lane code around them is run by the generated kernel in a loop
// over the lanes, so results equal a GPU with the same block_dim. Each forward function sits directly above
// its adjoint (adj_*), which takes the forward inputs, then adjoints of the inputs (accumulated with +=), then
// the adjoint of the result.
//
// Out-of-bounds semantics (as Warp): tile_load reads zeros outside the array, tile_store / tile_atomic_add
// skip elements outside it.
#pragma once
#include "core.h"
#include "scalar.h"
#include "vec.h"
#include "mat.h"
#include "array.h"
#include "atomic.h"
#include "launch.h"
#include "random.h"

namespace weft {

template <typename T, int... D>
struct tile_t {
    static constexpr int ndim = int(sizeof...(D));
    static constexpr int size = (1 * ... * D);
    T data[size];

    WEFT_FN T& operator[](int i) { return data[i]; }
    WEFT_FN const T& operator[](int i) const { return data[i]; }
};

// weft::fresh(slot): an adjoint slot that the backward body declared without zeroing because this contribution is its
// first and writes it in full (Op.adjoint_store, autodiff/decls.py): the derivative overloads taking it store.
// An element loop writing each element once (tile_map's adjoint: ``fresh(slot).data[k] += g``) stores through it.
template <typename T>
struct FreshElement {
    T& e;
    WEFT_FN void operator+=(const T& v) { e = v; }
};
template <typename T>
struct FreshElements {
    T* p;
    WEFT_FN FreshElement<T> operator[](int i) const { return FreshElement<T>{p[i]}; }
};
template <typename S>
struct Fresh;
template <typename T, int... D>
struct Fresh<tile_t<T, D...>> {
    tile_t<T, D...>& slot;
    FreshElements<T> data;
};
template <typename T, int... D>
WEFT_FN Fresh<tile_t<T, D...>> fresh(tile_t<T, D...>& slot) {
    return Fresh<tile_t<T, D...>>{slot, FreshElements<T>{slot.data}};
}

template <typename T, int... D>
WEFT_FN tile_t<T, D...>& operator+=(tile_t<T, D...>& a, const tile_t<T, D...>& b) {
    for (int i = 0; i < tile_t<T, D...>::size; ++i) a.data[i] += b.data[i];
    return a;
}

namespace tiles {
template <int... D>
struct dims {
    static constexpr int n = int(sizeof...(D));
    static constexpr int v[sizeof...(D)] = {D...};
    static constexpr int size = (1 * ... * D);
    static constexpr int inner = v[sizeof...(D) - 1];
    static constexpr int outer = size / inner;
};

// Byte offset of the row ``r`` (all dimensions but the last) of a tile placed at ``off`` inside ``a``; false
// when the row lies outside the array.
template <int... D, typename T>
WEFT_FN bool row_offset(const array_t<T>& a, const int64* off, int r, int64& byte) {
    typedef dims<D...> S;
    byte = 0;
    bool ok = a.data != nullptr;
    for (int d = S::n - 2; d >= 0; --d) {
        const int64 i = off[d] + r % S::v[d];
        r /= S::v[d];
        ok = ok && i >= 0 && i < a.shape[d];
        byte += i * a.strides[d];
    }
    return ok;
}

template <typename T>
WEFT_FN T zero_of() { return T(); }

// The scalar a row of T is made of: a vector's components are its scalar laid out contiguously.
template <typename T> struct row_scalar { typedef T type; static constexpr int n = 1; };
template <unsigned N, typename S> struct row_scalar<vec_t<N, S>> { typedef S type; static constexpr int n = int(N); };

template <int M, typename S>
WEFT_FN void add_scalars(S* __restrict__ dst, const S* __restrict__ src) {
    for (int j = 0; j < M; ++j) dst[j] += src[j];
}
// dst[j] += src[j] over one tile row; a tile (on the stack) never overlaps an array or its gradient, and restrict
// on parameters (not on locals, which g++ ignores) lets the row vectorise. Rows of vectors add as rows of their
// scalars (measured: g++ left a row of vec2f scalar, a third of a column-FFT backward)
template <int N, typename T>
WEFT_FN void row_add(T* __restrict__ dst, const T* __restrict__ src) {
    typedef typename row_scalar<T>::type S;
    static_assert(sizeof(T) == sizeof(S) * row_scalar<T>::n, "row_add: a vector row is its scalars");
    add_scalars<N * row_scalar<T>::n>(reinterpret_cast<S*>(dst), reinterpret_cast<const S*>(src));
}
}  // namespace tiles

// ---------------------------------------------------------------------------------------------- load / store
namespace tiles {
// The rows of a tile load / store that lie partly outside the array (edge tiles) out of line and optimised for size
// on the CPU: vectorising their element-wise bounds checks cost more compile time than it saves (a 16 x 16 vec2f
// tile transpose kernel: 0.38-0.42 -> 0.32-0.36 s of g++, 5 alternating compiles without the precompiled header)
#if WEFT_CUDA
#define WEFT_FN_COLD WEFT_FN
#else
#define WEFT_FN_COLD __attribute__((noinline, cold))
#endif
template <typename T, int W>
WEFT_FN_COLD void load_row_slow(T* row, const array_t<T>& a, int64 byte, int64 j0, int64 n, int64 st) {
    for (int j = 0; j < W; ++j) {
        const int64 jj = j0 + j;
        row[j] = (jj >= 0 && jj < n) ? *detail::at(a.data, byte + jj * st) : T();
    }
}
template <typename T, int W>
WEFT_FN_COLD void store_row_slow(const T* row, const array_t<T>& a, int64 byte, int64 j0, int64 n, int64 st) {
    for (int j = 0; j < W; ++j) {
        const int64 jj = j0 + j;
        if (jj >= 0 && jj < n) *detail::at(a.data, byte + jj * st) = row[j];
    }
}
}  // namespace tiles
template <typename T, int... D, typename... I>
WEFT_FN void tile_load(tile_t<T, D...>& t, const array_t<T>& a, I... offset) {
    typedef tiles::dims<D...> S;
    static_assert(sizeof...(I) == sizeof...(D), "tile_load: one offset per dimension");
    const int64 off[S::n] = {int64(offset)...};
    const int64 j0 = off[S::n - 1];
    const int64 n = a.shape[S::n - 1];
    const int64 st = a.strides[S::n - 1];
    for (int r = 0; r < S::outer; ++r) {
        T* row = t.data + r * S::inner;
        int64 byte;
        if (!tiles::row_offset<D...>(a, off, r, byte)) {
            for (int j = 0; j < S::inner; ++j) row[j] = T();
        } else if (j0 >= 0 && j0 + S::inner <= n) {
            if (st == int64(sizeof(T))) {
                const T* src = detail::at(a.data, byte + j0 * st);
                for (int j = 0; j < S::inner; ++j) row[j] = src[j];
            } else {
                for (int j = 0; j < S::inner; ++j) row[j] = *detail::at(a.data, byte + (j0 + j) * st);
            }
        } else {
            tiles::load_row_slow<T, S::inner>(row, a, byte, j0, n, st);
        }
    }
}
// The gradient of every loaded in-bounds element is scatter-added into the array's gradient: plain adds when the
// backward entry gave this launch the gradient to itself (kGradPlain: one thread, or a per-thread copy), atomics
// otherwise.
template <typename T, int... D, typename... I>
WEFT_FN void adj_tile_load(const array_t<T>& a, const tile_t<T, D...>& adj_t, I... offset) {
    typedef tiles::dims<D...> S;
    if (!a.grad) return;
    const int64 off[S::n] = {int64(offset)...};
    const int64 j0 = off[S::n - 1];
    const int64 n = a.shape[S::n - 1];
    const int64 st = a.strides[S::n - 1];
    array_t<T> g = a;
    g.data = a.grad;
    const bool plain = a.flags & kGradPlain;
    for (int r = 0; r < S::outer; ++r) {
        int64 byte;
        if (!tiles::row_offset<D...>(g, off, r, byte)) continue;
        const T* src = adj_t.data + r * S::inner;
        if (plain && j0 >= 0 && j0 + S::inner <= n && st == int64(sizeof(T))) {
            tiles::row_add<S::inner>(detail::at(a.grad, byte + j0 * st), src);
            continue;
        }
        for (int j = 0; j < S::inner; ++j) {
            const int64 jj = j0 + j;
            if (jj < 0 || jj >= n) continue;
            T* dst = detail::at(a.grad, byte + jj * st);
            if (plain)
                *dst += src[j];
            else
                atom::fetch_add(dst, src[j]);
        }
    }
}

template <typename T, int... D, typename... I>
WEFT_FN void tile_store(const array_t<T>& a, const tile_t<T, D...>& t, I... offset) {
    typedef tiles::dims<D...> S;
    static_assert(sizeof...(I) == sizeof...(D), "tile_store: one offset per dimension");
    const int64 off[S::n] = {int64(offset)...};
    const int64 j0 = off[S::n - 1];
    const int64 n = a.shape[S::n - 1];
    const int64 st = a.strides[S::n - 1];
    for (int r = 0; r < S::outer; ++r) {
        const T* row = t.data + r * S::inner;
        int64 byte;
        if (!tiles::row_offset<D...>(a, off, r, byte)) continue;
        if (j0 >= 0 && j0 + S::inner <= n) {
            if (st == int64(sizeof(T))) {
                T* dst = detail::at(a.data, byte + j0 * st);
                for (int j = 0; j < S::inner; ++j) dst[j] = row[j];
            } else {
                for (int j = 0; j < S::inner; ++j) *detail::at(a.data, byte + (j0 + j) * st) = row[j];
            }
        } else {
            tiles::store_row_slow<T, S::inner>(row, a, byte, j0, n, st);
        }
    }
}
// Calls fn(k, g) for every element k of a tile footprint at ``offset`` that lies inside the array, with g the
// address of its gradient (arrays without a gradient: no calls).
template <int... D, typename T, typename Fn>
WEFT_FN void for_each_grad(const array_t<T>& a, const int64* off, Fn&& fn) {
    typedef tiles::dims<D...> S;
    if (!a.grad) return;
    const int64 j0 = off[S::n - 1];
    const int64 n = a.shape[S::n - 1];
    const int64 st = a.strides[S::n - 1];
    array_t<T> g = a;
    g.data = a.grad;
    for (int r = 0; r < S::outer; ++r) {
        int64 byte;
        if (!tiles::row_offset<D...>(g, off, r, byte)) continue;
        for (int j = 0; j < S::inner; ++j) {
            const int64 jj = j0 + j;
            if (jj >= 0 && jj < n) fn(r * S::inner + j, detail::at(a.grad, byte + jj * st));
        }
    }
}
// The stored tile receives the gradient of the elements it wrote; when the array is overwritten on the tape
// (flag bit 1) that gradient is consumed, as for element stores.
template <typename T, int... D, typename... I>
WEFT_FN void adj_tile_store(const array_t<T>& a, tile_t<T, D...>& adj_t, I... offset) {
    typedef tiles::dims<D...> S;
    const int64 off[sizeof...(D)] = {int64(offset)...};
    const bool consume = (a.flags & 2) != 0;
    const int64 j0 = off[S::n - 1];
    if (a.grad && j0 >= 0 && j0 + S::inner <= a.shape[S::n - 1] && a.strides[S::n - 1] == int64(sizeof(T))) {
        // whole contiguous rows (the common case): vector adds, the consume pass separate
        array_t<T> g = a;
        g.data = a.grad;
        for (int r = 0; r < S::outer; ++r) {
            int64 byte;
            if (!tiles::row_offset<D...>(g, off, r, byte)) continue;
            T* gp = detail::at(a.grad, byte + j0 * int64(sizeof(T)));
            tiles::row_add<S::inner>(adj_t.data + r * S::inner, gp);
            if (consume)
                for (int j = 0; j < S::inner; ++j) gp[j] = T();
        }
        return;
    }
    for_each_grad<D...>(a, off, [&](int k, T* gp) {
        adj_t.data[k] += *gp;
        if (consume) *gp = T();
    });
}
// The store form (the slot's first contribution, weft::fresh): rows outside the array, or no gradient, read zero.
template <typename T, int... D, typename... I>
WEFT_FN void adj_tile_store(const array_t<T>& a, Fresh<tile_t<T, D...>> adj_t, I... offset) {
    typedef tiles::dims<D...> S;
    const int64 off[sizeof...(D)] = {int64(offset)...};
    const bool consume = (a.flags & 2) != 0;
    const int64 j0 = off[S::n - 1];
    T* out = adj_t.slot.data;
    if (a.grad && j0 >= 0 && j0 + S::inner <= a.shape[S::n - 1] && a.strides[S::n - 1] == int64(sizeof(T))) {
        array_t<T> g = a;
        g.data = a.grad;
        for (int r = 0; r < S::outer; ++r) {
            int64 byte;
            T* row = out + r * S::inner;
            if (!tiles::row_offset<D...>(g, off, r, byte)) {
                for (int j = 0; j < S::inner; ++j) row[j] = T();
                continue;
            }
            T* gp = detail::at(a.grad, byte + j0 * int64(sizeof(T)));
            for (int j = 0; j < S::inner; ++j) row[j] = gp[j];
            if (consume)
                for (int j = 0; j < S::inner; ++j) gp[j] = T();
        }
        return;
    }
    for (int k = 0; k < S::size; ++k) out[k] = T();
    adj_tile_store(a, adj_t.slot, offset...);
}
// Backward replay: stores only into replay scratch copies (flag bit 0).
template <typename T, int... D, typename... I>
WEFT_FN void replay_tile_store(const array_t<T>& a, const tile_t<T, D...>& t, I... offset) {
    if (a.flags & 1) tile_store(a, t, offset...);
}

// Returns the previous values of the elements (zeros outside the array).
template <typename T, int... D, typename... I>
WEFT_FN void tile_atomic_add(tile_t<T, D...>& old, const array_t<T>& a, const tile_t<T, D...>& t, I... offset) {
    typedef tiles::dims<D...> S;
    const int64 off[S::n] = {int64(offset)...};
    const int64 j0 = off[S::n - 1];
    const int64 n = a.shape[S::n - 1];
    const int64 st = a.strides[S::n - 1];
    for (int r = 0; r < S::outer; ++r) {
        int64 byte;
        const bool ok = tiles::row_offset<D...>(a, off, r, byte);
        for (int j = 0; j < S::inner; ++j) {
            const int64 jj = j0 + j;
            const int k = r * S::inner + j;
            old.data[k] = (ok && jj >= 0 && jj < n) ? atom::fetch_add(detail::at(a.data, byte + jj * st), t.data[k])
                                                    : T();
        }
    }
}
template <typename T, int... D, typename... I>
WEFT_FN void adj_tile_atomic_add(const array_t<T>& a, tile_t<T, D...>& adj_t, I... offset) {
    const int64 off[sizeof...(D)] = {int64(offset)...};
    for_each_grad<D...>(a, off, [&](int k, T* gp) { adj_t.data[k] += *gp; });
}
template <typename T, int... D, typename... I>
WEFT_FN void replay_tile_atomic_add(tile_t<T, D...>& old, const array_t<T>& a, const tile_t<T, D...>& t, I... offset) {
    if (a.flags & 1) tile_atomic_add(old, a, t, offset...);
}

// ---------------------------------------------------------------------------------------------- indexed memory
// tile_load_indexed / tile_store_indexed / tile_atomic_add_indexed: element c of the tile sits in the array at
// off[d] + c[d] along every dimension d but AX, and at off[AX] + idx[c[AX]] along AX. Every coordinate is checked
// against both bounds: outside the array, a load reads zero and a store or add is skipped.
namespace tiles {
template <int AX, int... D, typename T>
WEFT_FN T* indexed_element(const array_t<T>& a, T* base, const int32* idx, const int64* off, int k) {
    typedef dims<D...> S;
    if (base == nullptr) return nullptr;
    int64 byte = 0;
    for (int d = S::n - 1; d >= 0; --d) {
        const int c = k % S::v[d];
        k /= S::v[d];
        const int64 i = off[d] + (d == AX ? int64(idx[c]) : int64(c));
        if (i < 0 || i >= a.shape[d]) return nullptr;
        byte += i * a.strides[d];
    }
    return detail::at(base, byte);
}
}  // namespace tiles

template <int AX, typename T, int... D, int NI, typename... I>
WEFT_FN void tile_load_indexed(tile_t<T, D...>& t, const array_t<T>& a, const tile_t<int32, NI>& idx, I... offset) {
    static_assert(sizeof...(I) == sizeof...(D), "tile_load_indexed: one offset per dimension");
    const int64 off[sizeof...(D)] = {int64(offset)...};
    for (int k = 0; k < tile_t<T, D...>::size; ++k) {
        const T* p = tiles::indexed_element<AX, D...>(a, a.data, idx.data, off, k);
        t.data[k] = p ? *p : T();
    }
}
// The gradient of every gathered element is added at its source (plain adds when the backward entry gave this launch
// the gradient to itself, atomics otherwise; an index may repeat).
template <int AX, typename T, int... D, int NI, typename... I>
WEFT_FN void adj_tile_load_indexed(const array_t<T>& a, const tile_t<int32, NI>& idx, const tile_t<T, D...>& adj_t,
                                   I... offset) {
    const int64 off[sizeof...(D)] = {int64(offset)...};
    const bool plain = a.flags & kGradPlain;
    for (int k = 0; k < tile_t<T, D...>::size; ++k) {
        T* g = tiles::indexed_element<AX, D...>(a, a.grad, idx.data, off, k);
        if (g == nullptr) continue;
        if (plain)
            *g += adj_t.data[k];
        else
            atom::fetch_add(g, adj_t.data[k]);
    }
}

template <int AX, typename T, int... D, int NI, typename... I>
WEFT_FN void tile_store_indexed(const array_t<T>& a, const tile_t<int32, NI>& idx, const tile_t<T, D...>& t,
                                I... offset) {
    const int64 off[sizeof...(D)] = {int64(offset)...};
    for (int k = 0; k < tile_t<T, D...>::size; ++k) {
        T* p = tiles::indexed_element<AX, D...>(a, a.data, idx.data, off, k);
        if (p) *p = t.data[k];
    }
}
// Each stored element receives the gradient of the place it wrote; when the array is overwritten on the tape (flag
// bit 1) that gradient is consumed, as for tile_store.
template <int AX, typename T, int... D, int NI, typename... I>
WEFT_FN void adj_tile_store_indexed(const array_t<T>& a, const tile_t<int32, NI>& idx, tile_t<T, D...>& adj_t,
                                    I... offset) {
    const int64 off[sizeof...(D)] = {int64(offset)...};
    const bool consume = (a.flags & 2) != 0;
    for (int k = 0; k < tile_t<T, D...>::size; ++k) {
        T* g = tiles::indexed_element<AX, D...>(a, a.grad, idx.data, off, k);
        if (g == nullptr) continue;
        adj_t.data[k] += *g;
        if (consume) *g = T();
    }
}
template <int AX, typename T, int... D, int NI, typename... I>
WEFT_FN void replay_tile_store_indexed(const array_t<T>& a, const tile_t<int32, NI>& idx, const tile_t<T, D...>& t,
                                       I... offset) {
    if (a.flags & 1) tile_store_indexed<AX>(a, idx, t, offset...);
}

// Returns the previous values (zeros for elements outside the array).
template <int AX, typename T, int... D, int NI, typename... I>
WEFT_FN void tile_atomic_add_indexed(tile_t<T, D...>& old, const array_t<T>& a, const tile_t<int32, NI>& idx,
                                     const tile_t<T, D...>& t, I... offset) {
    const int64 off[sizeof...(D)] = {int64(offset)...};
    for (int k = 0; k < tile_t<T, D...>::size; ++k) {
        T* p = tiles::indexed_element<AX, D...>(a, a.data, idx.data, off, k);
        old.data[k] = p ? atom::fetch_add(p, t.data[k]) : T();
    }
}
template <int AX, typename T, int... D, int NI, typename... I>
WEFT_FN void adj_tile_atomic_add_indexed(const array_t<T>& a, const tile_t<int32, NI>& idx, tile_t<T, D...>& adj_t,
                                         I... offset) {
    const int64 off[sizeof...(D)] = {int64(offset)...};
    for (int k = 0; k < tile_t<T, D...>::size; ++k) {
        const T* g = tiles::indexed_element<AX, D...>(a, a.grad, idx.data, off, k);
        if (g) adj_t.data[k] += *g;
    }
}
template <int AX, typename T, int... D, int NI, typename... I>
WEFT_FN void replay_tile_atomic_add_indexed(tile_t<T, D...>& old, const array_t<T>& a, const tile_t<int32, NI>& idx,
                                            const tile_t<T, D...>& t, I... offset) {
    if (a.flags & 1) tile_atomic_add_indexed<AX>(old, a, idx, t, offset...);
}

// ---------------------------------------------------------------------------------------------- construction
template <typename T, int... D, typename V>
WEFT_FN void tile_fill(tile_t<T, D...>& t, const V& value) {
    for (int i = 0; i < tile_t<T, D...>::size; ++i) t.data[i] = T(value);
}
// tile_zeros: value-initialised elements (zeros; also for structs, which have no conversion from 0)
template <typename T, int... D>
WEFT_FN void tile_zero(tile_t<T, D...>& t) {
    for (int i = 0; i < tile_t<T, D...>::size; ++i) t.data[i] = T();
}
template <typename T, int... D, typename V>
WEFT_FN void adj_tile_fill(const V&, V& adj_value, const tile_t<T, D...>& adj_t) {
    for (int i = 0; i < tile_t<T, D...>::size; ++i) adj_value += V(adj_t.data[i]);
}

template <typename T, int N>
WEFT_FN void tile_arange(tile_t<T, N>& t, T start, T step) {
    for (int i = 0; i < N; ++i) t.data[i] = T(start + T(i) * step);
}

// tile_randi / tile_randf(shape, rng[, lo, hi]): element k is drawn by lane k % BD from its own stream
// rand_pcg(lane + rng), its (k / BD + 1)-th draw: Warp's register layout on a GPU, so the values equal a CUDA launch
// with the same block_dim. rng itself is left unchanged.
template <int BD, typename T, int... D, typename Draw>
WEFT_FN void tile_random(tile_t<T, D...>& t, uint32 rng, Draw&& draw) {
    constexpr int size = tile_t<T, D...>::size;
    for (int lane = 0; lane < BD && lane < size; ++lane) {
        uint32 state = rand_pcg(uint32(lane) + rng);
        for (int k = lane; k < size; k += BD) t.data[k] = draw(state);
    }
}
template <int BD, int... D>
WEFT_FN void tile_randi(tile_t<int32, D...>& t, uint32 rng) {
    tile_random<BD>(t, rng, [](uint32& s) { return randi(s); });
}
template <int BD, int... D>
WEFT_FN void tile_randi(tile_t<int32, D...>& t, uint32 rng, int32 lo, int32 hi) {
    tile_random<BD>(t, rng, [=](uint32& s) { return randi(s, lo, hi); });
}
template <int BD, int... D>
WEFT_FN void tile_randf(tile_t<float, D...>& t, uint32 rng) {
    tile_random<BD>(t, rng, [](uint32& s) { return randf(s); });
}
template <int BD, int... D>
WEFT_FN void tile_randf(tile_t<float, D...>& t, uint32 rng, float lo, float hi) {
    tile_random<BD>(t, rng, [=](uint32& s) { return randf(s, lo, hi); });
}

// wp.tile(x): one element per lane; vectors / matrices spread over the leading dimensions unless the type is
// preserved.
template <typename T, int BD>
WEFT_FN void tile_from_lanes(tile_t<T, BD>& t, const T* lanes) {
    for (int l = 0; l < BD; ++l) t.data[l] = lanes[l];
}
template <typename T, int BD>
WEFT_FN void adj_tile_from_lanes(T* adj_lanes, const tile_t<T, BD>& adj_t) {
    for (int l = 0; l < BD; ++l) adj_lanes[l] += adj_t.data[l];
}
template <unsigned N, typename T, int BD>
WEFT_FN void tile_from_lanes(tile_t<T, int(N), BD>& t, const vec_t<N, T>* lanes) {
    for (int l = 0; l < BD; ++l)
        for (unsigned c = 0; c < N; ++c) t.data[c * BD + l] = lanes[l].c[c];
}
template <unsigned N, typename T, int BD>
WEFT_FN void adj_tile_from_lanes(vec_t<N, T>* adj_lanes, const tile_t<T, int(N), BD>& adj_t) {
    for (int l = 0; l < BD; ++l)
        for (unsigned c = 0; c < N; ++c) adj_lanes[l].c[c] += adj_t.data[c * BD + l];
}
template <unsigned R, unsigned C, typename T, int BD>
WEFT_FN void tile_from_lanes(tile_t<T, int(R), int(C), BD>& t, const mat_t<R, C, T>* lanes) {
    for (int l = 0; l < BD; ++l)
        for (unsigned i = 0; i < R; ++i)
            for (unsigned j = 0; j < C; ++j) t.data[(i * C + j) * BD + l] = lanes[l].row[i].c[j];
}
template <unsigned R, unsigned C, typename T, int BD>
WEFT_FN void adj_tile_from_lanes(mat_t<R, C, T>* adj_lanes, const tile_t<T, int(R), int(C), BD>& adj_t) {
    for (int l = 0; l < BD; ++l)
        for (unsigned i = 0; i < R; ++i)
            for (unsigned j = 0; j < C; ++j) adj_lanes[l].row[i].c[j] += adj_t.data[(i * C + j) * BD + l];
}

// wp.untile(t): the lane's element (or the lane's column for tiles with leading dimensions).
template <typename T, int BD>
WEFT_FN T untile(const tile_t<T, BD>& t, int lane) { return t.data[lane]; }
template <typename T, int BD>
WEFT_FN void adj_untile(const tile_t<T, BD>&, int lane, tile_t<T, BD>& adj_t, const T& adj_ret) {
    adj_t.data[lane] += adj_ret;
}
template <typename T, int N, int BD>
WEFT_FN vec_t<unsigned(N), T> untile(const tile_t<T, N, BD>& t, int lane) {
    vec_t<unsigned(N), T> v;
    for (int c = 0; c < N; ++c) v.c[c] = t.data[c * BD + lane];
    return v;
}
template <typename T, int N, int BD>
WEFT_FN void adj_untile(const tile_t<T, N, BD>&, int lane, tile_t<T, N, BD>& adj_t, const vec_t<unsigned(N), T>& adj_ret) {
    for (int c = 0; c < N; ++c) adj_t.data[c * BD + lane] += adj_ret.c[c];
}
template <typename T, int R, int C, int BD>
WEFT_FN mat_t<unsigned(R), unsigned(C), T> untile(const tile_t<T, R, C, BD>& t, int lane) {
    mat_t<unsigned(R), unsigned(C), T> m;
    for (int i = 0; i < R; ++i)
        for (int j = 0; j < C; ++j) m.row[i].c[j] = t.data[(i * C + j) * BD + lane];
    return m;
}
template <typename T, int R, int C, int BD>
WEFT_FN void adj_untile(const tile_t<T, R, C, BD>&, int lane, tile_t<T, R, C, BD>& adj_t,
                        const mat_t<unsigned(R), unsigned(C), T>& adj_ret) {
    for (int i = 0; i < R; ++i)
        for (int j = 0; j < C; ++j) adj_t.data[(i * C + j) * BD + lane] += adj_ret.row[i].c[j];
}

// t[i, j]: one element (row-major flat index computed by the caller's indices); a negative index counts from the
// end of its dimension, as Warp's tile subscripts do (debug mode checks the range before, backend/tiles.py).
template <typename T, int... D, typename... I>
WEFT_FN int tile_flat_index(const tile_t<T, D...>&, I... idx) {
    typedef tiles::dims<D...> S;
    static_assert(sizeof...(I) == sizeof...(D), "tile element access needs one index per dimension");
    const int ids[S::n] = {int(idx)...};
    int k = 0;
    for (int d = 0; d < S::n; ++d) k = k * S::v[d] + (ids[d] < 0 ? ids[d] + S::v[d] : ids[d]);
    return k;
}
template <typename T, int... D, typename... I>
WEFT_FN T tile_extract(const tile_t<T, D...>& t, I... idx) { return t.data[tile_flat_index(t, idx...)]; }
template <typename T, int... D, typename... I>
WEFT_FN void adj_tile_extract(const tile_t<T, D...>& t, tile_t<T, D...>& adj_t, const T& adj_ret, I... idx) {
    adj_t.data[tile_flat_index(t, idx...)] += adj_ret;
}

// Bitwise and / or / xor of integer vectors and matrices, component-wise: the element functions of tile_update's
// &=, |=, ^= and of the element-wise bitwise tile ops on tiles of integer composites (no adjoints: integers).
#define WEFT_TILE_COMPOSITE_BITOP(NAME)                                                              \
    template <unsigned N, typename S>                                                                \
    WEFT_FN vec_t<N, S> NAME(const vec_t<N, S>& a, const vec_t<N, S>& b) {                           \
        vec_t<N, S> r;                                                                               \
        for (unsigned i = 0; i < N; ++i) r.c[i] = NAME(a.c[i], b.c[i]);                              \
        return r;                                                                                    \
    }                                                                                                \
    template <unsigned R, unsigned C, typename S>                                                    \
    WEFT_FN mat_t<R, C, S> NAME(const mat_t<R, C, S>& a, const mat_t<R, C, S>& b) {                  \
        mat_t<R, C, S> r;                                                                            \
        for (unsigned i = 0; i < R; ++i) r.row[i] = NAME(a.row[i], b.row[i]);                        \
        return r;                                                                                    \
    }
WEFT_TILE_COMPOSITE_BITOP(bit_and)
WEFT_TILE_COMPOSITE_BITOP(bit_or)
WEFT_TILE_COMPOSITE_BITOP(bit_xor)
#undef WEFT_TILE_COMPOSITE_BITOP

// t[i, j] = v and its in-place forms t[i, j] += v, -= v, &= v, |= v, ^= v, as one lane does them (the renderers
// apply every lane's update in lane order; several lanes updating one element accumulate, as Warp's atomics do).
// M: 0 set, 1 add, 2 sub, 3 and, 4 or, 5 xor, 6 set unless the first index is negative (a lane of
// wp.tile_scatter_masked without a value) (ops/tile.py TileUpdate).
namespace tiles {
template <typename I0, typename... I>
WEFT_FN int64 first_index(I0 i, I...) { return int64(i); }
}  // namespace tiles
template <int M, typename T, int... D, typename... I>
WEFT_FN void tile_update(tile_t<T, D...>& t, const T& v, I... idx) {
    if constexpr (M == 6) {
        if (tiles::first_index(idx...) < 0) return;
    }
    T& e = t.data[tile_flat_index(t, idx...)];
    if constexpr (M == 0 || M == 6) e = v;
    else if constexpr (M == 1) e = add(e, v);
    else if constexpr (M == 2) e = sub(e, v);
    else if constexpr (M == 3) e = bit_and(e, v);
    else if constexpr (M == 4) e = bit_or(e, v);
    else e = bit_xor(e, v);
}
// Reverse of one lane's update, lanes visited last to first: the value's adjoint reads the element's adjoint; a set
// then clears it (the earlier value was overwritten, and so was any earlier lane's write to that element).
template <int M, typename T, int... D, typename... I>
WEFT_FN void adj_tile_update(tile_t<T, D...>& adj_t, T& adj_v, I... idx) {
    if constexpr (M == 6) {
        if (tiles::first_index(idx...) < 0) return;
    }
    T& g = adj_t.data[tile_flat_index(adj_t, idx...)];
    if constexpr (M == 0 || M == 6) {
        adj_v += g;
        g = T();
    } else if constexpr (M == 1) {
        adj_v += g;
    } else if constexpr (M == 2) {
        adj_v -= g;
    }
}

// tile_assign(dst, src, offset): src (converted to dst's element type) written into dst at offset. Flat index in dst
// of src's element k, or -1 where it falls outside dst.
namespace tiles {
template <typename SS, typename SD>
WEFT_FN int assign_target(int k, const int* off) {
    int dst = 0, mult = 1;
    for (int d = SD::n - 1; d >= 0; --d) {
        const int i = off[d] + k % SS::v[d];
        k /= SS::v[d];
        if (i < 0 || i >= SD::v[d]) return -1;
        dst += i * mult;
        mult *= SD::v[d];
    }
    return dst;
}
}  // namespace tiles
template <typename T, typename S, int... DD, int... DS, typename... I>
WEFT_FN void tile_assign(tile_t<T, DD...>& out, const tile_t<T, DD...>& dst, const tile_t<S, DS...>& src,
                         I... offset) {
    static_assert(sizeof...(DD) == sizeof...(DS) && sizeof...(I) == sizeof...(DD), "tile_assign: one rank");
    const int off[sizeof...(DD)] = {int(offset)...};
    if (&out != &dst) out = dst;
    for (int k = 0; k < tile_t<S, DS...>::size; ++k) {
        const int j = tiles::assign_target<tiles::dims<DS...>, tiles::dims<DD...>>(k, off);
        if (j >= 0) out.data[j] = T(src.data[k]);
    }
}
// The written region's adjoint goes to src and is cleared (those dst values were overwritten); the rest flows to dst.
// The result's adjoint is consumed in place (the rule is its last reader).
template <typename T, typename S, int... DD, int... DS, typename... I>
WEFT_FN void adj_tile_assign(tile_t<T, DD...>& adj_dst, tile_t<S, DS...>& adj_src, tile_t<T, DD...>& adj_out,
                             I... offset) {
    const int off[sizeof...(DD)] = {int(offset)...};
    for (int k = 0; k < tile_t<S, DS...>::size; ++k) {
        const int j = tiles::assign_target<tiles::dims<DS...>, tiles::dims<DD...>>(k, off);
        if (j < 0) continue;
        adj_src.data[k] += S(adj_out.data[j]);
        adj_out.data[j] = T();
    }
    adj_dst += adj_out;
}

// ---------------------------------------------------------------------------------------------- reshaping
namespace tiles {
// Flat index in the source tile (dims SI) of element k of a view (dims SO, aligned with SI's trailing dimensions)
// placed at ``off``; may fall outside the source.
template <typename SO, typename SI>
WEFT_FN int view_source(int k, const int* off) {
    int rem = k, src = 0, mult = 1;
    for (int d = SI::n - 1; d >= 0; --d) {
        const int od = d - (SI::n - SO::n);
        int i = off[d];
        if (od >= 0) {
            i += rem % SO::v[od];
            rem /= SO::v[od];
        }
        src += i * mult;
        mult *= SI::v[d];
    }
    return src;
}
}  // namespace tiles

// A copy of the sub-tile of ``t`` at ``offset`` (one offset per dimension of t); the result's dimensions align
// with t's trailing dimensions (leading dimensions of t that the result drops are indexed by their offset).
template <typename T, int... DO, int... DI, typename... I>
WEFT_FN void tile_view(tile_t<T, DO...>& out, const tile_t<T, DI...>& t, I... offset) {
    typedef tiles::dims<DO...> SO;
    typedef tiles::dims<DI...> SI;
    static_assert(sizeof...(I) == sizeof...(DI), "tile_view: one offset per dimension of the source");
    const int off[SI::n] = {int(offset)...};
    for (int k = 0; k < SO::size; ++k) {
        const int src = tiles::view_source<SO, SI>(k, off);
        out.data[k] = (src >= 0 && src < SI::size) ? t.data[src] : T();
    }
}
template <typename T, int... DO, int... DI, typename... I>
WEFT_FN void adj_tile_view(tile_t<T, DI...>& adj_t, const tile_t<T, DO...>& adj_out, I... offset) {
    typedef tiles::dims<DO...> SO;
    typedef tiles::dims<DI...> SI;
    const int off[SI::n] = {int(offset)...};
    for (int k = 0; k < SO::size; ++k) {
        const int src = tiles::view_source<SO, SI>(k, off);
        if (src >= 0 && src < SI::size) adj_t.data[src] += adj_out.data[k];
    }
}

// t[a:b:c, i, ...]: per source dimension d three ints sl[3d..3d+2] = start, step, count; step 0 marks an integer
// index (negative values count from the end; count 1). Flat index in the source (dims SI) of the slice's element k
// (row-major over the counts), or -1 when an index falls outside the source.
namespace tiles {
template <typename SI>
WEFT_FN int slice_source(int k, const int* sl) {
    int src = 0, mult = 1;
    for (int d = SI::n - 1; d >= 0; --d) {
        int i = sl[3 * d];
        if (sl[3 * d + 1] == 0) {
            if (i < 0) i += SI::v[d];
        } else {
            i += sl[3 * d + 1] * (k % sl[3 * d + 2]);
            k /= sl[3 * d + 2];
        }
        if (i < 0 || i >= SI::v[d]) return -1;
        src += i * mult;
        mult *= SI::v[d];
    }
    return src;
}
}  // namespace tiles
template <typename T, int... DO, int... DI, typename... I>
WEFT_FN void tile_slice(tile_t<T, DO...>& out, const tile_t<T, DI...>& t, I... sl) {
    static_assert(sizeof...(I) == 3 * sizeof...(DI), "tile_slice: start, step, count per source dimension");
    const int s[sizeof...(I)] = {int(sl)...};
    for (int k = 0; k < tile_t<T, DO...>::size; ++k) {
        const int src = tiles::slice_source<tiles::dims<DI...>>(k, s);
        out.data[k] = src >= 0 ? t.data[src] : T();
    }
}
template <typename T, int... DO, int... DI, typename... I>
WEFT_FN void adj_tile_slice(tile_t<T, DI...>& adj_t, const tile_t<T, DO...>& adj_out, I... sl) {
    const int s[sizeof...(I)] = {int(sl)...};
    for (int k = 0; k < tile_t<T, DO...>::size; ++k) {  // distinct k select distinct elements
        const int src = tiles::slice_source<tiles::dims<DI...>>(k, s);
        if (src >= 0) adj_t.data[src] += adj_out.data[k];
    }
}
// t[:, .., idx, ..]: the entries of t along axis `axis` listed by a 1-D index tile (every other axis whole);
// negative indices count from the end, indices outside the axis read zeros.
namespace tiles {
template <int... D>
WEFT_FN void axis_extents(int axis, int& rows, int& inner) {
    const int v[sizeof...(D)] = {D...};
    rows = v[axis];
    inner = 1;
    for (int d = axis + 1; d < int(sizeof...(D)); ++d) inner *= v[d];
}
}  // namespace tiles
template <typename T, int R, int... DO, int... DI>
WEFT_FN void tile_slice_indexed(tile_t<T, DO...>& out, const tile_t<T, DI...>& t, const tile_t<int32_t, R>& idx,
                                int axis) {
    int rows, inner;
    tiles::axis_extents<DI...>(axis, rows, inner);
    for (int k = 0; k < tile_t<T, DO...>::size; ++k) {
        const int c = k % inner, r = (k / inner) % R, outer = k / (inner * R);
        const int i = idx.data[r] < 0 ? idx.data[r] + rows : idx.data[r];
        out.data[k] = (i >= 0 && i < rows) ? t.data[(outer * rows + i) * inner + c] : T();
    }
}
template <typename T, int R, int... DO, int... DI>
WEFT_FN void adj_tile_slice_indexed(const tile_t<int32_t, R>& idx, int axis, tile_t<T, DI...>& adj_t,
                                    const tile_t<T, DO...>& adj_out) {
    int rows, inner;
    tiles::axis_extents<DI...>(axis, rows, inner);
    for (int k = 0; k < tile_t<T, DO...>::size; ++k) {  // repeated indices accumulate
        const int c = k % inner, r = (k / inner) % R, outer = k / (inner * R);
        const int i = idx.data[r] < 0 ? idx.data[r] + rows : idx.data[r];
        if (i >= 0 && i < rows) adj_t.data[(outer * rows + i) * inner + c] += adj_out.data[k];
    }
}
// t[a:b:c, ...] = src: dst with the slice's elements replaced by src's (converted to dst's element type).
template <typename T, typename S, int... DD, int... DS, typename... I>
WEFT_FN void tile_slice_assign(tile_t<T, DD...>& out, const tile_t<T, DD...>& dst, const tile_t<S, DS...>& src,
                               I... sl) {
    static_assert(sizeof...(I) == 3 * sizeof...(DD), "tile_slice_assign: start, step, count per dimension");
    const int s[sizeof...(I)] = {int(sl)...};
    if (&out != &dst) out = dst;
    for (int k = 0; k < tile_t<S, DS...>::size; ++k) {
        const int j = tiles::slice_source<tiles::dims<DD...>>(k, s);
        if (j >= 0) out.data[j] = T(src.data[k]);
    }
}
// The slice's adjoint goes to src and is cleared (overwritten values); the rest flows to dst.
template <typename T, typename S, int... DD, int... DS, typename... I>
WEFT_FN void adj_tile_slice_assign(tile_t<T, DD...>& adj_dst, tile_t<S, DS...>& adj_src, tile_t<T, DD...>& adj_out,
                                   I... sl) {
    const int s[sizeof...(I)] = {int(sl)...};
    for (int k = 0; k < tile_t<S, DS...>::size; ++k) {
        const int j = tiles::slice_source<tiles::dims<DD...>>(k, s);
        if (j < 0) continue;
        adj_src.data[k] += S(adj_out.data[j]);
        adj_out.data[j] = T();
    }
    adj_dst += adj_out;
}

// Transposes walk 8 x 8 blocks, writing along the output's rows: a plain row-by-row walk writes a whole column per
// input row (with AVX-512, as scatters), and when the column stride is a multiple of 4 KiB every element of it maps
// to the same L1 set. For a 512 x 16 tile of vec2f this is 16x faster.
template <typename T, int M, int N, typename F>
WEFT_FN void for_each_transposed(F&& f) {
    constexpr int B = 8;
    for (int i0 = 0; i0 < M; i0 += B)
        for (int j0 = 0; j0 < N; j0 += B) {
            const int i1 = i0 + B < M ? i0 + B : M, j1 = j0 + B < N ? j0 + B : N;
            for (int j = j0; j < j1; ++j)
#if !WEFT_CUDA
#pragma GCC unroll 8
#endif
                for (int i = i0; i < i1; ++i) f(i * N + j, j * M + i);  // contiguous writes
        }
}
template <typename T, int M, int N>
WEFT_FN void tile_transpose(tile_t<T, N, M>& out, const tile_t<T, M, N>& t) {
    for_each_transposed<T, M, N>([&](int src, int dst) { out.data[dst] = t.data[src]; });
}
template <typename T, int M, int N>
WEFT_FN void adj_tile_transpose(tile_t<T, M, N>& adj_t, const tile_t<T, N, M>& adj_out) {
    for_each_transposed<T, M, N>([&](int src, int dst) { adj_t.data[src] += adj_out.data[dst]; });
}
template <typename T, int M, int N>
WEFT_FN void adj_tile_transpose(Fresh<tile_t<T, M, N>> adj_t, const tile_t<T, N, M>& adj_out) {
    for_each_transposed<T, M, N>([&](int src, int dst) { adj_t.slot.data[src] = adj_out.data[dst]; });
}

namespace tiles {
// Flat source index of output element k under NumPy broadcasting (shapes aligned from the right).
template <typename SO, typename SI>
WEFT_FN int broadcast_source(int k) {
    int src = 0, mult = 1;
    for (int d = SO::n - 1; d >= 0; --d) {
        const int i = k % SO::v[d];
        k /= SO::v[d];
        const int sd = d - (SO::n - SI::n);
        if (sd < 0) break;
        if (SI::v[sd] != 1) src += i * mult;
        mult *= SI::v[sd];
    }
    return src;
}
}  // namespace tiles

template <typename T, int... DO, int... DI>
WEFT_FN void tile_broadcast(tile_t<T, DO...>& out, const tile_t<T, DI...>& t) {
    for (int k = 0; k < tile_t<T, DO...>::size; ++k)
        out.data[k] = t.data[tiles::broadcast_source<tiles::dims<DO...>, tiles::dims<DI...>>(k)];
}
template <typename T, int... DO, int... DI>
WEFT_FN void adj_tile_broadcast(tile_t<T, DI...>& adj_t, const tile_t<T, DO...>& adj_out) {
    for (int k = 0; k < tile_t<T, DO...>::size; ++k)
        adj_t.data[tiles::broadcast_source<tiles::dims<DO...>, tiles::dims<DI...>>(k)] += adj_out.data[k];
}

// the same elements in row-major order with another shape (tile_reshape, tile_squeeze)
template <typename T, int... DO, int... DI>
WEFT_FN void tile_reshape(tile_t<T, DO...>& out, const tile_t<T, DI...>& t) {
    for (int k = 0; k < tile_t<T, DO...>::size; ++k) out.data[k] = t.data[k];
}
template <typename T, int... DO, int... DI>
WEFT_FN void adj_tile_reshape(tile_t<T, DI...>& adj_t, const tile_t<T, DO...>& adj_out) {
    for (int k = 0; k < tile_t<T, DO...>::size; ++k) adj_t.data[k] += adj_out.data[k];
}

// ---------------------------------------------------------------------------------------------- element-wise
namespace tiles {
template <typename X>
struct elem {
    WEFT_FN static const X& get(const X& x, int) { return x; }
    WEFT_FN static X& ref(X& x, int) { return x; }
};
template <typename T, int... D>
struct elem<tile_t<T, D...>> {
    WEFT_FN static const T& get(const tile_t<T, D...>& x, int i) { return x.data[i]; }
    WEFT_FN static T& ref(tile_t<T, D...>& x, int i) { return x.data[i]; }
};
template <typename X>
WEFT_FN decltype(auto) at(const X& x, int i) { return elem<X>::get(x, i); }
template <typename X>
WEFT_FN decltype(auto) at_ref(X& x, int i) { return elem<X>::ref(x, i); }
}  // namespace tiles

// out = a OP b where either side may be a scalar (broadcast); element ops are weft's scalar/vector ops.
#define WEFT_TILE_BINARY(NAME)                                                                     \
    template <typename T, int... D, typename A, typename B>                                        \
    WEFT_FN void tile_##NAME(tile_t<T, D...>& out, const A& a, const B& b) {                      \
        for (int i = 0; i < tile_t<T, D...>::size; ++i) out.data[i] = NAME(tiles::at(a, i), tiles::at(b, i)); \
    }                                                                                              \
    template <typename T, int... D, typename A, typename B, typename AA, typename AB>              \
    WEFT_FN void adj_tile_##NAME(const A& a, const B& b, AA& adj_a, AB& adj_b, const tile_t<T, D...>& adj_out) { \
        for (int i = 0; i < tile_t<T, D...>::size; ++i)                                            \
            adj_##NAME(tiles::at(a, i), tiles::at(b, i), tiles::at_ref(adj_a, i), tiles::at_ref(adj_b, i), \
                       adj_out.data[i]);                                                           \
    }
WEFT_TILE_BINARY(add)
WEFT_TILE_BINARY(sub)
WEFT_TILE_BINARY(mul)
WEFT_TILE_BINARY(div)
WEFT_TILE_BINARY(bit_and)
WEFT_TILE_BINARY(bit_or)
WEFT_TILE_BINARY(bit_xor)
#undef WEFT_TILE_BINARY

template <typename T, int... D>
WEFT_FN void tile_neg(tile_t<T, D...>& out, const tile_t<T, D...>& a) {
    for (int i = 0; i < tile_t<T, D...>::size; ++i) out.data[i] = -a.data[i];
}
template <typename T, int... D>
WEFT_FN void adj_tile_neg(tile_t<T, D...>& adj_a, const tile_t<T, D...>& adj_out) {
    for (int i = 0; i < tile_t<T, D...>::size; ++i) adj_a.data[i] -= adj_out.data[i];
}

// ---------------------------------------------------------------------------------------------- print
// print(t): NumPy's nested brackets (elements by print_value, construct.h), then " = tile(shape=(4,3),
// storage=register)" as Warp prints it; once per block.
template <typename T, int... D>
WEFT_FN void tile_print(const tile_t<T, D...>& t, const char* storage) {
    typedef tiles::dims<D...> S;
    for (int d = 0; d < S::n; ++d) printf("[");
    for (int k = 0; k < S::size; ++k) {
        if (k) {
            int closed = 0;  // dimensions (innermost first) whose rows end before element k
            for (int d = S::n - 1, block = 1; d > 0; --d) {
                block *= S::v[d];
                if (k % block != 0) break;
                ++closed;
            }
            if (closed == 0) {
                printf(" ");
            } else {
                for (int c = 0; c < closed; ++c) printf("]");
                for (int c = 0; c < closed; ++c) printf("\n");
                for (int c = 0; c < S::n - closed; ++c) printf(" ");
                for (int c = 0; c < closed; ++c) printf("[");
            }
        }
        print_value(t.data[k]);
    }
    for (int d = 0; d < S::n; ++d) printf("]");
    printf(" = tile(shape=(");
    for (int d = 0; d < S::n; ++d) printf(d ? ",%d" : "%d", S::v[d]);
    printf("), storage=%s)\n", storage);
}

// ---------------------------------------------------------------------------------------------- sort
// keys and values (same size) permuted together into ascending key order (heap sort: in place, not stable, as
// Warp's is not). ``values`` may be the keys tile itself.
template <typename K, typename V, int... DK, int... DV>
WEFT_FN void tile_sort(tile_t<K, DK...>& keys, tile_t<V, DV...>& values, const tile_t<K, DK...>& k0,
                       const tile_t<V, DV...>& v0) {
    constexpr int n = tile_t<K, DK...>::size;
    static_assert(n == tile_t<V, DV...>::size, "tile_sort: keys and values of one size");
    keys = k0;
    values = v0;
    const bool same = static_cast<const void*>(&keys) == static_cast<const void*>(&values);
    auto swap = [&](int i, int j) {
        const K k = keys.data[i];
        keys.data[i] = keys.data[j];
        keys.data[j] = k;
        if (!same) {
            const V v = values.data[i];
            values.data[i] = values.data[j];
            values.data[j] = v;
        }
    };
    auto sift = [&](int root, int end) {
        while (2 * root + 1 < end) {
            int child = 2 * root + 1;
            if (child + 1 < end && keys.data[child] < keys.data[child + 1]) ++child;
            if (!(keys.data[root] < keys.data[child])) return;
            swap(root, child);
            root = child;
        }
    };
    for (int i = n / 2 - 1; i >= 0; --i) sift(i, n);
    for (int end = n - 1; end > 0; --end) {
        swap(0, end);
        sift(0, end);
    }
}

// ---------------------------------------------------------------------------------------------- matmul
namespace tiles {
// RB rows x JB columns of c = alpha * a @ b + beta * c, the accumulators held in vector registers over k.
template <typename T, int K, int N, int RB, int JB>
WEFT_FN void gemm_block(T* __restrict__ c, const T* __restrict__ a, const T* __restrict__ b, T alpha, T beta, int i,
                        int j0) {
    T acc[RB][JB];
    for (int r = 0; r < RB; ++r)
        for (int j = 0; j < JB; ++j) acc[r][j] = T(0);
    for (int k = 0; k < K; ++k) {
        const T* brow = b + k * N + j0;
        for (int r = 0; r < RB; ++r) {
            const T av = a[(i + r) * K + k];
            for (int j = 0; j < JB; ++j) acc[r][j] += av * brow[j];
        }
    }
    for (int r = 0; r < RB; ++r)
        for (int j = 0; j < JB; ++j) {
            T& dst = c[(i + r) * N + j0 + j];
            dst = (beta == T(0) ? T(0) : beta * dst) + alpha * acc[r][j];
        }
}
template <typename T, int K, int N, int RB>
WEFT_FN void gemm_rows(T* c, const T* a, const T* b, T alpha, T beta, int i) {
    constexpr int JB = 32;
    int j0 = 0;
    for (; j0 + JB <= N; j0 += JB) gemm_block<T, K, N, RB, JB>(c, a, b, alpha, beta, i, j0);
    for (; j0 < N; ++j0)  // leftover columns
        for (int r = 0; r < RB; ++r) {
            T sum = T(0);
            for (int k = 0; k < K; ++k) sum += a[(i + r) * K + k] * b[k * N + j0];
            T& dst = c[(i + r) * N + j0];
            dst = (beta == T(0) ? T(0) : beta * dst) + alpha * sum;
        }
}
// c (M x N) = alpha * a (M x K) @ b (K x N) + beta * c: blocks of 8 (then 4, 1) rows by 32 columns.
template <typename T, int M, int K, int N>
WEFT_FN void gemm(T* __restrict__ c, const T* __restrict__ a, const T* __restrict__ b, T alpha, T beta) {
    int i = 0;
    for (; i + 8 <= M; i += 8) gemm_rows<T, K, N, 8>(c, a, b, alpha, beta, i);
    for (; i + 4 <= M; i += 4) gemm_rows<T, K, N, 4>(c, a, b, alpha, beta, i);
    for (; i < M; ++i) gemm_rows<T, K, N, 1>(c, a, b, alpha, beta, i);
}
}  // namespace tiles

template <typename T, int M, int K, int N>
WEFT_FN void tile_matmul(tile_t<T, M, N>& out, const tile_t<T, M, K>& a, const tile_t<T, K, N>& b) {
    tiles::gemm<T, M, K, N>(out.data, a.data, b.data, T(1), T(0));
}
// adj_a += adj_out @ b^T, adj_b += a^T @ adj_out
template <typename T, int M, int K, int N>
WEFT_FN void adj_tile_matmul(const tile_t<T, M, K>& a, const tile_t<T, K, N>& b, tile_t<T, M, K>& adj_a,
                             tile_t<T, K, N>& adj_b, const tile_t<T, M, N>& adj_out) {
    tile_t<T, N, K> bt;
    tile_transpose(bt, b);
    tiles::gemm<T, M, N, K>(adj_a.data, adj_out.data, bt.data, T(1), T(1));
    tile_t<T, K, M> at;
    tile_transpose(at, a);
    tiles::gemm<T, K, M, N>(adj_b.data, at.data, adj_out.data, T(1), T(1));
}
// out = alpha * a @ b + beta * c  (wp.tile_matmul(a, b, out, alpha, beta))
template <typename T, int M, int K, int N>
WEFT_FN void tile_matmul_acc(tile_t<T, M, N>& out, const tile_t<T, M, K>& a, const tile_t<T, K, N>& b,
                             const tile_t<T, M, N>& c, T alpha, T beta) {
    if (&out != &c) out = c;
    tiles::gemm<T, M, K, N>(out.data, a.data, b.data, alpha, beta);
}
template <typename T, int M, int K, int N>
WEFT_FN void adj_tile_matmul_acc(const tile_t<T, M, K>& a, const tile_t<T, K, N>& b, const tile_t<T, M, N>& c,
                                 T alpha, T beta, tile_t<T, M, K>& adj_a, tile_t<T, K, N>& adj_b,
                                 tile_t<T, M, N>& adj_c, T& adj_alpha, T& adj_beta, const tile_t<T, M, N>& adj_out) {
    tile_t<T, N, K> bt;
    tile_transpose(bt, b);
    tiles::gemm<T, M, N, K>(adj_a.data, adj_out.data, bt.data, alpha, T(1));
    tile_t<T, K, M> at;
    tile_transpose(at, a);
    tiles::gemm<T, K, M, N>(adj_b.data, at.data, adj_out.data, alpha, T(1));
    tile_t<T, M, N> ab;
    tiles::gemm<T, M, K, N>(ab.data, a.data, b.data, T(1), T(0));
    for (int i = 0; i < M * N; ++i) {
        adj_c.data[i] += beta * adj_out.data[i];
        adj_alpha += ab.data[i] * adj_out.data[i];
        adj_beta += c.data[i] * adj_out.data[i];
    }
}

// ---------------------------------------------------------------------------------------------- Cholesky
// L (lower triangular, zeros above the diagonal) with A = L L^T; reads the lower triangle of A. A matrix that
// is not positive definite gives NaNs (as a failed factorisation does in Warp).
template <typename T, int N>
WEFT_FN void tile_cholesky(tile_t<T, N, N>& L, const tile_t<T, N, N>& A) {
    for (int i = 0; i < N * N; ++i) L.data[i] = T(0);
    for (int j = 0; j < N; ++j) {
        T d = A.data[j * N + j];
        for (int k = 0; k < j; ++k) d -= L.data[j * N + k] * L.data[j * N + k];
        const T ljj = sqrt(d);
        L.data[j * N + j] = ljj;
        const T inv = T(1) / ljj;
        for (int i = j + 1; i < N; ++i) {
            T s = A.data[i * N + j];
            for (int k = 0; k < j; ++k) s -= L.data[i * N + k] * L.data[j * N + k];
            L.data[i * N + j] = s * inv;
        }
    }
}
namespace tiles {
// x <- L^{-1} x and x <- L^{-T} x for ``cols`` right-hand sides stored row-major (N x cols).
template <typename T, int N>
WEFT_FN void lower_solve(const T* L, T* x, int cols) {
    for (int i = 0; i < N; ++i)
        for (int c = 0; c < cols; ++c) {
            T s = x[i * cols + c];
            for (int k = 0; k < i; ++k) s -= L[i * N + k] * x[k * cols + c];
            x[i * cols + c] = s / L[i * N + i];
        }
}
template <typename T, int N>
WEFT_FN void upper_solve_t(const T* L, T* x, int cols) {
    for (int i = N - 1; i >= 0; --i)
        for (int c = 0; c < cols; ++c) {
            T s = x[i * cols + c];
            for (int k = i + 1; k < N; ++k) s -= L[k * N + i] * x[k * cols + c];
            x[i * cols + c] = s / L[i * N + i];
        }
}
}  // namespace tiles
// Reverse mode through A = L L^T: with P = tril(L^T adj_L) (diagonal halved), S = L^{-T} P L^{-1}; the
// factorisation reads only the lower triangle, so adj_A[i][j] += S[i][j] + S[j][i] below the diagonal and
// S[i][i] on it.
template <typename T, int N>
WEFT_FN void adj_tile_cholesky(const tile_t<T, N, N>& A, tile_t<T, N, N>& adj_A, const tile_t<T, N, N>& adj_L) {
    tile_t<T, N, N> L;
    tile_cholesky(L, A);
    tile_t<T, N, N> P;
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) {
            T s = T(0);
            for (int k = 0; k < N; ++k) s += L.data[k * N + i] * adj_L.data[k * N + j];
            P.data[i * N + j] = j < i ? s : (j == i ? T(0.5) * s : T(0));
        }
    // S = L^{-T} P L^{-1}: first X = L^{-T} P (columns of P), then S = X L^{-1} = (L^{-T} X^T)^T
    tiles::upper_solve_t<T, N>(L.data, P.data, N);
    tile_t<T, N, N> Xt;
    tile_transpose(Xt, P);
    tiles::upper_solve_t<T, N>(L.data, Xt.data, N);
    // Xt now holds S^T
    for (int i = 0; i < N; ++i)
        for (int j = 0; j <= i; ++j) {
            const T sij = Xt.data[j * N + i], sji = Xt.data[i * N + j];
            adj_A.data[i * N + j] += j < i ? sij + sji : sij;
        }
}

namespace tiles {
// x <- U^{-1} x (upper triangle of U read) and x <- U^{-T} x, for ``cols`` right-hand sides stored row-major.
template <typename T, int N>
WEFT_FN void upper_solve(const T* U, T* x, int cols) {
    for (int i = N - 1; i >= 0; --i)
        for (int c = 0; c < cols; ++c) {
            T s = x[i * cols + c];
            for (int k = i + 1; k < N; ++k) s -= U[i * N + k] * x[k * cols + c];
            x[i * cols + c] = s / U[i * N + i];
        }
}
template <typename T, int N>
WEFT_FN void lower_solve_t(const T* U, T* x, int cols) {
    for (int i = 0; i < N; ++i)
        for (int c = 0; c < cols; ++c) {
            T s = x[i * cols + c];
            for (int k = 0; k < i; ++k) s -= U[k * N + i] * x[k * cols + c];
            x[i * cols + c] = s / U[i * N + i];
        }
}
}  // namespace tiles

// z with L z = y (forward substitution, lower triangle of L read; y: N or N x M)
template <typename T, int N, int... DB>
WEFT_FN void tile_lower_solve(tile_t<T, DB...>& z, const tile_t<T, N, N>& L, const tile_t<T, DB...>& y) {
    z = y;
    tiles::lower_solve<T, N>(L.data, z.data, tile_t<T, DB...>::size / N);
}
// g = L^{-T} adj_z: adj_y += g, adj_L -= tril(g z^T)
template <typename T, int N, int... DB>
WEFT_FN void adj_tile_lower_solve(const tile_t<T, N, N>& L, const tile_t<T, DB...>& y, tile_t<T, N, N>& adj_L,
                                  tile_t<T, DB...>& adj_y, const tile_t<T, DB...>& adj_z) {
    constexpr int cols = tile_t<T, DB...>::size / N;
    tile_t<T, DB...> z, g = adj_z;
    tile_lower_solve(z, L, y);
    tiles::upper_solve_t<T, N>(L.data, g.data, cols);
    adj_y += g;
    for (int i = 0; i < N; ++i)
        for (int j = 0; j <= i; ++j) {
            T s = T(0);
            for (int c = 0; c < cols; ++c) s += g.data[i * cols + c] * z.data[j * cols + c];
            adj_L.data[i * N + j] -= s;
        }
}
// x with U x = z (back substitution, upper triangle of U read)
template <typename T, int N, int... DB>
WEFT_FN void tile_upper_solve(tile_t<T, DB...>& x, const tile_t<T, N, N>& U, const tile_t<T, DB...>& z) {
    x = z;
    tiles::upper_solve<T, N>(U.data, x.data, tile_t<T, DB...>::size / N);
}
// g = U^{-T} adj_x: adj_z += g, adj_U -= triu(g x^T)
template <typename T, int N, int... DB>
WEFT_FN void adj_tile_upper_solve(const tile_t<T, N, N>& U, const tile_t<T, DB...>& z, tile_t<T, N, N>& adj_U,
                                  tile_t<T, DB...>& adj_z, const tile_t<T, DB...>& adj_x) {
    constexpr int cols = tile_t<T, DB...>::size / N;
    tile_t<T, DB...> x, g = adj_x;
    tile_upper_solve(x, U, z);
    tiles::lower_solve_t<T, N>(U.data, g.data, cols);
    adj_z += g;
    for (int i = 0; i < N; ++i)
        for (int j = i; j < N; ++j) {
            T s = T(0);
            for (int c = 0; c < cols; ++c) s += g.data[i * cols + c] * x.data[j * cols + c];
            adj_U.data[i * N + j] -= s;
        }
}

// a + diag(d)
template <typename T, int N>
WEFT_FN void tile_diag_add(tile_t<T, N, N>& out, const tile_t<T, N, N>& a, const tile_t<T, N>& d) {
    out = a;
    for (int i = 0; i < N; ++i) out.data[i * N + i] = add(out.data[i * N + i], d.data[i]);
}
template <typename T, int N>
WEFT_FN void adj_tile_diag_add(tile_t<T, N, N>& adj_a, tile_t<T, N>& adj_d, const tile_t<T, N, N>& adj_out) {
    adj_a += adj_out;
    for (int i = 0; i < N; ++i) adj_d.data[i] += adj_out.data[i * N + i];
}

// x with A x = b, given L of A (b: N or N x M)
template <typename T, int N, int... DB>
WEFT_FN void tile_cholesky_solve(tile_t<T, DB...>& x, const tile_t<T, N, N>& L, const tile_t<T, DB...>& b) {
    constexpr int cols = tile_t<T, DB...>::size / N;
    x = b;
    tiles::lower_solve<T, N>(L.data, x.data, cols);
    tiles::upper_solve_t<T, N>(L.data, x.data, cols);
}
// adj_b += A^{-1} adj_x = z; adj_L -= tril((x z^T + z x^T) L)
template <typename T, int N, int... DB>
WEFT_FN void adj_tile_cholesky_solve(const tile_t<T, N, N>& L, const tile_t<T, DB...>& b, tile_t<T, N, N>& adj_L,
                                     tile_t<T, DB...>& adj_b, const tile_t<T, DB...>& adj_x) {
    constexpr int cols = tile_t<T, DB...>::size / N;
    tile_t<T, DB...> x, z;
    tile_cholesky_solve(x, L, b);
    tile_cholesky_solve(z, L, adj_x);
    adj_b += z;
    for (int i = 0; i < N; ++i)
        for (int j = 0; j <= i; ++j) {
            T s = T(0);
            for (int k = 0; k < N; ++k) {
                T m = T(0);  // (x z^T + z x^T)[i][k]
                for (int c = 0; c < cols; ++c)
                    m += x.data[i * cols + c] * z.data[k * cols + c] + z.data[i * cols + c] * x.data[k * cols + c];
                s += m * L.data[k * N + j];
            }
            adj_L.data[i * N + j] -= s;
        }
}

}  // namespace weft

namespace weft {
// ---------------------------------------------------------------------------------------------- CPU blocks
// Launch coordinates of the flat thread index ``flat`` (as wp.tid(): leading coordinates first).
WEFT_FN void tile_coords(const Grid& g, int64 flat, int32* c) {
    const int nd = g.ndim < 1 ? 1 : g.ndim;
    for (int d = 3; d >= nd; --d) c[d] = 0;
    for (int d = nd - 1; d >= 0; --d) {
        c[d] = int32(flat % g.dim[d]);
        flat /= g.dim[d];
    }
}
// wp.tid() of every lane of one block: coordinates of the block's first thread, computed once; a lane adds its
// index to the last coordinate when blocks never straddle a row of the grid (always, for launch_tiled).
struct BlockCoords {
    const Grid* g;
    int64 first;
    int32 base[4];
    int32 nd;
    bool fast;

    WEFT_FN BlockCoords(const Grid& grid, int64 block, int32 block_dim) : g(&grid), first(block * block_dim) {
        tile_coords(grid, first, base);
        nd = grid.ndim < 1 ? 1 : grid.ndim;
        fast = grid.dim[nd - 1] % block_dim == 0;
    }
    WEFT_FN void get(int32 lane, int32* c) const {
        if (!fast) {
            tile_coords(*g, first + lane, c);
            return;
        }
        for (int d = 0; d < 4; ++d) c[d] = base[d];
        c[nd - 1] += lane;
    }
};

// The lanes of block ``block`` that run: block_dim, fewer in a last block the launch size does not fill (those lanes
// take no part in lane code; the tile operations still act on whole tiles).
WEFT_FN int32 block_lanes(const Grid& g, int64 block, int32 block_dim) {
    int64 total = 1;
    for (int d = 0; d < (g.ndim < 1 ? 1 : g.ndim); ++d) total *= g.dim[d];
    const int64 left = total - block * int64(block_dim);
    return left < int64(block_dim) ? int32(left) : block_dim;
}

WEFT_FN bool any_lane(const bool* alive, int n) {
    for (int l = 0; l < n; ++l)
        if (alive[l]) return true;
    return false;
}

#if !WEFT_CUDA
// The number of blocks of ``block_dim`` consecutive threads in a launch grid.
inline int64 block_count(const Grid& g, int32 block_dim) {
    int64 total = 1;
    for (int d = 0; d < (g.ndim < 1 ? 1 : g.ndim); ++d) total *= g.dim[d];
    return (total + block_dim - 1) / block_dim;
}

// The number of threads run_blocks uses (a backward entry asks first, to choose how each gradient is accumulated).
inline int32 block_threads(const Grid& g, int32 block_dim, int32 nthreads) {
    const int64 nblocks = block_count(g, block_dim);
    int threads = nthreads > 0 ? nthreads : omp_get_max_threads();
    if (threads > kMaxGridThreads) threads = kMaxGridThreads;
    if (int64(threads) > nblocks) threads = int(nblocks);
    return threads < 1 ? 1 : threads;
}

// Runs body(args, block) for every block of ``block_dim`` consecutive threads on ``threads`` threads (from
// block_threads); one block runs on one CPU thread. Blocks are split as the grid is (launch.h): each thread owns a
// contiguous slice of blocks, cut into pieces, and takes the pieces other threads have not started once its own
// are done, so a busy core does not hold up the launch. The gradients in priv[0..npriv) are privatised per thread
// (see with_private_grads in launch.h).
template <typename A, typename Body>
inline void run_blocks_private(const Grid& g, int32 block_dim, int32 threads, const A& args, const PrivateGrad* priv,
                               int npriv, Body&& body) {
    const int64 nblocks = block_count(g, block_dim);
    if (nblocks <= 0) return;
    auto range = [&body](const A& mine, int64 b0, int64 b1) __attribute__((noinline)) {
        for (int64 b = b0; b < b1; ++b) body(mine, b);
    };
    if (threads <= 1) {
        range(args, 0, nblocks);
        return;
    }
    GridSlice slices[kMaxGridThreads];
    make_slices(nblocks, threads, slices, 1);  // a block is worth a piece of its own
    with_private_grads(threads, args, priv, npriv, [&](const A& mine, int t) {
        run_slices(slices, threads, t, [&](int64 b0, int64 b1) { range(mine, b0, b1); });
    });
}

// run_blocks_private without gradients: body(block).
template <typename Body>
inline void run_blocks(const Grid& g, int32 block_dim, int32 nthreads, Body&& body) {
    const int64 nblocks = block_count(g, block_dim);
    if (nblocks <= 0) return;
    const int32 threads = block_threads(g, block_dim, nthreads);
    auto range = [&body](int64 b0, int64 b1) __attribute__((noinline)) {
        for (int64 b = b0; b < b1; ++b) body(b);
    };
    if (threads <= 1) {
        range(0, nblocks);
        return;
    }
    GridSlice slices[kMaxGridThreads];
    make_slices(nblocks, threads, slices, 1);
#pragma omp parallel num_threads(threads)
    run_slices(slices, threads, omp_get_thread_num(), range);
}
#endif
}  // namespace weft

#include "tile_reduce.h"  // reductions and scans
