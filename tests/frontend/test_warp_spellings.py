"""Warp's spellings of Python casts in kernel code: ``wp.float(x)``, ``wp.int(x)``, ``wp.bool(x)``."""

import numpy as np

import weft as wp


@wp.kernel
def _casts(x: wp.array(dtype=wp.float16), o: wp.array(dtype=float)):
    o[0] = wp.float(x[0]) * 2.0 + wp.float(wp.int(2.7))


def test_wp_float_int_casts():
    o = wp.zeros(1, dtype=float)
    wp.launch(_casts, dim=1, inputs=[wp.array([1.5], dtype=wp.float16), o])
    np.testing.assert_array_equal(o.numpy(), [5.0])
