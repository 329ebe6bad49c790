"""Tile element assignment (``t[i, j] = v``, ``t[i] += v``, bitwise in-place forms, ``t[i][c] = x`` of composite
elements) and launches whose size is not a multiple of block_dim (a partial last block), against NumPy references
and central differences (float64)."""

from __future__ import annotations

import numpy as np

import weft as wp

from .test_grad import fd_check

BD = 8
F64 = wp.float64


@wp.kernel
def scatter_set_add(x: wp.array2d(dtype=F64), y: wp.array2d(dtype=F64)):
    b, lane = wp.tid()
    t = wp.tile_load(x, shape=(1, BD), offset=(b, 0))
    v = x[b, lane]
    t[0, (lane * 3) % BD] = v * v  # every lane overwrites one element (a permutation)
    t[0, (lane + 1) % BD] += 2.0 * v  # and adds into another
    t[0, 0] -= v  # all lanes subtract from one element: every update lands
    wp.tile_store(y, t, offset=(b, 0))


def test_set_add_sub_values_and_gradients():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, BD))
    y = wp.zeros((3, BD), dtype=F64)
    wp.launch_tiled(scatter_set_add, dim=3, inputs=[wp.array(x, dtype=F64), y], block_dim=BD)
    want = x.copy()
    lanes = np.arange(BD)
    want[:, (lanes * 3) % BD] = x**2
    for lane in lanes:
        want[:, (lane + 1) % BD] += 2.0 * x[:, lane]
    want[:, 0] -= x.sum(1)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-12)
    # the loaded values are all overwritten: x reaches y only through the lanes' values
    fd_check(scatter_set_add, {"x": wp.array(x, dtype=F64)}, {"y": wp.zeros((3, BD), dtype=F64)}, dim=3,
             block_dim=BD)


@wp.kernel
def composite_rows(src: wp.array(dtype=wp.mat22d), rows: wp.array(dtype=wp.vec2d), out: wp.array(dtype=wp.mat22d),
                   picked: wp.array(dtype=wp.vec2d)):
    i = wp.tid()
    t = wp.tile_load(src, shape=(BD,))
    t[i][1] = rows[i]  # a row of a matrix element
    t[i][0, 1] = 2.0 * rows[i][0]  # one component
    out[i] = t[i]
    picked[i] = t[(i + 1) % BD][1]


