"""Warp's kernel-declaration checks and spellings: ``@wp.kernel(name=, entry_point_abi=)``, the decorator form of
``wp.overload`` on a kernel stub, ``Enum.X.value``, ``type(a).dtype``, builtins called with keyword arguments and
``wp.cast`` in kernel code."""

import enum
from typing import Any

import numpy as np
import pytest

import weft as wp


class _Colour(enum.IntEnum):
    RED = 1
    BLUE = 3


@wp.kernel
def _enum_and_types(a: wp.array(dtype=Any), o: wp.array(dtype=float)):
    c = type(a).dtype(a[0]) * a.dtype.dtype(2.0)  # vec3f(a[0]) * float32(2.0)
    o[0] = c[2] + float(_Colour.BLUE.value) + float(_Colour.RED)
    o[1] = wp.pow(c[0], y=3.0) + wp.atan2(x=c[1], y=c[0])  # builtins' arguments by keyword (Warp's names)


def test_enum_value_and_type_of_array():
    o = wp.zeros(2, dtype=float)
    wp.launch(_enum_and_types, dim=1, inputs=[wp.array([wp.vec3(1.0, 2.0, 3.0)], dtype=wp.vec3), o])
    np.testing.assert_allclose(o.numpy(), [6.0 + 3.0 + 1.0, 2.0**3 + np.arctan2(2.0, 4.0)], rtol=1e-6)


def test_kernel_name_and_entry_point_checks():
    def body():
        return

    assert wp.kernel(name="my_named_kernel")(body).key == "my_named_kernel"
    with pytest.raises(ValueError, match="valid C\\+\\+ identifier"):
        wp.kernel(name="1bad")(body)
    with pytest.raises(ValueError, match="must be 'warp' or 'external_constant_params'"):
        wp.kernel(entry_point_abi="other", enable_backward=False)(body)
    with pytest.raises(ValueError, match="requires enable_backward=False"):
        wp.kernel(entry_point_abi="external_constant_params")(body)


def test_overload_stub_declares_a_specialisation():
    def stub_target(x: Any):
        return

    k = wp.kernel(stub_target)

    @wp.overload
    def stub_target(x: float): ...

    assert stub_target is k and len(k.overloads) == 1

    def returns(x: int) -> int: ...

    returns.__qualname__ = k.func.__qualname__
    with pytest.raises(TypeError, match="Return annotations are not allowed"):
        wp.overload(returns)
    wp.kernel(name="stub_target_b")(k.func)  # two kernels of one Python function: a stub cannot choose

    def stub_target(x: float): ...

    stub_target.__qualname__ = k.func.__qualname__
    with pytest.raises(RuntimeError, match="Ambiguous kernel lookup"):
        wp.overload(stub_target)


@wp.struct
class _HalfPair:
    f: wp.float16
    i: wp.int16


@wp.kernel
def _bit_casts(x: wp.array(dtype=wp.float32), bits: wp.array(dtype=wp.int32), v: wp.array(dtype=wp.vec2h),
               back: wp.array(dtype=wp.float32), vbits: wp.array(dtype=wp.uint32), sbits: wp.array(dtype=wp.int32)):
    i = wp.tid()
    bits[i] = wp.cast(x[i], wp.int32)
    back[i] = wp.cast(bits[i], dtype=wp.float32)
    vbits[i] = wp.cast(v[i], wp.uint32)
    s = _HalfPair()
    s.f = v[i][0]
    s.i = wp.int16(i)
    sbits[i] = wp.cast(s, wp.int32)


def test_cast_reinterprets_bits_as_numpy_view():
    x = np.array([1.25, -0.0, 3.0e38, 1.0e-40], dtype=np.float32)
    v = np.array([[1.0, -2.0], [0.5, 65504.0], [0.0, 1.0], [-1.0, 3.0]], dtype=np.float16)
    outs = [wp.zeros(4, dtype=t) for t in (wp.int32, wp.float32, wp.uint32, wp.int32)]
    wp.launch(_bit_casts, dim=4, inputs=[wp.array(x), outs[0], wp.array(v, dtype=wp.vec2h), *outs[1:]])
    np.testing.assert_array_equal(outs[0].numpy(), x.view(np.int32))
    np.testing.assert_array_equal(outs[1].numpy().view(np.int32), x.view(np.int32))
    np.testing.assert_array_equal(outs[2].numpy(), v.view(np.uint32).ravel())
    pairs = np.zeros(4, dtype=[("f", np.float16), ("i", np.int16)])
    pairs["f"], pairs["i"] = v[:, 0], np.arange(4)
    np.testing.assert_array_equal(outs[3].numpy(), pairs.view(np.int32))


