"""``@wp.kernel(module="unique")``: one content-named module per kernel, identical content reuses the kernel."""

import numpy as np
import pytest

import weft as wp


def _make(values, helper):
    @wp.kernel(module="unique", enable_backward=False)
    def fill(out: wp.array(dtype=int)):
        for i in range(wp.static(len(values))):
            out[i] = helper(wp.static(values[i]))

    return fill


@wp.func
def _plus_one(x: int) -> int:
    return x + 1


@wp.func
def _plus_two(x: int) -> int:
    return x + 2


def test_unique_kernels_by_content():
    a = _make([1, 2], _plus_one)
    assert _make([1, 2], _plus_one) is a  # same source, captured values and funcs: the same object
    b = _make([5, 2], _plus_one)  # only a non-last element differs
    c = _make([1, 2], _plus_two)  # only the captured func differs
    assert len({id(a), id(b), id(c)}) == 3
    assert len({a.module.name, b.module.name, c.module.name}) == 3
    assert a.module.name.startswith(a.key + "_")
    assert _plus_one.module in a.module.references and a.module in _plus_one.module.dependents
    out = wp.zeros(2, dtype=int, device="cpu")
    for k, expected in ((a, [2, 3]), (b, [6, 3]), (c, [3, 4])):
        wp.launch(k, dim=1, outputs=[out], device="cpu")
        np.testing.assert_array_equal(out.numpy(), expected)


def test_unique_module_options():
    def make(opts):
        @wp.kernel(module="unique", module_options=opts)
        def k(x: wp.array(dtype=float)):
            x[0] = 1.0

        return k

    fast, plain = make({"fast_math": True}), make({"fast_math": False})
    assert fast is not plain and fast.module.options["fast_math"] and not plain.module.options["fast_math"]
    assert make({"deterministic_max_records": 2}).module.options["deterministic_max_records"] == 2
    with pytest.raises(TypeError, match="must be a dict"):
        make("fast_math")
    with pytest.raises(ValueError, match="fast_mth"):
        make({"fast_mth": True})
    for bad, exc in ((True, TypeError), ("2", TypeError), (-1, ValueError)):
        with pytest.raises(exc):
            make({"deterministic_max_records": bad})
    with pytest.raises(ValueError, match='module="unique"'):
        @wp.kernel(module_options={})
        def shared(x: wp.array(dtype=float)):
            pass


def test_unique_kernels_differ_by_the_types_their_annotations_name():
    # a dtype named only in an annotation (wp.array(dtype=dtype)) is content too: one kernel per dtype, as in Warp
    def make(dtype):
        @wp.kernel(module="unique", enable_backward=False)
        def twice(x: wp.array(dtype=dtype), out: wp.array(dtype=dtype)):
            i = wp.tid()
            out[i] = x[i] + x[i]

        return twice

    i32, f64 = make(wp.int32), make(wp.float64)
    assert i32 is not f64 and make(wp.int32) is i32
    for k, dtype, np_dtype in ((i32, wp.int32, np.int32), (f64, wp.float64, np.float64)):
        x = wp.array(np.arange(3, dtype=np_dtype), dtype=dtype)
        out = wp.zeros(3, dtype=dtype)
        wp.launch(k, dim=3, inputs=[x, out])
        np.testing.assert_array_equal(out.numpy(), 2 * np.arange(3, dtype=np_dtype))
