// weft native: FFT of complex tiles (vec_t<2, T> elements: x = real, y = imaginary) along the last dimension,
// leading dimensions batched. Forward: X[k] = sum_n x[n] exp(-2 pi i k n / N); inverse uses +i; neither is
// normalised (as Warp / cuFFTDx).
//
// Algorithm: Stockham autosort passes of radix 4, 2, 3, 5 (and a generic odd radix for other small primes) on
// split real / imaginary arrays laid out element-major, batch-minor, so every pass runs unit-stride inner loops
// over (stride x batch) that the compiler vectorises. Lengths with a large prime factor use Bluestein's
// algorithm on a power-of-two transform. Plans (factorisation and twiddles, computed in double) are built once
// per (type, length) and kept in a function-local static on the CPU; the device code (under WEFT_CUDA) keeps no
// plans: it picks each pass's radix from the remaining length and computes twiddles with sincospi where used.
#pragma once
#include "tile.h"
#if !WEFT_CUDA
#endif

namespace weft {
namespace fft {

constexpr int kMaxStages = 40;
constexpr int kMaxGenericRadix = 31;  // larger prime factors go through Bluestein

struct stage_t {
    int radix;
    int m;   // n = radix * m at this pass
    int tw;  // offset of this pass's twiddles (radix - 1 rows of m)
    int tab; // offset of the radix's root table (generic radices only)
};

WEFT_FN constexpr int largest_prime_factor(int n) {
    int best = 1;
    for (int p = 2; p * p <= n; ++p)
        while (n % p == 0) {
            best = p;
            n /= p;
        }
    return n > 1 ? (n > best ? n : best) : best;
}
WEFT_FN constexpr bool uses_bluestein(int n) { return largest_prime_factor(n) > kMaxGenericRadix; }
WEFT_FN constexpr int bluestein_size(int n) {
    int m = 1;
    while (m < 2 * n - 1) m *= 2;
    return m;
}

template <typename T, int N>
struct plan_t {
    int nstages;
    stage_t st[kMaxStages];
    T twr[N], twi[N];      // forward twiddles exp(-2 pi i j p / n)
    T tabr[N], tabi[N];    // roots of unity of generic radices
};

#if !WEFT_CUDA
// The radices of the passes of a length-n plan, in order; returns their number. Powers of two: radix 8 where possible
// (fewer passes over the data), 4 to finish; a lone radix-2 pass only for an odd power of two below 8
// (2^(3a+1) = 8^(a-1) * 4 * 4); then the odd prime factors.
constexpr int plan_radices(int n, int* radices) {
    int rem = n, ns = 0, e = 0;
    while (rem % 2 == 0) { ++e; rem /= 2; }
    int r8 = e / 3, r4 = (e % 3) / 2, r2 = (e % 3) % 2;
    if (r2 && r8 > 0) { --r8; r4 += 2; r2 = 0; }
    for (int k = 0; k < r8; ++k) radices[ns++] = 8;
    for (int k = 0; k < r4; ++k) radices[ns++] = 4;
    if (r2) radices[ns++] = 2;
    for (int p = 3; rem > 1; p += 2)
        while (rem % p == 0) { radices[ns++] = p; rem /= p; }
    return ns;
}
// The set of pass kinds a length-n plan runs: bit R for the radices R = 2, 3, 4, 5, 8 with their own pass, bit 0 for
// the generic odd radix.
constexpr int radix_bits(int n) {
    int radices[kMaxStages] = {};
    const int ns = plan_radices(n, radices);
    int bits = 0;
    for (int k = 0; k < ns; ++k) {
        const int r = radices[k];
        bits |= (r == 2 || r == 3 || r == 4 || r == 5 || r == 8) ? (1 << r) : 1;
    }
    return bits;
}

template <typename T, int N>
inline void build_plan(plan_t<T, N>& P) {
    int tw = 0, tab = 0;
    int radices[kMaxStages] = {};
    const int ns = plan_radices(N, radices);
    int n = N;
    for (int k = 0; k < ns; ++k) {
        const int r = radices[k];
        const int m = n / r;
        P.st[k].radix = r;
        P.st[k].m = m;
        P.st[k].tw = tw;
        P.st[k].tab = tab;
        for (int j = 1; j < r; ++j)
            for (int p = 0; p < m; ++p) {
                const double a = -2.0 * 3.14159265358979323846 * double(j) * double(p) / double(n);
                P.twr[tw + (j - 1) * m + p] = T(::cos(a));
                P.twi[tw + (j - 1) * m + p] = T(::sin(a));
            }
        tw += (r - 1) * m;
        if (r != 2 && r != 3 && r != 4 && r != 5 && r != 8) {
            for (int t = 0; t < r; ++t) {
                const double a = -2.0 * 3.14159265358979323846 * double(t) / double(r);
                P.tabr[tab + t] = T(::cos(a));
                P.tabi[tab + t] = T(::sin(a));
            }
            tab += r;
        }
        n = m;
    }
    P.nstages = ns;
}

template <typename T, int N>
inline const plan_t<T, N>& get_plan() {
    struct holder {
        plan_t<T, N> p;
        holder() { build_plan(p); }
    };
    static const holder h;  // built once per (type, length), thread-safe
    return h.p;
}
#endif

// ---- butterflies: b_j = sum_k a_k w^(j k), w = exp(-+2 pi i / R), in place
template <int R, bool INV, typename T>
struct bfly;

template <bool INV, typename T>
struct bfly<2, INV, T> {
    WEFT_FN static void run(T* ar, T* ai) {
        const T r0 = ar[0] + ar[1], i0 = ai[0] + ai[1];
        ar[1] = ar[0] - ar[1];
        ai[1] = ai[0] - ai[1];
        ar[0] = r0;
        ai[0] = i0;
    }
};
template <bool INV, typename T>
struct bfly<4, INV, T> {
    WEFT_FN static void run(T* ar, T* ai) {
        const T t0r = ar[0] + ar[2], t0i = ai[0] + ai[2];
        const T t1r = ar[0] - ar[2], t1i = ai[0] - ai[2];
        const T t2r = ar[1] + ar[3], t2i = ai[1] + ai[3];
        const T t3r = ar[1] - ar[3], t3i = ai[1] - ai[3];
        ar[0] = t0r + t2r;
        ai[0] = t0i + t2i;
        ar[2] = t0r - t2r;
        ai[2] = t0i - t2i;
        // forward: b1 = t1 - i t3, b3 = t1 + i t3 (inverse swaps them)
        const T pr = t1r + t3i, pi = t1i - t3r;
        const T qr = t1r - t3i, qi = t1i + t3r;
        ar[1] = INV ? qr : pr;
        ai[1] = INV ? qi : pi;
        ar[3] = INV ? pr : qr;
        ai[3] = INV ? pi : qi;
    }
};
// radix 8: two radix-4 DFTs (even and odd inputs) joined with the eighth roots of unity
template <bool INV, typename T>
struct bfly<8, INV, T> {
    WEFT_FN static void run(T* ar, T* ai) {
        T er[4] = {ar[0], ar[2], ar[4], ar[6]}, ei[4] = {ai[0], ai[2], ai[4], ai[6]};
        T orr[4] = {ar[1], ar[3], ar[5], ar[7]}, oi[4] = {ai[1], ai[3], ai[5], ai[7]};
        bfly<4, INV, T>::run(er, ei);
        bfly<4, INV, T>::run(orr, oi);
        const T h = T(0.70710678118654752440);
        // w^j o_j with w = exp(-+ 2 pi i / 8): w = h (1 -+ i), w^2 = -+ i, w^3 = h (-1 -+ i)
        const T sg = INV ? T(-1) : T(1);
        const T w1r = h * (orr[1] + sg * oi[1]), w1i = h * (oi[1] - sg * orr[1]);
        const T w2r = sg * oi[2], w2i = -sg * orr[2];
        const T w3r = h * (-orr[3] + sg * oi[3]), w3i = h * (-oi[3] - sg * orr[3]);
        ar[0] = er[0] + orr[0];
        ai[0] = ei[0] + oi[0];
        ar[4] = er[0] - orr[0];
        ai[4] = ei[0] - oi[0];
        ar[1] = er[1] + w1r;
        ai[1] = ei[1] + w1i;
        ar[5] = er[1] - w1r;
        ai[5] = ei[1] - w1i;
        ar[2] = er[2] + w2r;
        ai[2] = ei[2] + w2i;
        ar[6] = er[2] - w2r;
        ai[6] = ei[2] - w2i;
        ar[3] = er[3] + w3r;
        ai[3] = ei[3] + w3i;
        ar[7] = er[3] - w3r;
        ai[7] = ei[3] - w3i;
    }
};
template <bool INV, typename T>
struct bfly<3, INV, T> {
    WEFT_FN static void run(T* ar, T* ai) {
        const T c = INV ? T(-0.86602540378443864676) : T(0.86602540378443864676);
        const T t1r = ar[1] + ar[2], t1i = ai[1] + ai[2];
        const T t2r = ar[1] - ar[2], t2i = ai[1] - ai[2];
        const T mr = ar[0] - T(0.5) * t1r, mi = ai[0] - T(0.5) * t1i;
        ar[0] += t1r;
        ai[0] += t1i;
        // b1 = m - i c t2, b2 = m + i c t2
        ar[1] = mr + c * t2i;
        ai[1] = mi - c * t2r;
        ar[2] = mr - c * t2i;
        ai[2] = mi + c * t2r;
    }
};
template <bool INV, typename T>
struct bfly<5, INV, T> {
    WEFT_FN static void run(T* ar, T* ai) {
        const T c1 = T(0.30901699437494742410), c2 = T(-0.80901699437494742410);
        const T s1 = INV ? T(-0.95105651629515357212) : T(0.95105651629515357212);
        const T s2 = INV ? T(-0.58778525229247312917) : T(0.58778525229247312917);
        const T t1r = ar[1] + ar[4], t1i = ai[1] + ai[4];
        const T t2r = ar[2] + ar[3], t2i = ai[2] + ai[3];
        const T t3r = ar[1] - ar[4], t3i = ai[1] - ai[4];
        const T t4r = ar[2] - ar[3], t4i = ai[2] - ai[3];
        const T u1r = ar[0] + c1 * t1r + c2 * t2r, u1i = ai[0] + c1 * t1i + c2 * t2i;
        const T u2r = ar[0] + c2 * t1r + c1 * t2r, u2i = ai[0] + c2 * t1i + c1 * t2i;
        const T v1r = s1 * t3r + s2 * t4r, v1i = s1 * t3i + s2 * t4i;
        const T v2r = s2 * t3r - s1 * t4r, v2i = s2 * t3i - s1 * t4i;
        ar[0] += t1r + t2r;
        ai[0] += t1i + t2i;
        // b1 = u1 - i v1, b4 = u1 + i v1, b2 = u2 - i v2, b3 = u2 + i v2
        ar[1] = u1r + v1i;
        ai[1] = u1i - v1r;
        ar[4] = u1r - v1i;
        ai[4] = u1i + v1r;
        ar[2] = u2r + v2i;
        ai[2] = u2i - v2r;
        ar[3] = u2r - v2i;
        ai[3] = u2i + v2r;
    }
};

// One Stockham pass: x[q + s (p + k m)] -> y[q + s (R p + j)] = (DFT_R of the a_k)_j * w_n^(j p), in one of three
// loop orders (the loop the compiler vectorises is the inner one):
// - s == 1 (the first pass of one sequence, transform_rows' usual case): along p, loads unit-stride, stores interleaved
//   by R with a constant stride. About twice as fast as the runtime-stride loop below, and cheaper to compile.
// - s >= 4: along q, every load and store unit-stride.
// - 1 < s < 4: along p with a runtime stride (elementwise stores). Radix 8 and 4 never get there from transform_rows
//   (their passes come first, so s = B 8^k with B = 1 or 8) and take the q loop instead (correct for any s, run
//   scalar when s is below the vector width): that loop would cost each of their libraries about 0.2 s of g++ for
//   a case weft does not run. Odd radices after a radix-2 pass (n = 6, 10, ...) keep it.
template <int R, bool INV, typename T>
WEFT_FN void pass_unit(int m, const T* __restrict__ xr, const T* __restrict__ xi, T* __restrict__ yr,
                       T* __restrict__ yi, const T* __restrict__ wr, const T* __restrict__ wi) {
#if defined(__GNUC__) && !defined(__clang__) && !WEFT_CUDA
#pragma GCC ivdep
#endif
    for (int p = 0; p < m; ++p) {
        T ar[R], ai[R];
        for (int k = 0; k < R; ++k) {
            ar[k] = xr[p + k * m];
            ai[k] = xi[p + k * m];
        }
        bfly<R, INV, T>::run(ar, ai);
        T* __restrict__ yrp = yr + R * p;
        T* __restrict__ yip = yi + R * p;
        yrp[0] = ar[0];
        yip[0] = ai[0];
        for (int j = 1; j < R; ++j) {
            const T c = wr[(j - 1) * m + p];
            const T d = INV ? -wi[(j - 1) * m + p] : wi[(j - 1) * m + p];
            yrp[j] = ar[j] * c - ai[j] * d;
            yip[j] = ar[j] * d + ai[j] * c;
        }
    }
}

template <int R, bool INV, typename T>
WEFT_FN void pass_rows(int m, int s, const T* __restrict__ xr, const T* __restrict__ xi, T* __restrict__ yr,
                       T* __restrict__ yi, const T* __restrict__ wr, const T* __restrict__ wi) {
    const int ms = m * s;
    for (int p = 0; p < m; ++p) {
        T cr[R], ci[R];
        for (int j = 1; j < R; ++j) {
            cr[j] = wr[(j - 1) * m + p];
            ci[j] = INV ? -wi[(j - 1) * m + p] : wi[(j - 1) * m + p];
        }
        const T* __restrict__ xrp = xr + s * p;
        const T* __restrict__ xip = xi + s * p;
        T* __restrict__ yrp = yr + s * R * p;
        T* __restrict__ yip = yi + s * R * p;
#if defined(__GNUC__) && !defined(__clang__) && !WEFT_CUDA
#pragma GCC ivdep
#endif
        for (int q = 0; q < s; ++q) {
            T ar[R], ai[R];
            for (int k = 0; k < R; ++k) {
                ar[k] = xrp[q + k * ms];
                ai[k] = xip[q + k * ms];
            }
            bfly<R, INV, T>::run(ar, ai);
            yrp[q] = ar[0];
            yip[q] = ai[0];
            for (int j = 1; j < R; ++j) {
                yrp[q + j * s] = ar[j] * cr[j] - ai[j] * ci[j];
                yip[q + j * s] = ar[j] * ci[j] + ai[j] * cr[j];
            }
        }
    }
}

template <int R, bool INV, typename T>
WEFT_FN void pass_strided(int m, int s, const T* __restrict__ xr, const T* __restrict__ xi, T* __restrict__ yr,
                          T* __restrict__ yi, const T* __restrict__ wr, const T* __restrict__ wi) {
    const int ms = m * s;
    for (int q = 0; q < s; ++q) {
#if defined(__GNUC__) && !defined(__clang__) && !WEFT_CUDA
#pragma GCC ivdep
#endif
        for (int p = 0; p < m; ++p) {
            T ar[R], ai[R];
            for (int k = 0; k < R; ++k) {
                ar[k] = xr[q + s * p + k * ms];
                ai[k] = xi[q + s * p + k * ms];
            }
            bfly<R, INV, T>::run(ar, ai);
            T* __restrict__ yrp = yr + q + s * R * p;
            T* __restrict__ yip = yi + q + s * R * p;
            yrp[0] = ar[0];
            yip[0] = ai[0];
            for (int j = 1; j < R; ++j) {
                const T c = wr[(j - 1) * m + p];
                const T d = INV ? -wi[(j - 1) * m + p] : wi[(j - 1) * m + p];
                yrp[j * s] = ar[j] * c - ai[j] * d;
                yip[j * s] = ar[j] * d + ai[j] * c;
            }
        }
    }
}

template <int R, bool INV, typename T>
WEFT_FN void pass(int m, int s, const T* __restrict__ xr, const T* __restrict__ xi, T* __restrict__ yr,
                  T* __restrict__ yi, const T* __restrict__ wr, const T* __restrict__ wi) {
    if (s == 1) {
        pass_unit<R, INV, T>(m, xr, xi, yr, yi, wr, wi);
        return;
    }
    if constexpr (R == 8 || R == 4) {
        pass_rows<R, INV, T>(m, s, xr, xi, yr, yi, wr, wi);
    } else {
        if (s >= 4)
            pass_rows<R, INV, T>(m, s, xr, xi, yr, yi, wr, wi);
        else
            pass_strided<R, INV, T>(m, s, xr, xi, yr, yi, wr, wi);
    }
}

// A pass of a generic (odd prime) radix: O(R^2) per butterfly, used only for primes 7..31.
template <bool INV, typename T>
WEFT_FN void pass_generic(int R, int m, int s, const T* __restrict__ xr, const T* __restrict__ xi,
                          T* __restrict__ yr, T* __restrict__ yi, const T* wr, const T* wi, const T* tr,
                          const T* ti) {
    const int ms = m * s;
    for (int p = 0; p < m; ++p)
        for (int q = 0; q < s; ++q) {
            T ar[kMaxGenericRadix], ai[kMaxGenericRadix];
            for (int k = 0; k < R; ++k) {
                ar[k] = xr[q + s * p + k * ms];
                ai[k] = xi[q + s * p + k * ms];
            }
            for (int j = 0; j < R; ++j) {
                T br = T(0), bi = T(0);
                for (int k = 0; k < R; ++k) {
                    const int t = (j * k) % R;
                    const T c = tr[t], d = INV ? -ti[t] : ti[t];
                    br += ar[k] * c - ai[k] * d;
                    bi += ar[k] * d + ai[k] * c;
                }
                T c = T(1), d = T(0);
                if (j > 0) {
                    c = wr[(j - 1) * m + p];
                    d = INV ? -wi[(j - 1) * m + p] : wi[(j - 1) * m + p];
                }
                yr[q + s * (R * p + j)] = br * c - bi * d;
                yi[q + s * (R * p + j)] = br * d + bi * c;
            }
        }
}

// Transforms B interleaved sequences (element k of sequence b at k * B + b) held in (xr, xi), using (yr, yi)
// as scratch; returns true when the result ended in (yr, yi). The passes of the plan's stages (st[0..nstages)).
template <bool INV, typename T>
WEFT_FN bool run_stages(const stage_t* stages, int nstages, const T* twr, const T* twi, const T* tabr, const T* tabi,
                        T* xr, T* xi, T* yr, T* yi, int B) {
    int s = B;
    bool in_y = false;
    for (int k = 0; k < nstages; ++k) {
        const stage_t& st = stages[k];
        const T* sr = in_y ? yr : xr;
        const T* si = in_y ? yi : xi;
        T* dr = in_y ? xr : yr;
        T* di = in_y ? xi : yi;
        const T* wr = twr + st.tw;
        const T* wi = twi + st.tw;
        switch (st.radix) {
            case 8: pass<8, INV, T>(st.m, s, sr, si, dr, di, wr, wi); break;
            case 4: pass<4, INV, T>(st.m, s, sr, si, dr, di, wr, wi); break;
            case 2: pass<2, INV, T>(st.m, s, sr, si, dr, di, wr, wi); break;
            case 3: pass<3, INV, T>(st.m, s, sr, si, dr, di, wr, wi); break;
            case 5: pass<5, INV, T>(st.m, s, sr, si, dr, di, wr, wi); break;
            default:
                pass_generic<INV, T>(st.radix, st.m, s, sr, si, dr, di, wr, wi, tabr + st.tab, tabi + st.tab);
        }
        s *= st.radix;
        in_y = !in_y;
    }
    return in_y;
}

template <bool INV, typename T, int N>
WEFT_FN bool run(const plan_t<T, N>& P, T* xr, T* xi, T* yr, T* yi, int B) {
    return run_stages<INV, T>(P.st, P.nstages, P.twr, P.twi, P.tabr, P.tabi, xr, xi, yr, yi, B);
}

#if !WEFT_CUDA && WEFT_FFT_RUNTIME
// ---- CPU, in weft's toolchain (-DWEFT_FFT_RUNTIME=1): the passes are compiled once per scalar type and radix into
// weft's FFT runtime libraries (built and loaded by weft/toolchain/runtime.py) instead of into every kernel that uses
// tile_fft: they are most of such a kernel's compile time and do not depend on the length. A kernel module refers
// only to the passes its lengths use (radix_bits), so a program builds only those libraries (a length 512 needs the
// radix-8 one). Only the forward transform is needed: the inverse is the forward transform of the data with real and
// imaginary parts swapped, parts swapped back (IFFT(x) = swap(FFT(swap(x))), swap(a + ib) = b + ia); with split
// arrays both swaps are free.
#define WEFT_RT_FFT_PASS(T, S, R)                                                                            \
    extern "C" __attribute__((visibility("default"))) void weft_rt_fft_##S##_r##R(int, int, const T*, const T*, \
                                                                                  T*, T*, const T*, const T*);
#define WEFT_RT_FFT_DECLS(T, S)                                                                                 \
    WEFT_RT_FFT_PASS(T, S, 2)                                                                                    \
    WEFT_RT_FFT_PASS(T, S, 3)                                                                                    \
    WEFT_RT_FFT_PASS(T, S, 4)                                                                                    \
    WEFT_RT_FFT_PASS(T, S, 5)                                                                                    \
    WEFT_RT_FFT_PASS(T, S, 8)                                                                                    \
    extern "C" __attribute__((visibility("default"))) void weft_rt_fft_##S##_rg(                                 \
        int, int, int, const T*, const T*, T*, T*, const T*, const T*, const T*, const T*);
