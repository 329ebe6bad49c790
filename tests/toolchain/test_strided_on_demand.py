"""A kernel module is first compiled for contiguous arrays only; the general (strided) instantiation is compiled the
first time a launch passes an array that is not contiguous in its innermost dimension, once, and then serves every
such launch (the plain, fast, prepared and backward paths)."""

import numpy as np
import pytest

import weft as wp
from weft import abi
from weft.errors import LaunchError
from weft.runtime.launch import _DIMS, finish_entry
from weft.toolchain import build


@wp.kernel
def scale_shift(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float)):
    i, j = wp.tid()
    b[i, j] = 2.0 * a[i, j] + float(j) * a[i, 0]


def _expected(x):
    return 2.0 * x + np.arange(x.shape[1], dtype=np.float32) * x[:, :1]


@pytest.fixture
def compiles(monkeypatch):
    """The names of the native modules compiled (cache misses) and of the strided builds asked for."""
    seen = {"compiled": [], "strided": []}
    real_compile, real_build = build._compile, wp.pipeline.build

    def counting_compile(source, options, tmp, name, key):
        seen["compiled"].append(name)
        return real_compile(source, options, tmp, name, key)

    def counting_build(source, name, debug, strided=False):
        if strided:
            seen["strided"].append(name)
        return real_build(source, name, debug, strided)

    monkeypatch.setattr(build, "_compile", counting_compile)
    monkeypatch.setattr(wp.pipeline, "build", counting_build)
    return seen


def test_strided_launch_after_contiguous_compiles_once(compiles):
    rng = np.random.default_rng(1)
    x = rng.random((5, 7), dtype=np.float32)
    a, b = wp.array(x), wp.zeros((5, 7), dtype=float)
    wp.launch(scale_shift, dim=(5, 7), inputs=[a, b])
    np.testing.assert_allclose(b.numpy(), _expected(x), rtol=1e-6)
    assert not compiles["strided"]  # contiguous launches never build the general instantiation
    assert all("strided" not in n for n in compiles["compiled"])

    xt = rng.random((7, 5), dtype=np.float32)
    at = wp.array(xt).transpose()  # (5, 7) view, innermost stride 20 bytes
    assert at.strides[1] != 4
    for _ in range(3):  # general path, then the fast path
        out = wp.zeros((5, 7), dtype=float)
        wp.launch(scale_shift, dim=(5, 7), inputs=[at, out])
        np.testing.assert_allclose(out.numpy(), _expected(xt.T), rtol=1e-6)
    # a strided output, through a prepared launch
    big = wp.zeros((5, 14), dtype=float)
    cmd = wp.launch(scale_shift, dim=(5, 7), inputs=[a, big[:, ::2]], record_cmd=True)
    cmd.launch()
    np.testing.assert_allclose(big.numpy()[:, ::2], _expected(x), rtol=1e-6)
    np.testing.assert_array_equal(big.numpy()[:, 1::2], 0.0)
    # contiguous again: still the first module
    out = wp.zeros((5, 7), dtype=float)
    wp.launch(scale_shift, dim=(5, 7), inputs=[a, out])
    np.testing.assert_allclose(out.numpy(), _expected(x), rtol=1e-6)
    assert compiles["strided"] == ["scale_shift_strided"]
    assert compiles["compiled"].count("scale_shift_strided") <= 1


def test_strided_backward():
    """The adjoint module is built the same way: a strided input's gradient is right."""
    rng = np.random.default_rng(2)
    xt = rng.random((6, 4), dtype=np.float32)
    base = wp.array(xt, requires_grad=True)
    at = base.transpose()  # (4, 6), gradient a strided view too
    out = wp.zeros((4, 6), dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(scale_shift, dim=(4, 6), inputs=[at, out])
    out.grad = wp.ones((4, 6), dtype=float)
    tape.backward()
    # d out[i, j] / d a[i, j] = 2, d out[i, j] / d a[i, 0] = j  -> column 0 gets 2 + sum_j j
    want = np.full((4, 6), 2.0, dtype=np.float32)
    want[:, 0] += np.arange(6).sum()
    np.testing.assert_allclose(base.grad.numpy().T, want, rtol=1e-6)


def test_entry_rejects_unfit_grid():
    """The entry refuses a grid its loop cannot index (the launch checks catch these first) and the caller raises."""
    a, b = wp.zeros((2, 3), dtype=float), wp.zeros((2, 3), dtype=float)
    wp.launch(scale_shift, dim=(2, 3), inputs=[a, b])
    spec = scale_shift.specialize(scale_shift.infer_types([a, b]))
    packed, dims = spec.pack([a, b]), _DIMS[1].pack(6)
    status = spec.fwd(packed, dims, 1, 1)  # a 1-D grid for a kernel that unpacks two indices
    assert status == abi.ENTRY_GRID_UNFIT
    with pytest.raises(LaunchError, match="cannot run this launch grid"):
        finish_entry(status, spec.strided_fwd, "scale_shift", packed, dims, 1, 1)


@wp.kernel
def tile_double(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(a, shape=(1, 8), offset=(i, 0))
    wp.tile_store(b, wp.tile_map(wp.add, t, t), offset=(i, 0))


def test_tile_kernel_strided_input(compiles):
    """Tile kernels' block entries take the same route: a transposed input runs on the general instantiation."""
    rng = np.random.default_rng(3)
    x = rng.random((3, 8), dtype=np.float32)
    out = wp.zeros((3, 8), dtype=float)
    wp.launch_tiled(tile_double, dim=[3], inputs=[wp.array(x), out], block_dim=8)
    np.testing.assert_allclose(out.numpy(), 2 * x, rtol=1e-6)
    assert not compiles["strided"]
    xt = rng.random((8, 3), dtype=np.float32)
    out = wp.zeros((3, 8), dtype=float)
    wp.launch_tiled(tile_double, dim=[3], inputs=[wp.array(xt).transpose(), out], block_dim=8)
    np.testing.assert_allclose(out.numpy(), 2 * xt.T, rtol=1e-6)
    assert compiles["strided"] == ["tile_double_strided"]
