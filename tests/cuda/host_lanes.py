"""Shared by the tests that run CUDA device code on the host (test_device_fft_host.py, test_cta_host.py): POSIX
threads stand in for the lanes of a block, ``__syncthreads`` is a barrier across them, and ``sincospi(f)`` come
from libm."""

from __future__ import annotations

import os
import shutil

NATIVE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "weft", "native")

#: C++ stand-ins for the CUDA built-ins both host programs need (after <cmath> and <pthread.h>)
CUDA_STANDINS = r"""
static pthread_barrier_t g_bar;
static void __syncthreads() { pthread_barrier_wait(&g_bar); }
static void sincospif(float x, float* s, float* c) {
    const double a = M_PI * double(x);
    *s = float(std::sin(a));
    *c = float(std::cos(a));
}
static void sincospi(double x, double* s, double* c) {
    *s = std::sin(M_PI * x);
    *c = std::cos(M_PI * x);
}
"""


def cxx() -> str | None:
    """The host C++ compiler ($CXX, g++ or c++)."""
    return os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
