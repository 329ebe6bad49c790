"""array.fill_ / zero_ inside wp.ScopedCapture on the CPU are recorded and run at every replay, in order (they ran
once at capture time before, so a replayed step accumulated into arrays it meant to clear)."""

import numpy as np

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
