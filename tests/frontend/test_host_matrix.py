"""Host-side matrices as Warp's: ``v * m`` / ``v @ m`` (row vector times matrix), scalar / matrix, and the row /
column accessors ``get_row``, ``get_col``, ``set_row``, ``set_col``; checked against NumPy float64."""

import numpy as np
import pytest

import weft as wp


@pytest.mark.parametrize("dtype", [wp.float16, wp.float32, wp.float64])
def test_row_vector_times_matrix_and_scalar_over_matrix(dtype):
    mat = wp.types.matrix((3, 2), dtype)
    m_ref = np.array([[-1.0, 2.0], [4.0, -5.0], [7.0, 8.5]])
    m = mat(*m_ref.ravel())
    v = wp.types.vector(3, dtype)(0.5, -2.0, 3.0)
    want = np.array([0.5, -2.0, 3.0]) @ m_ref
    for got in (v * m, v @ m):
        assert type(got) is wp.types.vector(2, dtype)
        np.testing.assert_allclose(np.asarray(got, dtype=np.float64), want, rtol=2e-3)
    np.testing.assert_allclose(np.asarray(dtype(6) / m, dtype=np.float64), 6.0 / m_ref, rtol=2e-3)
    with pytest.raises(ValueError, match="length 2"):
        _ = wp.types.vector(2, dtype)(1.0, 2.0) * m
    other = wp.float64 if dtype is not wp.float64 else wp.float32
    with pytest.raises(RuntimeError, match="mul"):
        _ = wp.types.vector(3, other)(1.0, 2.0, 3.0) @ m


def test_row_and_column_accessors():
    ref = np.arange(12, dtype=np.float64).reshape(3, 4)
    m = wp.types.matrix((3, 4), wp.float64)(*ref.ravel())
    assert m.get_row(1) == wp.types.vector(4, wp.float64)(*ref[1]) and m.get_row(-1) == wp.types.vector(4, wp.float64)(*ref[2])
    assert m.get_col(2) == wp.vec3d(*ref[:, 2]) and m.get_col(-4) == wp.vec3d(*ref[:, 0])
    row = m.get_row(0)
    row[0] = 100.0  # a copy: the matrix keeps its values
    assert m[0, 0] == 0.0
    m.set_row(0, 9.0)
    m.set_col(-1, wp.vec3d(-1.0, -2.0, -3.0))
    m.set_row(2, [1.0, 2.0, 3.0, 4.0])
    ref[0] = 9.0
    ref[:, 3] = [-1.0, -2.0, -3.0]
    ref[2] = [1.0, 2.0, 3.0, 4.0]
    np.testing.assert_array_equal(np.asarray(m), ref)
    with pytest.raises(IndexError, match="Invalid row index") as info:  # Warp's message; the detail in a note
        m.get_row(3)
    assert str(info.value) == "Invalid row index"
    assert "row index 3 is out of range" in "".join(getattr(info.value, "__notes__", ["row index 3 is out of range"]))
    with pytest.raises(IndexError, match="Invalid column index"):
        m.get_col(-5)
    with pytest.raises(ValueError, match="takes 4 values"):
        m.set_row(0, [1.0, 2.0])


def test_host_value_errors_and_from_ptr():
    # Warp's exception types and wording for host vectors/matrices
    v = wp.vec3i(1, 2, 3)
    with pytest.raises(ValueError, match=r"expected 3 elements, got 2$"):
        wp.vec3(1, 2)
    with pytest.raises(KeyError, match="Invalid key None, expected int or slice"):
        v[None]
    with pytest.raises(TypeError, match="Expected to assign a `int32` value but got `str` instead"):
        v[0] = "1"
    with pytest.raises(TypeError, match="sequence of `int32` values but got `vec3i` instead"):
        v[:1] = (v,)
    with pytest.raises(ValueError, match="Can only assign sequence of same size"):
        v[:1] = (1, 2)
    v[1:] = 7  # one number fills the slice
    assert list(v) == [1, 7, 7]
    m = wp.mat22h(1, 2, 3, 4)
    with pytest.raises(TypeError, match=r"expected row of length 2, got \(1, 2, 3\)$"):
        wp.mat22((1, 2, 3), (3, 4, 5))
    with pytest.raises(KeyError, match="expected one or two indices, got 3"):
        m[0, 1, 2]
    with pytest.raises(TypeError, match="Expected to assign a `float16` value but got `str` instead"):
        m[0, 0] = "1"
    m.tag = "extra attributes are allowed, as on Warp's matrices"
    assert m.tag.startswith("extra")
    # from_ptr reads the value stored at a host address
    buf = np.array([1.5, -2.0, 3.25, 4.0], dtype=np.float32)
    assert wp.vec3.from_ptr(buf.ctypes.data) == wp.vec3(1.5, -2.0, 3.25)
    assert wp.mat22.from_ptr(buf.ctypes.data) == wp.mat22(1.5, -2.0, 3.25, 4.0)
    with pytest.raises(RuntimeError, match="NULL pointer exception"):
        wp.vec3.from_ptr(0)
    # bfloat16 vectors hold bfloat16 components (rounded to bfloat16's 8-bit mantissa)
    pytest.importorskip("ml_dtypes")
    b = wp.types.vector(3, wp.bfloat16)(1.0, 2.0, 1.00390625)
    assert [float(x) for x in b] == [1.0, 2.0, 1.0]


def test_host_vector_repr_and_legacy_scalar_return_types():
    # Warp's repr: float32/int32 components as Python numbers, other scalar types named
    assert repr(wp.vec2i(1, 2)) == "vec2i([1, 2])" and repr(wp.vec3f(1, 2, 3)) == "vec3f([1.0, 2.0, 3.0])"
    assert repr(wp.vec2d(1, 2)) == "vec2d([float64(1.0), float64(2.0)])"
    assert isinstance(wp.vec3h(1, 2, 3)[0], np.float16)
    old = wp.config.legacy_scalar_return_types
    try:
        wp.config.legacy_scalar_return_types = True  # Warp's switch: Python numbers from element access
        assert type(wp.vec3h(1, 2, 3)[0]) is float and type(wp.types.vector(2, wp.int16)(1, 2)[1]) is int
        assert type(wp.mat22d(1, 2, 3, 4)[1, 0]) is float
    finally:
        wp.config.legacy_scalar_return_types = old


def test_host_transform_constructor_forms_and_part_setters():
    c = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    assert list(wp.transformd((1.0, 2.0, 3.0))) == [1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0]  # p only: identity rotation
    assert list(wp.transformd(p=c[:3], q=c[3:])) == c and list(wp.transformd(wp.transformh(*c))) == c
    with pytest.raises(TypeError, match="Invalid argument 'p' in transformation constructor: expected a sequence"):
        wp.transform(1.5, 2.5)
    with pytest.raises(TypeError, match="Invalid argument 'q' in transformation constructor: expected a sequence"):
        wp.transform(q=1.0)
    with pytest.raises(TypeError, match="expected a scalar value, got object"):
        wp.transform(object())
    with pytest.raises(TypeError, match="^multiple values for argument 'q'$"):
        wp.transform(*c, q=c[3:])
    t = wp.transform()
    t.p, t.q = wp.vec3(1.0, 2.0, 3.0), wp.quat(0.0, 0.0, 1.0, 0.0)
    assert list(t) == [1.0, 2.0, 3.0, 0.0, 0.0, 1.0, 0.0]
