"""wp.checkpoint: gradients bitwise equal to the full Tape's, O(sqrt(steps)) memory, and the buffer pool that keeps
its cost near one extra forward pass (recycled buffers, no gradient buffers in the unrecorded forward)."""

from __future__ import annotations

import gc
import tracemalloc
import weakref

import numpy as np
import pytest

import weft as wp
from weft.runtime import checkpoint as ckpt_mod
from weft.runtime.pool import HostPool

N = 64


@wp.kernel
def _advance(x: wp.array(dtype=float), v: wp.array(dtype=wp.vec2), k: wp.array(dtype=float), dt: float,
             x_out: wp.array(dtype=float), v_out: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    j = (i + 1) % x.shape[0]
    a = -k[0] * wp.sin(x[i]) + 0.1 * x[j]
    v_new = v[i] + dt * wp.vec2(a, a * x[i])
    v_out[i] = v_new
    x_out[i] = x[i] + dt * v_new[0]


@wp.kernel
def _loss(x: wp.array(dtype=float), v: wp.array(dtype=wp.vec2), out: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(out, 0, x[i] * x[i] + v[i][1])


class Rollout:
    """A two-array state and a parameter ``k`` captured by the step; every step writes new arrays."""

    def __init__(self, n: int = N):
        self.n = n
        self.k = wp.array(np.array([0.7], np.float32), dtype=float, requires_grad=True)
        self.created: list = []  # (has grad) of each array the step created, when recording is on

    def step(self, state, t):
        x, v = state
        x_out = wp.zeros(self.n, dtype=float, requires_grad=True)
        v_out = wp.zeros(self.n, dtype=wp.vec2, requires_grad=True)
        if self.created is not None:
            self.created.append(x_out.grad is not None)
        wp.launch(_advance, dim=self.n, inputs=[x, v, self.k, 0.05 + 0.001 * t], outputs=[x_out, v_out])
        return [x_out, v_out]

    def initial(self):
        rng = np.random.default_rng(3)
        x = wp.array(rng.standard_normal(self.n).astype(np.float32), dtype=float, requires_grad=True)
        v = wp.array(rng.standard_normal((self.n, 2)).astype(np.float32), dtype=wp.vec2, requires_grad=True)
        return x, v

    def gradient(self, steps: int, segment: int | None, checkpoint: bool, state=None):
        x, v = state or self.initial()
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            if checkpoint:
                final = wp.checkpoint(self.step, [x, v], steps, segment=segment)
            else:
                final = [x, v]
                for t in range(steps):
                    final = self.step(final, t)
            wp.launch(_loss, dim=self.n, inputs=final, outputs=[loss])
        tape.backward(loss)
        out = (loss.numpy().copy(), x.grad.numpy().copy(), v.grad.numpy().copy(), self.k.grad.numpy().copy())
        tape.zero()
        return out


@pytest.mark.parametrize("steps,segment", [(0, None), (1, None), (7, None), (12, 4), (13, 5), (9, 1), (5, 20)])
def test_gradients_equal_full_tape(steps, segment):
    r = Rollout()
    full = r.gradient(steps, None, checkpoint=False)
    ck = r.gradient(steps, segment, checkpoint=True)
    for a, b in zip(full, ck):
        np.testing.assert_array_equal(a, b)
    if steps:
        assert np.abs(full[3]).max() > 0.0


def test_repeated_iterations_reuse_buffers_and_keep_gradients():
    """The pool lives with the step's owner: later calls take their buffers from it, with the same gradients."""
    r = Rollout()
    ref = r.gradient(16, None, checkpoint=False)
    first = r.gradient(16, None, checkpoint=True)
    pool = ckpt_mod._pools[r]
    fresh = pool.fresh
    for _ in range(3):
        again = r.gradient(16, None, checkpoint=True)
        for a, b in zip(ref, again):
            np.testing.assert_array_equal(a, b)
    for a, b in zip(ref, first):
        np.testing.assert_array_equal(a, b)
    assert pool.fresh == fresh  # no new allocation after the first call: every buffer was recycled
    assert pool.reused > 0
    assert pool.leased + pool.idle <= pool.high_water


def test_second_backward_after_zero_gives_same_gradients():
    r = Rollout()
    x, v = r.initial()
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        final = wp.checkpoint(r.step, [x, v], 10, segment=3)
        wp.launch(_loss, dim=r.n, inputs=final, outputs=[loss])
    tape.backward(loss)
    g1 = x.grad.numpy().copy(), r.k.grad.numpy().copy()
    tape.zero()
    tape.backward(loss)
    np.testing.assert_array_equal(g1[0], x.grad.numpy())
    np.testing.assert_array_equal(g1[1], r.k.grad.numpy())


def test_forward_allocates_no_gradient_buffers():
    """The forward pass records nothing, so arrays the step creates there get no .grad; the recompute's do."""
    r = Rollout()
    x, v = r.initial()
    r.created = []
    with wp.Tape() as tape:
        final = wp.checkpoint(r.step, [x, v], 6, segment=3)
    assert r.created == [False] * 6
    assert all(a.grad is not None for a in final)  # the returned state carries gradients
    r.created = []
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    with tape:
        wp.launch(_loss, dim=r.n, inputs=final, outputs=[loss])
    tape.backward(loss)
    assert r.created == [True] * 6  # the recomputed segments are recorded, with gradients
    # outside wp.checkpoint, requires_grad=True allocates a gradient as usual
    assert wp.zeros(4, dtype=float, requires_grad=True).grad is not None


def test_without_tape_returns_final_state():
    r = Rollout()
    x, v = r.initial()
    final = wp.checkpoint(r.step, [x, v], 5)
    ref = [x, v]
    for t in range(5):
        ref = r.step(ref, t)
    np.testing.assert_array_equal(final[0].numpy(), ref[0].numpy())
    np.testing.assert_array_equal(final[1].numpy(), ref[1].numpy())


def test_pool_dies_with_owner():
    r = Rollout()
    r.gradient(4, None, checkpoint=True)
    pool = weakref.ref(ckpt_mod._pools[r])
    del r
    gc.collect()
    assert pool() is None


def test_memory_grows_like_sqrt_steps():
    """Peak traced memory of forward + backward: x4 steps costs about x2 with checkpointing, x4 with a full Tape."""
    n = 4096

    def peak(steps: int, checkpoint: bool) -> float:
        r = Rollout(n)
        r.gradient(2, None, checkpoint)  # compile outside the measurement
        gc.collect()
        tracemalloc.start()
        tracemalloc.reset_peak()
        r.gradient(steps, None, checkpoint)
        _, p = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return p

    ck_small, ck_large = peak(25, True), peak(100, True)
    full_small, full_large = peak(25, False), peak(100, False)
    assert full_large > 3.0 * full_small
    assert ck_large < 2.6 * ck_small, (ck_small, ck_large)
    assert ck_large < 0.5 * full_large


def test_host_pool_recycles_zeroed_buffers_within_its_peak():
    pool = HostPool()
    with pool:
        a = wp.zeros((128, 128), dtype=wp.vec2)
        ptr = a.ptr
        a.fill_(3.0)
        del a
        assert pool.idle > 0 and pool.leased == 0
        b = wp.zeros((128, 128), dtype=wp.vec2)
        assert b.ptr == ptr  # the same memory, handed out again
        assert not b.numpy().any()  # and zeroed
        assert b.ptr % 64 == 0
        c = wp.zeros(100, dtype=float)  # another size: a fresh buffer
        del b, c
    assert pool.reused == 1 and pool.fresh == 2
    assert pool.idle + pool.leased <= pool.high_water
    pool.clear()
    assert pool.idle == 0
    d = wp.zeros(10, dtype=float)  # outside the scope: the C allocator
    assert pool.fresh == 2 and d.ptr % 64 == 0
