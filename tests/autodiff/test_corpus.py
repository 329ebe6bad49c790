"""A corpus of tricky differentiation patterns. Each either matches float64 central differences (through
``wp.autograd.gradcheck``) or raises a clear weft error naming what went wrong.

Kernels are module-level so each compiles once per session. Inputs are float64 and drawn so that no sample sits
on a kink or a branch switch of the function it feeds.
"""

# no `from __future__ import annotations`: struct annotations are evaluated where they are defined

import numpy as np
import pytest

import weft as wp
from weft import autograd
from weft.runtime.tape import OverwriteError

f64 = wp.float64
TOL = {"eps": 1e-6, "atol": 1e-6, "rtol": 1e-5, "show_summary": False}


def arr(values, dtype=f64, grad=True):
    return wp.array(np.asarray(values, dtype=np.float64), dtype=dtype, requires_grad=grad)


def zeros(n, dtype=f64):
    return wp.zeros(n, dtype=dtype, requires_grad=True)


def check(kernel, dim, inputs, outputs, **kw):
    opts = dict(TOL)
    opts.update(kw)
    assert autograd.gradcheck(kernel, dim=dim, inputs=inputs, outputs=outputs, **opts)


def check_fn(fn, inputs, **kw):
    opts = dict(TOL)
    opts.update(kw)
    assert autograd.gradcheck(fn, inputs=inputs, **opts)


def rng(seed=0):
    return np.random.default_rng(seed)


# ================================================================================================ loops
@wp.kernel
def loop_product(x: wp.array(dtype=f64), n: int, out: wp.array(dtype=f64)):
    i = wp.tid()
    p = f64(1.0)
    for _k in range(n):
        p = p * x[i]
    out[i] = p


def test_01_loop_carried_scalar_runtime_n():
    x = arr([0.7, 1.3, -0.9])
    check(loop_product, 3, [x, 5], [zeros(3)])


