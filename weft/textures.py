"""Textures (Warp 1.19's ``wp.Texture1D`` / ``2D`` / ``3D``, ``TextureFilterMode``, ``TextureAddressMode``,
``TextureResourceFlags``, ``GLTextureResource``), sampled in kernels with ``wp.texture_sample``.

weft keeps a texture's texels as float32 in an ordinary weft array on the texture's device (8- and 16-bit integer
data is normalised to [0, 1] or [-1, 1] when stored, as CUDA's normalised-float read mode returns it), and passes
kernels a struct of its address, sizes and modes (``weft/ops/texture.py``); ``weft/native/texture.h`` samples it on
the CPU and under CUDA with the same code. Not done: mip levels (``num_mip_levels`` must be 1), 32-bit integer
textures, wrapping external CUDA arrays (``cuda_array``) and the CUDA texture / surface object handles.
"""

from __future__ import annotations

import enum
import struct as _struct

import numpy as np

from .ops import texture as _ops
from .runtime import device as D
from .runtime.array import array
from .runtime.copy import copy as _copy
from .types.dtypes import np_layout
from .types.layout import layout


class TextureFilterMode(enum.IntEnum):
    """How texture_sample filters: the texel containing the point, or interpolation between texel centres."""

    CLOSEST = 0
    """The texel containing the sample point."""
    LINEAR = 1
    """Linear (bi-, tri-linear) interpolation of the 2^D texels around the point."""


class TextureAddressMode(enum.IntEnum):
    """What a texel index outside the texture reads (per axis). With ``normalized_coords=False``, WRAP and MIRROR
    act as CLAMP (as CUDA's samplers do)."""

    WRAP = 0
    """Repeat the texture."""
    CLAMP = 1
    """Repeat the edge texel."""
    MIRROR = 2
    """Reflect at each edge."""
    BORDER = 3
    """Zero outside the texture."""


class TextureResourceFlags(enum.IntEnum):
    """Flags for registering an OpenGL texture with CUDA (:class:`GLTextureResource`), Warp's values."""

    NONE = 0x00
    READ_ONLY = 0x01
    WRITE_DISCARD = 0x02
    SURFACE_LDST = 0x04
    TEXTURE_GATHER = 0x08


#: NumPy dtype of the source data -> how a stored float32 texel is made from it
_NORMALISE = {np.dtype(np.uint8): 255.0, np.dtype(np.uint16): 65535.0, np.dtype(np.int8): 127.0,
              np.dtype(np.int16): 32767.0}
_FLOATS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))
_NAMES = {np.dtype(np.uint8): "uint8", np.dtype(np.uint16): "uint16", np.dtype(np.int8): "int8",
          np.dtype(np.int16): "int16", np.dtype(np.float16): "float16", np.dtype(np.float32): "float32"}


def _texel_values(data: np.ndarray) -> np.ndarray:
    if data.dtype in _NORMALISE:
        scale = _NORMALISE[data.dtype]
        out = data.astype(np.float32) / np.float32(scale)
        return np.maximum(out, -1.0) if data.dtype.kind == "i" else out
    if data.dtype in _FLOATS:
        return data.astype(np.float32)
    if data.dtype in (np.dtype(np.int32), np.dtype(np.uint32)):
        raise NotImplementedError("32-bit integer textures are not supported by weft (it stores texels as float32)")
    raise TypeError(f"Texture: data of dtype {data.dtype} is not supported (uint8, uint16, int8, int16, float16, "
                    "float32)")


