"""Tile builtins written with other tile ops: tile_empty, tile_full's default dtype, tile_astype, tile_dot,
tile_axpy -- values against NumPy (float64), gradients against the analytic derivative."""

import numpy as np
import pytest

import weft as wp

from . import _helpers  # noqa: F401  (wp.launch_tiled)

N = 8


@wp.kernel
def composites(x: wp.array(dtype=wp.float64), y: wp.array(dtype=float), u: wp.array(dtype=wp.vec3),
               v: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat22), alpha: float,
               out: wp.array(dtype=float), ax: wp.array(dtype=float), cast: wp.array(dtype=float),
               full_i: wp.array(dtype=int), full_v: wp.array(dtype=wp.vec3)):
    tx = wp.tile_astype(wp.tile_load(x, shape=N), dtype=float)  # float64 -> float32
    ty = wp.tile_load(y, shape=N)
    tu = wp.tile_load(u, shape=N)
    tv = wp.tile_load(v, shape=N)
    tm = wp.tile_load(m, shape=N)
    e = wp.tile_empty(shape=N, dtype=float)
    e = ty * 2.0  # every element written before use
    s = wp.tile_dot(tx, e)  # 2 x.y
    dv = wp.tile_dot(tu, tv)
    dm = wp.tile_dot(tm, tm)
    wp.tile_store(out, s, offset=0)
    wp.tile_store(out, dv, offset=1)
    wp.tile_store(out, dm, offset=2)
    acc = wp.tile_load(y, shape=N)
    wp.tile_axpy(alpha, tx, acc)  # acc = y + alpha x
    wp.tile_store(ax, acc)
    wp.tile_store(cast, wp.tile_astype(wp.tile_astype(ty, dtype=int), dtype=float))  # truncation toward zero
    wp.tile_store(full_i, wp.tile_full(N, value=wp.int32(7)))
    wp.tile_store(full_v, wp.tile_full(shape=N, value=wp.vec3(1.0, 2.0, 3.0)))


