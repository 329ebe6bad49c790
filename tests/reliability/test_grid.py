"""Launch grids are validated: dim is ints only, 32-bit thread indices never wrap, products never overflow
(issue 13, item 2); a grid of lower rank than wp.tid() unpacks is reported at the kernel's line (item 8)."""

import numpy as np
import pytest

import weft as wp

from .child import run_child


@wp.kernel
def fill_flat(a: wp.array(dtype=int)):
    i = wp.tid()
    a[i] = i


@wp.kernel
def fill_2d(a: wp.array2d(dtype=int)):
    i, j = wp.tid()
    a[i, j] = i * 10 + j


@wp.kernel
def rows_3d(last: wp.array2d(dtype=int)):
    i, j, k = wp.tid()
    last[i, j] = k


@pytest.mark.parametrize("dim", [[2.5], 2.5, "4", ("4",), True, (np.bool_(True),), None, (2, None), np.float64(3)])
def test_dim_must_be_ints(dim):
    a = wp.zeros(8, dtype=int)
    with pytest.raises(wp.LaunchError, match="dim must be an int or a tuple of 1-4 ints"):
        wp.launch(fill_flat, dim=dim, inputs=[a])
    np.testing.assert_array_equal(a.numpy(), 0)


@pytest.mark.parametrize("dim", [np.int64(5), (np.int32(5),), [5], np.array([5])])
def test_numpy_and_list_dims(dim):
    a = wp.zeros(5, dtype=int)
    wp.launch(fill_flat, dim=dim, inputs=[a])
    np.testing.assert_array_equal(a.numpy(), np.arange(5))


def test_product_overflow_is_an_error():
    a = wp.zeros((2, 2), dtype=int)
    with pytest.raises(wp.LaunchError, match="2\\^63"):
        wp.launch(fill_2d, dim=(2**32, 2**32), inputs=[a])
    with pytest.raises(wp.LaunchError, match="2\\^63"):
        wp.launch(fill_flat, dim=(2**62, 4), inputs=[wp.zeros(1, dtype=int)])


@pytest.mark.parametrize("dim", [2**31 + 8, 2**63, (2**31, 1)])
def test_flat_index_never_wraps(dim):
    a = wp.zeros(4, dtype=int)
    with pytest.raises(wp.LaunchError, match="32-bit|2\\^63"):
        wp.launch(fill_flat, dim=dim, inputs=[a])


def test_flat_index_of_2d_grid_over_int32():
    with pytest.raises(wp.LaunchError, match="flat thread index"):
        wp.launch(fill_flat, dim=(2**16, 2**16), inputs=[wp.zeros(4, dtype=int)])


def test_extent_over_int32_with_unpacked_tid():
    with pytest.raises(wp.LaunchError, match="along dimension 1"):
        wp.launch(fill_2d, dim=(1, 2**31), inputs=[wp.zeros((1, 1), dtype=int)])


@pytest.mark.slow
def test_grid_with_more_than_2_31_points_runs_when_each_index_fits():
    # 2^31 + 2^20 points through a 3-D grid: thread indices stay 32-bit, the flat index is 64-bit internally;
    # every row (i, j) is reached and runs its innermost range to the end
    last = wp.full((2049, 1024), -1, dtype=int)
    wp.launch(rows_3d, dim=(2049, 1024, 1024), inputs=[last])
    assert (last.numpy() == 1023).all()


def test_rank_mismatch_points_at_the_kernel_line():
    with pytest.raises(wp.LaunchError) as info:
        wp.launch(fill_2d, dim=16, inputs=[wp.zeros((4, 4), dtype=int)])
    msg = str(info.value)
    assert "unpacks wp.tid() into 2 indices" in msg
    assert "test_grid.py" in msg and "i, j = wp.tid()" in msg


def test_recorded_launch_set_dim_checked():
    a = wp.zeros(4, dtype=int)
    cmd = wp.launch(fill_flat, dim=4, inputs=[a], record_cmd=True)
    with pytest.raises(wp.LaunchError):
        cmd.set_dim(2**31 + 1)
    with pytest.raises(wp.LaunchError):
        cmd.set_dim("3")


def test_array_dimension_over_int32_is_an_error():
    # descriptors hold int32 extents: such an array is refused when it is made (Warp's ValueError), before allocating
    with pytest.raises(ValueError, match=r"signed 32-bit integer \(2\*\*31 - 1\), got \(2147483656,\)"):
        wp.empty(2**31 + 8, dtype=wp.int8)


def test_huge_dims_in_child():
    # these used to wrap (negative wp.tid(), writes before the array) or end in a bare struct.error
    out = run_child("""
        import weft as wp

        @wp.kernel
        def k(a: wp.array(dtype=int)):
            i = wp.tid()
            a[i] = 1

        a = wp.zeros(4, dtype=int)
        for dim in (2**31 + 8, 2**63, (2**32, 2**32), [2.5], "4"):
            try:
                wp.launch(k, dim=dim, inputs=[a])
                print("ran", dim)
            except wp.LaunchError:
                print("error")
        print("sum", int(a.numpy().sum()))
    """)
    assert out.split().count("error") == 5 and out.split()[-1] == "0"
