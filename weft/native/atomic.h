// weft native: atomics on array elements (scalars, and component-wise on vectors / matrices).
#pragma once
#include "core.h"
#include "half.h"
#include "vec.h"
#include "mat.h"
#include "quat.h"
#include "transform.h"
#include "array.h"
#if !WEFT_CUDA
#include <initializer_list>
#endif

namespace weft {
namespace atom {

#if !WEFT_CUDA
template <typename T>
WEFT_FN T fetch_add(T* p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
template <typename T>
WEFT_FN T fetch_sub(T* p, T v) { return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED); }

// floating point (and half): compare-and-swap on the bit pattern
template <typename F, typename Bits, typename Op>
WEFT_FN F cas_loop(F* p, F v, Op op) {
    Bits* bp = reinterpret_cast<Bits*>(p);
    Bits old_bits = __atomic_load_n(bp, __ATOMIC_RELAXED);
    for (;;) {
        F old_val;
        memcpy(&old_val, &old_bits, sizeof(F));
        F new_val = op(old_val, v);
        Bits new_bits;
        memcpy(&new_bits, &new_val, sizeof(F));
        if (__atomic_compare_exchange_n(bp, &old_bits, new_bits, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return old_val;
    }
}
struct Add { template <typename F> WEFT_FN F operator()(F a, F b) const { return a + b; } };
struct Sub { template <typename F> WEFT_FN F operator()(F a, F b) const { return a - b; } };
// fmin / fmax (as weft::min / max): a NaN in the array is replaced, a NaN value leaves a number in place
struct Min { template <typename F> WEFT_FN F operator()(F a, F b) const { return detail::takes_min_(a, b) ? b : a; } };
struct Max { template <typename F> WEFT_FN F operator()(F a, F b) const { return detail::takes_max_(a, b) ? b : a; } };

WEFT_FN float fetch_add(float* p, float v) { return cas_loop<float, uint32>(p, v, Add()); }
WEFT_FN double fetch_add(double* p, double v) { return cas_loop<double, uint64>(p, v, Add()); }
WEFT_FN half fetch_add(half* p, half v) { return cas_loop<half, uint16>(p, v, Add()); }
WEFT_FN bfloat16 fetch_add(bfloat16* p, bfloat16 v) { return cas_loop<bfloat16, uint16>(p, v, Add()); }
WEFT_FN float fetch_sub(float* p, float v) { return cas_loop<float, uint32>(p, v, Sub()); }
WEFT_FN double fetch_sub(double* p, double v) { return cas_loop<double, uint64>(p, v, Sub()); }
WEFT_FN half fetch_sub(half* p, half v) { return cas_loop<half, uint16>(p, v, Sub()); }
WEFT_FN bfloat16 fetch_sub(bfloat16* p, bfloat16 v) { return cas_loop<bfloat16, uint16>(p, v, Sub()); }

template <typename T>
WEFT_FN T fetch_min(T* p, T v) {
    T old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v < old && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
    return old;
}
template <typename T>
WEFT_FN T fetch_max(T* p, T v) {
    T old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v > old && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
    return old;
}
WEFT_FN float fetch_min(float* p, float v) { return cas_loop<float, uint32>(p, v, Min()); }
WEFT_FN double fetch_min(double* p, double v) { return cas_loop<double, uint64>(p, v, Min()); }
WEFT_FN half fetch_min(half* p, half v) { return cas_loop<half, uint16>(p, v, Min()); }
WEFT_FN bfloat16 fetch_min(bfloat16* p, bfloat16 v) { return cas_loop<bfloat16, uint16>(p, v, Min()); }
WEFT_FN float fetch_max(float* p, float v) { return cas_loop<float, uint32>(p, v, Max()); }
WEFT_FN double fetch_max(double* p, double v) { return cas_loop<double, uint64>(p, v, Max()); }
WEFT_FN half fetch_max(half* p, half v) { return cas_loop<half, uint16>(p, v, Max()); }
WEFT_FN bfloat16 fetch_max(bfloat16* p, bfloat16 v) { return cas_loop<bfloat16, uint16>(p, v, Max()); }

// bitwise read-modify-write of integers
template <typename T>
WEFT_FN T fetch_and(T* p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_RELAXED); }
template <typename T>
WEFT_FN T fetch_or(T* p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); }
template <typename T>
WEFT_FN T fetch_xor(T* p, T v) { return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED); }

template <typename T>
WEFT_FN T exchange(T* p, T v) {
    T old;
    __atomic_exchange(p, &v, &old, __ATOMIC_RELAXED);
    return old;
}
template <typename T>
WEFT_FN T compare_exchange(T* p, T cmp, T v) {
    __atomic_compare_exchange(p, &cmp, &v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return cmp;  // holds the old value either way
}
#else
template <typename T> WEFT_DEVICE T fetch_add(T* p, T v) { return atomicAdd(p, v); }
template <typename T> WEFT_DEVICE T fetch_sub(T* p, T v) { return atomicAdd(p, T(-v)); }
template <typename T> WEFT_DEVICE T fetch_min(T* p, T v) { return atomicMin(p, v); }
template <typename T> WEFT_DEVICE T fetch_max(T* p, T v) { return atomicMax(p, v); }
WEFT_DEVICE float fetch_min(float* p, float v) {
    int* ip = reinterpret_cast<int*>(p);
    int old = *ip;
    while (detail::takes_min_(__int_as_float(old), v)) {
        int prev = atomicCAS(ip, old, __float_as_int(v));
        if (prev == old) break;
        old = prev;
    }
    return __int_as_float(old);
}
WEFT_DEVICE float fetch_max(float* p, float v) {
    int* ip = reinterpret_cast<int*>(p);
    int old = *ip;
    while (detail::takes_max_(__int_as_float(old), v)) {
        int prev = atomicCAS(ip, old, __float_as_int(v));
        if (prev == old) break;
        old = prev;
    }
    return __int_as_float(old);
}
WEFT_DEVICE double fetch_min(double* p, double v) {
    unsigned long long* ip = reinterpret_cast<unsigned long long*>(p);
    unsigned long long old = *ip;
    while (detail::takes_min_(__longlong_as_double(old), v)) {
        unsigned long long prev = atomicCAS(ip, old, (unsigned long long)__double_as_longlong(v));
        if (prev == old) break;
        old = prev;
    }
    return __longlong_as_double(old);
}
WEFT_DEVICE double fetch_max(double* p, double v) {
    unsigned long long* ip = reinterpret_cast<unsigned long long*>(p);
    unsigned long long old = *ip;
    while (detail::takes_max_(__longlong_as_double(old), v)) {
        unsigned long long prev = atomicCAS(ip, old, (unsigned long long)__double_as_longlong(v));
        if (prev == old) break;
        old = prev;
    }
    return __longlong_as_double(old);
}
WEFT_DEVICE half fetch_add(half* p, half v) {
    // 16-bit CAS emulated on the containing aligned 32-bit word
    size_t addr = reinterpret_cast<size_t>(p);
    unsigned int* base = reinterpret_cast<unsigned int*>(addr & ~size_t(3));
    unsigned int shift = (addr & 2) ? 16 : 0;
    unsigned int old = *base, assumed;
    do {
        assumed = old;
        half cur; cur.bits = (unsigned short)((assumed >> shift) & 0xffff);
        half nv = half(float(cur) + float(v));
        unsigned int repl = (assumed & ~(0xffffu << shift)) | ((unsigned int)nv.bits << shift);
        old = atomicCAS(base, assumed, repl);
    } while (assumed != old);
    half r; r.bits = (unsigned short)((old >> shift) & 0xffff);
    return r;
}
WEFT_DEVICE half fetch_sub(half* p, half v) { return fetch_add(p, half(-float(v))); }
// 8- and 16-bit integers and the half operations CUDA has no instruction for: a compare-and-swap loop on the aligned
// 32-bit word that holds the value, replacing only its bytes
WEFT_DEVICE unsigned int sub_bits(int8 v) { return (unsigned char)v; }
WEFT_DEVICE unsigned int sub_bits(uint8 v) { return v; }
WEFT_DEVICE unsigned int sub_bits(int16 v) { return (unsigned short)v; }
WEFT_DEVICE unsigned int sub_bits(uint16 v) { return v; }
WEFT_DEVICE unsigned int sub_bits(half v) { return v.bits; }
// bfloat16 before sub_word_rmw: the call inside it sees only the overloads declared above it (weft::atom is not
// an associated namespace of weft::bfloat16), and implicit conversions would make the call ambiguous
WEFT_DEVICE unsigned int sub_bits(bfloat16 v) { return v.bits; }
template <typename T> WEFT_DEVICE T sub_value(unsigned int b) { return T(b); }
template <> WEFT_DEVICE int8 sub_value<int8>(unsigned int b) { return int8((unsigned char)b); }
template <> WEFT_DEVICE int16 sub_value<int16>(unsigned int b) { return int16((unsigned short)b); }
template <> WEFT_DEVICE half sub_value<half>(unsigned int b) { half h; h.bits = (unsigned short)b; return h; }
template <> WEFT_DEVICE bfloat16 sub_value<bfloat16>(unsigned int b) { return bfloat16::from_bits((unsigned short)b); }
template <typename T, typename Op>
WEFT_DEVICE T sub_word_rmw(T* p, Op op) {
    const size_t addr = reinterpret_cast<size_t>(p);
    unsigned int* base = reinterpret_cast<unsigned int*>(addr & ~size_t(3));
    const unsigned int shift = unsigned(addr & 3) * 8u;
    const unsigned int mask = (sizeof(T) == 1 ? 0xffu : 0xffffu) << shift;
    unsigned int old = *base, assumed;
    T cur;
    do {
        assumed = old;
        cur = sub_value<T>((assumed & mask) >> shift);
        const unsigned int repl = (assumed & ~mask) | ((sub_bits(op(cur)) << shift) & mask);
        old = atomicCAS(base, assumed, repl);
    } while (assumed != old);
    return cur;
}
#define WEFT_SUBWORD_ATOMICS(T)                                                                               \
    WEFT_DEVICE T fetch_add(T* p, T v) { return sub_word_rmw(p, [=](T c) { return T(c + v); }); }             \
    WEFT_DEVICE T fetch_sub(T* p, T v) { return sub_word_rmw(p, [=](T c) { return T(c - v); }); }             \
    WEFT_DEVICE T fetch_min(T* p, T v) { return sub_word_rmw(p, [=](T c) { return v < c ? v : c; }); }        \
    WEFT_DEVICE T fetch_max(T* p, T v) { return sub_word_rmw(p, [=](T c) { return v > c ? v : c; }); }        \
    WEFT_DEVICE T exchange(T* p, T v) { return sub_word_rmw(p, [=](T) { return v; }); }                       \
    WEFT_DEVICE T fetch_and(T* p, T v) { return sub_word_rmw(p, [=](T c) { return T(c & v); }); }             \
    WEFT_DEVICE T fetch_or(T* p, T v) { return sub_word_rmw(p, [=](T c) { return T(c | v); }); }              \
    WEFT_DEVICE T fetch_xor(T* p, T v) { return sub_word_rmw(p, [=](T c) { return T(c ^ v); }); }             \
    WEFT_DEVICE T compare_exchange(T* p, T cmp, T v) {                                                        \
        return sub_word_rmw(p, [=](T c) { return c == cmp ? v : c; });                                        \
    }
WEFT_SUBWORD_ATOMICS(int8)
WEFT_SUBWORD_ATOMICS(uint8)
WEFT_SUBWORD_ATOMICS(int16)
WEFT_SUBWORD_ATOMICS(uint16)
#undef WEFT_SUBWORD_ATOMICS
WEFT_DEVICE half fetch_min(half* p, half v) {
    return sub_word_rmw(p, [=](half c) { return detail::takes_min_(float(c), float(v)) ? v : c; });
}
WEFT_DEVICE half fetch_max(half* p, half v) {
    return sub_word_rmw(p, [=](half c) { return detail::takes_max_(float(c), float(v)) ? v : c; });
}
WEFT_DEVICE half exchange(half* p, half v) { return sub_word_rmw(p, [=](half) { return v; }); }
WEFT_DEVICE half compare_exchange(half* p, half cmp, half v) {
    return sub_word_rmw(p, [=](half c) { return c.bits == cmp.bits ? v : c; });
}
WEFT_DEVICE bfloat16 fetch_add(bfloat16* p, bfloat16 v) {
    return sub_word_rmw(p, [=](bfloat16 c) { return bfloat16(float(c) + float(v)); });
}
WEFT_DEVICE bfloat16 fetch_sub(bfloat16* p, bfloat16 v) {
    return sub_word_rmw(p, [=](bfloat16 c) { return bfloat16(float(c) - float(v)); });
}
WEFT_DEVICE bfloat16 fetch_min(bfloat16* p, bfloat16 v) {
    return sub_word_rmw(p, [=](bfloat16 c) { return detail::takes_min_(float(c), float(v)) ? v : c; });
}
WEFT_DEVICE bfloat16 fetch_max(bfloat16* p, bfloat16 v) {
    return sub_word_rmw(p, [=](bfloat16 c) { return detail::takes_max_(float(c), float(v)) ? v : c; });
}
WEFT_DEVICE bfloat16 exchange(bfloat16* p, bfloat16 v) { return sub_word_rmw(p, [=](bfloat16) { return v; }); }
template <typename T> WEFT_DEVICE T exchange(T* p, T v) { return atomicExch(p, v); }
template <typename T> WEFT_DEVICE T fetch_and(T* p, T v) { return atomicAnd(p, v); }
template <typename T> WEFT_DEVICE T fetch_or(T* p, T v) { return atomicOr(p, v); }
template <typename T> WEFT_DEVICE T fetch_xor(T* p, T v) { return atomicXor(p, v); }
template <typename T> WEFT_DEVICE T compare_exchange(T* p, T cmp, T v) { return atomicCAS(p, cmp, v); }
// CUDA has no signed 64-bit add/exch/CAS and no double exch/CAS: the same bits through unsigned long long
typedef unsigned long long ull_;
WEFT_DEVICE int64 fetch_add(int64* p, int64 v) { return int64(atomicAdd(reinterpret_cast<ull_*>(p), ull_(v))); }
WEFT_DEVICE int64 fetch_sub(int64* p, int64 v) { return int64(atomicAdd(reinterpret_cast<ull_*>(p), ull_(-v))); }
WEFT_DEVICE int64 exchange(int64* p, int64 v) { return int64(atomicExch(reinterpret_cast<ull_*>(p), ull_(v))); }
WEFT_DEVICE int64 fetch_and(int64* p, int64 v) { return int64(atomicAnd(reinterpret_cast<ull_*>(p), ull_(v))); }
WEFT_DEVICE int64 fetch_or(int64* p, int64 v) { return int64(atomicOr(reinterpret_cast<ull_*>(p), ull_(v))); }
WEFT_DEVICE int64 fetch_xor(int64* p, int64 v) { return int64(atomicXor(reinterpret_cast<ull_*>(p), ull_(v))); }
WEFT_DEVICE int64 compare_exchange(int64* p, int64 cmp, int64 v) {
    return int64(atomicCAS(reinterpret_cast<ull_*>(p), ull_(cmp), ull_(v)));
}
WEFT_DEVICE double exchange(double* p, double v) {
    return __longlong_as_double(
        (long long)atomicExch(reinterpret_cast<ull_*>(p), ull_(__double_as_longlong(v))));
}
WEFT_DEVICE double compare_exchange(double* p, double cmp, double v) {
    return __longlong_as_double((long long)atomicCAS(reinterpret_cast<ull_*>(p), ull_(__double_as_longlong(cmp)),
                                                     ull_(__double_as_longlong(v))));
}
WEFT_DEVICE float compare_exchange(float* p, float cmp, float v) {
    return __int_as_float(atomicCAS(reinterpret_cast<int*>(p), __float_as_int(cmp), __float_as_int(v)));
}
#endif

// component-wise on composite types
#define WEFT_ATOMIC_COMPOSITE(NAME)                                                         \
    template <unsigned N, typename T>                                                       \
    WEFT_FN vec_t<N, T> NAME(vec_t<N, T>* p, vec_t<N, T> v) {                               \
        vec_t<N, T> old;                                                                    \
        for (unsigned i = 0; i < N; ++i) old.c[i] = NAME(&p->c[i], v.c[i]);                 \
        return old;                                                                         \
    }                                                                                       \
    template <unsigned R, unsigned C, typename T>                                           \
    WEFT_FN mat_t<R, C, T> NAME(mat_t<R, C, T>* p, mat_t<R, C, T> v) {                      \
        mat_t<R, C, T> old;                                                                 \
        for (unsigned i = 0; i < R; ++i) old.row[i] = NAME(&p->row[i], v.row[i]);           \
        return old;                                                                         \
    }                                                                                       \
    template <typename T>                                                                   \
    WEFT_FN quat_t<T> NAME(quat_t<T>* p, quat_t<T> v) {                                     \
        quat_t<T> old;                                                                      \
        for (int i = 0; i < 4; ++i) old[i] = NAME(&(*p)[i], v[i]);                          \
        return old;                                                                         \
    }                                                                                       \
    template <typename T>                                                                   \
    WEFT_FN transform_t<T> NAME(transform_t<T>* p, transform_t<T> v) {                      \
        transform_t<T> old;                                                                 \
        for (int i = 0; i < 7; ++i) old[i] = NAME(&(*p)[i], v[i]);                         \
        return old;                                                                         \
    }
WEFT_ATOMIC_COMPOSITE(fetch_add)
WEFT_ATOMIC_COMPOSITE(fetch_sub)
WEFT_ATOMIC_COMPOSITE(fetch_min)
WEFT_ATOMIC_COMPOSITE(fetch_max)
WEFT_ATOMIC_COMPOSITE(fetch_and)
WEFT_ATOMIC_COMPOSITE(fetch_or)
WEFT_ATOMIC_COMPOSITE(fetch_xor)
#undef WEFT_ATOMIC_COMPOSITE

}  // namespace atom

// array-level atomics: value first, then indices (as store)
template <typename A, typename T, typename... I>
WEFT_FN T atomic_add(const A& a, const T& v, I... idx) { return atom::fetch_add(&address(a, idx...), v); }
template <typename A, typename T, typename... I>
WEFT_FN T atomic_sub(const A& a, const T& v, I... idx) { return atom::fetch_sub(&address(a, idx...), v); }
template <typename A, typename T, typename... I>
WEFT_FN T atomic_min(const A& a, const T& v, I... idx) { return atom::fetch_min(&address(a, idx...), v); }
template <typename A, typename T, typename... I>
WEFT_FN T atomic_max(const A& a, const T& v, I... idx) { return atom::fetch_max(&address(a, idx...), v); }
template <typename A, typename T, typename... I>
WEFT_FN T atomic_exch(const A& a, const T& v, I... idx) { return atom::exchange(&address(a, idx...), v); }
template <typename A, typename T, typename... I>
WEFT_FN T atomic_and(const A& a, const T& v, I... idx) { return atom::fetch_and(&address(a, idx...), v); }
template <typename A, typename T, typename... I>
WEFT_FN T atomic_or(const A& a, const T& v, I... idx) { return atom::fetch_or(&address(a, idx...), v); }
template <typename A, typename T, typename... I>
WEFT_FN T atomic_xor(const A& a, const T& v, I... idx) { return atom::fetch_xor(&address(a, idx...), v); }
template <typename A, typename T, typename... I>
WEFT_FN T atomic_cas(const A& a, const T& cmp, const T& v, I... idx) {
    return atom::compare_exchange(&address(a, idx...), cmp, v);
}
// Array flag bit 2: no other thread of this launch adds into the elements of this array's gradient, so adjoint
// accumulation may use plain adds. Only a CPU backward entry sets it, on its private copy of the arguments: on one
// thread for every array argument, on several for arrays each thread reads only at its own index (see
// grad_exclusive) and for gradients it redirected to a per-thread buffer. Views inherit it with the other flags.
constexpr int32 kGradPlain = 4;

#if !WEFT_CUDA
// Several threads may add here: atomically, unless the launch runs on one thread (a kernel whose entry does not set
// kGradPlain, e.g. a tile kernel, or an array held in a struct). Out of line: the hot path is the plain add.
template <typename T>
__attribute__((noinline, cold)) void grad_add_shared(T* g, T v) {
    if (running_serially())
        *g += v;
    else
        atom::fetch_add(g, v);
}
#endif

// adjoint accumulation into an array's gradient (no-op when the array has none); C: contiguous innermost dimension
template <bool C = false, typename T, typename... I>
WEFT_FN void grad_add(const array_t<T>& a, const T& v, I... idx) {
    if (!a.grad) return;
    T* g = detail::at(a.grad, detail::offset<C>(a, int64(idx)...));
#if !WEFT_CUDA
    if (a.flags & kGradPlain)
        *g += v;
    else
        grad_add_shared(g, v);
#else
    atom::fetch_add(g, v);
#endif
}
#if !WEFT_CUDA
namespace detail {
struct ByteRange {
    const char* lo;
    const char* hi;  // one past the last byte; lo == hi: empty
};
// the bytes of a's gradient that indices within a's shape can reach (empty when a has no gradient)
template <typename T>
inline ByteRange grad_bytes(const array_t<T>& a) {
    if (!a.grad) return {nullptr, nullptr};
    int64 lo = 0, hi = 0;
    for (int d = 0; d < a.ndim; ++d) {
        if (a.shape[d] <= 0) return {nullptr, nullptr};
        const int64 span = int64(a.shape[d] - 1) * a.strides[d];
        (span < 0 ? lo : hi) += span;
    }
    const char* base = reinterpret_cast<const char*>(a.grad);
    return {base + lo, base + hi + sizeof(T)};
}
template <typename T>
inline ByteRange grad_bytes(const indexedarray_t<T>& a) { return grad_bytes(a.arr); }
// distinct indices address disjoint elements: sorted by size, each stride steps over the whole extent of the
// smaller ones (no zero strides, no overlapping views)
template <typename T>
inline bool distinct_elements(const array_t<T>& a) {
    int64 stride[4], extent[4];
    int n = 0;
    for (int d = 0; d < a.ndim && d < 4; ++d) {
        if (a.shape[d] <= 1) continue;
        int64 s = a.strides[d] < 0 ? -a.strides[d] : a.strides[d];
        int k = n++;
        for (; k > 0 && stride[k - 1] > s; --k) {
            stride[k] = stride[k - 1];
            extent[k] = extent[k - 1];
        }
        stride[k] = s;
        extent[k] = a.shape[d];
    }
    int64 covered = int64(sizeof(T));
    for (int k = 0; k < n; ++k) {
        if (stride[k] < covered) return false;
        covered = stride[k] * extent[k];
    }
    return true;
}
}  // namespace detail

namespace detail {
// no range of a shares a byte with a range of b
inline bool ranges_disjoint(std::initializer_list<ByteRange> a, std::initializer_list<ByteRange> b) {
    for (const ByteRange& x : a)
        for (const ByteRange& y : b)
            if (x.lo != x.hi && y.lo != y.hi && x.lo < y.hi && y.lo < x.hi) return false;
    return true;
}
}  // namespace detail

// Whether several threads may add into a's gradient with plain adds, given that each thread of the launch adds only
// at its own launch index (the code generator checked that): distinct indices must reach distinct elements, and no
// other array argument's gradient (grads[k], k != self) may share memory with this one.
template <typename T>
inline bool grad_exclusive(const array_t<T>& a, const detail::ByteRange* grads, int n, int self) {
    if (!a.grad || !detail::distinct_elements(a)) return false;
    const detail::ByteRange r = grads[self];
    for (int k = 0; k < n; ++k) {
        const detail::ByteRange o = grads[k];
        if (k != self && o.lo != o.hi && r.lo < o.hi && o.lo < r.hi) return false;
    }
    return true;
}

struct PrivateGrad {
    size_t field;    // byte offset of the gradient pointer inside the kernel's argument struct
    char* lo;        // first byte of the gradient's extent (every byte of [lo, lo + bytes) belongs to an element)
    int64 bytes;
    bool is_double;  // element scalars: double, else float
};
constexpr int kMaxPrivateGrads = 16;

namespace detail {
// the scalar type of a gradient element made only of float or double scalars (void otherwise)
template <typename T> struct grad_scalar { typedef void type; };
template <> struct grad_scalar<float> { typedef float type; };
template <> struct grad_scalar<double> { typedef double type; };
template <unsigned N, typename S> struct grad_scalar<vec_t<N, S>> { typedef typename grad_scalar<S>::type type; };
template <unsigned R, unsigned C, typename S> struct grad_scalar<mat_t<R, C, S>> {
    typedef typename grad_scalar<S>::type type;
};
template <typename S> struct grad_scalar<quat_t<S>> { typedef typename grad_scalar<S>::type type; };
template <typename S> struct grad_scalar<transform_t<S>> { typedef typename grad_scalar<S>::type type; };
}  // namespace detail

// Privatise a's gradient for a launch on `threads` threads (see run_grid_private in launch.h) when copies cost less
// than the atomics they replace: `sites` loads of a per thread, `total` grid points. The gradient's bytes must all
// be elements (dense layout: summing the copies touches nothing else) and shared with no other argument's gradient
// (thread 0 adds into it directly). On success, appends to priv and marks a for plain adds.
template <typename T>
inline void private_grad(array_t<T>& a, size_t field, int sites, int64 total, int threads,
                         const detail::ByteRange* grads, int ngrads, int self, PrivateGrad* priv, int& npriv) {
    typedef typename detail::grad_scalar<T>::type S;
    if constexpr (!detail::is_void_<S>::value) {
        if (!a.grad || npriv >= kMaxPrivateGrads || !detail::distinct_elements(a)) return;
        const detail::ByteRange r = grads[self];
        int64 count = 1;
        for (int d = 0; d < a.ndim; ++d) count *= a.shape[d];
        if (count <= 0 || int64(r.hi - r.lo) != count * int64(sizeof(T))) return;  // not dense
        if (count * threads > 2 * int64(sites) * total) return;  // summing copies would cost more than atomics
        if (int64(r.hi - r.lo) * (threads - 1) > (int64(1) << 28)) return;
        for (int k = 0; k < ngrads; ++k) {
            const detail::ByteRange o = grads[k];
            if (k != self && o.lo != o.hi && r.lo < o.hi && o.lo < r.hi) return;
        }
        priv[npriv++] = PrivateGrad{field, const_cast<char*>(r.lo), int64(r.hi - r.lo), sizeof(S) == 8};
        a.flags |= kGradPlain;
    }
}
#endif

#if !WEFT_CUDA
// ---- deferred gradient adds (the deferred-form backward, see run_grid_deferred in launch.h)
// The offset slot of a lane that did not reach its site (a branch not taken): no add.
constexpr int32 kNoAdd = INT32_MIN;

// One lane's add into a's gradient at idx, recorded in the lane's slots of a site buffer: the value and the byte
// offset of the element (the entry checked with grad_offsets_fit that offsets fit 32 bits).
template <bool C = false, typename T, typename... I>
WEFT_FN void defer_add(T& slot, int32& offset_slot, const array_t<T>& a, const T& v, I... idx) {
    slot = v;
    offset_slot = int32(detail::offset32<C>(a, int64(idx)...));
}

// Whether every element of a's gradient lies within 2^31 bytes of its base (deferred adds record 32-bit offsets).
template <typename T>
inline bool grad_offsets_fit(const array_t<T>& a) {
    int64 span = int64(sizeof(T));
    for (int d = 0; d < a.ndim; ++d) {
        if (a.shape[d] <= 0) return true;
        span += int64(a.shape[d] - 1) * (a.strides[d] < 0 ? -a.strides[d] : a.strides[d]);
    }
    return span <= int64(INT32_MAX);
}

namespace detail {
typedef int32 lanes16_i32 __attribute__((vector_size(64)));
inline bool all_zero(const lanes16_i32& v) {
    static const lanes16_i32 zero = {};
    return memcmp(&v, &zero, 64) == 0;
}
// g[k] += v[k] for 16 consecutive elements of T (whole 64-byte vectors of its scalar S)
template <typename T, typename S>
inline void add16(char* g, const T* v) {
    typedef S lanes __attribute__((vector_size(64)));
    const char* src = reinterpret_cast<const char*>(v);
    for (int k = 0; k < int(16 * sizeof(T) / 64); ++k) {
        lanes x, y;
        memcpy(&x, g + 64 * k, 64);
        memcpy(&y, src + 64 * k, 64);
        x += y;
        memcpy(g + 64 * k, &x, 64);
    }
}
// g[k] += v[15 - k]: a descending run of offsets (a mirrored read such as x[n - k]). Out of line, so that
// flush_adds stays small enough to be inlined into a kernel's flush (measured: 8% on a stencil backward otherwise).
// Elements of 4 or 8 bytes (float, double, vec2f) are reversed with vector permutes, the others element by element.
template <typename T, typename S>
__attribute__((noinline)) void add16_reversed(char* g, const T* v) {
    if constexpr (sizeof(T) == 4) {
        typedef int32 lanes __attribute__((vector_size(64)));
        const lanes order = {15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
        lanes x;
        memcpy(&x, v, 64);
        x = __builtin_shuffle(x, order);
        T rev[16];
        memcpy(rev, &x, 64);
        add16<T, S>(g, rev);
    } else if constexpr (sizeof(T) == 8) {
        typedef long long lanes __attribute__((vector_size(64)));
        const lanes order = {7, 6, 5, 4, 3, 2, 1, 0};
        lanes lo, hi;
        memcpy(&lo, v, 64);
        memcpy(&hi, reinterpret_cast<const char*>(v) + 64, 64);
        lo = __builtin_shuffle(lo, order);
        hi = __builtin_shuffle(hi, order);
        T rev[16];
        memcpy(rev, &hi, 64);
        memcpy(reinterpret_cast<char*>(rev) + 64, &lo, 64);
        add16<T, S>(g, rev);
    } else {
        T rev[16];
        for (int k = 0; k < 16; ++k) rev[k] = v[15 - k];
        add16<T, S>(g, rev);
    }
}
}  // namespace detail

// Adds a launch thread could not apply in place (ownership mode, see flush_adds): element offsets and values,
// applied after every thread has finished its grid points (apply_spill).
template <typename T>
struct SpillBuf {
    int32* off = nullptr;
    T* val = nullptr;
    int64 n = 0, cap = 0;
    SpillBuf() = default;
    SpillBuf(const SpillBuf&) = delete;
    SpillBuf& operator=(const SpillBuf&) = delete;
    ~SpillBuf() {
        free(off);
        free(val);
    }
    void push(int32 o, const T& v) {
        if (n == cap && !grow()) return;
        off[n] = o;
        val[n] = v;
        ++n;
    }
    __attribute__((noinline, cold)) bool grow() {
        const int64 c = cap ? 2 * cap : 1024;
        int32* o = static_cast<int32*>(realloc(off, size_t(c) * sizeof(int32)));
        if (o) off = o;
        T* v = o ? static_cast<T*>(realloc(val, size_t(c) * sizeof(T))) : nullptr;
        if (v) val = v;
        if (!o || !v) {
            report_error(4, "out of memory for the gradient adds of a backward launch: the gradients are incomplete");
            return false;
        }
        cap = c;
        return true;
    }
};

// The spilled adds of one site (applied by one thread while the others wait).
template <typename T>
inline void apply_spill(const array_t<T>& a, const SpillBuf<T>& s) {
    if (!a.grad) return;
    char* g = reinterpret_cast<char*>(a.grad);
    for (int64 l = 0; l < s.n; ++l) *reinterpret_cast<T*>(g + s.off[l]) += s.val[l];
}

// Applies n recorded adds of one site (offsets off[0..n), values val[0..n)) to a's gradient, in lane order.
// Without a spill buffer: plain adds when the launch owns the gradient (kGradPlain), atomics otherwise. With one
// (ownership mode, several threads): the thread owns the elements [lo, hi) (byte offsets: the grid points of the
// piece it is running, see owned_layout), adds there in place and spills the others. Runs of 16 consecutive
// elements (a stencil neighbour's lanes) become vector adds: the whole chunk is checked first, then each group.
// MaybeEmpty: the site is under a branch, so some slots may hold kNoAdd.
template <bool MaybeEmpty = false, typename T>
__attribute__((always_inline)) inline void flush_adds(const array_t<T>& a, const int32* off, const T* val, int32 n,
                                                      SpillBuf<T>* spill = nullptr, int64 lo = 0, int64 hi = 0) {
    if (!a.grad) return;
    char* g = reinterpret_cast<char*>(a.grad);
    typedef typename detail::grad_scalar<T>::type S;
    if (!spill && !(a.flags & kGradPlain)) {
        for (int32 l = 0; l < n; ++l)
            if (!MaybeEmpty || off[l] != kNoAdd) grad_add_shared(reinterpret_cast<T*>(g + off[l]), val[l]);
        return;
    }
    if (!spill) {  // everything in place
        lo = INT32_MIN;
        hi = int64(INT32_MAX) + 1;
    }
    auto one = [&](int32 l) {
        if (MaybeEmpty && off[l] == kNoAdd) return;
        if (off[l] >= lo && off[l] < hi)
            *reinterpret_cast<T*>(g + off[l]) += val[l];
        else
            spill->push(off[l], val[l]);
    };
    int32 l = 0;
    if constexpr (!detail::is_void_<S>::value && (16 * sizeof(T)) % 64 == 0) {
        constexpr int32 size = int32(sizeof(T));
        const detail::lanes16_i32 step = detail::lanes16_i32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15} *
                                         size;
        const int32 whole = n & ~15;
        detail::lanes16_i32 off16;
        // an OR reduction in registers (a vector compared through memory stalls on store forwarding)
        const uint32 first = uint32(off[0]);
        uint32 bad = 0;
        for (int32 k = 0; k < whole; ++k) bad |= uint32(off[k]) - (first + uint32(k) * uint32(size));
        // (a real offset exceeds kNoAdd, so no run of offsets starting at a real one contains kNoAdd)
        if (whole > 0 && bad == 0 && (!MaybeEmpty || off[0] != kNoAdd) && off[0] >= lo &&
            int64(off[0]) + int64(whole) * size <= hi) {
            for (; l < whole; l += 16) detail::add16<T, S>(g + off[0] + l * size, val + l);
        } else {
            for (; l < whole; l += 16) {
                memcpy(&off16, off + l, 64);
                if (detail::all_zero(off16 - (off[l] + step)) && (!MaybeEmpty || off[l] != kNoAdd) && off[l] >= lo &&
                    int64(off[l]) + 16 * size <= hi) {
                    detail::add16<T, S>(g + off[l], val + l);
                } else if (detail::all_zero(off16 - (off[l] - step)) && int64(off[l]) - 15 * size > int64(kNoAdd) &&
                           int64(off[l]) - 15 * size >= lo && int64(off[l]) + size <= hi) {
                    detail::add16_reversed<T, S>(g + off[l] - 15 * size, val + l);
                } else {
                    for (int32 k = l; k < l + 16; ++k) one(k);
                }
            }
        }
    }
    for (; l < n; ++l) one(l);
}

namespace detail {
// flush_affine's other chunks (a row's first and last, with rim lanes; atomics; a run across the owned range), out of
// line: the inlined flush of a kernel's sites stays small.
template <typename T>
__attribute__((noinline)) void flush_affine_rim(const array_t<T>& a, int32* off, const T* val, int32 n,
                                                SpillBuf<T>* spill, int64 lo, int64 hi, int32 ka, int32 kb,
                                                int32 first) {
    for (int32 l = ka; l < kb; ++l) off[l] = int32(uint32(first) + uint32(l) * uint32(sizeof(T)));
    flush_adds<false>(a, off, val, n, spill, lo, hi);
}
}  // namespace detail

// flush_adds for a row-affine site (see run_chunked_split_row in launch.h): the lanes [ka, kb) ran the known body,
// which recorded no offsets for the site; theirs are first + l * sizeof(T) (first: the offset of lane 0, from the
// row's bases). A chunk whose every lane is known adds its values as one contiguous run without reading any offset;
// otherwise the known lanes' offsets are filled in and the chunk flushes as any other. The site is unconditional
// (every known lane reached it).
template <typename T>
__attribute__((always_inline)) inline void flush_affine(const array_t<T>& a, int32* off, const T* val, int32 n,
                                                        SpillBuf<T>* spill, int64 lo, int64 hi, int32 ka, int32 kb,
                                                        int32 first) {
    if (!a.grad) return;
    if (ka == 0 && kb == n && (spill ? int64(first) >= lo && int64(first) + int64(n) * int64(sizeof(T)) <= hi
                                     : (a.flags & kGradPlain) != 0)) {
        T* g = detail::at(a.grad, int64(first));
        typedef typename detail::grad_scalar<T>::type S;
        int32 l = 0;
        if constexpr (!detail::is_void_<S>::value && (16 * sizeof(T)) % 64 == 0) {
            for (; l + 16 <= n; l += 16) detail::add16<T, S>(reinterpret_cast<char*>(g + l), val + l);
        }
        for (; l < n; ++l) g[l] += val[l];
        return;
    }
    detail::flush_affine_rim(a, off, val, n, spill, lo, hi, ka, kb, first);
}

// Ownership mode applies to a's gradient when element offsets are grid flat indices times the element size (a
// dense row-major array shaped like the launch grid, or a 1-D one as long as a 1-D launch); see run_grid_deferred.
template <typename T>
inline bool owned_layout(const array_t<T>& a, const int64* dims, int32 ndim) {
    if (!a.grad) return true;
    if (a.ndim == 1 && ndim > 1) {  // a flat-index kernel (i = wp.tid()) over a multi-dimensional launch
        int64 total = 1;
        for (int d = 0; d < ndim; ++d) total *= dims[d];
        return int64(a.shape[0]) == total && (a.shape[0] <= 1 || a.strides[0] == int64(sizeof(T)));
    }
    if (a.ndim != ndim) return false;
    int64 stride = int64(sizeof(T));
    for (int d = ndim - 1; d >= 0; --d) {
        if (int64(a.shape[d]) != dims[d] || (a.shape[d] > 1 && a.strides[d] != stride)) return false;
        stride *= a.shape[d];
    }
    return true;
}

namespace detail {
// every two ranges either share no byte or are the same range
inline bool disjoint_or_same(std::initializer_list<ByteRange> r) {
    for (const ByteRange& x : r)
        for (const ByteRange& y : r)
            if (x.lo != x.hi && y.lo != y.hi && x.lo < y.hi && y.lo < x.hi && (x.lo != y.lo || x.hi != y.hi))
                return false;
    return true;
}
}  // namespace detail
#endif

template <typename T, typename... I>
WEFT_FN T grad_load(const array_t<T>& a, I... idx) {
    return a.grad ? *detail::at(a.grad, detail::offset<false>(a, int64(idx)...)) : T();
}
template <typename T, typename... I>
WEFT_FN void grad_zero(const array_t<T>& a, I... idx) {
    if (a.grad) *detail::at(a.grad, detail::offset<false>(a, int64(idx)...)) = T();
}

}  // namespace weft

