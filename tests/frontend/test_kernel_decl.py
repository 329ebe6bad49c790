"""Warp's kernel-declaration checks and spellings: ``@wp.kernel(name=, entry_point_abi=)``, the decorator form of
``wp.overload`` on a kernel stub, ``Enum.X.value`` and ``type(a).dtype`` in kernel code."""

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


def test_enum_value_and_type_of_array():
    o = wp.zeros(1, dtype=float)
    wp.launch(_enum_and_types, dim=1, inputs=[wp.array([wp.vec3(1.0, 2.0, 3.0)], dtype=wp.vec3), o])
    np.testing.assert_array_equal(o.numpy(), [6.0 + 3.0 + 1.0])


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
