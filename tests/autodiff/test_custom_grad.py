"""``@wp.func_grad`` and ``@wp.func_replay``: the backward pass runs the user's gradient (not the derivative of the
func's body) and the replay func, against float64 NumPy references. One kernel, two launches."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp


@wp.func
def clipped_square(x: float):
    return x * x


@wp.func_grad(clipped_square)
def adj_clipped_square(x: float, adj_ret: float):
    # a deliberately different derivative (clipped at 1), so the test tells the custom rule from autodiff's
    wp.adjoint[x] += adj_ret * wp.min(2.0 * x, 1.0)


@wp.func
def counted(x: float, calls: wp.array(dtype=float)):
    wp.atomic_add(calls, 0, 1.0)
    return 3.0 * x


@wp.func_replay(counted)
def replay_counted(x: float, calls: wp.array(dtype=float)):
    return 3.0 * x  # the backward recomputes without counting


@wp.kernel
def k_custom(x: wp.array(dtype=float), calls: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = clipped_square(x[i]) + counted(x[i], calls)


def test_custom_gradient_and_replay():
    xs = np.array([-1.0, 0.25, 0.5, 2.0])
    x = wp.array(xs.astype(np.float32), requires_grad=True)
    calls = wp.zeros(1, dtype=float)
    y = wp.zeros(4, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(k_custom, 4, inputs=[x, calls], outputs=[y])
    np.testing.assert_allclose(y.numpy(), xs * xs + 3.0 * xs, rtol=1e-6)
    tape.backward(grads={y: wp.array(np.ones(4, np.float32))})
    np.testing.assert_allclose(x.grad.numpy(), np.minimum(2.0 * xs, 1.0) + 3.0, rtol=1e-6)
    assert calls.numpy()[0] == 4.0  # the forward counted once per thread; the replay did not


# ---------------------------------------------------------------------------------------------- wp.adjoint forms
@wp.struct
class Body:
    m: wp.float64
    v: wp.vec3d


@wp.func
def energy(a: wp.float64, b: wp.float64):
    return a * b


@wp.func_grad(energy)
def adj_energy(a: wp.float64, b: wp.float64, adj_ret: wp.float64):
    wp.adjoint[a] += b * adj_ret
    wp.adjoint[b] += a * adj_ret + 0.0 * energy(a, b)  # a gradient func may call the func it differentiates


@wp.func
def energy(s: Body):  # an overload: func_grad below goes to it, not to the scalar one above
    return s.m * s.v[1] * s.v[1]


@wp.func_grad(energy)
def adj_energy_body(s: Body, adj_ret: wp.float64):
    wp.adjoint[s.m] += s.v[1] * s.v[1] * adj_ret
    wp.adjoint[s.v][1] += 2.0 * s.m * s.v[1] * adj_ret


@wp.func
def square_into(i: int, xs: wp.array(dtype=wp.float64), ys: wp.array(dtype=wp.float64)):  # no result
    ys[i] = xs[i] * xs[i]


@wp.func_grad(square_into)
def adj_square_into(i: int, xs: wp.array(dtype=wp.float64), ys: wp.array(dtype=wp.float64)):
    wp.adjoint[xs][i] += 2.0 * xs[i] * wp.adjoint[ys][i]  # arrays: gradient element adds and gradient reads


@wp.kernel
def k_adjoint_forms(xs: wp.array(dtype=wp.float64), bodies: wp.array(dtype=Body), ys: wp.array(dtype=wp.float64),
                    out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    square_into(i, xs, ys)
    out[i] = energy(xs[i], 3.0 * xs[i]) + energy(bodies[i])


def _forward(xs, ms, vs):
    return xs * xs, 3.0 * xs * xs + ms * vs[:, 1] ** 2


def test_adjoint_fields_components_arrays_and_overloads_match_central_differences():
    rng = np.random.default_rng(7)
    xs, ms, vs = rng.uniform(0.5, 2.0, 4), rng.uniform(0.5, 2.0, 4), rng.uniform(-1.0, 1.0, (4, 3))
    bodies = []
    for m, v in zip(ms, vs):
        b = Body()
        b.m, b.v = float(m), wp.vec3d(*v)
        bodies.append(b)
    x = wp.array(xs, dtype=wp.float64, requires_grad=True)
    body = wp.array(bodies, dtype=Body, requires_grad=True)
    ys = wp.zeros(4, dtype=wp.float64, requires_grad=True)
    out = wp.zeros(4, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(k_adjoint_forms, 4, inputs=[x, body], outputs=[ys, out])
    y_ref, out_ref = _forward(xs, ms, vs)
    np.testing.assert_allclose(ys.numpy(), y_ref, rtol=1e-14)
    np.testing.assert_allclose(out.numpy(), out_ref, rtol=1e-14)
    w_y, w_out = rng.uniform(0.5, 1.5, 4), rng.uniform(0.5, 1.5, 4)
    tape.backward(grads={ys: wp.array(w_y, dtype=wp.float64), out: wp.array(w_out, dtype=wp.float64)})

    def loss(xs_, ms_, vs_):
        a, b = _forward(xs_, ms_, vs_)
        return float(w_y @ a + w_out @ b)

    h = 1e-6
    for k in range(4):
        e = np.zeros(4)
        e[k] = h
        fd_x = (loss(xs + e, ms, vs) - loss(xs - e, ms, vs)) / (2 * h)
        fd_m = (loss(xs, ms + e, vs) - loss(xs, ms - e, vs)) / (2 * h)
        ev = np.zeros((4, 3))
        ev[k, 1] = h
        fd_v = (loss(xs, ms, vs + ev) - loss(xs, ms, vs - ev)) / (2 * h)
        assert x.grad.numpy()[k] == pytest.approx(fd_x, rel=1e-6, abs=1e-8)
        g = body.grad.numpy()[k]
        assert g["m"] == pytest.approx(fd_m, rel=1e-6, abs=1e-8)
        assert g["v"][1] == pytest.approx(fd_v, rel=1e-6, abs=1e-8)
        assert g["v"][0] == 0.0 and g["v"][2] == 0.0


# ---------------------------------------------------------------------------------------------- replay of saved values
@wp.func
def take_slot(counter: wp.array(dtype=int), tids: wp.array(dtype=int), tid: int):
    s = wp.atomic_add(counter, 0, 1)
    tids[tid] = s  # saved by the forward ...
    return s


@wp.func_replay(take_slot)
def replay_take_slot(counter: wp.array(dtype=int), tids: wp.array(dtype=int), tid: int):
    return tids[tid]  # ... and read back by the backward replay (Warp's reversible_increment pattern)


@wp.kernel
def k_slots(x: wp.array(dtype=wp.float64), counter: wp.array(dtype=int), tids: wp.array(dtype=int),
            y: wp.array(dtype=wp.float64)):
    tid = wp.tid()
    s = take_slot(counter, tids, tid)
    y[s] = x[tid] * x[tid]


def test_replay_reads_what_its_launch_saved_even_after_a_later_launch_overwrote_it():
    n = 6
    rng = np.random.default_rng(5)
    x1, x2 = (wp.array(rng.uniform(0.5, 2.0, n), dtype=wp.float64, requires_grad=True) for _ in range(2))
    tids = wp.zeros(n, dtype=int)
    y1, y2 = (wp.zeros(2 * n, dtype=wp.float64, requires_grad=True) for _ in range(2))
    second = wp.array([n], dtype=int)  # the second launch hands out slots n..2n-1: it overwrites every saved slot
    tape = wp.Tape()
    with tape:
        wp.launch(k_slots, n, inputs=[x1, wp.zeros(1, dtype=int), tids], outputs=[y1])
        slots1 = tids.numpy().copy()
        wp.launch(k_slots, n, inputs=[x2, second, tids], outputs=[y2])
    slots2 = tids.numpy().copy()
    assert sorted(slots1) == list(range(n)) and sorted(slots2) == list(range(n, 2 * n))
    w1, w2 = rng.uniform(0.5, 1.5, 2 * n), rng.uniform(0.5, 1.5, 2 * n)
    tape.backward(grads={y1: wp.array(w1, dtype=wp.float64), y2: wp.array(w2, dtype=wp.float64)})
    np.testing.assert_allclose(x1.grad.numpy(), 2.0 * x1.numpy() * w1[slots1], rtol=1e-14)
    np.testing.assert_allclose(x2.grad.numpy(), 2.0 * x2.numpy() * w2[slots2], rtol=1e-14)


# ---------------------------------------------------------------------------------------------------------------
# plain stores into adjoints (wp.adjoint[x.vec].y = v) and component updates of gradient arrays


@wp.struct
class _VecHolder:
    vec: wp.vec3


@wp.func
def _sum_vec(x: _VecHolder):
    return x.vec[0] + x.vec[1] + x.vec[2]


@wp.func_grad(_sum_vec)
def _sum_vec_grad(x: _VecHolder, adj_ret: float):
    wp.adjoint[x.vec][0] += adj_ret  # accumulated, then overwritten whole by the store below
    wp.adjoint[x.vec] = wp.vec3(0.0, 0.0, 3.0) * adj_ret
    wp.adjoint[x.vec].y = adj_ret * 5.0


@wp.func
def _lookup_x(values: wp.array(dtype=wp.vec3), i: int):
    return values[i].x


@wp.func_grad(_lookup_x)
def _lookup_x_grad(values: wp.array(dtype=wp.vec3), i: int, adj_ret: float):
    wp.adjoint[values][i].y += adj_ret * 2.0
    wp.adjoint[values][i].z = -1.0


@wp.kernel
def _k_adjoint_stores(xs: wp.array(dtype=_VecHolder), values: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = _sum_vec(xs[i]) + _lookup_x(values, i)


def test_adjoint_stores_and_gradient_array_components():
    h = _VecHolder()
    h.vec = wp.vec3(1.0, 2.0, 3.0)
    xs = wp.array([h, h], dtype=_VecHolder, requires_grad=True)
    values = wp.zeros(2, dtype=wp.vec3, requires_grad=True)
    out = wp.zeros(2, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(_k_adjoint_stores, dim=2, inputs=[xs, values], outputs=[out])
    tape.backward(grads={out: wp.array([1.0, 2.0], dtype=float)})
    np.testing.assert_allclose(xs.grad.numpy()["vec"], [[0.0, 5.0, 3.0], [0.0, 10.0, 6.0]])
    np.testing.assert_allclose(values.grad.numpy(), [[0.0, 2.0, -1.0], [0.0, 4.0, -1.0]])


# custom gradients and replays of funcs specialised by a wp.Function argument (Warp rejects them)
@wp.func
def _dbl(x: float):
    return 2.0 * x


@wp.func
def _apply(g: wp.Function, x: float):
    return g(x)


@wp.func_grad(_apply)
def _adj_apply(g: wp.Function, x: float, adj_ret: float):
    wp.adjoint[x] += adj_ret * 3.0


@wp.func
def _apply_r(g: wp.Function, x: float):
    return g(x)


@wp.func_replay(_apply_r)
def _rep_apply(g: wp.Function, x: float):
    return g(x)


@wp.kernel
def _k_function_targets(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = _apply(_dbl, x[i]) + _apply_r(_dbl, x[i]) * x[i]


def test_custom_gradient_and_replay_of_function_specialised_funcs():
    x = wp.array([1.0, 2.0], dtype=float, requires_grad=True)
    out = wp.zeros(2, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(_k_function_targets, 2, inputs=[x, out])
    tape.backward(grads={out: wp.ones(2, dtype=float)})
    np.testing.assert_allclose(out.numpy(), [4.0, 12.0])  # 2x + 2x^2
    np.testing.assert_allclose(x.grad.numpy(), [7.0, 11.0])  # the custom 3, plus d(2x^2)/dx = 4x
