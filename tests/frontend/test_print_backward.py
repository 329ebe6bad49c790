"""print in kernels uses Warp's formats, and a backward launch prints as Warp's does: the replay prints what the forward
printed (print and printf), the reverse sweep prints "adj: " and the adjoint of each printed value at that point."""

from typing import Any

import numpy as np

import weft as wp


@wp.struct
class _Pair:
    x: float
    y: float


@wp.kernel
def _show(x: Any):
    print(x)


@wp.kernel
def _chain(x: wp.array(dtype=float), v: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    z = x[0] * 2.0
    print(z)
    w = v[0]
    print("w", w)
    wp.printf("pf %.2f\n", x[0])
    out[0] = z * 3.0 + wp.dot(w, wp.vec3(1.0, 2.0, 3.0))


def _run(capfd, fn):
    fn()
    wp.synchronize()
    return capfd.readouterr().out


def test_forward_formats(capfd):
    cases = [(wp.vec3(1.0, 2.0, 3.0), "1 2 3 \n"), (wp.mat22(1.0, 2.0, 3.0, 4.0), "1 2 \n3 4 \n"),
             (wp.quat(1.0, 2.0, 3.0, 4.0), "1 2 3 4\n"),
             (wp.transform(wp.vec3(1.0, 2.0, 3.0), wp.quat(0.0, 0.0, 0.0, 1.0)), "(1 2 3) (0 0 0 1)\n"),
             (_Pair(), "<type without print implementation>\n"),
             (wp.zeros(2, dtype=float), "<type without print implementation>\n")]
    for value, text in cases:
        assert _run(capfd, lambda v=value: wp.launch(_show, dim=1, inputs=[v])) == text


def test_backward_replays_prints_and_prints_adjoints(capfd):
    x = wp.array([1.5], dtype=float, requires_grad=True)
    v = wp.array([[1.0, 2.0, 3.0]], dtype=wp.vec3, requires_grad=True)
    out = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(_chain, dim=1, inputs=[x, v, out])
    assert _run(capfd, lambda: None) == "3\nw 1 2 3 \npf 1.50\n"
    out.grad.fill_(1.0)
    got = _run(capfd, tape.backward)
    # the replay prints again; the reverse sweep meets the prints last-first: w's adjoint is d out / d w = (1, 2, 3),
    # z's is 3, the seed of out times dz
    assert got == "3\nw 1 2 3 \npf 1.50\nadj: w 1 2 3\nadj: 3\n"
    np.testing.assert_allclose(x.grad.numpy(), [6.0])


def test_backward_adjoint_formats(capfd):
    for value, text in [(wp.float32(17.0), "17\nadj: 0\n"), (wp.vec2(1.0, 2.0), "1 2 \nadj: 0 0\n"),
                        (wp.mat22(1.0, 2.0, 3.0, 4.0), "1 2 \n3 4 \nadj: 0 0\n     0 0\n"),
                        (True, "True\nadj: False\n"),
                        (_Pair(), "<type without print implementation>\nadj: <type without print implementation>\n")]:
        got = _run(capfd, lambda v=value: wp.launch(_show, dim=1, inputs=[v], adjoint=True, adj_inputs=[v]))
        assert got == text
