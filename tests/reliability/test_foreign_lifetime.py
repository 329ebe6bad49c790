"""Read-only NumPy inputs are copied for a launch; the copy lives until the kernel has run (issue 13, item 1)."""

import numpy as np
import pytest

import weft as wp

from .child import run_child


@wp.kernel
def twice(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * 2.0


def test_read_only_inputs_stay_alive_in_child():
    # used to segfault (the copy of the 16 MB read-only input was freed before the kernel ran)
    out = run_child("""
        import numpy as np, weft as wp

        @wp.kernel
        def twice(x: wp.array(dtype=float), y: wp.array(dtype=float)):
            i = wp.tid()
            y[i] = x[i] * 2.0

        n = 4_000_000
        src = np.ones(n, dtype=np.float32)
        src.setflags(write=False)
        y = wp.zeros(n, dtype=float)
        bad = 0
        for _ in range(3):
            wp.launch(twice, dim=n, inputs=[src, y])
            bad += int((y.numpy() != 2.0).sum())
        print("bad", bad)
    """)
    assert out.split()[-2:] == ["bad", "0"]


@pytest.mark.parametrize("make", [
    lambda: np.broadcast_to(np.float32(3.0), (5000,)),
    lambda: np.frombuffer(np.full(5000, 3.0, np.float32).tobytes(), dtype=np.float32),
    lambda: np.full(5000, 3.0, np.float32)[::-1].copy().view(np.ndarray).__array__(),  # writable control
], ids=["broadcast", "frombuffer", "writable"])
def test_read_only_inputs_correct(make):
    y = wp.zeros(5000, dtype=float)
    for _ in range(50):
        y.zero_()
        wp.launch(twice, dim=5000, inputs=[make(), y])
        np.testing.assert_array_equal(y.numpy(), 6.0)


def test_read_only_input_in_recorded_launch():
    src = np.full(64, 1.5, np.float32)
    src.setflags(write=False)
    y = wp.zeros(64, dtype=float)
    cmd = wp.launch(twice, dim=64, inputs=[src, y], record_cmd=True)
    del src
    cmd.launch()
    np.testing.assert_array_equal(y.numpy(), 3.0)
    ro = np.full(64, 2.0, np.float32)
    ro.setflags(write=False)
    cmd.set_param_at_index(0, ro)
    cmd.launch()
    np.testing.assert_array_equal(y.numpy(), 4.0)


def test_read_only_output_is_a_launch_error():
    out = np.zeros(8, np.float32)
    out.setflags(write=False)
    with pytest.raises(wp.LaunchError, match="argument 'y' is a read-only array but the kernel writes it"):
        wp.launch(twice, dim=8, inputs=[np.ones(8, np.float32), out])
    with pytest.raises(wp.LaunchError, match="argument 'y' is a read-only array"):
        wp.launch(twice, dim=8, inputs=[np.ones(8, np.float32), np.broadcast_to(np.float32(0), (8,))])
    np.testing.assert_array_equal(out, 0.0)
