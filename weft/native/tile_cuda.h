// weft native: cooperative tile operations for CUDA blocks (namespace weft::cta), called by the CUDA tile renderer.
//
// Model: one CUDA block of block_dim threads is one weft tile block; thread threadIdx.x is lane threadIdx.x. Tiles
// live in shared memory (the module's dynamic shared buffer, one slot per tile variable) and every function here is
// called by all threads of the block: each thread takes the elements k = lane, lane + block_dim, ... (so loads and
// stores are coalesced along rows), and the function ends with __syncthreads(), so its result is visible to every
// lane and its inputs may be overwritten by the next operation. Reductions combine per-lane partials through a
// shared scratch buffer (every lane reads all partials in lane order: deterministic). The tile_t layout and the
// semantics (out-of-bounds zeros / skips, gradients) are those of tile.h's CPU functions, which sit above their
// counterparts here in the same order.
//
// Scalar gradients produced by a block operation (the value of tile_full, a scalar operand of an element-wise op,
// alpha / beta of tile_matmul) are added to lane 0's adjoint only: block operations read lane 0's copy of such
// values, as on the CPU (tiles.md).
//
// Not split over lanes (run by lane 0 while the others wait): tile_cholesky, tile_cholesky_solve and their adjoints,
// tile_reduce with a user function (its order of combination is kept) and the adjoint of tile_broadcast is split
// but uses shared-memory atomics.
#pragma once
#include "tile.h"
#include "fft.h"

