"""Kernels shared by weft and NVIDIA Warp in bench_core.py.

The module is loaded once per framework by ``bench_core.load_kernels``, which sets the global ``wp`` to ``weft`` or
``warp`` before executing this file, so both frameworks compile the very same source.
"""

try:
    wp  # noqa: B018 - injected by the loader
except NameError:  # imported directly: weft
    import weft as wp


@wp.kernel
def empty_kernel():
    pass


@wp.kernel
def eight_arrays(a0: wp.array(dtype=float), a1: wp.array(dtype=float), a2: wp.array(dtype=float),
                 a3: wp.array(dtype=float), a4: wp.array(dtype=float), a5: wp.array(dtype=float),
                 a6: wp.array(dtype=float), a7: wp.array(dtype=float)):
    i = wp.tid()
    a7[i] = a0[i] + a1[i] + a2[i] + a3[i] + a4[i] + a5[i] + a6[i]


@wp.kernel
def saxpy(a: float, x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


@wp.kernel
def stencil5(k: float, u: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    # interior points only: launched over (n - 2, n - 2)
    t0, t1 = wp.tid()
    i = t0 + 1
    j = t1 + 1
    lap = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j]
    out[i, j] = u[i, j] + k * lap


@wp.kernel
def stencil5_guarded(k: float, n: int, m: int, u: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    # the same stencil as Warp users write it: launched over the whole grid, the rim skipped by a guard
    i, j = wp.tid()
    if i > 0 and j > 0 and i < n - 1 and j < m - 1:
        lap = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j]
        out[i, j] = u[i, j] + k * lap
