"""``wp.func_native`` (C++ snippets) and ``wp.ref[T]`` parameters: values against float64 NumPy, gradients against
central differences, and the errors for arguments without storage."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp


@wp.func_native("return a * x * x + wp::float32(1);", adj_snippet="adj_a += x * x * adj_ret;\nadj_x += 2.0f * a * x * adj_ret;")
def quad(a: float, x: float) -> float: ...


@wp.func_native("out[tid] = x[tid] * 2;")
def twice(x: wp.array(dtype=float), out: wp.array(dtype=float), tid: int): ...


@wp.func_native("return wp::vec_t<3, wp::float32>(x, 2.0f * x, 3.0f * x);",
                adj_snippet="adj_x += adj_ret[0] + 2.0f * adj_ret[1] + 3.0f * adj_ret[2];")
def ramp(x: wp.float32) -> wp.vec3: ...


@wp.func_native("y = y * s + s;", adj_snippet="adj_s += adj_y * (y + 1.0f);\nadj_y = adj_y * s;")
def scale_in_place(y: wp.ref[wp.float32], s: wp.float32): ...


@wp.kernel
def k_native(a: wp.array(dtype=float), x: wp.array(dtype=float), out: wp.array(dtype=float),
             v: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    y = quad(a[i], x[i])
    scale_in_place(y, x[i])  # y <- y * x + x
    out[i] = y
    v[i] = ramp(x[i]) * y


def _native_ref(a, x):
    y = (a * x * x + 1.0) * x + x
    return y, np.stack([x, 2 * x, 3 * x], axis=1) * y[:, None]


def test_func_native_values_and_gradients():
    rng = np.random.default_rng(3)
    a_np, x_np = rng.uniform(0.5, 1.5, 5), rng.uniform(-1.0, 1.0, 5)
    a = wp.array(a_np, dtype=float, requires_grad=True)
    x = wp.array(x_np, dtype=float, requires_grad=True)
    out = wp.zeros(5, dtype=float, requires_grad=True)
    v = wp.zeros(5, dtype=wp.vec3, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(k_native, dim=5, inputs=[a, x], outputs=[out, v])
    want_out, want_v = _native_ref(a_np, x_np)
    np.testing.assert_allclose(out.numpy(), want_out, rtol=1e-5)
    np.testing.assert_allclose(v.numpy(), want_v, rtol=1e-5)
    # loss = sum(out) + sum(v): gradients against central differences of the float64 reference
    tape.backward(grads={out: wp.ones_like(out), v: wp.array(np.ones((5, 3), np.float32), dtype=wp.vec3)})

    def loss(a_, x_):
        o, w = _native_ref(a_, x_)
        return o + w.sum(axis=1)

    h = 1e-6
    np.testing.assert_allclose(a.grad.numpy(), (loss(a_np + h, x_np) - loss(a_np - h, x_np)) / (2 * h), rtol=1e-4)
    np.testing.assert_allclose(x.grad.numpy(), (loss(a_np, x_np + h) - loss(a_np, x_np - h)) / (2 * h), rtol=1e-4)


@wp.kernel(enable_backward=False)
def k_arrays(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    twice(x, out, i)


def test_func_native_array_parameters():
    x = wp.array([1.0, 2.5, -3.0], dtype=float)
    out = wp.zeros(3, dtype=float)
    wp.launch(k_arrays, dim=3, inputs=[x, out])
    np.testing.assert_array_equal(out.numpy(), [2.0, 5.0, -6.0])


@wp.struct
class Box:
    value: float
    v: wp.vec3


@wp.func
def bump(x: wp.ref[wp.float32], by: float):
    x += by


@wp.func
def swap(x: wp.ref[wp.float32], y: wp.ref[wp.float32]):
    x, y = y, x


@wp.func
def set_box(b: wp.ref[Box]):
    b.value = 7.0
    b.v[1] = 8.0


@wp.kernel(enable_backward=False)
def k_refs(arr: wp.array(dtype=float), boxes: wp.array(dtype=Box), out: wp.array(dtype=float)):
    i = wp.tid()
    bump(arr[i], 10.0)  # an array element
    s = wp.float32(1.0)
    for _ in range(3):
        bump(s, 2.0)  # a local, rebound in a loop
    a = wp.float32(3.0)
    b = wp.float32(4.0)
    swap(a, b)
    v = wp.vec3(1.0, 2.0, 3.0)
    bump(v[2], 0.5)  # a vector component
    bump(boxes[i].v[0], 1.0)  # a component of a struct field in an array element
    box = Box()
    set_box(box)
    out[6 * i + 0] = s
    out[6 * i + 1] = a
    out[6 * i + 2] = b
    out[6 * i + 3] = v[2]
    out[6 * i + 4] = box.value + box.v[1]
    out[6 * i + 5] = boxes[i].v[0]


def test_ref_parameters_write_back():
    arr = wp.array([1.0, 2.0], dtype=float)
    boxes = wp.zeros(2, dtype=Box)
    out = wp.zeros(12, dtype=float)
    wp.launch(k_refs, dim=2, inputs=[arr, boxes, out])
    np.testing.assert_array_equal(arr.numpy(), [11.0, 12.0])
    np.testing.assert_array_equal(out.numpy().reshape(2, 6), [[7.0, 4.0, 3.0, 3.5, 15.0, 1.0]] * 2)
    assert repr(wp.ref[wp.int32]) == "wp.ref[int32]" and wp.ref[wp.int32] == wp.ref[wp.int32]


@wp.func_native("*(float*)ptr = *(float*)ptr * 2.0f + 1.0f;")
def through_pointer(ptr: wp.uint64): ...


@wp.kernel(enable_backward=False)
def k_address_of(arr: wp.array(dtype=float), boxes: wp.array(dtype=Box), out: wp.array(dtype=float)):
    i = wp.tid()
    through_pointer(wp.address_of(arr[i]))  # an array element
    through_pointer(wp.address_of(boxes[i].v[2]))  # a component of a field of a struct array element
    v = wp.vec3(1.0, 2.0, 3.0)
    through_pointer(wp.address_of(v.y))  # a component of a local
    out[i] = v.y


def test_address_of_native_arguments():
    arr = wp.array([1.0, 2.0], dtype=float)
    boxes = wp.zeros(2, dtype=Box)
    out = wp.zeros(2, dtype=float)
    wp.launch(k_address_of, dim=2, inputs=[arr, boxes, out])
    np.testing.assert_array_equal(arr.numpy(), [3.0, 5.0])
    np.testing.assert_array_equal(boxes.numpy()["v"][:, 2], [1.0, 1.0])
    np.testing.assert_array_equal(out.numpy(), [5.0, 5.0])

    @wp.kernel(enable_backward=False)
    def k_temporary(out: wp.array(dtype=wp.uint64)):
        through_pointer(wp.address_of(wp.vec3(1.0, 2.0, 3.0).x))

    with pytest.raises(wp.CompileError, match="not a temporary value"):
        wp.launch(k_temporary, dim=1, inputs=[wp.zeros(1, dtype=wp.uint64)])


def test_ref_argument_errors():
    @wp.kernel(enable_backward=False)
    def k_literal(out: wp.array(dtype=float)):
        bump(wp.float32(1.0) + 1.0, 1.0)

    with pytest.raises(wp.CompileError, match="passed by reference"):
        wp.launch(k_literal, dim=1, inputs=[wp.zeros(1)])

    @wp.kernel(enable_backward=False)
    def k_constant(out: wp.array(dtype=float)):
        x = 1.0
        bump(x, 1.0)
        out[0] = x

    with pytest.raises(wp.CompileError, match="compile-time constant"):
        wp.launch(k_constant, dim=1, inputs=[wp.zeros(1)])

    @wp.kernel
    def k_backward(out: wp.array(dtype=float)):
        bump(out[0], 1.0)

    with pytest.raises(wp.CompileError, match="enable_backward"):
        wp.launch(k_backward, dim=1, inputs=[wp.zeros(1)])
