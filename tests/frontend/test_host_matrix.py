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
