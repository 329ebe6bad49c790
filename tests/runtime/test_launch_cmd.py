"""``wp.Launch``: recorded launches (``record_cmd=True``), Warp's empty ``wp.Launch(kernel, device, adjoint=...)``
filled with ``set_param_by_name`` / ``set_dim``, and adjoint launch objects."""

import numpy as np
import pytest

import weft as wp


@wp.kernel
def _scale(x: wp.array(dtype=float), v: wp.vec3, q: wp.quat, y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i] * (1.0 + v[0] + q[3])


def test_empty_launch_forward_and_adjoint():
    x = wp.array([1.0, 2.0, 3.0], dtype=float, requires_grad=True)
    y = wp.zeros(3, dtype=float, requires_grad=True)
    cmd = wp.Launch(_scale, "cpu")
    cmd.set_param_by_name("x", x)
    with pytest.raises(wp.Error, match="'y'"):
        cmd.set_dim(3)
        cmd.launch()  # y not set yet
    cmd.set_param_by_name("y", y)
    cmd.launch()  # v and q default to zero (not the identity quaternion)
    np.testing.assert_array_equal(y.numpy(), [1.0, 4.0, 9.0])
    with pytest.raises(RuntimeError, match="argument 'v' expects vec3f but got a single value"):
        cmd.set_param_by_name("v", 2.0)
    cmd.set_param_by_name("v", wp.vec3(1.0, 0.0, 0.0))
    cmd.launch()
    np.testing.assert_array_equal(y.numpy(), [2.0, 8.0, 18.0])

    adj = wp.Launch(_scale, "cpu", adjoint=True)
    gx, gy = wp.zeros(3, dtype=float), wp.ones(3, dtype=float)
    for name, value in (("x", x), ("y", y), ("v", wp.vec3(1.0, 0.0, 0.0))):
        adj.set_param_by_name(name, value)
    adj.set_param_by_name("x", gx, adjoint=True)
    adj.set_param_by_name("y", gy, adjoint=True)
    adj.set_dim(3)
    adj.launch()
    np.testing.assert_allclose(gx.numpy(), 4.0 * x.numpy())  # d(2 x^2)/dx

    x.grad.zero_()
    y.grad.fill_(1.0)
    rec = wp.launch(_scale, dim=3, inputs=[x, wp.vec3(0.0), wp.quat(0.0, 0.0, 0.0, 1.0), y], adjoint=True,
                    adj_inputs=[None, None, None, None], record_cmd=True)
    rec.launch()
    np.testing.assert_allclose(x.grad.numpy(), 4.0 * x.numpy())


def test_params_and_kernel_side_forms():
    x = wp.array([1.0, 2.0, 3.0], dtype=float)
    y = wp.zeros(3, dtype=float)
    cmd = wp.Launch(_scale, "cpu")
    cmd.set_dim(3)
    cmd.set_param_by_name_from_ctype("x", x.__ctype__())  # the descriptor bytes
    cmd.set_param_at_index_from_ctype(1, wp.vec3(1.0, 0.0, 0.0))  # a plain value
    cmd.set_param_by_name("y", y)
    cmd.launch()
    np.testing.assert_array_equal(y.numpy(), [2.0, 8.0, 18.0])
    assert cmd.params[0] == (3,) and cmd.params[1] == x.__ctype__() and cmd.params[4] is y
    with pytest.raises(wp.Error, match="8 bytes given, its kernel-side form takes 72"):
        cmd.set_param_at_index_from_ctype(0, bytes(8))

    adj = wp.Launch(_scale, "cpu", adjoint=True)
    zeros = adj.params[5:]  # after the dims and the four parameters: their adjoints
    assert zeros[0] is None and zeros[3] is None
    np.testing.assert_array_equal(np.array(zeros[1]), np.zeros(3))
    np.testing.assert_array_equal(np.array(zeros[2]), np.zeros(4))
    with pytest.raises(ValueError, match="Failed to convert argument for param v to vec3f"):
        wp.launch(_scale, 3, inputs=[x, None, wp.quat_identity(), y])
