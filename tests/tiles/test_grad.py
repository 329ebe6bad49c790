"""Finite-difference gradient checks (float64) through tile ops, on the Tape: load, store, map, reduce, matmul,
Cholesky solve, FFT and inverse FFT."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp

F64 = wp.float64
N = 8


def fd_check(kernel, inputs: dict, outputs: dict, dim, block_dim=16, eps=1e-6, tol=1e-6, seed=0):
    """Compare the tape gradient of L = sum(w * out) with central differences, for every differentiable input."""
    rng = np.random.default_rng(seed)
    names = list(inputs) + list(outputs)
    weights = {k: rng.standard_normal(v.shape + ((2,) if v.dtype == wp.vec2d else ())) for k, v in outputs.items()}

    def run(values):
        args = {k: wp.array(v, dtype=inputs[k].dtype, requires_grad=True) for k, v in values.items()}
        outs = {k: wp.zeros(v.shape, dtype=v.dtype, requires_grad=True) for k, v in outputs.items()}
        return args, outs

    def loss(values):
        args, outs = run(values)
        wp.launch_tiled(kernel, dim=dim, inputs=[*(args[k] for k in inputs), *(outs[k] for k in outputs)],
                        block_dim=block_dim)
        return sum(float((weights[k] * outs[k].numpy()).sum()) for k in outputs)

    base = {k: v.numpy() for k, v in inputs.items()}
    args, outs = run(base)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(kernel, dim=dim, inputs=[*(args[k] for k in inputs), *(outs[k] for k in outputs)],
                        block_dim=block_dim)
    tape.backward(grads={outs[k]: wp.array(weights[k], dtype=outputs[k].dtype) for k in outputs})
    for k in inputs:
        got = args[k].grad.numpy()
        want = np.zeros_like(base[k])
        flat = want.reshape(-1)
        for idx in range(flat.size):
            plus = {kk: vv.copy() for kk, vv in base.items()}
            minus = {kk: vv.copy() for kk, vv in base.items()}
            plus[k].reshape(-1)[idx] += eps
            minus[k].reshape(-1)[idx] -= eps
            flat[idx] = (loss(plus) - loss(minus)) / (2 * eps)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=f"gradient of {k} ({names})")


def arr(shape, seed, dtype=F64, spd=False):
    rng = np.random.default_rng(seed)
    if dtype == wp.vec2d:
        return wp.array(rng.standard_normal(shape + (2,)), dtype=wp.vec2d)
    x = rng.standard_normal(shape)
    if spd:
        x = x @ x.T + shape[0] * np.eye(shape[0])
    return wp.array(x, dtype=dtype)


@wp.func
def soft(x: wp.float64, y: wp.float64):
    if x > y:
        return wp.sin(x) * y
    return x * x + wp.float64(2.0) * y


@wp.kernel
def load_map_store(a: wp.array2d(dtype=F64), b: wp.array2d(dtype=F64), out: wp.array2d(dtype=F64)):
    i = wp.tid()
    x = wp.tile_load(a, shape=(1, N), offset=(i, 0))
    y = wp.tile_load(b, shape=(1, N), offset=(i, 0))
    m = wp.tile_map(soft, x, y)
    e = wp.tile_map(wp.exp, m * wp.float64(0.1))
    wp.tile_store(out, e + x, offset=(i, 0))


def test_grad_load_map_store():
    fd_check(load_map_store, {"a": arr((3, N), 1), "b": arr((3, N), 2)}, {"out": wp.zeros((3, N), dtype=F64)}, 3)


@wp.func
def mul2(x: wp.float64, y: wp.float64):
    return x * y


@wp.kernel
def reductions(a: wp.array2d(dtype=F64), out: wp.array(dtype=F64)):
    i = wp.tid()
    x = wp.tile_load(a, shape=(1, N), offset=(i, 0))
    s = wp.tile_sum(x)
    p = wp.tile_reduce(mul2, x)
    mx = wp.tile_max(x)
    r = s * wp.float64(2.0) + p + mx
    wp.tile_store(out, r, offset=i)


def test_grad_reduce():
    fd_check(reductions, {"a": arr((4, N), 3)}, {"out": wp.zeros(4, dtype=F64)}, 4)


@wp.kernel
def matmul(a: wp.array2d(dtype=F64), b: wp.array2d(dtype=F64), c: wp.array2d(dtype=F64), out: wp.array2d(dtype=F64)):
    x = wp.tile_load(a, shape=(4, 6))
    y = wp.tile_load(b, shape=(6, 5))
    acc = wp.tile_load(c, shape=(4, 5))
    for k in range(2):
        wp.tile_matmul(x, y, acc, alpha=wp.float64(0.5))
    wp.tile_store(out, wp.tile_transpose(x @ y) @ acc)


def test_grad_matmul():
    fd_check(matmul, {"a": arr((4, 6), 4), "b": arr((6, 5), 5), "c": arr((4, 5), 6)},
             {"out": wp.zeros((5, 5), dtype=F64)}, 1)


@wp.kernel
def chol_solve(A: wp.array2d(dtype=F64), b: wp.array2d(dtype=F64), out: wp.array2d(dtype=F64)):
    a = wp.tile_load(A, shape=(5, 5))
    L = wp.tile_cholesky(a)
    x = wp.tile_cholesky_solve(L, wp.tile_load(b, shape=(5, 2)))
    wp.tile_store(out, x)


def test_grad_cholesky_solve():
    fd_check(chol_solve, {"A": arr((5, 5), 7, spd=True), "b": arr((5, 2), 8)}, {"out": wp.zeros((5, 2), dtype=F64)},
             1, tol=1e-5)


@wp.kernel
def ffts(x: wp.array2d(dtype=wp.vec2d), y: wp.array2d(dtype=wp.vec2d), z: wp.array2d(dtype=wp.vec2d)):
    i = wp.tid()
    a = wp.tile_load(x, shape=(1, 12), offset=(i, 0))
    wp.tile_fft(a)
    wp.tile_store(y, a, offset=(i, 0))
    b = wp.tile_map(wp.cw_mul, a, a)
    wp.tile_ifft(b)
    wp.tile_store(z, b, offset=(i, 0))


def test_grad_fft_ifft():
    fd_check(ffts, {"x": arr((2, 12), 9, wp.vec2d)},
             {"y": wp.zeros((2, 12), dtype=wp.vec2d), "z": wp.zeros((2, 12), dtype=wp.vec2d)}, 2, tol=1e-5)


@wp.kernel
def lanes(a: wp.array(dtype=F64), out: wp.array(dtype=F64)):
    _i, lane = wp.tid()
    v = a[lane] * a[lane]
    t = wp.tile(v)
    s = wp.tile_sum(t)
    w = wp.untile(wp.tile_map(wp.sin, t))
    out[lane] = w * s[0]


@pytest.mark.parametrize("bd", [1, 4, 16])
def test_grad_lane_code(bd):
    fd_check(lanes, {"a": arr((bd,), 10)}, {"out": wp.zeros(bd, dtype=F64)}, 1, block_dim=bd)


def test_grad_dynamic_block_loop():
    fd_check(dynamic_loop_wrapper, {"a": arr((4, 4), 11), "b": arr((4, 4), 12)},
             {"out": wp.zeros((8, 4), dtype=F64)}, 1, block_dim=16)


@wp.kernel
def dynamic_loop_wrapper(a: wp.array2d(dtype=F64), b: wp.array2d(dtype=F64), out: wp.array2d(dtype=F64)):
    _i, lane = wp.tid()
    x = wp.tile_load(a, shape=(4, 4))
    acc = wp.tile_load(b, shape=(4, 4))
    n = wp.int32(a.shape[0]) - 1  # a runtime trip count: the loop stays a loop
    scale = a[0, lane % 4]
    for _k in range(n):
        acc = wp.tile_map(wp.sin, acc @ x) * wp.float64(0.5) + acc
        scale = scale * wp.float64(1.5) + wp.tile_sum(acc)[0] * wp.float64(0.01)
    wp.tile_store(out, acc)
    out[4 + lane % 4, lane // 4] = scale
