"""Debug mode: out-of-bounds accesses raise a Python error naming kernel, array and index; verify_fp finds NaN/Inf."""

import re

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
    # kernel, array, the offending index (the first thread to fail: 2 + 2 or 2 + 3) and the shape
    assert re.search(r"read out of bounds in kernel 'k_oob_read': array 'src' index \[[45]\] shape \(4\)",
                     str(info.value)), str(info.value)


def test_out_of_bounds_write_raises_and_does_not_write(debug_mode):
    values = wp.zeros(4, dtype=float)
    guard = wp.zeros(64, dtype=float)  # allocated next; a stray write could land here
    with pytest.raises(wp.RuntimeError_) as info:
        wp.launch(k_oob_write, dim=4, inputs=[values, 10])
    assert re.search(r"write out of bounds in kernel 'k_oob_write': array 'values' index \[1[0-3]\] shape \(4\)",
                     str(info.value)), str(info.value)
    np.testing.assert_array_equal(guard.numpy(), 0.0)


def test_out_of_bounds_2d_and_negative_and_atomic(debug_mode):
    with pytest.raises(wp.RuntimeError_, match=r"array 'grid' index \[[01], 3\] shape \(2, 3\)"):
        wp.launch(k_oob_2d, dim=2, inputs=[wp.zeros((2, 3), dtype=float), wp.zeros(2, dtype=float)])
    with pytest.raises(wp.RuntimeError_, match=r"kernel 'k_oob_negative': array 'values' index \[-1\] shape \(2\)"):
        wp.launch(k_oob_negative, dim=2, inputs=[wp.zeros(2, dtype=float), wp.zeros(2, dtype=float)])
    with pytest.raises(wp.RuntimeError_, match=r"atomic out of bounds in kernel 'k_oob_atomic': array 'counts' "
                                               r"index \[4\] shape \(4\)"):
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
    assert "kernel 'k_make_nan' wrote a non-finite value (nan) into argument 'y' at index (2,)" in str(info.value)
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