WEFT_RT_FFT_DECLS(float, f32)
WEFT_RT_FFT_DECLS(double, f64)
#undef WEFT_RT_FFT_DECLS
#undef WEFT_RT_FFT_PASS

// One pass of radix R (0: the generic odd radix r) through the runtime library of T.
template <int R, typename T>
inline void rt_pass(int r, int m, int s, const T* xr, const T* xi, T* yr, T* yi, const T* wr, const T* wi,
                    const T* tr, const T* ti) {
#define WEFT_RT_FFT_CALL(S)                                                                                     \
    if constexpr (R == 0) weft_rt_fft_##S##_rg(r, m, s, xr, xi, yr, yi, wr, wi, tr, ti);                        \
    else if constexpr (R == 2) weft_rt_fft_##S##_r2(m, s, xr, xi, yr, yi, wr, wi);                              \
    else if constexpr (R == 3) weft_rt_fft_##S##_r3(m, s, xr, xi, yr, yi, wr, wi);                              \
    else if constexpr (R == 4) weft_rt_fft_##S##_r4(m, s, xr, xi, yr, yi, wr, wi);                              \
    else if constexpr (R == 5) weft_rt_fft_##S##_r5(m, s, xr, xi, yr, yi, wr, wi);                              \
    else weft_rt_fft_##S##_r8(m, s, xr, xi, yr, yi, wr, wi);
    if constexpr (detail::is_same_<T, float>::value) {
        WEFT_RT_FFT_CALL(f32)
    } else {
        WEFT_RT_FFT_CALL(f64)
    }
#undef WEFT_RT_FFT_CALL
}

