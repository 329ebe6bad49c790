"""JAX interop: DLPack zero-copy, and the custom_vjp wrappers checked with jax.test_util.check_grads."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp
from weft.interop import api

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
from jax.test_util import check_grads

from weft.interop.jax import function, kernel_op


@pytest.fixture(scope="module", autouse=True)
def x64():
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", old)


@wp.kernel
def poly(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = x[i] * x[i] * x[i] + wp.sin(x[i])


@wp.kernel
def spring_energy(p: wp.array(dtype=wp.vec3d), k: wp.float64, e: wp.array(dtype=wp.float64)):
    i = wp.tid()
    n = p.shape[0]
    d = p[i] - p[(i + 1) % n]
    e[i] = k * wp.dot(d, d)


poly_op = kernel_op(poly)


@function
def springs(p: wp.array(dtype=wp.vec3d), k: float = 1.0):
    e = wp.zeros(p.shape[0], dtype=wp.float64, requires_grad=True)
    wp.launch(spring_energy, p.shape[0], inputs=[p, k], outputs=[e])
    return e


def test_to_jax_zero_copy():
    a = wp.array(np.arange(8, dtype=np.float32))
    j = api.to_jax(a)
    assert j.unsafe_buffer_pointer() == a.ptr
    a.numpy()[3] = 42.0  # write through weft, read through JAX
    assert float(j[3]) == 42.0


def test_from_jax_zero_copy():
    j = jnp.arange(6.0)
    a = api.from_jax(j)
    assert a.ptr == j.unsafe_buffer_pointer()
    a.numpy()[2] = -5.0
    assert float(j[2]) == -5.0


def test_vec3_from_jax():
    j = jnp.asarray(np.random.default_rng(0).random((4, 3)).astype(np.float32))
    a = api.from_jax(j, dtype=wp.vec3)
    assert a.shape == (4,) and a.dtype == wp.vec3
    back = api.to_jax(a)
    assert back.shape == (4, 3)
    np.testing.assert_array_equal(np.asarray(back), np.asarray(j))


def test_kernel_op_values_and_grads():
    x = jnp.linspace(0.1, 1.0, 7)
    np.testing.assert_allclose(poly_op(x), x**3 + jnp.sin(x), rtol=1e-12)
    check_grads(poly_op, (x,), order=1, modes=["rev"])


def test_vec3_function_grads_under_jit():
    p = jnp.asarray(np.random.default_rng(1).random((5, 3)))
    check_grads(lambda p: springs(p, k=2.0), (p,), order=1, modes=["rev"])
    g = jax.jit(jax.grad(lambda p: springs(p, k=2.0).sum()))(p)
    d = p - jnp.roll(p, -1, axis=0)
    expected = 2.0 * 2 * (d - jnp.roll(d, 1, axis=0))
    np.testing.assert_allclose(g, expected, rtol=1e-10)


def test_mixing_with_jax_ops():
    x = jnp.linspace(-1.0, 1.0, 5)
    check_grads(lambda x: jnp.sum(jnp.tanh(poly_op(jnp.exp(x))) ** 2), (x,), order=1, modes=["rev"])


def test_explicit_out_specs():
    op = kernel_op(poly, out_specs=lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype))
    x = jnp.linspace(0.0, 1.0, 4)
    np.testing.assert_allclose(jax.jit(op)(x), x**3 + jnp.sin(x), rtol=1e-12)
