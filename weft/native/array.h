// weft native: array views (pointer, shape, byte strides, optional gradient) and element access.
#pragma once
#include "core.h"
#include "error.h"

namespace weft {

// Layout mirrored by weft/runtime/layout.py (72 bytes): keep both in step.
template <typename T>
struct array_t {
    T* data;
    T* grad;
    int32 shape[4];
    int32 ndim;
    int32 flags;  // bit 0: replay scratch copy (backward replay may store), bit 1: consume grads on store adjoint
    int64 strides[4];  // in bytes
    // x[i] on a 1-D array, as wp.func_native snippets written against Warp's C++ API index arrays (no bounds check)
    WEFT_FN T& operator[](int64 i) const {
        return *reinterpret_cast<T*>(reinterpret_cast<char*>(data) + i * strides[0]);
    }
};

// an array as a condition: whether it has data (a launch given None passes a null array)
template <typename T>
WEFT_FN bool array_valid(const array_t<T>& a) { return a.data != nullptr; }

// a.ptr in kernel code: the address of the data (0 for a null array)
template <typename T>
WEFT_FN uint64 array_ptr(const array_t<T>& a) { return (uint64)(a.data); }

// wp.array(ptr=, shape=, dtype=) in kernel code: the extents of a contiguous array at an address. The element type
// is the one of the variable it is assigned to (the op's result type), so it converts to any array_t<T>.
struct array_at_t {
    uint64 ptr;
    int32 shape[4];
    int32 ndim;
    template <typename T>
    WEFT_FN operator array_t<T>() const {
        array_t<T> a;
        a.data = reinterpret_cast<T*>(ptr);
        a.grad = nullptr;
        a.ndim = ndim;
        a.flags = 0;
        int64 stride = int64(sizeof(T));
        for (int d = 3; d >= 0; --d) {
            a.shape[d] = shape[d];
            a.strides[d] = d < ndim ? stride : 0;
            if (d < ndim) stride *= shape[d];
        }
        return a;
    }
};
WEFT_FN array_at_t array_at(uint64 p, int32 n0) { return {p, {n0, 0, 0, 0}, 1}; }
WEFT_FN array_at_t array_at(uint64 p, int32 n0, int32 n1) { return {p, {n0, n1, 0, 0}, 2}; }
WEFT_FN array_at_t array_at(uint64 p, int32 n0, int32 n1, int32 n2) { return {p, {n0, n1, n2, 0}, 3}; }
WEFT_FN array_at_t array_at(uint64 p, int32 n0, int32 n1, int32 n2, int32 n3) { return {p, {n0, n1, n2, n3}, 4}; }

// An index into an array along each dimension, optionally remapped by index arrays (wp.indexedarray).
template <typename T>
struct indexedarray_t {
    array_t<T> arr;
    int32* indices[4];
    int32 shape[4];
};

template <typename T, int N, int NDIM>
struct fixedarray_t {
#if WEFT_CUDA
    T data[N > 0 ? N : 1];  // wp.fixedarray(shape=(0,)) (a local): NVRTC rejects zero-size arrays
#else
    T data[N];
#endif
    int32 shape[4];
    int64 strides[4];  // in elements
};

namespace detail {
template <bool C, typename T>
WEFT_FN int64 offset(const array_t<T>& a, int64 i) {
    return C ? i * int64(sizeof(T)) : i * a.strides[0];
}
template <bool C, typename T>
WEFT_FN int64 offset(const array_t<T>& a, int64 i, int64 j) {
    return i * a.strides[0] + (C ? j * int64(sizeof(T)) : j * a.strides[1]);
}
template <bool C, typename T>
WEFT_FN int64 offset(const array_t<T>& a, int64 i, int64 j, int64 k) {
    return i * a.strides[0] + j * a.strides[1] + (C ? k * int64(sizeof(T)) : k * a.strides[2]);
}
template <bool C, typename T>
WEFT_FN int64 offset(const array_t<T>& a, int64 i, int64 j, int64 k, int64 l) {
    return i * a.strides[0] + j * a.strides[1] + k * a.strides[2] + (C ? l * int64(sizeof(T)) : l * a.strides[3]);
}
// offset() modulo 2^32, in unsigned 32-bit arithmetic (no overflow): the offset itself wherever it fits 32 bits, as
// the deferred-form backward's recorded offsets do (defer_add; the entry checks grad_offsets_fit). Vectorises in
// 32-bit lanes, twice as many per vector as the 64-bit offset (measured: the rk3_update backward 1.03 -> 0.87 ms).
template <bool C, typename T>
WEFT_FN uint32 offset32(const array_t<T>& a, int64 i) {
    return uint32(i) * (C ? uint32(sizeof(T)) : uint32(a.strides[0]));
}
template <bool C, typename T>
WEFT_FN uint32 offset32(const array_t<T>& a, int64 i, int64 j) {
    return uint32(i) * uint32(a.strides[0]) + uint32(j) * (C ? uint32(sizeof(T)) : uint32(a.strides[1]));
}
template <bool C, typename T>
WEFT_FN uint32 offset32(const array_t<T>& a, int64 i, int64 j, int64 k) {
    return uint32(i) * uint32(a.strides[0]) + uint32(j) * uint32(a.strides[1]) +
           uint32(k) * (C ? uint32(sizeof(T)) : uint32(a.strides[2]));
}
template <bool C, typename T>
WEFT_FN uint32 offset32(const array_t<T>& a, int64 i, int64 j, int64 k, int64 l) {
    return uint32(i) * uint32(a.strides[0]) + uint32(j) * uint32(a.strides[1]) + uint32(k) * uint32(a.strides[2]) +
           uint32(l) * (C ? uint32(sizeof(T)) : uint32(a.strides[3]));
}
template <typename T>
WEFT_FN T* at(T* base, int64 byte_offset) {
    return reinterpret_cast<T*>(reinterpret_cast<char*>(base) + byte_offset);
}

WEFT_FN bool in_bounds(const int32* shape, int64 i) { return i >= 0 && i < shape[0]; }
WEFT_FN bool in_bounds(const int32* shape, int64 i, int64 j) {
    return i >= 0 && i < shape[0] && j >= 0 && j < shape[1];
}
WEFT_FN bool in_bounds(const int32* shape, int64 i, int64 j, int64 k) {
    return in_bounds(shape, i, j) && k >= 0 && k < shape[2];
}
WEFT_FN bool in_bounds(const int32* shape, int64 i, int64 j, int64 k, int64 l) {
    return in_bounds(shape, i, j, k) && l >= 0 && l < shape[3];
}

WEFT_FN void format_index(char* buf, int cap, const char* what, const char* kernel, const char* name,
                          const int32* shape, int ndim, const int64* idx) {
    // "<what> out of bounds in kernel K: array 'a' index [i, j] shape (n, m)"
    MessageText m(buf, cap);
    m.put(what).put(" out of bounds in kernel '").put(kernel).put("': array '").put(name).put("' index [");
    for (int d = 0; d < ndim; ++d) { if (d) m.put(", "); m.put_int(idx[d]); }
    m.put("] shape (");
    for (int d = 0; d < ndim; ++d) { if (d) m.put(", "); m.put_int(shape[d]); }
    m.put(")");
}
}  // namespace detail

// Debug mode: a vector / matrix component index computed at run time, checked against the type's extent n.
// where: "line N" of the access in the user's source.
WEFT_FN bool check_component(int64 i, int64 n, const char* kernel, const char* type, const char* where) {
    if (i >= 0 && i < n) return true;
    char buf[400];
    MessageText m(buf, int(sizeof(buf)));
    m.put("component index out of range in kernel '").put(kernel).put("': index ").put_int(i);
    m.put(" of a ").put(type).put(" (valid 0..").put_int(n - 1).put(")");
    if (*where) m.put(" at ").put(where);
    report_error(1, buf);
    return false;
}

// Debug mode: a tile element index (t[i, j], t[i] = v, wp.tile_extract) checked against [lo, n) along dimension dim
// of the tile: lo = -n for subscripts (negative ones count from the end), 0 for wp.tile_extract (as in Warp).
WEFT_FN bool check_tile_index(int64 i, int64 lo, int64 n, int dim, const char* kernel, const char* where) {
    if (i >= lo && i < n) return true;
    char buf[400];
    MessageText m(buf, int(sizeof(buf)));
    m.put("tile index out of bounds in kernel '").put(kernel).put("': coordinate dimension ").put_int(dim);
    m.put(" has index ").put_int(i).put(", outside valid range [").put_int(lo).put(", ").put_int(n).put(")");
    if (*where) m.put(" at ").put(where);
    report_error(1, buf);
    return false;
}

// ---- element access (release: no checks; debug: checked variants below)
template <bool C = false, typename T, typename... I>
WEFT_FN T& address(const array_t<T>& a, I... idx) {
    return *detail::at(a.data, detail::offset<C>(a, int64(idx)...));
}
template <unsigned N, typename T> struct vec_t;
template <unsigned R, unsigned C, typename T> struct mat_t;
template <typename T> struct quat_t;
template <typename T> struct transform_t;
namespace detail {
// Vector-like element types as n scalars of type S (n = 0: not one).
template <typename T> struct flat_ { using S = T; static constexpr unsigned n = 0; };
template <unsigned N, typename T> struct flat_<vec_t<N, T>> { using S = T; static constexpr unsigned n = N; };
template <unsigned R, unsigned C, typename T> struct flat_<mat_t<R, C, T>> {
    using S = T;
    static constexpr unsigned n = R * C;
};
template <typename T> struct flat_<quat_t<T>> { using S = T; static constexpr unsigned n = 4; };
template <typename T> struct flat_<transform_t<T>> { using S = T; static constexpr unsigned n = 7; };
}  // namespace detail

// A vector-like element of a contiguous 1-d array is read as n scalars at scalar index i * n + k, not as one struct
// copy: GCC's vectoriser turns the struct copy's component loads (a pointer plus a constant byte offset) into gathers
// only for the first component ("not suitable for gather load"), so a kernel that reads x[idx[tid]] stayed scalar;
// with scalar indices every component is an ordinary gather. Groups of n scalars per element that GCC cannot
// deinterleave (n not a power of two or 3: mat33, transform, spatial vectors) would still stop the loop ("not
// falling back to elementwise accesses"), so those step by the array's stride read at run time (the same value in a
// contiguous launch), which GCC vectorises element by element.
template <bool C = false, typename T, typename... I>
WEFT_FN T load(const array_t<T>& a, I... idx) {
    using F = detail::flat_<T>;
    if constexpr (C && sizeof...(I) == 1 && F::n > 0 && sizeof(T) == F::n * sizeof(typename F::S)) {
        using S = typename F::S;
        constexpr unsigned n = F::n;
        constexpr bool grouped = (n & (n - 1)) == 0 || n == 3;
        const int64 i = int64(idx...);
        const int64 e = grouped ? i * int64(n) : i * (a.strides[0] / int64(sizeof(S)));
        const S* p = reinterpret_cast<const S*>(a.data) + e;
        T r;
        S* q = reinterpret_cast<S*>(&r);
        for (unsigned k = 0; k < n; ++k) q[k] = p[k];
        return r;
    } else {
        return *detail::at(a.data, detail::offset<C>(a, int64(idx)...));
    }
}
// Stores of vector-like elements the same way (a mat33 store was a group of 9 scalars GCC would not vectorise).
template <bool C = false, typename T, typename... I>
WEFT_FN void store(const array_t<T>& a, const T& value, I... idx) {
    using F = detail::flat_<T>;
    if constexpr (C && sizeof...(I) == 1 && F::n > 0 && sizeof(T) == F::n * sizeof(typename F::S)) {
        using S = typename F::S;
        constexpr unsigned n = F::n;
        constexpr bool grouped = (n & (n - 1)) == 0 || n == 3;
        const int64 i = int64(idx...);
        const int64 e = grouped ? i * int64(n) : i * (a.strides[0] / int64(sizeof(S)));
        S* p = reinterpret_cast<S*>(a.data) + e;
        const S* q = reinterpret_cast<const S*>(&value);
        for (unsigned k = 0; k < n; ++k) p[k] = q[k];
    } else {
        *detail::at(a.data, detail::offset<C>(a, int64(idx)...)) = value;
    }
}
template <bool C = false, typename T, typename... I>
WEFT_FN T* grad_address(const array_t<T>& a, I... idx) {
    return a.grad ? detail::at(a.grad, detail::offset<C>(a, int64(idx)...)) : nullptr;
}

// wp.adjoint[a] in a @wp.func_grad: a view of a's gradient (no gradient of its own); an array without a gradient
// gives an empty view, so tile loads of it read zeros and tile stores skip every element.
template <typename T>
WEFT_FN array_t<T> grad_view(const array_t<T>& a) {
    array_t<T> g = a;
    g.data = a.grad;
    g.grad = nullptr;
    g.flags = 0;
    if (a.grad == nullptr)
        for (int d = 0; d < 4; ++d) g.shape[d] = 0;
    return g;
}

template <typename T, typename... I>
WEFT_FN bool check(const array_t<T>& a, const char* what, const char* kernel, const char* name, I... idx) {
    if (a.data != nullptr && detail::in_bounds(a.shape, int64(idx)...)) return true;
    char buf[400];
    int64 ids[4] = {int64(idx)...};
    if (a.data == nullptr) {
        detail::format_index(buf, sizeof(buf), "null array access", kernel, name, a.shape, sizeof...(I), ids);
    } else {
        detail::format_index(buf, sizeof(buf), what, kernel, name, a.shape, sizeof...(I), ids);
    }
    report_error(1, buf);
    return false;
}

// Sub-array a[i] of a multi-dimensional array.
template <typename T, typename... I>
WEFT_FN array_t<T> view(const array_t<T>& a, I... idx) {
    constexpr int k = sizeof...(I);
    int64 ids[4] = {int64(idx)...};
    array_t<T> out;
    int64 off = 0;
    for (int d = 0; d < k; ++d) off += ids[d] * a.strides[d];
    out.data = detail::at(a.data, off);
    out.grad = a.grad ? detail::at(a.grad, off) : nullptr;
    out.ndim = a.ndim - k;
    out.flags = a.flags;
    for (int d = 0; d < 4; ++d) {
        out.shape[d] = d + k < 4 ? a.shape[d + k] : 0;
        out.strides[d] = d + k < 4 ? a.strides[d + k] : 0;
    }
    return out;
}

// a[i:j:k, l, ...]: a strided view. ND leading dimensions are given, those in the bitmask K as start, stop, step
// (kSliceNone for an omitted bound, NumPy's rules: negative bounds count from the end, bounds are clamped), the
// others as one index (dropped from the result). Dimensions past ND are kept whole.
constexpr int64 kSliceNone = -9223372036854775807LL - 1;  // INT64_MIN: NVRTC has no <cstdint> macros
namespace detail {
WEFT_FN int64 slice_dim(int64 n, int64& start, int64 stop, int64& step) {
    if (step == kSliceNone) step = 1;
    if (step == 0) { report_error(1, "slice step cannot be zero"); step = 1; return 0; }
    const int64 lo = step > 0 ? 0 : -1, hi = step > 0 ? n : n - 1;
    if (start == kSliceNone) start = step > 0 ? 0 : n - 1;
    else { if (start < 0) start += n; start = start < lo ? lo : (start > hi ? hi : start); }
    if (stop == kSliceNone) stop = step > 0 ? n : -1;
    else { if (stop < 0) stop += n; stop = stop < lo ? lo : (stop > hi ? hi : stop); }
    const int64 len = step > 0 ? (stop - start + step - 1) / step : (start - stop - step - 1) / (-step);
    return len > 0 ? len : 0;
}
}  // namespace detail
template <int ND, int K, typename T, typename... I>
WEFT_FN array_t<T> slice(const array_t<T>& a, I... vals) {
    const int64 v[] = {int64(vals)..., 0};
    array_t<T> out;
    int64 off = 0;
    int o = 0, p = 0;
    for (int d = 0; d < a.ndim && d < 4; ++d) {
        const int64 n = a.shape[d];
        if (d < ND && !((K >> d) & 1)) {  // an index
            const int64 i = v[p] < 0 ? v[p] + n : v[p];
            off += i * a.strides[d];
            ++p;
            continue;
        }
        int64 start = kSliceNone, stop = kSliceNone, step = kSliceNone;
        if (d < ND) { start = v[p]; stop = v[p + 1]; step = v[p + 2]; p += 3; }
        const int64 len = detail::slice_dim(n, start, stop, step);
        if (len > 0) off += start * a.strides[d];
        out.shape[o] = int32(len);
        out.strides[o] = a.strides[d] * step;
        ++o;
    }
    out.ndim = o;
    for (; o < 4; ++o) { out.shape[o] = 0; out.strides[o] = 0; }
    out.data = detail::at(a.data, off);
    out.grad = a.grad ? detail::at(a.grad, off) : nullptr;
    out.flags = a.flags;
    return out;
}

// ---- indexed arrays
template <typename T, typename... I>
WEFT_FN T& address(const indexedarray_t<T>& a, I... idx) {
    int64 ids[4] = {int64(idx)...};
    for (int d = 0; d < int(sizeof...(I)); ++d)
        if (a.indices[d]) ids[d] = a.indices[d][ids[d]];
    int64 off = 0;
    for (int d = 0; d < int(sizeof...(I)); ++d) off += ids[d] * a.arr.strides[d];
    return *detail::at(a.arr.data, off);
}
template <bool C = false, typename T, typename... I>
WEFT_FN T load(const indexedarray_t<T>& a, I... idx) { return address(a, idx...); }
template <bool C = false, typename T, typename... I>
WEFT_FN void store(const indexedarray_t<T>& a, const T& value, I... idx) { address(a, idx...) = value; }
// a[i] of an indexed array: the remaining dimensions, still indexed (the leading indices are remapped here)
template <typename T, typename... I>
WEFT_FN indexedarray_t<T> view(const indexedarray_t<T>& a, I... idx) {
    constexpr int k = sizeof...(I);
    int64 ids[4] = {int64(idx)...};
    int64 off = 0;
    for (int d = 0; d < k; ++d) off += (a.indices[d] ? int64(a.indices[d][ids[d]]) : ids[d]) * a.arr.strides[d];
    indexedarray_t<T> out;
    out.arr.data = detail::at(a.arr.data, off);
    out.arr.grad = a.arr.grad ? detail::at(a.arr.grad, off) : nullptr;
    out.arr.ndim = a.arr.ndim - k;
    out.arr.flags = a.arr.flags;
    for (int d = 0; d < 4; ++d) {
        const bool in = d + k < 4;
        out.arr.shape[d] = in ? a.arr.shape[d + k] : 0;
        out.arr.strides[d] = in ? a.arr.strides[d + k] : 0;
        out.indices[d] = in ? a.indices[d + k] : nullptr;
        out.shape[d] = in ? a.shape[d + k] : 0;
    }
    return out;
}
template <typename T, typename... I>
WEFT_FN bool check(const indexedarray_t<T>& a, const char* what, const char* kernel, const char* name, I... idx) {
    if (detail::in_bounds(a.shape, int64(idx)...)) return true;
    char buf[400];
    int64 ids[4] = {int64(idx)...};
    detail::format_index(buf, sizeof(buf), what, kernel, name, a.shape, sizeof...(I), ids);
    report_error(1, buf);
    return false;
}

// ---- kernel-local fixed arrays (row-major)
template <bool C = false, typename T, int N, int D, typename... I>
WEFT_FN T load(const fixedarray_t<T, N, D>& a, I... idx) {
    int64 ids[4] = {int64(idx)...};
    int64 off = 0;
    for (int d = 0; d < int(sizeof...(I)); ++d) off += ids[d] * a.strides[d];
    return a.data[off];
}
template <bool C = false, typename T, int N, int D, typename... I>
WEFT_FN void store(fixedarray_t<T, N, D>& a, const T& value, I... idx) {
    int64 ids[4] = {int64(idx)...};
    int64 off = 0;
    for (int d = 0; d < int(sizeof...(I)); ++d) off += ids[d] * a.strides[d];
    a.data[off] = value;
}
// a[i] of a local array: a plain array view of its storage (element strides become byte strides; no gradient)
template <typename T, int N, int D, typename... I>
WEFT_FN array_t<T> view(const fixedarray_t<T, N, D>& a, I... idx) {
    constexpr int k = sizeof...(I);
    int64 ids[4] = {int64(idx)...};
    int64 off = 0;
    for (int d = 0; d < k; ++d) off += ids[d] * a.strides[d];
    array_t<T> out;
    out.data = const_cast<T*>(a.data) + off;
    out.grad = nullptr;
    out.ndim = D - k;
    out.flags = 0;
    for (int d = 0; d < 4; ++d) {
        out.shape[d] = d + k < D ? a.shape[d + k] : 0;
        out.strides[d] = d + k < D ? a.strides[d + k] * int64(sizeof(T)) : 0;
    }
    return out;
}
// adjoints: the adjoint array has no shape of its own (it starts zeroed), so the primal's strides index it
template <typename T, int N, int D, typename... I>
WEFT_FN void adj_load_fixed(const fixedarray_t<T, N, D>& a, fixedarray_t<T, N, D>& adj_a, const T& adj_value,
                            I... idx) {
    int64 ids[4] = {int64(idx)...};
    int64 off = 0;
    for (int d = 0; d < int(sizeof...(I)); ++d) off += ids[d] * a.strides[d];
    adj_a.data[off] += adj_value;
}
// a store overwrites the element: its adjoint moves into the stored value and the old value's becomes zero
template <typename T, int N, int D, typename... I>
WEFT_FN void adj_store_fixed(const fixedarray_t<T, N, D>& a, fixedarray_t<T, N, D>& adj_a, T& adj_value, I... idx) {
    int64 ids[4] = {int64(idx)...};
    int64 off = 0;
    for (int d = 0; d < int(sizeof...(I)); ++d) off += ids[d] * a.strides[d];
    adj_value += adj_a.data[off];
    adj_a.data[off] = T();
}
// whole-array adjoint accumulation (copies of a local array)
template <typename T, int N, int D>
WEFT_FN fixedarray_t<T, N, D>& operator+=(fixedarray_t<T, N, D>& a, const fixedarray_t<T, N, D>& b) {
    for (int i = 0; i < N; ++i) a.data[i] += b.data[i];
    return a;
}
template <typename T, int N, int D, typename... I>
WEFT_FN bool check(const fixedarray_t<T, N, D>& a, const char* what, const char* kernel, const char* name, I... idx) {
    if (detail::in_bounds(a.shape, int64(idx)...)) return true;
    char buf[400];
    int64 ids[4] = {int64(idx)...};
    detail::format_index(buf, sizeof(buf), what, kernel, name, a.shape, sizeof...(I), ids);
    report_error(1, buf);
    return false;
}
template <typename T, int N, int D>
WEFT_FN void init_fixed(fixedarray_t<T, N, D>& a, int32 s0, int32 s1 = 1, int32 s2 = 1, int32 s3 = 1) {
    for (int i = 0; i < N; ++i) a.data[i] = T();
    int32 s[4] = {s0, s1, s2, s3};
    int64 stride = 1;
    for (int d = D - 1; d >= 0; --d) { a.shape[d] = s[d]; a.strides[d] = stride; stride *= s[d]; }
    for (int d = D; d < 4; ++d) { a.shape[d] = 0; a.strides[d] = 0; }
}

}  // namespace weft
