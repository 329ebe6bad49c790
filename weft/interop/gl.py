"""CUDA-OpenGL interop (Warp 1.19's ``wp.RegisteredGLBuffer`` and ``wp.GLTextureResource``).

``RegisteredGLBuffer`` maps an OpenGL buffer object to a weft array. On a CUDA device it registers the buffer with
the driver (``cuGraphicsGLRegisterBuffer``; the OpenGL context must be current) and ``map`` returns an array over
the mapped device pointer. Where that is not possible (the CPU device, no GL interop in the driver) it falls back,
as Warp does, to copies through pyglet's OpenGL bindings: ``map`` reads the buffer into a weft array
(``glGetBufferSubData``) unless the flags say WRITE_DISCARD, ``unmap`` writes the array back (``glBufferData``)
unless they say READ_ONLY; ``fallback_to_copy=False`` makes that a RuntimeError instead. pyglet and cuda-bindings
are imported inside the functions.

``GLTextureResource`` registers an OpenGL texture with CUDA, which needs a CUDA device (a ValueError on the CPU, as
in Warp) and CUDA arrays, which weft textures do not use: on a CUDA device it raises NotImplementedError.
"""

from __future__ import annotations

import ctypes
import warnings

import numpy as np

from ..runtime import device as D
from ..runtime.array import array, empty
from ..runtime.copy import copy
from ..types.dtypes import element_size, np_layout, resolve_dtype
from .dlpack import DeviceType


def _gl():
    """pyglet's OpenGL module (the copy fallback); a test may replace this function."""
    try:
        from pyglet import gl
    except ImportError as e:
        raise RuntimeError("RegisteredGLBuffer's copy fallback needs pyglet 2 (pip install 'pyglet>=2')") from e
    return gl


def _driver():
    from cuda.bindings import driver

    return driver


def _check(result, what):
    err = result[0]
    if int(err) != 0:
        raise RuntimeError(f"{what} failed: {err}")
    return result[1] if len(result) > 1 else None


def _is_gpu(dev) -> bool:
    return dev.impl.dlpack_device == DeviceType.CUDA


