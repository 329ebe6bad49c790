"""The device FFT (weft/native/fft_device.h) compiled for the host and checked against a double-precision DFT.

There is no GPU here, so the CUDA code path's numerics are checked on the CPU: the header is compiled with g++,
with ``sincospi`` from libm and POSIX threads standing in for the lanes of a block (``__syncthreads`` is a barrier
across them), so the cooperative split of every pass over the lanes runs as on a GPU block. Lengths cover radix
4/2/3/5, the generic odd radix, Bluestein (large prime factors) and the seed's sizes.
"""

from __future__ import annotations

import subprocess

import pytest
from host_lanes import CUDA_STANDINS, NATIVE
from host_lanes import cxx as _cxx

LENGTHS = [1, 2, 3, 4, 5, 7, 8, 12, 16, 29, 37, 48, 49, 64, 96, 97, 210, 384, 1000, 1024]
LANES = [1, 3, 32]

_PRELUDE = r"""
#include <cmath>
#include <cstdio>
#include <pthread.h>
#include <vector>
#include "fft.h"
#define __device__
#define __noinline__
""" + CUDA_STANDINS + r"""
#include "fft_device.h"
using namespace weft;

template <bool INV, typename T, int N>
struct Job {
    vec_t<2, T>* data;
    vec_t<2, T>* scratch;
    int rows, lane, lanes;
};
template <bool INV, typename T, int N>
static void* lane_main(void* p) {
    Job<INV, T, N>* j = static_cast<Job<INV, T, N>*>(p);
    fft::device_rows<INV, T, N>(j->data, j->scratch, j->rows, j->lane, j->lanes, j->lanes > 1);
    return nullptr;
}
// max |X - DFT(x)| / max |DFT(x)| over rows
template <bool INV, typename T, int N>
static double check(int rows, int lanes) {
    std::vector<vec_t<2, T>> data(rows * N), scratch(fft::device_scratch(N, rows) + 1);
    std::vector<double> xr(rows * N), xi(rows * N);
    unsigned s = 12345u + N;
    for (int k = 0; k < rows * N; ++k) {
        s = s * 1664525u + 1013904223u; xr[k] = double(s >> 8) / double(1 << 24) - 0.5;
        s = s * 1664525u + 1013904223u; xi[k] = double(s >> 8) / double(1 << 24) - 0.5;
        data[k].c[0] = T(xr[k]);
        data[k].c[1] = T(xi[k]);
    }
    pthread_barrier_init(&g_bar, nullptr, lanes);
    std::vector<pthread_t> threads(lanes);
    std::vector<Job<INV, T, N>> jobs(lanes);
    for (int l = 0; l < lanes; ++l) {
        jobs[l] = {data.data(), scratch.data(), rows, l, lanes};
        pthread_create(&threads[l], nullptr, lane_main<INV, T, N>, &jobs[l]);
    }
    for (int l = 0; l < lanes; ++l) pthread_join(threads[l], nullptr);
    pthread_barrier_destroy(&g_bar);
    double err = 0, ref = 1e-30;
    for (int r = 0; r < rows; ++r)
        for (int k = 0; k < N; ++k) {
            double sr = 0, si = 0;
            for (int n = 0; n < N; ++n) {
                const double a = (INV ? 2.0 : -2.0) * M_PI * double((long long)k * n % N) / N;
                sr += xr[r * N + n] * std::cos(a) - xi[r * N + n] * std::sin(a);
                si += xr[r * N + n] * std::sin(a) + xi[r * N + n] * std::cos(a);
            }
            err = std::fmax(err, std::hypot(double(data[r * N + k].c[0]) - sr, double(data[r * N + k].c[1]) - si));
            ref = std::fmax(ref, std::hypot(sr, si));
        }
    return err / ref;
}
"""



@pytest.fixture(scope="module")
def results(tmp_path_factory):
    if _cxx() is None:
        pytest.skip("no C++ compiler")
    lines = [_PRELUDE, "int main() {"]
    for n in LENGTHS:
        for lanes in LANES:
            for rows in (1, 3):
                for inv in ("false", "true"):
                    for t in ("float", "double"):
                        lines.append(f'    std::printf("{n} {lanes} {rows} {inv} {t} %.3e\\n", '
                                     f"check<{inv}, {t}, {n}>({rows}, {lanes}));")
    lines.append("    return 0;\n}\n")
    d = tmp_path_factory.mktemp("device_fft")
    src, exe = d / "device_fft.cpp", d / "device_fft"
    src.write_text("\n".join(lines))
    build = subprocess.run([_cxx(), "-std=c++17", "-O1", "-pthread", "-I", NATIVE, str(src), "-o", str(exe)],
                           check=False, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-4000:]
    run = subprocess.run([str(exe)], check=False, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    out = {}
    for line in run.stdout.splitlines():
        n, lanes, rows, inv, t, err = line.split()
        out[(int(n), int(lanes), int(rows), inv == "true", t)] = float(err)
    return out


@pytest.mark.parametrize("n", LENGTHS)
def test_device_fft_matches_dft(results, n):
    bad = {k: e for k, e in results.items() if k[0] == n and e > (2e-6 if k[4] == "float" else 1e-13)}
    assert not bad, bad
    assert sum(1 for k in results if k[0] == n) == len(LANES) * 2 * 2 * 2
