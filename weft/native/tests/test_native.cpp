// Self-test of the weft native math headers.
//  * every adj_ function is compared with central finite differences in double precision
//  * forward values are checked for known cases (decompositions, inverses, rotations, half conversion, RNG)
// Build: g++ -std=c++17 -O1 -I weft/native weft/native/tests/test_native.cpp && ./a.out   (exit code 0 = pass)
#include "spatial.h"
#include "random.h"

#include <cstdio>
#include <cstdlib>
#include <limits>
#include <tuple>
#include <utility>

using weft::mat_t;
using weft::quat_t;
using weft::transform_t;
using weft::vec_t;

typedef vec_t<2, double> v2;
typedef vec_t<3, double> v3;
typedef vec_t<4, double> v4;
typedef vec_t<6, double> v6;
typedef mat_t<2, 2, double> m22;
typedef mat_t<3, 3, double> m33;
typedef mat_t<4, 4, double> m44;
typedef mat_t<2, 3, double> m23;
typedef mat_t<3, 2, double> m32;
typedef mat_t<6, 6, double> m66;
typedef quat_t<double> qd;
typedef transform_t<double> td;

static int g_fail = 0;
static int g_checks = 0;

#define EXPECT(cond, ...)                                             \
    do {                                                              \
        ++g_checks;                                                   \
        if (!(cond)) {                                                \
            ++g_fail;                                                 \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);   \
            printf(__VA_ARGS__);                                      \
            printf("\n");                                             \
        }                                                             \
    } while (0)

// ------------------------------------------------------------------------------------------------
// deterministic random numbers for test inputs