def test_composite_element_writes():
    rng = np.random.default_rng(2)
    src = rng.standard_normal((BD, 2, 2))
    rows = rng.standard_normal((BD, 2))
    out = wp.zeros(BD, dtype=wp.mat22d)
    picked = wp.zeros(BD, dtype=wp.vec2d)
    args = [wp.array(src, dtype=wp.mat22d), wp.array(rows, dtype=wp.vec2d), out, picked]
    wp.launch(composite_rows, dim=BD, inputs=args, block_dim=BD)
    want = src.copy()
    want[:, 1, :] = rows
    want[:, 0, 1] = 2.0 * rows[:, 0]
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(picked.numpy(), np.roll(rows, -1, axis=0), rtol=1e-12)
    # gradients: d sum(w * out) / d src is w except where overwritten; the rows get the weights of what they wrote
    src_a = wp.array(src, dtype=wp.mat22d, requires_grad=True)
    rows_a = wp.array(rows, dtype=wp.vec2d, requires_grad=True)
    out = wp.zeros(BD, dtype=wp.mat22d, requires_grad=True)
    picked = wp.zeros(BD, dtype=wp.vec2d, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(composite_rows, dim=BD, inputs=[src_a, rows_a, out, picked], block_dim=BD)
    w = rng.standard_normal((BD, 2, 2))
    tape.backward(grads={out: wp.array(w, dtype=wp.mat22d)})
    g_src = w.copy()
    g_src[:, 1, :] = 0.0
    g_src[:, 0, 1] = 0.0
    g_rows = w[:, 1, :].copy()
    g_rows[:, 0] += 2.0 * w[:, 0, 1]
    np.testing.assert_allclose(src_a.grad.numpy(), g_src, rtol=1e-12)
    np.testing.assert_allclose(rows_a.grad.numpy(), g_rows, rtol=1e-12)


@wp.kernel
def bitwise_updates(a: wp.array(dtype=wp.uint32), b: wp.array(dtype=wp.uint32), out: wp.array(dtype=wp.uint32)):
    w, bit = wp.tid()
    s = wp.tile_zeros(shape=(3,), dtype=wp.uint32)
    s[0] = a[w]
    s[1] = a[w]
    s[2] = a[w]
    mask = wp.uint32(1) << wp.uint32(bit)
    s[0] &= (b[w] & mask) | ~mask  # each lane clears its bit where b has none
    s[1] |= b[w] & mask
    s[2] ^= b[w] & mask
    t = wp.tile_load(b, shape=(3,), offset=(w,))
    u = (s & t) | (s ^ t)
    if bit == 0:
        out[3 * w] = s[0]
        out[3 * w + 1] = s[1]
        out[3 * w + 2] = u[2]


def test_bitwise_in_place_updates():
    rng = np.random.default_rng(3)
    n = 6
    a = rng.integers(0, 2**32, size=n + 2, dtype=np.uint32)
    b = rng.integers(0, 2**32, size=n + 2, dtype=np.uint32)
    out = wp.zeros(3 * n, dtype=wp.uint32)
    wp.launch_tiled(bitwise_updates, dim=n, inputs=[wp.array(a), wp.array(b), out], block_dim=32)
    got = out.numpy().reshape(n, 3)
    a, b = a.astype(np.uint64), b.astype(np.uint64)
    np.testing.assert_array_equal(got[:, 0], a[:n] & b[:n])
    np.testing.assert_array_equal(got[:, 1], a[:n] | b[:n])
    x = a[:n] ^ b[:n]
    np.testing.assert_array_equal(got[:, 2], (x & b[2:n + 2]) | (x ^ b[2:n + 2]))


@wp.kernel
def partial_blocks(x: wp.array(dtype=F64), out: wp.array(dtype=F64), block_max: wp.array(dtype=F64)):
    i = wp.tid()  # 10 threads in blocks of 4: the last block has two lanes
    t = wp.tile(x[i])
    m = wp.tile_max(t)
    s = wp.tile_sum(t * t)
    out[i] = wp.untile(wp.tile_map(wp.sin, t)) + s[0]
    block_max[i] = m[0]


def test_partial_last_block():
    n, bd = 10, 4
    x = np.arange(1.0, n + 1.0)
    out = wp.zeros(n, dtype=F64)
    bm = wp.zeros(n, dtype=F64)
    wp.launch(partial_blocks, dim=n, inputs=[wp.array(x, dtype=F64), out, bm], block_dim=bd)
    blocks = np.arange(n) // bd
    sums = np.array([np.sum(x[blocks == b] ** 2) for b in blocks])
    np.testing.assert_allclose(bm.numpy(), [x[blocks == b].max() for b in blocks])
    np.testing.assert_allclose(out.numpy(), np.sin(x) + sums, rtol=1e-12)
    # gradient through the partial block: d out_i / d x_j = cos(x_i) [i == j] + 2 x_j [same block]
    xa = wp.array(x, dtype=F64, requires_grad=True)
    out = wp.zeros(n, dtype=F64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(partial_blocks, dim=n, inputs=[xa, out, wp.zeros(n, dtype=F64)], block_dim=bd)
    w = np.linspace(-1.0, 1.0, n)
    tape.backward(grads={out: wp.array(w, dtype=F64)})
    want = w * np.cos(x) + 2.0 * x * np.array([w[blocks == b].sum() for b in blocks])
    np.testing.assert_allclose(xa.grad.numpy(), want, rtol=1e-12)


@wp.kernel
def extract_assign_4d(x: wp.array4d(dtype=float), y: wp.array4d(dtype=float)):
    i, j, k, l = wp.tid()
    t = wp.tile_zeros(shape=(2, 2, 2, 2), dtype=float)
    t[i, j, k, l] = x[i, j, k, l] * 2.0
    y[i, j, k, l] = t[i, j, k, l]


def test_more_lanes_than_threads():
    """A launch smaller than one block: 16 threads in a block of 64 (Warp's tests launch so)."""
    x = np.arange(16, dtype=np.float32).reshape(2, 2, 2, 2)
    y = wp.zeros((2, 2, 2, 2), dtype=float)
    wp.launch(extract_assign_4d, dim=(2, 2, 2, 2), inputs=[wp.array(x), y], block_dim=64)
    np.testing.assert_array_equal(y.numpy(), 2 * x)


@wp.kernel
def assign_region(x: wp.array2d(dtype=F64), y: wp.array2d(dtype=F64), out: wp.array2d(dtype=F64)):
    b, _lane = wp.tid()
    dst = wp.tile_load(x, shape=(4, 5))
    src = wp.tile_load(y, shape=(2, 3)) * 2.0
    wp.tile_assign(dst, src, offset=(b + 1, 2))  # a run-time offset
    wp.tile_store(out, dst, offset=(4 * b, 0))


def test_tile_assign_region_values_and_gradients():
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal((4, 5)), rng.standard_normal((2, 3))
    out = wp.zeros((8, 5), dtype=F64)
    wp.launch_tiled(assign_region, dim=2, inputs=[wp.array(x, dtype=F64), wp.array(y, dtype=F64), out], block_dim=4)
    for b in range(2):
        want = x.copy()
        want[b + 1:b + 3, 2:5] = 2.0 * y
        np.testing.assert_allclose(out.numpy()[4 * b:4 * b + 4], want, rtol=1e-12)
    fd_check(assign_region, {"x": wp.array(x, dtype=F64), "y": wp.array(y, dtype=F64)},
             {"out": wp.zeros((8, 5), dtype=F64)}, dim=2, block_dim=4)


mat22ui = wp.types.matrix(shape=(2, 2), dtype=wp.uint32)


@wp.kernel
def composite_bitwise(a: wp.array(dtype=wp.vec3ui), b: wp.array(dtype=wp.vec3ui), m: wp.array(dtype=mat22ui),
                      out: wp.array(dtype=wp.vec3ui), mout: wp.array(dtype=mat22ui)):
    w, bit = wp.tid()
    s = wp.tile_zeros(shape=(3,), dtype=wp.vec3ui)
    s[0] = a[w]
    s[1] = a[w]
    s[2] = a[w]
    mask = wp.vec3ui(wp.uint32(1)) << wp.vec3ui(wp.uint32(bit))
    s[0] &= (b[w] & mask) | ~mask  # per lane: one bit of every component
    s[1] |= b[w] & mask
    s[2] ^= b[w] & mask
    mt = wp.tile_load(m, shape=(4,), offset=(4 * w,))
    mt[bit % 4] ^= m[4 * w + (bit + 1) % 4]  # 8 lanes per element: an even count cancels
    mt[0] |= m[4 * w + 1]
    u = wp.tile_load(a, shape=(3,), offset=(w,)) & wp.tile_load(b, shape=(3,), offset=(w,))
    u ^= s
    if bit == 0:
        out[4 * w] = s[0]
        out[4 * w + 1] = s[1]
        out[4 * w + 2] = s[2]
        out[4 * w + 3] = u[2]
    wp.tile_store(mout, mt, offset=(4 * w,))


def test_bitwise_updates_of_vector_and_matrix_tiles():
    rng = np.random.default_rng(5)
    n = 3
    a = rng.integers(0, 2**32, size=(n + 2, 3), dtype=np.uint32)
    b = rng.integers(0, 2**32, size=(n + 2, 3), dtype=np.uint32)
    m = rng.integers(0, 2**32, size=(4 * n, 2, 2), dtype=np.uint32)
    out = wp.zeros(4 * n, dtype=wp.vec3ui)
    mout = wp.zeros(4 * n, dtype=mat22ui)
    wp.launch_tiled(composite_bitwise, dim=n, inputs=[wp.array(a, dtype=wp.vec3ui), wp.array(b, dtype=wp.vec3ui),
                                                      wp.array(m, dtype=mat22ui), out, mout], block_dim=32)
    got = out.numpy().reshape(n, 4, 3)
    np.testing.assert_array_equal(got[:, 0], a[:n] & b[:n])
    np.testing.assert_array_equal(got[:, 1], a[:n] | b[:n])
    np.testing.assert_array_equal(got[:, 2], a[:n] ^ b[:n])
    np.testing.assert_array_equal(got[:, 3], (a[2:n + 2] & b[2:n + 2]) ^ (a[:n] ^ b[:n]))
    want = m.reshape(n, 4, 2, 2).copy()  # each element XORed 8 times with its neighbour: unchanged
    want[:, 0] |= want[:, 1]
    np.testing.assert_array_equal(mout.numpy().reshape(n, 4, 2, 2), want)


@wp.kernel
def scatter_masked(x: wp.array(dtype=F64), y: wp.array2d(dtype=F64)):
    _b, lane = wp.tid()
    t = wp.tile_full(shape=(2, BD), value=F64(-1.0), dtype=F64)
    v = x[lane] * x[lane]
    keep = lane % 3 != 1
    row = wp.where(keep, lane % 2, 99)  # lanes without a value may pass any index
    wp.tile_scatter_masked(t, row, (lane + 3) % BD, v, keep)
    wp.tile_store(y, t * x[0])


def test_tile_scatter_masked_values_and_gradients():
    x = np.linspace(0.5, 2.0, BD)
    y = wp.zeros((2, BD), dtype=F64)
    wp.launch_tiled(scatter_masked, dim=1, inputs=[wp.array(x, dtype=F64), y], block_dim=BD)
    want = np.full((2, BD), -1.0)
    for lane in range(BD):
        if lane % 3 != 1:
            want[lane % 2, (lane + 3) % BD] = x[lane] ** 2
    np.testing.assert_allclose(y.numpy(), want * x[0], rtol=1e-12)
    fd_check(scatter_masked, {"x": wp.array(x, dtype=F64)}, {"y": wp.zeros((2, BD), dtype=F64)}, dim=1,
             block_dim=BD)


@wp.kernel
def print_tiles(x: wp.array(dtype=wp.int32)):
    wp.print(wp.tile_load(x, shape=(4,)))
    t = wp.tile_full(shape=(2, 2, 2), value=0.5, dtype=float, storage="shared")
    t[1, 0, 1] = 2.0
    print(t)


def test_print_tile_once_per_block_as_warp(capfd):
    wp.launch_tiled(print_tiles, dim=1, inputs=[wp.array([1, -2, 3, 4], dtype=wp.int32)], block_dim=4)
    wp.synchronize()
    out = capfd.readouterr().out
    assert out == ("[1 -2 3 4] = tile(shape=(4), storage=register)\n"
                   "[[[0.5 0.5]\n  [0.5 0.5]]\n\n [[0.5 2]\n  [0.5 0.5]]] = tile(shape=(2,2,2), storage=shared)\n")


@wp.kernel(module="unique")
def lone_tile_kernel(x: wp.array(dtype=float)):
    wp.tile_store(x, wp.tile_load(x, shape=(BD,)) * 2.0)


def test_load_module_object_with_block_dim():
    """wp.load_module(kernel.module, device, block_dim=) loads that launch's variant (Warp 1.19's signature)."""
    dev = wp.get_device("cpu")
    wp.load_module(lone_tile_kernel.module, device=dev, block_dim=2 * BD)
    assert (dev.context, 2 * BD) in lone_tile_kernel.module.execs
    x = wp.ones(BD, dtype=float)
    wp.launch_tiled(lone_tile_kernel, dim=1, inputs=[x], block_dim=2 * BD)
    np.testing.assert_array_equal(x.numpy(), 2.0)


@wp.kernel
def negative_subscripts(n: int, out: wp.array(dtype=float)):
    t = wp.tile_arange(6, dtype=float)
    t[n] = 10.0  # a run-time negative index counts from the end, as in Warp
    u = wp.tile_zeros(shape=(2, 3), dtype=float)
    u[n + 1, n] += 1.0
    out[0] = t[-1]
    out[1] = t[n]
    out[2] = u[1, 1]


def test_negative_tile_subscripts_count_from_the_end():
    out = wp.zeros(3, dtype=float)
    wp.launch_tiled(negative_subscripts, dim=1, inputs=[-2, out], block_dim=1)
    np.testing.assert_array_equal(out.numpy(), [5.0, 10.0, 1.0])
