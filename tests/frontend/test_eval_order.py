"""Python's evaluation order in kernel code: an augmented assignment evaluates its target's index expressions once,
before the right-hand side; a name left bound by an unrolled loop and updated in a later dynamic loop carries its
value across that loop's iterations; a dynamic loop's index read after the loop is its last value."""

import numpy as np

import weft as wp


@wp.func
def _bump(state: wp.array(dtype=int)) -> int:
    i = state[0]
    state[0] = i + 1
    return i


@wp.func
def _read(state: wp.array(dtype=int)) -> float:
    return float(state[0]) * 100.0


@wp.struct
class _Item:
    value: float


@wp.kernel
def _order(dst: wp.array(dtype=wp.mat22), items: wp.array(dtype=_Item), state: wp.array(dtype=int),
           out: wp.array(dtype=int)):
    dst[_bump(state)][1] += wp.vec2(_read(state), 1.0)  # index 0 first, then the rhs reads state == 1
    items[_bump(state)].value += 5.0  # index 1, evaluated once
    s = wp.int32(0)
    for i in range(2):  # unrolled: leaves i == 1
        s = s + i
    n = wp.int32(0)
    while n < 3:
        i += 1
        n = n + 1
    out[0] = i
    for j in range(state[0] + 2):  # a dynamic loop: afterwards j is its last value (3), as in Python
        if j == 1:
            continue
    out[1] = j


def test_augmented_assignment_and_leaked_loop_index():
    dst = wp.zeros(2, dtype=wp.mat22)
    items = wp.zeros(3, dtype=_Item)
    state = wp.zeros(1, dtype=int)
    out = wp.zeros(2, dtype=int)
    wp.launch(_order, dim=1, inputs=[dst, items, state, out])
    expected = np.zeros((2, 2, 2), dtype=np.float32)
    expected[0, 1] = [100.0, 1.0]
    np.testing.assert_array_equal(dst.numpy(), expected)
    np.testing.assert_array_equal(items.numpy()["value"], [0.0, 5.0, 0.0])
    assert state.numpy()[0] == 2 and list(out.numpy()) == [4, 3]
