"""Kernels of the linear solvers: matrix-vector products, two-stage dot products, vector updates.

Each factory returns kernels for one compute type ``C`` (float32 or float64). Array and scalar arguments are
annotated ``Any`` and specialised at launch; ``C`` is closed over only where kernel code must name the type
(zero constants, conversions), which generic annotations cannot express yet.

Scalars of the solvers (dot products, step lengths, the squared tolerance) live in a small device array ``scal``
indexed by slot numbers, so an iteration never reads back to the host and can be graph-captured.
"""

from __future__ import annotations

import functools
import types
from typing import Any

import weft as wp


@functools.cache
def basic_kernels(C) -> types.SimpleNamespace:
    """Matrix-vector products, reductions, copies and the tolerance: the building blocks of every solver."""

    @wp.kernel
    def dense_matvec(A: wp.array2d(dtype=Any), x: wp.array(dtype=Any), y: wp.array(dtype=Any), alpha: Any,
                     beta: Any, z: wp.array(dtype=Any)):
        # z = alpha A x + beta y, one row per thread; y may alias z (each row reads y before writing z).
        i = wp.tid()
        s = C(0.0)
        for j in range(A.shape[1]):
            s += A[i, j] * x[j]
        out = alpha * s
        if beta != C(0.0):
            out += beta * y[i]
        z[i] = out

    @wp.kernel
    def diag_matvec(d: wp.array(dtype=Any), x: wp.array(dtype=Any), y: wp.array(dtype=Any), alpha: Any, beta: Any,
                    z: wp.array(dtype=Any)):
        i = wp.tid()
        out = alpha * d[i] * x[i]
        if beta != C(0.0):
            out += beta * y[i]
        z[i] = out

    @wp.kernel
    def inverse_diagonal(A: wp.array2d(dtype=Any), use_abs: wp.int32, d: wp.array(dtype=Any)):
        i = wp.tid()
        a = A[i, i]
        if use_abs != 0:
            a = wp.abs(a)
        # A zero on the diagonal leaves that row unpreconditioned rather than dividing by zero.
        inv = C(1.0)
        if a != C(0.0):
            inv = C(1.0) / a
        d[i] = inv

    @wp.kernel
    def dot_partial(a: wp.array(dtype=Any), b: wp.array(dtype=Any), n: wp.int32, chunk_stride: wp.int32,
                    elem_stride: wp.int32, count: wp.int32, partial: wp.array(dtype=Any)):
        # Stage one: thread k sums `count` products at k * chunk_stride + m * elem_stride. Contiguous chunks suit
        # CPU threads; interleaved ones keep GPU loads coalesced.
        k = wp.tid()
        s = C(0.0)
        for m in range(count):
            j = k * chunk_stride + m * elem_stride
            if j < n:
                s += a[j] * b[j]
        partial[k] = s

    @wp.kernel
    def dot_final(partial: wp.array(dtype=Any), nparts: wp.int32, slot: wp.int32, scal: wp.array(dtype=Any)):
        # Stage two: one thread adds the partial sums, in a fixed order (results are deterministic).
        s = C(0.0)
        for k in range(nparts):
            s += partial[k]
        scal[slot] = s

    @wp.kernel
    def copy(src: wp.array(dtype=Any), dst: wp.array(dtype=Any)):
        i = wp.tid()
        dst[i] = src[i]

    @wp.kernel
    def set_tolerance(scal: wp.array(dtype=Any), bb_slot: wp.int32, tol2_slot: wp.int32, atol2: Any, rtol2: Any):
        # Squared stopping tolerance max(atol, tol |b|)^2, computed on the device (no host synchronisation).
        scal[tol2_slot] = wp.max(atol2, rtol2 * scal[bb_slot])

    @wp.kernel
    def slot_sqrt(scal: wp.array(dtype=Any), slot: wp.int32, out: wp.array(dtype=Any)):
        out[0] = wp.sqrt(wp.max(scal[slot], C(0.0)))

    return types.SimpleNamespace(**{k: v for k, v in locals().items() if isinstance(v, wp.Kernel)})