#if WEFT_CUDA || defined(WEFT_CTA_HOST_TEST)  // the host test compiles it with threads as lanes
namespace weft {
namespace cta {

__device__ __forceinline__ int lane() { return int(threadIdx.x); }
__device__ __forceinline__ int lanes() { return int(blockDim.x); }
__device__ __forceinline__ void sync() { __syncthreads(); }

#define WEFT_CTA_FOR(k, n) for (int k = int(threadIdx.x); k < int(n); k += int(blockDim.x))

// ---------------------------------------------------------------------------------------------- helpers
template <typename X>
struct is_tile {
    static constexpr bool value = false;
    typedef X elem;
};
template <typename T, int... D>
struct is_tile<tile_t<T, D...>> {
    static constexpr bool value = true;
    typedef T elem;
};

// Sum over the lanes of one value per lane; every lane gets the total (scratch: lanes() values of V).
template <typename V>
__device__ V block_sum(const V& partial, void* scratch) {
    V* buf = static_cast<V*>(scratch);
    buf[lane()] = partial;
    sync();
    V total = V();
    for (int l = 0; l < lanes(); ++l) total += buf[l];
    sync();
    return total;
}
template <typename V>
__device__ void add_to_lane0(V& target, const V& partial, void* scratch) {
    const V total = block_sum(partial, scratch);
    if (lane() == 0) target += total;
}

// Lane 0's value of a block-level condition, seen by every lane (block control flow follows lane 0, as on the CPU).
__device__ inline bool from_lane0(bool v) {
    __shared__ bool s;
    sync();
    if (lane() == 0) s = v;
    sync();
    return s;
}

template <typename T, int... D>
__device__ void zero(tile_t<T, D...>& t) {
    WEFT_CTA_FOR(k, (tile_t<T, D...>::size)) t.data[k] = T();
    sync();
}
template <typename T, int... D>
__device__ void tile_zero(tile_t<T, D...>& t) { zero(t); }
template <typename T, int... D>
__device__ void copy(tile_t<T, D...>& dst, const tile_t<T, D...>& src) {
    if (&dst != &src) WEFT_CTA_FOR(k, (tile_t<T, D...>::size)) dst.data[k] = src.data[k];
    sync();
}
template <typename T, int... D>
__device__ void accum(tile_t<T, D...>& dst, const tile_t<T, D...>& src) {
    WEFT_CTA_FOR(k, (tile_t<T, D...>::size)) dst.data[k] += src.data[k];
    sync();
}

// Address of element k of a tile footprint at ``off`` in ``base`` (a.data or a.grad); nullptr outside the array.
template <int... D, typename T>
__device__ __forceinline__ T* element(const array_t<T>& a, T* base, const int64* off, int k) {
    typedef tiles::dims<D...> S;
    const int r = k / S::inner;
    const int64 jj = off[S::n - 1] + (k - r * S::inner);
    int64 byte;
    if (base == nullptr || !tiles::row_offset<D...>(a, off, r, byte) || jj < 0 || jj >= a.shape[S::n - 1])
        return nullptr;
    return detail::at(base, byte + jj * a.strides[S::n - 1]);
}

// ---------------------------------------------------------------------------------------------- load / store
template <typename T, int... D, typename... I>
__device__ void tile_load(tile_t<T, D...>& t, const array_t<T>& a, I... offset) {
    const int64 off[sizeof...(D)] = {int64(offset)...};
    WEFT_CTA_FOR(k, (tile_t<T, D...>::size)) {
        const T* p = element<D...>(a, a.data, off, k);
        t.data[k] = p ? *p : T();
    }
    sync();
}
template <typename T, int... D, typename... I>
__device__ void adj_tile_load(const array_t<T>& a, const tile_t<T, D...>& adj_t, I... offset) {
    const int64 off[sizeof...(D)] = {int64(offset)...};
    if (a.grad)
        WEFT_CTA_FOR(k, (tile_t<T, D...>::size)) {
            T* g = element<D...>(a, a.grad, off, k);
            if (g) atom::fetch_add(g, adj_t.data[k]);
        }
    sync();
}

template <typename T, int... D, typename... I>
__device__ void tile_store(const array_t<T>& a, const tile_t<T, D...>& t, I... offset) {
    const int64 off[sizeof...(D)] = {int64(offset)...};
    WEFT_CTA_FOR(k, (tile_t<T, D...>::size)) {
        T* p = element<D...>(a, a.data, off, k);
        if (p) *p = t.data[k];
    }
    sync();
}
template <typename T, int... D, typename... I>
__device__ void adj_tile_store(const array_t<T>& a, tile_t<T, D...>& adj_t, I... offset) {
    const int64 off[sizeof...(D)] = {int64(offset)...};
    const bool consume = (a.flags & 2) != 0;
    if (a.grad)
        WEFT_CTA_FOR(k, (tile_t<T, D...>::size)) {
            T* g = element<D...>(a, a.grad, off, k);
            if (!g) continue;
            adj_t.data[k] += *g;
            if (consume) *g = T();
        }
    sync();
}
template <typename T, int... D, typename... I>
__device__ void replay_tile_store(const array_t<T>& a, const tile_t<T, D...>& t, I... offset) {
    if (a.flags & 1) cta::tile_store(a, t, offset...);
}

template <typename T, int... D, typename... I>
__device__ void tile_atomic_add(tile_t<T, D...>& old, const array_t<T>& a, const tile_t<T, D...>& t, I... offset) {
    const int64 off[sizeof...(D)] = {int64(offset)...};
    WEFT_CTA_FOR(k, (tile_t<T, D...>::size)) {
        T* p = element<D...>(a, a.data, off, k);
        old.data[k] = p ? atom::fetch_add(p, t.data[k]) : T();
    }
    sync();
}
template <typename T, int... D, typename... I>
__device__ void adj_tile_atomic_add(const array_t<T>& a, tile_t<T, D...>& adj_t, I... offset) {
    const int64 off[sizeof...(D)] = {int64(offset)...};
    if (a.grad)
        WEFT_CTA_FOR(k, (tile_t<T, D...>::size)) {
            T* g = element<D...>(a, a.grad, off, k);
            if (g) adj_t.data[k] += *g;
        }
    sync();
}
template <typename T, int... D, typename... I>
__device__ void replay_tile_atomic_add(tile_t<T, D...>& old, const array_t<T>& a, const tile_t<T, D...>& t,
                                       I... offset) {
    if (a.flags & 1) cta::tile_atomic_add(old, a, t, offset...);
}

// indexed memory: the lanes split the elements (an index may repeat, so gradients are added atomically)
template <int AX, typename T, int... D, int NI, typename... I>
__device__ void tile_load_indexed(tile_t<T, D...>& t, const array_t<T>& a, const tile_t<int32, NI>& idx, I... offset) {
    const int64 off[sizeof...(D)] = {int64(offset)...};
    WEFT_CTA_FOR(k, (tile_t<T, D...>::size)) {
        const T* p = tiles::indexed_element<AX, D...>(a, a.data, idx.data, off, k);
        t.data[k] = p ? *p : T();
    }
    sync();
}
template <int AX, typename T, int... D, int NI, typename... I>
__device__ void adj_tile_load_indexed(const array_t<T>& a, const tile_t<int32, NI>& idx, const tile_t<T, D...>& adj_t,
                                      I... offset) {
    const int64 off[sizeof...(D)] = {int64(offset)...};
    WEFT_CTA_FOR(k, (tile_t<T, D...>::size)) {
        T* g = tiles::indexed_element<AX, D...>(a, a.grad, idx.data, off, k);
        if (g) atom::fetch_add(g, adj_t.data[k]);
    }
    sync();
}
template <int AX, typename T, int... D, int NI, typename... I>
__device__ void tile_store_indexed(const array_t<T>& a, const tile_t<int32, NI>& idx, const tile_t<T, D...>& t,
                                   I... offset) {
    const int64 off[sizeof...(D)] = {int64(offset)...};
    WEFT_CTA_FOR(k, (tile_t<T, D...>::size)) {
        T* p = tiles::indexed_element<AX, D...>(a, a.data, idx.data, off, k);
        if (p) *p = t.data[k];
    }
    sync();
}
template <int AX, typename T, int... D, int NI, typename... I>
__device__ void adj_tile_store_indexed(const array_t<T>& a, const tile_t<int32, NI>& idx, tile_t<T, D...>& adj_t,
                                       I... offset) {
    const int64 off[sizeof...(D)] = {int64(offset)...};
    const bool consume = (a.flags & 2) != 0;
    WEFT_CTA_FOR(k, (tile_t<T, D...>::size)) {
        T* g = tiles::indexed_element<AX, D...>(a, a.grad, idx.data, off, k);
        if (!g) continue;
        adj_t.data[k] += *g;
        if (consume) *g = T();
    }
    sync();
}
template <int AX, typename T, int... D, int NI, typename... I>
__device__ void replay_tile_store_indexed(const array_t<T>& a, const tile_t<int32, NI>& idx, const tile_t<T, D...>& t,
                                          I... offset) {
    if (a.flags & 1) cta::tile_store_indexed<AX>(a, idx, t, offset...);
}
template <int AX, typename T, int... D, int NI, typename... I>
__device__ void tile_atomic_add_indexed(tile_t<T, D...>& old, const array_t<T>& a, const tile_t<int32, NI>& idx,
                                        const tile_t<T, D...>& t, I... offset) {
    const int64 off[sizeof...(D)] = {int64(offset)...};
    WEFT_CTA_FOR(k, (tile_t<T, D...>::size)) {
        T* p = tiles::indexed_element<AX, D...>(a, a.data, idx.data, off, k);
        old.data[k] = p ? atom::fetch_add(p, t.data[k]) : T();
    }
    sync();
}
template <int AX, typename T, int... D, int NI, typename... I>
__device__ void adj_tile_atomic_add_indexed(const array_t<T>& a, const tile_t<int32, NI>& idx, tile_t<T, D...>& adj_t,
                                            I... offset) {
    const int64 off[sizeof...(D)] = {int64(offset)...};
    WEFT_CTA_FOR(k, (tile_t<T, D...>::size)) {
        const T* g = tiles::indexed_element<AX, D...>(a, a.grad, idx.data, off, k);
        if (g) adj_t.data[k] += *g;
    }
    sync();
}
template <int AX, typename T, int... D, int NI, typename... I>
__device__ void replay_tile_atomic_add_indexed(tile_t<T, D...>& old, const array_t<T>& a, const tile_t<int32, NI>& idx,
                                               const tile_t<T, D...>& t, I... offset) {
    if (a.flags & 1) cta::tile_atomic_add_indexed<AX>(old, a, idx, t, offset...);
}

// ---------------------------------------------------------------------------------------------- construction
template <typename T, int... D, typename V>
__device__ void tile_fill(tile_t<T, D...>& t, const V& value) {
    WEFT_CTA_FOR(k, (tile_t<T, D...>::size)) t.data[k] = T(value);
    sync();
}
template <typename T, int... D, typename V>
__device__ void adj_tile_fill(const V&, V& adj_value, const tile_t<T, D...>& adj_t, void* scratch) {
    V partial = V();
    WEFT_CTA_FOR(k, (tile_t<T, D...>::size)) partial += V(adj_t.data[k]);
    add_to_lane0(adj_value, partial, scratch);
}

template <typename T, int N>
__device__ void tile_arange(tile_t<T, N>& t, T start, T step) {
    WEFT_CTA_FOR(k, N) t.data[k] = T(start + T(k) * step);
    sync();
}

// wp.tile(x): each lane writes its own element (vector / matrix components spread over the leading dimensions).
template <typename T, int BD>
__device__ void tile_from_lane(tile_t<T, BD>& t, const T& x) {
    if (lane() < BD) t.data[lane()] = x;
    sync();
}
template <unsigned N, typename T, int BD>
__device__ void tile_from_lane(tile_t<T, int(N), BD>& t, const vec_t<N, T>& x) {
    if (lane() < BD)
        for (unsigned c = 0; c < N; ++c) t.data[c * BD + lane()] = x.c[c];
    sync();
}
template <unsigned R, unsigned C, typename T, int BD>
__device__ void tile_from_lane(tile_t<T, int(R), int(C), BD>& t, const mat_t<R, C, T>& x) {
    if (lane() < BD)
        for (unsigned i = 0; i < R; ++i)
            for (unsigned j = 0; j < C; ++j) t.data[(i * C + j) * BD + lane()] = x.row[i].c[j];
    sync();
}
// the gradient of a per-lane value: its own element
template <typename X, typename T, int... D>
__device__ void adj_tile_from_lane(X& adj_x, const tile_t<T, D...>& adj_t) {
    adj_x += weft::untile(adj_t, lane());
    sync();
}
// the gradient of a block-uniform value copied into every lane: the sum over the lanes, to lane 0
template <typename X, typename T, int... D>
__device__ void adj_tile_from_uniform(X& adj_x, const tile_t<T, D...>& adj_t, void* scratch) {
    add_to_lane0(adj_x, weft::untile(adj_t, lane()), scratch);
}

// t[i, j] read by lane code: several lanes may read one element, so its gradient is added atomically.
template <typename T, int... D, typename... I>
__device__ void adj_tile_extract(const tile_t<T, D...>& t, tile_t<T, D...>& adj_t, const T& adj_ret, I... idx) {
    atom::fetch_add(&adj_t.data[weft::tile_flat_index(t, idx...)], adj_ret);
}

template <typename T, typename S, int... DD, int... DS, typename... I>
__device__ void tile_assign(tile_t<T, DD...>& out, const tile_t<T, DD...>& dst, const tile_t<S, DS...>& src,
                            I... offset) {
    const int off[sizeof...(DD)] = {int(offset)...};
    if (&out != &dst) WEFT_CTA_FOR(k, (tile_t<T, DD...>::size)) out.data[k] = dst.data[k];
    sync();
    WEFT_CTA_FOR(k, (tile_t<S, DS...>::size)) {
        const int j = tiles::assign_target<tiles::dims<DS...>, tiles::dims<DD...>>(k, off);
        if (j >= 0) out.data[j] = T(src.data[k]);
    }
    sync();
}
template <typename T, typename S, int... DD, int... DS, typename... I>
__device__ void adj_tile_assign(tile_t<T, DD...>& adj_dst, tile_t<S, DS...>& adj_src, tile_t<T, DD...>& adj_out,
                                I... offset) {
    const int off[sizeof...(DD)] = {int(offset)...};
    WEFT_CTA_FOR(k, (tile_t<S, DS...>::size)) {
        const int j = tiles::assign_target<tiles::dims<DS...>, tiles::dims<DD...>>(k, off);
        if (j < 0) continue;
        adj_src.data[k] += S(adj_out.data[j]);
        adj_out.data[j] = T();
    }
    sync();
    WEFT_CTA_FOR(k, (tile_t<T, DD...>::size)) adj_dst.data[k] += adj_out.data[k];
    sync();
}

// tile_sum(t, axis): the result's elements split over the lanes (the elements of lanes a partial block lacks left
// out, as tile_reduce.h)
template <int AX, typename T, int... DO, int... D>
__device__ void tile_sum_axis(tile_t<T, DO...>& out, const tile_t<T, D...>& t, Lanes ln, void*) {
    typedef tiles::axis_slices<AX, D...> S;
    WEFT_CTA_FOR(o, S::count) {
        T s{};
        tiles::sum_run(t.data, S::base(o), S::inner, 0, S::n, ln, s);
        out.data[o] = s;
    }
    sync();
}
template <int AX, typename T, int... DO, int... D>
__device__ void adj_tile_sum_axis(tile_t<T, D...>& adj_t, const tile_t<T, DO...>& adj_out, Lanes ln) {
    typedef tiles::axis_slices<AX, D...> S;
    WEFT_CTA_FOR(o, S::count)
        for (int j = 0; j < S::n; ++j) {
            const int i = S::base(o) + j * S::inner;
            if (ln.owns(i)) adj_t.data[i] += adj_out.data[o];
        }
    sync();
}

// tile_from_thread: lane ``idx``'s value, through the scratch memory, filled into the tile (an index outside the
// block gives zeros).
template <typename T, int... D>
__device__ void tile_from_thread(tile_t<T, D...>& t, const T& value, int32 idx, void* scratch) {
    T* slot = static_cast<T*>(scratch);
    if (lane() == 0) *slot = T();
    sync();
    if (lane() == idx) *slot = value;
    sync();
    const T v = *slot;
    WEFT_CTA_FOR(k, (tile_t<T, D...>::size)) t.data[k] = v;
    sync();
}
template <typename T, int... D>
__device__ void adj_tile_from_thread(T& adj_value, const tile_t<T, D...>& adj_t, int32 idx) {
    if (lane() == idx)
        for (int k = 0; k < tile_t<T, D...>::size; ++k) adj_value += adj_t.data[k];
    sync();
}

// print(t): lane 0 prints the whole tile (weft::tile_print), once per block.
template <typename T, int... D>
__device__ void tile_print(const tile_t<T, D...>& t, const char* storage) {
    if (lane() == 0) weft::tile_print(t, storage);
    sync();
}

// t[i, j] = v (and the in-place forms) by every running lane (``active``); several lanes may update one element, so
// the read-modify-write forms are atomic. M 6 (wp.tile_scatter_masked): a set skipped where the first index is
// negative. All threads call it (it ends with a barrier).
template <int M, typename T, int... D, typename... I>
__device__ void tile_update(tile_t<T, D...>& t, const T& v, bool active, I... idx) {
    if constexpr (M == 6) active = active && weft::tiles::first_index(idx...) >= 0;
    if (active) {
        T* e = &t.data[weft::tile_flat_index(t, idx...)];
        if constexpr (M == 0 || M == 6) *e = v;
        else if constexpr (M == 1) atom::fetch_add(e, v);
        else if constexpr (M == 2) atom::fetch_sub(e, v);
        else if constexpr (M == 3) atom::fetch_and(e, v);
        else if constexpr (M == 4) atom::fetch_or(e, v);
        else atom::fetch_xor(e, v);
    }
    sync();
}
// Its reverse: every running lane reads its element's adjoint, then (a set) the written elements' adjoints are cleared.
template <int M, typename T, int... D, typename... I>
__device__ void adj_tile_update(tile_t<T, D...>& adj_t, T& adj_v, bool active, I... idx) {
    if constexpr (M == 6) active = active && weft::tiles::first_index(idx...) >= 0;
    const int k = active ? weft::tile_flat_index(adj_t, idx...) : 0;
    if (active) {
        if constexpr (M == 2) adj_v -= adj_t.data[k];
        else if constexpr (M <= 1 || M == 6) adj_v += adj_t.data[k];
    }
    sync();
    if constexpr (M == 0 || M == 6) {
        if (active) adj_t.data[k] = T();
        sync();
    }
}

// ---------------------------------------------------------------------------------------------- reshaping
template <typename T, int... DO, int... DI, typename... I>
__device__ void tile_view(tile_t<T, DO...>& out, const tile_t<T, DI...>& t, I... offset) {
    typedef tiles::dims<DO...> SO;
    typedef tiles::dims<DI...> SI;
    const int off[SI::n] = {int(offset)...};
    WEFT_CTA_FOR(k, SO::size) {
        const int src = tiles::view_source<SO, SI>(k, off);
        out.data[k] = (src >= 0 && src < SI::size) ? t.data[src] : T();
    }
    sync();
}
template <typename T, int... DO, int... DI, typename... I>
__device__ void adj_tile_view(tile_t<T, DI...>& adj_t, const tile_t<T, DO...>& adj_out, I... offset) {
    typedef tiles::dims<DO...> SO;
    typedef tiles::dims<DI...> SI;
    const int off[SI::n] = {int(offset)...};
    WEFT_CTA_FOR(k, SO::size) {  // distinct k view distinct elements
        const int src = tiles::view_source<SO, SI>(k, off);
        if (src >= 0 && src < SI::size) adj_t.data[src] += adj_out.data[k];
    }
    sync();
}
template <typename T, int... DO, int... DI, typename... I>
__device__ void tile_slice(tile_t<T, DO...>& out, const tile_t<T, DI...>& t, I... sl) {
    const int s[sizeof...(I)] = {int(sl)...};
    WEFT_CTA_FOR(k, (tile_t<T, DO...>::size)) {
        const int src = tiles::slice_source<tiles::dims<DI...>>(k, s);
        out.data[k] = src >= 0 ? t.data[src] : T();
    }
    sync();
}
template <typename T, int... DO, int... DI, typename... I>
__device__ void adj_tile_slice(tile_t<T, DI...>& adj_t, const tile_t<T, DO...>& adj_out, I... sl) {
    const int s[sizeof...(I)] = {int(sl)...};
    WEFT_CTA_FOR(k, (tile_t<T, DO...>::size)) {  // distinct k select distinct elements
        const int src = tiles::slice_source<tiles::dims<DI...>>(k, s);
        if (src >= 0) adj_t.data[src] += adj_out.data[k];
    }
    sync();
}
template <typename T, int R, int... DO, int... DI>
__device__ void tile_slice_indexed(tile_t<T, DO...>& out, const tile_t<T, DI...>& t, const tile_t<int32_t, R>& idx,
                                   int axis) {
    int rows, inner;
    tiles::axis_extents<DI...>(axis, rows, inner);
    WEFT_CTA_FOR(k, (tile_t<T, DO...>::size)) {
        const int c = k % inner, r = (k / inner) % R, outer = k / (inner * R);
        const int i = idx.data[r] < 0 ? idx.data[r] + rows : idx.data[r];
        out.data[k] = (i >= 0 && i < rows) ? t.data[(outer * rows + i) * inner + c] : T();
    }
    sync();
}
template <typename T, int R, int... DO, int... DI>
__device__ void adj_tile_slice_indexed(const tile_t<int32_t, R>& idx, int axis, tile_t<T, DI...>& adj_t,
                                       const tile_t<T, DO...>& adj_out) {
    int rows, inner;
    tiles::axis_extents<DI...>(axis, rows, inner);
    WEFT_CTA_FOR(k, (tile_t<T, DO...>::size)) {  // repeated indices: several threads add into one element
        const int c = k % inner, r = (k / inner) % R, outer = k / (inner * R);
        const int i = idx.data[r] < 0 ? idx.data[r] + rows : idx.data[r];
        if (i >= 0 && i < rows) atom::fetch_add(&adj_t.data[(outer * rows + i) * inner + c], adj_out.data[k]);
    }
    sync();
}
template <typename T, typename S, int... DD, int... DS, typename... I>
__device__ void tile_slice_assign(tile_t<T, DD...>& out, const tile_t<T, DD...>& dst, const tile_t<S, DS...>& src,
                                  I... sl) {
    const int s[sizeof...(I)] = {int(sl)...};
    if (&out != &dst) WEFT_CTA_FOR(k, (tile_t<T, DD...>::size)) out.data[k] = dst.data[k];
    sync();
    WEFT_CTA_FOR(k, (tile_t<S, DS...>::size)) {
        const int j = tiles::slice_source<tiles::dims<DD...>>(k, s);
        if (j >= 0) out.data[j] = T(src.data[k]);
    }
    sync();
}
template <typename T, typename S, int... DD, int... DS, typename... I>
__device__ void adj_tile_slice_assign(tile_t<T, DD...>& adj_dst, tile_t<S, DS...>& adj_src,
                                      tile_t<T, DD...>& adj_out, I... sl) {
    const int s[sizeof...(I)] = {int(sl)...};
    WEFT_CTA_FOR(k, (tile_t<S, DS...>::size)) {
        const int j = tiles::slice_source<tiles::dims<DD...>>(k, s);
        if (j < 0) continue;
        adj_src.data[k] += S(adj_out.data[j]);
        adj_out.data[j] = T();
    }
    sync();
    WEFT_CTA_FOR(k, (tile_t<T, DD...>::size)) adj_dst.data[k] += adj_out.data[k];
    sync();
}

template <typename T, int M, int N>
__device__ void tile_transpose(tile_t<T, N, M>& out, const tile_t<T, M, N>& t) {
    WEFT_CTA_FOR(k, M * N) {  // k indexes the output (contiguous writes)
        const int j = k / M, i = k - j * M;
        out.data[k] = t.data[i * N + j];
    }
    sync();
}
template <typename T, int M, int N>
__device__ void adj_tile_transpose(tile_t<T, M, N>& adj_t, const tile_t<T, N, M>& adj_out) {
    WEFT_CTA_FOR(k, M * N) {
        const int i = k / N, j = k - i * N;
        adj_t.data[k] += adj_out.data[j * M + i];
    }
    sync();
}

template <typename T, int... DO, int... DI>
__device__ void tile_broadcast(tile_t<T, DO...>& out, const tile_t<T, DI...>& t) {
    WEFT_CTA_FOR(k, (tile_t<T, DO...>::size))
        out.data[k] = t.data[tiles::broadcast_source<tiles::dims<DO...>, tiles::dims<DI...>>(k)];
    sync();
}
template <typename T, int... DO, int... DI>
__device__ void adj_tile_broadcast(tile_t<T, DI...>& adj_t, const tile_t<T, DO...>& adj_out) {
    WEFT_CTA_FOR(k, (tile_t<T, DO...>::size))  // many outputs share a source: shared-memory atomics
        atom::fetch_add(&adj_t.data[tiles::broadcast_source<tiles::dims<DO...>, tiles::dims<DI...>>(k)],
                        adj_out.data[k]);
    sync();
}

template <typename T, int... DO, int... DI>
__device__ void tile_reshape(tile_t<T, DO...>& out, const tile_t<T, DI...>& t) {
    WEFT_CTA_FOR(k, (tile_t<T, DO...>::size)) out.data[k] = t.data[k];
    sync();
}
template <typename T, int... DO, int... DI>
__device__ void adj_tile_reshape(tile_t<T, DI...>& adj_t, const tile_t<T, DO...>& adj_out) {
    WEFT_CTA_FOR(k, (tile_t<T, DO...>::size)) adj_t.data[k] += adj_out.data[k];
    sync();
}

// ---------------------------------------------------------------------------------------------- element-wise
// A tile's element k, or a scalar operand's thread-local partial gradient.
template <typename X, typename P>
__device__ __forceinline__ decltype(auto) grad_slot(X& x, P& partial, int k) {
    if constexpr (is_tile<X>::value) return (x.data[k]);
    else return (partial);
}

#define WEFT_CTA_BINARY(NAME)                                                                                   \
    template <typename T, int... D, typename A, typename B>                                                     \
    __device__ void tile_##NAME(tile_t<T, D...>& out, const A& a, const B& b) {                                 \
        WEFT_CTA_FOR(k, (tile_t<T, D...>::size)) out.data[k] = NAME(tiles::at(a, k), tiles::at(b, k));          \
        sync();                                                                                                 \
    }                                                                                                           \
    template <typename T, int... D, typename A, typename B, typename AA, typename AB>                           \
    __device__ void adj_tile_##NAME(const A& a, const B& b, AA& adj_a, AB& adj_b, const tile_t<T, D...>& adj_out, \
                                    void* scratch) {                                                            \
        typename is_tile<AA>::elem pa = {};                                                                     \
        typename is_tile<AB>::elem pb = {};                                                                     \
        WEFT_CTA_FOR(k, (tile_t<T, D...>::size))                                                                \
            adj_##NAME(tiles::at(a, k), tiles::at(b, k), grad_slot(adj_a, pa, k), grad_slot(adj_b, pb, k),      \
                       adj_out.data[k]);                                                                        \
        if constexpr (!is_tile<AA>::value) add_to_lane0(adj_a, pa, scratch);                                    \
        if constexpr (!is_tile<AB>::value) add_to_lane0(adj_b, pb, scratch);                                    \
        sync();                                                                                                 \
    }
