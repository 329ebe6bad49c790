"""Slice assignment into vectors and matrices in kernels (``v[1:3] = w``, ``m[:2, 1:] = n``, ``m[3:, -1:] -= ...``),
empty selections (a zero-length vector, a 0x0 matrix, as Warp), Warp's ValueErrors for mismatched values, and the
host forms. Values vs NumPy float64, gradients vs central differences."""

import re

import numpy as np
import pytest

import weft as wp

mat23d = wp.types.matrix((2, 3), wp.float64)
mat41d = wp.types.matrix((4, 1), wp.float64)
vec0d = wp.types.vector(0, wp.float64)
mat00d = wp.types.matrix((0, 0), wp.float64)


@wp.kernel
def slice_assign_k(xs: wp.array(dtype=wp.vec2d), ys: wp.array(dtype=mat23d), zs: wp.array(dtype=wp.mat44d),
                   cols: wp.array(dtype=mat41d), n: wp.array(dtype=int)):
    i = wp.tid()
    x = xs[i]
    y = ys[i]
    z = zs[i]
    z[0, :2] = x
    z[:2, 1:] = y  # overwrites z[0, 1] = x[1]: x[1] gets no gradient through it
    z[:2, 3] += x[:2]
    z[1:-1, :2] += y[::-1, :-1]
    z[2:, 3] -= x[0:]
    z[3:, -1:] -= y[:1, :1]
    z[5:, :] = mat00d()  # empty selections: nothing is written
    x[7:] = vec0d()
    zs[i] = z
    cols[i] = z[:, ::4]  # a one-column block
    e = z[9:]
    f = x[:-5]
    n[i] = wp.static(len(e)) * 10 + wp.static(len(f)) + wp.where(e == mat00d(), 100, 0)


def _reference(x, y, z):
    z = z.copy()
    z[0, :2] = x
    z[:2, 1:] = y
    z[:2, 3] += x[:2]
    z[1:-1, :2] += y[::-1, :-1]
    z[2:, 3] -= x[0:]
    z[3:, -1:] -= y[:1, :1]
    return z


def _run(x, y, z, tape=None):
    xs = wp.array(x[None], dtype=wp.vec2d, requires_grad=True)
    ys = wp.array(y[None], dtype=mat23d, requires_grad=True)
    zs = wp.array(z[None], dtype=wp.mat44d, requires_grad=True)
    cols = wp.zeros(1, dtype=mat41d)
    n = wp.zeros(1, dtype=int)
    if tape is None:
        wp.launch(slice_assign_k, 1, inputs=[xs, ys, zs, cols, n])
    else:
        with tape:
            wp.launch(slice_assign_k, 1, inputs=[xs, ys, zs, cols, n])
    return xs, ys, zs, cols, n


def test_slice_assignment_values_and_gradients_match_numpy_and_central_differences():
    rng = np.random.default_rng(3)
    x, y, z = rng.normal(size=2), rng.normal(size=(2, 3)), rng.normal(size=(4, 4))
    tape = wp.Tape()
    xs, ys, zs, cols, n = _run(x, y, z, tape)
    want = _reference(x, y, z)
    np.testing.assert_allclose(zs.numpy()[0], want, rtol=1e-15)
    np.testing.assert_allclose(cols.numpy()[0], want[:, :1], rtol=1e-15)
    assert n.numpy()[0] == 100  # len(z[9:]) == 0, len(x[:-5]) == 0, z[9:] == mat00
    w = rng.normal(size=(4, 4))  # loss = sum(w * z_out)
    tape.backward(grads={zs: wp.array(w[None], dtype=wp.mat44d)})
    h = 1e-6
    for arr, k_arg in ((xs, 0), (ys, 1)):
        base = [x, y]
        fd = np.zeros(base[k_arg].size)
        for k in range(fd.size):
            outs = []
            for sign in (1.0, -1.0):
                args = [x.copy(), y.copy()]
                args[k_arg].reshape(-1)[k] += sign * h
                outs.append(_run(args[0], args[1], z)[2].numpy()[0])
            fd[k] = np.sum(w * (outs[0] - outs[1])) / (2 * h)
        np.testing.assert_allclose(arr.grad.numpy().reshape(-1), fd, rtol=1e-7, atol=1e-9)
    # x[1] reaches z only through z[1, 3] (+) and z[3, 3] (-); its copy into z[0, 1] was overwritten
    np.testing.assert_allclose(xs.grad.numpy()[0, 1], w[1, 3] - w[3, 3], rtol=1e-12)


