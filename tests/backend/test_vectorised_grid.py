"""The CPU grid loop's vectorisation aids: integer ``%`` through exact double arithmetic, and the dependence-free
(``ivdep``) innermost loop for kernels whose only side effects are plain stores."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp
from weft.backend.renderer import Renderer, RenderOptions


@wp.kernel
def int_mod(a: wp.array(dtype=wp.int32), b: wp.array(dtype=wp.int32), out: wp.array(dtype=wp.int32)):
    i = wp.tid()
    out[i] = a[i] % b[i]


@wp.kernel
def uint_mod(a: wp.array(dtype=wp.uint32), b: wp.array(dtype=wp.uint32), out: wp.array(dtype=wp.uint32)):
    i = wp.tid()
    out[i] = a[i] % b[i]


@wp.kernel
def long_mod(a: wp.array(dtype=wp.int64), b: wp.array(dtype=wp.int64), out: wp.array(dtype=wp.int64)):
    i = wp.tid()
    out[i] = a[i] % b[i]


def _c_mod(a, b):
    """C semantics: the sign of the dividend; mod by zero is 0 in weft."""
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    safe = np.where(b64 == 0, 1, b64)
    r = np.fmod(a64, safe)
    return np.where(b64 == 0, 0, r)


def test_int32_mod_matches_c_semantics():
    rng = np.random.default_rng(0)
    i32 = np.iinfo(np.int32)
    a = np.concatenate([
        rng.integers(i32.min, i32.max, 20000, dtype=np.int64),
        rng.integers(-1000, 1000, 20000),
        [i32.min, i32.max, i32.min, i32.max, 0, -1, 1, 7, -7, i32.min, i32.max - 1],
    ]).astype(np.int32)
    b = np.concatenate([
        rng.integers(i32.min, i32.max, 20000, dtype=np.int64),
        rng.integers(-40, 40, 20000),
        [-1, -1, 1, 1, 0, 0, i32.max, 3, 3, i32.max, i32.max],
    ]).astype(np.int32)
    out = wp.zeros(len(a), dtype=wp.int32)
    wp.launch(int_mod, dim=len(a), inputs=[wp.array(a), wp.array(b)], outputs=[out])
    np.testing.assert_array_equal(out.numpy(), _c_mod(a, b).astype(np.int32))


def test_uint32_and_int64_mod():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 2**32, 5000, dtype=np.uint64).astype(np.uint32)
    b = np.concatenate([rng.integers(0, 2**32, 4990, dtype=np.uint64), [0, 1, 2**32 - 1] * 3, [5]]).astype(np.uint32)
    out = wp.zeros(len(a), dtype=wp.uint32)
    wp.launch(uint_mod, dim=len(a), inputs=[wp.array(a), wp.array(b)], outputs=[out])
    expect = np.where(b == 0, 0, a.astype(np.uint64) % np.where(b == 0, 1, b).astype(np.uint64))
    np.testing.assert_array_equal(out.numpy(), expect.astype(np.uint32))

    a = rng.integers(-2**62, 2**62, 5000, dtype=np.int64)
    b = np.concatenate([rng.integers(-2**40, 2**40, 4998), [0, -1]]).astype(np.int64)
    out = wp.zeros(len(a), dtype=wp.int64)
    wp.launch(long_mod, dim=len(a), inputs=[wp.array(a), wp.array(b)], outputs=[out])
    np.testing.assert_array_equal(out.numpy(), _c_mod(a, b))


@wp.kernel
def periodic_gather(x: wp.array2d(dtype=float), n: int, s: float, y: wp.array2d(dtype=float)):
    i, j = wp.tid()
    y[i, j] = s * (x[i, (j + 1) % n] - x[i, (j + n - 1) % n]) + x[(i + 1) % n, j]


@wp.kernel
def scatter_add(idx: wp.array(dtype=int), y: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(y, idx[i], 1.0)


@wp.kernel
def scatter_plus_eq(idx: wp.array(dtype=int), y: wp.array(dtype=float)):
    i = wp.tid()
    y[idx[i]] += 1.0


def _fn(kernel, *args):
    return kernel._lower(kernel.infer_types(list(args)), False).fn


@pytest.mark.parametrize("threads", [1, 2])
def test_independent_kernel_results(threads, monkeypatch):
    monkeypatch.setattr(wp.config, "num_threads", threads)
    n = 257
    x = np.random.default_rng(2).random((n, n), dtype=np.float32)
    y = wp.zeros((n, n), dtype=float)
    wp.launch(periodic_gather, dim=(n, n), inputs=[wp.array(x), n, 0.5], outputs=[y])
    expect = 0.5 * (np.roll(x, -1, axis=1) - np.roll(x, 1, axis=1)) + np.roll(x, -1, axis=0)
    np.testing.assert_allclose(y.numpy(), expect, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kernel", [scatter_add, scatter_plus_eq])
@pytest.mark.parametrize("threads", [1, 2])
def test_accumulating_kernels_are_not_marked_independent(kernel, threads, monkeypatch):
    """Atomics (and ``+=`` on array elements, which is an atomic add) collide across threads: such kernels keep the
    dependence-checked loop, and every update lands."""
    monkeypatch.setattr(wp.config, "num_threads", threads)
    m = 1 << 16
    idx = wp.array(np.arange(m, dtype=np.int32) % 5)
    y = wp.zeros(5, dtype=float)
    fn = _fn(kernel, idx, y)
    assert not Renderer(fn, RenderOptions()).threads_independent()
    wp.launch(kernel, dim=m, inputs=[idx, y])
    np.testing.assert_array_equal(y.numpy(), np.bincount(np.arange(m) % 5).astype(np.float32))


def test_independence_decision():
    n = 8
    x, y = wp.zeros((n, n), dtype=float), wp.zeros((n, n), dtype=float)
    fn = _fn(periodic_gather, x, n, 1.0, y)
    assert Renderer(fn, RenderOptions()).threads_independent()
    # the dependence-free loop, split at the periodic wrap of (j + 1) % n (guards.py)
    assert "weft::run_grid_split<true, 2>(" in Renderer(fn, RenderOptions()).render_module()
    # bounds checks report errors: no dependence-free loop in debug mode
    assert not Renderer(fn, RenderOptions(debug=True)).threads_independent()


@wp.kernel
def flat_index(y: wp.array(dtype=int)):
    i = wp.tid()
    y[i] = i * 3


@wp.kernel
def rank3(y: wp.array3d(dtype=int)):
    i, j, k = wp.tid()
    y[i, j, k] = i * 10000 + j * 100 + k


@wp.kernel
def no_tid(y: wp.array(dtype=int)):
    wp.atomic_add(y, 0, 1)


@pytest.mark.parametrize("threads", [1, 2])
def test_grid_loop_per_tid_rank(threads, monkeypatch):
    """The grid loop is specialised on how many indices the kernel reads: the flat index over a 2-D launch, three
    indices, none (every point still runs once)."""
    monkeypatch.setattr(wp.config, "num_threads", threads)
    y = wp.zeros(300 * 70, dtype=int)
    wp.launch(flat_index, dim=(300, 70), inputs=[y])
    np.testing.assert_array_equal(y.numpy(), np.arange(300 * 70) * 3)
    y3 = wp.zeros((41, 37, 29), dtype=int)
    wp.launch(rank3, dim=(41, 37, 29), inputs=[y3])
    i, j, k = np.meshgrid(np.arange(41), np.arange(37), np.arange(29), indexing="ij")
    np.testing.assert_array_equal(y3.numpy(), i * 10000 + j * 100 + k)
    c = wp.zeros(1, dtype=int)
    wp.launch(no_tid, dim=(50, 40, 30), inputs=[c])
    assert c.numpy()[0] == 50 * 40 * 30


def test_tid_rank_in_generated_entry():
    y3 = wp.zeros((2, 2, 2), dtype=int)
    assert "weft::run_grid<true, 3>(" in Renderer(_fn(rank3, y3), RenderOptions()).render_module()
    y = wp.zeros(4, dtype=int)
    assert "weft::run_grid<true, 1>(" in Renderer(_fn(flat_index, y), RenderOptions()).render_module()
    assert "weft::run_grid<false, 1>(" in Renderer(_fn(no_tid, y), RenderOptions()).render_module()


@wp.kernel
def vector_like_loads(idx: wp.array(dtype=int), p: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33),
                      t: wp.array(dtype=wp.transform), s: wp.array(dtype=wp.spatial_vector),
                      h: wp.array(dtype=wp.vec3h), one: wp.array(dtype=wp.mat33), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    j = idx[i]
    x = p[j]  # a gather of vec3 components (scalar indices j * 3 + k)
    y = m[i] * x + m[j] * x  # 9 scalars per element: stepped by the array's stride
    y = wp.transform_point(t[j], y) + wp.spatial_top(s[i]) + wp.spatial_bottom(s[j])
    out[i] = y + wp.vec3(h[j]) + one[0] * x


def test_vector_like_loads_match_numpy():
    """Contiguous 1-d loads of vector-like elements read scalars by index (native/array.h ``load``): gathers of
    vec3, mat33 (9 scalars, stepped by the stride), transforms, spatial vectors, half vectors, a 1-element view."""
    rng = np.random.default_rng(5)
    n = 67
    idx = rng.integers(0, n, n).astype(np.int32)
    p, s = rng.normal(size=(n, 3)), rng.normal(size=(n, 6))
    m, h = rng.normal(size=(n, 3, 3)), rng.normal(size=(n, 3))
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    tp = rng.normal(size=(n, 3))
    big = rng.normal(size=(5, 3, 3))
    out = wp.zeros(n, dtype=wp.vec3)
    wp.launch(vector_like_loads, dim=n,
              inputs=[wp.array(idx), wp.array(p, dtype=wp.vec3), wp.array(m, dtype=wp.mat33),
                      wp.array(np.concatenate([tp, q], axis=1), dtype=wp.transform), wp.array(s, dtype=wp.spatial_vector),
                      wp.array(h, dtype=wp.vec3h), wp.array(big, dtype=wp.mat33)[3:4]], outputs=[out])

    def rotate(qv, v):  # (x, y, z, w)
        u, w = qv[:, :3], qv[:, 3:]
        return v + 2.0 * w * np.cross(u, v) + 2.0 * np.cross(u, np.cross(u, v))

    x = p[idx]
    y = np.einsum("nij,nj->ni", m + m[idx], x)
    y = rotate(q[idx], y) + tp[idx] + s[:, :3] + s[idx, 3:]
    expect = y + h.astype(np.float16).astype(np.float64)[idx] + x @ big[3].T
    np.testing.assert_allclose(out.numpy(), expect, rtol=1e-4, atol=1e-4)