class Texture:
    """Base of :class:`Texture1D`, :class:`Texture2D` and :class:`Texture3D`."""

    _ndim = 0

    def __init__(self, ndim: int, data=None, width: int = 0, height: int = 0, depth: int = 0, num_channels: int = 0,
                 dtype=None, filter_mode=None, address_mode=TextureAddressMode.CLAMP, address_mode_u=None,
                 address_mode_v=None, address_mode_w=None, normalized_coords: bool = True, num_mip_levels: int = 1,
                 mip_filter_mode=None, device=None, surface_access: bool = False, cuda_array: int = 0):
        if ndim not in (1, 2, 3):
            raise ValueError(f"Texture dimensionality must be 1, 2, or 3, got {ndim}")
        if num_mip_levels != 1:
            raise NotImplementedError(f"Texture: num_mip_levels={num_mip_levels}: weft textures have one mip level")
        if cuda_array:
            raise NotImplementedError("Texture: cuda_array: weft does not wrap external CUDA arrays")
        self._device = D.get_device(device)
        self._ndim = ndim
        modes = []
        for axis, given in enumerate((address_mode_u, address_mode_v, address_mode_w)):
            if axis >= ndim:
                modes.append(TextureAddressMode.CLAMP)
                continue
            m = given
            if m is None:
                m = address_mode[axis] if isinstance(address_mode, (tuple, list)) else address_mode
            try:
                modes.append(TextureAddressMode(m))
            except ValueError:
                raise ValueError(f"Invalid texture address mode: {m}") from None
        self._address_modes = tuple(modes)
        try:
            self._filter_mode = TextureFilterMode(TextureFilterMode.LINEAR if filter_mode is None else filter_mode)
        except ValueError:
            raise ValueError(f"Invalid texture filter mode: {filter_mode}") from None
        self._mip_filter_mode = TextureFilterMode(TextureFilterMode.LINEAR if mip_filter_mode is None
                                                  else mip_filter_mode)
        self._normalized_coords = bool(normalized_coords)
        self._surface_access = bool(surface_access)
        if data is not None:
            host = data.numpy() if isinstance(data, array) else np.asarray(data)
            if host.ndim == ndim:
                host = host[..., None]
            if host.ndim != ndim + 1:
                raise ValueError(f"Texture{ndim}D: data must have {ndim} dimensions (or {ndim + 1} with channels), "
                                 f"got shape {tuple(np.shape(data))}")
            sizes = host.shape[:ndim][::-1]  # (width, height, depth)
            self._dtype_name = _NAMES.get(host.dtype, str(host.dtype))
            values = _texel_values(host)
            self._num_channels = int(host.shape[-1])
        else:
            sizes = (width, height, depth)[:ndim]
            if any(int(s) <= 0 for s in sizes):
                raise ValueError(f"Texture{ndim}D: width/height/depth must be positive when data is None, got "
                                 f"{tuple(sizes)}")
            self._num_channels = int(num_channels or 1)
            self._dtype_name = "float32" if dtype is None else getattr(dtype, "__name__", str(dtype))
            values = None
        if self._num_channels not in (1, 2, 4):
            raise ValueError(f"Texture: num_channels must be 1, 2, or 4, got {self._num_channels}")
        self._width = int(sizes[0])
        self._height = int(sizes[1]) if ndim > 1 else 1
        self._depth = int(sizes[2]) if ndim > 2 else 1
        shape = (self._depth, self._height, self._width, self._num_channels)
        if values is None:
            values = np.zeros(shape, np.float32)
        self._texels = array(np.ascontiguousarray(values.reshape(shape)).reshape(-1), dtype=float, device=self._device)

    # ---- Warp's properties
    @property
    def ndim(self) -> int:
        """1, 2 or 3."""
        return self._ndim

    @property
    def width(self) -> int:
        return self._width

    @property
    def height(self) -> int:
        return self._height

    @property
    def depth(self) -> int:
        return self._depth

    @property
    def num_channels(self) -> int:
        return self._num_channels

    @property
    def dtype(self):
        """The scalar type of the data the texture was made from (weft stores float32 texels)."""
        from . import types_compat as types

        return getattr(types, self._dtype_name, self._dtype_name)

    @property
    def filter_mode(self) -> TextureFilterMode:
        return self._filter_mode

    @property
    def mip_filter_mode(self) -> TextureFilterMode:
        return self._mip_filter_mode

    @property
    def num_mip_levels(self) -> int:
        return 1

    @property
    def is_mipmapped(self) -> bool:
        return False

    @property
    def address_mode_u(self) -> int:
        return self._address_modes[0]

    @property
    def address_mode_v(self) -> int:
        return self._address_modes[1]

    @property
    def address_mode_w(self) -> int:
        return self._address_modes[2]

    @property
    def normalized_coords(self) -> bool:
        return self._normalized_coords

    @property
    def device(self):
        return self._device

    @property
    def data(self) -> int:
        """The address of the texel memory (the struct field kernels read; also when a kernel captures the
        texture as a constant)."""
        return self._texels.ptr or 0

    @property
    def id(self) -> int:
        """The address of the texel memory (what kernels read)."""
        return self._texels.ptr or 0

    # ---- copies
    def _shape(self) -> tuple:
        return (self._depth, self._height, self._width)[3 - self._ndim:] + (self._num_channels,)

    def copy_from(self, src) -> None:
        """Replace the texels with ``src``'s (a texture of the same size, or NumPy / weft data shaped like the
        constructor's ``data``)."""
        if isinstance(src, Texture):
            if src._shape() != self._shape():
                raise ValueError(f"copy_from: texture sizes differ ({src._shape()} vs {self._shape()})")
            _copy(self._texels, src._texels)
            return
        host = src.numpy() if isinstance(src, array) else np.asarray(src)
        if host.ndim == self._ndim:
            host = host[..., None]
        if host.shape != self._shape():
            raise ValueError(f"copy_from: src has shape {host.shape}, the texture {self._shape()}")
        _copy(self._texels, array(np.ascontiguousarray(_texel_values(host)).reshape(-1), dtype=float, device="cpu"))

    def copy_to(self, dst) -> None:
        """Write the (float32) texels into ``dst``: a texture of the same size, a weft array or a NumPy array of
        the texture's shape (channels last; a single channel may be left out)."""
        if isinstance(dst, Texture):
            dst.copy_from(self)
            return
        values = self._texels.numpy().reshape(self._shape())
        if isinstance(dst, array):
            inner = np_layout(dst._ir)[1]
            if dst.size * int(np.prod(inner, dtype=np.int64)) != values.size:
                raise ValueError(f"copy_to: dst holds {dst.size} elements of {dst.dtype}, the texture {values.size} "
                                 "values")
            _copy(dst, array(values.reshape(tuple(dst.shape) + tuple(inner)), dtype=dst.dtype, device="cpu"))
            return
        out = np.asarray(dst)
        if out.size != values.size:
            raise ValueError(f"copy_to: dst has {out.size} elements, the texture {values.size}")
        out[...] = values.reshape(out.shape)

    def numpy(self) -> np.ndarray:
        """A copy of the float32 texels, shaped like the constructor's ``data`` with channels last."""
        return self._texels.numpy().reshape(self._shape()).copy()

    # ---- kernel argument
    def _pack(self) -> bytes:
        cls = type(self)
        packer = cls.__dict__.get("_packer_")
        if packer is None:
            packer = _struct.Struct("<" + layout(cls._ir_).fmt)
            type.__setattr__(cls, "_packer_", packer)
        return packer.pack(self.id, self._width, self._height, self._depth, self._num_channels,
                           int(self._filter_mode), *(int(m) for m in self._address_modes), int(self._normalized_coords))

    @property
    def cuda_array(self) -> int:
        raise NotImplementedError("weft textures keep their texels in a linear weft array, not a CUDA array")

    @property
    def cuda_texture(self) -> int:
        raise NotImplementedError("weft textures are sampled by weft's own code, not CUDA texture objects")

    @property
    def cuda_surface(self) -> int:
        raise NotImplementedError("weft textures are written through copy_from, not CUDA surface objects")


