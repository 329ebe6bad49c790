"""Guard splitting (weft/backend/guards.py): kernels guarded on their thread indices give the same results as NumPy
for odd sizes, tiny grids, every comparison and early returns, and the guard-free specialised body is rendered."""

import numpy as np
import pytest

import weft as wp
from weft.backend.guards import plan_guards
from weft.backend.renderer import Renderer, RenderOptions


@wp.kernel
def guarded_stencil(n: int, m: int, u: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    i, j = wp.tid()
    if i > 0 and j > 0 and i < n - 1 and j < m - 1:
        out[i, j] = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j]


@wp.kernel
def mixed_ops(n: int, m: int, c: int, u: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    # >=, <=, != and an inner index compared with an outer one, constants written on the left
    i, j = wp.tid()
    if j >= 1 and 2 <= i and j <= m - 2 and i != c and j < i + 3:
        out[i, j] = u[i, j] * 2.0 + 1.0


@wp.kernel
def early_return(n: int, x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    if i >= n:
        return
    y[i] = x[i] * 3.0


@wp.kernel
def guard_1d(n: int, x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    if i < n:
        y[i] = x[i] + 1.0


@wp.kernel
def guard_3d(n: int, u: wp.array3d(dtype=float), out: wp.array3d(dtype=float)):
    i, j, k = wp.tid()
    if k > 0 and k < n - 1 and j > 0:
        out[i, j, k] = u[i, j, k - 1] + u[i, j, k + 1]
    out[i, 0, 0] = 7.0


def _stencil_ref(u):
    ref = np.zeros_like(u)
    ref[1:-1, 1:-1] = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1]
    return ref


@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (1, 7), (2, 9), (3, 3), (7, 13), (33, 65)])
def test_guarded_stencil(shape):
    u = np.random.default_rng(0).random(shape).astype(np.float32)
    out = wp.zeros(shape, dtype=float)
    wp.launch(guarded_stencil, dim=shape, inputs=[shape[0], shape[1], wp.array(u), out])
    np.testing.assert_allclose(out.numpy(), _stencil_ref(u), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("bounds", [(7, 13), (0, 0), (-5, -3), (5, 8), (2, 1)])
def test_guard_bounds_not_matching_grid(bounds):
    # the guard's bounds come from arguments, not the grid: zero, negative and smaller values
    n, m = bounds
    u = np.random.default_rng(1).random((7, 13)).astype(np.float32)
    out = wp.zeros((7, 13), dtype=float)
    wp.launch(guarded_stencil, dim=(7, 13), inputs=[n, m, wp.array(u), out])
    ref = np.zeros_like(u)
    for i in range(7):
        for j in range(13):
            if 0 < i < n - 1 and 0 < j < m - 1:
                ref[i, j] = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j]
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-6, atol=1e-6)


def test_guard_bound_overflow():
    # m - 2 and bound + 1 near the int32 limits
    out = wp.zeros((5, 6), dtype=float)
    u = np.ones((5, 6), np.float32)
    for m in (2**31 - 1, -(2**31) + 2):
        out.zero_()
        wp.launch(mixed_ops, dim=(5, 6), inputs=[5, m, 3, wp.array(u), out])
        ref = np.zeros((5, 6), np.float32)
        for i in range(5):
            for j in range(6):
                if j >= 1 and 2 <= i and j <= m - 2 and i != 3 and j < i + 3:
                    ref[i, j] = 3.0
        np.testing.assert_array_equal(out.numpy(), ref)


@pytest.mark.parametrize("shape,c", [((9, 11), 4), ((2, 2), 0), ((5, 3), 2), ((12, 40), 7)])
def test_mixed_comparisons(shape, c):
    u = np.random.default_rng(2).random(shape).astype(np.float32)
    out = wp.zeros(shape, dtype=float)
    n, m = shape
    wp.launch(mixed_ops, dim=shape, inputs=[n, m, c, wp.array(u), out])
    ref = np.zeros_like(u)
    for i in range(n):
        for j in range(m):
            if j >= 1 and 2 <= i and j <= m - 2 and i != c and j < i + 3:
                ref[i, j] = u[i, j] * 2.0 + 1.0
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-6)


