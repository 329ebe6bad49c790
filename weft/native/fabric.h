// weft native: Fabric arrays (wp.fabricarray / wp.indexedfabricarray): elements spread over buckets of memory.
// Layouts mirrored by weft/types/layout.py (fabricarray_t 40 bytes, indexedfabricarray_t 72): keep both in step.
#pragma once
#include "core.h"
#include "error.h"
#include "array.h"
#include "atomic.h"

namespace weft {

// One bucket: elements [index_start, index_end) of the array. ndim 1: ptr holds the elements; ndim 2 (a Fabric
// array of arrays): ptr holds one data pointer per element and lengths one uint64 length per element.
struct fabricbucket_t {
    int64 index_start;
    int64 index_end;
    void* ptr;
    const uint64* lengths;
};

template <typename T>
struct fabricarray_t {
    const fabricbucket_t* buckets;  // sorted by index_start, contiguous ranges covering [0, shape[0])
    int64 nbuckets;
    int32 shape[4];  // shape[0]: the number of elements
    int32 ndim;
    int32 flags;  // bit 0: a backward replay's private copy (replayed stores and atomics write it)
};

// A Fabric array seen through one index array (element i is fa[indices[i]]).
template <typename T>
struct indexedfabricarray_t {
    fabricarray_t<T> fa;
    const int32* indices;
    int32 shape[4];
    int32 ndim;
    int32 pad_;
};

namespace detail {
// the bucket holding element i: the last bucket starting at or before i (empty buckets start where the next one
// does, so the search skips them)
WEFT_FN const fabricbucket_t& fabric_bucket(const fabricbucket_t* b, int64 n, int64 i) {
    int64 lo = 0, hi = n - 1;
    while (lo < hi) {
        const int64 mid = (lo + hi + 1) >> 1;
        if (b[mid].index_start <= i) lo = mid;
        else hi = mid - 1;
    }
    return b[lo];
}
}  // namespace detail

template <typename T>
WEFT_FN T& address(const fabricarray_t<T>& a, int64 i) {
    const fabricbucket_t& b = detail::fabric_bucket(a.buckets, a.nbuckets, i);
    return static_cast<T*>(b.ptr)[i - b.index_start];
}
// a[i] of a Fabric array of arrays: a plain 1-D array over element i's storage (no gradient)
template <typename T>
WEFT_FN array_t<T> view(const fabricarray_t<T>& a, int64 i) {
    const fabricbucket_t& b = detail::fabric_bucket(a.buckets, a.nbuckets, i);
    const int64 k = i - b.index_start;
    array_t<T> out;
    out.data = static_cast<T**>(b.ptr)[k];
    out.grad = nullptr;
    out.shape[0] = int32(b.lengths[k]);
    out.shape[1] = out.shape[2] = out.shape[3] = 0;
    out.ndim = 1;
    out.flags = 0;
    out.strides[0] = int64(sizeof(T));
    out.strides[1] = out.strides[2] = out.strides[3] = 0;
    return out;
}
template <typename T>
WEFT_FN T& address(const fabricarray_t<T>& a, int64 i, int64 j) {
    const fabricbucket_t& b = detail::fabric_bucket(a.buckets, a.nbuckets, i);
    return static_cast<T**>(b.ptr)[i - b.index_start][j];
}
template <typename T>
WEFT_FN T& address(const indexedfabricarray_t<T>& a, int64 i) { return address(a.fa, int64(a.indices[i])); }
template <typename T>
WEFT_FN T& address(const indexedfabricarray_t<T>& a, int64 i, int64 j) {
    return address(a.fa, int64(a.indices[i]), j);
}
template <typename T>
WEFT_FN array_t<T> view(const indexedfabricarray_t<T>& a, int64 i) { return view(a.fa, int64(a.indices[i])); }

template <bool C = false, typename T, typename... I>
WEFT_FN T load(const fabricarray_t<T>& a, I... idx) { return address(a, int64(idx)...); }
template <bool C = false, typename T, typename... I>
WEFT_FN T load(const indexedfabricarray_t<T>& a, I... idx) { return address(a, int64(idx)...); }
template <bool C = false, typename T, typename... I>
WEFT_FN void store(const fabricarray_t<T>& a, const T& value, I... idx) { address(a, int64(idx)...) = value; }
template <bool C = false, typename T, typename... I>
WEFT_FN void store(const indexedfabricarray_t<T>& a, const T& value, I... idx) { address(a, int64(idx)...) = value; }

// debug mode: the element index against the size, and a second index against that element's array length
namespace detail {
template <typename A>
WEFT_FN bool fabric_check(const A& a, const char* what, const char* kernel, const char* name, int64 i, int64 j,
                          int nidx) {
    int32 shape[2] = {a.shape[0], 0};
    bool ok = i >= 0 && i < shape[0];
    if (ok && nidx == 2) {
        shape[1] = view(a, i).shape[0];
        ok = j >= 0 && j < shape[1];
    }
    if (ok) return true;
    char buf[400];
    const int64 ids[2] = {i, j};
    format_index(buf, sizeof(buf), what, kernel, name, shape, nidx, ids);
    report_error(1, buf);
    return false;
}
}  // namespace detail
template <typename T, typename... I>
WEFT_FN bool check(const fabricarray_t<T>& a, const char* what, const char* kernel, const char* name, I... idx) {
    const int64 ids[2] = {int64(idx)..., 0};
    return detail::fabric_check(a, what, kernel, name, ids[0], sizeof...(I) > 1 ? ids[1] : 0, int(sizeof...(I)));
}
template <typename T, typename... I>
WEFT_FN bool check(const indexedfabricarray_t<T>& a, const char* what, const char* kernel, const char* name,
                   I... idx) {
    const int64 ids[2] = {int64(idx)..., 0};
    return detail::fabric_check(a, what, kernel, name, ids[0], sizeof...(I) > 1 ? ids[1] : 0, int(sizeof...(I)));
}

// Fabric arrays carry no gradient (as in Warp): their adjoints and backward replays do nothing
#if !WEFT_CUDA
namespace detail {
template <typename T>
inline ByteRange grad_bytes(const fabricarray_t<T>&) { return {nullptr, nullptr}; }
template <typename T>
inline ByteRange grad_bytes(const indexedfabricarray_t<T>&) { return {nullptr, nullptr}; }
}  // namespace detail
#endif
template <bool C = false, typename T, typename... I>
WEFT_FN void adj_load(const fabricarray_t<T>&, const T&, I...) {}
template <bool C = false, typename T, typename... I>
WEFT_FN void adj_load(const indexedfabricarray_t<T>&, const T&, I...) {}
template <bool C = false, typename T, typename... I>
WEFT_FN void adj_store(const fabricarray_t<T>&, T&, I...) {}
template <bool C = false, typename T, typename... I>
WEFT_FN void adj_store(const indexedfabricarray_t<T>&, T&, I...) {}
template <bool C = false, typename T, typename... I>
WEFT_FN void adj_store_consume(const fabricarray_t<T>&, T&, I...) {}
template <bool C = false, typename T, typename... I>
WEFT_FN void adj_store_consume(const indexedfabricarray_t<T>&, T&, I...) {}
template <typename T, typename... I>
WEFT_FN void adj_atomic_add(const fabricarray_t<T>&, T&, I...) {}
template <typename T, typename... I>
WEFT_FN void adj_atomic_add(const indexedfabricarray_t<T>&, T&, I...) {}
template <typename T, typename... I>
WEFT_FN void adj_atomic_sub(const fabricarray_t<T>&, T&, I...) {}
template <typename T, typename... I>
WEFT_FN void adj_atomic_sub(const indexedfabricarray_t<T>&, T&, I...) {}
template <typename T, typename... I>
WEFT_FN void adj_atomic_minmax(const fabricarray_t<T>&, const T&, T&, I...) {}
template <typename T, typename... I>
WEFT_FN void adj_atomic_minmax(const indexedfabricarray_t<T>&, const T&, T&, I...) {}
// backward replays write only into a private copy the Tape made (flag bit 0), as for plain arrays
template <bool C = false, typename T, typename... I>
WEFT_FN void replay_store(const fabricarray_t<T>& a, const T& value, I... idx) {
    if (a.flags & 1) store(a, value, idx...);
}
template <bool C = false, typename T, typename... I>
WEFT_FN void replay_store(const indexedfabricarray_t<T>& a, const T& value, I... idx) {
    if (a.fa.flags & 1) store(a, value, idx...);
}
#define WEFT_FABRIC_REPLAY(NAME)                                                                      \
    template <typename T, typename... I>                                                                 \
    WEFT_FN T replay_##NAME(const fabricarray_t<T>& a, const T& v, I... idx) {                           \
        return (a.flags & 1) ? NAME(a, v, idx...) : T();                                                 \
    }                                                                                                    \
    template <typename T, typename... I>                                                                 \
    WEFT_FN T replay_##NAME(const indexedfabricarray_t<T>& a, const T& v, I... idx) {                    \
        return (a.fa.flags & 1) ? NAME(a, v, idx...) : T();                                              \
    }
WEFT_FABRIC_REPLAY(atomic_add)
WEFT_FABRIC_REPLAY(atomic_sub)
WEFT_FABRIC_REPLAY(atomic_min)
WEFT_FABRIC_REPLAY(atomic_max)
WEFT_FABRIC_REPLAY(atomic_exch)
WEFT_FABRIC_REPLAY(atomic_and)
WEFT_FABRIC_REPLAY(atomic_or)
WEFT_FABRIC_REPLAY(atomic_xor)
#undef WEFT_FABRIC_REPLAY
template <typename T, typename... I>
WEFT_FN T replay_atomic_cas(const fabricarray_t<T>& a, const T& c, const T& v, I... idx) {
    return (a.flags & 1) ? atomic_cas(a, c, v, idx...) : T();
}
template <typename T, typename... I>
WEFT_FN T replay_atomic_cas(const indexedfabricarray_t<T>& a, const T& c, const T& v, I... idx) {
    return (a.fa.flags & 1) ? atomic_cas(a, c, v, idx...) : T();
}

}  // namespace weft
