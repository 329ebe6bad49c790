"""Booleans in kernels: ``wp.vector(True, False, ...)`` / ``wp.matrix(..., shape=)`` of bool
literals are boolean (as in Warp), a boolean broadcasts to every component, and an array used as a condition is
whether it has data (None passed: False)."""

import numpy as np

import weft as wp

vec3b = wp.types.vector(3, dtype=bool)
mat22b = wp.types.matrix((2, 2), dtype=bool)


@wp.kernel
def _bools(v: wp.array(dtype=vec3b), m: wp.array(dtype=mat22b), ok: wp.array(dtype=int)):
    v[0] = wp.vector(True, False, True)
    v[1] = vec3b(True)
    m[0] = wp.matrix(False, True, True, False, shape=(2, 2))
    m[1] = mat22b(True)
    if wp.vector(True, False, True) == vec3b(True, False, True):
        ok[0] = 1


def test_bool_vectors_and_matrices():
    v, m, ok = wp.zeros(2, dtype=vec3b), wp.zeros(2, dtype=mat22b), wp.zeros(1, dtype=int)
    wp.launch(_bools, dim=1, inputs=[v, m, ok])
    np.testing.assert_array_equal(v.numpy(), [[True, False, True], [True, True, True]])
    np.testing.assert_array_equal(m.numpy(), [[[False, True], [True, False]], [[True, True], [True, True]]])
    assert ok.numpy()[0] == 1


@wp.kernel
def _array_truth(a: wp.array(dtype=float), b: wp.array(dtype=float), out: wp.array(dtype=int)):
    tid = wp.tid()
    if not a:
        out[0] = 1
    if b and b[tid] == 0.0:
        out[1] = 1
    if a and a[tid] == 0.0:  # short-circuits: a[tid] of the null array is never read
        out[2] = 1


def test_array_as_condition():
    out = wp.zeros(3, dtype=int)
    wp.launch(_array_truth, dim=1, inputs=[None, wp.zeros(2, dtype=float), out])
    np.testing.assert_array_equal(out.numpy(), [1, 1, 0])