class RegisteredGLBuffer:
    """An OpenGL buffer object that kernels can read and write through ``map()`` / ``unmap()``."""

    NONE = 0x00
    """CUDA may read and write the buffer (the default)."""
    READ_ONLY = 0x01
    """CUDA only reads the buffer (the copy fallback does not write it back on unmap)."""
    WRITE_DISCARD = 0x02
    """CUDA overwrites the whole buffer (the copy fallback does not read it on map)."""

    _fallback_warned = False

    def __init__(self, gl_buffer_id: int, device=None, flags: int = NONE, fallback_to_copy: bool = True):
        """Args:
            gl_buffer_id: the OpenGL buffer name (GLuint).
            device: the device to map the buffer on (default: the current one).
            flags: NONE, READ_ONLY or WRITE_DISCARD.
            fallback_to_copy: copy between the buffer and a weft array when the buffer cannot be registered with
                CUDA (the CPU device, no CUDA-GL interop); False raises RuntimeError instead.
        """
        if flags not in (self.NONE, self.READ_ONLY, self.WRITE_DISCARD):
            raise ValueError(f"RegisteredGLBuffer: flags must be NONE, READ_ONLY or WRITE_DISCARD, got {flags!r}")
        self.gl_buffer_id = int(getattr(gl_buffer_id, "value", gl_buffer_id))
        self.device = D.get_device(device)
        self.flags = flags
        self.fallback_to_copy = fallback_to_copy
        self.resource = None
        self.warp_buffer = None  # the copy fallback's array (Warp's attribute name)
        reason = "the device is not a CUDA device"
        if _is_gpu(self.device):
            try:
                drv = _driver()
                self.device.backend.make_current()
                self.resource = _check(drv.cuGraphicsGLRegisterBuffer(self.gl_buffer_id, flags),
                                       "cuGraphicsGLRegisterBuffer")
            except Exception as e:  # noqa: BLE001 - no interop (no GL context, no driver support): fall back or raise
                reason = str(e)
        if self.resource is None:
            if not fallback_to_copy:
                raise RuntimeError(f"Failed to register OpenGL buffer {self.gl_buffer_id} with CUDA ({reason})")
            if not RegisteredGLBuffer._fallback_warned:
                warnings.warn("Could not register the GL buffer with CUDA (" + reason + "); falling back to copies "
                              "between the weft array and the OpenGL buffer", stacklevel=2)
                RegisteredGLBuffer._fallback_warned = True

    def __del__(self):
        res = getattr(self, "resource", None)
        if res is None:
            return
        try:
            self.device.backend.make_current()
            _driver().cuGraphicsUnregisterResource(res)
        except Exception:  # noqa: BLE001, S110 - interpreter shutdown
            pass

    def map(self, dtype, shape) -> array:
        """The buffer as a weft array of ``dtype`` and ``shape`` (on the device; call ``unmap()`` before OpenGL uses
        the buffer again)."""
        shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
        if self.resource is not None:
            drv = _driver()
            self.device.backend.make_current()
            _check(drv.cuGraphicsMapResources(1, self.resource, 0), "cuGraphicsMapResources")
            ptr, size = _check(drv.cuGraphicsResourceGetMappedPointer(self.resource),
                               "cuGraphicsResourceGetMappedPointer")
            need = int(np.prod(shape, dtype=np.int64)) * element_size(resolve_dtype(dtype))
            if need > int(size):
                _check(drv.cuGraphicsUnmapResources(1, self.resource, 0), "cuGraphicsUnmapResources")
                raise ValueError(f"map: {need} bytes requested, the GL buffer has {int(size)}")
            return array(ptr=int(ptr), dtype=dtype, shape=shape, device=self.device)
        wb = self.warp_buffer
        if wb is None or resolve_dtype(wb.dtype) != resolve_dtype(dtype) or wb.shape != shape:
            self.warp_buffer = wb = empty(shape, dtype=dtype, device=self.device)
        if self.flags in (self.NONE, self.READ_ONLY):
            gl = _gl()
            base, inner = np_layout(wb._ir)
            host = np.empty(shape + tuple(inner), dtype=base)
            gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self.gl_buffer_id)
            gl.glGetBufferSubData(gl.GL_ARRAY_BUFFER, 0, host.nbytes, host.ctypes.data_as(ctypes.c_void_p))
            gl.glBindBuffer(gl.GL_ARRAY_BUFFER, 0)
            copy(wb, array(host, dtype=dtype, device="cpu"))
        return wb

    def unmap(self) -> None:
        """Hand the buffer back to OpenGL (the copy fallback writes the array into it unless READ_ONLY)."""
        if self.resource is not None:
            self.device.backend.make_current()
            _check(_driver().cuGraphicsUnmapResources(1, self.resource, 0), "cuGraphicsUnmapResources")
            return
        if self.warp_buffer is None:
            raise RuntimeError("RegisteredGLBuffer first has to be mapped")
        if self.flags in (self.NONE, self.WRITE_DISCARD):
            gl = _gl()
            data = np.ascontiguousarray(self.warp_buffer.numpy())
            gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self.gl_buffer_id)
            gl.glBufferData(gl.GL_ARRAY_BUFFER, data.nbytes, data.ctypes.data_as(ctypes.c_void_p),
                            gl.GL_DYNAMIC_DRAW)
            gl.glBindBuffer(gl.GL_ARRAY_BUFFER, 0)


class GLTextureResource:
    """An OpenGL texture registered with CUDA (Warp's experimental API). It needs a CUDA device; weft textures
    keep their texels in linear memory rather than the CUDA arrays a registered GL texture maps to, so on a CUDA
    device it raises NotImplementedError."""

    def __init__(self, gl_tex_id: int, gl_tex_target: int, device=None, flags: int = 0):
        self._device = D.get_device(device)
        if not _is_gpu(self._device):
            raise ValueError("GLTextureResource: device must be a CUDA device")
        raise NotImplementedError("GLTextureResource: weft textures are not CUDA arrays, so a GL texture cannot be "
                                  "mapped as one; copy through a RegisteredGLBuffer (pixel buffer) instead")
