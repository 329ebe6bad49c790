"""wp.fabricarray / wp.indexedfabricarray: buckets of memory from a Fabric array interface, checked against NumPy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import weft as wp
from weft.runtime.tape import OverwriteError


def _iface(data: wp.array, attrib: str, sizes, type_info=None) -> dict:
    """A Fabric array interface over ``data`` (1-D) split into buckets of ``sizes`` elements."""
    es = wp.types.type_size_in_bytes(data.dtype)
    ptrs, p = [], data.ptr
    for n in sizes:
        ptrs.append(p)
        p += n * es
    if type_info is None:
        dt = data.dtype
        base = {wp.float32: "f4", wp.float64: "f8", wp.int32: "i4"}[getattr(dt, "_wp_scalar_type_", dt)]
        count = getattr(dt, "_length_", 1)
        role = "" if count == 1 else ("matrix" if len(dt._shape_) == 2 else "vector")
        type_info = (True, base, count, 0, role)
    return {"version": 1, "device": str(data.device), "_ref": data,
            "attribs": {attrib: {"type": type_info, "access": 2, "pointers": ptrs, "counts": list(sizes)}}}


def _jagged_iface(rows: list, attrib: str, sizes) -> dict:
    """A Fabric interface of an attribute holding one array per element (array depth 1)."""
    ptrs = wp.array(np.array([r.ptr for r in rows], dtype=np.uint64), dtype=wp.uint64)
    lens = wp.array(np.array([r.size for r in rows], dtype=np.uint64), dtype=wp.uint64)
    pp, lp, start = [], [], 0
    for n in sizes:
        pp.append(ptrs.ptr + 8 * start)
        lp.append(lens.ptr + 8 * start)
        start += n
    return {"version": 1, "device": "cpu", "_ref": (rows, ptrs, lens),
            "attribs": {attrib: {"type": (True, "f4", 1, 1, ""), "access": 2, "pointers": pp, "counts": list(sizes),
                                 "array_lengths": lp}}}


@wp.kernel
def _scale_add(a: wp.fabricarray[float], b: wp.indexedfabricarray[float], out: wp.array[float]):
    i = wp.tid()
    out[i] = a[i] * 2.0 + b[i] + float(b.shape[0]) + float(a.size - wp.uint64(23))
    wp.atomic_add(a, i, 1.0)
    b[i] = -b[i]


@wp.kernel
def _generic_copy(a: Any, b: Any):
    i = wp.tid()
    b[i] = a[i] + a[i]


@wp.kernel
def _row_sums(a: wp.fabricarrayarray(dtype=float), idx: wp.indexedfabricarrayarray(dtype=float),
              sums: wp.array[float], isums: wp.array[float], firsts: wp.array[float]):
    i = wp.tid()
    row = a[i]
    for j in range(row.shape[0]):
        sums[i] += row[j]
    if i < idx.shape[0]:
        r = idx[i]
        for j in range(r.shape[0]):
            isums[i] += r[j]
        firsts[i] = idx[i, 0]


def test_kernel_access_matches_numpy():
    rng = np.random.default_rng(5)
    vals = rng.standard_normal(23).astype(np.float32)
    data = wp.array(vals)
    other = wp.array(vals[::-1].copy())
    fa = wp.fabricarray(_iface(data, "x", [5, 0, 7, 11]), "x")
    fb = wp.fabricarray(_iface(other, "y", [23]), "y")
    idx_np = np.array([22, 0, 3, 7, 17, 9], dtype=np.int32)  # distinct: each thread negates its own
    ib = fb[wp.array(idx_np, dtype=wp.int32)]
    assert (fa.size, fa.shape, fa.ndim, ib.shape) == (23, (23,), 1, (6,))
    out = wp.zeros(6)
    wp.launch(_scale_add, dim=6, inputs=[fa, ib, out])
    b_before = vals[::-1][idx_np]
    np.testing.assert_allclose(out.numpy(), vals[:6] * 2.0 + b_before + 6.0, rtol=1e-6)
    expect_a = vals.copy()
    expect_a[:6] += 1.0
    np.testing.assert_allclose(data.numpy(), expect_a, rtol=1e-6)
    np.testing.assert_allclose(fa.numpy(), expect_a, rtol=1e-6)
    expect_b = vals[::-1].copy()
    expect_b[idx_np] *= -1.0
    np.testing.assert_allclose(other.numpy(), expect_b, rtol=1e-6)


@pytest.mark.parametrize("dtype", [wp.float64, wp.vec3, wp.mat22d, wp.int32])
def test_host_ops_and_generic_kernels(dtype):
    n = 12
    host = np.arange(n * wp.types.type_length(dtype), dtype=wp.dtype_to_numpy(getattr(dtype, "_wp_scalar_type_",
                                                                                        dtype)))
    data = wp.array(host.reshape((n, *getattr(dtype, "_shape_", ()))), dtype=dtype)
    result = wp.zeros(n, dtype=dtype)
    fa = wp.fabricarray(_iface(data, "v", [4, 8]), "v")
    fb = wp.fabricarray(_iface(result, "v", [1, 1, 10]), "v")
    assert fa.dtype is data.dtype and fa.list() == data.list()
    wp.launch(_generic_copy, dim=n, inputs=[fa, fb])
    np.testing.assert_array_equal(fb.numpy(), 2 * data.numpy())
    idx = wp.array(np.array([11, 2, 5], dtype=np.int32), dtype=wp.int32)
    ia, ib = fa[idx], fb[idx]
    ib.zero_()
    expect = 2 * data.numpy()
    expect[[11, 2, 5]] = 0
    np.testing.assert_array_equal(result.numpy(), expect)
    wp.launch(_generic_copy, dim=3, inputs=[ia, ib])
    np.testing.assert_array_equal(ib.numpy(), 2 * data.numpy()[[11, 2, 5]])
    fb.fill_(3)
    np.testing.assert_array_equal(result.numpy(), np.full_like(expect, 3))
    # copies both ways, clone / zeros_like give plain arrays
    wp.copy(fb, data)
    np.testing.assert_array_equal(result.numpy(), data.numpy())
    c = wp.clone(ia)
    assert isinstance(c, wp.array) and c.shape == (3,)
    np.testing.assert_array_equal(c.numpy(), data.numpy()[[11, 2, 5]])
    assert wp.zeros_like(fa).shape == (n,)


def test_arrays_of_arrays():
    rows = [wp.array(np.arange(1, k + 2, dtype=np.float32)) for k in range(7)]
    fa = wp.fabricarrayarray(data=_jagged_iface(rows, "r", [3, 4]), attrib="r")
    assert fa.ndim == 2 and fa.shape == (7,)
    ifa = fa[wp.array(np.array([6, 1], dtype=np.int32), dtype=wp.int32)]
    sums, isums, firsts = wp.zeros(7), wp.zeros(7), wp.zeros(7)
    wp.launch(_row_sums, dim=7, inputs=[fa, ifa, sums, isums, firsts])
    np.testing.assert_allclose(sums.numpy(), [r.numpy().sum() for r in rows])
    np.testing.assert_allclose(isums.numpy()[:2], [rows[6].numpy().sum(), rows[1].numpy().sum()])
    np.testing.assert_allclose(firsts.numpy()[:2], [1.0, 1.0])
    with pytest.raises(RuntimeError, match="Fabric arrays of arrays"):
        fa.fill_(1.0)


@wp.struct
class _Holder:
    values: wp.fabricarray[float]
    picked: wp.indexedfabricarray[float]


@wp.kernel
def _bump(h: _Holder):
    i = wp.tid()
    h.values[i] = h.values[i] + 1.0
    h.picked[i] = h.picked[i] + 10.0


def test_struct_fields_and_errors():
    data = wp.array(np.arange(6, dtype=np.float32))
    fa = wp.fabricarray(_iface(data, "x", [2, 4]), "x")
    h = _Holder()
    h.values = fa
    h.picked = fa[wp.array(np.array([5, 4], dtype=np.int32), dtype=wp.int32)]
    wp.launch(_bump, dim=2, inputs=[h])
    np.testing.assert_allclose(data.numpy(), [1, 2, 2, 3, 14, 15])
    assert h.to("cpu").values is fa
    with pytest.raises(TypeError, match="expects a Warp Fabric array, got list"):
        h.values = [1.0]
    with pytest.raises(wp.LaunchError, match="Fabric array"):
        wp.launch(_scale_add, dim=1, inputs=[data, h.picked, wp.zeros(1)])
    iface = _iface(data, "x", [6], type_info=(True, "f4", 6, 0, "matrix"))
    with pytest.raises(ValueError, match="square element count, got 6"):
        wp.fabricarray(iface, "x")
    with pytest.raises(RuntimeError, match="base data type 'z9'"):
        wp.fabricarray(_iface(data, "x", [6], type_info=(True, "z9", 1, 0, "")), "x")
    with pytest.raises(ValueError, match="index array"):
        fa[0]
    ann = wp.fabricarray[float]
    assert not isinstance(ann, wp.fabricarray) and ann.dtype is wp.float32 and ann.ndim == 1
    assert wp.indexedfabricarray[wp.float64, 2].ndim == 2


@wp.kernel
def _fabric_weighted(a: wp.fabricarray[float], x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    y[i] = a[i] * x[i] * x[i]
    a[i] = a[i] + 1.0  # updated in place: the backward replay must see the values from before the launch


@wp.kernel
def _fabric_read(a: wp.fabricarray[float], x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    y[i] = a[i] * x[i] * x[i]


def test_tape_gradients_through_fabric_inputs():
    a_np = np.arange(1, 7, dtype=np.float64)
    x_np = np.linspace(0.5, 2.0, 6)
    data = wp.array(a_np.astype(np.float32))
    fa = wp.fabricarray(_iface(data, "v", [2, 4]), "v")
    x = wp.array(x_np.astype(np.float32), requires_grad=True)
    y = wp.zeros(6, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(_fabric_weighted, 6, inputs=[fa, x, y])
    np.testing.assert_allclose(data.numpy(), a_np + 1.0)
    tape.backward(grads={y: wp.ones(6)})
    np.testing.assert_allclose(x.grad.numpy(), 2.0 * a_np * x_np, rtol=1e-6)  # d(a x^2)/dx with a before the launch
    assert fa.grad is None  # Fabric arrays carry no gradient (as in Warp)
    # a kernel that only reads the Fabric array: values changed after the launch make the Tape refuse (they would
    # give a wrong gradient); the in-place kernel above replays from its own copy, so it is unaffected
    x.grad.zero_()
    tape2 = wp.Tape()
    with tape2:
        wp.launch(_fabric_read, 6, inputs=[fa, x, y])
    fa.fill_(0.0)
    with pytest.raises(OverwriteError, match="overwritten"):
        tape2.backward(grads={y: wp.ones(6)})
