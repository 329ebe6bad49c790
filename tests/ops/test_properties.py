"""Hypothesis property tests: scalar arithmetic, C-semantics integer division/modulo and casts against NumPy.

Each kernel compiles once (module level); every Hypothesis example is a whole array of inputs fed to one launch.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import weft as wp

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SIZES = st.integers(min_value=1, max_value=200)

WP_OF = {np.int32: wp.int32, np.int64: wp.int64, np.float32: wp.float32, np.float64: wp.float64}


def _make_float_arith(dtype):
    @wp.kernel
    def float_arith(a: wp.array(dtype=dtype), b: wp.array(dtype=dtype), out: wp.array2d(dtype=dtype)):
        i = wp.tid()
        out[0, i] = a[i] + b[i]
        out[1, i] = a[i] - b[i]
        out[2, i] = a[i] * b[i]
        out[3, i] = a[i] / b[i]
        out[4, i] = -a[i]

    return float_arith


def _make_int_arith(dtype):
    @wp.kernel
    def int_arith(a: wp.array(dtype=dtype), b: wp.array(dtype=dtype), out: wp.array2d(dtype=dtype)):
        i = wp.tid()
        out[0, i] = a[i] + b[i]
        out[1, i] = a[i] - b[i]
        out[2, i] = a[i] * b[i]
        out[3, i] = a[i] / b[i]
        out[4, i] = a[i] // b[i]
        out[5, i] = a[i] % b[i]
        out[6, i] = wp.mod(a[i], b[i])

    return int_arith


ARITH = {np.float32: _make_float_arith(wp.float32), np.float64: _make_float_arith(wp.float64),
         np.int32: _make_int_arith(wp.int32), np.int64: _make_int_arith(wp.int64)}


def _run(kernel, dtype, a, b, rows):
    out = wp.zeros((rows, len(a)), dtype=WP_OF[dtype])
    wp.launch(kernel, dim=len(a), inputs=[wp.array(a, dtype=WP_OF[dtype]), wp.array(b, dtype=WP_OF[dtype]), out])
    return out.numpy()


def _float_pairs(dtype):
    width = 32 if dtype == np.float32 else 64
    elems = st.floats(width=width, allow_nan=True, allow_infinity=True, allow_subnormal=True)
    return SIZES.flatmap(lambda n: st.tuples(hnp.arrays(dtype, n, elements=elems), hnp.arrays(dtype, n, elements=elems)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_float_arithmetic_matches_numpy(dtype):
    @SETTINGS
    @given(_float_pairs(dtype))
    def check(pair):
        a, b = pair
        got = _run(ARITH[dtype], dtype, a, b, 5)
        with np.errstate(all="ignore"):
            expected = [a + b, a - b, a * b, a / b, -a]
        for row, exp in enumerate(expected):
            # IEEE arithmetic in the same precision is exact: compare bit for bit (NaN == NaN)
            np.testing.assert_array_equal(got[row], exp.astype(dtype), err_msg=f"op row {row}")

    check()


def _c_divmod(a, b):
    """C semantics: the quotient truncates toward zero, the remainder has the sign of the dividend."""
    q = np.abs(a) // np.abs(b)
    q = np.where((a < 0) != (b < 0), -q, q).astype(a.dtype)
    return q, (a - q * b).astype(a.dtype)


def _int_pairs(dtype):
    info = np.iinfo(dtype)
    # avoid signed overflow (undefined behaviour in C): operands fit in half the range, products in the range
    half = int(np.sqrt(info.max)) if dtype == np.int32 else 2**31 - 1
    lo, hi = info.min // 2 + 1, info.max // 2
    small = st.integers(-half, half)
    big = st.integers(lo, hi)
    nonzero = st.one_of(st.integers(-half, -1), st.integers(1, half), st.sampled_from([-1, 1, -2, 2, -7, 7]))

    def arrays(n):
        a = hnp.arrays(dtype, n, elements=st.one_of(big, small, st.sampled_from([0, -1, 1, -7, 7, lo, hi])))
        b = hnp.arrays(dtype, n, elements=nonzero)
        return st.tuples(a, b)

    return SIZES.flatmap(arrays)


@pytest.mark.parametrize("dtype", [np.int32, np.int64], ids=["int32", "int64"])
def test_int_arithmetic_and_c_division(dtype):
    info = np.iinfo(dtype)
    half = int(np.sqrt(info.max)) if dtype == np.int32 else 2**31 - 1

    @SETTINGS
    @given(_int_pairs(dtype))
    def check(pair):
        a, b = pair
        got = _run(ARITH[dtype], dtype, a, b, 7)
        q, r = _c_divmod(a, b)
        np.testing.assert_array_equal(got[0], a + b)
        np.testing.assert_array_equal(got[1], a - b)
        small = np.abs(a) <= half  # products of these with |b| <= half do not overflow
        np.testing.assert_array_equal(got[2][small], (a * b)[small])
        np.testing.assert_array_equal(got[3], q, err_msg="a / b (integer)")
        np.testing.assert_array_equal(got[4], q, err_msg="a // b")
        np.testing.assert_array_equal(got[5], r, err_msg="a % b")
        np.testing.assert_array_equal(got[6], r, err_msg="wp.mod")
        # the defining identity of C division
        np.testing.assert_array_equal(got[4] * b + got[5], a)
        assert np.all((got[5] == 0) | (np.sign(got[5]) == np.sign(a)))
        assert np.all(np.abs(got[5]) < np.abs(b))

    check()


def test_c_division_fixed_cases():
    a = np.array([7, -7, 7, -7, 0, 1, -1, 5, -5], dtype=np.int32)
    b = np.array([2, 2, -2, -2, 3, 3, 3, -5, 5], dtype=np.int32)
    got = _run(ARITH[np.int32], np.int32, a, b, 7)
    np.testing.assert_array_equal(got[4], [3, -3, -3, 3, 0, 0, 0, -1, -1])
    np.testing.assert_array_equal(got[5], [1, -1, 1, -1, 0, 1, -1, 0, 0])


# ---------------------------------------------------------------------------------------------------------------
# casts


@wp.kernel
def casts_from_float(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float32), i32: wp.array2d(dtype=wp.int32),
                     i64: wp.array(dtype=wp.int64), f32: wp.array(dtype=wp.float32), f64: wp.array(dtype=wp.float64)):
    i = wp.tid()
    i32[0, i] = wp.int32(y[i])
    i32[1, i] = int(y[i])
    i64[i] = wp.int64(x[i])
    f32[i] = wp.float32(x[i])
    f64[i] = wp.float64(y[i])


@SETTINGS
@given(SIZES.flatmap(lambda n: hnp.arrays(np.float64, n, elements=st.floats(-2.0e9, 2.0e9))))
def test_float_to_int_truncates(x):
    y = x.astype(np.float32)
    keep = np.abs(y.astype(np.float64)) < 2.0**31 - 128  # in int32 range after rounding to float32
    y = np.where(keep, y, np.float32(0.5))
    n = len(x)
    i32 = wp.zeros((2, n), dtype=wp.int32)
    i64, f32, f64 = wp.zeros(n, dtype=wp.int64), wp.zeros(n, dtype=wp.float32), wp.zeros(n, dtype=wp.float64)
    wp.launch(casts_from_float, dim=n, inputs=[wp.array(x), wp.array(y), i32, i64, f32, f64])
    np.testing.assert_array_equal(i32.numpy()[0], np.trunc(y).astype(np.int32))
    np.testing.assert_array_equal(i32.numpy()[1], np.trunc(y).astype(np.int32))
    np.testing.assert_array_equal(i64.numpy(), np.trunc(x).astype(np.int64))
    np.testing.assert_array_equal(f32.numpy(), x.astype(np.float32))  # round to nearest even
    np.testing.assert_array_equal(f64.numpy(), y.astype(np.float64))  # exact


@wp.kernel
def casts_from_int(a: wp.array(dtype=wp.int32), b: wp.array(dtype=wp.int64), f32: wp.array2d(dtype=wp.float32),
                   f64: wp.array2d(dtype=wp.float64), i32: wp.array(dtype=wp.int32), i64: wp.array(dtype=wp.int64),
                   u8: wp.array(dtype=wp.uint8)):
    i = wp.tid()
    f32[0, i] = wp.float32(a[i])
    f32[1, i] = float(a[i])
    f32[2, i] = wp.float32(b[i])
    f64[0, i] = wp.float64(a[i])
    f64[1, i] = wp.float64(b[i])
    i32[i] = wp.int32(b[i])
    i64[i] = wp.int64(a[i])
    u8[i] = wp.uint8(a[i])


@SETTINGS
@given(SIZES.flatmap(lambda n: st.tuples(hnp.arrays(np.int32, n), hnp.arrays(np.int64, n))))
def test_int_to_float_and_int_widths(pair):
    a, b = pair
    n = len(a)
    f32 = wp.zeros((3, n), dtype=wp.float32)
    f64 = wp.zeros((2, n), dtype=wp.float64)
    i32, i64, u8 = wp.zeros(n, dtype=wp.int32), wp.zeros(n, dtype=wp.int64), wp.zeros(n, dtype=wp.uint8)
    wp.launch(casts_from_int, dim=n, inputs=[wp.array(a), wp.array(b), f32, f64, i32, i64, u8])
    np.testing.assert_array_equal(f32.numpy()[0], a.astype(np.float32))
    np.testing.assert_array_equal(f32.numpy()[1], a.astype(np.float32))
    np.testing.assert_array_equal(f32.numpy()[2], b.astype(np.float32))
    np.testing.assert_array_equal(f64.numpy()[0], a.astype(np.float64))
    np.testing.assert_array_equal(f64.numpy()[1], b.astype(np.float64))
    np.testing.assert_array_equal(i32.numpy(), b.astype(np.int32))  # two's complement wrap, as C++ and NumPy
    np.testing.assert_array_equal(i64.numpy(), a.astype(np.int64))
    np.testing.assert_array_equal(u8.numpy(), a.astype(np.uint8))


# ---------------------------------------------------------------------------------------------------------------
# literals adopt the type of the other operand (no implicit widening of the variable)


@wp.kernel
def literal_promotion(x: wp.array(dtype=wp.float64), k: wp.array(dtype=wp.int64), y: wp.array(dtype=wp.float64),
                      m: wp.array(dtype=wp.int64)):
    i = wp.tid()
    y[i] = x[i] * 0.1 + 1.0
    m[i] = k[i] * 3 + 1


@SETTINGS
@given(SIZES.flatmap(lambda n: st.tuples(hnp.arrays(np.float64, n, elements=st.floats(-1e6, 1e6)),
                                         hnp.arrays(np.int64, n, elements=st.integers(-2**60, 2**60)))))
def test_literals_take_operand_precision(pair):
    x, k = pair
    y, m = wp.zeros(len(x), dtype=wp.float64), wp.zeros(len(x), dtype=wp.int64)
    wp.launch(literal_promotion, dim=len(x), inputs=[wp.array(x), wp.array(k), y, m])
    # 0.1 is a double, not a float32 0.1 (that would be off by ~1e-9 relative); the compiler may fuse the multiply-add
    # into one FMA, which differs from NumPy's two roundings by at most an ulp or two
    np.testing.assert_allclose(y.numpy(), x * 0.1 + 1.0, rtol=4e-16, atol=4e-16)
    np.testing.assert_array_equal(m.numpy(), k * 3 + 1)