@wp.kernel
def wrong_dtype_k(out: wp.array(dtype=wp.vec4d)):
    v = wp.vec4d()
    v[1:] = wp.vec3f(5.0, 6.0, 7.0)
    out[0] = v


@wp.kernel
def scalar_into_slice_k(out: wp.array(dtype=wp.vec4d)):
    v = wp.vec4d()
    v[1:] = wp.float64(5.0)  # no broadcasting, as Warp
    out[0] = v


@wp.kernel
def wrong_length_k(out: wp.array(dtype=wp.vec4d)):
    v = wp.vec4d()
    v[1:] = wp.vec2d(5.0, 6.0)
    out[0] = v


@pytest.mark.parametrize("kernel, message", [
    (wrong_dtype_k, r"The provided vector is expected to be of length 3 with dtype float64\.$"),
    (scalar_into_slice_k, r"The provided value is expected to be a vector of length 3, with dtype float64\.$"),
    (wrong_length_k, (r"The length of the provided vector \(2\) isn't compatible with the given slice "
                      r"\(expected 3\)\.$")),
])
def test_slice_assignment_rejects_mismatched_values(kernel, message):
    with pytest.raises(ValueError) as e:
        wp.launch(kernel, 1, inputs=[wp.zeros(1, dtype=wp.vec4d)])
    assert re.search(message, str(e.value))  # str(e) is Warp's one line (the source excerpt is a note)


def test_matrix_block_assignment_rejects_shape_and_broadcast():
    @wp.kernel
    def bad_shape(out: wp.array(dtype=wp.mat44d)):
        m = wp.mat44d()
        m[:2, 1:] = wp.mat22d()
        out[0] = m

    with pytest.raises(ValueError) as e:
        wp.launch(bad_shape, 1, inputs=[wp.zeros(1, dtype=wp.mat44d)])
    assert re.search(r"The shape of the provided matrix \(\(2, 2\)\) isn't compatible with the given slice "
                     r"\(expected \(2, 3\)\)\.$", str(e.value))


def test_host_slices_transform_setters_and_typed_equality():
    v = wp.vec4d(1.0, 2.0, 3.0, 4.0)
    assert type(v[7:]).__name__ == "vec0d" and v[7:] == vec0d()
    m = wp.mat44d(*range(16))
    assert m[9:] == mat00d() and type(m[9:]) is mat00d
    assert isinstance(m[1:3], wp.types.matrix((2, 4), wp.float64))
    np.testing.assert_array_equal(np.asarray(m[1:3]), np.arange(16.0).reshape(4, 4)[1:3])
    np.testing.assert_array_equal(np.asarray(m[:, 2]), [2.0, 6.0, 10.0, 14.0])
    t = wp.transform_identity()
    wp.transform_set_translation(t, wp.vec3(1.0, 2.0, 3.0))  # on the host: in place, as Warp
    wp.transform_set_rotation(t, wp.quat(0.0, 0.0, 1.0, 0.0))
    np.testing.assert_array_equal(np.asarray(t), [1.0, 2.0, 3.0, 0.0, 0.0, 1.0, 0.0])

    @wp.kernel
    def mixed():
        wp.expect_neq(wp.vec3d(), wp.vec2d())

    with pytest.raises(RuntimeError) as e:
        wp.launch(mixed, 1)
    assert re.search(r"Can't test equality for objects with different types$", str(e.value))

    @wp.kernel
    def copy_precision():
        wp.transformd(wp.transformf())

    with pytest.raises(RuntimeError) as e:
        wp.launch(copy_precision, 1)
    assert re.search(r"copy constructing a transform requires matching source and target dtypes, got `float32` and "
                     r"`float64`$", str(e.value))
