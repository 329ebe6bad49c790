"""tile_scan_inclusive / _exclusive / _max_inclusive / _min_inclusive and tile_sort against NumPy; the scans'
gradients against central differences (float64)."""

from __future__ import annotations

import numpy as np

import weft as wp

from .test_grad import fd_check

F64 = wp.float64


@wp.kernel
def scans(x: wp.array2d(dtype=F64), inc: wp.array2d(dtype=F64), exc: wp.array2d(dtype=F64),
          hi: wp.array2d(dtype=F64), lo: wp.array2d(dtype=F64)):
    i, _lane = wp.tid()
    t = wp.tile_load(x, shape=(2, 5), offset=(2 * i, 0))  # scanned over the row-major sequence
    wp.tile_store(inc, wp.tile_scan_inclusive(t), offset=(2 * i, 0))
    wp.tile_store(exc, wp.tile_scan_exclusive(t), offset=(2 * i, 0))
    wp.tile_store(hi, wp.tile_scan_max_inclusive(t), offset=(2 * i, 0))
    wp.tile_store(lo, wp.tile_scan_min_inclusive(t), offset=(2 * i, 0))


def test_scans_values_and_gradients():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 5))
    outs = [wp.zeros((4, 5), dtype=F64) for _ in range(4)]
    wp.launch_tiled(scans, dim=2, inputs=[wp.array(x, dtype=F64), *outs], block_dim=4)
    flat = x.reshape(2, 10)
    inc = np.cumsum(flat, axis=1)
    want = [inc, inc - flat, np.maximum.accumulate(flat, axis=1), np.minimum.accumulate(flat, axis=1)]
    for got, w in zip(outs, want):
        np.testing.assert_allclose(got.numpy().reshape(2, 10), w, rtol=1e-12)
    fd_check(scans, {"x": wp.array(x, dtype=F64)}, {k: wp.zeros((4, 5), dtype=F64) for k in ("a", "b", "c", "d")},
             dim=2, block_dim=4)


@wp.kernel
def nan_scans(x: wp.array(dtype=float), hi: wp.array(dtype=float), lo: wp.array(dtype=float)):
    t = wp.tile_load(x, shape=(6,))
    wp.tile_store(hi, wp.tile_scan_max_inclusive(t))
    wp.tile_store(lo, wp.tile_scan_min_inclusive(t))


def test_scan_max_min_skip_nans_as_fmax():
    x = np.array([np.nan, np.nan, 2.0, np.nan, -np.inf, 5.0], np.float32)
    hi, lo = wp.zeros(6, dtype=float), wp.zeros(6, dtype=float)
    wp.launch_tiled(nan_scans, dim=1, inputs=[wp.array(x), hi, lo], block_dim=2)
    np.testing.assert_array_equal(hi.numpy(), np.fmax.accumulate(x))
    np.testing.assert_array_equal(lo.numpy(), np.fmin.accumulate(x))


@wp.kernel
def sort_pairs(k: wp.array(dtype=wp.int64), v: wp.array(dtype=wp.vec2), ko: wp.array(dtype=wp.int64),
               vo: wp.array(dtype=wp.vec2), f: wp.array(dtype=float), fo: wp.array(dtype=float)):
    keys = wp.tile_load(k, shape=(37,))
    values = wp.tile_load(v, shape=(37,))
    wp.tile_sort(keys, values)
    wp.tile_store(ko, keys)
    wp.tile_store(vo, values)
    both = wp.tile_load(f, shape=(37,))
    wp.tile_sort(both, both)  # keys that are their own payload
    wp.tile_store(fo, both)


def test_tile_sort_pairs():
    rng = np.random.default_rng(1)
    k = rng.permutation(37).astype(np.int64) * 1_000_003 - 10**7
    v = rng.standard_normal((37, 2)).astype(np.float32)
    f = rng.standard_normal(37).astype(np.float32)
    ko, vo, fo = wp.zeros(37, dtype=wp.int64), wp.zeros(37, dtype=wp.vec2), wp.zeros(37, dtype=float)
    wp.launch_tiled(sort_pairs, dim=1, inputs=[wp.array(k), wp.array(v, dtype=wp.vec2), ko, vo, wp.array(f), fo],
                    block_dim=8)
    order = np.argsort(k)
    np.testing.assert_array_equal(ko.numpy(), k[order])
    np.testing.assert_array_equal(vo.numpy(), v[order])
    np.testing.assert_array_equal(fo.numpy(), np.sort(f))


@wp.func
def _smooth_max(a: F64, b: F64):
    return wp.log(wp.exp(a) + wp.exp(b))


@wp.kernel
def axis_reductions(x: wp.array3d(dtype=F64), s0: wp.array2d(dtype=F64), s2: wp.array2d(dtype=F64),
                    r1: wp.array2d(dtype=F64)):
    t = wp.tile_load(x, shape=(2, 3, 4))
    wp.tile_store(s0, wp.tile_sum(t, axis=0))
    wp.tile_store(s2, wp.tile_sum(t, axis=2))
    wp.tile_store(r1, wp.tile_reduce(_smooth_max, t, axis=1))


def test_axis_reductions_values_and_gradients():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 4))
    outs = [wp.zeros((3, 4), dtype=F64), wp.zeros((2, 3), dtype=F64), wp.zeros((2, 4), dtype=F64)]
    wp.launch_tiled(axis_reductions, dim=1, inputs=[wp.array(x, dtype=F64), *outs], block_dim=4)
    want = [x.sum(0), x.sum(2), np.log(np.exp(x).sum(1))]
    for got, w in zip(outs, want):
        np.testing.assert_allclose(got.numpy(), w, rtol=1e-12)
    fd_check(axis_reductions, {"x": wp.array(x, dtype=F64)},
             {"s0": wp.zeros((3, 4), dtype=F64), "s2": wp.zeros((2, 3), dtype=F64), "r1": wp.zeros((2, 4), dtype=F64)},
             dim=1, block_dim=4)
