"""wp.tile_stack: push / pop / clear / count against a plain Python model of the block (lanes in order), vector
elements, overflow, and the calls weft rejects."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp

B = 8
CAP = wp.constant(5)


@wp.kernel
def stack_ops(vals: wp.array(dtype=wp.vec2), slots: wp.array(dtype=int), counts: wp.array(dtype=int),
              popped: wp.array(dtype=wp.vec2), pslots: wp.array(dtype=int)):
    _i, j = wp.tid()
    s = wp.tile_stack(capacity=CAP, dtype=wp.vec2)
    wp.tile_stack_push(s, vals[j], True)
    wp.tile_stack_clear(s)
    slots[j] = wp.tile_stack_push(s, vals[j], j % 3 != 1)  # 6 of 8 lanes offer a value: one is dropped
    counts[j] = wp.tile_stack_count(s)
    v, ps = wp.tile_stack_pop(s)
    popped[j] = v
    pslots[j] = ps
    slots[B + j] = wp.tile_stack_push(s, vals[j] * 2.0, j < 2)
    v2, ps2 = wp.tile_stack_pop(s)
    popped[B + j] = v2
    pslots[B + j] = ps2
    counts[B + j] = wp.tile_stack_count(s)


def _model(vals, cap):
    """The block's stack with lanes taken in order (one valid ordering of Warp's unspecified slot assignment)."""
    data, count = [None] * cap, 0
    slots, counts, popped, pslots = [], [], [], []

    def push(values, flags):
        nonlocal count
        out = []
        for v, f in zip(values, flags):
            if f and count < cap:
                data[count] = v
                out.append(count)
                count += 1
            else:
                out.append(-1)
        return out

    def pop():
        nonlocal count
        vs, ss = [], []
        for _ in range(B):
            if count > 0:
                count -= 1
                vs.append(data[count])
                ss.append(count)
            else:
                vs.append(np.zeros(2))
                ss.append(-1)
        return vs, ss

    slots += push(vals, [j % 3 != 1 for j in range(B)])
    counts += [count] * B
    v, s = pop()
    popped += v
    pslots += s
    slots += push(vals * 2.0, [j < 2 for j in range(B)])
    v, s = pop()
    popped += v
    pslots += s
    return np.array(slots), [counts[0]] * B + [count] * B, np.array(popped), np.array(pslots)


def test_stack_matches_lane_order_model():
    vals = np.arange(2 * B, dtype=np.float32).reshape(B, 2) + 1.0
    slots, counts = wp.zeros(2 * B, dtype=int), wp.zeros(2 * B, dtype=int)
    popped, pslots = wp.zeros(2 * B, dtype=wp.vec2), wp.zeros(2 * B, dtype=int)
    wp.launch_tiled(stack_ops, dim=1, inputs=[wp.array(vals, dtype=wp.vec2), slots, counts, popped, pslots],
                    block_dim=B)
    want_slots, want_counts, want_popped, want_pslots = _model(vals, 5)
    np.testing.assert_array_equal(slots.numpy(), want_slots)
    np.testing.assert_array_equal(counts.numpy(), want_counts)
    np.testing.assert_array_equal(popped.numpy(), want_popped)
    np.testing.assert_array_equal(pslots.numpy(), want_pslots)


@wp.kernel(module="unique", enable_backward=False)
def rejected_zero_capacity():
    _s = wp.tile_stack(capacity=0, dtype=int)


@wp.kernel(module="unique", enable_backward=False)
def rejected_bool_capacity():
    _s = wp.tile_stack(capacity=True, dtype=int)


@wp.kernel(module="unique", enable_backward=False)
def rejected_type_mismatch():
    s = wp.tile_stack(capacity=4, dtype=int)
    wp.tile_stack_push(s, wp.vec3(1.0), True)


@wp.kernel(module="unique", enable_backward=False)
def rejected_float_literal():
    s = wp.tile_stack(capacity=4, dtype=int)
    wp.tile_stack_push(s, 1.0, True)


@wp.kernel(module="unique", enable_backward=False)
def rejected_in_loop():
    s = wp.tile_stack(capacity=4, dtype=int)
    _i, j = wp.tid()
    for k in range(j):  # a dynamic loop (a constant range is unrolled: straight-line code, accepted)
        wp.tile_stack_push(s, k, True)


@pytest.mark.parametrize("kernel, pattern", [
    (rejected_zero_capacity, "positive integer"),
    (rejected_bool_capacity, "positive integer"),
    (rejected_type_mismatch, "does not match"),
    (rejected_float_literal, "does not match"),
    (rejected_in_loop, "inside a loop or branch"),
])
def test_rejected_stack_uses(kernel, pattern):
    with pytest.raises(wp.Error, match=pattern):
        wp.launch_tiled(kernel, dim=1, inputs=[], block_dim=4)


@wp.kernel
def survivors_push(out_count: wp.array(dtype=int)):
    tid = wp.tid()
    lane = tid % 8
    if lane == 0 or lane % 3 == 0:
        return  # lanes that left take no part (lane 0 among them: the count is kept at block level)
    s = wp.tile_stack(capacity=CAP, dtype=int)
    wp.tile_stack_push(s, lane, True)
    out_count[tid] = wp.tile_stack_count(s)


def test_lanes_that_returned_do_not_push():
    dim = 13  # a full block of 8 and a partial one of 5
    out = wp.full(dim, -1, dtype=int)
    wp.launch(survivors_push, dim=dim, inputs=[out], block_dim=8)
    want = [-1 if lane % 8 == 0 or lane % 8 % 3 == 0 else min(5, 5 if lane < 8 else 3) for lane in range(dim)]
    np.testing.assert_array_equal(out.numpy(), want)


@wp.func
def push_twice(s: wp.tile_stack(capacity=CAP, dtype=wp.vec2), v: wp.vec2):
    wp.tile_stack_push(s, v, True)  # changes the caller's stack (Warp passes stacks by reference)
    wp.tile_stack_push(s, v * 2.0, False)


@wp.kernel
def stack_in_func(vals: wp.array(dtype=wp.vec2), counts: wp.array(dtype=int), popped: wp.array(dtype=wp.vec2),
                  pslots: wp.array(dtype=int)):
    _i, j = wp.tid()
    s = wp.tile_stack(capacity=CAP, dtype=wp.vec2)
    push_twice(s, vals[j])
    counts[j] = wp.tile_stack_count(s)
    v, ps = wp.tile_stack_pop(s)
    popped[j] = v
    pslots[j] = ps


def test_stack_passed_to_a_func_is_changed_there():
    vals_np = np.arange(2 * B, dtype=np.float32).reshape(B, 2)
    counts, pslots = wp.zeros(B, dtype=int), wp.zeros(B, dtype=int)
    popped = wp.zeros(B, dtype=wp.vec2)
    wp.launch_tiled(stack_in_func, dim=[1], inputs=[wp.array(vals_np, dtype=wp.vec2), counts, popped, pslots],
                    block_dim=B)
    cap = int(CAP)
    assert (counts.numpy() == cap).all()  # B lanes offered a value, the stack keeps CAP of them
    # lane k pops slot CAP-1-k (later pushes first): the value lane CAP-1-k pushed; lanes past CAP get nothing
    expect_slots = np.array([cap - 1 - k if k < cap else -1 for k in range(B)])
    np.testing.assert_array_equal(pslots.numpy(), expect_slots)
    expect_vals = np.array([vals_np[cap - 1 - k] if k < cap else np.zeros(2) for k in range(B)])
    np.testing.assert_array_equal(popped.numpy(), expect_vals)