@pytest.mark.parametrize("size,n", [(1, 1), (2, 1), (17, 9), (1000, 999), (1000, 1000), (50, 0), (50, -4), (8, 99)])
def test_early_return_and_1d_guard(size, n):
    x = np.random.default_rng(3).random(size).astype(np.float32)
    y = wp.array(np.full(size, -1.0, np.float32))
    wp.launch(early_return, dim=size, inputs=[n, wp.array(x), y])
    k = max(0, min(n, size))
    expect = np.full(size, -1.0, np.float32)
    expect[:k] = x[:k] * 3.0
    np.testing.assert_allclose(y.numpy(), expect, rtol=1e-6)
    y = wp.array(np.full(size, -1.0, np.float32))
    wp.launch(guard_1d, dim=size, inputs=[n, wp.array(x), y])
    expect[:k] = x[:k] + 1.0
    np.testing.assert_allclose(y.numpy(), expect, rtol=1e-6)


@pytest.mark.parametrize("shape", [(2, 3, 5), (3, 1, 2), (4, 5, 33)])
def test_guard_3d_with_work_outside_the_guard(shape):
    u = np.random.default_rng(4).random(shape).astype(np.float32)
    out = wp.zeros(shape, dtype=float)
    wp.launch(guard_3d, dim=shape, inputs=[shape[2], wp.array(u), out])
    ref = np.zeros_like(u)
    ref[:, 1:, 1:-1] = u[:, 1:, :-2] + u[:, 1:, 2:]
    ref[:, 0, 0] = 7.0
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-6)


def test_flat_index_kernel_on_2d_launch():
    # ``i = wp.tid()`` on a 2-D launch: the guard compares the flat index
    x = np.random.default_rng(5).random(6 * 7).astype(np.float32)
    y = wp.array(np.full(42, -1.0, np.float32))
    wp.launch(guard_1d, dim=(6, 7), inputs=[20, wp.array(x), y])
    expect = np.full(42, -1.0, np.float32)
    expect[:20] = x[:20] + 1.0
    np.testing.assert_allclose(y.numpy(), expect, rtol=1e-6)


def test_plan_atoms():
    spec = guarded_stencil._lower(guarded_stencil.infer_types([4, 4, wp.zeros((2, 2)), wp.zeros((2, 2))]), False, None)
    plan = plan_guards(spec.fn)
    assert plan is not None and len(plan.inner) == 2 and len(plan.outer) == 2
    assert all(a.value for a in (*plan.inner, *plan.outer))
    spec = early_return._lower(early_return.infer_types([3, wp.zeros(2), wp.zeros(2)]), False, None)
    plan = plan_guards(spec.fn)
    assert plan is not None and [a.value for a in plan.inner] == [False] and not plan.outer


@wp.kernel
def not_equal_guard(k: int, m: int, u: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    # != on the innermost index: it holds on both sides of one point; the clip keeps the longer side
    i, j = wp.tid()
    if j != k and i != 0 and j != m - 1:
        out[i, j] = u[i, j] * 2.0 + 1.0


@wp.kernel
def equal_return(n: int, m: int, u: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    # the early-return form of a guarded stencil: a rim test with == and or
    i, j = wp.tid()
    if i == 0 or j == 0 or i == n - 1 or j == m - 1:
        return
    out[i, j] = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j]


@pytest.mark.parametrize("shape,k", [((3, 40), 30), ((3, 40), 5), ((2, 9), 0), ((4, 7), 6), ((3, 5), 99), ((2, 1), 0)])
def test_not_equal_and_equal_return(shape, k):
    n, m = shape
    u = np.random.default_rng(6).random(shape).astype(np.float32)
    out = wp.zeros(shape, dtype=float)
    wp.launch(not_equal_guard, dim=shape, inputs=[k, m, wp.array(u), out])
    ref = np.zeros_like(u)
    for i in range(n):
        for j in range(m):
            if j != k and i != 0 and j != m - 1:
                ref[i, j] = u[i, j] * 2.0 + 1.0
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-6)
    out = wp.zeros(shape, dtype=float)
    wp.launch(equal_return, dim=shape, inputs=[n, m, wp.array(u), out])
    np.testing.assert_allclose(out.numpy(), _stencil_ref(u), rtol=1e-6, atol=1e-6)
    # strided rows (the general instantiation, split as well)
    wide = np.zeros((n, 2 * m), np.float32)
    wide[:, ::2] = u
    outs = wp.zeros((n, 2 * m), dtype=float)
    wp.launch(equal_return, dim=shape, inputs=[n, m, wp.array(wide)[:, ::2], outs[:, ::2]])
    np.testing.assert_allclose(outs.numpy()[:, ::2], _stencil_ref(u), rtol=1e-6, atol=1e-6)
    assert not outs.numpy()[:, 1::2].any()


