"""wp.indexedarray: views a[i] in kernels, index arrays mixed with slices and integers, fill_ of composite and struct
elements, copies to and from indexed arrays (checked against NumPy fancy indexing)."""

from __future__ import annotations

import numpy as np

import weft as wp


@wp.kernel
def _row_sums(a: wp.indexedarray3d(dtype=float), out: wp.array2d(dtype=float)):
    i, j = wp.tid()
    row = a[i, j]  # an indexed 1-D view
    s = 0.0
    for k in range(row.shape[0]):
        s += row[k]
    out[i, j] = s + float(a[i].shape[1])


def test_kernel_views_and_mixed_indexing():
    host = np.arange(4 * 5 * 6, dtype=np.float32).reshape(4, 5, 6)
    data = wp.array(host)
    i0 = wp.array(np.array([3, 1], dtype=np.int32))
    i2 = wp.array(np.array([5, 0, 2], dtype=np.int32))
    ia = data[i0, 1:4, i2]  # index arrays mixed with a slice
    ref = host[np.ix_([3, 1], [1, 2, 3], [5, 0, 2])]
    assert isinstance(ia, wp.indexedarray) and ia.shape == ref.shape
    np.testing.assert_array_equal(ia.numpy(), ref)
    out = wp.zeros((2, 3))
    wp.launch(_row_sums, dim=(2, 3), inputs=[ia, out])
    np.testing.assert_allclose(out.numpy(), ref.sum(axis=2) + 3.0)
    rows = wp.array(np.array([4, 0, 2], dtype=np.int32))
    np.testing.assert_array_equal(data[2, rows].numpy(), host[2][[4, 0, 2], :])  # an integer drops its dimension


@wp.struct
class _Pair:
    a: float
    b: wp.int32


def test_fill_and_copy_composites_and_structs():
    m = wp.zeros(5, dtype=wp.mat22)
    idx = wp.array(np.array([4, 1], dtype=np.int32))
    m[idx].fill_([[1.0, 2.0], [3.0, 4.0]])
    expect = np.zeros((5, 2, 2), dtype=np.float32)
    expect[[4, 1]] = [[1.0, 2.0], [3.0, 4.0]]
    np.testing.assert_array_equal(m.numpy(), expect)
    m[idx].fill_(7.0)  # a scalar fills every component
    expect[[4, 1]] = 7.0
    np.testing.assert_array_equal(m.numpy(), expect)
    s = wp.zeros(3, dtype=_Pair)
    p = _Pair()
    p.a, p.b = 1.5, 9
    s[wp.array(np.array([2], dtype=np.int32))].fill_(p)
    assert s.numpy()["b"].tolist() == [0, 0, 9]
    s[wp.array(np.array([2], dtype=np.int32))].zero_()
    assert s.numpy()["b"].tolist() == [0, 0, 0]
    src = wp.array(np.array([10.0, 20.0], dtype=np.float32))
    dst = wp.zeros(4)
    wp.copy(dst[wp.array(np.array([3, 0], dtype=np.int32))], src)
    np.testing.assert_array_equal(dst.numpy(), [20.0, 0.0, 0.0, 10.0])
    back = wp.clone(dst[wp.array(np.array([0, 3], dtype=np.int32))])
    np.testing.assert_array_equal(back.numpy(), [20.0, 10.0])
