"""Tile kernels run by bench_tiles.py with ``wp`` bound to weft or to NVIDIA Warp (the seed's FFT kernels)."""

N_GRID = 512
TILE = 64


@wp.kernel  # noqa: F821 - wp is injected by _bench_util.load_kernels
def fft_tiled(x: wp.array2d(dtype=wp.vec2f), y: wp.array2d(dtype=wp.vec2f)):  # noqa: F821
    """Row-wise FFT using tile primitives."""
    i, _, _ = wp.tid()  # noqa: F821
    a = wp.tile_load(x, shape=(1, N_GRID), offset=(i, 0))  # noqa: F821
    wp.tile_fft(a)  # noqa: F821
    wp.tile_store(y, a, offset=(i, 0))  # noqa: F821


@wp.kernel  # noqa: F821
def transpose(x: wp.array2d(dtype=wp.vec2f), y: wp.array2d(dtype=wp.vec2f)):  # noqa: F821
    i, j = wp.tid()  # noqa: F821
    y[i, j] = x[j, i]


@wp.kernel  # noqa: F821
def tile_gemm(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):  # noqa: F821
    i, j = wp.tid()  # noqa: F821
    acc = wp.tile_zeros(shape=(TILE, TILE), dtype=float)  # noqa: F821
    count = A.shape[1] // TILE
    for k in range(count):
        a = wp.tile_load(A, shape=(TILE, TILE), offset=(i * TILE, k * TILE))  # noqa: F821
        b = wp.tile_load(B, shape=(TILE, TILE), offset=(k * TILE, j * TILE))  # noqa: F821
        wp.tile_matmul(a, b, acc)  # noqa: F821
    wp.tile_store(C, acc, offset=(i * TILE, j * TILE))  # noqa: F821
