"""wp.jax_kernel / wp.jax_callable (Warp 1.19's names and signatures; weft runs them as JAX host callbacks),
the JAX device mapping, and the graph / preload mode enums."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp

jax = pytest.importorskip("jax")
jp = pytest.importorskip("jax.numpy")


@wp.kernel
def triple(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = 3.0 * a[i]


@wp.kernel
def multi(a: wp.array(dtype=float), b: wp.array(dtype=float), s: float, x: wp.array(dtype=float),
          y: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    x[i] = a[i] * s + b[i]
    y[i] = wp.vec2(a[i], b[i] * b[i])


@wp.kernel
def inc_2d(a: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    i, j = wp.tid()
    out[i, j] = a[i, j] + 1.0


@wp.kernel
def accumulate(a: wp.array(dtype=float), acc: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    acc[i] = acc[i] + a[i]
    out[i] = 2.0 * a[i]


def scale_func(a: wp.array(dtype=float), b: wp.array(dtype=wp.vec2), s: float, c: wp.array(dtype=float),
               d: wp.array(dtype=wp.vec2)):
    wp.launch(scale_kernel, a.shape, inputs=[a, s], outputs=[c])
    wp.launch(scale_vec_kernel, b.shape, inputs=[b, s], outputs=[d])


@wp.kernel
def scale_kernel(a: wp.array(dtype=float), s: float, c: wp.array(dtype=float)):
    i = wp.tid()
    c[i] = a[i] * s


@wp.kernel
def scale_vec_kernel(a: wp.array(dtype=wp.vec2), s: float, c: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    c[i] = a[i] * s


def test_jax_kernel_single_output_under_jit():
    f = wp.jax_kernel(triple)
    assert wp.jax_kernel(triple) is f  # cached on its arguments, as in Warp
    out = jax.jit(lambda x: f(x))(jp.arange(7, dtype=jp.float32))
    assert isinstance(out, list) and len(out) == 1
    np.testing.assert_array_equal(np.asarray(out[0]), 3 * np.arange(7, dtype=np.float32))


def test_jax_kernel_static_scalar_vector_output():
    f = wp.jax_kernel(multi, num_outputs=2)
    a, b = np.arange(5, dtype=np.float32), np.linspace(1, 2, 5, dtype=np.float32)
    x, y = jax.jit(lambda a, b: f(a, b, 2.5))(a, b)
    np.testing.assert_allclose(np.asarray(x), a * 2.5 + b, rtol=1e-6)
    assert y.shape == (5, 2)
    np.testing.assert_allclose(np.asarray(y), np.stack([a, b * b], 1), rtol=1e-6)
    with pytest.raises(ValueError, match="static"):
        jax.jit(lambda a, b, s: f(a, b, s))(a, b, 1.0)
    with pytest.raises(TypeError, match="data type"):
        f(a.astype(np.float64), b, 1.0)
    with pytest.raises(ValueError, match="Expected 3 inputs"):
        f(a, b)


def test_jax_kernel_launch_and_output_dims():
    f = wp.jax_kernel(inc_2d, launch_dims=(3, 2))
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    (out,) = f(x)
    assert out.shape == (3, 2)
    np.testing.assert_array_equal(np.asarray(out), x[:3, :2] + 1)
    (out,) = f(x, launch_dims=(4, 5), output_dims=(4, 5))
    np.testing.assert_array_equal(np.asarray(out), x + 1)


def test_jax_kernel_in_out():
    f = wp.jax_kernel(accumulate, num_outputs=2, in_out_argnames=["acc"])
    a, acc = np.arange(4, dtype=np.float32), np.full(4, 10, np.float32)
    acc_out, out = jax.jit(f)(a, acc)
    np.testing.assert_array_equal(np.asarray(acc_out), acc + a)
    np.testing.assert_array_equal(np.asarray(out), 2 * a)
    with pytest.raises(ValueError, match="did not match"):
        wp.jax_kernel(accumulate, num_outputs=2, in_out_argnames=["nope"])
    with pytest.raises(ValueError, match="output-only"):
        wp.jax_kernel(accumulate, num_outputs=2, in_out_argnames=["out"])


def test_jax_kernel_vmap():
    f = wp.jax_kernel(triple)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    (out,) = jax.vmap(f)(x)
    np.testing.assert_array_equal(np.asarray(out), 3 * x)


def test_jax_kernel_backward_matches_finite_differences():
    f = wp.jax_kernel(multi, num_outputs=2, enable_backward=True)

    def loss(a, b):
        x, y = f(a, b, 2.0)
        return jp.sum(x * x) + jp.sum(y[:, 1] * y[:, 0])

    a, b = np.linspace(-1, 1, 6).astype(np.float32), np.linspace(0.5, 2, 6).astype(np.float32)
    ga, gb = jax.grad(loss, argnums=(0, 1))(a, b)
    # analytic, float64: x = 2a + b, y = (a, b^2); loss = sum x^2 + a b^2
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    x = 2 * a64 + b64
    np.testing.assert_allclose(np.asarray(ga), 4 * x + b64 ** 2, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(gb), 2 * x + 2 * a64 * b64, rtol=1e-5)
    with pytest.raises(NotImplementedError):
        wp.jax_kernel(accumulate, num_outputs=2, in_out_argnames=["acc"], enable_backward=True)
    for kw in ({"launch_dims": (6,)}, {"output_dims": (6,)}, {"vmap_method": "sequential"}):
        with pytest.raises(TypeError, match="enable_backward"):
            f(a, b, 2.0, **kw)


def test_jax_callable():
    f = wp.jax_callable(scale_func, num_outputs=2)
    a = np.arange(6, dtype=np.float32)
    b = np.arange(6, dtype=np.float32).reshape(3, 2)
    c, d = jax.jit(lambda a, b: f(a, b, 2.0, output_dims={"c": a.shape, "d": b.shape[:1]}))(a, b)
    np.testing.assert_array_equal(np.asarray(c), 2 * a)
    np.testing.assert_array_equal(np.asarray(d), 2 * b)
    # an output's dims may also be its whole JAX shape (the vector's trailing dimension included), as in Warp
    c, d = f(a, b, 2.0, output_dims={"c": a.shape, "d": b.shape})
    np.testing.assert_array_equal(np.asarray(d), 2 * b)
    with pytest.raises(ValueError, match="Invalid output dimensions"):
        f(a, b, 2.0, output_dims={"c": a.shape, "d": (3, 3)})
    assert wp.jax_callable(scale_func, num_outputs=2, graph_cache_max=4) is f and f.graph_cache_max == 4
    wp.clear_jax_callable_graph_cache(f)
    wp.clear_jax_callable_graph_cache()
    assert len(f.captures) == 0
    g = wp.jax_callable(scale_func, num_outputs=2, graph_mode=wp.JaxCallableGraphMode.WARP)
    with pytest.raises(ValueError, match="graph_mode"):
        g(a, b, 2.0, output_dims={"c": a.shape, "d": (3,)})
    with pytest.raises(TypeError, match="clear_jax_callable_graph_cache"):
        wp.clear_jax_callable_graph_cache(42)


def test_modes_and_devices():
    assert [m.value for m in wp.JaxCallableGraphMode] == [0, 1, 2, 3, 4]
    assert wp.JaxModulePreloadMode.ALL_DEVICES == 2 and wp.JaxModulePreloadMode.NONE == 0
    cpu = jax.local_devices(backend="cpu")[0]
    assert wp.device_to_jax("cpu") == cpu
    assert wp.device_from_jax(cpu) == wp.get_device("cpu")

    class Tpu:
        platform = "tpu"

    with pytest.raises(RuntimeError, match="tpu"):
        wp.device_from_jax(Tpu())


@wp.kernel
def triple_generic(a: wp.array(dtype=wp.Any), out: wp.array(dtype=wp.Any)):
    i = wp.tid()
    out[i] = a[i] * a.dtype(3)


def test_jax_kernel_of_a_generic_kernel_picks_the_overload():
    for dt in (wp.float32, wp.int32, wp.float64):
        wp.overload(triple_generic, [wp.array(dtype=dt), wp.array(dtype=dt)])
    f = wp.jax_kernel(triple_generic)
    (a,) = f(np.arange(4, dtype=np.int32))
    (b,) = f(np.arange(4, dtype=np.float32))
    assert a.dtype == np.int32 and b.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(a), 3 * np.arange(4))
    np.testing.assert_array_equal(np.asarray(b), 3 * np.arange(4))
    with pytest.raises(TypeError, match="wp.overload"):
        f(np.arange(4, dtype=np.int16))
