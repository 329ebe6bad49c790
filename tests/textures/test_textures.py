"""wp.Texture1D / 2D / 3D and wp.texture_sample against a float64 NumPy sampler written from the documented rules
(texel i centred at (i + 0.5) / n; CLOSEST / LINEAR; WRAP / CLAMP / MIRROR / BORDER per axis; texel coordinates
with WRAP / MIRROR acting as CLAMP), coordinate gradients against central differences, and the CUDA rendering
compiled by NVRTC."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import weft as wp

WRAP, CLAMP, MIRROR, BORDER = (wp.TextureAddressMode.WRAP, wp.TextureAddressMode.CLAMP, wp.TextureAddressMode.MIRROR,
                               wp.TextureAddressMode.BORDER)


def _index(i: int, n: int, mode: int) -> int:
    if 0 <= i < n:
        return i
    if mode == WRAP:
        return i % n
    if mode == MIRROR:
        m = i % (2 * n)
        return m if m < n else 2 * n - 1 - m
    if mode == BORDER:
        return -1
    return min(max(i, 0), n - 1)


def reference(data: np.ndarray, coord, linear: bool, modes, normalized: bool, out_channels: int) -> np.ndarray:
    """data: (depth.., height.., width, channels) float64; coord: (u[, v[, w]])."""
    ndim = data.ndim - 1
    sizes = data.shape[:ndim][::-1]  # width, height, depth
    modes = [CLAMP if (not normalized and m in (WRAP, MIRROR)) else m for m in modes]
    base, frac = [], []
    for a in range(ndim):
        x = coord[a] * (sizes[a] if normalized else 1.0) - (0.5 if linear else 0.0)
        base.append(int(np.floor(x)))
        frac.append(x - np.floor(x))
    out = np.zeros(out_channels)
    for corner in itertools.product((0, 1), repeat=ndim) if linear else [(0,) * ndim]:
        w, idx = 1.0, []
        for a, hi in enumerate(corner):
            idx.append(_index(base[a] + hi, sizes[a], modes[a]))
            if linear:
                w *= frac[a] if hi else 1.0 - frac[a]
        if min(idx) < 0:
            continue
        texel = data[tuple(idx[::-1])]
        k = min(out_channels, data.shape[-1])
        out[:k] += w * texel[:k]
    return out


@wp.kernel
def sample1(tex: wp.Texture1D, u: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.texture_sample(tex, u[i], dtype=float)


@wp.kernel
def sample2(tex: wp.Texture2D, uv: wp.array(dtype=wp.vec2f), out: wp.array(dtype=wp.vec2f)):
    i = wp.tid()
    out[i] = wp.texture_sample(tex, uv[i], dtype=wp.vec2f)


@wp.kernel
def sample2_4(tex: wp.Texture2D, uv: wp.array(dtype=wp.vec2f), out: wp.array(dtype=wp.vec4f)):
    i = wp.tid()
    out[i] = wp.texture_sample(tex, uv[i], wp.vec4f, 0.0)


@wp.kernel
def sample3(tex: wp.Texture3D, uvw: wp.array(dtype=wp.vec3f), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.texture_sample(tex, uvw[i], dtype=float, lod=-1.0)


def _coords(rng, n, ndim, normalized, sizes):
    lo, hi = (-0.6, 1.6) if normalized else (-3.0, max(sizes) + 3.0)
    return rng.uniform(lo, hi, size=(n, ndim)).astype(np.float32)


@pytest.mark.parametrize("linear", [False, True], ids=["closest", "linear"])
@pytest.mark.parametrize("normalized", [True, False], ids=["normalized", "texel"])
@pytest.mark.parametrize("mode", [WRAP, CLAMP, MIRROR, BORDER], ids=lambda m: m.name)
def test_2d_two_channels(linear, normalized, mode):
    rng = np.random.default_rng(int(mode) * 4 + 2 * linear + normalized)
    data = rng.random((5, 7, 2)).astype(np.float32)
    tex = wp.Texture2D(data, filter_mode=wp.TextureFilterMode.LINEAR if linear else wp.TextureFilterMode.CLOSEST,
                       address_mode=mode, normalized_coords=normalized)
    uv = _coords(rng, 64, 2, normalized, (7, 5))
    out = wp.zeros(64, dtype=wp.vec2f)
    wp.launch(sample2, 64, inputs=[tex, wp.array(uv, dtype=wp.vec2f)], outputs=[out])
    want = np.array([reference(data.astype(np.float64), c, linear, (mode, mode), normalized, 2) for c in uv])
    np.testing.assert_allclose(out.numpy(), want, atol=2e-6)


def test_1d_3d_and_per_axis_modes():
    rng = np.random.default_rng(5)
    d1 = rng.random(9).astype(np.float32)
    t1 = wp.Texture1D(d1, address_mode=MIRROR)
    u = rng.uniform(-1, 2, 40).astype(np.float32)
    out = wp.zeros(40, dtype=float)
    wp.launch(sample1, 40, inputs=[t1, wp.array(u, dtype=float)], outputs=[out])
    want = [reference(d1[:, None].astype(np.float64), (x,), True, (MIRROR,), True, 1)[0] for x in u]
    np.testing.assert_allclose(out.numpy(), want, atol=2e-6)

    d3 = rng.random((3, 4, 5)).astype(np.float32)
    t3 = wp.Texture3D(d3, address_mode=(WRAP, BORDER, CLAMP))
    assert (t3.address_mode_u, t3.address_mode_v, t3.address_mode_w) == (WRAP, BORDER, CLAMP)
    assert (t3.width, t3.height, t3.depth, t3.num_channels, t3.ndim) == (5, 4, 3, 1, 3)
    uvw = rng.uniform(-0.5, 1.5, (50, 3)).astype(np.float32)
    out3 = wp.zeros(50, dtype=float)
    wp.launch(sample3, 50, inputs=[t3, wp.array(uvw, dtype=wp.vec3f)], outputs=[out3])
    want3 = [reference(d3[..., None].astype(np.float64), c, True, (WRAP, BORDER, CLAMP), True, 1)[0] for c in uvw]
    np.testing.assert_allclose(out3.numpy(), want3, atol=2e-6)


def test_channels_and_integer_data():
    rng = np.random.default_rng(8)
    data = rng.integers(0, 256, size=(4, 6, 4), dtype=np.uint8)
    tex = wp.Texture2D(data, filter_mode=wp.TextureFilterMode.CLOSEST)
    assert tex.dtype == wp.uint8 and tex.num_channels == 4
    uv = rng.uniform(0, 1, (20, 2)).astype(np.float32)
    out = wp.zeros(20, dtype=wp.vec4f)
    wp.launch(sample2_4, 20, inputs=[tex, wp.array(uv, dtype=wp.vec2f)], outputs=[out])
    want = [reference(data / 255.0, c, False, (CLAMP, CLAMP), True, 4) for c in uv]
    np.testing.assert_allclose(out.numpy(), want, atol=1e-6)
    # one channel read as vec2: the second component is zero
    one = wp.Texture2D(np.ones((2, 2), np.float32))
    out2 = wp.zeros(1, dtype=wp.vec2f)
    wp.launch(sample2, 1, inputs=[one, wp.array([[0.5, 0.5]], dtype=wp.vec2f)], outputs=[out2])
    np.testing.assert_allclose(out2.numpy(), [[1.0, 0.0]])


def test_copy_from_copy_to_and_properties():
    tex = wp.Texture2D(width=3, height=2, num_channels=2)
    assert tex.numpy().shape == (2, 3, 2) and not tex.numpy().any()
    values = np.arange(12, dtype=np.float32).reshape(2, 3, 2)
    tex.copy_from(values)
    np.testing.assert_array_equal(tex.numpy(), values)
    dst = wp.zeros((2, 3), dtype=wp.vec2f)
    tex.copy_to(dst)
    np.testing.assert_array_equal(dst.numpy(), values)
    other = wp.Texture2D(width=3, height=2, num_channels=2)
    other.copy_from(tex)
    np.testing.assert_array_equal(other.numpy(), values)
    assert tex.filter_mode == wp.TextureFilterMode.LINEAR and tex.normalized_coords and not tex.is_mipmapped
    assert tex.num_mip_levels == 1 and tex.id != 0
    assert [int(f) for f in wp.TextureResourceFlags] == [0, 1, 2, 4, 8]


def test_bad_input():
    with pytest.raises(ValueError, match="num_channels"):
        wp.Texture2D(np.zeros((2, 2, 3), np.float32))
    with pytest.raises(NotImplementedError, match="mip"):
        wp.Texture2D(np.zeros((2, 2), np.float32), num_mip_levels=0)
    with pytest.raises(NotImplementedError, match="32-bit integer"):
        wp.Texture1D(np.zeros(4, np.int32))
    with pytest.raises(ValueError, match="address mode"):
        wp.Texture1D(np.zeros(4, np.float32), address_mode=7)
    with pytest.raises(ValueError, match="width"):
        wp.Texture2D(width=0, height=3)
    with pytest.raises(ValueError, match="copy_from"):
        wp.Texture1D(np.zeros(4, np.float32)).copy_from(np.zeros(5, np.float32))


@wp.kernel
def sample2_loss(tex: wp.Texture2D, uv: wp.array(dtype=wp.vec2f), out: wp.array(dtype=float)):
    i = wp.tid()
    v = wp.texture_sample(tex, uv[i], dtype=wp.vec2f)
    out[i] = v[0] * 2.0 + v[1] * v[1]


def test_coordinate_gradient_matches_central_differences():
    rng = np.random.default_rng(9)
    data = rng.random((6, 5, 2)).astype(np.float32)
    tex = wp.Texture2D(data, address_mode=WRAP)
    uv_np = rng.uniform(0.05, 0.95, (40, 2)).astype(np.float32)
    # keep points away from texel centres, where linear interpolation has kinks a central difference would straddle
    t = uv_np * np.array([5, 6], np.float32) - 0.5
    uv_np = uv_np[np.all(np.abs(t - np.round(t)) > 0.01, axis=1)][:8]
    assert len(uv_np) == 8

    def loss_ref(c):
        v = reference(data.astype(np.float64), c, True, (WRAP, WRAP), True, 2)
        return v[0] * 2.0 + v[1] * v[1]

    uv = wp.array(uv_np, dtype=wp.vec2f, requires_grad=True)
    out = wp.zeros(8, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(sample2_loss, 8, inputs=[tex, uv], outputs=[out])
    tape.backward(grads={out: wp.ones(8, dtype=float)})
    h = 1e-4
    for i, c in enumerate(uv_np.astype(np.float64)):
        fd = [(loss_ref(c + h * e) - loss_ref(c - h * e)) / (2 * h) for e in np.eye(2)]
        np.testing.assert_allclose(uv.grad.numpy()[i], fd, rtol=2e-3, atol=2e-3)


def test_closest_has_zero_coordinate_gradient():
    tex = wp.Texture2D(np.random.default_rng(1).random((4, 4, 2)).astype(np.float32),
                       filter_mode=wp.TextureFilterMode.CLOSEST)
    uv = wp.array([[0.3, 0.6]], dtype=wp.vec2f, requires_grad=True)
    out = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(sample2_loss, 1, inputs=[tex, uv], outputs=[out])
    tape.backward(grads={out: wp.ones(1, dtype=float)})
    np.testing.assert_array_equal(uv.grad.numpy(), [[0.0, 0.0]])


def test_cuda_rendering_compiles_with_nvrtc():
    from weft import pipeline
    from weft.pipeline import Direction, Target
    from weft.toolchain import nvrtc

    if not nvrtc.is_available():
        pytest.skip("NVRTC not installed")
    tex = wp.Texture2D(np.zeros((2, 2, 2), np.float32))
    for kernel, args in ((sample2_loss, [tex, wp.zeros(1, dtype=wp.vec2f), wp.zeros(1, dtype=float)]),
                         (sample3, [wp.Texture3D(np.zeros((2, 2, 2), np.float32)), wp.zeros(1, dtype=wp.vec3f),
                                    wp.zeros(1, dtype=float)]),
                         (sample1, [wp.Texture1D(np.zeros(3, np.float32)), wp.zeros(1, dtype=float),
                                    wp.zeros(1, dtype=float)])):
        spec = kernel._lower(kernel.infer_types(args), False)
        for direction, fn in ((Direction.FORWARD, spec.fn), (Direction.ADJOINT, pipeline.differentiate(spec.fn))):
            source = pipeline.render_module(fn, kernel.__name__, False, Target.CUDA, direction).source
            assert "texture_sample" in source
            nvrtc.build_cuda(source, nvrtc.NvrtcOptions(arch=80), kernel.__name__)
