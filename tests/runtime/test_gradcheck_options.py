"""wp.autograd: inputs restored around Jacobians, rows/columns not evaluated are NaN, disabled backward raises."""

import numpy as np
import pytest

import weft as wp
from weft.autograd import gradcheck, jacobian, jacobian_fd


@wp.kernel
def _increment(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] + 1.0


@wp.kernel
def _square(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i]


@wp.kernel(enable_backward=False)
def _square_no_backward(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i]


def _mutating(x):
    wp.launch(_increment, dim=x.shape, inputs=[x])
    y = wp.zeros_like(x)
    wp.launch(_square, dim=x.shape, inputs=[x], outputs=[y])
    return y


def test_inputs_restored_and_unevaluated_entries_nan():
    x0 = np.arange(1.0, 5.0, dtype=np.float32)
    x = wp.array(x0, requires_grad=True)
    expected = np.diag(2.0 * (x0.astype(np.float64) + 1.0))  # every evaluation starts from x0, then adds one
    ad = jacobian(_mutating, inputs=[x], max_outputs_per_var=3)[0, 0]
    np.testing.assert_allclose(ad[:3], expected[:3], rtol=1e-6)
    assert np.isnan(ad[3:]).all()
    np.testing.assert_array_equal(x.numpy(), x0)
    fd = jacobian_fd(_mutating, inputs=[x], max_inputs_per_var=2, eps=1e-2)[0, 0]
    np.testing.assert_allclose(fd[:, :2], expected[:, :2], atol=2e-3)
    assert np.isnan(fd[:, 2:]).all()
    np.testing.assert_array_equal(x.numpy(), x0)
    assert gradcheck(_mutating, inputs=[x], show_summary=False, eps=1e-2, atol=1e-2)
    # without restoring, every probe starts from drifted values and the check fails
    assert not gradcheck(_mutating, inputs=[x], restore_inputs=False, raise_exception=False, show_summary=False)
    with pytest.raises(ValueError, match="bogus"):
        jacobian(_mutating, inputs=[x], input_output_mask=[("bogus", 0)])


def test_backward_disabled_kernel():
    x = wp.array([1.0, 2.0], dtype=float, requires_grad=True)
    y = wp.zeros(2, dtype=float, requires_grad=True)
    with pytest.raises(ValueError, match="backward pass enabled"):
        jacobian(_square_no_backward, dim=2, inputs=[x], outputs=[y])
    fd = jacobian_fd(_square_no_backward, dim=2, inputs=[x], outputs=[y], eps=1e-2)[0, 0]
    np.testing.assert_allclose(fd, np.diag([2.0, 4.0]), atol=1e-3)


@wp.struct
class _Pair:
    x: wp.array(dtype=float)
    y: wp.array(dtype=float)


@wp.kernel
def _pair_product(p: _Pair, z: wp.array(dtype=float)):
    i = wp.tid()
    z[i] = p.x[i] * p.y[i]


def test_tape_gradients_of_a_struct_argument_survive_reset():
    tape = wp.Tape()
    p = _Pair()
    p.x = wp.array([1.0, 2.0], dtype=float, requires_grad=True)
    p.y = wp.array([3.0, 5.0], dtype=float, requires_grad=True)
    z = wp.zeros(2, dtype=float, requires_grad=True)
    with tape:
        wp.launch(_pair_product, dim=2, inputs=[p], outputs=[z])
    tape.backward(grads={z: wp.ones(2, dtype=float)})
    g = tape.gradients[p]  # a _Pair of the gradients: d(x*y)/dx = y, d/dy = x
    assert isinstance(g, _Pair)
    np.testing.assert_array_equal(g.x.numpy(), [3.0, 5.0])
    np.testing.assert_array_equal(g.y.numpy(), [1.0, 2.0])
    tape.reset()  # launches forgotten, gradients zeroed and still reachable while the arrays live
    assert not tape.launches
    np.testing.assert_array_equal(tape.gradients[p].x.numpy(), [0.0, 0.0])


def test_tape_visualize_folds_repeats_and_names_scopes(tmp_path):
    x = wp.array([1.0, 2.0], dtype=float, requires_grad=True)
    y = wp.zeros(2, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        tape.record_scope_begin("squares")
        for _ in range(3):
            wp.launch(_square, dim=2, inputs=[x], outputs=[y])
        tape.record_scope_end()
    path = tmp_path / "tape.dot"
    dot = tape.visualize(str(path), array_labels={x: "input_x"})
    assert path.read_text() == dot and dot.startswith("digraph")
    assert dot.count("_square") == 1 and "(repeated 3x)" in dot and 'label="squares"' in dot
    assert 'label="input_x"' in dot and "array: dtype=float32, shape=(2,)" in dot
    assert dot.count("->") == 2  # x -> launch -> y


def test_jacobians_keep_the_read_flags_of_a_pending_tape():
    old = wp.config.verify_autograd_array_access
    wp.config.verify_autograd_array_access = True
    try:
        for jacobian_function in (jacobian, jacobian_fd):
            x = wp.array([1.0, 2.0], dtype=float, requires_grad=True)
            y = wp.zeros(2, dtype=float, requires_grad=True)
            with wp.Tape():
                wp.launch(_square, dim=2, inputs=[x], outputs=[y])
            assert x._is_read
            jacobian_function(_square, dim=2, inputs=[x], outputs=[wp.zeros(2, dtype=float, requires_grad=True)])
            assert x._is_read  # the check's own tape does not clear the pending tape's flag
    finally:
        wp.config.verify_autograd_array_access = old
