"""Gradient accumulation of multithreaded CPU backward launches.

A backward launch on several threads adds into gradients with plain adds where no two threads can reach the same
element (arrays each thread reads only at its own index), into per-thread copies summed after the grid (arrays only
read, at any index), and with atomics otherwise; each choice is checked at run time against the arguments'
layouts. Every case here must give the gradient of a serial launch. Values are small integers in float64, so every
sum is exact whatever the order of the adds, and the comparison is bitwise.
"""

import numpy as np
import pytest

import weft as wp

f64 = wp.float64
N = 1 << 16  # four times the grid points run_grid gives each thread: the launches below run on two threads


@pytest.fixture
def two_threads():
    old = (wp.config.num_threads, wp.config.deterministic)
    wp.config.num_threads, wp.config.deterministic = 2, False
    yield
    wp.config.num_threads, wp.config.deterministic = old


def ints(shape, seed, lo=-4, hi=5):
    return np.random.default_rng(seed).integers(lo, hi, size=shape).astype(np.float64)


@wp.kernel
def stencil(n: int, x: wp.array(dtype=f64), w: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    left = (i + n - 1) % n
    right = (i + 1) % n
    out[i] = x[left] * w[i] + 2.0 * x[right] - x[i] * x[i]


@wp.kernel
def gather(idx: wp.array(dtype=int), x: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    out[i] = 3.0 * x[idx[i]] + x[(i * 7) % N]


@wp.kernel
def own_and_gather(n: int, a: wp.array(dtype=f64), b: wp.array(dtype=f64), out: wp.array(dtype=f64)):
    i = wp.tid()
    out[i] = a[i] * 2.0 + b[(i + 1) % n]


@wp.kernel
def mat_product(a: wp.array(dtype=wp.mat33d), b: wp.array(dtype=wp.mat33d), out: wp.array(dtype=wp.mat33d)):
    i = wp.tid()
    out[i] = a[i] * b[i]


@wp.kernel
def stencil_2d(a: wp.array2d(dtype=wp.vec3d), out: wp.array2d(dtype=wp.vec3d)):
    i, j = wp.tid()
    n = a.shape[0]
    m = a.shape[1]
    out[i, j] = a[(i + 1) % n, j] + a[i, (j + m - 1) % m] * 2.0 - a[i, j]


@wp.kernel
def row_view(a: wp.array2d(dtype=f64), out: wp.array2d(dtype=f64)):
    i, j = wp.tid()
    row = a[(i + 1) % a.shape[0]]
    out[i, j] = row[j] * 2.0 + a[i, j]


def backward(kernel, dim, inputs, outputs, seeds, threads):
    """Gradients of inputs after a backward pass on `threads` threads (grads zeroed first)."""
    wp.config.num_threads = threads
    tape = wp.Tape()
    with tape:
        wp.launch(kernel, dim=dim, inputs=inputs, outputs=outputs)
    tape.zero()
    tape.backward(grads={o: wp.array(s, dtype=o.dtype) for o, s in zip(outputs, seeds)})
    return [a.grad.numpy().copy() for a in inputs if getattr(a, "grad", None) is not None]


def same_as_serial(kernel, dim, make_inputs, make_outputs, seeds):
    results = []
    for threads in (1, 2):
        inputs, outputs = make_inputs(), make_outputs()
        results.append(backward(kernel, dim, inputs, outputs, seeds, threads))
    assert len(results[0]) == len(results[1]) > 0
    for serial, parallel in zip(*results):
        np.testing.assert_array_equal(parallel, serial)
    return results[1]


def arr(values, dtype=f64):
    return wp.array(values, dtype=dtype, requires_grad=True)


def test_stencil_neighbours_privatised(two_threads):
    x0, w0, seed = ints(N, 0), ints(N, 1), ints(N, 2)
    grads = same_as_serial(stencil, N, lambda: [N, arr(x0), arr(w0)], lambda: [arr(np.zeros(N))], [seed])
    left, right = np.roll(seed, -1), np.roll(seed, 1)  # out[i] reads x[i-1]: x[k] hears from out[k+1]
    np.testing.assert_array_equal(grads[0], left * np.roll(w0, -1) + 2.0 * right - 2.0 * x0 * seed)
    np.testing.assert_array_equal(grads[1], np.roll(x0, 1) * seed)


def test_stencil_2d_vectors(two_threads):
    shape = (256, 256)
    a0, seed = ints(shape + (3,), 3), ints(shape + (3,), 4)
    grads = same_as_serial(stencil_2d, shape, lambda: [arr(a0, wp.vec3d)],
                           lambda: [arr(np.zeros(shape + (3,)), wp.vec3d)], [seed])
    # out[i, j] reads a[i + 1, j], a[i, j - 1] (twice) and a[i, j]: a[k, l] hears from out[k - 1, l] and out[k, l + 1]
    expect = np.roll(seed, 1, axis=0) + 2.0 * np.roll(seed, -1, axis=1) - seed
    np.testing.assert_array_equal(grads[0], expect)


@pytest.mark.parametrize("size", [N // 4, 8 * N])  # copies per thread are cheap / cost more than atomics
def test_gather_with_collisions(two_threads, size):
    idx = wp.array(np.random.default_rng(5).integers(0, min(size, N) // 16, N).astype(np.int32), dtype=int)
    x0 = ints(max(size, N), 6)
    seed = ints(N, 7)
    grads = same_as_serial(gather, N, lambda: [idx, arr(x0)], lambda: [arr(np.zeros(N))], [seed])
    expect = np.zeros_like(x0)
    np.add.at(expect, idx.numpy(), 3.0 * seed)
    np.add.at(expect, (np.arange(N) * 7) % N, seed)
    np.testing.assert_array_equal(grads[0], expect)


def test_own_index_mat33(two_threads):
    a0, b0, seed = ints((N, 3, 3), 8), ints((N, 3, 3), 9), ints((N, 3, 3), 10)
    grads = same_as_serial(mat_product, N, lambda: [arr(a0, wp.mat33d), arr(b0, wp.mat33d)],
                           lambda: [arr(np.zeros((N, 3, 3)), wp.mat33d)], [seed])
    np.testing.assert_array_equal(grads[0], seed @ b0.transpose(0, 2, 1))
    np.testing.assert_array_equal(grads[1], a0.transpose(0, 2, 1) @ seed)


def test_same_array_twice(two_threads):
    # a[i] (own index) and b[i + 1] are one array: the own-index plain adds and the copies must both be refused
    x0, seed = ints(N, 11), ints(N, 12)

    def inputs():
        x = arr(x0)
        return [N, x, x]

    grads = same_as_serial(own_and_gather, N, inputs, lambda: [arr(np.zeros(N))], [seed])
    np.testing.assert_array_equal(grads[0], 2.0 * seed + np.roll(seed, 1))


def test_same_matrix_array_twice(two_threads):
    a0, seed = ints((N, 3, 3), 13), ints((N, 3, 3), 14)

    def inputs():
        a = arr(a0, wp.mat33d)
        return [a, a]

    grads = same_as_serial(mat_product, N, inputs, lambda: [arr(np.zeros((N, 3, 3)), wp.mat33d)], [seed])
    np.testing.assert_array_equal(grads[0], seed @ a0.transpose(0, 2, 1) + a0.transpose(0, 2, 1) @ seed)


def test_overlapping_views(two_threads):
    # a = base[0:N], b = base[1:N + 1]: disjoint indices into overlapping gradients
    base0, seed = ints(N + 1, 15), ints(N, 16)
    bases = []

    def inputs():
        base = arr(base0)
        bases.append(base)
        return [N, base[0:N], base[1:N + 1]]

    for threads in (1, 2):
        backward(own_and_gather, N, inputs(), [arr(np.zeros(N))], [seed], threads)
    np.testing.assert_array_equal(bases[1].grad.numpy(), bases[0].grad.numpy())
    expect = np.zeros(N + 1)
    expect[:N] += 2.0 * seed
    expect[1 + (np.arange(N) + 1) % N] += seed
    np.testing.assert_array_equal(bases[1].grad.numpy(), expect)


def test_strided_view_not_privatised(two_threads):
    # every other element: the gaps belong to no element of the view, so its gradient is not copied per thread
    base0, w0, seed = ints(2 * N, 17), ints(N, 18), ints(N, 19)
    bases = []

    def inputs():
        base = arr(base0)
        bases.append(base)
        return [N, base[::2], arr(w0)]

    for threads in (1, 2):
        backward(stencil, N, inputs(), [arr(np.zeros(N))], [seed], threads)
    np.testing.assert_array_equal(bases[1].grad.numpy(), bases[0].grad.numpy())
    assert not bases[1].grad.numpy()[1::2].any()
    x0 = base0[::2]
    left, right = np.roll(seed, -1), np.roll(seed, 1)
    np.testing.assert_array_equal(bases[1].grad.numpy()[::2], left * np.roll(w0, -1) + 2.0 * right - 2.0 * x0 * seed)


def test_row_views_use_atomics(two_threads):
    # a row view of the array is more than a load: its gradient is neither copied per thread nor plain-added
    shape = (256, 256)
    a0, seed = ints(shape, 20), ints(shape, 21)
    grads = same_as_serial(row_view, shape, lambda: [arr(a0)], lambda: [arr(np.zeros(shape))], [seed])
    np.testing.assert_array_equal(grads[0], 2.0 * np.roll(seed, 1, axis=0) + seed)


def test_explicit_adjoint_shared_adjoint_array(two_threads):
    # Warp's explicit form with one adjoint array for both inputs
    x0, seed = ints(N, 23), ints(N, 24)
    results = []
    for threads in (1, 2):
        wp.config.num_threads = threads
        x = wp.array(x0, dtype=f64)
        out = wp.zeros(N, dtype=f64)
        g = wp.zeros(N, dtype=f64)
        wp.launch(own_and_gather, dim=N, inputs=[N, x, x], outputs=[out], adj_inputs=[None, g, g],
                  adj_outputs=[wp.array(seed, dtype=f64)], adjoint=True)
        results.append(g.numpy().copy())
    np.testing.assert_array_equal(results[1], results[0])
    np.testing.assert_array_equal(results[1], 2.0 * seed + np.roll(seed, 1))


def test_entry_chooses_per_array():
    """The generated backward entry: plain adds for own-index arrays, per-thread copies for gathered ones."""
    x = arr(np.zeros(8))
    args = [8, x, arr(np.zeros(8)), arr(np.zeros(8))]
    spec = own_and_gather.specialize(own_and_gather.infer_types(args))
    source = own_and_gather.adjoint_of(spec).source
    assert "grad_exclusive(args.a," in source
    assert "private_grad(args.b," in source
    assert "grad_exclusive(args.out," in source  # the output is only stored at its own index
    assert "private_grad(args.out," not in source
    spec = row_view.specialize(row_view.infer_types([arr(np.zeros((2, 2))), arr(np.zeros((2, 2)))]))
    source = row_view.adjoint_of(spec).source
    assert "grad_exclusive(args.a," not in source and "private_grad(args.a," not in source