@wp.kernel
def loop_vec3_state(v0: wp.array(dtype=wp.vec3d), w: wp.array(dtype=wp.vec3d), n: int,
                    out: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    v = v0[i]
    dt = f64(0.1)
    for _k in range(n):
        v = v + dt * wp.cross(w[i], v)
        v = v * (f64(1.0) / (f64(1.0) + dt * wp.length_sq(v)))
    out[i] = v


def test_02_loop_carried_vec3_state():
    r = rng(2)
    check(loop_vec3_state, 2, [arr(r.normal(size=(2, 3)), wp.vec3d), arr(r.normal(size=(2, 3)), wp.vec3d), 7],
          [zeros(2, wp.vec3d)])


@wp.kernel
def loop_break_on_data(x: wp.array(dtype=f64), n: int, out: wp.array(dtype=f64)):
    i = wp.tid()
    p = f64(1.0)
    for _k in range(n):
        p = p * x[i]
        if p > f64(100.0):
            break
    out[i] = p


def test_03_break_on_data():
    check(loop_break_on_data, 3, [arr([1.5, 2.1, 3.3]), 8], [zeros(3)])


@wp.kernel
def loop_continue(x: wp.array(dtype=f64), n: int, out: wp.array(dtype=f64)):
    i = wp.tid()
    s = f64(0.0)
    for k in range(n):
        if k % 3 == 1:
            continue
        s = s * x[i] + wp.sin(x[i] * f64(k))
    out[i] = s


def test_04_continue_with_carried_state():
    check(loop_continue, 3, [arr([0.3, -0.8, 1.1]), 7], [zeros(3)])


@wp.kernel
def return_in_loop(x: wp.array(dtype=f64), n: int, out: wp.array(dtype=f64)):
    i = wp.tid()
    s = f64(0.0)
    for _k in range(n):
        s = s + x[i] * s + x[i]
        if s > f64(4.0):
            out[i] = s * s
            return
    out[i] = s


def test_05_early_return_from_kernel_loop():
    check(return_in_loop, 3, [arr([0.5, 1.2, 0.1]), 6], [zeros(3)])


@wp.kernel
def early_return_guard(x: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    if x[i] < f64(0.0):
        return
    out[i] = wp.sqrt(x[i]) * x[i]


def test_06_early_return_before_write():
    check(early_return_guard, 4, [arr([0.5, -1.0, 2.0, -0.3])], [zeros(4)])


@wp.kernel
def while_loop(x: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    p = x[i]
    count = 0
    while p < f64(10.0) and count < 50:
        p = p * (f64(1.0) + x[i])
        count += 1
    out[i] = p


def test_07_while_loop_on_data():
    check(while_loop, 3, [arr([0.3, 0.7, 1.9])], [zeros(3)])


@wp.kernel
def nested_dynamic(x: wp.array(dtype=f64), y: wp.array(dtype=f64), n: int, m: int, out: wp.array(dtype=f64)):
    i = wp.tid()
    s = f64(0.0)
    for a in range(n):
        t = f64(1.0)
        for _b in range(m + a):
            t = t * x[i] + y[i]
        s = s * y[i] + t
    out[i] = s


def test_08_nested_dynamic_loops_carried_state():
    check(nested_dynamic, 2, [arr([0.6, -0.4]), arr([0.3, 0.9]), 3, 2], [zeros(2)])


@wp.kernel
def nested_break(x: wp.array(dtype=f64), n: int, out: wp.array(dtype=f64)):
    i = wp.tid()
    s = f64(0.0)
    for a in range(n):
        for b in range(n):
            if b > a:
                break  # only the inner loop ends
            s = s + x[i] * s * f64(0.1) + f64(b)
    out[i] = s


def test_09_break_in_nested_loop():
    check(nested_break, 3, [arr([0.2, 0.5, -0.7]), 5], [zeros(3)])


@wp.kernel
def reverse_range(x: wp.array(dtype=f64), n: int, out: wp.array(dtype=f64)):
    i = wp.tid()
    s = f64(0.0)
    for k in range(n - 1, -1, -1):
        s = s * x[i] + x[(i + k) % 3]
    out[i] = s


def test_10_negative_step_loop_with_computed_reads():
    check(reverse_range, 3, [arr([0.5, -0.3, 1.2]), 5], [zeros(3)])


@wp.kernel
def zero_trip_loop(x: wp.array(dtype=f64), n: int, out: wp.array(dtype=f64)):
    i = wp.tid()
    s = x[i] * x[i]
    for _k in range(n):
        s = s * f64(3.0)
    out[i] = s


def test_11_loop_with_zero_iterations():
    check(zero_trip_loop, 3, [arr([0.5, -0.3, 1.2]), 0], [zeros(3)])


@wp.kernel
def static_loop(x: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    s = x[i]
    for _k in range(4):
        s = wp.sin(s) * x[i] + s
    out[i] = s


def test_12_static_loop_carried_state():
    check(static_loop, 3, [arr([0.5, -0.3, 1.2])], [zeros(3)])


@wp.kernel
def vec_component_updates(x: wp.array(dtype=f64), n: int, out: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    v = wp.vec3d(f64(1.0), f64(2.0), f64(3.0))
    for k in range(n):
        v[k % 3] = v[k % 3] * x[i] + v[(k + 1) % 3]
    out[i] = v


def test_13_vector_component_assignment_in_dynamic_loop():
    check(vec_component_updates, 2, [arr([0.4, -0.6]), 7], [zeros(2, wp.vec3d)])


@wp.kernel
def local_fixed_array(x: wp.array(dtype=f64), n: int, out: wp.array(dtype=f64)):
    i = wp.tid()
    buf = wp.zeros(shape=(4,), dtype=wp.float64)
    for k in range(n):
        buf[k % 4] = buf[k % 4] * x[i] + x[i] * f64(k + 1)
    s = f64(0.0)
    for k in range(4):
        s = s + buf[k] * buf[k]
    out[i] = s


def test_14_kernel_local_fixed_array():
    check(local_fixed_array, 2, [arr([0.4, -0.6]), 6], [zeros(2)])


# ================================================================================================ branches, funcs
@wp.func
def piecewise(x: f64):
    if x > f64(1.0):
        return x * x
    elif x < f64(-1.0):
        return -f64(2.0) * x
    return wp.sin(x) + f64(1.0)


@wp.kernel
def several_returns(x: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    out[i] = piecewise(x[i]) * x[i]


def test_15_func_with_several_returns():
    check(several_returns, 4, [arr([1.7, -1.4, 0.3, -0.6])], [zeros(4)])


@wp.func
def first_above(x: f64, n: int, threshold: f64):
    p = f64(1.0)
    for _k in range(n):
        p = p * x
        if p > threshold:
            return p
    return -p


@wp.kernel
def return_in_func_loop(x: wp.array(dtype=f64), n: int, out: wp.array(dtype=f64)):
    i = wp.tid()
    out[i] = first_above(x[i], n, f64(5.0)) + x[i]


def test_16_return_inside_a_func_loop():
    check(return_in_func_loop, 3, [arr([1.5, 1.1, 2.6]), 6], [zeros(3)])


@wp.func
def inner(x: f64):
    if x < f64(0.0):
        return x * x
    return wp.exp(-x)


@wp.func
def middle(x: f64, y: f64):
    a = inner(x) * y
    if a > f64(0.5):
        return a + inner(y)
    return a - inner(x * y)


@wp.kernel
def nested_funcs(x: wp.array(dtype=f64), y: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    out[i] = middle(x[i], y[i]) * middle(y[i], x[i])


def test_17_nested_funcs_with_several_returns():
    check(nested_funcs, 4, [arr([0.3, -0.9, 1.2, -0.2]), arr([1.4, 0.3, -0.7, 2.0])], [zeros(4)])


@wp.kernel
def branch_on_data(x: wp.array(dtype=f64), y: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    a = x[i]
    if a * y[i] > f64(0.0):
        a = a * y[i] + wp.cos(a)
    else:
        a = a / (f64(1.0) + y[i] * y[i])
        if a < f64(-0.5):
            a = a * a
    out[i] = a


def test_18_branches_on_data():
    check(branch_on_data, 4, [arr([0.5, -1.5, 1.2, -0.3]), arr([0.7, 0.4, -0.8, 0.2])], [zeros(4)])


@wp.kernel
def ternary(x: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    v = x[i]
    out[i] = v * v if v > f64(0.0) else wp.sin(v) * f64(3.0)


def test_19_ternary():
    check(ternary, 4, [arr([0.5, -1.5, 1.2, -0.3])], [zeros(4)])


@wp.kernel
def kinks(x: wp.array(dtype=f64), y: wp.array(dtype=f64), n: int, out: wp.array(dtype=f64)):
    i = wp.tid()
    s = f64(0.0)
    for k in range(n):
        t = x[i] * f64(k + 1) - y[i]
        s = s + wp.abs(t) + wp.min(t, y[i]) + wp.max(t * t, f64(0.5)) + wp.clamp(t, f64(-1.0), f64(1.0))
    out[i] = s


def test_20_min_max_abs_clamp_away_from_kinks():
    # t = x * (k + 1) - y for k < 3: no value of t, t - y or t^2 - 0.5 within 0.05 of a kink
    check(kinks, 2, [arr([0.37, -0.61]), arr([0.12, 0.29]), 3], [zeros(2)])


# ================================================================================================ arrays, atomics
@wp.kernel
def atomic_loss(x: wp.array(dtype=wp.vec3d), loss: wp.array(dtype=f64)):
    i = wp.tid()
    wp.atomic_add(loss, 0, wp.length(x[i]) * wp.length(x[i]) * f64(0.5) + wp.length(x[i]))


def test_21_atomics_into_a_loss():
    check(atomic_loss, 5, [arr(rng(21).normal(size=(5, 3)), wp.vec3d)], [zeros(1)])


@wp.kernel
def computed_indices(a: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    n = a.shape[0]
    out[i] = a[(i * 7 + 3) % n] * a[n - 1 - i] + a[i] * a[i]


def test_22_computed_indices():
    check(computed_indices, 5, [arr(rng(22).normal(size=5))], [zeros(5)])


@wp.kernel
def scatter(x: wp.array(dtype=f64), idx: wp.array(dtype=int), out: wp.array(dtype=f64)):
    i = wp.tid()
    wp.atomic_add(out, idx[i], x[i] * x[i])
    out[idx[i]] -= x[i] * f64(0.5)


def test_23_scatter_through_an_index_array():
    idx = wp.array(np.array([2, 0, 2, 1, 0], dtype=np.int32), dtype=int)
    check(scatter, 5, [arr(rng(23).normal(size=5)), idx], [zeros(3)])


@wp.kernel
def slot_alloc(x: wp.array(dtype=f64), counter: wp.array(dtype=int), out: wp.array(dtype=f64)):
    i = wp.tid()
    if x[i] > f64(0.0):
        slot = wp.atomic_add(counter, 0, 1)
        out[slot] = x[i] * x[i]


def test_24_atomic_result_used_as_an_index(monkeypatch):
    # the backward replay must see the counter as it was before the launch to recompute the same slots; one CPU
    # thread keeps the order of the atomics the same in the forward pass and in the replay
    monkeypatch.setattr(wp.config, "deterministic", True)
    x = arr([0.5, -0.2, 1.3, 0.8])
    counter = wp.zeros(1, dtype=int)
    out = zeros(4)
    tape = wp.Tape()
    with tape:
        wp.launch(slot_alloc, dim=4, inputs=[x, counter], outputs=[out])
    o = out.numpy()
    order = {i: int(np.flatnonzero(np.isclose(o, v * v))[0]) for i, v in enumerate([0.5, -0.2, 1.3, 0.8]) if v > 0}
    w = np.arange(1.0, 5.0)
    tape.backward(grads={out: w})
    expected = np.zeros(4)
    for i, slot in order.items():
        expected[i] = 2 * x.numpy()[i] * w[slot]
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)


# ================================================================================================ in-place updates
@wp.kernel
def scale_inplace(a: wp.array(dtype=f64), x: wp.array(dtype=f64)):
    i = wp.tid()
    a[i] *= x[i]


@wp.kernel
def divide_inplace(a: wp.array(dtype=f64), x: wp.array(dtype=f64)):
    i = wp.tid()
    a[i] /= x[i]


@wp.kernel
def update_inplace(a: wp.array(dtype=f64), x: wp.array(dtype=f64)):
    i = wp.tid()
    a[i] = a[i] + wp.sin(a[i]) * x[i]


@wp.kernel
def sum_squares(a: wp.array(dtype=f64), loss: wp.array(dtype=f64)):
    i = wp.tid()
    wp.atomic_add(loss, 0, a[i] * a[i])


@wp.kernel
def copy_kernel(src: wp.array(dtype=f64), dst: wp.array(dtype=f64)):
    i = wp.tid()
    dst[i] = src[i]


def _inplace_pipeline(kernel):
    def run(a0, x):
        a = wp.zeros(a0.shape[0], dtype=f64, requires_grad=True)
        wp.launch(copy_kernel, dim=a.shape[0], inputs=[a0], outputs=[a])
        wp.launch(kernel, dim=a.shape[0], inputs=[a, x])
        wp.launch(kernel, dim=a.shape[0], inputs=[a, x])  # twice: the second update reads the first's result
        loss = wp.zeros(1, dtype=f64, requires_grad=True)
        wp.launch(sum_squares, dim=a.shape[0], inputs=[a], outputs=[loss])
        return loss
    return run


def test_25_inplace_multiply():
    check_fn(_inplace_pipeline(scale_inplace), [arr([0.5, -1.2, 2.0]), arr([1.5, 0.7, -0.9])])


def test_26_inplace_divide():
    check_fn(_inplace_pipeline(divide_inplace), [arr([0.5, -1.2, 2.0]), arr([1.5, 0.7, -0.9])])


def test_27_inplace_read_modify_write_snapshot():
    check_fn(_inplace_pipeline(update_inplace), [arr([0.5, -1.2, 2.0]), arr([1.5, 0.7, -0.9])])


@wp.kernel
def accumulate_inplace(a: wp.array(dtype=f64), x: wp.array(dtype=f64)):
    i = wp.tid()
    a[i] += x[i] * x[i]
    a[i] -= wp.sin(x[i])


def test_28_inplace_add_sub():
    check_fn(_inplace_pipeline(accumulate_inplace), [arr([0.5, -1.2, 2.0]), arr([1.5, 0.7, -0.9])])


# ================================================================================================ overwrites
@wp.kernel
def square(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    y[i] = x[i] * x[i]


@wp.kernel
def overwrite(x: wp.array(dtype=f64)):
    i = wp.tid()
    x[i] = f64(7.0)


def test_29_overwrite_of_a_read_array_raises_naming_both_kernels():
    x = arr([1.0, 2.0])
    y = zeros(2)
    tape = wp.Tape()
    with tape:
        wp.launch(square, dim=2, inputs=[x], outputs=[y])
        wp.launch(overwrite, dim=2, inputs=[x])
    with pytest.raises(OverwriteError) as info:
        tape.backward(grads={y: np.ones(2)})
    msg = str(info.value)
    assert "'square'" in msg and "'overwrite'" in msg and "'x'" in msg


def test_30_overwrite_opt_out():
    x = arr([1.0, 2.0])
    y = zeros(2)
    tape = wp.Tape()
    with tape:
        wp.launch(square, dim=2, inputs=[x], outputs=[y])
        wp.launch(overwrite, dim=2, inputs=[x])
    tape.allow_overwrite(x)
    tape.backward(grads={y: np.ones(2)})  # the user accepts the replay of square() reading the new values
    np.testing.assert_allclose(x.grad.numpy(), [14.0, 14.0])


def test_31_overwrite_outside_the_tape_raises():
    x = arr([1.0, 2.0])
    y = zeros(2)
    tape = wp.Tape()
    with tape:
        wp.launch(square, dim=2, inputs=[x], outputs=[y])
    x.fill_(3.0)
    with pytest.raises(OverwriteError, match="square"):
        tape.backward(grads={y: np.ones(2)})


@wp.kernel
def cube_into(z: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    y[i] = z[i] * z[i] * z[i]


def test_32_write_after_write_across_kernels():
    def run(x, z):
        y = wp.zeros(2, dtype=f64, requires_grad=True)
        wp.launch(square, dim=2, inputs=[x], outputs=[y])
        wp.launch(cube_into, dim=2, inputs=[z], outputs=[y])  # y's first values are dead
        return y
    x, z = arr([1.0, 2.0]), arr([0.5, -1.5])
    check_fn(run, [x, z])
    tape = wp.Tape()
    with tape:
        y = run(x, z)
    tape.backward(grads={y: np.ones(2)})
    assert np.all(x.grad.numpy() == 0.0)
    np.testing.assert_allclose(z.grad.numpy(), 3 * z.numpy() ** 2)


# ================================================================================================ structs
@wp.struct
class Params:
    scale: wp.float64
    offset: wp.vec3d
    data: wp.array(dtype=wp.float64)


@wp.struct
class Particle:
    pos: wp.vec3d
    mass: wp.float64


@wp.struct
class System:
    p: Particle
    k: wp.float64


@wp.kernel
def struct_arg(params: Params, x: wp.array(dtype=wp.vec3d), out: wp.array(dtype=f64)):
    i = wp.tid()
    v = x[i] * params.scale + params.offset
    out[i] = wp.dot(v, v) * params.data[i]


def test_33_struct_argument_with_array_field():
    p = Params()
    p.scale = 1.5
    p.offset = wp.vec3d(0.1, -0.2, 0.3)
    p.data = arr([0.5, 2.0, -1.0])
    x = arr(rng(33).normal(size=(3, 3)), wp.vec3d)
    check(struct_arg, 3, [p, x], [zeros(3)])
    # the gradient also reaches the array inside the struct, and tape.zero() clears it
    out = zeros(3)
    tape = wp.Tape()
    with tape:
        wp.launch(struct_arg, dim=3, inputs=[p, x], outputs=[out])
    tape.backward(grads={out: np.ones(3)})
    tape.zero()
    assert not p.data.grad.numpy().any()
    tape.backward(grads={out: np.ones(3)})
    v = x.numpy() * 1.5 + np.array([0.1, -0.2, 0.3])
    np.testing.assert_allclose(p.data.grad.numpy(), np.sum(v * v, axis=1), rtol=1e-12)


@wp.func
def energy(s: System, x: wp.vec3d):
    d = x - s.p.pos
    return f64(0.5) * s.k * wp.dot(d, d) * s.p.mass


@wp.func
def moved(s: System, dx: wp.vec3d):
    r = s
    r.p.pos = s.p.pos + dx
    return r


@wp.kernel
def nested_structs(x: wp.array(dtype=wp.vec3d), m: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    s = System()
    s.p.pos = x[i] * m[i]
    s.p.mass = m[i]
    s.k = m[i] * m[i]
    s2 = moved(s, x[i])
    out[i] = energy(s2, wp.vec3d(f64(1.0), f64(0.0), f64(0.5))) + s2.p.pos[1]


def test_34_nested_structs_through_funcs():
    r = rng(34)
    check(nested_structs, 3, [arr(r.normal(size=(3, 3)), wp.vec3d), arr(r.uniform(0.5, 1.5, 3))], [zeros(3)])


# ================================================================================================ copies, views
@wp.kernel
def scale2(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    y[i] = x[i] * x[i] * f64(2.0)


def test_35_wp_copy_on_the_tape():
    def run(x):
        y = wp.zeros(4, dtype=f64, requires_grad=True)
        z = wp.zeros(4, dtype=f64, requires_grad=True)
        wp.launch(scale2, dim=4, inputs=[x], outputs=[y])
        wp.copy(z, y)
        loss = wp.zeros(1, dtype=f64, requires_grad=True)
        wp.launch(sum_squares, dim=4, inputs=[z], outputs=[loss])
        return loss
    check_fn(run, [arr([0.5, -1.0, 1.5, 0.2])])


def test_36_wp_copy_with_offsets_on_the_tape():
    def run(x):
        y = wp.zeros(4, dtype=f64, requires_grad=True)
        z = wp.zeros(6, dtype=f64, requires_grad=True)
        wp.launch(scale2, dim=4, inputs=[x], outputs=[y])
        wp.copy(z, y, dest_offset=3, src_offset=1, count=3)
        return z
    check_fn(run, [arr([0.5, -1.0, 1.5, 0.2])])


def test_37_slices_and_row_views_passed_to_kernels():
    def run(x, m):
        y = wp.zeros(3, dtype=f64, requires_grad=True)
        wp.launch(scale2, dim=3, inputs=[x[2:5]], outputs=[y])  # a 1-D slice
        z = wp.zeros(4, dtype=f64, requires_grad=True)
        wp.launch(scale2, dim=4, inputs=[m[1]], outputs=[z])  # a row of a 2-D array
        return [y, z]
    r = rng(37)
    x = arr(r.normal(size=7))
    m = arr(r.normal(size=(3, 4)))
    check_fn(run, [x, m])
    tape = wp.Tape()
    with tape:
        y, z = run(x, m)
    tape.backward(grads={y: np.ones(3), z: np.ones(4)})
    gx = np.zeros(7)
    gx[2:5] = 4 * x.numpy()[2:5]
    np.testing.assert_allclose(x.grad.numpy(), gx)
    gm = np.zeros((3, 4))
    gm[1] = 4 * m.numpy()[1]
    np.testing.assert_allclose(m.grad.numpy(), gm)


# ================================================================================================ matrices, quats
@wp.kernel
def matrix_loop(a: wp.array(dtype=wp.mat33d), n: int, out: wp.array(dtype=f64)):
    i = wp.tid()
    A = a[i]
    M = wp.identity(n=3, dtype=wp.float64)
    s = f64(0.0)
    for _k in range(n):
        M = M * A
        s = s + wp.determinant(M) + wp.trace(wp.inverse(M + wp.identity(n=3, dtype=wp.float64) * f64(2.0)))
    out[i] = s + wp.ddot(wp.inverse(A), wp.transpose(A) * A)


def test_38_inverse_and_determinant_in_a_loop():
    r = rng(38)
    a = np.eye(3) + 0.2 * r.normal(size=(2, 3, 3))
    check(matrix_loop, 2, [arr(a, wp.mat33d), 4], [zeros(2)])


@wp.kernel
def quat_chain(axis: wp.array(dtype=wp.vec3d), angle: wp.array(dtype=f64), v0: wp.array(dtype=wp.vec3d), n: int,
               out: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    q = wp.quat_identity(dtype=wp.float64)
    v = v0[i]
    for k in range(n):
        dq = wp.quat_from_axis_angle(wp.normalize(axis[i]), angle[i] * f64(k + 1))
        q = wp.normalize(q * dq)
        v = wp.quat_rotate(q, v) + wp.quat_rotate_inv(dq, v) * f64(0.1)
    out[i] = v


def test_39_quaternion_rotations_chained_in_a_loop():
    r = rng(39)
    check(quat_chain, 2, [arr(r.normal(size=(2, 3)), wp.vec3d), arr([0.3, -0.7]), arr(r.normal(size=(2, 3)),
                                                                                         wp.vec3d), 4],
          [zeros(2, wp.vec3d)])


@wp.kernel
def grid2d(a: wp.array2d(dtype=f64), b: wp.array(dtype=f64), out: wp.array2d(dtype=f64)):
    i, j = wp.tid()
    out[i, j] = a[i, j] * b[j] + wp.sin(a[(i + 1) % 3, j])


def test_40_two_dimensional_launch():
    r = rng(40)
    check(grid2d, (3, 4), [arr(r.normal(size=(3, 4))), arr(r.normal(size=4))], [wp.zeros((3, 4), dtype=f64,
                                                                                         requires_grad=True)])


# ================================================================================================ explicit adjoint
# launches and Tape semantics
@wp.kernel
def two_in_one_out(x: wp.array(dtype=f64), y: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    out[i] = x[i] * x[i] * y[i] + wp.exp(y[i])


def test_41_explicit_adjoint_launch():
    x, y = arr([0.5, -1.0, 2.0], grad=False), arr([0.3, 0.1, -0.4], grad=False)
    out = wp.zeros(3, dtype=f64)
    wp.launch(two_in_one_out, dim=3, inputs=[x, y], outputs=[out])
    adj_x, adj_y = wp.zeros(3, dtype=f64), wp.zeros(3, dtype=f64)
    adj_out = wp.array(np.array([1.0, 2.0, 3.0]), dtype=f64)
    wp.launch(two_in_one_out, dim=3, inputs=[x, y], outputs=[out], adj_inputs=[adj_x, adj_y], adj_outputs=[adj_out],
              adjoint=True)
    xv, yv, w = x.numpy(), y.numpy(), adj_out.numpy()
    np.testing.assert_allclose(adj_x.numpy(), w * 2 * xv * yv)
    np.testing.assert_allclose(adj_y.numpy(), w * (xv * xv + np.exp(yv)))


def _tape_with_loss():
    x = arr([0.5, -1.0, 2.0])
    y = arr([0.3, 0.1, -0.4])
    out = zeros(3)
    loss = zeros(1)
    tape = wp.Tape()
    with tape:
        wp.launch(two_in_one_out, dim=3, inputs=[x, y], outputs=[out])
        wp.launch(sum_squares, dim=3, inputs=[out], outputs=[loss])
    return tape, x, y, out, loss


def test_42_backward_twice_accumulates_and_zero_resets():
    tape, x, y, out, loss = _tape_with_loss()
    tape.backward(loss)
    g1 = x.grad.numpy().copy()
    assert np.abs(g1).max() > 0
    # without tape.zero() in between, gradients accumulate, as in Warp: the leaves get the new pass's gradient,
    # which itself is propagated from the intermediate `out`, whose gradient still holds the first pass's
    tape.backward(loss)
    np.testing.assert_allclose(x.grad.numpy(), 3 * g1)
    tape.zero()
    assert not x.grad.numpy().any() and not out.grad.numpy().any() and not loss.grad.numpy().any()
    tape.backward(loss)
    np.testing.assert_allclose(x.grad.numpy(), g1)
    # with one launch (no intermediate arrays) a second backward adds exactly one more gradient
    single = wp.Tape()
    x2, y2, o2 = arr([0.5, -1.0, 2.0]), arr([0.3, 0.1, -0.4]), zeros(3)
    with single:
        wp.launch(two_in_one_out, dim=3, inputs=[x2, y2], outputs=[o2])
    single.backward(grads={o2: np.ones(3)})
    first = x2.grad.numpy().copy()
    single.backward(grads={o2: np.ones(3)})
    np.testing.assert_allclose(x2.grad.numpy(), 2 * first)
    assert set(map(id, tape.gradients)) >= {id(x), id(y), id(out), id(loss)}


def test_43_tape_reset_forgets_launches():
    tape, x, _y, out, loss = _tape_with_loss()
    tape.backward(loss)
    tape.reset()
    assert not tape.launches and not x.grad.numpy().any()
    tape.backward(grads={out: np.ones(3)})  # nothing recorded: nothing propagates
    assert not x.grad.numpy().any()


@wp.kernel(enable_backward=False)
def forward_only(x: wp.array(dtype=f64), y: wp.array(dtype=f64)):
    i = wp.tid()
    y[i] = x[i] * f64(2.0)


def test_44_enable_backward_false_raises_on_backward():
    x, y = arr([1.0, 2.0]), zeros(2)
    tape = wp.Tape()
    with tape:
        wp.launch(forward_only, dim=2, inputs=[x], outputs=[y])
    with pytest.raises(wp.Error, match="forward_only.*enable_backward=False"):
        tape.backward(grads={y: np.ones(2)})


@wp.kernel
def noisy(x: wp.array(dtype=f64), seed: int, out: wp.array(dtype=f64)):
    i = wp.tid()
    state = wp.rand_init(seed, i)
    s = f64(0.0)
    for _k in range(3):
        r = f64(wp.randf(state))
        s = s + x[i] * r + x[i] * x[i] * f64(wp.randn(state))
    out[i] = s


def test_45_random_numbers_inside_a_differentiated_kernel():
    # the backward replay draws the same numbers: the gradient is exact for the sampled noise
    check(noisy, 4, [arr([0.5, -1.0, 2.0, 0.3]), 42], [zeros(4)])


# ================================================================================================ rollouts
@wp.kernel
def diffuse(u: wp.array(dtype=f64), k: wp.array(dtype=f64), u_next: wp.array(dtype=f64)):
    i = wp.tid()
    n = u.shape[0]
    lap = u[(i + 1) % n] - f64(2.0) * u[i] + u[(i + n - 1) % n]
    u_next[i] = u[i] + k[0] * lap - f64(0.1) * u[i] * u[i] * u[i]


def test_46_rollout_over_separate_state_arrays():
    def run(u0, k):
        states = [u0] + [wp.zeros(6, dtype=f64, requires_grad=True) for _ in range(5)]
        for t in range(5):
            wp.launch(diffuse, dim=6, inputs=[states[t], k], outputs=[states[t + 1]])
        loss = wp.zeros(1, dtype=f64, requires_grad=True)
        wp.launch(sum_squares, dim=6, inputs=[states[-1]], outputs=[loss])
        return loss
    r = rng(46)
    check_fn(run, [arr(r.normal(size=6)), arr([0.2])])


def test_47_ping_pong_buffers_raise_overwrite_error():
    u = arr(rng(47).normal(size=6))
    v = zeros(6)
    k = arr([0.2])
    tape = wp.Tape()
    with tape:
        wp.launch(diffuse, dim=6, inputs=[u, k], outputs=[v])
        wp.launch(diffuse, dim=6, inputs=[v, k], outputs=[u])  # overwrites u, read by the first launch
    with pytest.raises(OverwriteError, match="diffuse"):
        tape.backward(grads={u: np.ones(6)})


@wp.kernel
def multi_output(x: wp.array(dtype=wp.vec3d), lengths: wp.array(dtype=f64), dirs: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    l = wp.length(x[i])
    lengths[i] = l
    dirs[i] = x[i] / l


def test_48_several_outputs():
    check(multi_output, 3, [arr(rng(48).normal(size=(3, 3)), wp.vec3d)], [zeros(3), zeros(3, wp.vec3d)])


@wp.kernel
def mutable_merges(x: wp.array(dtype=f64), n: int, out: wp.array(dtype=f64)):
    i = wp.tid()
    a = x[i]
    b = f64(1.0)
    for k in range(n):
        if (k + i) % 2 == 0:
            a, b = b * x[i], a + b
        else:
            b = b - a * f64(0.3)
    out[i] = a * b


def test_49_swaps_and_merges_of_mutable_locals():
    check(mutable_merges, 3, [arr([0.5, -0.8, 0.9]), 5], [zeros(3)])


def test_50_gradcheck_tape_and_jacobian_shapes():
    tape, x, y, out, _loss = _tape_with_loss()
    assert autograd.gradcheck_tape(tape, eps=1e-6, atol=1e-6, rtol=1e-5, show_summary=False)
    J = autograd.jacobian(two_in_one_out, 3, [x, y], [out])
    Jfd = autograd.jacobian_fd(two_in_one_out, 3, [x, y], [out], eps=1e-6)
    assert set(J) == {(0, 0), (1, 0)} and J[(0, 0)].shape == (3, 3)
    for key in J:
        np.testing.assert_allclose(J[key], Jfd[key], atol=1e-6)
    np.testing.assert_allclose(J[(0, 0)], np.diag(2 * x.numpy() * y.numpy()), atol=1e-12)


# ================================================================================================ patterns that
# cannot be differentiated exactly: an error at the user's line
@wp.kernel
def inplace_dynamic_loop(a: wp.array(dtype=f64), x: wp.array(dtype=f64), n: int):
    i = wp.tid()
    for _k in range(n):
        a[i] = a[i] * x[i]  # line checked below


@wp.kernel
def inplace_static_loop(a: wp.array(dtype=f64), x: wp.array(dtype=f64)):
    i = wp.tid()
    for _k in range(3):
        a[i] = a[i] * x[i]


def test_51_array_read_and_written_in_a_dynamic_loop_is_an_error_at_the_store():
    a, x = arr([1.0, 2.0]), arr([1.5, 0.5])
    tape = wp.Tape()
    with tape:
        wp.launch(inplace_dynamic_loop, dim=2, inputs=[a, x, 3])
    with pytest.raises(wp.CompileError) as info:
        tape.backward(grads={a: np.ones(2)})
    err = info.value
    assert "'a' is both read and written inside a loop" in err.message
    assert err.loc.line == inplace_dynamic_loop.func.__code__.co_firstlineno + 4
    assert "a[i] = a[i] * x[i]" in err.loc.text


def test_52_same_update_in_a_static_loop_is_exact():
    def run(a0, x):
        a = wp.zeros(2, dtype=f64, requires_grad=True)
        wp.launch(copy_kernel, dim=2, inputs=[a0], outputs=[a])
        wp.launch(inplace_static_loop, dim=2, inputs=[a, x])
        return a
    check_fn(run, [arr([1.0, 2.0]), arr([1.5, 0.5])])


def test_53_backward_twice_through_an_inplace_update():
    # the replay of an in-place kernel runs on a copy of the saved inputs: a second backward sees the same values
    a0, x = arr([1.0, 2.0]), arr([1.5, 0.5])
    a = wp.zeros(2, dtype=f64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(copy_kernel, dim=2, inputs=[a0], outputs=[a])
        wp.launch(update_inplace, dim=2, inputs=[a, x])
        wp.launch(scale_inplace, dim=2, inputs=[a, x])
    tape.backward(grads={a: np.ones(2)})
    first = x.grad.numpy().copy(), a0.grad.numpy().copy()
    tape.zero()
    tape.backward(grads={a: np.ones(2)})
    np.testing.assert_array_equal(x.grad.numpy(), first[0])
    np.testing.assert_array_equal(a0.grad.numpy(), first[1])


# ================================================================================================ an element written
# more than once by its thread: only the last value written there gets the element's gradient
@wp.kernel
def store_twice(x: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    out[i] = x[i] * x[i]
    out[i] = 2.0 * x[i]


@wp.kernel
def store_in_loop(x: wp.array(dtype=f64), n: int, out: wp.array(dtype=f64)):
    i = wp.tid()
    for k in range(n):
        out[i] = x[i] * f64(k + 1)


@wp.kernel
def atomic_then_store(x: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    wp.atomic_add(out, i, x[i] * 5.0)
    out[i] = wp.sin(x[i])


@wp.kernel
def store_then_atomic(x: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    out[i] = wp.sin(x[i])
    wp.atomic_add(out, i, x[i] * 5.0)


@wp.kernel
def store_twice_other_index(x: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    out[2 * i] = x[i] * x[i]
    out[2 * i + 1] = 3.0 * x[i]


def test_54_element_stored_twice():
    check(store_twice, 3, [arr([0.5, -1.2, 2.0])], [zeros(3)])


def test_55_element_stored_in_a_dynamic_loop():
    check(store_in_loop, 3, [arr([0.5, -1.2, 2.0]), 4], [zeros(3)])


def test_56_atomic_add_then_store_and_store_then_atomic_add():
    check(atomic_then_store, 3, [arr([0.5, -1.2, 2.0])], [zeros(3)])
    check(store_then_atomic, 3, [arr([0.5, -1.2, 2.0])], [zeros(3)])


def test_57_two_stores_to_different_elements():
    check(store_twice_other_index, 3, [arr([0.5, -1.2, 2.0])], [zeros(6)])


@wp.struct
class _Held:
    values: wp.array(dtype=wp.vec3d)


@wp.kernel
def struct_held_update(holder: _Held, x: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    holder.values[i].x += x[i]  # read-modify-write of an array held in a struct parameter
    out[i] = holder.values[i].x * holder.values[i].x + holder.values[i].y


def test_58_store_into_an_array_held_in_a_struct_consumes_its_gradient():
    # the gradient of the values the store overwrote flows only through the update (it was counted twice)
    def run(values, x):
        holder = _Held()
        holder.values = wp.clone(values)  # the kernel updates it: each evaluation starts from the same state
        out = zeros(3)
        wp.launch(struct_held_update, dim=3, inputs=[holder, x], outputs=[out])
        return out
    r = rng(58)
    check_fn(run, [arr(r.normal(size=(3, 3)), wp.vec3d), arr(r.normal(size=3))])
