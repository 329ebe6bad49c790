"""Struct instances are instances of the decorated class (Warp's ``Foo.cls``), and keep its methods."""

import numpy as np
import pytest

import weft as wp


@wp.struct
class Inner:
    data: wp.array(dtype=int)
    z: wp.vec3


@wp.struct
class Outer:
    inner: Inner
    x: int

    def doubled_x(self):
        return 2 * self.x


@wp.kernel
def _nested(o: Outer):
    i = wp.tid()
    o.inner.data[i] = o.x + int(wp.length_sq(o.inner.z)) + i


def test_instances_of_the_decorated_class():
    o = Outer()
    o.inner = Inner()
    o.inner.data = wp.zeros(3, dtype=int)
    o.inner.z = wp.vec3(1.0, 2.0, 3.0)
    o.x = 5
    assert isinstance(o, Outer.cls) and isinstance(o.inner, Inner.cls)
    assert o.doubled_x() == 10
    with pytest.raises(AttributeError, match="no field 'y'"):
        o.y = 1.0
    wp.launch(_nested, dim=3, inputs=[o])
    np.testing.assert_array_equal(o.inner.data.numpy(), [19, 20, 21])


def test_store_index_count_error():
    @wp.kernel(module="unique")
    def bad(out: wp.array2d(dtype=wp.mat44)):
        out[0][2, 2] = 6.0

    m = wp.zeros((1, 1), dtype=wp.mat44)
    with pytest.raises(wp.WarpCodegenError, match="Incorrect number of indices specified for array indexing"):
        wp.launch(bad, dim=(1, 1), inputs=[m])


def test_fixed_arrays_are_not_struct_fields_or_kernel_parameters():
    """A wp.fixedarray is kernel-local: as a struct field or a kernel parameter it is refused with a clear error
    (Warp 1.19 accepts both declarations and then crashes or fails inside its launch)."""
    with pytest.raises(TypeError, match="field 'a': a wp.fixedarray is a kernel-local array"):
        @wp.struct
        class WithFixed:
            a: wp.fixedarray(shape=(2,), dtype=float)
            b: float

    @wp.kernel(module="unique")
    def takes_fixed(a: wp.fixedarray(shape=(2,), dtype=float), out: wp.array(dtype=float)):
        out[0] = a[0]

    with pytest.raises(wp.WarpCodegenError, match="parameter 'a' of kernel takes_fixed: a wp.fixedarray"):
        wp.launch(takes_fixed, dim=1, inputs=[None, wp.zeros(1)])