def test_cast_needs_equal_sizes():
    @wp.kernel(module="unique")
    def bad(o: wp.array(dtype=wp.int64)):
        o[0] = wp.cast(wp.float32(1.0), wp.int64)

    with pytest.raises(wp.Error, match="same size"):
        wp.launch(bad, dim=1, inputs=[wp.zeros(1, dtype=wp.int64)])
    with pytest.raises(wp.Error, match="inside a kernel"):
        wp.cast(1.0, wp.int32)


@wp.func
def _ret_int16(x: wp.int32) -> wp.int16:
    return wp.int8(x)


@wp.func
def _ret_pair(x: int) -> int:
    return (x, x)


@wp.func
def _ret_triple(x: int) -> tuple[int, int, int]:
    return (x, x)


@wp.func
def _ret_mixed(x: int) -> tuple[int, int]:
    return (x, 1.5)


@wp.func
def _ret_fixed(x: int) -> wp.array(dtype=int, ndim=1):
    return wp.zeros(shape=(2,), dtype=int)


@wp.func
def _ret_ok(x: int) -> tuple[int, float]:
    return (x, 1)  # a Python literal fits the annotated scalar type


@pytest.mark.parametrize("fn, message", [
    (_ret_int16, "annotated as `int16` but the code returns a value of type `int8`"),
    (_ret_pair, "annotated as `int` but the code returns 2 values"),
    (_ret_triple, "annotated as a tuple of 3 elements but the code returns 2 values"),
    (_ret_mixed, r"annotated as `tuple\[int, int\]` but the code returns a tuple with types `\(int32, float32\)`"),
    (_ret_fixed, r"returns a fixed-size array whereas it has its return type annotated as `Array\[int32\]`"),
])
def test_return_annotation_checked(fn, message):
    @wp.kernel(module="unique")
    def k():
        fn(1)

    with pytest.raises(wp.Error, match=message):
        wp.launch(k, dim=1)


def test_kernel_construct_errors():
    n = 3

    def lists():
        x = [1.0, 2.0]  # noqa: F841

    def dicts():
        x = {"a": 1.0}  # noqa: F841

    def runtime_shape():
        i = wp.tid()
        wp.zeros(shape=(i * n,), dtype=int)

    for body, message in ((lists, "List constructs are not supported in kernels"),
                          (dicts, "Construct `ast.Dict` not supported in kernels"),
                          (runtime_shape, "the `shape` argument must be specified as a constant")):
        with pytest.raises(wp.Error, match=message):
            wp.launch(wp.kernel(body, module="unique"), dim=1)
    out = wp.zeros(2, dtype=float)

    @wp.kernel(module="unique")
    def fine(o: wp.array(dtype=float)):
        a, b = _ret_ok(2)
        o[0] = float(a) + b

    wp.launch(fine, dim=1, inputs=[out])
    assert out.numpy()[0] == 3.0


@wp.func
def _twice(x: float):
    return 2.0 * x


def test_function_local_binds_once():
    def alias(o: wp.array(dtype=float)):
        f = _twice
        o[0] = f(3.0)

    def rebind(o: wp.array(dtype=float)):
        f = _twice
        f = wp.sin
        o[0] = f(3.0)

    def to_value(o: wp.array(dtype=float)):
        f = _twice
        f = 1.0
        o[0] = f

    out = wp.zeros(1, dtype=float)
    wp.launch(wp.kernel(alias, module="unique"), dim=1, inputs=[out])
    assert out.numpy()[0] == 6.0
    for body, what in ((rebind, "another function"), (to_value, "a non-function value")):
        with pytest.raises(wp.Error, match=f"rebinding function-valued local 'f' to {what}"):
            wp.launch(wp.kernel(body, module="unique"), dim=1, inputs=[out])


