"""Warp 1.19 utility names: ``wp.select`` (deprecated where), ``wp.breakpoint`` and ``wp.quat_between_vectors``."""

import os
import shutil
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import weft as wp

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# ------------------------------------------------------------------------------------------------ select

@wp.kernel
def k_select(c: wp.array(dtype=int), x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64),
             out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    out[i] = wp.select(c[i], x[i], y[i] * 2.0)


@wp.kernel
def k_select_array(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    out[0] = wp.select(a, 1.0, 2.0)


def test_select_is_where_with_the_values_swapped_and_warns():
    rng = np.random.default_rng(1)
    c = np.array([0, 1, 0, 7, -2])
    xv, yv = rng.normal(size=5), rng.normal(size=5)
    x = wp.array(xv, dtype=wp.float64, requires_grad=True)
    y = wp.array(yv, dtype=wp.float64, requires_grad=True)
    out = wp.zeros(5, dtype=wp.float64, requires_grad=True)
    with pytest.warns(DeprecationWarning, match="wp.where"):
        wp.compile_kernels([k_select])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        tape = wp.Tape()
        with tape:
            wp.launch(k_select, 5, inputs=[wp.array(c, dtype=int), x, y, out])
    np.testing.assert_array_equal(out.numpy(), np.where(c != 0, 2.0 * yv, xv))
    tape.backward(grads={out: wp.array(np.ones(5), dtype=wp.float64)})
    np.testing.assert_array_equal(x.grad.numpy(), (c == 0).astype(float))
    np.testing.assert_array_equal(y.grad.numpy(), 2.0 * (c != 0))


def test_select_on_an_array_is_whether_it_has_data():
    out = wp.zeros(1, dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        wp.launch(k_select_array, 1, inputs=[wp.zeros(3, dtype=float), out])
        assert out.numpy()[0] == 2.0
        wp.launch(k_select_array, 1, inputs=[None, out])
        assert out.numpy()[0] == 1.0


def test_select_errors():
    def three_values(a: wp.array(dtype=float)):
        a[0] = wp.select(True, 1.0)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(wp.CompileError, match="value_if_false, value_if_true"):
            wp.compile_kernels([wp.kernel(three_values)])
    with pytest.raises(wp.Error, match="inside a kernel"):
        wp.select(True, 1.0, 2.0)


# ------------------------------------------------------------------------------------------------ breakpoint

_BREAK_PROGRAM = textwrap.dedent("""
    import weft as wp

    @wp.kernel
    def k(a: wp.array(dtype=float)):
        i = wp.tid()
        if i == 2:
            wp.breakpoint()
        a[i] = float(i) * 2.0

    a = wp.zeros(4, dtype=float)
    wp.launch(k, 4, inputs=[a])
    print("result", a.numpy().tolist())
""")


def _run_break_program(tmp_path, prefix=()):
    src = tmp_path / "brk.py"
    src.write_text(_BREAK_PROGRAM)
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([*prefix, sys.executable, str(src)], capture_output=True, text=True, env=env, timeout=600)


def test_breakpoint_without_a_debugger_does_nothing(tmp_path):
    out = _run_break_program(tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "result [0.0, 2.0, 4.0, 6.0]" in out.stdout


@pytest.mark.skipif(shutil.which("gdb") is None, reason="no gdb")
def test_breakpoint_stops_in_gdb_and_continues(tmp_path):
    out = _run_break_program(tmp_path, ("gdb", "-q", "-batch", "-ex", "run", "-ex", "continue", "--args"))
    if "ptrace" in out.stdout + out.stderr and "not permitted" in out.stdout + out.stderr:
        pytest.skip("ptrace is not permitted here")
    assert "SIGTRAP" in out.stdout, out.stdout[-2000:]
    assert "result [0.0, 2.0, 4.0, 6.0]" in out.stdout


# ------------------------------------------------------------------------------------------------ quat_between_vectors

def _reference(a, b):
    """float64 NumPy: normalize((cross(â, b̂), 1 + dot(â, b̂))), identity when that is zero."""
    na, nb = a / np.linalg.norm(a), b / np.linalg.norm(b)
    q = np.append(np.cross(na, nb), 1.0 + na @ nb)
    n = np.linalg.norm(q)
    return q / n if n > 0 else np.array([0.0, 0.0, 0.0, 1.0])


def _rotate(q, v):
    u, w = q[:3], q[3]
    return v + 2.0 * np.cross(u, np.cross(u, v) + w * v)


@wp.kernel
def k_between(a: wp.array(dtype=wp.vec3d), b: wp.array(dtype=wp.vec3d), w: wp.array(dtype=wp.quatd),
              loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    q = wp.quat_between_vectors(a[i], b[i])
    wp.atomic_add(loss, 0, wp.dot(q, w[i]))


@wp.kernel
def k_between32(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.quat)):
    i = wp.tid()
    out[i] = wp.quat_between_vectors(a[i], b[i])


def _cases(rng):
    a = rng.normal(size=(6, 3))
    b = rng.normal(size=(6, 3))
    b[1] = 2.5 * a[1]  # parallel
    b[2] = a[2] + 1e-3 * rng.normal(size=3)  # nearly parallel
    b[3] = -0.5 * a[3] + 0.3 * np.cross(a[3], rng.normal(size=3))  # obtuse
    return a, b


def test_quat_between_vectors_values_kernel_and_host():
    rng = np.random.default_rng(4)
    a, b = _cases(rng)
    ref = np.array([_reference(x, y) for x, y in zip(a, b)])
    for x, y, q in zip(a, b, ref):  # the reference rotates â onto b̂
        np.testing.assert_allclose(_rotate(q, x / np.linalg.norm(x)), y / np.linalg.norm(y), atol=1e-12)
    loss = wp.zeros(1, dtype=wp.float64)
    w = rng.normal(size=(6, 4))
    wp.launch(k_between, 6, inputs=[wp.array(a, dtype=wp.vec3d), wp.array(b, dtype=wp.vec3d),
                                    wp.array(w, dtype=wp.quatd), loss])
    np.testing.assert_allclose(loss.numpy()[0], np.sum(ref * w), rtol=1e-12)
    out = wp.zeros(6, dtype=wp.quat)
    wp.launch(k_between32, 6, inputs=[wp.array(a, dtype=wp.vec3), wp.array(b, dtype=wp.vec3), out])
    np.testing.assert_allclose(out.numpy(), ref, atol=2e-6)
    for x, y, q in zip(a, b, ref):
        np.testing.assert_allclose(np.array(wp.quat_between_vectors(wp.vec3d(*x), wp.vec3d(*y))), q, atol=1e-12)
        np.testing.assert_allclose(np.array(wp.quat_between_vectors(wp.vec3(*x), wp.vec3(*y))), q, atol=2e-6)


def test_quat_between_vectors_parallel_and_opposite_as_warp():
    # parallel: the identity; exactly opposite: Warp normalizes a zero quaternion to the identity
    for a, b in (((1.0, 0.0, 0.0), (3.0, 0.0, 0.0)), ((1.0, 0.0, 0.0), (-3.0, 0.0, 0.0)),
                 ((0.0, 2.0, 0.0), (0.0, -0.5, 0.0))):
        host = np.array(wp.quat_between_vectors(wp.vec3(*a), wp.vec3(*b)))
        out = wp.zeros(1, dtype=wp.quat)
        wp.launch(k_between32, 1, inputs=[wp.array([a], dtype=wp.vec3), wp.array([b], dtype=wp.vec3), out])
        np.testing.assert_array_equal(host, [0.0, 0.0, 0.0, 1.0])
        np.testing.assert_array_equal(out.numpy()[0], [0.0, 0.0, 0.0, 1.0])


def test_quat_between_vectors_gradient_central_differences():
    rng = np.random.default_rng(9)
    a, b = _cases(rng)
    w = rng.normal(size=(6, 4))
    av = wp.array(a, dtype=wp.vec3d, requires_grad=True)
    bv = wp.array(b, dtype=wp.vec3d, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(k_between, 6, inputs=[av, bv, wp.array(w, dtype=wp.quatd), loss])
    tape.backward(loss)

    def f(a, b):
        return sum(_reference(x, y) @ wv for x, y, wv in zip(a, b, w))

    h = 1e-6
    for arr, grad, which in ((a, av.grad.numpy(), 0), (b, bv.grad.numpy(), 1)):
        fd = np.zeros_like(arr)
        for idx in np.ndindex(arr.shape):
            p, m = arr.copy(), arr.copy()
            p[idx] += h
            m[idx] -= h
            fd[idx] = ((f(p, b) - f(m, b)) if which == 0 else (f(a, p) - f(a, m))) / (2 * h)
        np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-8)
