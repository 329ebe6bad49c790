"""NumPy scalars (np.float32, np.int64, np.bool_ ...) are accepted wherever weft's API takes a Python number, as
with Warp: kernel arguments, launch dims, shapes, fill values, struct fields, vector constructors, host builtins,
optimiser hyper-parameters and config options. Plus a check that the test suite never hands pytest.approx a NumPy
tolerance (pytest >= 9.2 rejects np.float32 ``abs=``/``rel=``)."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import weft as wp

TESTS = Path(__file__).resolve().parents[1]

N_GLOBAL = np.int64(3)  # captured by a kernel: a compile-time trip count
SCALE = np.float32(0.5)  # captured by a kernel: a float32 constant


@wp.kernel
def _scalar_args(a: float, n: int, b: wp.float64, flag: bool, out: wp.array(dtype=float)):
    i = wp.tid()
    v = a * float(n) + float(b)
    if flag:
        v = v + 1.0
    out[i] = v


@wp.kernel
def _captured(out: wp.array(dtype=float)):
    s = 0.0
    for _j in range(N_GLOBAL):
        s += SCALE
    out[wp.tid()] = s


@wp.struct
class _Params:
    a: float
    n: int


@wp.kernel
def _struct_arg(p: _Params, out: wp.array(dtype=float)):
    out[wp.tid()] = p.a * float(p.n)


@pytest.mark.parametrize("a, n, b, flag", [
    (np.float32(0.5), np.int64(3), np.float64(0.25), np.bool_(True)),
    (np.float64(0.5), np.int32(3), np.float32(0.25), np.bool_(True)),
    (np.int64(1), np.uint8(3), np.int32(0), np.bool_(False)),
])
def test_kernel_scalar_arguments(a, n, b, flag):
    out = wp.zeros(2, dtype=float)
    wp.launch(_scalar_args, dim=np.int64(2), inputs=[a, n, b, flag, out])
    expected = float(a) * float(n) + float(b) + (1.0 if flag else 0.0)
    np.testing.assert_allclose(out.numpy(), np.full(2, expected, np.float32))


def test_launch_dims_and_recorded_launch():
    out = wp.zeros(3, dtype=float)
    wp.launch(_scalar_args, dim=(np.int32(3),), inputs=[1.0, 2, 0.0, False, out])
    np.testing.assert_array_equal(out.numpy(), [2.0, 2.0, 2.0])
    cmd = wp.launch(_scalar_args, dim=3, inputs=[1.0, 1, 0.0, False, out], record_cmd=True)
    out.zero_()
    cmd.set_dim(np.int64(2))
    cmd.launch()
    np.testing.assert_array_equal(out.numpy(), [1.0, 1.0, 0.0])


def test_captured_numpy_globals():
    out = wp.zeros(1, dtype=float)
    wp.launch(_captured, dim=1, inputs=[out])
    assert out.numpy()[0] == 1.5


def test_struct_fields_take_numpy_scalars():
    p = _Params()
    p.a = np.float64(1.5)
    p.n = np.int64(4)
    out = wp.zeros(1, dtype=float)
    wp.launch(_struct_arg, dim=1, inputs=[p, out])
    assert out.numpy()[0] == 6.0


@pytest.mark.parametrize("make", [wp.zeros, wp.empty, wp.ones])
def test_shapes_from_numpy_integers(make):
    assert make(np.int64(3), dtype=float).shape == (3,)
    assert make((np.int64(3), np.int32(2)), dtype=float).shape == (3, 2)
    assert make(shape=np.uint32(4), dtype=wp.int64).shape == (4,)
    a = wp.array(np.arange(6, dtype=np.float32))
    assert a.reshape((np.int64(2), np.int64(3))).shape == (2, 3)
    np.testing.assert_array_equal(a[np.int64(1):np.int32(4)].numpy(), [1.0, 2.0, 3.0])


@pytest.mark.parametrize("value, dtype", [
    (np.float32(2.0), wp.float32), (np.float64(2.0), wp.float64), (np.int64(2), wp.int64), (np.uint8(2), wp.uint8),
    (np.bool_(True), wp.bool), (2, wp.int32), (2.0, wp.float32), (True, wp.bool),
])
def test_full_infers_dtype_of_numpy_scalars(value, dtype):
    a = wp.full(3, value)
    assert a.dtype == dtype
    np.testing.assert_array_equal(a.numpy(), np.full(3, value))


def test_fill_and_copy_take_numpy_scalars():
    a = wp.zeros(6, dtype=float)
    a.fill_(np.float32(1.5))
    np.testing.assert_array_equal(a.numpy(), np.full(6, 1.5, np.float32))
    a.fill_(np.int64(2))
    np.testing.assert_array_equal(a.numpy(), np.full(6, 2.0, np.float32))
    b = wp.zeros(6, dtype=float)
    wp.copy(b, wp.array(np.arange(6, dtype=np.float32)), dest_offset=np.int64(1), src_offset=np.int32(0),
            count=np.int64(3))
    np.testing.assert_array_equal(b.numpy(), [0.0, 0.0, 1.0, 2.0, 0.0, 0.0])


def test_value_types_and_host_builtins():
    v = wp.vec3(np.float32(0.5), np.int64(3), np.float64(0.25))
    assert tuple(v) == (0.5, 3.0, 0.25)
    assert tuple(v * np.float32(2.0)) == (1.0, 6.0, 0.5)
    v[np.int64(1)] = np.float64(2.0)
    assert v[1] == 2.0
    m = wp.mat22(*[np.float32(i) for i in range(4)]) * np.float64(2.0)
    assert m[1, 1] == 6.0
    assert wp.length(wp.vec3(np.float32(3), np.float32(0), np.float32(4))) == 5.0
    assert wp.min(np.int64(3), np.int64(2)) == 2
    assert wp.clamp(np.float32(2.0), np.float32(0.0), np.float32(1.0)) == 1.0
    assert wp.float32(np.float64(1.5)) == 1.5


def test_optimisers_take_numpy_hyperparameters():
    x = wp.array([1.0, 2.0], dtype=float, requires_grad=True)
    g = wp.array([1.0, 1.0], dtype=float)
    wp.optim.Adam([x], lr=np.float32(0.1), betas=(np.float32(0.9), np.float64(0.999)), eps=np.float32(1e-8)).step([g])
    np.testing.assert_allclose(x.numpy(), [0.9, 1.9], rtol=1e-6)
    wp.optim.SGD([x], lr=np.float64(0.1), momentum=np.float32(0.5)).step([g])
    np.testing.assert_allclose(x.numpy(), [0.8, 1.8], rtol=1e-6)
    A = wp.array(np.eye(3, dtype=np.float32) * 2.0)
    b = wp.array(np.ones(3, dtype=np.float32))
    sol = wp.zeros(3, dtype=float)
    wp.optim.cg(A, b, sol, tol=np.float32(1e-6), maxiter=np.int64(10))
    np.testing.assert_allclose(sol.numpy(), [0.5, 0.5, 0.5], rtol=1e-6)


def test_config_options_take_numpy_values():
    old_threads, old_verbose = wp.config.num_threads, wp.config.verbose
    try:
        wp.config.num_threads = np.int64(1)  # passed to native code: must become a Python int
        assert type(wp.config.num_threads) is int and wp.config.num_threads == 1
        wp.config.verbose = np.bool_(False)
        assert wp.config.verbose is False
        out = wp.zeros(2, dtype=float)
        wp.launch(_scalar_args, dim=2, inputs=[1.0, 1, 0.0, False, out])
        np.testing.assert_array_equal(out.numpy(), [1.0, 1.0])
    finally:
        wp.config.num_threads, wp.config.verbose = old_threads, old_verbose


# ------------------------------------------------------------------ weft's own scalar values (Warp's .value)
@wp.kernel
def _vec_param(v: wp.vec3, out: wp.array(dtype=wp.vec3)):
    out[0] = v


@wp.struct
class _Typed:
    u8: wp.uint8
    f16: wp.float16
    flag: wp.bool
    v: wp.vec3


def test_weft_scalar_values_carry_value_and_stay_numpy_scalars():
    x = wp.float32(1.5)
    assert x.value == 1.5 and type(x.value) is float and isinstance(x, np.float32) and isinstance(x, wp.float32)
    assert np.asarray(x).dtype == np.float32 and np.array([x, x]).dtype == np.float32  # NumPy interop unchanged
    assert wp.float16(1.25).value == 1.25 and wp.int16(123).value == 123 and wp.uint8(-1).value == 255
    assert isinstance(np.float64(2.0), wp.float64) and not isinstance(x, wp.float64)
    b = wp.bool(17)  # NumPy's bool cannot be subclassed: a small stand-in with the same interop
    assert b.value is True and b and b == True and isinstance(b, wp.bool) and np.asarray(b).dtype == np.bool_
    a = wp.full(3, b)
    assert a.dtype is wp.bool and a.numpy().all()
    a.fill_(wp.bool(False))
    assert not a.numpy().any()
    out = wp.zeros(2, dtype=float)
    wp.launch(_scalar_args, dim=2, inputs=[wp.float32(0.5), wp.int32(3), wp.float64(0.25), wp.bool(True), out])
    np.testing.assert_array_equal(out.numpy(), [2.75, 2.75])
    s = _Typed()
    assert isinstance(s.u8, wp.uint8) and isinstance(s.f16, wp.float16)  # fields keep their weft type
    s.u8 = wp.uint8(7)
    s.flag = wp.bool(True)
    assert isinstance(s.u8, wp.uint8) and s.u8 == 7 and s.flag
    s.u8 = 9  # a Python number stays one
    assert type(s.u8) is int


def test_single_value_for_a_composite_is_refused_or_promoted_as_warp():
    out = wp.zeros(1, dtype=wp.vec3)
    s = _Typed()
    for v in (123, 1.5, wp.float32(1.5), wp.int32(2)):  # Python and weft scalars: refused
        with pytest.raises(RuntimeError, match="argument 'v' expects vec3f but got a single value"):
            wp.launch(_vec_param, 1, inputs=[v, out])
        with pytest.raises(TypeError, match="Struct field 'v' expects vec3f but got a single value"):
            s.v = v
    for v in (True, np.bool_(True), wp.bool(True), np.float32(1.5), np.int64(3)):  # still broadcast, deprecated
        with pytest.warns(DeprecationWarning, match=r"`vec3f` for kernel parameter 'v' is deprecated"):
            wp.launch(_vec_param, 1, inputs=[v, out])
        np.testing.assert_array_equal(out.numpy()[0], np.full(3, float(v), np.float32))
        with pytest.warns(DeprecationWarning, match=r"`vec3f` for struct field 'v' is deprecated"):
            s.v = v
        np.testing.assert_array_equal(np.asarray(s.v), np.full(3, float(v), np.float32))
    s.v = None  # zero, as a new struct's field
    np.testing.assert_array_equal(np.asarray(s.v), np.zeros(3))
    with pytest.raises(ValueError, match="Failed to convert argument for param v to vec3f"):
        wp.launch(_vec_param, 1, inputs=[None, out])


# ------------------------------------------------------------------ the suite's own use of pytest.approx
def _plain_number_expr(node: ast.AST) -> bool:
    """A tolerance expression that is certainly a Python number: literals, names, float()/int() calls and
    arithmetic on those. ``np.abs(g).max()`` (a NumPy scalar) is not."""
    if isinstance(node, (ast.Constant, ast.Name)):
        return True
    if isinstance(node, ast.UnaryOp):
        return _plain_number_expr(node.operand)
    if isinstance(node, ast.BinOp):
        return _plain_number_expr(node.left) and _plain_number_expr(node.right)
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("float", "int")


def test_suite_gives_pytest_approx_python_number_tolerances():
    bad = []
    for path in sorted(TESTS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "approx"):
                continue
            for kw in node.keywords:
                if kw.arg in ("abs", "rel") and not _plain_number_expr(kw.value):
                    bad.append(f"{path.relative_to(TESTS.parent)}:{node.lineno}: {kw.arg}={ast.unparse(kw.value)}")
    assert not bad, "pytest.approx tolerances must be Python numbers (wrap them in float()):\n" + "\n".join(bad)


@wp.struct
class _Bf16Params:
    h: wp.bfloat16
    f: float


@wp.kernel
def _bf16_struct_arg(p: _Bf16Params, out: wp.array(dtype=float)):
    out[0] = wp.float32(p.h) + p.f


def test_bfloat16_struct_fields_and_raw_bits():
    p = _Bf16Params()
    p.h = wp.bfloat16(3.5)
    p.f = 0.25
    out = wp.zeros(1, dtype=float)
    wp.launch(_bf16_struct_arg, 1, inputs=[p, out])  # the field is packed as its bit pattern
    assert out.numpy()[0] == 3.75
    bits = np.array([0x3F80, 0x4000, 0xC040], dtype=np.uint16)  # 1, 2, -3 in bfloat16
    a = wp.array(bits, dtype=wp.bfloat16)  # raw bit patterns pass through, as Warp
    np.testing.assert_array_equal(a.numpy().astype(np.float32), [1.0, 2.0, -3.0])