@wp.kernel
def _static_index_loop(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    value = wp.float32(0.0)
    for i in range(40):  # longer than max_unroll: unrolled because wp.static() reads i
        if wp.static(i % 2 == 0):
            continue
        if wp.static(i > 9):
            break
        value += float(wp.static(i * i)) * x[0]
    out[0] = value


def test_loop_unrolled_for_static_index():
    out = wp.zeros(1, dtype=float)
    wp.launch(_static_index_loop, dim=1, inputs=[wp.array([2.0], dtype=float), out])
    assert out.numpy()[0] == 2.0 * sum(i * i for i in range(1, 10, 2))

    def runtime_continue(x: wp.array(dtype=float)):
        for i in range(4):
            if x[0] > wp.static(float(i)):
                continue
            x[0] = 1.0

    with pytest.raises(wp.Error, match="'continue' under a run-time condition"):
        wp.launch(wp.kernel(runtime_continue, module="unique"), dim=1, inputs=[wp.zeros(1, dtype=float)])


_SCALE = 2.0


def test_static_evaluated_once_when_declared():
    global _SCALE
    reads = []

    class OneShot:
        @property
        def value(self):
            reads.append(1)
            if len(reads) > 1:
                raise RuntimeError("read twice")
            return 3

    box = OneShot()
    alias = wp.static

    @wp.kernel(module="unique")
    def k(o: wp.array(dtype=float)):
        o[0] = float(wp.static(box.value)) * wp.static(_SCALE) + alias(1.0 + wp.static(0.5))

    assert len(reads) == 1 and set(k.adj.resolved_static_expressions.values()) >= {3, 2.0, 1.5}
    _SCALE = 100.0  # after the declaration: the kernel keeps the value it was declared with, as in Warp
    alias = None
    out = wp.zeros(1, dtype=float)
    wp.launch(k, dim=1, inputs=[out])
    assert out.numpy()[0] == 3 * 2.0 + 1.5
    _SCALE = 2.0


def test_static_unsupported_values():
    arr = wp.zeros(3)

    class Plain:
        pass

    for value, message in ((arr, "a Warp array cannot be created"), (None, "None is returned"),
                           (Plain(), "value of type .*Plain")):
        def make(v):
            def kern():
                wp.static(v)
            return kern

        with pytest.raises(wp.Error, match="Static expression returns an unsupported value: " + message):
            wp.launch(wp.kernel(make(value), module="unique"), dim=1)


@wp.func
def add(x: wp.float16, y: wp.float16) -> wp.float16:  # `+` on two float16 values in this file calls this (Warp)
    return x * y


@wp.func
def add(x: wp.int8, y: wp.int8) -> wp.int16:  # noqa: F811 - a second overload of the user's add
    return wp.int16(x) + wp.int16(y)


@wp.func
def _bump(x: wp.ref[wp.float16]):
    x += wp.float16(3.0)


@wp.func
def _bump_int8(x: wp.ref[wp.int8]):
    x += wp.int8(1)  # the user's add gives an int16: not storable in the reference


@wp.kernel(enable_backward=False)
def _user_operator(v: wp.array(dtype=wp.vec3h), h: wp.float16, o: wp.array(dtype=float)):
    v[0].x += h  # a component of an array element: the user's add
    v[0][1] = v[0][1] + h
    x = wp.float16(2.0)
    _bump(x)
    o[0] = float(x) + 1.5  # float32 operands: the builtin add


def test_user_operator_on_scalars():
    v = wp.array([wp.vec3h(3.0, 5.0, 7.0)], dtype=wp.vec3h)
    o = wp.zeros(1, dtype=float)
    wp.launch(_user_operator, dim=1, inputs=[v, wp.float16(2.0), o])
    np.testing.assert_array_equal(v.numpy(), [[6.0, 10.0, 7.0]])
    assert o.numpy()[0] == 6.0 + 1.5

    @wp.kernel(module="unique", enable_backward=False)
    def bad():
        x = wp.int8(0)
        _bump_int8(x)

    with pytest.raises(wp.Error, match="augmented assignment to ref parameter 'x' gives a int16"):
        wp.launch(bad, dim=1)


@wp.func
def _po(x: int):
    return x * x


@wp.func
def _po(x: float):
    return x * x


@wp.func
def _po(x: int):
    return x * x * x


def test_redefined_first_overload_keeps_the_others_and_mark_modified_recompiles():
    c = 17

    @wp.kernel
    def k(o: wp.array(dtype=float)):
        o[0] = float(_po(2)) + _po(2.0) + float(c)

    o = wp.zeros(1, dtype=float)
    wp.launch(k, dim=1, inputs=[o])
    assert o.numpy()[0] == 8.0 + 4.0 + 17.0
    assert k in k.module._get_live_kernels()
    c = 42
    wp.launch(k, dim=1, inputs=[o])
    assert o.numpy()[0] == 8.0 + 4.0 + 17.0  # compiled once, as in Warp, until the module is marked modified
    k.module.mark_modified()
    wp.launch(k, dim=1, inputs=[o])
    assert o.numpy()[0] == 8.0 + 4.0 + 42.0


_TRANSIENT = """
import weft as wp

@wp.struct
class Data:
    x: wp.array(dtype=int)

@wp.func
def bump(x: int):
    return x + 1

@wp.kernel
def compute(data: Data):
    data.x[0] = bump(data.x[0])
"""


def test_kernel_of_a_deleted_file_compiles_what_was_declared(tmp_path):
    import importlib.util

    path = tmp_path / "weft_transient_mod.py"
    path.write_text(_TRANSIENT)
    spec = importlib.util.spec_from_file_location("weft_transient_mod", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    path.unlink()  # gone before the first launch: the source read at the declaration is compiled
    assert list(mod.compute.module.structs) == ["Data"] and len(mod.compute.module.functions) == 1
    data = mod.Data()
    data.x = wp.array([41], dtype=int)
    wp.launch(mod.compute, dim=1, inputs=[data])
    assert data.x.numpy()[0] == 42


@wp.kernel
def _literal_local_in_dynamic_loop(n: int, x: wp.array(dtype=float), out: wp.array(dtype=float)):
    c = 0.0  # Warp asks for float(0.0) here; weft gives the literal's type (float32) and storage
    for i in range(n):
        c += x[i] * x[i]
    out[0] = c


def test_literal_local_updated_in_dynamic_loop():
    x = wp.array([1.0, 2.0, 3.0], dtype=float, requires_grad=True)
    out = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(_literal_local_in_dynamic_loop, dim=1, inputs=[3, x, out])
    tape.backward(grads={out: wp.ones(1, dtype=float)})
    assert out.numpy()[0] == 14.0
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0, 6.0])  # d/dx sum x^2, exact