namespace weft {

// ---- adjoints of array writes (arguments as the forward ops: array, value, indices)
// a[i] = v: v receives the gradient of the element; when the array is overwritten on the tape (flag bit 1),
// the element's gradient is consumed (the value it belonged to no longer exists before this store).
template <bool C = false, typename T, typename... I>
WEFT_FN void adj_store(const array_t<T>& a, T& adj_value, I... idx) {
    if (!a.grad) return;
    T* g = detail::at(a.grad, detail::offset<C>(a, int64(idx)...));
    adj_value += *g;
    if (a.flags & 2) *g = T();
}
// adj_store of a vector/matrix element in the deferred-form body (see run_grid_deferred in launch.h): the element
// belongs to this lane alone and the gradient exists (scratch_grad), so the read and the (selected) write are
// unconditional: g++ does not vectorise masked accesses to vec2/vec3 elements in the lane loop. Consume: the kernel
// writes the element more than once (adj_store_consume).
template <bool C = false, bool Consume = false, typename T, typename... I>
WEFT_FN void adj_store_owned(const array_t<T>& a, T& adj_value, I... idx) {
    T* g = detail::at(a.grad, detail::offset<C>(a, int64(idx)...));
    const T old = *g;
    adj_value += old;
    *g = (Consume || (a.flags & 2)) ? T() : old;  // written back either way: no masked store
}

#if !WEFT_CUDA
// A launch-long zeroed gradient for an array stored without one (deferred form, see adj_store_owned).
struct GradScratch {
    void* mem = nullptr;
    GradScratch() = default;
    GradScratch(const GradScratch&) = delete;
    GradScratch& operator=(const GradScratch&) = delete;
    ~GradScratch() { free(mem); }
};
template <typename T>
inline bool scratch_grad(array_t<T>& a, GradScratch& s) {
    if (a.grad) return true;
    int64 span = int64(sizeof(T)), low = 0;
    for (int d = 0; d < a.ndim; ++d) {
        if (a.shape[d] <= 0) return true;  // no elements: nothing is read
        const int64 ext = int64(a.shape[d] - 1) * a.strides[d];
        span += ext < 0 ? -ext : ext;
        if (ext < 0) low += ext;
    }
    s.mem = calloc(1, size_t(span));
    if (!s.mem) return false;
    a.grad = reinterpret_cast<T*>(static_cast<char*>(s.mem) - low);
    return true;
}
#endif

// a[i] = v in a kernel that writes a's elements more than once per thread (several stores, or one in a loop): the
// value's gradient is consumed, so an earlier write of the same element (reversed later) gets none of it.
template <bool C = false, typename T, typename... I>
WEFT_FN void adj_store_consume(const array_t<T>& a, T& adj_value, I... idx) {
    if (!a.grad) return;
    T* g = detail::at(a.grad, detail::offset<C>(a, int64(idx)...));
    adj_value += *g;
    *g = T();
}
template <bool C = false, typename T, typename... I>
WEFT_FN void adj_store(const indexedarray_t<T>& a, T& adj_value, I... idx) {
    if (!a.arr.grad) return;
    T* g = detail::at(a.arr.grad, reinterpret_cast<char*>(&address(a, idx...)) - reinterpret_cast<char*>(a.arr.data));
    adj_value += *g;
}
template <bool C = false, typename T, typename... I>
WEFT_FN void adj_load(const array_t<T>& a, const T& adj_value, I... idx) { grad_add<C>(a, adj_value, idx...); }
template <bool C = false, typename T, typename... I>
WEFT_FN void adj_load(const indexedarray_t<T>& a, const T& adj_value, I... idx) {
    if (!a.arr.grad) return;
    T* g = detail::at(a.arr.grad, reinterpret_cast<char*>(&address(a, idx...)) - reinterpret_cast<char*>(a.arr.data));
    atom::fetch_add(g, adj_value);
}
template <typename T, typename... I>
WEFT_FN void adj_atomic_add(const array_t<T>& a, T& adj_value, I... idx) {
    if (a.grad) adj_value += *detail::at(a.grad, detail::offset<false>(a, int64(idx)...));
}
template <typename T, typename... I>
WEFT_FN void adj_atomic_sub(const array_t<T>& a, T& adj_value, I... idx) {
    if (a.grad) adj_value -= *detail::at(a.grad, detail::offset<false>(a, int64(idx)...));
}
// min/max: the gradient flows to the value that won (the element now holds it)
namespace detail {
// the gradient of the result reaches the value where the value won: per component for vectors and matrices,
// whose atomic min / max are component-wise (the result need not equal any one thread's value)
template <typename T>
WEFT_FN void adj_pick(const T& result, const T& value, T& adj_value, const T& adj_result) {
    if (values_equal(result, value) || (nan_(result) && nan_(value))) adj_value += adj_result;  // NaN won as NaN
}
template <unsigned N, typename T>
WEFT_FN void adj_pick(const vec_t<N, T>& result, const vec_t<N, T>& value, vec_t<N, T>& adj_value,
                      const vec_t<N, T>& adj_result) {
    for (unsigned k = 0; k < N; ++k)
        if (result.c[k] == value.c[k] || (nan_(result.c[k]) && nan_(value.c[k]))) adj_value.c[k] += adj_result.c[k];
}
template <unsigned R, unsigned C, typename T>
WEFT_FN void adj_pick(const mat_t<R, C, T>& result, const mat_t<R, C, T>& value, mat_t<R, C, T>& adj_value,
                      const mat_t<R, C, T>& adj_result) {
    for (unsigned i = 0; i < R; ++i) adj_pick(result.row[i], value.row[i], adj_value.row[i], adj_result.row[i]);
}
}  // namespace detail
template <typename T, typename... I>
WEFT_FN void adj_atomic_minmax(const array_t<T>& a, const T& value, T& adj_value, I... idx) {
    if (!a.grad) return;
    detail::adj_pick(load(a, idx...), value, adj_value, *detail::at(a.grad, detail::offset<false>(a, int64(idx)...)));
}

// ---- replay of side effects in the backward pass: only into replay scratch copies (flag bit 0)
template <bool C = false, typename T, typename... I>
WEFT_FN void replay_store(const array_t<T>& a, const T& value, I... idx) {
    if (a.flags & 1) store<C>(a, value, idx...);
}
template <bool C = false, typename T, typename... I>
WEFT_FN void replay_store(const indexedarray_t<T>& a, const T& value, I... idx) {}
template <typename T, typename... I>
WEFT_FN T replay_atomic_add(const array_t<T>& a, const T& v, I... idx) {
    return (a.flags & 1) ? atomic_add(a, v, idx...) : T();
}
template <typename T, typename... I>
WEFT_FN T replay_atomic_sub(const array_t<T>& a, const T& v, I... idx) {
    return (a.flags & 1) ? atomic_sub(a, v, idx...) : T();
}
template <typename T, typename... I>
WEFT_FN T replay_atomic_min(const array_t<T>& a, const T& v, I... idx) {
    return (a.flags & 1) ? atomic_min(a, v, idx...) : T();
}
template <typename T, typename... I>
WEFT_FN T replay_atomic_max(const array_t<T>& a, const T& v, I... idx) {
    return (a.flags & 1) ? atomic_max(a, v, idx...) : T();
}
template <typename T, typename... I>
WEFT_FN T replay_atomic_exch(const array_t<T>& a, const T& v, I... idx) {
    return (a.flags & 1) ? atomic_exch(a, v, idx...) : T();
}
template <typename T, typename... I>
WEFT_FN T replay_atomic_and(const array_t<T>& a, const T& v, I... idx) {
    return (a.flags & 1) ? atomic_and(a, v, idx...) : T();
}
template <typename T, typename... I>
WEFT_FN T replay_atomic_or(const array_t<T>& a, const T& v, I... idx) {
    return (a.flags & 1) ? atomic_or(a, v, idx...) : T();
}
template <typename T, typename... I>
WEFT_FN T replay_atomic_xor(const array_t<T>& a, const T& v, I... idx) {
    return (a.flags & 1) ? atomic_xor(a, v, idx...) : T();
}
template <typename T, typename... I>
WEFT_FN T replay_atomic_cas(const array_t<T>& a, const T& c, const T& v, I... idx) {
    return (a.flags & 1) ? atomic_cas(a, c, v, idx...) : T();
}

// ---- adjoints of construction
template <unsigned N, typename T>
WEFT_FN void adj_broadcast(T& adj_s, const vec_t<N, T>& adj_v) {
    for (unsigned i = 0; i < N; ++i) adj_s += adj_v.c[i];
}
template <unsigned R, unsigned C, typename T>
WEFT_FN void adj_broadcast(T& adj_s, const mat_t<R, C, T>& adj_m) {
    for (unsigned i = 0; i < R; ++i) adj_broadcast(adj_s, adj_m.row[i]);
}
template <typename T>
WEFT_FN void adj_broadcast(T& adj_s, const quat_t<T>& adj_q) {
    for (int i = 0; i < 4; ++i) adj_s += adj_q[i];
}
template <typename T>
WEFT_FN void adj_broadcast(T& adj_s, const transform_t<T>& adj_t) {
    for (int i = 0; i < 7; ++i) adj_s += adj_t[i];
}
// scalar k of a value built from R*C (or N) scalars, row-major
template <unsigned N, typename T>
WEFT_FN T component(const vec_t<N, T>& v, int k) { return v.c[k]; }
template <unsigned R, unsigned C, typename T>
WEFT_FN T component(const mat_t<R, C, T>& m, int k) { return m.row[k / C].c[k % C]; }
template <typename T>
WEFT_FN T component(const quat_t<T>& q, int k) { return q[k]; }
template <typename T>
WEFT_FN T component(const transform_t<T>& t, int k) { return t[k]; }

}  // namespace weft
