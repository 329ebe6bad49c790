"""The cooperative tile operations (weft/native/tile_cuda.h) run on the host with threads as the lanes of a block.

No GPU here, so the block-cooperative code is compiled with g++ with stand-ins for the CUDA built-ins: each lane is
a POSIX thread with its own ``threadIdx``, ``__syncthreads`` is a barrier across them and ``__shared__`` variables
are statics. Each operation (forward and adjoint) is run with 1, 3 and 32 lanes and compared with the CPU
functions of tile.h / fft.h, which are the reference. When the compiler supports it the program is built with
ThreadSanitizer, which reports any data race (a missing barrier) between lanes.
"""

from __future__ import annotations

import os
import subprocess

import pytest
from host_lanes import CUDA_STANDINS, NATIVE
from host_lanes import cxx as _cxx

_SOURCE = r"""
#include <cmath>
#include <cstdio>
#include <functional>
#include <pthread.h>
#include <vector>
#include "tile.h"
#include "fft.h"

struct weft_dim3 { unsigned x, y, z; };
static thread_local weft_dim3 threadIdx;
static weft_dim3 blockDim;
""" + CUDA_STANDINS + r"""
#define __device__
#define __forceinline__
#define __noinline__
#define __shared__ static
#define __align__(n)
#include "fft_device.h"
#include "tile_cuda.h"

using namespace weft;

static std::function<void()> g_body;
static void* lane_main(void* p) {
    threadIdx = {unsigned((long)p), 0, 0};
    g_body();
    return nullptr;
}
// every lane runs body (the block-wide call sequence), as the threads of one CUDA block
static void run_block(int lanes, std::function<void()> body) {
    blockDim = {unsigned(lanes), 1, 1};
    g_body = body;
    pthread_barrier_init(&g_bar, nullptr, lanes);
    std::vector<pthread_t> t(lanes);
    for (long l = 0; l < lanes; ++l) pthread_create(&t[l], nullptr, lane_main, (void*)l);
    for (long l = 0; l < lanes; ++l) pthread_join(t[l], nullptr);
    pthread_barrier_destroy(&g_bar);
}

static int g_fail = 0;
static unsigned g_seed = 1;
static double rnd() {
    g_seed = g_seed * 1664525u + 1013904223u;
    return double(g_seed >> 8) / double(1 << 24) - 0.5;
}
template <typename T, int... D>
static void fill(tile_t<T, D...>& t) {
    for (int i = 0; i < tile_t<T, D...>::size; ++i) t.data[i] = T(rnd());
}
template <typename T, int... D>
static void fillc(tile_t<vec_t<2, T>, D...>& t) {
    for (int i = 0; i < tile_t<vec_t<2, T>, D...>::size; ++i) t.data[i] = vec_t<2, T>(T(rnd()), T(rnd()));
}
static double diff(float a, float b) { return std::fabs(double(a) - double(b)); }
static double diff(int a, int b) { return std::fabs(double(a - b)); }
static double diff(const vec_t<2, float>& a, const vec_t<2, float>& b) {
    return std::fmax(diff(a.c[0], b.c[0]), diff(a.c[1], b.c[1]));
}
template <typename T, int... D>
static double tdiff(const tile_t<T, D...>& a, const tile_t<T, D...>& b) {
    double m = 0;
    for (int i = 0; i < tile_t<T, D...>::size; ++i) m = std::fmax(m, diff(a.data[i], b.data[i]));
    return m;
}
static void check(const char* what, int lanes, double err, double tol) {
    std::printf("%s lanes=%d err=%.3e %s\n", what, lanes, err, err <= tol ? "ok" : "FAIL");
    if (!(err <= tol)) ++g_fail;
}
static unsigned char g_scratch[1 << 20];

template <int L>
static void run_all() {
    const int lanes = L;
    // ---- load / store with out-of-bounds rows and columns, adjoints, atomic add
    {
        const int R = 5, C = 7;
        std::vector<float> data(R * C), grad(R * C, 0.f), out_cpu(R * C, 0.f), out_cta(R * C, 0.f);
        for (auto& v : data) v = float(rnd());
        array_t<float> a{data.data(), grad.data(), {R, C, 0, 0}, 2, 0, {C * 4, 4, 0, 0}};
        static tile_t<float, 4, 6> t1, t2, g;
        tile_load(t1, a, 3, -2);
        run_block(lanes, [&] { cta::tile_load(t2, a, 3, -2); });
        check("tile_load", lanes, tdiff(t1, t2), 0);
        array_t<float> o1{out_cpu.data(), nullptr, {R, C, 0, 0}, 2, 0, {C * 4, 4, 0, 0}};
        array_t<float> o2{out_cta.data(), nullptr, {R, C, 0, 0}, 2, 0, {C * 4, 4, 0, 0}};
        tile_store(o1, t1, 2, 3);
        run_block(lanes, [&] { cta::tile_store(o2, t2, 2, 3); });
        double e = 0;
        for (int i = 0; i < R * C; ++i) e = std::fmax(e, diff(out_cpu[i], out_cta[i]));
        check("tile_store", lanes, e, 0);
        fill(g);
        adj_tile_load(a, g, 1, 1);
        std::vector<float> ref = grad;
        for (auto& v : grad) v = 0.f;
        run_block(lanes, [&] { cta::adj_tile_load(a, g, 1, 1); });
        e = 0;
        for (int i = 0; i < R * C; ++i) e = std::fmax(e, diff(ref[i], grad[i]));
        check("adj_tile_load", lanes, e, 1e-6);
        static tile_t<float, 4, 6> old1, old2;
        tile_atomic_add(old1, o1, t1, 0, 0);
        run_block(lanes, [&] { cta::tile_atomic_add(old2, o2, t1, 0, 0); });
        e = tdiff(old1, old2);
        for (int i = 0; i < R * C; ++i) e = std::fmax(e, diff(out_cpu[i], out_cta[i]));
        check("tile_atomic_add", lanes, e, 1e-6);
    }
    // ---- element-wise with a scalar operand and its adjoint (the scalar gradient goes to lane 0)
    {
        static tile_t<float, 3, 11> a, out1, out2, adj_out, adj_a1, adj_a2;
        fill(a);
        fill(adj_out);
        const float s = 0.75f;
        tile_mul(out1, a, s);
        run_block(lanes, [&] { cta::tile_mul(out2, a, s); });
        check("tile_mul(tile, scalar)", lanes, tdiff(out1, out2), 0);
        float adj_s1 = 0.f;
        adj_a1 = tile_t<float, 3, 11>();
        adj_a2 = tile_t<float, 3, 11>();
        adj_tile_mul(a, s, adj_a1, adj_s1, adj_out);
        std::vector<float> adj_s2(lanes, 0.f);
        run_block(lanes, [&] {
            float mine = 0.f;
            cta::adj_tile_mul(a, s, adj_a2, mine, adj_out, g_scratch);
            adj_s2[threadIdx.x] = mine;
        });
        double e = tdiff(adj_a1, adj_a2);
        e = std::fmax(e, diff(adj_s1, adj_s2[0]));
        for (int l = 1; l < lanes; ++l) e = std::fmax(e, diff(0.f, adj_s2[l]));
        check("adj_tile_mul(tile, scalar)", lanes, e, 1e-5);
    }
    // ---- reductions
    {
        static tile_t<float, 7, 9> t;
        static tile_t<float, 1> r1, r2;
        static tile_t<int32, 1> i1, i2;
        fill(t);
        t.data[40] = t.data[13] = 5.f;   // ties: the first index wins
        t.data[50] = t.data[22] = -5.f;
        // a partial block (running < lanes) leaves out the elements of the lanes it lacks (element k: lane k % lanes)
        for (int running : {lanes, (lanes + 1) / 2, 1}) {
            const Lanes ln{running, lanes};
            tile_sum(r1, t, ln);
            run_block(lanes, [&] { cta::tile_sum(r2, t, ln, g_scratch); });
            check("tile_sum", lanes, tdiff(r1, r2), 1e-5);
            tile_max(r1, t, ln);
            run_block(lanes, [&] { cta::tile_max(r2, t, ln, g_scratch); });
            check("tile_max", lanes, tdiff(r1, r2), 0);
            tile_min(r1, t, ln);
            run_block(lanes, [&] { cta::tile_min(r2, t, ln, g_scratch); });
            check("tile_min", lanes, tdiff(r1, r2), 0);
            tile_argmax(i1, t, ln);
            run_block(lanes, [&] { cta::tile_argmax(i2, t, ln, g_scratch); });
            check("tile_argmax", lanes, tdiff(i1, i2), 0);
            tile_argmin(i1, t, ln);
            run_block(lanes, [&] { cta::tile_argmin(i2, t, ln, g_scratch); });
            check("tile_argmin", lanes, tdiff(i1, i2), 0);
            static tile_t<float, 7, 9> g1, g2;
            g1 = g2 = tile_t<float, 7, 9>();
            r1.data[0] = 1.5f;
            adj_tile_max(t, g1, r1, ln);
            run_block(lanes, [&] { cta::adj_tile_max(t, g2, r1, ln, g_scratch); });
            check("adj_tile_max", lanes, tdiff(g1, g2), 0);
            g1 = g2 = tile_t<float, 7, 9>();
            adj_tile_sum(g1, r1, ln);
            run_block(lanes, [&] { cta::adj_tile_sum(g2, r1, ln); });
            check("adj_tile_sum", lanes, tdiff(g1, g2), 0);
            static tile_t<float, 9> s1, s2;
            tile_sum_axis<0>(s1, t, ln);
            run_block(lanes, [&] { cta::tile_sum_axis<0>(s2, t, ln, g_scratch); });
            check("tile_sum_axis", lanes, tdiff(s1, s2), 1e-5);
            static tile_t<float, 7, 9> c1, c2;
            tile_scan_inclusive(c1, t, ln);
            run_block(lanes, [&] { cta::tile_scan_inclusive(c2, t, ln); });
            check("tile_scan_inclusive", lanes, tdiff(c1, c2), 0);
        }
    }
    // ---- matmul (plain and accumulating) and adjoints
    {
        static tile_t<float, 5, 6> a, adj_a1, adj_a2;
        static tile_t<float, 6, 7> b, adj_b1, adj_b2;
        static tile_t<float, 5, 7> c, out1, out2, adj_out, adj_c1, adj_c2;
        fill(a); fill(b); fill(c); fill(adj_out);
        tile_matmul(out1, a, b);
        run_block(lanes, [&] { cta::tile_matmul(out2, a, b); });
        check("tile_matmul", lanes, tdiff(out1, out2), 1e-5);
        tile_matmul_acc(out1, a, b, c, 0.5f, 2.0f);
        run_block(lanes, [&] { cta::tile_matmul_acc(out2, a, b, c, 0.5f, 2.0f); });
        check("tile_matmul_acc", lanes, tdiff(out1, out2), 1e-5);
        adj_a1 = adj_a2 = tile_t<float, 5, 6>();
        adj_b1 = adj_b2 = tile_t<float, 6, 7>();
        adj_c1 = adj_c2 = tile_t<float, 5, 7>();
        float al1 = 0.f, be1 = 0.f;
        adj_tile_matmul_acc(a, b, c, 0.5f, 2.0f, adj_a1, adj_b1, adj_c1, al1, be1, adj_out);
        std::vector<float> al2(lanes), be2(lanes);
        run_block(lanes, [&] {
            float al = 0.f, be = 0.f;
            cta::adj_tile_matmul_acc(a, b, c, 0.5f, 2.0f, adj_a2, adj_b2, adj_c2, al, be, adj_out, g_scratch);
            al2[threadIdx.x] = al;
            be2[threadIdx.x] = be;
        });
        double e = std::fmax(std::fmax(tdiff(adj_a1, adj_a2), tdiff(adj_b1, adj_b2)), tdiff(adj_c1, adj_c2));
        e = std::fmax(e, std::fmax(diff(al1, al2[0]), diff(be1, be2[0])));
        for (int l = 1; l < lanes; ++l) e = std::fmax(e, std::fmax(diff(0.f, al2[l]), diff(0.f, be2[l])));
        check("adj_tile_matmul_acc", lanes, e, 1e-5);
    }
    // ---- transpose, broadcast, view and adjoints
    {
        static tile_t<float, 4, 6> t, adj_t1, adj_t2;
        static tile_t<float, 6, 4> tt1, tt2;
        fill(t);
        tile_transpose(tt1, t);
        run_block(lanes, [&] { cta::tile_transpose(tt2, t); });
        check("tile_transpose", lanes, tdiff(tt1, tt2), 0);
        adj_t1 = adj_t2 = tile_t<float, 4, 6>();
        adj_tile_transpose(adj_t1, tt1);
        run_block(lanes, [&] { cta::adj_tile_transpose(adj_t2, tt1); });
        check("adj_tile_transpose", lanes, tdiff(adj_t1, adj_t2), 0);
        static tile_t<float, 1, 6> row, adj_r1, adj_r2;
        static tile_t<float, 5, 6> bc1, bc2;
        fill(row);
        fill(bc1);
        tile_broadcast(bc2, row);
        static tile_t<float, 5, 6> bc3;
        run_block(lanes, [&] { cta::tile_broadcast(bc3, row); });
        check("tile_broadcast", lanes, tdiff(bc2, bc3), 0);
        adj_r1 = adj_r2 = tile_t<float, 1, 6>();
        adj_tile_broadcast(adj_r1, bc1);
        run_block(lanes, [&] { cta::adj_tile_broadcast(adj_r2, bc1); });
        check("adj_tile_broadcast", lanes, tdiff(adj_r1, adj_r2), 1e-6);
        static tile_t<float, 2, 3> v1, v2;
        tile_view(v1, t, 1, 2);
        run_block(lanes, [&] { cta::tile_view(v2, t, 1, 2); });
        check("tile_view", lanes, tdiff(v1, v2), 0);
        adj_t1 = adj_t2 = tile_t<float, 4, 6>();
        adj_tile_view(adj_t1, v1, 1, 2);
        run_block(lanes, [&] { cta::adj_tile_view(adj_t2, v1, 1, 2); });
        check("adj_tile_view", lanes, tdiff(adj_t1, adj_t2), 0);
    }
    // ---- fill and its adjoint, tile(x) / untile per lane
    {
        static tile_t<float, 3, 5> t, g;
        fill(g);
        float ref = 0.f;
        adj_tile_fill(2.0f, ref, g);
        std::vector<float> got(lanes);
        run_block(lanes, [&] {
            float mine = 0.f;
            cta::tile_fill(t, 2.0f);
            cta::adj_tile_fill(2.0f, mine, g, g_scratch);
            got[threadIdx.x] = mine;
        });
        double e = diff(ref, got[0]);
        for (int i = 0; i < 15; ++i) e = std::fmax(e, diff(t.data[i], 2.0f));
        for (int l = 1; l < lanes; ++l) e = std::fmax(e, diff(0.f, got[l]));
        check("tile_fill + adjoint", lanes, e, 1e-5);
        static tile_t<float, L> lt;
        std::vector<float> back(lanes);
        run_block(lanes, [&] {
            cta::tile_from_lane(lt, float(threadIdx.x) * 0.5f);
            float s = 0.f;
            cta::adj_tile_from_lane(s, lt);
            back[threadIdx.x] = s + untile(lt, (int(threadIdx.x) + 1) % L);
        });
        e = 0;
        for (int l = 0; l < lanes; ++l) e = std::fmax(e, diff(back[l], 0.5f * l + 0.5f * ((l + 1) % L)));
        check("tile_from_lane / untile", lanes, e, 0);
    }
    // ---- FFT / inverse FFT and their adjoints (radix 4/2, 3/5, generic 7, Bluestein 37)
    {
        static tile_t<vec_t<2, float>, 2, 60> x, y1, y2, g1, g2;
        fillc(x);
        y1 = y2 = x;
        tile_fft(y1);
        run_block(lanes, [&] { cta::tile_fft(y2, g_scratch); });
        check("tile_fft 2x60", lanes, tdiff(y1, y2), 1e-4);
        tile_ifft(y1);
        run_block(lanes, [&] { cta::tile_ifft(y2, g_scratch); });
        check("tile_ifft 2x60", lanes, tdiff(y1, y2), 1e-3);
        g1 = g2 = tile_t<vec_t<2, float>, 2, 60>();
        adj_tile_fft(g1, x);
        run_block(lanes, [&] { cta::adj_tile_fft(g2, x, g_scratch); });
        check("adj_tile_fft 2x60", lanes, tdiff(g1, g2), 1e-4);
        static tile_t<vec_t<2, float>, 3, 37> b1, b2;
        static tile_t<vec_t<2, float>, 1, 7> s1, s2;
        fillc(b1);
        b2 = b1;
        tile_fft(b1);
        run_block(lanes, [&] { cta::tile_fft(b2, g_scratch); });
        check("tile_fft 3x37 (Bluestein)", lanes, tdiff(b1, b2), 1e-4);
        fillc(s1);
        s2 = s1;
        tile_ifft(s1);
        run_block(lanes, [&] { cta::tile_ifft(s2, g_scratch); });
        check("tile_ifft 1x7 (generic radix)", lanes, tdiff(s1, s2), 1e-5);
    }
    // ---- Cholesky (lane 0) and a branch condition broadcast from lane 0
    {
        static tile_t<double, 3, 3> A, L1, L2;
        const double m[9] = {4, 1, 0.5, 1, 3, 0.2, 0.5, 0.2, 2};
        for (int i = 0; i < 9; ++i) A.data[i] = m[i];
        tile_cholesky(L1, A);
        run_block(lanes, [&] { cta::tile_cholesky(L2, A); });
        double e = 0;
        for (int i = 0; i < 9; ++i) e = std::fmax(e, std::fabs(L1.data[i] - L2.data[i]));
        check("tile_cholesky", lanes, e, 0);
        std::vector<int> seen(lanes);
        run_block(lanes, [&] { seen[threadIdx.x] = cta::from_lane0(threadIdx.x == 0); });
        e = 0;
        for (int l = 0; l < lanes; ++l) e += seen[l] ? 0 : 1;
        check("from_lane0", lanes, e, 0);
    }
}

int main() {
    run_all<1>();
    run_all<3>();
    run_all<32>();
    std::printf("failures: %d\n", g_fail);
    return g_fail ? 1 : 0;
}
"""



