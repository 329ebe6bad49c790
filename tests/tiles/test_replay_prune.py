"""Replay pruning of tile adjoints (weft/autodiff/prune.py): the backward replays only the tile values its reverse
sweep reads, and the gradients stay exact (float64 finite differences)."""

from __future__ import annotations

import numpy as np

import weft as wp
from weft import pipeline

from .test_grad import arr, fd_check

V2 = wp.vec2d


def replay_ops(kernel, *args) -> list[str]:
    fn = kernel._lower(kernel.infer_types(list(args)), False).fn
    return [s.call.name if hasattr(s, "call") else type(s).__name__ for s in pipeline.differentiate(fn).replay]


@wp.func
def scale(z: wp.vec2d, s: wp.float64) -> wp.vec2d:
    return z * s


@wp.kernel
def spectral_solve(x: wp.array2d(dtype=V2), k: wp.array2d(dtype=wp.float64), y: wp.array2d(dtype=V2)):
    """The shape of a spectral Poisson solve: load -> FFT -> scale -> inverse FFT -> store."""
    i = wp.tid()
    a = wp.tile_load(x, shape=(1, 8), offset=(i, 0))
    wp.tile_fft(a)
    s = wp.tile_map(scale, a, wp.tile_load(k, shape=(1, 8), offset=(i, 0)))
    wp.tile_ifft(s)
    wp.tile_store(y, s, offset=(i, 0))


@wp.kernel
def fft_only(x: wp.array2d(dtype=V2), y: wp.array2d(dtype=V2)):
    i = wp.tid()
    a = wp.tile_load(x, shape=(1, 8), offset=(i, 0))
    wp.tile_fft(a)
    wp.tile_store(y, wp.tile_transpose(wp.tile_transpose(a)), offset=(i, 0))


@wp.kernel
def in_place_rows(x: wp.array2d(dtype=V2)):
    """Stores into the array it loads: the replay runs on a private copy and must keep its store."""
    i = wp.tid()
    a = wp.tile_load(x, shape=(1, 8), offset=(i, 0))
    wp.tile_fft(a)
    wp.tile_store(x, a, offset=(i, 0))


def test_replay_stops_at_what_the_sweep_reads():
    x, y = wp.zeros((2, 8), dtype=V2), wp.zeros((2, 8), dtype=V2)
    k = wp.zeros((2, 8), dtype=wp.float64)
    ops = replay_ops(spectral_solve, x, k, y)
    # scale's adjoint reads the FFT'd tile and k: those are replayed; the inverse FFT and the store are not
    assert ops.count("tile_fft") == 1 and ops.count("tile_load") == 2
    assert "tile_ifft" not in ops and "tile_map" not in ops and "ReplayLet" not in ops
    ops = replay_ops(fft_only, x, y)
    assert "tile_fft" not in ops and "tile_transpose" not in ops and "ReplayLet" not in ops
    # an array read and written by the kernel keeps the replay of its store (into the private copy)
    assert "ReplayLet" in replay_ops(in_place_rows, x)


def test_gradients_through_a_pruned_replay():
    fd_check(spectral_solve, {"x": arr((2, 8), 13, V2), "k": arr((2, 8), 15)}, {"y": wp.zeros((2, 8), dtype=V2)}, 2, block_dim=8,
             tol=1e-5)
    fd_check(fft_only, {"x": arr((2, 8), 14, V2)}, {"y": wp.zeros((2, 8), dtype=V2)}, 2, block_dim=8, tol=1e-5)


@wp.kernel
def neighbour_rows(x: wp.array2d(dtype=wp.float64), y: wp.array2d(dtype=wp.float64)):
    i = wp.tid()
    n = x.shape[0]
    a = wp.tile_load(x, shape=(1, 16), offset=(i, 0))
    b = wp.tile_load(x, shape=(1, 16), offset=((i + 1) % n, 0))
    wp.tile_store(y, a * 2.0 + b, offset=(i, 0))


