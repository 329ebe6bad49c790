"""The Tape's rules for wp.copy (Warp 1.19's): the copied window's gradient accumulates into the source and is consumed
in the destination (the overwritten values' gradient is zero, checked by central differences), strided windows
included; copies between dtypes, of booleans and overlapping copies pass the gradient's values on; nested Tapes are
rejected while weft's own private Tapes (checkpoint recomputation) still run inside a recording one."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import weft as wp

f64 = wp.float64


@wp.kernel
def _weighted_sum_2d(a: wp.array2d(dtype=f64), loss: wp.array(dtype=f64)):
    i, j = wp.tid()
    wp.atomic_add(loss, 0, a[i, j] * a[i, j] * f64(i + 2 * j + 1))


def _loss_after_copy(base_np, src_np, dest_offset, count):
    """loss(base, src) with base's column 2 overwritten by src (all of it, or src[1:1+count] at dest_offset)."""
    base = wp.array(base_np, dtype=f64, requires_grad=True)
    src = wp.array(src_np, dtype=f64, requires_grad=True)
    loss = wp.zeros(1, dtype=f64, requires_grad=True)
    with wp.Tape() as tape:
        wp.copy(base[:, 2], src, dest_offset=dest_offset, src_offset=1 if count else 0, count=count)
        wp.launch(_weighted_sum_2d, dim=base.shape, inputs=[base], outputs=[loss])
    return tape, loss, base, src


@pytest.mark.parametrize("dest_offset,count", [(0, 0), (1, 2)])
def test_copy_into_strided_window_consumes_its_gradient(dest_offset, count):
    rng = np.random.default_rng(5)
    base_np, src_np = rng.normal(size=(3, 4)), rng.normal(size=4 if count else 3)
    tape, loss, base, src = _loss_after_copy(base_np, src_np, dest_offset, count)
    tape.backward(loss)
    h = 1e-6

    def value(b, s):
        return _loss_after_copy(b, s, dest_offset, count)[1].numpy()[0]

    for arr_np, grad in ((base_np, base.grad.numpy()), (src_np, src.grad.numpy())):
        fd = np.zeros_like(arr_np)
        for idx in np.ndindex(arr_np.shape):
            up, down = arr_np.copy(), arr_np.copy()
            up[idx] += h
            down[idx] -= h
            args_up = (up, src_np) if arr_np is base_np else (base_np, up)
            args_down = (down, src_np) if arr_np is base_np else (base_np, down)
            fd[idx] = (value(*args_up) - value(*args_down)) / (2 * h)
        np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-8)


def test_copies_without_addition_pass_the_gradient_on():
    a = wp.array(np.ones(4, dtype=np.float32), dtype=float, requires_grad=True)
    b = wp.zeros(4, dtype=wp.int32, requires_grad=True)
    with wp.Tape() as tape:
        wp.copy(b, a)  # contiguous arrays of one element size: the bytes, as in Warp
    np.testing.assert_array_equal(b.numpy(), np.ones(4, np.float32).view(np.int32))
    b.grad.assign(np.arange(4, dtype=np.int32))
    tape.backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.arange(4, dtype=np.int32).view(np.float32))
    np.testing.assert_array_equal(b.grad.numpy(), np.arange(4))  # not consumed
    with pytest.raises(wp.Error, match="incompatible dtypes"):
        wp.copy(wp.zeros(4, dtype=wp.float64), a)

    flags = wp.zeros(4, dtype=wp.bool, requires_grad=True)
    with wp.Tape() as tape:
        copied = wp.clone(flags)
    copied.grad.fill_(True)
    tape.backward()
    assert flags.grad.numpy().all() and copied.grad.numpy().all()


def test_overlapping_copy_warns_and_copies_the_gradient():
    y = wp.array(np.arange(1.0, 5.0), dtype=f64, requires_grad=True)
    with wp.Tape() as tape:
        wp.copy(y, y, dest_offset=1, src_offset=0, count=3)
    y.grad.assign(np.array([1.0, 2.0, 3.0, 4.0]))
    with pytest.warns(UserWarning, match="overlapping copy"):
        tape.backward()
    np.testing.assert_array_equal(y.grad.numpy(), [2.0, 3.0, 4.0, 4.0])


def test_nested_tapes_are_rejected_but_checkpoint_runs_inside_a_recording_tape():
    with wp.Tape(), pytest.raises(RuntimeError, match="nested Tapes"), wp.Tape():
        pass

    x = wp.array(np.array([0.5, 1.5], dtype=np.float64), dtype=f64, requires_grad=True)

    def step(state, t):
        out = wp.zeros(2, dtype=f64, requires_grad=True)
        loss = wp.zeros(1, dtype=f64, requires_grad=True)
        wp.launch(_weighted_sum_2d, dim=(1, 2), inputs=[state[0].reshape((1, 2))], outputs=[loss])
        wp.copy(out, state[0])
        return [out]

    tape = wp.Tape()
    with tape:
        final = wp.checkpoint(step, [x], 3, segment=1)
        loss = wp.zeros(1, dtype=f64, requires_grad=True)
        wp.launch(_weighted_sum_2d, dim=(1, 2), inputs=[final[0].reshape((1, 2))], outputs=[loss])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            tape.backward(loss)  # the segments' private Tapes run while this one still records
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy() * np.array([1.0, 3.0]))
