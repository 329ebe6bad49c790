"""array.fill_ / zero_ inside wp.ScopedCapture on the CPU are recorded and run at every replay, in order (they ran
once at capture time before, so a replayed step accumulated into arrays it meant to clear)."""

import numpy as np
import pytest

import weft as wp


@wp.kernel
def _accumulate(src: wp.array(dtype=float), dst: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(dst, i, src[i])


def test_zero_is_replayed_with_the_graph():
    src = wp.array(np.arange(4, dtype=np.float32))
    dst = wp.full(4, 7.0, dtype=float)
    with wp.ScopedCapture() as capture:
        dst.zero_()
        wp.launch(_accumulate, 4, inputs=[src, dst])
        wp.launch(_accumulate, 4, inputs=[src, dst])
    np.testing.assert_array_equal(dst.numpy(), 7.0)  # nothing ran during the capture
    for _ in range(3):
        wp.capture_launch(capture.graph)
        np.testing.assert_array_equal(dst.numpy(), 2.0 * np.arange(4))
    dst.fill_(1.0)  # outside a capture: immediate
    np.testing.assert_array_equal(dst.numpy(), 1.0)


def test_strided_and_indexed_fills_and_copies_replay_with_the_graph():
    """Warp's CPU capture refuses these (NotImplementedError); weft records and replays them."""
    base = wp.zeros((4, 4), dtype=float)
    flat = wp.zeros(8, dtype=float)
    indexed = wp.indexedarray(flat, [wp.array([0, 2, 4, 6], dtype=wp.int32)])
    src = wp.array(np.arange(16, dtype=np.float32).reshape(4, 4))
    with wp.ScopedCapture() as capture:
        base[:, 0].fill_(42.0)
        indexed.fill_(5.0)
        wp.copy(base[:, 1], src[:, 3])
    assert not base.numpy().any() and not flat.numpy().any()
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(base.numpy()[:, 0], 42.0)
    np.testing.assert_array_equal(base.numpy()[:, 1], [3.0, 7.0, 11.0, 15.0])
    np.testing.assert_array_equal(flat.numpy(), [5.0, 0.0] * 4)


def test_capture_while_and_capture_if_run_at_every_replay():
    counter = wp.zeros(1, dtype=wp.int32)
    flag = wp.zeros(1, dtype=wp.int32)
    dst = wp.zeros(4, dtype=float)
    ones = wp.ones(4, dtype=float)

    def body(scale):
        wp.launch(_accumulate, 4, inputs=[ones, dst])
        wp.launch(_decrement, 1, inputs=[counter])

    with wp.ScopedCapture() as capture:
        counter.fill_(3)
        wp.capture_while(counter, while_body=body, scale=1.0)
        wp.capture_if(flag, on_true=lambda: wp.launch(_accumulate, 4, inputs=[ones, dst]),
                      on_false=lambda: dst.zero_())
    for k in range(1, 3):
        flag.fill_(1)
        wp.capture_launch(capture.graph)
        np.testing.assert_array_equal(dst.numpy(), 4.0 * k)
    flag.fill_(0)
    wp.capture_launch(capture.graph)
    np.testing.assert_array_equal(dst.numpy(), 0.0)
    counter.fill_(2)
    wp.capture_while(counter, while_body=body, scale=1.0)  # outside a capture: runs now
    np.testing.assert_array_equal(dst.numpy(), 2.0)
    with pytest.raises(TypeError, match="int32"):
        wp.capture_while(dst, while_body=body)


@wp.kernel
def _decrement(c: wp.array(dtype=wp.int32)):
    wp.atomic_sub(c, 0, 1)


def test_module_unload_keeps_captured_launches_and_reloads():
    src = wp.ones(4, dtype=float)
    dst = wp.zeros(4, dtype=float)
    wp.launch(_accumulate, 4, inputs=[src, dst])
    with wp.ScopedCapture() as capture:
        wp.launch(_accumulate, 4, inputs=[src, dst])
    _accumulate.module.unload()
    assert not _accumulate.module.execs
    wp.capture_launch(capture.graph)  # the graph keeps the code it captured
    wp.launch(_accumulate, 4, inputs=[src, dst])  # loaded again
    np.testing.assert_array_equal(dst.numpy(), 3.0)