WEFT_CTA_BINARY(add)
WEFT_CTA_BINARY(sub)
WEFT_CTA_BINARY(mul)
WEFT_CTA_BINARY(div)
#undef WEFT_CTA_BINARY
// integer tiles: no gradients
#define WEFT_CTA_BITWISE(NAME)                                                                                  \
    template <typename T, int... D, typename A, typename B>                                                     \
    __device__ void tile_##NAME(tile_t<T, D...>& out, const A& a, const B& b) {                                 \
        WEFT_CTA_FOR(k, (tile_t<T, D...>::size)) out.data[k] = NAME(tiles::at(a, k), tiles::at(b, k));          \
        sync();                                                                                                 \
    }
WEFT_CTA_BITWISE(bit_and)
WEFT_CTA_BITWISE(bit_or)
WEFT_CTA_BITWISE(bit_xor)
#undef WEFT_CTA_BITWISE

template <typename T, int... D>
__device__ void tile_neg(tile_t<T, D...>& out, const tile_t<T, D...>& a) {
    WEFT_CTA_FOR(k, (tile_t<T, D...>::size)) out.data[k] = -a.data[k];
    sync();
}
template <typename T, int... D>
__device__ void adj_tile_neg(tile_t<T, D...>& adj_a, const tile_t<T, D...>& adj_out) {
    WEFT_CTA_FOR(k, (tile_t<T, D...>::size)) adj_a.data[k] -= adj_out.data[k];
    sync();
}