// run_stages for a length-N plan, each pass a call into the runtime (only the pass kinds N uses are referenced).
template <typename T, int N>
inline bool run_forward(const plan_t<T, N>& P, T* xr, T* xi, T* yr, T* yi, int B) {
    if constexpr (!detail::is_same_<T, float>::value && !detail::is_same_<T, double>::value) {
        return run<false, T, N>(P, xr, xi, yr, yi, B);
    } else {
        constexpr int bits = radix_bits(N);
        int s = B;
        bool in_y = false;
        for (int k = 0; k < P.nstages; ++k) {
            const stage_t& st = P.st[k];
            const T* sr = in_y ? yr : xr;
            const T* si = in_y ? yi : xi;
            T* dr = in_y ? xr : yr;
            T* di = in_y ? xi : yi;
            const T* wr = P.twr + st.tw;
            const T* wi = P.twi + st.tw;
            const T* tr = P.tabr + st.tab;
            const T* ti = P.tabi + st.tab;
            switch (st.radix) {
                case 8: if constexpr (bits & (1 << 8)) rt_pass<8, T>(8, st.m, s, sr, si, dr, di, wr, wi, tr, ti); break;
                case 4: if constexpr (bits & (1 << 4)) rt_pass<4, T>(4, st.m, s, sr, si, dr, di, wr, wi, tr, ti); break;
                case 2: if constexpr (bits & (1 << 2)) rt_pass<2, T>(2, st.m, s, sr, si, dr, di, wr, wi, tr, ti); break;
                case 3: if constexpr (bits & (1 << 3)) rt_pass<3, T>(3, st.m, s, sr, si, dr, di, wr, wi, tr, ti); break;
                case 5: if constexpr (bits & (1 << 5)) rt_pass<5, T>(5, st.m, s, sr, si, dr, di, wr, wi, tr, ti); break;
                default:
                    if constexpr (bits & 1) rt_pass<0, T>(st.radix, st.m, s, sr, si, dr, di, wr, wi, tr, ti);
            }
            s *= st.radix;
            in_y = !in_y;
        }
        return in_y;
    }
}