@wp.kernel
def _user_operator_slot_backward(v: wp.array(dtype=wp.vec3h), h: wp.array(dtype=wp.float16)):
    v[0].x += h[0]  # the user's float16 add of this file: v.x * h


def test_user_operator_slot_update_is_differentiated():
    v = wp.array([wp.vec3h(3.0, 5.0, 7.0)], dtype=wp.vec3h, requires_grad=True)
    h = wp.array([2.0], dtype=wp.float16, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(_user_operator_slot_backward, dim=1, inputs=[v, h])
    tape.backward(grads={v: wp.array([wp.vec3h(1.0, 1.0, 1.0)], dtype=wp.vec3h)})
    np.testing.assert_array_equal(v.numpy(), [[6.0, 5.0, 7.0]])
    np.testing.assert_array_equal(h.grad.numpy(), [3.0])  # d(v.x * h)/dh = v.x before the update
    np.testing.assert_array_equal(v.grad.numpy(), [[2.0, 1.0, 1.0]])  # d/dv.x = h; the other components pass through


def test_missing_struct_field_is_an_attribute_error():
    def body(d: _HalfPair):
        _ = d.nothing

    with pytest.raises(AttributeError, match=r"`nothing` is not an attribute of 'd' \(.*_HalfPair\)"):
        wp.launch(wp.kernel(body, module="unique"), dim=1, inputs=[_HalfPair()])
