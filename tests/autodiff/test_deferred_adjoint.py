"""The deferred form of CPU backward kernels (gradient adds recorded per lane, applied after each chunk of grid points).

A straight-line kernel whose reverse sweep adds into neighbouring gradient elements (a stencil, a gather) gets a
second backward body that vectorises: see run_grid_deferred in weft/native/launch.h and plan_deferred in
weft/backend/adjoint.py. Launches the deferred form cannot serve (non-contiguous rows, gradients shared between a
stored and a read array) run the general body. Values are small integers in float64, so every sum is exact whatever
the order of the adds and the comparisons between the two bodies, thread counts and the NumPy reference are bitwise.
"""

import numpy as np
import pytest

import weft as wp
from weft import pipeline
from weft.pipeline import Direction, Target

from .test_parallel_accumulation import backward, ints

f64 = wp.float64


@pytest.fixture(autouse=True)
def restore_threads():
    old = (wp.config.num_threads, wp.config.deterministic)
    wp.config.deterministic = False  # backward() sets the thread count
    yield
    wp.config.num_threads, wp.config.deterministic = old


def adjoint_source(kernel, *args) -> str:
    fn = kernel._lower(kernel.infer_types(list(args)), False).fn
    return pipeline.render_module(pipeline.differentiate(fn), kernel.__name__, False, Target.CPU,
                                  Direction.ADJOINT).source


# ---------------------------------------------------------------------------------------------------- kernels
@wp.kernel
def stencil5(c: f64, u: wp.array2d(dtype=f64), w: wp.array2d(dtype=f64), out: wp.array2d(dtype=f64)):
    i, j = wp.tid()
    n = u.shape[0]
    m = u.shape[1]
    up = (i + n - 1) % n
    down = (i + 1) % n
    left = (j + m - 1) % m
    right = (j + 1) % m
    out[i, j] = (c * u[i, j] + u[down, j] * w[i, j] + 2.0 * u[i, left] - u[up, j] + u[i, right] * u[i, j]
                 - 3.0 * w[i, right])


def stencil5_reference(c, u, w, g):
    """NumPy gradients of sum(g * stencil5(u, w)) for u and w (float64, independent of weft)."""
    roll = np.roll
    down = roll(u, -1, axis=0)  # down[i, j] = u[i + 1, j]
    right = roll(u, -1, axis=1)
    gu = c * g + right * g  # own-index sites
    gu += roll(g * w, 1, axis=0)  # u[down, j]: thread (i, j) adds into (i + 1, j)
    gu += roll(2.0 * g, -1, axis=1)  # u[i, left]: into (i, j - 1)
    gu -= roll(g, -1, axis=0)  # u[up, j]: into (i - 1, j)
    gu += roll(g * u, 1, axis=1)  # u[i, right]: into (i, j + 1)
    gw = g * down
    gw -= roll(3.0 * g, 1, axis=1)  # w[i, right]
    return gu, gw