def _build(tmp_path, extra: list[str]) -> subprocess.CompletedProcess:
    src, exe = tmp_path / "cta_host.cpp", tmp_path / "cta_host"
    src.write_text(_SOURCE)
    cmd = [_cxx(), "-std=c++17", "-O1", "-g", "-pthread", "-DWEFT_CTA_HOST_TEST=1", "-I", NATIVE, str(src),
           "-o", str(exe), *extra]
    return subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=600)


@pytest.mark.skipif(_cxx() is None, reason="no C++ compiler")
def test_cooperative_tile_ops_match_cpu(tmp_path):
    build = _build(tmp_path, ["-fsanitize=thread"])
    sanitized = build.returncode == 0
    if not sanitized:  # no ThreadSanitizer runtime: the comparison still runs
        build = _build(tmp_path, [])
    assert build.returncode == 0, build.stderr[-4000:]
    env = dict(os.environ, TSAN_OPTIONS="halt_on_error=1 report_signal_unsafe=0")
    run = subprocess.run([str(tmp_path / "cta_host")], check=False, capture_output=True, text=True, timeout=600,
                         env=env)
    print(run.stdout)
    assert "WARNING: ThreadSanitizer" not in run.stderr, run.stderr[-6000:]
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    assert run.stdout.count(" ok\n") >= 3 * 30