def test_plan_atoms_of_equality_tests():
    args = [4, 4, wp.zeros((2, 2)), wp.zeros((2, 2))]
    plan = plan_guards(equal_return._lower(equal_return.infer_types(args), False, None).fn)
    assert plan is not None and len(plan.inner) == 2 and len(plan.outer) == 2
    assert all(a.side.value == "except" and not a.value for a in plan.inner)


@wp.func
def wrap(idx: int, n: int) -> int:
    # the periodic index of Warp's stencil examples (cyclic_index): C-style % and a fix-up for negative values
    ret = idx % n
    if ret < 0:
        ret += n
    return ret


@wp.kernel
def periodic_stencil(n: int, u: wp.array2d(dtype=float), flat: wp.array(dtype=float), out: wp.array2d(dtype=float)):
    i, j = wp.tid()
    left = wrap(j - 1, n)
    right = wrap(j + 2, n)
    up = wrap(i + 1, n)
    out[i, j] = u[i, left] + 2.0 * u[i, right] - u[up, j] + 0.5 * u[i, wrap(j, n)] + flat[wrap(i * n + j, n)]


def test_periodic_index_identity():
    # (j + c) % n is j + c on 0 <= j + c < n: the plan lists the inner-index neighbour wraps as identities and
    # decides their fix-up comparisons; the outer-index wrap and wraps of j itself (no neighbour: a period or a
    # flat index, true on part of the row only) stay as written
    args = [4, wp.zeros((2, 2)), wp.zeros(4), wp.zeros((2, 2))]
    fn = periodic_stencil._lower(periodic_stencil.infer_types(args), False, None).fn
    plan = plan_guards(fn)
    assert plan is not None and len(plan.identities) == 2 and len(plan.implied) == 2
    assert not plan.inner and not plan.outer
    assert sorted(r.offset for r in plan.ranges) == [-2, -2, 1, 1]
    assert all(not a.value for a in plan.implied)
    src = Renderer(fn, RenderOptions()).render_module()
    known = src[src.index("void fwd_known"):src.index("void fwd_clip")]
    assert known.count("weft::mod(") == 3  # the outer index's wrap (hoisted out of the row loop), j's and the flat one


@pytest.mark.parametrize("shape,n", [((5, 9), 9), ((3, 1), 1), ((2, 2), 2), ((4, 70), 70), ((4, 70), 33), ((3, 12), 5)])
def test_periodic_stencil(shape, n):
    # n below the grid width reads columns j % n (u is wide enough); n == 1 and 2 wrap everything
    rows, cols = shape
    u = np.random.default_rng(7).random((max(rows, n) + 1, max(cols, n) + 1)).astype(np.float32)
    flat = np.random.default_rng(8).random(n).astype(np.float32)
    out = wp.zeros(shape, dtype=float)
    wp.launch(periodic_stencil, dim=shape, inputs=[n, wp.array(u), wp.array(flat), out])
    i, j = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    ref = (u[i, (j - 1) % n] + 2.0 * u[i, (j + 2) % n] - u[(i + 1) % n, j] + 0.5 * u[i, j % n]
           + flat[(i * n + j) % n])
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-6, atol=1e-6)


