"""Debug mode: out-of-bounds accesses raise a Python error naming kernel, array and index; verify_fp finds NaN/Inf."""

import numpy as np
import pytest

import weft as wp


@wp.kernel
def k_oob_read(src: wp.array(dtype=float), dst: wp.array(dtype=float), offset: int):
    i = wp.tid()
    dst[i] = src[i + offset]


@wp.kernel
def k_oob_write(values: wp.array(dtype=float), offset: int):
    i = wp.tid()
    values[i + offset] = 1.0


@wp.kernel
def k_oob_2d(grid: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = grid[i, 3]


@wp.kernel
def k_oob_atomic(counts: wp.array(dtype=int), bucket: int):
    wp.atomic_add(counts, bucket, 1)


@wp.kernel
def k_oob_negative(values: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = values[i - 1]


def test_out_of_bounds_read_raises(debug_mode):
    src = wp.zeros(4, dtype=float)
    dst = wp.zeros(4, dtype=float)
    with pytest.raises(wp.RuntimeError_) as info:
        wp.launch(k_oob_read, dim=4, inputs=[src, dst, 2])
    msg = str(info.value)
    assert "k_oob_read" in msg
    assert "src" in msg
    assert any(str(k) in msg for k in (4, 5))  # the offending index
    assert "4" in msg  # the shape / bound


def test_out_of_bounds_write_raises_and_does_not_write(debug_mode):
    values = wp.zeros(4, dtype=float)
    guard = wp.zeros(64, dtype=float)  # allocated next; a stray write could land here
    with pytest.raises(wp.RuntimeError_) as info:
        wp.launch(k_oob_write, dim=4, inputs=[values, 10])
    msg = str(info.value)
    assert "k_oob_write" in msg and "values" in msg
    assert any(str(k) in msg for k in (10, 11, 12, 13))
    np.testing.assert_array_equal(guard.numpy(), 0.0)


def test_out_of_bounds_2d_and_negative_and_atomic(debug_mode):
    with pytest.raises(wp.RuntimeError_, match="grid") as info:
        wp.launch(k_oob_2d, dim=2, inputs=[wp.zeros((2, 3), dtype=float), wp.zeros(2, dtype=float)])
    assert "3" in str(info.value)
    with pytest.raises(wp.RuntimeError_, match="values") as info:
        wp.launch(k_oob_negative, dim=2, inputs=[wp.zeros(2, dtype=float), wp.zeros(2, dtype=float)])
    assert "-1" in str(info.value)
    with pytest.raises(wp.RuntimeError_, match="counts"):
        wp.launch(k_oob_atomic, dim=8, inputs=[wp.zeros(4, dtype=int), 4])


def test_process_survives_and_later_launches_work(debug_mode):
    src = wp.array(np.arange(6, dtype=np.float32))
    dst = wp.zeros(4, dtype=float)
    for _ in range(3):
        with pytest.raises(wp.RuntimeError_):
            wp.launch(k_oob_read, dim=4, inputs=[src, dst, 5])
    # the error state is reset: a valid launch of the same kernel succeeds
    wp.launch(k_oob_read, dim=4, inputs=[src, dst, 2])
    np.testing.assert_array_equal(dst.numpy(), [2, 3, 4, 5])


def test_release_mode_has_no_checks_but_valid_code_agrees():
    src = wp.array(np.arange(6, dtype=np.float32))
    dst = wp.zeros(4, dtype=float)
    wp.launch(k_oob_read, dim=4, inputs=[src, dst, 1])
    np.testing.assert_array_equal(dst.numpy(), [1, 2, 3, 4])


@wp.kernel
def k_make_nan(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.sqrt(x[i])


@wp.kernel
def k_make_inf(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = wp.float64(1.0) / x[i]


@pytest.fixture
def verify_fp():
    old = wp.config.verify_fp
    wp.config.verify_fp = True
    yield
    wp.config.verify_fp = old


def test_verify_fp_reports_nan(verify_fp):
    x = wp.array(np.array([1.0, 4.0, -1.0, 9.0], dtype=np.float32))
    y = wp.zeros(4, dtype=float)
    with pytest.raises(wp.RuntimeError_) as info:
        wp.launch(k_make_nan, dim=4, inputs=[x, y])
    msg = str(info.value)
    assert "k_make_nan" in msg and "'y'" in msg and "2" in msg
    # finite results pass
    wp.launch(k_make_nan, dim=4, inputs=[wp.array(np.ones(4, dtype=np.float32)), y])
    np.testing.assert_array_equal(y.numpy(), 1.0)


def test_verify_fp_reports_inf(verify_fp):
    x = wp.array(np.array([1.0, 0.0], dtype=np.float64))
    y = wp.zeros(2, dtype=wp.float64)
    with pytest.raises(wp.RuntimeError_, match="k_make_inf"):
        wp.launch(k_make_inf, dim=2, inputs=[x, y])


def test_verify_fp_off_by_default():
    assert not wp.config.verify_fp
    y = wp.zeros(1, dtype=float)
    wp.launch(k_make_nan, dim=1, inputs=[wp.array(np.array([-1.0], dtype=np.float32)), y])
    assert np.isnan(y.numpy()[0])