@functools.cache
def cg_kernels(C) -> types.SimpleNamespace:
    """The vector and scalar updates of (preconditioned) conjugate gradients. Slots: see ``linear._CG``."""

    @wp.kernel
    def update_xr(scal: wp.array(dtype=Any), p: wp.array(dtype=Any), Ap: wp.array(dtype=Any),
                  x: wp.array(dtype=Any), r: wp.array(dtype=Any)):
        # Slots: 0 rz, 2 p.Ap, 3 r.r, 4 tol^2. Once converged the step is zero, so a captured run of several
        # iterations leaves a converged solution unchanged.
        i = wp.tid()
        alpha = C(0.0)
        if scal[3] > scal[4] and scal[2] != C(0.0):
            alpha = scal[0] / scal[2]
        x[i] = x[i] + alpha * p[i]
        r[i] = r[i] - alpha * Ap[i]

    @wp.kernel
    def scalars(scal: wp.array(dtype=Any), rr_is_rz: wp.int32):
        # Slots: 0 rz, 1 new rz, 3 r.r, 4 tol^2, 5 beta.
        if rr_is_rz != 0:
            scal[3] = scal[1]
        beta = C(0.0)
        if scal[3] > scal[4] and scal[0] != C(0.0):
            beta = scal[1] / scal[0]
        scal[5] = beta
        scal[0] = scal[1]

    @wp.kernel
    def update_p(scal: wp.array(dtype=Any), z: wp.array(dtype=Any), p: wp.array(dtype=Any)):
        i = wp.tid()
        p[i] = z[i] + scal[5] * p[i]

    return types.SimpleNamespace(**{k: v for k, v in locals().items() if isinstance(v, wp.Kernel)})


@functools.cache
def bicgstab_kernels(C) -> types.SimpleNamespace:
    """The vector and scalar updates of right-preconditioned BiCGSTAB. Slots: see ``linear._BICGSTAB``."""

    @wp.kernel
    def alpha(scal: wp.array(dtype=Any)):
        # Slots: 0 rho, 1 r0.v, 3 r.r, 4 tol^2, 6 alpha.
        a = C(0.0)
        if scal[3] > scal[4] and scal[1] != C(0.0):
            a = scal[0] / scal[1]
        scal[6] = a

    @wp.kernel
    def omega(scal: wp.array(dtype=Any)):
        # Slots: 3 r.r, 4 tol^2, 7 omega, 8 t.s, 9 t.t.
        w = C(0.0)
        if scal[3] > scal[4] and scal[9] != C(0.0):
            w = scal[8] / scal[9]
        scal[7] = w

    @wp.kernel
    def beta(scal: wp.array(dtype=Any)):
        # Slots: 0 rho, 2 new rho, 5 beta, 6 alpha, 7 omega. A breakdown (rho or omega zero) restarts the search
        # direction from the residual (beta = 0).
        b = C(0.0)
        if scal[0] != C(0.0) and scal[7] != C(0.0):
            b = (scal[2] / scal[0]) * (scal[6] / scal[7])
        scal[5] = b
        scal[0] = scal[2]

    @wp.kernel
    def axpy2(scal: wp.array(dtype=Any), slot: wp.int32, u: wp.array(dtype=Any), w: wp.array(dtype=Any),
              x: wp.array(dtype=Any), r: wp.array(dtype=Any)):
        # x += c u ; r -= c w, with c = scal[slot]
        i = wp.tid()
        c = scal[slot]
        x[i] = x[i] + c * u[i]
        r[i] = r[i] - c * w[i]

    @wp.kernel
    def update_p(scal: wp.array(dtype=Any), r: wp.array(dtype=Any), v: wp.array(dtype=Any), p: wp.array(dtype=Any)):
        # p = r + beta (p - omega v)
        i = wp.tid()
        p[i] = r[i] + scal[5] * (p[i] - scal[7] * v[i])

    return types.SimpleNamespace(**{k: v for k, v in locals().items() if isinstance(v, wp.Kernel)})


@functools.cache
def cr_kernels(C) -> types.SimpleNamespace:
    """The updates of (preconditioned) conjugate residuals. Slots: see ``linear._CR``."""

    @wp.kernel
    def alpha(scal: wp.array(dtype=Any)):
        # Slots: 0 z.Az, 1 Ap.M Ap, 3 r.r, 4 tol^2, 6 alpha. Zero once converged (captured runs stay put).
        a = C(0.0)
        if scal[3] > scal[4] and scal[1] != C(0.0):
            a = scal[0] / scal[1]
        scal[6] = a

    @wp.kernel
    def update(scal: wp.array(dtype=Any), p: wp.array(dtype=Any), Ap: wp.array(dtype=Any), MAp: wp.array(dtype=Any),
               separate_z: wp.int32, x: wp.array(dtype=Any), r: wp.array(dtype=Any), z: wp.array(dtype=Any)):
        # x += alpha p ; r -= alpha Ap ; z -= alpha M Ap (z is r itself without a preconditioner)
        i = wp.tid()
        a = scal[6]
        x[i] = x[i] + a * p[i]
        r[i] = r[i] - a * Ap[i]
        if separate_z != 0:
            z[i] = z[i] - a * MAp[i]

    @wp.kernel
    def beta(scal: wp.array(dtype=Any)):
        # Slots: 0 z.Az, 2 new z.Az, 3 r.r, 4 tol^2, 5 beta.
        b = C(0.0)
        if scal[3] > scal[4] and scal[0] != C(0.0):
            b = scal[2] / scal[0]
        scal[5] = b
        scal[0] = scal[2]

    @wp.kernel
    def update_p(scal: wp.array(dtype=Any), z: wp.array(dtype=Any), Az: wp.array(dtype=Any), p: wp.array(dtype=Any),
                 Ap: wp.array(dtype=Any)):
        # p = z + beta p ; Ap = Az + beta Ap
        i = wp.tid()
        b = scal[5]
        p[i] = z[i] + b * p[i]
        Ap[i] = Az[i] + b * Ap[i]

    return types.SimpleNamespace(**{k: v for k, v in locals().items() if isinstance(v, wp.Kernel)})


