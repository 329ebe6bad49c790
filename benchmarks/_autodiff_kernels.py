"""Kernels shared by weft and NVIDIA Warp in bench_autodiff.py (loaded once per framework with ``wp`` bound).

``rk3_update`` is the SSP-RK3 substep of the 2-D Navier-Stokes seed (vorticity-streamfunction form, periodic
grid); ``mat_chain`` is a mat33-heavy per-element kernel without decompositions.
"""

try:
    wp  # noqa: B018 - injected by the loader
except NameError:  # imported directly: weft
    import weft as wp


@wp.func
def cyclic_index(idx: int, n: int):
    ret = idx % n
    if ret < 0:
        ret += n
    return ret


@wp.kernel
def rk3_update(n: int, h: float, re: float, dt: float, coeff0: float, coeff1: float, coeff2: float,
               omega_0: wp.array2d(dtype=float), omega_1: wp.array2d(dtype=float), psi: wp.array2d(dtype=float),
               omega_out: wp.array2d(dtype=float)):
    i, j = wp.tid()
    left = cyclic_index(i - 1, n)
    right = cyclic_index(i + 1, n)
    top = cyclic_index(j + 1, n)
    down = cyclic_index(j - 1, n)

    inv_h2 = 1.0 / (h * h)
    laplacian = (omega_1[right, j] + omega_1[left, j] + omega_1[i, top] + omega_1[i, down]
                 - 4.0 * omega_1[i, j]) * inv_h2

    inv_2h = 1.0 / (2.0 * h)
    j1 = ((omega_1[right, j] - omega_1[left, j]) * inv_2h) * ((psi[i, top] - psi[i, down]) * inv_2h)
    j2 = ((omega_1[i, top] - omega_1[i, down]) * inv_2h) * ((psi[right, j] - psi[left, j]) * inv_2h)

    rhs = (1.0 / re) * laplacian + j2 - j1
    omega_out[i, j] = coeff0 * omega_0[i, j] + coeff1 * omega_1[i, j] + coeff2 * dt * rhs


@wp.kernel
def mat_chain(a: wp.array(dtype=wp.mat33), b: wp.array(dtype=wp.mat33), out: wp.array(dtype=wp.mat33)):
    i = wp.tid()
    F = a[i] * b[i]
    Finv = wp.inverse(F)
    J = wp.determinant(F)
    C = wp.transpose(F) * F
    out[i] = C * Finv * J + wp.transpose(Finv) * wp.trace(C) - F * wp.transpose(b[i])
