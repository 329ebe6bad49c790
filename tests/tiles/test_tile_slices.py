"""NumPy-style tile subscripts: t[a:b:c, i] reads, t[a:b, :] = src writes and t[idx, :] row gathers, against NumPy
indexing (float64 gradients against central differences), and the subscripts weft rejects at compile time."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp

from .test_grad import fd_check

F64 = wp.float64
M, N = 5, 6


@wp.kernel
def slices(x: wp.array2d(dtype=F64), idx: wp.array(dtype=int), r: int, a: wp.array2d(dtype=F64),
           b: wp.array(dtype=F64), g: wp.array2d(dtype=F64), c: wp.array2d(dtype=F64), d: wp.array(dtype=F64)):
    t = wp.tile_load(x, shape=(M, N))
    wp.tile_store(a, t[::-2, 1:6:2] * t[1:4, ::2])  # strided, reversed; products make the gradient non-trivial
    wp.tile_store(b, t[r] * t[-1, :])  # a run-time row (negative: from the end) and a constant negative index
    i = wp.tile_load(idx, shape=4)
    wp.tile_store(g, t[i, :] * t[i])  # row gather with repeated and negative indices
    u = wp.tile_load(x, shape=(M, N))
    u[0:4:3, 1:] = t[3:, :5] * t[3:, :5]  # slice assignment (the overwritten elements lose their gradient)
    u[1:] = u[:-1]  # overlapping: NumPy's answer (the right-hand side is a copy)
    wp.tile_store(c, u)
    wp.tile_store(d, t[::-1][1:][::2][:, 2])  # chained subscripts


def _reference(x, idx, r):
    a = x[::-2, 1:6:2] * x[1:4, ::2]
    b = x[r] * x[-1, :]
    g = x[idx, :] * x[idx]
    u = x.copy()
    u[0:4:3, 1:] = x[3:, :5] ** 2
    u[1:] = u[:-1].copy()
    d = x[::-1][1:][::2][:, 2]
    return a, b, g, u, d


def _outputs():
    return {"a": wp.zeros((3, 3), dtype=F64), "b": wp.zeros(N, dtype=F64), "g": wp.zeros((4, N), dtype=F64),
            "c": wp.zeros((M, N), dtype=F64), "d": wp.zeros(2, dtype=F64)}


@pytest.mark.parametrize("r", [1, -2])
def test_slice_values_match_numpy(r):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((M, N))
    idx = np.array([-1, 2, 2, 0], dtype=np.int32)
    outs = _outputs()
    wp.launch_tiled(slices, dim=1, inputs=[wp.array(x, dtype=F64), wp.array(idx), r, *outs.values()], block_dim=4)
    for got, want in zip(outs.values(), _reference(x, idx, r)):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-14)


def test_slice_gradients_match_central_differences():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((M, N))

    @wp.kernel
    def wrapped(x: wp.array2d(dtype=F64), a: wp.array2d(dtype=F64), b: wp.array(dtype=F64),
                g: wp.array2d(dtype=F64), c: wp.array2d(dtype=F64), d: wp.array(dtype=F64)):
        t = wp.tile_load(x, shape=(M, N))
        wp.tile_store(a, t[::-2, 1:6:2] * t[1:4, ::2])
        wp.tile_store(b, t[-2] * t[-1, :])
        i = wp.tile_arange(4, dtype=int) * 2 - 3  # -3, -1, 1, 3
        wp.tile_store(g, t[i, :] * t[i])
        u = wp.tile_load(x, shape=(M, N))
        u[0:4:3, 1:] = t[3:, :5] * t[3:, :5]
        u[1:] = u[:-1]
        wp.tile_store(c, u)
        wp.tile_store(d, t[::-1][1:][::2][:, 2])

    fd_check(wrapped, {"x": wp.array(x, dtype=F64)}, _outputs(), dim=1, block_dim=4)


@wp.kernel(module="unique", enable_backward=False)
def rejected_zero_length(r: int):
    t = wp.tile_zeros(shape=(M, N), dtype=float)
    _v = t[4:4, :]


@wp.kernel(module="unique", enable_backward=False)
def rejected_runtime_bound(r: int):
    t = wp.tile_zeros(shape=(M, N), dtype=float)
    _v = t[r:, :]


@wp.kernel(module="unique", enable_backward=False)
def rejected_oob(r: int):
    t = wp.tile_zeros(shape=(M, N), dtype=float)
    _v = t[9, :]


@wp.kernel(module="unique", enable_backward=False)
def rejected_float_index(r: int):
    t = wp.tile_zeros(shape=(M, N), dtype=float)
    _v = t[1.5, :]


@wp.kernel(module="unique", enable_backward=False)
def rejected_scalar_assign(r: int):
    t = wp.tile_zeros(shape=(M, N), dtype=float)
    t[0:4, :] = 1.0


@wp.kernel(module="unique", enable_backward=False)
def rejected_shape_mismatch(r: int):
    t = wp.tile_zeros(shape=(M, N), dtype=float)
    t[0:4, :] = wp.tile_ones(shape=(5, N), dtype=float)


@wp.kernel(module="unique", enable_backward=False)
def rejected_compound(r: int):
    t = wp.tile_zeros(shape=(M, N), dtype=float)
    t[0:4, :] += wp.tile_ones(shape=(4, N), dtype=float)


@wp.kernel(module="unique", enable_backward=False)
def rejected_gather_partial(r: int):
    t = wp.tile_zeros(shape=(M, N), dtype=float)
    _v = t[wp.tile_arange(3, dtype=int), 1:3]


@wp.kernel(module="unique", enable_backward=False)
def rejected_gather_float(r: int):
    t = wp.tile_zeros(shape=(M, N), dtype=float)
    _v = t[wp.tile_arange(3, dtype=float), :]


@pytest.mark.parametrize("kernel, pattern", [
    (rejected_zero_length, "zero-length"),
    (rejected_runtime_bound, "compile-time constant"),
    (rejected_oob, "out of bounds"),
    (rejected_float_index, "integers or slices"),
    (rejected_scalar_assign, "tile of matching shape"),
    (rejected_shape_mismatch, "shape mismatch"),
    (rejected_compound, "Compound assignment to a tile view"),
    (rejected_gather_partial, "':' on all other axes"),
    (rejected_gather_float, "integer index tile"),
]
)
def test_rejected_subscripts(kernel, pattern):
    with pytest.raises(wp.Error, match=pattern):
        wp.launch_tiled(kernel, dim=1, inputs=[0], block_dim=4)


@wp.kernel
def view_slices(x: wp.array(dtype=F64), a: wp.array(dtype=F64), b: wp.array(dtype=F64)):
    t = wp.tile_load(x, shape=8)
    wp.tile_store(a, wp.tile_view(t, offset=(slice(0, -1, 1),)))
    wp.tile_store(b, wp.tile_view(t, offset=(slice(-3, 8, 1),)) + t[:-2147483648:-3])  # huge literal bounds clamp


def test_tile_view_with_slice_offsets():
    x = np.arange(8.0)
    a, b = wp.zeros(7, dtype=F64), wp.zeros(3, dtype=F64)
    wp.launch_tiled(view_slices, dim=1, inputs=[wp.array(x, dtype=F64), a, b], block_dim=4)
    np.testing.assert_array_equal(a.numpy(), x[0:-1])
    np.testing.assert_array_equal(b.numpy(), x[-3:] + x[:-2147483648:-3])


@wp.kernel(module="unique", enable_backward=False)
def rejected_view_shape_and_slice(r: int):
    t = wp.tile_zeros(shape=(M, N), dtype=float)
    _v = wp.tile_view(t, offset=(slice(0, 2, 1),), shape=(2, N))


@wp.kernel(module="unique", enable_backward=False)
def rejected_view_offset_oob(r: int):
    t = wp.tile_zeros(shape=(M, N), dtype=float)
    _v = wp.tile_view(t, offset=(M,))


@wp.kernel(module="unique", enable_backward=False)
def rejected_view_float_offset(r: int):
    t = wp.tile_zeros(shape=(M, N), dtype=float)
    _v = wp.tile_view(t, offset=(1.5,))


@pytest.mark.parametrize("kernel, pattern", [
    (rejected_view_shape_and_slice, "'shape' together with a slice"),
    (rejected_view_offset_oob, "out of bounds"),
    (rejected_view_float_offset, "integers or slices"),
])
def test_rejected_tile_views(kernel, pattern):
    with pytest.raises(wp.Error, match=pattern):
        wp.launch_tiled(kernel, dim=1, inputs=[0], block_dim=4)


@wp.func
def _affine(x: F64, v: wp.vec2d) -> F64:
    return x * v[0] + v[1] * x * x


@wp.kernel
def map_broadcast(x: wp.array(dtype=F64), v: wp.array(dtype=wp.vec2d), out: wp.array(dtype=F64)):
    t = wp.tile_load(x, shape=8)
    wp.tile_store(out, wp.tile_map(_affine, t, v[0]))  # a non-tile second argument is broadcast


def test_tile_map_broadcasts_a_value():
    x, v = np.linspace(-1.0, 2.0, 8), np.array([[0.5, -1.5]])
    out = wp.zeros(8, dtype=F64)
    wp.launch_tiled(map_broadcast, dim=1, inputs=[wp.array(x, dtype=F64), wp.array(v, dtype=wp.vec2d), out],
                    block_dim=4)
    np.testing.assert_allclose(out.numpy(), x * v[0, 0] + v[0, 1] * x * x, rtol=1e-14)
    fd_check(map_broadcast, {"x": wp.array(x, dtype=F64), "v": wp.array(v, dtype=wp.vec2d)},
             {"out": wp.zeros(8, dtype=F64)}, dim=1, block_dim=4)


@wp.kernel
def row_views(x: wp.array2d(dtype=F64), n: int, out: wp.array2d(dtype=F64)):
    a = wp.tile_load(x, shape=(M, N))
    b = wp.tile_zeros(shape=(M, N), dtype=F64)
    for i in range(n):  # a dynamic loop: b is rebound through its views
        row = b[i]
        wp.tile_assign(row, a[i] * a[i])  # writes through to b's row i, as Warp's views do
    last = b[M - 1]
    last += a[0]  # in-place arithmetic on a view
    part = b[1:3, ::2]
    part[0, 1] = wp.float64(7.0)  # an element store through a strided view
    wp.tile_store(out, b)


def test_views_write_through_to_their_parent():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((M, N))
    n = M - 2
    want = np.zeros((M, N))
    want[:n] = x[:n] ** 2
    want[M - 1] += x[0]
    want[1, 2] = 7.0
    out = wp.zeros((M, N), dtype=F64)
    wp.launch_tiled(row_views, dim=1, inputs=[wp.array(x, dtype=F64), n, out], block_dim=4)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-14)

    @wp.kernel
    def wrapped(x: wp.array2d(dtype=F64), out: wp.array2d(dtype=F64)):
        a = wp.tile_load(x, shape=(M, N))
        b = wp.tile_zeros(shape=(M, N), dtype=F64)
        for i in range(M):
            row = b[i]
            wp.tile_assign(row, a[i] * a[M - 1 - i])
        wp.tile_store(out, b)

    fd_check(wrapped, {"x": wp.array(x, dtype=F64)}, {"out": wp.zeros((M, N), dtype=F64)}, dim=1, block_dim=4)
