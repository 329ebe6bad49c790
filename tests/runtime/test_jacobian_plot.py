"""wp.autograd.jacobian / jacobian_fd against the analytic Jacobian, and jacobian_plot's figure layout."""

import numpy as np
import pytest

import weft as wp
from weft.autograd import jacobian, jacobian_fd, jacobian_plot
from weft.runtime.jacobian_plot import FunctionMetadata

plt = pytest.importorskip("matplotlib.pyplot")


@wp.kernel
def _mix(a: wp.array(dtype=float), b: wp.array(dtype=wp.vec3), o1: wp.array(dtype=wp.vec2),
         o2: wp.array(dtype=float)):
    i = wp.tid()
    o1[i] = wp.vec2(a[i] * b[i][0], b[i][1] + b[i][2])
    o2[i] = 3.0 * a[i]


def test_jacobians_and_plot(monkeypatch):
    monkeypatch.setattr(plt, "show", lambda: None)
    a = wp.array([1.0, 2.0], dtype=float, requires_grad=True)
    bv = np.array([[3.0, 1.0, 2.0], [-4.0, -1.0, 0.5]], np.float32)
    b = wp.array(bv, dtype=wp.vec3, requires_grad=True)
    o1, o2 = wp.zeros(2, dtype=wp.vec2, requires_grad=True), wp.zeros(2, dtype=float, requires_grad=True)
    ad = jacobian(_mix, dim=2, inputs=[a, b], outputs=[o1, o2], plot_jacobians=True)
    fd = jacobian_fd(_mix, dim=2, inputs=[a, b], outputs=[o1, o2], eps=1e-3)
    ref_a_o1 = np.zeros((4, 2))
    ref_a_o1[0, 0], ref_a_o1[2, 1] = bv[0, 0], bv[1, 0]
    np.testing.assert_allclose(ad[(0, 0)].numpy(), ref_a_o1)  # Warp's .numpy() on the result works
    np.testing.assert_allclose(ad[(0, 1)], 3.0 * np.eye(2))
    for k in ad:
        np.testing.assert_allclose(ad[k], fd[k], atol=1e-2)
    fig = plt.gcf()
    assert fig.get_suptitle() == "_mix kernel Jacobian"
    assert fig.axes[0].get_xlabel() == "a" and fig.axes[0].get_ylabel() == "o1"
    assert fig.axes[0].get_gridspec().get_width_ratios() == [2, 6]
    assert fig.axes[0].get_gridspec().get_height_ratios() == [4, 2]
    assert len(fig.axes) == 5  # four blocks and one shared colorbar
    plt.close("all")
    meta = FunctionMetadata(key=None, input_labels=["x"], output_labels=["y"], input_dtypes=[wp.float32],
                            output_dtypes=[wp.float32])
    f2 = jacobian_plot({(0, 0): np.ones((1, 1))}, meta, show_plot=False, show_colorbar=False)
    assert f2.get_suptitle() == "unknown kernel Jacobian" and len(f2.axes) == 1
    with pytest.raises(ValueError, match="missing label"):
        jacobian_plot({(0, 0): np.ones((1, 1))}, FunctionMetadata(input_labels=[None], output_labels=["y"],
                                                                   input_dtypes=[wp.float32]), show_plot=False)
    plt.close("all")
