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
