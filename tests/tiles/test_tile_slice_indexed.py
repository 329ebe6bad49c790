"""tile_slice_indexed (Warp 1.19's advanced tile indexing): t[idx, :], t[:, idx] and t[:, :, idx] gather along one
axis through a 1-D int32 index tile (repeated and negative indices), against NumPy's take, with float64 gradients
against central differences, and the CUDA rendering compiled by NVRTC."""

from __future__ import annotations

import numpy as np
import pytest

import weft as wp

from .test_grad import fd_check

F64 = wp.float64


@wp.kernel
def gathers(x: wp.array2d(dtype=F64), y: wp.array3d(dtype=F64), idx: wp.array(dtype=int),
            rows: wp.array2d(dtype=F64), cols: wp.array2d(dtype=F64), deep: wp.array3d(dtype=F64)):
    t = wp.tile_load(x, shape=(4, 5))
    u = wp.tile_load(y, shape=(2, 3, 4))
    i = wp.tile_load(idx, shape=3)
    wp.tile_store(rows, t[i, :] * t[i])
    wp.tile_store(cols, t[:, i] * t[:, i])
    wp.tile_store(deep, u[:, :, i] + u[:, :, i] * u[:, :, i])


def _outputs():
    return {"rows": wp.zeros((3, 5), dtype=F64), "cols": wp.zeros((4, 3), dtype=F64),
            "deep": wp.zeros((2, 3, 3), dtype=F64)}


def test_gathers_match_numpy():
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((4, 5)), rng.standard_normal((2, 3, 4))
    idx = np.array([-1, 2, 2], dtype=np.int32)
    outs = _outputs()
    wp.launch_tiled(gathers, dim=1, inputs=[wp.array(x, dtype=F64), wp.array(y, dtype=F64), wp.array(idx),
                                            *outs.values()], block_dim=4)
    np.testing.assert_allclose(outs["rows"].numpy(), np.take(x, idx, axis=0) ** 2, rtol=1e-14)
    np.testing.assert_allclose(outs["cols"].numpy(), np.take(x, idx, axis=1) ** 2, rtol=1e-14)
    g = np.take(y, idx, axis=2)
    np.testing.assert_allclose(outs["deep"].numpy(), g + g * g, rtol=1e-14)


def test_gradients_match_central_differences():
    rng = np.random.default_rng(4)

    @wp.kernel
    def wrapped(x: wp.array2d(dtype=F64), y: wp.array3d(dtype=F64), rows: wp.array2d(dtype=F64),
                cols: wp.array2d(dtype=F64), deep: wp.array3d(dtype=F64)):
        t = wp.tile_load(x, shape=(4, 5))
        u = wp.tile_load(y, shape=(2, 3, 4))
        i = wp.tile_arange(3, dtype=int) - 1  # -1, 0, 1
        wp.tile_store(rows, t[i, :] * t[i])
        j = wp.tile_arange(3, dtype=int) * 0 + 2  # repeated: gradients add up
        wp.tile_store(cols, t[:, j] * t[:, i])
        wp.tile_store(deep, u[:, :, i] * u[:, :, j])

    fd_check(wrapped, {"x": wp.array(rng.standard_normal((4, 5)), dtype=F64),
                       "y": wp.array(rng.standard_normal((2, 3, 4)), dtype=F64)}, _outputs(), dim=1, block_dim=4)


def test_bad_subscripts():
    @wp.kernel(module="unique", enable_backward=False)
    def two_indices(x: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
        t = wp.tile_load(x, shape=(2, 2))
        i = wp.tile_arange(2, dtype=int)
        wp.tile_store(out, t[:1, i])

    with pytest.raises(wp.Error, match="':' on all other axes"):
        wp.launch_tiled(two_indices, dim=1, inputs=[wp.zeros((2, 2), dtype=float), wp.zeros((1, 2), dtype=float)],
                        block_dim=1)


def test_cuda_rendering_compiles_with_nvrtc():
    from weft.toolchain import nvrtc

    if not nvrtc.is_available():
        pytest.skip("NVRTC not installed")
    from weft import pipeline
    from weft.pipeline import Direction, Target

    args = [wp.zeros((4, 5), dtype=F64), wp.zeros((2, 3, 4), dtype=F64), wp.zeros(3, dtype=int), *_outputs().values()]
    spec = gathers._lower(gathers.infer_types(args), False)
    for direction, fn in ((Direction.FORWARD, spec.fn), (Direction.ADJOINT, pipeline.differentiate(spec.fn))):
        prog = pipeline.render_module(fn, "gathers", False, Target.CUDA, direction)
        assert "tile_slice_indexed" in prog.source
        nvrtc.build_cuda(prog.source, nvrtc.NvrtcOptions(arch=80), "gathers")