static unsigned long long g_rng = 0x9e3779b97f4a7c15ull;
static double urand() {  // [-1, 1)
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(g_rng >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

// ------------------------------------------------------------------------------------------------
// flattening of test types to double components

template <typename X> struct flat;
template <> struct flat<double> {
    static constexpr int n = 1;
    static double& at(double& x, int) { return x; }
};
template <> struct flat<int> {
    static constexpr int n = 0;
    static double& at(int&, int) { static double d; return d; }
};
template <unsigned N> struct flat<vec_t<N, double>> {
    static constexpr int n = N;
    static double& at(vec_t<N, double>& x, int i) { return x.c[i]; }
};
template <unsigned R, unsigned C> struct flat<mat_t<R, C, double>> {
    static constexpr int n = R * C;
    static double& at(mat_t<R, C, double>& x, int i) { return x.row[i / C].c[i % C]; }
};
template <> struct flat<qd> {
    static constexpr int n = 4;
    static double& at(qd& x, int i) { return x[i]; }
};
template <> struct flat<td> {
    static constexpr int n = 7;
    static double& at(td& x, int i) { return x[i]; }
};

template <typename X>
static X rnd() {
    X x{};
    for (int i = 0; i < flat<X>::n; ++i) flat<X>::at(x, i) = urand();
    return x;
}
template <typename X>
static double inner(X a, X b) {
    double s = 0;
    for (int i = 0; i < flat<X>::n; ++i) s += flat<X>::at(a, i) * flat<X>::at(b, i);
    return s;
}
template <typename X>
static double maxabs(X a) {
    double s = 0;
    for (int i = 0; i < flat<X>::n; ++i) s = fmax(s, fabs(flat<X>::at(a, i)));
    return s;
}

static bool close(double a, double b, double tol) { return fabs(a - b) <= tol * fmax(1.0, fmax(fabs(a), fabs(b))); }

// ------------------------------------------------------------------------------------------------
// generic finite-difference check of single-output functions

template <size_t K, typename Tup, typename Loss>
static void fd_arg(const char* name, const Tup& args, const Tup& adj, Loss& loss, double tol) {
    typedef typename std::decay<decltype(std::get<K>(args))>::type X;
    const double h = 1e-6;
    for (int i = 0; i < flat<X>::n; ++i) {
        Tup a = args;
        double x0 = flat<X>::at(std::get<K>(a), i);
        flat<X>::at(std::get<K>(a), i) = x0 + h;
        double lp = loss(a);
        flat<X>::at(std::get<K>(a), i) = x0 - h;
        double lm = loss(a);
        double fd = (lp - lm) / (2 * h);
        Tup ad = adj;
        double an = flat<X>::at(std::get<K>(ad), i);
        ++g_checks;
        if (!close(an, fd, tol)) {
            ++g_fail;
            printf("FAIL adj_%s: arg %d comp %d: adjoint %.12g vs finite difference %.12g\n", name, (int)K, i, an, fd);
        }
    }
}

template <typename Tup, typename Loss, size_t... K>
static void fd_all(const char* name, const Tup& args, const Tup& adj, Loss& loss, double tol,
                   std::index_sequence<K...>) {
    (fd_arg<K>(name, args, adj, loss, tol), ...);
}

template <typename Tup, typename F, typename G>
static void check(const char* name, Tup args, F f, G g, double tol = 1e-6) {
    typedef decltype(std::apply(f, args)) Ret;
    Ret W = rnd<Ret>();
    auto loss = [&](const Tup& a) { return inner(W, std::apply(f, a)); };
    Tup adj{};
    std::apply([&](auto&... adjs) { std::apply([&](auto&... as) { g(as..., adjs..., W); }, args); }, adj);
    fd_all(name, args, adj, loss, tol, std::make_index_sequence<std::tuple_size<Tup>::value>());
}

#define CHECK(fn, ...)                                                                                  \
    check(#fn, std::make_tuple(__VA_ARGS__), [](auto... a) { return weft::fn(a...); },                  \
          [](auto&... a) { weft::adj_##fn(a...); })
#define CHECK_TOL(tol, fn, ...)                                                                         \
    check(#fn, std::make_tuple(__VA_ARGS__), [](auto... a) { return weft::fn(a...); },                  \
          [](auto&... a) { weft::adj_##fn(a...); }, tol)

// gradient of a scalar function of one input by central differences
template <typename X, typename L>
static X fd_grad(const X& x, L loss) {
    X g{};
    const double h = 1e-6;
    for (int i = 0; i < flat<X>::n; ++i) {
        X a = x;
        double x0 = flat<X>::at(a, i);
        flat<X>::at(a, i) = x0 + h;
        double lp = loss(a);
        flat<X>::at(a, i) = x0 - h;
        double lm = loss(a);
        flat<X>::at(g, i) = (lp - lm) / (2 * h);
    }
    return g;
}
template <typename X>
static void expect_grad(const char* name, const X& an, const X& fd, double tol) {
    for (int i = 0; i < flat<X>::n; ++i) {
        double a = flat<X>::at(const_cast<X&>(an), i), b = flat<X>::at(const_cast<X&>(fd), i);
        ++g_checks;
        if (!close(a, b, tol)) {
            ++g_fail;
            printf("FAIL adj_%s: comp %d: adjoint %.12g vs finite difference %.12g\n", name, i, a, b);
        }
    }
}

template <typename M>
static double mat_err(const M& a, const M& b) {
    double e = 0;
    for (int i = 0; i < flat<M>::n; ++i)
        e = fmax(e, fabs(flat<M>::at(const_cast<M&>(a), i) - flat<M>::at(const_cast<M&>(b), i)));
    return e;
}

// ------------------------------------------------------------------------------------------------

static void test_scalar() {
    using namespace weft;
    // forward semantics
    EXPECT(weft::sign(0.0) == 1.0 && weft::sign(-2.0) == -1.0 && weft::sign(3) == 1, "sign");
    EXPECT(weft::step(-1.0) == 1.0 && weft::step(0.0) == 0.0, "step");
    EXPECT(weft::round(-2.5) == -3.0 && weft::round(2.5) == 3.0 && weft::round(0.4f) == 0.0f, "round");
    EXPECT(weft::frac(-1.25) == -0.25, "frac");
    EXPECT(weft::floordiv(-7.0, 2.0) == -4.0 && weft::floordiv(-7, 2) == -3, "floordiv");
    EXPECT(weft::mod(-7, 2) == -1 && weft::mod(-7.0, 2.0) == -1.0 && weft::mod(7, 0) == 0, "mod");
    EXPECT(weft::div(7, 0) == 0 && weft::div(-7, 2) == -3 && weft::div(7u, 2u) == 3u, "div");
    EXPECT(weft::bit_and(6, 3) == 2 && weft::bit_or(6, 3) == 7 && weft::bit_xor(6, 3) == 5, "bits");
    EXPECT(weft::lshift(1, 4) == 16 && weft::rshift(-16, 2) == -4 && weft::invert(0) == -1, "shifts");
    EXPECT(weft::abs(-3) == 3 && weft::min(2, 3) == 2 && weft::max(2ll, 3ll) == 3 && weft::clamp(5, 0, 3) == 3, "int");
    EXPECT(weft::isnan(std::numeric_limits<double>::quiet_NaN()) && !weft::isnan(1.0f) && !weft::isnan(3), "isnan");
    EXPECT(weft::isinf(-std::numeric_limits<float>::infinity()) && !weft::isinf(1e300), "isinf");
    EXPECT(weft::isfinite(1e300) && !weft::isfinite(std::numeric_limits<double>::infinity()) && weft::isfinite(2), "isfinite");
    EXPECT(fabs(weft::smoothstep(0.0, 2.0, 1.0) - 0.5) < 1e-15 && weft::smoothstep(0.0, 1.0, 3.0) == 1.0, "smoothstep");
    EXPECT(weft::lerp(1.0, 3.0, 0.25) == 1.5, "lerp");
    EXPECT(fabs(weft::degrees(3.14159265358979323846) - 180.0) < 1e-12, "degrees");

    // adjoints
    double x = 0.37, y = -1.3;
    CHECK(add, x, y);
    CHECK(sub, x, y);
    CHECK(mul, x, y);
    CHECK(div, x, y);
    CHECK(mod, 5.3, 1.7);
    CHECK(mod, -5.3, 1.7);
    CHECK(neg, x);
    CHECK(pos, x);
    CHECK(abs, y);
    CHECK(abs, x);
    CHECK(min, x, y);
    CHECK(min, y, x);
    CHECK(max, x, y);
    CHECK(max, y, x);
    CHECK(clamp, x, -0.5, 0.5);
    CHECK(clamp, -0.7, -0.5, 0.5);
    CHECK(clamp, 0.7, -0.5, 0.5);
    CHECK(frac, 2.3);
    CHECK(floor, 2.3);
    CHECK(ceil, 2.3);
    CHECK(round, 2.3);
    CHECK(trunc, 2.3);
    CHECK(sign, 2.3);
    CHECK(step, 2.3);
    CHECK(floordiv, 2.3, 0.7);
    CHECK(sqrt, 1.7);
    CHECK(cbrt, 1.7);
    CHECK(cbrt, -1.7);
    CHECK(exp, x);
    CHECK(exp2, x);
    CHECK(log, 1.7);
    CHECK(log2, 1.7);
    CHECK(log10, 1.7);
    CHECK(pow, 1.7, 2.3);
    CHECK(pow, 1.7, -0.6);
    CHECK(sin, x);
    CHECK(cos, x);
    CHECK(tan, x);
    CHECK(asin, x);
    CHECK(acos, x);
    CHECK(atan, y);
    CHECK(atan2, x, y);
    CHECK(atan2, y, x);
    CHECK(sinh, y);
    CHECK(cosh, y);
    CHECK(tanh, y);
    CHECK(degrees, x);
    CHECK(radians, x);
    CHECK(smoothstep, -0.5, 1.5, 0.3);
    CHECK(smoothstep, 1.5, -0.5, 0.3);
    CHECK(lerp, x, y, 0.3);

    // integer adjoints exist and are callable
    int ia = 0, ib = 0;
    weft::adj_add(1, 2, ia, ib, 1);
    weft::adj_div(1, 2, ia, ib, 1);
    weft::adj_mod(1, 2, ia, ib, 1);
    weft::adj_bit_xor(1, 2, ia, ib, 1);
    weft::adj_abs(1, ia, 1);
    weft::adj_isnan(1.0f, *(new float(0)), true);

    // float / half instantiations
    float f = 0.5f, af = 0.f;
    weft::adj_pow(f, 2.0f, af, af, 1.0f);
    weft::half h(0.5f), ah(0.0f);
    weft::half hs = weft::sqrt(h) + weft::exp(h) * weft::sin(h);
    weft::adj_atan2(h, h, ah, ah, weft::half(1.0f));
    weft::adj_sin(h, ah, weft::half(1.0f));
    EXPECT(fabs(float(hs) - (sqrtf(0.5f) + expf(0.5f) * sinf(0.5f))) < 2e-3f, "half math %g", float(hs));
    EXPECT(float(ah) != 0.0f, "half adj");
}

static void test_half() {
    // every half bit pattern round-trips through float
    int bad = 0;
    for (unsigned b = 0; b < 65536u; ++b) {
        weft::half h = weft::half::from_bits((weft::uint16)b);
        float f = h;
        weft::half h2(f);
        bool nan = ((b >> 10) & 0x1f) == 0x1f && (b & 0x3ff);
        if (nan) {
            if (!(f != f) || !(((h2.bits >> 10) & 0x1f) == 0x1f && (h2.bits & 0x3ff))) ++bad;
        } else if (h2.bits != b) {
            ++bad;
        }
#if defined(__FLT16_MAX__)
        if (!nan) {
            _Float16 r;
            memcpy(&r, &b, 2);
            if ((float)r != f) ++bad;
        }
#endif
    }
    EXPECT(bad == 0, "half round trip: %d bad patterns", bad);
#if defined(__FLT16_MAX__)
    // float -> half rounding against the compiler's conversion
    bad = 0;
    unsigned long long s = 12345;
    for (int i = 0; i < 4000000; ++i) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        unsigned u = (unsigned)(s >> 32);
        if (i % 2) u = (u & 0x8fffffffu) | 0x30000000u;  // focus on the half range
        float f;
        memcpy(&f, &u, 4);
        if (f != f) continue;
        _Float16 r = (_Float16)f;
        unsigned short rb;
        memcpy(&rb, &r, 2);
        if (weft::half(f).bits != rb) {
            if (bad < 5) printf("  half(%.9g) = %04x, expected %04x\n", f, weft::half(f).bits, rb);
            ++bad;
        }
    }
    EXPECT(bad == 0, "float->half rounding: %d mismatches", bad);
#endif
    EXPECT(weft::half(65520.0f).bits == 0x7c00 && weft::half(65519.0f).bits == 0x7bff, "overflow rounding");
    EXPECT(weft::half(-0.0f).bits == 0x8000 && weft::half(1e-8f).bits == 0, "zero");
    EXPECT(weft::half(5.9604645e-8f).bits == 1 && weft::half(2.98023224e-8f).bits == 0, "subnormal");
    weft::half a(1.5f), b(2.25f);
    EXPECT(float(a + b) == 3.75f && float(a * b) == 3.375f && a < b && -a == weft::half(-1.5f), "half ops");
}

static void test_vec() {
    using namespace weft;
    v3 a = rnd<v3>(), b = rnd<v3>();
    v2 a2 = rnd<v2>(), b2 = rnd<v2>();
    v4 a4 = rnd<v4>(), b4 = rnd<v4>() + v4(3.0);
    double s = 0.7;
    CHECK(add, a, b);
    CHECK(sub, a, b);
    CHECK(neg, a);
    CHECK(pos, a);
    CHECK(mul, a, s);
    CHECK(mul, s, a4);
    CHECK(div, a, s);
    CHECK(div, s, b4);
    CHECK(cw_mul, a, b);
    CHECK(cw_div, a4, b4);
    CHECK(dot, a4, b4);
    CHECK(cross, a, b);
    CHECK(cross, a2, b2);
    CHECK(length, a);
    CHECK(length_sq, a4);
    CHECK(normalize, a);
    CHECK(normalize, a2);
    CHECK(min, a, b);
    CHECK(max, a, b);
    CHECK(min, a4);
    CHECK(max, a4);
    CHECK(abs, a);
    CHECK(lerp, a, b, s);
    CHECK(extract, a4, 2);
    CHECK(assign_copy, a4, 1, s);
    CHECK(outer, a, b2);
    CHECK(outer, a4, a);

    // forward values
    v3 x(1.0, 2.0, 3.0), y(4.0, 5.0, 6.0);
    EXPECT(weft::cross(x, y) == v3(-3.0, 6.0, -3.0), "cross");
    EXPECT(weft::dot(x, y) == 32.0 && weft::length(v2(3.0, 4.0)) == 5.0, "dot/length");
    EXPECT(weft::normalize(v3()) == v3() && weft::length(weft::normalize(x)) > 0.999999, "normalize");
    EXPECT(x * 2.0 == 2.0 * x && x / 2.0 == v3(0.5, 1.0, 1.5) && 6.0 / x == v3(6.0, 3.0, 2.0), "ops");
    EXPECT(-x + x == v3() && x != y, "ops2");
    vec_t<8, float> v8(1, 2, 3, 4, 5, 6, 7, 8);
    EXPECT(v8[7] == 8.0f && weft::dot(v8, v8) == 204.0f, "vec8");
    v3 z = x;
    weft::assign_inplace(z, 1, 7.0);
    v3 adj_z(1.0, 2.0, 3.0);
    double adj_val = 0;
    int ai = 0;
    weft::adj_assign_inplace(z, 1, 7.0, adj_z, ai, adj_val);
    EXPECT(z[1] == 7.0 && adj_val == 2.0 && adj_z[1] == 0.0, "assign_inplace");
    weft::vec3i vi(1, 2, 3);
    EXPECT(weft::dot(vi, vi) == 14 && (vi * 2)[2] == 6, "int vec");
    weft::vec3h vh(1.0f, 2.0f, 2.0f);
    EXPECT(float(weft::length(vh)) == 3.0f, "half vec");
    weft::vec3f vf = weft::vec3f(x);
    EXPECT(vf[2] == 3.0f && weft::vec3f(1.5f)[1] == 1.5f, "conversion/broadcast");
}

static void test_mat() {
    using namespace weft;
    m33 A = rnd<m33>(), B = rnd<m33>();
    m22 A2 = rnd<m22>();
    m44 A4 = rnd<m44>();
    m23 R23 = rnd<m23>();
    m32 R32 = rnd<m32>();
    v3 v = rnd<v3>();
    v2 w = rnd<v2>();
    double s = -0.8;
    CHECK(add, A, B);
    CHECK(sub, A, B);
    CHECK(neg, A);
    CHECK(mul, A, B);
    CHECK(mul, R23, R32);
    CHECK(mul, R32, R23);
    CHECK(mul, A, v);
    CHECK(mul, R23, v);
    CHECK(mul, v, A);
    CHECK(mul, w, R23);
    CHECK(mul, A, s);
    CHECK(mul, s, A4);
    CHECK(div, A, s);
    CHECK(cw_mul, A, B);
    CHECK(cw_div, A, B + m33(3.0));
    CHECK(transpose, R23);
    CHECK(trace, A4);
    CHECK(diag, v);
    CHECK(get_diag, A);
    CHECK(skew, v);
    CHECK(ddot, A, B);
    CHECK(extract, A, 1, 2);
    CHECK(extract, A4, 3);
    CHECK(assign_copy, A, 2, 0, s);
    CHECK(assign_copy, A, 1, v);
    CHECK(determinant, A2);
    CHECK(determinant, A);
    CHECK(determinant, A4);
    CHECK(inverse, A2);
    CHECK(inverse, A);
    CHECK(inverse, A4);

    // forward values
    m33 I = identity<3, double>();
    EXPECT(mat_err(A * inverse(A), I) < 1e-10, "inverse3 %g", mat_err(A * inverse(A), I));
    EXPECT(mat_err(A2 * inverse(A2), identity<2, double>()) < 1e-10, "inverse2");
    EXPECT(mat_err(A4 * inverse(A4), identity<4, double>()) < 1e-10, "inverse4 %g",
           mat_err(A4 * inverse(A4), identity<4, double>()));
    EXPECT(mat_err(inverse(m33()), m33()) == 0, "singular inverse");
    m44 D4(2.0, 0, 0, 0, 0, 3.0, 0, 0, 0, 0, 4.0, 0, 1, 2, 3, 5.0);
    EXPECT(fabs(determinant(D4) - 120.0) < 1e-12, "det4");
    EXPECT(fabs(determinant(m33(1, 2, 3, 4, 5, 6, 7, 8, 10)) + 3.0) < 1e-12, "det3");
    EXPECT(fabs(determinant(A) - determinant(transpose(A))) < 1e-12, "det T");
    m33 Rw(v3(1, 2, 3), v3(4, 5, 6), v3(7, 8, 9));
    EXPECT(Rw(1, 0) == 4.0 && Rw[2][1] == 8.0, "row constructor");
    EXPECT(mul(skew(v), w.c[0] * v + v3(1, 0, 0)) == cross(v, w.c[0] * v + v3(1, 0, 0)), "skew");
    EXPECT(mat_err(outer(v, v), transpose(outer(v, v))) == 0, "outer");
    mat33f Af(A);
    mat33f If = Af * inverse(Af);
    EXPECT(mat_err(m33(If), I) < 1e-5, "float inverse");
}

static void check_svd(const m33& A, const char* label) {
    using namespace weft;
    m33 U, V;
    v3 s;
    svd3(A, U, s, V);
    m33 I = identity<3, double>();
    double rec = mat_err(U * diag(s) * transpose(V), A);
    EXPECT(rec < 1e-12 * fmax(1.0, maxabs(A)), "svd3 %s reconstruction %g", label, rec);
    EXPECT(mat_err(transpose(U) * U, I) < 1e-12 && mat_err(transpose(V) * V, I) < 1e-12, "svd3 %s orthogonal", label);
    EXPECT(fabs(determinant(U) - 1) < 1e-12 && fabs(determinant(V) - 1) < 1e-12, "svd3 %s rotations", label);
    EXPECT(s[0] >= s[1] - 1e-14 && s[1] >= fabs(s[2]) - 1e-14 && s[1] >= 0, "svd3 %s order %g %g %g", label, s[0],
           s[1], s[2]);
    // float version
    mat33f Af(A), Uf, Vf;
    vec3f sf;
    svd3(Af, Uf, sf, Vf);
    double recf = mat_err(m33(Uf * diag(sf) * transpose(Vf)), m33(Af));
    EXPECT(recf < 2e-6 * fmax(1.0, maxabs(A)), "svd3f %s reconstruction %g", label, recf);
}

static void check_eig(const m33& A, const char* label) {
    using namespace weft;
    m33 Q;
    v3 d;
    eig3(A, Q, d);
    double rec = mat_err(Q * diag(d) * transpose(Q), A);
    EXPECT(rec < 1e-12 * fmax(1.0, maxabs(A)), "eig3 %s reconstruction %g", label, rec);
    EXPECT(mat_err(transpose(Q) * Q, identity<3, double>()) < 1e-12, "eig3 %s orthogonal", label);
    EXPECT(d[0] <= d[1] && d[1] <= d[2], "eig3 %s order", label);
    mat33f Af(A), Qf;
    vec3f df;
    eig3(Af, Qf, df);
    double recf = mat_err(m33(Qf * diag(df) * transpose(Qf)), m33(Af));
    EXPECT(recf < 2e-6 * fmax(1.0, maxabs(A)), "eig3f %s reconstruction %g", label, recf);
}

static void test_decompositions() {
    using namespace weft;
    // ---- forward checks
    for (int k = 0; k < 50; ++k) {
        m33 A = rnd<m33>();
        check_svd(A, "random");
        m33 S = A + transpose(A);
        check_eig(S, "random");
        m33 Q, R;
        qr3(A, Q, R);
        EXPECT(mat_err(Q * R, A) < 1e-12 && mat_err(transpose(Q) * Q, identity<3, double>()) < 1e-12, "qr3");
        EXPECT(R(1, 0) == 0 && R(2, 0) == 0 && R(2, 1) == 0 && R(0, 0) >= 0 && R(1, 1) >= 0 && R(2, 2) >= 0, "qr3 R");
        m33 Qp, P;
        polar_decomposition(A, Qp, P);
        EXPECT(mat_err(Qp * P, A) < 1e-12 && fabs(determinant(Qp) - 1) < 1e-12 && mat_err(P, transpose(P)) < 1e-12,
               "polar");
    }
    v3 a = rnd<v3>(), b = rnd<v3>(), c = rnd<v3>();
    check_svd(outer(a, b) + outer(b, c), "rank2");
    check_svd(outer(a, b), "rank1");
    check_svd(m33(), "zero");
    check_svd(identity<3, double>(), "identity");
    check_svd(-identity<3, double>(), "-identity");
    check_svd(quat_to_matrix(normalize(qd(0.3, -0.2, 0.5, 0.8))), "rotation");
    check_svd(diag(v3(1, 2, 2)), "repeated");
    check_svd(m33(0, 1, 0, 1, 0, 0, 0, 0, 1), "reflection");
    check_svd(m33(1e-3, 2, 0, 0, 1e-3, 0, 5, 0, 1e-9), "skewed");
    check_eig(m33(), "zero");
    check_eig(identity<3, double>(), "identity");
    check_eig(diag(v3(3, 1, 1)), "repeated");
    check_eig(outer(a, a), "rank1");

    // ---- adjoints (gauge-invariant losses for svd/eig)
    for (int k = 0; k < 5; ++k) {
        m33 A = rnd<m33>();
        if (k == 1) A = -A;
        m33 G1 = rnd<m33>(), G2 = rnd<m33>(), G3 = rnd<m33>();
        v3 ws = rnd<v3>(), d1 = rnd<v3>(), d2 = rnd<v3>(), d3 = rnd<v3>();
        auto svd_loss = [&](const m33& X) {
            m33 U, V;
            v3 s;
            svd3(X, U, s, V);
            return dot(ws, s) + ddot(G1, U * diag(d1) * transpose(U)) + ddot(G2, V * diag(d2) * transpose(V)) +
                   ddot(G3, U * diag(d3) * transpose(V));
        };
        m33 U, V;
        v3 s;
        svd3(A, U, s, V);
        m33 aU = (G1 + transpose(G1)) * U * diag(d1) + G3 * V * diag(d3);
        m33 aV = (G2 + transpose(G2)) * V * diag(d2) + transpose(G3) * U * diag(d3);
        m33 aA;
        adj_svd3(A, U, s, V, aA, aU, ws, aV);
        expect_grad("svd3", aA, fd_grad(A, svd_loss), 1e-5);

        m33 S = A + transpose(A);
        auto eig_loss = [&](const m33& X) {
            m33 Q;
            v3 d;
            eig3(X, Q, d);
            return dot(ws, d) + ddot(G1, Q * diag(d1) * transpose(Q));
        };
        m33 Q;
        v3 d;
        eig3(S, Q, d);
        m33 aS;
        adj_eig3(S, Q, d, aS, (G1 + transpose(G1)) * Q * diag(d1), ws);
        expect_grad("eig3", aS, fd_grad(S, eig_loss), 1e-5);

        auto qr_loss = [&](const m33& X) {
            m33 Qq, Rr;
            qr3(X, Qq, Rr);
            return ddot(G1, Qq) + ddot(G2, Rr);
        };
        m33 Qq, Rr, aQ;
        qr3(A, Qq, Rr);
        adj_qr3(A, Qq, Rr, aQ, G1, G2);
        expect_grad("qr3", aQ, fd_grad(A, qr_loss), 1e-5);

        auto polar_loss = [&](const m33& X) {
            m33 Qp, P;
            polar_decomposition(X, Qp, P);
            return ddot(G1, Qp) + ddot(G2, P);
        };
        m33 Qp, P, aP;
        polar_decomposition(A, Qp, P);
        adj_polar_decomposition(A, Qp, P, aP, G1, G2);
        expect_grad("polar_decomposition", aP, fd_grad(A, polar_loss), 1e-5);
    }
    // polar near a repeated-singular-value configuration (rotation) stays well defined
    {
        m33 A = quat_to_matrix(normalize(qd(0.1, 0.7, -0.2, 0.6))) + rnd<m33>() * 1e-3;
        m33 G1 = rnd<m33>(), G2 = rnd<m33>();
        auto polar_loss = [&](const m33& X) {
            m33 Qp, P;
            polar_decomposition(X, Qp, P);
            return ddot(G1, Qp) + ddot(G2, P);
        };
        m33 Qp, P, aP;
        polar_decomposition(A, Qp, P);
        adj_polar_decomposition(A, Qp, P, aP, G1, G2);
        expect_grad("polar_decomposition(near rotation)", aP, fd_grad(A, polar_loss), 1e-4);
    }
}

static void test_quat() {
    using namespace weft;
    qd q = rnd<qd>(), r = rnd<qd>();
    qd qn = normalize(q);
    v3 v = rnd<v3>(), axis = normalize(rnd<v3>());
    double s = 0.6;
    CHECK(add, q, r);
    CHECK(sub, q, r);
    CHECK(neg, q);
    CHECK(mul, q, r);
    CHECK(mul, q, s);
    CHECK(mul, s, q);
    CHECK(div, q, s);
    CHECK(dot, q, r);
    CHECK(length, q);
    CHECK(length_sq, q);
    CHECK(normalize, q);
    CHECK(extract, q, 3);
    CHECK(assign_copy, q, 0, s);
    CHECK(quat_inverse, q);
    CHECK(quat_from_axis_angle, axis, 1.1);
    CHECK(quat_rotate, q, v);
    CHECK(quat_rotate_inv, q, v);
    CHECK(quat_to_matrix, q);
    CHECK(quat_slerp, qn, normalize(r), 0.3);
    CHECK(quat_slerp, qn, normalize(qn + qd(1e-3, 0, 0, 0)), 0.3);
    // quat_from_matrix: exercise all four branches
    qd branch_q[4] = {qd(0.1, 0.2, 0.3, 0.9), qd(0.9, 0.2, 0.3, 0.1), qd(0.2, 0.9, 0.3, 0.1), qd(0.2, 0.3, 0.9, 0.1)};
    for (int k = 0; k < 4; ++k) {
        qd bq = normalize(branch_q[k]);
        m33 M = quat_to_matrix(bq);
        EXPECT(detail::qfm_case(M) == k, "quat_from_matrix branch %d", k);
        CHECK(quat_from_matrix, M + rnd<m33>() * 0.01);
        qd back = quat_from_matrix(M);
        EXPECT(fabs(fabs(dot(back, bq)) - 1) < 1e-12, "quat_from_matrix round trip %d", k);
    }
    // quat_to_axis_angle
    {
        v3 g = rnd<v3>();
        double ga = urand();
        auto loss = [&](const qd& x) {
            v3 ax;
            double an;
            quat_to_axis_angle(x, ax, an);
            return dot(g, ax) + ga * an;
        };
        v3 ax;
        double an;
        quat_to_axis_angle(qn, ax, an);
        qd aq;
        adj_quat_to_axis_angle(qn, ax, an, aq, g, ga);
        expect_grad("quat_to_axis_angle", aq, fd_grad(qn, loss), 1e-6);
        qd rebuilt = quat_from_axis_angle(ax, an);
        EXPECT(fabs(fabs(dot(rebuilt, qn)) - 1) < 1e-12, "axis angle round trip");
    }
    // forward values
    EXPECT(length(quat_rotate(qn, v) - quat_to_matrix(qn) * v) < 1e-12, "rotate vs matrix");
    EXPECT(length(quat_rotate_inv(qn, quat_rotate(qn, v)) - v) < 1e-12, "rotate_inv");
    EXPECT(length(quat_rotate(qn * normalize(r), v) - quat_rotate(qn, quat_rotate(normalize(r), v))) < 1e-12,
           "composition");
    qd rz = quat_from_axis_angle(v3(0, 0, 1), 3.14159265358979323846 / 2);
    EXPECT(length(quat_rotate(rz, v3(1, 0, 0)) - v3(0, 1, 0)) < 1e-12, "axis angle rotation");
    EXPECT(length(quat_rotate(quat_inverse(qn), v) - quat_rotate_inv(qn, v)) < 1e-12, "inverse");
    EXPECT(fabs(determinant(quat_to_matrix(qn)) - 1) < 1e-12, "rotation matrix");
    qd sl = quat_slerp(quat_identity<double>(), rz, 0.5);
    EXPECT(fabs(dot(sl, quat_from_axis_angle(v3(0, 0, 1), 3.14159265358979323846 / 4)) - 1) < 1e-12, "slerp");
    quatf qf(qn);
    EXPECT(length(v3(quat_rotate(qf, vec3f(v))) - quat_rotate(qn, v)) < 1e-5, "float quat");
}

static void test_transform() {
    using namespace weft;
    qd q = rnd<qd>(), qn = normalize(q);
    td t(rnd<v3>(), q), u(rnd<v3>(), rnd<qd>());
    td tn(rnd<v3>(), qn), un(rnd<v3>(), normalize(rnd<qd>()));
    v3 x = rnd<v3>();
    CHECK(make_transform, x, q);
    CHECK(transform_get_translation, t);
    CHECK(transform_get_rotation, t);
    CHECK(transform_point, t, x);
    CHECK(transform_vector, t, x);
    CHECK(transform_multiply, t, u);
    CHECK(mul, t, u);
    CHECK(transform_inverse, t);
    CHECK(extract, t, 5);
    // forward values
    EXPECT(length(transform_point(tn, x) - (quat_to_matrix(qn) * x + tn.p)) < 1e-12, "transform_point");
    EXPECT(length(transform_point(tn * un, x) - transform_point(tn, transform_point(un, x))) < 1e-12, "multiply");
    td id = transform_inverse(tn) * tn;
    EXPECT(length(id.p) < 1e-12 && fabs(fabs(id.q.w) - 1) < 1e-12, "inverse");
    EXPECT(length(transform_point(transform_inverse(tn), transform_point(tn, x)) - x) < 1e-12, "inverse point");
    EXPECT(transform_identity<double>()[6] == 1.0 && tn[3] == qn.x, "indexing");
    transformf tf(tn);
    EXPECT(length(v3(transform_point(tf, vec3f(x))) - transform_point(tn, x)) < 1e-5, "float transform");
}

static void test_spatial() {
    using namespace weft;
    v6 a = rnd<v6>(), b = rnd<v6>();
    m33 R = rnd<m33>(), S = rnd<m33>();
    CHECK(spatial_top, a);
    CHECK(spatial_bottom, a);
    CHECK(spatial_dot, a, b);
    CHECK(spatial_cross, a, b);
    CHECK(spatial_cross_dual, a, b);
    CHECK(spatial_adjoint, R, S);
    // motion cross == [w]x block matrix; force cross dual == -(a x)^T
    m66 X;
    m33 W = skew(spatial_top(a)), Vv = skew(spatial_bottom(a));
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            X(i, j) = W(i, j);
            X(i + 3, j + 3) = W(i, j);
            X(i + 3, j) = Vv(i, j);
        }
    EXPECT(length(spatial_cross(a, b) - X * b) < 1e-12, "spatial_cross");
    EXPECT(length(spatial_cross_dual(a, b) + transpose(X) * b) < 1e-12, "spatial_cross_dual");
    EXPECT(spatial_adjoint(R, S)(4, 1) == S(1, 1) && spatial_adjoint(R, S)(5, 5) == R(2, 2), "spatial_adjoint");
    v6 c(spatial_top(a), spatial_bottom(a));
    EXPECT(c == a, "spatial constructor");
}

static void test_random() {
    using namespace weft;
    uint32 st = rand_init(42);
    uint32 st2 = rand_init(42, 1);
    EXPECT(st != st2 && rand_init(42) == st, "rand_init");
    double sum = 0, sum2 = 0, nsum = 0, nsum2 = 0;
    int lo_ok = 1, int_ok = 1;
    const int n = 200000;
    for (int i = 0; i < n; ++i) {
        float f = randf(st);
        lo_ok &= (f >= 0.0f && f < 1.0f);
        sum += f;
        sum2 += f * f;
        float g = randn(st2);
        nsum += g;
        nsum2 += g * g;
        int k = randi(st, -3, 5);
        int_ok &= (k >= -3 && k < 5);
        float h = randf(st, 2.0f, 3.0f);
        lo_ok &= (h >= 2.0f && h < 3.0f);
    }
    EXPECT(lo_ok && int_ok, "ranges");
    EXPECT(fabs(sum / n - 0.5) < 0.01 && fabs(sum2 / n - 1.0 / 3.0) < 0.01, "randf moments %g", sum / n);
    EXPECT(fabs(nsum / n) < 0.02 && fabs(nsum2 / n - 1.0) < 0.02, "randn moments %g %g", nsum / n, nsum2 / n);
    vec3f p = sample_unit_sphere_surface(st);
    EXPECT(fabs(length(p) - 1.0f) < 1e-5f && length(sample_unit_sphere(st)) <= 1.0f &&
               length(sample_unit_disk(st)) <= 1.0f && sample_unit_hemisphere_surface(st)[2] >= 0.0f,
           "samplers");
    uint32 ast = 0;
    float af = 0;
    adj_randf(st, ast, 1.0f);
    adj_randf(st, 0.0f, 1.0f, ast, af, af, 1.0f);
}

int main() {
    test_scalar();
    test_half();
    test_vec();
    test_mat();
    test_decompositions();
    test_quat();
    test_transform();
    test_spatial();
    test_random();
    printf("%d checks, %d failures\n", g_checks, g_fail);
    return g_fail == 0 ? 0 : 1;
}
