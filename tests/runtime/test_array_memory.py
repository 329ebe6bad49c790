"""Array memory as Warp exposes it: strided allocations and their capacity, ``ptr`` (``None`` without memory),
``cptr()``, arrays aliasing NumPy memory (``_ref``), ``deleter=`` of wrapped memory, and in kernel code ``a.ptr`` and
``wp.array(ptr=, shape=, dtype=)``."""

import ctypes
import gc

import numpy as np
import pytest

import weft as wp


@wp.kernel
def k_write_index2d(a: wp.array2d(dtype=wp.int32)):
    i, j = wp.tid()
    a[i, j] = i * 10 + j


@pytest.mark.parametrize("shape, strides", [((3, 3), (16, 12)), ((2, 3, 4), (40, 16, 4)), ((5, 3), (4, 20))])
def test_strided_allocation_capacity_and_layout(shape, strides):
    a = wp.empty(shape, dtype=wp.int32, strides=strides, requires_grad=True)
    span = 4 + sum((n - 1) * s for n, s in zip(shape, strides))
    assert a.capacity == span
    assert a.strides == strides and a.grad.strides == strides
    assert not np.any(a.numpy())
    assert a.numpy().strides == strides


def test_strided_allocation_in_kernels_matches_numpy():
    a = wp.zeros((3, 4), dtype=wp.int32, strides=(20, 4))  # rows padded by one element
    wp.launch(k_write_index2d, dim=(3, 4), inputs=[a])
    expected = np.add.outer(np.arange(3) * 10, np.arange(4))
    np.testing.assert_array_equal(a.numpy(), expected)
    t = wp.zeros((4, 3), dtype=wp.int32, strides=(4, 16))  # a transposed (column-major) layout
    wp.launch(k_write_index2d, dim=(4, 3), inputs=[t])
    np.testing.assert_array_equal(t.numpy(), np.add.outer(np.arange(4) * 10, np.arange(3)))
    assert t.capacity == 48 and not t.is_contiguous


def test_contiguous_strides_and_transposed_capacity():
    for shape in [(5, 3), (2, 3, 4)]:
        dense = wp.zeros(shape, dtype=wp.vec3)
        same = wp.zeros(shape, dtype=wp.vec3, strides=dense.strides)
        rev = wp.zeros(shape[::-1], dtype=wp.vec3, strides=dense.strides[::-1])
        assert same.capacity == rev.capacity == dense.capacity == dense.size * 12


def test_strided_allocation_errors_and_empty():
    a = wp.empty((0, 3), dtype=wp.int32, strides=(4, 16))
    assert a.capacity == 0 and a.ptr is None
    with pytest.raises(ValueError, match="Invalid number of strides, expected 2 strides, got 1"):
        wp.empty((0, 3), dtype=wp.int32, strides=(4,))
    with pytest.raises(NotImplementedError, match="Negative strides"):
        wp.empty((3, 3), dtype=wp.int32, strides=(16, -4))


def test_ptr_of_empty_arrays_is_none():
    a = wp.zeros((0, 2), dtype=wp.vec3, requires_grad=True)
    assert a.ptr is None and a.grad.ptr is None
    assert a.numpy().shape == (0, 2, 3)
    b = wp.clone(a)
    wp.copy(b, a)
    assert wp.zeros(3).ptr


def test_cptr_scalars_vectors_structs():
    assert wp.zeros(0).cptr() is None
    a = wp.array([1.5, 2.5, 3.5], dtype=wp.float64)
    p = a.cptr()
    assert p[2] == 3.5
    p[0] = -1.0  # writes through to the array
    assert a.numpy()[0] == -1.0
    v = wp.array([[1, 2, 3], [4, 5, 6]], dtype=wp.vec3)
    assert [v.cptr()[k] for k in range(6)] == [1, 2, 3, 4, 5, 6]  # the scalar components, as Warp
    h = wp.array([1.0], dtype=wp.float16)
    assert h.cptr()[0] == np.float16(1.0).view(np.uint16)  # half floats: their bit patterns
    with pytest.raises(RuntimeError, match="contiguous CPU arrays"):
        wp.zeros((4, 4))[:, 1].cptr()


@wp.struct
class Particle:
    id: int
    mass: float
    pos: wp.vec3
    data: wp.array(dtype=float)


def test_cptr_structs_follow_the_native_layout():
    items = []
    for i in range(3):
        s = Particle()
        s.id, s.mass, s.pos, s.data = i, 0.5 * i, wp.vec3(i, 2.0, 3.0), wp.zeros(2)
        items.append(s)
    a = wp.array(items, dtype=Particle)
    p = a.cptr()
    for i in range(3):
        assert p[i].id == i and p[i].mass == 0.5 * i
        assert list(p[i].pos) == [i, 2.0, 3.0]
    assert ctypes.sizeof(p._type_) == a.capacity // 3


def test_numpy_alias_keeps_a_reference():
    src = np.ones(8, dtype=np.int32)
    a = wp.array(src, dtype=int, copy=False)
    assert a._ref is src and a.ptr == src.ctypes.data
    src.fill(2)
    assert (a.numpy() == 2).all()
    assert wp.array(src, dtype=int)._ref is None  # a copy references nothing