def test_tile_composites_values_and_gradients():
    rng = np.random.default_rng(7)
    xn, yn = rng.standard_normal(N) * 2.0, rng.standard_normal(N) * 2.0
    un, vn, mn = rng.standard_normal((N, 3)), rng.standard_normal((N, 3)), rng.standard_normal((N, 2, 2))
    alpha = 0.75
    x = wp.array(xn, dtype=wp.float64, requires_grad=True)
    y = wp.array(yn.astype(np.float32), requires_grad=True)
    u = wp.array(un.astype(np.float32), dtype=wp.vec3, requires_grad=True)
    v = wp.array(vn.astype(np.float32), dtype=wp.vec3, requires_grad=True)
    m = wp.array(mn.astype(np.float32), dtype=wp.mat22, requires_grad=True)
    out = wp.zeros(3, dtype=float, requires_grad=True)
    ax = wp.zeros(N, dtype=float, requires_grad=True)
    cast = wp.zeros(N, dtype=float)
    full_i = wp.zeros(N, dtype=int)
    full_v = wp.zeros(N, dtype=wp.vec3)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(composites, dim=1, inputs=[x, y, u, v, m, alpha],
                        outputs=[out, ax, cast, full_i, full_v], block_dim=16)
    np.testing.assert_allclose(out.numpy(), [2.0 * xn @ yn, np.sum(un * vn), np.sum(mn * mn)], rtol=1e-5)
    np.testing.assert_allclose(ax.numpy(), yn + alpha * xn, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(cast.numpy(), np.trunc(yn.astype(np.float32)))
    np.testing.assert_array_equal(full_i.numpy(), np.full(N, 7))
    np.testing.assert_array_equal(full_v.numpy(), np.tile([1.0, 2.0, 3.0], (N, 1)))

    w_out, w_ax = np.array([1.5, -0.5, 2.0]), rng.standard_normal(N)
    tape.backward(grads={out: wp.array(w_out.astype(np.float32)), ax: wp.array(w_ax.astype(np.float32))})
    np.testing.assert_allclose(x.grad.numpy(), w_out[0] * 2.0 * yn + alpha * w_ax, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(y.grad.numpy(), w_out[0] * 2.0 * xn + w_ax, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(u.grad.numpy(), w_out[1] * vn, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(v.grad.numpy(), w_out[1] * un, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(m.grad.numpy(), w_out[2] * 2.0 * mn, rtol=1e-5, atol=1e-6)


def test_tile_composite_errors():
    @wp.kernel
    def bad_dot(a: wp.array(dtype=float), b: wp.array(dtype=wp.float64)):
        wp.tile_dot(wp.tile_load(a, shape=4), wp.tile_load(b, shape=4))

    a = wp.zeros(4, dtype=float)
    with pytest.raises(wp.Error, match="one shape and dtype"):
        wp.launch_tiled(bad_dot, dim=1, inputs=[a, wp.zeros(4, dtype=wp.float64)], block_dim=4)


@wp.kernel
def mixed(v: wp.array(dtype=wp.vec3), s: wp.array(dtype=float), prod: wp.array(dtype=wp.vec3),
          quot: wp.array(dtype=wp.vec3)):
    tv = wp.tile_load(v, shape=N)
    ts = wp.tile_load(s, shape=N)
    wp.tile_store(prod, tv * ts)
    wp.tile_store(quot, ts / tv)  # element-wise s / v_k, as in Warp


def test_tiles_of_vectors_with_tiles_of_scalars():
    rng = np.random.default_rng(3)
    vn, sn = rng.random((N, 3)) + 0.5, rng.random(N) + 0.5
    v = wp.array(vn.astype(np.float32), dtype=wp.vec3, requires_grad=True)
    s = wp.array(sn.astype(np.float32), requires_grad=True)
    prod = wp.zeros(N, dtype=wp.vec3, requires_grad=True)
    quot = wp.zeros(N, dtype=wp.vec3, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(mixed, dim=1, inputs=[v, s], outputs=[prod, quot], block_dim=16)
    np.testing.assert_allclose(prod.numpy(), vn * sn[:, None], rtol=1e-6)
    np.testing.assert_allclose(quot.numpy(), sn[:, None] / vn, rtol=1e-6)
    tape.backward(grads={prod: wp.ones(N, dtype=wp.vec3), quot: wp.ones(N, dtype=wp.vec3)})
    np.testing.assert_allclose(s.grad.numpy(), vn.sum(1) + (1.0 / vn).sum(1), rtol=1e-5)
    np.testing.assert_allclose(v.grad.numpy(), sn[:, None] - sn[:, None] / vn**2, rtol=1e-5)

    @wp.kernel
    def both_vectors(v: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
        t = wp.tile_load(v, shape=N)
        wp.tile_store(out, t * t)

    with pytest.raises(TypeError, match="element type must be scalar"):
        wp.launch_tiled(both_vectors, dim=1, inputs=[v, prod], block_dim=16)


@wp.kernel
def reshaped(x: wp.array2d(dtype=float), y: wp.array2d(dtype=float), z: wp.array(dtype=float)):
    t = wp.tile_load(x, shape=(2, 4))
    wp.tile_store(y, wp.tile_reshape(t, shape=(4, -1)) * t[1, 1])
    wp.tile_store(z, wp.tile_squeeze(wp.tile_load(x, shape=(1, 4)), axis=(0,)) * 3.0)


def test_tile_reshape_and_squeeze():
    xn = np.arange(1, 9, dtype=np.float32).reshape(2, 4)
    x = wp.array(xn, requires_grad=True)
    y = wp.zeros((4, 2), dtype=float, requires_grad=True)
    z = wp.zeros(4, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(reshaped, dim=1, inputs=[x], outputs=[y, z], block_dim=4)
    np.testing.assert_array_equal(y.numpy(), xn.reshape(4, 2) * xn[1, 1])
    np.testing.assert_array_equal(z.numpy(), 3.0 * xn[0])
    wy = np.arange(8, dtype=np.float32).reshape(4, 2)
    tape.backward(grads={y: wp.array(wy), z: wp.ones(4, dtype=float)})
    g = wy.reshape(2, 4) * xn[1, 1]
    g[0] += 3.0
    g[1, 1] += np.sum(wy.reshape(2, 4) * xn)
    np.testing.assert_allclose(x.grad.numpy(), g, rtol=1e-6)

    @wp.kernel
    def bad(x: wp.array2d(dtype=float), z: wp.array(dtype=float)):
        wp.tile_store(z, wp.tile_squeeze(wp.tile_load(x, shape=(2, 4)), axis=(0,)))

    with pytest.raises(wp.Error, match="extent is not 1"):
        wp.launch_tiled(bad, dim=1, inputs=[x, z], block_dim=4)
