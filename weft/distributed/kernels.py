"""The weft kernels of ``weft.distributed``: region packing for halo exchanges (any dtype, 1-3-D), their
adjoints (move a gradient region out / add one in), the all-to-all transposes and the row FFTs of the slab FFT.

Every kernel here is generic over the element type (``Any``): weft specialises it per dtype at launch."""


import functools
from typing import Any

import weft as wp


# ------------------------------------------------------------------ region copies (o: region offset in ``a``)
@wp.kernel
def pack1(a: wp.array1d(dtype=Any), o0: int, buf: wp.array1d(dtype=Any)):
    i = wp.tid()
    buf[i] = a[o0 + i]


@wp.kernel
def pack2(a: wp.array2d(dtype=Any), o0: int, o1: int, buf: wp.array2d(dtype=Any)):
    i, j = wp.tid()
    buf[i, j] = a[o0 + i, o1 + j]


@wp.kernel
def pack3(a: wp.array3d(dtype=Any), o0: int, o1: int, o2: int, buf: wp.array3d(dtype=Any)):
    i, j, k = wp.tid()
    buf[i, j, k] = a[o0 + i, o1 + j, o2 + k]


@wp.kernel
def unpack1(buf: wp.array1d(dtype=Any), o0: int, a: wp.array1d(dtype=Any)):
    i = wp.tid()
    a[o0 + i] = buf[i]


@wp.kernel
def unpack2(buf: wp.array2d(dtype=Any), o0: int, o1: int, a: wp.array2d(dtype=Any)):
    i, j = wp.tid()
    a[o0 + i, o1 + j] = buf[i, j]


@wp.kernel
def unpack3(buf: wp.array3d(dtype=Any), o0: int, o1: int, o2: int, a: wp.array3d(dtype=Any)):
    i, j, k = wp.tid()
    a[o0 + i, o1 + j, o2 + k] = buf[i, j, k]


@wp.kernel
def take1(a: wp.array1d(dtype=Any), o0: int, zero: wp.array1d(dtype=Any), buf: wp.array1d(dtype=Any)):
    """Move a region of ``a`` into ``buf`` and clear it there (``zero`` holds zeros of the region's shape)."""
    i = wp.tid()
    buf[i] = a[o0 + i]
    a[o0 + i] = zero[i]


@wp.kernel
def take2(a: wp.array2d(dtype=Any), o0: int, o1: int, zero: wp.array2d(dtype=Any), buf: wp.array2d(dtype=Any)):
    i, j = wp.tid()
    buf[i, j] = a[o0 + i, o1 + j]
    a[o0 + i, o1 + j] = zero[i, j]


@wp.kernel
def take3(a: wp.array3d(dtype=Any), o0: int, o1: int, o2: int, zero: wp.array3d(dtype=Any),
          buf: wp.array3d(dtype=Any)):
    i, j, k = wp.tid()
    buf[i, j, k] = a[o0 + i, o1 + j, o2 + k]
    a[o0 + i, o1 + j, o2 + k] = zero[i, j, k]


@wp.kernel
def accumulate1(buf: wp.array1d(dtype=Any), o0: int, a: wp.array1d(dtype=Any)):
    i = wp.tid()
    a[o0 + i] = a[o0 + i] + buf[i]


@wp.kernel
def accumulate2(buf: wp.array2d(dtype=Any), o0: int, o1: int, a: wp.array2d(dtype=Any)):
    i, j = wp.tid()
    a[o0 + i, o1 + j] = a[o0 + i, o1 + j] + buf[i, j]


@wp.kernel
def accumulate3(buf: wp.array3d(dtype=Any), o0: int, o1: int, o2: int, a: wp.array3d(dtype=Any)):
    i, j, k = wp.tid()
    a[o0 + i, o1 + j, o2 + k] = a[o0 + i, o1 + j, o2 + k] + buf[i, j, k]


PACK = {1: pack1, 2: pack2, 3: pack3}
UNPACK = {1: unpack1, 2: unpack2, 3: unpack3}
TAKE = {1: take1, 2: take2, 3: take3}
ACCUMULATE = {1: accumulate1, 2: accumulate2, 3: accumulate3}


def add_into_flat(dest, src) -> None:
    """dest += src for two arrays of one shape (contiguous; viewed as 1-D)."""
    d, s = dest.flatten(), src.flatten()
    wp.launch(accumulate1, dim=d.shape[0], inputs=[s, 0], outputs=[d], device=dest.device, record_tape=False)


# ------------------------------------------------------------------ reductions
@wp.kernel
def sum1(a: wp.array1d(dtype=Any), out: wp.array1d(dtype=Any)):
    i = wp.tid()
    wp.atomic_add(out, 0, a[i])


@wp.kernel
def sum2(a: wp.array2d(dtype=Any), out: wp.array1d(dtype=Any)):
    i, j = wp.tid()
    wp.atomic_add(out, 0, a[i, j])


@wp.kernel
def sum3(a: wp.array3d(dtype=Any), out: wp.array1d(dtype=Any)):
    i, j, k = wp.tid()
    wp.atomic_add(out, 0, a[i, j, k])


SUM = {1: sum1, 2: sum2, 3: sum3}


# ------------------------------------------------------------------ slab FFT transposes
@wp.kernel
def transpose_pack(x: wp.array2d(dtype=Any), send: wp.array3d(dtype=Any)):
    """send[q, c, i] = x[i, q * mb + c]: x is (ma, P * mb), send is (P, mb, ma) (block q goes to rank q)."""
    q, c, i = wp.tid()
    mb = send.shape[1]
    send[q, c, i] = x[i, q * mb + c]


@wp.kernel
def transpose_unpack(recv: wp.array3d(dtype=Any), out: wp.array2d(dtype=Any)):
    """out[c, p * ma + i] = recv[p, c, i]: recv is (P, mb, ma) (block p came from rank p), out is (mb, P * ma)."""
    p, c, i = wp.tid()
    ma = recv.shape[2]
    out[c, p * ma + i] = recv[p, c, i]


@functools.cache
def row_fft_kernels(n: int, rows: int, dtype):
    """Tile kernels transforming ``rows`` rows of length ``n`` per block, forward and inverse (unnormalised)."""
    N, R = n, rows

    @wp.kernel
    def rows_fft(x: wp.array2d(dtype=dtype), y: wp.array2d(dtype=dtype)):
        b, _, _ = wp.tid()
        t = wp.tile_load(x, shape=(R, N), offset=(b * R, 0))
        wp.tile_fft(t)
        wp.tile_store(y, t, offset=(b * R, 0))

    @wp.kernel
    def rows_ifft(x: wp.array2d(dtype=dtype), y: wp.array2d(dtype=dtype)):
        b, _, _ = wp.tid()
        t = wp.tile_load(x, shape=(R, N), offset=(b * R, 0))
        wp.tile_ifft(t)
        wp.tile_store(y, t, offset=(b * R, 0))

    return rows_fft, rows_ifft