// ---------------------------------------------------------------------------------------------- reductions
template <typename T, int... D>
__device__ void tile_sum(tile_t<T, 1>& out, const tile_t<T, D...>& t, Lanes ln, void* scratch) {
    // each lane from its first element on, then the lanes that hold elements in lane order, with the element type's
    // add (struct fields that do not add up carry element 0's, as tile_reduce.h's sum); lane l holds the elements
    // k = l mod block_dim, so the lanes a partial block lacks take no part
    constexpr int n = tile_t<T, D...>::size;
    T partial = t.data[lane() < n ? lane() : 0];
    for (int k = lane() + lanes(); k < n; k += lanes()) partial = add(partial, t.data[k]);
    T* buf = static_cast<T*>(scratch);
    buf[lane()] = partial;
    sync();
    if (lane() == 0) {
        T total = buf[0];
        const int running = ln.full() ? lanes() : ln.running;
        const int used = running < n ? running : n;
        for (int l = 1; l < used; ++l) total = add(total, buf[l]);
        out.data[0] = total;
    }
    sync();
}
template <typename T, int... D>
__device__ void adj_tile_sum(tile_t<T, D...>& adj_t, const tile_t<T, 1>& adj_out, Lanes ln) {
    WEFT_CTA_FOR(k, (tile_t<T, D...>::size)) if (ln.owns(k)) adj_t.data[k] += adj_out.data[0];
    sync();
}