def test_deleter_called_once_when_the_wrapper_dies():
    buf = np.arange(6, dtype=np.float32)
    freed = []
    w = wp.array(ptr=buf.ctypes.data, shape=(2, 3), dtype=float, deleter=lambda p, n: freed.append((p, n)))
    view = w[1]
    del w
    gc.collect()
    assert freed == []  # the view keeps the wrapper alive
    assert view.numpy().tolist() == [3.0, 4.0, 5.0]
    del view
    gc.collect()
    assert freed == [(buf.ctypes.data, 24)]
    with pytest.raises(TypeError, match="deleter"):
        wp.array(ptr=buf.ctypes.data, shape=(6,), dtype=float, deleter=3)
    wp.array.__new__(wp.array).__del__()  # an uninitialised array has nothing to hand back


# ---------------------------------------------------------------------------------------------------------------
# kernel code


@wp.kernel
def k_alias_write(orig: wp.array2d(dtype=float)):
    a = wp.array(ptr=orig.ptr, shape=(2, 3), dtype=float)
    a[0, 1] = 2.0
    a[1, 2] = 3.0


@wp.struct
class Pair:
    a: float
    b: float


@wp.kernel
def k_alias_struct(orig: wp.array(dtype=Pair)):
    arr = wp.array(ptr=orig.ptr, shape=(2,), dtype=Pair)
    arr[1].b = 4.0


@wp.kernel
def k_from_address(ptr: wp.uint64, nx: int, ny: int, out: wp.array(dtype=int), addr: wp.array(dtype=wp.uint64)):
    arr = wp.array(ptr=ptr, shape=(nx, ny), dtype=wp.vec2)
    arr[nx - 1, ny - 1] = wp.vec2(7.0, 8.0)
    out[0] = arr.shape[0] * 10 + arr.shape[1]
    addr[0] = arr.ptr


def test_kernel_array_from_ptr():
    a = wp.zeros((2, 3))
    wp.launch(k_alias_write, dim=1, inputs=[a])
    np.testing.assert_array_equal(a.numpy(), [[0, 2, 0], [0, 0, 3]])
    s = wp.zeros(2, dtype=Pair)
    wp.launch(k_alias_struct, dim=1, inputs=[s])
    assert s.numpy()[1].tolist() == (0.0, 4.0)


def test_kernel_array_from_ptr_runtime_shape():
    v = wp.zeros((3, 4), dtype=wp.vec2)
    out, addr = wp.zeros(1, dtype=int), wp.zeros(1, dtype=wp.uint64)
    wp.launch(k_from_address, dim=1, inputs=[v.ptr, 3, 4, out, addr])
    np.testing.assert_array_equal(v.numpy()[2, 3], [7.0, 8.0])
    assert not v.numpy()[:2].any()
    assert out.numpy()[0] == 34 and int(addr.numpy()[0]) == v.ptr
    wp.launch(k_from_address, dim=1, inputs=[v.ptr, 2, 2, out, addr])  # the same memory seen as 2x2
    np.testing.assert_array_equal(v.numpy()[0, 3], [7.0, 8.0])
    assert out.numpy()[0] == 22


@wp.kernel
def k_scratch(x: wp.array(dtype=float), y: wp.array(dtype=float), scratch: wp.uint64):
    i = wp.tid()
    s = wp.array(ptr=scratch, shape=(4,), dtype=float)
    s[i] = x[i] * 2.0
    y[i] = x[i] * x[i]


def test_kernel_array_from_ptr_in_a_backward_launch():
    x = wp.array([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = wp.zeros(4, requires_grad=True)
    scratch = wp.zeros(4)
    tape = wp.Tape()
    with tape:
        wp.launch(k_scratch, dim=4, inputs=[x, y, scratch.ptr])
    tape.backward(grads={y: wp.ones(4)})
    np.testing.assert_allclose(x.grad.numpy(), 2.0 * x.numpy())
    np.testing.assert_allclose(scratch.numpy(), 2.0 * x.numpy())


def test_kernel_array_from_ptr_errors():
    def bad(a: wp.array(dtype=float)):
        b = wp.array(ptr=a.ptr, shape=(2,))  # noqa: F841

    with pytest.raises(wp.errors.CompileError, match="needs dtype="):
        wp.launch(wp.kernel(bad, module="unique"), dim=1, inputs=[wp.zeros(2)])

    def bad_ptr(a: wp.array(dtype=float)):
        b = wp.array(ptr=1.5, shape=(2,), dtype=float)  # noqa: F841

    with pytest.raises(wp.errors.CompileError, match="ptr"):
        wp.launch(wp.kernel(bad_ptr, module="unique"), dim=1, inputs=[wp.zeros(2)])


def test_null_pointer_arrays():
    a = wp.array(ptr=0, shape=(123,), dtype=float)  # as Warp: wrapping a null pointer is allowed
    assert a.ptr is None and a.shape == (123,) and a.size == 123
    with pytest.raises(ValueError, match="null pointer"):
        a.numpy()


@wp.func
def empty_local_extent(n: int) -> float:
    a = wp.zeros(shape=(0,), dtype=float)
    return float(a.shape[0] + n)


@wp.kernel
def k_empty_local(out: wp.array(dtype=float)):
    out[0] = empty_local_extent(3)


def test_zero_extent_fixed_arrays():
    t = wp.fixedarray(shape=(0,), dtype=float)  # as Warp: an empty fixed-size array type
    assert t.shape == (0,) and t.ndim == 1
    with pytest.raises(ValueError, match="non-negative"):
        wp.fixedarray(shape=(-1,), dtype=float)
    out = wp.zeros(1)
    wp.launch(k_empty_local, dim=1, inputs=[out])
    assert out.numpy()[0] == 3.0
