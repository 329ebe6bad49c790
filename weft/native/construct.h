// weft native: functional component updates (v[i] = x as a new value), casts, printing helpers.
#pragma once
#include "core.h"
#include "vec.h"
#include "mat.h"
#include "quat.h"
#include "transform.h"

namespace weft {

// ---- insert: a copy of v with component i replaced (vectors, quaternions, transforms)
template <typename V, typename S>
WEFT_FN V insert(V v, int i, const S& x) {
    v[i] = x;
    return v;
}
template <typename V, typename S>
WEFT_FN void adj_insert(const V&, int i, const S&, V& adj_v, int&, S& adj_x, const V& adj_ret) {
    V g = adj_ret;
    adj_x += g[i];
    g[i] = S(0);
    adj_v += g;
}
// matrices: element (i, j) or row i
template <unsigned R, unsigned C, typename T>
WEFT_FN mat_t<R, C, T> insert(mat_t<R, C, T> m, int i, int j, const T& x) {
    m.row[i].c[j] = x;
    return m;
}
template <unsigned R, unsigned C, typename T>
WEFT_FN void adj_insert(const mat_t<R, C, T>&, int i, int j, const T&, mat_t<R, C, T>& adj_m, int&, int&, T& adj_x,
                        const mat_t<R, C, T>& adj_ret) {
    mat_t<R, C, T> g = adj_ret;
    adj_x += g.row[i].c[j];
    g.row[i].c[j] = T(0);
    adj_m += g;
}
template <unsigned R, unsigned C, typename T>
WEFT_FN mat_t<R, C, T> insert(mat_t<R, C, T> m, int i, const vec_t<C, T>& x) {
    m.row[i] = x;
    return m;
}
template <unsigned R, unsigned C, typename T>
WEFT_FN void adj_insert(const mat_t<R, C, T>&, int i, const vec_t<C, T>&, mat_t<R, C, T>& adj_m, int&,
                        vec_t<C, T>& adj_x, const mat_t<R, C, T>& adj_ret) {
    mat_t<R, C, T> g = adj_ret;
    adj_x += g.row[i];
    g.row[i] = vec_t<C, T>();
    adj_m += g;
}

// ---- casts between scalar types and element-type conversion of vectors / matrices
template <typename To, typename From>
WEFT_FN To cast(const From& x) { return To(x); }
template <typename To, typename From>
WEFT_FN void adj_cast(const From&, From& adj_x, const To& adj_ret) { adj_x += From(adj_ret); }

// ---- wp.cast(a, dtype): the bytes of a reinterpreted as another value type of the same size (not differentiable)
template <typename From, typename To>
WEFT_FN void bit_cast(const From& x, To& out) {
    static_assert(sizeof(From) == sizeof(To), "wp.cast needs types of the same size");
    const unsigned char* src = reinterpret_cast<const unsigned char*>(&x);
    unsigned char* dst = reinterpret_cast<unsigned char*>(&out);
    for (unsigned i = 0; i < sizeof(To); ++i) dst[i] = src[i];
}

// zero of any value type (adjoint initialisation)
template <typename T>
WEFT_FN T zero() { return T(); }

// ---- printing (host printf; device printf under CUDA)
WEFT_FN void print_value(float x) { printf("%g", double(x)); }
WEFT_FN void print_value(double x) { printf("%g", x); }
WEFT_FN void print_value(half x) { printf("%g", double(float(x))); }
WEFT_FN void print_value(bfloat16 x) { printf("%g", double(float(x))); }
WEFT_FN void print_value(int8 x) { printf("%d", int(x)); }
WEFT_FN void print_value(int16 x) { printf("%d", int(x)); }
WEFT_FN void print_value(int32 x) { printf("%d", x); }
WEFT_FN void print_value(int64 x) { printf("%lld", (long long)x); }
WEFT_FN void print_value(uint8 x) { printf("%u", unsigned(x)); }
WEFT_FN void print_value(uint16 x) { printf("%u", unsigned(x)); }
WEFT_FN void print_value(uint32 x) { printf("%u", x); }
WEFT_FN void print_value(uint64 x) { printf("%llu", (unsigned long long)x); }
WEFT_FN void print_value(bool x) { printf("%s", x ? "True" : "False"); }
// Warp's print formats: a vector's components each followed by a space ("1 2 3 "), a matrix's rows so, one per
// line (print's newline ends the last), a quaternion's components separated by spaces, a transform as
// "(p) (q)"; values without a print form (structs, arrays) say so.
template <typename T, typename detail::enable_if_<__is_class(T), int>::type = 0>
WEFT_FN void print_value(const T&) { printf("<type without print implementation>"); }
template <unsigned N, typename T>
WEFT_FN void print_value(const vec_t<N, T>& v) {
    for (unsigned i = 0; i < N; ++i) { print_value(v.c[i]); printf(" "); }
}
template <unsigned R, unsigned C, typename T>
WEFT_FN void print_value(const mat_t<R, C, T>& m) {
    for (unsigned i = 0; i < R; ++i) { if (i) printf("\n"); print_value(m.row[i]); }
}
template <typename T>
WEFT_FN void print_value(const quat_t<T>& q) {
    for (int i = 0; i < 4; ++i) { if (i) printf(" "); print_value(q[i]); }
}
template <typename T>
WEFT_FN void print_value(const transform_t<T>& t) {
    printf("(");
    for (int i = 0; i < 3; ++i) { if (i) printf(" "); print_value(t[i]); }
    printf(") (");
    for (int i = 3; i < 7; ++i) { if (i > 3) printf(" "); print_value(t[i]); }
    printf(")");
}
// The reverse sweep's print of an adjoint (Warp's "adj: " line): vector components separated by spaces, matrix rows
// on lines of their own under the first (indented past "adj: "); other values as print_value.
template <typename T>
WEFT_FN void print_adjoint(const T& x) { print_value(x); }
template <unsigned N, typename T>
WEFT_FN void print_adjoint(const vec_t<N, T>& v) {
    for (unsigned i = 0; i < N; ++i) { if (i) printf(" "); print_value(v.c[i]); }
}
template <unsigned R, unsigned C, typename T>
WEFT_FN void print_adjoint(const mat_t<R, C, T>& m) {
    for (unsigned i = 0; i < R; ++i) { if (i) printf("\n     "); print_adjoint(m.row[i]); }
}

// ---- wp.breakpoint(): stop in an attached debugger, else nothing.
// CUDA: the PTX brkpt instruction (cuda-gdb stops there; as Warp). CPU: SIGTRAP with the signal ignored, which the
// kernel delivers only to a tracing debugger (gdb, lldb stop at the raise); without one nothing happens. The first
// call sets SIGTRAP to ignored when it had the default action (which would end the process) and leaves a handler the
// program installed alone. Linux signal numbers.
#if WEFT_CUDA
WEFT_FN void breakpoint() { __brkpt(); }
#else
namespace detail {
inline int breakpoint_ready = 0;
}
inline void breakpoint() {
    constexpr int sigtrap = 5;
    if (!__atomic_load_n(&detail::breakpoint_ready, __ATOMIC_ACQUIRE)) {
        void (*const ignore)(int) = reinterpret_cast<void (*)(int)>(1);  // SIG_IGN
        void (*old)(int) = signal(sigtrap, ignore);
        if (old != nullptr && old != ignore) signal(sigtrap, old);  // the program's own handler stays
        __atomic_store_n(&detail::breakpoint_ready, 1, __ATOMIC_RELEASE);
    }
    raise(sigtrap);
}
#endif

// ---- wp.expect_eq / expect_neq / expect_near
template <typename T>
WEFT_FN bool values_equal(const T& a, const T& b) { return a == b; }
template <typename T>
WEFT_FN bool values_equal(const quat_t<T>& a, const quat_t<T>& b) {
    return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w;
}
template <unsigned R, unsigned C, typename T>
WEFT_FN bool values_equal(const mat_t<R, C, T>& a, const mat_t<R, C, T>& b) {
    for (unsigned i = 0; i < R; ++i) if (!(a.row[i] == b.row[i])) return false;
    return true;
}
template <typename T>
WEFT_FN void expect_eq(const T& a, const T& b, const char* where) {
    if (!values_equal(a, b)) {
        printf("%s: expect_eq failed: ", where); print_value(a); printf(" != "); print_value(b); printf("\n");
        report_error(3, where);
    }
}
template <typename T>
WEFT_FN void expect_neq(const T& a, const T& b, const char* where) {
    if (values_equal(a, b)) {
        printf("%s: expect_neq failed: ", where); print_value(a); printf(" == "); print_value(b); printf("\n");
        report_error(3, where);
    }
}
template <typename T, typename S>
WEFT_FN bool near_within(const T& a, const T& b, const S& tol) {
    const T d = a > b ? a - b : b - a;
    return d <= T(tol);
}
// vectors: every component within the (scalar or per-component) tolerance
template <unsigned N, typename T, typename S>
WEFT_FN bool near_within(const vec_t<N, T>& a, const vec_t<N, T>& b, const S& tol) {
    for (unsigned k = 0; k < N; ++k)
        if (!near_within(a.c[k], b.c[k], T(tol))) return false;
    return true;
}
template <unsigned N, typename T>
WEFT_FN bool near_within(const vec_t<N, T>& a, const vec_t<N, T>& b, const vec_t<N, T>& tol) {
    for (unsigned k = 0; k < N; ++k)
        if (!near_within(a.c[k], b.c[k], tol.c[k])) return false;
    return true;
}
// matrices, quaternions and transforms: every component within the scalar tolerance
template <unsigned R, unsigned C, typename T, typename S>
WEFT_FN bool near_within(const mat_t<R, C, T>& a, const mat_t<R, C, T>& b, const S& tol) {
    for (unsigned i = 0; i < R; ++i)
        if (!near_within(a.row[i], b.row[i], T(tol))) return false;
    return true;
}
template <typename T, typename S>
WEFT_FN bool near_within(const quat_t<T>& a, const quat_t<T>& b, const S& tol) {
    for (int k = 0; k < 4; ++k)
        if (!near_within(a[k], b[k], T(tol))) return false;
    return true;
}
template <typename T, typename S>
WEFT_FN bool near_within(const transform_t<T>& a, const transform_t<T>& b, const S& tol) {
    for (int k = 0; k < 7; ++k)
        if (!near_within(a[k], b[k], T(tol))) return false;
    return true;
}
template <typename T, typename S>
WEFT_FN void expect_near(const T& a, const T& b, const S& tol, const char* where) {
    if (!near_within(a, b, tol)) {
        printf("%s: expect_near failed: ", where); print_value(a); printf(" vs "); print_value(b); printf("\n");
        report_error(3, where);
    }
}

}  // namespace weft
