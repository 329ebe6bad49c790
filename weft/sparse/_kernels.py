"""Value kernels of ``weft.sparse``, on flat scalar arrays (see ``_views``).

Topology (which blocks exist, where they sit) is computed by the host-side NumPy routines of ``_topology``; these
kernels move and combine the values, so value computations run multi-threaded on the CPU, on CUDA devices, and
are recorded on a ``wp.Tape`` like any launch (their adjoints come from weft's autodiff).

Each factory is cached per scalar type ``S`` (closed over for zero constants).
"""

from __future__ import annotations

import functools
import types
from typing import Any

import weft as wp


@functools.cache
def kernels(S) -> types.SimpleNamespace:

    @wp.kernel
    def gather(src: wp.array(dtype=Any), perm: wp.array(dtype=wp.int32), seg: wp.array(dtype=wp.int32), alpha: Any,
               dst: wp.array(dtype=Any)):
        # dst[t] = alpha * sum of src[perm[k]] for k in [seg[t], seg[t+1]) (converted to S: assignments may cast)
        # (the sum starts from its first term, not from 0, so a lone -0.0 keeps its sign in copies)
        t = wp.tid()
        beg = seg[t]
        end = seg[t + 1]
        s = S(0.0)
        if beg < end:
            s = S(src[perm[beg]])
        for k in range(beg + 1, end):
            s += S(src[perm[k]])
        if alpha != S(1.0):
            s = alpha * s
        dst[t] = s

    @wp.kernel
    def gather2(x: wp.array(dtype=Any), px: wp.array(dtype=wp.int32), sx: wp.array(dtype=wp.int32), alpha: Any,
                y: wp.array(dtype=Any), py: wp.array(dtype=wp.int32), sy: wp.array(dtype=wp.int32), beta: Any,
                dst: wp.array(dtype=Any)):
        # dst[t] = alpha * sum x[px[.]] + beta * sum y[py[.]] (dst is a fresh array: no in-place adjoints)
        t = wp.tid()
        a = S(0.0)
        for k in range(sx[t], sx[t + 1]):
            a += S(x[px[k]])
        b = S(0.0)
        for k in range(sy[t], sy[t + 1]):
            b += S(y[py[k]])
        dst[t] = alpha * a + beta * b

    @wp.kernel
    def scale(v: wp.array(dtype=Any), alpha: Any):
        t = wp.tid()
        v[t] = alpha * v[t]

    @wp.kernel
    def fill_blocks(pattern: wp.array(dtype=Any), period: wp.int32, dst: wp.array(dtype=Any)):
        # dst[t] = pattern[t mod period]: a uniform block repeated
        t = wp.tid()
        dst[t] = pattern[t % period]

    @wp.kernel
    def mv(offsets: wp.array(dtype=wp.int32), counts: wp.array(dtype=wp.int32), padded: wp.int32,
           columns: wp.array(dtype=wp.int32), A: wp.array(dtype=Any), x: wp.array(dtype=Any), br: wp.int32,
           bc: wp.int32, alpha: Any, beta: Any, y: wp.array(dtype=Any)):
        # one thread per scalar row: y[i*br+ii] = alpha * sum_k sum_jj A[k][ii, jj] x[col(k)*bc+jj] + beta * y[..]
        t = wp.tid()
        i = t / br
        ii = t - i * br
        beg = offsets[i]
        end = offsets[i + 1]
        if padded != 0:
            end = beg + counts[i]
        s = S(0.0)
        bs = br * bc
        for k in range(beg, end):
            c = columns[k]
            if c >= 0:
                base = k * bs + ii * bc
                for jj in range(bc):
                    s += A[base + jj] * x[c * bc + jj]
        out = alpha * s
        if beta != S(0.0):
            out += beta * y[t]
        y[t] = out

    @wp.kernel
    def mv_transpose(rows: wp.array(dtype=wp.int32), columns: wp.array(dtype=wp.int32),
                     slots: wp.array(dtype=wp.int32), A: wp.array(dtype=Any), x: wp.array(dtype=Any), br: wp.int32,
                     bc: wp.int32, alpha: Any, y: wp.array(dtype=Any)):
        # y = alpha A^T x (added into y): A has (bc x br) blocks here, br = block columns of A = y's vector length.
        # One thread per (active block, element jj of y's vector): atomically adds its column's share.
        t = wp.tid()
        k = t / br
        jj = t - k * br
        r = rows[k]
        c = columns[k]
        base = slots[k] * br * bc + jj
        s = S(0.0)
        for ii in range(bc):
            s += A[base + ii * br] * x[r * bc + ii]
        wp.atomic_add(y, c * br + jj, alpha * s)

    @wp.kernel
    def mm(x: wp.array(dtype=Any), y: wp.array(dtype=Any), pair_x: wp.array(dtype=wp.int32),
           pair_y: wp.array(dtype=wp.int32), seg: wp.array(dtype=wp.int32), xr: wp.int32, xc: wp.int32,
           yc: wp.int32, alpha: Any, z_old: wp.array(dtype=Any), z_src: wp.array(dtype=wp.int32), beta: Any,
           z: wp.array(dtype=Any)):
        # one thread per scalar of the result: z[b][ii, jj] = alpha sum_pairs (X Y)[ii, jj] + beta z_old[..]
        t = wp.tid()
        zs = xr * yc
        b = t / zs
        rem = t - b * zs
        ii = rem / yc
        jj = rem - ii * yc
        s = S(0.0)
        for p in range(seg[b], seg[b + 1]):
            xb = pair_x[p] * xr * xc + ii * xc
            yb = pair_y[p] * xc * yc + jj
            for kk in range(xc):
                s += x[xb + kk] * y[yb + kk * yc]
        out = alpha * s
        src = z_src[b]
        if src >= 0:
            out += beta * z_old[src * zs + rem]
        z[t] = out

    return types.SimpleNamespace(gather=gather, gather2=gather2, scale=scale, fill_blocks=fill_blocks, mv=mv,
                                 mv_transpose=mv_transpose, mm=mm)