// The first index of the minimum (MAX: maximum) of the owned elements, as tile_reduce.h's serial loop finds it; every
// lane gets it.
template <bool MAX, typename T, int... D>
__device__ int arg_extreme(const tile_t<T, D...>& t, Lanes ln, void* scratch) {
    int best = -1;
    WEFT_CTA_FOR(k, (tile_t<T, D...>::size))
        if (ln.owns(k) && (best < 0 || (MAX ? t.data[best] < t.data[k] : t.data[k] < t.data[best]))) best = k;
    int* buf = static_cast<int*>(scratch);
    buf[lane()] = best;
    sync();
    int k = -1;
    for (int l = 0; l < lanes(); ++l) {  // lane partials hold increasing indices within a lane: ties keep the first
        const int c = buf[l];
        if (c < 0) continue;
        if (k < 0 || (MAX ? t.data[k] < t.data[c] : t.data[c] < t.data[k]) || (!(t.data[c] < t.data[k]) &&
                                                                                !(t.data[k] < t.data[c]) && c < k))
            k = c;
    }
    sync();
    return k;
}
template <typename T, int... D>
__device__ void tile_min(tile_t<T, 1>& out, const tile_t<T, D...>& t, Lanes ln, void* scratch) {
    const int k = arg_extreme<false>(t, ln, scratch);
    if (lane() == 0) out.data[0] = t.data[k];
    sync();
}
template <typename T, int... D>
__device__ void adj_tile_min(const tile_t<T, D...>& t, tile_t<T, D...>& adj_t, const tile_t<T, 1>& adj_out,
                             Lanes ln, void* scratch) {
    const int k = arg_extreme<false>(t, ln, scratch);
    if (lane() == 0) adj_t.data[k] += adj_out.data[0];
    sync();
}
template <typename T, int... D>
__device__ void tile_max(tile_t<T, 1>& out, const tile_t<T, D...>& t, Lanes ln, void* scratch) {
    const int k = arg_extreme<true>(t, ln, scratch);
    if (lane() == 0) out.data[0] = t.data[k];
    sync();
}
template <typename T, int... D>
__device__ void adj_tile_max(const tile_t<T, D...>& t, tile_t<T, D...>& adj_t, const tile_t<T, 1>& adj_out,
                             Lanes ln, void* scratch) {
    const int k = arg_extreme<true>(t, ln, scratch);
    if (lane() == 0) adj_t.data[k] += adj_out.data[0];
    sync();
}
template <typename T, int... D>
__device__ void tile_argmin(tile_t<int32, 1>& out, const tile_t<T, D...>& t, Lanes ln, void* scratch) {
    const int k = arg_extreme<false>(t, ln, scratch);
    if (lane() == 0) out.data[0] = k;
    sync();
}
template <typename T, int... D>
__device__ void tile_argmax(tile_t<int32, 1>& out, const tile_t<T, D...>& t, Lanes ln, void* scratch) {
    const int k = arg_extreme<true>(t, ln, scratch);
    if (lane() == 0) out.data[0] = k;
    sync();
}