// The forward (INV = false) or the unnormalised inverse transform, through the runtime's forward passes.
template <bool INV, typename T, int N>
inline bool run_dir(const plan_t<T, N>& P, T* xr, T* xi, T* yr, T* yi, int B) {
    if (INV) return run_forward<T, N>(P, xi, xr, yi, yr, B);
    return run_forward<T, N>(P, xr, xi, yr, yi, B);
}
#elif !WEFT_CUDA
// Self-contained (the headers compiled outside weft's toolchain): the passes compiled here, for both directions.
template <bool INV, typename T, int N>
inline bool run_dir(const plan_t<T, N>& P, T* xr, T* xi, T* yr, T* yi, int B) {
    return run<INV, T, N>(P, xr, xi, yr, yi, B);
}
#endif

// ---- Bluestein: X_k = c_k * sum_n (x_n c_n) conj(c_(k-n)), c_n = exp(-+ pi i n^2 / N), as a cyclic convolution
// of power-of-two length M computed with the plan above.
template <typename T, int N>
struct bluestein_t {
    static constexpr int M = bluestein_size(N);
    T cr[N], ci[N];        // forward chirp exp(-pi i n^2 / N)
    T fr[M], fi[M];        // FFT of the forward convolution kernel, divided by M
    T gr[M], gi[M];        // same for the inverse transform
};

