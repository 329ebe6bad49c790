"""Every scalar dtype x every atomic operation (issue 13, item 3), against a NumPy model of the same updates.

One kernel per dtype covers the whole operation list (with loaded values and with typed constants such as
``wp.int64(1)``, which render as C++ literals of their own type), so the matrix costs one compile per dtype.
"""

import numpy as np
import pytest

import weft as wp

DTYPES = [wp.int8, wp.int16, wp.int32, wp.int64, wp.uint8, wp.uint16, wp.uint32, wp.uint64,
          wp.float16, wp.float32, wp.float64]
NP = {wp.int8: np.int8, wp.int16: np.int16, wp.int32: np.int32, wp.int64: np.int64, wp.uint8: np.uint8,
      wp.uint16: np.uint16, wp.uint32: np.uint32, wp.uint64: np.uint64, wp.float16: np.float16,
      wp.float32: np.float32, wp.float64: np.float64}


def make_kernel(T):
    def every_atomic(a: wp.array(dtype=T), c: wp.array(dtype=T), old: wp.array(dtype=T), v: wp.array(dtype=T)):
        i = wp.tid()
        x = v[i]
        # loaded values
        wp.atomic_add(a, 0, x)
        wp.atomic_sub(a, 1, x)
        wp.atomic_max(a, 2, x)
        wp.atomic_min(a, 3, x)
        a[4] += x
        a[5] -= x
        # typed constants
        wp.atomic_add(c, 0, T(2))
        wp.atomic_sub(c, 1, T(1))
        wp.atomic_max(c, 2, T(7))
        wp.atomic_min(c, 3, T(1))
        c[4] += T(1)
        c[5] -= T(2)
        if i == 0:
            old[0] = wp.atomic_exch(a, 6, x)
            old[1] = wp.atomic_cas(a, 7, a[7], x)
            old[2] = wp.atomic_exch(c, 6, T(3))
            old[3] = wp.atomic_cas(c, 7, T(8), T(4))
            a[8] = wp.max(a[8], x)
            a[9] = wp.min(a[9], x)
            c[8] = wp.max(c[8], T(5))
            c[9] = wp.min(c[9], T(5))

    return wp.kernel(every_atomic)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_atomic_matrix(dtype):
    npt = NP[dtype]
    k = make_kernel(dtype)
    n = 20
    v = (np.arange(n) % 7 + 1).astype(npt)  # 1..7: exact in every dtype, sums stay small
    start = np.array([3, 100, 2, 5, 4, 90, 9, 8, 1, 6], dtype=npt)
    a = wp.array(start.copy(), dtype=dtype)
    c = wp.array(start.copy(), dtype=dtype)
    old = wp.zeros(4, dtype=dtype)
    wp.launch(k, dim=n, inputs=[a, c, old, wp.array(v, dtype=dtype)])
    s = v.astype(np.float64).sum()
    want = start.astype(np.float64)
    want[[0, 4]] += s
    want[[1, 5]] -= s
    want[2] = max(want[2], v.max())
    want[3] = min(want[3], v.min())
    want[6] = want[7] = v[0]
    want[8] = max(want[8], v[0])
    want[9] = min(want[9], v[0])
    np.testing.assert_array_equal(a.numpy().astype(np.float64), want)
    wc = start.astype(np.float64)
    wc[0] += 2 * n
    wc[1] -= n
    wc[2] = 7
    wc[3] = 1
    wc[4] += n
    wc[5] -= 2 * n
    wc[6], wc[7], wc[8], wc[9] = 3, 4, 5, 5
    np.testing.assert_array_equal(c.numpy().astype(np.float64), wc)
    np.testing.assert_array_equal(old.numpy().astype(np.float64), [9, 8, 9, 8])