// ---------------------------------------------------------------------------------------------- matmul
// Each lane computes output elements k = lane, lane + block_dim, ... (row i, column j), a dot product over K.
template <typename T, int M, int K, int N>
__device__ void tile_matmul(tile_t<T, M, N>& out, const tile_t<T, M, K>& a, const tile_t<T, K, N>& b) {
    WEFT_CTA_FOR(e, M * N) {
        const int i = e / N, j = e - i * N;
        T s = T(0);
        for (int k = 0; k < K; ++k) s += a.data[i * K + k] * b.data[k * N + j];
        out.data[e] = s;
    }
    sync();
}
// adj_a += alpha adj_out b^T, then adj_b += alpha a^T adj_out (each element owned by one lane)
template <typename T, int M, int K, int N>
__device__ void matmul_grads(const tile_t<T, M, K>& a, const tile_t<T, K, N>& b, tile_t<T, M, K>& adj_a,
                             tile_t<T, K, N>& adj_b, const tile_t<T, M, N>& adj_out, T alpha) {
    WEFT_CTA_FOR(e, M * K) {
        const int i = e / K, k = e - i * K;
        T s = T(0);
        for (int j = 0; j < N; ++j) s += adj_out.data[i * N + j] * b.data[k * N + j];
        adj_a.data[e] += alpha * s;
    }
    WEFT_CTA_FOR(e, K * N) {
        const int k = e / N, j = e - k * N;
        T s = T(0);
        for (int i = 0; i < M; ++i) s += a.data[i * K + k] * adj_out.data[i * N + j];
        adj_b.data[e] += alpha * s;
    }
    sync();
}
template <typename T, int M, int K, int N>
__device__ void adj_tile_matmul(const tile_t<T, M, K>& a, const tile_t<T, K, N>& b, tile_t<T, M, K>& adj_a,
                                tile_t<T, K, N>& adj_b, const tile_t<T, M, N>& adj_out) {
    cta::matmul_grads(a, b, adj_a, adj_b, adj_out, T(1));
}
template <typename T, int M, int K, int N>
__device__ void tile_matmul_acc(tile_t<T, M, N>& out, const tile_t<T, M, K>& a, const tile_t<T, K, N>& b,
                                const tile_t<T, M, N>& c, T alpha, T beta) {
    WEFT_CTA_FOR(e, M * N) {  // out may be c: each element is read, then written, by one lane
        const int i = e / N, j = e - i * N;
        T s = T(0);
        for (int k = 0; k < K; ++k) s += a.data[i * K + k] * b.data[k * N + j];
        out.data[e] = (beta == T(0) ? T(0) : beta * c.data[e]) + alpha * s;
    }
    sync();
}
template <typename T, int M, int K, int N>
__device__ void adj_tile_matmul_acc(const tile_t<T, M, K>& a, const tile_t<T, K, N>& b, const tile_t<T, M, N>& c,
                                    T alpha, T beta, tile_t<T, M, K>& adj_a, tile_t<T, K, N>& adj_b,
                                    tile_t<T, M, N>& adj_c, T& adj_alpha, T& adj_beta, const tile_t<T, M, N>& adj_out,
                                    void* scratch) {
    cta::matmul_grads(a, b, adj_a, adj_b, adj_out, alpha);
    T pa = T(0), pb = T(0);
    WEFT_CTA_FOR(e, M * N) {
        const int i = e / N, j = e - i * N;
        T ab = T(0);
        for (int k = 0; k < K; ++k) ab += a.data[i * K + k] * b.data[k * N + j];
        adj_c.data[e] += beta * adj_out.data[e];
        pa += ab * adj_out.data[e];
        pb += c.data[e] * adj_out.data[e];
    }
    add_to_lane0(adj_alpha, pa, scratch);
    add_to_lane0(adj_beta, pb, scratch);
}

