"""Tiles of @wp.struct elements: field-wise ``+`` / ``-``, ``tile_sum`` (whole and along an axis), ``t[i] += v``,
``tile_scatter_add`` against float64 NumPy references, their gradients against central differences, and the
struct-tile operations weft rejects with Warp's TypeError texts."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp

N = 8


@wp.struct
class P:
    x: wp.float64
    y: wp.vec3d
    tag: wp.int8  # does not add up: carries the left operand's (a sum: element 0's) value


@wp.func
def energy(p: P) -> wp.float64:
    return p.x * p.x + wp.dot(p.y, p.y) * p.x


@wp.kernel
def struct_tile_ops(a: wp.array(dtype=P), b: wp.array(dtype=P), diff: wp.array(dtype=P), total: wp.array(dtype=P),
                    rows: wp.array(dtype=P), scat: wp.array(dtype=P), loss: wp.array(dtype=wp.float64)):
    _i, j = wp.tid()
    ta = wp.tile_load(a, shape=N)
    tb = wp.tile_load(b, shape=N)
    s = ta + tb
    d = s - tb - tb  # a - b
    wp.tile_store(diff, d)
    wp.tile_store(total, wp.tile_sum(s))
    wp.tile_store(rows, wp.tile_sum(wp.tile_reshape(s, shape=(2, N // 2)), axis=1))
    acc = wp.tile_zeros(shape=2, dtype=P)
    acc[0] += b[j]
    wp.tile_scatter_add(acc, j % 2, a[j], j != 3)  # lane 3 adds nothing
    wp.tile_store(scat, acc)
    e = wp.tile_map(energy, d + s)
    e2 = wp.tile_map(energy, acc)
    wp.tile_store(loss, wp.tile_sum(e) + wp.tile_sum(e2))


def _fields(arr):
    x = arr.numpy()
    return x["x"].astype(np.float64), x["y"].astype(np.float64), x["tag"]


def _make(rng, tag):
    vals = []
    for _ in range(N):
        p = P()
        p.x = float(rng.uniform(0.5, 1.5))
        p.y = wp.vec3d(*rng.uniform(-1.0, 1.0, 3))
        p.tag = tag
        vals.append(p)
    return wp.array(vals, dtype=P, requires_grad=True)


def _run(a, b, tape=None):
    outs = [wp.zeros(N, dtype=P), wp.zeros(1, dtype=P), wp.zeros(2, dtype=P), wp.zeros(2, dtype=P)]
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    wp.launch_tiled(struct_tile_ops, dim=[1], inputs=[a, b], outputs=[*outs, loss], block_dim=N)
    return outs, loss


def _energy(x, y):
    return x * x + np.sum(y * y, axis=-1) * x


def _loss_np(ax, ay, bx, by):
    sx, sy = ax + bx, ay + by
    dx, dy = ax - bx, ay - by
    lanes = np.arange(N)
    cx, cy = np.zeros(2), np.zeros((2, 3))
    cx[0] += bx.sum()
    cy[0] += by.sum(axis=0)
    for j in lanes[lanes != 3]:
        cx[j % 2] += ax[j]
        cy[j % 2] += ay[j]
    return _energy(dx + sx, dy + sy).sum() + _energy(cx, cy).sum(), (sx, sy), (dx, dy), (cx, cy)


def test_struct_tile_values_match_numpy():
    rng = np.random.default_rng(3)
    a, b = _make(rng, 5), _make(rng, 7)
    (diff, total, rows, scat), loss = _run(a, b)
    ax, ay, _ = _fields(a)
    bx, by, _ = _fields(b)
    ref, (sx, sy), (dx, dy), (cx, cy) = _loss_np(ax, ay, bx, by)
    x, y, tag = _fields(diff)
    np.testing.assert_allclose(x, dx, rtol=1e-12)
    np.testing.assert_allclose(y, dy, rtol=1e-12, atol=1e-14)
    assert (tag == 5).all()  # s - tb - tb: the left operand's tag, which is a's
    x, y, tag = _fields(total)
    np.testing.assert_allclose(x, [sx.sum()], rtol=1e-12)
    np.testing.assert_allclose(y, [sy.sum(axis=0)], rtol=1e-12, atol=1e-14)
    assert tag[0] == 5
    x, y, _ = _fields(rows)
    np.testing.assert_allclose(x, sx.reshape(2, -1).sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(y, sy.reshape(2, -1, 3).sum(axis=1), rtol=1e-12, atol=1e-14)
    x, y, tag = _fields(scat)
    np.testing.assert_allclose(x, cx, rtol=1e-12)
    np.testing.assert_allclose(y, cy, rtol=1e-12, atol=1e-14)
    assert (tag == 0).all()  # the zero tile's tags stay
    np.testing.assert_allclose(loss.numpy(), [ref], rtol=1e-12)


def test_struct_tile_gradients_match_central_differences():
    rng = np.random.default_rng(4)
    a, b = _make(rng, 1), _make(rng, 2)
    tape = wp.Tape()
    with tape:
        _outs, loss = _run(a, b)
    tape.backward(grads={loss: wp.ones(1, dtype=wp.float64)})
    ax, ay, _ = _fields(a)
    bx, by, _ = _fields(b)
    h = 1e-6
    for arr, (vx, vy), grad in ((a, (ax, ay), a.grad.numpy()), (b, (bx, by), b.grad.numpy())):
        for k in (0, 3, 6):
            for c in range(4):
                px, py = vx.copy(), vy.copy()
                mx, my = vx.copy(), vy.copy()
                if c == 0:
                    px[k] += h
                    mx[k] -= h
                else:
                    py[k, c - 1] += h
                    my[k, c - 1] -= h
                args_p = (px, py, bx, by) if arr is a else (ax, ay, px, py)
                args_m = (mx, my, bx, by) if arr is a else (ax, ay, mx, my)
                fd = (_loss_np(*args_p)[0] - _loss_np(*args_m)[0]) / (2 * h)
                got = grad["x"][k] if c == 0 else grad["y"][k][c - 1]
                assert got == pytest.approx(fd, rel=1e-6, abs=1e-8), (k, c)


def test_struct_tile_operations_weft_rejects():
    @wp.kernel
    def ones(out: wp.array(dtype=P)):
        wp.tile_store(out, wp.tile_ones(N, dtype=P))

    @wp.kernel
    def bitwise(a: wp.array(dtype=P), out: wp.array(dtype=P)):
        t = wp.tile_load(a, shape=N)
        t &= t
        wp.tile_store(out, t)

    @wp.kernel
    def minimum(a: wp.array(dtype=P), out: wp.array(dtype=P)):
        wp.tile_store(out, wp.tile_min(wp.tile_load(a, shape=N)))

    a = wp.zeros(N, dtype=P)
    for kernel, text in ((ones, "tile_ones.*Warp struct"), (bitwise, "bitwise inplace.*Warp struct"),
                         (minimum, "tile_min.*Warp struct")):
        with pytest.raises(TypeError, match=text):
            wp.launch_tiled(kernel, dim=[1], inputs=[a] if kernel is not ones else [], outputs=[a], block_dim=N)
