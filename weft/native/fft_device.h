// weft native: the device side of tile FFTs (included by fft.h when compiling for CUDA; also compiled on the host
// by tests/cuda/test_device_fft_host.py, with threads standing in for the lanes of a block).
//
// No plans are stored: a pass's radix comes from the remaining length (the CPU plan's order: 4s, then 2, then odd
// primes ascending) and twiddles are computed where they are used with sincospi (the argument 2 a / b carries one
// rounding, so the accuracy is that of sincospi). The same code runs on one thread (lane 0 of 1) or split over the
// lanes of a block (``coop``: every lane calls it; barriers between passes). Rows are stored row-major.
#pragma once

namespace weft {
namespace fft {

WEFT_FN int next_radix(int n) {
    if (n % 4 == 0) return 4;
    if (n % 2 == 0) return 2;
    for (int p = 3; p * p <= n; p += 2)
        if (n % p == 0) return p;
    return n;
}
// (c, s) = exp(-+ 2 pi i a / b), a >= 0
template <bool INV>
__device__ inline void root(int a, int b, float& c, float& s) {
    sincospif(-2.0f * float(a % b) / float(b), &s, &c);
    if (INV) s = -s;
}
template <bool INV>
__device__ inline void root(int a, int b, double& c, double& s) {
    sincospi(-2.0 * double(a % b) / double(b), &s, &c);
    if (INV) s = -s;
}
__device__ inline void block_sync(bool coop) {
    if (coop) __syncthreads();
}

// One butterfly of a pass of radix R (R = 0: generic odd radix ``r``) on row-major rows of length N.
template <int R, bool INV, typename T>
__device__ inline void device_butterfly(int r, int n, int m, int s, int p, int q, const vec_t<2, T>* __restrict__ x,
                                        vec_t<2, T>* __restrict__ y) {
    constexpr int K = R ? R : kMaxGenericRadix;
    T ar[K], ai[K];
    const int ms = m * s;
    for (int k = 0; k < r; ++k) {
        ar[k] = x[q + s * p + k * ms].c[0];
        ai[k] = x[q + s * p + k * ms].c[1];
    }
    if constexpr (R != 0) {
        bfly<R, INV, T>::run(ar, ai);
    } else {
        T br[K], bi[K];
        for (int j = 0; j < r; ++j) {
            T sr = T(0), si = T(0);
            for (int k = 0; k < r; ++k) {
                T c, d;
                root<INV>(j * k, r, c, d);
                sr += ar[k] * c - ai[k] * d;
                si += ar[k] * d + ai[k] * c;
            }
            br[j] = sr;
            bi[j] = si;
        }
        for (int j = 0; j < r; ++j) {
            ar[j] = br[j];
            ai[j] = bi[j];
        }
    }
    vec_t<2, T>* yp = y + q + s * r * p;
    yp[0].c[0] = ar[0];
    yp[0].c[1] = ai[0];
    for (int j = 1; j < r; ++j) {
        T c, d;
        root<INV>(j * p, n, c, d);
        yp[j * s].c[0] = ar[j] * c - ai[j] * d;
        yp[j * s].c[1] = ar[j] * d + ai[j] * c;
    }
}

// Stockham passes over ``rows`` rows of length N in x (row-major), y the same size as scratch; the work of each
// pass (rows x N / radix butterflies) is split over the lanes. Returns true when the result ended in y.
template <bool INV, typename T>
__device__ __noinline__ bool device_stockham(int N, vec_t<2, T>* x, vec_t<2, T>* y, int rows, int lane, int nlanes, bool coop) {
    int n = N, s = 1;
    bool in_y = false;
    while (n > 1) {
        const int r = next_radix(n);
        const int m = n / r;
        const vec_t<2, T>* src = in_y ? y : x;
        vec_t<2, T>* dst = in_y ? x : y;
        const int per_row = m * s;
        for (int w = lane; w < rows * per_row; w += nlanes) {
            const int row = w / per_row;
            const int rem = w - row * per_row;
            const int p = rem / s, q = rem - p * s;
            const vec_t<2, T>* xs = src + row * N;
            vec_t<2, T>* ys = dst + row * N;
            switch (r) {
                case 4: device_butterfly<4, INV, T>(r, n, m, s, p, q, xs, ys); break;
                case 2: device_butterfly<2, INV, T>(r, n, m, s, p, q, xs, ys); break;
                case 3: device_butterfly<3, INV, T>(r, n, m, s, p, q, xs, ys); break;
                case 5: device_butterfly<5, INV, T>(r, n, m, s, p, q, xs, ys); break;
                default: device_butterfly<0, INV, T>(r, n, m, s, p, q, xs, ys);
            }
        }
        block_sync(coop);
        s *= r;
        n = m;
        in_y = !in_y;
    }
    return in_y;
}

// Complex elements of scratch one transform of ``rows`` rows of length N needs on the device.
WEFT_FN constexpr int device_scratch(int N, int rows) {
    return uses_bluestein(N) ? (2 * rows + 1) * bluestein_size(N) : rows * N;
}

template <typename T>
__device__ inline void chirp(int n, int N, T& c, T& d) {  // exp(-pi i n^2 / N)
    const long long q = (long long)n * n % (2LL * N);
    root<false>(int(q), 2 * N, c, d);
}

// Bluestein on the device: scratch = a (rows x M) | b (rows x M) | kernel spectrum (M).
template <bool INV, typename T, int N>
__device__ __noinline__ void device_bluestein(vec_t<2, T>* data, vec_t<2, T>* scratch, int rows, int lane, int nlanes, bool coop) {
    constexpr int M = bluestein_size(N);
    vec_t<2, T>* a = scratch;
    vec_t<2, T>* b = scratch + rows * M;
    vec_t<2, T>* kern = scratch + 2 * rows * M;
    // kernel h_n = conj(c_n) (forward) or c_n (inverse), at n and M - n; its spectrum divided by M
    for (int n = lane; n < M; n += nlanes) {
        const int k = n <= M / 2 ? n : M - n;
        T c = T(0), d = T(0);
        if (k < N) {
            chirp(k, N, c, d);
            if (!INV) d = -d;
        }
        kern[n].c[0] = c;
        kern[n].c[1] = d;
    }
    block_sync(coop);
    if (device_stockham<false, T>(M, kern, b, 1, lane, nlanes, coop)) {
        for (int n = lane; n < M; n += nlanes) kern[n] = b[n];
        block_sync(coop);
    }
    for (int w = lane; w < rows * M; w += nlanes) {
        const int n = w % M;
        T pr = T(0), pi = T(0);
        if (n < N) {
            T c, d;
            chirp(n, N, c, d);
            if (INV) d = -d;
            const vec_t<2, T> v = data[(w / M) * N + n];
            pr = v.c[0] * c - v.c[1] * d;
            pi = v.c[0] * d + v.c[1] * c;
        }
        a[w].c[0] = pr;
        a[w].c[1] = pi;
    }
    block_sync(coop);
    vec_t<2, T>* u = a;
    vec_t<2, T>* v = b;
    if (device_stockham<false, T>(M, a, b, rows, lane, nlanes, coop)) {
        u = b;
        v = a;
    }
    for (int w = lane; w < rows * M; w += nlanes) {
        const int n = w % M;
        const T kr = kern[n].c[0] / T(M), ki = kern[n].c[1] / T(M);
        const T pr = u[w].c[0], pi = u[w].c[1];
        u[w].c[0] = pr * kr - pi * ki;
        u[w].c[1] = pr * ki + pi * kr;
    }
    block_sync(coop);
    if (device_stockham<true, T>(M, u, v, rows, lane, nlanes, coop)) u = v;
    for (int w = lane; w < rows * N; w += nlanes) {
        const int n = w % N;
        T c, d;
        chirp(n, N, c, d);
        if (INV) d = -d;
        const vec_t<2, T> p = u[(w / N) * M + n];
        data[w].c[0] = p.c[0] * c - p.c[1] * d;
        data[w].c[1] = p.c[0] * d + p.c[1] * c;
    }
    block_sync(coop);
}

// Transform ``rows`` rows of length N of ``data`` in place, using ``scratch`` (device_scratch(N, rows) elements);
// the lanes of a block split the work when ``coop`` (every lane must call it), else one thread does it all.
template <bool INV, typename T, int N>
__device__ void device_rows(vec_t<2, T>* data, vec_t<2, T>* scratch, int rows, int lane, int nlanes, bool coop) {
    if (N <= 1) return;
    if constexpr (uses_bluestein(N)) {
        device_bluestein<INV, T, N>(data, scratch, rows, lane, nlanes, coop);
    } else {
        if (device_stockham<INV, T>(N, data, scratch, rows, lane, nlanes, coop)) {
            for (int w = lane; w < rows * N; w += nlanes) data[w] = scratch[w];
            block_sync(coop);
        }
    }
}

}  // namespace fft
}  // namespace weft