#if !WEFT_CUDA
template <typename T, int N>
inline const bluestein_t<T, N>& get_bluestein() {
    struct holder {
        bluestein_t<T, N> b;
        holder() {
            constexpr int M = bluestein_t<T, N>::M;
            for (int n = 0; n < N; ++n) {
                const long long q = (long long)n * n % (2LL * N);
                const double a = -3.14159265358979323846 * double(q) / double(N);
                b.cr[n] = T(::cos(a));
                b.ci[n] = T(::sin(a));
            }
            static T sr[M], si[M];  // scratch used once, under the static's initialisation lock
            for (int inv = 0; inv < 2; ++inv) {
                T* kr = inv ? b.gr : b.fr;
                T* ki = inv ? b.gi : b.fi;
                for (int n = 0; n < M; ++n) kr[n] = ki[n] = T(0);
                // kernel h_n = conj(c_n) (forward) or c_n (inverse), at n and M - n
                for (int n = 0; n < N; ++n) {
                    const T hr = b.cr[n], hi = inv ? b.ci[n] : -b.ci[n];
                    kr[n] = hr;
                    ki[n] = hi;
                    if (n) {
                        kr[M - n] = hr;
                        ki[M - n] = hi;
                    }
                }
                const plan_t<T, M>& P = get_plan<T, M>();
                if (run_dir<false, T, M>(P, kr, ki, sr, si, 1))
                    for (int n = 0; n < M; ++n) { kr[n] = sr[n]; ki[n] = si[n]; }
                for (int n = 0; n < M; ++n) { kr[n] /= T(M); ki[n] /= T(M); }
            }
        }
    };
    static const holder h;
    return h.b;
}

