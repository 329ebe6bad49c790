"""wp.array: constructors, methods, views, attributes, annotations, and host-side value types and builtins."""

import numpy as np
import pytest

import weft as wp


@wp.kernel
def k_sum_into(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(out, 0, a[i])


@wp.kernel
def k_double_vec(a: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    a[i] = a[i] * 2.0


@wp.kernel
def k_write_index2d(a: wp.array2d(dtype=float)):
    i, j = wp.tid()
    a[i, j] = float(i * 10 + j)


# ---------------------------------------------------------------------------------------------------------------
# constructors


def test_array_from_numpy_copies_or_views():
    src = np.arange(6, dtype=np.float32)
    a = wp.array(src)
    assert a.dtype == wp.float32 and a.shape == (6,) and a.ndim == 1 and a.size == 6
    np.testing.assert_array_equal(a.numpy(), src)
    b = wp.array(np.arange(4, dtype=np.float64))
    assert b.dtype == wp.float64
    c = wp.array(np.arange(4, dtype=np.int64), dtype=wp.int32)
    assert c.dtype == wp.int32
    np.testing.assert_array_equal(c.numpy(), [0, 1, 2, 3])


def test_array_from_lists():
    a = wp.array([1.0, 2.0, 3.0], dtype=float)
    np.testing.assert_array_equal(a.numpy(), [1, 2, 3])
    assert a.dtype == wp.float32
    b = wp.array([[1, 2], [3, 4]], dtype=int)
    assert b.shape == (2, 2) and b.dtype == wp.int32
    v = wp.array([wp.vec3(1.0, 2.0, 3.0), wp.vec3(4.0, 5.0, 6.0)], dtype=wp.vec3)
    assert v.shape == (2,) and v.dtype == wp.vec3
    np.testing.assert_array_equal(v.numpy(), [[1, 2, 3], [4, 5, 6]])
    w = wp.array([[1.0, 2.0, 3.0]] * 4, dtype=wp.vec3)
    assert w.shape == (4,)
    m = wp.array(np.stack([np.eye(3)] * 2), dtype=wp.mat33)
    assert m.shape == (2,) and m.dtype == wp.mat33
    np.testing.assert_array_equal(m.numpy()[1], np.eye(3))
    # as in Warp: an innermost dimension holding several whole elements is split ((3, 8) floats -> (3, 4) vec2)
    x = np.arange(24, dtype=np.float32).reshape(3, 8)
    c = wp.array(x, dtype=wp.vec2f)
    assert c.shape == (3, 4)
    np.testing.assert_array_equal(c.numpy(), x.reshape(3, 4, 2))
    with pytest.raises(ValueError, match="cannot be viewed"):
        wp.array(np.zeros((3, 7), np.float32), dtype=wp.vec2f)
    assert wp.array(np.zeros((3, 8), np.float32), dtype=wp.vec2f, shape=(12,)).shape == (12,)


def test_zeros_ones_full_empty():
    z = wp.zeros((2, 3), dtype=wp.float64)
    assert z.shape == (2, 3) and z.dtype == wp.float64
    np.testing.assert_array_equal(z.numpy(), 0)
    o = wp.ones(4, dtype=int)
    np.testing.assert_array_equal(o.numpy(), 1)
    assert o.dtype == wp.int32
    f = wp.full((2, 2), 7.5, dtype=float)
    np.testing.assert_array_equal(f.numpy(), 7.5)
    fv = wp.full(3, wp.vec3(1.0, 2.0, 3.0), dtype=wp.vec3)
    np.testing.assert_array_equal(fv.numpy(), [[1, 2, 3]] * 3)
    e = wp.empty((5,), dtype=wp.uint8)
    assert e.shape == (5,) and e.dtype == wp.uint8
    ov = wp.ones(2, dtype=wp.vec2)
    np.testing.assert_array_equal(ov.numpy(), 1)
    zl = wp.zeros(length=3, dtype=float)
    assert zl.shape == (3,)


def test_like_constructors_clone_copy():
    a = wp.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    for b in (wp.zeros_like(a), wp.ones_like(a), wp.full_like(a, 3.0), wp.empty_like(a)):
        assert b.shape == a.shape and b.dtype == a.dtype
        assert b.ptr != a.ptr
    np.testing.assert_array_equal(wp.ones_like(a).numpy(), 1)
    np.testing.assert_array_equal(wp.full_like(a, 3.0).numpy(), 3)
    c = wp.clone(a)
    np.testing.assert_array_equal(c.numpy(), a.numpy())
    c.fill_(0.0)
    assert a.numpy().sum() == 15  # the clone is independent
    d = wp.zeros_like(a)
    wp.copy(d, a)
    np.testing.assert_array_equal(d.numpy(), a.numpy())
    # partial copy with offsets
    src = wp.array(np.arange(10, dtype=np.float32))
    dst = wp.zeros(10, dtype=float)
    wp.copy(dst, src, dest_offset=2, src_offset=5, count=3)
    np.testing.assert_array_equal(dst.numpy(), [0, 0, 5, 6, 7, 0, 0, 0, 0, 0])


def test_from_numpy():
    src = np.arange(12, dtype=np.float32).reshape(4, 3)
    v = wp.from_numpy(src, dtype=wp.vec3)
    assert v.shape == (4,) and v.dtype == wp.vec3
    np.testing.assert_array_equal(v.numpy(), src)
    s = wp.from_numpy(src)
    assert s.shape == (4, 3) and s.dtype == wp.float32


# ---------------------------------------------------------------------------------------------------------------
# methods


def test_numpy_is_zero_copy_both_ways():
    a = wp.zeros(4, dtype=float)
    view = a.numpy()
    view[:] = [1.0, 2.0, 3.0, 4.0]  # write through NumPy, read in a kernel
    out = wp.zeros(1, dtype=float)
    wp.launch(k_sum_into, dim=4, inputs=[a, out])
    assert out.numpy()[0] == 10.0
    v = wp.zeros(2, dtype=wp.vec3)
    vn = v.numpy()
    vn[:] = [[1, 2, 3], [4, 5, 6]]
    wp.launch(k_double_vec, dim=2, inputs=[v])
    np.testing.assert_array_equal(vn, [[2, 4, 6], [8, 10, 12]])  # the kernel's write is visible in the old view
    assert np.shares_memory(v.numpy(), vn)


def test_fill_zero_assign():
    a = wp.zeros((2, 3), dtype=float)
    a.fill_(2.5)
    np.testing.assert_array_equal(a.numpy(), 2.5)
    a.zero_()
    np.testing.assert_array_equal(a.numpy(), 0)
    a.assign(np.ones((2, 3), dtype=np.float32) * 4)
    np.testing.assert_array_equal(a.numpy(), 4)
    b = wp.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    a.assign(b)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    v = wp.zeros(3, dtype=wp.vec3)
    v.fill_(wp.vec3(1.0, 2.0, 3.0))
    np.testing.assert_array_equal(v.numpy(), [[1, 2, 3]] * 3)
    # fill_ on a strided view only touches the view
    c = wp.zeros(6, dtype=float)
    c[::2].fill_(1.0)
    np.testing.assert_array_equal(c.numpy(), [1, 0, 1, 0, 1, 0])


def test_reshape_flatten_view_transpose_contiguous():
    a = wp.array(np.arange(12, dtype=np.float32))
    r = a.reshape((3, 4))
    assert r.shape == (3, 4) and r.ptr == a.ptr
    np.testing.assert_array_equal(r.numpy(), np.arange(12).reshape(3, 4))
    assert a.reshape((2, -1)).shape == (2, 6)
    f = r.flatten()
    assert f.shape == (12,)
    t = r.transpose()
    assert t.shape == (4, 3) and t.strides == (4, 16)
    np.testing.assert_array_equal(t.numpy(), np.arange(12).reshape(3, 4).T)
    assert not t.is_contiguous
    tc = t.contiguous()
    assert tc.is_contiguous and tc.strides == (12, 4)
    np.testing.assert_array_equal(tc.numpy(), np.arange(12).reshape(3, 4).T)
    i = a.view(wp.int32)
    assert i.dtype == wp.int32
    np.testing.assert_array_equal(i.numpy(), np.arange(12, dtype=np.float32).view(np.int32))
    with pytest.raises((ValueError, wp.Error)):
        a.view(wp.vec3)  # 12 trailing floats are not one vec3 (Warp's rule)
    # a vector/matrix dtype seen as its scalar gains trailing dimensions, and back (Warp's view rules)
    m = r.view(wp.vec4)
    assert m.shape == (3,) and m.dtype == wp.vec4 and m.ptr == a.ptr
    np.testing.assert_array_equal(m.numpy(), np.arange(12).reshape(3, 4))
    s = m.view(float)
    assert s.shape == (3, 4) and s.strides == (16, 4)
    mm = a.reshape((3, 2, 2)).view(wp.mat22)
    np.testing.assert_array_equal(mm.view(float).numpy(), np.arange(12).reshape(3, 2, 2))
    one = wp.array([[1.0, 2.0], [3.0, 4.0]], dtype=float).view(wp.mat22)  # the whole array one element: (1,)
    assert one.shape == (1,)
    np.testing.assert_array_equal(one.numpy()[0], [[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(TypeError, match="source scalar dtype float32 has size 4 bytes, but target dtype has size 8"):
        m.view(wp.float64)
    with pytest.raises(TypeError, match="target scalar dtype float64 has size 8 bytes"):
        r.view(wp.vec4d)
    with pytest.raises(RuntimeError, match=r"cannot reshape array of shape \(12,\) \(size 12\) into shape \(5, 2\)"):
        a.reshape((5, 2))
    # a list or NumPy array fill value without a dtype is one vector (matrix) value
    v = wp.full((2, 3), np.array([1.0, 2.0], dtype=np.float32))
    assert v.dtype == wp.vec2 and v.numpy().shape == (2, 3, 2)
    w = wp.full(4, [[1.0, 2.0], [3.0, 4.0]])
    assert w.dtype == wp.mat22d
    np.testing.assert_array_equal(w.numpy()[3], [[1.0, 2.0], [3.0, 4.0]])
    a3 = wp.zeros((2, 3, 4), dtype=float)
    assert a3.transpose((2, 0, 1)).shape == (4, 2, 3)


def test_list():
    a = wp.array(np.arange(3, dtype=np.float32))
    assert a.list() == [0.0, 1.0, 2.0]
    v = wp.array([[1.0, 2.0, 3.0]], dtype=wp.vec3)
    items = v.list()
    assert len(items) == 1 and items[0] == wp.vec3(1.0, 2.0, 3.0)


def test_slicing_and_indexing_views():
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    a = wp.array(base)
    s = a[1:3, ::2]
    assert s.shape == (2, 3) and s.strides == (24, 8)
    np.testing.assert_array_equal(s.numpy(), base[1:3, ::2])
    row = a[2]
    assert row.shape == (6,)
    np.testing.assert_array_equal(row.numpy(), base[2])
    assert a[1, 2] == 8.0
    neg = a[-1]
    np.testing.assert_array_equal(neg.numpy(), base[-1])
    # writes through a kernel into a view reach the base
    sub = a[1:3, 2:5]
    wp.launch(k_write_index2d, dim=sub.shape, inputs=[sub])
    expected = base.copy()
    expected[1:3, 2:5] = [[0, 1, 2], [10, 11, 12]]
    np.testing.assert_array_equal(a.numpy(), expected)
    # item assignment from the host
    a[0, 0] = 99.0
    assert a.numpy()[0, 0] == 99.0
    with pytest.raises(IndexError):
        a[4]


def test_attributes():
    a = wp.zeros((3, 5), dtype=wp.vec2)
    assert a.shape == (3, 5)
    assert a.strides == (40, 8)
    assert a.dtype == wp.vec2
    assert a.size == 15
    assert a.ndim == 2
    assert str(a.device) == "cpu"
    assert a.device.is_cpu
    assert len(a) == 3


def test_requires_grad_allocates_grad():
    a = wp.zeros(4, dtype=float, requires_grad=True)
    assert a.requires_grad
    assert a.grad is not None and a.grad.shape == (4,) and a.grad.dtype == wp.float32
    np.testing.assert_array_equal(a.grad.numpy(), 0)
    b = wp.array(np.ones(3, dtype=np.float32), requires_grad=True)
    assert b.grad.shape == (3,)
    c = wp.zeros(3, dtype=float)
    assert not c.requires_grad
    c.requires_grad = True
    assert c.grad is not None and c.grad.shape == (3,)


# ---------------------------------------------------------------------------------------------------------------
# annotations


@wp.kernel
def k_annotations(a: wp.array[float], b: wp.array2d[wp.vec2f], c: wp.array(dtype=wp.float64, ndim=3),
                  d: wp.array1d(dtype=int)):
    i = wp.tid()
    a[i] = b[i, 0][1] + float(c[i, 0, 0]) + float(d[i])


def test_annotation_forms():
    a = wp.zeros(2, dtype=float)
    b = wp.array(np.array([[[1.0, 2.0]], [[3.0, 4.0]]], dtype=np.float32), dtype=wp.vec2f)
    assert b.shape == (2, 1)
    c = wp.full((2, 1, 1), 10.0, dtype=wp.float64)
    d = wp.array([100, 200], dtype=int)
    wp.launch(k_annotations, dim=2, inputs=[a, b, c, d])
    np.testing.assert_array_equal(a.numpy(), [112.0, 214.0])


# ---------------------------------------------------------------------------------------------------------------
# host-side value types and builtins


def test_host_vector_arithmetic():
    a = wp.vec3(1.0, 2.0, 3.0)
    b = wp.vec3(4.0, 5.0, 6.0)
    assert a + b == wp.vec3(5.0, 7.0, 9.0)
    assert b - a == wp.vec3(3.0, 3.0, 3.0)
    assert a * 2.0 == wp.vec3(2.0, 4.0, 6.0)
    assert 2.0 * a == wp.vec3(2.0, 4.0, 6.0)
    assert a / 2.0 == wp.vec3(0.5, 1.0, 1.5)
    assert -a == wp.vec3(-1.0, -2.0, -3.0)
    assert a[1] == 2.0 and a.z == 3.0
    a.x = 10.0
    assert a[0] == 10.0
    assert len(a) == 3
    assert wp.vec3() == wp.vec3(0.0, 0.0, 0.0)
    assert wp.vec3(2.0) == wp.vec3(2.0, 2.0, 2.0)
    assert wp.vec2i(1, 2) + wp.vec2i(3, 4) == wp.vec2i(4, 6)
    np.testing.assert_array_equal(np.array(b), [4, 5, 6])
    u = wp.types.vector(4, wp.uint8)(1, 2, 3, 4)
    u[0] = -1  # integer components wrap around as C integers (Warp's rule)
    u[1:3] = (-2, 300)
    u.w = -4
    assert list(u) == [255, 254, 44, 252]
    b.tag = "any attribute"  # vectors take other attributes, as Warp's do
    assert b.tag == "any attribute"
    # NumPy's dtype protocol: weft scalar types name NumPy dtypes (np.zeros(3, dtype=wp.int16), np.dtype(wp.float32))
    assert np.dtype(wp.float32) == np.float32 and np.zeros(3, dtype=wp.int16).dtype == np.int16
    assert np.arange(3).astype(wp.uint8).dtype == np.uint8 and np.result_type(wp.float16, np.float32) == np.float32


def test_host_matrix_and_quat():
    m = wp.mat22(1.0, 2.0, 3.0, 4.0)
    v = wp.vec2(1.0, 1.0)
    assert m * v == wp.vec2(3.0, 7.0)
    assert m[1, 0] == 3.0
    assert m[1] == wp.vec2(3.0, 4.0)
    np.testing.assert_allclose(np.array(m * m), np.array([[1, 2], [3, 4]]) @ np.array([[1, 2], [3, 4]]))
    i3 = wp.identity(n=3, dtype=float)
    assert i3 * wp.vec3(1.0, 2.0, 3.0) == wp.vec3(1.0, 2.0, 3.0)
    q = wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), np.pi / 2)
    qq = q * q  # 180 degrees about z
    np.testing.assert_allclose(np.array(qq), [0, 0, 1, 0], atol=1e-6)
    r = wp.quat_rotate(q, wp.vec3(1.0, 0.0, 0.0))
    np.testing.assert_allclose(np.array(r), [0, 1, 0], atol=1e-6)
    t = wp.transform(wp.vec3(1.0, 2.0, 3.0), q)
    np.testing.assert_allclose(np.array(wp.transform_point(t, wp.vec3(1.0, 0.0, 0.0))), [1, 3, 3], atol=1e-6)
    assert wp.quat_identity() == wp.quat(0.0, 0.0, 0.0, 1.0)
    assert wp.identity(2, wp.float64) == wp.mat22d(1.0, 0.0, 0.0, 1.0)


def test_host_builtins():
    n = wp.normalize(wp.vec3(3.0, 0.0, 4.0))
    np.testing.assert_allclose(np.array(n), [0.6, 0, 0.8], rtol=1e-6)
    assert isinstance(n, wp.vec3)
    assert wp.length(wp.vec3(3.0, 0.0, 4.0)) == pytest.approx(5.0)
    assert wp.dot(wp.vec3(1.0, 2.0, 3.0), wp.vec3(4.0, 5.0, 6.0)) == pytest.approx(32.0)
    c = wp.cross(wp.vec3(1.0, 0.0, 0.0), wp.vec3(0.0, 1.0, 0.0))
    np.testing.assert_allclose(np.array(c), [0, 0, 1])
    assert wp.sin(0.5) == pytest.approx(np.sin(0.5))
    assert wp.clamp(5, 0, 3) == 3
    assert wp.min(2.0, 1.0) == 1.0
    m = wp.mat33(2.0, 0.0, 0.0, 0.0, 4.0, 0.0, 0.0, 0.0, 8.0)
    assert wp.determinant(m) == pytest.approx(64.0)
    np.testing.assert_allclose(np.array(wp.inverse(m)), np.diag([0.5, 0.25, 0.125]))
    q = wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0), 0.3)
    back = wp.quat_rotate_inv(q, wp.quat_rotate(q, wp.vec3(0.1, 0.2, 0.3)))
    np.testing.assert_allclose(np.array(back), [0.1, 0.2, 0.3], atol=1e-6)


def test_index_arrays_select_through_indexed_arrays():
    """``a[idx]`` / ``a[idx, :]`` with int32 index arrays give an indexed array (Warp's rule); annotations take
    ``wp.indexedarray[dtype, ndim]``."""
    from typing import Literal

    a = wp.array(np.arange(12, dtype=np.float32).reshape(3, 4))
    rows = a[wp.array([0, 2], dtype=wp.int32), :]
    assert isinstance(rows, wp.indexedarray)
    np.testing.assert_array_equal(rows.numpy(), np.arange(12).reshape(3, 4)[[0, 2]])
    assert wp.indexedarray[float, Literal[2]].ndim == 2
    rows.fill_(7.0)
    np.testing.assert_array_equal(a.numpy()[[0, 2]], 7.0)
    np.testing.assert_array_equal(a.numpy()[1], [4.0, 5.0, 6.0, 7.0])


def test_struct_numpy_dtype():
    @wp.struct
    class Pair:
        a: float
        b: wp.vec3

    assert wp.zeros(2, dtype=Pair).numpy().dtype == Pair.numpy_dtype()  # Warp's classmethod
    assert Pair.numpy_dtype().names == ("a", "b")
    spec = Pair.numpy_dtype()  # Warp's dict form, as np.dtype takes it
    assert spec["names"] == ["a", "b"] and spec["offsets"] == [0, 4] and spec["itemsize"] == 16
    p = Pair(a=1.5, b=wp.vec3(1.0, 2.0, 3.0))
    filled = wp.full(3, p)  # the dtype follows the struct value
    assert filled.dtype is Pair
    expected = np.empty(3, dtype=spec)
    expected.fill(p.numpy_value())
    np.testing.assert_array_equal(filled.numpy(), expected)
    assert expected[2]["a"] == 1.5 and list(expected[2]["b"]) == [1.0, 2.0, 3.0]
    filled.zero_()
    np.testing.assert_array_equal(filled.numpy(), np.zeros(3, dtype=spec))


def test_copy_offsets_on_strided_1d_arrays_and_warps_argument_checks():
    # offsets and count address the logical (flattened) elements, also of 1-D strided views, as in Warp
    for src_strided in (False, True):
        for dst_strided in (False, True):
            src = wp.array([1, 5, 2, 6, 3, 7, 4, 8], dtype=wp.int32)[::2] if src_strided else \
                wp.array([1, 2, 3, 4], dtype=wp.int32)
            dst = wp.array([9, 0, 9, 0, 9, 0, 9, 0], dtype=wp.int32)[::2] if dst_strided else \
                wp.array([9, 9, 9, 9], dtype=wp.int32)
            wp.copy(dst, src, src_offset=1, dest_offset=1, count=2)
            assert dst.numpy().tolist() == [9, 2, 3, 9]
    src, dest = wp.array([1, 2, 3, 4], dtype=wp.int32), wp.zeros(4, dtype=wp.int32)
    for kwargs, text in (({"src_offset": -1}, "Source offset must be non-negative"),
                         ({"dest_offset": -1}, "Destination offset must be non-negative"),
                         ({"count": -1}, "count must be non-negative"), ({"count": 2.0}, "must be integers"),
                         ({"count": 5}, "exceeds the source size")):
        with pytest.raises(RuntimeError, match=text):
            wp.copy(dest, src, **kwargs)
    with pytest.raises(RuntimeError, match="destination dtype=float64, source dtype=float32"):
        wp.copy(wp.zeros(4, dtype=wp.float64), wp.zeros(4, dtype=wp.float32))
    grid = wp.array(np.arange(100, dtype=np.float32)).reshape((10, 10))[1::2, 1::2]
    with pytest.raises(RuntimeError, match="only supported for 1-D"):
        wp.copy(wp.zeros_like(grid), grid, count=2)
    with pytest.raises(RuntimeError, match=r"destination shape=\(3, 2\), source shape=\(2, 3\)"):
        wp.copy(wp.zeros((6, 2), dtype=float)[::2, :], wp.zeros((6, 3), dtype=float)[::3, :])


def test_extents_beyond_int32_raise_before_allocating():
    # descriptors hold int32 extents: a longer dimension raises (Warp's ValueError) instead of wrapping around
    with pytest.raises(ValueError, match="maximum representable value of a signed 32-bit integer"):
        wp.zeros(2**31, dtype=wp.int8)
    view = np.broadcast_to(np.zeros(1, dtype=np.int8), (2**31,))  # no real buffer behind it
    with pytest.raises(ValueError, match="maximum representable value of a signed 32-bit integer"):
        wp.array(view, dtype=wp.int8)


def test_empty_array_numpy_interface_uses_dense_strides():
    a = wp.zeros((1, 0), dtype=wp.vec2f)
    assert a.__array_interface__["data"][0] != 0
    na = np.asarray(a)
    assert na.shape == (1, 0, 2) and na.dtype == np.float32 and na.strides == (0, 8, 4)  # as Warp
    assert np.asarray(wp.zeros((2, 3), dtype=wp.vec2f)).strides == (24, 8, 4)  # non-empty: unchanged
