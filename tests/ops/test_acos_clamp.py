"""wp.acos / wp.asin clamp their argument to [-1, 1] as Warp does (rounding often pushes a cosine just past 1)."""

import numpy as np

import weft as wp


@wp.kernel
def _inv_trig(x: wp.array(dtype=float), a: wp.array(dtype=float), s: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = wp.acos(x[i])
    s[i] = wp.asin(x[i])


def test_acos_asin_clamp():
    x = np.array([1.0000001, -1.0000001, 2.0, -3.0, 0.5], dtype=np.float32)
    a = wp.zeros(5, dtype=float)
    s = wp.zeros(5, dtype=float)
    wp.launch(_inv_trig, dim=5, inputs=[wp.array(x), a, s])
    c = np.clip(x.astype(np.float64), -1.0, 1.0)
    np.testing.assert_allclose(a.numpy(), np.arccos(c), atol=1e-6)
    np.testing.assert_allclose(s.numpy(), np.arcsin(c), atol=1e-6)