// B interleaved sequences in (xr, xi) (length N each); the result is written back to (xr, xi).
template <bool INV, typename T, int N>
inline void run_bluestein(T* xr, T* xi, int B) {
    constexpr int M = bluestein_t<T, N>::M;
    const bluestein_t<T, N>& BS = get_bluestein<T, N>();
    const plan_t<T, M>& P = get_plan<T, M>();
    T* ar = new T[4 * M * B];
    T* ai = ar + M * B;
    T* sr = ai + M * B;
    T* si = sr + M * B;
    for (int i = 0; i < M * B; ++i) ar[i] = ai[i] = T(0);
    for (int n = 0; n < N; ++n) {
        const T c = BS.cr[n], d = INV ? -BS.ci[n] : BS.ci[n];
        for (int b = 0; b < B; ++b) {
            const T xr_ = xr[n * B + b], xi_ = xi[n * B + b];
            ar[n * B + b] = xr_ * c - xi_ * d;
            ai[n * B + b] = xr_ * d + xi_ * c;
        }
    }
    const T* kr = INV ? BS.gr : BS.fr;
    const T* ki = INV ? BS.gi : BS.fi;
    T* ur = ar;
    T* ui = ai;
    if (run_dir<false, T, M>(P, ar, ai, sr, si, B)) { ur = sr; ui = si; }
    for (int n = 0; n < M; ++n)
        for (int b = 0; b < B; ++b) {
            const T pr = ur[n * B + b], pi = ui[n * B + b];
            ur[n * B + b] = pr * kr[n] - pi * ki[n];
            ui[n * B + b] = pr * ki[n] + pi * kr[n];
        }
    T* vr = ur == ar ? sr : ar;
    T* vi = ui == ai ? si : ai;
    if (run_dir<true, T, M>(P, ur, ui, vr, vi, B)) { ur = vr; ui = vi; }
    for (int n = 0; n < N; ++n) {
        const T c = BS.cr[n], d = INV ? -BS.ci[n] : BS.ci[n];
        for (int b = 0; b < B; ++b) {
            const T pr = ur[n * B + b], pi = ui[n * B + b];
            xr[n * B + b] = pr * c - pi * d;
            xi[n * B + b] = pr * d + pi * c;
        }
    }
    delete[] ar;
}
#endif

}  // namespace fft
}  // namespace weft
#if WEFT_CUDA
#include "fft_device.h"
#endif
namespace weft {
namespace fft {


// Transform every length-N row of ``rows`` rows stored contiguously as complex pairs.
template <bool INV, typename T, int N>
WEFT_FN void transform_rows(vec_t<2, T>* data, int rows) {
    if (N <= 1) return;
#if WEFT_CUDA
    // one thread, one row at a time, scratch in its local memory
    vec_t<2, T> scratch[device_scratch(N, 1)];
    for (int r = 0; r < rows; ++r) device_rows<INV, T, N>(data + r * N, scratch, 1, 0, 1, false);
#else
    // Lengths up to 256: G = 8 rows at a time, element-major inside the group so the passes vectorise across the rows
    // (s >= 8 from the first pass). Longer rows, and the rows left over after the groups, one at a time (s = 1: the
    // first pass vectorises along the row, later passes across its sub-sequences): measured per element at one
    // thread, N = 512: 0.87 ns one row at a time against 1.19 in groups of 8 and 1.5-1.9 in groups of 2-5; N = 128:
    // 0.54 in groups of 8 against 0.93.
    constexpr int G = N <= 256 ? 8 : 1;
    T xr[N * G], xi[N * G], yr[N * G], yi[N * G];
    for (int r0 = 0; r0 < rows;) {
        const int g = rows - r0 >= G ? G : 1;
        const vec_t<2, T>* src = data + r0 * N;
        // element-major copies with the group size known at compile time: each element's G values are written
        // (read) as one vector; the row-major walk was 4x slower and cost more than the FFT passes themselves
        if (g == G) {
            for (int k = 0; k < N; ++k)
                for (int b = 0; b < G; ++b) {
                    xr[k * G + b] = src[b * N + k].c[0];
                    xi[k * G + b] = src[b * N + k].c[1];
                }
        } else {
            for (int k = 0; k < N; ++k) {
                xr[k] = src[k].c[0];
                xi[k] = src[k].c[1];
            }
        }
        const T* rr = xr;
        const T* ri = xi;
        if constexpr (uses_bluestein(N)) {
            run_bluestein<INV, T, N>(xr, xi, g);
        } else {
            if (run_dir<INV, T, N>(get_plan<T, N>(), xr, xi, yr, yi, g)) {
                rr = yr;
                ri = yi;
            }
        }
        vec_t<2, T>* dst = data + r0 * N;
        if (g == G) {
            for (int k = 0; k < N; ++k)
                for (int b = 0; b < G; ++b) {
                    dst[b * N + k].c[0] = rr[k * G + b];
                    dst[b * N + k].c[1] = ri[k * G + b];
                }
        } else {
            for (int k = 0; k < N; ++k) {
                dst[k].c[0] = rr[k];
                dst[k].c[1] = ri[k];
            }
        }
        r0 += g;
    }
#endif
}

}  // namespace fft

// In place, along the last dimension.
template <typename T, int... D>
WEFT_FN void tile_fft(tile_t<vec_t<2, T>, D...>& t) {
    typedef tiles::dims<D...> S;
    fft::transform_rows<false, T, S::inner>(t.data, S::outer);
}
template <typename T, int... D>
WEFT_FN void tile_ifft(tile_t<vec_t<2, T>, D...>& t) {
    typedef tiles::dims<D...> S;
    fft::transform_rows<true, T, S::inner>(t.data, S::outer);
}
// y = F x with F symmetric: adj_x += conj(F) adj_y, the unnormalised inverse transform (and vice versa).
template <typename T, int... D>
WEFT_FN void adj_tile_fft(tile_t<vec_t<2, T>, D...>& adj_in, const tile_t<vec_t<2, T>, D...>& adj_out) {
    tile_t<vec_t<2, T>, D...> g = adj_out;
    tile_ifft(g);
    adj_in += g;
}
template <typename T, int... D>
WEFT_FN void adj_tile_ifft(tile_t<vec_t<2, T>, D...>& adj_in, const tile_t<vec_t<2, T>, D...>& adj_out) {
    tile_t<vec_t<2, T>, D...> g = adj_out;
    tile_fft(g);
    adj_in += g;
}
// the store forms (a first contribution, weft::fresh): transform in place, no temporary tile and no add pass
template <typename T, int... D>
WEFT_FN void adj_tile_fft(Fresh<tile_t<vec_t<2, T>, D...>> adj_in, const tile_t<vec_t<2, T>, D...>& adj_out) {
    adj_in.slot = adj_out;
    tile_ifft(adj_in.slot);
}
template <typename T, int... D>
WEFT_FN void adj_tile_ifft(Fresh<tile_t<vec_t<2, T>, D...>> adj_in, const tile_t<vec_t<2, T>, D...>& adj_out) {
    adj_in.slot = adj_out;
    tile_fft(adj_in.slot);
}

}  // namespace weft
