"""wp.config.verify_autograd_array_access: Warp's read/write tracking of arrays recorded on a Tape."""

import warnings

import numpy as np
import pytest

import weft as wp
from weft.runtime.access_check import AccessWarning


@wp.kernel
def square(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i]


@wp.kernel
def scale_in_place(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] * 2.0  # a write after a read of the same array


@pytest.fixture
def verify():
    saved = wp.config.verify_autograd_array_access
    wp.config.verify_autograd_array_access = True
    yield
    wp.config.verify_autograd_array_access = saved


def test_write_after_recorded_read_warns(verify):
    a = wp.array(np.array([1.0, 2.0, 3.0]), dtype=float, requires_grad=True)
    b = wp.zeros_like(a)
    tape = wp.Tape()
    with tape:
        wp.launch(square, 3, inputs=[a], outputs=[b])
        assert a._is_read and not b._is_read and a[1:]._is_read  # views share the flag
        with pytest.warns(AccessWarning, match="argument y in kernel square .* already been read from"):
            wp.launch(square, 3, inputs=[b], outputs=[a])
    tape.reset()  # forgets the recorded reads
    assert not a._is_read and not b._is_read
    with pytest.warns(AccessWarning, match="within the same kernel"), wp.Tape() as t2:
        wp.launch(scale_in_place, 3, inputs=[b])
    t2.reset()
    with wp.Tape():
        wp.launch(square, 3, inputs=[a], outputs=[b])
        with pytest.warns(AccessWarning, match="written to by an array copy at .*test_access_check.py"):
            wp.copy(a, b)


def test_no_warning_after_backward_or_when_off(verify):
    x = wp.array(np.array([1.0, 2.0, 3.0]), dtype=float, requires_grad=True)
    y = wp.zeros_like(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error", AccessWarning)
        for _ in range(2):  # backward consumes the reads: the second iteration's write to y does not warn
            tape = wp.Tape()
            with tape:
                wp.launch(square, 3, inputs=[x], outputs=[y])
            tape.backward(grads={y: wp.ones_like(y)})
            np.testing.assert_allclose(x.grad.numpy(), 2.0 * x.numpy())
            tape.zero()
        wp.config.verify_autograd_array_access = False
        with wp.Tape():
            wp.launch(square, 3, inputs=[x], outputs=[y])
            wp.launch(square, 3, inputs=[y], outputs=[x])
        assert not x._is_read


@wp.kernel
def _access_kinds(a: wp.array(dtype=float), b: wp.array(dtype=float), c: wp.array(dtype=float), s: float):
    i = wp.tid()
    v = b[i:][0]  # read through a view
    wp.atomic_add(c, i, v * s)
    a[i] = v


def test_kernel_adj_args_report_array_access():
    args = _access_kinds.adj.args
    assert [x.label for x in args] == ["a", "b", "c", "s"]
    assert [(x.is_read, x.is_write) for x in args] == [(False, True), (True, False), (False, True), (False, False)]