// ---------------------------------------------------------------------------------------------- Cholesky
// Run by lane 0 (tile.h's serial factorisation and solves, on the shared tiles); the other lanes wait.
template <typename T, int N>
__device__ void tile_cholesky(tile_t<T, N, N>& L, const tile_t<T, N, N>& A) {
    if (lane() == 0) weft::tile_cholesky(L, A);
    sync();
}
template <typename T, int N>
__device__ void adj_tile_cholesky(const tile_t<T, N, N>& A, tile_t<T, N, N>& adj_A, const tile_t<T, N, N>& adj_L) {
    if (lane() == 0) weft::adj_tile_cholesky(A, adj_A, adj_L);
    sync();
}
template <typename T, int N, int... DB>
__device__ void tile_cholesky_solve(tile_t<T, DB...>& x, const tile_t<T, N, N>& L, const tile_t<T, DB...>& b) {
    if (lane() == 0) weft::tile_cholesky_solve(x, L, b);
    sync();
}
template <typename T, int N, int... DB>
__device__ void adj_tile_cholesky_solve(const tile_t<T, N, N>& L, const tile_t<T, DB...>& b, tile_t<T, N, N>& adj_L,
                                        tile_t<T, DB...>& adj_b, const tile_t<T, DB...>& adj_x) {
    if (lane() == 0) weft::adj_tile_cholesky_solve(L, b, adj_L, adj_b, adj_x);
    sync();
}
// triangular solves and the diagonal update, likewise
#define WEFT_CTA_SOLVE(NAME)                                                                                     \
    template <typename T, int N, int... DB>                                                                     \
    __device__ void NAME(tile_t<T, DB...>& x, const tile_t<T, N, N>& L, const tile_t<T, DB...>& b) {            \
        if (lane() == 0) weft::NAME(x, L, b);                                                                   \
        sync();                                                                                                 \
    }                                                                                                           \
    template <typename T, int N, int... DB>                                                                     \
    __device__ void adj_##NAME(const tile_t<T, N, N>& L, const tile_t<T, DB...>& b, tile_t<T, N, N>& adj_L,     \
                               tile_t<T, DB...>& adj_b, const tile_t<T, DB...>& adj_x) {                        \
        if (lane() == 0) weft::adj_##NAME(L, b, adj_L, adj_b, adj_x);                                           \
        sync();                                                                                                 \
    }
