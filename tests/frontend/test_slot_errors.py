"""Component (slot) stores with a value of another kind are Warp's ``TypeError``; replacing a struct's array field
releases the old array and its gradient."""

import gc
import weakref

import numpy as np
import pytest

import weft as wp


def test_vector_slot_store_of_a_vector_is_a_type_error():
    def bad(y: wp.array(dtype=wp.vec3), src: wp.array(dtype=wp.vec3)):
        i = wp.tid()
        y[i].y = src[i]

    k = wp.kernel(bad, module="unique")
    with pytest.raises(TypeError, match="Composite slot assignment expects value of type float32, got vec3f"):
        wp.launch(k, 1, inputs=[wp.zeros(1, dtype=wp.vec3), wp.zeros(1, dtype=wp.vec3)])


def test_vector_slot_store_of_a_scalar_still_works():
    def good(y: wp.array(dtype=wp.vec3), src: wp.array(dtype=float)):
        i = wp.tid()
        v = y[i]
        v.y = src[i]
        y[i] = v

    y = wp.zeros(2, dtype=wp.vec3)
    wp.launch(wp.kernel(good, module="unique"), 2, inputs=[y, wp.array([3.0, 4.0])])
    np.testing.assert_array_equal(y.numpy()[:, 1], [3.0, 4.0])


@wp.struct
class Holder:
    data: wp.array(dtype=float)


@pytest.mark.parametrize("replacement", ["none", "array"])
def test_replacing_a_struct_array_field_releases_the_old_gradient(replacement):
    s = Holder()
    old = wp.array([1.0, 2.0, 3.0], requires_grad=True)
    grad_ref = weakref.ref(old.grad)
    s.data = old
    del old
    assert grad_ref() is not None  # the struct keeps the array, and so its gradient, alive
    s.data = None if replacement == "none" else wp.array([4.0, 5.0, 6.0])
    gc.collect()
    assert grad_ref() is None
