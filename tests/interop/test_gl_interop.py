"""wp.RegisteredGLBuffer's copy fallback (what Warp does where CUDA-GL interop is unavailable, the CPU device
included) against a stand-in for pyglet's GL module that keeps buffer objects in host memory (no OpenGL context
exists here), and wp.GLTextureResource's device check."""

from __future__ import annotations

import ctypes
import warnings

import numpy as np
import pytest

import weft as wp
from weft.interop import gl as gl_interop


class FakeGL:
    """glBindBuffer / glGetBufferSubData / glBufferData over byte strings, one per buffer name."""

    GL_ARRAY_BUFFER = 0x8892
    GL_DYNAMIC_DRAW = 0x88E8

    def __init__(self):
        self.buffers: dict[int, bytes] = {}
        self.bound = 0

    def glBindBuffer(self, target, name):
        assert target == self.GL_ARRAY_BUFFER
        self.bound = name

    def glGetBufferSubData(self, target, offset, size, ptr):
        data = self.buffers[self.bound][offset:offset + size]
        ctypes.memmove(ptr, data, len(data))

    def glBufferData(self, target, size, ptr, usage):
        self.buffers[self.bound] = ctypes.string_at(ptr, size)


@wp.kernel
def double(a: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    a[i] = a[i] * 2.0


@pytest.fixture
def fake_gl(monkeypatch):
    fake = FakeGL()
    monkeypatch.setattr(gl_interop, "_gl", lambda: fake)
    return fake


def test_copy_fallback_round_trip(fake_gl):
    fake_gl.buffers[7] = np.arange(8, dtype=np.float32).tobytes()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        buf = wp.RegisteredGLBuffer(7, device="cpu")
    assert buf.resource is None
    a = buf.map(dtype=wp.vec2, shape=(4,))
    np.testing.assert_array_equal(a.numpy(), np.arange(8).reshape(4, 2))
    wp.launch(double, 4, inputs=[a])
    buf.unmap()
    np.testing.assert_array_equal(np.frombuffer(fake_gl.buffers[7], np.float32), 2 * np.arange(8))


def test_flags(fake_gl):
    fake_gl.buffers[3] = np.ones(4, np.float32).tobytes()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ro = wp.RegisteredGLBuffer(3, device="cpu", flags=wp.RegisteredGLBuffer.READ_ONLY)
        wd = wp.RegisteredGLBuffer(3, device="cpu", flags=wp.RegisteredGLBuffer.WRITE_DISCARD)
    a = ro.map(dtype=float, shape=4)
    a.fill_(5.0)
    ro.unmap()  # READ_ONLY: nothing written back
    np.testing.assert_array_equal(np.frombuffer(fake_gl.buffers[3], np.float32), np.ones(4))
    b = wd.map(dtype=float, shape=4)  # WRITE_DISCARD: not read
    b.fill_(3.0)
    wd.unmap()
    np.testing.assert_array_equal(np.frombuffer(fake_gl.buffers[3], np.float32), np.full(4, 3.0))


def test_errors():
    with pytest.raises(RuntimeError, match="register"):
        wp.RegisteredGLBuffer(1, device="cpu", fallback_to_copy=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        buf = wp.RegisteredGLBuffer(1, device="cpu")
    with pytest.raises(RuntimeError, match="first has to be mapped"):
        buf.unmap()
    with pytest.raises(ValueError, match="flags"):
        wp.RegisteredGLBuffer(1, device="cpu", flags=9)
    with pytest.raises(ValueError, match="CUDA device"):
        wp.GLTextureResource(1, 0x0DE1, device="cpu")