// scans and sorts: serial, by lane 0
#define WEFT_CTA_SCAN(NAME)                                                                                      \
    template <typename T, int... D>                                                                             \
    __device__ void NAME(tile_t<T, D...>& out, const tile_t<T, D...>& a, Lanes ln) {                            \
        if (lane() == 0) weft::NAME(out, a, ln);                                                                \
        sync();                                                                                                 \
    }                                                                                                           \
    template <typename T, int... D>                                                                             \
    __device__ void adj_##NAME(const tile_t<T, D...>& a, tile_t<T, D...>& adj_a, const tile_t<T, D...>& adj_out, \
                               Lanes ln) {                                                                      \
        if (lane() == 0) weft::adj_##NAME(a, adj_a, adj_out, ln);                                               \
        sync();                                                                                                 \
    }
WEFT_CTA_SCAN(tile_scan_inclusive)
WEFT_CTA_SCAN(tile_scan_exclusive)
WEFT_CTA_SCAN(tile_scan_max_inclusive)
WEFT_CTA_SCAN(tile_scan_min_inclusive)
#undef WEFT_CTA_SCAN
template <typename K, typename V, int... DK, int... DV>
__device__ void tile_sort(tile_t<K, DK...>& keys, tile_t<V, DV...>& values, const tile_t<K, DK...>& k0,
                          const tile_t<V, DV...>& v0) {
    if (lane() == 0) weft::tile_sort(keys, values, k0, v0);
    sync();
}
WEFT_CTA_SOLVE(tile_lower_solve)
WEFT_CTA_SOLVE(tile_upper_solve)
#undef WEFT_CTA_SOLVE
template <typename T, int N>
__device__ void tile_diag_add(tile_t<T, N, N>& out, const tile_t<T, N, N>& a, const tile_t<T, N>& d) {
    WEFT_CTA_FOR(k, N * N) {
        const int i = k / N;
        out.data[k] = k == i * N + i ? add(a.data[k], d.data[i]) : a.data[k];
    }
    sync();
}
template <typename T, int N>
__device__ void adj_tile_diag_add(tile_t<T, N, N>& adj_a, tile_t<T, N>& adj_d, const tile_t<T, N, N>& adj_out) {
    WEFT_CTA_FOR(k, N * N) adj_a.data[k] += adj_out.data[k];
    WEFT_CTA_FOR(i, N) adj_d.data[i] += adj_out.data[i * N + i];
    sync();
}

// ---------------------------------------------------------------------------------------------- FFT
// Every pass split over the lanes (fft_device.h); scratch: fft::device_scratch(N, rows) complex values, plus the
// tile's size for the adjoints (the transformed gradient).
template <typename T, int... D>
__device__ void tile_fft(tile_t<vec_t<2, T>, D...>& t, void* scratch) {
    typedef tiles::dims<D...> S;
    fft::device_rows<false, T, S::inner>(t.data, static_cast<vec_t<2, T>*>(scratch), S::outer, lane(), lanes(), true);
    sync();
}
template <typename T, int... D>
__device__ void tile_ifft(tile_t<vec_t<2, T>, D...>& t, void* scratch) {
    typedef tiles::dims<D...> S;
    fft::device_rows<true, T, S::inner>(t.data, static_cast<vec_t<2, T>*>(scratch), S::outer, lane(), lanes(), true);
    sync();
}
template <bool INV, typename T, int... D>
__device__ void adj_fft(tile_t<vec_t<2, T>, D...>& adj_in, const tile_t<vec_t<2, T>, D...>& adj_out, void* scratch) {
    typedef tiles::dims<D...> S;
    vec_t<2, T>* g = static_cast<vec_t<2, T>*>(scratch);
    WEFT_CTA_FOR(k, S::size) g[k] = adj_out.data[k];
    sync();
    fft::device_rows<INV, T, S::inner>(g, g + S::size, S::outer, lane(), lanes(), true);
    sync();
    WEFT_CTA_FOR(k, S::size) adj_in.data[k] += g[k];
    sync();
}
// y = F x with F symmetric: adj_x += conj(F) adj_y, the unnormalised inverse transform (and vice versa).
template <typename T, int... D>
__device__ void adj_tile_fft(tile_t<vec_t<2, T>, D...>& adj_in, const tile_t<vec_t<2, T>, D...>& adj_out,
                             void* scratch) {
    cta::adj_fft<true>(adj_in, adj_out, scratch);
}
template <typename T, int... D>
__device__ void adj_tile_ifft(tile_t<vec_t<2, T>, D...>& adj_in, const tile_t<vec_t<2, T>, D...>& adj_out,
                              void* scratch) {
    cta::adj_fft<false>(adj_in, adj_out, scratch);
}

}  // namespace cta
}  // namespace weft
#endif