@wp.kernel
def tile_with_wrap(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    # a tile kernel runs in blocks, not the per-point grid loop: no guard plan, even with a periodic index
    i = wp.tid()
    t = wp.tile_load(x, shape=(8,))
    y[i] = t[(i + 1) % 8] + float(i < 4)


def test_tile_kernels_are_not_split():
    x = np.arange(8, dtype=np.float32)
    y = wp.zeros(8, dtype=float)
    wp.launch(tile_with_wrap, dim=8, inputs=[wp.array(x), y], block_dim=8)
    np.testing.assert_allclose(y.numpy(), np.roll(x, -1) + (np.arange(8) < 4))


@wp.func
def lookup(f: wp.array2d(dtype=float), x: int, y: int, w: int, h: int):
    # the boundary handling of Warp's grid-fluid example (lookup_float)
    x = wp.clamp(x, 0, w - 1)
    y = wp.clamp(y, 0, h - 1)
    return f[x, y]


@wp.kernel
def clamped_stencil(w: int, h: int, p: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    i, j = wp.tid()
    s = lookup(p, i - 1, j, w, h) + lookup(p, i + 1, j, w, h) + lookup(p, i, j - 1, w, h) + lookup(p, i, j + 1, w, h)
    out[i, j] = s + 0.5 * p[i, wp.min(j + 2, h - 1)] - 0.25 * p[i, wp.max(j - 3, 0)]


def test_clamped_index_identity():
    args = [4, 4, wp.zeros((2, 2)), wp.zeros((2, 2))]
    fn = clamped_stencil._lower(clamped_stencil.infer_types(args), False, None).fn
    plan = plan_guards(fn)
    # the inner index's clamps: clamp(j, ...) (one after CSE), clamp(j - 1), clamp(j + 1), min(j + 2), max(j - 3)
    assert plan is not None and len(plan.identities) == 5
    src = Renderer(fn, RenderOptions()).render_module()
    body = src[src.index("void fwd_body"):src.index("void fwd_known")]
    known = src[src.index("void fwd_known"):src.index("void fwd_clip")]
    # the outer index's clamps are left (hoisted out of the row loop)
    assert known.count("weft::clamp(") == body.count("weft::clamp(") - 3 and "weft::min(" not in known


@pytest.mark.parametrize("shape,bounds", [((6, 40), (6, 40)), ((3, 3), (3, 3)), ((2, 1), (2, 1)), ((5, 17), (5, 9)),
                                          ((4, 12), (4, 30))])
def test_clamped_stencil(shape, bounds):
    # bounds below the grid clamp inside it; above it, u is wide enough for the unclamped reads
    w, h = bounds
    rows, cols = shape
    p = np.random.default_rng(9).random((max(rows, w) + 1, max(cols, h) + 3)).astype(np.float32)
    out = wp.zeros(shape, dtype=float)
    wp.launch(clamped_stencil, dim=shape, inputs=[w, h, wp.array(p), out])
    i, j = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")

    def lk(x, y):
        return p[np.clip(x, 0, w - 1), np.clip(y, 0, h - 1)]

    ref = (lk(i - 1, j) + lk(i + 1, j) + lk(i, j - 1) + lk(i, j + 1) + 0.5 * p[i, np.minimum(j + 2, h - 1)]
           - 0.25 * p[i, np.maximum(j - 3, 0)])
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-6, atol=1e-6)


@wp.kernel
def branch_locals(n: int, c: int, u: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    # a local rebound in one branch: the other branch (and the code after the If) must not take that value's wrap
    i, j = wp.tid()
    x = j + 1
    v = 0.0
    if u[i, j] > 0.5:  # data-dependent: not decided by the plan
        x = j - 3
        v = u[i, wrap(x, n)]
    else:
        v = u[i, x % n]
    out[i, j] = v + u[i, wrap(x, n)]


def test_locals_rebound_in_branches():
    n = 12
    u = np.random.default_rng(10).random((4, n)).astype(np.float32)
    out = wp.zeros((4, n), dtype=float)
    wp.launch(branch_locals, dim=(4, n), inputs=[n, 2, wp.array(u), out])
    i, j = np.meshgrid(np.arange(4), np.arange(n), indexing="ij")
    x = np.where(u > 0.5, j - 3, j + 1)
    np.testing.assert_allclose(out.numpy(), 2.0 * u[i, x % n], rtol=1e-6)


@wp.kernel
def point_source(n: int, s: int, u: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    # a guarded stencil with a point source inside the guard (Warp's FDTD example): the split must not assume the
    # source row's `i == s`, which holds on one row only
    i, j = wp.tid()
    if i > 0 and j > 0 and i < n - 1 and j < n - 1:
        v = u[i, j - 1] + u[i, j + 1]
        if i == s and j == s:
            v += 100.0
        out[i, j] = v


def test_point_source_does_not_pin_the_split():
    args = [8, 3, wp.zeros((2, 2)), wp.zeros((2, 2))]
    plan = plan_guards(point_source._lower(point_source.infer_types(args), False, None).fn)
    assert plan is not None and len(plan.outer) == 2 and len(plan.inner) == 2  # i > 0, i < n - 1; j > 0, j < n - 1
    n = 9
    u = np.random.default_rng(11).random((n, n)).astype(np.float32)
    out = wp.zeros((n, n), dtype=float)
    wp.launch(point_source, dim=(n, n), inputs=[n, 4, wp.array(u), out])
    ref = np.zeros_like(u)
    ref[1:-1, 1:-1] = u[1:-1, :-2] + u[1:-1, 2:]
    ref[4, 4] += 100.0
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-6)


@wp.kernel
def mirrored_select(n: int, z: wp.array2d(dtype=float), s: wp.array2d(dtype=float)):
    # the spectrum split of examples/fluids/spectral.py: selects (two-way branches) on the thread indices
    r, k = wp.tid()
    half = n / 2
    top = r < half
    p = wp.where(top, r, r - half)
    b = z[p, wp.where(k == 0, 0, n - k)]
    s[r, k] = wp.where(top, z[p, k] + b, z[p, k] - b)


def test_two_way_branches_assume_only_equalities():
    # k == 0 is assumed false (all but one point of the row); r < half is not assumed either way (both sides work)
    args = [8, wp.zeros((2, 2)), wp.zeros((2, 2))]
    plan = plan_guards(mirrored_select._lower(mirrored_select.infer_types(args), False, None).fn)
    assert plan is not None and not plan.outer and len(plan.inner) == 1
    assert plan.inner[0].side.value == "except" and plan.inner[0].value is False
    n = 16
    z = np.random.default_rng(12).random((n // 2, n + 1)).astype(np.float32)
    out = wp.zeros((n, n // 2 + 1), dtype=float)
    wp.launch(mirrored_select, dim=(n, n // 2 + 1), inputs=[n, wp.array(z), out])
    r, k = np.meshgrid(np.arange(n), np.arange(n // 2 + 1), indexing="ij")
    p = np.where(r < n // 2, r, r - n // 2)
    b = z[p, np.where(k == 0, 0, n - k)]
    np.testing.assert_allclose(out.numpy(), np.where(r < n // 2, z[p, k] + b, z[p, k] - b), rtol=1e-6)


# ---------------------------------------------------------------------------------------------- rows of flat launches
@wp.func
def clamped_sample(f: wp.array(dtype=float), x: int, y: int, width: int, height: int):
    x = wp.clamp(x, 0, width - 1)
    y = wp.clamp(y, 0, height - 1)
    return f[y * width + x]


@wp.kernel
def flat_wave(f: wp.array(dtype=float), width: int, height: int, out: wp.array(dtype=float)):
    # Warp's example_wave: a 1-D launch recovering its cell with tid % width and tid // width, clamped neighbours
    tid = wp.tid()
    x = tid % width
    y = tid // width
    lap = (clamped_sample(f, x + 1, y, width, height) + clamped_sample(f, x - 1, y, width, height)
           + clamped_sample(f, x, y + 1, width, height) + clamped_sample(f, x, y - 1, width, height)
           - 4.0 * clamped_sample(f, x, y, width, height))
    out[tid] = lap + 0.5 * f[tid]


@wp.kernel
def flat_column_only(f: wp.array(dtype=float), width: int, out: wp.array(dtype=float)):
    # the column alone (no tid // width), a guard on it
    tid = wp.tid()
    x = tid % width
    if x > 0 and x < width - 1:
        out[tid] = f[tid - 1] - f[tid + 1] + float(x)


def _wave_ref(f, width, height, size):
    out = np.empty(size, np.float64)
    g = lambda x, y: f[min(max(y, 0), height - 1) * width + min(max(x, 0), width - 1)]
    for t in range(size):
        x, y = t % width, t // width
        out[t] = g(x + 1, y) + g(x - 1, y) + g(x, y + 1) + g(x, y - 1) - 4.0 * g(x, y) + 0.5 * f[t]
    return out


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("width,height,size", [(16, 16, 256), (7, 5, 35), (7, 5, 30), (1, 9, 9), (40, 1, 40),
                                               (33, 4, 100)])
def test_flat_rows_match_numpy(width, height, size, threads):
    """tid % width / tid // width kernels run in rows of width points (run_grid_split_rows): the row's interior runs
    the specialised body (no divisions, the clamps folded, contiguous loads); partial last rows and launches not a
    multiple of the width included. f is long enough for every clamped read."""
    old = wp.config.num_threads
    wp.config.num_threads = threads
    try:
        f = np.random.default_rng(11).random(max(size, width * height) + width).astype(np.float32)
        out = wp.zeros(size, dtype=float)
        wp.launch(flat_wave, dim=size, inputs=[wp.array(f), width, height, out])
        np.testing.assert_allclose(out.numpy(), _wave_ref(f.astype(np.float64), width, height, size), rtol=1e-5,
                                   atol=1e-5)
    finally:
        wp.config.num_threads = old


@pytest.mark.parametrize("width,size", [(10, 95), (3, 3), (2, 40), (0, 12), (-3, 12), (200, 50)])
def test_flat_rows_column_guard(width, size):
    """A guard on the column alone; a width of 0 or below has no rows (the flat body runs everywhere: x = tid % 0
    is 0 in weft, and the guard fails)."""
    f = np.random.default_rng(12).random(size + 2).astype(np.float32)
    out = wp.array(np.full(size, -1.0, np.float32))
    wp.launch(flat_column_only, dim=size, inputs=[wp.array(f), width, out])
    expect = np.full(size, -1.0, np.float64)
    for t in range(size) if width > 0 else ():
        x = t % width
        if 0 < x < width - 1:
            expect[t] = f[t - 1] - f[t + 1] + x
    np.testing.assert_allclose(out.numpy(), expect, rtol=1e-6, atol=1e-6)


def test_flat_rows_plan_and_source():
    """The plan takes x = tid % width as the innermost index and y = tid // width as the row; the specialised body
    reads both (and the flat index) from the row loop and has no division left."""
    args = [wp.zeros(4), 2, 2, wp.zeros(4)]
    fn = flat_wave._lower(flat_wave.infer_types(args), False, None).fn
    plan = plan_guards(fn)
    assert plan is not None and plan.flat is not None and plan.flat[2] is not None and len(plan.identities) >= 3
    src = Renderer(fn, RenderOptions()).render_module()
    known = src[src.index("void fwd_known"):src.index("void fwd_clip")]
    assert "weft::mod(" not in known and "weft::floordiv(" not in known
    assert "(i0 * args.width + i1)" in known and "weft::run_grid_split_rows<true>(" in src