@functools.cache
def gmres_kernels(C) -> types.SimpleNamespace:
    """Arnoldi (modified Gram-Schmidt), Givens rotations and the small triangular solve of restarted GMRES, all on
    the device. ``V`` is ``(m + 1, n)``, ``H`` is ``(m + 1, m)``; slots: see ``linear._GMRES``."""

    @wp.kernel
    def start(scal: wp.array(dtype=Any), g: wp.array(dtype=Any), m: wp.int32):
        # g = (|r|, 0, ...): the right-hand side of the least-squares problem of this cycle
        g[0] = wp.sqrt(wp.max(scal[3], C(0.0)))
        for k in range(1, m + 1):
            g[k] = C(0.0)

    @wp.kernel
    def set_row(w: wp.array(dtype=Any), g: wp.array(dtype=Any), V: wp.array2d(dtype=Any), row: wp.int32):
        # V[row] = w / g[0] (zero when g[0] is zero: nothing left to solve)
        i = wp.tid()
        s = g[0]
        v = C(0.0)
        if s > C(0.0):
            v = w[i] / s
        V[row, i] = v

    @wp.kernel
    def orthogonalize(scal: wp.array(dtype=Any), slot: wp.int32, V: wp.array2d(dtype=Any), row: wp.int32,
                      w: wp.array(dtype=Any)):
        # w -= (w . V[row]) V[row], the dot product in scal[slot]
        i = wp.tid()
        w[i] = w[i] - scal[slot] * V[row, i]

    @wp.kernel
    def store_h(scal: wp.array(dtype=Any), slot: wp.int32, sqrt_it: wp.int32, H: wp.array2d(dtype=Any), i: wp.int32,
                j: wp.int32):
        v = scal[slot]
        if sqrt_it != 0:
            v = wp.sqrt(wp.max(v, C(0.0)))
        H[i, j] = v

    @wp.kernel
    def normalize(w: wp.array(dtype=Any), H: wp.array2d(dtype=Any), j: wp.int32, V: wp.array2d(dtype=Any)):
        # V[j + 1] = w / H[j + 1, j]; a (near) zero norm is a breakdown: the Krylov space is exhausted
        i = wp.tid()
        h = H[j + 1, j]
        v = C(0.0)
        if h > C(0.0):
            v = w[i] / h
        V[j + 1, i] = v

    @wp.kernel
    def givens(scal: wp.array(dtype=Any), H: wp.array2d(dtype=Any), cs: wp.array(dtype=Any), sn: wp.array(dtype=Any),
               g: wp.array(dtype=Any), j: wp.int32):
        # apply the previous rotations to column j, then the rotation that zeroes H[j + 1, j]
        for i in range(j):
            a = H[i, j]
            b = H[i + 1, j]
            H[i, j] = cs[i] * a + sn[i] * b
            H[i + 1, j] = -sn[i] * a + cs[i] * b
        a = H[j, j]
        b = H[j + 1, j]
        d = wp.sqrt(a * a + b * b)
        c = C(1.0)
        s = C(0.0)
        if d > C(0.0):
            c = a / d
            s = b / d
        cs[j] = c
        sn[j] = s
        H[j, j] = d
        H[j + 1, j] = C(0.0)
        gj = g[j]
        g[j] = c * gj
        g[j + 1] = -s * gj
        scal[3] = g[j + 1] * g[j + 1]

    @wp.kernel
    def back_solve(H: wp.array2d(dtype=Any), g: wp.array(dtype=Any), m: wp.int32, y: wp.array(dtype=Any)):
        # y = H[:m, :m]^-1 g[:m] (upper triangular after the rotations; zero pivots give zero components)
        for kk in range(m):
            k = m - 1 - kk
            s = g[k]
            for l in range(k + 1, m):
                s -= H[k, l] * y[l]
            d = H[k, k]
            v = C(0.0)
            if d != C(0.0):
                v = s / d
            y[k] = v

    @wp.kernel
    def combine(V: wp.array2d(dtype=Any), y: wp.array(dtype=Any), m: wp.int32, out: wp.array(dtype=Any)):
        # out = V[:m]^T y
        i = wp.tid()
        s = C(0.0)
        for k in range(m):
            s += y[k] * V[k, i]
        out[i] = s

    return types.SimpleNamespace(**{k: v for k, v in locals().items() if isinstance(v, wp.Kernel)})