def test_tile_load_gradients_on_several_threads(monkeypatch):
    """Blocks that load overlapping rows add into the same gradient elements: on one thread plain adds, on two a
    per-thread copy (or atomics); the sums are exact integers, so all must agree bitwise with NumPy."""
    n = 300
    rng = np.random.default_rng(16)
    x0, g = rng.integers(-4, 5, size=(n, 16)).astype(np.float64), rng.integers(-4, 5, size=(n, 16)).astype(np.float64)
    for threads in (1, 2):
        monkeypatch.setattr(wp.config, "num_threads", threads)
        x = wp.array(x0, dtype=wp.float64, requires_grad=True)
        y = wp.zeros((n, 16), dtype=wp.float64, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch_tiled(neighbour_rows, dim=n, inputs=[x], outputs=[y], block_dim=8)
        tape.backward(grads={y: wp.array(g, dtype=wp.float64)})
        np.testing.assert_array_equal(x.grad.numpy(), 2.0 * g + np.roll(g, 1, axis=0))


@wp.func
def real_of(z: wp.vec2d) -> wp.float64:
    return z[0]


@wp.kernel
def inverse_real(x: wp.array2d(dtype=V2), y: wp.array2d(dtype=wp.float64)):
    """An extract through tile_map: its adjoint reads no operand value, so the inverse FFT is not replayed."""
    i = wp.tid()
    a = wp.tile_load(x, shape=(1, 8), offset=(i, 0))
    wp.tile_ifft(a)
    wp.tile_store(y, wp.tile_map(real_of, a), offset=(i, 0))


def test_map_of_a_linear_function_reads_no_operand():
    x, y = wp.zeros((2, 8), dtype=V2), wp.zeros((2, 8), dtype=wp.float64)
    ops = replay_ops(inverse_real, x, y)
    assert "tile_ifft" not in ops and "tile_load" not in ops


def test_backward_without_a_gradient_drops_the_constant_factors_replay():
    """k without a gradient: scale's adjoint needs only k, so that launch's backward replays no FFT; the gradient of
    x matches finite differences either way, and a launch where k has a gradient still gets k's (its own backward)."""
    x, y = wp.zeros((2, 8), dtype=V2), wp.zeros((2, 8), dtype=V2)
    k = wp.zeros((2, 8), dtype=wp.float64)
    fn = spectral_solve._lower(spectral_solve.infer_types([x, k, y]), False).fn
    prog = pipeline.differentiate(fn)
    ops = [s.call.name for s in pipeline.without_gradients(prog, frozenset({1})).replay]
    assert ops == ["tid", "tile_load"]  # k's tile only
    # x without a gradient: k's adjoint reads the FFT'd tile, which stays; k's own tile is not read
    assert [s.call.name for s in pipeline.without_gradients(prog, frozenset({0})).replay] == ["tid", "tile_load",
                                                                                              "tile_fft"]

    rng = np.random.default_rng(5)
    x0, k0, w = rng.standard_normal((2, 8, 2)), rng.standard_normal((2, 8)), rng.standard_normal((2, 8, 2))

    def grads(k_grad: bool):
        xa = wp.array(x0, dtype=V2, requires_grad=True)
        ka = wp.array(k0, dtype=wp.float64, requires_grad=k_grad)
        ya = wp.zeros((2, 8), dtype=V2, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch_tiled(spectral_solve, dim=2, inputs=[xa, ka], outputs=[ya], block_dim=8)
        tape.backward(grads={ya: wp.array(w, dtype=V2)})
        return xa.grad.numpy(), (ka.grad.numpy() if k_grad else None)

    gx, none = grads(False)
    gx2, gk = grads(True)
    assert none is None
    np.testing.assert_allclose(gx, gx2, rtol=1e-12, atol=1e-12)

    def loss(xv, kv):  # float64 NumPy reference of sum(w * ifft(fft(x) * k)) per row (weft's unnormalised ifft)
        z = xv[..., 0] + 1j * xv[..., 1]
        out = np.fft.ifft(np.fft.fft(z, axis=1) * kv, axis=1) * 8
        return float((w[..., 0] * out.real + w[..., 1] * out.imag).sum())

    eps = 1e-6
    for idx in [(0, 3, 0), (1, 5, 1)]:
        p, m = x0.copy(), x0.copy()
        p[idx] += eps
        m[idx] -= eps
        assert abs((loss(p, k0) - loss(m, k0)) / (2 * eps) - gx[idx]) < 1e-5
    for idx in [(0, 2), (1, 7)]:
        p, m = k0.copy(), k0.copy()
        p[idx] += eps
        m[idx] -= eps
        assert abs((loss(x0, p) - loss(x0, m)) / (2 * eps) - gk[idx]) < 1e-5


def test_tile_store_gradient_rows_consumed_and_clipped():
    """adj_tile_store: whole rows (vector path), a second store into the same array consuming the gradient (the first
    launch gets none), and a tile wider than the array (the clipped element-wise path); NumPy reference of the FFT's
    adjoint (conj(F) g = 8 * ifft(g), zero outside the stored columns)."""
    rng = np.random.default_rng(21)
    x1, x2 = (rng.standard_normal((2, 8, 2)) for _ in range(2))

    def fft_adjoint(g):
        z = g[..., 0] + 1j * g[..., 1]
        a = np.fft.ifft(z, axis=1) * 8
        return np.stack([a.real, a.imag], axis=-1)

    for width in (8, 6):
        g = rng.standard_normal((2, width, 2))
        a1, a2 = (wp.array(v, dtype=V2, requires_grad=True) for v in (x1, x2))
        y = wp.zeros((2, width), dtype=V2, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch_tiled(fft_only, dim=2, inputs=[a1], outputs=[y], block_dim=8)
            wp.launch_tiled(fft_only, dim=2, inputs=[a2], outputs=[y], block_dim=8)
        tape.backward(grads={y: wp.array(g, dtype=V2)})
        padded = np.zeros((2, 8, 2))
        padded[:, :width] = g
        np.testing.assert_allclose(a2.grad.numpy(), fft_adjoint(padded), rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(a1.grad.numpy(), 0.0)


def test_a_pruned_backward_is_the_only_backward_built(monkeypatch):
    """k without a gradient: the Tape's first backward prepares (for its batch) and builds the pruned backward module
    alone; the full one is neither batched nor built (the overwrite check reads its IR through adjoint_program). A
    later launch where k has a gradient builds the full one, and both give x the same gradient."""
    from weft.kernel import Kernel

    kernel = Kernel(spectral_solve.func)  # a fresh kernel object: no backward built in this process yet
    built, prepared = [], []
    real_build, real_prepare = pipeline.build, Kernel.prepare_adjoint

    def build(source, name, *args, **kwargs):
        built.append(name)
        return real_build(source, name, *args, **kwargs)

    def prepare(self, spec, inactive=frozenset()):
        out = real_prepare(self, spec, inactive)
        prepared.append((inactive, len(out)))
        return out

    monkeypatch.setattr(pipeline, "build", build)
    monkeypatch.setattr(Kernel, "prepare_adjoint", prepare)
    rng = np.random.default_rng(6)
    x0, k0, w = rng.standard_normal((2, 8, 2)), rng.standard_normal((2, 8)), rng.standard_normal((2, 8, 2))

    def x_grad(k_grad: bool):
        xa = wp.array(x0, dtype=V2, requires_grad=True)
        ka = wp.array(k0, dtype=wp.float64, requires_grad=k_grad)
        ya = wp.zeros((2, 8), dtype=V2, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch_tiled(kernel, dim=2, inputs=[xa, ka], outputs=[ya], block_dim=8)
        tape.backward(grads={ya: wp.array(w, dtype=V2)})
        return xa.grad.numpy()

    pruned = x_grad(False)
    (spec,) = kernel._specs.values()
    assert [n for n in built if n.endswith("_adj")] == ["spectral_solve_adj"]
    assert prepared == [(frozenset({1}), 1)]
    assert spec.adjoint is None and list(spec.adjoint_variants) == [frozenset({1})]
    assert len(spec.adjoint_variants[frozenset({1})].prog.replay) == 2  # tid, k's tile_load
    built.clear()
    full = x_grad(True)
    assert [n for n in built if n.endswith("_adj")] == ["spectral_solve_adj"] and spec.adjoint is not None
    assert spec.adjoint is not spec.adjoint_variants[frozenset({1})]
    np.testing.assert_allclose(pruned, full, rtol=1e-12, atol=1e-12)
