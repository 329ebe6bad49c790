"""The fast launch path takes host vectors, matrices and structs (it used to send them down the general path)."""

import numpy as np

import weft as wp


@wp.struct
class _Params:
    scale: float
    offset: wp.vec3


@wp.kernel
def _affine(x: wp.array(dtype=wp.vec3), m: wp.mat33, b: wp.vec3, p: _Params, y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    y[i] = (m * x[i] + b) * p.scale + p.offset


def test_fast_path_vectors_matrices_structs():
    x = wp.array(np.arange(12, dtype=np.float32).reshape(4, 3), dtype=wp.vec3)
    y = wp.zeros(4, dtype=wp.vec3)
    m = wp.mat33(1.0, 2.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 3.0)
    p = _Params(scale=2.0, offset=wp.vec3(0.0, 1.0, 0.0))
    expected = None
    for k in range(3):  # the first launch specialises, later ones take the fast path
        b = wp.vec3(float(k), 0.0, -1.0)
        wp.launch(_affine, dim=4, inputs=[x, m, b, p], outputs=[y])
        expected = (x.numpy() @ np.array(m).reshape(3, 3).T + np.array(b)) * 2.0 + np.array([0.0, 1.0, 0.0])
        np.testing.assert_allclose(y.numpy(), expected, rtol=1e-6)
    assert _affine._launch_fast is not None and _affine._launch_fast.pack is not None
    # a tuple for the vector still works (general path)
    wp.launch(_affine, dim=4, inputs=[x, m, (2.0, 0.0, -1.0), p], outputs=[y])
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-6)