@wp.kernel
def flat_stencil(u: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    n = u.shape[0]
    out[i] = u[(i + 1) % n] * u[i] - 2.0 * u[(i + n - 3) % n]


@wp.kernel
def stencil3d(u: wp.array3d(dtype=wp.vec3d), out: wp.array3d(dtype=wp.vec3d)):
    i, j, k = wp.tid()
    out[i, j, k] = u[(i + 1) % u.shape[0], j, k] * 2.0 + u[i, j, (k + 1) % u.shape[2]] - u[i, j, k]


@wp.kernel
def mat_sites(a: wp.array(dtype=wp.mat33d), b: wp.array(dtype=wp.mat33d), out: wp.array(dtype=wp.mat33d)):
    i = wp.tid()
    n = a.shape[0]
    out[i] = a[i] * b[(i + 1) % n] + wp.transpose(a[(i + 5) % n])


@wp.kernel
def gather(idx: wp.array(dtype=int), x: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    out[i] = 3.0 * x[idx[i]] + x[i] * x[idx[i]]


@wp.kernel
def guarded_load(x: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    v = f64(0.0)
    if i > 0:
        v = x[i - 1]
    out[i] = v * 2.0


@wp.kernel
def branches(x: wp.array2d(dtype=f64), y: wp.array2d(dtype=f64), out: wp.array2d(dtype=f64)):
    """Boundary conditions, a data-dependent branch with different neighbours per side, an early return."""
    i, j = wp.tid()
    n = x.shape[0]
    m = x.shape[1]
    if i == 0 or j == 0 or i == n - 1 or j == m - 1:
        out[i, j] = x[i, j]
        return
    v = f64(0.0)
    if y[i, j] > 0.0:
        v = x[i - 1, j] * y[i, j + 1]
    else:
        v = 2.0 * x[i, j + 1] - y[i + 1, j]
    out[i, j] = v + x[i, j - 1] * x[i, j]


def branches_reference(x, y, g):
    n, m = x.shape
    gx, gy = np.zeros_like(x), np.zeros_like(y)
    for i in range(n):
        for j in range(m):
            if i in (0, n - 1) or j in (0, m - 1):
                gx[i, j] += g[i, j]
                continue
            if y[i, j] > 0.0:
                gx[i - 1, j] += g[i, j] * y[i, j + 1]
                gy[i, j + 1] += g[i, j] * x[i - 1, j]
            else:
                gx[i, j + 1] += 2.0 * g[i, j]
                gy[i + 1, j] -= g[i, j]
            gx[i, j - 1] += g[i, j] * x[i, j]
            gx[i, j] += g[i, j] * x[i, j - 1]
    return gx, gy


# kernels that keep the general backward body

@wp.kernel
def atomic_loss(x: wp.array(dtype=f64), loss: wp.array(dtype=f64)):
    i = wp.tid()
    wp.atomic_add(loss, 0, x[(i + 1) % x.shape[0]] * x[i])


@wp.kernel
def dynamic_loop(n: int, x: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    s = f64(0.0)
    for k in range(n):
        s += x[(i + k) % x.shape[0]]
    out[i] = s


@wp.kernel
def in_place(x: wp.array(dtype=f64)):
    i = wp.tid()
    x[i] = x[i] * 2.0


@wp.kernel
def half_stencil(x: wp.array(dtype=wp.float16), out: wp.array(dtype=wp.float16)):
    i = wp.tid()
    out[i] = x[(i + 1) % x.shape[0]] * wp.float16(2.0)


@wp.kernel
def store_then_load(y: wp.array(dtype=f64), x: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    y[i] = f64(1.0)
    out[i] = x[i] * 2.0


# ---------------------------------------------------------------------------------------------------- helpers
def arr(values, dtype=f64, strided=False):
    """A differentiable scalar array of `values`; strided: a view of every other element along the innermost axis
    of a wider array (its rows are not contiguous, so the backward launch runs the general body)."""
    if not strided:
        return wp.array(values, dtype=dtype, requires_grad=True)
    wide = np.zeros(values.shape[:-1] + (2 * values.shape[-1],), dtype=values.dtype)
    wide[..., ::2] = values
    a = wp.array(wide, dtype=dtype, requires_grad=True)
    return a[:, ::2] if values.ndim == 2 else a[::2]


# ---------------------------------------------------------------------------------------------------- form chosen
def test_deferred_form_is_chosen_for_straight_line_kernels():
    u = wp.zeros((4, 4), dtype=f64)
    assert "bwd_body_deferred" in adjoint_source(stencil5, 1.0, u, u, u)
    assert "bwd_body_deferred" in adjoint_source(flat_stencil, wp.zeros(4, dtype=f64), wp.zeros(4, dtype=f64))
    v = wp.zeros((2, 2, 2), dtype=wp.vec3d)
    assert "weft::run_grid_deferred<3, Defer, Spill>" in adjoint_source(stencil3d, v, v)
    m = wp.zeros(4, dtype=wp.mat33d)
    assert "bwd_body_deferred" in adjoint_source(mat_sites, m, m, m)
    x = wp.zeros(4, dtype=f64)
    assert "bwd_body_deferred" in adjoint_source(gather, wp.zeros(4, dtype=int), x, x)
    src = adjoint_source(guarded_load, x, x)  # a gradient add under a branch: its slot is marked empty first
    assert "bwd_body_deferred" in src and "d.o0[lane] = weft::kNoAdd;" in src
    assert "weft::kNoAdd" not in adjoint_source(flat_stencil, x, x)


@pytest.mark.parametrize("kernel, why", [
    (atomic_loss, "an atomic"),
    (dynamic_loop, "a loop"),
    (in_place, "an array both read and stored"),
    (half_stencil, "float16 gradients"),
])
def test_general_form_kept(kernel, why):
    if kernel is half_stencil:
        args = [wp.zeros(4, dtype=wp.float16)] * 2
    elif kernel is dynamic_loop:
        args = [3, wp.zeros(4, dtype=f64), wp.zeros(4, dtype=f64)]
    elif kernel is in_place:
        args = [wp.zeros(4, dtype=f64)]
    else:
        args = [wp.zeros(4, dtype=f64)] * 2
    src = adjoint_source(kernel, *args)
    assert "bwd_body_deferred" not in src, why
    assert "bwd_body<" in src


def test_debug_mode_keeps_general_form():
    u = wp.zeros((4, 4), dtype=f64)
    fn = stencil5._lower(stencil5.infer_types([1.0, u, u, u]), True).fn
    source = pipeline.render_module(pipeline.differentiate(fn), "stencil5", True, Target.CPU, Direction.ADJOINT).source
    assert "bwd_body_deferred" not in source


# ---------------------------------------------------------------------------------------------------- gradients
# row lengths around the 16-lane groups and 64-lane chunks of the deferred walk
@pytest.mark.parametrize("shape", [(3, 1), (5, 15), (4, 16), (3, 17), (2, 63), (2, 64), (3, 65), (7, 130)])
def test_stencil_matches_numpy(shape):
    c = 3.0
    u, w, g = ints(shape, 1), ints(shape, 2), ints(shape, 3)
    expect = stencil5_reference(c, u, w, g)
    for strided in (False, True):
        got = backward(stencil5, shape, [c, arr(u, strided=strided), arr(w, strided=strided)],
                       [wp.zeros(shape, dtype=f64, requires_grad=True)], [g], threads=1)
        for e, a in zip(expect, got):
            np.testing.assert_array_equal(a, e)


@pytest.mark.parametrize("threads", [1, 2])
def test_stencil_large_grid_threads(threads):
    """Enough points for two threads: the per-thread gradient copies and the deferred flush together."""
    shape = (300, 257)
    c = -2.0
    u, w, g = ints(shape, 4), ints(shape, 5), ints(shape, 6)
    got = backward(stencil5, shape, [c, arr(u), arr(w)], [wp.zeros(shape, dtype=f64, requires_grad=True)], [g],
                   threads)
    for e, a in zip(stencil5_reference(c, u, w, g), got):
        np.testing.assert_array_equal(a, e)


@pytest.mark.parametrize("n", [1, 17, 100, 70000])
def test_flat_index_matches_general_body(n):
    u, g = ints(n, 7), ints(n, 8)
    fast = backward(flat_stencil, n, [arr(u)], [wp.zeros(n, dtype=f64, requires_grad=True)], [g], threads=2)
    slow = backward(flat_stencil, n, [arr(u, strided=True)], [wp.zeros(n, dtype=f64, requires_grad=True)], [g], 2)
    np.testing.assert_array_equal(fast[0], slow[0])
    expect = np.roll(g * u, 1) + g * np.roll(u, -1) - 2.0 * np.roll(g, -3)
    np.testing.assert_array_equal(fast[0], expect)


def _vec_view(values, dtype, trailing=1):
    """A view of every other element along the innermost grid axis of a wider vector / matrix array (`trailing`
    component axes), so the rows are not contiguous."""
    axis = values.ndim - trailing - 1
    shape = list(values.shape)
    shape[axis] *= 2
    wide = np.zeros(shape, dtype=values.dtype)
    wide[(slice(None),) * axis + (slice(None, None, 2),)] = values
    a = wp.array(wide, dtype=dtype, requires_grad=True)
    return a[(slice(None),) * axis + (slice(None, None, 2),)]


def test_vec3_3d_stencil_matches_general_body():
    shape = (3, 4, 37)
    u, g = ints(shape + (3,), 9), ints(shape + (3,), 10)
    out = lambda: wp.zeros(shape, dtype=wp.vec3d, requires_grad=True)
    fast = backward(stencil3d, shape, [wp.array(u, dtype=wp.vec3d, requires_grad=True)], [out()], [g], 1)
    slow = backward(stencil3d, shape, [_vec_view(u, wp.vec3d)], [out()], [g], 1)
    np.testing.assert_array_equal(fast[0], slow[0])
    expect = 2.0 * np.roll(g, 1, axis=0) + np.roll(g, 1, axis=2) - g
    np.testing.assert_array_equal(fast[0], expect)


@pytest.mark.parametrize("threads", [1, 2])
def test_mat33_sites_match_general_body(threads):
    n = 40000
    a, b, g = ints((n, 3, 3), 11, -2, 3), ints((n, 3, 3), 12, -2, 3), ints((n, 3, 3), 13, -2, 3)
    out = lambda: wp.zeros(n, dtype=wp.mat33d, requires_grad=True)
    fast = backward(mat_sites, n, [wp.array(a, dtype=wp.mat33d, requires_grad=True),
                                   wp.array(b, dtype=wp.mat33d, requires_grad=True)], [out()], [g], threads)
    slow = backward(mat_sites, n, [_vec_view(a, wp.mat33d, 2), _vec_view(b, wp.mat33d, 2)], [out()], [g], threads)
    for x, y in zip(fast, slow):
        np.testing.assert_array_equal(x, y)
    b1 = np.roll(b, -1, axis=0)
    ga = g @ np.swapaxes(b1, 1, 2) + np.roll(np.swapaxes(g, 1, 2), 5, axis=0)
    gb = np.roll(np.swapaxes(a, 1, 2) @ g, 1, axis=0)
    np.testing.assert_array_equal(fast[0], ga)
    np.testing.assert_array_equal(fast[1], gb)


@pytest.mark.parametrize("threads", [1, 2])
def test_gather_with_repeated_indices(threads):
    """Data-dependent offsets (groups of 16 lanes that are not a contiguous run, repeated elements)."""
    n = 50000
    rng = np.random.default_rng(14)
    idx = rng.integers(0, 64, size=n).astype(np.int32)
    idx[1000:1100] = np.arange(100)  # one contiguous run as well
    x, g = ints(n, 15), ints(n, 16)
    got = backward(gather, n, [wp.array(idx, dtype=int), arr(x)], [wp.zeros(n, dtype=f64, requires_grad=True)],
                   [g], threads)
    expect = g * x[idx]
    np.add.at(expect, idx, 3.0 * g + g * x)
    np.testing.assert_array_equal(got[0], expect)


def test_float32_deferred_matches_general_body():
    shape = (64, 200)
    rng = np.random.default_rng(17)
    u, w, g = (rng.standard_normal(shape).astype(np.float32) for _ in range(3))
    out = lambda: wp.zeros(shape, dtype=wp.float32, requires_grad=True)

    @wp.kernel
    def stencil_f32(u: wp.array2d(dtype=float), w: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
        i, j = wp.tid()
        n = u.shape[0]
        m = u.shape[1]
        out[i, j] = u[(i + 1) % n, j] * w[i, j] - wp.sin(u[i, (j + m - 1) % m]) * w[i, (j + 1) % m]

    fast = backward(stencil_f32, shape, [arr(u, wp.float32), arr(w, wp.float32)], [out()], [g], 1)
    slow = backward(stencil_f32, shape, [arr(u, wp.float32, True), arr(w, wp.float32, True)], [out()], [g], 1)
    for x, y in zip(fast, slow):
        np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-6)


def test_aliased_store_and_load_take_general_body():
    """y and x are the same array: the store's adjoint consumes the gradient the load adds into, so the order of
    the two matters and the launch must not defer the add (the entry checks gradient overlap at run time)."""
    n = 64

    @wp.kernel
    def fill(src: wp.array(dtype=f64), dst: wp.array(dtype=f64)):
        i = wp.tid()
        dst[i] = src[i] * 3.0

    def run(make):
        src = wp.array(ints(n, 18), dtype=f64, requires_grad=True)
        x = make()
        out = wp.zeros(n, dtype=f64, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(fill, dim=n, inputs=[src], outputs=[x])  # x written on the tape: the later store consumes
            wp.launch(store_then_load, dim=n, inputs=[x, x], outputs=[out])
        tape.backward(grads={out: wp.array(ints(n, 19), dtype=f64)})
        return src.grad.numpy()

    contiguous = run(lambda: wp.zeros(n, dtype=f64, requires_grad=True))
    strided = run(lambda: wp.zeros(2 * n, dtype=f64, requires_grad=True)[::2])
    np.testing.assert_array_equal(contiguous, strided)
    # x[i] is 1.0 when it is read (the store came first): out does not depend on src at all
    np.testing.assert_array_equal(contiguous, np.zeros(n))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [(5, 7), (40, 33), (300, 130)])
def test_branches_and_early_return(shape, threads):
    x, y, g = ints(shape, 20), ints(shape, 21), ints(shape, 22)
    assert "weft::kNoAdd" in adjoint_source(branches, arr(x), arr(y), arr(x))
    out = lambda: wp.zeros(shape, dtype=f64, requires_grad=True)
    fast = backward(branches, shape, [arr(x), arr(y)], [out()], [g], threads)
    slow = backward(branches, shape, [arr(x, strided=True), arr(y, strided=True)], [out()], [g], threads)
    expect = branches_reference(x, y, g)
    for a, b, e in zip(fast, slow, expect):
        np.testing.assert_array_equal(a, e)
        np.testing.assert_array_equal(b, e)


@pytest.mark.parametrize("n", [3, 64, 1000])
def test_guarded_load(n):
    x, g = ints(n, 23), ints(n, 24)
    got = backward(guarded_load, n, [arr(x)], [wp.zeros(n, dtype=f64, requires_grad=True)], [g], 1)
    expect = np.zeros(n)
    expect[:-1] = 2.0 * g[1:]
    np.testing.assert_array_equal(got[0], expect)


@wp.kernel
def forward_difference(u: wp.array2d(dtype=f64), out: wp.array2d(dtype=f64)):
    i, j = wp.tid()
    out[i, j] = u[i, j + 1] * 3.0 - u[i, j]


def test_array_larger_than_grid_on_two_threads():
    """u has one column more than the launch: its gradient is not laid out like the grid, so two threads privatise
    it (per-thread copies) instead of owning the elements of their grid points."""
    shape = (300, 129)
    u, g = ints((shape[0], shape[1] + 1), 25), ints(shape, 26)
    got = backward(forward_difference, shape, [arr(u)], [wp.zeros(shape, dtype=f64, requires_grad=True)], [g], 2)
    expect = np.zeros_like(u)
    expect[:, 1:] += 3.0 * g
    expect[:, :-1] -= g
    np.testing.assert_array_equal(got[0], expect)


@pytest.mark.parametrize("threads", [1, 2])
def test_same_array_twice(threads):
    """u passed for both u and w (as the first stage of an RK step passes the same field twice): one gradient
    receives both parameters' adds."""
    shape = (300, 200)
    c = 2.0
    u, g = ints(shape, 27), ints(shape, 28)
    a = arr(u)
    wp.config.num_threads = threads
    out = wp.zeros(shape, dtype=f64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(stencil5, dim=shape, inputs=[c, a, a], outputs=[out])
    tape.backward(grads={out: wp.array(g, dtype=f64)})
    gu, gw = stencil5_reference(c, u, u, g)
    np.testing.assert_array_equal(a.grad.numpy(), gu + gw)


# ---------------------------------------------------------------------------------------------------- mirrored vec2
@wp.kernel
def mirrored(x: wp.array2d(dtype=wp.vec2d), y: wp.array2d(dtype=wp.vec2d), side: wp.array2d(dtype=wp.vec2d)):
    """A spectral split's shape: a read at the mirrored column m - j (descending offsets) and a vec2 store; `side`
    is a second vec2 output (in one test without a gradient: the backward gives it a scratch one)."""
    i, j = wp.tid()
    m = x.shape[1]
    a = x[i, j]
    b = x[i, wp.where(j == 0, 0, m - j)]
    y[i, j] = wp.vec2d(a[0] + b[0], a[1] - 2.0 * b[1])
    side[i, j] = b * 3.0


def mirrored_reference(x, gy, gs):
    m = x.shape[1]
    mirror = np.array([0] + [m - j for j in range(1, m)])
    gx = gy * np.array([1.0, 1.0])
    gb = np.stack([gy[..., 0], -2.0 * gy[..., 1]], axis=-1) + 3.0 * gs
    np.add.at(gx, (slice(None), mirror), gb)
    return gx


def test_vector_stores_take_the_owned_adjoint():
    v = wp.zeros((2, 4), dtype=wp.vec2d)
    src = adjoint_source(mirrored, v, v, v)
    assert "weft::adj_store_owned<C, false>(args.y" in src and "weft::scratch_grad(args.side" in src
    assert "adj_store_owned" not in adjoint_source(flat_stencil, wp.zeros(4, dtype=f64), wp.zeros(4, dtype=f64))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [(3, 17), (2, 64), (5, 131)])
def test_mirrored_reads_and_vector_stores(shape, threads):
    x, gy, gs = ints(shape + (2,), 30), ints(shape + (2,), 31), ints(shape + (2,), 32)
    out = lambda grad: wp.zeros(shape, dtype=wp.vec2d, requires_grad=grad)
    got = backward(mirrored, shape, [wp.array(x, dtype=wp.vec2d, requires_grad=True)], [out(True), out(True)],
                   [gy, gs], threads)
    np.testing.assert_array_equal(got[0], mirrored_reference(x, gy, gs))
    # `side` without a gradient: only y's seed flows back
    wp.config.num_threads = threads
    xa, y, side = wp.array(x, dtype=wp.vec2d, requires_grad=True), out(True), out(False)
    tape = wp.Tape()
    with tape:
        wp.launch(mirrored, dim=shape, inputs=[xa], outputs=[y, side])
    tape.backward(grads={y: wp.array(gy, dtype=wp.vec2d)})
    np.testing.assert_array_equal(xa.grad.numpy(), mirrored_reference(x, gy, 0.0 * gs))


def test_overwritten_vector_output_consumes_its_gradient():
    """Two launches store into the same y: the second's backward consumes y's gradient (the first gets none)."""
    shape = (3, 40)
    x1, x2, gy = ints(shape + (2,), 33), ints(shape + (2,), 34), ints(shape + (2,), 35)
    a1, a2 = (wp.array(v, dtype=wp.vec2d, requires_grad=True) for v in (x1, x2))
    y, side = (wp.zeros(shape, dtype=wp.vec2d, requires_grad=True) for _ in range(2))
    tape = wp.Tape()
    with tape:
        wp.launch(mirrored, dim=shape, inputs=[a1], outputs=[y, side])
        wp.launch(mirrored, dim=shape, inputs=[a2], outputs=[y, side])
    tape.backward(grads={y: wp.array(gy, dtype=wp.vec2d)})
    np.testing.assert_array_equal(a1.grad.numpy(), np.zeros_like(x1))
    np.testing.assert_array_equal(a2.grad.numpy(), mirrored_reference(x2, gy, 0.0 * gy))


# ---------------------------------------------------------------------------------------------------- guard split
@wp.func
def wrap_index(idx: int, n: int) -> int:
    r = idx % n
    if r < 0:
        r += n
    return r


@wp.kernel
def periodic_rows(n: int, u: wp.array2d(dtype=f64), out: wp.array2d(dtype=f64)):
    """rk3_update's periodic neighbours along the row (weft/backend/guards.py splits the row)."""
    i, j = wp.tid()
    out[i, j] = u[i, wrap_index(j + 1, n)] * u[i, j] - 2.0 * u[i, wrap_index(j - 1, n)]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [(3, 2), (3, 65), (300, 130)])
def test_split_backward_matches_numpy(shape, threads):
    """The backward takes the forward's guard plan: the interior of each row runs a lane body with the wrap folded
    (bwd_known_deferred), the rim the general lane body; chunks of 64 lanes mix the two."""
    u, g = ints(shape, 27), ints(shape, 28)
    src = adjoint_source(periodic_rows, shape[1], arr(u), arr(u))
    assert "weft::run_grid_deferred_split<2, true, Defer, Spill>" in src and "bwd_known_deferred" in src
    # a plan of guard comparisons alone keeps the unsplit deferred form (measured slower split)
    assert "weft::run_grid_deferred_split" not in adjoint_source(branches, arr(u), arr(u), arr(u))
    expect = np.roll(g * u, 1, axis=1) + g * np.roll(u, -1, axis=1) - 2.0 * np.roll(g, -1, axis=1)
    out = lambda: wp.zeros(shape, dtype=f64, requires_grad=True)
    for strided in (False, True):
        got = backward(periodic_rows, shape, [shape[1], arr(u, strided=strided)], [out()], [g], threads)
        np.testing.assert_array_equal(got[0], expect)


# ---------------------------------------------------------------------------------------------------- row-affine sites
@wp.kernel
def periodic_both(n: int, u: wp.array2d(dtype=f64), w: wp.array2d(dtype=f64), out: wp.array2d(dtype=f64)):
    """rk3_update's neighbours: rows through a wrap with a fix-up branch (row-invariant), columns folded."""
    i, j = wp.tid()
    out[i, j] = (u[wrap_index(i + 1, n), j] * w[i, wrap_index(j - 1, n)] - 2.0 * u[i, j]
                 + 3.0 * u[wrap_index(i - 1, n), wrap_index(j + 1, n)])


@wp.kernel
def row_from_data(n: int, rows: wp.array(dtype=int), u: wp.array2d(dtype=f64), out: wp.array2d(dtype=f64)):
    """A row index loaded per point, and a row index chosen under a branch on j: neither is row-invariant."""
    i, j = wp.tid()
    k = i
    if j > 2:
        k = wrap_index(i + 1, n)
    out[i, j] = u[rows[j], wrap_index(j + 1, n)] + 2.0 * u[k, wrap_index(j - 1, n)]


def _known_body(src: str) -> str:
    return src[src.index("void bwd_known_deferred"):src.index("void bwd_clip")]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("n", [3, 130, 300])
def test_row_affine_sites_match_numpy(n, threads):
    """Every site of periodic_both is row-affine: the split lane body stores values only (no offsets), bwd_bases
    computes each row's offsets and flush_affine adds whole chunks; the rims (columns 0 and n - 1) run the general
    body. Bitwise equal to NumPy (integer values), on one thread and on two (ownership mode: pieces split rows)."""
    shape = (n, n)
    u, w, g = ints(shape, 31), ints(shape, 32), ints(shape, 33)
    src = adjoint_source(periodic_both, n, arr(u), arr(w), arr(u))
    known = _known_body(src)
    assert "defer_add" not in known and known.count("[lane] = adj_") == 4
    assert src.count("weft::flush_affine(") == 4 and "d.base[3] = int32_t(weft::detail::offset32<true>(" in src
    roll = lambda a, di, dj: np.roll(a, (di, dj), axis=(0, 1))
    # out[i, j] reads u[i + 1, j], w[i, j - 1], u[i, j] and u[i - 1, j + 1] (periodic)
    gu = roll(g * roll(w, 0, 1), 1, 0) - 2.0 * g + 3.0 * roll(g, -1, 1)
    gw = roll(g * roll(u, -1, 0), 0, -1)
    out = wp.zeros(shape, dtype=f64, requires_grad=True)
    got = backward(periodic_both, shape, [n, arr(u), arr(w)], [out], [g], threads)
    np.testing.assert_array_equal(got[0], gu)
    np.testing.assert_array_equal(got[1], gw)


@pytest.mark.parametrize("threads", [1, 2])
def test_row_variant_indices_keep_offsets(threads):
    """A site whose row index is loaded per point or chosen under a branch on j records its offsets in the split
    lane body too (defer_add): only the row-invariant slice may give a row's offsets."""
    shape, n = (6, 140), 6
    rows = np.random.default_rng(36).integers(0, n, size=shape[1]).astype(np.int32)
    u, g = ints((n, shape[1]), 37), ints(shape, 38)
    src = adjoint_source(row_from_data, n, wp.array(rows, dtype=int), arr(u), arr(u))
    known = _known_body(src)
    assert known.count("weft::defer_add<true>(") == 2 and "flush_affine" not in src
    # the kernel wraps columns with n: columns j + 1 and j - 1 modulo n; rows rows[j] and k(i, j)
    m = shape[1]
    expect = np.zeros((n, m))
    for i in range(shape[0]):
        for j in range(m):
            k = i if j <= 2 else (i + 1) % n
            expect[rows[j], (j + 1) % n] += g[i, j]
            expect[k, (j - 1) % n] += 2.0 * g[i, j]
    out = wp.zeros(shape, dtype=f64, requires_grad=True)
    got = backward(row_from_data, shape, [n, wp.array(rows, dtype=int), arr(u)], [out], [g], threads)
    np.testing.assert_array_equal(got[0], expect)


def test_split_lane_loop_vectorises():
    """g++ vectorises the split lane loop of rk3_update's backward (the loop of known lanes in
    run_chunked_split_row), with the row-affine sites storing values only (-fopt-info-vec-optimized)."""
    import re
    import subprocess
    import sys
    from pathlib import Path

    from weft.toolchain.compiler import find_compiler
    from weft.toolchain.options import CpuOptions

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "fluids"))
    from navier_stokes import rk3_update

    n = 8
    a = lambda: wp.zeros((n, n), dtype=wp.float32, requires_grad=True)
    src = adjoint_source(rk3_update, n, 0.1, 1.0, 0.01, 1.0, 0.0, 1.0, a(), a(), a(), a())
    assert "defer_add" not in _known_body(src) and src.count("weft::flush_affine(") == 10
    native = Path(wp.__file__).resolve().parent / "native"
    launch = (native / "launch.h").read_text().splitlines()
    line = next(k + 1 for k, t in enumerate(launch) if "WEFT_DEFER_CALL(known" in t)
    cc = find_compiler()
    if cc.is_clang:
        pytest.skip("-fopt-info-vec-optimized is g++'s vectoriser report")
    opts = CpuOptions()
    with __import__("tempfile").TemporaryDirectory() as tmp:
        path = Path(tmp) / "rk3_bwd.cpp"
        path.write_text(src)
        flags = [f for f in opts.flags(cc.is_clang) if f != "-shared"] + ["-c", "-fopt-info-vec-optimized"]
        log = subprocess.run([cc.path, *flags, f"-I{native}", str(path), "-o", str(Path(tmp) / "m.o")],
                             capture_output=True, text=True, timeout=300)
    assert log.returncode == 0, log.stderr[-2000:]
    assert re.search(rf"launch\.h:{line}:\d+: optimized: loop vectorized", log.stderr), log.stderr[-2000:]


@wp.kernel
def masked_periodic(n: int, u: wp.array2d(dtype=f64), m: wp.array2d(dtype=f64), out: wp.array2d(dtype=f64)):
    """A data-dependent early return before periodic neighbour loads."""
    i, j = wp.tid()
    if m[i, j] > 0.0:
        return
    out[i, j] = u[i, wrap_index(j + 1, n)] * 2.0 + u[wrap_index(i - 1, n), j]


@pytest.mark.parametrize("threads", [1, 2])
def test_sites_after_an_early_return_keep_offsets(threads):
    """Sites after a data-dependent early return are conditional: the split lane body marks them empty and records
    offsets (a lane that returned adds nothing); only the mask load before the return is row-affine."""
    n = 150
    u, msk, g = ints((n, n), 41), ints((n, n), 42, -1, 2), ints((n, n), 43)
    src = adjoint_source(masked_periodic, n, arr(u), arr(msk), arr(u))
    known = _known_body(src)
    assert known.count("weft::defer_add<true>(") == 2 and src.count("weft::flush_affine(args.m,") == 1
    live = (msk <= 0) * g
    expect = np.roll(2.0 * live, 1, axis=1) + np.roll(live, -1, axis=0)
    out = wp.zeros((n, n), dtype=f64, requires_grad=True)
    got = backward(masked_periodic, (n, n), [n, arr(u), wp.array(msk, dtype=f64)], [out], [g], threads)
    np.testing.assert_array_equal(got[0], expect)