class Texture1D(Texture):
    """A 1-D texture of ``width`` texels with 1, 2 or 4 channels (``data``: ``(width,)`` or ``(width, channels)``),
    sampled in kernels with ``wp.texture_sample(tex, u, dtype)``."""

    _ir_ = _ops.TEXTURE1D

    def __init__(self, data=None, width: int = 0, num_channels: int = 0, dtype=None, filter_mode=None,
                 address_mode=TextureAddressMode.CLAMP, address_mode_u=None, normalized_coords: bool = True,
                 num_mip_levels: int = 1, mip_filter_mode=None, device=None, surface_access: bool = False,
                 cuda_array: int = 0):
        super().__init__(1, data=data, width=width, num_channels=num_channels, dtype=dtype, filter_mode=filter_mode,
                         address_mode=address_mode, address_mode_u=address_mode_u,
                         normalized_coords=normalized_coords, num_mip_levels=num_mip_levels,
                         mip_filter_mode=mip_filter_mode, device=device, surface_access=surface_access,
                         cuda_array=cuda_array)


class Texture2D(Texture):
    """A 2-D texture (``data``: ``(height, width)`` or ``(height, width, channels)``), sampled with
    ``wp.texture_sample(tex, wp.vec2f(u, v), dtype)``."""

    _ir_ = _ops.TEXTURE2D

    def __init__(self, data=None, width: int = 0, height: int = 0, num_channels: int = 0, dtype=None,
                 filter_mode=None, address_mode=TextureAddressMode.CLAMP, address_mode_u=None, address_mode_v=None,
                 normalized_coords: bool = True, num_mip_levels: int = 1, mip_filter_mode=None, device=None,
                 surface_access: bool = False, cuda_array: int = 0):
        super().__init__(2, data=data, width=width, height=height, num_channels=num_channels, dtype=dtype,
                         filter_mode=filter_mode, address_mode=address_mode, address_mode_u=address_mode_u,
                         address_mode_v=address_mode_v, normalized_coords=normalized_coords,
                         num_mip_levels=num_mip_levels, mip_filter_mode=mip_filter_mode, device=device,
                         surface_access=surface_access, cuda_array=cuda_array)


class Texture3D(Texture):
    """A 3-D texture (``data``: ``(depth, height, width)`` or ``(depth, height, width, channels)``), sampled with
    ``wp.texture_sample(tex, wp.vec3f(u, v, w), dtype)``."""

    _ir_ = _ops.TEXTURE3D

    def __init__(self, data=None, width: int = 0, height: int = 0, depth: int = 0, num_channels: int = 0, dtype=None,
                 filter_mode=None, address_mode=TextureAddressMode.CLAMP, address_mode_u=None, address_mode_v=None,
                 address_mode_w=None, normalized_coords: bool = True, num_mip_levels: int = 1, mip_filter_mode=None,
                 device=None, surface_access: bool = False, cuda_array: int = 0):
        super().__init__(3, data=data, width=width, height=height, depth=depth, num_channels=num_channels,
                         dtype=dtype, filter_mode=filter_mode, address_mode=address_mode,
                         address_mode_u=address_mode_u, address_mode_v=address_mode_v, address_mode_w=address_mode_w,
                         normalized_coords=normalized_coords, num_mip_levels=num_mip_levels,
                         mip_filter_mode=mip_filter_mode, device=device, surface_access=surface_access,
                         cuda_array=cuda_array)


for _cls in (Texture1D, Texture2D, Texture3D):
    object.__setattr__(_cls._ir_, "pyclass", _cls)
