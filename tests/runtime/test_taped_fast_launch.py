"""Launches on a Tape take the CPU fast launch path (runtime/launch.py) and are recorded exactly as the general path
records them: the gradients, the recorded launch and the overwrite check are the same whichever path ran."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp
from weft.runtime import launch as L
from weft.runtime.tape import LaunchRecord, OverwriteError


@wp.kernel
def _scaled_square(x: wp.array(dtype=wp.vec3), s: float, y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.dot(x[i], x[i]) * s


def _grad(general: bool, monkeypatch):
    fast = L._launch_fast
    taken = []

    def counted(f, dim, i, o, d, rec, bd=256):
        if general and rec and L.active_tape.get() is not None:
            return False  # the path taped launches took before: the general one
        ran = fast(f, dim, i, o, d, rec, bd)
        taken.append(ran and L.active_tape.get() is not None)
        return ran

    monkeypatch.setattr(L, "_launch_fast", counted)
    x = wp.array(np.arange(12, dtype=np.float32).reshape(4, 3) * 0.1, dtype=wp.vec3, requires_grad=True)
    y = wp.zeros(4, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        for _ in range(2):  # the second launch of the kernel: its fast path is enabled by then
            wp.launch(_scaled_square, dim=4, inputs=[x, 3.0], outputs=[y])
    tape.backward(grads={y: wp.ones(4, dtype=float)})
    assert any(taken) != general  # the fast path recorded a taped launch (or, forced off, none)
    return tape, x


@pytest.mark.parametrize("general", [False, True])
def test_taped_launches_record_and_differentiate(general, monkeypatch):
    tape, x = _grad(general, monkeypatch)
    assert [type(r) for r in tape.launches] == [LaunchRecord, LaunchRecord]
    assert [r.dims for r in tape.launches] == [(4,), (4,)]
    # d/dx of 3 x.x: the second store overwrote the first, which consumes its gradient: 6 x once
    np.testing.assert_allclose(x.grad.numpy(), 6.0 * x.numpy(), rtol=1e-6)


def test_taped_fast_launch_sees_later_overwrites():
    x = wp.array(np.ones((4, 3), dtype=np.float32), dtype=wp.vec3, requires_grad=True)
    y = wp.zeros(4, dtype=float, requires_grad=True)
    wp.launch(_scaled_square, dim=4, inputs=[x, 1.0], outputs=[y])  # untaped: the fast path is on
    tape = wp.Tape()
    with tape:
        wp.launch(_scaled_square, dim=4, inputs=[x, 1.0], outputs=[y])
    x.fill_(2.0)  # overwrites what the recorded launch read
    with pytest.raises(OverwriteError):
        tape.backward(grads={y: wp.ones(4, dtype=float)})
